"""A stored shadow report re-decided by the production policy at any threshold.

Pure core. A shadow report keeps each task's score per diff group
(``observation.chunks[].probabilities``) with its own forced state and mandatory tasks, which is
enough to ask what enforce mode would have done at another ``skip-below``
(:func:`policy.score_decisions` and :func:`policy.decide`). ``calibrate`` re-decides at every
threshold; the shadow analysis asks it whether the stored proposals follow from the stored
scores at the report's own threshold, so that ``analyze`` and ``calibrate`` refuse the same
reports.
"""

from __future__ import annotations

import attrs

from .. import contracts as c
from .jsonutil import code_unit_key
from .models import (
    ChangeFacts,
    ChunkRecord,
    Evaluation,
    Observation,
    RequestRecord,
    Task,
    TaskTable,
    Usage,
)
from .policy import decide, score_decisions
from .report_v5 import ReportObservation, ReportRequest, ReportUsage, ReportV5

__all__ = ["Redecision", "proposals_follow_scores", "redecide", "scored"]

_SCORE_REASONS = frozenset((c.REASON_JEV_BELOW_THRESHOLD, c.REASON_JEV_AT_OR_ABOVE_THRESHOLD))
_MANDATORY_REASONS = frozenset(
    (c.REASON_ALWAYS, c.REASON_PATH_MATCH, c.REASON_METADATA_UNAVAILABLE)
)


@attrs.frozen
class Redecision:
    """What enforce mode would have done with one report at one threshold."""

    judged: tuple[str, ...]  # candidates decided by scores
    would_skip: tuple[str, ...]  # tasks enforce mode would not run


def _usage(value: ReportUsage | None) -> Usage | None:
    if value is None:
        return None
    return Usage(value.input_tokens, value.output_tokens)


def _request(request: ReportRequest) -> RequestRecord:
    return RequestRecord(
        task_ids=request.task_ids,
        status=c.GroupStatus(request.status),
        model=request.model,
        usage=_usage(request.usage),
        duration_ms=request.duration_ms,
        error=request.error,
    )


def _observation(value: ReportObservation) -> Observation:
    """The report's observation record as the policy reads it (a validated report only, so
    every vocabulary word is one of the contract's)."""
    chunks = tuple(
        ChunkRecord(
            index=chunk.index,
            start_byte=chunk.start_byte,
            end_byte=chunk.end_byte,
            paths=chunk.paths or (),
            diff_hash=chunk.diff_hash,
            state_hash=chunk.state_hash,
            diff_bytes=chunk.diff_bytes,
            status=c.GroupStatus(chunk.status),
            probabilities=dict(chunk.probabilities) if chunk.probabilities is not None else None,
            model=chunk.model,
            usage=_usage(chunk.usage),
            duration_ms=chunk.duration_ms,
            error=chunk.error,
            requests=tuple(_request(request) for request in chunk.requests or ()),
        )
        for chunk in value.chunks
    )
    return Observation(
        strategy=c.Strategy(value.strategy),
        status=c.ObservationStatus(value.status),
        chunks=chunks,
    )


def _forced_reason(report: ReportV5) -> str | None:
    """The forced state the report carries at every threshold, as a code, or ``None``.

    Bypasses do not depend on scores; a fallback without an observation came from collection or
    grouping, before any score existed.
    """
    status = report.status
    if status == c.STATUS_BYPASSED:
        return c.STATUS_BYPASSED
    if status == c.STATUS_FALLBACK and report.observation is None:
        return c.STATUS_FALLBACK
    return None


def redecide(report: ReportV5, threshold: float) -> Redecision:
    """Enforce mode's plan for a validated shadow report at ``threshold``."""
    decisions = report.tasks
    ids = sorted(decisions, key=code_unit_key)
    if _forced_reason(report) is not None:
        return Redecision(judged=(), would_skip=())
    observation = report.observation
    if observation is not None and observation.status != c.OBSERVATION_COMPLETE:
        return Redecision(judged=(), would_skip=())
    # The report keeps no task table; what the policy needs from it is which tasks were
    # mandatory, and the reasons say exactly that.
    mandatory = frozenset(
        task_id for task_id in ids if _MANDATORY_REASONS.intersection(decisions[task_id].reasons)
    )
    table = TaskTable(tuple(Task(id=task_id, description="") for task_id in ids))
    parsed = _observation(observation) if observation is not None else None
    plan = decide(
        table,
        mode=c.MODE_ENFORCE,
        bypass=None,
        change=ChangeFacts(metadata_incomplete=mandatory),
        evaluation=Evaluation(
            observation=parsed,
            decisions=score_decisions(parsed, ids, threshold) if parsed is not None else None,
            first_failure=report.observation_error,
        ),
    )
    judged = tuple(
        task_id
        for task_id, decision in plan.decisions.items()
        if _SCORE_REASONS.intersection(decision.reasons)
    )
    if plan.status != c.STATUS_PLANNED:
        return Redecision(judged=judged, would_skip=())
    skipped = tuple(task_id for task_id, decision in plan.decisions.items() if not decision.run)
    return Redecision(judged=judged, would_skip=skipped)


def scored(report: ReportV5) -> bool:
    """Whether the report's tasks can be judged by scores at all (threshold aside)."""
    observation = report.observation
    return (
        _forced_reason(report) is None
        and observation is not None
        and observation.status == c.OBSERVATION_COMPLETE
    )


def proposals_follow_scores(report: ReportV5) -> bool:
    """At its own threshold the re-decision reproduces the report's proposals.

    A report whose stored proposals disagree with its stored scores was not produced by this
    policy; analysing or calibrating it would measure something else.
    """
    if not scored(report):
        return True
    stored = {task_id for task_id, entry in report.tasks.items() if entry.proposed_run is False}
    again = redecide(report, report.skip_below)
    if report.status == c.STATUS_PLANNED:
        return set(again.would_skip) == stored
    return not again.would_skip
