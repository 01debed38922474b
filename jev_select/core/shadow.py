"""Shadow-mode analysis (docs/reference.md, "Shadow analysis"): what enforce mode would have
skipped, against real results.

Pure core. ``analyze_shadow`` compares one shadow report with the CI results of the same tested
commit; ``aggregate`` sums several analyses into a rollout view; the ``*_table`` functions render
either as plain text. Failures raise ``AnalysisError`` carrying only a fixed code. ``calibrate``
runs the same checks on every pair, so both commands accept and refuse the same measurements.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .. import contracts as c
from ..errors import CodedError, PlanningFailure
from .columns import align_columns
from .jsonutil import code_unit_key, format_number
from .redecide import proposals_follow_scores
from .report import validate_report

__all__ = [
    "AnalysisError",
    "Measurement",
    "aggregate",
    "aggregate_table",
    "analysis_table",
    "analyze_shadow",
]

_SUCCESS, _FAILURE, _CANCELLED, _SKIPPED = c.TASK_RESULTS
_UNKNOWN = c.FAILURE_CLASSIFICATIONS[-1]

# Results file keys (schemas/results.schema.json).
_RESULTS_KEYS = frozenset(("tested_sha", c.RESULTS_FIELD_TASKS, "relevant_tasks"))
_RESULT_KEY = "result"
_DURATION_KEY = "duration_ms"
_CLASSIFICATION_KEY = "classification"
_TASK_RESULT_KEYS = frozenset((_RESULT_KEY, _DURATION_KEY, _CLASSIFICATION_KEY))

# Aggregate keys that are not analysis keys.
_AGGREGATE_REPORTS = "pull_requests"
_AGGREGATE_FALLBACKS = "fallback_runs"
_AGGREGATE_ANALYSES = "analyses"


class AnalysisError(CodedError):
    """The measurement cannot be analysed. Carries only a code of ``ANALYSIS_CODES``."""


@attrs.frozen
class Measurement:
    """One shadow report with the CI results of its tested commit."""

    report: Mapping[str, Any]
    results: Mapping[str, Any]


def _ordered(ids: Any) -> list[str]:
    return sorted(ids, key=code_unit_key)


def _report_is_valid_shadow(report: Any) -> bool:
    """Check 1 for the report: a valid v5 report in shadow mode.

    The effective-selection rule (every ``run`` true) is part of report validity, but the
    analyzer names its violation separately and later (check 5), so it is set aside here by
    validating a copy in which every boolean ``run`` reads true.
    """
    if not isinstance(report, Mapping) or type(report.get("version")) is not int:
        return False
    if report.get(c.REPORT_FIELD_MODE) != c.MODE_SHADOW:
        return False
    tasks = report.get(c.REPORT_FIELD_TASKS)
    if not isinstance(tasks, Mapping):
        return False
    relaxed_tasks = {
        task_id: (
            {**decision, c.REPORT_TASK_RUN: True}
            if isinstance(decision, Mapping) and isinstance(decision.get(c.REPORT_TASK_RUN), bool)
            else decision
        )
        for task_id, decision in tasks.items()
    }
    try:
        validate_report({**report, c.REPORT_FIELD_TASKS: relaxed_tasks})
    except PlanningFailure:
        return False
    return True


def _check_measurement(report: Any, results: Any) -> None:
    if not _report_is_valid_shadow(report):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    if not isinstance(results, Mapping) or not set(results) <= _RESULTS_KEYS:
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    tested_sha = results.get("tested_sha")
    if not isinstance(tested_sha, str) or tested_sha != report["tested_sha"]:
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    if not isinstance(results.get(c.RESULTS_FIELD_TASKS), Mapping):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)


def _check_labels(results: Mapping[str, Any], task_ids: set[str]) -> frozenset[str]:
    if "relevant_tasks" not in results:
        return frozenset()
    labels = results["relevant_tasks"]
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise AnalysisError(c.ANALYSIS_INVALID_MANUAL_LABELS)
    if len(set(labels)) != len(labels) or not set(labels) <= task_ids:
        raise AnalysisError(c.ANALYSIS_INVALID_MANUAL_LABELS)
    return frozenset(labels)


def _well_formed_result(entry: Any) -> bool:
    if not isinstance(entry, Mapping) or not set(entry) <= _TASK_RESULT_KEYS:
        return False
    if entry.get(_RESULT_KEY) not in c.TASK_RESULTS:
        return False
    duration = entry.get(_DURATION_KEY)
    if isinstance(duration, bool) or not isinstance(duration, int | float):
        return False
    try:
        finite = math.isfinite(duration)
    except OverflowError:  # an integer beyond the double range is not a finite number
        finite = False
    if not finite or duration < 0:
        return False
    return (
        _CLASSIFICATION_KEY not in entry or entry[_CLASSIFICATION_KEY] in c.FAILURE_CLASSIFICATIONS
    )


def analyze_shadow(report: Mapping[str, Any], results: Mapping[str, Any]) -> dict[str, Any]:
    """Compare a shadow report with the CI results of its tested commit (docs/reference.md,
    "Shadow analysis").

    The checks run in the order of docs/reference.md, "Shadow analysis" and the first failure raises
    ``AnalysisError`` with its code. Every list in the result is in code-unit order.
    """
    _check_measurement(report, results)
    decisions: Mapping[str, Mapping[str, Any]] = report[c.REPORT_FIELD_TASKS]
    task_results: Mapping[str, Any] = results[c.RESULTS_FIELD_TASKS]
    task_ids = set(decisions)
    if set(task_results) != task_ids:
        raise AnalysisError(c.ANALYSIS_TASK_RESULTS_MISMATCH)
    relevant = _check_labels(results, task_ids)
    if not all(_well_formed_result(task_results[task_id]) for task_id in task_ids):
        raise AnalysisError(c.ANALYSIS_INVALID_TASK_RESULT)
    if not all(decision[c.REPORT_TASK_RUN] is True for decision in decisions.values()):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_EFFECTIVE_SELECTION)
    # Last, so that every earlier code keeps its place: a report valid by its schema can still
    # carry proposals its own scores do not give (a completed group without scores, a score
    # edited after the run), and counting them would measure something the policy never did.
    if not proposals_follow_scores(report):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)

    would_skip = _ordered(
        task_id
        for task_id, decision in decisions.items()
        if decision[c.REPORT_TASK_PROPOSED_RUN] is False
    )
    misses: dict[str, list[str]] = {name: [] for name in c.FAILURE_CLASSIFICATIONS}
    for task_id in would_skip:
        entry = task_results[task_id]
        if entry[_RESULT_KEY] == _FAILURE:
            misses[entry.get(_CLASSIFICATION_KEY, _UNKNOWN)].append(task_id)
    duration: int | float = 0
    for task_id in would_skip:
        duration += task_results[task_id][_DURATION_KEY]
    return {
        "tested_sha": report["tested_sha"],
        "selection_hash": report["selection_hash"],
        c.ANALYSIS_FIELD_STATUS: report[c.REPORT_FIELD_STATUS],
        c.ANALYSIS_FIELD_FALLBACK: report[c.REPORT_FIELD_STATUS] == c.STATUS_FALLBACK,
        "tasks_total": len(task_ids),
        "tasks_would_skip": would_skip,
        "duration_ms_would_skip": duration,
        "failures_would_miss": misses,
        "skipped_or_cancelled_would_skip": [
            task_id
            for task_id in would_skip
            if task_results[task_id][_RESULT_KEY] in (_SKIPPED, _CANCELLED)
        ],
        "manually_relevant_would_skip": [task_id for task_id in would_skip if task_id in relevant],
    }


def aggregate(analyses: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The rollout view over several analyses (one per archived shadow run).

    Counts replace the per-run ID lists; ``analyses`` keeps every analysis in the given order.
    """
    misses = {name: 0 for name in c.FAILURE_CLASSIFICATIONS}
    duration: int | float = 0
    for analysis in analyses:
        duration += analysis["duration_ms_would_skip"]
        for name in c.FAILURE_CLASSIFICATIONS:
            misses[name] += len(analysis["failures_would_miss"][name])
    return {
        _AGGREGATE_REPORTS: len(analyses),
        _AGGREGATE_FALLBACKS: sum(
            1 for analysis in analyses if analysis[c.ANALYSIS_FIELD_FALLBACK]
        ),
        "tasks_total": sum(analysis["tasks_total"] for analysis in analyses),
        "tasks_would_skip": sum(len(analysis["tasks_would_skip"]) for analysis in analyses),
        "duration_ms_would_skip": duration,
        "failures_would_miss": misses,
        "skipped_or_cancelled_would_skip": sum(
            len(analysis["skipped_or_cancelled_would_skip"]) for analysis in analyses
        ),
        "manually_relevant_would_skip": sum(
            len(analysis["manually_relevant_would_skip"]) for analysis in analyses
        ),
        _AGGREGATE_ANALYSES: [dict(analysis) for analysis in analyses],
    }


