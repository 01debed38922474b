"""Local ``plan`` for people: details, failure causes, the key-less preview, --json, --report.

The command runs in the test process (``run_cli_in_process``): nothing here is about the
process boundary."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import API_KEY_SENTINEL, run_cli_in_process
from support.fakejev import FakeJev, Reply
from support.gitrepo import GitRepo

from jev_select import contracts as c

WORKFLOW = """name: CI
on: pull_request
jobs:
  unit:
    name: Unit tests
    runs-on: ubuntu-latest
    steps:
      - run: python -m pytest
"""
TASKS = """lint:
  description: Lints everything.
  always: true
unit:
  description: Runs the unit tests.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: Unit tests
docs:
  description: Builds the docs.
  force_paths: [site/**, docs/**]
api:
  description: Checks the public API.
"""


@pytest.fixture(scope="module")
def jev() -> Iterator[FakeJev]:
    with FakeJev(tls=True, scores={"api": 0.01, "docs": 0.5, "lint": 0.5, "unit": 0.5}) as server:
        yield server


class Repo:
    def __init__(self, root: Path) -> None:
        self.repo = GitRepo.init(root / "repo")
        self.base = self.repo.commit(
            {
                ".github/workflows/ci.yml": WORKFLOW,
                "src/a.py": "a = 1\n",
                "docs/index.md": "# Docs\n",
            }
        )
        self.head = self.repo.commit(
            {"src/a.py": "a = 2\n", "docs/index.md": "# Docs!\n"}, parents=[self.base]
        )
        # A clean checkout of HEAD: a local plan warns about uncommitted work otherwise.
        self.repo.check_out()
        self.tasks = root / "tasks.yml"
        self.tasks.write_text(TASKS, "utf-8")
        self.temp = root / "tmp"
        self.temp.mkdir()
        self.root = root

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.root), "TMPDIR": str(self.temp), **extra}

    def args(self, *more: str) -> list[str]:
        return [
            "plan",
            "--tasks-file",
            str(self.tasks),
            "--repo",
            str(self.repo.path),
            "--base",
            self.base,
            "--head",
            self.head,
            *more,
        ]


def _report(stdout: str) -> dict[str, Any]:
    last = stdout.splitlines()[-1]
    assert last.startswith("report: ")
    loaded: dict[str, Any] = json.loads(Path(last[len("report: ") :]).read_text("utf-8"))
    return loaded


def test_preview_without_a_key(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    completed = run_cli_in_process(repo.args(), repo.env())
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    lines = completed.stdout.splitlines()
    assert lines[0] == "jev-select: bypassed (enforce): 4 of 4 tasks selected"
    preview = lines[lines.index(c.PREVIEW_HEADING) :]
    assert preview[:-1] == [
        c.PREVIEW_HEADING,
        "  2 changed file(s):",
        "    docs/index.md",
        "    src/a.py",
        "  kept: docs (docs/** matched docs/index.md)",
        "  kept: lint (always)",
        "  kept: unit (gaps: job-missing:.github/workflows/ci.yml#Unit tests)",
        "  with a key, Jev would be asked about 1 of 4 task(s): api (1 request(s))",
        c.PREVIEW_HINT,
    ]
    # The report is exactly that of a bypassed run: nothing collected, same reasons.
    report = _report(completed.stdout)
    assert report["status"] == c.STATUS_BYPASSED
    assert report["job_metadata"] == {}
    assert report["observation"] is None
    assert report["diff_hash"] is None
    assert report["changed_path_count"] is None
    assert report["tasks"]["api"]["reasons"] == [c.REASON_MISSING_API_KEY]
    assert report["tasks"]["lint"]["reasons"] == [c.REASON_ALWAYS, c.REASON_MISSING_API_KEY]


def test_preview_without_consent(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    completed = run_cli_in_process(repo.args(), repo.env(JEV_API_KEY=API_KEY_SENTINEL))
    assert completed.returncode == 0, completed.stderr
    assert c.PREVIEW_HEADING in completed.stdout.splitlines()
    assert _report(completed.stdout)["tasks"]["api"]["reasons"] == [
        c.REASON_EXTERNAL_CONTEXT_DISABLED
    ]
    assert API_KEY_SENTINEL not in completed.stdout


def test_scores_thresholds_patterns_and_gaps(tmp_path: Path, jev: FakeJev) -> None:
    repo = Repo(tmp_path)
    env = repo.env(JEV_API_KEY=API_KEY_SENTINEL, REQUESTS_CA_BUNDLE=jev.ca_bundle or "")
    completed = run_cli_in_process(
        repo.args("--allow-external-context", "--api-base-url", jev.base_url), env
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "jev-select: planned (enforce): 3 of 4 tasks selected"
    rows = {line.split()[0]: " ".join(line.split()) for line in lines[2:6]}
    assert rows["api"] == "api no no jev-below-threshold score 0.01 < 0.05"
    assert rows["docs"] == (
        "docs yes yes path-match score 0.5 >= 0.05; docs/** matched docs/index.md"
    )
    assert rows["unit"] == (
        "unit yes yes metadata-unavailable score 0.5 >= 0.05; "
        "gaps: job-missing:.github/workflows/ci.yml#Unit tests"
    )
    assert c.PREVIEW_HEADING not in lines


@pytest.mark.parametrize(
    ("reply", "cause"),
    [(Reply.status(503), "http-503"), (Reply.status(401), "http-401")],
)
def test_a_failed_evaluation_says_why_in_one_line(
    tmp_path: Path, jev: FakeJev, reply: Reply, cause: str
) -> None:
    repo = Repo(tmp_path)
    jev.responder = lambda _request: reply
    try:
        env = repo.env(JEV_API_KEY=API_KEY_SENTINEL, REQUESTS_CA_BUNDLE=jev.ca_bundle or "")
        completed = run_cli_in_process(
            repo.args("--allow-external-context", "--api-base-url", jev.base_url), env
        )
    finally:
        jev.responder = None
    assert completed.returncode == 0, completed.stderr
    assert (
        f"jev-select: the Jev evaluation failed ({cause}); every task runs."
        in completed.stdout.splitlines()
    )


def test_failure_causes_of_the_connection(tmp_path: Path, jev: FakeJev) -> None:
    repo = Repo(tmp_path)
    base = repo.args("--allow-external-context")
    key = {"JEV_API_KEY": API_KEY_SENTINEL}
    # No trusted CA for the test server: TLS fails.
    tls = run_cli_in_process([*base, "--api-base-url", jev.base_url], repo.env(**key))
    # A closed port on loopback: the connection is refused.
    with socket_port() as port:
        refused = run_cli_in_process(
            [*base, "--api-base-url", f"https://127.0.0.1:{port}"], repo.env(**key)
        )
    dns = run_cli_in_process([*base, "--api-base-url", "https://jev.invalid"], repo.env(**key))
    for completed, cause in ((tls, "tls"), (refused, "connect"), (dns, "dns")):
        assert completed.returncode == 0, completed.stderr
        assert (
            f"jev-select: the Jev evaluation failed ({cause}); every task runs."
            in completed.stdout.splitlines()
        ), completed.stdout


class socket_port:
    """A loopback port with nothing listening on it."""

    def __enter__(self) -> int:
        import socket

        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        probe.close()
        return port

    def __exit__(self, *_exc: object) -> None:
        return None


def test_json_prints_the_report_and_the_preview(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    completed = run_cli_in_process(repo.args("--json"), repo.env())
    assert completed.returncode == 0, completed.stderr
    printed = json.loads(completed.stdout)
    assert list(printed) == [c.PLAN_OUTPUT_REPORT, c.PLAN_OUTPUT_PREVIEW]
    report = printed[c.PLAN_OUTPUT_REPORT]
    assert report["version"] == 5
    assert report["status"] == c.STATUS_BYPASSED
    assert set(report["tasks"]) == {"api", "docs", "lint", "unit"}
    assert printed[c.PLAN_OUTPUT_PREVIEW][c.PREVIEW_KEYED_RUN][c.KEYED_RUN_CANDIDATES] == ["api"]


def test_json_of_a_keyed_run_has_no_preview(tmp_path: Path, jev: FakeJev) -> None:
    repo = Repo(tmp_path)
    env = repo.env(JEV_API_KEY=API_KEY_SENTINEL, REQUESTS_CA_BUNDLE=jev.ca_bundle or "")
    completed = run_cli_in_process(
        repo.args("--allow-external-context", "--api-base-url", jev.base_url, "--json"), env
    )
    assert completed.returncode == 0, completed.stderr
    printed = json.loads(completed.stdout)
    assert list(printed) == [c.PLAN_OUTPUT_REPORT, c.PLAN_OUTPUT_PREVIEW]
    assert printed[c.PLAN_OUTPUT_REPORT]["status"] == c.STATUS_PLANNED
    assert printed[c.PLAN_OUTPUT_PREVIEW] is None


def test_report_path_and_one_file_per_repository(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    chosen = tmp_path / "out" / "plan.json"
    completed = run_cli_in_process(repo.args("--report", str(chosen)), repo.env())
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[-1] == f"report: {chosen}"
    assert json.loads(chosen.read_text("utf-8"))["version"] == 5
    assert list(repo.temp.iterdir()) == []
    first = run_cli_in_process(repo.args(), repo.env())
    second = run_cli_in_process(repo.args(), repo.env())
    assert first.stdout.splitlines()[-1] == second.stdout.splitlines()[-1]
    directories = [path for path in repo.temp.iterdir() if path.name.startswith("jev-select-")]
    assert len(directories) == 1
    assert directories[0].name.startswith("jev-select-report-local-")


def test_json_and_report_are_local_only(tmp_path: Path) -> None:
    for flag in (["--json"], ["--report", "x.json"]):
        completed = run_cli_in_process(
            ["plan", *flag],
            {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GITHUB_ACTIONS": "true"},
        )
        assert completed.returncode == 1
        assert "invalid-invocation" in completed.stdout


def test_a_missing_default_base_says_what_to_do(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo", branch="master")
    repo.commit({"a.txt": "a\n"}, branch="master")
    repo.set_symbolic_ref("HEAD", "refs/heads/master")
    tasks = tmp_path / "tasks.yml"
    tasks.write_text("unit: {description: d}\n", "utf-8")
    completed = run_cli_in_process(
        ["plan", "--tasks-file", str(tasks), "--repo", str(repo.path)],
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert completed.returncode == 1
    assert completed.stderr == c.LOCAL_DEFAULT_BASE_MISSING + "\n"


def test_plan_help_documents_the_environment(tmp_path: Path) -> None:
    completed = run_cli_in_process(
        ["plan", "--help"], {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    )
    assert completed.returncode == 0
    assert "JEV_API_KEY" in completed.stdout
    assert "GITHUB_TOKEN" in completed.stdout
    assert "--json" in completed.stdout
