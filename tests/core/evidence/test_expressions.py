"""The expressions the evidence decides: inputs, static matrices and the workspace root."""

from __future__ import annotations

import pytest

from jev_select.core.evidence.expressions import (
    MATRIX_COMBINATIONS_MAX,
    Values,
    inputs_of_call,
    is_whole_expression,
    literal_results,
    matrix_combinations,
    substitute,
    with_alternatives,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pnpm test:kit:${{ matrix.mode }}", "pnpm test:kit:unit"),
        ("pnpm test:kit:${{matrix.mode}}", "pnpm test:kit:unit"),
        ("${{ inputs.script }}", "yarn fix"),
        ("run ${{ inputs.missing }}", "run ${{ inputs.missing }}"),
        ("${{ inputs.undecided }}", "${{ inputs.undecided }}"),
        ("x ${{ inputs.script || 'y' }}", "x ${{ inputs.script || 'y' }}"),
        ("${{ github.workspace }}/a", "${{ github.workspace }}/a"),
        ("${{ steps.x.outputs.y }}", "${{ steps.x.outputs.y }}"),
    ],
)
def test_substitute_replaces_only_decided_bare_references(text: str, expected: str) -> None:
    values: Values = {
        "matrix": {"mode": "unit"},
        "inputs": {"script": "yarn fix", "undecided": None},
    }
    assert substitute(text, values) == expected


def test_workspace_is_replaced_only_when_asked() -> None:
    assert substitute("${{ github.workspace }}/a", {"github": {"workspace": "."}}) == "./a"


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("${{ inputs.script }}", True),
        ("  ${{ inputs.script }}\n", True),
        ("${{ inputs.a }} ${{ inputs.b }}", False),
        ("pnpm ${{ inputs.a }}", False),
        ("echo hi", False),
    ],
)
def test_whole_expression(text: str, whole: bool) -> None:
    assert is_whole_expression(text) is whole


def test_inputs_take_the_callers_literal_then_the_default() -> None:
    declared = {
        "script": {"default": "yarn fix"},
        "given": {"default": "a"},
        "flag": {"type": "boolean", "default": True},
        "number": {"default": 3},
        "none": {"description": "no default"},
        "from-context": {"default": "b"},
    }
    options = {"given": "yarn lint", "from-context": "${{ matrix.x }}"}
    assert inputs_of_call(declared, options) == {
        "script": "yarn fix",
        "given": "yarn lint",
        "flag": "true",
        "number": "3",
        "none": None,
        "from-context": None,
    }
    assert inputs_of_call(None, options) == {}


def test_matrix_without_matrix_is_one_empty_combination() -> None:
    assert matrix_combinations(None) == ({},)


def test_matrix_product_exclude_and_include() -> None:
    matrix = {
        "os": ["linux", "windows"],
        "node": [22, 24],
        "exclude": [{"os": "windows", "node": 22}],
        "include": [
            {"os": "linux", "experimental": True},
            {"os": "macos", "node": 24},
        ],
    }
    assert matrix_combinations(matrix) == (
        {"os": "linux", "node": "22", "experimental": "true"},
        {"os": "linux", "node": "24", "experimental": "true"},
        {"os": "windows", "node": "24"},
        {"os": "macos", "node": "24"},
    )


def test_matrix_of_includes_only() -> None:
    matrix = {"include": [{"mode": "unit"}, {"mode": "dev"}, {"mode": "build"}]}
    modes = [combination["mode"] for combination in matrix_combinations(matrix) or ()]
    assert modes == ["unit", "dev", "build"]


def test_matrix_computed_axis_is_undecided_but_others_stay() -> None:
    combinations = matrix_combinations({"os": "${{ fromJSON(needs.a.outputs.os) }}", "n": [1, 2]})
    assert combinations == ({"os": None, "n": "1"}, {"os": None, "n": "2"})


@pytest.mark.parametrize(
    "matrix",
    [
        "${{ fromJSON(needs.setup.outputs.matrix) }}",
        {"include": "${{ fromJSON(x) }}"},
        {"a": list(range(MATRIX_COMBINATIONS_MAX)), "b": [1, 2]},
    ],
)
def test_dynamic_or_oversized_matrix_is_none(matrix: object) -> None:
    assert matrix_combinations(matrix) is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (" (matrix.os == 'windows' && 'dir') || 'ls -lh' ", ("dir", "ls -lh")),
        ("'a'", ("a",)),
        ("inputs.x == 'y' && 'it''s' || 'no'", ("it's", "no")),
        ("!startsWith(github.ref, 'x') && 'a' || 'b'", None),
        # A comparison is a boolean, rendered as GitHub renders it.
        ("matrix.os == 'linux' && 'a'", ("a", "false")),
        ("github.event.issue.pull_request.url != ''", ("true", "false")),
        # A context's value can be the result: anything at all.
        ("inputs.command || 'pnpm test'", None),
        ("matrix.os", None),
        ("format('{0}', matrix.x)", None),
        ("'unterminated", None),
        ("", None),
    ],
)
def test_literal_results(body: str, expected: tuple[str, ...] | None) -> None:
    assert literal_results(body) == expected


def test_with_alternatives_combines_every_expression() -> None:
    text = "${{ matrix.a && 'x' || 'y' }} ${{ runner.os == 'Windows' && 'w' || 'u' }} ${{ env.Z }}"
    assert with_alternatives(text) == (
        "x w ${{ env.Z }}",
        "x u ${{ env.Z }}",
        "y w ${{ env.Z }}",
        "y u ${{ env.Z }}",
    )


def test_matrix_object_properties_are_read() -> None:
    matrix = {"suite": [{"name": "unit", "script": "pnpm test:unit"}, {"name": "e2e"}]}
    combinations = matrix_combinations(matrix) or ()
    commands = [
        substitute("${{ matrix.suite.script }}", {"matrix": combo}) for combo in combinations
    ]
    assert commands == ["pnpm test:unit", "${{ matrix.suite.script }}"]
