"""Report v5 as typed classes: every report reads into them and writes back byte for byte, and
the converter refuses the shapes the JSON Schema refuses."""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import calibration
from support.reports import make_report as minimal_report
from support.strategies import SHAS, TASK_IDS
from test_report import ALL_REPORTS, INVALID_MUTATIONS, mutated

from jev_select import contracts as c
from jev_select.core.convert import DocumentError
from jev_select.core.jsonutil import strict_loads
from jev_select.core.report import report_text, validate_report
from jev_select.core.report_v5 import (
    ReportChunk,
    ReportV5,
    as_report,
    parse_report,
    report_json,
)
from jev_select.errors import PlanningFailure

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = jsonschema.Draft202012Validator(
    strict_loads((ROOT / "jev_select" / "schemas" / c.REPORT_SCHEMA_FILE).read_bytes())
)

Document = dict[str, object]


def _loaded(report: object) -> Document:
    """A deep plain copy, as a report file reads back."""
    value = json.loads(json.dumps(report))
    assert isinstance(value, dict)
    return value


def _round_trip(report: Document) -> None:
    text = report_text(report)
    assert report_text(report_json(parse_report(report))) == text
    assert report_text(report_json(parse_report(json.loads(text)))) == text


# --------------------------------------------------------------------------------------------
# Every report the tests build
# --------------------------------------------------------------------------------------------


def _test_reports() -> dict[str, Callable[[], Document]]:
    reports: dict[str, Callable[[], Document]] = {
        f"built-{name}": make for name, make in ALL_REPORTS.items()
    }
    reports["minimal-shadow"] = lambda: minimal_report({"a": True, "b": False, "c": None})
    reports["minimal-enforce"] = lambda: minimal_report({"a": True, "b": False}, mode="enforce")
    for index, (report, _) in enumerate(calibration.ALL_PAIRS):
        reports[f"calibration-{index}"] = functools.partial(copy.deepcopy, report)
    return reports


TEST_REPORTS = _test_reports()


@pytest.mark.parametrize("name", sorted(TEST_REPORTS))
def test_every_test_report_round_trips_byte_identically(name: str) -> None:
    _round_trip(TEST_REPORTS[name]())


def test_attributes_read_what_the_keys_hold() -> None:
    document = ALL_REPORTS["planned"]()
    report = parse_report(document)
    assert report.version == c.REPORT_VERSION
    assert report.mode == c.MODE_ENFORCE
    assert report.tasks["unit"].reasons == tuple(document["tasks"]["unit"]["reasons"])
    assert report.observation is not None
    chunk = report.observation.chunks[0]
    assert chunk.paths == ("src/app.py",)
    assert chunk.requests is not None
    assert chunk.requests[0].task_ids
    entry = report.job_metadata["unit"]
    assert entry.native_dependencies == ("lint",)
    assert entry.workflow == ".github/workflows/ci.yml"
    assert entry.provenance[0].locator.location.end_line == 9
    assert entry.provenance[0].resolved_sha is None


def test_an_integral_number_stays_an_integer() -> None:
    document = _loaded(ALL_REPORTS["planned"]())
    document["skip_below"] = 0
    document["durations_ms"] = {"collection": 12, "jev": 0.5, "total": 480}
    report = parse_report(document)
    assert type(report.skip_below) is int
    assert type(report.durations_ms.total) is int
    assert type(report.durations_ms.jev) is float
    assert report_json(report) == document


def test_optional_keys_are_absent_when_none_and_kept_in_place_when_given() -> None:
    document = _loaded(ALL_REPORTS["planned"]())
    chunk = _obj(document, ("observation", "chunks", 0))
    del chunk["paths"], chunk["requests"]
    entry = _obj(document, ("job_metadata", "unit"))
    del entry["workflow"], entry["job"]
    provenance = _obj(entry, ("provenance", 0))
    provenance["resolvedSha"] = "f" * 40
    del _obj(provenance, ("locator", "location"))["endColumn"]
    report = parse_report(document)
    assert report.observation is not None
    assert report.observation.chunks[0].paths is None
    assert report.observation.chunks[0].requests is None
    assert report.job_metadata["unit"].workflow is None
    assert report.job_metadata["unit"].provenance[0].resolved_sha == "f" * 40
    assert report.job_metadata["unit"].provenance[0].locator.location.end_column is None
    written = report_json(report)
    assert written == document
    assert report_text(written) == report_text(document)
    assert list(provenance) == ["kind", "locator", "sha256", "resolvedSha"]


def test_keys_are_written_in_the_report_order() -> None:
    written = report_json(parse_report(ALL_REPORTS["planned"]()))
    assert tuple(written) == c.REPORT_FIELDS
    assert [field.name for field in attrs.fields(ReportV5)] == list(c.REPORT_FIELDS)
    assert list(_obj(written, ("job_metadata", "unit"))) == [
        "incomplete",
        "missing",
        "provenance",
        "hashes",
        "warnings",
        "nativeDependencies",
        "workflow",
        "job",
    ]


