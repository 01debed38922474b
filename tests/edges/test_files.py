"""Opening user-named input files: regular files only, refused before they are opened.

The readers of every command go through ``open_regular_file``; these tests pin its two checks:
the type before opening (a device is never opened) and the type of what was opened (a path
replaced by a FIFO between the two cannot block).
"""

from __future__ import annotations

import builtins
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.hardstop import hard_stop

from jev_select.edges.files import NotRegularFile, open_regular_file
from jev_select.edges.readers import read_bytes, read_text

pytestmark = pytest.mark.posix


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def _directory(tmp_path: Path) -> Path:
    path = tmp_path / "folder"
    path.mkdir()
    return path


def _socket(tmp_path: Path) -> Path:
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()  # the socket file stays
    return path


MAKERS: dict[str, Callable[[Path], Path]] = {
    "fifo": _fifo,
    "directory": _directory,
    "socket": _socket,
    "dev-null": lambda _: Path(os.devnull),
    "dev-zero": lambda _: Path("/dev/zero"),
    "link-to-dev-zero": lambda tmp: _link(tmp, "/dev/zero"),
}


def _link(tmp_path: Path, target: str) -> Path:
    path = tmp_path / "link"
    path.symlink_to(target)
    return path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path opened through ``open()`` or ``os.open()`` while the test runs."""
    paths: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | os.PathLike):
            paths.append(os.fspath(file))
        return real_open(file, *args, **kwargs)

    def spy_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        paths.append(os.fspath(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    return paths


def test_a_regular_file_is_opened_in_blocking_mode(tmp_path: Path) -> None:
    path = tmp_path / "data.txt"
    path.write_bytes(b"content\n")
    link = _link(tmp_path, str(path))
    for candidate in (path, link, str(path)):
        with open_regular_file(candidate) as handle:
            assert os.get_blocking(handle.fileno())
            assert handle.read() == b"content\n"
    assert read_text(link, 100) == "content\n"


@pytest.mark.parametrize("kind", list(MAKERS))
def test_anything_else_is_refused_without_being_opened(
    tmp_path: Path, kind: str, opened: list[str]
) -> None:
    path = MAKERS[kind](tmp_path)
    with hard_stop(10):
        with pytest.raises(NotRegularFile) as raised:
            open_regular_file(path)
        assert read_bytes(path, 1_048_576) is None
    assert opened == []
    assert str(raised.value) == ""  # nothing of the path travels with the refusal


def test_a_missing_file_is_an_ordinary_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_regular_file(tmp_path / "absent")
    assert read_bytes(tmp_path / "absent", 10) is None


@pytest.fixture
def swapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A regular file that turns into a FIFO right after its type was looked up."""
    path = tmp_path / "report.json"
    path.write_bytes(b"{}")
    real_stat = os.stat
    swaps: list[Path] = []

    def stat_then_swap(target: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        result = real_stat(target, *args, **kwargs)
        if os.fspath(target) == str(path) and not swaps:
            swaps.append(path)
            path.unlink()
            os.mkfifo(path)
        return result

    monkeypatch.setattr(os, "stat", stat_then_swap)
    return path


def test_a_fifo_swapped_in_after_the_check_cannot_block(swapped: Path) -> None:
    with hard_stop(10), pytest.raises(NotRegularFile):
        open_regular_file(swapped)


def test_a_reader_given_a_swapped_path_answers_none(swapped: Path) -> None:
    with hard_stop(10):
        assert read_bytes(swapped, 100) is None
