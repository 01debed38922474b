"""The ceiling without a key: of the CI minutes spent on the measured changes, how many no rule
forces, that is the most any scoring could ever save (docs/shadow-mode.md, "The ceiling").

Pure core. Each change is a report, its results file with a ``ci`` block (every job of the
measured run attempt) and, for a report made without a key, the ``preview.json`` beside it.
Where the forced state comes from:

- a keyless bypass (``missing-api-key``, ``external-context-disabled``) says nothing of what the
  rules force, so the preview tells it: its whole-change reason, else its forced tasks;
- a planned or fallback shadow report tells it itself: its status, its observation and each
  task's reasons;
- anything else (another bypass, a keyless report without a preview that fits it) is counted as
  wholly forced. Fail closed: nothing is counted as savable that the files cannot show.

A job counts for each task it names; it is savable only when every one of its tasks is, and a job
of no task always runs. Minutes are billed minutes (each job rounded up, as GitHub bills), and the
wall time saved is the critical path of all the run's jobs minus that of the jobs that would
still run, through the workflow's ``needs``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

import attrs

from .. import contracts as c
from .columns import align_columns
from .convert import unstructure
from .jsonutil import code_unit_key, pretty_json
from .report_v5 import ReportV5, as_report
from .results import CiJob, CiRun, Results

__all__ = [
    "Ceiling",
    "CeilingChange",
    "CeilingTotal",
    "PreviewDocument",
    "PreviewForcedTask",
    "PreviewKeyedRun",
    "TaskCeiling",
    "ceiling",
    "ceiling_json",
    "ceiling_markdown",
    "ceiling_table",
    "ceiling_text",
    "critical_paths",
    "forced_state",
]

_KEYLESS = frozenset((c.REASON_MISSING_API_KEY, c.REASON_EXTERNAL_CONTEXT_DISABLED))
_CHANGE_REASONS = frozenset((*c.BYPASS_REASONS, c.REASON_PROTECTED_PATH))
# A task's own reasons, in the precedence a job of several tasks follows.
_TASK_REASONS = (
    (c.REASON_ALWAYS, c.CEILING_ALWAYS),
    (c.REASON_PATH_MATCH, c.CEILING_FORCE_PATHS),
    (c.REASON_METADATA_UNAVAILABLE, c.CEILING_GAP),
)
_NO_TASK = ""  # the category of a job of no task: it runs whatever any rule says


def _frozen_mapping(value: Mapping[str, object]) -> Mapping[str, object]:
    return MappingProxyType(dict(value))


# ---------------------------------------------------------------------------------------------
# preview.json (schemas/preview.schema.json)
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class PreviewForcedTask:
    """A task ``always``, ``force_paths`` or a metadata gap keeps whatever the scores."""

    task: str
    reasons: tuple[str, ...]
    pattern: str | None
    path: str | None


@attrs.frozen
class PreviewKeyedRun:
    """What a run with a key and consent would do with the change (``reason`` null: scores
    decide the candidates)."""

    reason: str | None
    path: str | None
    patch_bytes: int | None
    limit_bytes: int | None
    limit_groups: int | None
    candidates: tuple[str, ...]
    requests: int


@attrs.frozen
class PreviewDocument:
    """A ``preview.json``: what planning found for the change before anything was sent."""

    changed_files: tuple[str, ...] | None
    forced_tasks: tuple[PreviewForcedTask, ...]
    gaps: Mapping[str, tuple[str, ...]] = attrs.field(converter=_frozen_mapping)
    keyed_run: PreviewKeyedRun


@attrs.frozen
class CeilingChange:
    """One measured change: its report, its results (None when there is no results file) and the
    preview beside it (None when there is none)."""

    report: ReportV5 = attrs.field(converter=as_report)
    results: Results | None
    preview: PreviewDocument | None = None


# ---------------------------------------------------------------------------------------------
# Forced state
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ForcedState:
    """What keeps the change's jobs running: one category for the whole change, or one per task
    that a rule keeps (the others are savable)."""

    whole: str | None
    tasks: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)


_NOT_SHOWN = ForcedState(whole=c.CEILING_NOT_SHOWN)


def _task_category(reasons: Iterable[str]) -> str | None:
    given = set(reasons)
    return next((category for reason, category in _TASK_REASONS if reason in given), None)


def _per_task(reasons: Mapping[str, Iterable[str]]) -> ForcedState:
    categories = {task: _task_category(given) for task, given in reasons.items()}
    return ForcedState(
        whole=None,
        tasks={task: category for task, category in categories.items() if category is not None},
    )


def _change_reason(report: ReportV5) -> str | None:
    for decision in report.tasks.values():
        for reason in decision.reasons:
            if reason in _CHANGE_REASONS:
                return reason
    return None


def _from_preview(report: ReportV5, preview: PreviewDocument | None) -> ForcedState:
    if preview is None or not {task.task for task in preview.forced_tasks} <= set(report.tasks):
        # Without a preview of this change the rules' verdict is unknown: everything stays.
        return _NOT_SHOWN
    reason = preview.keyed_run.reason
    if reason == c.REASON_PROTECTED_PATH:
        return ForcedState(whole=c.CEILING_PROTECTED_PATH)
    if reason is not None:
        return ForcedState(whole=c.CEILING_FALLBACK)
    return _per_task({task.task: task.reasons for task in preview.forced_tasks})


def forced_state(report: ReportV5, preview: PreviewDocument | None) -> ForcedState:
    """What the rules force in the change of ``report`` (the module docstring says from where)."""
    if report.status == c.STATUS_BYPASSED:
        reason = _change_reason(report)
        if reason == c.REASON_PROTECTED_PATH:
            return ForcedState(whole=c.CEILING_PROTECTED_PATH)
        if reason in _KEYLESS:
            return _from_preview(report, preview)
        return _NOT_SHOWN
    if report.status == c.STATUS_FALLBACK:
        return ForcedState(whole=c.CEILING_FALLBACK)
    observation = report.observation
    if observation is not None and observation.status != c.OBSERVATION_COMPLETE:
        # The missing answers might have kept any task.
        return ForcedState(whole=c.CEILING_FALLBACK)
    return _per_task({task: decision.reasons for task, decision in report.tasks.items()})


def _job_category(job: CiJob, state: ForcedState) -> str | None:
    """The category that keeps ``job`` running, or None when it is savable."""
    if not job.tasks:
        return _NO_TASK
    if state.whole is not None:
        return state.whole
    found = {state.tasks.get(task) for task in job.tasks}
    return next((category for category in c.CEILING_TASK_CATEGORIES if category in found), None)


def _timed(change: CeilingChange) -> CiRun | None:
    """The change's ci block when its report and results pair, else None."""
    results, report = change.results, change.report
    if results is None or results.ci is None or results.ci.version != c.RESULTS_CI_VERSION:
        return None
    if results.tested_sha != report.tested_sha or set(results.tasks) != set(report.tasks):
        return None
    if not all(set(job.tasks) <= set(report.tasks) for job in results.ci.jobs):
        return None
    return results.ci


