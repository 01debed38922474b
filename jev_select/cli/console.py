"""Where the command line writes: one rule for every subcommand (docs/reference.md,
"Failure codes").

In GitHub mode (``GITHUB_ACTIONS=true``) diagnostics are workflow commands on stdout and stderr
stays empty; elsewhere they are plain lines on stderr. Texts come only from fixed templates.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping

from .. import contracts as c
from ..edges import cancellation
from ..errors import InputError, PlanningFailure, failure_message, input_error_message

__all__ = ["cancelled", "emit", "emit_for", "failure_text", "github_mode", "write"]

_GITHUB_ACTIONS = "GITHUB_ACTIONS"


def github_mode(environ: Mapping[str, str]) -> bool:
    """Whether the process runs as a GitHub Actions step."""
    return environ.get(_GITHUB_ACTIONS) == c.BOOL_TRUE


def emit(message: str, *, github: bool, level: str = "error") -> None:
    """One diagnostic line: ``::<level>::`` on stdout in GitHub mode, else plain on stderr."""
    if github:
        stream, line = sys.stdout, f"::{level}::{message}\n"
    else:
        stream, line = sys.stderr, message + "\n"
    stream.write(line)
    stream.flush()


def emit_for(message: str, environ: Mapping[str, str], *, level: str = "error") -> None:
    """``emit`` in the mode ``environ`` describes."""
    emit(message, github=github_mode(environ), level=level)


def write(text: str) -> None:
    """Text for the reader on stdout, flushed at once."""
    sys.stdout.write(text)
    sys.stdout.flush()


def failure_text(error: BaseException) -> str:
    """The fixed diagnostic for ``error``; anything unrecognised is an internal error."""
    # Only the genuine exception types with a known field or code choose the text; anything else
    # (a subclass, a field that is not a string) is an internal error.
    if (
        type(error) is InputError
        and isinstance(error.field, str)
        and error.field in c.INPUT_CONSTRAINTS
    ):
        return input_error_message(error.field)
    if type(error) is PlanningFailure and isinstance(error.code, str):
        return failure_message(error.code)
    return failure_message(c.FAILURE_INTERNAL_ERROR)


def cancelled(cancel: cancellation.Cancelled, *, github: bool, published: bool) -> int:
    """Stop what other threads started, print the one cancellation line, return 128 + signal."""
    cancellation.run_cleanups()
    message = c.CANCELLED_AFTER_PUBLICATION_MESSAGE if published else c.CANCELLED_MESSAGE
    # A closed stream must not turn a cancellation into a traceback.
    with contextlib.suppress(OSError):
        emit(message, github=github)
    return cancel.exit_code