# ---------------------------------------------------------------------------------------------
# Plain-text tables
# ---------------------------------------------------------------------------------------------


def _number(value: int | float) -> str:
    return format_number(value)


def _ids(values: Sequence[str]) -> str:
    return ", ".join(values) if values else c.TERMINAL_NULL


def _align(rows: Sequence[Sequence[str]]) -> str:
    return "\n".join(align_columns(rows)) + "\n"


def analysis_table(analysis: Mapping[str, Any]) -> str:
    """One analysis as a two-column table of labels and values."""
    misses: Mapping[str, Sequence[str]] = analysis["failures_would_miss"]
    rows: list[tuple[str, str]] = [
        ("FIELD", "VALUE"),
        ("tested commit", analysis["tested_sha"]),
        ("selection hash", analysis["selection_hash"]),
        (c.ANALYSIS_FIELD_STATUS, analysis[c.ANALYSIS_FIELD_STATUS]),
        (c.ANALYSIS_LABEL_TASKS, str(analysis["tasks_total"])),
        ("would skip", _ids(analysis["tasks_would_skip"])),
        ("would-skip duration (ms, summed)", _number(analysis["duration_ms_would_skip"])),
    ]
    rows.extend(
        (f"missed failures: {name}", _ids(misses[name])) for name in c.FAILURE_CLASSIFICATIONS
    )
    rows.append(
        ("would skip, skipped or cancelled", _ids(analysis["skipped_or_cancelled_would_skip"]))
    )
    rows.append(("would skip, labelled relevant", _ids(analysis["manually_relevant_would_skip"])))
    return _align(rows)


