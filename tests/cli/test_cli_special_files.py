"""Every file input of every command refuses what is not a regular file, before reading it.

A FIFO without a writer would block ``open()`` forever, ``/dev/zero`` would be read until a cap,
a directory is no file: each command answers them with the fixed line it already prints for an
unreadable file. Each run is guarded by a hard time limit, so a regression fails instead of
hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.calibration import REPORT_A, RESULTS_A
from support.cliutil import GitHubEnv, run_cli
from support.hardstop import hard_stop
from support.reports import make_report

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.report import report_text
from jev_select.errors import input_error_message

pytestmark = pytest.mark.posix

KINDS = ("fifo", "directory", "dev-null", "dev-zero")
_DEVICES = {"dev-null": os.devnull, "dev-zero": "/dev/zero"}


def special(kind: str, at: Path) -> Path:
    """A ``kind`` of non-regular file at ``at`` (a device through a symbolic link)."""
    if kind == "fifo":
        os.mkfifo(at)
    elif kind == "directory":
        at.mkdir()
    else:
        at.symlink_to(_DEVICES[kind])
    return at


def argument(kind: str, tmp_path: Path) -> str:
    """A path naming a ``kind`` of non-regular file; devices by their own path."""
    if kind in _DEVICES:
        return _DEVICES[kind]
    return str(special(kind, tmp_path / "input"))


@pytest.fixture(autouse=True)
def _local_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_ACTIONS", "JEV_API_KEY", "GITHUB_TOKEN", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.chdir(tmp_path)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with hard_stop(10):
        code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _report(tmp_path: Path) -> str:
    path = tmp_path / "report.json"
    path.write_text(report_text(REPORT_A), "utf-8")
    return str(path)


def _results(tmp_path: Path) -> str:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(RESULTS_A), "utf-8")
    return str(path)


def _tasks(tmp_path: Path) -> str:
    path = tmp_path / "tasks.yml"
    path.write_text("unit:\n  description: Runs the unit tests.\n", "utf-8")
    return str(path)


ANALYSIS = c.ANALYSIS_FAILURE_TEMPLATE.format(code=c.ANALYSIS_INVALID_SHADOW_MEASUREMENT) + "\n"
CALIBRATION = c.CALIBRATE_FAILURE_TEMPLATE.format(code=c.ANALYSIS_INVALID_SHADOW_MEASUREMENT) + "\n"
TASKS_FILE = input_error_message(c.FIELD_TASKS_FILE) + "\n"

# name -> (arguments for the special path and a scratch directory, exit code, stderr)
Case = tuple[Callable[[str, Path], list[str]], int, str | None]
CASES: dict[str, Case] = {
    "read-block": (lambda p, t: ["read-block", p], 3, c.NO_PLAN_BLOCK_MESSAGE + "\n"),
    "block": (lambda p, t: ["block", p], 1, c.BLOCK_INVALID_REPORT_MESSAGE + "\n"),
    "analyze-report": (lambda p, t: ["analyze", p, _results(t)], 1, ANALYSIS),
    "analyze-results": (lambda p, t: ["analyze", _report(t), p], 1, ANALYSIS),
    "calibrate-report": (lambda p, t: ["calibrate", p, _results(t)], 1, CALIBRATION),
    "calibrate-results": (lambda p, t: ["calibrate", _report(t), p], 1, CALIBRATION),
    "results-report": (
        lambda p, t: ["results", "--run-id", "1", "--report", p, "--output", str(t / "o")],
        1,
        c.RESULTS_FAILURE_TEMPLATE.format(code=c.RESULTS_INVALID_REPORT) + "\n",
    ),
    "results-map": (
        lambda p, t: [
            "results",
            "--run-id",
            "1",
            "--report",
            _report(t),
            "--map",
            p,
            "--output",
            str(t / "o"),
        ],
        1,
        c.RESULTS_FAILURE_TEMPLATE.format(code=c.RESULTS_INVALID_JOB_MAP) + "\n",
    ),
    "rollout-map": (
        lambda p, t: [
            "rollout",
            "--repository",
            "octo-org/octo-repo",
            "--observer-workflow",
            "shadow.yml",
            "--ci-workflow",
            "ci.yml",
            "--map",
            p,
            "--out",
            str(t / "out"),
        ],
        1,
        c.ROLLOUT_FAILURE_TEMPLATE.format(code=c.ROLLOUT_INVALID_JOB_MAP) + "\n",
    ),
    "plan-tasks-file": (
        lambda p, t: ["plan", "--tasks-file", p],
        1,
        TASKS_FILE + c.TASKS_CHECK_HINT + "\n",
    ),
    "history-tasks-file": (lambda p, t: ["history", "--tasks-file", p], 1, TASKS_FILE),
    # The path is the user's own argument on their own machine: check names it, as for a
    # missing file.
    "check-tasks-file": (lambda p, t: ["check", "--tasks-file", p], c.CHECK_EXIT_USAGE, None),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(CASES))
def test_a_file_input_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, kind: str
) -> None:
    build, expected_code, expected_err = CASES[name]
    path = argument(kind, tmp_path)
    code, out, err = run(capsys, *build(path, tmp_path))
    assert (code, out) == (expected_code, "")
    if expected_err is None:
        expected_err = f"jev-select check: error: cannot read the task table file {path!r}\n"
    assert err == expected_err


def _limit_memory() -> None:
    import resource  # POSIX only, like the whole module

    # A reader without a cap would fill the memory from /dev/zero: the child fails instead.
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))


_MEMORY_LIMIT = 2 * 1024 * 1024 * 1024


@pytest.mark.parametrize("kind", KINDS)
def test_a_replay_corpus_file_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, kind: str
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    special(kind, corpus / "corpus.json")
    completed = subprocess.run(
        [sys.executable, "-m", "jev_select", "replay", "--corpus", str(corpus)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        preexec_fn=_limit_memory,
    )
    assert (completed.returncode, completed.stdout) == (1, "")
    assert completed.stderr == (
        c.REPLAY_FAILURE_TEMPLATE.format(code=c.REPLAY_INVALID_CORPUS) + "\n"
    )


def test_a_calibrate_directory_skips_a_measurement_whose_files_are_fifos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    measurements = tmp_path / "measurements"
    (measurements / "1").mkdir(parents=True)
    special("fifo", measurements / "1" / "report.json")
    special("fifo", measurements / "1" / "results.json")
    # Beside a labelled measurement, the FIFOs are neither read nor counted as a report.
    (measurements / "2").mkdir()
    (measurements / "2" / "report.json").write_text(report_text(REPORT_A), "utf-8")
    (measurements / "2" / "results.json").write_text(json.dumps(RESULTS_A), "utf-8")
    code, out, err = run(capsys, "calibrate", str(measurements), "--format", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["thresholds"][0]["changes"] == 1
    # Alone, they leave nothing to calibrate.
    for name in ("report.json", "results.json"):
        (measurements / "2" / name).unlink()
    code, out, err = run(capsys, "calibrate", str(measurements), "--format", "json")
    assert (code, out, err) == (1, "", c.CALIBRATE_NO_REPORTS + "\n")


def test_standard_input_is_still_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "plain-report.json"
    report.write_text(report_text(make_report({"unit": True})), "utf-8")
    code, block, _ = run(capsys, "block", str(report))
    assert code == 0
    # "-" is standard input, a pipe here: a pipe there is read, never refused.
    read, write = os.pipe()
    os.write(write, block.encode("utf-8"))
    os.close(write)
    with open(read, encoding="utf-8") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        code, out, err = run(capsys, "read-block", "-")
    assert (code, err) == (0, "")
    assert json.loads(out)["run"] == {"unit": True}


@pytest.mark.parametrize("kind", KINDS)
def test_an_event_file_that_is_not_a_regular_file_is_invalid_event(
    tmp_path: Path, kind: str
) -> None:
    env = GitHubEnv(root=tmp_path / "runner", inputs={"tasks": "unit: {description: d}\n"})
    environ = env.environ()
    environ["GITHUB_EVENT_PATH"] = argument(kind, tmp_path)
    completed = run_cli(["plan"], environ, cwd=tmp_path, timeout=30)
    assert completed.returncode == 1
    assert completed.stderr == ""
    assert completed.stdout.endswith(
        "::error::" + c.FAILURE_TEMPLATE.format(code=c.FAILURE_INVALID_EVENT) + "\n"
    )
