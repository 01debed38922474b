"""GitHub lookups of local commands: the one cause line, and the cache of commit-pinned lookups.

docs/reference.md, "Lookup failures and the local cache". Local ``plan`` (its preview looks
actions up even without a key), ``check`` and ``history`` run in the test process against a
closed port, a fake GitHub that never answers, one that refuses or rate-limits, and one that
answers; GitHub mode runs once to show it never touches the cache.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cliutil import (
    API_KEY_SENTINEL,
    TOKEN_SENTINEL,
    GitHubEnv,
    run_cli_in_process,
)
from support.deadlines import no_hang
from support.fakegithub import FakeGitHub, FakeResponse
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

from jev_select import contracts as c

SHA = "0c45773b623bea8c8e75f6c82b208c3cf94ea4f9"
PINNED = f"acme/pinned@{SHA}"
TAGGED = "acme/tagged@v1"
ABSENT = f"acme/absent@{SHA}"
WORKFLOW = f"""on: pull_request
jobs:
  unit:
    runs-on: ubuntu-latest
    steps:
      - uses: {PINNED}
      - uses: {TAGGED}
      - run: make test
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: {ABSENT}
"""
TASKS = """unit:
  description: Runs the unit tests.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: unit
"""
# A task whose only action does not exist at its commit.
ABSENT_TASK = """lint:
  description: Runs the linters.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: lint
"""
CAUSE_PREFIX = "jev-select: GitHub lookups failed: "
PINNED_COMMIT = f"/repos/acme/pinned/commits/{SHA}"
ABSENT_COMMIT = f"/repos/acme/absent/commits/{SHA}"
TAGGED_COMMIT = "/repos/acme/tagged/commits/v1"
RESET = "1893456000"  # 2030-01-01T00:00:00Z


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class Local:
    """A repository whose one task uses a commit-pinned and a tagged action, and its run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = GitRepo.init(root / "repo")
        self.base = self.repo.commit({".github/workflows/ci.yml": WORKFLOW, "src/a.py": "1\n"})
        self.head = self.repo.commit({"src/a.py": "2\n"}, parents=[self.base])
        self.tasks = root / "tasks.yml"
        self.tasks.write_text(TASKS, "utf-8")
        self.home = root / "home"
        self.home.mkdir()
        (root / "tmp").mkdir()

    def env(self, api_url: str, **extra: str) -> dict[str, str]:
        return {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "TMPDIR": str(self.root / "tmp"),
            c.GITHUB_API_URL_ENV: api_url,
            **extra,
        }

    def plan(self, env: dict[str, str], *extra: str) -> tuple[str, str]:
        args = ["plan", "--tasks-file", str(self.tasks), "--repo", str(self.repo.path), *extra]
        completed = run_cli_in_process([*args, "--base", self.base, "--head", self.head], env)
        assert completed.returncode == 0, completed.stderr
        return completed.stdout, completed.stderr

    def check(self, env: dict[str, str]) -> tuple[str, str]:
        args = ["check", "--tasks-file", str(self.tasks), "--repo", str(self.repo.path)]
        completed = run_cli_in_process(args, env)
        assert completed.returncode == 0, completed.stderr
        return completed.stdout, completed.stderr

    @property
    def cache(self) -> Path:
        return self.home / ".cache" / "jev-select" / "github-lookups"


@pytest.fixture
def local(tmp_path: Path) -> Local:
    return Local(tmp_path)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(tls=True) as server:
        server.add_action("acme/pinned", SHA, {"action.yml": "name: Pinned\n"})
        server.add_action("acme/tagged", "v1", {"action.yml": "name: Tagged\n"})
        yield server


def served(github: FakeGitHub, **extra: str) -> dict[str, str]:
    assert github.ca_bundle is not None
    return {"REQUESTS_CA_BUNDLE": github.ca_bundle, **extra}


def cause_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(CAUSE_PREFIX)]


# ---- the cause line ---------------------------------------------------------------------------


def test_an_unreachable_api_is_one_line_and_the_gaps_stay(local: Local) -> None:
    url = f"https://127.0.0.1:{closed_port()}"
    stdout, stderr = local.plan(local.env(url))
    assert cause_lines(stderr) == [
        f"jev-select: GitHub lookups failed: unreachable (no answer from {url}); affected tasks "
        "run; check GITHUB_API_URL and the network."
    ]
    # The terminal, told why, counts the lookup gaps instead of repeating each...
    assert f"{c.GAP_ACTION_METADATA_MISSING.prefix}{PINNED}" not in stdout
    assert c.LOOKUP_GAPS_GROUPED_TEMPLATE.format(count=2) in stdout
    # ...and the JSON keeps every gap as any failed lookup gives it.
    document, _stderr = local.plan(local.env(url), "--json")
    assert f"{c.GAP_ACTION_METADATA_MISSING.prefix}{PINNED}" in document
    assert f"{c.GAP_ACTION_METADATA_MISSING.prefix}{TAGGED}" in document


