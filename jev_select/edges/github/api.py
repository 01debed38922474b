"""GitHub REST lookups: the manual pull request (docs/reference.md, "Manual pull-request mode"),
external actions (docs/reference.md, "Actions in the evidence") and the jobs of a workflow run
(``jev-select results``).

Every call is one bounded GET under the rules of docs/reference.md, "Manual pull-request mode": the
two fixed headers plus a Bearer token only when it is usable, no netrc, no redirects, no retries, a
wall-clock bound per request, a body cap and strict JSON. Failures never carry anything from the
exchange.
"""

from __future__ import annotations

import base64
import binascii
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Generic, TypeVar
from urllib.parse import quote

from ... import contracts as c
from ...contracts import LookupFailure
from ...core.credentials import usable_token
from ...core.evidence.files import ActionFile, LookupOutcome
from ...core.inputs import is_repository_name
from ...core.jsonutil import JsonError, strict_loads
from ...core.lookup_causes import LookupCause, more_severe, rate_limit_reset
from ...core.object_ids import is_object_id
from ...errors import PlanningFailure
from ...version import USER_AGENT
from ..httpio import (
    BearerAuth,
    HttpFailure,
    HttpResponse,
    HttpTimeout,
    bounded_request,
    run_with_deadline,
)
from .roots import api_root, api_root_from_environment

__all__ = [
    "GitHubApi",
    "api_root",
    "api_root_from_environment",
    "failure_cause",
    "repository_path",
    "usable_token",
]

_MISSING = LookupFailure.MISSING
_ACTION_FILE_NAMES = ("action.yml", "action.yaml")
_BASE64_LINE_BREAKS = str.maketrans("", "", "\r\n")

# Fields of the GitHub REST answers read here (GitHub's vocabulary, not product contracts).
_FIELD_JOBS = "jobs"
_FIELD_TOTAL_COUNT = "total_count"
_FIELD_SHA = "sha"
_FIELD_TYPE = "type"
_FIELD_ENCODING = "encoding"
_FIELD_CONTENT = "content"
_TYPE_FILE = "file"
_ENCODING_BASE64 = "base64"

# What tells a rate limit from a refusal: kept from every lookup's answer, names lower-cased.
_RATE_LIMIT_HEADERS = (
    c.RATE_LIMIT_REMAINING_HEADER,
    c.RATE_LIMIT_RESET_HEADER,
    c.RETRY_AFTER_HEADER,
)
_TRANSPORT_CODES = (c.CAUSE_DNS, c.CAUSE_CONNECT, c.CAUSE_TLS, c.CAUSE_UNKNOWN)
_UNAUTHORIZED = 401
_FORBIDDEN = 403
_TOO_MANY_REQUESTS = 429
_SERVER_ERRORS = 500


def failure_cause(failure: HttpFailure) -> tuple[c.LookupCauseKind, int | None] | None:
    """The cause of a failed lookup request and the rate limit's reset (seconds since the epoch),
    or None when the answer says nothing about reaching GitHub (a 404, a 422, an oversized or
    malformed answer, a redirect: the file is, as far as the run can tell, not there).

    A 403 is a rate limit when ``X-RateLimit-Remaining`` is ``0`` or ``Retry-After`` is set
    (GitHub's primary and secondary limits), as is any 429; any other 401 or 403 is a refusal.
    A 5xx counts as unreachable: GitHub answered, but not with anything a lookup can use.
    """
    if isinstance(failure, HttpTimeout):
        return c.LookupCauseKind.TIMED_OUT, None
    status = failure.status
    if status is None:
        return (c.LookupCauseKind.UNREACHABLE, None) if failure.code in _TRANSPORT_CODES else None
    headers = failure.headers
    remaining = headers.get(c.RATE_LIMIT_REMAINING_HEADER.lower(), "").strip()
    limited = remaining == "0" or c.RETRY_AFTER_HEADER.lower() in headers
    if status == _TOO_MANY_REQUESTS or (status == _FORBIDDEN and limited):
        reset = rate_limit_reset(headers.get(c.RATE_LIMIT_RESET_HEADER.lower()))
        return c.LookupCauseKind.RATE_LIMITED, reset
    if status in (_UNAUTHORIZED, _FORBIDDEN):
        return c.LookupCauseKind.UNAUTHORIZED, None
    if status >= _SERVER_ERRORS:
        return c.LookupCauseKind.UNREACHABLE, None
    return None


def _segment(text: str) -> str:
    return quote(text, safe="")


