"""Hostile values in the step summary stay text (docs/reference.md, "Step summary and plan block").

Gap texts, ``force_paths`` patterns, notes, refs and model identifiers come from a task table, a
base-branch workflow, another repository or the provider. Each test renders the real summary with
such a value in one place, parses it as GitHub Flavoured Markdown (markdown-it's ``gfm-like``
preset: CommonMark, tables, strikethrough, raw HTML and autolinks), and compares it with the same
summary carrying a harmless marker: the token structure must be the same, so nothing broke out,
and the code element that held the marker must hold exactly the value.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from test_report import TABLE, planned_report

from jev_select.core import plan_view
from jev_select.core.models import Task, TaskTable
from jev_select.core.render import render_summary

MD = MarkdownIt("gfm-like")
MARKER = "marker-value"

# A rendering of one summary: the report and the keyword arguments of render_summary.
Rendering = tuple[dict[str, Any], dict[str, Any]]


def _report() -> dict[str, Any]:
    report = copy.deepcopy(planned_report())
    # The fixture's gaps would add code elements of their own; one gap, on one task, is enough.
    for task_id in report["job_metadata"]:
        report["job_metadata"][task_id] = dict(report["job_metadata"][task_id], warnings=[])
    return report


def gap(value: str) -> Rendering:
    """A gap quoting a workflow value: a code span in the task table's Details cell."""
    report = _report()
    report["job_metadata"]["docs"]["warnings"] = [value]
    return report, {}


def pattern(value: str) -> Rendering:
    """The matched ``force_paths`` pattern, in the Details cell."""
    tasks = tuple(
        Task(id=task.id, description=task.description, force_paths=(value,))
        if task.id == "docs"
        else task
        for task in TABLE.tasks
    )
    return _report(), {"table": TaskTable(tasks), "changed_paths": ("docs/a.md",)}


def note(value: str) -> Rendering:
    """A note on a gap: free text on a list line of the details, outside any table."""
    return _report(), {"notes": {"docs": (value,)}}


def returned_model(value: str) -> Rendering:
    """The provider's model identifier on the Model line."""
    report = _report()
    report["model"]["returned"] = value
    return report, {}


def group_model(value: str) -> Rendering:
    """The provider's model identifier in the group table."""
    report = _report()
    report["observation"]["chunks"][0]["model"] = value
    return report, {}


def ref(value: str) -> Rendering:
    """The tested ref on the Tested commit line."""
    report = _report()
    report["tested_ref"] = value
    return report, {}


PLACES: Sequence[Callable[[str], Rendering]] = (
    gap,
    pattern,
    note,
    returned_model,
    group_model,
    ref,
)

HOSTILE = (
    "x` [click](https://evil.example) ![img](https://evil.example/p.png) `y",
    "`",
    "a`b",
    "a``b",
    "``",
    "a```b",
    "```",
    "`leading",
    "trailing`",
    "`both`",
    " `spaced` ",
    "[click](https://evil.example)",
    "[ref]: https://evil.example",
    "![img](https://evil.example/p.png)",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<https://evil.example>",
    "a|b",
    "a\\|b",
    "| --- | --- |",
    "!important",
    "*em* **strong**",
    "_em_ __strong__",
    "~~struck~~",
    "&amp; &lt;b&gt; &#60;",
    "line\nbreak\r\nand\rmore",
    "https://evil.example",
    "www.evil.example",
    "mail@evil.example",
    "\\`escaped\\`",
    " ",
    "  padded  ",
)


def tokens(text: str) -> Iterator[Token]:
    for token in MD.parse(text):
        yield token
        yield from token.children or ()


def summary(rendering: Rendering) -> str:
    report, kwargs = rendering
    return render_summary(report, engine_version="0.1.0", **kwargs).text


def shown_code(place: Callable[[str], Rendering], value: str) -> str:
    """The content of the code element where ``place`` put ``value``, after checking that the
    summary parses to the same structure as with a harmless marker there."""
    benign = list(tokens(summary(place(MARKER))))
    hostile = list(tokens(summary(place(value))))
    assert [(t.type, t.tag) for t in hostile] == [(t.type, t.tag) for t in benign]
    (index,) = [i for i, t in enumerate(benign) if t.type == "code_inline" and t.content == MARKER]
    return hostile[index].content


def as_shown(value: str) -> str:
    return value.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


@pytest.fixture
def any_pattern_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Matching is tested elsewhere; here any pattern must reach the summary, whatever its glob.
    monkeypatch.setattr(plan_view, "match_force_paths", lambda patterns, paths: True)


@pytest.mark.usefixtures("any_pattern_matches")
@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_value_stays_one_code_element_wherever_it_is_shown(value: str) -> None:
    for place in PLACES:
        assert shown_code(place, value) == as_shown(value), place.__name__
        html = MD.render(summary(place(value)))
        for opening in ("<a", "<img", "<script", "<em>", "<strong>", "<s>", "<del>"):
            assert opening not in html, place.__name__


@pytest.mark.usefixtures("any_pattern_matches")
@pytest.mark.parametrize("place", PLACES, ids=lambda place: place.__name__)
def test_entities_are_not_used_inside_code_spans(place: Callable[[str], Rendering]) -> None:
    # An entity inside a code span is shown as typed; the old summary showed `&lt;` for `<`.
    text = summary(place("a<b>&c"))
    assert "&lt;b&gt;&amp;c" not in text
    assert "<code>a&lt;b&gt;&amp;c</code>" in MD.render(text)


def test_a_table_cell_escapes_its_pipes_and_a_list_line_does_not() -> None:
    in_cell = summary(gap("a|b"))
    assert "; gaps: `a\\|b` |" in in_cell
    on_line = summary(note("a|b"))
    assert "- Note on `docs`: `a|b`\n" in on_line


def test_a_value_with_backticks_gets_a_longer_fence_and_padding() -> None:
    text = summary(gap("x` [click](https://evil.example) `y"))
    assert "; gaps: ``x` [click](https://evil.example) `y`` |" in text
    text = summary(gap("a```b"))
    assert "; gaps: ````a```b```` |" in text
    text = summary(gap("`edge"))
    assert "; gaps: `` `edge `` |" in text


# Characters that build or end Markdown constructs, drawn often so the property meets them.
MARKDOWN_HEAVY = st.text(alphabet=st.sampled_from("`` `|\\\n\r<>&[]()!*_~:/w.#-ax"), min_size=1)
ANY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1)


@given(st.one_of(MARKDOWN_HEAVY, ANY_TEXT))
def test_any_gap_reads_back_as_one_code_element(value: str) -> None:
    # NUL is left out: CommonMark replaces it by U+FFFD, which changes the text but opens nothing.
    assert shown_code(gap, value) == as_shown(value)


@given(st.one_of(MARKDOWN_HEAVY, ANY_TEXT))
def test_any_note_reads_back_as_one_code_element(value: str) -> None:
    assert shown_code(note, value) == as_shown(value)
