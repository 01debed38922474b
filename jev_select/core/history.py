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
from .rollout import AnswerRefused, WorkflowRun, workflow_run

__all__ = [
    "Change",
    "ChangeOutcome",
    "CiChoice",
    "History",
    "HistoryChange",
    "HistoryCi",
    "HistorySummary",
    "LogEntry",
    "PullRequest",
    "Times",
    "calendar_date",
    "choose_ci_run",
    "ci_summary",
    "ci_summary_line",
    "history_json",
    "history_table",
    "pull_request_for_commit",
    "pull_request_number",
    "pull_request_of",
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
    # Every parent of ``head``: a merge commit's second is the pull request's head.
    parents: tuple[str, ...] = ()


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
            changes.append(
                Change(entry.parents[0], entry.sha, entry.subject, detected, entry.parents)
            )
        if len(changes) == last:
            break
    return changes[::-1]


@attrs.frozen
class HistoryCi:
    """What became of one change on GitHub (``--repository``); also its ``ci`` entry of the JSON
    output, each attribute a key in this order, unknown values null."""

    outcome: str  # one of HISTORY_CI_OUTCOMES
    pull_request: int | None = None
    ci_run: int | None = None
    results: str | None = None  # the results file, when there is one
    preview: str | None = None  # the preview file


@attrs.frozen
class ChangeOutcome:
    """A change, the shadow report planning wrote for it, and what its preview found.

    The report may be given as a parsed report mapping; it is kept typed. ``ci`` is set with
    ``--repository`` only.
    """

    change: Change
    report: ReportV5 = attrs.field(converter=as_report)
    report_path: str
    preview_reasons: Mapping[str, tuple[str, ...]]  # task ID -> reasons without scores
    preview_status: str
    gaps: Mapping[str, tuple[str, ...]]  # task ID -> metadata warnings
    requests: int
    collection_ms: float
    ci: HistoryCi | None = None


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
    ci: Mapping[str, int] | None = None  # changes per CI outcome, with --repository only


@attrs.frozen
class HistoryChange:
    """One change as ``--format json`` lists it."""

    base: str
    head: str
    subject: str
    status: str
    report: str
    ci: HistoryCi | None = None


@attrs.frozen
class History:
    """What ``jev-select history --format json`` prints."""

    changes: tuple[HistoryChange, ...]
    summary: HistorySummary


register_document(Times, keys={"highest": "max"})
register_document(HistorySummary, optional=("ci",))
register_document(HistoryChange, optional=("ci",))


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
        ci=ci_summary(outcomes) if any(outcome.ci for outcome in outcomes) else None,
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
                ci=outcome.ci,
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
    with_ci = summary.ci is not None
    rows: list[tuple[str, ...]] = [
        ("HEAD", "KIND", "STATUS", "FORCED", "WOULD-SKIP", "REQUESTS")
        + (("CI", "PR", "CI RUN") if with_ci else ())
        + ("SUBJECT",)
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
                *(_ci_cells(outcome.ci) if with_ci else ()),
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
    if with_ci:
        lines.append(ci_summary_line(outcomes))
    return "\n".join(lines) + "\n"


def _ci_cells(ci: HistoryCi | None) -> tuple[str, str, str]:
    if ci is None:
        return (c.TERMINAL_NULL,) * 3
    return (
        ci.outcome,
        c.TERMINAL_NULL if ci.pull_request is None else f"#{ci.pull_request}",
        c.TERMINAL_NULL if ci.ci_run is None else str(ci.ci_run),
    )


def ci_summary(outcomes: Sequence[ChangeOutcome]) -> dict[str, int]:
    """How many changes ended in each CI outcome, in ``HISTORY_CI_OUTCOMES`` order."""
    counts = dict.fromkeys(c.HISTORY_CI_OUTCOMES, 0)
    for outcome in outcomes:
        if outcome.ci is not None:
            counts[outcome.ci.outcome] += 1
    return counts


def ci_summary_line(outcomes: Sequence[ChangeOutcome]) -> str:
    """The summary line of the CI outcomes."""
    counts = ci_summary(outcomes)
    return c.HISTORY_CI_SUMMARY_TEMPLATE.format(
        **{code.replace("-", "_"): count for code, count in counts.items()}
    )


# --------------------------------------------------------------------------------------------
# The GitHub half: the pull request of a change, and the CI run that measured it
# --------------------------------------------------------------------------------------------

_SHA40 = re.compile(r"[0-9a-f]{40}")


@attrs.frozen
class PullRequest:
    """The merged pull request a change came from, and the head its CI runs tested."""

    number: int
    head_sha: str


@attrs.frozen
class CiChoice:
    """The CI run a change's results come from, or why there is none (``outcome``)."""

    outcome: str  # HISTORY_CI_MEASURED, or why not
    run: WorkflowRun | None = None


def pull_request_number(change: Change) -> int | None:
    """The number a change's subject names: ``Merge pull request #N from ...`` for a merge
    commit, ``... (#N)`` for any other; None when it names none."""
    pattern = (
        c.HISTORY_MERGE_SUBJECT_PATTERN
        if len(change.parents) > 1
        else c.HISTORY_SQUASH_NUMBER_PATTERN
    )
    found = re.fullmatch(pattern, change.subject, re.DOTALL)
    return int(found["number"]) if found is not None else None


def _merged_record(record: object) -> tuple[int, str, str | None, bool]:
    """Number, head SHA, merge commit SHA and whether merged, of one pull record; raises
    ``AnswerRefused`` when a field the checks need is missing or malformed."""
    if not isinstance(record, dict):
        raise AnswerRefused()
    number, head = record.get(c.GITHUB_PULL_FIELD_NUMBER), record.get(c.GITHUB_PULL_FIELD_HEAD)
    merge_sha = record.get(c.GITHUB_PULL_FIELD_MERGE_COMMIT_SHA)
    merged_at = record.get(c.GITHUB_PULL_FIELD_MERGED_AT)
    if type(number) is not int or number < 1 or not isinstance(head, dict):
        raise AnswerRefused()
    head_sha = head.get(c.GITHUB_PULL_FIELD_SHA)
    if not isinstance(head_sha, str) or _SHA40.fullmatch(head_sha) is None:
        raise AnswerRefused()
    if merge_sha is not None and not isinstance(merge_sha, str):
        raise AnswerRefused()
    if merged_at is not None and not isinstance(merged_at, str):
        raise AnswerRefused()
    return number, head_sha, merge_sha, bool(merged_at)


def pull_request_of(record: object, change: Change) -> PullRequest | None:
    """The pull request of ``record`` when it is the change's own: merged, and either its head
    is the merge commit's second parent or (a squash merge) its merge commit is the change."""
    number, head_sha, merge_sha, merged = _merged_record(record)
    if not merged:
        return None
    merge_commit = len(change.parents) > 1
    mine = head_sha == change.parents[1] if merge_commit else merge_sha == change.head
    return PullRequest(number, head_sha) if mine else None


def pull_request_for_commit(records: Sequence[object], change: Change) -> PullRequest | None:
    """The one merged pull request among a commit's whose merge commit is the change; None
    when there is none or more than one."""
    found: dict[int, PullRequest] = {}
    for record in records:
        number, head_sha, merge_sha, merged = _merged_record(record)
        if merged and merge_sha == change.head:
            found[number] = PullRequest(number, head_sha)
    return next(iter(found.values())) if len(found) == 1 else None


def _conclusion(record: object) -> object:
    return record.get(c.GITHUB_RUN_FIELD_CONCLUSION) if isinstance(record, dict) else None


def choose_ci_run(records: Sequence[object], head_sha: str) -> CiChoice:
    """The newest pull-request run of the head a change's CI tested, when it can measure it.

    None such is ``no-ci-run``; one not completed ``in-progress``; one past its first attempt
    ``re-run`` (the attempt that counts may hide an earlier failure); one cancelled
    ``cancelled``. Records are read strictly (``AnswerRefused``).
    """
    relevant = [
        (run, _conclusion(record))
        for run, record in ((workflow_run(record), record) for record in records)
        if run.event == c.HISTORY_CI_EVENT and run.head_sha == head_sha
    ]
    if not relevant:
        return CiChoice(c.HISTORY_CI_NO_CI_RUN)
    # Newest first as listed; run IDs only grow, which holds even if pages shifted.
    run, conclusion = max(relevant, key=lambda pair: pair[0].id)
    if run.status != c.GITHUB_RUN_COMPLETED:
        return CiChoice(c.HISTORY_CI_IN_PROGRESS, run)
    if run.attempt > 1:
        return CiChoice(c.HISTORY_CI_RE_RUN, run)
    if conclusion == c.GITHUB_RUN_CANCELLED:
        return CiChoice(c.HISTORY_CI_CANCELLED, run)
    return CiChoice(c.HISTORY_CI_MEASURED, run)
