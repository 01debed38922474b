"""A results file for ``jev-select analyze``, built from the jobs of one workflow run.

The pure part maps GitHub job records to task results (``build_results``); the edge part lists
the jobs of a run attempt through the REST API (``fetch_jobs``). Job names map to task IDs by
the naming rule of docs/shadow-mode.md (the job name is the task ID, or, for a matrix job, the
part before `` (``) or by an explicit map. Anything doubtful reads as the worse result.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from .. import contracts as c
from ..edges.httpio import BearerAuth, HttpFailure, bounded_request, run_with_deadline
from ..errors import CodedError
from ..version import USER_AGENT
from .jsonutil import JsonError, code_unit_key, strict_loads

__all__ = [
    "JobOutcome",
    "ResultsFailure",
    "api_root_from_environment",
    "build_results",
    "fetch_jobs",
    "job_outcome",
    "parse_job_map",
    "task_for_job",
    "validate_results",
]

_TASKS = c.INPUT_TASKS
_SUCCESS, _FAILURE, _CANCELLED, _SKIPPED = c.TASK_RESULTS
_LOOPBACK_HOSTS = frozenset(("127.0.0.1", "localhost", "::1"))
_GITHUB_COM_HOST = "github.com"
# The API's list key happens to spell the task-table field name.
_JOBS_KEY = c.TASK_FIELD_JOBS


class ResultsFailure(CodedError):
    """The results file could not be built. Carries only a code of ``RESULTS_FAILURE_CODES``."""


@attrs.frozen
class JobOutcome:
    """One job of the run, reduced to what a task result needs."""

    name: str
    result: str
    duration_ms: int


# ---------------------------------------------------------------------------------------------
# Pure part
# ---------------------------------------------------------------------------------------------


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def job_outcome(job: Mapping[str, Any]) -> JobOutcome | None:
    """The outcome of one job record of the API, or ``None`` when it has no usable name.

    A conclusion other than success, failure, cancelled or skipped (including a job still
    running) counts as a failure. The duration is ``completed_at - started_at`` in whole
    milliseconds, 0 when either time is missing or the difference is negative.
    """
    name = job.get("name")
    if not isinstance(name, str) or not name:
        return None
    conclusion = job.get("conclusion")
    result = conclusion if conclusion in c.TASK_RESULTS else _FAILURE
    started = _timestamp(job.get("started_at"))
    completed = _timestamp(job.get("completed_at"))
    duration = 0
    if started is not None and completed is not None:
        milliseconds = (completed - started).total_seconds() * 1000
        if math.isfinite(milliseconds) and milliseconds > 0:
            duration = round(milliseconds)
    return JobOutcome(name=name, result=result, duration_ms=duration)


def task_for_job(
    name: str, task_ids: Iterable[str], job_map: Mapping[str, str] | None = None
) -> str | None:
    """The task a job belongs to, or ``None``.

    With ``job_map`` only the map counts. Without it the job name must equal a task ID, or the
    part before the first `` (`` must (a matrix job such as ``unit (3.11)`` belongs to ``unit``).
    """
    known = set(task_ids)
    if job_map is not None:
        task_id = job_map.get(name)
        return task_id if task_id in known else None
    if name in known:
        return name
    prefix, separator, _ = name.partition(c.MATRIX_JOB_NAME_SEPARATOR)
    if separator and prefix in known:
        return prefix
    return None


def _worst(results: Iterable[str]) -> str:
    return min(results, key=c.TASK_RESULT_SEVERITY.index)


def build_results(
    report: Mapping[str, Any],
    jobs: Sequence[JobOutcome],
    job_map: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The results file for ``report``: exactly its task IDs, in code-unit order.

    A task with several jobs gets the worst of their results and the sum of their durations; a
    task without a job is ``skipped`` with duration 0.
    """
    task_ids = sorted(report[_TASKS], key=code_unit_key)
    collected: dict[str, list[JobOutcome]] = {task_id: [] for task_id in task_ids}
    for job in jobs:
        task_id = task_for_job(job.name, task_ids, job_map)
        if task_id is not None:
            collected[task_id].append(job)
    tasks: dict[str, dict[str, Any]] = {}
    for task_id in task_ids:
        outcomes = collected[task_id]
        tasks[task_id] = {
            "result": _worst(job.result for job in outcomes) if outcomes else _SKIPPED,
            "duration_ms": sum(job.duration_ms for job in outcomes),
        }
    return {"tested_sha": report["tested_sha"], _TASKS: tasks}


def parse_job_map(value: Any) -> dict[str, str]:
    """A job map ``{"<job name>": "<task id>"}``; raises ``ResultsFailure`` when malformed."""
    if not isinstance(value, dict) or not value:
        raise ResultsFailure(c.RESULTS_INVALID_JOB_MAP)
    for name, task_id in value.items():
        if not name or not isinstance(task_id, str):
            raise ResultsFailure(c.RESULTS_INVALID_JOB_MAP)
        if re.fullmatch(c.TASK_ID_PATTERN, task_id, re.ASCII) is None:
            raise ResultsFailure(c.RESULTS_INVALID_JOB_MAP)
    return dict(value)


@functools.cache
def _results_validator() -> Any:
    from jsonschema import Draft202012Validator

    resource = importlib.resources.files("jev_select") / "schemas" / c.RESULTS_SCHEMA_FILE
    return Draft202012Validator(strict_loads(resource.read_bytes()))


def validate_results(results: Any) -> bool:
    """Whether ``results`` matches ``schemas/results.schema.json``."""
    try:
        return bool(_results_validator().is_valid(results))
    except Exception:
        return False


# ---------------------------------------------------------------------------------------------
# Edge part: the GitHub REST API
# ---------------------------------------------------------------------------------------------


def _acceptable_root(text: str) -> str | None:
    """``text`` as an API root: https, or http on a loopback host; no user, query or fragment."""
    if not text or any(ch.isspace() or ord(ch) < 0x20 or ch == "\\" for ch in text):
        return None
    try:
        parts = urllib.parse.urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return None
    if host is None or parts.username is not None or parts.password is not None:
        return None
    if parts.query or parts.fragment or "?" in text or "#" in text:
        return None
    if parts.scheme == "http":
        if host not in _LOOPBACK_HOSTS:
            return None
    elif parts.scheme != "https":
        return None
    return text.rstrip("/")


def api_root_from_environment(environ: Mapping[str, str]) -> str | None:
    """The REST API root: ``GITHUB_API_URL`` when set, else derived from ``GITHUB_SERVER_URL``
    (``https://api.github.com`` for github.com, ``<server>/api/v3`` otherwise). ``None`` when
    the value is not acceptable."""
    api_url = environ.get("GITHUB_API_URL", "")
    if api_url:
        return _acceptable_root(api_url)
    server = environ.get("GITHUB_SERVER_URL", "")
    if not server:
        return c.GITHUB_DEFAULT_API_URL
    root = _acceptable_root(server)
    if root is None:
        return None
    if urllib.parse.urlsplit(root).hostname == _GITHUB_COM_HOST:
        return c.GITHUB_DEFAULT_API_URL
    return root + c.GITHUB_ENTERPRISE_API_SUFFIX


def _usable_token(token: str) -> bool:
    return bool(token.strip()) and all(0x21 <= ord(ch) <= 0x7E for ch in token)


def _jobs_page(url: str, token: str, clock: Callable[[], float]) -> tuple[list[Any], int]:
    headers = {"Accept": c.GITHUB_ACCEPT, "User-Agent": USER_AGENT}
    auth = BearerAuth(token) if _usable_token(token) else None

    def fetch() -> bytes:
        deadline = clock() + c.GITHUB_REQUEST_TIMEOUT_S
        response = bounded_request(
            "GET",
            url,
            headers=headers,
            deadline=deadline,
            body_cap=c.GITHUB_BODY_CAP,
            auth=auth,
            clock=clock,
        )
        return response.body

    try:
        body = run_with_deadline(fetch, c.GITHUB_REQUEST_TIMEOUT_S)
        payload = strict_loads(body)
    except (HttpFailure, JsonError):
        raise ResultsFailure(c.RESULTS_JOBS_UNAVAILABLE) from None
    if not isinstance(payload, dict):
        raise ResultsFailure(c.RESULTS_JOBS_UNAVAILABLE)
    jobs, total = payload.get(_JOBS_KEY), payload.get("total_count")
    if not isinstance(jobs, list) or type(total) is not int or total < 0:
        raise ResultsFailure(c.RESULTS_JOBS_UNAVAILABLE)
    if not all(isinstance(job, dict) for job in jobs):
        raise ResultsFailure(c.RESULTS_JOBS_UNAVAILABLE)
    return jobs, total


def fetch_jobs(
    api_root: str,
    repository: str,
    run_id: int,
    attempt: int,
    token: str,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> list[JobOutcome]:
    """Every job of one run attempt, following pagination by page number.

    Each request is bounded to 10 s and 2 MiB, sends no credentials without a usable token and
    follows no redirect. Any failure raises ``ResultsFailure("jobs-unavailable")``.
    """
    if re.fullmatch(c.REPOSITORY_PATTERN, repository, re.ASCII) is None:
        raise ResultsFailure(c.RESULTS_INVALID_SETTINGS)
    owner, name = (urllib.parse.quote(part, safe="") for part in repository.split("/"))
    base = f"{api_root}/repos/{owner}/{name}/actions/runs/{run_id}/attempts/{attempt}/jobs"
    outcomes: list[JobOutcome] = []
    seen = 0
    for page in range(1, c.RESULTS_MAX_PAGES + 1):
        url = f"{base}?per_page={c.RESULTS_JOBS_PER_PAGE}&page={page}"
        jobs, total = _jobs_page(url, token, clock)
        seen += len(jobs)
        for job in jobs:
            outcome = job_outcome(job)
            if outcome is not None:
                outcomes.append(outcome)
        if seen >= total:
            return outcomes
        if not jobs:
            # Fewer jobs than announced: a partial list would misreport tasks as skipped.
            raise ResultsFailure(c.RESULTS_JOBS_UNAVAILABLE)
    raise ResultsFailure(c.RESULTS_JOBS_UNAVAILABLE)
