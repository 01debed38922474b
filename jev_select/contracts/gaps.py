"""Task metadata gaps (one record per kind) and the reusable-workflow expansion bounds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

from .vocab import GapName

# --------------------------------------------------------------------------------------------
# Task metadata gaps (docs/reference.md, "Metadata warnings" and "Checking a task table")
# --------------------------------------------------------------------------------------------

# How ``jev-select check`` places a gap in the table: at the ``context_files`` item the detail
# names; at the job reference ``<wf>#<job>`` names; or at the first job reference whose workflow
# is the detail, else at the task's ``jobs`` (details that name no workflow of the table, such as
# an action's ``uses``, land there).
GAP_AT_CONTEXT_FILE: Final = "context-file"
GAP_AT_JOB: Final = "job"
GAP_AT_WORKFLOW: Final = "workflow"


class GapKind(NamedTuple):
    """One kind of metadata gap: every place that emits, reports or checks one reads this record.

    ``name`` is the bare name: the report's warning starts with it and ``jev-select check`` uses
    it as the problem code. ``detail`` is the documented form of what follows ``name:`` (empty:
    the warning is the bare name alone). ``check_error`` makes it an error of ``check`` rather
    than a warning; ``check_message`` is the check's text for it (None: the common text of
    ``GAP_CHECK_MESSAGE``), with ``{detail}``, ``{commit}`` (12 digits), and for a job reference
    ``{workflow}`` and ``{job}``; ``locator`` is one of the ``GAP_AT_*`` placements.
    """

    name: GapName
    detail: str
    check_error: bool
    check_message: str | None
    locator: str

    @property
    def prefix(self) -> str:
        """What every warning of this kind starts with."""
        return self.name + ":" if self.detail else self.name

    def warning(self, detail: str = "") -> str:
        """The report's warning for one occurrence."""
        return self.prefix + detail


