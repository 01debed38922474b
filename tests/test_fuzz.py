"""Fuzzing the parsers that read untrusted text: only the fixed, documented failures may occur.

Every entry point that reads something an attacker or a broken provider can shape is driven with
three kinds of input: structured generation (near-valid documents with every field varied),
mutations of valid texts (characters and lines inserted, deleted, replaced) and arbitrary text.
The only outcomes allowed are the documented ones:

- ``parse_tasks`` / ``parse_inputs``: a value, or ``InputError`` for a known field whose message
  is the fixed diagnostic;
- ``parse_pull_request`` / ``parse_manual_number`` / the event file: a value, or
  ``PlanningFailure`` with its fixed code;
- ``validate_response``: a ``ValidatedResponse`` whose error is one of the request codes;
- ``parse_patch`` / ``split_diff``: a value, or ``GroupingError`` with a grouping code;
- ``read_plan_block``: a consistent ``PlanBlock`` or ``None``.

Any other exception fails the test, and every call runs under a watchdog alarm, so a hang fails
too. The ``ci`` hypothesis profile (default) keeps this quick; ``HYPOTHESIS_PROFILE=deep`` runs
10,000 examples per property (see docs/reliability.md for the recorded counts).
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st
from support.hardstop import hard_stop
from support.strategies import (
    JSON_LEAVES,
    JSON_VALUES,
    SHAS,
    SOME_TEXT,
    TASK_IDS,
    WHITESPACE_CHARS,
    mostly,
    mutated,
    one_in,
)

from jev_select import contracts as c
from jev_select.core.grouping import GroupingError, parse_patch, split_diff
from jev_select.core.inputs import parse_inputs
from jev_select.core.jsonutil import code_unit_key
from jev_select.core.models import Inputs, TaskTable
from jev_select.core.plan_block import PlanBlock, read_plan_block, render_plan_block
from jev_select.core.tasks import parse_tasks
from jev_select.edges.environment import (
    MergeGroupFacts,
    PullRequestFacts,
    parse_manual_number,
    parse_merge_group,
    parse_pull_request,
    read_github_context,
)
from jev_select.edges.jev_client import ValidatedResponse, validate_response
from jev_select.errors import InputError, PlanningFailure, input_error_message

T = TypeVar("T")
E = TypeVar("E", bound=Exception)

WATCHDOG_SECONDS = 20.0
EXAMPLES: collections.Counter[str] = collections.Counter()


def watchdog(seconds: float = WATCHDOG_SECONDS) -> contextlib.AbstractContextManager[None]:
    """Fail an example that hangs (``HardStop``, a BaseException nothing can swallow)."""
    return hard_stop(seconds)


def bounded(name: str, call: Callable[[], T]) -> T:
    """Run ``call`` under the watchdog and count the example for ``name``."""
    EXAMPLES[name] += 1
    with watchdog():
        return call()


def attempt(name: str, call: Callable[[], T], allowed: type[E]) -> T | E:
    """Like ``bounded``, but the one ``allowed`` exception type is returned instead of raised;
    any other exception propagates and fails the test."""
    EXAMPLES[name] += 1
    with watchdog():
        try:
            return call()
        except allowed as error:
            return error


@pytest.fixture(scope="module", autouse=True)
def _record_counts() -> Iterator[None]:
    """With ``JEV_FUZZ_COUNTS=<file>``, write the examples run per property (for the docs)."""
    yield
    target = os.environ.get("JEV_FUZZ_COUNTS")
    if target:
        Path(target).write_text(json.dumps(dict(sorted(EXAMPLES.items())), indent=2) + "\n")


# ---------------------------------------------------------------------------------------------
# Task table YAML
# ---------------------------------------------------------------------------------------------

PATHS = st.sampled_from(
    ["src/a.py", "docs/**", "tests/conftest.py", "../up", "/abs", "a/./b", "", " ", "x\x00y"]
) | st.from_regex(r"\A[a-z0-9_.*/-]{1,20}\Z")
FIELD_VALUES = JSON_LEAVES | st.lists(JSON_LEAVES, max_size=3)


@st.composite
def task_bodies(draw: st.DrawFn) -> Any:
    body: dict[str, Any] = {}
    if draw(st.booleans()):
        body["description"] = draw(
            st.sampled_from(["Runs the tests.", "", "   ", "\u3000"]) | SOME_TEXT | FIELD_VALUES
        )
    if draw(st.booleans()):
        body["always"] = draw(st.booleans() | FIELD_VALUES)
    if draw(st.booleans()):
        body["force_paths"] = draw(st.lists(PATHS, max_size=3) | FIELD_VALUES)
    if draw(st.booleans()):
        body["context_files"] = draw(st.lists(PATHS, max_size=3) | FIELD_VALUES)
    if draw(st.booleans()):
        reference = st.fixed_dictionaries(
            {"workflow": PATHS | FIELD_VALUES},
            optional={"job": SOME_TEXT | FIELD_VALUES, "extra": FIELD_VALUES},
        )
        body["jobs"] = draw(st.lists(reference, max_size=3) | FIELD_VALUES)
    if draw(st.integers(0, 9)) == 0:
        body[draw(SOME_TEXT)] = draw(FIELD_VALUES)
    if draw(st.integers(0, 9)) == 0:
        return draw(FIELD_VALUES)  # a task that is not an object
    return body


RESERVED = st.sampled_from([*c.RESERVED_TASK_IDS[:5], "Unit", "UNIT", "unit", "1bad", "a b"])


@st.composite
def valid_task_bodies(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"description": draw(SOME_TEXT.filter(str.strip)) + "."}
    clean_paths = st.lists(st.from_regex(r"\A[a-z0-9_]{1,8}(/[a-z0-9_*.]{1,8}){0,2}\Z"), max_size=3)
    if draw(st.booleans()):
        body["always"] = draw(st.booleans())
    if draw(st.booleans()):
        body["force_paths"] = draw(clean_paths.filter(bool))
    if draw(st.booleans()):
        body["context_files"] = draw(clean_paths)
    if draw(st.booleans()):
        body["jobs"] = [{"workflow": ".github/workflows/ci.yml", "job": draw(TASK_IDS)}]
    return body


@st.composite
def structured_tables(draw: st.DrawFn) -> str:
    ids = draw(st.lists(mostly(TASK_IDS, RESERVED), max_size=5))
    near_valid = draw(st.booleans())
    table = {task_id: draw(valid_task_bodies() if near_valid else task_bodies()) for task_id in ids}
    style = draw(st.sampled_from(["block", "flow", "json"]))
    if style == "json":
        return json.dumps(table)
    return yaml.safe_dump(table, default_flow_style=style == "flow", allow_unicode=True)


VALID_TABLE = """unit:
  description: Runs the unit tests.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: unit
  context_files: [tests/conftest.py]
