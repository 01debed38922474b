"""The escaping rule of dynamic Markdown text (``jev_select.core.markdown``).

The summary-level tests live in test_render_markdown.py; these pin the exact forms and check the
rule in isolation, in a paragraph and in a GFM table cell, with markdown-it's ``gfm-like`` preset.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from jev_select.core.markdown import bare, code_span

MD = MarkdownIt("gfm-like")


@pytest.mark.parametrize(
    ("value", "in_table", "written"),
    [
        ("plain-id", True, "`plain-id`"),
        ("a`b", False, "``a`b``"),
        ("a``b", False, "```a``b```"),
        ("```", False, "```` ``` ````"),
        ("`x", False, "`` `x ``"),
        ("x`", False, "`` x` ``"),
        (" x", False, "`  x `"),
        ("x ", False, "` x  `"),
        (" ", False, "` `"),
        ("   ", False, "`   `"),
        ("", False, "` `"),
        ("a\r\nb\nc\rd", False, "`a b c d`"),
        ("a|b", False, "`a|b`"),
        ("a|b", True, "`a\\|b`"),
        ("a\\|b", True, "`a\\\\|b`"),
        ("<img>&amp;", True, "`<img>&amp;`"),
    ],
)
def test_code_span_forms(value: str, in_table: bool, written: str) -> None:
    assert code_span(value, in_table=in_table) == written


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("planned", "planned"),
        ("whole-diff", "whole-diff"),
        ("0.93", "0.93"),
        ("1e-05", "1e-05"),
        (668, "668"),
        ("www.evil.example", "`www.evil.example`"),
        ("https://evil.example", "`https://evil.example`"),
        ("a_b_", "`a_b_`"),
        ("-", "`-`"),
        ("a--b", "`a--b`"),
        ("<b>", "`<b>`"),
        ("a|b", "`a\\|b`"),
    ],
)
def test_bare_keeps_only_words_and_numbers(value: object, written: str) -> None:
    assert bare(value, in_table=True) == written


def _inline_children(text: str) -> list[Token]:
    children: list[Token] = []
    for token in MD.parse(text):
        children.extend(token.children or ())
    return children


def _table(cell: str) -> str:
    return f"| a | b |\n| --- | --- |\n| {cell} | z |\n"


TEXT = st.one_of(
    st.text(alphabet=st.sampled_from("`` `|\\\n\r<>&[]()!*_~:/w.#-ax"), min_size=1),
    st.text(
        alphabet=st.characters(codec="utf-8", exclude_characters="\x00"),
        min_size=1,
    ),
)


@given(TEXT)
def test_a_code_span_parses_back_to_its_value_in_a_paragraph(value: str) -> None:
    children = _inline_children(f"before {code_span(value, in_table=False)} after\n")
    assert [token.type for token in children] == ["text", "code_inline", "text"]
    assert children[1].content == value.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


@given(TEXT)
def test_a_code_span_parses_back_to_its_value_in_a_table_cell(value: str) -> None:
    tokens = MD.parse(_table(code_span(value, in_table=True)))
    cells = [token for token in tokens if token.type == "inline"]
    # Header a, b, then the two data cells: the value did not add or remove a cell.
    assert [cell.content for cell in cells[:2]] == ["a", "b"]
    assert len(cells) == 4
    assert cells[3].content == "z"
    children = cells[2].children or []
    assert [token.type for token in children] == ["code_inline"]
    assert children[0].content == (value.replace("\r\n", " ").replace("\r", " ").replace("\n", " "))
