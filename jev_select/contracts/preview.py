"""The local plan's preview, the document ``plan --json`` prints and the uncommitted-work line
(docs/reference.md, "Local use")."""

from __future__ import annotations

from typing import Final

from .inputs import INPUT_MAX_DIFF_BYTES
from .reasons import (
    COLLECTION_ERRORS,
    GROUPING_ERRORS,
    REASON_ALWAYS,
    REASON_FORCE_ALL,
    REASON_METADATA_UNAVAILABLE,
    REASON_PATH_MATCH,
    REASON_PROTECTED_PATH,
)

# --------------------------------------------------------------------------------------------
# ``jev-select plan --json`` (schemas/plan-output.schema.json)
# --------------------------------------------------------------------------------------------

PLAN_OUTPUT_SCHEMA_FILE: Final = "plan-output.schema.json"
PLAN_OUTPUT_SCHEMA_TITLE: Final = "jev-select plan --json output"
# The preview on its own: plan-output refers to it, and ``history`` writes it beside each report
# (PREVIEW_FILE_NAME) so that what the rules force can be told without a key.
PREVIEW_SCHEMA_FILE: Final = "preview.schema.json"
PREVIEW_SCHEMA_TITLE: Final = "jev-select preview"
PREVIEW_FILE_NAME: Final = "preview.json"
# The two keys of the document: the report v5 exactly as the report file holds it, and the
# preview of a run without a key or consent (null when there is none).
PLAN_OUTPUT_REPORT: Final = "report"
PLAN_OUTPUT_PREVIEW: Final = "preview"
PLAN_OUTPUT_FIELDS: Final = (PLAN_OUTPUT_REPORT, PLAN_OUTPUT_PREVIEW)

# The preview object, in its written order.
PREVIEW_CHANGED_FILES: Final = "changed_files"
PREVIEW_FORCED_TASKS: Final = "forced_tasks"
PREVIEW_GAPS: Final = "gaps"
PREVIEW_KEYED_RUN: Final = "keyed_run"
PREVIEW_FIELDS: Final = (
    PREVIEW_CHANGED_FILES,
    PREVIEW_FORCED_TASKS,
    PREVIEW_GAPS,
    PREVIEW_KEYED_RUN,
)
# One task ``always``, ``force_paths`` or a metadata gap keeps, whatever the scores.
PREVIEW_TASK_ID: Final = "task"
PREVIEW_TASK_REASONS: Final = "reasons"
PREVIEW_TASK_PATTERN: Final = "pattern"
PREVIEW_TASK_PATH: Final = "path"
PREVIEW_TASK_FIELDS: Final = (
    PREVIEW_TASK_ID,
    PREVIEW_TASK_REASONS,
    PREVIEW_TASK_PATTERN,
    PREVIEW_TASK_PATH,
)
# The reasons that make one task mandatory (docs/reference.md, "Mandatory tasks and the
# effective run"), in the order the policy writes them.
MANDATORY_REASONS: Final = (REASON_ALWAYS, REASON_PATH_MATCH, REASON_METADATA_UNAVAILABLE)
# What a run with a key and consent would do with this change.
KEYED_RUN_REASON: Final = "reason"
KEYED_RUN_PATH: Final = "path"
KEYED_RUN_PATCH_BYTES: Final = "patch_bytes"
KEYED_RUN_LIMIT_BYTES: Final = "limit_bytes"
KEYED_RUN_LIMIT_GROUPS: Final = "limit_groups"
KEYED_RUN_CANDIDATES: Final = "candidates"
KEYED_RUN_REQUESTS: Final = "requests"
# The reasons that keep a whole change whatever the scores (docs/reference.md, "Forced state"),
# in precedence order, each once. Of the bypasses only force-all survives a key and consent.
KEYED_RUN_REASONS: Final = tuple(
    dict.fromkeys((REASON_FORCE_ALL, REASON_PROTECTED_PATH, *COLLECTION_ERRORS, *GROUPING_ERRORS))
)
KEYED_RUN_FIELDS: Final = (
    KEYED_RUN_REASON,
    KEYED_RUN_PATH,
    KEYED_RUN_PATCH_BYTES,
    KEYED_RUN_LIMIT_BYTES,
    KEYED_RUN_LIMIT_GROUPS,
    KEYED_RUN_CANDIDATES,
    KEYED_RUN_REQUESTS,
)

# --------------------------------------------------------------------------------------------
# The preview's text and the size of a patch over max-diff-bytes
# --------------------------------------------------------------------------------------------

# A patch over max-diff-bytes is read once more, up to this many bytes, to tell its size.
PATCH_MEASURE_CAP: Final = 64 * 1_048_576
PREVIEW_NOT_COLLECTED_TEMPLATE: Final = "  the change could not be collected ({reason})"
PREVIEW_ASKED_TEMPLATE: Final = (
    "  with a key, Jev would be asked about {asked} of {total} task(s){names}{requests}"
)
PREVIEW_KEPT_WHOLE_TEMPLATE: Final = "  with a key, every task would run: {reason}{detail}; {sent}"
PREVIEW_NOTHING_SENT: Final = "no request would be sent"
PREVIEW_RECORDED_ONLY_TEMPLATE: Final = (
    "Jev would still be sent {requests} request(s), its answers recorded and not applied"
)
PROTECTED_PATH_DETAIL_TEMPLATE: Final = "{path} changed"
PATCH_OVER_LIMIT_TEMPLATE: Final = (
    f"the patch is {{patch_bytes}} bytes, over the {INPUT_MAX_DIFF_BYTES} limit of "
    "{limit_bytes} bytes"
)
PATCH_PAST_MEASURE_TEMPLATE: Final = (
    f"the patch is over {{measured}} bytes, past the {INPUT_MAX_DIFF_BYTES} limit of "
    "{limit_bytes} bytes"
)
PATCH_TOO_MANY_GROUPS_TEMPLATE: Final = (
    "the patch of {patch_bytes} bytes needs more than {limit_groups} groups"
)
# After the table of a run with a key, when the reason shown is a patch that is too large.
PATCH_LINE_TEMPLATE: Final = "jev-select: {reason}: {detail}; every task runs."

# --------------------------------------------------------------------------------------------
# Uncommitted work in the repository a local plan reads
# --------------------------------------------------------------------------------------------

# git status on the user's work tree gets a bound of its own: a slow answer only loses the line,
# never the plan's own bound.
LOCAL_STATUS_TIMEOUT_S: Final = 10.0
# The git subcommand (it spells the same word as the ``status`` output).
GIT_STATUS_COMMAND: Final = "status"
LOCAL_STATUS_CAP: Final = 16 * 1_048_576
UNCOMMITTED_TEMPLATE: Final = (
    "jev-select: the working tree has uncommitted changes; the plan reads {rev} ({sha}) only."
)
# The same when the revision was given as (a prefix of) the commit ID itself.
UNCOMMITTED_COMMIT_TEMPLATE: Final = (
    "jev-select: the working tree has uncommitted changes; the plan reads commit {sha} only."
)