GAP_WORKFLOW_MISSING: Final = GapKind(
    GapName.WORKFLOW_MISSING,
    "<wf>",
    True,
    'workflow "{detail}" does not exist at {commit}',
    GAP_AT_WORKFLOW,
)
GAP_WORKFLOW_INVALID: Final = GapKind(
    GapName.WORKFLOW_INVALID,
    "<wf>",
    True,
    'workflow "{detail}" is not a YAML mapping the strict loader accepts',
    GAP_AT_WORKFLOW,
)
GAP_JOB_MISSING: Final = GapKind(
    GapName.JOB_MISSING,
    "<wf>#<job>",
    True,
    # ``check`` appends its suggestion of a job key to this text.
    'job "{job}" does not exist in "{workflow}"',
    GAP_AT_JOB,
)
GAP_WORKFLOW_JOBS_MISSING: Final = GapKind(
    GapName.WORKFLOW_JOBS_MISSING, "<wf>", True, 'workflow "{detail}" has no jobs', GAP_AT_WORKFLOW
)
GAP_REUSABLE_WORKFLOW_UNRESOLVED: Final = GapKind(
    GapName.REUSABLE_WORKFLOW_UNRESOLVED, "<uses>", False, None, GAP_AT_WORKFLOW
)
GAP_ACTION_METADATA_UNAVAILABLE: Final = GapKind(
    GapName.ACTION_METADATA_UNAVAILABLE, "<uses>", False, None, GAP_AT_WORKFLOW
)
GAP_ACTION_METADATA_MISSING: Final = GapKind(
    GapName.ACTION_METADATA_MISSING, "<uses>", False, None, GAP_AT_WORKFLOW
)
GAP_ACTION_METADATA_INVALID: Final = GapKind(
    GapName.ACTION_METADATA_INVALID, "<uses>", False, None, GAP_AT_WORKFLOW
)
GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED: Final = GapKind(
    GapName.PACKAGE_SCRIPT_CONTEXT_UNRESOLVED, "", False, None, GAP_AT_WORKFLOW
)
GAP_PACKAGE_SCRIPT_DEPTH_LIMIT: Final = GapKind(
    GapName.PACKAGE_SCRIPT_DEPTH_LIMIT, "<name>", False, None, GAP_AT_WORKFLOW
)
GAP_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY: Final = GapKind(
    GapName.PACKAGE_SCRIPT_DYNAMIC_DIRECTORY, "<dir>", False, None, GAP_AT_WORKFLOW
)
GAP_PACKAGE_SCRIPT_MISSING: Final = GapKind(
    GapName.PACKAGE_SCRIPT_MISSING, "<manifest>#<name>", False, None, GAP_AT_WORKFLOW
)
GAP_PACKAGE_MANIFEST_INVALID: Final = GapKind(
    GapName.PACKAGE_MANIFEST_INVALID, "<manifest>", False, None, GAP_AT_WORKFLOW
)
GAP_PACKAGE_SCRIPT_ABSENT: Final = GapKind(
    GapName.PACKAGE_SCRIPT_ABSENT, "<manifest>#<name>", False, None, GAP_AT_WORKFLOW
)
GAP_CONTEXT_FILE_DYNAMIC: Final = GapKind(
    GapName.CONTEXT_FILE_DYNAMIC,
    "<path>",
    True,
    'context file "{detail}" holds an expression or is not a normalised path',
    GAP_AT_CONTEXT_FILE,
)
GAP_CONTEXT_FILE_MISSING: Final = GapKind(
    GapName.CONTEXT_FILE_MISSING,
    "<path>",
    True,
    'context file "{detail}" does not exist at {commit} (or is over 1 MiB, or not UTF-8)',
    GAP_AT_CONTEXT_FILE,
)
GAP_WORKFLOW_SHAPE_UNSUPPORTED: Final = GapKind(
    GapName.WORKFLOW_SHAPE_UNSUPPORTED, "<wf>#<job>", False, None, GAP_AT_WORKFLOW
)
GAP_WORKSPACE_MATCH_BOUND: Final = GapKind(
    GapName.WORKSPACE_MATCH_BOUND, "<count>#<name>", False, None, GAP_AT_WORKFLOW
)
GAP_COMMAND_EXPRESSION_UNRESOLVED: Final = GapKind(
    GapName.COMMAND_EXPRESSION_UNRESOLVED, "<wf>#<job>", False, None, GAP_AT_WORKFLOW
)
GAP_COMPOSITE_ACTION_DEPTH_LIMIT: Final = GapKind(
    GapName.COMPOSITE_ACTION_DEPTH_LIMIT, "<uses>", False, None, GAP_AT_WORKFLOW
)
GAP_COMPOSITE_ACTION_CYCLE: Final = GapKind(
    GapName.COMPOSITE_ACTION_CYCLE, "<uses>", False, None, GAP_AT_WORKFLOW
)
# Every kind, in the order of the documented table.
GAP_KINDS: Final = (
    GAP_WORKFLOW_MISSING,
    GAP_WORKFLOW_INVALID,
    GAP_JOB_MISSING,
    GAP_WORKFLOW_JOBS_MISSING,
    GAP_REUSABLE_WORKFLOW_UNRESOLVED,
    GAP_ACTION_METADATA_UNAVAILABLE,
    GAP_ACTION_METADATA_MISSING,
    GAP_ACTION_METADATA_INVALID,
    GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED,
    GAP_PACKAGE_SCRIPT_DEPTH_LIMIT,
    GAP_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY,
    GAP_PACKAGE_SCRIPT_MISSING,
    GAP_PACKAGE_MANIFEST_INVALID,
    GAP_PACKAGE_SCRIPT_ABSENT,
    GAP_CONTEXT_FILE_DYNAMIC,
    GAP_CONTEXT_FILE_MISSING,
    GAP_WORKFLOW_SHAPE_UNSUPPORTED,
    GAP_WORKSPACE_MATCH_BOUND,
    GAP_COMMAND_EXPRESSION_UNRESOLVED,
    GAP_COMPOSITE_ACTION_DEPTH_LIMIT,
    GAP_COMPOSITE_ACTION_CYCLE,
)
GAP_NAMES: Final = tuple(kind.name for kind in GAP_KINDS)
GAP_KIND_BY_NAME: Final[Mapping[str, GapKind]] = {kind.name: kind for kind in GAP_KINDS}
# The check's text for a gap without its own ``check_message`` (and for a warning of no known
# kind), with and without a detail.
GAP_CHECK_MESSAGE: Final = 'metadata gap {name} "{detail}"; the task will always run'
GAP_CHECK_MESSAGE_BARE: Final = "metadata gap {name}; the task will always run"
# Gap names that are errors of ``check``: the table names a file or job that is not there, so the
# task would run on every pull request.
CHECK_GAP_ERRORS: Final = tuple(kind.name for kind in GAP_KINDS if kind.check_error)

