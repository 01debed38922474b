"""What a bypass run of ``jev-select plan`` imports: neither the HTTP stack nor GitPython.

A bypass (a push, a fork, a run without a key or consent, ``force-all``) never touches git or the
network, and it is what most runs on a busy repository are; loading requests, urllib3 and
GitPython would cost such a run more than all its own work. Each case runs the real command in a
fresh interpreter and records ``sys.modules`` as the process ends.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cliutil import API_KEY_SENTINEL, GitHubEnv

from jev_select import contracts as c

# Top-level names of the libraries a bypass must not load, with what only they bring along
# (idna is not listed: the report's schema validator loads it for its format checks).
HEAVY = ("requests", "urllib3", "git", "gitdb", "smmap", "charset_normalizer", "certifi")
TASKS = """
unit:
  description: Runs the unit tests.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: unit
docs:
  description: Builds the documentation.
  force_paths: [docs/**]
"""
# Runs the command as ``python -m jev_select`` does and writes the loaded modules as it exits
# (the command ends the process with os._exit once its result is final).
RECORDER = """
import json, os, runpy, sys
record = sys.argv.pop(1)
exit_now = os._exit

def record_and_exit(code):
    with open(record, "w", encoding="utf-8") as handle:
        json.dump(sorted(sys.modules), handle)
    exit_now(code)

os._exit = record_and_exit
runpy.run_module("jev_select", run_name="__main__", alter_sys=True)
"""


def loaded_modules(env: GitHubEnv, record: Path) -> set[str]:
    completed = subprocess.run(
        [sys.executable, "-c", RECORDER, str(record), "plan"],
        env=env.environ(),
        cwd=env.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout
    assert completed.stderr == ""
    assert f"jev-select: {c.STATUS_BYPASSED} " in completed.stdout
    return {name.split(".")[0] for name in json.loads(record.read_text("utf-8"))}


@pytest.mark.parametrize(
    ("event_name", "inputs"),
    [
        pytest.param("push", {}, id="push"),
        pytest.param("pull_request", {}, id="missing-api-key"),
        pytest.param(
            "pull_request",
            {"api-key": API_KEY_SENTINEL, "allow-external-context": "true", "force-all": "true"},
            id="force-all",
        ),
        pytest.param("pull_request", {"api-key": API_KEY_SENTINEL}, id="no-consent"),
    ],
)
def test_a_bypass_loads_no_http_or_git_library(
    tmp_path: Path, event_name: str, inputs: dict[str, str]
) -> None:
    env = GitHubEnv(root=tmp_path, event_name=event_name, inputs={"tasks": TASKS, **inputs})
    if event_name == "push":
        env.event = {}
    loaded = loaded_modules(env, tmp_path / "modules.json")
    assert "jev_select" in loaded  # the recorder saw the run
    assert sorted(loaded.intersection(HEAVY)) == []


def test_the_recorder_sees_what_a_planned_run_loads(tmp_path: Path) -> None:
    """The check above can fail: a run that looks actions up loads the HTTP stack."""
    env = GitHubEnv(
        root=tmp_path,
        event_name="workflow_dispatch",
        event={},
        inputs={"tasks": TASKS, "pull-request": "7"},
        extra={"GITHUB_API_URL": "https://127.0.0.1:9"},  # refused at once: nothing listens
    )
    completed = subprocess.run(
        [sys.executable, "-c", RECORDER, str(tmp_path / "modules.json"), "plan"],
        env=env.environ(),
        cwd=env.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1  # the manual lookup fails: no server
    loaded = json.loads((tmp_path / "modules.json").read_text("utf-8"))
    assert "requests" in loaded


def test_a_bypass_on_a_runner_loads_neither_the_local_mode_nor_a_process_runner(
    tmp_path: Path,
) -> None:
    env = GitHubEnv(root=tmp_path, event_name="push", inputs={"tasks": TASKS})
    env.event = {}
    record = tmp_path / "modules.json"
    loaded_modules(env, record)
    modules = set(json.loads(record.read_text("utf-8")))
    assert "jev_select.cli.plan" in modules  # the recorder saw the plan command
    assert sorted(modules & {"jev_select.cli.plan_local", "jev_select.edges.git.runner"}) == []
    assert "subprocess" not in modules
