"""The ``jev-select`` command: argument parsing, the two modes of ``plan``, and publication.

Edge module (spec §1.3, §3, §11.3, §15). Every failure becomes one fixed diagnostic line and exit
code 1 with nothing published; nothing supplied by the user, a provider or git is ever printed.
SIGINT and SIGTERM become one fixed line and exit code 130 or 143 (``cancellation``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import logging
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import attrs

from . import console
from . import contracts as c
from .core.inputs import github_inputs, parse_inputs
from .core.models import Commits, Inputs
from .core.plan_view import failure_line, render_preview
from .core.render import log_line, render_outputs, render_summary, render_terminal
from .core.report import report_text
from .core.tasks import parse_tasks
from .edges import cancellation
from .edges.environment import (
    GitHubContext,
    is_merge_group_event,
    is_pull_request_event,
    parse_manual_number,
    parse_merge_group,
    parse_pull_request,
    process_environment,
    read_github_context,
    temp_root,
)
from .edges.git_local import (
    default_local_base,
    is_git_repository,
    local_merge_parents,
    resolve_local_revision,
)
from .edges.publish import (
    append_outputs,
    append_summary,
    close_outputs,
    mask_commands,
    open_outputs,
    remove_report,
    write_report,
    write_report_file,
)
from .edges.remotes import default_remote, normalise_remote
from .errors import (
    InputError,
    InvocationError,
    PlanningFailure,
    failure_message,
)
from .local_settings import local_inputs, metadata_lookups
from .pipeline import PlanResult, RunContext, run_plan_pipeline
from .progress import Progress
from .version import __version__

if TYPE_CHECKING:
    pass

__all__ = ["main"]

# Inputs that local mode takes as flags (spec §15); GitHub mode reads them from INPUT_* only.
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
_LOCAL_ONLY_FLAGS = tuple(
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
_INPUT_ENV = {spec.name: spec.env for spec in c.INPUTS}


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors become ``InvocationError`` instead of exiting.

    Abbreviated long options are refused: ``--remo`` is an unknown flag, not ``--remote``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise InvocationError(message)


def _build_parser(command: str | None = None) -> _Parser:
    """The command-line parser; for ``plan``, with that subcommand only.

    The other subcommands bring the shadow analyzer, the results client and the evaluation replay
    with their imports, which ``plan`` (on every pull request, in GitHub's hot path) never needs.
    Parsing ``plan ...`` gives the same result either way.
    """
    parser = _Parser(
        prog=c.PRODUCT_NAME,
        description="Select the CI tasks a pull request needs.",
        exit_on_error=False,
    )
    parser.add_argument("--version", action="version", version=f"{c.PRODUCT_NAME} {__version__}")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    plan = commands.add_parser(
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
        help="local mode: print the report (JSON) to stdout instead of the table",
    )
    plan.add_argument(
        f"--{c.FLAG_REPORT}",
        metavar="PATH",
        help="local mode: write the report to PATH (default: one file per repository in the "
        "temporary directory, replaced by each run)",
    )
    plan.set_defaults(handler=run_plan)
    if command != c.COMMAND_PLAN:
        _register_extra_commands(commands)
    return parser


def _register_extra_commands(commands: argparse._SubParsersAction[_Parser]) -> None:
    """Subcommands beyond ``plan`` add themselves here."""
    from . import commands as extra

    extra.register(commands)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    # Library warnings and log records would reach stderr; GitHub mode keeps stderr empty and
    # nothing the product prints may carry text it did not choose.
    warnings.simplefilter("ignore")
    logging.getLogger().addHandler(logging.NullHandler())
    environ = process_environment()
    github_mode = console.github_mode(environ)
    arguments = list(sys.argv[1:] if argv is None else argv)
    with cancellation.handle_signals():
        try:
            return _dispatch(arguments, environ, github_mode)
        except cancellation.Cancelled as cancel:
            return _cancelled(cancel, github_mode, published=False)


def _dispatch(arguments: list[str], environ: Mapping[str, str], github_mode: bool) -> int:
    parser: _Parser | None = None
    try:
        if github_mode and arguments[:1] == [c.COMMAND_PLAN]:
            # Masks come before anything else, even before the command line is checked.
            _print_masks(environ)
        parser = _build_parser(arguments[0] if arguments else None)
        try:
            namespace = parser.parse_args(arguments)
        except argparse.ArgumentError as error:
            raise InvocationError(str(error)) from None
        if namespace.command is None:
            raise InvocationError(_MISSING_COMMAND)
        handler: Callable[[argparse.Namespace, Mapping[str, str]], int] = namespace.handler
        return handler(namespace, environ)
    except SystemExit as exit_request:  # --help and --version
        code = exit_request.code
        return code if isinstance(code, int) else 0
    except InvocationError as error:
        if github_mode or parser is None:
            console.emit(failure_message(c.FAILURE_INVALID_INVOCATION), github=github_mode)
            return c.CHECK_EXIT_USAGE if arguments[:1] == [c.COMMAND_CHECK] else 1
        _print_usage(parser, arguments, error.message)
        return c.USAGE_EXIT_CODE
    except Exception:
        console.emit(failure_message(c.FAILURE_INTERNAL_ERROR), github=github_mode)
        return 1


def _cancelled(cancel: cancellation.Cancelled, github_mode: bool, *, published: bool) -> int:
    """Stop what other threads started, print the one cancellation line, return 128 + signal."""
    cancellation.run_cleanups()
    message = c.CANCELLED_AFTER_PUBLICATION_MESSAGE if published else c.CANCELLED_MESSAGE
    # A closed stream must not turn a cancellation into a traceback.
    with contextlib.suppress(OSError):
        console.emit(message, github=github_mode)
    return cancel.exit_code


_MISSING_COMMAND = "a command is required"


def _print_usage(parser: _Parser, arguments: Sequence[str], message: str) -> None:
    """argparse's usage and error line for a local invocation (what was typed is the user's)."""
    target: argparse.ArgumentParser = parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and arguments[:1]:
            target = action.choices.get(arguments[0], parser)
    text = parser.format_help() if message == _MISSING_COMMAND else target.format_usage()
    sys.stderr.write(f"{text}{target.prog}: error: {message or 'invalid arguments'}\n")
    sys.stderr.flush()


def _emit_tasks_hint(error: BaseException, *, github: bool) -> None:
    """The fixed second line after an input error of the task table: where to find the fault."""
    if type(error) is InputError and error.field in (c.INPUT_TASKS, c.FIELD_TASKS_FILE):
        console.emit(c.TASKS_CHECK_HINT, github=github, level="notice")


def run_plan(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select plan`` in either mode."""
    if console.github_mode(environ):
        return _plan_github(namespace, environ)
    return _plan_local(namespace, environ)


