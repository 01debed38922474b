"""``jev-select rollout``: an observer workflow's shadow reports and the CI results of the same
commits, collected from GitHub in one command.

Shell module. It lists the observer's completed runs, downloads each run's report artifact,
finds the CI run that tested the same commit (``core.rollout``), builds the results file from
that run's jobs with the ``results`` logic, and leaves ``DIR/<observer run>/report.json`` and
``results.json`` for labelling and ``calibrate``. Each run directory appears whole or not at all;
one that already exists is left alone, so labels added to it survive a later collection.
"""

from __future__ import annotations

import argparse
import datetime
import os
from collections.abc import Mapping

import attrs

from .. import contracts as c
from ..core.history import calendar_date
from ..core.inputs import is_repository_name
from ..core.jsonutil import pretty_json
from ..core.results import CiSource, ResultsFailure, parse_job_map
from ..core.rollout import (
    AnswerRefused,
    RunOutcome,
    WorkflowRun,
    ci_query_sha,
    match_ci_run,
    report_artifact,
    report_fits_run,
    rollout_text,
    workflow_reference,
    workflow_run,
)
from ..edges.files import write_directory_atomically
from ..edges.github.actions import ActionsHistory, ArtifactGone, RateLimitExceeded
from ..edges.github.api import api_root_from_environment
from ..edges.github.artifacts import report_from_zip
from ..edges.httpio import HttpFailure, HttpTooLarge
from ..edges.readers import parse_report, read_json
from ..errors import CommandFailure, InvocationError
from . import console
from .actions_client import actions_client, add_actions_arguments
from .arguments import integer_in
from .progress import end_steps, show_step
from .results import results_from_jobs

__all__ = ["register", "run_rollout"]

_FIRST_ATTEMPT = 1
_NOT_FOUND = 404


class RolloutFailure(CommandFailure, failures=c.ROLLOUT_FAILURES):
    """The collection stopped; carries a code of ``ROLLOUT_FAILURE_CODES``."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``rollout`` to the ``jev-select`` parser."""
    rollout = commands.add_parser(
        c.COMMAND_ROLLOUT,
        help="collect an observer's shadow reports and the CI results of the same commits",
        description=(
            "List the completed runs of a shadow observer workflow, download each run's report "
            "artifact, find the CI run that tested the same commit, and write "
            "DIR/<observer run>/report.json and results.json for labelling and calibrate. "
            "The token comes from the environment (--token-env), the API root from "
            "GITHUB_API_URL or GITHUB_SERVER_URL."
        ),
        exit_on_error=False,
    )
    rollout.add_argument("--repository", required=True, metavar="OWNER/NAME")
    rollout.add_argument(
        "--observer-workflow",
        required=True,
        metavar="FILE",
        help="the shadow observer's workflow file (or ID)",
    )
    rollout.add_argument(
        "--ci-workflow",
        required=True,
        metavar="FILE",
        help="the workflow whose jobs are the tasks (or ID)",
    )
    rollout.add_argument(
        "--since",
        metavar="DATE",
        help=f"observer runs created since DATE (YYYY-MM-DD; default "
        f"{c.ROLLOUT_DEFAULT_SINCE_DAYS} days ago)",
    )
    rollout.add_argument(
        "--out", required=True, metavar="DIR", help="directory for <run-id>/ measurements"
    )
    rollout.add_argument(
        "--max-runs",
        metavar="N",
        type=integer_in(1, c.ROLLOUT_MAX_RUNS),
        default=c.ROLLOUT_DEFAULT_MAX_RUNS,
        help="the newest N observer runs at most (default %(default)s)",
    )
    rollout.add_argument(
        "--format", choices=c.ROLLOUT_FORMATS, default=c.ROLLOUT_FORMAT_TABLE, dest="format"
    )
    add_actions_arguments(rollout)
    rollout.set_defaults(handler=run_rollout)


@attrs.frozen
class _Settings:
    repository: str
    observer_workflow: str
    ci_workflow: str
    since: str
    out: str
    max_runs: int
    job_map: Mapping[str, str] | None


