"""Local ``plan`` without a key: the preview applies the keyed run's policy to the change.

A change a keyed run keeps whole (a workflow edit, a binary blob, a patch over
``max-diff-bytes``, a submodule, a patch needing more than 64 groups) says so with its reason
code and promises no decision from Jev, in the terminal and in ``--json``; ``history`` reports
the same reasons and request counts for the same commits. The command runs in the test process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import API_KEY_SENTINEL, run_cli_in_process
from support.gitrepo import Gitlink, GitRepo
from support.planoutput import validate_plan_output

from jev_select import contracts as c

WORKFLOW = "name: CI\non: pull_request\njobs:\n  unit:\n    runs-on: ubuntu-latest\n"
TASKS = """lint:
  description: Lints everything.
  always: true
docs:
  description: Builds the docs.
  force_paths: [docs/**]
api:
  description: Checks the public API.
"""
# 100 kB of patch: over the default max-diff-bytes (65536), well under 64 groups.
LARGE = "".join(f"value_{number} = {number}\n" for number in range(5000))
# About 2 MB of patch: more than 64 groups of 20 KiB once max-diff-bytes lets it through.
HUGE = "".join(f"entry_{number:06d} = '{'x' * 20}'\n" for number in range(60000))
CHANGES: dict[str, dict[str | bytes, Any]] = {
    "workflow": {".github/workflows/ci.yml": WORKFLOW + "# edited\n", "src/a.py": "a = 2\n"},
    "binary": {"logo.png": b"\x89PNG\x00\x01"},
    "large": {"src/large.py": LARGE},
    "submodule": {"vendor/lib": Gitlink("1" * 40)},
    "plain": {"src/a.py": "a = 3\n"},
}


class Repo:
    """A checkout whose ``main`` merges one change of each kind, oldest first."""

    def __init__(self, root: Path) -> None:
        self.repo = GitRepo.init(root / "repo")
        tip = self.repo.commit(
            {".github/workflows/ci.yml": WORKFLOW, "src/a.py": "a = 1\n", "docs/i.md": "# D\n"}
        )
        self.root_commit = tip
        self.merges: dict[str, tuple[str, str]] = {}  # kind -> (first parent, merge)
        for kind, change in CHANGES.items():
            head = self.repo.commit(change, parents=[tip], branch=kind, message=kind)
            merge = self.repo.merge(tip, head, message=f"Merge {kind}", branch="main")
            self.merges[kind] = (tip, merge)
            tip = merge
        # The work tree is HEAD: no uncommitted work to warn about.
        self.repo.check_out()
        self.tasks = root / "tasks.yml"
        self.tasks.write_text(TASKS, "utf-8")
        self.temp = root / "tmp"
        self.temp.mkdir()
        self.root = root

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.root), "TMPDIR": str(self.temp), **extra}

    def plan(self, kind: str, *more: str) -> list[str]:
        base, head = self.merges[kind]
        return [
            "plan",
            "--tasks-file",
            str(self.tasks),
            "--repo",
            str(self.repo.path),
            "--base",
            base,
            "--head",
            head,
            "--report",
            str(self.root / f"{kind}.json"),
            *more,
        ]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return Repo(tmp_path_factory.mktemp("preview"))


def preview_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = lines.index(c.PREVIEW_HEADING)
    assert lines[-2] == c.PREVIEW_HINT
    return lines[start:-2]


def plan_json(repo: Repo, kind: str, *more: str) -> dict[str, Any]:
    completed = run_cli_in_process(repo.plan(kind, "--json", *more), repo.env())
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    printed: dict[str, Any] = json.loads(completed.stdout)
    validate_plan_output(printed)
    # The report file on disk is report v5 exactly, the very report printed.
    on_disk = json.loads((repo.root / f"{kind}.json").read_text("utf-8"))
    assert on_disk == printed[c.PLAN_OUTPUT_REPORT]
    assert on_disk["version"] == c.REPORT_VERSION
    return printed


KEPT_WHOLE = {
    "workflow": (
        "  with a key, every task would run: protected-path (.github/workflows/ci.yml changed); "
        "Jev would still be sent 1 request(s), its answers recorded and not applied"
    ),
    "binary": "  with a key, every task would run: binary-change; no request would be sent",
    "large": (
        "  with a key, every task would run: diff-too-large (the patch is {size} bytes, over the "
        "max-diff-bytes limit of 65536 bytes); no request would be sent"
    ),
    "submodule": ("  with a key, every task would run: submodule-change; no request would be sent"),
}


def patch_size(repo: Repo, kind: str) -> int:
    base, head = repo.merges[kind]
    patch = repo.repo.git(
        "diff", "--patch", "--full-index", "-M", "--no-ext-diff", "--no-textconv", "--no-color",
        base, head, "--",
    )  # fmt: skip
    return len(patch)


@pytest.mark.parametrize("kind", sorted(KEPT_WHOLE))
def test_a_change_a_keyed_run_keeps_whole_says_why_in_the_terminal(repo: Repo, kind: str) -> None:
    completed = run_cli_in_process(repo.plan(kind), repo.env())
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    lines = preview_lines(completed.stdout)
    assert lines[-1] == KEPT_WHOLE[kind].format(size=patch_size(repo, "large"))
    assert "  kept: lint (always)" in lines
    assert not any("Jev would be asked" in line for line in lines)


def test_a_plain_change_still_counts_its_requests(repo: Repo) -> None:
    completed = run_cli_in_process(repo.plan("plain"), repo.env())
    assert completed.returncode == 0, completed.stderr
    assert preview_lines(completed.stdout)[-1] == (
        "  with a key, Jev would be asked about 2 of 3 task(s): api, docs (1 request(s))"
    )
    keyed = plan_json(repo, "plain")[c.PLAN_OUTPUT_PREVIEW][c.PREVIEW_KEYED_RUN]
    assert keyed[c.KEYED_RUN_REASON] is None
    assert keyed[c.KEYED_RUN_CANDIDATES] == ["api", "docs"]
    assert keyed[c.KEYED_RUN_REQUESTS] == 1


def test_json_of_a_workflow_edit(repo: Repo) -> None:
    printed = plan_json(repo, "workflow")
    assert printed[c.PLAN_OUTPUT_REPORT]["status"] == c.STATUS_BYPASSED
    assert printed[c.PLAN_OUTPUT_PREVIEW] == {
        "changed_files": [".github/workflows/ci.yml", "src/a.py"],
        "forced_tasks": [{"task": "lint", "reasons": ["always"], "pattern": None, "path": None}],
        "gaps": {},
        "keyed_run": {
            "reason": "protected-path",
            "path": ".github/workflows/ci.yml",
            "patch_bytes": None,
            "limit_bytes": None,
            "limit_groups": None,
            "candidates": [],
            "requests": 1,
        },
    }


def test_json_of_a_binary_change(repo: Repo) -> None:
    keyed = plan_json(repo, "binary")[c.PLAN_OUTPUT_PREVIEW][c.PREVIEW_KEYED_RUN]
    assert keyed[c.KEYED_RUN_REASON] == c.REASON_BINARY_CHANGE
    assert keyed[c.KEYED_RUN_REQUESTS] == 0
    assert keyed[c.KEYED_RUN_CANDIDATES] == []


def test_json_of_a_patch_over_the_limit(repo: Repo) -> None:
    preview = plan_json(repo, "large")[c.PLAN_OUTPUT_PREVIEW]
    assert preview[c.PREVIEW_CHANGED_FILES] == ["src/large.py"]
    keyed = preview[c.PREVIEW_KEYED_RUN]
    assert keyed[c.KEYED_RUN_REASON] == c.REASON_DIFF_TOO_LARGE
    assert keyed[c.KEYED_RUN_PATCH_BYTES] == patch_size(repo, "large") > 65536
    assert keyed[c.KEYED_RUN_LIMIT_BYTES] == 65536
    assert keyed[c.KEYED_RUN_REQUESTS] == 0


def test_json_of_a_submodule_change(repo: Repo) -> None:
    keyed = plan_json(repo, "submodule")[c.PLAN_OUTPUT_PREVIEW][c.PREVIEW_KEYED_RUN]
    assert keyed[c.KEYED_RUN_REASON] == c.REASON_SUBMODULE_CHANGE
    assert keyed[c.KEYED_RUN_REQUESTS] == 0


def test_a_patch_that_needs_too_many_groups(tmp_path: Path) -> None:
    local = GitRepo.init(tmp_path / "repo")
    base = local.commit({"src/a.py": "a = 1\n"})
    head = local.commit({"src/huge.py": HUGE}, parents=[base])
    local.check_out()
    tasks = tmp_path / "tasks.yml"
    tasks.write_text(TASKS, "utf-8")
    args = ["plan", "--tasks-file", str(tasks), "--repo", str(local.path)]
    args += ["--base", base, "--head", head, "--max-diff-bytes", "8000000"]
    args += ["--report", str(tmp_path / "report.json")]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    completed = run_cli_in_process(args, env)
    assert completed.returncode == 0, completed.stderr
    size = len(local.git("diff", "--patch", "--full-index", "-M", base, head, "--"))
    assert preview_lines(completed.stdout)[-1] == (
        f"  with a key, every task would run: diff-too-large (the patch of {size} bytes needs "
        "more than 64 groups); no request would be sent"
    )
    printed = json.loads(run_cli_in_process([*args, "--json"], env).stdout)
    validate_plan_output(printed)
    keyed = printed[c.PLAN_OUTPUT_PREVIEW][c.PREVIEW_KEYED_RUN]
    assert (keyed["reason"], keyed["patch_bytes"], keyed["limit_groups"]) == (
        c.REASON_DIFF_TOO_LARGE,
        size,
        c.MAX_GROUPS,
    )
    assert keyed["requests"] == 0


def test_a_keyed_run_over_the_limit_gives_the_size_after_the_table(repo: Repo) -> None:
    # Collection refuses the patch, so nothing is sent: the address is never contacted.
    env = repo.env(JEV_API_KEY=API_KEY_SENTINEL)
    completed = run_cli_in_process(
        repo.plan("large", "--allow-external-context", "--api-base-url", "https://jev.invalid"),
        env,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "jev-select: fallback (enforce): 3 of 3 tasks selected"
    assert (
        f"jev-select: diff-too-large: the patch is {patch_size(repo, 'large')} bytes, over the "
        "max-diff-bytes limit of 65536 bytes; every task runs."
    ) in lines
    assert c.PREVIEW_HEADING not in lines
    printed = json.loads(
        run_cli_in_process(
            repo.plan(
                "large",
                "--allow-external-context",
                "--api-base-url",
                "https://jev.invalid",
                "--json",
            ),
            env,
        ).stdout
    )
    validate_plan_output(printed)
    assert printed[c.PLAN_OUTPUT_PREVIEW] is None
    assert printed[c.PLAN_OUTPUT_REPORT]["tasks"]["api"]["reasons"] == [c.REASON_DIFF_TOO_LARGE]


def test_a_bypass_without_a_preview_prints_null(repo: Repo) -> None:
    printed = plan_json(repo, "plain", "--force-all")
    assert printed[c.PLAN_OUTPUT_REPORT]["tasks"]["api"]["reasons"] == [c.REASON_FORCE_ALL]
    assert printed[c.PLAN_OUTPUT_PREVIEW] is None


def _history_rows(stdout: str) -> dict[str, tuple[str, str]]:
    """HEAD (12 hex digits) -> (FORCED, REQUESTS) of history's change table."""
    lines = stdout.splitlines()
    assert lines[0].split()[:6] == ["HEAD", "KIND", "STATUS", "FORCED", "WOULD-SKIP", "REQUESTS"]
    rows = {}
    for line in lines[1:]:
        if not line.strip():
            break
        cells = line.split()
        rows[cells[0]] = (cells[3], cells[5])
    return rows


def test_plan_and_history_agree_on_the_same_commits(repo: Repo) -> None:
    completed = run_cli_in_process(
        [
            "history",
            "--tasks-file",
            str(repo.tasks),
            "--repo",
            str(repo.repo.path),
            "--merges",
            "--out",
            str(repo.root / "history"),
        ],
        repo.env(),
    )
    assert completed.returncode == 0, completed.stderr
    rows = _history_rows(completed.stdout)
    assert len(rows) == len(CHANGES)
    for kind, (_base, merge) in repo.merges.items():
        keyed = plan_json(repo, kind)[c.PLAN_OUTPUT_PREVIEW][c.PREVIEW_KEYED_RUN]
        forced, requests = rows[merge[:12]]
        assert forced == (keyed[c.KEYED_RUN_REASON] or c.TERMINAL_NULL), kind
        assert int(requests) == keyed[c.KEYED_RUN_REQUESTS], kind
