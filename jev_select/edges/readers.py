"""Reading reports, results files and text that may hold a plan block, fail-closed.

Edge module. Every reader returns ``None`` on any problem (missing file, not a regular file,
oversized, not UTF-8, not strict JSON, failed validation) and never raises, so a caller can only
act on content that passed every check. Nothing read here is ever echoed.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO

from .. import contracts as c
from ..core.jsonutil import strict_loads
from ..core.report import validate_report
from ..core.shadow import Analysis, AnalysisError, Measurement, checked_measurement, shadow_analysis
from .files import open_regular_file

__all__ = [
    "parse_report",
    "read_analysis",
    "read_bytes",
    "read_json",
    "read_measurement",
    "read_report",
    "read_text",
]


def _read_capped(handle: BinaryIO, cap: int) -> bytes | None:
    data = handle.read(cap + 1)
    if not isinstance(data, bytes) or len(data) > cap:
        return None
    return data


def read_bytes(path: str | os.PathLike[str], cap: int) -> bytes | None:
    """The content of ``path`` (``-`` is standard input), or ``None`` when unreadable, not a
    regular file or over ``cap`` bytes."""
    try:
        if os.fspath(path) == c.STDIN_PATH:
            return _read_capped(sys.stdin.buffer, cap)
        with open_regular_file(path) as handle:
            return _read_capped(handle, cap)
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def read_text(path: str | os.PathLike[str], cap: int) -> str | None:
    """The strict UTF-8 text of ``path`` (``-`` is standard input), or ``None``."""
    data = read_bytes(path, cap)
    if data is None:
        return None
    try:
        return data.decode("utf-8", "strict")
    except UnicodeDecodeError:
        return None


def read_json(path: str | os.PathLike[str], cap: int) -> object | None:
    """The strict JSON value in ``path`` (no duplicate keys, no NaN), or ``None``.

    A file holding the JSON literal ``null`` is indistinguishable from a failure, which is fine:
    no caller accepts ``null``.
    """
    data = read_bytes(path, cap)
    if data is None:
        return None
    try:
        value: object = strict_loads(data)
    except Exception:
        return None
    return value


def read_report(path: str | os.PathLike[str]) -> dict[str, object] | None:
    """A report v5 that passed schema and invariant validation, or ``None``. Never raises."""
    data = read_bytes(path, c.REPORT_READ_MAX_BYTES)
    return parse_report(data) if data is not None else None


def parse_report(data: bytes) -> dict[str, object] | None:
    """The report v5 in ``data`` if it passes schema and invariant validation, else ``None``.
    Never raises."""
    try:
        value: object = strict_loads(data)
        # Exactly the integer 5: the schema's const would also accept 5.0.
        if not isinstance(value, dict) or type(value.get("version")) is not int:
            return None
        if value["version"] != c.REPORT_VERSION:
            return None
        validate_report(value)
        return value
    except Exception:
        return None


def _read_pair(report_path: str, results_path: str) -> tuple[object, object]:
    report = read_json(report_path, c.REPORT_READ_MAX_BYTES)
    results = read_json(results_path, c.RESULTS_READ_MAX_BYTES)
    if report is None or results is None:
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    return report, results


def read_analysis(report_path: str, results_path: str) -> Analysis:
    """The shadow analysis of one ``analyze`` pair; raises ``AnalysisError`` with the first
    failing check's code (an unreadable file is ``invalid-shadow-measurement``)."""
    return shadow_analysis(*_read_pair(report_path, results_path))


def read_measurement(report_path: str, results_path: str) -> Measurement:
    """The shadow report and results file of one ``calibrate`` pair, once they passed every
    check of the shadow analysis, with the codes of :func:`read_analysis`.

    Both read a pair the same way and refuse it by the same checks (``checked_measurement``), so
    neither command accepts a pair the other refuses. The measurement holds both typed.
    """
    report, results = _read_pair(report_path, results_path)
    typed_report, typed_results = checked_measurement(report, results)
    return Measurement(report=typed_report, results=typed_results)