docs:
  description: Builds the docs.
  force_paths: ['docs/**']
lint:
  description: Lints.
  always: true
"""

YAML_GADGETS = st.sampled_from(
    [
        "&a ",
        "*a",
        "<<: *a\n",
        "!!python/object:os.system ",
        "!custom ",
        "? ",
        "{",
        "[",
        "%YAML 1.1\n---\n",
        "---\n",
        "...\n",
        "unit:\n  description: again\n",
        "\t",
        "'",
        '"',
        "#",
        "~",
        ".nan",
        "0x1F",
        "yes",
        "\ufeff",
        "[" * 200,
        "{a: " * 100,
    ]
)


@st.composite
def gadget_tables(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from([VALID_TABLE, "a:\n  description: x\n", "{}"]))
    for _ in range(draw(st.integers(1, 3))):
        position = draw(st.integers(0, len(text)))
        text = text[:position] + draw(YAML_GADGETS) + text[position:]
    return text


TABLE_TEXTS = mostly(
    structured_tables(),
    mutated(st.sampled_from([VALID_TABLE]) | structured_tables())
    | gadget_tables()
    | st.text(max_size=300),
)


def check_table(table: TaskTable) -> None:
    ids = table.ids
    assert all(re.fullmatch(c.TASK_ID_PATTERN, task_id, re.ASCII) for task_id in ids)
    assert list(ids) == sorted(ids, key=code_unit_key)
    assert len({task_id.lower() for task_id in ids}) == len(ids)
    for task in table.tasks:
        assert task.description.strip(c.WHITESPACE)


def check_input_error(error: InputError, allowed: frozenset[str] | None = None) -> None:
    assert error.field in c.INPUT_CONSTRAINTS
    if allowed is not None:
        assert error.field in allowed
    assert str(error) == error.field
    assert error.args == (error.field,)
    constraint = c.INPUT_CONSTRAINTS[error.field]
    expected = c.INPUT_ERROR_TEMPLATE.format(field=error.field, constraint=constraint)
    assert input_error_message(error.field) == expected


@given(TABLE_TEXTS)
def test_task_table_text(text: str) -> None:
    table = attempt("tasks: parse_tasks", lambda: parse_tasks(text), InputError)
    if isinstance(table, InputError):
        check_input_error(table, frozenset({c.INPUT_TASKS}))
        event("rejected")
    else:
        check_table(table)
        event(f"accepted, {min(len(table), 3)}+ tasks")


# ---------------------------------------------------------------------------------------------
# Every input string
# ---------------------------------------------------------------------------------------------

GOOD_VALUES: Mapping[str, list[str]] = {
    c.INPUT_TASKS: [VALID_TABLE, "{}"],
    # Blank beside `tasks` (the two exclude each other); a path when `tasks` is blank.
    c.INPUT_TASKS_FILE: ["", "", "", "ci/tasks.yml", "./tasks.yml"],
    c.INPUT_MODE: list(c.MODES),
    c.INPUT_MODEL: [c.DEFAULT_MODEL, "jev-2.0.10"],
    c.INPUT_SKIP_BELOW: ["0", "0.05", "1", "1.0", "0.999999999999999999999"],
    c.INPUT_API_BASE_URL: [
        "https://api.example",
        "HTTPS://API.Example:443/x/../y//",
        "https://[::1]",
    ],
    c.INPUT_API_MODEL: ["", "jev-latest", "a/b:c.d_e-f"],
    c.INPUT_API_KEY: ["", "k3y!~"],
    c.INPUT_ALLOW_EXTERNAL_CONTEXT: ["true", "false"],
    c.INPUT_GITHUB_TOKEN: ["", "ghs_x", "tok en\n"],
    c.INPUT_TESTED_REF: list(c.TESTED_REFS),
    c.INPUT_PULL_REQUEST: ["", "7", "0", "x"],
    c.INPUT_MERGE_GROUP: list(c.MERGE_GROUP_MODES),
    c.INPUT_FORCE_ALL: ["true", "false"],
    c.INPUT_TIMEOUT_MS: ["1", "10000", "2147483647", "2147483648"],
    c.INPUT_MAX_DIFF_BYTES: ["1", "65536", "9007199254740991", "9007199254740992"],
}


def good_value(draw: st.DrawFn, name: str) -> str | None:
    if draw(st.integers(0, 4)) == 0:
        return None
    value = draw(st.sampled_from(GOOD_VALUES[name]))
    if draw(st.booleans()):
        pad = st.text(WHITESPACE_CHARS, max_size=2)
        value = draw(pad) + value + draw(pad)
    return value


@st.composite
def raw_inputs(draw: st.DrawFn) -> dict[str, str | None]:
    """Mostly good values, with up to three fields replaced by mutated or arbitrary text, so
    every field's check is reached, not only the first in the validation order."""
    raw = {spec.name: good_value(draw, spec.name) for spec in c.INPUTS}
    names = [spec.name for spec in c.INPUTS]
    for name in draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        choice = draw(st.integers(0, 2))
        if choice == 0:
            raw[name] = draw(mutated(st.sampled_from(GOOD_VALUES[name])))
        elif name == c.INPUT_TASKS:
            raw[name] = draw(TABLE_TEXTS)
        else:
            raw[name] = draw(st.text(max_size=60))
    return raw


