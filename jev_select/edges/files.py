"""Opening a file the user names, for reading, only when it is a regular file.

Edge module (docs/reference.md, "Commands"). Opening a FIFO that has no writer blocks forever,
reading a device such as ``/dev/zero`` never ends, and opening some devices acts on them, so
every input that must be a file goes through :func:`open_regular_file`. It imports nothing beyond
the standard library: ``plan`` reads its event file with it on every pull request.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import BinaryIO

from ..errors import JevSelectError

__all__ = ["NotRegularFile", "open_regular_file"]

# Windows has neither flag, and no FIFO a path can name.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
    | _NONBLOCK
)


class NotRegularFile(JevSelectError, OSError):
    """The path names a FIFO, a device, a socket or a directory. Carries nothing of the path."""


def open_regular_file(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` open for binary reading; raises ``NotRegularFile`` when it is not a regular file
    (symbolic links are followed) and ``OSError`` when it cannot be opened."""
    # The check before opening is what keeps a device from ever being opened.
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise NotRegularFile()
    # The path may be replaced between the check and the open: with O_NONBLOCK the open of a FIFO
    # returns at once (O_NOCTTY keeps a terminal from becoming ours), and the type of what was
    # actually opened decides.
    descriptor = os.open(path, _FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise NotRegularFile()
        if _NONBLOCK:
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(descriptor)
        raise
