"""``jev-select history --repository OWNER/NAME --ci-workflow FILE``: each change measured on
GitHub.

Shell module, the GitHub half of ``history``: for each change the merged pull request (the number
of its subject, checked, else GitHub's link of commit and pull request), the last CI run of the
workflow on the pull request's head (``core.history.choose_ci_run``), and, when that run can be
measured, ``results.json`` beside the change's report, built by the code of ``jev-select
results``; also the change's keyless ``preview.json``. One client and one rate-limit budget per
command (the rules of ``rollout``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import contracts as c
from ..core.ci_jobs import JobAttribution, attribution_for, read_ci_workflow, workflow_path
from ..core.history import (
    Change,
    ChangeOutcome,
    HistoryCi,
    PullRequest,
    choose_ci_run,
    pull_request_for_commit,
    pull_request_number,
    pull_request_of,
)
from ..core.inputs import is_repository_name
from ..core.jsonutil import pretty_json, strict_loads
from ..core.models import TaskTable
from ..core.preview import PreviewFacts, preview_json, validate_preview
from ..core.results import CiSource, ResultsFailure, parse_job_map, parse_results
from ..core.rollout import workflow_reference
from ..edges.files import write_atomically
from ..edges.git.local import local_file_at
from ..edges.git.runner import GitTimeBound
from ..edges.github.roots import api_root_from_environment
from ..edges.readers import read_json, read_report
from ..errors import CommandFailure, InvocationError
from .actions_client import actions_client, add_actions_arguments
from .results import results_from_jobs

if TYPE_CHECKING:
    from ..edges.github.actions import ActionsHistory

__all__ = [
    "CiCollector",
    "HistoryFailure",
    "github_settings",
    "measured_before",
    "register_github",
    "write_preview",
]


class HistoryFailure(CommandFailure, failures=c.HISTORY_FAILURES):
    """The dry run stopped; carries a code of ``HISTORY_FAILURE_CODES``."""


_NOT_FOUND = 404


def register_github(history: argparse.ArgumentParser) -> None:
    """The flags of the GitHub half; without ``--repository`` none of them takes part."""
    history.add_argument(
        "--repository",
        metavar="OWNER/NAME",
        help="measure each change on GitHub: its pull request's last CI run (with --ci-workflow)",
    )
    history.add_argument(
        "--ci-workflow", metavar="FILE", help="the workflow whose jobs are the tasks (or ID)"
    )
    add_actions_arguments(history)


def github_settings(
    namespace: argparse.Namespace, environ: Mapping[str, str], table: TaskTable
) -> CiCollector | None:
    """The collector of the GitHub half, or None without ``--repository``."""
    if namespace.repository is None and namespace.ci_workflow is None:
        return None
    if namespace.repository is None or namespace.ci_workflow is None:
        raise InvocationError("--repository, --ci-workflow: both or neither")
    if not is_repository_name(namespace.repository):
        raise InvocationError("--repository: owner/name")
    workflow = workflow_reference(namespace.ci_workflow)
    if workflow is None:
        raise InvocationError("--ci-workflow: a workflow file name or ID")
    job_map = None
    if namespace.job_map is not None:
        try:
            job_map = parse_job_map(read_json(namespace.job_map, c.RESULTS_READ_MAX_BYTES))
        except ResultsFailure:
            raise HistoryFailure(c.HISTORY_INVALID_JOB_MAP) from None
    root = api_root_from_environment(environ)
    if root is None:
        raise HistoryFailure(c.HISTORY_INVALID_SETTINGS)
    client = actions_client(root, namespace, environ)
    return CiCollector(client, namespace.repository, workflow, job_map, table, environ)


def write_preview(directory: str, table: TaskTable, facts: PreviewFacts) -> str:
    """``directory/preview.json``: the change's keyless preview, as ``plan --json`` shows it."""
    document = preview_json(table, facts)
    if not validate_preview(document):
        raise RuntimeError()  # a bug, not a measurement problem: internal-error
    path = os.path.join(directory, c.PREVIEW_FILE_NAME)
    write_atomically(path, pretty_json(document) + "\n", prefix=".jev-select-preview-")
    return path


