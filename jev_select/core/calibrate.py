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

import attrs

from .. import contracts as c
from .ceiling import Ceiling, ceiling_json, ceiling_markdown, ceiling_table
from .columns import align_columns
from .convert import unstructure
from .inputs import parse_threshold
from .jsonutil import format_number, pretty_json
from .redecide import redecide, scored
from .results import Results
from .shadow import Measurement, checked_measurement

__all__ = [
    "Calibration",
    "Measurement",
    "ThresholdRow",
    "calibrate",
    "calibration_json",
    "calibration_markdown",
    "calibration_table",
    "clopper_pearson_upper",
    "parse_thresholds",
    "redecide",
    "render_calibration",
    "scored_changes",
]

_FAILURE = c.TASK_RESULTS[1]
_UNKNOWN = c.FAILURE_CLASSIFICATIONS[-1]
_REGRESSION = c.FAILURE_CLASSIFICATIONS[0]
_MS_PER_MINUTE = 60_000


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


@attrs.frozen
class ThresholdRow:
    """One threshold's outcome over every measurement, keys in the order ``calibrate`` writes."""

    threshold: float
    changes: int
    tasks_judged: int
    would_skip: int
    minutes_saved: float
    failures_would_miss: Mapping[str, int]  # every classification, in their order
    manually_relevant_would_skip: int
    regression_miss_upper_bound: float | None  # written as null without a skipped task


@attrs.frozen
class Calibration:
    """The calibration JSON of ``jev-select calibrate``; ``recommended`` is written as null."""

    thresholds: tuple[ThresholdRow, ...]
    recommended: float | None
    note: str


def calibration_json(view: Calibration) -> dict[str, object]:
    """The JSON object ``calibrate`` prints."""
    value = unstructure(view)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def _check(measurements: Sequence[Measurement]) -> list[tuple[Measurement, Results]]:
    # The checks and codes of analyze, which include that the stored proposals follow from
    # the stored scores: exactly the pairs analyze refuses are refused here.
    return [
        (measurement, checked_measurement(measurement.report, measurement.results)[1])
        for measurement in measurements
    ]


def _row(pairs: Sequence[tuple[Measurement, Results]], threshold: float) -> ThresholdRow:
    judged = 0
    would_skip = 0
    duration: int | float = 0
    misses = {name: 0 for name in c.FAILURE_CLASSIFICATIONS}
    relevant_misses = 0
    for measurement, results in pairs:
        outcome = redecide(measurement.report, threshold)
        judged += len(outcome.judged)
        would_skip += len(outcome.would_skip)
        relevant = set(results.relevant_tasks or ())
        for task_id in outcome.would_skip:
            entry = results.tasks[task_id]
            duration += entry.duration_ms
            if entry.result == _FAILURE:
                misses[entry.classification or _UNKNOWN] += 1
            if task_id in relevant:
                relevant_misses += 1
    return ThresholdRow(
        threshold=threshold,
        changes=len(pairs),
        tasks_judged=judged,
        would_skip=would_skip,
        minutes_saved=duration / _MS_PER_MINUTE,
        failures_would_miss=misses,
        manually_relevant_would_skip=relevant_misses,
        regression_miss_upper_bound=clopper_pearson_upper(misses[_REGRESSION], would_skip),
    )


def _safe(row: ThresholdRow) -> bool:
    return row.failures_would_miss[_REGRESSION] == 0 and row.manually_relevant_would_skip == 0


def calibrate(
    measurements: Sequence[Measurement], thresholds: Sequence[float] = c.CALIBRATE_THRESHOLDS
) -> Calibration:
    """Every threshold's outcome over the measurements, and the recommended threshold.

    Raises ``AnalysisError`` (the codes and checks of ``analyze``) when a pair is not a usable
    measurement.
    """
    pairs = _check(measurements)
    rows = tuple(_row(pairs, threshold) for threshold in sorted(set(thresholds)))
    judged_changes = scored_changes(measurements)
    recommended: float | None = None
    if judged_changes < c.CALIBRATE_MIN_SCORED_CHANGES:
        note = c.CALIBRATE_NOTE_TOO_FEW.format(
            scored=judged_changes, minimum=c.CALIBRATE_MIN_SCORED_CHANGES
        )
    else:
        safe = [row.threshold for row in rows if _safe(row)]
        if safe:
            recommended = max(safe)
            note = c.CALIBRATE_NOTE_RECOMMENDED.format(scored=judged_changes)
        else:
            note = c.CALIBRATE_NOTE_NONE_SAFE.format(scored=judged_changes)
    return Calibration(thresholds=rows, recommended=recommended, note=note)


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def _minutes(value: float) -> str:
    return f"{value:.1f}"


