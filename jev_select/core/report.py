"""Report v5 (docs/reference.md, "Report fields"): construction, validation and its file text.

The report is the source of truth for everything published afterwards, so it is validated against
the strict schema and the cross-field invariants before any output is written.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from .. import contracts as c
from ..errors import PlanningFailure
from .convert import DocumentError, structure
from .jsonutil import code_unit_key, pretty_json, strict_loads
from .models import (
    ChangeFacts,
    ChunkRecord,
    Evaluation,
    Observation,
    Plan,
    RequestRecord,
    RunFacts,
    Usage,
)
from .report_v5 import (
    JobMetadata,
    ReportChunk,
    ReportDurations,
    ReportModel,
    ReportObservation,
    ReportRequest,
    ReportTask,
    ReportUsage,
    ReportV5,
    parse_report,
    report_json,
)

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = ["build_report", "report_text", "validate_report"]

V = TypeVar("V")


def _usage(usage: Usage | None) -> ReportUsage | None:
    if usage is None:
        return None
    return ReportUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)


def _sorted_mapping(values: Mapping[str, V]) -> dict[str, V]:
    return {key: values[key] for key in sorted(values, key=code_unit_key)}


def _plain(value: object) -> object:
    """A copy made of dicts, lists and scalars only (read-only mappings and tuples unwrapped)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _request(request: RequestRecord) -> ReportRequest:
    return ReportRequest(
        task_ids=request.task_ids,
        status=request.status,
        model=request.model,
        usage=_usage(request.usage),
        duration_ms=request.duration_ms,
        error=request.error,
    )


def _chunk(chunk: ChunkRecord) -> ReportChunk:
    return ReportChunk(
        index=chunk.index,
        start_byte=chunk.start_byte,
        end_byte=chunk.end_byte,
        paths=chunk.paths,
        diff_hash=chunk.diff_hash,
        state_hash=chunk.state_hash,
        diff_bytes=chunk.diff_bytes,
        status=chunk.status,
        probabilities=(
            _sorted_mapping(chunk.probabilities) if chunk.probabilities is not None else None
        ),
        model=chunk.model,
        usage=_usage(chunk.usage),
        duration_ms=chunk.duration_ms,
        error=chunk.error,
        requests=tuple(_request(request) for request in chunk.requests),
    )


def _observation(observation: Observation | None) -> ReportObservation | None:
    if observation is None:
        return None
    return ReportObservation(
        strategy=observation.strategy,
        status=observation.status,
        chunks=tuple(_chunk(chunk) for chunk in observation.chunks),
    )


def _job_metadata(entry: Mapping[str, object]) -> JobMetadata:
    """The report's entry of one task's metadata, as the evidence builder wrote it.

    An entry that does not have the schema's shape (an unknown key, a missing one) is a report
    that cannot be written: the run fails as for any other invalid report, rather than dropping
    evidence silently.
    """
    try:
        return structure(_plain(entry), JobMetadata)
    except DocumentError:
        raise PlanningFailure(c.FAILURE_REPORT_INVALID) from None


def build_report(
    plan: Plan,
    run: RunFacts,
    change: ChangeFacts | None = None,
    evaluation: Evaluation | None = None,
) -> ReportV5:
    """Report v5 (docs/reference.md, "Report fields"); ``report_json`` gives its JSON value.

    ``change`` is what collection and metadata found (``None`` when nothing was collected; its
    diff facts are written only when the change was completely collected); ``evaluation`` what
    was observed (``None`` when nothing was sent). A job metadata entry without the schema's
    shape raises ``PlanningFailure("report-invalid")``.
    """
    change = change if change is not None else ChangeFacts()
    evaluation = evaluation if evaluation is not None else Evaluation()
    commits = run.commits
    change_set = change.change_set
    if run.tested_ref == c.TESTED_REF_MERGE:
        diff_base_sha: str | None = commits.base_sha
    else:
        diff_base_sha = commits.diff_base_sha
    return ReportV5(
        version=c.REPORT_VERSION,
        tested_ref=run.tested_ref,
        diff_base_sha=diff_base_sha,
        job_metadata={
            task_id: _job_metadata(entry)
            for task_id, entry in _sorted_mapping(change.job_metadata).items()
        },
        observation_error=evaluation.observation_error,
        metadata_sha=commits.metadata_sha,
        base_sha=commits.base_sha,
        head_sha=commits.head_sha,
        tested_sha=commits.tested_sha,
        selection_hash=run.selection_hash,
        skip_below=run.skip_below,
        diff_hash=change_set.diff_hash if change_set is not None else None,
        diff_bytes=change_set.diff_bytes if change_set is not None else None,
        changed_path_count=change_set.changed_path_count if change_set is not None else None,
        mode=plan.mode,
        status=plan.status,
        model=ReportModel(
            requested=run.model_requested,
            expected=run.model_expected,
            returned=evaluation.model_returned,
        ),
        durations_ms=ReportDurations(
            collection=run.durations_ms.collection,
            jev=run.durations_ms.jev,
            total=run.durations_ms.total,
        ),
        usage=_usage(evaluation.usage),
        tasks={
            task_id: ReportTask(
                proposed_run=decision.proposed_run, run=decision.run, reasons=decision.reasons
            )
            for task_id, decision in _sorted_mapping(plan.decisions).items()
        },
        observation=_observation(evaluation.observation),
    )


