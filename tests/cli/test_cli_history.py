"""``jev-select history``: the shadow plan of each merged change of a temporary repository."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fakegithub import FakeGitHub
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.history import LogEntry, select_changes

TASKS = """\
build:
  description: Builds the release artefacts.
  jobs:
    - workflow: .github/workflows/missing.yml
docs:
  description: Builds the documentation site.
  force_paths: ["docs/**"]
lint:
  description: Runs the linters.
  always: true
unit:
  description: Runs the unit tests of the application.
"""


class History:
    """main: root, two merged pull requests, a direct push, a squash merge touching a workflow."""

    def __init__(self, root: Path) -> None:
        repo = GitRepo.init(root / "repo")
        self.repo = repo
        self.root = repo.commit(
            {"src/app.py": "print(1)\n", "docs/index.md": "# Docs\n", "README": "x\n"},
            message="initial",
        )
        feature = repo.commit({"src/app.py": "print(2)\n"}, parents=[self.root], branch=None)
        self.first = repo.merge(
            self.root, feature, message="Merge pull request #1 from someone/app", branch="main"
        )
        pages = repo.commit({"docs/index.md": "# Pages\n"}, parents=[self.first], branch=None)
        self.second = repo.merge(
            self.first, pages, message="Merge pull request #2 from someone/docs", branch="main"
        )
        self.push = repo.commit({"README": "y\n"}, message="Tidy the readme")
        self.squash = repo.commit({".github/workflows/ci.yml": "on: push\n"}, message="Add CI (#3)")
        self.log = [
            LogEntry(self.squash, (self.push,), "Add CI (#3)"),
            LogEntry(self.push, (self.second,), "Tidy the readme"),
            LogEntry(self.second, (self.first, pages), "Merge pull request #2 from someone/docs"),
            LogEntry(self.first, (self.root, feature), "Merge pull request #1 from someone/app"),
            LogEntry(self.root, (), "initial"),
        ]


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path)


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("JEV_API_KEY", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    tasks = tmp_path / "tasks.yml"
    tasks.write_text(TASKS, "utf-8")
    return tasks


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _heads(history: History, kind: str | None, last: int = 20) -> list[str]:
    return [change.head for change in select_changes(history.log, kind, last)]


def test_the_log_matches_the_repository(history: History) -> None:
    from jev_select.edges.git.local import local_first_parent_log

    read = local_first_parent_log(
        str(history.repo.path), history.squash, since=None, limit=100, environ={}
    )
    assert read is not None
    assert [LogEntry(*entry) for entry in read] == history.log


def test_changes_are_picked_like_a_user_would(history: History) -> None:
    assert _heads(history, None) == [history.first, history.second, history.squash]
    assert _heads(history, c.HISTORY_KIND_MERGE) == [history.first, history.second]
    assert _heads(history, c.HISTORY_KIND_SQUASH) == [history.squash]
    assert _heads(history, c.HISTORY_KIND_FIRST_PARENT) == [
        history.first,
        history.second,
        history.push,
        history.squash,
    ]
    assert _heads(history, None, last=2) == [history.second, history.squash]
    bases = [change.base for change in select_changes(history.log, None, 20)]
    assert bases == [history.root, history.first, history.push]  # first parents


def test_without_a_key_nothing_is_sent_and_the_effects_are_reported(
    history: History, environment: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = run(
        capsys,
        "history",
        "--tasks-file",
        str(environment),
        "--repo",
        str(history.repo.path),
        "--format",
        "json",
        "--out",
        str(out),
    )
    assert (code, stderr) == (0, "")
    view = json.loads(stdout)
    heads = [history.first, history.second, history.squash]
    assert [change["head"] for change in view["changes"]] == heads
    assert [change["base"] for change in view["changes"]] == [
        history.root,
        history.first,
        history.push,
    ]
    assert [change["subject"] for change in view["changes"]] == [
        "Merge pull request #1 from someone/app",
        "Merge pull request #2 from someone/docs",
        "Add CI (#3)",
    ]
    for change in view["changes"]:
        assert change["status"] == "bypassed"
        assert change["report"] == str(out / change["head"][:12] / "report.json")
        report = json.loads(Path(change["report"]).read_text("utf-8"))
        assert report["mode"] == "shadow"
        assert report["tested_sha"] == change["head"]
        assert report["base_sha"] == change["base"]
    assert view["summary"] == {
        "changes": 3,
        "by_status": {"bypassed": 3},
        "by_reason": {"missing-api-key": 3},
        "preview_by_status": {"bypassed": 1, "fallback": 2},
        "preview_by_reason": {"protected-path": 1},
        "tasks": {
            "build": {"would_skip": 0, "always": 0, "path_match": 0, "metadata_unavailable": 3},
            "docs": {"would_skip": 0, "always": 0, "path_match": 1, "metadata_unavailable": 0},
            "lint": {"would_skip": 0, "always": 3, "path_match": 0, "metadata_unavailable": 0},
            "unit": {"would_skip": 0, "always": 0, "path_match": 0, "metadata_unavailable": 0},
        },
        "gaps": {"workflow-missing": 3},
        "requests": 3,
        "collection_ms": view["summary"]["collection_ms"],
        "jev_ms": {"total": None, "max": None},
    }
    assert view["summary"]["collection_ms"]["total"] >= view["summary"]["collection_ms"]["max"]


def test_the_table(
    history: History, environment: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, _ = run(
        capsys,
        "history",
        "--tasks-file",
        str(environment),
        "--repo",
        str(history.repo.path),
        "--squash",
        "--out",
        str(tmp_path / "out"),
    )
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].split() == [
        "HEAD",
        "KIND",
        "STATUS",
        "FORCED",
        "WOULD-SKIP",
        "REQUESTS",
        "SUBJECT",
    ]
    assert lines[1].split() == [
        history.squash[:12],
        "squash",
        "bypassed",
        "protected-path",
        "0/4",
        "1",
        "Add",
        "CI",
        "(#3)",
    ]
    assert "forced whatever the scores: protected-path 1" in lines
    assert "metadata gaps: workflow-missing 1" in lines
    # The last line says where the reports are.
    assert lines[-1] == c.HISTORY_REPORTS_TEMPLATE.format(path=tmp_path / "out")
    assert lines[-1] == f"reports: {tmp_path / 'out'}"
    assert (tmp_path / "out" / history.squash[:12] / "report.json").is_file()


def test_the_table_names_the_reports_directory_as_an_absolute_path(
    history: History,
    environment: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, stdout, _ = run(
        capsys,
        "history",
        "--tasks-file",
        str(environment),
        "--repo",
        str(history.repo.path),
        "--out",
        "runs",
    )
    assert code == 0
    assert stdout.splitlines()[-1] == f"reports: {work / 'runs'}"


def test_without_out_the_table_names_the_temporary_directory_and_how_to_keep_them(
    history: History,
    environment: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The temporary root is RUNNER_TEMP when set (the process caches the system's own).
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    monkeypatch.setenv("RUNNER_TEMP", str(runner_temp))
    code, stdout, _ = run(
        capsys, "history", "--tasks-file", str(environment), "--repo", str(history.repo.path)
    )
    assert code == 0
    last = stdout.splitlines()[-1]
    (directory,) = runner_temp.glob("jev-select-history-*")
    assert directory.name.startswith("jev-select-history-")
    assert last == c.HISTORY_REPORTS_TEMPORARY_TEMPLATE.format(path=directory)
    assert last.startswith(f"reports: {directory} (a new temporary directory")
    assert "--out DIR" in last
    assert sorted(entry.name for entry in directory.iterdir()) == sorted(
        head[:12] for head in (history.first, history.second, history.squash)
    )


@pytest.fixture
def jev(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJev]:
    with FakeJev(tls=True, scores={"unit": 0.01, "docs": 0.01, "build": 0.9}) as server:
        assert server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        monkeypatch.setenv("JEV_API_KEY", "history-key-sentinel")
        yield server


def _keyed(environment: Path, history: History, jev: FakeJev, out: Path) -> list[str]:
    return [
        "history",
        "--tasks-file",
        str(environment),
        "--repo",
        str(history.repo.path),
        "--merges",
        "--api-base-url",
        jev.base_url,
        "--allow-external-context",
        "--format",
        "json",
        "--out",
        str(out),
    ]


def test_with_a_key_each_change_is_planned_in_shadow_mode(
    history: History,
    environment: Path,
    tmp_path: Path,
    jev: FakeJev,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, stdout, stderr = run(capsys, *_keyed(environment, history, jev, tmp_path / "out"))
    assert code == 0, stderr
    assert stderr == c.HISTORY_REQUESTS_TEMPLATE.format(requests=2, changes=2) + "\n"
    assert len(jev.requests) == 2
    view: dict[str, Any] = json.loads(stdout)
    assert [change["status"] for change in view["changes"]] == ["planned", "planned"]
    summary = view["summary"]
    assert summary["by_reason"] == {}
    # unit scores 0.01 on both changes; docs is forced by its path on the second.
    assert summary["tasks"]["unit"]["would_skip"] == 2
    assert summary["tasks"]["docs"]["would_skip"] == 1
    assert summary["tasks"]["build"]["would_skip"] == 0  # a metadata gap keeps it
    assert summary["jev_ms"]["total"] is not None
    report = json.loads(Path(view["changes"][0]["report"]).read_text("utf-8"))
    assert report["observation"]["chunks"][0]["probabilities"]["unit"] == 0.01
    assert "history-key-sentinel" not in stdout + stderr


def test_with_a_key_each_change_is_collected_once(
    history: History,
    environment: Path,
    tmp_path: Path,
    jev: FakeJev,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The preview that counts the requests already collected, resolved and grouped each
    # change; planning it must send what was grouped there, not fetch and read it all again.
    from jev_select.app import pipeline

    collected: list[str] = []
    collect = pipeline._collect

    def counting(inputs: Any, run: pipeline.RunContext) -> Any:
        collected.append(run.commits.head_sha)
        return collect(inputs, run)

    monkeypatch.setattr(pipeline, "_collect", counting)
    code, _, stderr = run(capsys, *_keyed(environment, history, jev, tmp_path / "out"))
    assert code == 0, stderr
    assert sorted(collected) == sorted([history.first, history.second])
    assert len(jev.requests) == 2


def test_many_requests_need_yes(
    history: History,
    environment: Path,
    tmp_path: Path,
    jev: FakeJev,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(c, "HISTORY_MAX_REQUESTS_WITHOUT_YES", 1)
    args = _keyed(environment, history, jev, tmp_path / "out")
    code, stdout, stderr = run(capsys, *args)
    assert (code, stdout) == (1, "")
    assert stderr.splitlines() == [
        c.HISTORY_REQUESTS_TEMPLATE.format(requests=2, changes=2),
        c.HISTORY_NEEDS_YES_TEMPLATE.format(limit=1),
        c.HISTORY_FAILURE_TEMPLATE.format(code=c.HISTORY_NEEDS_YES),
    ]
    assert jev.requests == []
    assert not any((tmp_path / "out").iterdir())
    code, _, _ = run(capsys, *args, "--yes")
    assert code == 0
    assert len(jev.requests) == 2


def test_the_reports_calibrate(
    history: History,
    environment: Path,
    tmp_path: Path,
    jev: FakeJev,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    code, stdout, _ = run(capsys, *_keyed(environment, history, jev, out))
    assert code == 0
    for change in json.loads(stdout)["changes"]:
        report = json.loads(Path(change["report"]).read_text("utf-8"))
        results = {
            "tested_sha": report["tested_sha"],
            "tasks": {
                task: {"result": "success", "duration_ms": 60_000} for task in report["tasks"]
            },
        }
        (Path(change["report"]).parent / "results.json").write_text(json.dumps(results), "utf-8")
    code, stdout, stderr = run(capsys, "calibrate", str(out), "--format", "json")
    assert (code, stderr) == (0, "")
    rows = {row["threshold"]: row for row in json.loads(stdout)["thresholds"]}
    assert rows[0.01]["would_skip"] == 0  # 0.01 is not below 0.01
    assert rows[0.02]["would_skip"] == 3  # unit twice, docs once
    assert rows[0.02]["minutes_saved"] == 3.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "--since"),
        (["--since", "2026-02-30"], "--since"),
        (["--last", "0"], "--last"),
        (["--last", "2", "--since", "2024-01-01"], "not allowed with"),
        (["--merges", "--squash"], "not allowed with"),
    ],
)
def test_bad_usage(
    history: History,
    environment: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    code, stdout, stderr = run(
        capsys, "history", "--tasks-file", str(environment), "--repo", str(history.repo.path), *args
    )
    assert (code, stdout) == (2, "")
    assert message in stderr


def test_no_changes_and_no_repository(
    environment: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, stderr = run(
        capsys, "history", "--tasks-file", str(environment), "--repo", str(tmp_path)
    )
    assert code == 1
    assert stderr == c.HISTORY_FAILURE_TEMPLATE.format(code=c.HISTORY_INVALID_REPOSITORY) + "\n"
    repo = GitRepo.init(tmp_path / "linear")
    repo.commit({"a": "1\n"})
    repo.commit({"a": "2\n"}, message="direct push")
    code, _, stderr = run(
        capsys, "history", "--tasks-file", str(environment), "--repo", str(repo.path)
    )
    assert code == 1
    assert stderr == c.HISTORY_FAILURE_TEMPLATE.format(code=c.HISTORY_NO_CHANGES) + "\n"


def test_without_consent_no_action_or_reusable_workflow_is_looked_up(
    environment: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workflow = (
        "on: pull_request\njobs:\n"
        "  call:\n    uses: octo-org/shared/.github/workflows/build.yml@main\n"
        "  unit:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: acme/setup@v1\n"
    )
    repo = GitRepo.init(tmp_path / "calls")
    root = repo.commit({".github/workflows/ci.yml": workflow, "src/a.py": "a\n"})
    feature = repo.commit({"src/a.py": "b\n"}, parents=[root], branch=None)
    repo.merge(root, feature, message="Merge pull request #4 from someone/a", branch="main")
    environment.write_text(
        "ci:\n  description: Runs CI.\n  jobs:\n    - workflow: .github/workflows/ci.yml\n", "utf-8"
    )
    with FakeGitHub(tls=True) as github:
        github.add_action("acme/setup", "v1", {"action.yml": "name: Setup\n"})
        github.add_action(
            "octo-org/shared", "main", {".github/workflows/build.yml": "on: workflow_call\n"}
        )
        assert github.ca_bundle is not None
        monkeypatch.setenv(c.GITHUB_API_URL_ENV, github.url)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", github.ca_bundle)
        code, stdout, stderr = run(
            capsys,
            "history",
            "--tasks-file",
            str(environment),
            "--repo",
            str(repo.path),
            "--format",
            "json",
            "--out",
            str(tmp_path / "out"),
        )
        table = run(
            capsys,
            "history",
            "--tasks-file",
            str(environment),
            "--repo",
            str(repo.path),
            "--out",
            str(tmp_path / "out-table"),
        )
        asked = list(github.requests)
    assert (code, stderr) == (0, "")
    assert asked == []
    assert json.loads(stdout)["summary"]["gaps"] == {
        c.GAP_REUSABLE_WORKFLOW_UNRESOLVED.name: 1,
        c.GAP_ACTION_METADATA_MISSING.name: 1,
    }
    # The table says why those tasks count as metadata-unavailable, just before where it wrote.
    assert table[0] == 0
    assert table[1].splitlines()[-2] == c.HISTORY_NOT_LOOKED_UP_LINE


def test_calibrate_over_unlabelled_reports_says_how_to_label_them(
    history: History, environment: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # history writes reports only: calibrate has nothing to judge until results files exist.
    out = tmp_path / "out"
    args = ["--tasks-file", str(environment), "--repo", str(history.repo.path), "--out", str(out)]
    code, stdout, _ = run(capsys, "history", *args)
    assert code == 0
    assert stdout.splitlines()[-1] == f"reports: {out}"
    code, stdout, stderr = run(capsys, "calibrate", str(out))
    assert (code, stdout) == (1, "")
    assert stderr == c.CALIBRATE_NO_RESULTS_TEMPLATE.format(reports=3) + "\n"
