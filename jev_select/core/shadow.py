"""Shadow-mode analysis (docs/reference.md, "Shadow analysis"): what enforce mode would have
skipped, against real results.

Pure core. ``analyze_shadow`` compares one shadow report with the CI results of the same tested
commit; ``aggregate`` sums several analyses into a rollout view; the ``*_table`` functions render
either as plain text. Failures raise ``AnalysisError`` carrying only a fixed code. ``calibrate``
runs the same checks on every pair, so both commands accept and refuse the same measurements.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from .. import contracts as c
from ..errors import CommandFailure, PlanningFailure
from .columns import align_columns
from .convert import DocumentError, register_document, structure, unstructure
from .jsonutil import code_unit_key, format_number
from .redecide import proposals_follow_scores
from .report import validate_report
from .report_v5 import ReportV5, as_report, report_json
from .results import CiRun, Results, TaskResult, results_json, validate_results

__all__ = [
    "Aggregate",
    "Analysis",
    "AnalysisError",
    "Measurement",
    "aggregate",
    "aggregate_json",
    "aggregate_table",
    "analysis_json",
    "analysis_table",
    "analyze_shadow",
    "checked_measurement",
    "shadow_analysis",
]

_SUCCESS, _FAILURE, _CANCELLED, _SKIPPED = c.TASK_RESULTS
_UNKNOWN = c.FAILURE_CLASSIFICATIONS[-1]

# Results file keys (schemas/results.schema.json).
_RESULTS_KEYS = frozenset(
    ("tested_sha", c.RESULTS_FIELD_TASKS, "relevant_tasks", c.RESULTS_FIELD_CI)
)


class AnalysisError(CommandFailure, failures=c.ANALYSIS_FAILURES):
    """The measurement cannot be analysed. Carries only a code of ``ANALYSIS_CODES``."""


@attrs.frozen
class Measurement:
    """One shadow report with the CI results of its tested commit.

    The report may be given as a parsed report mapping; it is kept typed. The results stay as
    given, so that the checks of ``analyze`` (and their codes) run on them when they are used.
    """

    report: ReportV5 = attrs.field(converter=as_report)
    results: Results | Mapping[str, object]


@attrs.frozen
class Analysis:
    """One shadow analysis, keys in the order ``analyze`` writes them (docs/reference.md)."""

    tested_sha: str
    selection_hash: str
    status: str
    fallback: bool
    tasks_total: int
    tasks_would_skip: tuple[str, ...]
    duration_ms_would_skip: float  # summed as read: an int while every duration is one
    failures_would_miss: Mapping[str, tuple[str, ...]]  # every classification, in their order
    skipped_or_cancelled_would_skip: tuple[str, ...]
    manually_relevant_would_skip: tuple[str, ...]


@attrs.frozen
class Aggregate:
    """The rollout view over several analyses: counts in place of the per-run ID lists."""

    pull_requests: int
    fallback_runs: int
    tasks_total: int
    tasks_would_skip: int
    duration_ms_would_skip: float
    failures_would_miss: Mapping[str, int]
    skipped_or_cancelled_would_skip: int
    manually_relevant_would_skip: int
    analyses: tuple[Analysis, ...]


register_document(Analysis)
register_document(Aggregate)


def analysis_json(analysis: Analysis) -> dict[str, object]:
    """The JSON object ``analyze`` prints for one pair."""
    value = unstructure(analysis)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def aggregate_json(view: Aggregate) -> dict[str, object]:
    """The JSON object ``analyze`` prints for several pairs."""
    value = unstructure(view)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def _ordered(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(ids, key=code_unit_key))


def _report_is_valid_shadow(report: object) -> bool:
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


def _check_results(report: ReportV5, results: object) -> Mapping[str, object]:
    """The results file's task entries, once its envelope names the report's tested commit."""
    if not isinstance(results, Mapping) or not set(results) <= _RESULTS_KEYS:
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    tested_sha = results.get("tested_sha")
    if not isinstance(tested_sha, str) or tested_sha != report.tested_sha:
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    tasks = results.get(c.RESULTS_FIELD_TASKS)
    if not isinstance(tasks, Mapping):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    return tasks


def _check_labels(results: Mapping[str, object], task_ids: set[str]) -> tuple[str, ...] | None:
    if "relevant_tasks" not in results:
        return None
    try:
        labels = structure(results["relevant_tasks"], tuple[str, ...])
    except DocumentError:
        raise AnalysisError(c.ANALYSIS_INVALID_MANUAL_LABELS) from None
    if len(set(labels)) != len(labels) or not set(labels) <= task_ids:
        raise AnalysisError(c.ANALYSIS_INVALID_MANUAL_LABELS)
    return labels


def _check_ci(results: Mapping[str, object], task_ids: set[str]) -> CiRun | None:
    """The ci block, typed: its version and shape as the schema has them, and only the report's
    task IDs; anything else makes the pair unreadable rather than half understood."""
    if c.RESULTS_FIELD_CI not in results:
        return None
    # The schema holds the bounds the converter does not (names, patterns, unique task IDs).
    if not validate_results(results):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    try:
        ci = structure(results[c.RESULTS_FIELD_CI], CiRun)
    except DocumentError:
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT) from None
    if ci.version != c.RESULTS_CI_VERSION or any(not set(job.tasks) <= task_ids for job in ci.jobs):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    return ci


def _task_result(entry: object) -> TaskResult:
    # The converter refuses what is not the entry's JSON type (a boolean duration, an integer
    # beyond the double range, an unknown key); the vocabulary and the sign are checked here.
    try:
        typed = structure(entry, TaskResult)
    except DocumentError:
        raise AnalysisError(c.ANALYSIS_INVALID_TASK_RESULT) from None
    if typed.result not in c.TASK_RESULTS or typed.duration_ms < 0:
        raise AnalysisError(c.ANALYSIS_INVALID_TASK_RESULT)
    if typed.classification is not None and typed.classification not in c.FAILURE_CLASSIFICATIONS:
        raise AnalysisError(c.ANALYSIS_INVALID_TASK_RESULT)
    return typed


def _typed_shadow_report(report: object) -> ReportV5:
    """The report once check 1 passed on its JSON form (which is what the schema describes)."""
    document = report_json(report) if isinstance(report, ReportV5) else report
    if not _report_is_valid_shadow(document):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    if isinstance(report, ReportV5):
        return report
    assert isinstance(document, Mapping)  # check 1 refuses anything else
    try:
        return as_report(document)
    except DocumentError:  # valid by the schema, yet not plain JSON containers
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT) from None


def checked_measurement(report: object, results: object) -> tuple[ReportV5, Results]:
    """The report and results of one pair, typed, once every check of the analysis passed.

    The checks run on the JSON form in the order of docs/reference.md, "Shadow analysis", and the
    first failure raises ``AnalysisError`` with its code; a typed ``Results`` is checked as the
    file it writes.
    """
    typed = _typed_shadow_report(report)
    document = results_json(results) if isinstance(results, Results) else results
    entries = _check_results(typed, document)
    assert isinstance(document, Mapping)  # _check_results refuses anything else
    decisions = typed.tasks
    task_ids = set(decisions)
    if set(entries) != task_ids:
        raise AnalysisError(c.ANALYSIS_TASK_RESULTS_MISMATCH)
    relevant = _check_labels(document, task_ids)
    tasks = {task_id: _task_result(entry) for task_id, entry in entries.items()}
    ci = _check_ci(document, task_ids)
    if not all(decision.run for decision in decisions.values()):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_EFFECTIVE_SELECTION)
    # Last, so that every earlier code keeps its place: a report valid by its schema can still
    # carry proposals its own scores do not give (a completed group without scores, a score
    # edited after the run), and counting them would measure something the policy never did.
    if not proposals_follow_scores(typed):
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    return typed, Results(tested_sha=typed.tested_sha, tasks=tasks, relevant_tasks=relevant, ci=ci)


def shadow_analysis(report: object, results: object) -> Analysis:
    """Compare a shadow report with the CI results of its tested commit (docs/reference.md,
    "Shadow analysis"), typed.

    ``report`` is a ``ReportV5`` or a parsed report mapping, ``results`` a ``Results`` or a parsed
    results file. The first failing check raises ``AnalysisError`` with its code. Every list in
    the result is in code-unit order.
    """
    typed, checked = checked_measurement(report, results)
    task_results = checked.tasks
    relevant = frozenset(checked.relevant_tasks or ())
    would_skip = _ordered(
        task_id for task_id, decision in typed.tasks.items() if decision.proposed_run is False
    )
    misses: dict[str, list[str]] = {name: [] for name in c.FAILURE_CLASSIFICATIONS}
    for task_id in would_skip:
        entry = task_results[task_id]
        if entry.result == _FAILURE:
            misses[entry.classification or _UNKNOWN].append(task_id)
    duration: int | float = 0
    for task_id in would_skip:
        duration += task_results[task_id].duration_ms
    return Analysis(
        tested_sha=typed.tested_sha,
        selection_hash=typed.selection_hash,
        status=typed.status,
        fallback=typed.status == c.STATUS_FALLBACK,
        tasks_total=len(typed.tasks),
        tasks_would_skip=would_skip,
        duration_ms_would_skip=duration,
        failures_would_miss={name: tuple(ids) for name, ids in misses.items()},
        skipped_or_cancelled_would_skip=tuple(
            task_id
            for task_id in would_skip
            if task_results[task_id].result in (_SKIPPED, _CANCELLED)
        ),
        manually_relevant_would_skip=tuple(
            task_id for task_id in would_skip if task_id in relevant
        ),
    )


def analyze_shadow(report: ReportV5 | Mapping[str, object], results: object) -> dict[str, object]:
    """The analysis mapping of :func:`shadow_analysis`: what ``analyze`` prints for one pair."""
    return analysis_json(shadow_analysis(report, results))


def aggregate(analyses: Sequence[Analysis]) -> Aggregate:
    """The rollout view over several analyses (one per archived shadow run).

    Counts replace the per-run ID lists; ``analyses`` keeps every analysis in the given order.
    """
    misses = {name: 0 for name in c.FAILURE_CLASSIFICATIONS}
    duration: int | float = 0
    for analysis in analyses:
        duration += analysis.duration_ms_would_skip
        for name in c.FAILURE_CLASSIFICATIONS:
            misses[name] += len(analysis.failures_would_miss[name])
    return Aggregate(
        pull_requests=len(analyses),
        fallback_runs=sum(1 for analysis in analyses if analysis.fallback),
        tasks_total=sum(analysis.tasks_total for analysis in analyses),
        tasks_would_skip=sum(len(analysis.tasks_would_skip) for analysis in analyses),
        duration_ms_would_skip=duration,
        failures_would_miss=misses,
        skipped_or_cancelled_would_skip=sum(
            len(analysis.skipped_or_cancelled_would_skip) for analysis in analyses
        ),
        manually_relevant_would_skip=sum(
            len(analysis.manually_relevant_would_skip) for analysis in analyses
        ),
        analyses=tuple(analyses),
    )


# ---------------------------------------------------------------------------------------------
# Plain-text tables
# ---------------------------------------------------------------------------------------------


def _number(value: int | float) -> str:
    return format_number(value)


def _ids(values: Sequence[str]) -> str:
    return ", ".join(values) if values else c.TERMINAL_NULL


def _align(rows: Sequence[Sequence[str]]) -> str:
    return "\n".join(align_columns(rows)) + "\n"


def analysis_table(analysis: Analysis) -> str:
    """One analysis as a two-column table of labels and values."""
    misses = analysis.failures_would_miss
    rows: list[tuple[str, str]] = [
        ("FIELD", "VALUE"),
        ("tested commit", analysis.tested_sha),
        ("selection hash", analysis.selection_hash),
        (c.ANALYSIS_FIELD_STATUS, analysis.status),
        (c.ANALYSIS_LABEL_TASKS, str(analysis.tasks_total)),
        ("would skip", _ids(analysis.tasks_would_skip)),
        ("would-skip duration (ms, summed)", _number(analysis.duration_ms_would_skip)),
    ]
    rows.extend(
        (f"missed failures: {name}", _ids(misses[name])) for name in c.FAILURE_CLASSIFICATIONS
    )
    rows.append(
        ("would skip, skipped or cancelled", _ids(analysis.skipped_or_cancelled_would_skip))
    )
    rows.append(("would skip, labelled relevant", _ids(analysis.manually_relevant_would_skip)))
    return _align(rows)


def aggregate_table(view: Aggregate) -> str:
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
    for analysis in view.analyses:
        misses = analysis.failures_would_miss
        rows.append(
            (
                analysis.tested_sha[:12],
                analysis.status,
                str(analysis.tasks_total),
                str(len(analysis.tasks_would_skip)),
                _number(analysis.duration_ms_would_skip),
                *(str(len(misses[name])) for name in c.FAILURE_CLASSIFICATIONS),
                str(len(analysis.skipped_or_cancelled_would_skip)),
                str(len(analysis.manually_relevant_would_skip)),
            )
        )
    totals = view.failures_would_miss
    rows.append(
        (
            f"total ({view.pull_requests})",
            f"{view.fallback_runs} {c.STATUS_FALLBACK}",
            str(view.tasks_total),
            str(view.tasks_would_skip),
            _number(view.duration_ms_would_skip),
            *(str(totals[name]) for name in c.FAILURE_CLASSIFICATIONS),
            str(view.skipped_or_cancelled_would_skip),
            str(view.manually_relevant_would_skip),
        )
    )
    return _align(rows)
