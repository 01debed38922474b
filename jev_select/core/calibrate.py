"""Threshold calibration: every shadow report re-decided at other thresholds (``calibrate``).

Pure core. A shadow report keeps each task's score per diff group
(``observation.chunks[].probabilities``), which is enough to ask what enforce mode would have
skipped at any other ``skip-below``. The re-decision goes through the production policy
(:func:`policy.score_decisions` and :func:`policy.decide`) with the report's own forced state and
mandatory tasks, so nothing the production rules keep running is ever counted as a skip:

- a bypassed report, and a fallback report without an observation (collection or grouping
  error), are forced at every threshold;
- ``always``, ``path-match`` and ``metadata-unavailable`` tasks stay mandatory;
- a report whose observation is ``incomplete`` (some group did not complete) skips nothing at any
  threshold: the missing answers might have kept any task;
- a candidate left without a decision at a threshold makes every task of that change run, exactly
  as in production (docs/reference.md, "Mandatory tasks and the effective run").

Misses are counted against the CI results of each report (the ``analyze`` results file); the
regression-miss rate gets a one-sided 95% Clopper–Pearson upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .. import contracts as c
from .columns import align_columns
from .inputs import parse_threshold
from .jsonutil import code_unit_key, format_number
from .models import ChunkRecord, Observation, RequestRecord, Task, TaskTable, Usage
from .policy import decide, score_decisions
from .shadow import AnalysisError, analyze_shadow

__all__ = [
    "Measurement",
    "calibrate",
    "calibration_markdown",
    "calibration_table",
    "clopper_pearson_upper",
    "parse_thresholds",
    "redecide",
]

_TASKS = c.INPUT_TASKS
_STATUS = c.OUTPUT_STATUS
_MODEL = c.INPUT_MODEL
_FAILURE = c.TASK_RESULTS[1]
_UNKNOWN = c.FAILURE_CLASSIFICATIONS[-1]
_REGRESSION = c.FAILURE_CLASSIFICATIONS[0]
_SCORE_REASONS = frozenset((c.REASON_JEV_BELOW_THRESHOLD, c.REASON_JEV_AT_OR_ABOVE_THRESHOLD))
_MANDATORY_REASONS = frozenset(
    (c.REASON_ALWAYS, c.REASON_PATH_MATCH, c.REASON_METADATA_UNAVAILABLE)
)
_MS_PER_MINUTE = 60_000


@attrs.frozen
class Measurement:
    """One shadow report with the CI results of its tested commit."""

    report: Mapping[str, Any]
    results: Mapping[str, Any]


@attrs.frozen
class Redecision:
    """What enforce mode would have done with one report at one threshold."""

    judged: tuple[str, ...]  # candidates decided by scores
    would_skip: tuple[str, ...]  # tasks enforce mode would not run


# ---------------------------------------------------------------------------------------------
# Thresholds
# ---------------------------------------------------------------------------------------------


def parse_thresholds(text: str) -> tuple[float, ...] | None:
    """Comma-separated ``skip-below`` values (same syntax and range), ascending, duplicates
    removed; ``None`` when any value is malformed or the list is empty."""
    values: set[float] = set()
    for part in text.split(","):
        value = parse_threshold(part.strip())
        if value is None:
            return None
        values.add(value)
    return tuple(sorted(values)) if values else None


# ---------------------------------------------------------------------------------------------
# Re-decision through the production policy
# ---------------------------------------------------------------------------------------------


def _usage(value: Any) -> Usage | None:
    if value is None:
        return None
    return Usage(value["input_tokens"], value["output_tokens"])


def _observation(value: Mapping[str, Any]) -> Observation:
    """The report's observation record as the policy reads it (a validated report only)."""
    chunks = tuple(
        ChunkRecord(
            index=chunk["index"],
            start_byte=chunk["start_byte"],
            end_byte=chunk["end_byte"],
            paths=tuple(chunk.get("paths", ())),
            diff_hash=chunk["diff_hash"],
            state_hash=chunk["state_hash"],
            diff_bytes=chunk["diff_bytes"],
            status=chunk[_STATUS],
            probabilities=(
                dict(chunk["probabilities"]) if chunk["probabilities"] is not None else None
            ),
            model=chunk[_MODEL],
            usage=_usage(chunk["usage"]),
            duration_ms=chunk["duration_ms"],
            error=chunk["error"],
            requests=tuple(
                RequestRecord(
                    task_ids=tuple(request["task_ids"]),
                    status=request[_STATUS],
                    model=request[_MODEL],
                    usage=_usage(request["usage"]),
                    duration_ms=request["duration_ms"],
                    error=request["error"],
                )
                for request in chunk.get("requests", ())
            ),
        )
        for chunk in value["chunks"]
    )
    return Observation(strategy=value["strategy"], status=value[_STATUS], chunks=chunks)


