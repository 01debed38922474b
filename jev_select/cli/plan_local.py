"""``jev-select plan`` outside GitHub Actions: two commits of a repository on this disk.

Shell module (docs/reference.md, "Local use"). The inputs are flags and the task table a file; the
base defaults to the unique merge base of ``HEAD`` with ``origin/HEAD`` or ``main``. The terminal
shows the table, a preview when Jev was not asked, and the path of the report file, which one run
replaces.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import sys
import time
from collections.abc import Mapping

import attrs

from .. import contracts as c
from ..app.pipeline import PlanResult, RunContext, run_plan_pipeline
from ..app.settings import local_inputs, lookup_cause_of, metadata_lookups
from ..core.lookup_causes import LookupCause, group_lookup_gaps
from ..core.models import Commits, Inputs
from ..core.plan_view import failure_line
from ..core.preview import patch_line, plan_output_text, preview_json, render_preview
from ..core.render import render_terminal
from ..core.report import report_text
from ..edges import cancellation
from ..edges.environment import temp_root
from ..edges.git.local import (
    default_local_base,
    is_git_repository,
    local_has_uncommitted_changes,
    local_merge_parents,
    resolve_local_revision,
)
from ..edges.git.remotes import normalise_remote
from ..edges.git.runner import GitTimeBound
from ..edges.publish import write_report_file
from ..errors import InputError, JevSelectError
from . import console
from .plan import emit_tasks_hint
from .progress import Progress

__all__ = ["run_local_plan"]


def run_local_plan(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Local mode: plan the change from ``--base`` to ``--head`` of ``--repo``."""
    report_path: str | None = None
    # One bound for the whole run: git that blocked once on this repository is not asked again.
    bound = GitTimeBound(c.LOCAL_GIT_TIMEOUT_S)
    try:
        inputs = local_inputs(namespace, environ)
        remote, commits = _local_commits(namespace, inputs, environ, bound)
        # Without --remote the commits come from --repo itself, whose objects are on this disk.
        borrow_from = os.path.abspath(namespace.repo or ".") if namespace.remote is None else None
        _warn_uncommitted(namespace, environ, commits)
    except _DefaultBaseMissing:
        console.emit(c.LOCAL_DEFAULT_BASE_MISSING, github=False)
        return 1
    except Exception as error:
        console.emit(console.failure_text(error), github=False)
        emit_tasks_hint(error, github=False)
        return 1
    try:
        validated_at = time.monotonic()
        token = environ.get(c.LOCAL_GITHUB_TOKEN_ENV, "")
        run = RunContext(
            commits=commits,
            pull_request=True,
            fork=False,
            remote=remote,
            temp_root=temp_root(environ),
            environ=environ,
            provenance_repository=c.LOCAL_REPOSITORY_NAME,
            lookups=metadata_lookups(
                c.GITHUB_DEFAULT_SERVER_URL,
                environ.get(c.GITHUB_API_URL_ENV) or None,
                token,
                local_environ=environ,
            ),
            borrow_from=borrow_from,
            preview=True,
            git_bound=bound,
            measure_patch=True,
        )
        with Progress(sys.stderr):
            result = run_plan_pipeline(inputs, run, validated_at=validated_at)
        text = report_text(result.report)
        with cancellation.deferred():
            report_path = write_report_file(
                text,
                namespace.report
                if namespace.report is not None
                else _local_report_path(run.temp_root, namespace.repo or "."),
            )
        terminal = (
            _local_json(result, inputs)
            if namespace.json
            else _local_view(result, inputs, report_path, lookup_cause_of(run.lookups))
        )
    except Exception as error:
        _remove_local_report(report_path)
        console.emit(console.failure_text(error), github=False)
        return 1
    except cancellation.Cancelled:
        # The report is only ever announced together with the plan; unannounced, it goes.
        _remove_local_report(report_path)
        raise
    sys.stdout.write(terminal)
    sys.stdout.flush()
    return 0


