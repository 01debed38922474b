"""``jev-select results``: the results file of a report, from the jobs of one workflow run.

Shell module (docs/reference.md, "Shadow analysis"). The jobs come from the GitHub REST API; the
file is written atomically, or not at all, and a failure is one fixed line with its code.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import tempfile
from collections.abc import Mapping
from typing import Any

from .. import contracts as c
from ..core.inputs import is_repository_name
from ..core.jsonutil import pretty_json
from ..core.results import (
    ResultsFailure,
    build_results,
    job_outcome,
    parse_job_map,
    validate_results,
)
from ..edges.github_api import GitHubApi, api_root_from_environment
from ..edges.readers import read_json, read_report
from . import console

__all__ = ["register", "run_results"]


def _positive_integer(text: str) -> int:
    if re.fullmatch(c.POSITIVE_INTEGER_PATTERN, text, re.ASCII) is None:
        raise ValueError()
    return int(text)


def register(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``results`` to the ``jev-select`` parser."""
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
