"""A repository whose git never answers, and a record of the git processes a test started.

``blocking_repository`` builds two commits, then makes ``.git/config`` include a FIFO that no
one writes: every git command run in that repository (it always reads its own configuration)
blocks on the open. ``GitProcesses`` records each git process the runner starts; every one runs
as the leader of its own process group, so a group that still exists afterwards is a git process
(or a helper it started) left behind.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from jev_select.edges.git import runner as git_runner
from support.gitrepo import GitRepo

__all__ = ["GitProcesses", "blocking_repository", "record_git_processes"]


def blocking_repository(root: Path) -> tuple[GitRepo, str]:
    """The repository and its head commit (git itself can no longer be asked for it)."""
    repo = GitRepo.init(root / "repo")
    first = repo.commit({"src/app.py": "print(1)\n"})
    head = repo.commit({"src/app.py": "print(2)\n"}, parents=[first])
    fifo = root / "config.fifo"
    os.mkfifo(fifo)
    with (repo.path / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write(f"[include]\n\tpath = {fifo}\n")
    return repo, head


class GitProcesses(set[Any]):
    """Stands in for the runner's set of live processes and remembers every process group."""

    def __init__(self) -> None:
        super().__init__()
        self.groups: list[int] = []

    def add(self, process: subprocess.Popen[Any]) -> None:
        self.groups.append(process.pid)
        super().add(process)

    def survivors(self, wait: float = 2.0) -> list[int]:
        """The recorded process groups that still exist after ``wait`` seconds at most (a
        helper reparented on its way out may take a moment to be reaped)."""
        deadline = time.monotonic() + wait
        while True:
            alive = [group for group in self.groups if _group_exists(group)]
            if not alive or time.monotonic() >= deadline:
                return alive
            time.sleep(0.05)


def record_git_processes(monkeypatch: pytest.MonkeyPatch) -> GitProcesses:
    """Put a ``GitProcesses`` in place of the runner's set of live processes for one test."""
    record = GitProcesses()
    monkeypatch.setattr(git_runner, "_live", record)
    return record


def _group_exists(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process took the number since: not one of ours
    return True
