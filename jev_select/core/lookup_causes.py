"""Why GitHub lookups failed, as one record, and the one line each view prints for it. Pure.

docs/reference.md, "Lookup failures and the local cache". A lookup that finds no file is a
metadata gap of its task either way; what this module adds is the reason when it was not "this
file does not exist": GitHub could not be reached, did not answer in time, rate-limited the run
or refused its credentials. The lookup layer (``edges.github``) keeps one ``LookupCause`` per
run, the most severe it saw (``more_severe``); local mode prints ``lookup_cause_line`` once on
stderr, and the GitHub-mode step summary can show ``lookup_cause_summary_line``.
``group_lookup_gaps`` shortens what the terminal repeats once the cause was printed. Nothing
here ever sees the token: the record only says whether one was sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import attrs

from .. import contracts as c
from .markdown import code_span

__all__ = [
    "LookupCause",
    "group_lookup_gaps",
    "is_lookup_gap",
    "lookup_cause_line",
    "lookup_cause_summary_line",
    "more_severe",
    "rate_limit_reset",
    "reset_time_text",
]

# Local and self-repository references are read from the repository, never looked up.
_NOT_LOOKED_UP = ("./", "$/", "docker://")
# Seconds since the epoch a reset time may name: up to the year 9999, where ISO text ends.
_LAST_RESET = 253_402_300_799


@attrs.frozen
class LookupCause:
    """The most severe cause seen among one run's failed lookups.

    ``api_root`` is the REST root the lookups went to (None: no usable ``GITHUB_API_URL``, so
    nothing was sent); ``token`` whether the requests carried one; ``reset_at`` the
    ``X-RateLimit-Reset`` of a rate limit, in seconds since the epoch, when GitHub sent one.
    """

    kind: c.LookupCauseKind
    api_root: str | None
    token: bool
    reset_at: int | None = None


def _severity(kind: c.LookupCauseKind) -> int:
    return c.LOOKUP_CAUSE_SEVERITY.index(kind)


def more_severe(current: LookupCause | None, seen: LookupCause) -> LookupCause:
    """The record after ``seen``: the more severe cause; of two rate limits, the later reset."""
    if current is None or _severity(seen.kind) > _severity(current.kind):
        return seen
    if (
        seen.kind == current.kind == c.LookupCauseKind.RATE_LIMITED
        and seen.reset_at is not None
        and (current.reset_at is None or seen.reset_at > current.reset_at)
    ):
        return attrs.evolve(current, reset_at=seen.reset_at)
    return current


def rate_limit_reset(value: str | None) -> int | None:
    """The ``X-RateLimit-Reset`` header (seconds since the epoch) as a number, or None."""
    if value is None:
        return None
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        return None
    seconds = int(text)
    return seconds if seconds <= _LAST_RESET else None


def reset_time_text(seconds: int) -> str:
    """A reset time as UTC ISO 8601 text, ``2026-12-02T13:00:00Z``."""
    moment = datetime.fromtimestamp(min(max(seconds, 0), _LAST_RESET), tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def lookup_cause_line(cause: LookupCause) -> str:
    """The one stderr line of a local run: the cause, what it means and the fix."""
    key = (cause.kind, cause.token)
    name = str(cause.kind)
    if cause.reset_at is not None and cause.kind == c.LookupCauseKind.RATE_LIMITED:
        name = c.LOOKUP_CAUSE_UNTIL_TEMPLATE.format(
            cause=name, reset=reset_time_text(cause.reset_at)
        )
    if cause.api_root is None:
        detail, fix = c.LOOKUP_DETAIL_NO_ROOT, c.LOOKUP_FIX_NO_ROOT
    else:
        detail, fix = c.LOOKUP_DETAILS[key].format(root=cause.api_root), c.LOOKUP_FIXES[key]
    return c.LOOKUP_CAUSE_LINE_TEMPLATE.format(cause=name, detail=detail, fix=fix)


def lookup_cause_summary_line(cause: LookupCause | None) -> str | None:
    """The same cause as one Markdown line of the GitHub-mode step summary, None without one.

    The root, the cause and the names of the input and the variable are code spans; the fix
    names the ``github-token`` input, since that is where a workflow sets the token.
    """
    if cause is None:
        return None
    key = (cause.kind, cause.token)
    names = {
        "input": code_span(c.INPUT_GITHUB_TOKEN, in_table=False),
        "url": code_span(c.GITHUB_API_URL_ENV, in_table=False),
    }
    until = ""
    if cause.reset_at is not None and cause.kind == c.LookupCauseKind.RATE_LIMITED:
        until = c.SUMMARY_LOOKUP_UNTIL_TEMPLATE.format(
            reset=code_span(reset_time_text(cause.reset_at), in_table=False)
        )
    if cause.api_root is None:
        detail = c.SUMMARY_LOOKUP_DETAIL_NO_ROOT.format(**names)
        fix = c.SUMMARY_LOOKUP_FIX_NO_ROOT.format(**names)
    else:
        root = code_span(cause.api_root, in_table=False)
        detail = c.SUMMARY_LOOKUP_DETAILS[key].format(root=root, **names)
        fix = c.SUMMARY_LOOKUP_FIXES[key].format(**names)
    return c.SUMMARY_LOOKUP_CAUSE_TEMPLATE.format(
        cause=code_span(str(cause.kind), in_table=False), until=until, detail=detail, fix=fix
    )


def is_lookup_gap(gap: str) -> bool:
    """Whether ``gap`` is an action or a reusable workflow of another repository that no lookup
    answered (``action-metadata-missing:`` or ``reusable-workflow-unresolved:`` of
    ``owner/repo...@ref``); local references are read from the repository and never count."""
    for prefix in (
        c.GAP_ACTION_METADATA_MISSING.prefix,
        c.GAP_REUSABLE_WORKFLOW_UNRESOLVED.prefix,
    ):
        if gap.startswith(prefix):
            uses = gap[len(prefix) :]
            return "@" in uses and not uses.startswith(_NOT_LOOKED_UP)
    return False


def group_lookup_gaps(
    gaps: Mapping[str, Sequence[str]], cause: LookupCause | None
) -> dict[str, tuple[str, ...]]:
    """Task ID to its gaps for the terminal, with every lookup gap of a task replaced by one
    ``N action(s) or workflow(s) could not be looked up`` at the place of the first, once the
    cause line has said why. Without a cause every gap stays as it is (each may be a file that
    really does not exist). The report's gap strings are never changed by this."""
    grouped: dict[str, tuple[str, ...]] = {}
    for task_id, warnings in gaps.items():
        if cause is None:
            grouped[task_id] = tuple(warnings)
            continue
        count = sum(1 for gap in warnings if is_lookup_gap(gap))
        kept: list[str] = []
        for gap in warnings:
            if not is_lookup_gap(gap):
                kept.append(gap)
            elif count:
                kept.append(c.LOOKUP_GAPS_GROUPED_TEMPLATE.format(count=count))
                count = 0
        grouped[task_id] = tuple(kept)
    return grouped
