"""The strict YAML dialect (docs/reference.md, "Task fields") and its hostile-input guards."""

from __future__ import annotations

import math
import tracemalloc
from typing import Any

import pytest
import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from jev_select import contracts as c
from jev_select.core import yamlstrict
from jev_select.core.tasks import parse_tasks
from jev_select.core.yamlstrict import (
    YamlStrictError,
    load_strict,
    mapping_key_text,
    parse_strict,
)
from jev_select.errors import InputError


def rejected(text: str) -> None:
    with pytest.raises(YamlStrictError) as caught:
        load_strict(text)
    assert str(caught.value) == ""
    # The reader that keeps the nodes refuses the same texts, at the same place.
    with pytest.raises(YamlStrictError) as with_nodes:
        parse_strict(text)
    assert (with_nodes.value.code, with_nodes.value.index) == (
        caught.value.code,
        caught.value.index,
    )
    # The same text as a task table is the one fixed diagnostic and carries nothing of the text.
    with pytest.raises(InputError) as as_tasks:
        parse_tasks(text)
    assert as_tasks.value.field == "tasks"
    assert str(as_tasks.value) == "tasks"


# --- plain scalar resolution ------------------------------------------------------------------


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "y", "n", "Yes", "NO", "On", "OFF"])
def test_yaml11_booleans_are_strings(word: str) -> None:
    assert load_strict(f"k: {word}") == {"k": word}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0777", 777),
        ("0o17", 15),
        ("0x1F", 31),
        ("-12", -12),
        ("+5", 5),
        ("0", 0),
        ("1.10", 1.1),
        ("1.", 1.0),
        (".5", 0.5),
        ("-1.5e3", -1500.0),
        ("1e3", 1000.0),
        (".inf", math.inf),
        ("-.Inf", -math.inf),
        ("+.INF", math.inf),
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("False", False),
        ("FALSE", False),
        ("null", None),
        ("Null", None),
        ("NULL", None),
        ("~", None),
        ("", None),
    ],
)
def test_core_schema_scalars(text: str, expected: Any) -> None:
    value = load_strict(f"k: {text}")["k"]
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("text", [".nan", ".NaN", ".NAN"])
def test_nan(text: str) -> None:
    assert math.isnan(load_strict(f"k: {text}")["k"])


@pytest.mark.parametrize(
    "text",
    ["2001-12-14", "1_000", "0b101", "1:20", "0x", "0o8", "tRue", "nULL", "-.nan", "=", "0X1F"],
)
def test_yaml11_forms_are_strings(text: str) -> None:
    assert load_strict(f"k: {text}") == {"k": text}


def test_quoted_scalars_stay_strings() -> None:
    assert load_strict("a: 'true'\nb: \"5\"\nc: '~'") == {"a": "true", "b": "5", "c": "~"}


def test_workflow_on_key_stays_a_string() -> None:
    assert load_strict("on: push\njobs: {}") == {"on": "push", "jobs": {}}


def test_nested_structures() -> None:
    assert load_strict("a:\n  b: [1, {c: d}]\n  e:\n    - x\n") == {
        "a": {"b": [1, {"c": "d"}], "e": ["x"]}
    }


def test_empty_stream_is_none() -> None:
    assert load_strict("") is None
    assert load_strict("# only a comment\n") is None


def test_parse_strict_gives_the_value_with_its_nodes() -> None:
    value, node = parse_strict("a:\n  - 1\n  - x\nb: {c: true}\n")
    assert value == {"a": [1, "x"], "b": {"c": True}}
    assert isinstance(node, MappingNode)
    (a_key, a_value), (b_key, b_value) = node.value
    assert isinstance(a_key, ScalarNode)
    assert a_key.value == "a"
    assert isinstance(a_value, SequenceNode)
    assert [(item.start_mark.line, item.start_mark.column) for item in a_value.value] == [
        (1, 4),
        (2, 4),
    ]
    assert (b_key.start_mark.line, b_value.start_mark.column) == (3, 3)


def test_parse_strict_of_an_empty_stream() -> None:
    assert parse_strict("") == (None, None)
    assert parse_strict("# only a comment\n") == (None, None)


def test_single_explicit_document_is_fine() -> None:
    assert load_strict("---\na: 1\n...\n") == {"a": 1}


# --- keys -------------------------------------------------------------------------------------


def test_non_string_keys_become_strings() -> None:
    loaded = load_strict("1: a\n1.5: b\ntrue: c\nnull: d\n.inf: e\n-.inf: f\n.nan: g\n1e30: h")
    assert loaded == {
        "1": "a",
        "1.5": "b",
        "true": "c",
        "": "d",
        "Infinity": "e",
        "-Infinity": "f",
        "NaN": "g",
        "1e+30": "h",
    }


def test_number_keys_use_javascript_formatting() -> None:
    assert load_strict("1.0: a\n0x10: b\n1e-7: c\n0777: d") == {
        "1": "a",
        "16": "b",
        "1e-7": "c",
        "777": "d",
    }


