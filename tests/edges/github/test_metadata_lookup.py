"""GitHub lookups of the metadata phase: at most four in flight, one overall bound, once each."""

from __future__ import annotations

import json
from pathlib import Path

from support.cliutil import API_KEY_SENTINEL, run_cli
from support.fakegithub import FakeGitHub
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.core.evidence.resolve import ActionFile, LookupFailure
from jev_select.edges.github.api import GitHubApi
from jev_select.edges.github.lookups import MetadataLookups


def test_lookups_run_four_at_a_time_and_each_once() -> None:
    with FakeGitHub() as github:
        github.latency = 0.05
        shas = {
            name: github.add_action(f"acme/{name}", "v1", {"action.yml": f"name: {name}\n"})
            for name in ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
        }
        cache_sha = github.add_action(
            "actions/cache",
            "v4",
            {"action.yml": "name: Cache\n", "restore/action.yml": "name: R\n"},
        )
        lookups = MetadataLookups(GitHubApi(github.url, ""))
        asked = [("acme", name, "", "v1") for name in shas]
        asked += [("actions", "cache", "", "v4"), ("actions", "cache", "restore", "v4")]
        for key in asked + asked:  # asked twice before anything is fetched
            assert lookups.fetch_action(*key) == "missing"
        assert lookups.run_pending() is True
        answers = [lookups.fetch_action(*key) for key in asked]
        assert all(isinstance(answer, ActionFile) for answer in answers)
        assert lookups.run_pending() is False
        assert github.max_in_flight == c.METADATA_LOOKUP_IN_FLIGHT
        # Both cache actions share one commit lookup, made once although both were in flight.
        paths = github.paths()
        assert paths.count("/repos/actions/cache/commits/v4") == 1
        assert len(paths) == len(set(paths)) == 10 * 2 + 1 + 2
        assert isinstance(answers[-1], ActionFile)
        assert answers[-1].resolved_sha == cache_sha


def test_past_the_bound_the_remaining_lookups_are_missing() -> None:
    with FakeGitHub() as github:
        github.silent = True
        lookups = MetadataLookups(GitHubApi(github.url, ""), bound_s=0.3)
        keys = [("acme", f"tool{n}", "", "v1") for n in range(9)]
        for key in keys:
            lookups.fetch_action(*key)
        lookups.fetch_workflow("acme", "ci", ".github/workflows/x.yml", "v1")
        assert lookups.run_pending() is True
        assert [lookups.fetch_action(*key) for key in keys] == ["missing"] * 9
        assert lookups.fetch_workflow("acme", "ci", ".github/workflows/x.yml", "v1") == "missing"
        # Nothing else starts after the bound: at most the first four ever reached the server.
        assert github.max_in_flight <= c.METADATA_LOOKUP_IN_FLIGHT
        # A later round (a workflow fetched late asks for more) is already past the bound.
        lookups.fetch_action("acme", "late", "", "v1")
        assert lookups.run_pending() is True
        assert lookups.fetch_action("acme", "late", "", "v1") == "missing"


def test_without_an_api_every_lookup_is_missing() -> None:
    lookups = MetadataLookups(None)
    assert lookups.fetch_workflow("a", "b", "w.yml", "v1") == "missing"
    assert lookups.run_pending() is True
    assert lookups.run_pending() is False


WORKFLOW = """\
on: pull_request
jobs:
  unit:
    steps:
      - uses: acme/setup@v1
      - run: make test
"""