# ---------------------------------------------------------------------------------------------
# GitHub mode
# ---------------------------------------------------------------------------------------------


def _print_masks(environ: Mapping[str, str]) -> None:
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


def _plan_github(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """GitHub mode; ``main`` has already printed the masks."""
    out = sys.stdout
    report_path: str | None = None
    published = False
    try:
        if any(getattr(namespace, name) is not None for name in _LOCAL_ONLY_FLAGS):
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
        pairs = render_outputs(result.plan, result.report["tested_sha"], report_path)
        descriptor = open_outputs(context.output_path)
        try:
            with cancellation.deferred():
                append_outputs(descriptor, pairs)
                published = True
        finally:
            close_outputs(descriptor)
    except cancellation.Cancelled as cancel:
        if not published:
            _cleanup(report_path)
        return _cancelled(cancel, True, published=published)
    except InvocationError:
        _cleanup(report_path)
        console.emit(failure_message(c.FAILURE_INVALID_INVOCATION), github=True)
        return 1
    except Exception as error:
        _cleanup(report_path)
        console.emit(console.failure_text(error), github=True)
        _emit_tasks_hint(error, github=True)
        return 1
    try:
        _publish_summary(context, inputs, result)
        out.write(log_line(result.plan, len(inputs.tasks)) + "\n")
        out.flush()
    except cancellation.Cancelled as cancel:
        return _cancelled(cancel, True, published=True)
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
    from .edges.tasks_file import read_tasks_file

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


def _publish_summary(context: GitHubContext, inputs: Inputs, result: PlanResult) -> None:
    if context.summary_path is None:
        return
    try:
        summary = render_summary(
            result.report,
            engine_version=__version__,
            notes=result.notes,
            table=inputs.tasks,
            changed_paths=result.changed_paths,
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
    """Commits, pull-request flag, fork flag and queue flag of spec §5.2 to §5.6."""
    number = parse_manual_number(inputs.pull_request, context.event_name)
    merge_mode = inputs.tested_ref == c.TESTED_REF_MERGE
    if number is not None:
        from .edges.github_api import GitHubApi, api_root

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
        if not isinstance(tested, str) or (
            merge_mode and re.fullmatch(c.SHA40_PATTERN, tested) is None
        ):
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


# ---------------------------------------------------------------------------------------------
# Local mode
# ---------------------------------------------------------------------------------------------


def _plan_local(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    report_path: str | None = None
    try:
        inputs = local_inputs(namespace, environ)
        remote, commits = _local_commits(namespace, inputs, environ)
        # Without --remote the commits come from --repo itself, whose objects are on this disk.
        borrow_from = os.path.abspath(namespace.repo or ".") if namespace.remote is None else None
    except _DefaultBaseMissing:
        console.emit(c.LOCAL_DEFAULT_BASE_MISSING, github=False)
        return 1
    except Exception as error:
        console.emit(console.failure_text(error), github=False)
        _emit_tasks_hint(error, github=False)
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
                c.GITHUB_DEFAULT_SERVER_URL, environ.get(c.GITHUB_API_URL_ENV) or None, token
            ),
            borrow_from=borrow_from,
            preview=True,
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
        terminal = text if namespace.json else _local_view(result, inputs, report_path)
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


def _local_view(result: PlanResult, inputs: Inputs, report_path: str) -> str:
    """The table, the failure line, the preview and, last, the report path."""
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
    if result.preview is not None:
        parts.append(
            render_preview(
                inputs.tasks,
                changed_paths=result.preview.changed_paths,
                collection_error=result.preview.collection_error,
                gaps=result.preview.gaps,
            )
        )
    parts.append(c.TERMINAL_REPORT_TEMPLATE.format(path=report_path) + "\n")
    return "".join(parts)


def _remove_local_report(path: str | None) -> None:
    """Best-effort removal of a local report file (never its directory: it may be the user's)."""
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


class _DefaultBaseMissing(Exception):
    """Neither default base resolved; the user never named one."""


def _local_report_path(root: str, repo: str) -> str:
    """One report file per repository, replaced by each run, instead of a directory per run."""
    key = hashlib.sha256(os.path.realpath(repo).encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(root, c.LOCAL_REPORT_DIR_TEMPLATE.format(key=key[:16]), c.REPORT_FILE_NAME)


def _local_commits(
    namespace: argparse.Namespace, inputs: Inputs, environ: Mapping[str, str]
) -> tuple[str, Commits]:
    cwd = os.getcwd()
    remote: str | None = None
    if namespace.remote is not None:
        remote = normalise_remote(namespace.remote, cwd=cwd)
    repo = os.path.abspath(namespace.repo or ".")
    if not is_git_repository(repo):
        raise InputError(c.FIELD_REPO)
    if remote is None:
        remote = normalise_remote(repo, cwd=cwd)
    if namespace.base is not None:
        base = resolve_local_revision(repo, namespace.base, environ)
    else:
        base = default_local_base(repo, environ)
        if base is None:
            raise _DefaultBaseMissing()
    if base is None:
        raise InputError(c.FIELD_BASE)
    tested = resolve_local_revision(repo, namespace.head or "HEAD", environ)
    if tested is None:
        raise InputError(c.FIELD_HEAD)
    head = tested
    if inputs.tested_ref == c.TESTED_REF_MERGE:
        parents = local_merge_parents(repo, tested) or ()
        if len(parents) == 2:
            head = parents[1]
    commits = Commits(base_sha=base, head_sha=head, tested_sha=tested, metadata_sha=base)
    return remote, commits


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
