"""Pull requests, workflow runs and their jobs, served by a :class:`FakeGitHub` the way GitHub's
REST API lists them to ``jev-select history --repository``.

Usage::

    with FakeGitHub(tls=True) as fake:
        actions = FakeActions(fake, "octo/app")
        actions.pull(7, head=feature, merge_commit=merge)
        actions.runs(feature, [run(901)])
        actions.jobs(901, [job("unit (3.11)"), job("lint", "failure")])

Each registered path is exactly the request target the client sends (query included), so a
request the test did not expect answers 404.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import pytest

from support.fakegithub import FakeGitHub, FakeResponse

__all__ = ["FakeActions", "actions_api", "job", "run"]


def run(
    run_id: int,
    head: str,
    *,
    status: str = "completed",
    conclusion: str | None = "success",
    attempt: int = 1,
    event: str = "pull_request",
) -> dict[str, Any]:
    """A workflow run record as the runs listing holds it."""
    return {
        "id": run_id,
        "run_attempt": attempt,
        "event": event,
        "head_sha": head,
        "status": status,
        "conclusion": conclusion if status == "completed" else None,
        "pull_requests": [],
    }


def job(name: str, conclusion: str = "success", seconds: int = 90) -> dict[str, Any]:
    """A job record as the jobs listing holds it, ``seconds`` long."""
    return {
        "name": name,
        "status": "completed",
        "conclusion": conclusion,
        "started_at": "2026-11-20T10:00:00Z",
        "completed_at": f"2026-11-20T10:{seconds // 60:02d}:{seconds % 60:02d}Z",
    }


class FakeActions:
    """The GitHub data of one repository and one CI workflow."""

    def __init__(self, fake: FakeGitHub, repository: str, workflow: str = "ci.yml") -> None:
        self.fake = fake
        self.repository = repository
        self.workflow = workflow

    # ---- paths --------------------------------------------------------------------------------

    def pull_path(self, number: int) -> str:
        return f"/repos/{self.repository}/pulls/{number}"

    def commit_pulls_path(self, sha: str) -> str:
        return f"/repos/{self.repository}/commits/{sha}/pulls?per_page=100"

    def runs_path(self, head: str) -> str:
        query = urlencode({"per_page": 100, "head_sha": head, "event": "pull_request"})
        return f"/repos/{self.repository}/actions/workflows/{self.workflow}/runs?{query}"

    def jobs_path(self, run_id: int, attempt: int = 1, page: int = 1) -> str:
        return (
            f"/repos/{self.repository}/actions/runs/{run_id}/attempts/{attempt}"
            f"/jobs?per_page=100&page={page}"
        )

    # ---- data ---------------------------------------------------------------------------------

    @staticmethod
    def pull_record(
        number: int, *, head: str, merge_commit: str | None, merged: bool = True
    ) -> dict[str, Any]:
        return {
            "number": number,
            "state": "closed",
            "head": {"sha": head, "ref": f"feature-{number}"},
            "base": {"sha": "b" * 40, "ref": "main"},
            "merge_commit_sha": merge_commit,
            "merged_at": "2026-11-20T11:00:00Z" if merged else None,
        }

    def pull(
        self, number: int, *, head: str, merge_commit: str | None, merged: bool = True
    ) -> None:
        """``GET /pulls/<number>``."""
        record = self.pull_record(number, head=head, merge_commit=merge_commit, merged=merged)
        self.fake.route(self.pull_path(number), FakeResponse.json(record))

    def commit_pulls(self, sha: str, records: Sequence[Mapping[str, Any]]) -> None:
        """``GET /commits/<sha>/pulls``: a bare array."""
        self.fake.route(self.commit_pulls_path(sha), FakeResponse.json(list(records)))

    def runs(self, head: str, records: Sequence[Mapping[str, Any]], *, pages: int = 1) -> None:
        """The runs of ``head``, newest first, split over ``pages`` joined by ``Link``."""
        listed = list(records)
        size = max(1, -(-len(listed) // pages))
        chunks = [listed[index : index + size] for index in range(0, len(listed), size)] or [[]]
        first = self.runs_path(head)
        for index, chunk in enumerate(chunks):
            path = first if index == 0 else f"{first}&page={index + 1}"
            body = {"total_count": len(listed), "workflow_runs": chunk}
            headers = {"Content-Type": "application/json"}
            if index + 1 < len(chunks):
                headers["Link"] = f'<{self.fake.url}{first}&page={index + 2}>; rel="next"'
            self.fake.route(path, FakeResponse(200, json.dumps(body).encode(), headers))

    def jobs(self, run_id: int, records: Sequence[Mapping[str, Any]], *, attempt: int = 1) -> None:
        """The jobs of one run attempt, 100 a page as the client asks."""
        listed = list(records)
        pages = max(1, -(-len(listed) // 100))
        for page in range(pages):
            chunk = listed[page * 100 : (page + 1) * 100]
            self.fake.route(
                self.jobs_path(run_id, attempt, page + 1),
                FakeResponse.json({"total_count": len(listed), "jobs": chunk}),
            )


@contextlib.contextmanager
def actions_api(monkeypatch: pytest.MonkeyPatch, token: str) -> Iterator[FakeGitHub]:
    """A local HTTPS GitHub API under ``/api/v3`` that ``history --repository`` and ``rollout``
    reach through the environment: ``GITHUB_API_URL``, the CA bundle, ``GITHUB_TOKEN``; outside
    Actions and without a Jev key."""
    with FakeGitHub(tls=True, prefix="/api/v3") as server:
        assert server.ca_bundle is not None
        for name in ("GITHUB_ACTIONS", "GITHUB_SERVER_URL", "JEV_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("GITHUB_TOKEN", token)
        yield server