def test_as_report_takes_a_typed_report_or_a_mapping() -> None:
    document = ALL_REPORTS["chunked"]()
    report = parse_report(document)
    assert as_report(report) is report
    assert as_report(document) == report


# --------------------------------------------------------------------------------------------
# Every report of the schema's shape
# --------------------------------------------------------------------------------------------

HEX64 = st.from_regex(r"\A[0-9a-f]{64}\Z")
MODELS = st.from_regex(r"\Ajev-[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\Z")
REQUESTED = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._:/-]{0,20}\Z")
TEXT = st.text(max_size=12)
COUNTS = st.integers(min_value=0, max_value=10**9)
UNIT = st.integers(min_value=0, max_value=1) | st.floats(min_value=0, max_value=1)
DURATIONS = st.integers(min_value=0, max_value=10**7) | st.floats(min_value=0, max_value=1e9)
CALL_ERRORS = st.sampled_from(
    [None, c.REASON_JEV_TIMEOUT, c.REASON_JEV_ERROR, c.REASON_INVALID_RESPONSE]
)
CALL_STATUSES = st.sampled_from(["completed", "failed", "not-started"])


def _fixed(required: dict[str, st.SearchStrategy[object]]) -> st.SearchStrategy[Document]:
    """An object with exactly these keys, in this order (``fixed_dictionaries`` keeps no order)."""
    return _ordered(required, {}, tuple(required))


@st.composite
def _ordered(
    draw: st.DrawFn,
    required: dict[str, st.SearchStrategy[object]],
    optional: dict[str, st.SearchStrategy[object]],
    order: tuple[str, ...],
) -> Document:
    """An object with every required key and a drawn subset of the optional ones, in ``order``."""
    present = {key: draw(value) for key, value in required.items()}
    present.update({key: draw(value) for key, value in optional.items() if draw(st.booleans())})
    return {key: present[key] for key in order if key in present}


USAGES = st.none() | _fixed({"input_tokens": COUNTS, "output_tokens": COUNTS})
REQUESTS = _fixed(
    {
        "task_ids": st.lists(TASK_IDS, min_size=1, max_size=3, unique=True),
        "status": CALL_STATUSES,
        "model": st.none() | MODELS,
        "usage": USAGES,
        "duration_ms": st.none() | DURATIONS,
        "error": CALL_ERRORS,
    }
)
CHUNK_ORDER = tuple(field.name for field in attrs.fields(ReportChunk))
CHUNKS = _ordered(
    {
        "index": COUNTS,
        "start_byte": COUNTS,
        "end_byte": COUNTS,
        "diff_hash": HEX64,
        "state_hash": HEX64,
        "diff_bytes": COUNTS,
        "status": CALL_STATUSES,
        "probabilities": st.none() | st.dictionaries(TASK_IDS, UNIT, max_size=3),
        "model": st.none() | MODELS,
        "usage": USAGES,
        "duration_ms": st.none() | DURATIONS,
        "error": CALL_ERRORS,
    },
    {
        "paths": st.lists(TEXT, max_size=3),
        "requests": st.lists(REQUESTS, min_size=1, max_size=2),
    },
    CHUNK_ORDER,
)
LOCATIONS = _ordered(
    {"line": st.integers(1, 10**6), "column": st.integers(1, 10**6)},
    {"endLine": st.integers(1, 10**6), "endColumn": st.integers(1, 10**6)},
    ("line", "column", "endLine", "endColumn"),
)
PROVENANCES = _ordered(
    {
        "kind": TEXT,
        "locator": _fixed(
            {"repository": TEXT, "commit": SHAS, "file": TEXT, "location": LOCATIONS}
        ),
        "sha256": HEX64,
    },
    {"resolvedSha": SHAS},
    ("kind", "locator", "sha256", "resolvedSha"),
)
METADATA = _ordered(
    {
        "incomplete": st.booleans(),
        "missing": st.lists(TEXT, max_size=2),
        "provenance": st.lists(PROVENANCES, max_size=2),
        "hashes": st.dictionaries(TEXT, HEX64, max_size=2),
        "warnings": st.lists(TEXT, max_size=2),
        "nativeDependencies": st.lists(TEXT, max_size=2),
    },
    {"workflow": TEXT, "job": TEXT},
    (
        "incomplete",
        "missing",
        "provenance",
        "hashes",
        "warnings",
        "nativeDependencies",
        "workflow",
        "job",
    ),
)
TASKS = _fixed(
    {
        "proposed_run": st.none() | st.booleans(),
        "run": st.booleans(),
        "reasons": st.lists(st.sampled_from(c.REASONS), min_size=1, max_size=3, unique=True),
    }
)
REPORTS = _fixed(
    {
        "version": st.just(c.REPORT_VERSION),
        "tested_ref": st.sampled_from(["merge", "head"]),
        "diff_base_sha": st.none() | SHAS,
        "job_metadata": st.dictionaries(TASK_IDS, METADATA, max_size=2),
        "observation_error": st.sampled_from(
            [None, "jev-timeout", "jev-error", "invalid-response", "diff-too-large"]
        ),
        "metadata_sha": SHAS,
        "base_sha": SHAS,
        "head_sha": SHAS,
        "tested_sha": SHAS,
        "selection_hash": HEX64,
        "skip_below": UNIT,
        "diff_hash": st.none() | HEX64,
        "diff_bytes": st.none() | COUNTS,
        "changed_path_count": st.none() | COUNTS,
        "mode": st.sampled_from(["enforce", "shadow"]),
        "status": st.sampled_from(["planned", "bypassed", "fallback"]),
        "model": _fixed(
            {"requested": REQUESTED, "expected": MODELS, "returned": st.none() | MODELS}
        ),
        "durations_ms": _fixed(
            {"collection": DURATIONS, "jev": st.none() | DURATIONS, "total": DURATIONS}
        ),
        "usage": USAGES,
        "tasks": st.dictionaries(TASK_IDS, TASKS, max_size=3),
        "observation": st.none()
        | _fixed(
            {
                "strategy": st.sampled_from(["whole-diff", "chunked-diff"]),
                "status": st.sampled_from(["complete", "incomplete"]),
                "chunks": st.lists(CHUNKS, min_size=1, max_size=2),
            }
        ),
    }
)


