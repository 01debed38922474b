"""The cause record of failed GitHub lookups and the lines that show it (core.lookup_causes)."""

from __future__ import annotations

import pytest

from jev_select import contracts as c
from jev_select.core.lookup_causes import (
    LookupCause,
    group_lookup_gaps,
    is_lookup_gap,
    lookup_cause_line,
    lookup_cause_summary_line,
    more_severe,
    rate_limit_reset,
    reset_time_text,
)

ROOT = "https://api.github.com"
K = c.LookupCauseKind
# 2030-01-01T00:00:00Z
RESET = 1_893_456_000


def cause(kind: c.LookupCauseKind, *, token: bool = False, reset: int | None = None) -> LookupCause:
    return LookupCause(kind, ROOT, token, reset)


@pytest.mark.parametrize(
    ("record", "line"),
    [
        (
            cause(K.UNREACHABLE),
            "jev-select: GitHub lookups failed: unreachable (no answer from "
            "https://api.github.com); affected tasks run; check GITHUB_API_URL and the network.",
        ),
        (
            cause(K.TIMED_OUT, token=True),
            "jev-select: GitHub lookups failed: timed out (https://api.github.com did not answer "
            "in time); affected tasks run; check GITHUB_API_URL and the network.",
        ),
        (
            cause(K.RATE_LIMITED, reset=RESET),
            "jev-select: GitHub lookups failed: rate-limited until 2030-01-01T00:00:00Z "
            "(https://api.github.com allows few requests an hour without a token); affected "
            "tasks run; set GITHUB_TOKEN (e.g. GITHUB_TOKEN=$(gh auth token)) and check "
            "GITHUB_API_URL.",
        ),
        (
            cause(K.RATE_LIMITED, token=True),
            "jev-select: GitHub lookups failed: rate-limited (https://api.github.com limits the "
            "requests of GITHUB_TOKEN); affected tasks run; wait for the reset, or check "
            "GITHUB_TOKEN and GITHUB_API_URL.",
        ),
        (
            cause(K.UNAUTHORIZED, token=True),
            "jev-select: GitHub lookups failed: unauthorized (https://api.github.com refused "
            "GITHUB_TOKEN); affected tasks run; set GITHUB_TOKEN to a valid token (e.g. "
            "GITHUB_TOKEN=$(gh auth token)) and check GITHUB_API_URL.",
        ),
        (
            cause(K.UNAUTHORIZED),
            "jev-select: GitHub lookups failed: unauthorized (https://api.github.com refused "
            "requests without a token); affected tasks run; set GITHUB_TOKEN (e.g. "
            "GITHUB_TOKEN=$(gh auth token)) and check GITHUB_API_URL.",
        ),
        (
            LookupCause(K.UNREACHABLE, None, True),
            "jev-select: GitHub lookups failed: unreachable (GITHUB_API_URL is not a usable "
            "https:// URL); affected tasks run; check GITHUB_API_URL.",
        ),
    ],
)
def test_the_cause_line_names_the_cause_and_the_fix(record: LookupCause, line: str) -> None:
    assert lookup_cause_line(record) == line
    assert "\n" not in line


def test_every_cause_and_token_state_has_a_line_and_a_summary_line() -> None:
    for kind in c.LookupCauseKind:
        for token in (False, True):
            for root in (ROOT, None):
                record = LookupCause(kind, root, token, RESET)
                assert lookup_cause_line(record).startswith("jev-select: GitHub lookups failed: ")
                summary = lookup_cause_summary_line(record)
                assert summary is not None
                assert "\n" not in summary
                assert f"`{kind}`" in summary


