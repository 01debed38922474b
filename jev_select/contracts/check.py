"""jev-select check: problem codes, messages and exit codes."""

from __future__ import annotations

from typing import Final

from .vocab import CheckCode, CheckSeverity

# --------------------------------------------------------------------------------------------
# jev-select check (docs/reference.md, "Checking a task table")
# --------------------------------------------------------------------------------------------

COMMAND_CHECK: Final = "check"
CHECK_FORMAT_TEXT: Final = "text"
CHECK_FORMAT_JSON: Final = "json"
CHECK_FORMATS: Final = (CHECK_FORMAT_TEXT, CHECK_FORMAT_JSON)
CHECK_SEVERITY_ERROR: Final = CheckSeverity.ERROR
CHECK_SEVERITY_WARNING: Final = CheckSeverity.WARNING
CHECK_EXIT_OK: Final = 0
CHECK_EXIT_PROBLEMS: Final = 1
CHECK_EXIT_USAGE: Final = 2
# A bad local command line: argparse's usage on stderr and this exit code (GitHub mode: 1).
USAGE_EXIT_CODE: Final = 2
# The file list of one tree (``git ls-tree -r``): generous, since it is only names.
CHECK_TREE_CAP: Final = 64 * 1_048_576
CHECK_NOT_UTF8: Final = CheckCode.NOT_UTF8
CHECK_CODE_PATTERN: Final = r"[a-z0-9]+(?:-[a-z0-9]+)*"
CHECK_LINE_TEMPLATE: Final = "{path}:{line}:{column}: {severity}: {message} [{code}]"
CHECK_JSON_PROBLEM_KEYS: Final = (
    "severity",
    "code",
    "path",
    "task",
    "field",
    "line",
    "column",
    "message",
)
# The second line of a CI input error of field tasks or tasks-file (fixed text, no value).
TASKS_CHECK_HINT: Final = (
    'jev-select: run "jev-select check --tasks-file <file>" on the task table to see the task, '
    "field and line at fault."
)
# Problems of the text itself.
CHECK_BLANK_TABLE: Final = CheckCode.BLANK_TABLE
CHECK_YAML_SYNTAX: Final = CheckCode.YAML_SYNTAX
CHECK_YAML_TAB: Final = CheckCode.YAML_TAB
CHECK_YAML_ALIAS: Final = CheckCode.YAML_ALIAS
CHECK_YAML_DIRECTIVE: Final = CheckCode.YAML_DIRECTIVE
CHECK_YAML_TAG: Final = CheckCode.YAML_TAG
CHECK_YAML_DUPLICATE_KEY: Final = CheckCode.YAML_DUPLICATE_KEY
CHECK_YAML_MULTIPLE_DOCUMENTS: Final = CheckCode.YAML_MULTIPLE_DOCUMENTS
CHECK_YAML_TOO_LARGE: Final = CheckCode.YAML_TOO_LARGE
CHECK_YAML_TOO_DEEP: Final = CheckCode.YAML_TOO_DEEP
CHECK_YAML_TOO_MANY_NODES: Final = CheckCode.YAML_TOO_MANY_NODES
CHECK_YAML_SCALAR: Final = CheckCode.YAML_SCALAR
CHECK_YAML_KEY: Final = CheckCode.YAML_KEY
CHECK_NOT_A_MAPPING: Final = CheckCode.NOT_A_MAPPING
CHECK_ENCLOSING_KEY: Final = CheckCode.ENCLOSING_KEY
CHECK_INVALID_TASK_ID: Final = CheckCode.INVALID_TASK_ID
CHECK_RESERVED_TASK_ID: Final = CheckCode.RESERVED_TASK_ID
CHECK_DUPLICATE_TASK_ID: Final = CheckCode.DUPLICATE_TASK_ID
CHECK_TASK_NOT_A_MAPPING: Final = CheckCode.TASK_NOT_A_MAPPING
CHECK_UNKNOWN_FIELD: Final = CheckCode.UNKNOWN_FIELD
CHECK_MISSING_DESCRIPTION: Final = CheckCode.MISSING_DESCRIPTION
CHECK_BLANK_DESCRIPTION: Final = CheckCode.BLANK_DESCRIPTION
CHECK_WRONG_TYPE: Final = CheckCode.WRONG_TYPE
CHECK_EMPTY_JOBS: Final = CheckCode.EMPTY_JOBS
CHECK_MISSING_WORKFLOW: Final = CheckCode.MISSING_WORKFLOW
CHECK_BLANK_JOB: Final = CheckCode.BLANK_JOB
CHECK_INVALID_PATH: Final = CheckCode.INVALID_PATH
CHECK_INVALID_GLOB: Final = CheckCode.INVALID_GLOB
CHECK_DUPLICATE_ITEM: Final = CheckCode.DUPLICATE_ITEM
# Documented for a refusal no other code names. ``parse_tasks`` refuses by the check's own
# grammar, so there is no such refusal and nothing emits it; it stays in the vocabulary.
CHECK_INVALID_TABLE: Final = CheckCode.INVALID_TABLE
# Problems found against the repository at REV.
CHECK_FORCE_PATHS_NO_MATCH: Final = CheckCode.FORCE_PATHS_NO_MATCH
CHECK_METADATA_GAP: Final = CheckCode.METADATA_GAP
# The gap codes that are errors (CHECK_GAP_ERRORS) come from the gap registry, contracts/gaps.py.