RAW_INPUTS = raw_inputs()


@given(RAW_INPUTS, st.booleans())
def test_every_input_string(raw: dict[str, str | None], local_mode: bool) -> None:
    inputs = attempt(
        "inputs: parse_inputs", lambda: parse_inputs(raw, local_mode=local_mode), InputError
    )
    if isinstance(inputs, InputError):
        check_input_error(inputs)
        event(f"rejected: {inputs.field}")
    else:
        assert isinstance(inputs, Inputs)
        check_table(inputs.tasks)
        assert inputs.endpoint.startswith("https://")
        assert inputs.endpoint.endswith(c.SYSTEM_ONE_PATH)
        assert 0.0 <= inputs.skip_below <= 1.0
        assert 1 <= inputs.timeout_ms <= c.TIMEOUT_MS_MAX
        assert 1 <= inputs.max_diff_bytes <= c.MAX_SAFE_INTEGER
        assert all("\x21" <= char <= "\x7e" for char in inputs.api_key)
        event("accepted")


# ---------------------------------------------------------------------------------------------
# Event payloads
# ---------------------------------------------------------------------------------------------

REPOSITORY = "octo-org/octo-repo"
REPOSITORY_NAMES = st.sampled_from([REPOSITORY, "OCTO-ORG/Octo-Repo", "someone/fork", ""])
REPO_IDS = st.sampled_from([42, 42.0, 99, True, "42", None]) | JSON_LEAVES
SHA_LIKE = SHAS | st.sampled_from(["A" * 40, "1" * 39, "1" * 41, "", "g" * 40]) | JSON_LEAVES


