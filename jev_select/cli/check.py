"""``jev-select check``: lint a task table file, alone or against a repository revision, and
the workflows at that revision that run the action and consume its plan.

Shell module. It reads the file and the repository (read-only, sanitised git), calls the pure
``check`` core and prints compiler-style lines or JSON. Exit codes: 0 without errors (warnings
allowed), 1 with an error, 2 for a bad invocation.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping

import attrs

from .. import contracts as c
from ..app.settings import metadata_lookups
from ..core.check.problems import Problem, check_exit_code, problems_json, problems_text
from ..core.check.repository import Repository
from ..core.check.table import check_table
from ..core.check.wiring import TableFile, check_wiring
from ..edges.files import read_capped_text
from ..edges.git.local import (
    is_git_repository,
    local_file_at,
    local_has_uncommitted_changes,
    local_top_level,
    local_tree_paths,
    resolve_local_revision,
)
from ..edges.git.runner import GitTimeBound
from ..errors import JevSelectError
from .console import github_mode

__all__ = ["register", "run_check"]


class CheckUsageError(JevSelectError):
    """The command line cannot be served; the message is printed with the usage (exit 2)."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``check`` to the ``jev-select`` parser."""
    check = commands.add_parser(
        c.COMMAND_CHECK,
        help="lint a task table and the workflows that consume its plan",
        description=(
            "Check a task table file: YAML, fields, types, IDs and globs, and against the "
            "repository at REV, force_paths that match no file and the jobs, workflows and "
            "context files a plan could not find; then the workflows at REV that run the "
            "action with that table (without --tasks-file: every workflow that runs the "
            "action, with its own table): task IDs, comparisons, needs and outputs of the "
            "jobs that read the plan. Exit 0 without errors, 1 with errors, 2 for a bad "
            "invocation."
        ),
        exit_on_error=False,
    )
    check.add_argument(
        f"--{c.FIELD_TASKS_FILE}",
        help="the task table file (default: the tables of the workflows that run the action)",
    )
    check.add_argument(
        f"--{c.FIELD_REPO}",
        help="the repository to check against (default: the current directory when it is one)",
    )
    check.add_argument("--rev", help="the revision whose files count (default HEAD)")
    check.add_argument(
        "--format", choices=c.CHECK_FORMATS, default=c.CHECK_FORMAT_TEXT, dest="format"
    )
    check.set_defaults(handler=run_check)


def _read_text(path: str) -> str | None:
    """The file's text; None when it is not UTF-8. Raises ``CheckUsageError`` when unreadable
    or not a regular file."""
    try:
        # Over the cap, the text is still checked: check_table reports its size as a problem.
        return read_capped_text(path, c.MAX_TASKS_TEXT_BYTES)
    except OSError:
        raise CheckUsageError(f"cannot read the task table file {path!r}") from None


@attrs.frozen
class _Checkout:
    repository: Repository
    root: str | None  # the work tree's root, None for a bare repository
    uncommitted: str | None = None  # the line that says the work tree is not what is read


def _repository(
    namespace: argparse.Namespace, environ: Mapping[str, str], bound: GitTimeBound
) -> _Checkout | None:
    given = namespace.repo is not None
    repo = os.path.abspath(namespace.repo or ".")
    if not is_git_repository(repo, environ, bound=bound):
        if given or namespace.rev is not None:
            raise CheckUsageError(f"{repo!r} is not a Git repository")
        return None  # the text alone can still be checked
    rev = namespace.rev or "HEAD"
    commit = resolve_local_revision(repo, rev, environ, bound=bound)
    if commit is None:
        if namespace.rev is None:
            return None  # a repository without commits: the text alone
        raise CheckUsageError(f"revision {rev!r} does not name a commit of {repo!r}")
    paths = local_tree_paths(repo, commit, environ, bound=bound)
    if paths is None:
        raise CheckUsageError(f"cannot list the files of {rev!r}")

    def read_file(path: str) -> bytes | None:
        return local_file_at(repo, commit, path, c.METADATA_FILE_CAP, environ, bound=bound)

    repository = Repository(
        commit=commit,
        paths=paths,
        read_file=read_file,
        # The lookups of a local plan: actions and other repositories' reusable workflows.
        lookups=metadata_lookups(
            c.GITHUB_DEFAULT_SERVER_URL,
            environ.get(c.GITHUB_API_URL_ENV) or None,
            environ.get(c.LOCAL_GITHUB_TOKEN_ENV, ""),
            local_environ=environ,
        ),
        clock=time.monotonic,
    )
    uncommitted = None
    if not github_mode(environ) and _has_uncommitted_changes(repo, environ):
        uncommitted = c.UNCOMMITTED_CHECK_TEMPLATE.format(rev=rev, sha=commit[:12])
    return _Checkout(repository, local_top_level(repo, environ, bound=bound), uncommitted)


