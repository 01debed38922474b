"""One grammar for the task table: ``check`` has an error exactly when ``parse_tasks`` refuses.

docs/reference.md, "Checking a task table": "A table has an error exactly when `plan` refuses
it". The texts below are generated: valid tables, tables with one or more defects of the grammar
(IDs, fields, types, paths, globs, job references), YAML spellings of the same values (block,
flow, JSON, quoted and plain scalars, YAML 1.1 words, tags) and texts mangled character by
character. A table the grammar accepts also satisfies the published JSON Schema, which is no
longer checked at run time.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from importlib import resources
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.strategies import mutated, one_in

from jev_select import contracts as c
from jev_select.core import yamlstrict
from jev_select.core.check.problems import ERROR, Problem
from jev_select.core.check.table import check_table
from jev_select.core.tasks import parse_tasks
from jev_select.core.yamlstrict import load_strict
from jev_select.errors import InputError

# --- values ----------------------------------------------------------------------------------

# Spellings YAML reads as something other than the text, or refuses.
_YAML_WORDS = [
    "yes",
    "no",
    "on",
    "off",
    "true",
    "True",
    "false",
    "null",
    "~",
    "1",
    "0x1F",
    "1.5",
    ".inf",
    ".nan",
    "1e3",
    "<<",
    "-",
    "",
    "&a x",
    "*a",
    "!!str 5",
    "!!bool yes",
    "!!int x",
    "!custom x",
    "{",
    "[x",
    "a: b",
    "#c",
    "'",
]
_GOOD_PATHS = [
    "ci.yml",
    ".github/workflows/ci.yml",
    "src/a.py",
    "./a",
    "a//b",
    "a/..b",
    "..a",
    "café.md",
    "a b",
]
_BAD_PATHS = ["/abs", "../up", "x/../y", "x/..", "..", "a\\b", "a\nb", "a\rb", "a\x00b", ""]
_GOOD_GLOBS = [
    "src/**",
    "*.py",
    "docs/",
    "*.{js,ts}",
    "+(a|b).txt",
    "a/!(b)",
    "\\*.py",
    "a\\b",
    "#c.py",
    "x!",
    "a/..b",
]
_BAD_GLOBS = [
    "!src/**",
    "/src/**",
    "../src",
    "a/..",
    "[z",
    "{1..1000}{1..1000}",
    "a\u2028b",
    "a\u2029b",
    "a\nb",
    "a\x00b",
    "",
]
_GOOD_TEXTS = st.one_of(
    st.sampled_from(["x", "Runs the tests.", " padded ", "\x1c", "é", "yes", "null", "1"]),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=8),
)
_BLANK_TEXTS = st.sampled_from(["", " ", "\t", "\u3000", "\ufeff\u00a0", "\u2028"])
_RESERVED_FOLDED = {task_id.lower() for task_id in c.RESERVED_TASK_IDS}
# Built rather than drawn from a regular expression: generation stays cheap.
_GOOD_IDS = st.builds(
    str.__add__, st.sampled_from("abzAZ_"), st.text("abAB09_-", max_size=5)
).filter(lambda task_id: task_id.lower() not in _RESERVED_FOLDED)
_BAD_IDS = st.sampled_from(
    [*c.RESERVED_TASK_IDS, "RUN", "Status", "a" * 65, "9x", "-a", "a.b", "café", "", "a\n", "1.5"]
)
_ANY_SCALAR: st.SearchStrategy[Any] = st.one_of(
    _GOOD_TEXTS,
    _BLANK_TEXTS,
    st.sampled_from(_YAML_WORDS),
    st.booleans(),
    st.none(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
)
_ANYTHING: st.SearchStrategy[Any] = st.recursive(
    _ANY_SCALAR,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.one_of(_GOOD_TEXTS, st.sampled_from(c.TASK_FIELDS)), inner, max_size=3)
    ),
    max_leaves=5,
)

_GOOD_JOB_REF = st.fixed_dictionaries(
    {c.JOB_REF_FIELD_WORKFLOW: st.sampled_from(_GOOD_PATHS)},
    optional={c.JOB_REF_FIELD_JOB: _GOOD_TEXTS},
)
_GOOD_BODY = st.fixed_dictionaries(
    {c.TASK_FIELD_DESCRIPTION: _GOOD_TEXTS},
    optional={
        c.TASK_FIELD_ALWAYS: st.booleans(),
        c.TASK_FIELD_JOBS: st.lists(_GOOD_JOB_REF, min_size=1, max_size=2),
        c.TASK_FIELD_CONTEXT_FILES: st.lists(st.sampled_from(_GOOD_PATHS), max_size=3, unique=True),
        c.TASK_FIELD_FORCE_PATHS: st.lists(st.sampled_from(_GOOD_GLOBS), max_size=3, unique=True),
    },
)
_GOOD_TABLE = st.dictionaries(_GOOD_IDS, _GOOD_BODY, max_size=4).filter(
    lambda table: len({task_id.lower() for task_id in table}) == len(table)
)


def _bad_item(field: str) -> st.SearchStrategy[Any]:
    """A value that breaks one item of ``field`` (or, sometimes, one that does not)."""
    if field == c.TASK_FIELD_JOBS:
        return st.one_of(
            _ANY_SCALAR,
            st.just({}),
            st.fixed_dictionaries({c.JOB_REF_FIELD_JOB: _GOOD_TEXTS}),
            st.fixed_dictionaries({"workflw": st.sampled_from(_GOOD_PATHS)}),
            st.fixed_dictionaries(
                {c.JOB_REF_FIELD_WORKFLOW: st.one_of(st.sampled_from(_BAD_PATHS), _ANY_SCALAR)}
            ),
            st.fixed_dictionaries(
                {
                    c.JOB_REF_FIELD_WORKFLOW: st.sampled_from(_GOOD_PATHS),
                    c.JOB_REF_FIELD_JOB: st.one_of(_BLANK_TEXTS, _ANYTHING),
                },
                optional={"name": _GOOD_TEXTS},
            ),
        )
    pool = _BAD_GLOBS if field == c.TASK_FIELD_FORCE_PATHS else _BAD_PATHS
    return st.one_of(st.sampled_from(pool), _ANYTHING)


@st.composite
def _broken(draw: st.DrawFn, table: dict[str, Any]) -> Any:
    """``table`` with one defect: an ID, a field, a type, an item, or the whole shape."""
    kind = draw(
        st.sampled_from(
            ["id", "case", "body", "field", "unknown", "drop", "item", "dup", "wrap", "whole"]
        )
    )
    if kind == "whole":
        return draw(_ANYTHING)
    if kind == "wrap":
        return {draw(st.sampled_from(["tasks", "jobs", "unit"])): table}
    if kind == "id" or not table:
        table[draw(_BAD_IDS)] = draw(_GOOD_BODY)
        return table
    task_id = draw(st.sampled_from(sorted(table)))
    body = table[task_id]
    if not isinstance(body, dict):
        # An earlier defect replaced the body: this one replaces it again.
        table[task_id] = draw(_ANYTHING)
        return table
    if kind == "case":
        table[draw(st.sampled_from([task_id.upper(), task_id.lower(), task_id.swapcase()]))] = body
    elif kind == "body":
        table[task_id] = draw(_ANYTHING)
    elif kind == "field":
        field = draw(st.sampled_from(c.TASK_FIELDS))
        body[field] = draw(st.one_of(_ANYTHING, _BLANK_TEXTS, st.just([])))
    elif kind == "unknown":
        body[draw(st.sampled_from(["descripton", "Description", "job", "question", "tasks"]))] = (
            draw(_ANYTHING)
        )
    elif kind == "drop":
        body.pop(c.TASK_FIELD_DESCRIPTION, None)
    else:
        field = draw(
            st.sampled_from(
                [c.TASK_FIELD_JOBS, c.TASK_FIELD_CONTEXT_FILES, c.TASK_FIELD_FORCE_PATHS]
            )
        )
        items = body.setdefault(
            field, [{c.JOB_REF_FIELD_WORKFLOW: "ci.yml"}] if field == c.TASK_FIELD_JOBS else ["a"]
        )
        if not isinstance(items, list):
            items = body[field] = []
        if kind == "dup":
            items.append(items[0] if items else "a")
        else:
            items.insert(draw(st.integers(0, len(items))), draw(_bad_item(field)))
    return table


@st.composite
def _tables(draw: st.DrawFn) -> Any:
    """A valid table almost half of the time, else one with one to three defects."""
    table: Any = draw(_GOOD_TABLE)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))):
        if not isinstance(table, dict):
            break
        table = draw(_broken(table))
    return table


# --- YAML spellings of a value -------------------------------------------------------------------

_PLAIN_SAFE = re.compile(r"[A-Za-z_.][A-Za-z0-9_./* -]*[A-Za-z0-9_./*]\Z|[A-Za-z_]\Z")


def _escaped(character: str) -> str:
    # YAML refuses unprintable characters even inside quotes, so they are escaped; \U keeps an
    # astral character one character (a JSON surrogate pair would be two lone surrogates).
    if character in '"\\':
        return "\\" + character
    if character.isprintable():
        return character
    code = ord(character)
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _quoted(text: str) -> str:
    return '"' + "".join(_escaped(character) for character in text) + '"'


def _flow(value: Any, plain: Callable[[str], bool]) -> str:
    if isinstance(value, dict):
        pairs = [f"{_flow(key, plain)}: {_flow(item, plain)}" for key, item in value.items()]
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item, plain) for item in value) + "]"
    if isinstance(value, str):
        # A plain spelling is written as is: whatever YAML makes of it, both readers see it.
        return value if plain(value) else _quoted(value)
    return json.dumps(value)


def _block(value: Any, indent: int, plain: Callable[[str], bool]) -> str:
    pad = " " * indent
    if not isinstance(value, dict) or not value:
        return pad + _flow(value, plain)
    lines = []
    for key, item in value.items():
        head = f"{pad}{_flow(key, plain)}:"
        if isinstance(item, dict) and item:
            lines.append(head + "\n" + _block(item, indent + 2, plain))
        elif isinstance(item, list) and item:
            lines.append(head)
            lines.extend(f"{pad}  - {_flow(element, plain)}" for element in item)
        else:
            lines.append(f"{head} {_flow(item, plain)}")
    return "\n".join(lines)


@st.composite
def table_texts(draw: st.DrawFn) -> str:
    """A task table as YAML text, in one of several spellings, sometimes mangled."""
    table = draw(_tables())
    style = draw(st.sampled_from(["json", "flow", "block", "block"]))

    def plain(text: str) -> bool:
        # Safe words are plain half of the time; YAML's own words and other text rarely (defects
        # of the YAML itself).
        if _PLAIN_SAFE.match(text):
            return draw(st.booleans())
        return draw(one_in(4 if text in _YAML_WORDS else 40))

    if style == "json":
        text = json.dumps(table, ensure_ascii=False)
        if not text.isprintable():
            text = _flow(table, lambda _text: False)
    elif style == "flow":
        text = _flow(table, plain)
    else:
        text = _block(table, draw(st.sampled_from([0, 0, 2])), plain) + "\n"
    if draw(one_in(6)):
        text = draw(mutated(st.just(text)))
    return text


# --- the properties -----------------------------------------------------------------------------


def _refused(text: str) -> bool:
    try:
        parse_tasks(text)
    except InputError as error:
        refusal = error
    else:
        return False
    assert refusal.field == c.INPUT_TASKS
    return True


def _errors(problems: tuple[Problem, ...]) -> list[Problem]:
    return [problem for problem in problems if problem.severity == ERROR]


_PINNED_TEXTS = [
    "{}",
    "",
    "unit: {description: x}",
    "tasks:\n  unit: {description: x}\n",
    "unit: {description: x, jobs: [{workflow: a.yml, job: null}]}",
    "unit: {description: x, force_paths: ['{1..1000}{1..1000}']}",
    "unit: {description: x, context_files: [a, a]}",
    "unit:\n  descripton: x\n",
    "a: {description: x}\nA: {description: y}\n",
    "a: {description: '\\ud800'}",
    "a: &x {description: x}\n",
    "'1': {description: x}\n1: {description: y}\n",
]


def _with_examples(texts: list[str]) -> Callable[[Any], Any]:
    """Pin ``texts`` as explicit examples of a ``@given`` test (they run on every profile)."""

    def pin(test: Any) -> Any:
        for text in reversed(texts):
            test = example(text)(test)
        return test

    return pin


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_texts())
@_with_examples(_PINNED_TEXTS)
def test_check_errors_exactly_when_parse_tasks_refuses(text: str) -> None:
    problems = check_table(text)
    assert bool(_errors(problems)) == _refused(text), problems
    # Every refusal is one the grammar names; the catch-all code is never needed.
    assert all(problem.code != c.CHECK_INVALID_TABLE for problem in problems), problems


def _product_schema() -> Any:
    text = (resources.files("jev_select") / "schemas" / c.TASKS_SCHEMA_FILE).read_text("utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


PRODUCT_SCHEMA = _product_schema()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_texts())
def test_a_table_the_grammar_accepts_satisfies_the_published_schema(text: str) -> None:
    # parse_tasks no longer runs the schema: the grammar must imply every constraint it states.
    if _refused(text):
        return
    document = load_strict(text.strip(c.WHITESPACE))
    errors = list(PRODUCT_SCHEMA.iter_errors(document))
    assert not errors, errors


# --- the YAML is composed once per reading ----------------------------------------------------

_TABLE = (
    "unit:\n  description: Unit tests\n  jobs:\n    - workflow: .github/workflows/ci.yml\n"
    "  force_paths: [src/**]\n"
)


@pytest.mark.parametrize("text", [_TABLE, "unit:\n  descripton: x\n", "a: [1\n"])
@pytest.mark.parametrize("reader", [check_table, parse_tasks], ids=["check_table", "parse_tasks"])
def test_the_yaml_is_composed_once(
    monkeypatch: pytest.MonkeyPatch, text: str, reader: Callable[[str], object]
) -> None:
    compositions: list[str] = []
    original = yamlstrict._StrictLoader.get_single_node

    def counted(loader: yamlstrict._StrictLoader) -> Any:
        compositions.append(text)
        return original(loader)

    monkeypatch.setattr(yamlstrict._StrictLoader, "get_single_node", counted)
    with contextlib.suppress(InputError):
        reader(text)
    assert len(compositions) == 1