# ---------------------------------------------------------------------------------------------
# Critical path
# ---------------------------------------------------------------------------------------------

_Node = tuple[str | None, int]  # (workflow job ID, 0), or (None, index) for a job of no known ID


def _order(needs: Mapping[str, tuple[str, ...]]) -> list[str] | None:
    """The job IDs with every job after the jobs it needs, or None for a cycle."""
    waiting = {job: len(set(needed)) for job, needed in needs.items()}
    dependants: dict[str, list[str]] = {job: [] for job in needs}
    for job, needed in needs.items():
        for other in set(needed):
            dependants[other].append(job)
    ready = sorted((job for job, count in waiting.items() if count == 0), key=code_unit_key)
    order: list[str] = []
    while ready:
        job = ready.pop()
        order.append(job)
        for later in dependants[job]:
            waiting[later] -= 1
            if waiting[later] == 0:
                ready.append(later)
    return order if len(order) == len(needs) else None


def _graph(run: CiRun) -> tuple[list[str], Mapping[str, tuple[str, ...]]]:
    """The named jobs in dependency order, and their needs; without edges when the graph is
    unknown (not read, naming a job it does not declare, missing a job that ran) or cyclic, so
    that every job counts as running side by side instead of a made-up chain."""
    named = sorted({job.job for job in run.jobs if job.job is not None}, key=code_unit_key)
    unlinked: tuple[list[str], Mapping[str, tuple[str, ...]]] = (
        named,
        {job: () for job in named},
    )
    needs = run.needs
    declared = set(needs)
    if not needs or not set(named) <= declared:
        return unlinked
    if any(other not in declared for needed in needs.values() for other in needed):
        return unlinked
    order = _order(needs)
    return (order, needs) if order is not None else unlinked