def _bound(value: float | None) -> str:
    return c.TERMINAL_NULL if value is None else f"{value:.4f}"


def _cells(row: ThresholdRow) -> tuple[str, ...]:
    misses = row.failures_would_miss
    return (
        format_number(row.threshold),
        str(row.changes),
        str(row.tasks_judged),
        str(row.would_skip),
        _minutes(row.minutes_saved),
        *(str(misses[name]) for name in c.FAILURE_CLASSIFICATIONS),
        str(row.manually_relevant_would_skip),
        _bound(row.regression_miss_upper_bound),
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


def _recommendation(view: Calibration) -> str:
    value = view.recommended
    shown = c.CALIBRATE_NO_RECOMMENDATION if value is None else format_number(value)
    return c.CALIBRATE_RECOMMENDED_TEMPLATE.format(value=shown, note=view.note)


def calibration_table(view: Calibration) -> str:
    """The calibration as an aligned plain-text table and the recommendation line."""
    rows = [_header(), *(_cells(row) for row in view.thresholds)]
    return "\n".join([*align_columns(rows), _recommendation(view)]) + "\n"


def calibration_markdown(view: Calibration) -> str:
    """The calibration as Markdown for a step summary."""
    header = _header()
    lines = [
        c.CALIBRATE_MARKDOWN_TITLE,
        "",
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---:" for _ in header) + " |",
        *("| " + " | ".join(_cells(row)) + " |" for row in view.thresholds),
        "",
        _recommendation(view),
        "",
        c.CALIBRATE_MARKDOWN_FOOTNOTE,
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# With the ceiling
# ---------------------------------------------------------------------------------------------


def scored_changes(measurements: Sequence[Measurement]) -> int:
    """How many of the measurements were scored by Jev: a complete observation, not forced."""
    return sum(1 for measurement in measurements if scored(measurement.report))


def render_calibration(
    view: Calibration, top: Ceiling | None, format: str, *, scored_count: int
) -> str:
    """What ``calibrate`` prints in ``format``: the calibration, then the ceiling when results
    files carry ci blocks.

    When no change was scored by Jev (``scored_count`` is 0), a threshold
    table would be all zeros: with a ceiling, the ceiling is printed alone with a line that says
    so (in JSON, the rows stay and ``note`` is that line). Without a ceiling the output
    is the calibration as it always was.
    """
    if top is None:
        if format == c.CALIBRATE_FORMAT_JSON:
            return pretty_json(calibration_json(view)) + "\n"
        if format == c.CALIBRATE_FORMAT_MARKDOWN:
            return calibration_markdown(view)
        return calibration_table(view)
    scored_view = scored_count > 0
    if format == c.CALIBRATE_FORMAT_JSON:
        # The rows stay, zeros and all, so that a reader of the JSON finds the keys it always
        # found; the note says why they are empty of skips.
        shown = view if scored_view else attrs.evolve(view, note=c.CALIBRATE_NOT_SCORED_LINE)
        value = {**calibration_json(shown), c.CALIBRATE_FIELD_CEILING: ceiling_json(top)}
        return pretty_json(value) + "\n"
    if format == c.CALIBRATE_FORMAT_MARKDOWN:
        if not scored_view:
            return ceiling_markdown(top) + "\n" + c.CALIBRATE_NOT_SCORED_LINE + "\n"
        return calibration_markdown(view) + "\n" + ceiling_markdown(top)
    if not scored_view:
        return ceiling_table(top) + c.CALIBRATE_NOT_SCORED_LINE + "\n"
    return calibration_table(view) + "\n" + ceiling_table(top)
