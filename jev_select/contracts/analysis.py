"""The extra subcommands: analyze, results, block and read-block."""

from __future__ import annotations

from typing import Final

from .failures import CommandFailures

# --------------------------------------------------------------------------------------------
# commands / readers / analyze / results: the extra subcommands (docs/reference.md,
# "Step summary and plan block", "Shadow analysis")
# --------------------------------------------------------------------------------------------

COMMAND_RESULTS: Final = "results"
COMMAND_BLOCK: Final = "block"
COMMAND_READ_BLOCK: Final = "read-block"
STDIN_PATH: Final = "-"
NO_PLAN_BLOCK_MESSAGE: Final = "jev-select: no usable plan block; run every task."
NO_PLAN_BLOCK_EXIT_CODE: Final = 3
BLOCK_INVALID_REPORT_MESSAGE: Final = (
    "jev-select: the report is not a valid v5 report; no plan block written."
)
READ_BLOCK_MAX_BYTES: Final = 16 * 1_048_576
REPORT_READ_MAX_BYTES: Final = 64 * 1_048_576
RESULTS_READ_MAX_BYTES: Final = 16 * 1_048_576
ANALYSIS_FORMAT_JSON: Final = "json"
ANALYSIS_FORMAT_TABLE: Final = "table"
ANALYSIS_FORMATS: Final = (ANALYSIS_FORMAT_JSON, ANALYSIS_FORMAT_TABLE)

# Building a results file from the GitHub REST API (docs/shadow-mode.md).
RESULTS_FAILURE_TEMPLATE: Final = "jev-select: results not built ({code})."
RESULTS_INVALID_REPORT: Final = "invalid-report"
RESULTS_INVALID_JOB_MAP: Final = "invalid-job-map"
RESULTS_INVALID_SETTINGS: Final = "invalid-settings"
RESULTS_JOBS_UNAVAILABLE: Final = "jobs-unavailable"
RESULTS_UNWRITABLE: Final = "results-unwritable"
RESULTS_FAILURE_CODES: Final = (
    RESULTS_INVALID_REPORT,
    RESULTS_INVALID_JOB_MAP,
    RESULTS_INVALID_SETTINGS,
    RESULTS_JOBS_UNAVAILABLE,
    RESULTS_UNWRITABLE,
)
RESULTS_FAILURES: Final = CommandFailures(
    command=COMMAND_RESULTS,
    template=RESULTS_FAILURE_TEMPLATE,
    codes=RESULTS_FAILURE_CODES,
    fallback=RESULTS_UNWRITABLE,
)
RESULTS_JOBS_PER_PAGE: Final = 100
RESULTS_MAX_PAGES: Final = 50
MATRIX_JOB_NAME_SEPARATOR: Final = " ("
# The results file's optional ``ci`` block (schemas/results.schema.json, ``ciRun``): every job of
# the measured run attempt, with the workflow job it belongs to and the tasks it counts for, so
# that billed minutes and the critical path can be told later. A reader refuses a version it
# does not know, as every consumer of our own blocks does (docs/metadata-contract.md).
RESULTS_FIELD_CI: Final = "ci"
RESULTS_CI_VERSION: Final = 1
# GitHub bills each job by the minute, rounded up.
BILLED_MS_PER_MINUTE: Final = 60_000
# Worst first: a task's result is the worst result among its jobs.
TASK_RESULT_SEVERITY: Final = ("failure", "cancelled", "skipped", "success")
