"""``jev-select check`` as a command: files, repositories, formats and exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
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
    return repository


def _run(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    code = main([c.COMMAND_CHECK, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


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
