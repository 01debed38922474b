"""Report v5 as a tree of frozen attrs classes (docs/reference.md, "Report fields").

The classes mirror ``schemas/report.schema.json`` one to one: an attribute per JSON key, declared
in the order the report file writes its keys, so that ``report_json`` gives back the very bytes a
report was read from. Keys the schema lets a writer leave out (a chunk's ``paths`` and
``requests``, a provenance's ``resolvedSha``, a job metadata entry's ``workflow`` and ``job``, a
location's ``endLine`` and ``endColumn``) are None in the class and absent from the JSON; present,
they must hold a value, never null, exactly as the schema says.

Vocabulary fields (mode, status, reasons, errors) are plain strings holding the values of
``jev_select.contracts``; compare them with ``==``. The converter checks shapes and types; the
JSON Schema stays the contract check of a report read from a file (patterns, ranges, vocabularies)
and ``core.report.validate_report`` the check of the cross-field invariants.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .convert import register_document, structure, unstructure

__all__ = [
    "JobMetadata",
    "Provenance",
    "ReportChunk",
    "ReportDurations",
    "ReportModel",
    "ReportObservation",
    "ReportRequest",
    "ReportTask",
    "ReportUsage",
    "ReportV5",
    "SourceLocation",
    "SourceLocator",
    "as_report",
    "parse_report",
    "report_json",
]


@attrs.frozen(kw_only=True)
class ReportUsage:
    """Token counts of one request, or summed over a run."""

    input_tokens: int
    output_tokens: int


@attrs.frozen(kw_only=True)
class ReportModel:
    """The model asked for, the one this version expects, and the one that answered (if any)."""

    requested: str
    expected: str
    returned: str | None


@attrs.frozen(kw_only=True)
class ReportDurations:
    """Wall-clock milliseconds; ``jev`` is None when no request was attempted."""

    collection: float
    jev: float | None
    total: float


@attrs.frozen(kw_only=True)
class ReportTask:
    """One task's decision: what the model proposed, what runs, and why."""

    proposed_run: bool | None
    run: bool
    reasons: tuple[str, ...]


@attrs.frozen(kw_only=True)
class SourceLocation:
    """A 1-based position in a file; the end is optional in the schema."""

    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None


@attrs.frozen(kw_only=True)
class SourceLocator:
    """Where a piece of evidence was read: repository, commit, file and position."""

    repository: str
    commit: str
    file: str
    location: SourceLocation


@attrs.frozen(kw_only=True)
class Provenance:
    """One source a task's metadata came from, with the hash of what was read."""

    kind: str
    locator: SourceLocator
    sha256: str
    resolved_sha: str | None = None


@attrs.frozen(kw_only=True)
class JobMetadata:
    """What the metadata resolver found for one task, and what it could not find."""

    incomplete: bool
    missing: tuple[str, ...]
    provenance: tuple[Provenance, ...]
    hashes: Mapping[str, str]
    warnings: tuple[str, ...]
    native_dependencies: tuple[str, ...]
    workflow: str | None = None
    job: str | None = None


@attrs.frozen(kw_only=True)
class ReportRequest:
    """One request sent (or not) for a chunk."""

    task_ids: tuple[str, ...]
    status: str
    model: str | None
    usage: ReportUsage | None
    duration_ms: float | None
    error: str | None


@attrs.frozen(kw_only=True)
class ReportChunk:
    """One byte range of the diff and what the model said about it."""

    index: int
    start_byte: int
    end_byte: int
    paths: tuple[str, ...] | None = None
    diff_hash: str
    state_hash: str
    diff_bytes: int
    status: str
    probabilities: Mapping[str, float] | None
    model: str | None
    usage: ReportUsage | None
    duration_ms: float | None
    error: str | None
    requests: tuple[ReportRequest, ...] | None = None


@attrs.frozen(kw_only=True)
class ReportObservation:
    """How the diff was shown to the model and what came back, chunk by chunk."""

    strategy: str
    status: str
    chunks: tuple[ReportChunk, ...]


@attrs.frozen(kw_only=True)
class ReportV5:
    """The whole report; attribute order is the written key order (``contracts.REPORT_FIELDS``)."""

    version: int
    tested_ref: str
    diff_base_sha: str | None
    job_metadata: Mapping[str, JobMetadata]
    observation_error: str | None
    metadata_sha: str
    base_sha: str
    head_sha: str
    tested_sha: str
    selection_hash: str
    skip_below: float
    diff_hash: str | None
    diff_bytes: int | None
    changed_path_count: int | None
    mode: str
    status: str
    model: ReportModel
    durations_ms: ReportDurations
    usage: ReportUsage | None
    tasks: Mapping[str, ReportTask]
    observation: ReportObservation | None


# Only the classes with a camelCase key or a key a writer may leave out need more than the
# converter's default hooks.
register_document(
    SourceLocation,
    keys={"end_line": "endLine", "end_column": "endColumn"},
    optional=("end_line", "end_column"),
)
register_document(Provenance, keys={"resolved_sha": "resolvedSha"}, optional=("resolved_sha",))
register_document(
    JobMetadata,
    keys={"native_dependencies": "nativeDependencies"},
    optional=("workflow", "job"),
)
register_document(ReportChunk, optional=("paths", "requests"))


def parse_report(value: object) -> ReportV5:
    """The typed report of a parsed JSON value; ``convert.DocumentError`` names the first field
    that does not have the schema's shape (never its value)."""
    return structure(value, ReportV5)


def as_report(report: ReportV5 | Mapping[str, object]) -> ReportV5:
    """``report`` itself, or the typed report of a parsed report mapping (what ``json.loads``
    of a report file gives); the entry point of a function that takes either."""
    if isinstance(report, ReportV5):
        return report
    return parse_report(report if isinstance(report, dict) else dict(report))


def report_json(report: ReportV5) -> dict[str, object]:
    """The JSON value of ``report``, keys in the written order (``report_text`` takes it)."""
    value = unstructure(report)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value
