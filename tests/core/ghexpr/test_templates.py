"""Finding the ``${{ }}`` templates of a workflow string (core/ghexpr.templates): bodies as
written, offsets, closing braces inside string literals, and an unterminated template."""

from __future__ import annotations

import pytest

from jev_select.core.ghexpr import (
    Call,
    ExpressionSyntaxError,
    Literal,
    Template,
    parse_expression,
    templates,
)


def bodies(text: str) -> list[str]:
    return [template.body for template in templates(text)]


@pytest.mark.parametrize(
    "text",
    ["", "plain text", "$ {{ x }}", "${ { x }}", "{{ x }}", "$$", "}} only closing }}", "${x}"],
)
def test_text_without_templates_gives_an_empty_tuple(text: str) -> None:
    assert templates(text) == ()


def test_one_template_with_its_offsets() -> None:
    text = "run: ${{ github.sha }}!"
    assert templates(text) == (Template(" github.sha ", 5, 8),)


def test_several_templates_in_order_with_offsets() -> None:
    text = "${{a}}-${{ b.c }}\n${{\n  d || e\n}}tail"
    found = templates(text)
    assert [template.body for template in found] == ["a", " b.c ", "\n  d || e\n"]
    assert [template.start for template in found] == [0, 7, 18]
    for template in found:
        assert template.body_start == template.start + 3
        assert text.startswith("${{", template.start)
        end = template.body_start + len(template.body)
        assert text[template.body_start : end] == template.body
        assert text.startswith("}}", end)


def test_adjacent_templates_and_an_empty_body() -> None:
    assert bodies("${{}}${{ x }}") == ["", " x "]


def test_closing_braces_inside_a_string_literal_do_not_close() -> None:
    text = "${{ format('}}') }}"
    assert templates(text) == (Template(" format('}}') ", 0, 3),)
    node = parse_expression(templates(text)[0].body)
    assert node == Call("format", (Literal("}}", 8),), 1)


def test_escaped_quotes_keep_the_string_open() -> None:
    assert bodies("${{ 'it''s }}' }} after") == [" 'it''s }}' "]
    assert bodies("${{ '''' }}${{ 'x' }}") == [" '''' ", " 'x' "]


def test_an_opening_inside_a_string_literal_is_part_of_the_body() -> None:
    assert bodies("${{ '${{' }}") == [" '${{' "]


def test_quotes_outside_templates_are_plain_text() -> None:
    assert bodies("it's ${{ a }} and 'b' ${{ c }}") == [" a ", " c "]


def test_the_first_closing_braces_close_the_template() -> None:
    # ``}}}`` closes at its first two braces; the third is text after the template.
    assert bodies("${{ a }}}") == [" a "]
    assert bodies("${{ a }} }}") == [" a "]


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("${{ a", 0),
        ("prefix ${{ a }", 7),
        ("${{ a }} then ${{ b", 14),
        ("${{ 'a }}", 0),
        ("${{ format('}}') }", 0),
        ("${{", 0),
    ],
)
def test_an_unterminated_template_is_an_error_at_its_opening(text: str, offset: int) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        templates(text)
    assert caught.value.offset == offset
    assert caught.value.message == "unterminated template"


def test_body_offsets_translate_parse_errors_into_the_whole_string() -> None:
    text = "echo ${{ ok }} ${{ a = b }}"
    broken = templates(text)[1]
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_expression(broken.body)
    assert text[broken.body_start + caught.value.offset] == "="


def test_node_offsets_translate_into_the_whole_string() -> None:
    text = "if: ${{ needs.plan.outputs.has-tasks == 'true' }}"
    template = templates(text)[0]
    node = parse_expression(template.body)
    assert text[template.body_start + node.start :].startswith("needs.plan")
