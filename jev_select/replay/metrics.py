"""The figures of a replay: per-case outcomes, the docs/reference.md, "Evaluation replay" counts and
their presentation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

import attrs

from .. import contracts as c
from ..core.columns import align_columns
from ..core.convert import unstructure
from ..core.jsonutil import (
    format_number,
)
from ..core.report_v5 import ReportV5, as_report
from .corpus import Case

# ---------------------------------------------------------------------------------------------
# Running a case
# ---------------------------------------------------------------------------------------------


def _typed_reports(
    reports: Mapping[float, ReportV5 | Mapping[str, object]],
) -> dict[float, ReportV5]:
    return {threshold: as_report(report) for threshold, report in reports.items()}


@attrs.frozen
class CaseOutcome:
    """What the pipeline proposed for one case at each threshold.

    The reports may be given as parsed report mappings; they are kept typed.
    """

    case: Case
    reports: Mapping[float, ReportV5] = attrs.field(converter=_typed_reports)  # by threshold
    recordings_used: int
    synthetic_used: int

    def proposals(self, threshold: float) -> dict[str, bool | None]:
        tasks = self.reports[threshold].tasks
        return {task_id: decision.proposed_run for task_id, decision in tasks.items()}

    def statuses(self) -> dict[str, str]:
        return {
            format_number(threshold): report.status for threshold, report in self.reports.items()
        }


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------


def _empty_metrics() -> dict[str, int]:
    return dict.fromkeys(c.REPLAY_METRICS, 0)


def _count(metrics: dict[str, int], label: str | None, proposed: bool | None) -> None:
    (
        relevant,
        relevant_misses,
        irrelevant,
        correct_omissions,
        irrelevant_retained,
        unknown,
    ) = c.REPLAY_METRICS
    if label == c.REPLAY_LABEL_RELEVANT:
        metrics[relevant] += 1
        if proposed is False:
            metrics[relevant_misses] += 1
    elif label == c.REPLAY_LABEL_IRRELEVANT:
        metrics[irrelevant] += 1
        if proposed is False:
            metrics[correct_omissions] += 1
        elif proposed is True:
            metrics[irrelevant_retained] += 1
    if proposed is None:
        metrics[unknown] += 1


# One threshold's row: the threshold column, then every count of REPLAY_METRICS (integers), in
# the order the table and the JSON show them; the names come from the contracts, so a mapping.
MetricRow: TypeAlias = Mapping[str, float]


def compute_metrics(
    outcomes: Sequence[CaseOutcome], thresholds: Sequence[float]
) -> list[MetricRow]:
    """Per threshold, the docs/reference.md, "Evaluation replay" counts over every labelled task of
    ``outcomes``.

    ``unknown`` counts tasks (of either label) whose proposal is null: no usable evidence.
    """
    rows: list[MetricRow] = []
    for threshold in thresholds:
        metrics = _empty_metrics()
        for outcome in outcomes:
            for task_id, proposed in outcome.proposals(threshold).items():
                _count(metrics, outcome.case.labels.get(task_id), proposed)
        rows.append({c.REPLAY_THRESHOLD_COLUMN: threshold, **metrics})
    return rows


# ---------------------------------------------------------------------------------------------
# The whole replay
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ReplayResult:
    outcomes: tuple[CaseOutcome, ...]
    thresholds: tuple[float, ...]
    metrics: list[MetricRow]
    by_split: dict[str, list[MetricRow]]

    @property
    def answers(self) -> int:
        return sum(outcome.recordings_used for outcome in self.outcomes)

    @property
    def synthetic_answers(self) -> int:
        return sum(outcome.synthetic_used for outcome in self.outcomes)


# ---------------------------------------------------------------------------------------------
# Presentation
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class CaseDocument:
    """One case of the replay JSON; statuses and proposals are keyed by the written threshold."""

    id: str
    split: str
    answers: int
    synthetic_answers: int
    statuses: Mapping[str, str]
    proposals: Mapping[str, Mapping[str, bool | None]]
    labels: Mapping[str, str]


@attrs.frozen
class ReplayDocument:
    """The replay JSON (``replay --json``), keys in the order it is written."""

    answers: int
    synthetic_answers: int
    synthetic: bool
    thresholds: tuple[MetricRow, ...]
    splits: Mapping[str, tuple[MetricRow, ...]]
    cases: tuple[CaseDocument, ...]


def result_json(result: ReplayResult) -> dict[str, object]:
    """The replay as a JSON value: metrics overall and per split, and every case's proposals."""
    document = ReplayDocument(
        answers=result.answers,
        synthetic_answers=result.synthetic_answers,
        synthetic=result.answers > 0 and result.synthetic_answers == result.answers,
        thresholds=tuple(result.metrics),
        splits={split: tuple(rows) for split, rows in result.by_split.items()},
        cases=tuple(
            CaseDocument(
                id=outcome.case.id,
                split=outcome.case.split,
                answers=outcome.recordings_used,
                synthetic_answers=outcome.synthetic_used,
                statuses=outcome.statuses(),
                proposals={
                    format_number(threshold): outcome.proposals(threshold)
                    for threshold in result.thresholds
                },
                labels=dict(outcome.case.labels),
            )
            for outcome in result.outcomes
        ),
    )
    value = unstructure(document)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def render_table(result: ReplayResult) -> str:
    """Heading, the metric table per threshold, a per-case line, and the synthetic note."""
    lines = [
        c.REPLAY_HEADING_TEMPLATE.format(
            cases=len(result.outcomes),
            answers=result.answers,
            synthetic=result.synthetic_answers,
        ),
        "",
    ]
    header = [c.REPLAY_THRESHOLD_COLUMN, *c.REPLAY_METRICS]
    rows = [header] + [
        [format_number(row[c.REPLAY_THRESHOLD_COLUMN])] + [str(row[name]) for name in header[1:]]
        for row in result.metrics
    ]
    lines += align_columns(rows)
    lines.append("")
    case_rows = [["case", "split", "answers", "synthetic", c.REPORT_FIELD_STATUS]]
    for outcome in result.outcomes:
        statuses = sorted(set(outcome.statuses().values()))
        case_rows.append(
            [
                outcome.case.id,
                outcome.case.split,
                str(outcome.recordings_used),
                str(outcome.synthetic_used),
                ",".join(statuses),
            ]
        )
    lines += align_columns(case_rows)
    if result.synthetic_answers:
        lines += ["", c.REPLAY_SYNTHETIC_NOTE]
    return "\n".join(lines) + "\n"
