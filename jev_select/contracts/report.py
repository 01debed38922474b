"""The report, the step summary, the terminal view and the messages of a plan."""

from __future__ import annotations

from typing import Final

from .failures import CommandFailures
from .inputs import BOOL_TRUE, INPUT_ALLOW_EXTERNAL_CONTEXT, INPUT_API_KEY
from .reasons import (
    REASON_EXTERNAL_CONTEXT_DISABLED,
    REASON_MISSING_API_KEY,
    STATUS_BYPASSED,
    STATUS_FALLBACK,
    STATUS_PLANNED,
)

# --------------------------------------------------------------------------------------------
# Report, summary and messages (docs/reference.md, "Report fields", "Publication",
# "Step summary and plan block")
# --------------------------------------------------------------------------------------------

REPORT_DIR_PREFIX: Final = "jev-select-report-"
REPORT_FILE_NAME: Final = "report.json"
SUMMARY_MAX_BYTES: Final = 1_000_000
PLAN_BLOCK_MAX_BYTES: Final = 512 * 1024

LOG_LINE_TEMPLATE: Final = "jev-select: {status} ({mode}): {selected} of {total} tasks selected"
SUMMARY_UNAVAILABLE_WARNING: Final = (
    "jev-select: step summary unavailable; the published plan is unaffected."
)
PLAN_BLOCK_OMITTED_WARNING: Final = (
    "jev-select: plan block omitted (size limit); consumers will run every task."
)
# A same-repository pull request bypassed for want of its own setup (docs/reference.md, "Step
# summary and plan block"): one annotation in GitHub mode, and the same advice as one line of the
# step summary. Forks, non-pull-request events and merge queues get neither.
MISSING_API_KEY_WARNING: Final = (
    "jev-select: no API key was given, so nothing was evaluated and every task runs; "
    f"set the {INPUT_API_KEY} input, usually from a repository secret."
)
EXTERNAL_CONTEXT_DISABLED_WARNING: Final = (
    "jev-select: sending the change was not allowed, so nothing was evaluated and every task "
    f"runs; set {INPUT_ALLOW_EXTERNAL_CONTEXT}: '{BOOL_TRUE}' to let the diff and task metadata "
    "be sent."
)
SETUP_MISSING_WARNINGS: Final[dict[str, str]] = {
    REASON_MISSING_API_KEY: MISSING_API_KEY_WARNING,
    REASON_EXTERNAL_CONTEXT_DISABLED: EXTERNAL_CONTEXT_DISABLED_WARNING,
}
SUMMARY_MISSING_API_KEY_LINE: Final = (
    "No API key was given, so nothing was evaluated and every task runs: "
    f"set the `{INPUT_API_KEY}` input, usually from a repository secret."
)
SUMMARY_EXTERNAL_CONTEXT_DISABLED_LINE: Final = (
    "Sending the change was not allowed, so nothing was evaluated and every task runs: "
    f"set `{INPUT_ALLOW_EXTERNAL_CONTEXT}: '{BOOL_TRUE}'` to let the diff and task metadata be "
    "sent."
)
SUMMARY_SETUP_MISSING_LINES: Final[dict[str, str]] = {
    REASON_MISSING_API_KEY: SUMMARY_MISSING_API_KEY_LINE,
    REASON_EXTERNAL_CONTEXT_DISABLED: SUMMARY_EXTERNAL_CONTEXT_DISABLED_LINE,
}
SUMMARY_HEADING_TEMPLATE: Final = "### jev-select: {status}, {mode} mode"
SUMMARY_STATUS_SENTENCES: Final[dict[str, str]] = {
    STATUS_PLANNED: "Selection applied.",
    STATUS_BYPASSED: "Selection was bypassed; every task runs.",
    STATUS_FALLBACK: "Evidence was incomplete; every task runs.",
}
SUMMARY_SHADOW_SENTENCE: Final = (
    "Shadow mode: every task runs; Proposed shows what enforce mode would do."
)
SUMMARY_DETAILS_TITLE: Final = "Commits, model and per-group scores"
SUMMARY_SCORE_DISCLAIMER: Final = (
    "Scores are per-group relevance signals used to select tasks. They are not predictions of "
    "task outcomes,\nand a low score does not guarantee that a skipped task would have passed."
)
SUMMARY_GROUP_TABLE_OMITTED: Final = "Group table omitted (size limit); see the report."
SUMMARY_MORE_TASKS_TEMPLATE: Final = "… {count} more tasks; see the report."

