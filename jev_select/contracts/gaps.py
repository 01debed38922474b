"""Task metadata warnings (the gap codes) and the reusable-workflow expansion bounds."""

from __future__ import annotations

from typing import Final

# --------------------------------------------------------------------------------------------
# Task metadata warnings (docs/reference.md, "Metadata warnings")
# --------------------------------------------------------------------------------------------

WARN_WORKFLOW_MISSING: Final = "workflow-missing:"
WARN_WORKFLOW_INVALID: Final = "workflow-invalid:"
WARN_JOB_MISSING: Final = "job-missing:"
WARN_WORKFLOW_JOBS_MISSING: Final = "workflow-jobs-missing:"
WARN_REUSABLE_WORKFLOW_UNRESOLVED: Final = "reusable-workflow-unresolved:"
WARN_ACTION_METADATA_UNAVAILABLE: Final = "action-metadata-unavailable:"
WARN_ACTION_METADATA_MISSING: Final = "action-metadata-missing:"
WARN_ACTION_METADATA_INVALID: Final = "action-metadata-invalid:"
WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED: Final = "package-script-execution-context-unresolved"
WARN_PACKAGE_SCRIPT_DEPTH_LIMIT: Final = "package-script-depth-limit:"
WARN_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY: Final = "package-script-dynamic-directory:"
WARN_PACKAGE_SCRIPT_MISSING: Final = "package-script-missing:"
WARN_PACKAGE_MANIFEST_INVALID: Final = "package-manifest-invalid:"
WARN_PACKAGE_SCRIPT_ABSENT: Final = "package-script-absent:"
WARN_CONTEXT_FILE_DYNAMIC: Final = "context-file-dynamic:"
WARN_CONTEXT_FILE_MISSING: Final = "context-file-missing:"
WARN_WORKFLOW_SHAPE_UNSUPPORTED: Final = "workflow-shape-unsupported:"
WARNING_PREFIXES: Final = (
    WARN_WORKFLOW_MISSING,
    WARN_WORKFLOW_INVALID,
    WARN_JOB_MISSING,
    WARN_WORKFLOW_JOBS_MISSING,
    WARN_REUSABLE_WORKFLOW_UNRESOLVED,
    WARN_ACTION_METADATA_UNAVAILABLE,
    WARN_ACTION_METADATA_MISSING,
    WARN_ACTION_METADATA_INVALID,
    WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED,
    WARN_PACKAGE_SCRIPT_DEPTH_LIMIT,
    WARN_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY,
    WARN_PACKAGE_SCRIPT_MISSING,
    WARN_PACKAGE_MANIFEST_INVALID,
    WARN_PACKAGE_SCRIPT_ABSENT,
    WARN_CONTEXT_FILE_DYNAMIC,
    WARN_CONTEXT_FILE_MISSING,
    WARN_WORKFLOW_SHAPE_UNSUPPORTED,
)
PROVENANCE_KINDS: Final = (
    "workflow-job",
    "workflow-defaults",
    "job-defaults",
    "workflow-step",
    "action",
    "package-script",
    "context-file",
)
PACKAGE_SCRIPT_MAX_DEPTH: Final = 16
# Workflows in one chain of reusable-workflow calls, the top-level caller included (GitHub's
# limit); a deeper call stays ``reusable-workflow-unresolved``.
REUSABLE_WORKFLOW_MAX_DEPTH: Final = 10
# The reusable-workflow expansion budget (docs/reference.md, "Reusable workflows and local
# actions"), shared by every task of one resolution; a call it cannot pay for stays
# ``reusable-workflow-unresolved``. Each called workflow is expanded once per resolution and
# reused, so a real repository spends a few hundred jobs at most; the limits leave ten times that
# and stop base-branch fan-out (N callers of N callers ...) long before it costs real time or
# memory. Jobs of called workflows expanded (each distinct expansion once):
REUSABLE_EXPANSION_MAX_JOBS: Final = 5_000
# Job and step entries that expansion places in the evidence, every reuse counted in full (the
# evidence is a tree): far above what fits in requests (MAX_STATE_PLUS_QUESTION_BYTES per task).
REUSABLE_EXPANSION_MAX_NODES: Final = 50_000
# Distinct called workflows read (local paths and other repositories' workflows).
REUSABLE_EXPANSION_MAX_WORKFLOWS: Final = 256
# Seconds of expansion per metadata phase, on the clock the edge injects (all lookup rounds).
REUSABLE_EXPANSION_BOUND_S: Final = 5.0
# Shown (terminal view and step summary only) beside ``job-missing`` when the task named a job
# by its display name; the report's warning keeps its fixed form.
NOTE_JOB_NAME_NOT_KEY: Final = (
    '{workflow}: "{name}" is the display name of job "{key}"; reference the job by its key'
)
# Step fields of the evidence (docs/reference.md, "Evidence object") that mark step concurrency: the
# 0-based index of the job's ``parallel`` group a step belongs to, and ``true`` on a ``background``
# step.
EVIDENCE_STEP_PARALLEL: Final = "parallel"
EVIDENCE_STEP_BACKGROUND: Final = "background"
LOCAL_REPOSITORY_NAME: Final = "local"
