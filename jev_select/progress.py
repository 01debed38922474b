"""A progress line for people waiting at a terminal (local ``plan`` only).

Shell module. After a short delay it rewrites one line on stderr once a second with the elapsed
time, and erases it when the run ends. Nothing is written unless stderr is a terminal, so pipes,
files and CI logs never see it.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TextIO

from . import contracts as c

__all__ = ["Progress"]


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
