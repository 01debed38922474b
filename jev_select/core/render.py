"""Texts published from a plan and its report: outputs, step summary, terminal view, log line.

All functions are pure; the publish module writes what they return. Only IDs, codes, patterns,
SHAs, refs, model identifiers, notes and numbers are ever rendered. In the step summary each such
value goes through ``core.markdown``: a code span nothing can break out of, or plain text only
for a bare word or number; the summary's fixed wording comes from ``contracts``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import attrs

from .. import contracts as c
from ..version import __version__
from .jsonutil import code_unit_key, compact_json, format_number
from .lookup_causes import LookupCause, lookup_cause_summary_line
from .markdown import bare, code_span
from .models import Plan, TaskTable
from .plan_block import plan_block_of
from .plan_view import detail_facts, task_details
from .report_v5 import ReportChunk, ReportTask, ReportV5, as_report

__all__ = ["Summary", "log_line", "render_outputs", "render_summary", "render_terminal"]

# Report keys that equal names owned elsewhere in contracts (the report records those values).

_MATRIX_INCLUDE = "include"
_MATRIX_TASK = "task"


def _flag(value: bool) -> str:
    return c.BOOL_TRUE if value else c.BOOL_FALSE


def render_outputs(plan: Plan, tested_sha: str, report_path: str) -> list[tuple[str, str]]:
    """The outputs of docs/reference.md, "Outputs" in order: the seven fixed ones, then one per
    task."""
    run = {task_id: plan.decisions[task_id].run for task_id in _sorted_ids(plan.decisions)}
    selected = [task_id for task_id, runs in run.items() if runs]
    outputs = [
        (c.OUTPUT_RUN, compact_json(run)),
        (c.OUTPUT_SELECTED, compact_json(selected)),
        (
            c.OUTPUT_MATRIX,
            compact_json({_MATRIX_INCLUDE: [{_MATRIX_TASK: task_id} for task_id in selected]}),
        ),
        (c.OUTPUT_HAS_TASKS, _flag(bool(selected))),
        (c.OUTPUT_STATUS, plan.status),
        (c.OUTPUT_TESTED_SHA, tested_sha),
        (c.OUTPUT_REPORT_PATH, report_path),
    ]
    outputs.extend((task_id, _flag(runs)) for task_id, runs in run.items())
    return outputs


def _sorted_ids(values: Mapping[str, object]) -> list[str]:
    return sorted(values, key=code_unit_key)


def log_line(plan: Plan, task_count: int) -> str:
    """The one log line of docs/reference.md, "Publication"."""
    return c.LOG_LINE_TEMPLATE.format(
        status=plan.status, mode=plan.mode, selected=len(plan.selected), total=task_count
    )


# --------------------------------------------------------------------------------------------
# Step summary (docs/reference.md, "Step summary and plan block")
# --------------------------------------------------------------------------------------------


@attrs.frozen
class Summary:
    """The step summary text; ``plan_block_omitted`` tells the caller to print the warning."""

    text: str
    plan_block_omitted: bool


def _code(value: object) -> str:
    """A dynamic value in a table cell (see ``markdown`` for the rule)."""
    return code_span(value, in_table=True)


def _cell(value: object) -> str:
    """A number or vocabulary word in a table cell; anything else becomes a code span."""
    return bare(value, in_table=True)


def _line_code(value: object) -> str:
    """A dynamic value on a list line of the details (no table, so ``|`` stays as it is)."""
    return code_span(value, in_table=False)


def _line_word(value: object) -> str:
    """A number or vocabulary word on a list line or the heading; else a code span."""
    return bare(value, in_table=False)


def _whole_ms(value: float) -> str:
    # Half-up rounding: the durations are non-negative, and banker's rounding would surprise.
    return str(math.floor(value + 0.5))


def _gap_places(notes: Sequence[str]) -> dict[str, str]:
    """Gap -> the file, line and column of the command that causes it, from the notes."""
    places: dict[str, str] = {}
    for note in notes:
        gap, separator, cause = note.partition(c.NOTE_GAP_CAUSE_SEPARATOR)
        if separator and gap not in places:
            places[gap] = cause.split(",", 1)[0]
    return places


def _task_details(
    report: ReportV5,
    task_id: str,
    table: TaskTable | None,
    changed_paths: Sequence[str] | None,
    notes: Sequence[str] = (),
) -> str:
    """Highest score against the threshold, the matching pattern and the gaps (each with the
    place of the command that causes it, when a command does), each escaped."""
    facts = detail_facts(report, task_id, tasks=table, changed_paths=changed_paths)
    parts: list[str] = []
    if facts.score is not None:
        relation = "&gt;=" if facts.score >= facts.threshold else "&lt;"
        parts.append(
            f"score {_cell(format_number(facts.score))} {relation} "
            f"{_cell(format_number(facts.threshold))}"
        )
    if facts.match is not None:
        parts.append(c.SUMMARY_PATTERN_MATCHED_TEMPLATE.format(pattern=_code(facts.match[0])))
    if facts.gaps:
        places = _gap_places(notes)
        parts.append(
            c.PLAN_VIEW_GAPS_PREFIX
            + ", ".join(
                _code(gap)
                + (
                    c.SUMMARY_GAP_PLACE_TEMPLATE.format(place=_code(places[gap]))
                    if gap in places
                    else ""
                )
                for gap in facts.gaps
            )
        )
    return "; ".join(parts) if parts else c.SUMMARY_NULL_CELL


def _task_row(task_id: str, decision: ReportTask, details: str) -> str:
    effective = c.SUMMARY_WORD_RUN if decision.run else c.SUMMARY_WORD_SKIP
    proposed_run = decision.proposed_run
    if proposed_run is None:
        proposed = c.SUMMARY_NULL_CELL
    else:
        proposed = c.SUMMARY_WORD_RUN if proposed_run else c.SUMMARY_WORD_SKIP
    reasons = ", ".join(_code(reason) for reason in decision.reasons)
    return f"| {_code(task_id)} | {effective} | {proposed} | {reasons} | {details} |"


def _group_row(chunk: ReportChunk) -> str:
    byte_range = c.SUMMARY_BYTE_RANGE_TEMPLATE.format(
        start=_cell(chunk.start_byte), end=_cell(chunk.end_byte)
    )
    model = chunk.model
    duration = chunk.duration_ms
    probabilities = chunk.probabilities
    if probabilities:
        scores = ", ".join(
            f"{_code(task_id)} {_cell(format_number(probabilities[task_id]))}"
            for task_id in _sorted_ids(probabilities)
        )
    else:
        scores = c.SUMMARY_NULL_CELL
    error = chunk.error
    cells = [
        _cell(chunk.index),
        byte_range,
        _cell(chunk.status),
        _code(model) if model is not None else c.SUMMARY_NULL_CELL,
        _whole_ms(duration) if duration is not None else c.SUMMARY_NULL_CELL,
        scores,
        _code(error) if error is not None else c.SUMMARY_NULL_CELL,
    ]
    return "| " + " | ".join(cells) + " |"


def _detail_lines(report: ReportV5) -> list[str]:
    lines = [
        c.SUMMARY_TESTED_COMMIT_TEMPLATE.format(
            tested_sha=_line_code(report.tested_sha),
            tested_ref=_line_code(report.tested_ref),
            base_sha=_line_code(report.base_sha),
            head_sha=_line_code(report.head_sha),
        )
    ]
    if report.diff_bytes is None:
        lines.append(c.SUMMARY_DIFF_NOT_COLLECTED)
    else:
        count = report.changed_path_count
        lines.append(
            c.SUMMARY_DIFF_TEMPLATE.format(
                diff_bytes=_line_word(report.diff_bytes),
                changed_path_count=_line_word(count) if count is not None else c.SUMMARY_NULL_CELL,
            )
        )
    model = report.model
    returned = model.returned
    lines.append(
        c.SUMMARY_MODEL_TEMPLATE.format(
            requested=_line_code(model.requested),
            expected=_line_code(model.expected),
            returned=_line_code(returned if returned is not None else c.SUMMARY_MODEL_NONE),
        )
    )
    observation = report.observation
    if observation is None:
        lines.append(c.SUMMARY_OBSERVATION_NOT_COLLECTED)
    else:
        lines.append(
            c.SUMMARY_OBSERVATION_TEMPLATE.format(
                status=_line_word(observation.status),
                strategy=_line_word(observation.strategy),
                groups=len(observation.chunks),
            )
        )
    if report.observation_error is not None:
        lines.append(
            c.SUMMARY_OBSERVATION_ERROR_TEMPLATE.format(code=_line_code(report.observation_error))
        )
    return lines


def _assemble(
    head: str, task_rows: Sequence[str], more_tasks: int, group_table: str, tail: str
) -> str:
    parts = [head, "\n".join([c.SUMMARY_TASK_TABLE_HEADER, *task_rows]), "\n\n"]
    if more_tasks:
        parts.append(c.SUMMARY_MORE_TASKS_TEMPLATE.format(count=more_tasks) + "\n\n")
    parts.append(group_table)
    parts.append(tail)
    return "".join(parts)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _note_lines(
    notes: Mapping[str, Sequence[str]], template: str, cell: Callable[[object], str]
) -> list[str]:
    return [
        template.format(task=cell(task_id), note=cell(note))
        for task_id in _sorted_ids(notes)
        for note in notes[task_id]
    ]


# Keyed by plain strings, so that a status read from a report finds its sentence whether the
# contract spells the statuses as strings or as string enumeration members.
_STATUS_SENTENCES: dict[str, str] = {
    status: sentence for status, sentence in c.SUMMARY_STATUS_SENTENCES.items()
}


def _plain(value: object) -> str:
    """A value for a terminal line: control characters become spaces."""
    return "".join(" " if ord(char) < 0x20 or ord(char) == 0x7F else char for char in str(value))


def render_summary(
    report: ReportV5 | Mapping[str, object],
    *,
    engine_version: str = __version__,
    notes: Mapping[str, Sequence[str]] | None = None,
    table: TaskTable | None = None,
    changed_paths: Sequence[str] | None = None,
    setup_missing: c.Reason | None = None,
    lookup_cause: LookupCause | None = None,
) -> Summary:
    """The step summary of docs/reference.md, "Step summary and plan block", at most
    ``SUMMARY_MAX_BYTES``, ending with the plan block.

    Over the limit, the group table is replaced first, then task rows are dropped from the end
    with a count line. The plan block is never cut; when it alone is over
    ``PLAN_BLOCK_MAX_BYTES`` it is left out and ``plan_block_omitted`` is set.
    ``engine_version`` defaults to the installed package version. ``notes`` (task ID to
    explanations of its metadata gaps) are listed with the details. With ``table`` and
    ``changed_paths``, a task's details name the first ``force_paths`` pattern that matched; the
    changed path itself is never shown, since the summary renders no text of the pull request.
    ``report`` is a ``ReportV5`` or a parsed report mapping (``convert.DocumentError`` when the
    mapping does not have the report's shape). ``setup_missing`` is the bypass reason
    (``missing-api-key`` or ``external-context-disabled``) of a same-repository pull request that
    the caller found unconfigured: one line under the count sentence of a bypassed report names
    the input to set. The caller decides it from the event; without it, for any other reason or
    any other status, no line is added. ``lookup_cause`` is why the run's GitHub lookups failed
    (``app.settings.lookup_cause_of``): one line names it and the input that fixes it.
    """
    report = as_report(report)
    status, mode = report.status, report.mode
    tasks = report.tasks
    task_ids = _sorted_ids(tasks)
    selected = sum(1 for task_id in task_ids if tasks[task_id].run)
    if status == c.STATUS_PLANNED and mode == c.MODE_SHADOW:
        sentence = c.SUMMARY_SHADOW_SENTENCE
    else:
        sentence = _STATUS_SENTENCES.get(status, "")
    head = (
        c.SUMMARY_HEADING_TEMPLATE.format(status=_line_word(status), mode=_line_word(mode))
        + "\n\n"
        + c.SUMMARY_COUNT_TEMPLATE.format(selected=selected, total=len(task_ids), sentence=sentence)
        + "\n\n"
    )
    # Only a bypassed report can be one whose setup is missing.
    if setup_missing is not None and status == c.STATUS_BYPASSED:
        setup_line = c.SUMMARY_SETUP_MISSING_LINES.get(setup_missing)
        if setup_line is not None:
            head += setup_line + "\n\n"
    cause_line = lookup_cause_summary_line(lookup_cause)
    if cause_line is not None:
        head += cause_line + "\n\n"
    task_rows = [
        _task_row(
            task_id,
            tasks[task_id],
            _task_details(report, task_id, table, changed_paths, (notes or {}).get(task_id, ())),
        )
        for task_id in task_ids
    ]

    details = "\n".join(
        [*_detail_lines(report), *_note_lines(notes or {}, c.SUMMARY_NOTE_TEMPLATE, _line_code)]
    )
    details_open = f"<details>\n<summary>{c.SUMMARY_DETAILS_TITLE}</summary>\n\n{details}\n\n"
    observation = report.observation
    if observation is not None:
        group_rows = [_group_row(chunk) for chunk in observation.chunks]
        group_table = "\n".join([c.SUMMARY_GROUP_TABLE_HEADER, *group_rows]) + "\n\n"
    else:
        group_table = ""
    details_close = c.SUMMARY_SCORE_DISCLAIMER + "\n\n</details>\n\n"

    block = plan_block_of(report, engine_version)
    omitted = _size(block) > c.PLAN_BLOCK_MAX_BYTES
    if omitted:
        block = ""
    tail = details_close + block

    text = _assemble(head, task_rows, 0, details_open + group_table, tail)
    if _size(text) <= c.SUMMARY_MAX_BYTES:
        return Summary(text=text, plan_block_omitted=omitted)

    shortened_details = details_open + c.SUMMARY_GROUP_TABLE_OMITTED + "\n\n"
    text = _assemble(head, task_rows, 0, shortened_details, tail)
    if _size(text) <= c.SUMMARY_MAX_BYTES:
        return Summary(text=text, plan_block_omitted=omitted)

    # Keep the longest prefix of rows that fits together with the count line for the rest.
    fixed = _size(_assemble(head, [], len(task_rows), shortened_details, tail))
    budget = c.SUMMARY_MAX_BYTES - fixed
    kept = 0
    for row in task_rows:
        cost = _size(row) + 1
        if cost > budget:
            break
        budget -= cost
        kept += 1
    text = _assemble(head, task_rows[:kept], len(task_rows) - kept, shortened_details, tail)
    return Summary(text=text, plan_block_omitted=omitted)


# --------------------------------------------------------------------------------------------
# Terminal rendering (docs/reference.md, "Local use")
# --------------------------------------------------------------------------------------------


def _terminal_proposed(value: object) -> str:
    if value is None:
        return c.TERMINAL_NULL
    return c.TERMINAL_YES if value else c.TERMINAL_NO


def render_terminal(
    report: ReportV5 | Mapping[str, object],
    report_path: str | None,
    *,
    table: TaskTable | None = None,
    changed_paths: Sequence[str] | None = None,
    notes: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """Local-mode stdout: the log line, an aligned decision table, notes and the report path.

    The ``DETAILS`` column shows the highest score against the threshold when the task was
    scored, the ``force_paths`` pattern that matched (needs ``table`` and ``changed_paths``) and
    the metadata gaps that made the task mandatory; ``notes`` (task ID to explanations of its
    gaps) follow the table. ``report`` is a ``ReportV5`` or a parsed report mapping.
    """
    report = as_report(report)
    tasks = report.tasks
    task_ids = _sorted_ids(tasks)
    selected = sum(1 for task_id in task_ids if tasks[task_id].run)
    lines = [
        c.LOG_LINE_TEMPLATE.format(
            status=report.status,
            mode=report.mode,
            selected=selected,
            total=len(task_ids),
        )
    ]
    rows = [list(c.TERMINAL_COLUMNS)]
    for task_id in task_ids:
        decision = tasks[task_id]
        rows.append(
            [
                task_id,
                c.TERMINAL_YES if decision.run else c.TERMINAL_NO,
                _terminal_proposed(decision.proposed_run),
                ", ".join(decision.reasons),
                task_details(report, task_id, tasks=table, changed_paths=changed_paths),
            ]
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(c.TERMINAL_COLUMNS))]
    for row in rows:
        padded = [cell.ljust(width) for cell, width in zip(row[:-1], widths[:-1], strict=True)]
        lines.append("  ".join([*padded, row[-1]]).rstrip())
    # What collecting the change cost (fetching or borrowing history, reading the diff and the
    # task metadata): the figure that grows when a repository's history is expensive to read.
    lines.append(
        c.TERMINAL_COLLECTION_TEMPLATE.format(ms=_whole_ms(report.durations_ms.collection))
    )
    lines.extend(_note_lines(notes or {}, c.TERMINAL_NOTE_TEMPLATE, _plain))
    if report_path is not None:
        lines.append(c.TERMINAL_REPORT_TEMPLATE.format(path=report_path))
    return "\n".join(lines) + "\n"