class CiCollector:
    """The GitHub half of one history run: one client, one rate-limit budget."""

    def __init__(
        self,
        client: ActionsHistory,
        repository: str,
        workflow: str,
        job_map: Mapping[str, str] | None,
        table: TaskTable,
        environ: Mapping[str, str],
    ) -> None:
        self._client = client
        self._repository = repository
        self._workflow = workflow
        self._job_map = job_map
        self._table = table
        self._environ = environ

    def measure(
        self,
        change: Change,
        report: str,
        directory: str,
        preview: str,
        repo: str,
        bound: GitTimeBound,
    ) -> HistoryCi:
        """The CI outcome of one change; ``directory/results.json`` when it was measured.

        A change whose results file exists is left alone, without a request. Failures of the
        whole command raise ``HistoryFailure`` with a fixed code, nothing of the answer.
        """
        from ..core.rollout import AnswerRefused
        from ..edges.github.actions import RateLimitExceeded
        from ..edges.httpio import HttpFailure

        target = os.path.join(directory, c.CALIBRATE_RESULTS_FILE_NAME)
        if os.path.lexists(target):
            return HistoryCi(c.HISTORY_CI_EXISTING, results=target, preview=preview)
        try:
            return self._measure(change, report, target, preview, repo, bound)
        except AnswerRefused:
            raise HistoryFailure(c.HISTORY_INVALID_ANSWER) from None
        except RateLimitExceeded:
            raise HistoryFailure(c.HISTORY_RATE_LIMITED) from None
        except HttpFailure:
            raise HistoryFailure(c.HISTORY_GITHUB_UNAVAILABLE) from None

    def _pull_request(self, change: Change) -> PullRequest | None:
        number = pull_request_number(change)
        if number is not None:
            record = self._client.pull_request(self._repository, number)
            found = pull_request_of(record, change) if record is not None else None
            if found is not None:
                return found
        # No number, or one that is not this change's: GitHub's own link of commit and pull.
        records = self._client.commit_pulls(self._repository, change.head)
        return pull_request_for_commit(records, change) if records is not None else None

    def _runs(self, head_sha: str) -> list[object]:
        from ..edges.httpio import HttpFailure

        try:
            return self._client.workflow_runs(
                self._repository,
                self._workflow,
                limit=c.HISTORY_CI_RUNS_LIMIT,
                head_sha=head_sha,
                event=c.HISTORY_CI_EVENT,
            )
        except HttpFailure as failure:
            if failure.status == _NOT_FOUND:
                raise HistoryFailure(c.HISTORY_WORKFLOW_NOT_FOUND) from None
            raise

    def _attribution(self, commit: str, repo: str, bound: GitTimeBound) -> JobAttribution:
        """The table's ``jobs:`` references against the workflow file at ``commit``."""
        path = workflow_path(self._workflow)
        data = (
            local_file_at(
                repo, commit, path, c.HISTORY_WORKFLOW_FILE_CAP, self._environ, bound=bound
            )
            if path is not None
            else None
        )
        jobs = read_ci_workflow(data) if data is not None else None
        return attribution_for(self._table, self._workflow, jobs)

    def _measure(
        self,
        change: Change,
        report: str,
        target: str,
        preview: str,
        repo: str,
        bound: GitTimeBound,
    ) -> HistoryCi:
        pull = self._pull_request(change)
        if pull is None:
            return HistoryCi(c.HISTORY_CI_PULL_REQUEST_NOT_FOUND, preview=preview)
        choice = choose_ci_run(self._runs(pull.head_sha), pull.head_sha)
        run = choice.run
        if choice.outcome != c.HISTORY_CI_MEASURED or run is None:
            return HistoryCi(
                choice.outcome,
                pull_request=pull.number,
                ci_run=run.id if run is not None else None,
                preview=preview,
            )
        records = self._client.list_jobs(self._repository, run.id, run.attempt)
        if records is None:
            raise HistoryFailure(c.HISTORY_GITHUB_UNAVAILABLE)
        source = CiSource(
            workflow=self._workflow,
            run_id=run.id,
            run_attempt=run.attempt,
            attribution=self._attribution(change.head, repo, bound),
        )
        results = results_from_jobs(strict_loads(report), records, self._job_map, ci=source)
        try:
            write_atomically(target, pretty_json(results) + "\n", prefix=".jev-select-results-")
        except OSError:
            raise HistoryFailure(c.HISTORY_OUT_UNWRITABLE) from None
        return HistoryCi(
            c.HISTORY_CI_MEASURED,
            pull_request=pull.number,
            ci_run=run.id,
            results=target,
            preview=preview,
        )


def measured_before(change: Change, directory: str) -> ChangeOutcome | None:
    """The outcome of a change an earlier run measured into ``directory``: its report, results
    and preview all there, valid and naming this change; None when anything is missing or does
    not fit, and the change is planned and asked about again."""
    from ..core.report_v5 import as_report
    from ..edges.measurements import read_preview

    report_path = os.path.join(directory, c.REPORT_FILE_NAME)
    results_path = os.path.join(directory, c.CALIBRATE_RESULTS_FILE_NAME)
    preview_path = os.path.join(directory, c.PREVIEW_FILE_NAME)
    if not all(os.path.isfile(path) for path in (report_path, results_path, preview_path)):
        return None
    report = read_report(report_path)
    results = parse_results(read_json(results_path, c.RESULTS_READ_MAX_BYTES))
    preview = read_preview(preview_path)
    if report is None or results is None or preview is None:
        return None
    typed = as_report(report)
    if (typed.base_sha, typed.tested_sha) != (change.base, change.head):
        return None
    if results.tested_sha != typed.tested_sha or set(results.tasks) != set(typed.tasks):
        return None
    keyed = preview.keyed_run.reason
    whole = (keyed,) if keyed is not None else ()
    forced = {task.task: task.reasons for task in preview.forced_tasks}
    status = (
        c.STATUS_PLANNED
        if keyed is None
        else c.STATUS_BYPASSED
        if keyed in (*c.BYPASS_REASONS, c.REASON_PROTECTED_PATH)
        else c.STATUS_FALLBACK
    )
    return ChangeOutcome(
        change=change,
        report=typed,
        report_path=report_path,
        preview_reasons={task: (*whole, *forced.get(task, ())) for task in typed.tasks},
        preview_status=status,
        gaps=preview.gaps,
        requests=preview.keyed_run.requests,
        collection_ms=0.0,
        ci=HistoryCi(c.HISTORY_CI_EXISTING, results=results_path, preview=preview_path),
    )