def _forced_reason(report: Mapping[str, Any]) -> str | None:
    """The forced state the report carries at every threshold, as a code, or ``None``.

    Bypasses do not depend on scores; a fallback without an observation came from collection or
    grouping, before any score existed.
    """
    status = report[_STATUS]
    if status == c.STATUS_BYPASSED:
        return c.STATUS_BYPASSED
    if status == c.STATUS_FALLBACK and report["observation"] is None:
        return c.STATUS_FALLBACK
    return None


def redecide(report: Mapping[str, Any], threshold: float) -> Redecision:
    """Enforce mode's plan for a validated shadow report at ``threshold``."""
    decisions: Mapping[str, Mapping[str, Any]] = report[_TASKS]
    ids = sorted(decisions, key=code_unit_key)
    if _forced_reason(report) is not None:
        return Redecision(judged=(), would_skip=())
    observation = report["observation"]
    if observation is not None and observation[_STATUS] != c.OBSERVATION_COMPLETE:
        return Redecision(judged=(), would_skip=())
    # The report keeps no task table; what the policy needs from it is which tasks were
    # mandatory, and the reasons say exactly that.
    mandatory = frozenset(
        task_id for task_id in ids if _MANDATORY_REASONS.intersection(decisions[task_id]["reasons"])
    )
    table = TaskTable(tuple(Task(id=task_id, description="") for task_id in ids))
    parsed = _observation(observation) if observation is not None else None
    plan = decide(
        table,
        mode=c.MODE_ENFORCE,
        bypass=None,
        changed_paths=None,
        collection_error=None,
        grouping_error=None,
        decisions=score_decisions(parsed, ids, threshold) if parsed is not None else None,
        first_failure=report["observation_error"],
        observed=parsed is not None,
        group_count=len(parsed.chunks) if parsed is not None else 0,
        metadata_incomplete=mandatory,
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


def _scored(report: Mapping[str, Any]) -> bool:
    """Whether the report's tasks can be judged by scores at all (threshold aside)."""
    observation = report["observation"]
    return (
        _forced_reason(report) is None
        and observation is not None
        and observation[_STATUS] == c.OBSERVATION_COMPLETE
    )


def _consistent(report: Mapping[str, Any]) -> bool:
    """At its own threshold the re-decision reproduces the report's proposals.

    A report whose stored proposals disagree with its stored scores was not produced by this
    policy; calibrating on it would measure something else.
    """
    if not _scored(report):
        return True
    decisions: Mapping[str, Mapping[str, Any]] = report[_TASKS]
    stored = {task_id for task_id, entry in decisions.items() if entry["proposed_run"] is False}
    again = redecide(report, report["skip_below"])
    if report[_STATUS] == c.STATUS_PLANNED:
        return set(again.would_skip) == stored
    return not again.would_skip


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c_term, d_term = 1.0, 1.0 - qab * x / qap
    d_term = 1.0 / (d_term if abs(d_term) > tiny else tiny)
    result = d_term
    for m in range(1, 1000):
        m2 = 2 * m
        numerator = m * (b - m) * x / ((qam + m2) * (a + m2))
        d_term = 1.0 + numerator * d_term
        d_term = 1.0 / (d_term if abs(d_term) > tiny else tiny)
        c_term = 1.0 + numerator / c_term
        c_term = c_term if abs(c_term) > tiny else tiny
        result *= d_term * c_term
        numerator = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d_term = 1.0 + numerator * d_term
        d_term = 1.0 / (d_term if abs(d_term) > tiny else tiny)
        c_term = 1.0 + numerator / c_term
        c_term = c_term if abs(c_term) > tiny else tiny
        delta = d_term * c_term
        result *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return result


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for a, b > 0 and x in [0, 1]."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The fraction converges fast on one side of the mean; use the symmetry on the other.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def clopper_pearson_upper(
    misses: int, trials: int, confidence: float = c.CALIBRATE_CONFIDENCE
) -> float | None:
    """The one-sided Clopper–Pearson upper bound of a rate seen as ``misses`` in ``trials``.

    The bound p solves P(X <= misses | n = trials, p) = 1 - confidence, that is the
    ``confidence`` quantile of Beta(misses + 1, trials - misses); with no miss it is
    1 - (1 - confidence) ** (1 / trials). ``None`` without trials.
    """
    if trials <= 0:
        return None
    if misses >= trials:
        return 1.0
    a, b = misses + 1.0, float(trials - misses)
    low, high = 0.0, 1.0
    for _ in range(200):  # bisection: I_p(a, b) grows with p
        middle = (low + high) / 2.0
        if regularized_beta(a, b, middle) < confidence:
            low = middle
        else:
            high = middle
        if high - low < 1e-15:
            break
    return high


# ---------------------------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------------------------


def _check(measurements: Sequence[Measurement]) -> None:
    for measurement in measurements:
        # The same checks and codes as analyze: a pair analyze refuses is refused here too.
        analyze_shadow(measurement.report, measurement.results)
        if not _consistent(measurement.report):
            raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)


