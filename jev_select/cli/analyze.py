"""``jev-select analyze REPORT RESULTS [REPORT RESULTS ...]``: shadow reports against CI results.

Shell module (docs/reference.md, "Shadow analysis"). Each pair is read and refused exactly as
``calibrate`` reads and refuses it (``edges.readers``); the output is the analysis as JSON or a
table, or one fixed line naming the first failing check (an ``AnalysisError``, printed by the
command line).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from .. import contracts as c
from ..core.jsonutil import pretty_json
from ..core.shadow import (
    aggregate,
    aggregate_json,
    aggregate_table,
    analysis_json,
    analysis_table,
)
from ..edges.readers import read_analysis
from ..errors import InvocationError
from . import console

__all__ = ["register", "run_analyze"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``analyze`` to the ``jev-select`` parser."""
    analyze = commands.add_parser(
        c.COMMAND_ANALYZE,
        help="compare shadow reports with CI results: REPORT RESULTS [REPORT RESULTS ...]",
        exit_on_error=False,
    )
    analyze.add_argument("paths", nargs="+", metavar="REPORT RESULTS")
    analyze.add_argument(
        "--format", choices=c.ANALYSIS_FORMATS, default=c.ANALYSIS_FORMAT_JSON, dest="format"
    )
    analyze.set_defaults(handler=run_analyze)


def run_analyze(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select analyze REPORT RESULTS [REPORT RESULTS ...]`` (docs/reference.md,
    "Shadow analysis")."""
    paths: list[str] = namespace.paths
    if len(paths) % 2:
        raise InvocationError("REPORT and RESULTS files come in pairs")
    analyses = [read_analysis(paths[index], paths[index + 1]) for index in range(0, len(paths), 2)]
    table = namespace.format == c.ANALYSIS_FORMAT_TABLE
    if len(analyses) == 1:
        single = analyses[0]
        console.write(
            analysis_table(single) if table else pretty_json(analysis_json(single)) + "\n"
        )
    else:
        view = aggregate(analyses)
        console.write(aggregate_table(view) if table else pretty_json(aggregate_json(view)) + "\n")
    return 0
