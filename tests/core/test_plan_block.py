"""The plan block (docs/reference.md, "Step summary and plan block"): writer framing and escaping,
fail-closed reader, schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_report import BASE, HEAD, SELECTION, TESTED, make_report, planned_report

from jev_select import contracts as c
from jev_select.core.convert import DocumentError, structure
from jev_select.core.jsonutil import code_unit_key, pretty_json
from jev_select.core.models import Plan, TaskDecision, frozen_mapping
from jev_select.core.plan_block import (
    PlanBlock,
    plan_block_of,
    read_plan_block,
    render_plan_block,
)
from jev_select.core.report_v5 import parse_report, report_json

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "jev_select" / "schemas" / c.PLAN_BLOCK_SCHEMA_FILE).read_text())
MARKER = "<!-- jev-select-plan"


def report_for(run: dict[str, bool], *, mode: str, status: str) -> dict[str, Any]:
    decisions = {
        task_id: TaskDecision(
            runs if status == c.STATUS_PLANNED else None,
            runs,
            (c.REASON_JEV_AT_OR_ABOVE_THRESHOLD if runs else c.REASON_JEV_BELOW_THRESHOLD,),
        )
        for task_id, runs in run.items()
    }
    plan = Plan(mode=c.Mode(mode), status=c.Status(status), decisions=frozen_mapping(decisions))
    return make_report(plan)


def payload(text: str) -> dict[str, Any]:
    start = text.index(MARKER) + len(MARKER) + 1
    parsed: dict[str, Any] = json.loads(text[start : text.rindex("\n-->")])
    return parsed


def valid_payload(**changes: Any) -> dict[str, Any]:
    value = payload(render_plan_block(planned_report(), "0.1.0"))
    value.update(changes)
    return value


def frame(value: Any, *, newline: str = "\n") -> str:
    body = value if isinstance(value, str) else json.dumps(value, indent=2)
    return f"{MARKER}{newline}{body}{newline}-->{newline}"


# --------------------------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------------------------


def test_rendered_block_shape() -> None:
    text = render_plan_block(planned_report(), "0.1.0")
    assert text.startswith(MARKER + '\n{\n  "schemaVersion": 1,\n')
    assert text.endswith("\n}\n-->\n")
    value = payload(text)
    assert list(value) == [
        "schemaVersion",
        "engineVersion",
        "reportVersion",
        "testedSha",
        "baseSha",
        "headSha",
        "selectionHash",
        "mode",
        "status",
        "run",
        "selected",
    ]
    assert value["run"] == {"B_upper": False, "_private": True, "docs": False, "unit": True}
    assert value["selected"] == ["_private", "unit"]
    assert (value["testedSha"], value["baseSha"], value["headSha"]) == (TESTED, BASE, HEAD)
    assert value["selectionHash"] == SELECTION
    jsonschema.Draft202012Validator(SCHEMA).validate(value)


def test_block_is_ascii_and_html_sensitive_characters_are_escaped() -> None:
    hostile = 'é𝄞 <!-- x --> --!> & "\n' + MARKER + "\n{}\n-->"
    text = render_plan_block(planned_report(), hostile)
    assert text.isascii()
    body = text[len(MARKER) + 1 : -len("\n-->\n")]
    for forbidden in ("<", ">", "&", "-->", "--!>", MARKER):
        assert forbidden not in body
    assert "\\u00e9\\ud834\\udd1e \\u003c!-- x --\\u003e --!\\u003e \\u0026" in body
    assert text.count(MARKER) == 1
    block = read_plan_block(text)
    assert block is not None
    assert block.engine_version == hostile


def test_plan_block_schema_matches_contracts() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    properties = SCHEMA["properties"]
    assert properties["schemaVersion"] == {"const": c.PLAN_SCHEMA_VERSION}
    assert c.PLAN_SCHEMA_VERSIONS == (1,)
    assert properties["reportVersion"] == {"const": c.REPORT_VERSION}
    assert properties["mode"]["enum"] == list(c.MODES)
    assert properties["status"]["enum"] == list(c.STATUSES)
    assert properties["run"]["propertyNames"]["pattern"] == "^" + c.TASK_ID_PATTERN + "$"
    assert SCHEMA["required"] == list(valid_payload())
    # Unknown fields are allowed: consumers ignore them.
    assert SCHEMA.get("additionalProperties", True) is True
    assert jsonschema.Draft202012Validator(SCHEMA).is_valid(valid_payload(extra=[1]))


# --------------------------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", c.MODES)
@pytest.mark.parametrize("status", c.STATUSES)
def test_round_trip_for_every_status_and_mode(mode: str, status: str) -> None:
    everything_runs = mode == c.MODE_SHADOW or status != c.STATUS_PLANNED
    run = {"zeta": True, "Alpha": everything_runs, "_mid": True}
    report = report_for(run, mode=mode, status=status)
    text = "Some summary text.\n\n" + render_plan_block(report, "1.2.3")
    block = read_plan_block(text, expected_tested_sha=TESTED)
    assert block == PlanBlock(
        schema_version=1,
        engine_version="1.2.3",
        report_version=5,
        tested_sha=TESTED,
        base_sha=BASE,
        head_sha=HEAD,
        selection_hash=SELECTION,
        mode=mode,
        status=status,
        run=run,
        selected=tuple(sorted((k for k, v in run.items() if v), key=code_unit_key)),
    )
    assert list(block.run) == ["Alpha", "_mid", "zeta"]


@pytest.mark.parametrize("mode", c.MODES)
@pytest.mark.parametrize("status", c.STATUSES)
def test_a_typed_report_gives_the_block_of_its_json(mode: str, status: str) -> None:
    # The step summary renders from the typed report; the block must be the mapping's, byte
    # for byte.
    everything_runs = mode == c.MODE_SHADOW or status != c.STATUS_PLANNED
    report = report_for({"zeta": True, "Alpha": everything_runs}, mode=mode, status=status)
    typed = parse_report(report)
    assert plan_block_of(typed, "1.2.3") == render_plan_block(report, "1.2.3")
    assert plan_block_of(typed, "1.2.3") == render_plan_block(report_json(typed), "1.2.3")


def test_runs_defaults_to_true_for_unlisted_ids() -> None:
    block = read_plan_block(render_plan_block(planned_report(), "0.1.0"))
    assert block is not None
    assert block.runs("unit") is True
    assert block.runs("docs") is False
    assert block.runs("never-listed") is True
    with pytest.raises(TypeError):
        block.run["docs"] = True  # type: ignore[index]


def test_crlf_framing_is_accepted() -> None:
    text = render_plan_block(planned_report(), "0.1.0").replace("\n", "\r\n")
    block = read_plan_block("summary\r\n\r\n" + text)
    assert block is not None
    assert block.selected == ("_private", "unit")


def test_stale_plan_is_rejected() -> None:
    text = render_plan_block(planned_report(), "0.1.0")
    assert read_plan_block(text, expected_tested_sha="f" * 40) is None
    assert read_plan_block(text, expected_tested_sha=TESTED) is not None


# --------------------------------------------------------------------------------------------
# Hostile and malformed texts
# --------------------------------------------------------------------------------------------


def test_the_last_block_wins() -> None:
    forged = frame(valid_payload(run={"unit": False}, selected=[]))
    real = render_plan_block(planned_report(), "0.1.0")
    block = read_plan_block(forged + "\n" + real)
    assert block is not None
    assert block.runs("unit") is True


def test_a_malformed_last_block_never_falls_back_to_an_earlier_one() -> None:
    real = render_plan_block(planned_report(), "0.1.0")
    assert read_plan_block(real + "\n" + frame("{ not json")) is None
    assert read_plan_block(real + "\n" + MARKER + "\n") is None


def test_a_marker_without_line_break_is_not_a_block() -> None:
    real = render_plan_block(planned_report(), "0.1.0")
    assert read_plan_block(real + "\n<!-- jev-select-plan -->\n") is not None
    assert read_plan_block(real + f"\n{MARKER}\t\n") is not None
    assert read_plan_block(f"{MARKER} {{}}\n-->") is None


def test_marker_quoted_inside_a_json_string_is_inert() -> None:
    value = valid_payload(note=f"{MARKER}\n{{}}\n-->")
    text = frame(json.dumps(value, indent=2))
    block = read_plan_block(text)
    assert block is not None
    assert block.selected == ("_private", "unit")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("no block here", id="no-marker"),
        pytest.param(MARKER + "\n{", id="no-closing"),
        pytest.param(MARKER + "\n" + '{"schemaVersion": 1,\n-->', id="truncated-json"),
        pytest.param(frame("[1, 2]"), id="top-level-array"),
        pytest.param(frame('{"schemaVersion": 1, "schemaVersion": 1}'), id="duplicate-key"),
        pytest.param(frame("NaN"), id="nan"),
        pytest.param("<!-- jev-select-plan\n-->\n", id="empty-payload"),
        pytest.param("<!-- jev-select-planX\n{}\n-->", id="longer-marker"),
    ],
)
def test_malformed_texts_read_as_none(text: str) -> None:
    assert read_plan_block(text) is None


def test_truncated_block_reads_as_none() -> None:
    text = render_plan_block(planned_report(), "0.1.0")
    cut = text.index('"run"')
    assert read_plan_block(text[:cut] + "\n-->\n") is None


def test_non_text_input_reads_as_none() -> None:
    assert read_plan_block(None) is None  # type: ignore[arg-type]
    assert read_plan_block(b"bytes") is None  # type: ignore[arg-type]


def test_unknown_extra_fields_are_ignored() -> None:
    block = read_plan_block(frame(valid_payload(futureField={"x": [1]}, another=None)))
    assert block is not None
    assert block.selected == ("_private", "unit")


@pytest.mark.parametrize("field", list(valid_payload()))
def test_each_missing_field_is_rejected(field: str) -> None:
    value = valid_payload()
    del value[field]
    assert read_plan_block(frame(value)) is None


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"schemaVersion": 2}, id="future-schema-version"),
        pytest.param({"schemaVersion": "1"}, id="schema-version-string"),
        pytest.param({"schemaVersion": 1.0}, id="schema-version-float"),
        pytest.param({"schemaVersion": True}, id="schema-version-boolean"),
        pytest.param({"reportVersion": 4}, id="report-version-4"),
        pytest.param({"reportVersion": 5.0}, id="report-version-float"),
        pytest.param({"engineVersion": ""}, id="empty-engine-version"),
        pytest.param({"engineVersion": 1}, id="engine-version-number"),
        pytest.param({"testedSha": "C" * 40}, id="uppercase-sha"),
        pytest.param({"baseSha": "a" * 39}, id="short-sha"),
        pytest.param({"headSha": "a" * 40 + "\n"}, id="sha-with-newline"),
        pytest.param({"selectionHash": "e" * 40}, id="short-selection-hash"),
        pytest.param({"mode": "observe"}, id="unknown-mode"),
        pytest.param({"status": "skipped"}, id="unknown-status"),
        pytest.param({"run": []}, id="run-not-object"),
        pytest.param({"run": {"unit": 1}, "selected": ["unit"]}, id="run-value-integer"),
        pytest.param({"run": {"unit": "true"}, "selected": ["unit"]}, id="run-value-string"),
        pytest.param({"run": {"1bad": True}, "selected": ["1bad"]}, id="bad-task-id"),
        pytest.param({"selected": "unit"}, id="selected-not-list"),
    ],
)
def test_wrong_versions_and_types_are_rejected(changes: dict[str, Any]) -> None:
    assert read_plan_block(frame(valid_payload(**changes))) is None


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"selected": ["unit"]}, id="selected-missing-a-running-task"),
        pytest.param({"selected": ["unit", "_private"]}, id="selected-out-of-order"),
        pytest.param({"selected": ["_private", "unit", "docs"]}, id="selected-lists-a-skip"),
        pytest.param({"selected": ["_private", "unit", "unit"]}, id="selected-duplicate"),
        pytest.param({"selected": ["_private", "unit", "ghost"]}, id="selected-unknown"),
        pytest.param({"mode": "shadow"}, id="shadow-with-a-skip"),
        pytest.param({"status": "bypassed"}, id="bypassed-with-a-skip"),
        pytest.param({"status": "fallback"}, id="fallback-with-a-skip"),
    ],
)
def test_invariant_violations_are_rejected(changes: dict[str, Any]) -> None:
    assert read_plan_block(frame(valid_payload(**changes))) is None


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

TASK_IDS = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_-]{0,63}\Z")


@st.composite
def plans(draw: st.DrawFn) -> tuple[dict[str, bool], str, str]:
    mode = draw(st.sampled_from(c.MODES))
    status = draw(st.sampled_from(c.STATUSES))
    ids = draw(st.lists(TASK_IDS, unique=True, max_size=12))
    everything_runs = mode == c.MODE_SHADOW or status != c.STATUS_PLANNED
    run = {task_id: everything_runs or draw(st.booleans()) for task_id in ids}
    return run, mode, status


@settings(max_examples=200, deadline=None)
@given(plans(), st.text(max_size=200), st.text(max_size=20))
def test_render_then_read_returns_the_same_values(
    plan: tuple[dict[str, bool], str, str], prefix: str, engine_version: str
) -> None:
    run, mode, status = plan
    report = report_for(run, mode=mode, status=status)
    block = read_plan_block(prefix + "\n" + render_plan_block(report, engine_version or "0"))
    assert block is not None
    assert dict(block.run) == run
    assert list(block.run) == sorted(run, key=code_unit_key)
    assert block.selected == tuple(task_id for task_id in block.run if run[task_id])
    assert (block.mode, block.status, block.tested_sha) == (mode, status, TESTED)
    assert block.engine_version == (engine_version or "0")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_reader_never_raises_on_arbitrary_text(text: str) -> None:
    framed = read_plan_block(MARKER + "\n" + text)
    assert framed is None or isinstance(framed, PlanBlock)
    assert read_plan_block(text) is None


# --------------------------------------------------------------------------------------------
# The typed block and the converter, against the schema
# --------------------------------------------------------------------------------------------

SCHEMA_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


@settings(max_examples=100, deadline=None)
@given(plans(), st.text(min_size=1, max_size=20))
def test_a_block_read_back_writes_the_same_json(
    plan: tuple[dict[str, bool], str, str], engine_version: str
) -> None:
    run, mode, status = plan
    text = render_plan_block(report_for(run, mode=mode, status=status), engine_version)
    written = payload(text)
    block = read_plan_block(text)
    assert block is not None
    assert SCHEMA_VALIDATOR.is_valid(block.to_json())
    # Same keys, same order, same values: the same bytes once encoded.
    assert pretty_json(block.to_json()) == pretty_json(written)
    assert structure(block.to_json(), PlanBlock) == block


def test_to_json_is_the_block_in_its_own_key_names() -> None:
    block = read_plan_block(render_plan_block(planned_report(), "0.1.0"))
    assert block is not None
    assert list(block.to_json()) == list(SCHEMA["required"])
    assert list(block.to_json())[-4:] == [
        c.PLAN_BLOCK_FIELD_MODE,
        c.PLAN_BLOCK_FIELD_STATUS,
        c.PLAN_BLOCK_FIELD_RUN,
        c.PLAN_BLOCK_FIELD_SELECTED,
    ]
    assert block.to_json()["run"] == dict(block.run)
    assert block.to_json()["selected"] == list(block.selected)


# Values of another JSON type than the schema's for each key: the schema and the converter must
# both refuse every one of them (the reader then reads no block at all).
WRONG_TYPES = [
    ("schemaVersion", "1"),
    ("schemaVersion", True),
    ("schemaVersion", None),
    ("engineVersion", 1),
    ("reportVersion", 5.5),
    ("testedSha", ["a" * 40]),
    ("baseSha", None),
    ("headSha", 40),
    ("selectionHash", {"hash": "e" * 64}),
    ("mode", False),
    ("status", None),
    ("run", []),
    ("run", {"unit": 1}),
    ("run", {"unit": None}),
    ("selected", "unit"),
    ("selected", [1]),
]


@pytest.mark.parametrize(("key", "value"), WRONG_TYPES)
def test_the_converter_refuses_what_the_schema_refuses(key: str, value: object) -> None:
    document = valid_payload(**{key: value})
    assert not SCHEMA_VALIDATOR.is_valid(document)
    with pytest.raises(DocumentError):
        structure(document, PlanBlock)
    assert read_plan_block(frame(document)) is None


@pytest.mark.parametrize("key", list(SCHEMA["required"]))
def test_a_missing_key_is_refused_by_both(key: str) -> None:
    document = valid_payload()
    del document[key]
    assert not SCHEMA_VALIDATOR.is_valid(document)
    with pytest.raises(DocumentError):
        structure(document, PlanBlock)


def test_an_unknown_key_is_accepted_by_both_as_the_schema_says() -> None:
    document = valid_payload(laterField=[1, 2])
    assert SCHEMA_VALIDATOR.is_valid(document)
    block = structure(document, PlanBlock)
    assert "laterField" not in block.to_json()
    assert block == read_plan_block(frame(valid_payload()))
