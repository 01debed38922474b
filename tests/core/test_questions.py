"""Questions, group states and request bodies (docs/reference.md, "Evidence object", "Request body",
"Question texts")."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from typing import Any

import jsonschema
import pytest

from jev_select import contracts as c
from jev_select.core.evidence.resolve import LookupFailure, resolve_metadata
from jev_select.core.jsonutil import compact_json, strict_loads
from jev_select.core.models import DiffGroup, JobRef, Task, TaskTable
from jev_select.core.questions import (
    build_question,
    build_questions,
    build_state,
    description_only_evidence,
    request_body,
    sha_state,
)

BASE = "a" * 40
HEAD = "b" * 40
TESTED = "c" * 40


def load_schema() -> dict[str, Any]:
    text = (files("jev_select") / "schemas" / c.SYSTEM_ONE_REQUEST_SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


SCHEMA = load_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def rich_evidence() -> dict[str, Any]:
    # Deliberately unsorted at every depth, to prove the question sorts it.
    return {
        "packageScripts": [
            {"workingDirectory": ".", "name": "test", "manifest": "package.json", "command": "jest"}
        ],
        "jobs": [
            {
                "workflow": ".github/workflows/ci.yml",
                "steps": [
                    {
                        "working_directory": "web",
                        "with": {"zeta": 1, "alpha": {"y": True, "x": None}},
                        "uses": "actions/setup-node@v4",
                        "name": "Setup",
                    },
                    {"working_directory": ".", "shell": "bash", "run": "npm test"},
                ],
                "name": "Unit",
                "id": "unit",
            }
        ],
        "incomplete": True,
        "description": "Runs the unit tests — ünïcode kept.",
        "contextFiles": [{"path": "./jest.config.js", "content": "module.exports = {};\n"}],
        "actions": [
            {
                "uses": "actions/setup-node@v4",
                "name": "Setup Node",
                "inputs": {"node-version": "Version", "cache": "Cache kind"},
                "description": "Sets up Node",
            }
        ],
    }


def group(**overrides: Any) -> DiffGroup:
    values: dict[str, Any] = {
        "index": 0,
        "start_byte": 0,
        "end_byte": 12,
        "diff": "diff --git a",
        "context": "",
        "paths": ("src/a.py",),
    }
    values.update(overrides)
    return DiffGroup(**values)


def keys_in_order(value: Any) -> list[Any]:
    """Every object's key list, depth first, as the parser saw them in the bytes."""
    found: list[Any] = []
    if isinstance(value, dict):
        found.append(list(value))
        for item in value.values():
            found.extend(keys_in_order(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(keys_in_order(item))
    return found


def test_description_only_evidence_has_four_empty_arrays() -> None:
    assert description_only_evidence("Builds the docs.") == {
        "actions": [],
        "contextFiles": [],
        "description": "Builds the docs.",
        "jobs": [],
        "packageScripts": [],
    }
    assert list(description_only_evidence("x")) == sorted(description_only_evidence("x"))


def test_question_shape_texts_and_key_order() -> None:
    # The question is JSON: the test reads it as the request body does.
    question: dict[str, Any] = build_question(description_only_evidence("Checks types."))
    assert list(question) == ["type", "instructions", "criteria"]
    assert question["type"] == c.QUESTION_TYPE
    assert list(question["instructions"]) == ["judgment", "scope", "task"]
    assert question["instructions"]["judgment"] == c.QUESTION_JUDGMENT
    assert question["instructions"]["scope"] == c.QUESTION_SCOPE
    assert list(question["criteria"]) == ["true", "false"]
    assert question["criteria"] == {"true": c.QUESTION_TRUE, "false": c.QUESTION_FALSE}


def test_question_sorts_evidence_recursively_and_keeps_array_order() -> None:
    evidence = rich_evidence()
    snapshot = json.dumps(evidence)
    question: dict[str, Any] = build_question(evidence)
    task = question["instructions"]["task"]
    assert json.dumps(evidence) == snapshot  # the caller's object is left alone
    assert list(task) == [
        "actions",
        "contextFiles",
        "description",
        "incomplete",
        "jobs",
        "packageScripts",
    ]
    assert list(task["actions"][0]) == ["description", "inputs", "name", "uses"]
    assert list(task["actions"][0]["inputs"]) == ["cache", "node-version"]
    steps = task["jobs"][0]["steps"]
    assert [step.get("name") for step in steps] == ["Setup", None]  # array order kept
    assert list(steps[0]) == ["name", "uses", "with", "working_directory"]
    assert list(steps[0]["with"]) == ["alpha", "zeta"]
    assert list(steps[0]["with"]["alpha"]) == ["x", "y"]
    assert list(task["packageScripts"][0]) == ["command", "manifest", "name", "workingDirectory"]


def test_questions_are_keyed_in_code_unit_order() -> None:
    ids = ["b", "B", "_x", "a-1", "a_1", "Z9", "a"]
    questions: dict[str, Any] = build_questions(
        {task_id: description_only_evidence(task_id) for task_id in ids}
    )
    assert list(questions) == ["B", "Z9", "_x", "a", "a-1", "a_1", "b"]
    assert questions["a_1"]["instructions"]["task"]["description"] == "a_1"


def test_state_key_order_and_values() -> None:
    piece = group(index=2, start_byte=100, end_byte=180, context="diff --git a/x b/x\n")
    state: dict[str, Any] = build_state(
        base_sha=BASE, head_sha=HEAD, tested_sha=TESTED, group=piece, total=5
    )
    assert list(state) == [
        "base_sha",
        "head_sha",
        "tested_sha",
        "changed_paths",
        "diff",
        "chunk",
    ]
    assert list(state["chunk"]) == [
        "index",
        "total",
        "start_byte",
        "end_byte",
        "preceding_diff_headers",
        "scope",
    ]
    assert state["base_sha"] == BASE
    assert state["changed_paths"] == ["src/a.py"]
    assert state["chunk"] == {
        "index": 2,
        "total": 5,
        "start_byte": 100,
        "end_byte": 180,
        "preceding_diff_headers": "diff --git a/x b/x\n",
        "scope": c.QUESTION_CHUNK_SCOPE,
    }
    assert sha_state(base_sha=BASE, head_sha=HEAD, tested_sha=TESTED) == {
        "base_sha": BASE,
        "head_sha": HEAD,
        "tested_sha": TESTED,
    }


def test_request_body_bytes_are_compact_ordered_and_valid() -> None:
    diff = 'diff --git a/é b/é\n+"quoted"\t\x01\u2028/\n'
    state = build_state(
        base_sha=BASE, head_sha=HEAD, tested_sha=TESTED, group=group(diff=diff), total=1
    )
    questions = build_questions(
        {"unit": rich_evidence(), "docs": description_only_evidence("Docs.")}
    )
    body = request_body("jev-latest", state, questions)
    assert isinstance(body, bytes)
    parsed = strict_loads(body)
    assert compact_json(parsed).encode("utf-8") == body
    assert list(parsed) == ["model", "state", "questions"]
    assert parsed["model"] == "jev-latest"
    assert list(parsed["questions"]) == ["docs", "unit"]
    assert keys_in_order(parsed) == keys_in_order(
        {"model": "jev-latest", "state": state, "questions": questions}
    )
    # non-ASCII and U+2028 are literal, control characters escaped, no spaces after separators
    assert "é".encode() in body
    assert "\u2028".encode() in body
    assert b"\\t\\u0001" in body
    assert b'":' in body
    assert b'": ' not in body
    VALIDATOR.validate(parsed)


def test_schema_agrees_with_contracts() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    task_id = SCHEMA["$defs"]["taskId"]
    assert task_id["pattern"] == "^" + c.TASK_ID_PATTERN + "$"
    assert task_id["not"]["enum"] == list(c.RESERVED_TASK_IDS)
    assert SCHEMA["properties"]["model"]["pattern"] == "^" + c.API_MODEL_PATTERN + "$"
    assert SCHEMA["$defs"]["question"]["properties"]["type"]["const"] == c.QUESTION_TYPE
    chunk = SCHEMA["$defs"]["chunk"]["properties"]
    assert chunk["total"]["maximum"] == c.MAX_GROUPS
    assert chunk["index"]["maximum"] == c.MAX_GROUPS - 1
    assert re.fullmatch(SCHEMA["$defs"]["sha"]["pattern"].strip("^$"), BASE)


def valid_body() -> dict[str, Any]:
    state = build_state(base_sha=BASE, head_sha=HEAD, tested_sha=TESTED, group=group(), total=1)
    questions = build_questions({"unit": rich_evidence()})
    parsed: dict[str, Any] = strict_loads(request_body(c.DEFAULT_MODEL, state, questions))
    return parsed


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ((), {"extra": 1}),
        (("state",), {"extra": 1}),
        (("state", "chunk"), {"extra": 1}),
        (("questions", "unit"), {"extra": 1}),
        (("questions", "unit", "instructions"), {"extra": 1}),
        (("questions", "unit", "criteria"), {"extra": 1}),
        (("questions", "unit", "instructions", "task"), {"extra": 1}),
        (("questions", "unit", "instructions", "task"), {"incomplete": False}),
        (("questions", "unit"), {"type": "yesno"}),
        (("state",), {"base_sha": "A" * 40}),
        (("state",), {"changed_paths": ["a", "a"]}),
        (("state", "chunk"), {"index": -1}),
        (("state", "chunk"), {"total": c.MAX_GROUPS + 1}),
        ((), {"model": "-bad"}),
        ((), {"questions": {}}),
        ((), {"questions": {"constructor": {}}}),
        ((), {"questions": {"9lives": {}}}),
    ],
)
def test_schema_rejects_malformed_bodies(path: tuple[str, ...], value: dict[str, Any]) -> None:
    body = valid_body()
    VALIDATOR.validate(body)
    target = body
    for key in path:
        target = target[key]
    target.update(value)
    assert not VALIDATOR.is_valid(body)


