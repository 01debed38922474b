"""``jev-select history``: the local plan, in shadow mode, on each recent merged change.

Shell module. It lists the first-parent history of a local repository, picks the merged changes
(``core.history.select_changes``), previews each one (collection, metadata and grouping, nothing
sent), states how many Jev requests a run with a key would send, then runs the planning pipeline
in shadow mode on each change and writes one report per change under ``--out`` (default: a
new temporary directory); the table ends with that directory's absolute path.
Without a key (or without ``--allow-external-context``) nothing is sent to Jev and each report
is the pipeline's bypass report; without ``--repository`` nothing leaves the machine at all and
external actions are not looked up.

With ``--repository`` and ``--ci-workflow`` it also measures each change on GitHub
(``history_ci.CiCollector``): the change's merged pull request, the last CI run of its head, and
a results file beside the report, with the change's keyless preview; external actions are then
looked up as a run in Actions would, and the table ends with the ceiling.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import contracts as c
from ..core.ceiling import ceiling, ceiling_json, ceiling_table
from ..core.history import (
    ChangeOutcome,
    LogEntry,
    calendar_date,
    history_json,
    history_table,
    select_changes,
)
from ..core.jsonutil import pretty_json
from ..core.lookup_causes import is_lookup_gap
from ..core.models import Commits, Inputs
from ..core.policy import choose_bypass
from ..core.report import report_text
from ..edges.environment import temp_root
from ..edges.git.local import (
    is_git_repository,
    local_first_parent_log,
    resolve_local_revision,
)
from ..edges.git.remotes import normalise_remote
from ..edges.git.runner import GitTimeBound
from ..edges.measurements import read_changes
from ..edges.publish import write_report_file
from ..errors import InputError, InvocationError, PlanningFailure
from . import console
from .history_ci import (
    CiCollector,
    HistoryFailure,
    github_settings,
    measured_before,
    register_github,
    write_preview,
)
from .progress import end_steps, show_step

if TYPE_CHECKING:
    pass

__all__ = ["register", "run_history"]

_INPUT_FLAGS = (
    c.INPUT_MODEL,
    c.INPUT_SKIP_BELOW,
    c.INPUT_API_BASE_URL,
    c.INPUT_API_MODEL,
    c.INPUT_TIMEOUT_MS,
    c.INPUT_MAX_DIFF_BYTES,
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``history`` to the ``jev-select`` parser."""
    history = commands.add_parser(
        c.COMMAND_HISTORY,
        help="dry run: the shadow plan of each recent merged change of a local repository",
        description=(
            "Run the local plan in shadow mode on each recent merged change (merge commits "
            "against their first parent, squash merges '... (#123)' against their parent) and "
            "print what it would have done. Without JEV_API_KEY and --allow-external-context "
            "nothing is sent to Jev; without --repository nothing leaves the machine. With "
            "--repository and --ci-workflow each change is measured by its pull request's last "
            "CI run, and the table ends with the ceiling: the CI minutes no rule forces."
        ),
        exit_on_error=False,
    )
    history.add_argument(f"--{c.FIELD_TASKS_FILE}", required=True, help="the task table file")
    history.add_argument(f"--{c.FIELD_REPO}", help="the repository (default .)")
    window = history.add_mutually_exclusive_group()
    window.add_argument(
        "--last", type=int, help=f"the newest N changes (default {c.HISTORY_DEFAULT_LAST})"
    )
    window.add_argument("--since", help="changes committed since DATE (YYYY-MM-DD)")
    kind = history.add_mutually_exclusive_group()
    kind.add_argument("--merges", dest="kind", action="store_const", const=c.HISTORY_KIND_MERGE)
    kind.add_argument("--squash", dest="kind", action="store_const", const=c.HISTORY_KIND_SQUASH)
    kind.add_argument(
        "--first-parent", dest="kind", action="store_const", const=c.HISTORY_KIND_FIRST_PARENT
    )
    history.add_argument(
        "--format", choices=c.HISTORY_FORMATS, default=c.HISTORY_FORMAT_TABLE, dest="format"
    )
    history.add_argument("--out", help="directory for the reports (default: a new temporary one)")
    for spec in c.INPUTS:
        if spec.name in _INPUT_FLAGS:
            history.add_argument(f"--{spec.name}", help=spec.description)
    history.add_argument(
        f"--{c.INPUT_ALLOW_EXTERNAL_CONTEXT}",
        action="store_true",
        default=None,
        help="allow sending each diff and the task metadata to Jev",
    )
    history.add_argument(
        "--yes",
        action="store_true",
        help=f"confirm more than {c.HISTORY_MAX_REQUESTS_WITHOUT_YES} Jev requests",
    )
    register_github(history)
    history.set_defaults(handler=run_history)


