"""Subcommands beyond ``plan``: ``analyze``, ``results``, ``block`` and ``read-block``.

Edge module. Each handler reads its files, calls the pure core and prints either its result or
one fixed line; nothing read from a file, the API or the environment is ever echoed. As for
``plan``, diagnostics go to stderr, or to stdout as workflow commands in GitHub mode.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import tempfile
from collections.abc import Mapping
from typing import Any

from . import console
from . import contracts as c
from .calibrate_command import register_calibrate
from .check_command import register_check
from .core.inputs import is_repository_name
from .core.jsonutil import pretty_json
from .core.plan_block import PlanBlock, read_plan_block, render_plan_block
from .core.results import (
    ResultsFailure,
    build_results,
    job_outcome,
    parse_job_map,
    validate_results,
)
from .core.shadow import AnalysisError, aggregate, aggregate_table, analysis_table, analyze_shadow
from .edges.github_api import GitHubApi, api_root_from_environment
from .edges.readers import read_json, read_measurement, read_report, read_text
from .errors import InvocationError
from .history_command import register_history
from .replay.command import register_replay
from .rollout_command import register_rollout
from .version import __version__

__all__ = [
    "plan_json",
    "register",
    "run_analyze",
    "run_block",
    "run_read_block",
    "run_results",
]


def _positive_integer(text: str) -> int:
    if re.fullmatch(c.POSITIVE_INTEGER_PATTERN, text, re.ASCII) is None:
        raise ValueError()
    return int(text)


def register(commands: argparse._SubParsersAction[Any]) -> None:
    """Add every extra subcommand to the ``jev-select`` parser."""
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

    results = commands.add_parser(
        c.COMMAND_RESULTS,
        help="write a results file for a report from the jobs of a workflow run",
        exit_on_error=False,
    )
    results.add_argument("--run-id", required=True, type=_positive_integer)
    results.add_argument("--attempt", type=_positive_integer, default=1)
    results.add_argument("--map", dest="job_map", help="JSON file mapping job names to task IDs")
    results.add_argument("--report", required=True)
    results.add_argument("--output", required=True)
    results.add_argument(
        "--token-env",
        default=c.LOCAL_GITHUB_TOKEN_ENV,
        help="environment variable holding the GitHub token",
    )
    results.set_defaults(handler=run_results)

    block = commands.add_parser(
        c.COMMAND_BLOCK,
        help="print the plan block of a report",
        exit_on_error=False,
    )
    block.add_argument("report")
    block.set_defaults(handler=run_block)

    read_block = commands.add_parser(
        c.COMMAND_READ_BLOCK,
        help="print the last plan block of a text as JSON, fail-closed (exit 3: run everything)",
        exit_on_error=False,
    )
    read_block.add_argument("file", nargs="?", default=c.STDIN_PATH)
    read_block.add_argument("--tested-sha")
    read_block.set_defaults(handler=run_read_block)
    register_replay(commands)
    register_check(commands)
    register_calibrate(commands)
    register_history(commands)
    register_rollout(commands)


# ---------------------------------------------------------------------------------------------
# analyze
# ---------------------------------------------------------------------------------------------


def run_analyze(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select analyze REPORT RESULTS [REPORT RESULTS ...]`` (docs/reference.md,
    "Shadow analysis")."""
    paths: list[str] = namespace.paths
    if len(paths) % 2:
        raise InvocationError("REPORT and RESULTS files come in pairs")
    try:
        analyses = [
            _analyze_pair(paths[index], paths[index + 1]) for index in range(0, len(paths), 2)
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


def _analyze_pair(report_path: str, results_path: str) -> dict[str, Any]:
    measurement = read_measurement(report_path, results_path)
    return analyze_shadow(measurement.report, measurement.results)


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------


def run_results(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select results``: the results file of a report, from one run's jobs."""
    try:
        _build_results_file(namespace, environ)
    except ResultsFailure as failure:
        code = failure.code if failure.code in c.RESULTS_FAILURE_CODES else c.RESULTS_UNWRITABLE
        console.emit_for(c.RESULTS_FAILURE_TEMPLATE.format(code=code), environ)
        return 1
    return 0


def _build_results_file(namespace: argparse.Namespace, environ: Mapping[str, str]) -> None:
    report = read_report(namespace.report)
    if report is None:
        raise ResultsFailure(c.RESULTS_INVALID_REPORT)
    job_map = None
    if namespace.job_map is not None:
        job_map = parse_job_map(read_json(namespace.job_map, c.RESULTS_READ_MAX_BYTES))
    repository = environ.get("GITHUB_REPOSITORY", "")
    root = api_root_from_environment(environ)
    if root is None or not is_repository_name(repository):
        raise ResultsFailure(c.RESULTS_INVALID_SETTINGS)
    token = environ.get(namespace.token_env, "")
    records = GitHubApi(root, token).list_jobs(repository, namespace.run_id, namespace.attempt)
    if records is None:
        raise ResultsFailure(c.RESULTS_JOBS_UNAVAILABLE)
    jobs = [outcome for outcome in map(job_outcome, records) if outcome is not None]
    results = build_results(report, jobs, job_map)
    if not validate_results(results):
        raise RuntimeError()  # a bug, not a measurement problem: internal-error
    _write_atomically(namespace.output, pretty_json(results) + "\n")


def _write_atomically(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    temporary: str | None = None
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".jev-select-results-")
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
        temporary = None
    except OSError:
        raise ResultsFailure(c.RESULTS_UNWRITABLE) from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


# ---------------------------------------------------------------------------------------------
# block and read-block
# ---------------------------------------------------------------------------------------------


def run_block(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select block REPORT``: the plan block of a valid report, for embedding elsewhere."""
    report = read_report(namespace.report)
    if report is None:
        console.emit_for(c.BLOCK_INVALID_REPORT_MESSAGE, environ)
        return 1
    console.write(render_plan_block(report, __version__))
    return 0


def plan_json(block: PlanBlock) -> dict[str, Any]:
    """A plan block's fields in the block's own names and order (docs/reference.md,
    "Step summary and plan block")."""
    return {
        "schemaVersion": block.schema_version,
        "engineVersion": block.engine_version,
        "reportVersion": block.report_version,
        "testedSha": block.tested_sha,
        "baseSha": block.base_sha,
        "headSha": block.head_sha,
        "selectionHash": block.selection_hash,
        c.PLAN_BLOCK_FIELD_MODE: block.mode,
        c.PLAN_BLOCK_FIELD_STATUS: block.status,
        c.PLAN_BLOCK_FIELD_RUN: dict(block.run),
        c.PLAN_BLOCK_FIELD_SELECTED: list(block.selected),
    }


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
    console.write(pretty_json(plan_json(block)) + "\n")
    return 0
