"""``jev-select history --repository``: each merged change of a temporary repository measured by
the last CI run of its pull request, against a local GitHub API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.fakeactions import FakeActions, actions_api, job, run
from support.fakegithub import FakeGitHub, FakeResponse
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.jsonutil import strict_loads
from jev_select.core.results import parse_results

TOKEN = "ghs_HISTORYTOKENSENTINEL42"
REPOSITORY = "octo-org/octo-repo"
SCHEMAS = Path(__file__).resolve().parents[2] / "jev_select" / "schemas"

WORKFLOW = """\
on: pull_request
jobs:
  unit:
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    runs-on: ubuntu-latest
    steps:
      - run: pytest
  lint:
    name: Lint
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
  build:
    name: Build
    needs: [unit, lint]
    uses: ./.github/workflows/build.yml
  e2e-api:
    name: E2E ${{ matrix.shard }}
    strategy:
      matrix:
        shard: [1, 2]
    runs-on: ubuntu-latest
    steps:
      - run: ./e2e api
  e2e-web:
    name: E2E ${{ github.event.number }}
    runs-on: ubuntu-latest
    steps:
      - run: ./e2e web
  docs:
    runs-on: ubuntu-latest
    steps:
      - run: make docs
  gate:
    needs: [unit, lint, build, e2e-api, e2e-web, docs]
    runs-on: ubuntu-latest
    steps:
      - run: "true"
"""

TASKS = """\
api:
  description: Runs the end-to-end tests of the API.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: e2e-api
build:
  description: Builds the package.
  jobs:
    - workflow: ./.github/workflows/ci.yml
      job: build
docs:
  description: Builds the documentation site.
  force_paths: ["docs/**"]
lint:
  description: Runs the linters.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: lint
unit:
  description: Runs the unit tests of the application.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: unit
web:
  description: Runs the end-to-end tests of the web application.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: e2e-web