@pytest.mark.parametrize(
    "key", [None, True, False, 0, 5, -3, 1.5, 10**400, math.inf, -math.inf, math.nan]
)
def test_mapping_key_text_of_scalars(key: object) -> None:
    assert isinstance(mapping_key_text(key), str)


@pytest.mark.parametrize("key", [[1], {"a": 1}, b"x"])
def test_mapping_key_text_refuses_non_scalars(key: object) -> None:
    with pytest.raises(YamlStrictError):
        mapping_key_text(key)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2",
        "x:\n  a: 1\n  a: 2",
        "x:\n  - y:\n      z: 1\n      z: 1",
        "1: a\n'1': b",
        "true: a\n'true': b",
        "True: a\ntrue: b",
        "null: a\n'': b",
        "~: a\nnull: b",
        "1: a\n1.0: b",
        "0x10: a\n16: b",
        ".inf: a\nInfinity: b",
        "{a: 1, a: 1}",
    ],
)
def test_duplicate_keys_after_conversion(text: str) -> None:
    rejected(text)


def test_complex_keys_are_refused() -> None:
    rejected("? [a, b]\n: 1")
    rejected("? {a: b}\n: 1")


# --- aliases, anchors, merge keys ---------------------------------------------------------------


def test_alias_is_refused() -> None:
    rejected("a: &x 1\nb: *x")


def test_merge_through_alias_is_refused() -> None:
    rejected("base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2")


def test_unused_anchor_is_tolerated() -> None:
    assert load_strict("a: &x 1\nb: &list [1]") == {"a": 1, "b": [1]}


def test_repeated_unused_anchor_is_tolerated() -> None:
    assert load_strict("a: &x 1\nb: &x 2") == {"a": 1, "b": 2}


def test_merge_key_is_an_ordinary_key() -> None:
    assert load_strict("<<: {a: 1}\nb: 2") == {"<<": {"a": 1}, "b": 2}


# --- documents, directives, tags ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["a: 1\n---\nb: 2", "---\na: 1\n---\n", "- a\n--- x\n"])
def test_several_documents_are_refused(text: str) -> None:
    rejected(text)


@pytest.mark.parametrize(
    "text",
    ["%YAML 1.2\n---\na: 1", "%YAML 1.1\n---\na: 1", "%TAG !e! tag:example.com,2000:\n---\na: 1"],
)
def test_directives_are_refused(text: str) -> None:
    rejected(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: !custom 1",
        "a: !!binary aGk=",
        "a: !!timestamp 2001-12-14",
        "a: !!set {x}",
        "a: !!omap [{x: 1}]",
        "a: !!python/object:os.system x",
        "a: !<tag:example.com,2000:x> 1",
        "a: ! 5",
        "a: !!merge x",
        "a: !!bool yes",
        "a: !!int 1.5",
        "a: !!float abc",
        "a: !!null x",
        "a: !!map [1]",
        "a: !!seq {x: 1}",
        "a: !!str {x: 1}",
    ],
)
def test_other_tags_and_mismatched_tags_are_refused(text: str) -> None:
    rejected(text)


def test_allowed_tags() -> None:
    loaded = load_strict(
        "a: !!str 5\nb: !!int '7'\nc: !!float '1.5'\nd: !!bool 'true'\ne: !!null ''\n"
        "f: !!map {x: 1}\ng: !!seq [1]"
    )
    assert loaded == {"a": "5", "b": 7, "c": 1.5, "d": True, "e": None, "f": {"x": 1}, "g": [1]}


@pytest.mark.parametrize(
    "text", ["a: [1", "a: 'open", "\tkey: x", "a: b: c", "a: \x01", "a: \ud800", "- a\nb: c"]
)
def test_parser_errors_are_refused(text: str) -> None:
    rejected(text)


# --- hostile input --------------------------------------------------------------------------------


def test_deep_flow_nesting_fails_without_recursion() -> None:
    rejected("[" * 100_000)
    rejected("{" * 100_000)
    rejected("a: " + "[" * 50_000 + "]" * 50_000)


def test_deep_block_nesting_fails() -> None:
    lines = [" " * level + f"k{level}:" for level in range(200)]
    rejected("\n".join(lines) + " x")


def test_nesting_at_the_depth_limit_is_accepted() -> None:
    depth = c.MAX_YAML_DEPTH
    assert load_strict("[" * depth + "]" * depth) is not None
    rejected("[" * (depth + 1) + "]" * (depth + 1))