def _longest(
    order: Sequence[str], needs: Mapping[str, tuple[str, ...]], weights: Mapping[_Node, int]
) -> int:
    finish: dict[str, int] = {}
    for job in order:
        before = max((finish[other] for other in needs[job]), default=0)
        finish[job] = before + weights.get((job, 0), 0)
    unnamed = (weight for (job, _), weight in weights.items() if job is None)
    return max((*finish.values(), *unnamed), default=0)


def critical_paths(run: CiRun, kept: Sequence[bool]) -> tuple[int, int]:
    """The critical path of all the run's jobs, and of the jobs ``kept`` marks (in ms).

    A workflow job is one node, as long as its longest record (matrix legs run side by side); a
    record without a job ID is a node of its own. A node without kept records weighs nothing but
    keeps its edges, which contracts the paths through it.
    """
    every: dict[_Node, int] = {}
    still: dict[_Node, int] = {}
    for index, (job, keep) in enumerate(zip(run.jobs, kept, strict=True)):
        node: _Node = (job.job, 0) if job.job is not None else (None, index)
        every[node] = max(every.get(node, 0), job.duration_ms)
        if keep:
            still[node] = max(still.get(node, 0), job.duration_ms)
    order, needs = _graph(run)
    return _longest(order, needs, every), _longest(order, needs, still)


# ---------------------------------------------------------------------------------------------
# The ceiling
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class TaskCeiling:
    """One task's jobs over the changes, in billed minutes: forced by category, and the rest."""

    task: str
    changes: int
    jobs: int
    billed_minutes: int
    forced: Mapping[str, int] = attrs.field(converter=_frozen_mapping)  # every category, in order
    savable_minutes: int


@attrs.frozen
class CeilingTotal:
    """Every job once: forced by category, the jobs of no task, the savable rest; and the wall
    time on the critical path (ms, summed over the changes)."""

    jobs: int
    billed_minutes: int
    forced: Mapping[str, int] = attrs.field(converter=_frozen_mapping)
    no_task_jobs: int
    no_task_minutes: int
    savable_minutes: int
    critical_path_ms: int
    critical_path_savable_ms: int


@attrs.frozen
class Ceiling:
    """The ceiling JSON: keys in the order it is written."""

    upper_bound: str
    changes: int
    changes_without_timings: int
    changes_not_shown: int
    tasks: tuple[TaskCeiling, ...]
    total: CeilingTotal


@attrs.define
class _Tally:
    changes: set[int] = attrs.field(factory=set)
    jobs: int = 0
    billed: int = 0
    forced: dict[str, int] = attrs.field(factory=lambda: dict.fromkeys(c.CEILING_CATEGORIES, 0))
    savable: int = 0

    def add(self, change: int, job: CiJob, category: str | None) -> None:
        self.changes.add(change)
        self.jobs += 1
        self.billed += job.billed_minutes
        if category is None:
            self.savable += job.billed_minutes
        elif category != _NO_TASK:
            self.forced[category] += job.billed_minutes


def ceiling(changes: Sequence[CeilingChange]) -> Ceiling | None:
    """The ceiling over the changes with job timings, or None when no change has any."""
    tasks: dict[str, _Tally] = {}
    total = _Tally()
    no_task = _Tally()
    timed = not_shown = 0
    path = path_saved = 0
    for index, change in enumerate(changes):
        run = _timed(change)
        if run is None:
            continue
        timed += 1
        state = forced_state(change.report, change.preview)
        not_shown += state.whole == c.CEILING_NOT_SHOWN
        categories = [_job_category(job, state) for job in run.jobs]
        for job, category in zip(run.jobs, categories, strict=True):
            total.add(index, job, category)
            if category == _NO_TASK:
                no_task.add(index, job, category)
            for task in job.tasks:
                tasks.setdefault(task, _Tally()).add(index, job, category)
        every, kept = critical_paths(run, [category is not None for category in categories])
        path += every
        path_saved += every - kept
    if not timed:
        return None
    return Ceiling(
        upper_bound=c.CEILING_UPPER_BOUND,
        changes=timed,
        changes_without_timings=len(changes) - timed,
        changes_not_shown=not_shown,
        tasks=tuple(
            TaskCeiling(
                task=task,
                changes=len(tally.changes),
                jobs=tally.jobs,
                billed_minutes=tally.billed,
                forced=tally.forced,
                savable_minutes=tally.savable,
            )
            for task, tally in sorted(tasks.items(), key=lambda item: code_unit_key(item[0]))
        ),
        total=CeilingTotal(
            jobs=total.jobs,
            billed_minutes=total.billed,
            forced=total.forced,
            no_task_jobs=no_task.jobs,
            no_task_minutes=no_task.billed,
            savable_minutes=total.savable,
            critical_path_ms=path,
            critical_path_savable_ms=path_saved,
        ),
    )


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def ceiling_json(view: Ceiling) -> dict[str, object]:
    """The ceiling as a JSON object (``calibrate --format json`` puts it under ``ceiling``)."""
    value = unstructure(view)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def _percent(part: int, whole: int) -> str:
    if whole <= 0:
        return c.CEILING_NO_PERCENT
    return c.CEILING_PERCENT_TEMPLATE.format(value=round(100 * part / whole))