def _since(text: str | None, today: datetime.date) -> str:
    if text is None:
        return (today - datetime.timedelta(days=c.ROLLOUT_DEFAULT_SINCE_DAYS)).isoformat()
    since = calendar_date(text)
    if since is None:
        raise InvocationError("--since: a date YYYY-MM-DD")
    return since


def _settings(namespace: argparse.Namespace) -> _Settings:
    if not is_repository_name(namespace.repository):
        raise InvocationError("--repository: owner/name")
    observer = workflow_reference(namespace.observer_workflow)
    ci = workflow_reference(namespace.ci_workflow)
    if observer is None or ci is None:
        raise InvocationError("--observer-workflow, --ci-workflow: a workflow file name or ID")
    since = _since(namespace.since, datetime.datetime.now(datetime.UTC).date())
    job_map = None
    if namespace.job_map is not None:
        try:
            job_map = parse_job_map(read_json(namespace.job_map, c.RESULTS_READ_MAX_BYTES))
        except ResultsFailure:
            raise RolloutFailure(c.ROLLOUT_INVALID_JOB_MAP) from None
    return _Settings(
        repository=namespace.repository,
        observer_workflow=observer,
        ci_workflow=ci,
        since=since,
        out=namespace.out,
        max_runs=namespace.max_runs,
        job_map=job_map,
    )


