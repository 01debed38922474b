"""jev-select history: selection of changes, columns and messages."""

from __future__ import annotations

from typing import Final

from .failures import CommandFailures

# --------------------------------------------------------------------------------------------
# jev-select history (docs/shadow-mode.md, "Before any CI change: a dry run over recent history")
# --------------------------------------------------------------------------------------------

COMMAND_HISTORY: Final = "history"
HISTORY_DEFAULT_LAST: Final = 20
HISTORY_MAX_LAST: Final = 1000
# First-parent commits read to find the changes: enough for a thousand squash merges among
# direct pushes; the log is names and subjects only.
HISTORY_LOG_COMMITS: Final = 20_000
HISTORY_LOG_CAP: Final = 16 * 1_048_576
# Above this many Jev requests a run with a key needs --yes.
HISTORY_MAX_REQUESTS_WITHOUT_YES: Final = 50
HISTORY_SINCE_PATTERN: Final = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
HISTORY_SQUASH_SUBJECT_PATTERN: Final = r".*\(#[0-9]+\)\s*"
HISTORY_KIND_MERGE: Final = "merge"
HISTORY_KIND_SQUASH: Final = "squash"
HISTORY_KIND_FIRST_PARENT: Final = "first-parent"
HISTORY_FORMAT_TABLE: Final = "table"
HISTORY_FORMAT_JSON: Final = "json"
HISTORY_FORMATS: Final = (HISTORY_FORMAT_TABLE, HISTORY_FORMAT_JSON)
HISTORY_FAILURE_TEMPLATE: Final = "jev-select: history failed ({code})."
HISTORY_INVALID_REPOSITORY: Final = "invalid-repository"
HISTORY_LOG_UNREADABLE: Final = "log-unreadable"
HISTORY_NO_CHANGES: Final = "no-changes"
HISTORY_NEEDS_YES: Final = "confirmation-required"
HISTORY_OUT_UNWRITABLE: Final = "out-unwritable"
HISTORY_FAILURE_CODES: Final = (
    HISTORY_INVALID_REPOSITORY,
    HISTORY_LOG_UNREADABLE,
    HISTORY_NO_CHANGES,
    HISTORY_NEEDS_YES,
    HISTORY_OUT_UNWRITABLE,
)
HISTORY_FAILURES: Final = CommandFailures(
    command=COMMAND_HISTORY,
    template=HISTORY_FAILURE_TEMPLATE,
    codes=HISTORY_FAILURE_CODES,
    fallback=HISTORY_INVALID_REPOSITORY,
    local_only=True,
)
HISTORY_REQUESTS_TEMPLATE: Final = (
    "jev-select: history will send {requests} Jev requests for {changes} changes."
)
HISTORY_NEEDS_YES_TEMPLATE: Final = (
    "jev-select: more than {limit} Jev requests need --yes; nothing was sent."
)
# Before it, when a dry run without key or consent met actions or reusable workflows of other
# repositories: they were not looked up (nothing leaves the machine), which is why their tasks
# count as metadata-unavailable here.
HISTORY_NOT_LOOKED_UP_LINE: Final = (
    "metadata: without a key and --allow-external-context nothing leaves the machine, so other "
    "repositories' actions and reusable workflows were not looked up and the tasks that use them "
    "count as metadata-unavailable; a run with both looks them up."
)
# The last line of the table: the absolute path of the directory that holds the reports, with a
# word on keeping them when it is the temporary directory chosen without --out.
HISTORY_REPORTS_TEMPLATE: Final = "reports: {path}"
HISTORY_REPORTS_TEMPORARY_TEMPLATE: Final = (
    "reports: {path} (a new temporary directory, which the system may clear; "
    "--out DIR writes them where they stay)"
)
PROGRESS_STEP_TEMPLATE: Final = "jev-select: {phase} {index}/{total} {item}"