def _wall_minutes(milliseconds: int) -> str:
    return f"{milliseconds / c.BILLED_MS_PER_MINUTE:.1f}"


def _rows(view: Ceiling) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for task in view.tasks:
        rows.append(
            (
                task.task,
                str(task.changes),
                str(task.jobs),
                str(task.billed_minutes),
                *(str(task.forced[name]) for name in c.CEILING_CATEGORIES),
                str(task.savable_minutes),
                _percent(task.savable_minutes, task.billed_minutes),
            )
        )
    total = view.total
    if total.no_task_jobs:
        rows.append(
            (
                c.CEILING_NO_TASK_LABEL,
                "",
                str(total.no_task_jobs),
                str(total.no_task_minutes),
                *(c.CEILING_NO_PERCENT for _ in c.CEILING_CATEGORIES),
                "0",
                _percent(0, total.no_task_minutes),
            )
        )
    rows.append(
        (
            c.CEILING_TOTAL_LABEL,
            str(view.changes),
            str(total.jobs),
            str(total.billed_minutes),
            *(str(total.forced[name]) for name in c.CEILING_CATEGORIES),
            str(total.savable_minutes),
            _percent(total.savable_minutes, total.billed_minutes),
        )
    )
    return rows


def _lines(view: Ceiling) -> list[str]:
    total = view.total
    lines = [
        c.CEILING_BILLED_LINE,
        c.CEILING_WALL_TEMPLATE.format(
            total=_wall_minutes(total.critical_path_ms),
            changes=view.changes,
            saved=_wall_minutes(total.critical_path_savable_ms),
        ),
        c.CEILING_CHANGES_TEMPLATE.format(changes=view.changes),
    ]
    if view.changes_without_timings:
        lines.append(c.CEILING_NO_TIMINGS_TEMPLATE.format(count=view.changes_without_timings))
    if view.changes_not_shown:
        lines.append(c.CEILING_NOT_SHOWN_TEMPLATE.format(count=view.changes_not_shown))
    return lines


def ceiling_table(view: Ceiling) -> str:
    """The ceiling as an aligned plain-text table and its lines, the upper-bound sentence last."""
    body = align_columns([c.CEILING_HEADER, *_rows(view)])
    return "\n".join([c.CEILING_TITLE, *body, *_lines(view), view.upper_bound]) + "\n"


def ceiling_markdown(view: Ceiling) -> str:
    """The ceiling as Markdown for a step summary."""
    header = c.CEILING_HEADER
    lines = [
        c.CEILING_MARKDOWN_TITLE,
        "",
        f"**{view.upper_bound}**",
        "",
        "| " + " | ".join(header) + " |",
        "| --- | " + " | ".join("---:" for _ in header[1:]) + " |",
        *("| " + " | ".join(row) + " |" for row in _rows(view)),
        "",
        *(line for text in _lines(view) for line in (text, "")),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def ceiling_text(changes: Sequence[CeilingChange], format: str) -> str | None:
    """The ceiling of ``changes`` in one of ``CALIBRATE_FORMATS``, or None when no change has
    job timings (then there is nothing to print)."""
    view = ceiling(changes)
    if view is None:
        return None
    if format == c.CALIBRATE_FORMAT_JSON:
        return pretty_json(ceiling_json(view)) + "\n"
    if format == c.CALIBRATE_FORMAT_MARKDOWN:
        return ceiling_markdown(view)
    return ceiling_table(view)
