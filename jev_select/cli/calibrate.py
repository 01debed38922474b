"""``jev-select calibrate``: shadow reports re-decided at several thresholds.

Shell module. It reads REPORT RESULTS pairs (or directories of ``<id>/report.json`` and
``<id>/results.json``), calls the pure ``core.calibrate`` and prints a table, JSON or Markdown;
``--plot`` draws misses and savings with matplotlib when the ``plot`` extra is installed.
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
    calibration_json,
    calibration_markdown,
    calibration_table,
    parse_thresholds,
)
from ..core.jsonutil import code_unit_key, format_number, pretty_json
from ..core.shadow import AnalysisError
from ..edges.readers import read_measurement
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
            "<id>/results.json."
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
        help="write a PNG of misses and savings against the threshold "
        "(needs matplotlib: the plot extra)",
    )
    calibrate_parser.set_defaults(handler=run_calibrate)


@attrs.frozen
class _Pairs:
    """The REPORT RESULTS pairs to read, and the reports left out for want of a results file."""

    pairs: list[tuple[str, str]]
    reports: int  # every report found, with or without a results file
    left_out: int


def _pairs(paths: Sequence[str]) -> _Pairs:
    """REPORT RESULTS pairs from the arguments: pairs of files, or directories to walk."""
    if all(os.path.isdir(path) for path in paths):
        pairs: list[tuple[str, str]] = []
        left_out = 0
        for directory in paths:
            try:
                names = sorted(os.listdir(directory), key=code_unit_key)
            except OSError:
                raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT) from None
            for name in names:
                entry = os.path.join(directory, name)
                report = os.path.join(entry, c.REPORT_FILE_NAME)
                if not os.path.isfile(report):
                    continue  # not a measurement
                # A measurement directory without a results file is not labelled yet: left out.
                results = os.path.join(entry, c.CALIBRATE_RESULTS_FILE_NAME)
                if os.path.isfile(results):
                    pairs.append((report, results))
                else:
                    left_out += 1
        return _Pairs(pairs, len(pairs) + left_out, left_out)
    if len(paths) % 2:
        raise InvocationError("REPORT and RESULTS files come in pairs")
    pairs = [(paths[index], paths[index + 1]) for index in range(0, len(paths), 2)]
    return _Pairs(pairs, len(pairs), 0)


def _say(message: str) -> None:
    # Plain on stderr even in GitHub Actions: stdout often goes to the step summary.
    console.emit(message, github=False)


def run_calibrate(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select calibrate REPORT RESULTS [REPORT RESULTS ...] | DIR [DIR ...]``."""
    thresholds = parse_thresholds(namespace.thresholds)
    if thresholds is None:
        raise InvocationError("--thresholds: comma-separated decimals in [0, 1]")
    try:
        found = _pairs(namespace.paths)
        if not found.pairs:
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
        measurements = [read_measurement(*pair) for pair in found.pairs]
        view = calibrate(measurements, thresholds)
    except AnalysisError as error:
        # analyze's checks and codes, under calibrate's own line.
        raise CalibrateFailure(error.code) from None
    if namespace.plot is not None and not _plot(view, namespace.plot, environ):
        return 1
    if namespace.format == c.CALIBRATE_FORMAT_JSON:
        console.write(pretty_json(calibration_json(view)) + "\n")
    elif namespace.format == c.CALIBRATE_FORMAT_MARKDOWN:
        console.write(calibration_markdown(view))
    else:
        console.write(calibration_table(view))
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


def _plot(view: Calibration, path: str, environ: Mapping[str, str]) -> bool:
    """Write the PNG of :func:`_draw`; refuse a calibration in which no task was judged by
    scores rather than draw it flat."""
    if not any(row.tasks_judged for row in view.thresholds):
        console.emit_for(c.CALIBRATE_PLOT_EMPTY, environ)
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never a display
        from matplotlib import pyplot
    except ImportError:
        console.emit_for(c.CALIBRATE_PLOT_UNAVAILABLE, environ)
        return False
    figure = _draw(view)
    try:
        figure.savefig(path, format="png", dpi=110)
    except (OSError, ValueError):
        console.emit_for(c.CALIBRATE_PLOT_UNWRITABLE, environ)
        return False
    finally:
        pyplot.close(figure)
    return True


def _draw(view: Calibration) -> Any:
    """Savings (top) and misses (bottom) against the threshold: a matplotlib figure.

    Top: would-skip tasks as bars (left axis, a count) and task-minutes saved as a line (right
    axis, minutes). Bottom: the would-skip tasks that failed, by classification, and those
    marked relevant (a count). Thresholds are evenly spaced categories; the legends sit outside
    the axes; the recommended threshold, when there is one, is a dotted line on both panels.
    """
    from matplotlib import pyplot
    from matplotlib.ticker import MaxNLocator

    rows = view.thresholds
    xs = list(range(len(rows)))
    figure, (savings, misses) = pyplot.subplots(
        2, 1, sharex=True, figsize=(9.5, 6.5), layout="constrained", height_ratios=(1, 1.2)
    )
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
    return figure