@given(REPORTS)
def test_any_report_of_the_schema_round_trips(document: Document) -> None:
    assert VALIDATOR.is_valid(document)  # the strategy draws only what the schema accepts
    _round_trip(document)


# --------------------------------------------------------------------------------------------
# Refusals: the converter and the schema agree
# --------------------------------------------------------------------------------------------

# Objects whose keys are data (task IDs, source names), not fields of a class.
_FREE_KEYS = frozenset(("job_metadata", "tasks", "hashes", "probabilities"))
Path_ = tuple[str | int, ...]


def _nodes(value: object, path: Path_ = ()) -> Iterator[tuple[Path_, object]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, (*path, index))


def _is_record(path: Path_, value: object) -> bool:
    return isinstance(value, dict) and (not path or path[-1] not in _FREE_KEYS)


def _get(document: object, path: Path_) -> object:
    target = document
    for step in path:
        if isinstance(target, list):
            assert isinstance(step, int)
            target = target[step]
        else:
            assert isinstance(target, dict)
            target = target[step]
    return target


def _obj(document: object, path: Path_) -> dict[str, object]:
    value = _get(document, path)
    assert isinstance(value, dict)
    return value


def _set(document: Document, path: Path_, value: object) -> Document:
    changed = copy.deepcopy(document)
    parent = _get(changed, path[:-1])
    step = path[-1]
    if isinstance(parent, list):
        assert isinstance(step, int)
        parent[step] = value
    else:
        assert isinstance(parent, dict)
        parent[step] = value
    return changed


def _with_every_optional_key() -> Document:
    document = _loaded(ALL_REPORTS["planned"]())
    _obj(document, ("job_metadata", "unit", "provenance", 0))["resolvedSha"] = "f" * 40
    return document


SOURCES: dict[str, Callable[[], Document]] = {
    "planned": _with_every_optional_key,
    "chunked": lambda: _loaded(ALL_REPORTS["chunked"]()),
    "bypass": lambda: _loaded(ALL_REPORTS["bypass"]()),
}


