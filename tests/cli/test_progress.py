"""The progress line: only on a terminal, erased at the end."""

from __future__ import annotations

import io
import time

from jev_select import contracts as c
from jev_select.cli.progress import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_written_when_stderr_is_not_a_terminal() -> None:
    stream = io.StringIO()
    with Progress(stream, delay=0.0, interval=0.01):
        time.sleep(0.05)
    assert stream.getvalue() == ""


def test_a_terminal_sees_the_elapsed_time_then_a_clean_line() -> None:
    stream = _Terminal()
    with Progress(stream, delay=0.0, interval=0.01):
        deadline = time.monotonic() + 5
        while c.PROGRESS_TEMPLATE.format(seconds=0) not in stream.getvalue():
            assert time.monotonic() < deadline
            time.sleep(0.01)
    text = stream.getvalue()
    assert text.startswith("\r" + c.PROGRESS_TEMPLATE.format(seconds=0))
    width = len(c.PROGRESS_TEMPLATE.format(seconds=0))
    assert text.endswith("\r" + " " * width + "\r")


def test_a_quick_run_writes_nothing() -> None:
    stream = _Terminal()
    with Progress(stream, delay=10.0):
        pass
    assert stream.getvalue() == ""
