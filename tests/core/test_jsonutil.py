"""JSON writing and reading (docs/reference.md, "Compact JSON and numbers"): JavaScript number
formatting, escaping, strict parsing and code-unit ordering.

``format_number`` is checked against an independent reference written from the ECMAScript
``Number::toString`` algorithm: the shortest digit string is found by trying every precision with
correctly rounded ``%e`` formatting, and the layout follows the four cases of the standard.
"""

from __future__ import annotations

import json
import math
import sys
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jev_select.core.jsonutil import (
    JsonError,
    canonical_json,
    code_unit_key,
    compact_json,
    format_number,
    pretty_json,
    sort_keys_deep,
    strict_loads,
)


def shortest_digits(value: float) -> tuple[str, int]:
    """(digits d1..dk, n) with value = 0.d1..dk x 10**n and k as small as possible.

    At each precision the correctly rounded candidate and its two neighbours are tried: when the
    value lies exactly halfway between two k-digit strings, rounding half to even can pick the one
    that does not read back, while its neighbour does (2**-24 at 16 digits). Among the candidates
    that read back, the closest to the value wins, and the even one on a tie, as the standard says.
    """
    exact = Decimal(value)
    for precision in range(1, 18):
        mantissa, exponent_text = f"{value:.{precision - 1}e}".split("e")
        rounded = int(mantissa.replace(".", ""))
        scale = int(exponent_text) - (precision - 1)
        candidates = [
            s
            for s in (rounded - 1, rounded, rounded + 1)
            if 10 ** (precision - 1) <= s < 10**precision and float(f"{s}e{scale}") == value
        ]
        if candidates:
            best = min(candidates, key=lambda s: (abs(Decimal(s).scaleb(scale) - exact), s % 2))
            digits = str(best).rstrip("0") or "0"
            return digits, scale + precision
    raise AssertionError("17 digits always round-trip")


def reference_number_to_string(value: float) -> str:
    """ECMAScript Number::toString(10) for a finite double, written from the standard."""
    if value == 0:
        return "0"
    if value < 0:
        return "-" + reference_number_to_string(-value)
    digits, n = shortest_digits(value)
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    exponent = n - 1
    sign = "+" if exponent >= 0 else "-"
    if k == 1:
        return f"{digits}e{sign}{abs(exponent)}"
    return f"{digits[0]}.{digits[1:]}e{sign}{abs(exponent)}"


