"""``jev-select history --repository`` without a key: the ceiling at the end, actions looked up
as a run in Actions would, and measured changes read back instead of planned again."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from support.fakeactions import FakeActions, actions_api, job, run
from support.fakegithub import FakeGitHub
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.jsonutil import strict_loads

TOKEN = "ghs_CEILINGTOKENSENTINEL7"
REPOSITORY = "octo-org/octo-repo"
NODE_ACTION = "name: Checkout\nruns:\n  using: node24\n  main: dist/index.js\n"

WORKFLOW = """\
on: pull_request
jobs:
  unit:
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v9
      - run: pytest
  docs:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v9
      - run: make docs
  gate:
    needs: [unit, docs]
    runs-on: ubuntu-latest
    steps:
      - run: "true"
"""

TASKS = """\
docs:
  description: Builds the documentation site.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: docs
  force_paths: ["docs/**"]
unit:
  description: Runs the unit tests of the application.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: unit
"""


def sha(number: int) -> str:
    return f"{number:040x}"


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with actions_api(monkeypatch, TOKEN) as server:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        yield server


@pytest.fixture
def repo(tmp_path: Path, fake: FakeGitHub) -> GitRepo:
    """Two squash merges: one touching the docs (force_paths keeps docs), one the code; each
    measured by a completed run whose jobs take known minutes."""
    actions = FakeActions(fake, REPOSITORY)
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit(
        {".github/workflows/ci.yml": WORKFLOW, "src/app.py": "1\n", "docs/index.md": "# D\n"},
        message="initial",
    )
    changes: tuple[tuple[int, Mapping[str | bytes, str]], ...] = (
        (1, {"docs/index.md": "# E\n"}),
        (2, {"src/app.py": "2\n"}),
    )
    for number, files in changes:
        merged = repo.commit(files, message=f"Change {number} (#{number})")
        actions.pull(number, head=sha(number), merge_commit=merged)
        actions.runs(sha(number), [run(900 + number, sha(number))])
        actions.jobs(
            900 + number,
            [
                job("unit (3.11)", seconds=61),  # bills 2 minutes
                job("unit (3.12)", seconds=60),  # bills 1
                job("docs", seconds=150),  # bills 3
                job("gate", seconds=5),  # bills 1, a job of no task
            ],
        )
    fake.add_action("actions/checkout", "v9", {"action.yml": NODE_ACTION})
    return repo


def history(
    capsys: pytest.CaptureFixture[str], repo: GitRepo, tmp_path: Path, *extra: str
) -> tuple[int, str, str]:
    tasks = tmp_path / "tasks.yml"
    tasks.write_text(TASKS, "utf-8")
    code = main(
        [
            "history",
            "--tasks-file",
            str(tasks),
            "--repo",
            str(repo.path),
            "--squash",
            "--repository",
            REPOSITORY,
            "--ci-workflow",
            "ci.yml",
            "--out",
            str(tmp_path / "out"),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_ceiling_ends_the_table_with_what_no_rule_forces(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, _stderr = history(capsys, repo, tmp_path)
    assert code == 0
    assert c.CEILING_TITLE in stdout
    ceiling = stdout[stdout.index(c.CEILING_TITLE) :]
    rows = {line.split()[0]: line.split() for line in ceiling.splitlines()[1:] if line}
    # docs: 3 billed minutes on each change; forced by force_paths on the docs change only.
    assert rows["docs"][1:4] == ["2", "2", "6"]
    assert rows["docs"][-2:] == ["3", "50%"]
    # unit: 3 billed minutes a change, nothing forces it.
    assert rows["unit"][1:4] == ["2", "4", "6"]
    assert rows["unit"][-2:] == ["6", "100%"]
    assert "upper bound, not a prediction" in ceiling
    assert TOKEN not in stdout


def test_actions_are_looked_up_on_github_so_no_gap_is_counted(
    repo: GitRepo, tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, _stderr = history(capsys, repo, tmp_path)
    assert code == 0
    assert any("/repos/actions/checkout/" in path for path in fake.paths())
    for preview in (tmp_path / "out").glob("*/preview.json"):
        assert strict_loads(preview.read_bytes())["gaps"] == {}
    assert c.HISTORY_NOT_LOOKED_UP_LINE not in stdout


def test_a_second_run_reads_measured_changes_back_and_sends_nothing(
    repo: GitRepo, tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert history(capsys, repo, tmp_path)[0] == 0
    out = tmp_path / "out"
    written = {path: path.stat().st_mtime_ns for path in out.rglob("*.json")}
    assert len(written) == 6  # report, preview and results of each change
    fake.requests.clear()
    code, stdout, _stderr = history(capsys, repo, tmp_path, "--format", "json")
    assert code == 0
    assert fake.requests == []
    # Nothing planned or written again: the reports keep pairing with their results.
    assert {path: path.stat().st_mtime_ns for path in out.rglob("*.json")} == written
    view = json.loads(stdout)
    assert [change["ci"]["outcome"] for change in view["changes"]] == ["existing", "existing"]
    assert view["ceiling"]["total"]["savable_minutes"] == 9


def test_with_a_key_calibrate_runs_straight_on_the_history_directory(
    repo: GitRepo,
    tmp_path: Path,
    fake: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeJev(tls=True, scores={"unit": 0.01, "docs": 0.9}) as jev:
        assert jev.ca_bundle is not None
        assert fake.ca_bundle is not None
        # One bundle for both local servers, each with its own throwaway CA.
        bundle = tmp_path / "cas.pem"
        bundle.write_text(Path(fake.ca_bundle).read_text() + Path(jev.ca_bundle).read_text())
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
        monkeypatch.setenv("JEV_API_KEY", "ceiling-key-sentinel")
        keyed = ("--api-base-url", jev.base_url, "--allow-external-context", "--yes")
        assert history(capsys, repo, tmp_path, *keyed)[0] == 0
        sent = len(jev.requests)
        assert sent > 0
        # Measured changes are read back: not one Jev request, not one GitHub request again.
        fake.requests.clear()
        assert history(capsys, repo, tmp_path, *keyed)[0] == 0
        assert (len(jev.requests), fake.requests) == (sent, [])
    code = main(["calibrate", str(tmp_path / "out"), "--format", "json", "--thresholds", "0.05"])
    view = json.loads(capsys.readouterr().out)
    assert code == 0
    (row,) = view["thresholds"]
    # Both changes were scored: docs is forced on the docs change and judged on the other, unit
    # (0.01) judged and skipped on both; docs (0.9) runs.
    assert (row["changes"], row["tasks_judged"]) == (2, 3)
    assert row["would_skip"] == 2
    assert view["ceiling"]["total"]["savable_minutes"] == 9
