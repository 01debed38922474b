"""GitHub Actions history through the REST API, for ``jev-select rollout`` and ``history``.

Edge module. It extends the bounded client of :mod:`.api` (same headers, token rule and
per-request bounds) with what a walk over many runs needs: ``Link`` pagination that never leaves
the API root, waits on rate-limit answers within one budget for the whole command, and artifact
downloads that follow the single redirect to storage without the token. Nothing from an answer is
ever echoed; failures are exceptions without text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from urllib.parse import quote, urlencode, urlsplit

from requests.utils import parse_header_links

from ... import contracts as c
from ...core.jsonutil import JsonError, strict_loads
from ...core.rollout import AnswerRefused, rate_limit_wait
from ...errors import JevSelectError
from ..httpio import HttpFailure, HttpResponse
from .api import GitHubApi, repository_path

__all__ = ["ActionsHistory", "ArtifactGone", "RateLimitExceeded"]

_RATE_LIMIT_HEADERS = ("retry-after", "x-ratelimit-remaining", "x-ratelimit-reset")
_LINK = "link"
_LOCATION = "location"
_GONE_STATUSES = (404, 410)
_NOT_FOUND = 404
# A commit GitHub does not have: 404, or 422 for a SHA it cannot resolve.
_UNKNOWN_COMMIT_STATUSES = (404, 422)


class RateLimitExceeded(JevSelectError):
    """GitHub asked for a wait longer than what is left of the budget."""


class ArtifactGone(JevSelectError):
    """The artifact no longer exists (expired or deleted)."""


def _next_link(value: str | None) -> str | None:
    if not value:
        return None
    for link in parse_header_links(value):
        if link.get("rel") == "next" and link.get("url"):
            return link["url"]
    return None


class ActionsHistory(GitHubApi):
    """Workflow runs, their artifacts and jobs, and merged pull requests, with rate-limit waits.

    ``max_wait`` is the total number of seconds the client may sleep on rate-limit answers over
    its lifetime; an answer asking for more raises ``RateLimitExceeded``. ``on_wait`` hears each
    wait before it starts (the command tells the user).
    """

    def __init__(
        self,
        api_root: str,
        token: str,
        *,
        max_wait: float,
        sleep: Callable[[float], None] = time.sleep,
        wall_clock: Callable[[], float] = time.time,
        on_wait: Callable[[float], None] | None = None,
        request_timeout: float = c.GITHUB_REQUEST_TIMEOUT_S,
    ) -> None:
        super().__init__(api_root, token, request_timeout=request_timeout)
        self._budget = max_wait
        self._sleep = sleep
        self._wall_clock = wall_clock
        self._on_wait = on_wait
        self.waited = 0.0

    def __repr__(self) -> str:
        return f"ActionsHistory({self._root!r})"

    def _get(
        self,
        url: str,
        *,
        body_cap: int = c.GITHUB_BODY_CAP,
        keep_headers: Sequence[str] = (),
        with_token: bool = True,
        timeout: float | None = None,
    ) -> HttpResponse:
        kept = (*keep_headers, *_RATE_LIMIT_HEADERS)
        while True:
            try:
                return super()._get(
                    url,
                    body_cap=body_cap,
                    keep_headers=kept,
                    with_token=with_token,
                    timeout=timeout,
                )
            except HttpFailure as failure:
                wait = rate_limit_wait(failure.status, failure.headers, self._wall_clock())
                if wait is None:
                    raise
                if wait > self._budget:
                    raise RateLimitExceeded() from None
                self._budget -= wait
                self.waited += wait
                if self._on_wait is not None:
                    self._on_wait(wait)
                self._sleep(wait)

    def _listing(self, path: str, field: str | None, limit: int) -> list[object]:
        """Up to ``limit`` records of a paginated listing, following ``rel="next"`` links; each
        page is an object holding them in ``field``, or (``field`` None) the array itself.

        A next link outside the API root, a malformed page, or more pages than
        ``ROLLOUT_MAX_PAGES`` raises ``AnswerRefused``; transport and status failures raise
        ``HttpFailure``.
        """
        url = f"{self._root}/{path}"
        records: list[object] = []
        for _ in range(c.ROLLOUT_MAX_PAGES):
            response = self._get(url, keep_headers=(_LINK,))
            try:
                answer = strict_loads(response.body)
            except JsonError:
                raise AnswerRefused() from None
            if field is None:
                page = answer
            else:
                page = answer.get(field) if isinstance(answer, dict) else None
            if not isinstance(page, list):
                raise AnswerRefused()
            records.extend(page)
            if len(records) >= limit:
                return records[:limit]
            following = _next_link(response.headers.get(_LINK))
            if following is None:
                return records
            # Pagination never leads the token anywhere but the same API root.
            if not following.startswith(self._root + "/"):
                raise AnswerRefused()
            url = following
        raise AnswerRefused()

    def workflow_runs(
        self,
        repository: str,
        workflow: str,
        *,
        limit: int,
        created_since: str | None = None,
        completed: bool = False,
        head_sha: str | None = None,
        event: str | None = None,
    ) -> list[object]:
        """Run records of one workflow, newest first, with GitHub's own filters."""
        query: dict[str, str | int] = {"per_page": c.ROLLOUT_PER_PAGE}
        if completed:
            query["status"] = c.GITHUB_RUN_COMPLETED
        if created_since is not None:
            query["created"] = f">={created_since}"
        if head_sha is not None:
            query["head_sha"] = head_sha
        if event is not None:
            query["event"] = event
        path = (
            f"{repository_path(repository)}/actions/workflows/{quote(workflow, safe='')}"
            f"/runs?{urlencode(query)}"
        )
        return self._listing(path, "workflow_runs", limit)

    def pull_request(self, repository: str, number: int) -> dict[str, object] | None:
        """The record of pull request ``number``, or None when GitHub has none (404).

        A body that is not a JSON object raises ``AnswerRefused``; other failures raise
        ``HttpFailure`` (or ``RateLimitExceeded``).
        """
        url = f"{self._root}/{repository_path(repository)}/pulls/{number}"
        try:
            response = self._get(url)
        except HttpFailure as failure:
            if failure.status == _NOT_FOUND:
                return None
            raise
        try:
            answer = strict_loads(response.body)
        except JsonError:
            raise AnswerRefused() from None
        if not isinstance(answer, dict):
            raise AnswerRefused()
        return answer

    def commit_pulls(self, repository: str, sha: str) -> list[object] | None:
        """The pull records GitHub associates with commit ``sha`` (one bounded listing), or
        None when it knows no such commit (404 or 422)."""
        path = (
            f"{repository_path(repository)}/commits/{quote(sha, safe='')}/pulls"
            f"?{urlencode({'per_page': c.ROLLOUT_PER_PAGE})}"
        )
        try:
            return self._listing(path, None, c.HISTORY_COMMIT_PULLS_LIMIT)
        except HttpFailure as failure:
            if failure.status in _UNKNOWN_COMMIT_STATUSES:
                return None
            raise

    def run_artifacts(self, repository: str, run_id: int) -> list[object]:
        """Every artifact record of one run."""
        path = (
            f"{repository_path(repository)}/actions/runs/{run_id}/artifacts"
            f"?{urlencode({'per_page': c.ROLLOUT_PER_PAGE})}"
        )
        return self._listing(path, "artifacts", c.ROLLOUT_PER_PAGE * c.ROLLOUT_MAX_PAGES)

    def download_artifact(self, repository: str, artifact_id: int) -> bytes:
        """The zip of one artifact, at most ``ROLLOUT_ARTIFACT_MAX_BYTES``.

        GitHub answers with a redirect to storage on another host; exactly that one redirect is
        followed, to an ``https`` URL, without the token (the storage URL carries its own
        short-lived grant). A 404 or 410 raises ``ArtifactGone``; any other failure (a second
        redirect included) raises ``HttpFailure``.
        """
        url = f"{self._root}/{repository_path(repository)}/actions/artifacts/{artifact_id}/zip"
        try:
            return self._get(
                url,
                body_cap=c.ROLLOUT_ARTIFACT_MAX_BYTES,
                keep_headers=(_LOCATION,),
                timeout=c.ROLLOUT_DOWNLOAD_TIMEOUT_S,
            ).body
        except HttpFailure as failure:
            if failure.status in _GONE_STATUSES:
                raise ArtifactGone() from None
            location = failure.headers.get(_LOCATION)
            if failure.status not in c.ROLLOUT_REDIRECT_STATUSES or not location:
                raise
        if not _storage_url(location):
            raise HttpFailure("redirect")
        return self._get(
            location,
            body_cap=c.ROLLOUT_ARTIFACT_MAX_BYTES,
            with_token=False,
            timeout=c.ROLLOUT_DOWNLOAD_TIMEOUT_S,
        ).body


def _storage_url(location: str) -> bool:
    """An absolute ``https`` URL with a host and no user information."""
    try:
        parts = urlsplit(location)
        return (
            parts.scheme == "https"
            and bool(parts.hostname)
            and parts.username is None
            and parts.password is None
            and location.isascii()
            and not any(character.isspace() for character in location)
        )
    except ValueError:
        return False
