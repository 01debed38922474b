"""JSON as jev-select writes and reads it (docs/reference.md, "Compact JSON and numbers").

Every JSON text the product writes uses JavaScript number formatting, so that hashes and request
bodies are byte-identical across implementations of the contract. Every JSON text the product
reads from outside is parsed strictly: no duplicate keys, no NaN or Infinity.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from ..errors import JevSelectError

__all__ = [
    "JsonError",
    "canonical_json",
    "code_unit_key",
    "compact_json",
    "format_number",
    "pretty_json",
    "sort_keys_deep",
    "strict_loads",
]

# escapes exactly as docs/reference.md, "Compact JSON and numbers" requires
_encode_string = json.encoder.py_encode_basestring


class JsonError(JevSelectError, ValueError):
    """A JSON text is not strict JSON. Carries no part of the text."""


def code_unit_key(text: str) -> bytes:
    """Sort key giving UTF-16 code-unit order."""
    return text.encode("utf-16-be", "surrogatepass")


def _as_double(value: float | int) -> float:
    """The nearest double, as JavaScript reads a number; integers beyond its range are infinite."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def format_number(value: float | int) -> str:
    """Format a number exactly as JavaScript's ``JSON.stringify`` does."""
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers")
    number = _as_double(value)
    if not math.isfinite(number):
        raise ValueError("non-finite numbers have no JSON form")
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    mantissa, _, exponent_text = repr(abs(number)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    if frac_part == "0":
        frac_part = ""
    digits = (int_part + frac_part).lstrip("0")
    # value = 0.<digits> x 10**n
    n = len(int_part) + int(exponent_text or "0")
    if int_part == "0":
        leading_zeros = len(frac_part) - len(frac_part.lstrip("0"))
        n = -leading_zeros + int(exponent_text or "0")
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        exponent = n - 1
        exponent_sign = "+" if exponent >= 0 else "-"
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = f"{head}e{exponent_sign}{abs(exponent)}"
    return sign + text


def _encode(value: object, indent: int | None, level: int, parts: list[str]) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, str):
        parts.append(_encode_string(value))
    elif isinstance(value, int | float):
        # JSON.stringify writes a non-finite number as null; an integer too large for a double
        # (copied from YAML, for example) is one of them.
        if math.isfinite(_as_double(value)):
            parts.append(format_number(value))
        else:
            parts.append("null")
    elif isinstance(value, Mapping):
        _encode_items([(key, item) for key, item in value.items()], "{", "}", indent, level, parts)
    elif isinstance(value, Sequence):
        _encode_items([(None, item) for item in value], "[", "]", indent, level, parts)
    else:
        raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _encode_items(
    items: list[tuple[str | None, object]],
    opener: str,
    closer: str,
    indent: int | None,
    level: int,
    parts: list[str],
) -> None:
    if not items:
        parts.append(opener + closer)
        return
    parts.append(opener)
    for position, (key, item) in enumerate(items):
        if position:
            parts.append(",")
        if indent is not None:
            parts.append("\n" + " " * (indent * (level + 1)))
        if key is not None:
            if not isinstance(key, str):
                raise TypeError("JSON object keys must be strings")
            parts.append(_encode_string(key))
            parts.append(": " if indent is not None else ":")
        _encode(item, indent, level + 1, parts)
    if indent is not None:
        parts.append("\n" + " " * (indent * level))
    parts.append(closer)


def compact_json(value: object) -> str:
    """Compact JSON, key order kept, JavaScript number formatting (docs/reference.md,
    "Compact JSON and numbers")."""
    parts: list[str] = []
    _encode(value, None, 0, parts)
    return "".join(parts)


def pretty_json(value: object) -> str:
    """The same JSON with 2-space indentation, as the report and analyzer write it."""
    parts: list[str] = []
    _encode(value, 2, 0, parts)
    return "".join(parts)


def _sorted_deep(value: object) -> object:
    if isinstance(value, Mapping):
        return {key: _sorted_deep(value[key]) for key in sorted(value, key=code_unit_key)}
    if isinstance(value, list | tuple):
        return [_sorted_deep(item) for item in value]
    return value


def sort_keys_deep(value: Mapping[str, object]) -> dict[str, object]:
    """Copy ``value`` with every object's keys sorted in code-unit order; arrays keep order."""
    return {key: _sorted_deep(value[key]) for key in sorted(value, key=code_unit_key)}


def canonical_json(value: object) -> str:
    """Compact JSON of ``value`` with recursively sorted keys (the hashed form, docs/reference.md,
    "Hashes")."""
    return compact_json(_sorted_deep(value))


def _reject_constant(_name: str) -> NoReturn:
    raise JsonError("non-finite number")


def _unique_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, item in pairs:
        if key in result:
            raise JsonError("duplicate key")
        result[key] = item
    return result


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(value: object) -> bool:
    # Iterative: the parser already bounded the depth, and recursion here must not fail first.
    pending: list[object] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def strict_loads(data: bytes | str) -> Any:
    """Parse strict JSON: UTF-8, no duplicate keys at any depth, no NaN or Infinity.

    A ``\\ud800`` escape that leaves a lone surrogate is refused too: such a string is not UTF-8
    text and would fail wherever it is written again. Raises ``JsonError`` (never carrying the
    text) on any failure.
    """
    try:
        text = data.decode("utf-8", "strict") if isinstance(data, bytes) else data
        value = json.loads(text, object_pairs_hook=_unique_object, parse_constant=_reject_constant)
    except JsonError:
        raise
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise JsonError("not strict JSON") from None
    if _has_lone_surrogate(value):
        raise JsonError("not strict JSON")
    return value