@st.composite
def repo_objects(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 6)) == 0:
        return draw(JSON_VALUES)
    return draw(
        st.fixed_dictionaries(
            {},
            optional={
                "id": REPO_IDS,
                "full_name": REPOSITORY_NAMES | JSON_LEAVES,
                "fork": st.booleans(),
            },
        )
    )


@st.composite
def side_objects(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 8)) == 0:
        return draw(JSON_VALUES)
    return draw(st.fixed_dictionaries({}, optional={"sha": SHA_LIKE, "repo": repo_objects()}))


NEAR_VALID_SIDES = st.fixed_dictionaries(
    {
        "sha": mostly(SHAS, SHA_LIKE),
        "repo": mostly(
            st.fixed_dictionaries({"id": st.just(42), "full_name": st.just(REPOSITORY)}),
            st.fixed_dictionaries(
                {
                    "id": st.sampled_from([42, 42, 42.0, 99, True, "42"]),
                    "full_name": st.sampled_from(
                        [REPOSITORY, REPOSITORY, "OCTO-ORG/octo-REPO", "x/y"]
                    ),
                }
            )
            | repo_objects(),
        ),
    }
)
PULL_REQUESTS = mostly(
    st.fixed_dictionaries({"base": NEAR_VALID_SIDES, "head": NEAR_VALID_SIDES}),
    st.fixed_dictionaries(
        {},
        optional={"base": side_objects(), "head": side_objects(), "number": JSON_LEAVES},
    )
    | JSON_VALUES,
)


@given(PULL_REQUESTS)
def test_pull_request_payload(payload: Any) -> None:
    facts = attempt(
        "event: parse_pull_request",
        lambda: parse_pull_request(payload, REPOSITORY),
        PlanningFailure,
    )
    if isinstance(facts, PlanningFailure):
        assert facts.code == c.FAILURE_INVALID_EVENT
        assert str(facts) == facts.code
        event("rejected")
    else:
        assert isinstance(facts, PullRequestFacts)
        assert re.fullmatch(c.SHA40_PATTERN, facts.base_sha)
        assert re.fullmatch(c.SHA40_PATTERN, facts.head_sha)
        if not facts.fork:
            head_repo = payload["head"]["repo"]
            assert head_repo["full_name"].lower() == REPOSITORY
            assert not isinstance(head_repo["id"], bool)
            assert head_repo["id"] == payload["base"]["repo"]["id"]
        event("fork" if facts.fork else "same repository")


QUEUE_SHA = "5" * 40
MERGE_GROUPS = mostly(
    st.fixed_dictionaries(
        {"base_sha": mostly(SHAS, SHA_LIKE), "head_sha": mostly(st.just(QUEUE_SHA), SHA_LIKE)},
        optional={"base_ref": JSON_LEAVES, "head_ref": JSON_LEAVES},
    ),
    st.fixed_dictionaries({}, optional={"base_sha": SHA_LIKE, "head_sha": SHA_LIKE}) | JSON_VALUES,
)


