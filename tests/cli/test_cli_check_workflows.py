"""``jev-select check`` over the workflows of a repository: with and without ``--tasks-file``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cliutil import run_check_locally
from support.gitrepo import Change, GitRepo
from support.wiring import CI, TABLE, TABLE_PATH, job, rest, workflow

from jev_select import contracts as c
from jev_select.cli import main

TYPO = workflow(job("unit", "fromJSON(needs.plan.outputs.run)['typnig']"), rest("typing"))


_run = run_check_locally


def _repository(tmp_path: Path, files: dict[str, str]) -> GitRepo:
    repository = GitRepo.init(tmp_path / "repo")
    changes: dict[str | bytes, Change] = {}
    for path, text in files.items():
        changes[path] = text
    repository.commit(changes)
    repository.check_out()
    return repository


def test_without_a_table_every_workflow_that_runs_the_action_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = _repository(tmp_path, {CI: TYPO, TABLE_PATH: TABLE})
    monkeypatch.chdir(repository.path)
    code, out, err = _run([], capsys, monkeypatch)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f'{TABLE_PATH}:5:1: warning: no workflow reads task "typing" from the plan, so '
        "selecting it changes nothing; add a job condition that reads it, or remove the task "
        "[task-unconsumed]",
        f'{CI}:19:42: error: task "typnig" is not in "{TABLE_PATH}", so this reads null and the '
        'job or step never runs; did you mean "typing"? [unknown-task]',
    ]


def test_json_names_the_repository_relative_path_of_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = _repository(tmp_path, {CI: TYPO, TABLE_PATH: TABLE})
    code, out, _err = _run(
        ["--repo", str(repository.path), "--format", "json"], capsys, monkeypatch
    )
    assert code == 1
    document = json.loads(out)
    assert document["ok"] is False
    assert [(p["path"], p["code"], p["line"], p["column"]) for p in document["problems"]] == [
        (TABLE_PATH, "task-unconsumed", 5, 1),
        (CI, "unknown-task", 19, 42),
    ]
    assert all(list(p) == list(c.CHECK_JSON_PROBLEM_KEYS) for p in document["problems"])


def test_a_table_file_inside_the_repository_is_named_from_its_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = _repository(
        tmp_path, {CI: TYPO, TABLE_PATH: TABLE, "src/app/main.py": "print(1)\n"}
    )
    monkeypatch.chdir(repository.path / "src" / "app")
    code, out, _err = _run(["--tasks-file", "../../" + TABLE_PATH], capsys, monkeypatch)
    assert code == 1
    assert [line.split(":", 1)[0] for line in out.splitlines()] == [TABLE_PATH, CI]


def test_a_clean_repository_exits_zero_and_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = _repository(tmp_path, {CI: workflow(rest()), TABLE_PATH: TABLE})
    assert _run(["--repo", str(repository.path)], capsys, monkeypatch) == (0, "", "")
    table = str(repository.path / TABLE_PATH)
    assert _run(["--tasks-file", table, "--repo", str(repository.path)], capsys, monkeypatch) == (
        0,
        "",
        "",
    )


def test_without_a_table_and_without_a_workflow_that_runs_the_action_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = _repository(tmp_path, {CI: "on: push\njobs: {}\n"})
    code, out, err = _run(["--repo", str(repository.path)], capsys, monkeypatch)
    assert (code, out) == (2, "")
    assert "no workflow under .github/workflows/" in err
    assert "pass --tasks-file" in err


def test_without_a_table_outside_a_repository_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _run([], capsys, monkeypatch)
    assert (code, out) == (2, "")
    assert "pass --tasks-file" in err


def test_the_revision_decides_which_workflows_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = _repository(tmp_path, {CI: workflow(rest()), TABLE_PATH: TABLE})
    first = repository.tip()
    assert first is not None
    repository.commit({CI: TYPO})
    repository.check_out()
    base = ["--repo", str(repository.path)]
    assert _run([*base, "--rev", first], capsys, monkeypatch)[0] == 0
    assert _run(base, capsys, monkeypatch)[0] == 1


def test_uncommitted_work_is_named_and_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = _repository(tmp_path, {CI: workflow(rest()), TABLE_PATH: TABLE})
    # The fixed workflow is only on disk: the check reads the committed one.
    (repository.path / CI).write_text(TYPO, "utf-8")
    code, out, err = _run(["--repo", str(repository.path)], capsys, monkeypatch)
    assert (code, out) == (0, "")
    commit = repository.tip()
    assert commit is not None
    assert err == (
        "jev-select check: the working tree has uncommitted changes; the check reads HEAD "
        f"({commit[:12]}) only, so commit them to have them checked.\n"
    )
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main([c.COMMAND_CHECK, "--repo", str(repository.path)]) == 0
    assert capsys.readouterr().err == ""
