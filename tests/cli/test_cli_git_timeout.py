"""Local commands on a repository whose git blocks end at the time bound, with git killed.

The repository's configuration includes a FIFO (support/gitblock.py), so each git command run in
it blocks for good. The bound is shortened by replacing the contract constant in the process
under test (nothing in production can shorten it); each run has a hard time limit, so a
regression fails instead of hanging the suite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.gitblock import GitProcesses, blocking_repository, record_git_processes
from support.gitrepo import GitRepo
from support.hardstop import hard_stop

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.errors import input_error_message

pytestmark = pytest.mark.posix

BOUND = 0.5
ENOUGH = 10.0
TASKS = "unit:\n  description: Runs the unit tests.\n  force_paths: [src/**]\n"


@pytest.fixture
def processes(monkeypatch: pytest.MonkeyPatch) -> GitProcesses:
    return record_git_processes(monkeypatch)


@pytest.fixture
def blocking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    for name in ("GITHUB_ACTIONS", "JEV_API_KEY", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(c, "LOCAL_GIT_TIMEOUT_S", BOUND)
    (tmp_path / "tasks.yml").write_text(TASKS, "utf-8")
    repo, _ = blocking_repository(tmp_path)
    return repo


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str, float]:
    started = time.monotonic()
    with hard_stop(ENOUGH):
        code = main(list(args))
    elapsed = time.monotonic() - started
    captured = capsys.readouterr()
    return code, captured.out, captured.err, elapsed


def test_plan_fails_on_the_repository_input(
    blocking: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], processes: GitProcesses
) -> None:
    tasks = str(tmp_path / "tasks.yml")
    code, out, err, elapsed = run(
        capsys, "plan", "--tasks-file", tasks, "--repo", str(blocking.path), "--base", "HEAD~1"
    )
    assert (code, out) == (1, "")
    assert err == input_error_message(c.FIELD_REPO) + "\n"
    assert elapsed < BOUND + 5
    # One git command blocked and was killed; after it, the run started no other.
    assert len(processes.groups) == 1
    assert processes.survivors() == []


def test_plan_with_the_default_base_says_the_same(
    blocking: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], processes: GitProcesses
) -> None:
    code, _, err, _ = run(
        capsys, "plan", "--tasks-file", str(tmp_path / "tasks.yml"), "--repo", str(blocking.path)
    )
    assert code == 1
    assert err == input_error_message(c.FIELD_REPO) + "\n"
    assert processes.survivors() == []


@pytest.mark.parametrize("given", [True, False], ids=["--repo", "current-directory"])
def test_check_is_a_usage_error_naming_the_bound(
    blocking: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    processes: GitProcesses,
    monkeypatch: pytest.MonkeyPatch,
    given: bool,
) -> None:
    monkeypatch.chdir(blocking.path)
    arguments = ["check", "--tasks-file", str(tmp_path / "tasks.yml")]
    if given:
        arguments += ["--repo", str(blocking.path)]
    code, out, err, elapsed = run(capsys, *arguments)
    assert (code, out) == (c.CHECK_EXIT_USAGE, "")
    message = c.LOCAL_GIT_TIMED_OUT_TEMPLATE.format(seconds=BOUND, repo=str(blocking.path))
    assert err == f"jev-select check: error: {message}\n"
    assert "0.5 s" in err
    assert elapsed < BOUND + 5
    assert len(processes.groups) == 1
    assert processes.survivors() == []


def test_history_fails_on_the_repository(
    blocking: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], processes: GitProcesses
) -> None:
    code, out, err, elapsed = run(
        capsys,
        "history",
        "--tasks-file",
        str(tmp_path / "tasks.yml"),
        "--repo",
        str(blocking.path),
        "--last",
        "1",
    )
    assert (code, out) == (1, "")
    assert err == c.HISTORY_FAILURE_TEMPLATE.format(code=c.HISTORY_INVALID_REPOSITORY) + "\n"
    assert elapsed < BOUND + 5
    assert len(processes.groups) == 1
    assert processes.survivors() == []


# The bound is shortened inside the child only, before the command starts: a test hook, not a
# setting. The child writes down the process group of each git it starts as it starts it, so
# that even a child killed on a hang leaves the parent able to find (and stop) what it left.
_CHILD = """
import sys
from jev_select import contracts
from jev_select.cli import main
from jev_select.edges.git import runner as git_runner
contracts.LOCAL_GIT_TIMEOUT_S = float(sys.argv[1])
record = open(sys.argv[2], "a", encoding="ascii")
class Recording(set):
    def add(self, process):
        record.write(f"{process.pid}\\n")
        record.flush()
        super().add(process)
git_runner._live = Recording()
sys.exit(main(sys.argv[3:]))
"""


def test_a_real_plan_process_ends_and_leaves_no_git_behind(
    blocking: GitRepo, tmp_path: Path
) -> None:
    record = tmp_path / "groups.txt"
    record.touch()
    started = time.monotonic()
    try:
        completed = subprocess.run(
            [
                sys.executable,
                "-c",
                _CHILD,
                str(BOUND),
                str(record),
                "plan",
                "--tasks-file",
                str(tmp_path / "tasks.yml"),
                "--repo",
                str(blocking.path),
                "--base",
                "HEAD~1",
            ],
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    finally:
        groups = GitProcesses()
        groups.groups = [int(group) for group in record.read_text("ascii").split()]
        survivors = groups.survivors()
        for group in survivors:  # a regression must not leave git running after the suite
            os.killpg(group, signal.SIGKILL)
    assert time.monotonic() - started < 30
    assert (completed.returncode, completed.stdout) == (1, "")
    assert completed.stderr == input_error_message(c.FIELD_REPO) + "\n"
    assert len(groups.groups) == 1
    assert survivors == []