# Local mode (docs/reference.md, "Local use").
LOCAL_API_KEY_ENV: Final = "JEV_API_KEY"
LOCAL_GITHUB_TOKEN_ENV: Final = "GITHUB_TOKEN"
# GitHub's REST root; read in GitHub mode and, when set, in local mode too (same validation).
GITHUB_API_URL_ENV: Final = "GITHUB_API_URL"

# Analyzer (docs/reference.md, "Shadow analysis").
ANALYSIS_FAILURE_TEMPLATE: Final = "jev-select: analysis failed ({code})."
ANALYSIS_INVALID_SHADOW_MEASUREMENT: Final = "invalid-shadow-measurement"
ANALYSIS_TASK_RESULTS_MISMATCH: Final = "task-results-mismatch"
ANALYSIS_INVALID_MANUAL_LABELS: Final = "invalid-manual-labels"
ANALYSIS_INVALID_TASK_RESULT: Final = "invalid-task-result"
ANALYSIS_INVALID_SHADOW_EFFECTIVE_SELECTION: Final = "invalid-shadow-effective-selection"
ANALYSIS_CODES: Final = (
    ANALYSIS_INVALID_SHADOW_MEASUREMENT,
    ANALYSIS_TASK_RESULTS_MISMATCH,
    ANALYSIS_INVALID_MANUAL_LABELS,
    ANALYSIS_INVALID_TASK_RESULT,
    ANALYSIS_INVALID_SHADOW_EFFECTIVE_SELECTION,
)
TASK_RESULTS: Final = ("success", "failure", "cancelled", "skipped")
FAILURE_CLASSIFICATIONS: Final = ("regression", "flaky", "infrastructure", "unknown")
EVALUATION_THRESHOLDS: Final = (0.05, 0.1, 0.2, 0.3, 0.5)

# Subcommands (docs/reference.md, "Commands").
COMMAND_PLAN: Final = "plan"
COMMAND_ANALYZE: Final = "analyze"
COMMAND_REPLAY: Final = "replay"
ANALYSIS_FAILURES: Final = CommandFailures(
    command=COMMAND_ANALYZE,
    template=ANALYSIS_FAILURE_TEMPLATE,
    codes=ANALYSIS_CODES,
    fallback=ANALYSIS_INVALID_SHADOW_MEASUREMENT,
)

# --------------------------------------------------------------------------------------------
# policy / report / render / planblock: report field order, summary and terminal wording
# --------------------------------------------------------------------------------------------

