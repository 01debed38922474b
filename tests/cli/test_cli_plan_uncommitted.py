"""Local ``plan`` on a work tree with uncommitted changes: one line on stderr names what is read.

The plan compares committed revisions only; staged, unstaged or untracked (not ignored) work is
not part of it, and the command says so once. The command runs in the test process.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cliutil import run_cli_in_process
from support.gitrepo import GitRepo

from jev_select import contracts as c

TASKS = "unit:\n  description: Runs the unit tests.\n"


class Checkout:
    def __init__(self, root: Path) -> None:
        self.repo = GitRepo.init(root / "repo")
        self.base = self.repo.commit({"src/a.py": "a = 1\n", ".gitignore": "*.log\n"})
        self.head = self.repo.commit({"src/a.py": "a = 2\n"}, parents=[self.base])
        self.repo.check_out()
        self.tasks = root / "tasks.yml"
        self.tasks.write_text(TASKS, "utf-8")
        self.root = root

    def run(self, *more: str) -> tuple[str, str]:
        args = ["plan", "--tasks-file", str(self.tasks), "--repo", str(self.repo.path)]
        args += ["--base", self.base, "--report", str(self.root / "report.json"), *more]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.root), "TMPDIR": str(self.root)}
        completed = run_cli_in_process(args, env)
        assert completed.returncode == 0, completed.stderr
        return completed.stdout, completed.stderr


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    return Checkout(tmp_path)


def test_a_clean_work_tree_prints_nothing_on_stderr(checkout: Checkout) -> None:
    (checkout.repo.path / "debug.log").write_text("ignored\n", "utf-8")
    assert checkout.run()[1] == ""


@pytest.mark.parametrize("kind", ["unstaged", "staged", "untracked"])
def test_uncommitted_work_gets_one_line_naming_the_revision(checkout: Checkout, kind: str) -> None:
    work = checkout.repo.path
    if kind == "unstaged":
        (work / "src" / "a.py").write_text("a = 3\n", "utf-8")
    elif kind == "staged":
        (work / "src" / "b.py").write_text("b = 1\n", "utf-8")
        checkout.repo.git("add", "src/b.py")
    else:
        (work / "notes.txt").write_text("todo\n", "utf-8")
    stdout, stderr = checkout.run()
    assert stderr.splitlines() == [
        "jev-select: the working tree has uncommitted changes; "
        f"the plan reads HEAD ({checkout.head[:12]}) only."
    ]
    assert "uncommitted" in stderr
    assert stdout.splitlines()[0].startswith("jev-select: bypassed")


def test_the_line_names_the_head_given(checkout: Checkout) -> None:
    (checkout.repo.path / "notes.txt").write_text("todo\n", "utf-8")
    checkout.repo.set_ref("refs/heads/feature", checkout.head)
    assert checkout.run("--head", "feature")[1] == (
        "jev-select: the working tree has uncommitted changes; "
        f"the plan reads feature ({checkout.head[:12]}) only.\n"
    )
    assert checkout.run("--head", checkout.head)[1] == (
        "jev-select: the working tree has uncommitted changes; "
        f"the plan reads commit {checkout.head[:12]} only.\n"
    )


def test_json_stays_on_stdout(checkout: Checkout) -> None:
    (checkout.repo.path / "notes.txt").write_text("todo\n", "utf-8")
    stdout, stderr = checkout.run("--json")
    assert "uncommitted" in stderr
    assert json.loads(stdout)[c.PLAN_OUTPUT_REPORT]["tested_sha"] == checkout.head
