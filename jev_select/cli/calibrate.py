"""``jev-select calibrate``: shadow reports re-decided at several thresholds.

Shell module. It reads REPORT RESULTS pairs (or directories of ``<id>/report.json`` and
``<id>/results.json``, with the ``preview.json`` beside a report where there is one, through
``edges.measurements``), calls the pure ``core.calibrate`` and ``core.ceiling`` and prints a
table, JSON or Markdown: the threshold table, then the ceiling when results files list the CI
jobs, or the ceiling alone when no change was scored by Jev. ``--plot`` draws misses and savings
and the ceiling per task with matplotlib when the ``plot`` extra is installed.
Failures print one fixed line with an ``analyze`` code and exit 1. In directories, a report
without a results file beside it is left out, and one line on stderr says how many were; when
none is left there is nothing to calibrate, which is an error too (exit 1).
"""

from __future__ import annotations

import argparse
import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .. import contracts as c
from ..core.calibrate import (
    Calibration,
    calibrate,
    parse_thresholds,
    render_calibration,
    scored_changes,
)
from ..core.ceiling import Ceiling, CeilingChange, ceiling
from ..core.jsonutil import format_number
from ..core.shadow import AnalysisError, Measurement
from ..edges.measurements import list_measurements, read_checked, read_pair
from ..errors import CommandFailure, InvocationError
from . import console

__all__ = ["CalibrateFailure", "register", "run_calibrate"]


class CalibrateFailure(CommandFailure, failures=c.CALIBRATE_FAILURES):
    """The pairs cannot be calibrated; carries a code of ``ANALYSIS_CODES``."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``calibrate`` to the ``jev-select`` parser."""
    calibrate_parser = commands.add_parser(
        c.COMMAND_CALIBRATE,
        help="re-decide shadow reports at several thresholds: REPORT RESULTS [...] or DIR",
        description=(
            "Re-decide every shadow report at each threshold with the production policy, count "
            "what enforce mode would have skipped, saved and missed against the CI results, and "
            "recommend the highest threshold without a regression or manually relevant miss. "
            "Arguments: REPORT RESULTS pairs, or directories holding <id>/report.json and "
            "<id>/results.json (and <id>/preview.json for runs without a key). When the results "
            "files list the CI jobs (a ci block), also print the ceiling: the billed minutes no "
            "rule forces, the most any scoring could save."
        ),
        exit_on_error=False,
    )
    calibrate_parser.add_argument("paths", nargs="+", metavar="REPORT RESULTS | DIR")
    calibrate_parser.add_argument(
        "--thresholds",
        default=c.CALIBRATE_THRESHOLDS_TEXT,
        help="comma-separated thresholds in [0, 1] (default %(default)s)",
    )
    calibrate_parser.add_argument(
        "--format", choices=c.CALIBRATE_FORMATS, default=c.CALIBRATE_FORMAT_TABLE, dest="format"
    )
    calibrate_parser.add_argument(
        "--plot",
        help="write a PNG of misses and savings against the threshold, and of the ceiling "
        "per task (needs matplotlib: the plot extra)",
    )
    calibrate_parser.set_defaults(handler=run_calibrate)


@attrs.frozen
class _Read:
    """The measurements read for the threshold table and the ceiling, with how many reports were
    found and left out for want of a results file."""

    measurements: list[Measurement]
    changes: list[CeilingChange]
    reports: int  # every report found, with or without a results file
    left_out: int


def _read(paths: Sequence[str]) -> _Read:
    """The arguments' measurements: pairs of files, or directories to walk (with the preview
    beside each report, where there is one)."""
    if all(os.path.isdir(path) for path in paths):
        entries = list_measurements(paths)
        # A measurement directory without a results file is not labelled yet: left out.
        labelled = [entry for entry in entries if entry.results is not None]
        found = [read_checked(entry) for entry in labelled]
        return _Read(
            [measurement for measurement, _ in found],
            [change for _, change in found],
            len(entries),
            len(entries) - len(labelled),
        )
    if len(paths) % 2:
        raise InvocationError("REPORT and RESULTS files come in pairs")
    found = [read_pair(paths[index], paths[index + 1]) for index in range(0, len(paths), 2)]
    return _Read(
        [measurement for measurement, _ in found],
        [change for _, change in found],
        len(found),
        0,
    )


def _say(message: str) -> None:
    # Plain on stderr even in GitHub Actions: stdout often goes to the step summary.
    console.emit(message, github=False)


