"""jev-select rollout: collection outcomes, bounds and messages."""

from __future__ import annotations

from typing import Final

from .failures import CommandFailures

# --------------------------------------------------------------------------------------------
# jev-select rollout (docs/shadow-mode.md, "Collect the reports and the CI results")
# --------------------------------------------------------------------------------------------

COMMAND_ROLLOUT: Final = "rollout"
# The artifact name the observer examples upload (docs/reference.md, "Shadow analysis").
ROLLOUT_ARTIFACT_PREFIX: Final = "jev-plan-report-"
ROLLOUT_ARTIFACT_PATTERN: Final = (
    r"jev-plan-report-(?P<run_id>[1-9][0-9]*)-(?P<attempt>[1-9][0-9]*)"
)
# GitHub's status of a finished workflow run (its vocabulary, not a product contract).
GITHUB_RUN_COMPLETED: Final = "completed"
ROLLOUT_WORKFLOW_PATTERN: Final = r"[A-Za-z0-9._-]+\.ya?ml|[1-9][0-9]*"
ROLLOUT_DEFAULT_SINCE_DAYS: Final = 14
ROLLOUT_DEFAULT_MAX_RUNS: Final = 200
ROLLOUT_MAX_RUNS: Final = 5000
ROLLOUT_PER_PAGE: Final = 100
ROLLOUT_MAX_PAGES: Final = 50
# Downloads: the zip as served, its entries, and the report inside once inflated.
ROLLOUT_ARTIFACT_MAX_BYTES: Final = 16 * 1_048_576
ROLLOUT_ARTIFACT_MAX_ENTRIES: Final = 16
ROLLOUT_REPORT_MAX_BYTES: Final = 16 * 1_048_576
ROLLOUT_DOWNLOAD_TIMEOUT_S: Final = 60.0
# Rate-limit answers: the total the command may sleep, and the wait GitHub asks for when an
# answer names no reset time.
ROLLOUT_DEFAULT_MAX_WAIT_S: Final = 300
ROLLOUT_UNNAMED_WAIT_S: Final = 60
ROLLOUT_MIN_WAIT_S: Final = 1
ROLLOUT_REDIRECT_STATUSES: Final = (301, 302, 303, 307, 308)
# Outcomes per observer run, in the order the summary lists them.
ROLLOUT_COLLECTED: Final = "collected"
ROLLOUT_UNMATCHED: Final = "unmatched"
ROLLOUT_MISSING: Final = "missing"
ROLLOUT_REJECTED: Final = "rejected"
ROLLOUT_EXISTING: Final = "existing"
ROLLOUT_OUTCOMES: Final = (
    ROLLOUT_COLLECTED,
    ROLLOUT_UNMATCHED,
    ROLLOUT_MISSING,
    ROLLOUT_REJECTED,
    ROLLOUT_EXISTING,
)
# Why a run ended where it did.
ROLLOUT_DETAIL_NO_ARTIFACT: Final = "no-artifact"
ROLLOUT_DETAIL_ARTIFACT_EXPIRED: Final = "artifact-expired"
ROLLOUT_DETAIL_ARTIFACT_TOO_LARGE: Final = "artifact-too-large"
ROLLOUT_DETAIL_ARTIFACT_MALFORMED: Final = "artifact-malformed"
ROLLOUT_DETAIL_ARTIFACT_UNAVAILABLE: Final = "artifact-unavailable"
ROLLOUT_DETAIL_REPORT_INVALID: Final = "report-invalid"
ROLLOUT_DETAIL_REPORT_NOT_SHADOW: Final = "report-not-shadow"
ROLLOUT_DETAIL_REPORT_NOT_THIS_RUN: Final = "report-not-this-run"
ROLLOUT_DETAIL_NO_CI_RUN: Final = "no-ci-run"
ROLLOUT_DETAIL_CI_RUN_AMBIGUOUS: Final = "ci-run-ambiguous"
ROLLOUT_DETAIL_CI_RUN_PENDING: Final = "ci-run-pending"
ROLLOUT_DETAILS: Final = (
    ROLLOUT_DETAIL_NO_ARTIFACT,
    ROLLOUT_DETAIL_ARTIFACT_EXPIRED,
    ROLLOUT_DETAIL_ARTIFACT_TOO_LARGE,
    ROLLOUT_DETAIL_ARTIFACT_MALFORMED,
    ROLLOUT_DETAIL_ARTIFACT_UNAVAILABLE,
    ROLLOUT_DETAIL_REPORT_INVALID,
    ROLLOUT_DETAIL_REPORT_NOT_SHADOW,
    ROLLOUT_DETAIL_REPORT_NOT_THIS_RUN,
    ROLLOUT_DETAIL_NO_CI_RUN,
    ROLLOUT_DETAIL_CI_RUN_AMBIGUOUS,
    ROLLOUT_DETAIL_CI_RUN_PENDING,
)
ROLLOUT_FORMAT_TABLE: Final = "table"
ROLLOUT_FORMAT_JSON: Final = "json"
ROLLOUT_FORMATS: Final = (ROLLOUT_FORMAT_TABLE, ROLLOUT_FORMAT_JSON)
ROLLOUT_SUMMARY_TEMPLATE: Final = (
    "jev-select: rollout: {collected} collected, {unmatched} unmatched, {missing} missing, "
    "{rejected} rejected, {existing} already collected."
)
ROLLOUT_FAILURE_TEMPLATE: Final = "jev-select: rollout failed ({code})."
ROLLOUT_INVALID_SETTINGS: Final = "invalid-settings"
ROLLOUT_INVALID_JOB_MAP: Final = "invalid-job-map"
ROLLOUT_WORKFLOW_NOT_FOUND: Final = "workflow-not-found"
ROLLOUT_GITHUB_UNAVAILABLE: Final = "github-unavailable"
ROLLOUT_INVALID_ANSWER: Final = "invalid-answer"
ROLLOUT_RATE_LIMITED: Final = "rate-limited"
ROLLOUT_OUT_UNWRITABLE: Final = "out-unwritable"
ROLLOUT_FAILURE_CODES: Final = (
    ROLLOUT_INVALID_SETTINGS,
    ROLLOUT_INVALID_JOB_MAP,
    ROLLOUT_WORKFLOW_NOT_FOUND,
    ROLLOUT_GITHUB_UNAVAILABLE,
    ROLLOUT_INVALID_ANSWER,
    ROLLOUT_RATE_LIMITED,
    ROLLOUT_OUT_UNWRITABLE,
)
ROLLOUT_FAILURES: Final = CommandFailures(
    command=COMMAND_ROLLOUT,
    template=ROLLOUT_FAILURE_TEMPLATE,
    codes=ROLLOUT_FAILURE_CODES,
    fallback=ROLLOUT_INVALID_ANSWER,
)
ROLLOUT_WAIT_TEMPLATE: Final = "jev-select: GitHub rate limit; waiting {seconds} s."
ROLLOUT_MAX_WAIT_LIMIT_S: Final = 3600
