"""The GitHub Actions environment: ``GITHUB_*`` variables, the event file and bypass rules.

Edge module (docs/reference.md, "Events"). Reading is done by ``read_github_context``; everything
after it is a pure function of what was read, so the rules are testable without an environment.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping

import attrs

from .. import contracts as c
from ..core.inputs import is_repository_name, normalise_https_url
from ..core.jsonutil import JsonError, strict_loads
from ..core.object_ids import is_sha40
from ..errors import PlanningFailure
from .files import read_capped

__all__ = [
    "GitHubContext",
    "MergeGroupFacts",
    "PullRequestFacts",
    "is_merge_group_event",
    "parse_manual_number",
    "parse_merge_group",
    "parse_pull_request",
    "read_github_context",
    "server_origin",
    "temp_root",
]

_EVENT_FILE_CAP = 64 * 1_048_576
_PULL_REQUEST_EVENT = "pull_request"
_MERGE_GROUP_EVENT = "merge_group"
_WORKFLOW_DISPATCH_EVENT = "workflow_dispatch"


@attrs.frozen
class GitHubContext:
    """What GitHub mode knows before any git command or HTTP request."""

    event_name: str
    repository: str
    sha: str
    server_origin: str
    api_url: str | None
    event: Mapping[str, object] = attrs.field(repr=False)
    output_path: str
    summary_path: str | None
    temp_root: str


@attrs.frozen
class PullRequestFacts:
    base_sha: str
    head_sha: str
    fork: bool


@attrs.frozen
class MergeGroupFacts:
    """The queue commit of a ``merge_group`` event and the commit it was built on."""

    base_sha: str
    head_sha: str


def temp_root(environ: Mapping[str, str]) -> str:
    """``RUNNER_TEMP`` when set, else the system temporary directory (honours ``TMPDIR``)."""
    return environ.get("RUNNER_TEMP") or tempfile.gettempdir()


def server_origin(text: str) -> str | None:
    """The origin of ``GITHUB_SERVER_URL`` (docs/reference.md, "GitHub environment"), or None when
    it is not acceptable."""
    normalised = normalise_https_url(text, allow_path=False)
    if normalised is None:
        return None
    # The path must be empty or exactly "/": dot segments or repeated slashes that normalise
    # away are still a path, and a GHES path prefix is not an origin.
    after_scheme = text[text.index("://") + 3 :]
    slash = after_scheme.find("/")
    if slash >= 0 and after_scheme[slash:] != "/":
        return None
    return normalised


def read_github_context(environ: Mapping[str, str]) -> GitHubContext:
    """Validate the environment and read the event file, in the order of docs/reference.md,
    "Validation order"."""
    event_name = environ.get("GITHUB_EVENT_NAME", "")
    repository = environ.get("GITHUB_REPOSITORY", "")
    sha = environ.get("GITHUB_SHA", "")
    origin = server_origin(environ.get("GITHUB_SERVER_URL") or c.GITHUB_DEFAULT_SERVER_URL)
    output_path = environ.get("GITHUB_OUTPUT")
    if (
        not event_name
        or not is_repository_name(repository)
        or not is_sha40(sha)
        or origin is None
        or not output_path
    ):
        raise PlanningFailure(c.FAILURE_INVALID_ENVIRONMENT)
    event = _read_event(environ.get("GITHUB_EVENT_PATH", ""))
    return GitHubContext(
        event_name=event_name,
        repository=repository,
        sha=sha,
        server_origin=origin,
        api_url=environ.get(c.GITHUB_API_URL_ENV) or None,
        event=event,
        output_path=output_path,
        summary_path=environ.get("GITHUB_STEP_SUMMARY") or None,
        temp_root=temp_root(environ),
    )


def _read_event(path: str) -> Mapping[str, object]:
    if not path:
        raise PlanningFailure(c.FAILURE_INVALID_EVENT)
    try:
        data = read_capped(path, _EVENT_FILE_CAP)
    except OSError:
        raise PlanningFailure(c.FAILURE_INVALID_EVENT) from None
    if len(data) > _EVENT_FILE_CAP:
        raise PlanningFailure(c.FAILURE_INVALID_EVENT)
    try:
        event = strict_loads(data)
    except JsonError:
        raise PlanningFailure(c.FAILURE_INVALID_EVENT) from None
    if not isinstance(event, dict):
        raise PlanningFailure(c.FAILURE_INVALID_EVENT)
    return event


def is_pull_request_event(event_name: str) -> bool:
    return event_name == _PULL_REQUEST_EVENT


def is_merge_group_event(event_name: str) -> bool:
    return event_name == _MERGE_GROUP_EVENT


def parse_merge_group(payload: object, sha: str) -> MergeGroupFacts:
    """Validate a ``merge_group`` object: two lowercase 40-hex SHAs, the head being ``GITHUB_SHA``.

    ``base_sha`` is the commit the queue built on (the target branch, or the entry ahead in the
    queue); ``head_sha`` is the queue commit the workflow runs on. Anything else is
    ``invalid-event``.
    """
    if not isinstance(payload, Mapping):
        raise PlanningFailure(c.FAILURE_INVALID_EVENT)
    base_sha = payload.get("base_sha")
    head_sha = payload.get("head_sha")
    if (
        not isinstance(base_sha, str)
        or not isinstance(head_sha, str)
        or not is_sha40(base_sha)
        or not is_sha40(head_sha)
        or head_sha != sha
    ):
        raise PlanningFailure(c.FAILURE_INVALID_EVENT)
    return MergeGroupFacts(base_sha=base_sha, head_sha=head_sha)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_pull_request(payload: object, repository: str) -> PullRequestFacts:
    """Validate a ``pull_request`` object (docs/reference.md, "Pull request events"); decide
    conservatively if it is a fork."""
    if not isinstance(payload, Mapping):
        raise PlanningFailure(c.FAILURE_INVALID_EVENT)
    base = payload.get("base")
    head = payload.get("head")
    if not isinstance(base, Mapping) or not isinstance(head, Mapping):
        raise PlanningFailure(c.FAILURE_INVALID_EVENT)
    base_sha = base.get("sha")
    head_sha = head.get("sha")
    base_repo = base.get("repo")
    if (
        not isinstance(base_sha, str)
        or not isinstance(head_sha, str)
        or not is_sha40(base_sha)
        or not is_sha40(head_sha)
        or not isinstance(base_repo, Mapping)
        or not isinstance(base_repo.get("full_name"), str)
        or not _same_repository(base_repo["full_name"], repository)
    ):
        raise PlanningFailure(c.FAILURE_INVALID_EVENT)
    head_repo = head.get("repo")
    fork = True
    if isinstance(head_repo, Mapping):
        base_id = base_repo.get("id")
        head_id = head_repo.get("id")
        head_name = head_repo.get("full_name")
        fork = not (
            _is_number(base_id)
            and _is_number(head_id)
            and isinstance(head_name, str)
            and _same_repository(head_name, repository)
            and base_id == head_id
        )
    return PullRequestFacts(base_sha=base_sha, head_sha=head_sha, fork=fork)


def _same_repository(left: str, right: str) -> bool:
    return _ascii_lower(left) == _ascii_lower(right)


def _ascii_lower(text: str) -> str:
    return text.translate({code: code + 32 for code in range(ord("A"), ord("Z") + 1)})


def parse_manual_number(text: str, event_name: str) -> int | None:
    """The ``pull-request`` input: None when blank, else a checked number (docs/reference.md,
    "Manual pull-request mode")."""
    if not text:
        return None
    if event_name != _WORKFLOW_DISPATCH_EVENT:
        raise PlanningFailure(c.FAILURE_INVALID_MANUAL_REQUEST)
    if re.fullmatch(c.POSITIVE_INTEGER_PATTERN, text) is None:
        raise PlanningFailure(c.FAILURE_INVALID_MANUAL_REQUEST)
    number = int(text)
    if number > c.MAX_SAFE_INTEGER:
        raise PlanningFailure(c.FAILURE_INVALID_MANUAL_REQUEST)
    return number


def process_environment() -> dict[str, str]:
    """A snapshot of the process environment (the one place the CLI reads it)."""
    return dict(os.environ)