@given(MERGE_GROUPS)
def test_merge_group_payload(payload: Any) -> None:
    facts = attempt(
        "event: parse_merge_group",
        lambda: parse_merge_group(payload, QUEUE_SHA),
        PlanningFailure,
    )
    if isinstance(facts, PlanningFailure):
        assert facts.code == c.FAILURE_INVALID_EVENT
        event("rejected")
    else:
        assert isinstance(facts, MergeGroupFacts)
        assert re.fullmatch(c.SHA40_PATTERN, facts.base_sha)
        assert facts.head_sha == QUEUE_SHA
        assert facts.base_sha == payload["base_sha"]
        event("accepted")


MANUAL_NUMBERS = mostly(
    st.from_regex(r"\A[0-9]{1,17}\Z") | st.sampled_from(["9007199254740991", "9007199254740992"]),
    st.text(max_size=30),
)
EVENT_NAMES = mostly(st.just("workflow_dispatch"), st.sampled_from(["pull_request", "push", ""]))


@given(MANUAL_NUMBERS, EVENT_NAMES)
def test_manual_pull_request_number(text: str, event_name: str) -> None:
    number = attempt(
        "event: parse_manual_number",
        lambda: parse_manual_number(text, event_name),
        PlanningFailure,
    )
    if isinstance(number, PlanningFailure):
        assert number.code == c.FAILURE_INVALID_MANUAL_REQUEST
        event("rejected")
    else:
        if number is None:
            assert text == ""
        else:
            assert event_name == "workflow_dispatch"
            assert 1 <= number <= c.MAX_SAFE_INTEGER
            assert str(number) == text
        event("accepted")


EVENT_BYTES = (
    st.binary(max_size=200)
    | JSON_VALUES.map(lambda value: json.dumps(value).encode())
    | PULL_REQUESTS.map(lambda value: json.dumps({"pull_request": value}).encode())
    | mutated(st.just('{"pull_request": {"base": {"sha": "' + "1" * 40 + '"}}}')).map(
        lambda text: text.encode("utf-8", "surrogatepass")
    )
)


@pytest.fixture(scope="module")
def event_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("event")


@given(data=EVENT_BYTES)
def test_event_file(event_directory: Path, data: bytes) -> None:
    path = event_directory / "event.json"
    path.write_bytes(data)
    environ = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_SHA": "3" * 40,
        "GITHUB_OUTPUT": str(event_directory / "output"),
    }
    context = attempt("event: event file", lambda: read_github_context(environ), PlanningFailure)
    if isinstance(context, PlanningFailure):
        assert context.code == c.FAILURE_INVALID_EVENT
        event("rejected")
        return
    assert isinstance(context.event, dict)
    facts = attempt(
        "event: event payload",
        lambda: parse_pull_request(context.event.get("pull_request"), REPOSITORY),
        PlanningFailure,
    )
    if isinstance(facts, PlanningFailure):
        assert facts.code == c.FAILURE_INVALID_EVENT
    event("read")


# ---------------------------------------------------------------------------------------------
# Jev response bodies
# ---------------------------------------------------------------------------------------------

ASKED = st.lists(TASK_IDS, min_size=1, max_size=4, unique_by=str.lower)
ODD_SCORES = st.sampled_from(
    [0, 1, -0.0, 1.0000001, -1e-9, 2, 10**30, True, False, "0.5", None]
) | st.floats(allow_nan=False, allow_infinity=False)
TOKEN_VALUES = st.integers(0, c.MAX_SAFE_INTEGER) | st.sampled_from(
    [-1, 1.0, 1.5, 2**53, 9007199254740991.0, 1e16, True, "3", None]
)
MODELS = st.sampled_from([c.DEFAULT_MODEL, "jev-1.13.1", "jev-latest", "", 7, None])


