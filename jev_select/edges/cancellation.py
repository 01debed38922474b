"""Cancellation by SIGINT or SIGTERM: one exception, raised once, never inside a critical step.

Edge module (process signals). A runner cancels a job by sending SIGINT and, a few seconds later,
SIGTERM. Python's defaults would print a ``KeyboardInterrupt`` traceback for the first and kill the
process without any clean-up for the second, leaving the temporary git repository and git children
in their own sessions behind. While :func:`handle_signals` is active, either signal raises
:class:`Cancelled` in the main thread (Python runs signal handlers only there), so every ``finally``
and ``with`` block on the way out runs: git children are killed, temporary directories removed, a
report that was not yet published deleted.

Two rules keep the clean-up itself safe:

- only the first signal counts; later ones (the runner's SIGTERM after its SIGINT, a second
  Ctrl-C) are ignored, so they cannot interrupt the clean-up the first one started;
- inside :func:`deferred`, a signal is held until the block ends. Steps that must not stop halfway
  (appending the outputs, removing a directory, taking hold of a child process just started) run
  there, and the cancellation takes effect right after them.

Worker threads never see :class:`Cancelled`; :func:`add_cleanup` lets an edge register what must
be stopped on their behalf (running git processes) when the main thread is cancelled.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TypeAlias

__all__ = [
    "CANCEL_SIGNALS",
    "Cancelled",
    "add_cleanup",
    "cancelled_by",
    "deferred",
    "handle_signals",
    "mark_published",
    "plan_published",
    "run_cleanups",
]

CANCEL_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)


class Cancelled(BaseException):
    """The process received SIGINT or SIGTERM. A ``BaseException``: ``except Exception`` blocks
    that turn errors into fixed diagnostics must not swallow it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + signal number."""
        return 128 + self.signum


class _State:
    def __init__(self) -> None:
        self.active = False
        self.depth = 0  # nesting of deferred() in the main thread
        self.pending: int | None = None  # a signal held by deferred()
        self.raised: int | None = None  # the signal Cancelled was raised for


_state = _State()

# What ``signal.signal`` hands back: a handler, SIG_DFL/SIG_IGN (ints), or None for one installed
# outside Python; each is put back as it was.
_Handler: TypeAlias = Callable[[int, FrameType | None], object] | int | None

# Set once the plan's outputs are written in full; it outlives handle_signals(), because a signal
# may still arrive after the command has returned and before the process is gone.
_published = threading.Event()
_cleanups: list[Callable[[], None]] = []
_cleanups_lock = threading.Lock()


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _raise(signum: int) -> None:
    _state.raised = signum
    raise Cancelled(signum)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    if _state.raised is not None:
        return  # already cancelling: let the clean-up finish
    if _state.depth > 0:
        if _state.pending is None:
            _state.pending = signum
        return
    _raise(signum)


@contextlib.contextmanager
def handle_signals() -> Iterator[None]:
    """Turn SIGINT and SIGTERM into :class:`Cancelled` for the duration of the block.

    The previous handlers are restored afterwards. Outside the main thread (where Python cannot
    install handlers) this does nothing, and an ignored signal stays ignored.
    """
    if not _in_main_thread() or _state.active:
        yield
        return
    previous: dict[signal.Signals, _Handler] = {}
    _state.active, _state.depth, _state.pending, _state.raised = True, 0, None, None
    _published.clear()
    try:
        for number in CANCEL_SIGNALS:
            # A signal the parent chose to ignore (SIGINT for a background job of a script)
            # stays ignored, as Python itself does at start-up.
            if signal.getsignal(number) is not signal.SIG_IGN:
                previous[number] = signal.signal(number, _on_signal)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        _state.active, _state.depth, _state.pending, _state.raised = False, 0, None, None


def mark_published() -> None:
    """Record that the plan's outputs were written in full: from here on the result stands."""
    _published.set()


def plan_published() -> bool:
    """Whether the current (or just finished) run wrote its plan's outputs in full."""
    return _published.is_set()


def cancelled_by() -> int | None:
    """The signal the current run was cancelled by, while :func:`handle_signals` is active."""
    return _state.raised


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold a cancellation until the block has finished, then raise it.

    A held cancellation replaces any exception the block raised: the run was cancelled. In a
    worker thread this is a no-op (signals never interrupt those).
    """
    if not _in_main_thread() or not _state.active:
        yield
        return
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
        if _state.depth == 0 and _state.pending is not None and _state.raised is None:
            signum, _state.pending = _state.pending, None
            _raise(signum)  # a cancellation outranks the block's own outcome


def add_cleanup(callback: Callable[[], None]) -> None:
    """Register ``callback`` to run (once per cancellation) by :func:`run_cleanups`."""
    with _cleanups_lock:
        if callback not in _cleanups:
            _cleanups.append(callback)


def run_cleanups() -> None:
    """Run every registered clean-up; a failing one never stops the others."""
    with _cleanups_lock:
        callbacks = list(_cleanups)
    for callback in callbacks:
        with contextlib.suppress(Exception):
            callback()
