"""Report v5 (docs/reference.md, "Report fields"): construction, validation and its file text.

The report is the source of truth for everything published afterwards, so it is validated against
the strict schema and the cross-field invariants before any output is written.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .. import contracts as c
from ..errors import PlanningFailure
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

__all__ = ["build_report", "report_text", "validate_report"]

# Written key order of one job_metadata entry (docs/reference.md, "Job metadata").
_METADATA_KEY_ORDER = (
    "incomplete",
    "missing",
    "provenance",
    "hashes",
    "warnings",
    "nativeDependencies",
    c.JOB_REF_FIELD_WORKFLOW,
    c.JOB_REF_FIELD_JOB,
)


def _usage(usage: Usage | None) -> dict[str, int] | None:
    return usage.to_json() if usage is not None else None


def _sorted_mapping(values: Mapping[str, Any]) -> dict[str, Any]:
    return {key: values[key] for key in sorted(values, key=code_unit_key)}


def _plain(value: Any) -> Any:
    """A copy made of dicts, lists and scalars only (read-only mappings and tuples unwrapped)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _request_json(request: RequestRecord) -> dict[str, Any]:
    return {
        "task_ids": list(request.task_ids),
        c.REPORT_FIELD_STATUS: request.status,
        c.REPORT_FIELD_MODEL: request.model,
        "usage": _usage(request.usage),
        "duration_ms": request.duration_ms,
        "error": request.error,
    }


def _chunk_json(chunk: ChunkRecord) -> dict[str, Any]:
    return {
        "index": chunk.index,
        "start_byte": chunk.start_byte,
        "end_byte": chunk.end_byte,
        "paths": list(chunk.paths),
        "diff_hash": chunk.diff_hash,
        "state_hash": chunk.state_hash,
        "diff_bytes": chunk.diff_bytes,
        c.REPORT_FIELD_STATUS: chunk.status,
        "probabilities": (
            _sorted_mapping(chunk.probabilities) if chunk.probabilities is not None else None
        ),
        c.REPORT_FIELD_MODEL: chunk.model,
        "usage": _usage(chunk.usage),
        "duration_ms": chunk.duration_ms,
        "error": chunk.error,
        "requests": [_request_json(request) for request in chunk.requests],
    }


def _observation_json(observation: Observation | None) -> dict[str, Any] | None:
    if observation is None:
        return None
    return {
        "strategy": observation.strategy,
        c.REPORT_FIELD_STATUS: observation.status,
        "chunks": [_chunk_json(chunk) for chunk in observation.chunks],
    }


def _metadata_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    ordered = {key: _plain(entry[key]) for key in _METADATA_KEY_ORDER if key in entry}
    # Unknown keys are kept (after the known ones) so that validation rejects them loudly
    # instead of the report silently dropping evidence.
    ordered.update({key: _plain(item) for key, item in entry.items() if key not in ordered})
    return ordered


def build_report(
    plan: Plan,
    run: RunFacts,
    change: ChangeFacts | None = None,
    evaluation: Evaluation | None = None,
) -> dict[str, Any]:
    """Report v5 as an ordered mapping (docs/reference.md, "Report fields").

    ``change`` is what collection and metadata found (``None`` when nothing was collected; its
    diff facts are written only when the change was completely collected); ``evaluation`` what
    was observed (``None`` when nothing was sent).
    """
    change = change if change is not None else ChangeFacts()
    evaluation = evaluation if evaluation is not None else Evaluation()
    commits = run.commits
    change_set = change.change_set
    observation = evaluation.observation
    if run.tested_ref == c.TESTED_REF_MERGE:
        diff_base_sha: str | None = commits.base_sha
    else:
        diff_base_sha = commits.diff_base_sha
    tasks = {
        task_id: {
            c.REPORT_TASK_PROPOSED_RUN: decision.proposed_run,
            c.REPORT_TASK_RUN: decision.run,
            c.REPORT_TASK_REASONS: list(decision.reasons),
        }
        for task_id, decision in _sorted_mapping(plan.decisions).items()
    }
    values: dict[str, Any] = {
        "version": c.REPORT_VERSION,
        "tested_ref": run.tested_ref,
        "diff_base_sha": diff_base_sha,
        "job_metadata": {
            task_id: _metadata_entry(entry)
            for task_id, entry in _sorted_mapping(change.job_metadata).items()
        },
        "observation_error": evaluation.observation_error,
        "metadata_sha": commits.metadata_sha,
        "base_sha": commits.base_sha,
        "head_sha": commits.head_sha,
        "tested_sha": commits.tested_sha,
        "selection_hash": run.selection_hash,
        "skip_below": run.skip_below,
        "diff_hash": change_set.diff_hash if change_set is not None else None,
        "diff_bytes": change_set.diff_bytes if change_set is not None else None,
        "changed_path_count": change_set.changed_path_count if change_set is not None else None,
        c.REPORT_FIELD_MODE: plan.mode,
        c.REPORT_FIELD_STATUS: plan.status,
        c.REPORT_FIELD_MODEL: {
            "requested": run.model_requested,
            "expected": run.model_expected,
            "returned": evaluation.model_returned,
        },
        "durations_ms": {
            "collection": run.durations_ms.collection,
            "jev": run.durations_ms.jev,
            "total": run.durations_ms.total,
        },
        "usage": _usage(evaluation.usage),
        c.REPORT_FIELD_TASKS: tasks,
        "observation": _observation_json(observation),
    }
    return {field: values[field] for field in c.REPORT_FIELDS}


