"""Reading measurement directories: ``DIR/<id>/report.json`` with the ``results.json`` and the
``preview.json`` beside it, as ``rollout`` and ``history`` write them.

Edge module. :func:`list_measurements` walks the directories (a subdirectory without
``report.json`` is not a measurement); :func:`read_checked` reads one entry with every check of
the shadow analysis, raising ``AnalysisError`` with its code (``calibrate``);
:func:`read_changes` reads a whole directory for the ceiling and never raises, so that a command
that has finished its own work (``history``) can print the ceiling after it.

A results file's ``ci`` block is read on its own: the shadow analysis checks the task results,
and the block is checked against the results schema, whose version it must carry.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from .. import contracts as c
from ..core.ceiling import CeilingChange, PreviewDocument
from ..core.convert import DocumentError, structure
from ..core.jsonutil import code_unit_key
from ..core.preview import validate_preview
from ..core.report_v5 import as_report
from ..core.results import Results
from ..core.shadow import AnalysisError, Measurement, checked_measurement
from .readers import read_json, read_report

if TYPE_CHECKING:
    pass

__all__ = [
    "MeasurementEntry",
    "list_measurements",
    "read_changes",
    "read_checked",
    "read_pair",
    "read_preview",
]


@attrs.frozen
class MeasurementEntry:
    """One ``<id>`` subdirectory: its report, and the results and preview files when present."""

    name: str
    report: str
    results: str | None
    preview: str | None


def _file(directory: str, name: str) -> str | None:
    path = os.path.join(directory, name)
    return path if os.path.isfile(path) else None


def list_measurements(directories: Sequence[str]) -> tuple[MeasurementEntry, ...]:
    """Every measurement of the directories, each directory's in code-unit order of the names;
    ``AnalysisError`` (``invalid-shadow-measurement``) when a directory cannot be listed."""
    entries: list[MeasurementEntry] = []
    for directory in directories:
        try:
            names = sorted(os.listdir(directory), key=code_unit_key)
        except OSError:
            raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT) from None
        for name in names:
            entry = os.path.join(directory, name)
            report = _file(entry, c.REPORT_FILE_NAME)
            if report is None:
                continue  # not a measurement
            entries.append(
                MeasurementEntry(
                    name=name,
                    report=report,
                    results=_file(entry, c.CALIBRATE_RESULTS_FILE_NAME),
                    preview=_file(entry, c.PREVIEW_FILE_NAME),
                )
            )
    return tuple(entries)


def read_preview(path: str | None) -> PreviewDocument | None:
    """The preview in ``path`` once it matches ``schemas/preview.schema.json``, else None: a
    preview that cannot be read counts as none, which the ceiling counts as wholly forced."""
    if path is None:
        return None
    value = read_json(path, c.PREVIEW_READ_MAX_BYTES)
    try:
        if not validate_preview(value):
            return None
        return structure(value, PreviewDocument)
    except (DocumentError, ValueError, TypeError):
        return None


def read_checked(entry: MeasurementEntry) -> tuple[Measurement, CeilingChange]:
    """One labelled entry, read as ``calibrate`` reads a pair: the measurement of the threshold
    table (the checked results without their ci block) and the change of the ceiling (with it).
    ``AnalysisError`` with the first failing check's code."""
    assert entry.results is not None  # only labelled entries are calibrated
    return read_pair(entry.report, entry.results, entry.preview)


def read_pair(
    report_path: str, results_path: str, preview_path: str | None = None
) -> tuple[Measurement, CeilingChange]:
    """A REPORT RESULTS pair (and a preview, when a path is given), as :func:`read_checked`."""
    report = read_json(report_path, c.REPORT_READ_MAX_BYTES)
    results = read_json(results_path, c.RESULTS_READ_MAX_BYTES)
    if report is None or results is None:
        raise AnalysisError(c.ANALYSIS_INVALID_SHADOW_MEASUREMENT)
    typed_report, typed_results = checked_measurement(report, results)
    # The threshold table reads the results as analyze reports on them, without the jobs.
    measurement = Measurement(report=typed_report, results=attrs.evolve(typed_results, ci=None))
    change = CeilingChange(
        report=typed_report, results=typed_results, preview=read_preview(preview_path)
    )
    return measurement, change


def _lenient(entry: MeasurementEntry) -> CeilingChange | None:
    report = read_report(entry.report)
    if report is None:
        return None
    try:
        typed = as_report(report)
    except DocumentError:
        return None
    results: Results | None = None
    if entry.results is not None:
        try:
            results = read_pair(entry.report, entry.results)[1].results
        except (AnalysisError, DocumentError):
            results = None  # a pair that does not check out has no timings to count
    return CeilingChange(report=typed, results=results, preview=read_preview(entry.preview))


def read_changes(directory: str) -> tuple[CeilingChange, ...]:
    """Every readable report of ``directory`` as a change of the ceiling; never raises.

    A report that cannot be read is left out; a results file that does not pair with its report
    (or is missing) leaves the change without timings, which the ceiling counts."""
    try:
        entries = list_measurements([directory])
    except AnalysisError:
        return ()
    changes = (_lenient(entry) for entry in entries)
    return tuple(change for change in changes if change is not None)