def test_local_mode_uses_github_api_url(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "origin")
    base = repo.commit({".github/workflows/ci.yml": WORKFLOW, "src/a.py": "a = 1\n"})
    head = repo.commit({"src/a.py": "a = 2\n"}, parents=[base], branch="feature")
    tasks = tmp_path / "tasks.yml"
    tasks.write_text(
        "unit:\n  description: Unit tests.\n  jobs:\n    - workflow: .github/workflows/ci.yml\n",
        "utf-8",
    )
    temp = tmp_path / "tmp"
    temp.mkdir()
    with FakeJev(tls=True, scores=0.0) as jev, FakeGitHub(tls=True) as github:
        github.add_action("acme/setup", "v1", {"action.yml": "name: Setup\n"})
        bundle = tmp_path / "ca.pem"
        bundle.write_text(
            Path(jev.ca_bundle or "").read_text("ascii")
            + Path(github.ca_bundle or "").read_text("ascii"),
            "ascii",
        )
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "TMPDIR": str(temp),
            "JEV_API_KEY": API_KEY_SENTINEL,
            "REQUESTS_CA_BUNDLE": str(bundle),
            "GITHUB_API_URL": github.url,
        }
        args = ["plan", "--tasks-file", str(tasks), "--repo", str(repo.path)]
        args += ["--base", base, "--head", head, "--api-base-url", jev.base_url]
        completed = run_cli([*args, "--allow-external-context"], env)
        assert completed.returncode == 0, completed.stderr
        assert "/repos/acme/setup/commits/v1" in github.paths()
    report_line = completed.stdout.splitlines()[-1]
    report = json.loads(Path(report_line.removeprefix("report: ")).read_text("utf-8"))
    assert report["job_metadata"]["unit"]["warnings"] == []


_REMOTE_WORKFLOWS = {
    "r1.yml": "on: workflow_call\njobs:\n  k:\n    uses: acme/ci/r2.yml@v1\n",
    "r2.yml": "on: workflow_call\njobs:\n  k:\n    steps: [{run: make}]\n",
}


class _RemoteWorkflows:
    """A ``LookupApi`` that answers from memory: no actions, two remote reusable workflows."""

    def set_deadline(self, deadline: float) -> None:
        return None

    def fetch_action(
        self, owner: str, repo: str, subpath: str, ref: str
    ) -> ActionFile | LookupFailure:
        return LookupFailure.MISSING

    def fetch_workflow(
        self, owner: str, repo: str, path: str, ref: str
    ) -> ActionFile | LookupFailure:
        return ActionFile(_REMOTE_WORKFLOWS[path], path, "c" * 40)


def test_the_lookup_rounds_share_one_expansion_time_bound() -> None:
    from jev_select.core.evidence.resolve import resolve_with_lookups
    from jev_select.core.models import JobRef, Task, TaskTable

    now = [0.0]
    files = {
        ".github/workflows/ci.yml": (
            "on: push\njobs:\n  a:\n    uses: ./.github/workflows/w1.yml\n"
            "  b:\n    uses: acme/ci/r1.yml@v1\n"
        ),
        ".github/workflows/w1.yml": "on: workflow_call\njobs:\n  k:\n    steps: [{run: x}]\n",
    }

    def read_file(path: str) -> bytes | None:
        if path.endswith("w1.yml"):
            # Reading w1 inside an expansion is slow: 40% of the bound, in each of the three
            # rounds (r1 is fetched after the first, r2 after the second).
            now[0] += 0.4 * c.REUSABLE_EXPANSION_BOUND_S
        return files[path].encode("utf-8")

    def clock() -> float:
        return now[0]

    lookups = MetadataLookups(_RemoteWorkflows(), clock=clock)
    tasks = TaskTable(
        (Task(id="t", description="d", jobs=(JobRef(".github/workflows/ci.yml", None),)),)
    )
    result = resolve_with_lookups(
        tasks, read_file=read_file, lookups=lookups, repository="o/r", commit="a" * 40, clock=clock
    )
    metadata = result.evidence["t"].job_metadata or {}
    # Each round alone stays within the bound; together the third one runs out during w1.
    assert metadata["warnings"] == [
        c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + "./.github/workflows/w1.yml",
        c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + "acme/ci/r1.yml@v1",
    ]
    assert lookups.fetch_workflow("acme", "ci", "r2.yml", "v1") != "missing"
