"""``jev-select plan``: its command line and what its two modes share.

Shell module. GitHub mode (:mod:`.plan_github`) takes its inputs from ``INPUT_*`` variables and
refuses the local-mode flags; local mode (:mod:`.plan_local`) takes them as flags and compares two
commits of a repository on this disk.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import contracts as c
from ..errors import InputError
from . import console

__all__ = ["LOCAL_ONLY_FLAGS", "add_plan_parser", "emit_tasks_hint"]

# Inputs that local mode takes as flags (docs/reference.md, "Local use"); GitHub mode reads them
# from INPUT_* only.
_LOCAL_INPUT_FLAGS = (
    c.INPUT_MODE,
    c.INPUT_MODEL,
    c.INPUT_SKIP_BELOW,
    c.INPUT_API_BASE_URL,
    c.INPUT_API_MODEL,
    c.INPUT_TESTED_REF,
    c.INPUT_TIMEOUT_MS,
    c.INPUT_MAX_DIFF_BYTES,
)
_LOCAL_SWITCHES = (c.INPUT_ALLOW_EXTERNAL_CONTEXT, c.INPUT_FORCE_ALL)
LOCAL_ONLY_FLAGS = tuple(
    name.replace("-", "_")
    for name in (
        c.FIELD_TASKS_FILE,
        c.FIELD_REPO,
        c.FIELD_BASE,
        c.FIELD_HEAD,
        *_LOCAL_INPUT_FLAGS,
        *_LOCAL_SWITCHES,
        c.FLAG_JSON,
        c.FLAG_REPORT,
    )
)


def add_plan_parser(commands: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    """Add ``plan`` and its arguments to the ``jev-select`` parser; the caller sets the handler."""
    plan: argparse.ArgumentParser = commands.add_parser(
        c.COMMAND_PLAN,
        help="plan which tasks run (GitHub Actions, or a local repository)",
        description=(
            "Plan which tasks run. In GitHub Actions (GITHUB_ACTIONS=true) the inputs come from "
            "INPUT_* variables; otherwise the command compares two commits of a local repository."
        ),
        epilog=c.PLAN_HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        exit_on_error=False,
    )
    plan.add_argument(
        f"--{c.FIELD_REMOTE}", help="fetch source: https:// URL, loopback http:// URL or path"
    )
    plan.add_argument(f"--{c.FIELD_TASKS_FILE}", help="local mode: the task table file")
    plan.add_argument(f"--{c.FIELD_REPO}", help="local mode: the repository (default .)")
    plan.add_argument(f"--{c.FIELD_BASE}", help="local mode: base revision")
    plan.add_argument(f"--{c.FIELD_HEAD}", help="local mode: head revision (default HEAD)")
    for spec in c.INPUTS:
        if spec.name in _LOCAL_INPUT_FLAGS:
            plan.add_argument(f"--{spec.name}", help=f"local mode: {spec.description}")
    plan.add_argument(
        f"--{c.INPUT_ALLOW_EXTERNAL_CONTEXT}",
        action="store_true",
        default=None,
        help="local mode: allow sending the diff and metadata to Jev",
    )
    plan.add_argument(
        f"--{c.INPUT_FORCE_ALL}",
        action="store_true",
        default=None,
        help="local mode: run every task without asking Jev",
    )
    plan.add_argument(
        f"--{c.FLAG_JSON}",
        action="store_true",
        default=None,
        help="local mode: print the report and the preview (one JSON document) to stdout "
        "instead of the table",
    )
    plan.add_argument(
        f"--{c.FLAG_REPORT}",
        metavar="PATH",
        help="local mode: write the report to PATH (default: one file per repository in the "
        "temporary directory, replaced by each run)",
    )
    return plan


def emit_tasks_hint(error: BaseException, *, github: bool) -> None:
    """The fixed second line after an input error of the task table: where to find the fault."""
    if type(error) is InputError and error.field in (c.INPUT_TASKS, c.FIELD_TASKS_FILE):
        console.emit(c.TASKS_CHECK_HINT, github=github, level="notice")
