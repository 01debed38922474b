"""A results file for ``jev-select analyze``, built from the jobs of one workflow run.

Pure: GitHub job records in (listed by ``edges.github_api.GitHubApi.list_jobs``), task results
out (``build_results``). Job names map to task IDs by
the naming rule of docs/shadow-mode.md (the job name is the task ID, or, for a matrix job, the
part before `` (``) or by an explicit map. Anything doubtful reads as the worse result.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from .. import contracts as c
from ..errors import CodedError
from .jsonutil import code_unit_key, strict_loads

__all__ = [
    "JobOutcome",
    "ResultsFailure",
    "build_results",
    "job_outcome",
    "parse_job_map",
    "task_for_job",
    "validate_results",
]

_SUCCESS, _FAILURE, _CANCELLED, _SKIPPED = c.TASK_RESULTS


class ResultsFailure(CodedError):
    """The results file could not be built. Carries only a code of ``RESULTS_FAILURE_CODES``."""


@attrs.frozen
class JobOutcome:
    """One job of the run, reduced to what a task result needs."""

    name: str
    result: str
    duration_ms: int


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
    task_ids = sorted(report[c.REPORT_FIELD_TASKS], key=code_unit_key)
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
    return {"tested_sha": report["tested_sha"], c.RESULTS_FIELD_TASKS: tasks}


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
