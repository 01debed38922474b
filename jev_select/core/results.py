"""A results file for ``jev-select analyze``, built from the jobs of one workflow run.

Pure: GitHub job records in (listed by ``edges.github.api.GitHubApi.list_jobs``), task results
out (``build_results``, a typed ``Results``; ``results_json`` is what the file holds). Job names
map to task IDs by the naming rule of docs/shadow-mode.md (the job name is the task ID, or, for a
matrix job, the part before `` (``) or by an explicit map. Anything doubtful reads as the worse
result.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

from .. import contracts as c
from ..errors import CommandFailure
from .ci_jobs import JobAttribution, sorted_tasks
from .convert import DocumentError, register_document, structure, unstructure
from .jsonutil import code_unit_key, strict_loads

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = [
    "CiJob",
    "CiRun",
    "CiSource",
    "JobOutcome",
    "Results",
    "ResultsFailure",
    "TaskResult",
    "build_results",
    "job_outcome",
    "parse_job_map",
    "parse_results",
    "results_json",
    "task_for_job",
    "validate_results",
]

_SUCCESS, _FAILURE, _CANCELLED, _SKIPPED = c.TASK_RESULTS


class ResultsFailure(CommandFailure, failures=c.RESULTS_FAILURES):
    """The results file could not be built. Carries only a code of ``RESULTS_FAILURE_CODES``."""


@attrs.frozen
class JobOutcome:
    """One job of the run, reduced to what a task result needs."""

    name: str
    result: str
    duration_ms: int


@attrs.frozen
class TaskResult:
    """One task's entry of a results file (``schemas/results.schema.json``, ``taskResult``)."""

    result: str  # one of TASK_RESULTS
    duration_ms: float  # summed over the task's jobs; an int as built, kept as read
    classification: str | None = None  # absent from the file when None