def _row(measurements: Sequence[Measurement], threshold: float) -> dict[str, Any]:
    judged = 0
    would_skip = 0
    duration: int | float = 0
    misses = {name: 0 for name in c.FAILURE_CLASSIFICATIONS}
    relevant_misses = 0
    for measurement in measurements:
        outcome = redecide(measurement.report, threshold)
        judged += len(outcome.judged)
        would_skip += len(outcome.would_skip)
        task_results: Mapping[str, Mapping[str, Any]] = measurement.results[_TASKS]
        relevant = set(measurement.results.get("relevant_tasks", ()))
        for task_id in outcome.would_skip:
            entry = task_results[task_id]
            duration += entry["duration_ms"]
            if entry["result"] == _FAILURE:
                misses[entry.get("classification", _UNKNOWN)] += 1
            if task_id in relevant:
                relevant_misses += 1
    return {
        "threshold": threshold,
        "changes": len(measurements),
        "tasks_judged": judged,
        "would_skip": would_skip,
        "minutes_saved": duration / _MS_PER_MINUTE,
        "failures_would_miss": misses,
        "manually_relevant_would_skip": relevant_misses,
        "regression_miss_upper_bound": clopper_pearson_upper(misses[_REGRESSION], would_skip),
    }


def _safe(row: Mapping[str, Any]) -> bool:
    misses: Mapping[str, int] = row["failures_would_miss"]
    relevant: int = row["manually_relevant_would_skip"]
    return misses[_REGRESSION] == 0 and relevant == 0


def calibrate(
    measurements: Sequence[Measurement], thresholds: Sequence[float] = c.CALIBRATE_THRESHOLDS
) -> dict[str, Any]:
    """Every threshold's outcome over the measurements, and the recommended threshold.

    Raises ``AnalysisError`` (the codes of ``analyze``) when a pair is not a usable measurement,
    or when a report's proposals do not follow from its own scores.
    """
    _check(measurements)
    rows = [_row(measurements, threshold) for threshold in sorted(set(thresholds))]
    scored = sum(1 for measurement in measurements if _scored(measurement.report))
    recommended: float | None = None
    if scored < c.CALIBRATE_MIN_SCORED_CHANGES:
        note = c.CALIBRATE_NOTE_TOO_FEW.format(
            scored=scored, minimum=c.CALIBRATE_MIN_SCORED_CHANGES
        )
    else:
        safe = [row["threshold"] for row in rows if _safe(row)]
        if safe:
            recommended = max(safe)
            note = c.CALIBRATE_NOTE_RECOMMENDED.format(scored=scored)
        else:
            note = c.CALIBRATE_NOTE_NONE_SAFE.format(scored=scored)
    return {"thresholds": rows, "recommended": recommended, "note": note}


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def _minutes(value: float) -> str:
    return f"{value:.1f}"


def _bound(value: float | None) -> str:
    return c.TERMINAL_NULL if value is None else f"{value:.4f}"


def _cells(row: Mapping[str, Any]) -> tuple[str, ...]:
    misses: Mapping[str, int] = row["failures_would_miss"]
    return (
        format_number(row["threshold"]),
        str(row["changes"]),
        str(row["tasks_judged"]),
        str(row["would_skip"]),
        _minutes(row["minutes_saved"]),
        *(str(misses[name]) for name in c.FAILURE_CLASSIFICATIONS),
        str(row["manually_relevant_would_skip"]),
        _bound(row["regression_miss_upper_bound"]),
    )


def _header() -> tuple[str, ...]:
    return (
        "THRESHOLD",
        "CHANGES",
        "JUDGED",
        "WOULD-SKIP",
        "MINUTES-SAVED",
        *(f"MISSED-{name.upper()}" for name in c.FAILURE_CLASSIFICATIONS),
        "RELEVANT-SKIPPED",
        "REGRESSION-UB95",
    )


def _recommendation(view: Mapping[str, Any]) -> str:
    value = view["recommended"]
    shown = c.CALIBRATE_NO_RECOMMENDATION if value is None else format_number(value)
    return c.CALIBRATE_RECOMMENDED_TEMPLATE.format(value=shown, note=view["note"])


def calibration_table(view: Mapping[str, Any]) -> str:
    """The calibration as an aligned plain-text table and the recommendation line."""
    rows = [_header(), *(_cells(row) for row in view["thresholds"])]
    return "\n".join([*align_columns(rows), _recommendation(view)]) + "\n"


def calibration_markdown(view: Mapping[str, Any]) -> str:
    """The calibration as Markdown for a step summary."""
    header = _header()
    lines = [
        c.CALIBRATE_MARKDOWN_TITLE,
        "",
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---:" for _ in header) + " |",
        *("| " + " | ".join(_cells(row)) + " |" for row in view["thresholds"]),
        "",
        _recommendation(view),
        "",
        c.CALIBRATE_MARKDOWN_FOOTNOTE,
    ]
    return "\n".join(lines) + "\n"