def aggregate_table(view: Mapping[str, Any]) -> str:
    """The rollout view: one row per analysed run and a total row."""
    header = (
        "TESTED",
        "STATUS",
        "TASKS",
        "WOULD-SKIP",
        "DURATION-MS",
        *(f"MISSED-{name.upper()}" for name in c.FAILURE_CLASSIFICATIONS),
        "SKIPPED/CANCELLED",
        "LABELLED",
    )
    rows: list[tuple[str, ...]] = [header]
    for analysis in view[_AGGREGATE_ANALYSES]:
        misses: Mapping[str, Sequence[str]] = analysis["failures_would_miss"]
        rows.append(
            (
                analysis["tested_sha"][:12],
                analysis[c.ANALYSIS_FIELD_STATUS],
                str(analysis["tasks_total"]),
                str(len(analysis["tasks_would_skip"])),
                _number(analysis["duration_ms_would_skip"]),
                *(str(len(misses[name])) for name in c.FAILURE_CLASSIFICATIONS),
                str(len(analysis["skipped_or_cancelled_would_skip"])),
                str(len(analysis["manually_relevant_would_skip"])),
            )
        )
    totals: Mapping[str, int] = view["failures_would_miss"]
    rows.append(
        (
            f"total ({view[_AGGREGATE_REPORTS]})",
            f"{view[_AGGREGATE_FALLBACKS]} {c.STATUS_FALLBACK}",
            str(view["tasks_total"]),
            str(view["tasks_would_skip"]),
            _number(view["duration_ms_would_skip"]),
            *(str(totals[name]) for name in c.FAILURE_CLASSIFICATIONS),
            str(view["skipped_or_cancelled_would_skip"]),
            str(view["manually_relevant_would_skip"]),
        )
    )
    return _align(rows)
