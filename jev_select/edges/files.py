"""Reading a file the user names only when it is a regular file, and writing files whole.

Edge module (docs/reference.md, "Commands"). Opening a FIFO that has no writer blocks forever,
reading a device such as ``/dev/zero`` never ends, and opening some devices acts on them, so
every input that must be a file goes through :func:`open_regular_file`. Every file the product
writes for a reader (reports, results files, replay JSON and campaigns, rollout measurements)
appears whole or not at all: :func:`write_atomically` and :func:`write_directory_atomically`.
It imports nothing beyond the standard library: ``plan`` reads its event file with it on every
pull request.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from typing import BinaryIO

from ..errors import JevSelectError

__all__ = [
    "NotRegularFile",
    "open_regular_file",
    "read_capped",
    "read_capped_text",
    "write_atomically",
    "write_directory_atomically",
]

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


def read_capped(path: str | os.PathLike[str], cap: int) -> bytes:
    """The first bytes of the regular file at ``path``, ``cap + 1`` of them at most: one more than
    ``cap``, so the caller can tell a file over the cap from one exactly at it. Raises
    ``OSError`` (``NotRegularFile`` included) when the file cannot be read."""
    with open_regular_file(path) as handle:
        return handle.read(cap + 1)


def read_capped_text(path: str | os.PathLike[str], cap: int) -> str | None:
    """:func:`read_capped` decoded as strict UTF-8; ``None`` when it is not UTF-8.

    A file over ``cap`` comes back as its first ``cap + 1`` bytes (when those decode), so the
    caller's own size check refuses it with the caller's own diagnostic."""
    data = read_capped(path, cap)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# How many fresh names a writer tries before it gives up (a collision needs a 64-bit match).
_NAME_ATTEMPTS = 16


def write_atomically(
    path: str | os.PathLike[str], text: str, *, prefix: str, private: bool = True
) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path``, replacing any earlier file.

    The text goes to a new file beside ``path`` (named ``prefix`` and random hex), is flushed to
    disk and renamed into place, so a reader sees the old file or the whole new one, never a
    part. ``private`` files are 0600 whatever the umask; others get the mode any new file gets.
    Raises ``OSError`` (or the text's ``UnicodeEncodeError``); the staging file is removed again
    on any failure, a cancellation included.
    """
    data = text.encode("utf-8")
    final_path = os.path.abspath(path)
    directory = os.path.dirname(final_path)
    descriptor, staging_path = _create_beside(directory, prefix, 0o600 if private else 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            if private:
                os.fchmod(handle.fileno(), 0o600)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staging_path, final_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging_path)
        raise


def _create_beside(directory: str, prefix: str, mode: int) -> tuple[int, str]:
    """A new file in ``directory`` open for writing, created with ``mode`` (less the umask)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(_NAME_ATTEMPTS):
        candidate = os.path.join(directory, prefix + os.urandom(8).hex())
        try:
            return os.open(candidate, flags, mode), candidate
        except FileExistsError:
            continue
    raise FileExistsError()


def write_directory_atomically(
    target: str | os.PathLike[str], files: Iterable[tuple[str, bytes]], *, prefix: str
) -> None:
    """Create the directory ``target`` holding ``files`` (name and content), all at once.

    The files are written in a new private directory beside ``target`` (named ``prefix`` and
    random characters), which is then renamed to ``target``: a reader sees no directory or a
    complete one. Raises ``OSError``, also when ``target`` exists and is not an empty directory;
    the staging directory is removed again on any failure, a cancellation included.
    """
    final_path = os.path.abspath(target)
    staging = tempfile.mkdtemp(dir=os.path.dirname(final_path), prefix=prefix)
    try:
        for name, content in files:
            with open(os.path.join(staging, name), "wb") as handle:
                handle.write(content)
        os.rename(staging, final_path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