"""


def sha(number: int) -> str:
    return f"{number:040x}"


class Story:
    """main: a root, then one merged change for each outcome, and a direct push."""

    def __init__(self, root: Path, actions: FakeActions) -> None:
        repo = GitRepo.init(root / "repo")
        self.repo = repo
        self.actions = actions
        base = repo.commit(
            {".github/workflows/ci.yml": WORKFLOW, "src/app.py": "1\n", "docs/index.md": "# D\n"},
            message="initial",
        )
        # 1: a merge commit; its runs over two pages, the newest measured.
        self.feature = repo.commit({"src/app.py": "2\n"}, parents=[base], branch=None)
        self.merged = repo.merge(
            base, self.feature, message="Merge pull request #1 from octo/unit", branch="main"
        )
        actions.pull(1, head=self.feature, merge_commit=self.merged)
        actions.runs(
            self.feature,
            [run(901, self.feature), run(880, self.feature, conclusion="failure")],
            pages=2,
        )
        actions.jobs(
            901,
            [
                job("unit (3.11)"),
                job("unit (3.12)", "failure", seconds=30),
                job("Lint"),
                job("Build / compile", seconds=61),
                job("E2E 1", "failure"),
                job("E2E 2"),
                job("docs", seconds=45),
                job("gate", seconds=5),
            ],
        )
        # 2: a squash merge whose newest run is still going.
        self.in_progress = repo.commit({"docs/index.md": "# E\n"}, message="Add docs (#2)")
        actions.pull(2, head=sha(2), merge_commit=self.in_progress)
        actions.runs(sha(2), [run(902, sha(2), status="in_progress"), run(892, sha(2))])
        # 3: re-run.
        self.re_run = repo.commit({"src/app.py": "3\n"}, message="Tweak (#3)")
        actions.pull(3, head=sha(3), merge_commit=self.re_run)
        actions.runs(sha(3), [run(903, sha(3), attempt=2)])
        # 4: a merge commit whose run was cancelled.
        tip = repo.tip()
        assert tip is not None
        feature = repo.commit({"src/app.py": "4\n"}, parents=[tip], branch=None)
        self.cancelled = repo.merge(
            tip, feature, message="Merge pull request #4 from octo/cancel", branch="main"
        )
        actions.pull(4, head=feature, merge_commit=self.cancelled)
        actions.runs(feature, [run(904, feature, conclusion="cancelled")])
        # 5: a squash merge whose number is another pull request's, and GitHub knows no other.
        self.lost = repo.commit({"src/app.py": "5\n"}, message="Fix the typo (#5)")
        actions.pull(5, head=sha(5), merge_commit=sha(55))
        actions.commit_pulls(self.lost, [])
        # 6: no run of the CI workflow at all.
        self.no_run = repo.commit({"src/app.py": "6\n"}, message="Polish (#6)")
        actions.pull(6, head=sha(6), merge_commit=self.no_run)
        actions.runs(sha(6), [])
        repo.commit({"README": "x\n"}, message="Tidy the readme")  # a direct push: no change
        # 7: a number GitHub does not know (70), found through the commit; 101 jobs, two pages.
        self.found = repo.commit({"src/app.py": "7\n"}, message="Port it (#70)")
        actions.commit_pulls(
            self.found,
            [
                FakeActions.pull_record(8, head=sha(8), merge_commit=sha(88)),
                FakeActions.pull_record(7, head=sha(7), merge_commit=self.found),
            ],
        )
        actions.runs(sha(7), [run(907, sha(7))])
        actions.jobs(
            907, [job(f"unit ({index})") for index in range(100)] + [job("Lint", "failure")]
        )

    @property
    def measured(self) -> list[str]:
        return [self.merged, self.found]


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with actions_api(monkeypatch, TOKEN) as server:
        temp = tmp_path / "tmp"
        temp.mkdir()
        monkeypatch.setenv("TMPDIR", str(temp))
        yield server


@pytest.fixture
def story(tmp_path: Path, fake: FakeGitHub) -> Story:
    return Story(tmp_path, FakeActions(fake, REPOSITORY))


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.yml"
    path.write_text(TASKS, "utf-8")
    return path


def history(
    capsys: pytest.CaptureFixture[str], tasks: Path, story: Story, out: Path, *extra: str
) -> tuple[int, str, str]:
    code = main(
        [
            "history",
            "--tasks-file",
            str(tasks),
            "--repo",
            str(story.repo.path),
            "--repository",
            REPOSITORY,
            "--ci-workflow",
            ".github/workflows/ci.yml",
            "--out",
            str(out),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def schema(name: str) -> dict[str, Any]:
    loaded = json.loads((SCHEMAS / name).read_text("utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def every_file_text(directory: Path) -> str:
    return "".join(path.read_text("utf-8") for path in directory.rglob("*") if path.is_file())


def test_each_change_is_measured_or_says_why_not(
    story: Story, tasks: Path, tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    # A rate limit on the first pull request is waited out within the budget.
    fake.queue(
        story.actions.pull_path(1),
        FakeResponse(403, b"{}", {"X-RateLimit-Remaining": "0", "Retry-After": "1"}),
    )
    code, stdout, stderr = history(capsys, tasks, story, out)
    assert code == 0
    assert "jev-select: GitHub rate limit; waiting 1 s.\n" in stderr
    rows = {line.split()[0]: line.split() for line in stdout.splitlines() if line[:12].isalnum()}
    outcomes = {
        story.merged: ("measured", "#1", "901"),
        story.in_progress: ("in-progress", "#2", "902"),
        story.re_run: ("re-run", "#3", "903"),
        story.cancelled: ("cancelled", "#4", "904"),
        story.lost: ("pull-request-not-found", "-", "-"),
        story.no_run: ("no-ci-run", "#6", "-"),
        story.found: ("measured", "#7", "907"),
    }
    for head, cells in outcomes.items():
        assert tuple(rows[head[:12]][6:9]) == cells, head
    assert (
        "jev-select: history: 2 measured, 0 already measured, 1 without a pull request found, "
        "1 without a CI run, 1 in progress, 1 re-run, 1 cancelled.\n"
    ) in stdout
    # Results only where a completed first attempt measured the change; a preview everywhere.
    for head in outcomes:
        directory = out / head[:12]
        assert (directory / "results.json").exists() == (head in story.measured)
        preview = strict_loads((directory / "preview.json").read_bytes())
        jsonschema.Draft202012Validator(schema("preview.schema.json")).validate(preview)
    # The token went to the API as a credential and nowhere else.
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in fake.requests)
    assert TOKEN not in stdout + stderr + every_file_text(out)


def test_the_results_files_map_matrix_called_and_doubtful_jobs(
    story: Story, tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, _stdout, _stderr = history(capsys, tasks, story, out)
    assert code == 0
    results = strict_loads((out / story.merged[:12] / "results.json").read_bytes())
    jsonschema.Draft202012Validator(schema("results.schema.json")).validate(results)
    assert parse_results(results) is not None
    report = strict_loads((out / story.merged[:12] / "report.json").read_bytes())
    assert results["tested_sha"] == report["tested_sha"] == story.merged
    assert results["tasks"] == {
        # "E2E 1" may be e2e-api or e2e-web: it fails both of their tasks.
        "api": {"result": "failure", "duration_ms": 180_000},
        "build": {"result": "success", "duration_ms": 61_000},
        "docs": {"result": "success", "duration_ms": 45_000},
        "lint": {"result": "success", "duration_ms": 90_000},
        "unit": {"result": "failure", "duration_ms": 120_000},
        "web": {"result": "failure", "duration_ms": 180_000},
    }
    ci = results["ci"]
    assert (ci["version"], ci["workflow"], ci["run_id"], ci["run_attempt"]) == (1, "ci.yml", 901, 1)
    assert [(entry["name"], entry["job"], entry["tasks"]) for entry in ci["jobs"]] == [
        ("unit (3.11)", "unit", ["unit"]),
        ("unit (3.12)", "unit", ["unit"]),
        ("Lint", "lint", ["lint"]),
        ("Build / compile", "build", ["build"]),
        ("E2E 1", None, ["api", "web"]),
        ("E2E 2", None, ["api", "web"]),
        ("docs", "docs", ["docs"]),
        ("gate", "gate", []),
    ]
    assert ci["jobs"][1]["result"] == "failure"
    assert ci["jobs"][3]["duration_ms"] == 61_000
    assert ci["needs"] == {
        "unit": [],
        "lint": [],
        "build": ["unit", "lint"],
        "e2e-api": [],
        "e2e-web": [],
        "docs": [],
        "gate": ["unit", "lint", "build", "e2e-api", "e2e-web", "docs"],
    }
    # The change found through its commit: every job of both pages.
    paged = strict_loads((out / story.found[:12] / "results.json").read_bytes())
    assert len(paged["ci"]["jobs"]) == 101
    assert paged["tasks"]["unit"] == {"result": "success", "duration_ms": 100 * 90_000}
    assert paged["tasks"]["lint"]["result"] == "failure"


def test_a_second_run_asks_nothing_about_measured_changes(
    story: Story, tasks: Path, tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert history(capsys, tasks, story, out)[0] == 0
    first = {head: (out / head[:12] / "results.json").read_bytes() for head in story.measured}
    fake.requests.clear()
    code, stdout, _stderr = history(capsys, tasks, story, out, "--format", "json")
    assert code == 0
    view = json.loads(stdout)
    by_head = {change["head"]: change["ci"] for change in view["changes"]}
    for head in story.measured:
        assert by_head[head]["outcome"] == "existing"
        assert by_head[head]["results"] == str(out / head[:12] / "results.json")
        assert (out / head[:12] / "results.json").read_bytes() == first[head]
    assert view["summary"]["ci"] == {
        "measured": 0,
        "existing": 2,
        "pull-request-not-found": 1,
        "no-ci-run": 1,
        "in-progress": 1,
        "re-run": 1,
        "cancelled": 1,
    }
    sent = fake.paths()
    measured_marks = ("/pulls/1", "/pulls/70", story.feature, story.merged, story.found, sha(7))
    assert not [path for path in sent if any(mark in path for mark in measured_marks)]
    assert not [path for path in sent if "/runs/901/" in path or "/runs/907/" in path]
    # The changes not measured are asked about again: the run may have finished since.
    assert any(story.re_run in path or "/pulls/3" in path for path in sent)


def test_the_json_output_names_each_outcome(
    story: Story, tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = history(capsys, tasks, story, out, "--format", "json")
    assert (code, stderr) == (0, "")
    view = json.loads(stdout)
    entries = {change["head"]: change["ci"] for change in view["changes"]}
    assert entries[story.merged] == {
        "outcome": "measured",
        "pull_request": 1,
        "ci_run": 901,
        "results": str(out / story.merged[:12] / "results.json"),
        "preview": str(out / story.merged[:12] / "preview.json"),
    }
    assert entries[story.lost] == {
        "outcome": "pull-request-not-found",
        "pull_request": None,
        "ci_run": None,
        "results": None,
        "preview": str(out / story.lost[:12] / "preview.json"),
    }
    assert entries[story.re_run]["outcome"] == "re-run"
    assert entries[story.re_run]["results"] is None
    assert view["summary"]["ci"]["measured"] == 2


def test_without_repository_history_is_unchanged(
    story: Story, tasks: Path, tmp_path: Path, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    arguments = ["--tasks-file", str(tasks), "--repo", str(story.repo.path), "--out", str(out)]
    code = main(["history", *arguments, "--format", "json"])
    view = json.loads(capsys.readouterr().out)
    assert code == 0
    assert fake.requests == []
    assert all(
        set(change) == {"base", "head", "subject", "status", "report"} for change in view["changes"]
    )
    assert "ci" not in view["summary"]
    assert {path.name for path in out.rglob("*") if path.is_file()} == {"report.json"}


def _setup_failure(story: Story, fake: FakeGitHub, setup: str, tmp_path: Path) -> list[str]:
    runs = story.actions.runs_path(story.feature)
    if setup == "workflow-404":
        fake.script(runs, FakeResponse.not_found())
    elif setup == "runs-500":
        fake.script(runs, FakeResponse(500, f"oops {TOKEN}".encode()))
    elif setup == "runs-malformed":
        fake.script(runs, FakeResponse.json({"workflow_runs": [{"id": "x"}]}))
    elif setup == "pull-not-json":
        fake.script(story.actions.pull_path(1), FakeResponse(200, b"<html>secret</html>"))
    elif setup == "rate-limit":
        fake.script(runs, FakeResponse(403, b"{}", {"Retry-After": "30"}))
        return ["--max-wait", "10"]
    elif setup == "jobs-500":
        fake.script(story.actions.jobs_path(901), FakeResponse(502, b"bad gateway"))
    elif setup == "plain-http":
        return ["plain-http"]
    elif setup == "bad-map":
        bad = tmp_path / "map.json"
        bad.write_text("[]", "utf-8")
        return ["--map", str(bad)]
    return []


@pytest.mark.parametrize(
    ("setup", "code_name"),
    [
        ("workflow-404", "workflow-not-found"),
        ("runs-500", "github-unavailable"),
        ("runs-malformed", "invalid-answer"),
        ("pull-not-json", "invalid-answer"),
        ("rate-limit", "rate-limited"),
        ("jobs-500", "github-unavailable"),
        ("plain-http", "invalid-settings"),
        ("bad-map", "invalid-job-map"),
    ],
)
def test_failures_print_one_fixed_line(
    story: Story,
    tasks: Path,
    tmp_path: Path,
    fake: FakeGitHub,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    setup: str,
    code_name: str,
) -> None:
    extra = _setup_failure(story, fake, setup, tmp_path)
    if extra == ["plain-http"]:
        monkeypatch.setenv("GITHUB_API_URL", fake.url.replace("https://", "http://"))
        extra = []
    out = tmp_path / "out"
    code, stdout, stderr = history(capsys, tasks, story, out, *extra)
    assert (code, stdout) == (1, "")
    assert stderr.splitlines()[-1] == f"jev-select: history failed ({code_name})."
    assert TOKEN not in stderr
    assert not [word for word in ("secret", "oops", "gateway") if word in stderr]
    assert not list(out.rglob("results.json"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repository", REPOSITORY], "--ci-workflow"),
        (["--ci-workflow", "ci.yml"], "--repository"),
        (["--repository", "not a name", "--ci-workflow", "ci.yml"], "--repository"),
        (["--repository", REPOSITORY, "--ci-workflow", "../ci"], "--ci-workflow"),
        (["--repository", REPOSITORY, "--ci-workflow", "ci.yml", "--max-wait", "-1"], "max-wait"),
    ],
)
def test_bad_usage(
    story: Story,
    tasks: Path,
    tmp_path: Path,
    fake: FakeGitHub,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    code = main(["history", "--tasks-file", str(tasks), "--repo", str(story.repo.path), *args])
    captured = capsys.readouterr()
    assert (code, captured.out) == (c.USAGE_EXIT_CODE, "")
    assert message in captured.err
    assert fake.requests == []