def repository_path(owner_repo: str) -> str:
    """``repos/<owner>/<repo>`` for ``owner/repo``, each part escaped as one path segment.

    Raises ``ValueError`` for anything but an ``owner/name`` GitHub could answer for: a name such
    as ``..`` stays a dot segment through the escaping, and the client normalises it away, so the
    request would leave ``/repos/`` on the same host. Callers validate first; this is the last
    line, and the error carries no part of the name.
    """
    if not is_repository_name(owner_repo):
        raise ValueError("not a repository name")
    owner, _, repo = owner_repo.partition("/")
    return f"repos/{_segment(owner)}/{_segment(repo)}"


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Once(Generic[K, V]):
    """A cache whose value per key is computed once, even by several threads at a time.

    The first caller computes; the others wait for its result (bounded, because every request
    is). A failure is not cached: the next caller computes again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[K, V] = {}
        self._running: dict[K, threading.Event] = {}

    def get(self, key: K, compute: Callable[[], V]) -> V:
        while True:
            with self._lock:
                if key in self._values:
                    return self._values[key]
                event = self._running.get(key)
                if event is None:
                    event = self._running[key] = threading.Event()
                    break
            event.wait()
        try:
            value = compute()
            with self._lock:
                self._values[key] = value
        finally:
            with self._lock:
                del self._running[key]
            event.set()
        return value


class GitHubApi:
    """GitHub REST client for one run; action lookups are cached per ``repo@ref`` and path.

    Every lookup that fails for a cause other than "not found" is noted: ``lookup_cause`` is the
    most severe cause seen so far (``core.lookup_causes``), without anything of the exchange.
    """

    def __init__(
        self,
        api_root: str,
        token: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        request_timeout: float = c.GITHUB_REQUEST_TIMEOUT_S,
    ) -> None:
        self._root = api_root.rstrip("/")
        self._auth = BearerAuth(token) if usable_token(token) else None
        self._clock = clock
        self._timeout = request_timeout
        self._deadline: float | None = None
        self._commits: _Once[tuple[str, str, str], str | None] = _Once()
        self._actions: _Once[tuple[str, str, str, str], LookupOutcome] = _Once()
        self._workflows: _Once[tuple[str, str, str, str], LookupOutcome] = _Once()
        self._cause_lock = threading.Lock()
        self._cause: LookupCause | None = None
        # The root as the cause line may show it: a token spelt into the URL never is.
        self._shown_root = self._root.replace(token, "***") if usable_token(token) else self._root

    @property
    def root(self) -> str:
        """The REST root every request goes to, without a trailing ``/``."""
        return self._root

    def lookup_cause(self) -> LookupCause | None:
        """The most severe cause of a failed lookup so far, None while every failure was "not
        found" (or nothing failed)."""
        with self._cause_lock:
            return self._cause

    def note_cause(self, kind: c.LookupCauseKind, reset_at: int | None = None) -> None:
        """Record a cause seen by the caller (the metadata phase's overall bound)."""
        seen = LookupCause(kind, self._shown_root, self._auth is not None, reset_at)
        with self._cause_lock:
            self._cause = more_severe(self._cause, seen)

    def _note_failure(self, failure: HttpFailure) -> None:
        found = failure_cause(failure)
        if found is not None:
            self.note_cause(*found)

    def set_deadline(self, deadline: float) -> None:
        """Bound every later request by ``deadline`` (a ``clock`` reading) too."""
        self._deadline = deadline

    def __repr__(self) -> str:
        return f"GitHubApi({self._root!r})"

    @property
    def headers(self) -> dict[str, str]:
        return {"Accept": c.GITHUB_ACCEPT, "User-Agent": USER_AGENT}

    def _get_json(self, path: str, *, keep_headers: Sequence[str] = ()) -> object:
        """GET ``<root>/<path>`` and parse it; raises ``HttpFailure`` or ``JsonError``."""
        response = self._get(f"{self._root}/{path}", keep_headers=keep_headers)
        answer: object = strict_loads(response.body)
        return answer

    def _get(
        self,
        url: str,
        *,
        body_cap: int = c.GITHUB_BODY_CAP,
        keep_headers: Sequence[str] = (),
        with_token: bool = True,
        timeout: float | None = None,
    ) -> HttpResponse:
        """One bounded GET of ``url``; ``with_token=False`` sends no credentials at all, and
        ``timeout`` replaces the client's per-request bound."""
        now = self._clock()
        deadline = now + (self._timeout if timeout is None else timeout)
        if self._deadline is not None and self._deadline < deadline:
            deadline = self._deadline
        seconds = deadline - now
        if seconds <= 0:
            raise HttpTimeout()

        def exchange() -> HttpResponse:
            return bounded_request(
                "GET",
                url,
                headers=self.headers,
                deadline=deadline,
                body_cap=body_cap,
                auth=self._auth if with_token else None,
                clock=self._clock,
                keep_headers=keep_headers,
            )

        return run_with_deadline(exchange, seconds)

    def get_pull(self, owner_repo: str, number: int) -> Mapping[str, object]:
        """``GET repos/<owner>/<repo>/pulls/<n>``; any failure is ``pull-request-unavailable``."""
        path = f"{repository_path(owner_repo)}/pulls/{number}"
        try:
            answer = self._get_json(path)
        except (HttpFailure, JsonError):
            raise PlanningFailure(c.FAILURE_PULL_REQUEST_UNAVAILABLE) from None
        if not isinstance(answer, dict):
            raise PlanningFailure(c.FAILURE_PULL_REQUEST_UNAVAILABLE)
        return answer

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> LookupOutcome:
        """The action metadata file of ``owner/repo[/subpath]@ref``, or ``LookupFailure.MISSING``.

        The ref is resolved to a commit first, then ``action.yml`` and, on any failure,
        ``action.yaml`` are read at that commit. The text is strict UTF-8, as stored.
        """
        return self._actions.get(
            (owner, repo, subpath, ref), lambda: self._fetch_action(owner, repo, subpath, ref)
        )

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> LookupOutcome:
        """The reusable workflow ``owner/repo/<path>@ref``, or ``LookupFailure.MISSING``.

        Resolved like an action: the ref to a commit, then the file at that commit.
        """
        return self._workflows.get(
            (owner, repo, path, ref), lambda: self._fetch_workflow(owner, repo, path, ref)
        )

    def _fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> LookupOutcome:
        segments = path.split("/")
        if any(segment in ("", ".", "..") for segment in segments):
            return _MISSING
        sha = self._resolve_commit(owner, repo, ref)
        if sha is None:
            return _MISSING
        text = self._read_contents(
            f"{repository_path(owner + '/' + repo)}/contents/"
            + "/".join(_segment(segment) for segment in segments)
            + f"?ref={sha}"
        )
        if text is None:
            return _MISSING
        return ActionFile(text=text, file_path=path, resolved_sha=sha)

    def _fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> LookupOutcome:
        sha = self._resolve_commit(owner, repo, ref)
        if sha is None:
            return _MISSING
        directory = subpath.split("/") if subpath else []
        if any(segment in ("", ".", "..") for segment in directory):
            return _MISSING
        for name in _ACTION_FILE_NAMES:
            segments = [*directory, name]
            path = (
                f"{repository_path(owner + '/' + repo)}/contents/"
                + "/".join(_segment(segment) for segment in segments)
                + f"?ref={sha}"
            )
            text = self._read_contents(path)
            if text is not None:
                return ActionFile(text=text, file_path="/".join(segments), resolved_sha=sha)
        return _MISSING

    def _resolve_commit(self, owner: str, repo: str, ref: str) -> str | None:
        return self._commits.get((owner, repo, ref), lambda: self._commit_of(owner, repo, ref))

    def _commit_of(self, owner: str, repo: str, ref: str) -> str | None:
        try:
            answer = self._get_json(
                f"{repository_path(owner + '/' + repo)}/commits/{_segment(ref)}",
                keep_headers=_RATE_LIMIT_HEADERS,
            )
        except HttpFailure as failure:
            self._note_failure(failure)
            return None
        except JsonError:
            return None
        if isinstance(answer, dict):
            value = answer.get(_FIELD_SHA)
            if isinstance(value, str) and is_object_id(value, sha1_only=True):
                return value.lower()
        return None

    def _read_contents(self, path: str) -> str | None:
        try:
            answer = self._get_json(path, keep_headers=_RATE_LIMIT_HEADERS)
        except HttpFailure as failure:
            self._note_failure(failure)
            return None
        except JsonError:
            return None
        if (
            not isinstance(answer, dict)
            or answer.get(_FIELD_TYPE) != _TYPE_FILE
            or answer.get(_FIELD_ENCODING) != _ENCODING_BASE64
            or not isinstance(answer.get(_FIELD_CONTENT), str)
        ):
            return None
        encoded = answer[_FIELD_CONTENT].translate(_BASE64_LINE_BREAKS)
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(data) > c.GITHUB_FILE_CAP:
            return None
        try:
            return data.decode("utf-8", "strict")
        except UnicodeDecodeError:
            return None

    def list_jobs(
        self, owner_repo: str, run_id: int, attempt: int
    ) -> list[dict[str, object]] | None:
        """Every job record of one run attempt, following pagination by page number.

        ``None`` when any page is unavailable or malformed, or when the pages hold fewer jobs
        than announced (a partial list would misreport tasks as skipped).
        """
        base = (
            f"{repository_path(owner_repo)}/actions/runs/{run_id}"
            f"/attempts/{attempt}/jobs?per_page={c.RESULTS_JOBS_PER_PAGE}&page="
        )
        jobs: list[dict[str, object]] = []
        for page in range(1, c.RESULTS_MAX_PAGES + 1):
            try:
                answer = self._get_json(f"{base}{page}")
            except (HttpFailure, JsonError):
                return None
            if not isinstance(answer, dict):
                return None
            listed, total = answer.get(_FIELD_JOBS), answer.get(_FIELD_TOTAL_COUNT)
            if not isinstance(listed, list) or type(total) is not int or total < 0:
                return None
            if not all(isinstance(job, dict) for job in listed):
                return None
            jobs.extend(listed)
            if len(jobs) >= total:
                return jobs
            if not listed:
                return None
        return None
