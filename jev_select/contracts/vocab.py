"""The closed vocabularies of the contract, as string enumerations.

Every member *is* its string (``Mode.SHADOW == "shadow"``), so JSON, hashes and printed text
are unchanged, while a type checker refuses a misspelt mode or reason. The ``MODE_*``,
``REASON_*`` ... constants of the other contract modules are these members.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "CheckCode",
    "CheckSeverity",
    "GapName",
    "GroupStatus",
    "LookupFailure",
    "MergeGroupMode",
    "Mode",
    "ObservationStatus",
    "Reason",
    "Status",
    "Strategy",
    "TestedRef",
]


class Status(StrEnum):
    """The status of a plan (docs/reference.md, "Statuses")."""

    PLANNED = "planned"
    BYPASSED = "bypassed"
    FALLBACK = "fallback"


class Reason(StrEnum):
    """A reason code of a task decision (docs/reference.md, "Reason codes")."""

    ALWAYS = "always"
    PATH_MATCH = "path-match"
    JEV_BELOW_THRESHOLD = "jev-below-threshold"
    JEV_AT_OR_ABOVE_THRESHOLD = "jev-at-or-above-threshold"
    SHADOW_MODE = "shadow-mode"
    FORCE_ALL = "force-all"
    PROTECTED_PATH = "protected-path"
    FORK = "fork"
    MISSING_API_KEY = "missing-api-key"
    EXTERNAL_CONTEXT_DISABLED = "external-context-disabled"
    NON_PULL_REQUEST = "non-pull-request"
    GIT_FETCH_FAILED = "git-fetch-failed"
    GIT_READ_FAILED = "git-read-failed"
    SHA_INCOHERENT = "sha-incoherent"
    DIFF_TOO_LARGE = "diff-too-large"
    BINARY_CHANGE = "binary-change"
    SUBMODULE_CHANGE = "submodule-change"
    UNREPRESENTABLE_CHANGE = "unrepresentable-change"
    JEV_TIMEOUT = "jev-timeout"
    JEV_ERROR = "jev-error"
    INVALID_RESPONSE = "invalid-response"
    CONTEXT_TOO_LARGE = "context-too-large"
    CHUNKED_OBSERVATION = "chunked-observation"
    OBSERVATION_ONLY = "observation-only"
    METADATA_UNAVAILABLE = "metadata-unavailable"
    OBSERVATION_INCOMPLETE = "observation-incomplete"


class Strategy(StrEnum):
    """How the change was observed: as one group or several."""

    WHOLE_DIFF = "whole-diff"
    CHUNKED_DIFF = "chunked-diff"


class ObservationStatus(StrEnum):
    """Whether every group of an observation completed."""

    COMPLETE = "complete"
    INCOMPLETE = "incomplete"


class GroupStatus(StrEnum):
    """What happened to one group, or one request of it."""

    COMPLETED = "completed"
    FAILED = "failed"
    NOT_STARTED = "not-started"


class Mode(StrEnum):
    """The `mode` input: enforce the plan, or only record it (shadow)."""

    ENFORCE = "enforce"
    SHADOW = "shadow"


class TestedRef(StrEnum):
    """The `tested-ref` input: the merge commit or the head is what CI tests."""

    MERGE = "merge"
    HEAD = "head"


class MergeGroupMode(StrEnum):
    """The `merge-group` input: what a merge-queue commit does."""

    RUN_ALL = "run-all"
    SELECT = "select"


class CheckSeverity(StrEnum):
    """How grave a problem of `jev-select check` is: an error fails the check, a warning not."""

    ERROR = "error"
    WARNING = "warning"


class CheckCode(StrEnum):
    """The code of a problem `jev-select check` reports about the table itself (a metadata gap
    is reported under its own `GapName`)."""

    NOT_UTF8 = "not-utf8"
    BLANK_TABLE = "blank-table"
    YAML_SYNTAX = "yaml-syntax"
    YAML_TAB = "yaml-tab"
    YAML_ALIAS = "yaml-alias"
    YAML_DIRECTIVE = "yaml-directive"
    YAML_TAG = "yaml-tag"
    YAML_DUPLICATE_KEY = "yaml-duplicate-key"
    YAML_MULTIPLE_DOCUMENTS = "yaml-multiple-documents"
    YAML_TOO_LARGE = "yaml-too-large"
    YAML_TOO_DEEP = "yaml-too-deep"
    YAML_TOO_MANY_NODES = "yaml-too-many-nodes"
    YAML_SCALAR = "yaml-scalar"
    YAML_KEY = "yaml-key"
    NOT_A_MAPPING = "not-a-mapping"
    ENCLOSING_KEY = "enclosing-key"
    INVALID_TASK_ID = "invalid-task-id"
    RESERVED_TASK_ID = "reserved-task-id"
    DUPLICATE_TASK_ID = "duplicate-task-id"
    TASK_NOT_A_MAPPING = "task-not-a-mapping"
    UNKNOWN_FIELD = "unknown-field"
    MISSING_DESCRIPTION = "missing-description"
    BLANK_DESCRIPTION = "blank-description"
    WRONG_TYPE = "wrong-type"
    EMPTY_JOBS = "empty-jobs"
    MISSING_WORKFLOW = "missing-workflow"
    BLANK_JOB = "blank-job"
    INVALID_PATH = "invalid-path"
    INVALID_GLOB = "invalid-glob"
    DUPLICATE_ITEM = "duplicate-item"
    INVALID_TABLE = "invalid-table"
    FORCE_PATHS_NO_MATCH = "force-paths-no-match"
    METADATA_GAP = "metadata-gap"
    UNKNOWN_TASK = "unknown-task"
    BOOLEAN_COMPARED_TO_STRING = "boolean-compared-to-string"
    PLAN_NOT_NEEDED = "plan-not-needed"
    OUTPUT_NOT_FORWARDED = "output-not-forwarded"
    MATRIX_WITHOUT_HAS_TASKS = "matrix-without-has-tasks"
    TASK_UNCONSUMED = "task-unconsumed"
    GATE_MISSING = "gate-missing"
    EXPRESSION_UNREADABLE = "expression-unreadable"
    TABLE_MISSING = "table-missing"
    TABLE_DYNAMIC = "table-dynamic"
    WORKFLOW_UNREADABLE = "workflow-unreadable"


class GapName(StrEnum):
    """The bare name of a metadata gap: the start of its report warning, and its check code."""

    WORKFLOW_MISSING = "workflow-missing"
    WORKFLOW_INVALID = "workflow-invalid"
    JOB_MISSING = "job-missing"
    WORKFLOW_JOBS_MISSING = "workflow-jobs-missing"
    REUSABLE_WORKFLOW_UNRESOLVED = "reusable-workflow-unresolved"
    ACTION_METADATA_UNAVAILABLE = "action-metadata-unavailable"
    ACTION_METADATA_MISSING = "action-metadata-missing"
    ACTION_METADATA_INVALID = "action-metadata-invalid"
    PACKAGE_SCRIPT_CONTEXT_UNRESOLVED = "package-script-execution-context-unresolved"
    PACKAGE_SCRIPT_DEPTH_LIMIT = "package-script-depth-limit"
    PACKAGE_SCRIPT_DYNAMIC_DIRECTORY = "package-script-dynamic-directory"
    PACKAGE_SCRIPT_MISSING = "package-script-missing"
    PACKAGE_MANIFEST_INVALID = "package-manifest-invalid"
    PACKAGE_SCRIPT_ABSENT = "package-script-absent"
    CONTEXT_FILE_DYNAMIC = "context-file-dynamic"
    CONTEXT_FILE_MISSING = "context-file-missing"
    WORKFLOW_SHAPE_UNSUPPORTED = "workflow-shape-unsupported"
    WORKSPACE_MATCH_BOUND = "workspace-match-bound"
    COMMAND_EXPRESSION_UNRESOLVED = "command-expression-unresolved"
    COMPOSITE_ACTION_DEPTH_LIMIT = "composite-action-depth-limit"
    COMPOSITE_ACTION_CYCLE = "composite-action-cycle"


class LookupFailure(StrEnum):
    """Why a lookup of another repository's action or reusable workflow gave no file.

    A library caller's fetcher that answers the documented strings ``"missing"`` and
    ``"invalid"`` keeps working: each member equals its string.
    """

    MISSING = "missing"  # not found, not fetched (yet, or at all), or the fetch failed
    INVALID = "invalid"  # found, but its metadata cannot be read