def _inputs(namespace: argparse.Namespace, environ: Mapping[str, str]) -> Inputs:
    # The local plan's own input rules, in shadow mode and head mode: each change is its
    # merge or squash commit against the first parent.
    from ..app.settings import local_inputs

    settings = argparse.Namespace(**vars(namespace))
    settings.mode = c.MODE_SHADOW
    settings.tested_ref = c.TESTED_REF_HEAD
    settings.force_all = None
    return local_inputs(settings, environ)


def _window(namespace: argparse.Namespace) -> tuple[int, str | None]:
    if namespace.since is not None:
        since = calendar_date(namespace.since)
        if since is None:
            raise InvocationError("--since: a date YYYY-MM-DD")
        return c.HISTORY_MAX_LAST, since
    last = c.HISTORY_DEFAULT_LAST if namespace.last is None else namespace.last
    if not 1 <= last <= c.HISTORY_MAX_LAST:
        raise InvocationError(f"--last: from 1 to {c.HISTORY_MAX_LAST}")
    return last, None


def _write_report(directory: str, text: str) -> str:
    os.makedirs(directory, mode=0o700, exist_ok=True)
    path = os.path.join(directory, c.REPORT_FILE_NAME)
    write_report_file(text, path)
    return path


def run_history(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select history --tasks-file F [...]``."""
    try:
        inputs = _inputs(namespace, environ)
    except (InputError, PlanningFailure) as error:
        console.emit(console.failure_text(error), github=False)
        return 1
    last, since = _window(namespace)
    # Settings of the GitHub half are checked before anything runs.
    collector = github_settings(namespace, environ, inputs.tasks)
    try:
        out, outcomes = _run(namespace, environ, inputs, last, since, collector)
    except (InputError, PlanningFailure) as error:
        end_steps()
        console.emit(console.failure_text(error), github=False)
        return 1
    # With CI results, what no rule forces over the measured changes: the most scoring could save.
    # Over this run's changes with a results file: the others are in the table above with the
    # reason, and a results file that cannot be read is counted by the ceiling as left out.
    with_results = {
        outcome.change.head
        for outcome in outcomes
        if outcome.ci is not None and outcome.ci.results is not None
    }
    top = (
        ceiling(
            [change for change in read_changes(out) if change.report.tested_sha in with_results]
        )
        if collector is not None
        else None
    )
    if namespace.format == c.HISTORY_FORMAT_JSON:
        document = history_json(outcomes)
        if top is not None:
            document = {**document, c.CALIBRATE_FIELD_CEILING: ceiling_json(top)}
        console.write(pretty_json(document) + "\n")
    else:
        # The table ends with where the reports are, so that they can be found, labelled and
        # given to calibrate; a temporary directory says how to keep them instead.
        where = (
            c.HISTORY_REPORTS_TEMPLATE if namespace.out else c.HISTORY_REPORTS_TEMPORARY_TEMPLATE
        )
        note = ""
        if (
            not _sends(inputs)
            and collector is None
            and any(
                is_lookup_gap(gap)
                for outcome in outcomes
                for warnings in outcome.gaps.values()
                for gap in warnings
            )
        ):
            note = c.HISTORY_NOT_LOOKED_UP_LINE + "\n"
        shown = "" if top is None else "\n" + ceiling_table(top)
        console.write(history_table(outcomes) + note + where.format(path=out) + "\n" + shown)
    return 0


def _sends(inputs: Inputs) -> bool:
    """Whether the dry run may send anything: with a key and consent, as a plan would."""
    return (
        choose_bypass(
            pull_request=True,
            force_all=False,
            fork=False,
            api_key=inputs.api_key,
            allow_external_context=inputs.allow_external_context,
        )
        is None
    )


def _run(
    namespace: argparse.Namespace,
    environ: Mapping[str, str],
    inputs: Inputs,
    last: int,
    since: str | None,
    collector: CiCollector | None = None,
) -> tuple[str, list[ChangeOutcome]]:
    """The absolute path of the reports' directory, and one outcome per change."""
    from ..app.pipeline import RunContext, preview_change, run_plan_pipeline
    from ..app.settings import metadata_lookups
    from ..core.evidence.resolve import NoLookups

    repo = os.path.abspath(namespace.repo or ".")
    # One bound for the whole dry run: after one git command timed out, none is started again.
    bound = GitTimeBound(c.LOCAL_GIT_TIMEOUT_S)
    if not is_git_repository(repo, environ, bound=bound):
        raise HistoryFailure(c.HISTORY_INVALID_REPOSITORY)
    head = resolve_local_revision(repo, "HEAD", environ, bound=bound)
    if head is None:
        raise HistoryFailure(c.HISTORY_INVALID_REPOSITORY)
    log = local_first_parent_log(
        repo, head, since=since, limit=c.HISTORY_LOG_COMMITS, environ=environ, bound=bound
    )
    if log is None:
        raise HistoryFailure(
            c.HISTORY_INVALID_REPOSITORY if bound.expired else c.HISTORY_LOG_UNREADABLE
        )
    changes = select_changes(
        [LogEntry(sha, parents, subject) for sha, parents, subject in log], namespace.kind, last
    )
    if not changes:
        raise HistoryFailure(c.HISTORY_NO_CHANGES)
    try:
        out = namespace.out or tempfile.mkdtemp(
            prefix="jev-select-history-", dir=temp_root(environ)
        )
        os.makedirs(out, mode=0o700, exist_ok=True)
    except OSError:
        raise HistoryFailure(c.HISTORY_OUT_UNWRITABLE) from None
    sending = _sends(inputs)
    token = environ.get(c.LOCAL_GITHUB_TOKEN_ENV, "")
    # Without consent to send anything, external actions and other repositories' reusable
    # workflows are not looked up either: they become metadata gaps of their tasks. With
    # --repository the command asks GitHub anyway, and a run in Actions would look them up: left
    # as gaps they would count as forced minutes that no real run forces.
    looks_up = sending or collector is not None

    def context(base: str, change_head: str) -> RunContext:
        return RunContext(
            commits=Commits(
                base_sha=base, head_sha=change_head, tested_sha=change_head, metadata_sha=base
            ),
            pull_request=True,
            fork=False,
            remote=normalise_remote(repo, cwd=os.getcwd()),
            temp_root=temp_root(environ),
            environ=environ,
            provenance_repository=c.LOCAL_REPOSITORY_NAME,
            # A fresh set per run: each run has its own lookup deadline.
            lookups=(
                metadata_lookups(
                    c.GITHUB_DEFAULT_SERVER_URL,
                    environ.get(c.GITHUB_API_URL_ENV) or None,
                    token,
                    local_environ=environ,
                )
                if looks_up
                else NoLookups()
            ),
            borrow_from=repo,
            git_bound=bound,
        )

    # A change measured by an earlier run over this --out is read back, not planned or asked
    # about again: nothing is sent twice, and its report keeps pairing with its results.
    measured = {
        change.head: outcome
        for change in changes
        if collector is not None
        and (outcome := measured_before(change, os.path.join(out, change.head[:12]))) is not None
    }
    pending = [change for change in changes if change.head not in measured]
    previews = []
    for index, change in enumerate(pending, start=1):
        show_step("collecting", index, len(pending), change.head[:12])
        previews.append(preview_change(inputs, context(change.base, change.head)))
    end_steps()
    if bound.expired:
        # Every later collection would fail at once: a table of such changes shows nothing.
        raise HistoryFailure(c.HISTORY_INVALID_REPOSITORY)
    if sending:
        total = sum(preview.requests for preview in previews)
        console.emit(
            c.HISTORY_REQUESTS_TEMPLATE.format(requests=total, changes=len(pending)),
            github=False,
            level="notice",
        )
        if total > c.HISTORY_MAX_REQUESTS_WITHOUT_YES and not namespace.yes:
            console.emit(
                c.HISTORY_NEEDS_YES_TEMPLATE.format(limit=c.HISTORY_MAX_REQUESTS_WITHOUT_YES),
                github=False,
            )
            raise HistoryFailure(c.HISTORY_NEEDS_YES)
    outcomes: list[ChangeOutcome] = []
    for index, (change, preview) in enumerate(zip(pending, previews, strict=True), start=1):
        show_step("planning", index, len(pending), change.head[:12])
        # The preview already collected, resolved and grouped this change: only sending is left.
        result = run_plan_pipeline(
            inputs,
            context(change.base, change.head),
            validated_at=time.monotonic(),
            collected=preview.collected,
        )
        directory = os.path.join(out, change.head[:12])
        text = report_text(result.report)
        try:
            path = _write_report(directory, text)
        except (OSError, PlanningFailure):
            end_steps()
            raise HistoryFailure(c.HISTORY_OUT_UNWRITABLE) from None
        ci = None
        if collector is not None:
            try:
                preview_path = write_preview(directory, inputs.tasks, preview.facts)
            except OSError:
                end_steps()
                raise HistoryFailure(c.HISTORY_OUT_UNWRITABLE) from None
            try:
                ci = collector.measure(change, text, directory, preview_path, repo, bound)
            except HistoryFailure:
                end_steps()
                raise
        outcomes.append(
            ChangeOutcome(
                change=change,
                report=result.report,
                report_path=path,
                preview_reasons={
                    task_id: decision.reasons
                    for task_id, decision in preview.plan.decisions.items()
                },
                preview_status=preview.plan.status,
                gaps=preview.gaps,
                requests=preview.requests,
                collection_ms=preview.collection_ms,
                ci=ci,
            )
        )
    end_steps()
    outcomes.extend(measured.values())
    order = {change.head: index for index, change in enumerate(changes)}
    outcomes.sort(key=lambda outcome: order[outcome.change.head])
    return os.path.abspath(out), outcomes
