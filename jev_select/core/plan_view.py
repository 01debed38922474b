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
from .jsonutil import code_unit_key, format_number
from .models import TaskTable
from .report_v5 import ReportV5, as_report
from .tasks import match_force_paths

__all__ = [
    "DetailFacts",
    "detail_facts",
    "failure_line",
    "highest_score",
    "matched_pattern",
    "render_preview",
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


_PREVIEW_PATH_LIMIT = 20


def render_preview(
    table: TaskTable,
    *,
    changed_paths: Sequence[str] | None,
    collection_error: str | None,
    gaps: Mapping[str, Sequence[str]],
    requests: int = 0,
    grouping_error: str | None = None,
) -> str:
    """The local preview of a run without a key or consent: the change, the tasks ``always``,
    ``force_paths`` and metadata gaps keep, and how many tasks Jev would be asked about in how
    many requests (or why the change could not be put in requests)."""
    lines = [c.PREVIEW_HEADING]
    if changed_paths is None:
        lines.append(f"  the change could not be collected ({collection_error or 'unknown'})")
    else:
        lines.append(f"  {len(changed_paths)} changed file(s):")
        lines.extend(f"    {path}" for path in changed_paths[:_PREVIEW_PATH_LIMIT])
        if len(changed_paths) > _PREVIEW_PATH_LIMIT:
            lines.append(f"    ... {len(changed_paths) - _PREVIEW_PATH_LIMIT} more")
    asked: list[str] = []
    for task in sorted(table.tasks, key=lambda task: code_unit_key(task.id)):
        reasons: list[str] = []
        if task.always:
            reasons.append(c.REASON_ALWAYS)
        match = matched_pattern(task.force_paths, changed_paths)
        if match is not None:
            reasons.append(f"{match[0]} matched {match[1]}")
        if gaps.get(task.id):
            reasons.append(c.PLAN_VIEW_GAPS_PREFIX + ", ".join(gaps[task.id]))
        if reasons:
            lines.append(f"  kept: {task.id} ({'; '.join(reasons)})")
        else:
            asked.append(task.id)
    if changed_paths is not None and grouping_error is not None:
        lines.append(
            f"  with a key, the change could not be put in requests ({grouping_error}): "
            "every task would run"
        )
    elif changed_paths is not None:
        lines.append(
            f"  with a key, Jev would be asked about {len(asked)} of {len(table)} task(s)"
            + (f": {', '.join(asked)}" if asked else "")
            + (f" ({requests} request(s))" if asked and requests else "")
        )
    lines.append(c.PREVIEW_HINT)
    return "\n".join(lines) + "\n"


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