KNOWN = [
    (0.0, "0"),
    (-0.0, "0"),
    (1.0, "1"),
    (1e3, "1000"),
    (0.05, "0.05"),
    (0.1, "0.1"),
    (0.000001, "0.000001"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (123e-20, "1.23e-18"),
    (1e21, "1e+21"),
    (1.5e21, "1.5e+21"),
    (1e20, "100000000000000000000"),
    (123456789012345680000.0, "123456789012345680000"),
    (1e16, "10000000000000000"),
    (0.1 + 0.2, "0.30000000000000004"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (-2.5, "-2.5"),
    (100.5, "100.5"),
    (2**53 + 1, "9007199254740992"),  # rounded to the nearest double first
    (12345678, "12345678"),
    (2**-24, "5.960464477539063e-8"),  # halfway at 16 digits: the neighbour reads back
]


@pytest.mark.parametrize(("value", "expected"), KNOWN)
def test_known_javascript_values(value: float, expected: str) -> None:
    assert format_number(value) == expected


@pytest.mark.parametrize(("value", "expected"), KNOWN)
def test_reference_agrees_with_the_known_values(value: float, expected: str) -> None:
    assert reference_number_to_string(float(value)) == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_format_number_matches_the_ecmascript_algorithm(value: float) -> None:
    assert format_number(value) == reference_number_to_string(value)


@given(st.integers(min_value=-(10**300), max_value=10**300))
def test_integers_format_as_their_nearest_double(value: int) -> None:
    assert format_number(value) == reference_number_to_string(float(value))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_formatted_numbers_parse_back_to_the_same_double(value: float) -> None:
    assert float(format_number(value)) == value or value == 0


def test_format_number_refuses_what_json_cannot_hold() -> None:
    for value in (math.inf, -math.inf, math.nan, 10**400, -(10**400)):
        with pytest.raises(ValueError, match="non-finite"):
            format_number(value)
    with pytest.raises(TypeError):
        format_number(True)


def test_non_finite_values_serialise_as_null_like_json_stringify() -> None:
    # A YAML `with:` map can carry .inf or an integer far beyond a double; JSON.stringify writes
    # both as null instead of failing the whole request.
    value = {"inf": math.inf, "ninf": -math.inf, "nan": math.nan, "big": 10**400, "neg": -(10**400)}
    assert compact_json(value) == '{"inf":null,"ninf":null,"nan":null,"big":null,"neg":null}'
    assert canonical_json({"b": 10**400, "a": 1}) == '{"a":1,"b":null}'
    assert pretty_json([10**400]) == "[\n  null\n]"


def test_compact_json_escapes_exactly_the_spec_set() -> None:
    text = '"\\/\b\t\n\f\r\x00\x1f\x7f\u2028\u2029é😀'
    assert compact_json(text) == ('"\\"\\\\/\\b\\t\\n\\f\\r\\u0000\\u001f\x7f\u2028\u2029é😀"')
    expected = json.dumps(
        {"k": [text, True, None]}, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    assert compact_json({"k": [text, True, None]}) == expected


def test_pretty_json_uses_two_spaces_and_javascript_numbers() -> None:
    assert pretty_json({"a": [1.0, 1e-7], "b": {}, "c": []}) == (
        '{\n  "a": [\n    1,\n    1e-7\n  ],\n  "b": {},\n  "c": []\n}'
    )


def test_strict_loads_rejects_duplicate_keys_at_any_depth() -> None:
    with pytest.raises(JsonError):
        strict_loads('{"a": 1, "a": 2}')
    with pytest.raises(JsonError):
        strict_loads(b'{"x": [{"a": 1, "b": {"c": 1, "c": 1}}]}')
    assert strict_loads('{"a": {"a": 1}}') == {"a": {"a": 1}}


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        '{"a": NaN}',
        "[Infinity]",
        "-Infinity",
        "",
        "{",
        "{'a': 1}",
        '{"a": 1,}',
        "[1] [2]",
    ],
)
def test_strict_loads_rejects_non_json(text: str) -> None:
    with pytest.raises(JsonError):
        strict_loads(text)


def test_strict_loads_requires_utf8_and_never_carries_the_text() -> None:
    for data in (b'"\xff"', b'"\xed\xa0\x80"', b"\xef\xbb\xbf{}"):
        with pytest.raises(JsonError) as caught:
            strict_loads(data)
        assert "\\x" not in str(caught.value)
    secret = '{"SECRET-VALUE": NaN}'
    with pytest.raises(JsonError) as caught:
        strict_loads(secret)
    assert "SECRET" not in str(caught.value)
    assert "SECRET" not in repr(caught.value)
    assert strict_loads("é".join(['"', '"']).encode()) == "é"


def test_code_unit_order_puts_astral_characters_before_the_upper_bmp() -> None:
    astral = "\U0001f600"  # U+1F600 is D83D DE00 in UTF-16
    private = "\ue000"
    last_bmp = "\uffff"
    values = [last_bmp, private, astral, "z", "Z", "_"]
    assert sorted(values, key=code_unit_key) == ["Z", "_", "z", astral, private, last_bmp]
    # Code-point order would put the astral character last.
    assert sorted(values)[-1] == astral


def test_sort_keys_deep_and_canonical_json_use_code_units_and_keep_arrays() -> None:
    value = {"\uffff": 1, "\U0001f600": {"b": [3, {"z": 1, "a": 2}], "a": None}, "B": 0, "a": 0}
    assert list(sort_keys_deep(value)) == ["B", "a", "\U0001f600", "\uffff"]
    assert canonical_json(value) == (
        '{"B":0,"a":0,"\U0001f600":{"a":null,"b":[3,{"a":2,"z":1}]},"\uffff":1}'
    )


def test_large_safe_integers_print_exactly() -> None:
    assert compact_json(9007199254740991) == "9007199254740991"
    assert compact_json(sys.maxsize) == format_number(float(sys.maxsize))


@pytest.mark.parametrize(
    "text",
    ['"\\ud800"', '{"a": ["x", "\\udc00"]}', '{"\\ud800": 1}', '["\\ude00\\ud83d"]'],
)
def test_strict_loads_refuses_lone_surrogates(text: str) -> None:
    with pytest.raises(JsonError):
        strict_loads(text)


def test_strict_loads_keeps_escaped_pairs_and_literal_backslashes() -> None:
    assert strict_loads('"\\ud83d\\ude00"') == "\U0001f600"
    assert strict_loads('"\\\\ud800"') == "\\ud800"


def test_a_manifest_with_a_lone_surrogate_is_a_metadata_gap_not_a_crash() -> None:
    from jev_select import contracts as c
    from jev_select.core.evidence.resolve import LookupFailure, resolve_metadata
    from jev_select.core.questions import build_questions
    from jev_select.core.tasks import parse_tasks

    tasks = parse_tasks(
        "unit:\n  description: Unit.\n  jobs: [{workflow: .github/workflows/ci.yml}]\n"
    )
    files = {
        ".github/workflows/ci.yml": b"jobs:\n  test:\n    steps:\n      - run: npm run unit\n",
        "package.json": b'{"scripts": {"unit": "jest \\ud800"}}',
    }
    result = resolve_metadata(
        tasks,
        read_file=files.get,
        fetch_action=lambda *_args: LookupFailure.MISSING,
        repository="octo/app",
        commit="a" * 40,
    )
    entry = result.evidence["unit"]
    assert entry.incomplete
    assert entry.job_metadata is not None
    assert entry.job_metadata["warnings"] == [c.WARN_PACKAGE_MANIFEST_INVALID + "package.json"]
    body = compact_json(build_questions({"unit": entry.evidence}))
    body.encode("utf-8")