def test_an_api_that_never_answers_times_out(
    local: Local, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    github.silent = True
    monkeypatch.setattr(c, "METADATA_LOOKUP_BOUND_S", 0.5)
    with no_hang():
        _, stderr = local.plan(local.env(github.url, **served(github)))
    assert cause_lines(stderr) == [
        f"jev-select: GitHub lookups failed: timed out ({github.url} did not answer in time); "
        "affected tasks run; check GITHUB_API_URL and the network."
    ]


def test_a_rate_limit_names_its_reset(local: Local, github: FakeGitHub) -> None:
    limited = FakeResponse(403, b"{}", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET})
    for path in (PINNED_COMMIT, TAGGED_COMMIT):
        github.script(path, limited)
    _, stderr = local.plan(local.env(github.url, **served(github)))
    assert cause_lines(stderr) == [
        "jev-select: GitHub lookups failed: rate-limited until 2030-01-01T00:00:00Z "
        f"({github.url} allows few requests an hour without a token); affected tasks run; set "
        "GITHUB_TOKEN (e.g. GITHUB_TOKEN=$(gh auth token)) and check GITHUB_API_URL."
    ]


def test_a_refused_token_is_named_and_never_shown(local: Local, github: FakeGitHub) -> None:
    for path in (PINNED_COMMIT, TAGGED_COMMIT):
        github.script(path, FakeResponse(401, b'{"message": "Bad credentials"}'))
    stdout, stderr = local.plan(
        local.env(github.url, GITHUB_TOKEN=TOKEN_SENTINEL, **served(github))
    )
    assert cause_lines(stderr) == [
        f"jev-select: GitHub lookups failed: unauthorized ({github.url} refused GITHUB_TOKEN); "
        "affected tasks run; set GITHUB_TOKEN to a valid token (e.g. "
        "GITHUB_TOKEN=$(gh auth token)) and check GITHUB_API_URL."
    ]
    assert {request.headers["authorization"] for request in github.requests} == {
        f"Bearer {TOKEN_SENTINEL}"
    }
    report = Path(stdout.splitlines()[-1].removeprefix("report: ")).read_text("utf-8")
    assert TOKEN_SENTINEL not in stdout + stderr + report
    assert not local.cache.exists()  # nothing was found, so nothing was kept


def test_check_prints_the_cause_once(local: Local) -> None:
    url = f"https://127.0.0.1:{closed_port()}"
    stdout, stderr = local.check(local.env(url))
    assert len(cause_lines(stderr)) == 1
    assert f'"{PINNED}"' in stdout
    assert f'"{TAGGED}"' in stdout


def test_history_prints_the_cause_once_for_all_its_changes(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    root = repo.commit({".github/workflows/ci.yml": WORKFLOW, "src/a.py": "1\n"})
    merged = root
    for number in (1, 2):
        feature = repo.commit({"src/a.py": f"{number + 1}\n"}, parents=[merged], branch=None)
        merged = repo.merge(
            merged, feature, message=f"Merge pull request #{number} from someone/x", branch="main"
        )
    tasks = tmp_path / "tasks.yml"
    tasks.write_text(TASKS, "utf-8")
    (tmp_path / "tmp").mkdir()
    with FakeJev(tls=True, scores=0.01) as jev:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "TMPDIR": str(tmp_path / "tmp"),
            "JEV_API_KEY": API_KEY_SENTINEL,
            "REQUESTS_CA_BUNDLE": jev.ca_bundle or "",
            c.GITHUB_API_URL_ENV: f"https://127.0.0.1:{closed_port()}",
        }
        args = ["history", "--tasks-file", str(tasks), "--repo", str(repo.path), "--merges"]
        args += ["--api-base-url", jev.base_url, "--allow-external-context"]
        args += ["--format", "json", "--out", str(tmp_path / "out")]
        completed = run_cli_in_process(args, env)
    assert completed.returncode == 0, completed.stderr
    assert len(cause_lines(completed.stderr)) == 1
    changes = json.loads(completed.stdout)["changes"]
    assert len(changes) == 2
    for change in changes:
        report = json.loads(Path(change["report"]).read_text("utf-8"))
        # The report's gap strings are unchanged.
        assert report["job_metadata"]["unit"]["warnings"] == [
            c.GAP_ACTION_METADATA_MISSING.prefix + PINNED,
            c.GAP_ACTION_METADATA_MISSING.prefix + TAGGED,
        ]


