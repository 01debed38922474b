"""``jev-select calibrate``: shadow reports re-decided at several thresholds.

Shell module. It reads REPORT RESULTS pairs (or directories of ``<id>/report.json`` and
``<id>/results.json``), calls the pure ``core.calibrate`` and prints a table, JSON or Markdown;
``--plot`` draws misses and savings with matplotlib when the ``bench`` extra is installed.
Failures print one fixed line with an ``analyze`` code and exit 1.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence

from .. import contracts as c
from ..core.calibrate import (
    Calibration,
    calibrate,
    calibration_json,
    calibration_markdown,
    calibration_table,
    parse_thresholds,
)
from ..core.jsonutil import code_unit_key, pretty_json
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
        "--plot", help="write a PNG of misses and savings against the threshold (needs matplotlib)"
    )
    calibrate_parser.set_defaults(handler=run_calibrate)


def _pairs(paths: Sequence[str]) -> list[tuple[str, str]]:
    """REPORT RESULTS pairs from the arguments: pairs of files, or directories to walk."""
    if all(os.path.isdir(path) for path in paths):
        pairs: list[tuple[str, str]] = []
        for directory in paths:
            try:
                names = sorted(os.listdir(directory), key=code_unit_key)
            except OSError:
                raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT) from None
            for name in names:
                entry = os.path.join(directory, name)
                report = os.path.join(entry, c.REPORT_FILE_NAME)
                # A measurement directory without a results file is not labelled yet: skipped.
                results = os.path.join(entry, c.CALIBRATE_RESULTS_FILE_NAME)
                if os.path.isfile(report) and os.path.isfile(results):
                    pairs.append((report, results))
        return pairs
    if len(paths) % 2:
        raise InvocationError("REPORT and RESULTS files come in pairs")
    return [(paths[index], paths[index + 1]) for index in range(0, len(paths), 2)]


def run_calibrate(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select calibrate REPORT RESULTS [REPORT RESULTS ...] | DIR [DIR ...]``."""
    thresholds = parse_thresholds(namespace.thresholds)
    if thresholds is None:
        raise InvocationError("--thresholds: comma-separated decimals in [0, 1]")
    try:
        measurements = [read_measurement(*pair) for pair in _pairs(namespace.paths)]
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


def _plot(view: Calibration, path: str, environ: Mapping[str, str]) -> bool:
    """Misses (left axis) and minutes saved (right axis) against the threshold, as a PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: never a display
        from matplotlib import pyplot
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        console.emit_for(c.CALIBRATE_PLOT_UNAVAILABLE, environ)
        return False
    rows = view.thresholds
    xs = [row.threshold for row in rows]
    figure, misses_axis = pyplot.subplots(figsize=(8, 4.5))
    try:
        for name in c.FAILURE_CLASSIFICATIONS:
            misses_axis.plot(
                xs, [row.failures_would_miss[name] for row in rows], marker="o", label=name
            )
        misses_axis.plot(
            xs,
            [row.manually_relevant_would_skip for row in rows],
            marker="s",
            linestyle="--",
            label="manually relevant",
        )
        # Counts: from zero, whole numbers only (an all-zero line would otherwise sit mid-axis).
        highest = max(
            [row.manually_relevant_would_skip for row in rows]
            + [row.failures_would_miss[name] for row in rows for name in c.FAILURE_CLASSIFICATIONS]
        )
        misses_axis.set_ylim(0, max(1, highest) * 1.1)
        misses_axis.yaxis.set_major_locator(MaxNLocator(integer=True))
        misses_axis.set_xlabel("threshold (skip-below)")
        misses_axis.set_ylabel("would-skip tasks that failed or were relevant")
        savings_axis = misses_axis.twinx()
        savings_axis.plot(
            xs, [row.minutes_saved for row in rows], color="black", marker="^", label="minutes"
        )
        savings_axis.set_ylabel("task-minutes saved (summed)")
        recommended = view.recommended
        if recommended is not None:
            misses_axis.axvline(recommended, color="grey", linestyle=":")
        misses_axis.legend(loc="upper left")
        savings_axis.legend(loc="upper right")
        figure.tight_layout()
        figure.savefig(path, format="png")
    except (OSError, ValueError):
        console.emit_for(c.CALIBRATE_PLOT_UNWRITABLE, environ)
        return False
    finally:
        pyplot.close(figure)
    return True
