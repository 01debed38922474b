"""A dry run over a repository's recent merged changes (``jev-select history``).

Pure core: which commits are the merged changes (``select_changes``), and the aggregate over what
planning each of them found (``summarise``, ``history_table``). The shell lists the commits,
runs the planning pipeline on each and writes the reports.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence

import attrs

from .. import contracts as c
from .columns import align_columns
from .convert import register_document, unstructure
from .jsonutil import code_unit_key, format_number
from .report_v5 import ReportV5, as_report

__all__ = [
    "Change",
    "ChangeOutcome",
    "History",
    "HistoryChange",
    "HistorySummary",
    "LogEntry",
    "Times",
    "calendar_date",
    "history_json",
    "history_table",
    "select_changes",
    "summarise",
]

_SUBJECT_WIDTH = 48
# Reasons that say why a whole change was not planned from scores (docs/reference.md,
# "Forced state", "Mandatory tasks and the effective run").
_CHANGE_REASONS = frozenset(
    (
        *c.BYPASS_REASONS,
        c.REASON_PROTECTED_PATH,
        *c.COLLECTION_ERRORS,
        *c.GROUPING_ERRORS,
        *c.REQUEST_ERRORS,
        c.REASON_OBSERVATION_INCOMPLETE,
    )
)


@attrs.frozen
class LogEntry:
    """One first-parent commit: its ID, parents and subject line."""

    sha: str
    parents: tuple[str, ...]
    subject: str


@attrs.frozen
class Change:
    """One merged change: the diff from ``base`` to ``head``."""

    base: str
    head: str
    subject: str
    kind: str


def calendar_date(text: str) -> str | None:
    """``text`` when it is a real calendar day written ``YYYY-MM-DD`` (the ``--since`` of
    ``history`` and ``rollout``), else ``None``."""
    if re.fullmatch(c.HISTORY_SINCE_PATTERN, text, re.ASCII) is None:
        return None
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def _is_squash(entry: LogEntry) -> bool:
    return (
        len(entry.parents) == 1
        and re.fullmatch(c.HISTORY_SQUASH_SUBJECT_PATTERN, entry.subject) is not None
    )


def select_changes(entries: Sequence[LogEntry], kind: str | None, last: int) -> list[Change]:
    """The newest ``last`` changes of a first-parent log (newest first), oldest first.

    ``merge``: merge commits, diffed from their first parent. ``squash``: single-parent commits
    whose subject ends in ``(#<number>)``, diffed from their parent. ``first-parent``: every
    commit with a parent. ``None``: merge commits and squash commits together.
    """
    changes: list[Change] = []
    for entry in entries:
        if not entry.parents:
            continue  # a root commit has nothing to diff against
        if len(entry.parents) > 1:
            detected = c.HISTORY_KIND_MERGE
        elif _is_squash(entry):
            detected = c.HISTORY_KIND_SQUASH
        else:
            detected = c.HISTORY_KIND_FIRST_PARENT
        if kind is None:
            wanted = detected != c.HISTORY_KIND_FIRST_PARENT
        else:
            wanted = kind == c.HISTORY_KIND_FIRST_PARENT or detected == kind
        if wanted:
            changes.append(Change(entry.parents[0], entry.sha, entry.subject, detected))
        if len(changes) == last:
            break
    return changes[::-1]


@attrs.frozen
class ChangeOutcome:
    """A change, the shadow report planning wrote for it, and what its preview found.

    The report may be given as a parsed report mapping; it is kept typed.
    """

    change: Change
    report: ReportV5 = attrs.field(converter=as_report)
    report_path: str
    preview_reasons: Mapping[str, tuple[str, ...]]  # task ID -> reasons without scores
    preview_status: str
    gaps: Mapping[str, tuple[str, ...]]  # task ID -> metadata warnings
    requests: int
    collection_ms: float


def _change_reasons(reasons: Mapping[str, Sequence[str]]) -> list[str]:
    found = {reason for task in reasons.values() for reason in task if reason in _CHANGE_REASONS}
    return [reason for reason in c.REASONS if reason in found]


def _report_reasons(report: ReportV5) -> dict[str, Sequence[str]]:
    return {task_id: entry.reasons for task_id, entry in report.tasks.items()}


def _count(values: Sequence[str], order: Sequence[str] | None = None) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    keys = (
        [key for key in order if key in counts]
        if order is not None
        else sorted(counts, key=code_unit_key)
    )
    return {key: counts[key] for key in keys}


@attrs.frozen
class Times:
    """The total and the longest of some durations in milliseconds, both null without any."""

    total: float | None
    highest: float | None


@attrs.frozen
class HistorySummary:
    """The aggregate over every change (see docs/shadow-mode.md for each key), in written order.

    The count mappings keep the order ``_count`` gives them; ``tasks`` maps each task ID to its
    would-skip and mandatory-reason counts.
    """

    changes: int
    by_status: Mapping[str, int]
    by_reason: Mapping[str, int]
    preview_by_status: Mapping[str, int]
    preview_by_reason: Mapping[str, int]
    tasks: Mapping[str, Mapping[str, int]]
    gaps: Mapping[str, int]
    requests: int
    collection_ms: Times
    jev_ms: Times


@attrs.frozen
class HistoryChange:
    """One change as ``--format json`` lists it."""

    base: str
    head: str
    subject: str
    status: str
    report: str


@attrs.frozen
class History:
    """What ``jev-select history --format json`` prints."""

    changes: tuple[HistoryChange, ...]
    summary: HistorySummary


register_document(Times, keys={"highest": "max"})
register_document(HistorySummary)
register_document(HistoryChange)


def _times(values: Sequence[float]) -> Times:
    return Times(
        total=sum(values) if values else None,
        highest=max(values) if values else None,
    )


def summarise(outcomes: Sequence[ChangeOutcome]) -> HistorySummary:
    """The aggregate over every change (see docs/shadow-mode.md for each key)."""
    task_ids = sorted(
        {task_id for outcome in outcomes for task_id in outcome.report.tasks}, key=code_unit_key
    )
    per_task: dict[str, dict[str, int]] = {
        task_id: {
            "would_skip": 0,
            c.REASON_ALWAYS.replace("-", "_"): 0,
            c.REASON_PATH_MATCH.replace("-", "_"): 0,
            c.REASON_METADATA_UNAVAILABLE.replace("-", "_"): 0,
        }
        for task_id in task_ids
    }
    gaps: list[str] = []
    jev_times: list[float] = []
    for outcome in outcomes:
        for task_id, entry in outcome.report.tasks.items():
            if entry.proposed_run is False:
                per_task[task_id]["would_skip"] += 1
        for task_id, reasons in outcome.preview_reasons.items():
            for reason in (c.REASON_ALWAYS, c.REASON_PATH_MATCH, c.REASON_METADATA_UNAVAILABLE):
                if reason in reasons:
                    per_task[task_id][reason.replace("-", "_")] += 1
        for warnings in outcome.gaps.values():
            gaps.extend(warning.split(":", 1)[0] for warning in warnings)
        jev = outcome.report.durations_ms.jev
        if jev is not None:
            jev_times.append(jev)
    return HistorySummary(
        changes=len(outcomes),
        by_status=_count([outcome.report.status for outcome in outcomes], c.STATUSES),
        by_reason=_count(
            [
                reason
                for outcome in outcomes
                for reason in _change_reasons(_report_reasons(outcome.report))
            ],
            c.REASONS,
        ),
        preview_by_status=_count([outcome.preview_status for outcome in outcomes], c.STATUSES),
        preview_by_reason=_count(
            [
                reason
                for outcome in outcomes
                for reason in _change_reasons(outcome.preview_reasons)
                if reason != c.REASON_OBSERVATION_INCOMPLETE  # no scores yet: not a finding
            ],
            c.REASONS,
        ),
        tasks=per_task,
        gaps=_count(gaps),
        requests=sum(outcome.requests for outcome in outcomes),
        collection_ms=_times([outcome.collection_ms for outcome in outcomes]),
        jev_ms=_times(jev_times),
    )


def history_json(outcomes: Sequence[ChangeOutcome]) -> dict[str, object]:
    """``{"changes": [...], "summary": {...}}`` as ``--format json`` prints it."""
    document = History(
        changes=tuple(
            HistoryChange(
                base=outcome.change.base,
                head=outcome.change.head,
                subject=outcome.change.subject,
                status=outcome.report.status,
                report=outcome.report_path,
            )
            for outcome in outcomes
        ),
        summary=summarise(outcomes),
    )
    value = unstructure(document)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def _short(text: str) -> str:
    printable = "".join(character if character.isprintable() else " " for character in text)
    if len(printable) <= _SUBJECT_WIDTH:
        return printable
    return printable[: _SUBJECT_WIDTH - 1] + "…"


def _ms(value: float | None) -> str:
    return c.TERMINAL_NULL if value is None else format_number(round(value))


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key} {value}" for key, value in counts.items()) or c.TERMINAL_NULL


def _times_line(label: str, times: Times) -> str:
    return f"{label} ms: total {_ms(times.total)}, max {_ms(times.highest)}"


def history_table(outcomes: Sequence[ChangeOutcome]) -> str:
    """One row per change, then the per-task table and the totals."""
    summary = summarise(outcomes)
    rows: list[tuple[str, ...]] = [
        ("HEAD", "KIND", "STATUS", "FORCED", "WOULD-SKIP", "REQUESTS", "SUBJECT")
    ]
    for outcome in outcomes:
        tasks = outcome.report.tasks
        skip = sum(1 for entry in tasks.values() if entry.proposed_run is False)
        preview = [
            reason
            for reason in _change_reasons(outcome.preview_reasons)
            if reason != c.REASON_OBSERVATION_INCOMPLETE
        ]
        rows.append(
            (
                outcome.change.head[:12],
                outcome.change.kind,
                outcome.report.status,
                ",".join(preview) or c.TERMINAL_NULL,
                f"{skip}/{len(tasks)}",
                str(outcome.requests),
                _short(outcome.change.subject),
            )
        )
    lines = align_columns(rows)
    task_rows: list[tuple[str, ...]] = [
        ("TASK", "WOULD-SKIP", "ALWAYS", "PATH-MATCH", "METADATA-UNAVAILABLE")
    ]
    for task_id, counts in summary.tasks.items():
        task_rows.append((task_id, *(str(value) for value in counts.values())))
    lines += ["", *align_columns(task_rows), ""]
    lines += [
        f"changes: {summary.changes}",
        f"status: {_counts(summary.by_status)}",
        f"reasons: {_counts(summary.by_reason)}",
        f"forced whatever the scores: {_counts(summary.preview_by_reason)}",
        f"metadata gaps: {_counts(summary.gaps)}",
        f"jev requests: {summary.requests}",
        _times_line("collection", summary.collection_ms),
        _times_line("evaluation", summary.jev_ms),
    ]
    return "\n".join(lines) + "\n"