@pytest.mark.parametrize(
    "path",
    [("model",), ("state", "diff"), ("state", "chunk", "scope"), ("questions", "unit", "type")],
)
def test_schema_requires_every_key(path: tuple[str, ...]) -> None:
    body = valid_body()
    target = body
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    assert not VALIDATOR.is_valid(body)


def test_schema_accepts_the_empty_job_id_metadata_can_produce() -> None:
    # A workflow key written as `~` becomes the empty string (the YAML dialect of docs/reference.md,
    # "Task fields"), and a reference without `job` expands to it, so the evidence really carries
    # `"id": ""`.
    workflow = ".github/workflows/ci.yml"
    table = TaskTable((Task(id="unit", description="Unit.", jobs=(JobRef(workflow),)),))
    resolved = resolve_metadata(
        table,
        read_file={workflow: b"jobs:\n  ~:\n    steps:\n      - run: make\n"}.get,
        fetch_action=lambda *_: LookupFailure.MISSING,
        repository="owner/repo",
        commit=BASE,
    )
    evidence = resolved.evidence["unit"].evidence
    jobs = evidence["jobs"]
    assert isinstance(jobs, list)
    assert [job["id"] for job in jobs] == [""]
    state = build_state(base_sha=BASE, head_sha=HEAD, tested_sha=TESTED, group=group(), total=1)
    body = strict_loads(request_body(c.DEFAULT_MODEL, state, build_questions({"unit": evidence})))
    VALIDATOR.validate(body)
