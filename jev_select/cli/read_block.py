"""``jev-select read-block [FILE|-] [--tested-sha SHA]``: the last plan block of a text as
JSON, fail-closed (exit 3 means "no usable plan; run every task").

Shell module (docs/reference.md, "Step summary and plan block").
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from .. import contracts as c
from ..core.jsonutil import pretty_json
from ..core.plan_block import read_plan_block
from ..edges.readers import read_text
from . import console

__all__ = ["register", "run_read_block"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``read-block`` to the ``jev-select`` parser."""
    read_block = commands.add_parser(
        c.COMMAND_READ_BLOCK,
        help="print the last plan block of a text as JSON, fail-closed (exit 3: run everything)",
        exit_on_error=False,
    )
    read_block.add_argument("file", nargs="?", default=c.STDIN_PATH)
    read_block.add_argument("--tested-sha")
    read_block.set_defaults(handler=run_read_block)


def run_read_block(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select read-block [FILE|-] [--tested-sha SHA]``: exit 0 with the plan as JSON, or
    exit 3 meaning "no usable plan; run every task"."""
    text = read_text(namespace.file, c.READ_BLOCK_MAX_BYTES)
    block = (
        read_plan_block(text, expected_tested_sha=namespace.tested_sha)
        if text is not None
        else None
    )
    if block is None:
        console.emit_for(c.NO_PLAN_BLOCK_MESSAGE, environ, level="warning")
        return c.NO_PLAN_BLOCK_EXIT_CODE
    console.write(pretty_json(block.to_json()) + "\n")
    return 0
