"""The figures of a replay: per-case outcomes, the docs/reference.md, "Evaluation replay" counts and
their presentation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .. import contracts as c
from ..core.columns import align_columns
from ..core.jsonutil import (
    format_number,
)
from .corpus import Case

# ---------------------------------------------------------------------------------------------
# Running a case
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class CaseOutcome:
    """What the pipeline proposed for one case at each threshold."""

    case: Case
    reports: Mapping[float, Mapping[str, Any]]  # threshold -> report
    recordings_used: int
    synthetic_used: int

    def proposals(self, threshold: float) -> dict[str, bool | None]:
        tasks = self.reports[threshold][c.REPORT_FIELD_TASKS]
        return {task_id: tasks[task_id][c.REPORT_TASK_PROPOSED_RUN] for task_id in tasks}

    def statuses(self) -> dict[str, str]:
        return {
            format_number(threshold): report[c.REPORT_FIELD_STATUS]
            for threshold, report in self.reports.items()
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


def compute_metrics(
    outcomes: Sequence[CaseOutcome], thresholds: Sequence[float]
) -> list[dict[str, Any]]:
    """Per threshold, the docs/reference.md, "Evaluation replay" counts over every labelled task of
    ``outcomes``.

    ``unknown`` counts tasks (of either label) whose proposal is null: no usable evidence.
    """
    rows: list[dict[str, Any]] = []
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
    metrics: list[dict[str, Any]]
    by_split: dict[str, list[dict[str, Any]]]

    @property
    def answers(self) -> int:
        return sum(outcome.recordings_used for outcome in self.outcomes)

    @property
    def synthetic_answers(self) -> int:
        return sum(outcome.synthetic_used for outcome in self.outcomes)


# ---------------------------------------------------------------------------------------------
# Presentation
# ---------------------------------------------------------------------------------------------


def result_json(result: ReplayResult) -> dict[str, Any]:
    """The replay as a JSON value: metrics overall and per split, and every case's proposals."""
    return {
        "answers": result.answers,
        "synthetic_answers": result.synthetic_answers,
        "synthetic": result.answers > 0 and result.synthetic_answers == result.answers,
        "thresholds": result.metrics,
        "splits": result.by_split,
        "cases": [
            {
                "id": outcome.case.id,
                "split": outcome.case.split,
                "answers": outcome.recordings_used,
                "synthetic_answers": outcome.synthetic_used,
                "statuses": outcome.statuses(),
                "proposals": {
                    format_number(threshold): outcome.proposals(threshold)
                    for threshold in result.thresholds
                },
                "labels": dict(outcome.case.labels),
            }
            for outcome in result.outcomes
        ],
    }


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
