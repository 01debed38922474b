"""Report v5 (docs/reference.md, "Report fields"): construction, key order, schema validation and
invariants."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema
import pytest

from jev_select import contracts as c
from jev_select.core.jsonutil import pretty_json, strict_loads
from jev_select.core.models import (
    ChangeFacts,
    ChangeSet,
    ChunkRecord,
    Commits,
    Durations,
    Evaluation,
    Observation,
    Plan,
    RequestRecord,
    RunFacts,
    Task,
    TaskTable,
    Usage,
)
from jev_select.core.policy import decide, score_decisions
from jev_select.core.report import build_report, report_text, validate_report
from jev_select.core.report_v5 import ReportV5, report_json
from jev_select.errors import PlanningFailure

ROOT = Path(__file__).resolve().parents[2]
OUR_SCHEMA = strict_loads((ROOT / "jev_select" / "schemas" / c.REPORT_SCHEMA_FILE).read_text())
COMPAT_SCHEMA = json.loads((ROOT / "tests" / "compat" / "report-v5.schema.json").read_text())

BASE = "a" * 40
HEAD = "b" * 40
TESTED = "c" * 40
MERGE_BASE = "d" * 40
SELECTION = "e" * 64
HASH_1 = "1" * 64
HASH_2 = "2" * 64
MODEL = c.DEFAULT_MODEL

TABLE = TaskTable(
    (
        Task(id="B_upper", description="Upper-case first."),
        Task(id="_private", description="Underscore first.", always=True),
        Task(id="docs", description="Docs.", force_paths=("docs/**",)),
        Task(id="unit", description="Unit tests."),
    )
)


def commits(diff_base_sha: str | None = MERGE_BASE) -> Commits:
    return Commits(
        base_sha=BASE,
        head_sha=HEAD,
        tested_sha=TESTED,
        metadata_sha=BASE,
        diff_base_sha=diff_base_sha,
    )


def change_set(patch_bytes: int = 668) -> ChangeSet:
    return ChangeSet(
        patch="x" * patch_bytes,
        diff_hash=HASH_1,
        diff_bytes=patch_bytes,
        changed_paths=("docs/index.md", "src/app.py"),
    )


def completed_chunk(
    index: int, start: int, end: int, scores: Mapping[str, float], duration: float = 412.4
) -> ChunkRecord:
    usage = Usage(1200, 9)
    return ChunkRecord(
        index=index,
        start_byte=start,
        end_byte=end,
        paths=("src/app.py",),
        diff_hash=HASH_1,
        state_hash=HASH_2,
        diff_bytes=end - start,
        status=c.GROUP_COMPLETED,
        probabilities=MappingProxyType(dict(scores)),
        model=MODEL,
        usage=usage,
        duration_ms=duration,
        error=None,
        requests=(
            RequestRecord(
                task_ids=tuple(sorted(scores)),
                status=c.GROUP_COMPLETED,
                model=MODEL,
                usage=usage,
                duration_ms=duration,
                scores=scores,
            ),
        ),
    )


def not_started_chunk(index: int, start: int, end: int, task_ids: Sequence[str]) -> ChunkRecord:
    return ChunkRecord(
        index=index,
        start_byte=start,
        end_byte=end,
        paths=("docs/index.md",),
        diff_hash=HASH_1,
        state_hash=HASH_2,
        diff_bytes=end - start,
        status=c.GROUP_NOT_STARTED,
        probabilities=None,
        model=None,
        usage=None,
        duration_ms=None,
        error=c.REASON_JEV_TIMEOUT,
        requests=(
            RequestRecord(
                task_ids=tuple(task_ids), status=c.GROUP_NOT_STARTED, error=c.REASON_JEV_TIMEOUT
            ),
        ),
    )


SCORES = {"unit": 0.93, "docs": 0.02, "B_upper": 0.01}


def whole_observation(scores: Mapping[str, float] = SCORES) -> Observation:
    return Observation(
        strategy=c.STRATEGY_WHOLE_DIFF,
        status=c.OBSERVATION_COMPLETE,
        chunks=(completed_chunk(0, 0, 668, scores),),
    )


def chunked_observation() -> Observation:
    return Observation(
        strategy=c.STRATEGY_CHUNKED_DIFF,
        status=c.OBSERVATION_INCOMPLETE,
        chunks=(
            completed_chunk(0, 0, 400, SCORES),
            not_started_chunk(1, 400, 668, ["B_upper", "docs", "unit"]),
        ),
    )


def job_metadata_entry(workflow: str = ".github/workflows/ci.yml") -> Mapping[str, Any]:
    # Deliberately out of order and made of read-only containers, as the resolver may hand it.
    return MappingProxyType(
        {
            "job": "unit",
            "workflow": workflow,
            "nativeDependencies": ("lint",),
            "warnings": ("context-file-missing:notes/café.md",),
            "hashes": {f"source:o/r@{BASE}:{workflow}": HASH_1},
            "provenance": (
                {
                    "kind": "workflow-job",
                    "locator": {
                        "repository": "o/r",
                        "commit": BASE,
                        "file": workflow,
                        "location": {"line": 3, "column": 3, "endLine": 9, "endColumn": 1},
                    },
                    "sha256": HASH_1,
                },
            ),
            "missing": ("context-file-missing:notes/café.md",),
            "incomplete": True,
        }
    )


def make_plan(
    *,
    mode: c.Mode = c.MODE_ENFORCE,
    bypass: c.Reason | None = None,
    changed_paths: Sequence[str] | None = ("src/app.py",),
    collection_error: str | None = None,
    grouping_error: str | None = None,
    observation: Observation | None = None,
    first_failure: str | None = None,
    skip_below: float = 0.05,
    metadata_incomplete: Sequence[str] = (),
    tasks: TaskTable = TABLE,
) -> Plan:
    return decide(
        tasks,
        mode=mode,
        bypass=bypass,
        change=ChangeFacts(
            changed_paths=tuple(changed_paths) if changed_paths is not None else None,
            collection_error=collection_error,
            metadata_incomplete=frozenset(metadata_incomplete),
        ),
        evaluation=Evaluation(
            observation=observation,
            decisions=(
                score_decisions(observation, tasks.ids, skip_below) if observation else None
            ),
            grouping_error=grouping_error,
            first_failure=first_failure,
        ),
    )


def make_report(plan: Plan, **facts: Any) -> dict[str, Any]:
    """The JSON value of ``make_typed_report``, as the report file holds it: the tests below read
    and mutate it."""
    report: dict[str, Any] = report_json(make_typed_report(plan, **facts))
    return report


def make_typed_report(
    plan: Plan,
    *,
    tested_ref: c.TestedRef = c.TESTED_REF_MERGE,
    the_commits: Commits | None = None,
    the_change_set: ChangeSet | None = None,
    observation: Observation | None = None,
    observation_error: str | None = None,
    job_metadata: Mapping[str, Mapping[str, Any]] | None = None,
    model_returned: str | None = None,
    usage: Usage | None = None,
    jev_ms: float | None = None,
    skip_below: float = 0.05,
) -> ReportV5:
    return build_report(
        plan,
        RunFacts(
            tested_ref=tested_ref,
            skip_below=skip_below,
            commits=the_commits or commits(),
            selection_hash=SELECTION,
            model_requested="jev-latest",
            model_expected=MODEL,
            durations_ms=Durations(collection=12.5, jev=jev_ms, total=480.25),
        ),
        ChangeFacts(change_set=the_change_set, job_metadata=job_metadata or {}),
        Evaluation(
            observation=observation,
            first_failure=observation_error,
            model_returned=model_returned,
            usage=usage,
        ),
    )


def bypass_report() -> dict[str, Any]:
    plan = make_plan(bypass=c.REASON_MISSING_API_KEY, changed_paths=None)
    return make_report(plan)


def planned_report(mode: c.Mode = c.MODE_ENFORCE) -> dict[str, Any]:
    observation = whole_observation()
    plan = make_plan(mode=mode, observation=observation)
    return make_report(
        plan,
        the_change_set=change_set(),
        observation=observation,
        job_metadata={task_id: job_metadata_entry() for task_id in TABLE.ids},
        model_returned=MODEL,
        usage=Usage(1200, 9),
        jev_ms=415.0,
    )


def fallback_report() -> dict[str, Any]:
    plan = make_plan(collection_error=c.REASON_BINARY_CHANGE, changed_paths=("img.png",))
    return make_report(plan, tested_ref=c.TESTED_REF_HEAD, the_commits=commits(None))


def chunked_report() -> dict[str, Any]:
    observation = chunked_observation()
    plan = make_plan(observation=observation, first_failure=c.REASON_JEV_TIMEOUT)
    return make_report(
        plan,
        the_change_set=change_set(),
        observation=observation,
        observation_error=c.REASON_JEV_TIMEOUT,
        model_returned=MODEL,
        usage=Usage(1200, 9),
        jev_ms=10_000.0,
    )


ALL_REPORTS = {
    "bypass": bypass_report,
    "fallback": fallback_report,
    "planned": planned_report,
    "shadow": lambda: planned_report(c.MODE_SHADOW),
    "chunked": chunked_report,
}


def assert_invalid(report: Mapping[str, Any]) -> None:
    with pytest.raises(PlanningFailure) as raised:
        validate_report(report)
    assert raised.value.code == c.FAILURE_REPORT_INVALID
    assert str(raised.value) == c.FAILURE_REPORT_INVALID


# --------------------------------------------------------------------------------------------
# Built reports
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ALL_REPORTS))
def test_built_reports_validate_against_both_schemas(name: str) -> None:
    report = ALL_REPORTS[name]()
    validate_report(report)
    jsonschema.Draft202012Validator(OUR_SCHEMA).validate(report)
    jsonschema.Draft7Validator(COMPAT_SCHEMA).validate(report)
    assert list(report) == list(c.REPORT_FIELDS)
    reparsed = strict_loads(report_text(report))
    assert reparsed == report
    validate_report(reparsed)


def test_bypass_report_fields() -> None:
    report = bypass_report()
    assert report["status"] == c.STATUS_BYPASSED
    assert report["diff_base_sha"] == BASE  # merge mode records the base even when bypassed
    assert report["diff_hash"] is None
    assert report["diff_bytes"] is None
    assert report["changed_path_count"] is None
    assert report["observation"] is None
    assert report["observation_error"] is None
    assert report["usage"] is None
    assert report["job_metadata"] == {}
    assert report["model"] == {"requested": "jev-latest", "expected": MODEL, "returned": None}
    assert report["durations_ms"] == {"collection": 12.5, "jev": None, "total": 480.25}
    assert report["tasks"]["unit"] == {
        "proposed_run": None,
        "run": True,
        "reasons": ["missing-api-key"],
    }
    assert report["tasks"]["_private"]["reasons"] == ["always", "missing-api-key"]


def test_head_mode_records_the_verified_merge_base() -> None:
    plan = make_plan(observation=whole_observation())
    report = make_report(
        plan, tested_ref=c.TESTED_REF_HEAD, the_change_set=change_set(), observation=None
    )
    assert report["diff_base_sha"] == MERGE_BASE


def test_head_mode_without_collection_has_no_diff_base() -> None:
    report = fallback_report()
    assert report["tested_ref"] == c.TESTED_REF_HEAD
    assert report["diff_base_sha"] is None
    assert report["changed_path_count"] is None
    assert report["status"] == c.STATUS_FALLBACK


def test_planned_report_content_and_key_orders() -> None:
    report = planned_report()
    assert report["version"] == 5
    assert report["status"] == c.STATUS_PLANNED
    assert (report["diff_hash"], report["diff_bytes"], report["changed_path_count"]) == (
        HASH_1,
        668,
        2,
    )
    assert list(report["tasks"]) == ["B_upper", "_private", "docs", "unit"]
    assert list(report["job_metadata"]) == ["B_upper", "_private", "docs", "unit"]
    assert report["tasks"]["docs"] == {
        "proposed_run": False,
        "run": False,
        "reasons": ["jev-below-threshold"],
    }
    assert report["tasks"]["unit"]["run"] is True
    assert list(report["tasks"]["unit"]) == ["proposed_run", "run", "reasons"]
    entry = report["job_metadata"]["unit"]
    assert list(entry) == [
        "incomplete",
        "missing",
        "provenance",
        "hashes",
        "warnings",
        "nativeDependencies",
        "workflow",
        "job",
    ]
    assert entry["nativeDependencies"] == ["lint"]
    chunk = report["observation"]["chunks"][0]
    assert list(report["observation"]) == ["strategy", "status", "chunks"]
    assert list(chunk) == [
        "index",
        "start_byte",
        "end_byte",
        "paths",
        "diff_hash",
        "state_hash",
        "diff_bytes",
        "status",
        "probabilities",
        "model",
        "usage",
        "duration_ms",
        "error",
        "requests",
    ]
    assert list(chunk["probabilities"]) == ["B_upper", "docs", "unit"]
    assert chunk["usage"] == {"input_tokens": 1200, "output_tokens": 9}
    assert list(chunk["requests"][0]) == [
        "task_ids",
        "status",
        "model",
        "usage",
        "duration_ms",
        "error",
    ]
    assert chunk["requests"][0]["task_ids"] == ["B_upper", "docs", "unit"]
    assert "scores" not in chunk["requests"][0]


def test_shadow_report_keeps_proposals_and_runs_everything() -> None:
    report = planned_report(c.MODE_SHADOW)
    assert report["mode"] == c.MODE_SHADOW
    assert report["tasks"]["docs"] == {
        "proposed_run": False,
        "run": True,
        "reasons": ["jev-below-threshold", "shadow-mode"],
    }
    assert all(task["run"] for task in report["tasks"].values())


def test_chunked_report_records_failed_groups() -> None:
    report = chunked_report()
    assert report["status"] == c.STATUS_FALLBACK
    assert report["observation_error"] == c.REASON_JEV_TIMEOUT
    second = report["observation"]["chunks"][1]
    assert second["status"] == c.GROUP_NOT_STARTED
    assert second["probabilities"] is None
    assert second["requests"][0] == {
        "task_ids": ["B_upper", "docs", "unit"],
        "status": "not-started",
        "model": None,
        "usage": None,
        "duration_ms": None,
        "error": "jev-timeout",
    }
    assert report["tasks"]["docs"]["reasons"] == ["jev-timeout", "chunked-observation"]


def test_report_text_is_pretty_unescaped_and_ends_with_newline() -> None:
    report = planned_report()
    text = report_text(report)
    assert text == pretty_json(report) + "\n"
    assert text.startswith('{\n  "version": 5,\n  "tested_ref": "merge",')
    assert "notes/café.md" in text
    assert '"skip_below": 0.05,' in text


def test_report_numbers_use_javascript_formatting() -> None:
    plan = make_plan(bypass=c.REASON_FORCE_ALL, changed_paths=None)
    report = make_report(plan, skip_below=1e-7)
    assert '"skip_below": 1e-7,' in report_text(report)
    validate_report(report)


# --------------------------------------------------------------------------------------------
# Invalid reports
# --------------------------------------------------------------------------------------------


def mutated(mutate: Any, source: str = "planned") -> dict[str, Any]:
    report = copy.deepcopy(ALL_REPORTS[source]())
    mutate(report)
    return report


INVALID_MUTATIONS: dict[str, tuple[str, Any]] = {
    "extra-root-key": ("planned", lambda r: r.update(probability=0.5)),
    "missing-root-key": ("planned", lambda r: r.pop("usage")),
    "extra-task-key": ("planned", lambda r: r["tasks"]["unit"].update(probability=0.9)),
    "extra-chunk-key": ("planned", lambda r: r["observation"]["chunks"][0].update(x=1)),
    "extra-request-key": (
        "planned",
        lambda r: r["observation"]["chunks"][0]["requests"][0].update(scores={}),
    ),
    "extra-provenance-key": (
        "planned",
        lambda r: r["job_metadata"]["unit"]["provenance"][0].update(extra=1),
    ),
    "extra-location-key": (
        "planned",
        lambda r: r["job_metadata"]["unit"]["provenance"][0]["locator"]["location"].update(x=1),
    ),
    "extra-metadata-key": ("planned", lambda r: r["job_metadata"]["unit"].update(body="x")),
    "nan-duration": ("planned", lambda r: r["durations_ms"].update(total=math.nan)),
    "infinite-duration": ("planned", lambda r: r["durations_ms"].update(collection=math.inf)),
    "nan-score": (
        "planned",
        lambda r: r["observation"]["chunks"][0]["probabilities"].update(unit=math.nan),
    ),
    "bad-status": ("planned", lambda r: r.update(status="skipped")),
    "bad-reason": ("planned", lambda r: r["tasks"]["unit"].update(reasons=["because"])),
    "duplicate-reason": (
        "planned",
        lambda r: r["tasks"]["unit"].update(reasons=["always", "always"]),
    ),
    "empty-reasons": ("planned", lambda r: r["tasks"]["unit"].update(reasons=[])),
    "bad-observation-error": ("planned", lambda r: r.update(observation_error="fork")),
    "bad-version": ("planned", lambda r: r.update(version=4)),
    "boolean-as-integer": ("planned", lambda r: r.update(diff_bytes=True)),
    # Beyond the double range: a JSON reader sees Infinity, which is never a valid number.
    "integer-beyond-double": ("planned", lambda r: r["durations_ms"].update(total=10**400)),
    "uppercase-sha": ("planned", lambda r: r.update(tested_sha="C" * 40)),
    "score-above-one": (
        "planned",
        lambda r: r["observation"]["chunks"][0]["probabilities"].update(unit=1.5),
    ),
    "bad-task-id": ("planned", lambda r: r["tasks"].update({"1bad": r["tasks"]["unit"]})),
    "skip-under-fallback": ("fallback", lambda r: r["tasks"]["unit"].update(run=False)),
    "skip-under-bypass": ("bypass", lambda r: r["tasks"]["unit"].update(run=False)),
    "skip-in-shadow": ("shadow", lambda r: r["tasks"]["docs"].update(run=False)),
    "run-differs-from-proposal": ("planned", lambda r: r["tasks"]["docs"].update(run=True)),
    "planned-with-null-proposal": (
        "planned",
        lambda r: r["tasks"]["unit"].update(proposed_run=None),
    ),
    "chunk-index-mismatch": (
        "chunked",
        lambda r: r["observation"]["chunks"][1].update(index=5),
    ),
    "chunk-gap": ("chunked", lambda r: r["observation"]["chunks"][1].update(start_byte=401)),
    "chunk-end-not-patch-end": ("planned", lambda r: r.update(diff_bytes=700)),
    "strategy-mismatch": ("chunked", lambda r: r["observation"].update(strategy="whole-diff")),
    "observation-status-mismatch": (
        "chunked",
        lambda r: r["observation"].update(status="complete"),
    ),
    "metadata-for-unknown-task": (
        "planned",
        lambda r: r["job_metadata"].pop("unit"),
    ),
    "not-a-mapping": ("planned", lambda r: r.clear()),
}


@pytest.mark.parametrize("name", sorted(INVALID_MUTATIONS))
def test_invalid_reports_raise_report_invalid(name: str) -> None:
    source, mutate = INVALID_MUTATIONS[name]
    assert_invalid(mutated(mutate, source))


def test_non_mapping_is_invalid() -> None:
    assert_invalid([])  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Our schema against contracts and the compatibility schema
# --------------------------------------------------------------------------------------------


def test_schema_identity() -> None:
    jsonschema.Draft202012Validator.check_schema(OUR_SCHEMA)
    assert OUR_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert OUR_SCHEMA["title"] == c.REPORT_SCHEMA_TITLE
    assert OUR_SCHEMA["required"] == list(c.REPORT_FIELDS)
    assert list(OUR_SCHEMA["properties"]) == list(c.REPORT_FIELDS)


def test_schema_enums_equal_the_contracts() -> None:
    properties = OUR_SCHEMA["properties"]
    definitions = OUR_SCHEMA["$defs"]
    assert properties["version"] == {"const": c.REPORT_VERSION}
    assert properties["mode"]["enum"] == list(c.MODES)
    assert properties["status"]["enum"] == list(c.STATUSES)
    assert properties["tested_ref"]["enum"] == list(c.TESTED_REFS)
    assert properties["observation_error"]["enum"] == [*c.OBSERVATION_ERRORS, None]
    reasons = definitions["taskDecision"]["properties"]["reasons"]["items"]["enum"]
    assert reasons == list(c.REASONS)
    assert len(reasons) == 26
    chunk = definitions["observationChunk"]["properties"]
    request = definitions["observationCall"]["properties"]
    assert chunk["status"]["enum"] == list(c.GROUP_STATUSES)
    assert request["status"]["enum"] == list(c.GROUP_STATUSES)
    assert chunk["error"]["enum"] == [*c.REQUEST_ERRORS, None]
    assert request["error"]["enum"] == [*c.REQUEST_ERRORS, None]
    observation = definitions["observation"]["properties"]
    assert observation["strategy"]["enum"] == list(c.STRATEGIES)
    assert observation["status"]["enum"] == list(c.OBSERVATION_STATUSES)
    task_id_pattern = "^" + c.TASK_ID_PATTERN + "$"
    assert properties["tasks"]["propertyNames"]["pattern"] == task_id_pattern
    assert definitions["probabilities"]["propertyNames"]["pattern"] == task_id_pattern
    assert request["task_ids"]["items"]["pattern"] == task_id_pattern


def _objects(node: Any) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    if isinstance(node, Mapping):
        if node.get("type") == "object" and "properties" in node:
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def test_every_object_with_properties_forbids_additional_properties() -> None:
    objects = _objects(OUR_SCHEMA)
    assert len(objects) >= 12
    assert all(node.get("additionalProperties") is False for node in objects)


def _shape(schema: Mapping[str, Any], node: Any, nullable: bool = False) -> Any:
    """A comparable digest of a schema node: $refs resolved, nullable alternatives folded."""
    while isinstance(node, Mapping) and "$ref" in node:
        *_, group, name = node["$ref"].split("/")
        node = schema[group][name]
    if not isinstance(node, Mapping):
        return node
    if "anyOf" in node:
        alternatives = [alt for alt in node["anyOf"] if alt != {"type": "null"}]
        assert len(alternatives) == 1
        return _shape(schema, alternatives[0], nullable=True)
    types = node.get("type")
    type_set = set(types) if isinstance(types, list) else ({types} if types else set())
    if nullable:
        type_set.add("null")
    digest: dict[str, Any] = {"type": sorted(type_set)}
    for key in ("const", "pattern", "minimum", "maximum", "minItems", "uniqueItems"):
        if key in node:
            digest[key] = node[key]
    if "enum" in node:
        digest["enum"] = sorted(node["enum"], key=lambda value: str(value))
    if "required" in node:
        digest["required"] = sorted(node["required"])
    if "properties" in node:
        digest["properties"] = {
            key: _shape(schema, value) for key, value in sorted(node["properties"].items())
        }
    for key in ("items", "propertyNames"):
        if key in node:
            digest[key] = _shape(schema, node[key])
    if isinstance(node.get("additionalProperties"), Mapping):
        digest["additionalProperties"] = _shape(schema, node["additionalProperties"])
    return digest


def test_same_fields_types_enums_patterns_and_required_as_compat() -> None:
    assert _shape(OUR_SCHEMA, OUR_SCHEMA) == _shape(COMPAT_SCHEMA, COMPAT_SCHEMA)


def test_compat_schema_rejects_what_ours_rejects_for_extra_keys() -> None:
    report = mutated(lambda r: r.update(extra=1))
    assert not jsonschema.Draft7Validator(COMPAT_SCHEMA).is_valid(report)
    assert not jsonschema.Draft202012Validator(OUR_SCHEMA).is_valid(report)
