"""``python -m jev_select`` and the ``jev-select`` console script: the command, cancellable from
the first instant.

Loading the command's modules takes a good part of a short run, and ``main`` installs its signal
handlers only once they are loaded. A SIGINT in that window would print a ``KeyboardInterrupt``
traceback (in GitHub mode stderr stays empty), so a minimal handler covers it: nothing has been
started or written yet, so it only prints the fixed cancellation line and exits with 128 + signal.
Once ``main`` has returned, the run is over and its own exit status stands.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import NoReturn

from . import contracts as c
from .edges.cancellation import CANCEL_SIGNALS


def _cancelled_while_loading(signum: int, _frame: FrameType | None) -> None:
    for number in CANCEL_SIGNALS:  # one line, even if the runner's second signal follows
        signal.signal(number, signal.SIG_IGN)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        stream, prefix = sys.stdout, "::error::"
    else:
        stream, prefix = sys.stderr, ""
    try:
        stream.write(prefix + c.CANCELLED_MESSAGE + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass
    raise SystemExit(128 + signum)


def run() -> NoReturn:
    """Run the command with the process's arguments and exit with its status."""
    for number in CANCEL_SIGNALS:
        # A signal the parent chose to ignore stays ignored, as in ``main``.
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, _cancelled_while_loading)
    from .cli import main

    code = main()
    for number in CANCEL_SIGNALS:
        if signal.getsignal(number) is _cancelled_while_loading:
            signal.signal(number, signal.SIG_DFL)
    raise SystemExit(code)


if __name__ == "__main__":
    run()
