"""The task table: fields, bounds and the keys hashed into the selection hash."""

from __future__ import annotations

from typing import Final

from .outputs import (
    OUTPUT_HAS_TASKS,
    OUTPUT_MATRIX,
    OUTPUT_REPORT_PATH,
    OUTPUT_RUN,
    OUTPUT_SELECTED,
    OUTPUT_STATUS,
    OUTPUT_TESTED_SHA,
)

# --------------------------------------------------------------------------------------------
# Task table (docs/reference.md, "Task fields")
# --------------------------------------------------------------------------------------------

TASK_ID_PATTERN: Final = r"[A-Za-z_][A-Za-z0-9_-]{0,63}"
RESERVED_TASK_IDS: Final = (
    "__proto__",
    "prototype",
    "constructor",
    "toString",
    "toLocaleString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    OUTPUT_RUN,
    OUTPUT_SELECTED,
    OUTPUT_MATRIX,
    OUTPUT_HAS_TASKS,
    OUTPUT_STATUS,
    OUTPUT_TESTED_SHA,
    OUTPUT_REPORT_PATH,
)
TASK_FIELD_DESCRIPTION: Final = "description"
TASK_FIELD_JOBS: Final = "jobs"
TASK_FIELD_CONTEXT_FILES: Final = "context_files"
TASK_FIELD_ALWAYS: Final = "always"
TASK_FIELD_FORCE_PATHS: Final = "force_paths"
TASK_FIELDS: Final = (
    TASK_FIELD_DESCRIPTION,
    TASK_FIELD_JOBS,
    TASK_FIELD_CONTEXT_FILES,
    TASK_FIELD_ALWAYS,
    TASK_FIELD_FORCE_PATHS,
)
JOB_REF_FIELD_WORKFLOW: Final = "workflow"
JOB_REF_FIELD_JOB: Final = "job"
JOB_REF_FIELDS: Final = (JOB_REF_FIELD_WORKFLOW, JOB_REF_FIELD_JOB)
# The characters a file path (a workflow, a context file) and a force_paths glob may not hold, as
# the schema's filePath and glob say; in a glob, "\\" is the escape and allowed.
FILE_PATH_FORBIDDEN_CHARACTERS: Final = "\\\x00\r\n"
GLOB_FORBIDDEN_CHARACTERS: Final = "\x00\r\n\u2028\u2029"
PROTECTED_PATH_PREFIX: Final = ".github/workflows/"

# Hostile-input guards for the task table (fail fast, docs/reference.md, "Task fields").
MAX_TASKS_TEXT_BYTES: Final = 1_048_576
MAX_YAML_DEPTH: Final = 64
MAX_YAML_NODES: Final = 200_000
# Workflow and action files may use aliases: the size of the document once every alias is
# expanded, in nodes, is bounded too (an alias bomb is refused, never expanded).
MAX_YAML_EXPANDED_NODES: Final = 200_000

# --------------------------------------------------------------------------------------------
# tasks: keys of the document hashed into selection_hash (docs/reference.md, "Hashes")
# --------------------------------------------------------------------------------------------

SELECTION_KEY_MODEL: Final = "model"
SELECTION_KEY_SKIP_BELOW: Final = "skip_below"
SELECTION_KEY_TASKS: Final = "tasks"
