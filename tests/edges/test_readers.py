"""Fail-closed readers: a report is returned only when it is strict JSON and a valid v5 report."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.reports import make_report

from jev_select import contracts as c
from jev_select.core.jsonutil import pretty_json
from jev_select.core.report import report_text
from jev_select.edges.readers import read_bytes, read_json, read_report, read_text

REPORT = make_report({"unit": True, "docs": False})


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "report.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_valid_report_is_returned_unchanged(tmp_path: Path) -> None:
    path = write(tmp_path, report_text(REPORT))
    assert read_report(path) == REPORT
    assert read_report(str(path)) == REPORT


def test_enforce_reports_are_valid_too(tmp_path: Path) -> None:
    report = make_report({"unit": True, "docs": False}, mode="enforce")
    assert read_report(write(tmp_path, pretty_json(report))) == report


def mutated(**changes: Any) -> str:
    return json.dumps({**REPORT, **changes})


@pytest.mark.parametrize(
    "text",
    [
        mutated(version=4),
        mutated(version=6),
        mutated(version=5.0),
        mutated(version="5"),
        mutated(extra_key=True),
        json.dumps({k: v for k, v in REPORT.items() if k != "usage"}),
        mutated(tested_sha="not a sha"),
        mutated(tasks={"unit": {"proposed_run": True, "run": True}}),
        mutated(
            mode="shadow",
            tasks={"unit": {"proposed_run": False, "run": False, "reasons": ["shadow-mode"]}},
        ),
    ],
    ids=[
        "version-4",
        "version-6",
        "version-float",
        "version-string",
        "extra-key",
        "missing-key",
        "bad-sha",
        "task-without-reasons",
        "shadow-task-not-run",
    ],
)
def test_invalid_reports_read_as_none(tmp_path: Path, text: str) -> None:
    assert read_report(write(tmp_path, text)) is None


def test_truncated_report(tmp_path: Path) -> None:
    text = report_text(REPORT)
    assert read_report(write(tmp_path, text[: len(text) // 2])) is None


def test_duplicate_keys(tmp_path: Path) -> None:
    text = report_text(REPORT)
    duplicated = text.replace('"version": 5,', '"version": 5,\n  "version": 5,', 1)
    assert duplicated != text
    assert read_report(write(tmp_path, duplicated)) is None


def test_nested_duplicate_keys(tmp_path: Path) -> None:
    text = report_text(REPORT)
    duplicated = text.replace('"run": true,', '"run": true,\n      "run": true,', 1)
    assert duplicated != text
    assert read_report(write(tmp_path, duplicated)) is None


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers(tmp_path: Path, constant: str) -> None:
    text = report_text(REPORT).replace('"skip_below": 0.05', f'"skip_below": {constant}')
    assert constant in text
    assert read_report(write(tmp_path, text)) is None


@pytest.mark.parametrize(
    "content",
    [b"", b"null", b"[]", b"5", b"\xff\xfe{}", "\ufeff".encode() + report_text(REPORT).encode()],
    ids=["empty", "null", "array", "number", "not-utf8", "bom"],
)
def test_other_non_reports(tmp_path: Path, content: bytes) -> None:
    assert read_report(write(tmp_path, content)) is None


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert read_report(tmp_path / "absent.json") is None
    assert read_report(tmp_path) is None


def test_oversized_file_is_refused_without_parsing(tmp_path: Path) -> None:
    path = write(tmp_path, b" " * 100 + b"{}")
    assert read_bytes(path, 50) is None
    assert read_bytes(path, 102) == b" " * 100 + b"{}"
    assert read_json(path, 50) is None
    assert read_json(path, 200) == {}


def test_text_reader_is_strict_utf8(tmp_path: Path) -> None:
    assert read_text(write(tmp_path, "héllo"), 100) == "héllo"
    assert read_text(write(tmp_path, b"h\xe9llo"), 100) is None


def test_dash_reads_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b'{"a": 1}'), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert read_json(c.STDIN_PATH, 100) == {"a": 1}
