"""``jev-select results``: the results file of a report, from the jobs of one workflow run.

Shell module (docs/reference.md, "Shadow analysis"). The jobs come from the GitHub REST API; the
file is written atomically, or not at all, and a failure is one fixed line with its code.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping

from .. import contracts as c
from ..core.inputs import is_repository_name
from ..core.jsonutil import pretty_json
from ..core.results import (
    CiSource,
    ResultsFailure,
    build_results,
    job_outcome,
    parse_job_map,
    results_json,
    validate_results,
)
from ..core.rollout import workflow_reference
from ..edges.files import write_atomically
from ..edges.github.api import GitHubApi, api_root_from_environment
from ..edges.readers import read_json, read_report
from ..errors import InvocationError
from .arguments import integer_in

__all__ = ["register", "results_from_jobs", "run_results"]


# argparse names the type in its error line: this is the name that line has always shown.
_POSITIVE_INTEGER = integer_in(1, name="_positive_integer")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``results`` to the ``jev-select`` parser."""
    results = commands.add_parser(
        c.COMMAND_RESULTS,
        help="write a results file for a report from the jobs of a workflow run",
        exit_on_error=False,
    )
    results.add_argument("--run-id", required=True, type=_POSITIVE_INTEGER)
    results.add_argument("--attempt", type=_POSITIVE_INTEGER, default=1)
    results.add_argument("--map", dest="job_map", help="JSON file mapping job names to task IDs")
    results.add_argument(
        "--workflow",
        metavar="FILE",
        help="the run's workflow file (or ID): the results file then carries the ci block",
    )
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
    _build_results_file(namespace, environ)
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
    ci = None
    if namespace.workflow is not None:
        workflow = workflow_reference(namespace.workflow)
        if workflow is None:
            raise InvocationError("--workflow: a workflow file name or ID")
        ci = CiSource(workflow=workflow, run_id=namespace.run_id, run_attempt=namespace.attempt)
    token = environ.get(namespace.token_env, "")
    records = GitHubApi(root, token).list_jobs(repository, namespace.run_id, namespace.attempt)
    if records is None:
        raise ResultsFailure(c.RESULTS_JOBS_UNAVAILABLE)
    results = results_from_jobs(report, records, job_map, ci=ci)
    try:
        write_atomically(
            namespace.output, pretty_json(results) + "\n", prefix=".jev-select-results-"
        )
    except OSError:
        raise ResultsFailure(c.RESULTS_UNWRITABLE) from None


def results_from_jobs(
    report: Mapping[str, object],
    records: Iterable[Mapping[str, object]],
    job_map: Mapping[str, str] | None,
    *,
    ci: CiSource | None = None,
) -> dict[str, object]:
    """The results file of ``report``, as JSON, from one run's job records as the REST API lists
    them (``rollout`` and ``history`` build their files with this too); with ``ci``, the file
    carries the ``ci`` block of that run attempt."""
    jobs = [outcome for outcome in map(job_outcome, records) if outcome is not None]
    results = results_json(build_results(report, jobs, job_map, ci=ci))
    if not validate_results(results):
        raise RuntimeError()  # a bug, not a measurement problem: internal-error
    return results