def valid_score(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and 0 <= value <= 1


def valid_tokens(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and float(value).is_integer() and 0 <= value <= c.MAX_SAFE_INTEGER


@st.composite
def structured_responses(draw: st.DrawFn) -> tuple[bytes, list[str], str | None]:
    """A parseable body for ``asked`` plus the error an exact reading of docs/reference.md,
    "Response validation" expects."""
    asked = draw(ASKED)
    document: dict[str, Any] = {}
    valid = True
    if not draw(one_in(8)):
        document["model"] = draw(mostly(st.just(c.DEFAULT_MODEL), MODELS))
    valid &= document.get("model") == c.DEFAULT_MODEL
    if not draw(one_in(8)):
        usage = draw(
            mostly(
                st.fixed_dictionaries(
                    {"input_tokens": st.integers(0, 10**6), "output_tokens": st.integers(0, 10**6)}
                ),
                st.fixed_dictionaries(
                    {},
                    optional={"input_tokens": TOKEN_VALUES, "output_tokens": TOKEN_VALUES},
                )
                | JSON_LEAVES,
            )
        )
        document["usage"] = usage
    usage_value = document.get("usage")
    valid &= isinstance(usage_value, dict) and all(
        key in usage_value and valid_tokens(usage_value[key])
        for key in ("input_tokens", "output_tokens")
    )
    keys = list(asked)
    if draw(one_in(10)) and keys:
        keys.pop(draw(st.integers(0, len(keys) - 1)))
    if draw(one_in(10)):
        keys.append("-".join(asked) + "-extra")
    valid &= set(keys) == set(asked)
    answers: dict[str, Any] = {}
    for key in keys:
        if draw(one_in(15)):
            answers[key] = draw(JSON_VALUES)
            valid &= False if not isinstance(answers[key], dict) else _answer_ok(answers[key])
            continue
        answer: dict[str, Any] = {
            "type": draw(mostly(st.just("noul"), st.sampled_from(["bool", ""])))
        }
        if not draw(one_in(20)):
            answer["noul"] = draw(mostly(st.floats(0, 1), ODD_SCORES))
        answers[key] = answer
        valid &= _answer_ok(answer)
    if draw(one_in(12)):
        document["answers"] = draw(JSON_LEAVES | st.lists(JSON_LEAVES, max_size=2))
        valid = False
    elif not draw(one_in(12)):
        document["answers"] = answers
    else:
        valid = False
    items = list(document.items())
    order = draw(st.permutations(range(len(items))))
    body = json.dumps(dict(items[i] for i in order)).encode()
    return body, asked, None if valid else c.REASON_INVALID_RESPONSE


def _answer_ok(answer: dict[str, Any]) -> bool:
    return answer.get("type") == "noul" and "noul" in answer and valid_score(answer["noul"])


def check_response(result: ValidatedResponse, asked: list[str]) -> None:
    assert isinstance(result, ValidatedResponse)
    assert result.error in (None, *c.REQUEST_ERRORS)
    assert result.error != c.REASON_JEV_TIMEOUT
    if result.model is not None:
        assert re.fullmatch(c.MODEL_PATTERN, result.model)
    if result.usage is not None:
        assert 0 <= result.usage.input_tokens <= c.MAX_SAFE_INTEGER
        assert 0 <= result.usage.output_tokens <= c.MAX_SAFE_INTEGER
    if result.error is None:
        assert result.scores is not None
        assert set(result.scores) == set(asked)
        assert all(0.0 <= score <= 1.0 for score in result.scores.values())
        assert result.model == c.DEFAULT_MODEL
        assert result.usage is not None
    else:
        assert result.scores is None
    event(f"error: {result.error}")


@given(structured_responses())
def test_structured_response_bodies(case: tuple[bytes, list[str], str | None]) -> None:
    body, asked, expected = case
    result = bounded(
        "response: structured",
        lambda: validate_response(body, asked, c.DEFAULT_MODEL),
    )
    check_response(result, asked)
    assert result.error == expected


RESPONSE_BYTES = (
    st.binary(max_size=300)
    | JSON_VALUES.map(lambda value: json.dumps(value, allow_nan=True).encode())
    | structured_responses().map(lambda case: case[0])
    | mutated(structured_responses().map(lambda case: case[0].decode())).map(
        lambda text: text.encode("utf-8", "surrogatepass")
    )
    | st.sampled_from(
        [
            b"[" * 100_000,
            b'{"a":' * 50_000,
            b'{"model":"jev-1.13.0","model":"jev-1.13.0"}',
            b'{"answers":{"a":{"type":"noul","noul":NaN}}}',
            b'{"answers":{"a":{"type":"noul","noul":1e400}}}',
            b"\xef\xbb\xbf{}",
            b'{"usage":{"input_tokens":' + b"9" * 5000 + b"}}",
        ]
    )
)


@given(RESPONSE_BYTES, ASKED)
def test_arbitrary_response_bodies(body: bytes, asked: list[str]) -> None:
    result = bounded(
        "response: arbitrary",
        lambda: validate_response(body, asked, c.DEFAULT_MODEL),
    )
    check_response(result, asked)


# ---------------------------------------------------------------------------------------------
# Patches
# ---------------------------------------------------------------------------------------------

PATCH_PATHS = st.from_regex(r"\A[a-z]{1,6}(/[a-z0-9_.-]{1,8}){0,2}\Z").filter(
    lambda path: all(segment not in (".", "..") for segment in path.split("/"))
)
LINE_TEXT = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\n\r"), max_size=30
)


@st.composite
def hunks(draw: st.DrawFn, start: int) -> tuple[str, int]:
    lines = draw(st.lists(st.tuples(st.sampled_from(" -+"), LINE_TEXT), min_size=1, max_size=8))
    old = sum(1 for kind, _ in lines if kind in " -")
    new = sum(1 for kind, _ in lines if kind in " +")

    def span(first: int, count: int) -> str:
        return f"{first}" if count == 1 and draw(st.booleans()) else f"{first},{count}"

    section = draw(st.sampled_from(["", " def f():"]))
    text = f"@@ -{span(start, old)} +{span(start, new)} @@{section}\n"
    for kind, line in lines:
        text += kind + line + "\n"
    if draw(st.integers(0, 9)) == 0:
        text += "\\ No newline at end of file\n"
    return text, start + max(old, new) + 3


@st.composite
def file_sections(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    old = draw(PATCH_PATHS)
    kind = draw(st.sampled_from(["modify", "add", "delete", "rename", "binary", "mode"]))
    new = draw(PATCH_PATHS) if kind == "rename" else old
    text = f"diff --git a/{old} b/{new}\n"
    if kind == "add":
        text += "new file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/" + new + "\n"
    elif kind == "delete":
        text += "deleted file mode 100644\nindex 1111111..0000000\n"
        text += f"--- a/{old}\n+++ /dev/null\n"
    elif kind == "rename":
        text += f"similarity index 90%\nrename from {old}\nrename to {new}\n"
        text += f"index 1111111..2222222 100644\n--- a/{old}\n+++ b/{new}\n"
    elif kind == "binary":
        text += f"index 1111111..2222222\nBinary files a/{old} and b/{new} differ\n"
        return text, (old,)
    elif kind == "mode":
        return text + "old mode 100644\nnew mode 100755\n", (old,)
    else:
        text += f"index 1111111..2222222 100644\n--- a/{old}\n+++ b/{new}\n"
    start = 1
    for _ in range(draw(st.integers(1, 3))):
        hunk, start = draw(hunks(start))
        text += hunk
    return text, (old,) if old == new else (old, new)


@st.composite
def structured_patches(draw: st.DrawFn) -> tuple[str, list[tuple[str, ...]]]:
    sections = draw(st.lists(file_sections(), max_size=5))
    return "".join(text for text, _ in sections), [paths for _, paths in sections]


PATCH_TEXTS = (
    structured_patches().map(lambda case: case[0])
    | mutated(structured_patches().map(lambda case: case[0]))
    | st.text(max_size=300)
    | st.sampled_from(["diff --git \n", "diff --git a/x b/x\n@@ -1 +1 @@\n", "\n", "diff --git"])
)
HINTS = st.lists(
    st.sampled_from([".", "./", "src", "src/", "a/b", "", "..", "/abs"]) | SOME_TEXT, max_size=4
)


@given(structured_patches())
def test_structured_patches_parse_with_their_paths(
    case: tuple[str, list[tuple[str, ...]]],
) -> None:
    patch, paths = case
    files = bounded("patch: parse_patch structured", lambda: parse_patch(patch))
    assert [file.paths for file in files] == paths
    event(f"{min(len(files), 3)}+ files")


@given(PATCH_TEXTS)
def test_parse_patch(patch: str) -> None:
    files = attempt("patch: parse_patch", lambda: parse_patch(patch), GroupingError)
    if isinstance(files, GroupingError):
        assert files.code == c.REASON_UNREPRESENTABLE_CHANGE
        event("rejected")
    else:
        data = patch.encode("utf-8", "surrogatepass")
        offsets = [(file.start, file.end) for file in files]
        assert all(start < end <= len(data) for start, end in offsets)
        event("parsed")


@given(PATCH_TEXTS, st.integers(1, 4096), HINTS)
def test_split_diff(patch: str, budget: int, hints: list[str]) -> None:
    groups = attempt("patch: split_diff", lambda: split_diff(patch, budget, hints), GroupingError)
    if isinstance(groups, GroupingError):
        assert groups.code in c.GROUPING_ERRORS
        assert str(groups) == groups.code
        event(f"rejected: {groups.code}")
        return
    # Lossless: the groups are contiguous slices that concatenate to the patch.
    assert "".join(group.diff for group in groups) == patch
    size = len(patch.encode("utf-8"))
    position = 0
    for index, group in enumerate(groups):
        assert group.index == index
        assert group.start_byte == position
        position = group.end_byte
        assert group.end_byte - group.start_byte == len(group.diff.encode("utf-8"))
        if patch:
            assert len(group.diff.encode()) + len(group.context.encode()) <= budget
            assert group.diff
    assert position == size
    event(f"accepted, {min(len(groups), 3)}+ groups")


# ---------------------------------------------------------------------------------------------
# Plan-block text
# ---------------------------------------------------------------------------------------------


@st.composite
def rendered_blocks(draw: st.DrawFn) -> tuple[str, str, str]:
    ids = draw(st.lists(TASK_IDS, max_size=4, unique_by=str.lower))
    mode = draw(st.sampled_from(c.MODES))
    status = draw(st.sampled_from(c.STATUSES))
    degraded = mode == c.MODE_SHADOW or status != c.STATUS_PLANNED
    run = {task_id: degraded or draw(st.booleans()) for task_id in ids}
    tested = draw(SHAS)
    report = {
        c.INPUT_TASKS: {task_id: {c.OUTPUT_RUN: runs} for task_id, runs in run.items()},
        "tested_sha": tested,
        "base_sha": draw(SHAS),
        "head_sha": draw(SHAS),
        "selection_hash": "a" * 64,
        c.INPUT_MODE: mode,
        c.OUTPUT_STATUS: status,
    }
    text = render_plan_block(report, draw(st.sampled_from(["0.1.0", "1.0.0-rc.1"])))
    after = draw(st.text(max_size=40))
    return draw(st.text(max_size=40)) + text + after, tested, after


BLOCK_TEXTS = (
    rendered_blocks().map(lambda case: case[0])
    | mutated(rendered_blocks().map(lambda case: case[0]))
    | JSON_VALUES.map(lambda value: f"<!-- {c.PLAN_BLOCK_MARKER}\n{json.dumps(value)}\n-->")
    | st.text(max_size=300)
)


def check_block(block: PlanBlock | None, expected_tested_sha: str | None) -> None:
    if block is None:
        event("none")
        return
    assert isinstance(block, PlanBlock)
    if expected_tested_sha is not None:
        assert block.tested_sha == expected_tested_sha
    assert list(block.selected) == sorted(
        (task_id for task_id, runs in block.run.items() if runs), key=code_unit_key
    )
    if block.mode == c.MODE_SHADOW or block.status != c.STATUS_PLANNED:
        assert all(block.run.values())
    assert block.runs("an-id-the-block-does-not-list")
    event("block")


@given(rendered_blocks())
def test_rendered_blocks_read_back(case: tuple[str, str, str]) -> None:
    text, tested, after = case
    block = bounded(
        "plan block: rendered",
        lambda: read_plan_block(text, expected_tested_sha=tested),
    )
    # The rendered block is read back unless the text after it opens a later block.
    if c.PLAN_BLOCK_MARKER not in after:
        assert block is not None
    check_block(block, tested)


@given(BLOCK_TEXTS, st.none() | SHAS)
def test_plan_block_text(text: str, expected: str | None) -> None:
    block = bounded(
        "plan block: arbitrary",
        lambda: read_plan_block(text, expected_tested_sha=expected),
    )
    check_block(block, expected)
