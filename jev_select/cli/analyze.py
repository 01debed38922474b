"""``jev-select analyze REPORT RESULTS [REPORT RESULTS ...]``: shadow reports against CI results.

Shell module (docs/reference.md, "Shadow analysis"). Each pair is read and refused exactly as
``calibrate`` reads and refuses it (``edges.readers``); the output is the analysis as JSON or a
table, or one fixed line naming the first failing check.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from .. import contracts as c
from ..core.jsonutil import pretty_json
from ..core.shadow import AnalysisError, aggregate, aggregate_table, analysis_table
from ..edges.readers import read_analysis
from ..errors import InvocationError
from . import console

__all__ = ["register", "run_analyze"]


def register(commands: argparse._SubParsersAction[Any]) -> None:
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
    try:
        analyses = [
            read_analysis(paths[index], paths[index + 1]) for index in range(0, len(paths), 2)
        ]
    except AnalysisError as error:
        code = (
            error.code if error.code in c.ANALYSIS_CODES else c.ANALYSIS_INVALID_SHADOW_MEASUREMENT
        )
        console.emit_for(c.ANALYSIS_FAILURE_TEMPLATE.format(code=code), environ)
        return 1
    table = namespace.format == c.ANALYSIS_FORMAT_TABLE
    if len(analyses) == 1:
        console.write(analysis_table(analyses[0]) if table else pretty_json(analyses[0]) + "\n")
    else:
        view = aggregate(analyses)
        console.write(aggregate_table(view) if table else pretty_json(view) + "\n")
    return 0
