"""The git time bound of local mode: a git that blocks is killed, with every process it started.

The repository of these tests includes a FIFO from its configuration, so every git command run
in it blocks for good (support/gitblock.py). Each test is also guarded by a hard time limit, so
that a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support.gitblock import GitProcesses, blocking_repository, record_git_processes
from support.gitrepo import GitRepo
from support.hardstop import hard_stop

from jev_select import contracts as c
from jev_select.edges.git.local import is_git_repository, resolve_local_revision
from jev_select.edges.git.runner import (
    SMALL_OUTPUT_CAP,
    GitCommandFailed,
    GitTimeBound,
    GitTimedOut,
    run_git,
    sanitised_environment,
)
from jev_select.edges.git.session import GitSession

pytestmark = pytest.mark.posix

BOUND = 0.5
# Far below the 30 s of production, far above BOUND plus the kill and the reap.
ENOUGH = 10.0


@pytest.fixture
def processes(monkeypatch: pytest.MonkeyPatch) -> GitProcesses:
    return record_git_processes(monkeypatch)


@pytest.fixture
def blocked(tmp_path: Path) -> tuple[GitRepo, str]:
    return blocking_repository(tmp_path)


@pytest.fixture
def blocking(blocked: tuple[GitRepo, str]) -> GitRepo:
    return blocked[0]


def _environment() -> dict[str, str]:
    return sanitised_environment(os.environ)


def test_a_blocked_command_is_killed_at_its_bound(
    blocking: GitRepo, processes: GitProcesses
) -> None:
    started = time.monotonic()
    with hard_stop(ENOUGH), pytest.raises(GitTimedOut) as raised:
        run_git(
            ["rev-parse", "--git-dir"],
            cwd=str(blocking.path),
            environment=_environment(),
            cap=SMALL_OUTPUT_CAP,
            timeout=BOUND,
        )
    elapsed = time.monotonic() - started
    assert BOUND <= elapsed < BOUND + 5
    # Every handler of a failed command handles a timed-out one too.
    assert isinstance(raised.value, GitCommandFailed)
    assert str(raised.value) == ""
    assert len(processes.groups) == 1
    assert processes.survivors() == []
    assert len(processes) == 0  # no longer on record as live


def test_a_command_that_answers_in_time_is_unchanged(
    tmp_path: Path, processes: GitProcesses
) -> None:
    repo = GitRepo.init(tmp_path / "plain")
    sha = repo.commit({"a.txt": "a\n"})
    with hard_stop(ENOUGH):
        output = run_git(
            ["rev-parse", "--verify", "HEAD"],
            cwd=str(repo.path),
            environment=_environment(),
            cap=SMALL_OUTPUT_CAP,
            timeout=ENOUGH,
        )
    assert output == sha.encode() + b"\n"
    assert processes.survivors() == []


def test_no_time_left_starts_nothing(tmp_path: Path, processes: GitProcesses) -> None:
    with pytest.raises(GitTimedOut):
        run_git(["version"], cwd=str(tmp_path), environment=_environment(), cap=100, timeout=0)
    assert processes.groups == []


def test_after_one_timeout_the_bound_starts_no_more_git(
    blocking: GitRepo, tmp_path: Path, processes: GitProcesses
) -> None:
    bound = GitTimeBound(BOUND)
    with hard_stop(ENOUGH):
        with pytest.raises(GitTimedOut):
            bound.run(
                ["rev-parse", "HEAD"], cwd=str(blocking.path), environment=_environment(), cap=100
            )
        assert bound.expired
        # Even a command that would answer at once: git blocked once, the run is over. That no
        # second git was started is the proof (git version would answer in milliseconds, so
        # the time taken could not tell the two apart).
        with pytest.raises(GitTimedOut):
            bound.run(["version"], cwd=str(tmp_path), environment=_environment(), cap=100)
    assert len(processes.groups) == 1
    assert processes.survivors() == []


def test_local_queries_are_bounded_even_without_a_run_bound(
    blocking: GitRepo, processes: GitProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(c, "LOCAL_GIT_TIMEOUT_S", BOUND)
    with hard_stop(ENOUGH):
        assert not is_git_repository(str(blocking.path), os.environ)
        assert resolve_local_revision(str(blocking.path), "HEAD", os.environ) is None
    # Each query had a bound of its own, so each one ran (and was killed).
    assert len(processes.groups) == 2
    assert processes.survivors() == []


def test_a_local_session_borrowing_from_a_blocked_repository_gives_up_at_once(
    blocked: tuple[GitRepo, str], tmp_path: Path, processes: GitProcesses
) -> None:
    blocking, head = blocked
    bound = GitTimeBound(BOUND)
    temp = tmp_path / "temp"
    temp.mkdir()
    started = time.monotonic()
    with (
        hard_stop(ENOUGH),
        GitSession(
            blocking.url,
            token="",
            temp_root=str(temp),
            environ=os.environ,
            borrow_from=str(blocking.path),
            bound=bound,
        ) as session,
    ):
        # The object directory could not be asked for, so nothing is borrowed; fetching
        # from the same repository would block again and is not even started.
        assert not session.borrowing
        assert not session.ensure_commit(head)
        assert not session.fetch([head])
    assert bound.expired
    assert time.monotonic() - started < BOUND + 5
    # git init of the temporary repository, then the one query that blocked.
    assert len(processes.groups) == 2
    assert processes.survivors() == []
    assert list(temp.iterdir()) == []