def _has_uncommitted_changes(repo: str, environ: Mapping[str, str]) -> bool:
    """Whether the work tree holds edits the check does not read (a workflow edited on disk
    would otherwise read as missing or unchanged). The status has its own bound: a slow answer
    drops the line, never the check."""
    bound = GitTimeBound(c.LOCAL_STATUS_TIMEOUT_S)
    return bool(local_has_uncommitted_changes(repo, environ, bound=bound))


def _relative(path: str, root: str | None) -> str | None:
    """``path`` relative to the work tree's root, or None when it lies outside."""
    if root is None:
        return None
    relative = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    if relative == os.pardir or relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
        return None
    return relative.replace(os.sep, "/")


def run_check(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select check [--tasks-file PATH] [--repo PATH] [--rev REV] [--format text|json]``."""
    path: str | None = namespace.tasks_file
    bound = GitTimeBound(c.LOCAL_GIT_TIMEOUT_S)
    message: str | None = None
    shown = path or ""
    checkout: _Checkout | None = None
    try:
        text = _read_text(path) if path is not None else None
        checkout = _repository(namespace, environ, bound)
        problems: tuple[Problem, ...] = ()
        if path is not None:
            relative = _relative(path, checkout.root) if checkout is not None else None
            shown = relative or path
            problems = _problems(text, checkout.repository if checkout is not None else None)
            problems = tuple(attrs.evolve(problem, path=shown) for problem in problems)
            if checkout is not None and text is not None and relative is not None:
                wiring = check_wiring(checkout.repository, TableFile(relative, text))
                problems = (*problems, *wiring.problems)
        else:
            if checkout is None:
                raise CheckUsageError(
                    "not inside a Git repository: pass --tasks-file to check a table alone"
                )
            wiring = check_wiring(checkout.repository)
            if not wiring.workflows:
                raise CheckUsageError(
                    f"no workflow under {c.WORKFLOWS_DIRECTORY} at "
                    f"{checkout.repository.commit[:12]} runs {c.ACTION_REPOSITORY_NAME}: pass "
                    "--tasks-file to check a table alone"
                )
            problems = wiring.problems
    except CheckUsageError as error:
        message = str(error)
    if bound.expired:
        # Whatever git answered before, the checks against the repository are incomplete (a
        # file never read would read as missing), and the repository is not "no repository".
        message = c.LOCAL_GIT_TIMED_OUT_TEMPLATE.format(
            seconds=bound.seconds, repo=os.path.abspath(namespace.repo or ".")
        )
    if message is not None:
        sys.stderr.write(f"{c.PRODUCT_NAME} {c.COMMAND_CHECK}: error: {message}\n")
        return c.CHECK_EXIT_USAGE
    if checkout is not None and checkout.uncommitted is not None:
        sys.stderr.write(checkout.uncommitted + "\n")
    if namespace.format == c.CHECK_FORMAT_JSON:
        sys.stdout.write(problems_json(problems))
    else:
        sys.stdout.write(problems_text(shown, problems))
    sys.stdout.flush()
    return check_exit_code(problems)


def _problems(text: str | None, repository: Repository | None) -> tuple[Problem, ...]:
    if text is None:
        problems: tuple[Problem, ...] = (
            Problem(
                severity=c.CHECK_SEVERITY_ERROR,
                code=c.CHECK_NOT_UTF8,
                message="the file is not UTF-8 text",
                line=1,
                column=1,
            ),
        )
    else:
        problems = check_table(text, repository)
    return problems