# Root fields of report v5 in their written order (docs/reference.md, "Report fields").
REPORT_FIELDS: Final = (
    "version",
    "tested_ref",
    "diff_base_sha",
    "job_metadata",
    "observation_error",
    "metadata_sha",
    "base_sha",
    "head_sha",
    "tested_sha",
    "selection_hash",
    "skip_below",
    "diff_hash",
    "diff_bytes",
    "changed_path_count",
    "mode",
    "status",
    "model",
    "durations_ms",
    "usage",
    "tasks",
    "observation",
)
# Document fields that spell the same word as an input or output name. Each document is its own
# vocabulary, so each gets its own constants instead of borrowing the input's or the output's.
# Report v5 (and its observation, chunk and request records):
REPORT_FIELD_MODE: Final = "mode"
REPORT_FIELD_MODEL: Final = "model"
REPORT_FIELD_STATUS: Final = "status"
REPORT_FIELD_TASKS: Final = "tasks"
REPORT_TASK_PROPOSED_RUN: Final = "proposed_run"
REPORT_TASK_RUN: Final = "run"
REPORT_TASK_REASONS: Final = "reasons"
# The plan block's JSON (schemas/plan-block.schema.json), also printed by ``read-block``:
PLAN_BLOCK_FIELD_MODE: Final = "mode"
PLAN_BLOCK_FIELD_STATUS: Final = "status"
PLAN_BLOCK_FIELD_RUN: Final = "run"
PLAN_BLOCK_FIELD_SELECTED: Final = "selected"
# A results file (schemas/results.schema.json) and a shadow analysis:
RESULTS_FIELD_TASKS: Final = "tasks"
ANALYSIS_FIELD_STATUS: Final = "status"
ANALYSIS_FIELD_FALLBACK: Final = "fallback"
ANALYSIS_LABEL_TASKS: Final = "tasks"
# A replay corpus case's labels.json:
REPLAY_LABELS_FIELD_TASKS: Final = "tasks"
SUMMARY_COUNT_TEMPLATE: Final = "{selected} of {total} tasks run. {sentence}"
SUMMARY_TASK_TABLE_HEADER: Final = (
    "| Task | Effective | Proposed | Reasons | Details |\n| --- | --- | --- | --- | --- |"
)
SUMMARY_WORD_RUN: Final = "run"
SUMMARY_WORD_SKIP: Final = "skip"
SUMMARY_NULL_CELL: Final = "—"
# The placeholders of the SUMMARY_* templates receive Markdown that core.markdown already made
# (code spans with their own fences), so the templates put no backticks around them.
SUMMARY_TESTED_COMMIT_TEMPLATE: Final = (
    "- Tested commit: {tested_sha} ({tested_ref}); base {base_sha}, head {head_sha}"
)
SUMMARY_DIFF_TEMPLATE: Final = "- Diff: {diff_bytes} bytes, {changed_path_count} changed paths"
SUMMARY_DIFF_NOT_COLLECTED: Final = "- Diff: not collected"
SUMMARY_MODEL_TEMPLATE: Final = (
    "- Model: requested {requested}, expected {expected}, returned {returned}"
)
SUMMARY_MODEL_NONE: Final = "none"
SUMMARY_OBSERVATION_TEMPLATE: Final = "- Observation: {status}, {strategy}, {groups} group(s)"
SUMMARY_OBSERVATION_NOT_COLLECTED: Final = "- Observation: not collected; no request was sent"
SUMMARY_OBSERVATION_ERROR_TEMPLATE: Final = "- Observation error: {code}"
SUMMARY_GROUP_TABLE_HEADER: Final = (
    "| Group | Bytes | Status | Model | Time (ms) | Scores | Error |\n"
    "| ---: | ---: | --- | --- | ---: | --- | --- |"
)
SUMMARY_BYTE_RANGE_TEMPLATE: Final = "{start}–{end}"
TERMINAL_COLUMNS: Final = ("TASK", "RUN", "PROPOSED", "REASONS", "DETAILS")
PLAN_VIEW_GAPS_PREFIX: Final = "gaps: "
# The step summary names the matching force_paths pattern (from the task table) but never the
# changed path itself: paths come from the pull request, and the summary renders no PR text.
SUMMARY_PATTERN_MATCHED_TEMPLATE: Final = "{pattern} matched"
PREVIEW_HEADING: Final = "preview (no request was sent; every task runs):"
PREVIEW_HINT: Final = (
    "  to ask Jev, set JEV_API_KEY and pass --allow-external-context "
    "(the diff and task metadata are then sent)"
)
LOCAL_DEFAULT_BASE_MISSING: Final = (
    "jev-select: no default base: neither origin/HEAD nor main gives a unique merge base with "
    "HEAD; pass --base REV."
)
# Cause categories of a failed Jev evaluation, shown on the local failure line.
CAUSE_DNS: Final = "dns"
CAUSE_CONNECT: Final = "connect"
CAUSE_TLS: Final = "tls"
CAUSE_TIMEOUT: Final = "timeout"
CAUSE_HTTP_TEMPLATE: Final = "http-{status}"
CAUSE_INVALID_RESPONSE: Final = "invalid-response"
CAUSE_UNKNOWN: Final = "transport"
FAILURE_LINE_TEMPLATE: Final = "jev-select: the Jev evaluation failed ({cause}); {consequence}."
FAILURE_LINE_EVERY_TASK: Final = "every task runs"
FAILURE_LINE_SOME_TASKS: Final = "the tasks it could not score run"
PROGRESS_TEMPLATE: Final = "jev-select: planning ({seconds} s; git and Jev)..."
FLAG_JSON: Final = "json"
FLAG_REPORT: Final = "report"
PLAN_HELP_EPILOG: Final = (
    "environment (local mode):\n"
    "  JEV_API_KEY   the Jev API key (never a flag). Without it, or without\n"
    "                --allow-external-context, nothing is sent: the plan is\n"
    "                bypassed (every task runs) and a local preview shows the\n"
    "                change, the tasks always/force_paths keep and the gaps.\n"
    "  GITHUB_TOKEN  optional; used for external action metadata lookups on\n"
    "                https://api.github.com (anonymous when unset).\n"
    "\n"
    "Check a task table first with: jev-select check --tasks-file PATH"
)
LOCAL_REPORT_DIR_TEMPLATE: Final = "jev-select-report-local-{key}"
TERMINAL_YES: Final = "yes"
TERMINAL_NO: Final = "no"
TERMINAL_NULL: Final = "-"
TERMINAL_COLLECTION_TEMPLATE: Final = "collection: {ms} ms"
TERMINAL_REPORT_TEMPLATE: Final = "report: {path}"
TERMINAL_NOTE_TEMPLATE: Final = "note: {task}: {note}"
SUMMARY_NOTE_TEMPLATE: Final = "- Note on {task}: {note}"
# Beside a gap in the Details column: where the command that causes it is written.
SUMMARY_GAP_PLACE_TEMPLATE: Final = " at {place}"
