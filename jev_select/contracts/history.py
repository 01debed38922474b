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
# With --repository (the GitHub half below), as rollout's.
HISTORY_INVALID_SETTINGS: Final = "invalid-settings"
HISTORY_INVALID_JOB_MAP: Final = "invalid-job-map"
HISTORY_WORKFLOW_NOT_FOUND: Final = "workflow-not-found"
HISTORY_GITHUB_UNAVAILABLE: Final = "github-unavailable"
HISTORY_INVALID_ANSWER: Final = "invalid-answer"
HISTORY_RATE_LIMITED: Final = "rate-limited"
HISTORY_FAILURE_CODES: Final = (
    HISTORY_INVALID_REPOSITORY,
    HISTORY_LOG_UNREADABLE,
    HISTORY_NO_CHANGES,
    HISTORY_NEEDS_YES,
    HISTORY_OUT_UNWRITABLE,
    HISTORY_INVALID_SETTINGS,
    HISTORY_INVALID_JOB_MAP,
    HISTORY_WORKFLOW_NOT_FOUND,
    HISTORY_GITHUB_UNAVAILABLE,
    HISTORY_INVALID_ANSWER,
    HISTORY_RATE_LIMITED,
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

# --------------------------------------------------------------------------------------------
# jev-select history --repository OWNER/NAME --ci-workflow FILE (docs/reference.md, "History
# against GitHub"): the CI results of each change, from the last CI run of its pull request.
# --------------------------------------------------------------------------------------------

# The subject GitHub gives a merge commit of a pull request, and the number a squash merge's
# subject ends in; a change whose subject names no number is looked up by its commit instead.
HISTORY_MERGE_SUBJECT_PATTERN: Final = r"Merge pull request #(?P<number>[1-9][0-9]{0,9}) from \S.*"
HISTORY_SQUASH_NUMBER_PATTERN: Final = r".*\(#(?P<number>[1-9][0-9]{0,9})\)\s*"
# The pull request event whose runs tested a pull request's head.
HISTORY_CI_EVENT: Final = "pull_request"
# GitHub's conclusion of a run stopped before its end, and the fields of its pull records read
# here (its vocabulary, not product contracts).
GITHUB_RUN_CANCELLED: Final = "cancelled"
GITHUB_RUN_FIELD_CONCLUSION: Final = "conclusion"
GITHUB_PULL_FIELD_NUMBER: Final = "number"
GITHUB_PULL_FIELD_HEAD: Final = "head"
GITHUB_PULL_FIELD_SHA: Final = "sha"
GITHUB_PULL_FIELD_MERGE_COMMIT_SHA: Final = "merge_commit_sha"
GITHUB_PULL_FIELD_MERGED_AT: Final = "merged_at"
# Outcomes per change, in the order the summary line counts them.
HISTORY_CI_MEASURED: Final = "measured"
HISTORY_CI_EXISTING: Final = "existing"
HISTORY_CI_PULL_REQUEST_NOT_FOUND: Final = "pull-request-not-found"
HISTORY_CI_NO_CI_RUN: Final = "no-ci-run"
HISTORY_CI_IN_PROGRESS: Final = "in-progress"
HISTORY_CI_RE_RUN: Final = "re-run"
HISTORY_CI_CANCELLED: Final = "cancelled"
HISTORY_CI_OUTCOMES: Final = (
    HISTORY_CI_MEASURED,
    HISTORY_CI_EXISTING,
    HISTORY_CI_PULL_REQUEST_NOT_FOUND,
    HISTORY_CI_NO_CI_RUN,
    HISTORY_CI_IN_PROGRESS,
    HISTORY_CI_RE_RUN,
    HISTORY_CI_CANCELLED,
)
HISTORY_CI_SUMMARY_TEMPLATE: Final = (
    "jev-select: history: {measured} measured, {existing} already measured, "
    "{pull_request_not_found} without a pull request found, {no_ci_run} without a CI run, "
    "{in_progress} in progress, {re_run} re-run, {cancelled} cancelled."
)
# Pull requests a commit is listed in: GitHub lists a handful at most, one page is plenty.
HISTORY_COMMIT_PULLS_LIMIT: Final = 100
# Runs of one head SHA read to find the newest: re-pushes of the same head are rare.
HISTORY_CI_RUNS_LIMIT: Final = 100

# --------------------------------------------------------------------------------------------
# The jobs of a CI workflow file (core/ci_jobs.py): GitHub's workflow syntax, read to tell which
# workflow job a listed job name belongs to.
# --------------------------------------------------------------------------------------------

WORKFLOW_KEY_JOBS: Final = "jobs"
WORKFLOW_KEY_NAME: Final = "name"
WORKFLOW_KEY_NEEDS: Final = "needs"
WORKFLOW_KEY_USES: Final = "uses"
WORKFLOW_KEY_STRATEGY: Final = "strategy"
WORKFLOW_KEY_MATRIX: Final = "matrix"
WORKFLOW_MATRIX_INCLUDE: Final = "include"
WORKFLOW_MATRIX_EXCLUDE: Final = "exclude"
# A called workflow's jobs are listed as "<caller name> / <called job name>".
WORKFLOW_CALLED_JOB_SEPARATOR: Final = " / "
WORKFLOW_EXPRESSION_PATTERN: Final = r"\$\{\{.*?\}\}"
# The workflow file read at a change's commit: as large as a file the lookups read.
HISTORY_WORKFLOW_FILE_CAP: Final = 1_048_576