def test_billion_laughs_fails() -> None:
    lines = ['lol0: &l0 "lol"']
    lines += [f"lol{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 10)]
    rejected("\n".join(lines))


def test_text_over_one_mebibyte_fails() -> None:
    rejected("a: " + "x" * c.MAX_TASKS_TEXT_BYTES)


def test_size_cap_counts_utf8_bytes() -> None:
    characters = c.MAX_TASKS_TEXT_BYTES // 2 + 1
    with pytest.raises(YamlStrictError):
        load_strict("é" * characters)


def test_node_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(c, "MAX_YAML_NODES", 10)
    assert load_strict("[1, 2, 3, 4, 5, 6, 7, 8, 9]") == list(range(1, 10))
    with pytest.raises(YamlStrictError):
        load_strict("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]")


def test_node_flood_fails_at_the_real_cap() -> None:
    with pytest.raises(YamlStrictError):
        load_strict("[" + "0," * (c.MAX_YAML_NODES + 1) + "]")


# --- implementation constraints -------------------------------------------------------------------


def test_pure_python_loader_is_used() -> None:
    loader_type = yamlstrict._StrictLoader
    assert issubclass(loader_type, yaml.SafeLoader)
    c_loader = getattr(yaml, "CSafeLoader", None)
    if c_loader is not None:
        assert not issubclass(loader_type, c_loader)


def test_error_type() -> None:
    error = YamlStrictError()
    assert isinstance(error, ValueError)
    assert str(error) == ""


@pytest.mark.parametrize(
    "text",
    [
        'a: "\\ud800"',
        'a: "tests \\udfff"',
        'a: "\\ud83d\\ude00"',  # two escaped halves are two lone surrogates in YAML
        '"\\udc00": 1',
        'a: [x, "\\ud800"]',
    ],
)
def test_lone_surrogate_escapes_are_refused(text: str) -> None:
    with pytest.raises(YamlStrictError):
        load_strict(text)


def test_astral_escapes_and_literal_backslashes_are_fine() -> None:
    assert load_strict('a: "\\U0001F600 é"') == {"a": "\U0001f600 é"}
    assert load_strict("a: '\\ud800'") == {"a": "\\ud800"}


def test_surrogate_in_a_description_is_a_tasks_error_not_a_crash() -> None:
    with pytest.raises(InputError) as caught:
        parse_tasks('unit:\n  description: "Runs the tests \\ud800"\n')
    assert caught.value.field == c.INPUT_TASKS


# --- aliases in workflow and action files (aliases=True) ------------------------------------------


def loose(text: str) -> Any:
    value = load_strict(text, aliases=True)
    # With the nodes, the value is the same: construction follows the one composition.
    assert parse_strict(text, aliases=True)[0] == value
    return value


def test_workflow_mode_expands_aliases() -> None:
    text = "x: &runner ubuntu-24.04\njobs:\n  a: {runs-on: *runner}\n  b: {runs-on: *runner}\n"
    assert loose(text) == {
        "x": "ubuntu-24.04",
        "jobs": {"a": {"runs-on": "ubuntu-24.04"}, "b": {"runs-on": "ubuntu-24.04"}},
    }


def test_workflow_mode_merges_and_explicit_keys_win() -> None:
    text = (
        "base: &base {a: 1, b: 2}\nmore: &more {b: 3, c: 4}\n"
        "one:\n  <<: *base\n  b: 9\n"
        "two:\n  <<: [*base, *more]\n  d: 5\n"
        "three:\n  z: 0\n  <<: *more\n"
    )
    loaded = loose(text)
    assert loaded["one"] == {"a": 1, "b": 9}
    assert loaded["two"] == {"a": 1, "b": 2, "c": 4, "d": 5}
    assert list(loaded["two"]) == ["a", "b", "c", "d"]
    assert loaded["three"] == {"z": 0, "b": 3, "c": 4}


def test_workflow_mode_a_quoted_merge_key_is_an_ordinary_key() -> None:
    assert loose("'<<': {a: 1}") == {"<<": {"a": 1}}


@pytest.mark.parametrize(
    "text",
    [
        "a: *nowhere",
        "a: &x [1, *x]",  # recursive
        "a: &x {b: *x}",
        "base: &b [1]\nc:\n  <<: *b",  # merge of a sequence
        "c:\n  <<: 5",
        "base: &b {x: 1}\nc:\n  <<: *b\n  y: 1\n  y: 2",  # duplicate explicit key
        "a: &x !!python/object:os.system {}\nb: *x",
    ],
)
def test_workflow_mode_refuses_bad_aliases(text: str) -> None:
    with pytest.raises(YamlStrictError):
        loose(text)


def billion_laughs(levels: int, width: int) -> str:
    lines = ["l0: &l0 [lol]"]
    for level in range(1, levels + 1):
        items = ", ".join(f"*l{level - 1}" for _ in range(width))
        lines.append(f"l{level}: &l{level} [{items}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_in_bounded_memory() -> None:
    text = billion_laughs(9, 9)  # 9**9 strings once expanded, about 800 bytes written
    tracemalloc.start()
    try:
        with pytest.raises(YamlStrictError):
            loose(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000


def wide(copies: int) -> str:
    return "a: &a [" + ", ".join(["x"] * 999) + "]\nb: [" + ", ".join(["*a"] * copies) + "]\n"


def test_expansion_bound_is_exact() -> None:
    # Root, key a, a (1,000 nodes), key b, b (1 + copies * 1,000): 199,004 nodes for 198 copies.
    assert c.MAX_YAML_EXPANDED_NODES == 200_000
    assert len(loose(wide(198))["b"]) == 198
    with pytest.raises(YamlStrictError):
        loose(wide(200))


def test_task_table_mode_still_refuses_aliases() -> None:
    rejected("a: &x 1\nb: *x")
    assert load_strict("<<: {a: 1}\nb: 2") == {"<<": {"a": 1}, "b": 2}