def _names(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(names)


@attrs.frozen
class CiJob:
    """One job of the measured run attempt (``ciJob``): its listed name, the workflow job it
    belongs to (None when that could not be told with certainty), the tasks it counts for."""

    name: str
    job: str | None
    tasks: tuple[str, ...] = attrs.field(converter=_names)
    result: str  # one of TASK_RESULTS
    duration_ms: int

    @property
    def billed_minutes(self) -> int:
        """The minutes GitHub bills for the job: each job rounded up to a whole minute."""
        return -(-self.duration_ms // c.BILLED_MS_PER_MINUTE)


def _ci_jobs(jobs: Iterable[CiJob]) -> tuple[CiJob, ...]:
    return tuple(jobs)


def _read_only_needs(needs: Mapping[str, Iterable[str]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({job: tuple(ids) for job, ids in needs.items()})


@attrs.frozen
class CiRun:
    """The results file's ``ci`` block, version ``RESULTS_CI_VERSION``: every job of the run
    attempt the results were built from, and the ``needs`` of the workflow's jobs."""

    version: int
    workflow: str
    run_id: int
    run_attempt: int
    jobs: tuple[CiJob, ...] = attrs.field(converter=_ci_jobs)
    needs: Mapping[str, tuple[str, ...]] = attrs.field(converter=_read_only_needs)


def _read_only_tasks(tasks: Mapping[str, TaskResult]) -> Mapping[str, TaskResult]:
    return MappingProxyType(dict(tasks))


def _id_tuple(ids: Iterable[str] | None) -> tuple[str, ...] | None:
    return tuple(ids) if ids is not None else None


@attrs.frozen
class Results:
    """A results file: the CI results of one report's tested commit, keyed by its task IDs.

    The attributes are the file's keys in the order it writes them; ``relevant_tasks`` (manual
    labels a reviewer adds) is absent from the file when None.
    """

    tested_sha: str
    tasks: Mapping[str, TaskResult] = attrs.field(converter=_read_only_tasks)
    relevant_tasks: tuple[str, ...] | None = attrs.field(default=None, converter=_id_tuple)
    ci: CiRun | None = None


# The keys a file may leave out are absent when None; present, null is refused, as the schema
# refuses it, so that a file read and written back keeps its bytes.
register_document(TaskResult, optional=("classification",))
register_document(Results, optional=("relevant_tasks", "ci"))


def _timestamp(value: object) -> datetime | None:
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


@attrs.frozen
class CiSource:
    """The run attempt the jobs come from, for the ``ci`` block, and how its jobs map to the
    tasks' ``jobs:`` references (None: the naming rule or the job map alone, no job IDs)."""

    workflow: str
    run_id: int
    run_attempt: int
    attribution: JobAttribution | None = None


def _job_tasks(
    job: JobOutcome,
    task_ids: Sequence[str],
    job_map: Mapping[str, str] | None,
    attribution: JobAttribution | None,
) -> tuple[str | None, tuple[str, ...]]:
    """The workflow job a listed job is (None when uncertain) and the tasks it counts for."""
    if attribution is None:
        task_id = task_for_job(job.name, task_ids, job_map)
        return None, (task_id,) if task_id is not None else ()
    workflow_job, candidates = attribution.job_of(job.name)
    # Tasks without ``jobs:`` keep the naming rule (or the map); those with them, the file.
    unreferenced = [task_id for task_id in task_ids if task_id not in attribution.referencing]
    named = task_for_job(job.name, unreferenced, job_map)
    tasks = attribution.tasks_of(job.name, candidates)
    if named is not None:
        tasks.add(named)
    return workflow_job, sorted_tasks(tasks, task_ids)


def build_results(
    report: Mapping[str, Any],
    jobs: Sequence[JobOutcome],
    job_map: Mapping[str, str] | None = None,
    *,
    ci: CiSource | None = None,
) -> Results:
    """The results file for ``report``: exactly its task IDs, in code-unit order.

    A task with several jobs gets the worst of their results and the sum of their durations; a
    task without a job is ``skipped`` with duration 0. A job that may belong to several tasks
    counts for each of them. With ``ci`` the file carries the ``ci`` block: every job, the
    workflow job it is (when certain) and its tasks, and the workflow's ``needs``.
    """
    task_ids = sorted(report[c.REPORT_FIELD_TASKS], key=code_unit_key)
    attribution = ci.attribution if ci is not None else None
    collected: dict[str, list[JobOutcome]] = {task_id: [] for task_id in task_ids}
    listed: list[CiJob] = []
    for job in jobs:
        workflow_job, job_tasks = _job_tasks(job, task_ids, job_map, attribution)
        for task_id in job_tasks:
            collected[task_id].append(job)
        listed.append(
            CiJob(
                name=job.name,
                job=workflow_job,
                tasks=job_tasks,
                result=job.result,
                duration_ms=job.duration_ms,
            )
        )
    tasks = {
        task_id: TaskResult(
            result=_worst(job.result for job in outcomes) if outcomes else _SKIPPED,
            duration_ms=sum(job.duration_ms for job in outcomes),
        )
        for task_id, outcomes in collected.items()
    }
    block = (
        CiRun(
            version=c.RESULTS_CI_VERSION,
            workflow=ci.workflow,
            run_id=ci.run_id,
            run_attempt=ci.run_attempt,
            jobs=listed,
            needs=attribution.needs if attribution is not None else {},
        )
        if ci is not None
        else None
    )
    return Results(tested_sha=report["tested_sha"], tasks=tasks, ci=block)


def results_json(results: Results) -> dict[str, object]:
    """The JSON object of a results file, keys in the order the file writes them."""
    value = unstructure(results)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def parse_results(value: object) -> Results | None:
    """The typed results file of a parsed JSON value, or ``None`` when the schema refuses it."""
    if not validate_results(value):
        return None
    return structure(value, Results)


def parse_job_map(value: object) -> dict[str, str]:
    """A job map ``{"<job name>": "<task id>"}``; raises ``ResultsFailure`` when malformed."""
    try:
        job_map = structure(value, dict[str, str])
    except DocumentError:
        raise ResultsFailure(c.RESULTS_INVALID_JOB_MAP) from None
    if not job_map or not all(job_map):
        raise ResultsFailure(c.RESULTS_INVALID_JOB_MAP)
    if any(
        re.fullmatch(c.TASK_ID_PATTERN, task_id, re.ASCII) is None for task_id in job_map.values()
    ):
        raise ResultsFailure(c.RESULTS_INVALID_JOB_MAP)
    return job_map


@functools.cache
def _results_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    resource = importlib.resources.files("jev_select") / "schemas" / c.RESULTS_SCHEMA_FILE
    return Draft202012Validator(strict_loads(resource.read_bytes()))


def validate_results(results: object) -> bool:
    """Whether ``results`` (a parsed JSON value) matches ``schemas/results.schema.json``."""
    try:
        return bool(_results_validator().is_valid(results))
    except Exception:
        return False