def test_the_summary_line_in_markdown() -> None:
    assert lookup_cause_summary_line(None) is None
    assert lookup_cause_summary_line(cause(K.RATE_LIMITED, reset=RESET)) == (
        "GitHub lookups of actions and reusable workflows failed: `rate-limited` until "
        "`2030-01-01T00:00:00Z` (`https://api.github.com` allows few requests an hour without a "
        "token), so the tasks that use them run: pass a token in `github-token` (its default, "
        "the job's token, will do)."
    )
    assert lookup_cause_summary_line(cause(K.UNAUTHORIZED, token=True)) == (
        "GitHub lookups of actions and reusable workflows failed: `unauthorized` "
        "(`https://api.github.com` refused the `github-token` token), so the tasks that use them "
        "run: check the `github-token` input and `GITHUB_API_URL`."
    )
    # A root with Markdown in it stays literal text.
    odd = LookupCause(K.TIMED_OUT, "https://ghes.example/a`b*c", False)
    assert "``https://ghes.example/a`b*c``" in (lookup_cause_summary_line(odd) or "")


def test_the_record_keeps_the_most_severe_cause() -> None:
    order = [K.TIMED_OUT, K.UNREACHABLE, K.RATE_LIMITED, K.UNAUTHORIZED]
    assert list(c.LOOKUP_CAUSE_SEVERITY) == order
    for low_index, low in enumerate(order):
        for high in order[low_index:]:
            assert more_severe(cause(low), cause(high)).kind == high
            assert more_severe(cause(high), cause(low)).kind == high
    assert more_severe(None, cause(K.TIMED_OUT)) == cause(K.TIMED_OUT)
    # Of two rate limits the later reset is the one to wait for.
    first = more_severe(None, cause(K.RATE_LIMITED, reset=RESET))
    later = more_severe(first, cause(K.RATE_LIMITED, reset=RESET + 60))
    assert later.reset_at == RESET + 60
    assert more_severe(later, cause(K.RATE_LIMITED)).reset_at == RESET + 60
    assert more_severe(later, cause(K.RATE_LIMITED, reset=RESET)).reset_at == RESET + 60


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("1893456000", RESET),
        (" 1893456000 ", RESET),
        (None, None),
        ("", None),
        ("-1", None),
        ("1.5", None),
        ("²", None),
        ("9" * 13, None),
        ("253402300800", None),
    ],
)
def test_the_reset_header(header: str | None, seconds: int | None) -> None:
    assert rate_limit_reset(header) == seconds


def test_the_reset_time_is_utc_iso_text() -> None:
    assert reset_time_text(RESET) == "2030-01-01T00:00:00Z"
    assert reset_time_text(0) == "1970-01-01T00:00:00Z"


def test_lookup_gaps_are_grouped_only_with_a_cause() -> None:
    missing = c.GAP_ACTION_METADATA_MISSING.prefix
    unresolved = c.GAP_REUSABLE_WORKFLOW_UNRESOLVED.prefix
    gaps = {
        "unit": (
            missing + "actions/checkout@v4",
            c.GAP_JOB_MISSING.prefix + ".github/workflows/ci.yml#x",
            missing + "actions/cache@" + "a" * 40,
            unresolved + "octo/shared/.github/workflows/b.yml@main",
            missing + "./.github/actions/local",
            unresolved + "./.github/workflows/local.yml",
        ),
        "docs": (missing + "./.github/actions/local",),
    }
    assert group_lookup_gaps(gaps, None) == gaps
    assert group_lookup_gaps(gaps, cause(K.UNREACHABLE)) == {
        "unit": (
            "3 action(s) or workflow(s) could not be looked up",
            c.GAP_JOB_MISSING.prefix + ".github/workflows/ci.yml#x",
            missing + "./.github/actions/local",
            unresolved + "./.github/workflows/local.yml",
        ),
        "docs": (missing + "./.github/actions/local",),
    }
    assert not is_lookup_gap(missing + "docker://alpine@sha256")
    assert not is_lookup_gap(unresolved + "$/.github/workflows/x.yml")
    assert not is_lookup_gap(c.GAP_ACTION_METADATA_UNAVAILABLE.prefix + "a/b@v1")
