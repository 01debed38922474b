"""``jev-select plan`` in GitHub mode (``GITHUB_ACTIONS=true``): inputs from ``INPUT_*``.

Shell module (docs/reference.md, "Commands", "Failure codes", "Events", "Publication"). The masks
come first; the commits follow from the event (or the pull request named by input ``pull-request``);
the report and the outputs that name it are published atomically, then the step summary and, for
a same-repository pull request without key or consent, one warning naming the input to set. Every
failure is one fixed workflow command and exit code 1 with nothing published.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping

import attrs

from .. import contracts as c
from ..app.pipeline import PlanResult, RunContext, run_plan_pipeline
from ..app.settings import lookup_cause_of, metadata_lookups
from ..core.inputs import github_inputs, parse_inputs
from ..core.lookup_causes import LookupCause
from ..core.models import Commits, Inputs, Plan
from ..core.object_ids import is_sha40
from ..core.render import log_line, render_outputs, render_summary
from ..core.report import report_text
from ..core.tasks import parse_tasks
from ..edges import cancellation
from ..edges.environment import (
    GitHubContext,
    is_merge_group_event,
    is_pull_request_event,
    parse_manual_number,
    parse_merge_group,
    parse_pull_request,
    read_github_context,
)
from ..edges.git.remotes import default_remote, normalise_remote
from ..edges.publish import (
    append_outputs,
    append_summary,
    close_outputs,
    mask_commands,
    open_outputs,
    remove_report,
    write_report,
)
from ..errors import InputError, InvocationError, PlanningFailure, failure_message
from ..version import __version__
from . import console
from .plan import LOCAL_ONLY_FLAGS, emit_tasks_hint

__all__ = ["print_masks", "run_github_plan"]

_INPUT_ENV = {spec.name: spec.env for spec in c.INPUTS}


def print_masks(environ: Mapping[str, str]) -> None:
    """The masks of the API key and the token, before anything else is printed."""
    secrets = (
        environ.get(_INPUT_ENV[c.INPUT_API_KEY]),
        environ.get(_INPUT_ENV[c.INPUT_GITHUB_TOKEN]),
    )
    for line in mask_commands(*secrets):
        _write_raw_line(line)


def _write_raw_line(line: str) -> None:
    """Write ``line`` with the bytes it came from: an environment value that was not UTF-8
    holds escaped bytes, and a mask only works on the exact bytes."""
    try:
        data = (line + "\n").encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = (line + "\n").encode("utf-8", "replace")
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8", "replace"))
    else:
        buffer.write(data)
        buffer.flush()


def run_github_plan(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """GitHub mode; ``main`` has already printed the masks."""
    out = sys.stdout
    report_path: str | None = None
    published = False
    try:
        if any(getattr(namespace, name) is not None for name in LOCAL_ONLY_FLAGS):
            raise InvocationError()
        inputs = parse_inputs(github_inputs(environ))
        remote_override = (
            normalise_remote(namespace.remote, cwd=os.getcwd())
            if namespace.remote is not None
            else None
        )
        context = read_github_context(environ)
        event = _github_commits(inputs, context)
        remote = remote_override or default_remote(context.server_origin, context.repository)
        if inputs.tasks_file is not None:
            inputs = _with_tasks_file(
                inputs,
                remote=remote,
                temp_root=context.temp_root,
                environ=environ,
                commits=event.commits,
            )
        validated_at = time.monotonic()
        run = RunContext(
            commits=event.commits,
            pull_request=event.pull_request,
            fork=event.fork,
            merge_queue=event.merge_queue,
            remote=remote,
            temp_root=context.temp_root,
            environ=environ,
            provenance_repository=context.repository,
            lookups=metadata_lookups(context.server_origin, context.api_url, inputs.github_token),
        )
        result = run_plan_pipeline(inputs, run, validated_at=validated_at)
        text = report_text(result.report)
        # Publication is atomic: the report is removed again unless the outputs that name it were
        # appended in full, and that append (one write, cut back on failure) is never stopped
        # halfway by a cancellation. The outputs are the plan; once they are written the run's
        # result stands, whatever comes after.
        with cancellation.deferred():
            report_path = write_report(text, context.temp_root)
        pairs = render_outputs(result.plan, result.report.tested_sha, report_path)
        descriptor = open_outputs(context.output_path)
        try:
            with cancellation.deferred():
                append_outputs(descriptor, pairs)
                published = True
                cancellation.mark_published()
        finally:
            close_outputs(descriptor)
    except cancellation.Cancelled as cancel:
        if not published:
            _cleanup(report_path)
        return console.cancelled(cancel, github=True, published=published)
    except InvocationError:
        _cleanup(report_path)
        console.emit(failure_message(c.FAILURE_INVALID_INVOCATION), github=True)
        return 1
    except Exception as error:
        _cleanup(report_path)
        console.emit(console.failure_text(error), github=True)
        emit_tasks_hint(error, github=True)
        return 1
    try:
        setup_missing = _setup_missing(event, result.plan)
        _publish_summary(
            context,
            inputs,
            result,
            setup_missing=setup_missing,
            lookup_cause=lookup_cause_of(run.lookups),
        )
        if setup_missing is not None:
            # After the outputs and whether or not there is a summary file: advice, never a
            # change to the plan. The text is fixed; it names an input, never a value.
            console.emit(c.SETUP_MISSING_WARNINGS[setup_missing], github=True, level="warning")
        out.write(log_line(result.plan, len(inputs.tasks)) + "\n")
        out.flush()
    except cancellation.Cancelled as cancel:
        return console.cancelled(cancel, github=True, published=True)
    return 0


def _with_tasks_file(
    inputs: Inputs,
    *,
    remote: str,
    temp_root: str,
    environ: Mapping[str, str],
    commits: Commits,
) -> Inputs:
    """``inputs`` with the table of input ``tasks-file``, read at the base commit (never the
    head). Unreadable is the input error of ``tasks-file``; bad content that of ``tasks``."""
    from ..edges.git.tasks_file import read_tasks_file

    assert inputs.tasks_file is not None
    text = read_tasks_file(
        remote=remote,
        token=inputs.github_token,
        temp_root=temp_root,
        environ=environ,
        commit=commits.base_sha,
        path=inputs.tasks_file,
    )
    if text is None:
        raise InputError(c.INPUT_TASKS_FILE)
    return attrs.evolve(inputs, tasks=parse_tasks(text))


def _cleanup(report_path: str | None) -> None:
    if report_path is not None:
        remove_report(report_path)


# The bypasses that only the repository's own setup causes on its own pull requests.
_SETUP_BYPASSES = (c.REASON_MISSING_API_KEY, c.REASON_EXTERNAL_CONTEXT_DISABLED)


def _setup_missing(event: _EventFacts, plan: Plan) -> c.Reason | None:
    """The reason a same-repository pull request was bypassed when the cause is its own missing
    setup (no key, or no consent), else None.

    Forks, non-pull-request events and merge queues are bypassed by design and get None. The
    reason is read from the plan: every task of a bypassed plan carries it (an empty table has
    nothing to run and so nothing to warn about).
    """
    if not event.pull_request or event.fork or event.merge_queue:
        return None
    if plan.status != c.STATUS_BYPASSED:
        return None
    for decision in plan.decisions.values():
        for reason in _SETUP_BYPASSES:
            if reason in decision.reasons:
                return reason
    return None


def _publish_summary(
    context: GitHubContext,
    inputs: Inputs,
    result: PlanResult,
    *,
    setup_missing: c.Reason | None = None,
    lookup_cause: LookupCause | None = None,
) -> None:
    if context.summary_path is None:
        return
    try:
        summary = render_summary(
            result.report,
            engine_version=__version__,
            notes=result.notes,
            table=inputs.tasks,
            changed_paths=result.changed_paths,
            setup_missing=setup_missing,
            lookup_cause=lookup_cause,
        )
    except Exception:
        console.emit(c.SUMMARY_UNAVAILABLE_WARNING, github=True, level="warning")
        return
    if summary.plan_block_omitted:
        console.emit(c.PLAN_BLOCK_OMITTED_WARNING, github=True, level="warning")
    if not append_summary(context.summary_path, summary.text):
        console.emit(c.SUMMARY_UNAVAILABLE_WARNING, github=True, level="warning")


@attrs.frozen
class _EventFacts:
    commits: Commits
    pull_request: bool  # a change to analyse (no non-pull-request bypass)
    fork: bool
    merge_queue: bool = False


def _github_commits(inputs: Inputs, context: GitHubContext) -> _EventFacts:
    """Commits, pull-request flag, fork flag and queue flag of docs/reference.md, "Events"."""
    number = parse_manual_number(inputs.pull_request, context.event_name)
    merge_mode = inputs.tested_ref == c.TESTED_REF_MERGE
    if number is not None:
        from ..edges.github.api import GitHubApi, api_root

        root = api_root(context.server_origin, context.api_url)
        if root is None:
            raise PlanningFailure(c.FAILURE_INVALID_ENVIRONMENT)
        pull = GitHubApi(root, inputs.github_token).get_pull(context.repository, number)
        if pull.get("state") != "open":
            raise PlanningFailure(c.FAILURE_MERGE_UNAVAILABLE)
        head = pull.get("head")
        tested = (
            pull.get("merge_commit_sha")
            if merge_mode
            else (head.get("sha") if isinstance(head, Mapping) else None)
        )
        # A merge commit the report cannot name (not 40 lowercase hex) is as unusable as none.
        if not isinstance(tested, str) or (merge_mode and not is_sha40(tested)):
            raise PlanningFailure(c.FAILURE_MERGE_UNAVAILABLE)
        facts = parse_pull_request(pull, context.repository)
        commits = Commits(
            base_sha=facts.base_sha,
            head_sha=facts.head_sha,
            tested_sha=tested,
            metadata_sha=context.sha,
        )
        return _EventFacts(commits, pull_request=True, fork=facts.fork)
    if is_pull_request_event(context.event_name):
        facts = parse_pull_request(context.event.get("pull_request"), context.repository)
        commits = Commits(
            base_sha=facts.base_sha,
            head_sha=facts.head_sha,
            tested_sha=context.sha if merge_mode else facts.head_sha,
            metadata_sha=facts.base_sha,
        )
        return _EventFacts(commits, pull_request=True, fork=facts.fork)
    if is_merge_group_event(context.event_name) and inputs.merge_group == c.MERGE_GROUP_SELECT:
        # Queue commits live in the repository itself: there is no fork to guard against.
        queue = parse_merge_group(context.event.get("merge_group"), context.sha)
        commits = Commits(
            base_sha=queue.base_sha,
            head_sha=queue.head_sha,
            tested_sha=queue.head_sha,
            metadata_sha=queue.base_sha,
        )
        return _EventFacts(commits, pull_request=True, fork=False, merge_queue=True)
    commits = Commits(
        base_sha=context.sha,
        head_sha=context.sha,
        tested_sha=context.sha,
        metadata_sha=context.sha,
    )
    return _EventFacts(commits, pull_request=False, fork=False)
