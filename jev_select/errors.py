"""Exceptions that carry only fixed identifiers, never a supplied value."""

from __future__ import annotations

from typing import ClassVar

from . import contracts

__all__ = [
    "CodedError",
    "CommandFailure",
    "InputError",
    "InvocationError",
    "JevSelectError",
    "PlanningFailure",
    "failure_message",
    "input_error_message",
]


class JevSelectError(Exception):
    """The root of every exception this package raises, so a caller can catch them all at once.

    The one exception outside it is ``edges.cancellation.Cancelled``: a cancellation derives from
    ``BaseException`` on purpose, so that no ``except Exception`` on the way out can swallow it.
    """


class InputError(JevSelectError):
    """An input failed validation. Carries only the field name (``field``)."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field

    def __str__(self) -> str:
        return self.field


class InvocationError(JevSelectError):
    """The command line is not one the product accepts.

    ``message`` is argparse's explanation, shown with the usage in local mode only; GitHub mode
    prints the fixed ``invalid-invocation`` line, which never repeats what was typed.
    """

    def __init__(self, message: str = "") -> None:
        super().__init__()
        self.message = message

    def __str__(self) -> str:
        return ""


class CodedError(JevSelectError):
    """A failure that carries only a fixed code (``code``), never text from its cause.

    Each stage subclasses it with its own vocabulary, so a diagnostic can never be built from a
    supplied value, a provider answer or git output.
    """

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code

    def __str__(self) -> str:
        return self.code


class CommandFailure(CodedError):
    """A subcommand stopped with a code of its own vocabulary (``failures``).

    Each subcommand's failure class derives from it and names its vocabulary once, in the class
    statement (``class ResultsFailure(CommandFailure, failures=contracts.RESULTS_FAILURES)``).
    The command line prints every such failure in one place, so no subcommand formats or
    prints its own failure line.
    """

    failures: ClassVar[contracts.CommandFailures]

    def __init_subclass__(
        cls, *, failures: contracts.CommandFailures | None = None, **kwargs: object
    ) -> None:
        super().__init_subclass__(**kwargs)
        # A subclass of a subcommand's class speaks for the same subcommand.
        if failures is not None:
            cls.failures = failures

    @property
    def known_code(self) -> str:
        """``code`` when the vocabulary has it, else its fallback: the line never carries a code
        the documentation does not list."""
        if isinstance(self.code, str) and self.code in self.failures.codes:
            return self.code
        return self.failures.fallback

    @property
    def message(self) -> str:
        """The subcommand's one fixed line for this failure."""
        return self.failures.template.format(code=self.known_code)


class PlanningFailure(CodedError):
    """A hard failure of docs/reference.md, "Failure codes"; ``code`` is one of
    ``contracts.FAILURE_CODES``."""


def input_error_message(field: str) -> str:
    """The one-line diagnostic of docs/reference.md, "Input errors" for ``field`` (never the
    supplied value)."""
    constraint = contracts.INPUT_CONSTRAINTS.get(field)
    if constraint is None:
        return failure_message(contracts.FAILURE_INTERNAL_ERROR)
    return contracts.INPUT_ERROR_TEMPLATE.format(field=field, constraint=constraint)


def failure_message(code: str) -> str:
    """The one-line diagnostic of docs/reference.md, "Failure codes" for a hard failure ``code``."""
    if code not in contracts.FAILURE_CODES:
        code = contracts.FAILURE_INTERNAL_ERROR
    return contracts.FAILURE_TEMPLATE.format(code=code)