def _local_view(
    result: PlanResult, inputs: Inputs, report_path: str, cause: LookupCause | None = None
) -> str:
    """The table, the failure line, the preview and, last, the report path. Once the cause
    line has said why lookups failed, the preview counts a task's lookup gaps instead of
    repeating each (the report keeps every one)."""
    parts = [
        render_terminal(
            result.report,
            None,
            table=inputs.tasks,
            changed_paths=result.changed_paths,
            notes=result.notes,
        )
    ]
    failure = failure_line(result.report, result.failure_cause)
    if failure is not None:
        parts.append(failure + "\n")
    patch = patch_line(result.report, result.patch)
    if patch is not None:
        parts.append(patch + "\n")
    if result.preview is not None:
        facts = result.preview.facts
        facts = attrs.evolve(facts, gaps=group_lookup_gaps(facts.gaps, cause))
        parts.append(render_preview(inputs.tasks, facts))
    parts.append(c.TERMINAL_REPORT_TEMPLATE.format(path=report_path) + "\n")
    return "".join(parts)


def _local_json(result: PlanResult, inputs: Inputs) -> str:
    """What ``--json`` prints: the report v5 and the preview or null (plan-output.schema.json)."""
    preview = (
        preview_json(inputs.tasks, result.preview.facts) if result.preview is not None else None
    )
    return plan_output_text(result.report, preview)


def _warn_uncommitted(
    namespace: argparse.Namespace, environ: Mapping[str, str], commits: Commits
) -> None:
    """One line on stderr when the work tree holds changes the plan does not read.

    The status gets a time bound of its own: a slow answer drops the line, not the plan.
    """
    repo = os.path.abspath(namespace.repo or ".")
    bound = GitTimeBound(c.LOCAL_STATUS_TIMEOUT_S)
    if not local_has_uncommitted_changes(repo, environ, bound=bound):
        return
    rev = namespace.head or "HEAD"
    sha = commits.tested_sha[:12]
    by_id = re.fullmatch("[0-9a-fA-F]{4,64}", rev) is not None and commits.tested_sha.startswith(
        rev.lower()
    )
    console.emit(
        c.UNCOMMITTED_COMMIT_TEMPLATE.format(sha=sha)
        if by_id
        else c.UNCOMMITTED_TEMPLATE.format(rev=rev, sha=sha),
        github=False,
        level="warning",
    )


def _remove_local_report(path: str | None) -> None:
    """Best-effort removal of a local report file (never its directory: it may be the user's)."""
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


class _DefaultBaseMissing(JevSelectError):
    """Neither default base resolved; the user never named one."""


def _local_report_path(root: str, repo: str) -> str:
    """One report file per repository, replaced by each run, instead of a directory per run."""
    key = hashlib.sha256(os.path.realpath(repo).encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(root, c.LOCAL_REPORT_DIR_TEMPLATE.format(key=key[:16]), c.REPORT_FILE_NAME)


def _unanswered(bound: GitTimeBound, field: str) -> InputError:
    # git that did not answer in time makes the repository the failing input, whichever question
    # it was asked: the revision itself may be perfectly fine.
    return InputError(c.FIELD_REPO if bound.expired else field)


def _local_commits(
    namespace: argparse.Namespace,
    inputs: Inputs,
    environ: Mapping[str, str],
    bound: GitTimeBound,
) -> tuple[str, Commits]:
    cwd = os.getcwd()
    remote: str | None = None
    if namespace.remote is not None:
        remote = normalise_remote(namespace.remote, cwd=cwd)
    repo = os.path.abspath(namespace.repo or ".")
    if not is_git_repository(repo, environ, bound=bound):
        raise InputError(c.FIELD_REPO)
    if remote is None:
        remote = normalise_remote(repo, cwd=cwd)
    if namespace.base is not None:
        base = resolve_local_revision(repo, namespace.base, environ, bound=bound)
    else:
        base = default_local_base(repo, environ, bound=bound)
        if base is None and not bound.expired:
            raise _DefaultBaseMissing()
    if base is None:
        raise _unanswered(bound, c.FIELD_BASE)
    tested = resolve_local_revision(repo, namespace.head or "HEAD", environ, bound=bound)
    if tested is None:
        raise _unanswered(bound, c.FIELD_HEAD)
    head = tested
    if inputs.tested_ref == c.TESTED_REF_MERGE:
        parents = local_merge_parents(repo, tested, environ, bound=bound) or ()
        if bound.expired:
            raise InputError(c.FIELD_REPO)
        if len(parents) == 2:
            head = parents[1]
    commits = Commits(base_sha=base, head_sha=head, tested_sha=tested, metadata_sha=base)
    return remote, commits
