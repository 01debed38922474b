"""``jev-select block REPORT``: the plan block of a valid report, for embedding elsewhere.

Shell module (docs/reference.md, "Step summary and plan block").
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from .. import contracts as c
from ..core.plan_block import render_plan_block
from ..edges.readers import read_report
from ..version import __version__
from . import console

__all__ = ["register", "run_block"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``block`` to the ``jev-select`` parser."""
    block = commands.add_parser(
        c.COMMAND_BLOCK,
        help="print the plan block of a report",
        exit_on_error=False,
    )
    block.add_argument("report")
    block.set_defaults(handler=run_block)


def run_block(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select block REPORT``: the plan block of a valid report, for embedding elsewhere."""
    report = read_report(namespace.report)
    if report is None:
        console.emit_for(c.BLOCK_INVALID_REPORT_MESSAGE, environ)
        return 1
    console.write(render_plan_block(report, __version__))
    return 0
