"""jev-select check: problem codes, messages and exit codes."""

from __future__ import annotations

from typing import Final

# --------------------------------------------------------------------------------------------
# jev-select check (docs/reference.md, "Checking a task table")
# --------------------------------------------------------------------------------------------

COMMAND_CHECK: Final = "check"
CHECK_FORMAT_TEXT: Final = "text"
CHECK_FORMAT_JSON: Final = "json"
CHECK_FORMATS: Final = (CHECK_FORMAT_TEXT, CHECK_FORMAT_JSON)
CHECK_SEVERITY_ERROR: Final = "error"
CHECK_SEVERITY_WARNING: Final = "warning"
CHECK_EXIT_OK: Final = 0
CHECK_EXIT_PROBLEMS: Final = 1
CHECK_EXIT_USAGE: Final = 2
# A bad local command line: argparse's usage on stderr and this exit code (GitHub mode: 1).
USAGE_EXIT_CODE: Final = 2
# The file list of one tree (``git ls-tree -r``): generous, since it is only names.
CHECK_TREE_CAP: Final = 64 * 1_048_576
CHECK_NOT_UTF8: Final = "not-utf8"
CHECK_CODE_PATTERN: Final = r"[a-z0-9]+(?:-[a-z0-9]+)*"
CHECK_LINE_TEMPLATE: Final = "{path}:{line}:{column}: {severity}: {message} [{code}]"
CHECK_JSON_PROBLEM_KEYS: Final = ("severity", "code", "task", "field", "line", "column", "message")
# The second line of a CI input error of field tasks or tasks-file (fixed text, no value).
TASKS_CHECK_HINT: Final = (
    'jev-select: run "jev-select check --tasks-file <file>" on the task table to see the task, '
    "field and line at fault."
)
# Problems of the text itself.
CHECK_BLANK_TABLE: Final = "blank-table"
CHECK_YAML_SYNTAX: Final = "yaml-syntax"
CHECK_YAML_TAB: Final = "yaml-tab"
CHECK_YAML_ALIAS: Final = "yaml-alias"
CHECK_YAML_DIRECTIVE: Final = "yaml-directive"
CHECK_YAML_TAG: Final = "yaml-tag"
CHECK_YAML_DUPLICATE_KEY: Final = "yaml-duplicate-key"
CHECK_YAML_MULTIPLE_DOCUMENTS: Final = "yaml-multiple-documents"
CHECK_YAML_TOO_LARGE: Final = "yaml-too-large"
CHECK_YAML_TOO_DEEP: Final = "yaml-too-deep"
CHECK_YAML_TOO_MANY_NODES: Final = "yaml-too-many-nodes"
CHECK_YAML_SCALAR: Final = "yaml-scalar"
CHECK_YAML_KEY: Final = "yaml-key"
CHECK_NOT_A_MAPPING: Final = "not-a-mapping"
CHECK_ENCLOSING_KEY: Final = "enclosing-key"
CHECK_INVALID_TASK_ID: Final = "invalid-task-id"
CHECK_RESERVED_TASK_ID: Final = "reserved-task-id"
CHECK_DUPLICATE_TASK_ID: Final = "duplicate-task-id"
CHECK_TASK_NOT_A_MAPPING: Final = "task-not-a-mapping"
CHECK_UNKNOWN_FIELD: Final = "unknown-field"
CHECK_MISSING_DESCRIPTION: Final = "missing-description"
CHECK_BLANK_DESCRIPTION: Final = "blank-description"
CHECK_WRONG_TYPE: Final = "wrong-type"
CHECK_EMPTY_JOBS: Final = "empty-jobs"
CHECK_MISSING_WORKFLOW: Final = "missing-workflow"
CHECK_BLANK_JOB: Final = "blank-job"
CHECK_INVALID_PATH: Final = "invalid-path"
CHECK_INVALID_GLOB: Final = "invalid-glob"
CHECK_DUPLICATE_ITEM: Final = "duplicate-item"
# Documented for a refusal no other code names. ``parse_tasks`` refuses by the check's own
# grammar, so there is no such refusal and nothing emits it; it stays in the vocabulary.
CHECK_INVALID_TABLE: Final = "invalid-table"
# Problems found against the repository at REV.
CHECK_FORCE_PATHS_NO_MATCH: Final = "force-paths-no-match"
CHECK_METADATA_GAP: Final = "metadata-gap"
# The gap codes that are errors (CHECK_GAP_ERRORS) come from the gap registry, contracts/gaps.py.