# The warning prefixes, one per kind (the report and the tests spell warnings with these).
WARN_WORKFLOW_MISSING: Final = GAP_WORKFLOW_MISSING.prefix
WARN_WORKFLOW_INVALID: Final = GAP_WORKFLOW_INVALID.prefix
WARN_JOB_MISSING: Final = GAP_JOB_MISSING.prefix
WARN_WORKFLOW_JOBS_MISSING: Final = GAP_WORKFLOW_JOBS_MISSING.prefix
WARN_REUSABLE_WORKFLOW_UNRESOLVED: Final = GAP_REUSABLE_WORKFLOW_UNRESOLVED.prefix
WARN_ACTION_METADATA_UNAVAILABLE: Final = GAP_ACTION_METADATA_UNAVAILABLE.prefix
WARN_ACTION_METADATA_MISSING: Final = GAP_ACTION_METADATA_MISSING.prefix
WARN_ACTION_METADATA_INVALID: Final = GAP_ACTION_METADATA_INVALID.prefix
WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED: Final = GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.prefix
WARN_PACKAGE_SCRIPT_DEPTH_LIMIT: Final = GAP_PACKAGE_SCRIPT_DEPTH_LIMIT.prefix
WARN_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY: Final = GAP_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY.prefix
WARN_PACKAGE_SCRIPT_MISSING: Final = GAP_PACKAGE_SCRIPT_MISSING.prefix
WARN_PACKAGE_MANIFEST_INVALID: Final = GAP_PACKAGE_MANIFEST_INVALID.prefix
WARN_PACKAGE_SCRIPT_ABSENT: Final = GAP_PACKAGE_SCRIPT_ABSENT.prefix
WARN_CONTEXT_FILE_DYNAMIC: Final = GAP_CONTEXT_FILE_DYNAMIC.prefix
WARN_CONTEXT_FILE_MISSING: Final = GAP_CONTEXT_FILE_MISSING.prefix
WARN_WORKFLOW_SHAPE_UNSUPPORTED: Final = GAP_WORKFLOW_SHAPE_UNSUPPORTED.prefix
WARNING_PREFIXES: Final = tuple(kind.prefix for kind in GAP_KINDS)
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
# Workspace packages one command runs its script in (docs/reference.md, "Package scripts"): past
# it the command is ``workspace-match-bound:<count>#<name>`` instead of that many scripts, so
# that one ``pnpm -r`` in a large monorepo cannot crowd the rest of the evidence out.
WORKSPACE_MATCH_BOUND: Final = 50
# Packages one command may select at all, whether or not they have the script: past it the
# selection is not even listed (the same gap, with the number selected).
WORKSPACE_SELECTION_MAX: Final = 1_000
# Composite actions in one chain of ``uses:`` steps, the outermost included; a deeper one is
# ``composite-action-depth-limit:<uses>``.
COMPOSITE_ACTION_MAX_DEPTH: Final = 10
# The ``run`` text another repository's composite action shows in the evidence (docs/
# reference.md, "Composite actions"): a command of at most ``COMPOSITE_REMOTE_STEP_RUN_BYTES``
# UTF-8 bytes is shown whole while the action has shown fewer than ``COMPOSITE_REMOTE_RUN_BYTES``;
# a longer one (a setup script) is replaced by a line giving its size, and an unnamed step with
# nothing shown is left out. A short command (``make build``) says what the job does; a setup
# script's body says little and costs requests: shown whole, the scripts of three setup actions
# per job more than doubled the requests of a Rust repository. Every command is still read in
# full for package scripts; only the text sent is bounded.
COMPOSITE_REMOTE_STEP_RUN_BYTES: Final = 120
COMPOSITE_REMOTE_RUN_BYTES: Final = 360
COMPOSITE_REMOTE_RUN_CUT_PREFIX: Final = "# a script of "
COMPOSITE_REMOTE_RUN_CUT: Final = COMPOSITE_REMOTE_RUN_CUT_PREFIX + "{count} bytes, not shown"
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
# Shown (terminal view, step summary and ``check`` only) for a gap a command causes: the file,
# line and column of the command, its job and step, and the command's first line (at most
# ``NOTE_COMMAND_MAX_CHARS`` characters). The report's warning keeps its fixed form.
NOTE_GAP_CAUSE_SEPARATOR: Final = " comes from "
NOTE_GAP_CAUSE: Final = (
    "{gap}" + NOTE_GAP_CAUSE_SEPARATOR + '{place}, workflow "{workflow}", job "{job}", '
    'step "{step}"'
)
NOTE_GAP_CAUSE_ACTION: Final = ' of action "{action}"'
NOTE_GAP_COMMAND: Final = ": {command}"
NOTE_GAP_PLACE: Final = "{file}:{line}:{column}"
NOTE_COMMAND_MAX_CHARS: Final = 120
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
