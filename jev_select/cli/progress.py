"""Progress lines for people waiting at a terminal.

Shell module. ``Progress`` (local ``plan``) rewrites one line on stderr once a second with the
elapsed time after a short delay, and erases it when the run ends; ``show_step`` and
``end_steps`` (``history``, ``rollout``) rewrite one line per item of a longer walk. Nothing is
written unless stderr is a terminal, so pipes, files and CI logs never see it.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO

from .. import contracts as c

__all__ = ["Progress", "end_steps", "show_step"]


class Progress:
    """``with Progress(sys.stderr): ...`` shows the elapsed time while the block runs."""

    def __init__(self, stream: TextIO, *, delay: float = 1.0, interval: float = 1.0) -> None:
        self._stream = stream
        self._delay = delay
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._width = 0

    def _active(self) -> bool:
        try:
            return bool(self._stream.isatty())
        except (AttributeError, OSError, ValueError):
            return False

    def __enter__(self) -> Progress:
        if self._active():
            self._thread = threading.Thread(target=self._run, daemon=True, name="jev-progress")
            self._thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        if self._stop.wait(self._delay):
            return
        while not self._stop.is_set():
            line = c.PROGRESS_TEMPLATE.format(seconds=int(time.monotonic() - started))
            self._width = max(self._width, len(line))
            try:
                self._stream.write("\r" + line.ljust(self._width))
                self._stream.flush()
            except (OSError, ValueError):
                return
            self._stop.wait(self._interval)

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._width:
            try:
                self._stream.write("\r" + " " * self._width + "\r")
                self._stream.flush()
            except (OSError, ValueError):
                pass


def _terminal() -> bool:
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def show_step(phase: str, index: int, total: int, item: str) -> None:
    """``jev-select: <phase> <index>/<total> <item>`` on stderr, replacing the previous step."""
    if _terminal():
        line = c.PROGRESS_STEP_TEMPLATE.format(phase=phase, index=index, total=total, item=item)
        sys.stderr.write("\r" + line + "\033[K")
        sys.stderr.flush()


def end_steps() -> None:
    """Erase the step line."""
    if _terminal():
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
