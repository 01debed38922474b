"""``python -m jev_select`` and the ``jev-select`` console script: the command, cancellable from
the first instant to the last.

Loading the command's modules takes a good part of a short run, and ``main`` installs its signal
handlers only once they are loaded; after ``main`` has returned, the process still has to exit.
Outside ``main`` a minimal handler covers both windows: it prints the fixed cancellation line
(which says whether the plan had been published) and exits with 128 + signal, never with a
traceback and never killed by the signal itself.

Once ``main`` has returned, its result is final: everything it wrote is flushed and the process
ends at once with ``os._exit``. An orderly interpreter shutdown would add nothing (every file
and temporary directory is closed or removed by then, and no exit hook is registered) but would
spend tens of milliseconds tearing modules down, more on a loaded runner, after the deadline the
caller asked for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType
from typing import NoReturn

from . import contracts as c
from .edges import cancellation
from .edges.cancellation import CANCEL_SIGNALS


def _flush_and_exit(code: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)


def _signalled_outside_the_command(signum: int, _frame: FrameType | None) -> None:
    for number in CANCEL_SIGNALS:  # one line, even if the runner's second signal follows
        signal.signal(number, signal.SIG_IGN)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        stream, prefix = sys.stdout, "::error::"
    else:
        stream, prefix = sys.stderr, ""
    if cancellation.plan_published():
        message = c.CANCELLED_AFTER_PUBLICATION_MESSAGE
    else:
        message = c.CANCELLED_MESSAGE
    with contextlib.suppress(OSError, ValueError):
        stream.write(prefix + message + "\n")
    _flush_and_exit(128 + signum)


def run() -> NoReturn:
    """Run the command with the process's arguments and exit with its status."""
    for number in CANCEL_SIGNALS:
        # A signal the parent chose to ignore stays ignored, as in ``main``.
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, _signalled_outside_the_command)
    from .cli import main

    # main restores this handler when it returns, so it also covers the way out.
    _flush_and_exit(main())


if __name__ == "__main__":
    run()