def _wrong_type(value: object) -> object:
    """A value of another JSON type than ``value``, for every field it can stand in."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return "1"
    if isinstance(value, float):
        return "0.5"
    if isinstance(value, str):
        return 7
    if value is None:
        return []
    if isinstance(value, list):
        return "x"
    return []


def _refused_both_ways(document: Document, where: str) -> None:
    assert not VALIDATOR.is_valid(document), where
    with pytest.raises(DocumentError):
        parse_report(document)


def _record_paths(name: str) -> list[Path_]:
    return [path for path, value in _nodes(SOURCES[name]()) if _is_record(path, value)]


def _leaf_paths(name: str) -> list[Path_]:
    return [path for path, value in _nodes(SOURCES[name]()) if path and not _is_record(path, value)]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_an_unknown_key_in_any_object_is_refused_by_both(name: str) -> None:
    paths = _record_paths(name)
    assert len(paths) > 3
    for path in paths:
        _refused_both_ways(_set(SOURCES[name](), (*path, "unknown"), 1), repr(path))


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_value_of_another_type_anywhere_is_refused_by_both(name: str) -> None:
    document = SOURCES[name]()
    paths = _leaf_paths(name)
    assert len(paths) > 20
    for path, value in _nodes(document):
        if path in paths:
            _refused_both_ways(_set(document, path, _wrong_type(value)), repr(path))


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_missing_required_key_is_refused_by_both(name: str) -> None:
    optional = {"paths", "requests", "resolvedSha", "workflow", "job", "endLine", "endColumn"}
    document = SOURCES[name]()
    for path, value in _nodes(document):
        if not _is_record(path, value) or not isinstance(value, dict):
            continue
        for key in value:
            if key not in optional:
                changed = copy.deepcopy(document)
                del _obj(changed, path)[key]
                _refused_both_ways(changed, repr((*path, key)))


OPTIONAL_KEYS: dict[str, Path_] = {
    "paths": ("observation", "chunks", 0, "paths"),
    "requests": ("observation", "chunks", 0, "requests"),
    "resolvedSha": ("job_metadata", "unit", "provenance", 0, "resolvedSha"),
    "workflow": ("job_metadata", "unit", "workflow"),
    "job": ("job_metadata", "unit", "job"),
    "endLine": ("job_metadata", "unit", "provenance", 0, "locator", "location", "endLine"),
    "endColumn": ("job_metadata", "unit", "provenance", 0, "locator", "location", "endColumn"),
}


@pytest.mark.parametrize("key", sorted(OPTIONAL_KEYS))
def test_an_optional_key_may_be_absent_but_never_null(key: str) -> None:
    path = OPTIONAL_KEYS[key]
    document = _with_every_optional_key()
    _refused_both_ways(_set(document, path, None), key)
    with pytest.raises(DocumentError) as refused:
        parse_report(_set(document, path, None))
    assert refused.value.constraint == "a value, not null"


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("durations_ms", "total"), math.nan),
        (("durations_ms", "collection"), math.inf),
        (("observation", "chunks", 0, "probabilities", "unit"), math.nan),
        (("skip_below",), -math.inf),
    ],
)
def test_a_number_that_is_not_finite_is_refused_by_both(where: Path_, value: float) -> None:
    document = _set(_with_every_optional_key(), where, value)
    with pytest.raises(DocumentError):
        parse_report(document)
    # JSON Schema has no word for NaN; finiteness is the report validator's part of the contract.
    with pytest.raises(PlanningFailure):
        validate_report(document)


# The converter checks shapes; patterns, vocabularies, ranges and the invariants stay the
# validator's (docs/reference.md, "Report fields"). These mutations are refused by it, not by
# the converter, and nothing the converter refuses is accepted by it.
_SHAPE_MUTATIONS = frozenset(
    (
        "extra-root-key",
        "missing-root-key",
        "extra-task-key",
        "extra-chunk-key",
        "extra-request-key",
        "extra-provenance-key",
        "extra-location-key",
        "extra-metadata-key",
        "nan-duration",
        "infinite-duration",
        "nan-score",
        "integer-beyond-double",
        "boolean-as-integer",
        "not-a-mapping",
    )
)


@pytest.mark.parametrize("name", sorted(INVALID_MUTATIONS))
def test_the_invalid_reports_of_test_report(name: str) -> None:
    source, mutate = INVALID_MUTATIONS[name]
    document = mutated(mutate, source)
    with pytest.raises(PlanningFailure):
        validate_report(document)
    if name in _SHAPE_MUTATIONS:
        with pytest.raises(DocumentError):
            parse_report(document)
    else:
        assert report_json(parse_report(document)) == document


def test_a_refusal_names_the_field_never_the_value() -> None:
    secret = "sk-never-echo"
    document = _set(_loaded(ALL_REPORTS["planned"]()), ("tasks", "unit", "run"), secret)
    with pytest.raises(DocumentError) as refused:
        parse_report(document)
    assert refused.value.path == "$.tasks[*].run"
    assert refused.value.constraint == "a boolean"
    assert secret not in str(refused.value)


@pytest.mark.parametrize(
    ("record", "key", "attribute"),
    [
        (("job_metadata", "unit"), "nativeDependencies", "native_dependencies"),
        (("job_metadata", "unit", "provenance", 0), "resolvedSha", "resolved_sha"),
        (("job_metadata", "unit", "provenance", 0, "locator", "location"), "endLine", "end_line"),
    ],
)
def test_a_camel_case_key_is_read_by_its_json_name_only(
    record: Path_, key: str, attribute: str
) -> None:
    document = _with_every_optional_key()
    entry = _obj(document, record)
    entry[attribute] = entry.pop(key)
    _refused_both_ways(document, attribute)
