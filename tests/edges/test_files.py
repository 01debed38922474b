"""Opening user-named input files: regular files only, refused before they are opened.

The readers of every command go through ``open_regular_file``; these tests pin its two checks:
the type before opening (a device is never opened) and the type of what was opened (a path
replaced by a FIFO between the two cannot block).
"""

from __future__ import annotations

import builtins
import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.hardstop import hard_stop

from jev_select.edges.files import (
    NotRegularFile,
    open_regular_file,
    read_capped,
    read_capped_text,
    write_atomically,
    write_directory_atomically,
)
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


# ---------------------------------------------------------------------------------------------
# Capped reads
# ---------------------------------------------------------------------------------------------


def test_a_capped_read_stops_one_byte_past_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "table.yml"
    path.write_bytes(b"abcdef")
    assert read_capped(path, 10) == b"abcdef"
    assert read_capped(path, 6) == b"abcdef"
    assert read_capped(path, 3) == b"abcd"  # over the cap: the caller sees that it is


def test_a_capped_text_is_strict_utf8_and_raises_when_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "table.yml"
    path.write_bytes("café".encode())
    assert read_capped_text(path, 100) == "café"
    path.write_bytes(b"\xff")
    assert read_capped_text(path, 100) is None
    with pytest.raises(NotRegularFile):
        read_capped_text(_fifo(tmp_path), 100)
    with pytest.raises(FileNotFoundError):
        read_capped_text(tmp_path / "missing", 100)


# ---------------------------------------------------------------------------------------------
# Atomic writes
# ---------------------------------------------------------------------------------------------


def test_an_atomic_write_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("old\n")
    write_atomically(path, "new\r\ncafé\n", prefix=".staging-")
    assert path.read_bytes() == "new\r\ncafé\n".encode()  # newlines as given
    assert os.listdir(tmp_path) == ["results.json"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_shared_file_gets_the_usual_mode(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        write_atomically(tmp_path / "expected.json", "{}\n", prefix=".staging-", private=False)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "expected.json").stat().st_mode) == 0o644


def test_a_failed_atomic_write_leaves_the_old_file_and_no_staging_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "report.json"
    path.write_text("old\n")

    def failing_replace(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, "new\n", prefix=".staging-")
    assert os.listdir(tmp_path) == ["report.json"]
    assert path.read_text() == "old\n"


def test_an_unencodable_text_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(UnicodeEncodeError):
        write_atomically(tmp_path / "report.json", "\ud800", prefix=".staging-")
    assert os.listdir(tmp_path) == []


def test_an_atomic_write_into_a_missing_directory_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "missing" / "report.json", "{}", prefix=".staging-")


def test_a_directory_appears_whole(tmp_path: Path) -> None:
    target = tmp_path / "123"
    write_directory_atomically(target, [("a.json", b"1"), ("b.json", b"2")], prefix=".staging-")
    assert os.listdir(tmp_path) == ["123"]
    assert sorted(os.listdir(target)) == ["a.json", "b.json"]
    assert (target / "b.json").read_bytes() == b"2"


def test_a_directory_that_cannot_appear_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "123"
    target.mkdir()
    (target / "labels.json").write_text("{}")  # a measurement already there is left alone
    with pytest.raises(OSError):  # noqa: PT011 - the errno differs between systems
        write_directory_atomically(target, [("a.json", b"1")], prefix=".staging-")
    assert os.listdir(tmp_path) == ["123"]
    assert os.listdir(target) == ["labels.json"]
