"""The selection policy (docs/reference.md, "Selection policy"): from scores and forced state to a
plan.

Every doubt keeps tasks running. A task is proposed for skipping only when every group scored it
strictly below the threshold; any missing score anywhere makes every task run.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from .. import contracts as c
from .jsonutil import code_unit_key
from .models import (
    ChangeFacts,
    Evaluation,
    Observation,
    Plan,
    TaskDecision,
    TaskTable,
    frozen_mapping,
)
from .tasks import match_force_paths

__all__ = ["choose_bypass", "decide", "first_protected_path", "score_decisions"]


def choose_bypass(
    *,
    pull_request: bool,
    force_all: bool,
    fork: bool,
    api_key: str,
    allow_external_context: bool,
) -> c.Reason | None:
    """The first applicable bypass of docs/reference.md, "Statuses", or None."""
    if not pull_request:
        return c.REASON_NON_PULL_REQUEST
    if force_all:
        return c.REASON_FORCE_ALL
    if fork:
        return c.REASON_FORK
    if not api_key:
        return c.REASON_MISSING_API_KEY
    if not allow_external_context:
        return c.REASON_EXTERNAL_CONTEXT_DISABLED
    return None


def score_decisions(
    observation: Observation, task_ids: Sequence[str], skip_below: float
) -> dict[str, bool | None]:
    """Per-task decision from the groups' scores (docs/reference.md, "Decision from scores").

    ``True`` when some group scored the task at or above ``skip_below``; ``False`` when there is
    at least one group and every group scored it strictly below; otherwise ``None``.
    """
    chunks = observation.chunks
    decisions: dict[str, bool | None] = {}
    for task_id in sorted(task_ids, key=code_unit_key):
        scores = [
            chunk.probabilities[task_id]
            for chunk in chunks
            if chunk.probabilities is not None and task_id in chunk.probabilities
        ]
        if any(score >= skip_below for score in scores):
            decisions[task_id] = True
        elif chunks and len(scores) == len(chunks):
            decisions[task_id] = False
        else:
            decisions[task_id] = None
    return decisions


def first_protected_path(
    changed_paths: Sequence[str] | None, protected_paths: Collection[str]
) -> str | None:
    """The first of ``changed_paths`` that makes a change ``protected-path`` (a workflow file,
    or one of ``protected_paths``), or None."""
    for path in changed_paths or ():
        if path.startswith(c.PROTECTED_PATH_PREFIX) or path in protected_paths:
            return path
    return None


def _is_protected(changed_paths: Sequence[str] | None, protected_paths: Collection[str]) -> bool:
    return first_protected_path(changed_paths, protected_paths) is not None


def _decisions_malformed(decisions: Mapping[str, object] | None, known: set[str]) -> bool:
    if decisions is None:
        return False
    return any(
        task_id not in known or not (value is None or isinstance(value, bool))
        for task_id, value in decisions.items()
    )


def _forced_state(
    *,
    bypass: str | None,
    protected: bool,
    collection_error: str | None,
    grouping_error: str | None,
    malformed: bool,
) -> tuple[c.Status, str] | None:
    """(status, forced reason) of the first applicable source of docs/reference.md, "Forced state",
    or None."""
    if bypass is not None:
        return c.STATUS_BYPASSED, bypass
    if protected:
        return c.STATUS_BYPASSED, c.REASON_PROTECTED_PATH
    if collection_error is not None:
        return c.STATUS_FALLBACK, collection_error
    if grouping_error is not None:
        return c.STATUS_FALLBACK, grouping_error
    if malformed:
        return c.STATUS_FALLBACK, c.REASON_INVALID_RESPONSE
    return None


def _check_vocabulary(
    *,
    mode: str,
    bypass: str | None,
    collection_error: str | None,
    grouping_error: str | None,
    first_failure: str | None,
) -> None:
    """Refuse a value outside its documented vocabulary: a misspelt mode must not plan."""
    allowed: tuple[tuple[str, object, tuple[str | None, ...]], ...] = (
        (c.INPUT_MODE, mode, c.MODES),
        ("bypass", bypass, (None, *c.BYPASS_REASONS)),
        ("collection_error", collection_error, (None, *c.COLLECTION_ERRORS)),
        ("grouping_error", grouping_error, (None, *c.GROUPING_ERRORS)),
        ("first_failure", first_failure, (None, *c.REQUEST_ERRORS)),
    )
    for name, value, vocabulary in allowed:
        if value not in vocabulary:
            # The parameter's name and its vocabulary; never the value given.
            raise ValueError(f"decide: {name} must be one of {', '.join(map(str, vocabulary))}")


def decide(
    tasks: TaskTable,
    *,
    mode: c.Mode,
    bypass: c.Reason | None,
    change: ChangeFacts | None = None,
    evaluation: Evaluation | None = None,
    protected_paths: Collection[str] = (),
) -> Plan:
    """Apply docs/reference.md, "Selection policy" to every task.

    ``change`` is what collection and metadata found (``None`` when nothing was collected);
    ``evaluation`` what was observed (``None`` when nothing was sent). Its decisions are re-checked
    here because a malformed mapping must fall back rather than select. Each of ``mode``,
    ``bypass``, the collection error, the grouping error and the first failure must be in its
    vocabulary (docs/reference.md, "Reason codes"), else ``ValueError``. ``protected_paths`` are
    exact paths that bypass selection like a workflow edit when changed (the ``tasks-file`` table).
    """
    change = change if change is not None else ChangeFacts()
    evaluation = evaluation if evaluation is not None else Evaluation()
    changed_paths = change.changed_paths
    collection_error = change.collection_error
    metadata_incomplete = change.metadata_incomplete
    grouping_error = evaluation.grouping_error
    decisions = evaluation.decisions
    first_failure = evaluation.first_failure
    observed = evaluation.observation is not None
    group_count = evaluation.group_count
    _check_vocabulary(
        mode=mode,
        bypass=bypass,
        collection_error=collection_error,
        grouping_error=grouping_error,
        first_failure=first_failure,
    )
    known = set(tasks.ids)
    forced = _forced_state(
        bypass=bypass,
        protected=_is_protected(changed_paths, protected_paths),
        collection_error=collection_error,
        grouping_error=grouping_error,
        malformed=_decisions_malformed(decisions, known),
    )
    scored: Mapping[str, object] = decisions if decisions is not None else {}

    deterministic: dict[str, list[c.Reason]] = {}
    mandatory: dict[str, bool] = {}
    for task in tasks.tasks:
        reasons: list[c.Reason] = []
        if task.always:
            reasons.append(c.REASON_ALWAYS)
        if (
            task.force_paths
            and changed_paths is not None
            and match_force_paths(task.force_paths, changed_paths)
        ):
            reasons.append(c.REASON_PATH_MATCH)
        deterministic[task.id] = reasons
        mandatory[task.id] = bool(reasons) or task.id in metadata_incomplete

    def candidate_decision(task_id: str) -> bool | None:
        value = scored.get(task_id)
        return value if isinstance(value, bool) else None

    incomplete = forced is None and any(
        not mandatory[task_id] and candidate_decision(task_id) is None for task_id in tasks.ids
    )
    status: c.Status
    if forced is not None:
        status = forced[0]
    elif incomplete:
        status = c.STATUS_FALLBACK
    else:
        status = c.STATUS_PLANNED
    shadow = mode == c.MODE_SHADOW

    result: dict[str, TaskDecision] = {}
    for task_id in sorted(tasks.ids, key=code_unit_key):
        reasons = list(deterministic[task_id])
        proposed: bool | None
        if forced is not None:
            proposed = None
            reasons.append(c.Reason(forced[1]))
        elif mandatory[task_id]:
            proposed = True
        else:
            proposed = candidate_decision(task_id)
            if proposed is None:
                reasons.append(
                    c.Reason(first_failure) if first_failure else c.REASON_OBSERVATION_INCOMPLETE
                )
            elif proposed:
                reasons.append(c.REASON_JEV_AT_OR_ABOVE_THRESHOLD)
            else:
                reasons.append(c.REASON_JEV_BELOW_THRESHOLD)
        if shadow:
            reasons.append(c.REASON_SHADOW_MODE)
        if task_id in metadata_incomplete:
            reasons.append(c.REASON_METADATA_UNAVAILABLE)
        if group_count > 1:
            reasons.append(c.REASON_CHUNKED_OBSERVATION)
        if observed and status == c.STATUS_BYPASSED:
            reasons.append(c.REASON_OBSERVATION_ONLY)
        run = forced is not None or incomplete or shadow or proposed is True
        result[task_id] = TaskDecision(
            proposed_run=proposed, run=run, reasons=tuple(dict.fromkeys(reasons))
        )
    return Plan(mode=c.Mode(mode), status=status, decisions=frozen_mapping(result))