@functools.cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    resource = importlib.resources.files("jev_select") / "schemas" / c.REPORT_SCHEMA_FILE
    schema = strict_loads(resource.read_bytes())
    return Draft202012Validator(schema)


def _all_numbers_finite(value: Any) -> bool:
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


def _full(pattern: str, value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(pattern, value, re.ASCII) is not None


def _invariants_hold(report: Mapping[str, Any]) -> bool:
    status = report[c.REPORT_FIELD_STATUS]
    mode = report[c.REPORT_FIELD_MODE]
    tasks: Mapping[str, Mapping[str, Any]] = report[c.REPORT_FIELD_TASKS]
    for task_id, decision in tasks.items():
        if not _full(c.TASK_ID_PATTERN, task_id):
            return False
        everything_runs = status != c.STATUS_PLANNED or mode == c.MODE_SHADOW
        if everything_runs and decision[c.REPORT_TASK_RUN] is not True:
            return False
        if status == c.STATUS_PLANNED:
            # Planned means every decision was complete: nothing is left undecided, and in
            # enforce mode the effective run is exactly the proposal.
            if decision[c.REPORT_TASK_PROPOSED_RUN] is None:
                return False
            if (
                mode == c.MODE_ENFORCE
                and decision[c.REPORT_TASK_RUN] != decision[c.REPORT_TASK_PROPOSED_RUN]
            ):
                return False
    for field in ("metadata_sha", "base_sha", "head_sha", "tested_sha"):
        if not _full(c.SHA40_PATTERN, report[field]):
            return False
    job_metadata: Mapping[str, Any] = report["job_metadata"]
    if job_metadata and set(job_metadata) != set(tasks):
        return False
    observation = report["observation"]
    return observation is None or _observation_coherent(observation, report["diff_bytes"])


def _observation_coherent(observation: Mapping[str, Any], diff_bytes: int | None) -> bool:
    chunks: Sequence[Mapping[str, Any]] = observation["chunks"]
    expected_strategy = c.STRATEGY_WHOLE_DIFF if len(chunks) == 1 else c.STRATEGY_CHUNKED_DIFF
    if observation["strategy"] != expected_strategy:
        return False
    all_completed = all(chunk[c.REPORT_FIELD_STATUS] == c.GROUP_COMPLETED for chunk in chunks)
    expected_status = c.OBSERVATION_COMPLETE if all_completed else c.OBSERVATION_INCOMPLETE
    if observation[c.REPORT_FIELD_STATUS] != expected_status:
        return False
    position = 0
    for index, chunk in enumerate(chunks):
        if chunk["index"] != index or chunk["start_byte"] != position:
            return False
        if chunk["end_byte"] < chunk["start_byte"]:
            return False
        position = chunk["end_byte"]
    return diff_bytes is None or position == diff_bytes


def validate_report(report: Mapping[str, Any]) -> None:
    """Check ``report`` against the schema, finiteness and the invariants of docs/reference.md,
    "Report fields".

    Raises ``PlanningFailure("report-invalid")`` and nothing else; the failure names no value.
    """
    try:
        valid = (
            isinstance(report, Mapping)
            and _all_numbers_finite(report)
            and _validator().is_valid(_plain(report))
            and _invariants_hold(report)
        )
    except (KeyError, TypeError, ValueError, RecursionError):
        valid = False
    if not valid:
        raise PlanningFailure(c.FAILURE_REPORT_INVALID)


def report_text(report: Mapping[str, Any]) -> str:
    """The report file content: 2-space JSON, non-ASCII unescaped, one final newline."""
    return pretty_json(report) + "\n"
