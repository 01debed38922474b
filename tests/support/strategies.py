"""Hypothesis strategies shared by property tests: identifiers, texts, JSON values, mutations."""

from __future__ import annotations

from typing import TypeVar

from hypothesis import strategies as st

from jev_select import contracts as c

T = TypeVar("T")

TASK_IDS = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_-]{0,12}\Z")
SHAS = st.from_regex(r"\A[0-9a-f]{40}\Z")
SOME_TEXT = st.text(max_size=40)
WHITESPACE_CHARS = st.sampled_from(list(c.WHITESPACE))


def one_in(number: int) -> st.SearchStrategy[bool]:
    """True about once in ``number`` draws. Hypothesis favours the simplest choice (the first),
    so the rare outcome is the last one."""
    return st.sampled_from(range(number)).map(lambda drawn: drawn == number - 1)


def mostly(good: st.SearchStrategy[T], other: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """``good`` about four times in five, else ``other`` (``|`` weighs flattened branches)."""
    return one_in(5).flatmap(lambda rare: other if rare else good)


def mutated(base: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """``base`` texts with a few characters or lines inserted, deleted or replaced."""

    @st.composite
    def build(draw: st.DrawFn) -> str:
        text = draw(base)
        for _ in range(draw(st.integers(1, 6))):
            position = draw(st.integers(0, len(text)))
            operation = draw(st.sampled_from(["insert", "delete", "replace", "line", "dup"]))
            if operation == "insert":
                text = text[:position] + draw(st.text(min_size=1, max_size=4)) + text[position:]
            elif operation == "delete":
                text = text[:position] + text[position + draw(st.integers(1, 8)) :]
            elif operation == "replace":
                glyph = draw(st.characters())
                text = text[:position] + glyph + text[position + 1 :]
            elif operation == "line":
                lines = text.split("\n")
                index = draw(st.integers(0, len(lines) - 1))
                del lines[index]
                text = "\n".join(lines)
            else:
                lines = text.split("\n")
                index = draw(st.integers(0, len(lines) - 1))
                lines.insert(index, lines[index])
                text = "\n".join(lines)
        return text

    return build()


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | SOME_TEXT
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(SOME_TEXT, inner, max_size=4),
    max_leaves=20,
)