def run_calibrate(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select calibrate REPORT RESULTS [REPORT RESULTS ...] | DIR [DIR ...]``."""
    thresholds = parse_thresholds(namespace.thresholds)
    if thresholds is None:
        raise InvocationError("--thresholds: comma-separated decimals in [0, 1]")
    try:
        found = _read(namespace.paths)
        if not found.measurements:
            # Nothing labelled: a table of zeros would read as "nothing to save".
            _say(
                c.CALIBRATE_NO_RESULTS_TEMPLATE.format(reports=found.reports)
                if found.reports
                else c.CALIBRATE_NO_REPORTS
            )
            return 1
        if found.left_out:
            _say(
                c.CALIBRATE_LEFT_OUT_TEMPLATE.format(left_out=found.left_out, reports=found.reports)
            )
        view = calibrate(found.measurements, thresholds)
    except AnalysisError as error:
        # analyze's checks and codes, under calibrate's own line.
        raise CalibrateFailure(error.code) from None
    top = ceiling(found.changes)
    if namespace.plot is not None and not _plot(view, namespace.plot, environ, top):
        return 1
    console.write(
        render_calibration(
            view, top, namespace.format, scored_count=scored_changes(found.measurements)
        )
    )
    return 0


# ---------------------------------------------------------------------------------------------
# --plot
# ---------------------------------------------------------------------------------------------

# One style per series of the misses panel, in the order of FAILURE_CLASSIFICATIONS and then the
# manually relevant tasks: a colour of the Okabe-Ito palette (told apart by colour-blind readers
# too), a marker and a line style each. Series with equal counts are also set side by side at
# each threshold, so none can hide another; the first (regression) is drawn on top.
_MISS_STYLES: tuple[tuple[str, str, object], ...] = (
    ("#D55E00", "o", "-"),
    ("#E69F00", "s", "--"),
    ("#009E73", "^", "-."),
    ("#CC79A7", "D", ":"),
    ("#0072B2", "X", (0, (5, 1, 1, 1))),
)
_MISS_SPREAD = 0.5  # the share of one threshold's slot that its side-by-side markers span
_SKIP_BARS = "#BBBBBB"
_MINUTES_LINE = "#000000"
_RECOMMENDED_LINE = "#555555"


def _plot(
    view: Calibration, path: str, environ: Mapping[str, str], top: Ceiling | None = None
) -> bool:
    """Write the PNG of :func:`_draw`; refuse, rather than draw it flat, a calibration in which
    no task was judged by scores and that has no ceiling either."""
    judged = any(row.tasks_judged for row in view.thresholds)
    if not judged and top is None:
        console.emit_for(c.CALIBRATE_PLOT_EMPTY, environ)
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never a display
        from matplotlib import pyplot
    except ImportError:
        console.emit_for(c.CALIBRATE_PLOT_UNAVAILABLE, environ)
        return False
    figure = _draw(view if judged else None, top)
    try:
        figure.savefig(path, format="png", dpi=110)
    except (OSError, ValueError):
        console.emit_for(c.CALIBRATE_PLOT_UNWRITABLE, environ)
        return False
    finally:
        pyplot.close(figure)
    return True


_THRESHOLDS_HEIGHT = 6.5  # inches of the two threshold panels
_WIDTH = 9.5


def _draw(view: Calibration | None, top: Ceiling | None = None) -> Any:
    """The figure of ``--plot``: the threshold panels of :func:`_draw_thresholds` when a task was
    judged by scores, the ceiling's bars of :func:`_draw_ceiling` when there is a ceiling, one
    above the other when there are both."""
    from matplotlib import pyplot

    if top is None:
        assert view is not None  # _plot draws nothing without either
        figure = pyplot.figure(figsize=(_WIDTH, _THRESHOLDS_HEIGHT), layout="constrained")
        _draw_thresholds(figure, view)
        return figure
    bars = _ceiling_height(top)
    if view is None:
        figure = pyplot.figure(figsize=(_WIDTH, bars), layout="constrained")
        _draw_ceiling(figure, top)
        return figure
    figure = pyplot.figure(figsize=(_WIDTH, _THRESHOLDS_HEIGHT + bars), layout="constrained")
    parts: Any = figure.subfigures(2, 1, height_ratios=(_THRESHOLDS_HEIGHT, bars))
    _draw_thresholds(parts[0], view)
    _draw_ceiling(parts[1], top)
    return figure


def _draw_thresholds(figure: Any, view: Calibration) -> None:
    """Savings (top) and misses (bottom) against the threshold, on a matplotlib figure or
    subfigure.

    Top: would-skip tasks as bars (left axis, a count) and task-minutes saved as a line (right
    axis, minutes). Bottom: the would-skip tasks that failed, by classification, and those
    marked relevant (a count). Thresholds are evenly spaced categories; the legends sit outside
    the axes; the recommended threshold, when there is one, is a dotted line on both panels.
    """
    from matplotlib.ticker import MaxNLocator

    rows = view.thresholds
    xs = list(range(len(rows)))
    savings, misses = figure.subplots(2, 1, sharex=True, height_ratios=(1, 1.2))
    savings.bar(
        xs,
        [row.would_skip for row in rows],
        width=0.6,
        color=_SKIP_BARS,
        edgecolor="#777777",
        label="would-skip tasks (left axis)",
        zorder=2,
    )
    savings.set_ylabel("would-skip tasks (count)")
    savings.yaxis.set_major_locator(MaxNLocator(integer=True))
    savings.set_ylim(0, max(1, *(row.would_skip for row in rows)) * 1.15)
    minutes = savings.twinx()
    minutes.plot(
        xs,
        [row.minutes_saved for row in rows],
        color=_MINUTES_LINE,
        marker="v",
        linewidth=2,
        label="task-minutes saved (right axis)",
        zorder=3,
    )
    minutes.set_ylim(0, max(1.0, *(row.minutes_saved for row in rows)) * 1.15)
    minutes.set_ylabel("task-minutes saved (min, summed)")
    series = [
        (f"failed, {name}", [row.failures_would_miss[name] for row in rows])
        for name in c.FAILURE_CLASSIFICATIONS
    ]
    series.append(("manually relevant", [row.manually_relevant_would_skip for row in rows]))
    step = _MISS_SPREAD / max(1, len(series) - 1)
    for index, ((label, counts), (colour, marker, dashes)) in enumerate(
        zip(series, _MISS_STYLES, strict=True)
    ):
        offset = (index - (len(series) - 1) / 2) * step
        misses.plot(
            [x + offset for x in xs],
            counts,
            color=colour,
            marker=marker,
            markersize=7,
            markeredgecolor="#FFFFFF",
            markeredgewidth=0.6,
            linestyle=dashes,
            linewidth=1.4,
            label=label,
            zorder=10 - index,
            clip_on=False,
        )
    highest = max(1, *(count for _, counts in series for count in counts))
    misses.set_ylim(-0.06 * highest * 1.15, highest * 1.15)
    misses.yaxis.set_major_locator(MaxNLocator(integer=True))
    misses.set_ylabel("would-skip tasks that\nfailed or were relevant (count)")
    misses.set_xticks(xs, [format_number(row.threshold) for row in rows])
    misses.set_xlim(-0.6, len(rows) - 0.4)
    misses.set_xlabel("skip-below threshold (Jev score, 0 to 1; evenly spaced)")
    recommended = view.recommended
    for axis in (savings, misses):
        axis.grid(True, axis="y", alpha=0.3, zorder=0)
        if recommended is not None:
            axis.axvline(
                [row.threshold for row in rows].index(recommended),
                color=_RECOMMENDED_LINE,
                linestyle=":",
                linewidth=1.5,
                zorder=1,
                # One legend entry, with the misses it is chosen by.
                label=f"recommended: {format_number(recommended)}" if axis is misses else None,
            )
    figure.legend(
        handles=[*savings.get_legend_handles_labels()[0], *minutes.get_lines()],
        loc="outside right upper",
        title="savings",
    )
    figure.legend(
        handles=misses.get_legend_handles_labels()[0], loc="outside right lower", title="misses"
    )
    # The title over the axes, not over the figure: the legends take the right-hand column.
    shown = c.CALIBRATE_NO_RECOMMENDATION if recommended is None else format_number(recommended)
    savings.set_title(
        f"jev-select calibrate: {rows[0].changes} changes, recommended threshold {shown}\n"
        + textwrap.fill(view.note, 88),
        fontsize=10,
    )


# ---------------------------------------------------------------------------------------------
# --plot: the ceiling
# ---------------------------------------------------------------------------------------------

# Forced segments in Okabe-Ito colours, each with a hatch of its own so that they are told apart
# in grey too; the savable rest is the one solid green, the jobs of no task a pale grey.
_CEILING_STYLES: dict[str, tuple[str, str]] = {
    c.CEILING_ALWAYS: ("#0072B2", ""),
    c.CEILING_FORCE_PATHS: ("#56B4E9", "//"),
    c.CEILING_GAP: ("#CC79A7", "\\\\"),
    c.CEILING_PROTECTED_PATH: ("#E69F00", ".."),
    c.CEILING_FALLBACK: ("#D55E00", "xx"),
    c.CEILING_NOT_SHOWN: ("#999999", "--"),
}
_SAVABLE = "#009E73"
_NO_TASK_BARS = "#DDDDDD"
_CEILING_ROWS = 30  # the tasks with the most minutes; the rest are named in the axis label
_ROW_INCHES = 0.34


def _ceiling_rows(top: Ceiling) -> list[tuple[str, list[int], int]]:
    """(label, forced minutes per category, savable minutes), most billed minutes first."""
    rows = [
        (task.task, [task.forced[name] for name in c.CEILING_CATEGORIES], task.savable_minutes)
        for task in sorted(top.tasks, key=lambda task: -task.billed_minutes)[:_CEILING_ROWS]
    ]
    if top.total.no_task_jobs:
        rows.append((c.CEILING_NO_TASK_LABEL, [0 for _ in c.CEILING_CATEGORIES], 0))
    return rows


def _share(part: int, whole: int) -> str:
    return f"{round(100 * part / whole) if whole else 0}%"


def _ceiling_height(top: Ceiling) -> float:
    return 3.2 + _ROW_INCHES * len(_ceiling_rows(top))


def _draw_ceiling(figure: Any, top: Ceiling) -> None:
    """One horizontal bar per task, in billed minutes: the forced minutes by category, then the
    savable rest in green, labelled with its share; the jobs of no task as a grey bar."""
    axis = figure.subplots(1, 1)
    rows = _ceiling_rows(top)
    ys = list(range(len(rows)))[::-1]  # the most minutes on top
    starts = [0 for _ in rows]
    for index, name in enumerate(c.CEILING_CATEGORIES):
        widths = [forced[index] for _, forced, _ in rows]
        if not any(widths):
            continue  # a category that forced nothing gets no legend entry
        colour, hatch = _CEILING_STYLES[name]
        axis.barh(
            ys,
            widths,
            left=starts,
            height=0.62,
            color=colour,
            hatch=hatch,
            edgecolor="#FFFFFF",
            linewidth=0.6,
            label=c.CEILING_PLOT_LABELS[name],
            zorder=2,
        )
        starts = [start + width for start, width in zip(starts, widths, strict=True)]
    axis.barh(
        ys,
        [savable for _, _, savable in rows],
        left=starts,
        height=0.62,
        color=_SAVABLE,
        edgecolor="#FFFFFF",
        linewidth=0.6,
        label=c.CEILING_PLOT_SAVABLE,
        zorder=2,
    )
    if top.total.no_task_jobs:
        axis.barh(
            [ys[-1]],
            [top.total.no_task_minutes],
            height=0.62,
            color=_NO_TASK_BARS,
            edgecolor="#777777",
            linewidth=0.6,
            label=c.CEILING_PLOT_NO_TASK,
            zorder=2,
        )
    ends = [start + savable for start, (_, _, savable) in zip(starts, rows, strict=True)]
    if top.total.no_task_jobs:
        ends[-1] = top.total.no_task_minutes
    widest = max(1, *ends)
    for y, end, (label, forced, savable) in zip(ys, ends, rows, strict=True):
        billed = sum(forced) + savable
        text = (
            c.CEILING_PLOT_BAR_TEMPLATE.format(
                savable=savable, billed=billed, percent=_share(savable, billed)
            )
            if label != c.CEILING_NO_TASK_LABEL
            else c.CEILING_PLOT_NO_TASK_BAR_TEMPLATE.format(billed=end)
        )
        axis.text(end + widest * 0.01, y, text, va="center", fontsize=8, color="#333333")
    axis.set_yticks(ys, [label for label, _, _ in rows])
    axis.set_xlim(0, widest * 1.3)  # room for the labels at the bars' ends
    axis.set_ylim(-0.7, len(rows) - 0.3)
    axis.grid(True, axis="x", alpha=0.3, zorder=0)
    more = len(top.tasks) - min(len(top.tasks), _CEILING_ROWS)
    axis.set_xlabel(
        c.CEILING_PLOT_AXIS + (c.CEILING_PLOT_MORE_TEMPLATE.format(more=more) if more else "")
    )
    total = top.total
    axis.set_title(
        c.CEILING_PLOT_TITLE_TEMPLATE.format(
            changes=top.changes,
            savable=total.savable_minutes,
            billed=total.billed_minutes,
            percent=_share(total.savable_minutes, total.billed_minutes),
        )
        + "\n"
        + textwrap.fill(top.upper_bound, 100),
        fontsize=10,
    )
    # Under the axes, across the figure: the bars keep the full width and the title its room.
    figure.legend(loc="outside lower center", ncols=3, title=c.CEILING_PLOT_LEGEND_TITLE)
