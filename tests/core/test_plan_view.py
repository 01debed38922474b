"""The local preview of a run without a key: what is kept, who would be asked, in how much."""

from __future__ import annotations

from jev_select import contracts as c
from jev_select.core.plan_view import render_preview
from jev_select.core.tasks import parse_tasks

TABLE = parse_tasks(
    "lint:\n  description: Lints.\n  always: true\n"
    "api:\n  description: Checks the API.\n"
    "docs:\n  description: Builds the docs.\n  force_paths: [docs/**]\n"
)


def test_the_tasks_jev_would_be_asked_about_and_the_requests() -> None:
    text = render_preview(
        TABLE, changed_paths=("src/a.py",), collection_error=None, gaps={}, requests=2
    )
    assert text.splitlines() == [
        c.PREVIEW_HEADING,
        "  1 changed file(s):",
        "    src/a.py",
        "  kept: lint (always)",
        "  with a key, Jev would be asked about 2 of 3 task(s): api, docs (2 request(s))",
        c.PREVIEW_HINT,
    ]


def test_a_change_that_cannot_be_grouped_runs_everything() -> None:
    text = render_preview(
        TABLE,
        changed_paths=("docs/a.md",),
        collection_error=None,
        gaps={},
        requests=0,
        grouping_error=c.REASON_DIFF_TOO_LARGE,
    )
    assert (
        "  with a key, the change could not be put in requests (diff-too-large): "
        "every task would run"
    ) in text.splitlines()
    assert "Jev would be asked" not in text


def test_nothing_to_ask_names_no_request_count() -> None:
    table = parse_tasks("lint:\n  description: Lints.\n  always: true\n")
    text = render_preview(table, changed_paths=(), collection_error=None, gaps={}, requests=0)
    assert "  with a key, Jev would be asked about 0 of 1 task(s)" in text.splitlines()