# Problems of the workflows that run the action and consume its plan (docs/reference.md,
# "Checking the workflows"): errors drop a job without doubt, warnings are doubts.
CHECK_UNKNOWN_TASK: Final = CheckCode.UNKNOWN_TASK
CHECK_BOOLEAN_COMPARED_TO_STRING: Final = CheckCode.BOOLEAN_COMPARED_TO_STRING
CHECK_PLAN_NOT_NEEDED: Final = CheckCode.PLAN_NOT_NEEDED
CHECK_OUTPUT_NOT_FORWARDED: Final = CheckCode.OUTPUT_NOT_FORWARDED
CHECK_MATRIX_WITHOUT_HAS_TASKS: Final = CheckCode.MATRIX_WITHOUT_HAS_TASKS
CHECK_TABLE_MISSING: Final = CheckCode.TABLE_MISSING
CHECK_TASK_UNCONSUMED: Final = CheckCode.TASK_UNCONSUMED
CHECK_GATE_MISSING: Final = CheckCode.GATE_MISSING
CHECK_EXPRESSION_UNREADABLE: Final = CheckCode.EXPRESSION_UNREADABLE
CHECK_TABLE_DYNAMIC: Final = CheckCode.TABLE_DYNAMIC
CHECK_WORKFLOW_UNREADABLE: Final = CheckCode.WORKFLOW_UNREADABLE
CHECK_WIRING_ERRORS: Final = frozenset(
    {
        CHECK_UNKNOWN_TASK,
        CHECK_BOOLEAN_COMPARED_TO_STRING,
        CHECK_PLAN_NOT_NEEDED,
        CHECK_OUTPUT_NOT_FORWARDED,
        CHECK_MATRIX_WITHOUT_HAS_TASKS,
        CHECK_TABLE_MISSING,
    }
)
# The workflows GitHub runs: files directly in this directory (never in a subdirectory).
WORKFLOWS_DIRECTORY: Final = ".github/workflows/"
WORKFLOW_SUFFIXES: Final = (".yml", ".yaml")
# A step runs the action when its `uses:` names a repository of this name (any owner, any ref),
# or `./` inside the action's own repository (whose root action.yml is named so).
ACTION_REPOSITORY_NAME: Final = "jev-select"
# The gate job's condition: one of these status functions keeps it from being skipped.
GATE_STATUS_FUNCTIONS: Final = ("always", "cancelled")
# A local check reads the committed files of REV; edits in the work tree are not part of it.
UNCOMMITTED_CHECK_TEMPLATE: Final = (
    "jev-select check: the working tree has uncommitted changes; the check reads {rev} ({sha}) "
    "only, so commit them to have them checked."
)
