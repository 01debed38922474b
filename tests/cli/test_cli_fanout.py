"""Reusable-workflow fan-out on the base branch, through the real ``plan`` and ``check`` processes.

Six jobs that each call a workflow of six jobs, nine levels deep (ten tiny files), would expand
to millions of jobs. Local ``plan`` without a key still collects the change and resolves the
metadata, so its preview shows the gap; ``check`` resolves the same metadata against the
repository. Both must answer promptly with ``reusable-workflow-unresolved`` instead of hanging.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.cliutil import run_cli
from support.fanout import fan_out_commit
from support.gitrepo import GitRepo

from jev_select import contracts as c

WF = ".github/workflows/ci.yml"
FIRST_CALL = "./.github/workflows/w1.yml"
TASKS = f"""fanout:
  description: Runs the fanned-out workflow.
  jobs:
    - workflow: {WF}
other:
  description: Checks the docs.
"""
# Far more than these processes need; a run that expands the whole tree never gets near it.
TIMEOUT_S = 60


def repository(root: Path) -> tuple[GitRepo, str, str, Path]:
    repo = GitRepo.init(root / "repo")
    base = repo.commit(fan_out_commit(6, 9))
    head = repo.commit({"src/a.py": "a = 2\n"}, parents=[base])
    # A clean checkout of HEAD: a local plan warns about uncommitted work otherwise.
    repo.check_out()
    tasks = root / "tasks.yml"
    tasks.write_text(TASKS, "utf-8")
    return repo, base, head, tasks


def environment(root: Path) -> dict[str, str]:
    temp = root / "tmp"
    temp.mkdir(exist_ok=True)
    return {"PATH": "/usr/bin:/bin", "HOME": str(root), "TMPDIR": str(temp)}


def test_plan_previews_the_fan_out_as_a_gap(tmp_path: Path) -> None:
    repo, base, head, tasks = repository(tmp_path)
    args = ["plan", "--tasks-file", str(tasks), "--repo", str(repo.path)]
    completed = run_cli(
        [*args, "--base", base, "--head", head], environment(tmp_path), timeout=TIMEOUT_S
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    lines = completed.stdout.splitlines()
    gap = c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + FIRST_CALL
    assert f"  kept: fanout (gaps: {gap})" in lines
    assert any(line.startswith("  with a key, Jev would be asked about 1 of 2") for line in lines)


def test_check_reports_the_fan_out_as_a_gap(tmp_path: Path) -> None:
    repo, _, _, tasks = repository(tmp_path)
    completed = run_cli(
        ["check", "--tasks-file", str(tasks), "--repo", str(repo.path), "--format", "json"],
        environment(tmp_path),
        timeout=TIMEOUT_S,
    )
    assert completed.returncode in (0, 1), completed.stderr
    problems = json.loads(completed.stdout)["problems"]
    codes = [(problem["code"], problem.get("task")) for problem in problems]
    assert (c.WARN_REUSABLE_WORKFLOW_UNRESOLVED.rstrip(":"), "fanout") in codes
    assert any(FIRST_CALL in problem["message"] for problem in problems)
