"""``local_has_uncommitted_changes``: whether the work tree a local plan reads holds other work.

Real repositories checked out with git; the query runs under the sanitised environment and
writes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitrepo import GitRepo

from jev_select.edges.git.local import local_has_uncommitted_changes
from jev_select.edges.git.runner import GitTimeBound

ENVIRON = {"PATH": "/usr/bin:/bin"}


@pytest.fixture
def checkout(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit({"src/a.py": "a = 1\n", ".gitignore": "build/\n*.log\n"})
    repo.check_out()
    return repo


def _index_bytes(repo: GitRepo) -> bytes:
    return (repo.path / ".git" / "index").read_bytes()


def test_a_clean_checkout_has_none(checkout: GitRepo) -> None:
    before = _index_bytes(checkout)
    assert local_has_uncommitted_changes(str(checkout.path), ENVIRON) is False
    assert _index_bytes(checkout) == before  # the index is not refreshed, nothing is written


def test_an_unstaged_edit(checkout: GitRepo) -> None:
    (checkout.path / "src" / "a.py").write_text("a = 2\n", "utf-8")
    assert local_has_uncommitted_changes(str(checkout.path), ENVIRON) is True


def test_a_staged_edit(checkout: GitRepo) -> None:
    (checkout.path / "src" / "b.py").write_text("b = 1\n", "utf-8")
    checkout.git("add", "src/b.py")
    assert local_has_uncommitted_changes(str(checkout.path), ENVIRON) is True


def test_an_untracked_file(checkout: GitRepo) -> None:
    (checkout.path / "notes.txt").write_text("todo\n", "utf-8")
    assert local_has_uncommitted_changes(str(checkout.path), ENVIRON, bound=GitTimeBound(30))


def test_ignored_files_do_not_count(checkout: GitRepo) -> None:
    (checkout.path / "build").mkdir()
    (checkout.path / "build" / "out.o").write_bytes(b"\0")
    (checkout.path / "run.log").write_text("log\n", "utf-8")
    assert local_has_uncommitted_changes(str(checkout.path), ENVIRON) is False


def test_from_a_subdirectory_the_whole_tree_counts(checkout: GitRepo) -> None:
    (checkout.path / "elsewhere.txt").write_text("x\n", "utf-8")
    assert local_has_uncommitted_changes(str(checkout.path / "src"), ENVIRON) is True


def test_the_configured_file_system_monitor_does_not_run(checkout: GitRepo) -> None:
    marker = checkout.path.parent / "monitor-ran"
    hook = checkout.path.parent / "monitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n", "utf-8")
    hook.chmod(0o755)
    checkout.git("config", "core.fsmonitor", str(hook))
    assert local_has_uncommitted_changes(str(checkout.path), ENVIRON) is False
    assert not marker.exists()


def test_no_answer_without_a_work_tree(tmp_path: Path) -> None:
    bare = GitRepo.init(tmp_path / "bare.git", bare=True)
    bare.commit({"a.txt": "a\n"})
    assert local_has_uncommitted_changes(str(bare.path), ENVIRON) is None
    (tmp_path / "plain").mkdir()
    assert local_has_uncommitted_changes(str(tmp_path / "plain"), ENVIRON) is None
    assert local_has_uncommitted_changes(str(tmp_path / "missing"), ENVIRON) is None