@functools.cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    resource = importlib.resources.files("jev_select") / "schemas" / c.REPORT_SCHEMA_FILE
    schema = strict_loads(resource.read_bytes())
    return Draft202012Validator(schema)


def _all_numbers_finite(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        # JSON readers hold numbers as doubles: an integer beyond their range is infinite.
        try:
            return math.isfinite(float(value))
        except OverflowError:
            return False
    if isinstance(value, Mapping):
        return all(_all_numbers_finite(item) for item in value.values())
    if isinstance(value, list | tuple):
        return all(_all_numbers_finite(item) for item in value)
    return True


def _full(pattern: str, value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(pattern, value, re.ASCII) is not None


def _invariants_hold(report: ReportV5) -> bool:
    everything_runs = report.status != c.STATUS_PLANNED or report.mode == c.MODE_SHADOW
    for task_id, decision in report.tasks.items():
        if not _full(c.TASK_ID_PATTERN, task_id):
            return False
        if everything_runs and decision.run is not True:
            return False
        if report.status == c.STATUS_PLANNED:
            # Planned means every decision was complete: nothing is left undecided, and in
            # enforce mode the effective run is exactly the proposal.
            if decision.proposed_run is None:
                return False
            if report.mode == c.MODE_ENFORCE and decision.run != decision.proposed_run:
                return False
    commits = (report.metadata_sha, report.base_sha, report.head_sha, report.tested_sha)
    if not all(_full(c.SHA40_PATTERN, sha) for sha in commits):
        return False
    if report.job_metadata and set(report.job_metadata) != set(report.tasks):
        return False
    observation = report.observation
    return observation is None or _observation_coherent(observation, report.diff_bytes)


def _observation_coherent(observation: ReportObservation, diff_bytes: int | None) -> bool:
    chunks = observation.chunks
    expected_strategy = c.STRATEGY_WHOLE_DIFF if len(chunks) == 1 else c.STRATEGY_CHUNKED_DIFF
    if observation.strategy != expected_strategy:
        return False
    all_completed = all(chunk.status == c.GROUP_COMPLETED for chunk in chunks)
    expected_status = c.OBSERVATION_COMPLETE if all_completed else c.OBSERVATION_INCOMPLETE
    if observation.status != expected_status:
        return False
    position = 0
    for index, chunk in enumerate(chunks):
        if chunk.index != index or chunk.start_byte != position:
            return False
        if chunk.end_byte < chunk.start_byte:
            return False
        position = chunk.end_byte
    return diff_bytes is None or position == diff_bytes


def validate_report(report: ReportV5 | Mapping[str, object]) -> None:
    """Check ``report`` (typed, or a parsed report mapping) against the schema, finiteness and
    the invariants of docs/reference.md, "Report fields".

    Raises ``PlanningFailure("report-invalid")`` and nothing else; the failure names no value.
    """
    try:
        typed = report if isinstance(report, ReportV5) else None
        if typed is not None:
            document: object = report_json(typed)
        else:
            document = _plain(report) if isinstance(report, Mapping) else None
        valid = (
            isinstance(document, dict)
            and _all_numbers_finite(document)
            and _validator().is_valid(document)
            # A typed report is checked as it is; a mapping is typed once it has the schema's shape.
            and _invariants_hold(typed if typed is not None else parse_report(document))
        )
    except (DocumentError, KeyError, TypeError, ValueError, RecursionError):
        valid = False
    if not valid:
        raise PlanningFailure(c.FAILURE_REPORT_INVALID)


def report_text(report: ReportV5 | Mapping[str, object]) -> str:
    """The report file content: 2-space JSON, non-ASCII unescaped, one final newline."""
    document = report_json(report) if isinstance(report, ReportV5) else report
    return pretty_json(document) + "\n"
