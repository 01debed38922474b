"""Per-task details a person needs to read a plan: score against threshold, matched pattern, gaps.

Pure core (docs/reference.md, "Local use"). Everything comes from the report, the task table and
the changed paths; the texts are IDs, numbers, patterns and paths from the user's own table and
repository, and gaps that can quote a base-branch workflow or another repository's reusable
workflow. The functions here write plain text for the terminal; the step summary takes
``detail_facts`` and renders each value through ``core.markdown`` instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from .. import contracts as c
from .jsonutil import format_number
from .models import TaskTable
from .report_v5 import ReportV5, as_report
from .tasks import match_force_paths

__all__ = [
    "DetailFacts",
    "detail_facts",
    "failure_line",
    "highest_score",
    "matched_pattern",
    "task_details",
]


def highest_score(report: ReportV5, task_id: str) -> float | None:
    """The highest score any group gave ``task_id``, or None when it was never scored."""
    if report.observation is None:
        return None
    scores = [
        chunk.probabilities[task_id]
        for chunk in report.observation.chunks
        if chunk.probabilities is not None and task_id in chunk.probabilities
    ]
    return max(scores) if scores else None


def matched_pattern(
    patterns: Sequence[str] | None, changed_paths: Sequence[str] | None
) -> tuple[str, str] | None:
    """The first ``force_paths`` pattern that matches a changed path, with that path."""
    if not patterns or not changed_paths:
        return None
    for pattern in patterns:
        for path in changed_paths:
            if match_force_paths((pattern,), (path,)):
                return pattern, path
    return None


def task_gaps(report: ReportV5, task_id: str) -> list[str]:
    entry = report.job_metadata.get(task_id)
    return list(entry.warnings) if entry is not None else []


@attrs.frozen
class DetailFacts:
    """What a person reads about one task; each view formats and escapes it for its medium."""

    score: float | None  # the highest score, None when the task was never scored
    threshold: float
    match: tuple[str, str] | None  # the first force_paths pattern that matched, with its path
    gaps: tuple[str, ...]


def detail_facts(
    report: ReportV5,
    task_id: str,
    *,
    tasks: TaskTable | None = None,
    changed_paths: Sequence[str] | None = None,
) -> DetailFacts:
    """The facts behind a task's details; the pattern needs ``tasks`` and ``changed_paths``."""
    task = next((task for task in tasks.tasks if task.id == task_id), None) if tasks else None
    return DetailFacts(
        score=highest_score(report, task_id),
        threshold=report.skip_below,
        match=matched_pattern(task.force_paths if task else None, changed_paths),
        gaps=tuple(task_gaps(report, task_id)),
    )


def task_details(
    report: ReportV5,
    task_id: str,
    *,
    tasks: TaskTable | None = None,
    changed_paths: Sequence[str] | None = None,
) -> str:
    """One line of details: ``score 0.93 >= 0.05``, ``docs/** matched docs/a.md``, the gaps."""
    facts = detail_facts(report, task_id, tasks=tasks, changed_paths=changed_paths)
    parts: list[str] = []
    if facts.score is not None:
        relation = ">=" if facts.score >= facts.threshold else "<"
        parts.append(
            f"score {format_number(facts.score)} {relation} {format_number(facts.threshold)}"
        )
    if facts.match is not None:
        parts.append(f"{facts.match[0]} matched {facts.match[1]}")
    if facts.gaps:
        parts.append(c.PLAN_VIEW_GAPS_PREFIX + ", ".join(facts.gaps))
    return "; ".join(parts)


# Keyed by plain strings: the code read from a report is one (see ``_STATUS_SENTENCES`` in
# ``render``).
_CAUSE_OF_CODE: dict[str, str] = {
    c.REASON_JEV_TIMEOUT: c.CAUSE_TIMEOUT,
    c.REASON_INVALID_RESPONSE: c.CAUSE_INVALID_RESPONSE,
}


def failure_line(report: ReportV5 | Mapping[str, object], cause: str | None = None) -> str | None:
    """One line when the Jev evaluation failed: its cause category and what it means.

    ``cause`` is the transport's category (``dns``, ``connect``, ``tls``, ``timeout``,
    ``http-<status>``, ``invalid-response``) when known; otherwise it is read from the report's
    ``observation_error``. None when no request failed.
    """
    typed = as_report(report)
    code = typed.observation_error
    if code is None or code not in (
        c.REASON_JEV_TIMEOUT,
        c.REASON_JEV_ERROR,
        c.REASON_INVALID_RESPONSE,
    ):
        return None
    category = cause or _CAUSE_OF_CODE.get(code, c.CAUSE_UNKNOWN)
    consequence = (
        c.FAILURE_LINE_EVERY_TASK
        if typed.status == c.STATUS_FALLBACK
        else c.FAILURE_LINE_SOME_TASKS
    )
    return c.FAILURE_LINE_TEMPLATE.format(cause=category, consequence=consequence)