def run_rollout(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select rollout``: prints the outcome per observer run and the summary line."""
    settings = _settings(namespace)
    root = api_root_from_environment(environ)
    if root is None:
        raise RolloutFailure(c.ROLLOUT_INVALID_SETTINGS)

    client = actions_client(root, namespace, environ)
    outcomes = _Collector(client, settings).collect()
    console.write(rollout_text(outcomes, namespace.format))
    return 0


class _Collector:
    """One walk over the observer's runs."""

    def __init__(self, client: ActionsHistory, settings: _Settings) -> None:
        self._client = client
        self._settings = settings
        self._ci_runs: dict[tuple[str, str], list[WorkflowRun]] = {}

    def collect(self) -> list[RunOutcome]:
        settings = self._settings
        try:
            os.makedirs(settings.out, exist_ok=True)
        except OSError:
            raise RolloutFailure(c.ROLLOUT_OUT_UNWRITABLE) from None
        try:
            records = self._runs_of(
                settings.observer_workflow,
                limit=settings.max_runs,
                created_since=settings.since,
                completed=True,
            )
            # Runs created while the pages are read shift them: a run may come twice.
            runs = list({run.id: run for run in map(workflow_run, records)}.values())
            outcomes: list[RunOutcome] = []
            for index, run in enumerate(runs, start=1):
                show_step("collecting", index, len(runs), str(run.id))
                outcomes.append(self._one(run))
            return outcomes
        except AnswerRefused:
            raise RolloutFailure(c.ROLLOUT_INVALID_ANSWER) from None
        except RateLimitExceeded:
            raise RolloutFailure(c.ROLLOUT_RATE_LIMITED) from None
        except HttpFailure:
            raise RolloutFailure(c.ROLLOUT_GITHUB_UNAVAILABLE) from None
        finally:
            end_steps()

    def _one(self, run: WorkflowRun) -> RunOutcome:
        settings = self._settings
        target = os.path.join(settings.out, str(run.id))
        if os.path.lexists(target):
            return RunOutcome(run.id, c.ROLLOUT_EXISTING)
        artifact = report_artifact(run.id, self._client.run_artifacts(settings.repository, run.id))
        if artifact is None:
            return RunOutcome(run.id, c.ROLLOUT_MISSING, c.ROLLOUT_DETAIL_NO_ARTIFACT)
        if artifact.expired:
            return RunOutcome(run.id, c.ROLLOUT_MISSING, c.ROLLOUT_DETAIL_ARTIFACT_EXPIRED)
        if artifact.size > c.ROLLOUT_ARTIFACT_MAX_BYTES:
            return RunOutcome(run.id, c.ROLLOUT_REJECTED, c.ROLLOUT_DETAIL_ARTIFACT_TOO_LARGE)
        try:
            archive = self._client.download_artifact(settings.repository, artifact.id)
        except ArtifactGone:
            return RunOutcome(run.id, c.ROLLOUT_MISSING, c.ROLLOUT_DETAIL_ARTIFACT_EXPIRED)
        except HttpTooLarge:
            return RunOutcome(run.id, c.ROLLOUT_REJECTED, c.ROLLOUT_DETAIL_ARTIFACT_TOO_LARGE)
        except HttpFailure:
            # Storage that fails, redirects again or times out: this run is not collected now;
            # no directory is written, so the next collection tries it again.
            return RunOutcome(run.id, c.ROLLOUT_REJECTED, c.ROLLOUT_DETAIL_ARTIFACT_UNAVAILABLE)
        content = report_from_zip(archive)
        if isinstance(content, str):
            return RunOutcome(run.id, c.ROLLOUT_REJECTED, content)
        report = parse_report(content)
        if report is None:
            return RunOutcome(run.id, c.ROLLOUT_REJECTED, c.ROLLOUT_DETAIL_REPORT_INVALID)
        tested_sha = report["tested_sha"]
        assert isinstance(tested_sha, str)  # the schema the report passed requires a string
        if report[c.REPORT_FIELD_MODE] != c.MODE_SHADOW:
            return RunOutcome(
                run.id, c.ROLLOUT_REJECTED, c.ROLLOUT_DETAIL_REPORT_NOT_SHADOW, None, tested_sha
            )
        if not report_fits_run(report, run):
            return RunOutcome(
                run.id, c.ROLLOUT_REJECTED, c.ROLLOUT_DETAIL_REPORT_NOT_THIS_RUN, None, tested_sha
            )
        match = match_ci_run(report, run.event, self._candidates(ci_query_sha(report), run.event))
        if match.run is None:
            return RunOutcome(run.id, c.ROLLOUT_UNMATCHED, match.detail, None, tested_sha)
        # The first attempt: a re-run answers its outcome, and a failure that a re-run hid is
        # exactly what calibration must see.
        records = self._client.list_jobs(settings.repository, match.run.id, _FIRST_ATTEMPT)
        if records is None:
            raise RolloutFailure(c.ROLLOUT_GITHUB_UNAVAILABLE)
        # The ci block names every job of that attempt; the workflow file is not read here, so
        # job IDs stay null and needs empty.
        source = CiSource(
            workflow=settings.ci_workflow, run_id=match.run.id, run_attempt=_FIRST_ATTEMPT
        )
        results = results_from_jobs(report, records, settings.job_map, ci=source)
        _write_measurement(target, content, pretty_json(results) + "\n")
        return RunOutcome(run.id, c.ROLLOUT_COLLECTED, None, match.run.id, tested_sha)

    def _candidates(self, head_sha: str, event: str) -> list[WorkflowRun]:
        key = (head_sha, event)
        if key not in self._ci_runs:
            records = self._runs_of(
                self._settings.ci_workflow,
                limit=c.ROLLOUT_PER_PAGE * c.ROLLOUT_MAX_PAGES,
                head_sha=head_sha,
                event=event,
            )
            self._ci_runs[key] = [workflow_run(record) for record in records]
        return self._ci_runs[key]

    def _runs_of(
        self,
        workflow: str,
        *,
        limit: int,
        created_since: str | None = None,
        completed: bool = False,
        head_sha: str | None = None,
        event: str | None = None,
    ) -> list[object]:
        """A workflow's runs; a 404 means the workflow (or the repository) is not there for
        this token, most often a misspelt file name."""
        try:
            return self._client.workflow_runs(
                self._settings.repository,
                workflow,
                limit=limit,
                created_since=created_since,
                completed=completed,
                head_sha=head_sha,
                event=event,
            )
        except HttpFailure as failure:
            if failure.status == _NOT_FOUND:
                raise RolloutFailure(c.ROLLOUT_WORKFLOW_NOT_FOUND) from None
            raise


def _write_measurement(target: str, report: bytes, results: str) -> None:
    """``target/report.json`` (the artifact's bytes as downloaded) and ``target/results.json``,
    appearing together."""
    files = ((c.REPORT_FILE_NAME, report), (c.CALIBRATE_RESULTS_FILE_NAME, results.encode("utf-8")))
    try:
        write_directory_atomically(target, files, prefix=".jev-select-rollout-")
    except OSError:
        raise RolloutFailure(c.ROLLOUT_OUT_UNWRITABLE) from None
