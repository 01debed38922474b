"""The report inside an artifact zip: every bound refuses, and only a clean archive yields bytes."""

from __future__ import annotations

import io
import struct
import tracemalloc
import zipfile

import pytest

from jev_select import contracts as c
from jev_select.edges.github.artifacts import report_from_zip

REPORT = b'{"version": 5}\n'


def archive(*entries: tuple[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as target:
        for name, data in entries:
            target.writestr(name, data)
    return buffer.getvalue()


def test_the_one_report_comes_back_byte_for_byte() -> None:
    assert report_from_zip(archive(("report.json", REPORT))) == REPORT
    assert report_from_zip(archive(("report.json", REPORT), method=zipfile.ZIP_STORED)) == REPORT


def test_directories_beside_the_report_are_ignored() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        target.writestr(zipfile.ZipInfo("reports/"), b"")
        target.writestr("reports/report.json", REPORT)
    assert report_from_zip(buffer.getvalue()) == REPORT


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not a zip at all",
        archive(),
        archive(("report.json", REPORT), ("other.json", REPORT)),
        archive(("report.txt", REPORT)),
        archive(("../report.json", REPORT)),
        archive(("/report.json", REPORT)),
        archive(("a/../report.json", REPORT)),
        archive(*[(f"d{index}/", b"") for index in range(20)], ("report.json", REPORT)),
        archive(("report.json", REPORT), method=zipfile.ZIP_BZIP2),
        archive(("report.json", REPORT))[:-30],  # truncated central directory
    ],
    ids=[
        "empty",
        "not-zip",
        "no-entry",
        "two-files",
        "not-json",
        "parent-path",
        "absolute-path",
        "dot-dot-inside",
        "too-many-entries",
        "bzip2",
        "truncated",
    ],
)
def test_archives_that_are_not_one_clean_report_are_malformed(data: bytes) -> None:
    assert report_from_zip(data) == c.ROLLOUT_DETAIL_ARTIFACT_MALFORMED


def test_an_encrypted_entry_is_malformed() -> None:
    data = bytearray(archive(("report.json", REPORT), method=zipfile.ZIP_STORED))
    # Set the "encrypted" flag in the local header and in the central directory entry.
    data[6:8] = struct.pack("<H", 0x1)
    central = data.rindex(b"PK\x01\x02")
    data[central + 8 : central + 10] = struct.pack("<H", 0x1)
    assert report_from_zip(bytes(data)) == c.ROLLOUT_DETAIL_ARTIFACT_MALFORMED


def test_a_zip_bomb_is_too_large_without_being_inflated() -> None:
    inflated = c.ROLLOUT_REPORT_MAX_BYTES + 1
    bomb = archive(("report.json", b"0" * inflated))
    assert len(bomb) < inflated // 100  # a real bomb: tiny on the wire
    tracemalloc.start()
    try:
        assert report_from_zip(bomb) == c.ROLLOUT_DETAIL_ARTIFACT_TOO_LARGE
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1_048_576


def _lie_about_size(data: bytes, size: int) -> bytes:
    """Rewrite the declared uncompressed size in both headers."""
    patched = bytearray(data)
    patched[22:26] = struct.pack("<I", size)
    central = patched.rindex(b"PK\x01\x02")
    patched[central + 24 : central + 28] = struct.pack("<I", size)
    return bytes(patched)


def test_a_bomb_that_understates_its_size_stops_at_the_declared_size() -> None:
    bomb = _lie_about_size(archive(("report.json", b"0" * (c.ROLLOUT_REPORT_MAX_BYTES * 2))), 100)
    tracemalloc.start()
    try:
        outcome = report_from_zip(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # zipfile stops at the declared size and its CRC check then fails: never the bytes.
    assert outcome == c.ROLLOUT_DETAIL_ARTIFACT_MALFORMED
    assert peak < 2 * 1_048_576


def test_a_corrupted_body_fails_its_checksum() -> None:
    data = bytearray(archive(("report.json", REPORT * 50), method=zipfile.ZIP_STORED))
    data[40] ^= 0xFF  # a byte of the stored body
    assert report_from_zip(bytes(data)) == c.ROLLOUT_DETAIL_ARTIFACT_MALFORMED


def test_exactly_the_limit_is_accepted() -> None:
    body = b"1" * c.ROLLOUT_REPORT_MAX_BYTES
    assert report_from_zip(archive(("report.json", body))) == body
