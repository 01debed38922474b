"""A hard time limit for tests whose regression is a hang, not a wrong answer.

A FIFO without a writer blocks ``open()`` forever, and git reading one blocks its caller: such a
test must fail. ``SIGALRM`` interrupts the blocked call in the main thread, and the exception it
raises is a ``BaseException`` so that no ``except Exception`` on the way turns it into an
ordinary failure line (POSIX only, like the FIFOs).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["HardStop", "hard_stop"]


class HardStop(BaseException):
    """The guarded block ran past its limit: what it waited for would never have come."""


@contextmanager
def hard_stop(seconds: float) -> Iterator[None]:
    """Raise :class:`HardStop` in the main thread if the block is still running after
    ``seconds``."""

    def stop(_signal: int, _frame: FrameType | None) -> None:
        raise HardStop(f"still running after {seconds} s")

    if not hasattr(signal, "SIGALRM"):
        # Windows has no interval timer: a hang there runs into the CI job's timeout instead.
        yield
        return
    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
