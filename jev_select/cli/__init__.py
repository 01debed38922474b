"""The ``jev-select`` command: parsing the command line and running the chosen subcommand.

The shell (docs/reference.md, "Commands", "Failure codes", "Publication", "Local use"). Every
subcommand is a module of this package named after it (``read-block`` is :mod:`.read_block`),
with a ``register`` function that adds its parser and handler; :data:`SUBCOMMANDS` lists them.
``plan`` is :mod:`.plan` (its arguments), with :mod:`.plan_github` and :mod:`.plan_local` for its
two modes; :mod:`.console` and :mod:`.progress` are what every subcommand prints with. The
orchestration below the shell is :mod:`jev_select.app`.

Every failure becomes one fixed diagnostic line and exit code 1 with nothing published; nothing
supplied by the user, a provider or git is ever printed. A subcommand stops by raising its
``CommandFailure``, and :func:`_dispatch` prints that line for all of them. SIGINT and SIGTERM
become one fixed line and exit code 130 or 143 (``cancellation``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from .. import contracts as c
from ..edges import cancellation
from ..edges.environment import process_environment
from ..errors import CommandFailure, InvocationError, failure_message
from ..version import __version__
from . import console
from .plan import add_plan_parser
from .plan_github import print_masks, run_github_plan

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors become ``InvocationError`` instead of exiting.

    Abbreviated long options are refused: ``--remo`` is an unknown flag, not ``--remote``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise InvocationError(message)


# The subcommands beyond ``plan``, in the order ``--help`` lists them, each with the module of
# this package that adds it (``register``) and runs it. A module is imported only when its
# subcommand is the one asked for, or when the whole list is needed (``--help``, a missing or
# unknown subcommand): the analyzer, the results client and the replay never load for a plan.
SUBCOMMANDS: Mapping[str, str] = {
    c.COMMAND_ANALYZE: "analyze",
    c.COMMAND_RESULTS: "results",
    c.COMMAND_BLOCK: "block",
    c.COMMAND_READ_BLOCK: "read_block",
    c.COMMAND_REPLAY: "replay",
    c.COMMAND_CHECK: "check",
    c.COMMAND_CALIBRATE: "calibrate",
    c.COMMAND_HISTORY: "history",
    c.COMMAND_ROLLOUT: "rollout",
}


def _build_parser(command: str | None = None) -> _Parser:
    """The command-line parser: with ``command``'s subcommand only when it names one, else with
    every subcommand. Parsing ``<command> ...`` gives the same result either way."""
    parser = _Parser(
        prog=c.PRODUCT_NAME,
        description="Select the CI tasks a pull request needs.",
        exit_on_error=False,
    )
    parser.add_argument("--version", action="version", version=f"{c.PRODUCT_NAME} {__version__}")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    if command is None or command not in SUBCOMMANDS:
        add_plan_parser(commands).set_defaults(handler=run_plan)
    if command == c.COMMAND_PLAN:
        return parser
    chosen = SUBCOMMANDS.get(command) if command is not None else None
    modules = [chosen] if chosen is not None else list(SUBCOMMANDS.values())
    for module in modules:
        importlib.import_module(f"{__name__}.{module}").register(commands)
    return parser


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
            return console.cancelled(cancel, github=github_mode, published=False)


def _dispatch(arguments: list[str], environ: Mapping[str, str], github_mode: bool) -> int:
    parser: _Parser | None = None
    command: str | None = None
    try:
        if github_mode and arguments[:1] == [c.COMMAND_PLAN]:
            # Masks come before anything else, even before the command line is checked.
            print_masks(environ)
        parser = _build_parser(arguments[0] if arguments else None)
        try:
            namespace = parser.parse_args(arguments)
        except argparse.ArgumentError as error:
            raise InvocationError(str(error)) from None
        if namespace.command is None:
            raise InvocationError(_MISSING_COMMAND)
        command = namespace.command
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
    except CommandFailure as failure:
        return _command_failed(failure, command, github_mode)
    except Exception:
        console.emit(failure_message(c.FAILURE_INTERNAL_ERROR), github=github_mode)
        return 1


_MISSING_COMMAND = "a command is required"


def _command_failed(failure: CommandFailure, command: str | None, github_mode: bool) -> int:
    """Print a subcommand's failure line and return its exit status."""
    failures = failure.failures
    if failures.command != command:
        # A failure of another subcommand's vocabulary escaped the code that should have
        # translated it: a bug, and its line would name the wrong command.
        console.emit(failure_message(c.FAILURE_INTERNAL_ERROR), github=github_mode)
        return 1
    console.emit(failure.message, github=github_mode and not failures.local_only)
    return failures.exit_code


def _print_usage(parser: _Parser, arguments: Sequence[str], message: str) -> None:
    """argparse's usage and error line for a local invocation (what was typed is the user's)."""
    target: argparse.ArgumentParser = parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and arguments[:1]:
            target = action.choices.get(arguments[0], parser)
    text = parser.format_help() if message == _MISSING_COMMAND else target.format_usage()
    sys.stderr.write(f"{text}{target.prog}: error: {message or 'invalid arguments'}\n")
    sys.stderr.flush()


def run_plan(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select plan`` in either mode."""
    if console.github_mode(environ):
        return run_github_plan(namespace, environ)
    # Imported here: the local mode's git runner is nothing a step on a runner needs.
    from .plan_local import run_local_plan

    return run_local_plan(namespace, environ)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