# ---- the cache --------------------------------------------------------------------------------


def test_a_commit_pinned_action_is_fetched_once_over_two_runs(
    local: Local, github: FakeGitHub
) -> None:
    local.tasks.write_text(TASKS + ABSENT_TASK, "utf-8")
    env = local.env(github.url, **served(github))
    runs = [local.plan(env), local.plan(env)]
    paths = github.paths()
    assert paths.count(PINNED_COMMIT) == 1
    assert paths.count(TAGGED_COMMIT) == 2  # a tag moves: asked on every run
    # "Not found" is no cause and is asked again: a token set later may see a private repository.
    assert paths.count(ABSENT_COMMIT) == 2
    for stdout, stderr in runs:
        assert cause_lines(stderr) == []
        assert f"{c.GAP_ACTION_METADATA_MISSING.prefix}{ABSENT}" in stdout
        assert f"{c.GAP_ACTION_METADATA_MISSING.prefix}{PINNED}" not in stdout
        assert f"{c.GAP_ACTION_METADATA_MISSING.prefix}{TAGGED}" not in stdout
    assert len(list(local.cache.iterdir())) == 1


def test_a_corrupt_entry_is_fetched_again(local: Local, github: FakeGitHub) -> None:
    env = local.env(github.url, **served(github))
    local.plan(env)
    (entry,) = local.cache.iterdir()
    entry.write_bytes(b"\x00 not an entry")
    stdout, _ = local.plan(env)
    assert c.GAP_ACTION_METADATA_MISSING.prefix not in stdout
    local.plan(env)
    assert github.paths().count(PINNED_COMMIT) == 2


def test_xdg_cache_home_is_honoured(local: Local, github: FakeGitHub, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    env = local.env(github.url, XDG_CACHE_HOME=str(xdg), **served(github))
    local.plan(env)
    local.check(env)
    assert github.paths().count(PINNED_COMMIT) == 1
    assert len(list((xdg / "jev-select" / "github-lookups").iterdir())) == 1
    assert not (local.home / ".cache").exists()


def test_github_mode_never_touches_the_cache(
    local: Local, tmp_path: Path, github: FakeGitHub
) -> None:
    xdg = tmp_path / "xdg"
    # A local run fills the cache GitHub mode is then given.
    local.plan(local.env(github.url, XDG_CACHE_HOME=str(xdg), **served(github)))
    directory = xdg / "jev-select" / "github-lookups"
    (entry,) = directory.iterdir()
    before = (entry.read_bytes(), entry.stat().st_mtime_ns)
    assert github.paths().count(PINNED_COMMIT) == 1
    repo = GitRepo.init(tmp_path / "origin")
    base = repo.commit({".github/workflows/ci.yml": WORKFLOW, "src/a.py": "1\n"})
    head = repo.commit({"src/a.py": "2\n"}, parents=[base], branch="feature")
    merge = repo.merge(base, head)
    with FakeJev(tls=True, scores=0.0) as jev:
        bundle = tmp_path / "ca.pem"
        bundle.write_text(
            Path(jev.ca_bundle or "").read_text("ascii")
            + Path(github.ca_bundle or "").read_text("ascii"),
            "ascii",
        )
        for run in ("first", "second"):
            env = GitHubEnv(
                root=tmp_path / run,
                inputs={
                    "tasks": TASKS,
                    "api-key": API_KEY_SENTINEL,
                    "allow-external-context": "true",
                    "api-base-url": jev.base_url,
                    "timeout-ms": "20000",
                },
                sha=merge,
                runner=run_cli_in_process,
            )
            env.event = env.pull_request_event(base=base, head=head)
            env.extra.update(
                {
                    c.GITHUB_API_URL_ENV: github.url,
                    "REQUESTS_CA_BUNDLE": str(bundle),
                    "XDG_CACHE_HOME": str(xdg),
                }
            )
            result = env.run("--remote", str(repo.path))
            assert result.code == 0, result.stdout
            assert result.report["job_metadata"]["unit"]["warnings"] == []
            assert not (tmp_path / run / "home" / ".cache").exists()
    # Each GitHub-mode run asked GitHub itself, and the cache is as the local run left it.
    assert github.paths().count(PINNED_COMMIT) == 3
    assert list(directory.iterdir()) == [entry]
    assert (entry.read_bytes(), entry.stat().st_mtime_ns) == before
