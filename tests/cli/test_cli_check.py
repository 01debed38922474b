"""``jev-select check`` as a command: files, repositories, formats and exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import run_check_locally, run_cli
from support.fakegithub import FakeGitHub
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.cli import main

CI_WORKFLOW = """name: CI
on: pull_request
jobs:
  unit:
    name: Unit tests
    runs-on: ubuntu-latest
    steps:
      - run: python -m pytest
"""

TABLE = """unit:
  description: Unit tests
  jobs:
    - workflow: .github/workflows/ci.yml
      job: Unit tests
  force_paths: [src/**, lib/**]
docs:
  descripton: Documentation
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repository = GitRepo.init(tmp_path / "repo")
    commit = repository.commit(
        {".github/workflows/ci.yml": CI_WORKFLOW, "src/app.py": "print(1)\n"}
    )
    repository.set_ref("refs/heads/main", commit)
    repository.check_out()
    return repository


_run = run_check_locally


def test_text_output_without_a_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = tmp_path / "tasks.yml"
    tasks.write_text(TABLE, "utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["--tasks-file", str(tasks)], capsys, monkeypatch)
    assert code == 1
    assert err == ""
    assert out == (
        f'{tasks}:8:3: error: unknown field "descripton"; did you mean "description"? '
        "[unknown-field]\n"
    )


def test_repository_problems_at_head(
    repo: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tasks = tmp_path / "tasks.yml"
    tasks.write_text(TABLE.replace("descripton", "description"), "utf-8")
    commit = repo.tip()
    assert commit is not None
    code, out, err = _run(
        ["--tasks-file", str(tasks), "--repo", str(repo.path)], capsys, monkeypatch
    )
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f'{tasks}:5:12: error: job "Unit tests" does not exist in ".github/workflows/ci.yml"; '
        '"Unit tests" is the name of job "unit": reference the job key [job-missing]',
        f'{tasks}:6:25: warning: pattern "lib/**" matches no file at {commit[:12]} '
        "[force-paths-no-match]",
    ]


def test_warnings_alone_exit_zero_and_json(
    repo: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tasks = tmp_path / "tasks.yml"
    tasks.write_text("docs:\n  description: d\n  force_paths: [docs/**]\n", "utf-8")
    args = ["--tasks-file", str(tasks), "--repo", str(repo.path), "--rev", "main"]
    code, out, err = _run([*args, "--format", "json"], capsys, monkeypatch)
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["ok"] is True
    assert [
        (p["code"], p["severity"], p["task"], p["field"], p["line"], p["column"])
        for p in document["problems"]
    ] == [("force-paths-no-match", "warning", "docs", "force_paths", 3, 17)]


def test_the_revision_decides(
    repo: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = repo.tip()
    second = repo.commit({"docs/index.md": "# Docs\n"}, parents=[first] if first else [])
    repo.set_ref("refs/heads/main", second)
    repo.check_out()
    tasks = tmp_path / "tasks.yml"
    tasks.write_text("docs:\n  description: d\n  force_paths: [docs/**]\n", "utf-8")
    base = ["--tasks-file", str(tasks), "--repo", str(repo.path)]
    assert _run([*base, "--rev", "main"], capsys, monkeypatch) == (0, "", "")
    code, out, _ = _run([*base, "--rev", str(first)], capsys, monkeypatch)
    assert code == 0
    assert "[force-paths-no-match]" in out


def test_a_clean_table_prints_nothing(
    repo: GitRepo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tasks = tmp_path / "tasks.yml"
    tasks.write_text(
        "unit:\n  description: d\n  jobs: [{workflow: .github/workflows/ci.yml, job: unit}]\n",
        "utf-8",
    )
    assert _run(["--tasks-file", str(tasks), "--repo", str(repo.path)], capsys, monkeypatch) == (
        0,
        "",
        "",
    )


def test_a_file_that_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = tmp_path / "tasks.yml"
    tasks.write_bytes(b"unit: {description: \xff}\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(["--tasks-file", str(tasks)], capsys, monkeypatch)
    assert code == 1
    assert out == f"{tasks}:1:1: error: the file is not UTF-8 text [not-utf8]\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--tasks-file", "missing.yml"],
        ["--tasks-file", "tasks.yml", "--repo", "not-a-repo"],
        ["--tasks-file", "tasks.yml", "--rev", "no-such-revision"],
        ["--tasks-file", "tasks.yml", "--format", "xml"],
        ["--tasks-file"],
        [],
        ["--tasks-file", "tasks.yml", "--unknown"],
    ],
)
def test_bad_invocations_exit_2_with_a_message(
    repo: GitRepo,
    tmp_path: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (repo.path / "tasks.yml").write_text("unit: {description: d}\n", "utf-8")
    monkeypatch.chdir(repo.path)
    code, out, err = _run(args, capsys, monkeypatch)
    assert code == 2
    assert out == ""
    assert err.startswith(("usage: jev-select check", "jev-select check: error: "))
    assert err.endswith("\n")


def test_github_mode_checks_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = tmp_path / "tasks.yml"
    tasks.write_text("unit:\n  description: d\n  always: yes\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code = main([c.COMMAND_CHECK, "--tasks-file", os.path.basename(tasks)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("tasks.yml:3:11: error: ")


def test_a_bare_command_prints_the_help_and_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: jev-select ")
    assert c.COMMAND_CHECK in captured.err
    assert captured.err.endswith("jev-select: error: a command is required\n")


def test_github_mode_keeps_the_fixed_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main(["check", "--bogus-SECRET"]) == 2
    assert main(["analyze", "--bogus-SECRET"]) == 1
    out = capsys.readouterr().out
    assert "SECRET" not in out
    assert (
        out == 2 * "::error::jev-select: planning failed (invalid-invocation); no plan published.\n"
    )


def test_the_reference_lists_every_command() -> None:
    import argparse
    from pathlib import Path

    from jev_select.cli import _build_parser

    parser = _build_parser()
    names = [
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]
    reference = (Path(__file__).resolve().parents[2] / "docs" / "reference.md").read_text("utf-8")
    section = reference.split("## Commands", 1)[1].split("\n## ", 1)[0]
    assert len(names) >= 7
    for name in names:
        assert f"`jev-select {name}`" in section, name


# ---------------------------------------------------------------------------------------------
# Reusable workflows of other repositories: check looks them up as plan does
# ---------------------------------------------------------------------------------------------

SHARED_USES = "octo-org/shared/.github/workflows/build.yml@main"
SHARED_WORKFLOW = """on: workflow_call
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: make build
"""
CALLER_WORKFLOW = f"""on: pull_request
jobs:
  call:
    uses: {SHARED_USES}
"""
CALLER_TABLE = """build:
  description: Builds through the shared workflow.
  jobs:
    - workflow: .github/workflows/call.yml
      job: call
"""


def _caller_repository(root: Path) -> tuple[GitRepo, str, str, Path]:
    repository = GitRepo.init(root / "caller")
    base = repository.commit({".github/workflows/call.yml": CALLER_WORKFLOW, "src/a.py": "a\n"})
    head = repository.commit({"src/a.py": "b\n"}, parents=[base])
    tasks = root / "tasks.yml"
    tasks.write_text(CALLER_TABLE, "utf-8")
    return repository, base, head, tasks


def _lookup_environment(root: Path, github: FakeGitHub) -> dict[str, str]:
    assert github.ca_bundle is not None
    temp = root / "tmp"
    temp.mkdir(exist_ok=True)
    environ = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root),
        "TMPDIR": str(temp),
        c.GITHUB_API_URL_ENV: github.url,
        "REQUESTS_CA_BUNDLE": github.ca_bundle,
    }
    if "PYTHONPATH" in os.environ:  # a run against another copy of the package
        environ["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return environ


def _check_problems(tasks: Path, repository: GitRepo, environ: dict[str, str]) -> list[Any]:
    completed = run_cli(
        ["check", "--tasks-file", str(tasks), "--repo", str(repository.path), "--format", "json"],
        environ,
    )
    assert completed.returncode in (0, 1), completed.stderr
    problems: list[Any] = json.loads(completed.stdout)["problems"]
    return problems


def test_check_resolves_another_repositorys_reusable_workflow_as_plan_does(
    tmp_path: Path,
) -> None:
    repository, base, head, tasks = _caller_repository(tmp_path)
    with FakeGitHub(tls=True) as github:
        sha = github.add_action(
            "octo-org/shared", "main", {".github/workflows/build.yml": SHARED_WORKFLOW}
        )
        environ = _lookup_environment(tmp_path, github)
        problems = _check_problems(tasks, repository, environ)
        checked = sorted(request.path for request in github.requests)
        plan_args = ["plan", "--tasks-file", str(tasks), "--repo", str(repository.path)]
        plan = run_cli([*plan_args, "--base", base, "--head", head], environ)
    # The workflow is fetched at the commit its ref resolves to, and expands without a gap.
    assert checked == [
        "/repos/octo-org/shared/commits/main",
        f"/repos/octo-org/shared/contents/.github/workflows/build.yml?ref={sha}",
    ]
    assert problems == []
    # The local plan resolves the same metadata: no gap there either.
    assert plan.returncode == 0, plan.stderr
    assert c.WARN_REUSABLE_WORKFLOW_UNRESOLVED not in plan.stdout
    assert "gaps:" not in plan.stdout


def test_check_warns_when_the_reusable_workflow_cannot_be_fetched(tmp_path: Path) -> None:
    repository, _, _, tasks = _caller_repository(tmp_path)
    with FakeGitHub(tls=True) as github:  # serves nothing: every lookup is a 404
        problems = _check_problems(tasks, repository, _lookup_environment(tmp_path, github))
        asked = [request.path for request in github.requests]
    assert asked == ["/repos/octo-org/shared/commits/main"]
    assert [
        (p["severity"], p["code"], p["task"], p["field"], p["line"], p["column"], p["message"])
        for p in problems
    ] == [
        (
            "warning",
            c.GAP_REUSABLE_WORKFLOW_UNRESOLVED.name,
            "build",
            "jobs",
            4,
            5,
            f'metadata gap reusable-workflow-unresolved "{SHARED_USES}"; the task will always run',
        )
    ]
