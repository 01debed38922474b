"""The task table: validation and normalisation, the selection hash and ``force_paths`` globs.

docs/reference.md, "Task fields", "Hashes". Everything here is pure: the text comes in, a
``TaskTable`` goes out, and any defect of the text is the one diagnostic ``InputError("tasks")``,
which never names the defect.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from wcmatch import glob as wcglob

from .. import contracts as c
from ..errors import InputError
from .jsonutil import canonical_json, code_unit_key
from .models import JobRef, Task, TaskTable
from .yamlstrict import YamlStrictError, load_strict

__all__ = [
    "GLOB_FLAGS",
    "compile_glob",
    "compute_selection_hash",
    "match_force_paths",
    "parse_tasks",
    "selection_hash_text",
]

# minimatch semantics with dot, nonegate and nocomment (docs/reference.md, "Task fields"); never
# NEGATE or IGNORECASE.
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE | wcglob.EXTGLOB | wcglob.FORCEUNIX

_FILE_PATH_FORBIDDEN = frozenset("\\\x00\r\n")
_GLOB_FORBIDDEN = frozenset("\x00\r\n\u2028\u2029")
_RESERVED_FOLDED = frozenset(task_id.lower() for task_id in c.RESERVED_TASK_IDS)


@functools.cache
def _tasks_validator() -> Draft202012Validator:
    schema_text = (resources.files("jev_select") / "schemas" / c.TASKS_SCHEMA_FILE).read_text(
        encoding="utf-8"
    )
    return Draft202012Validator(json.loads(schema_text))


@functools.lru_cache(maxsize=4096)
def _compiled_glob(pattern: str) -> Any:
    return wcglob.compile(pattern, flags=GLOB_FLAGS)


def compile_glob(pattern: str) -> bool:
    """Whether the matcher accepts ``pattern`` (a refused pattern is a ``tasks`` error)."""
    try:
        _compiled_glob(pattern)
    except Exception:
        # wcmatch signals refusals with several exception types (brace-expansion limit, bad
        # ranges); any of them means the pattern cannot be used.
        return False
    return True


def match_force_paths(patterns: Sequence[str], paths: Sequence[str]) -> bool:
    """Whether any glob matches any changed path (docs/reference.md, "Task fields").

    A pattern the matcher refuses counts as a match: validation rejects such patterns, and if
    one slips through, keeping the task running is the safe reading.
    """
    for pattern in patterns:
        try:
            matcher = _compiled_glob(pattern)
        except Exception:
            return True
        if any(matcher.match(path) for path in paths):
            return True
    return False


def _is_blank(text: str) -> bool:
    return not text.strip(c.WHITESPACE)


def _has_dot_dot_segment(text: str) -> bool:
    return ".." in text.split("/")


def _is_file_path(value: object) -> bool:
    return (
        isinstance(value, str)
        and value != ""
        and not value.startswith("/")
        and not _has_dot_dot_segment(value)
        and _FILE_PATH_FORBIDDEN.isdisjoint(value)
    )


def _is_glob(value: object) -> bool:
    return (
        isinstance(value, str)
        and value != ""
        and not value.startswith(("!", "/"))
        and not _has_dot_dot_segment(value)
        and _GLOB_FORBIDDEN.isdisjoint(value)
        and compile_glob(value)
    )


def _unique_strings(values: Sequence[object]) -> bool:
    return len(set(values)) == len(values)


def _check_task_id(task_id: str, seen_folded: set[str]) -> None:
    if not re.fullmatch(c.TASK_ID_PATTERN, task_id, re.ASCII):
        raise InputError(c.INPUT_TASKS)
    folded = task_id.lower()
    if folded in _RESERVED_FOLDED or folded in seen_folded:
        raise InputError(c.INPUT_TASKS)
    seen_folded.add(folded)


def _job_refs(value: object) -> tuple[JobRef, ...]:
    if not isinstance(value, list) or not value:
        raise InputError(c.INPUT_TASKS)
    refs: list[JobRef] = []
    for item in value:
        if not isinstance(item, dict) or not set(item) <= {
            c.JOB_REF_FIELD_WORKFLOW,
            c.JOB_REF_FIELD_JOB,
        }:
            raise InputError(c.INPUT_TASKS)
        workflow = item.get(c.JOB_REF_FIELD_WORKFLOW)
        if not _is_file_path(workflow):
            raise InputError(c.INPUT_TASKS)
        job = item.get(c.JOB_REF_FIELD_JOB)
        if job is None and c.JOB_REF_FIELD_JOB in item:
            raise InputError(c.INPUT_TASKS)
        if job is not None and (not isinstance(job, str) or _is_blank(job)):
            raise InputError(c.INPUT_TASKS)
        refs.append(JobRef(workflow=str(workflow), job=job))
    return tuple(refs)


def _path_list(value: object, *, is_valid: Callable[[object], bool]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(is_valid(item) for item in value):
        raise InputError(c.INPUT_TASKS)
    if not _unique_strings(value):
        raise InputError(c.INPUT_TASKS)
    return tuple(value)


def _build_task(task_id: str, body: object) -> Task:
    if not isinstance(body, dict) or not set(body) <= set(c.TASK_FIELDS):
        raise InputError(c.INPUT_TASKS)
    description = body.get(c.TASK_FIELD_DESCRIPTION)
    if not isinstance(description, str) or _is_blank(description):
        raise InputError(c.INPUT_TASKS)
    always = body.get(c.TASK_FIELD_ALWAYS, False)
    if not isinstance(always, bool):
        raise InputError(c.INPUT_TASKS)
    jobs = _job_refs(body[c.TASK_FIELD_JOBS]) if c.TASK_FIELD_JOBS in body else None
    context_files = (
        _path_list(body[c.TASK_FIELD_CONTEXT_FILES], is_valid=_is_file_path)
        if c.TASK_FIELD_CONTEXT_FILES in body
        else None
    )
    force_paths = (
        _path_list(body[c.TASK_FIELD_FORCE_PATHS], is_valid=_is_glob)
        if c.TASK_FIELD_FORCE_PATHS in body
        else None
    )
    return Task(
        id=task_id,
        description=description,
        always=always,
        jobs=jobs,
        context_files=context_files,
        force_paths=force_paths,
    )


def parse_tasks(text: str) -> TaskTable:
    """Validate and normalise the task-table YAML (docs/reference.md, "Task fields").

    Raises ``InputError("tasks")`` for every defect: blank text, YAML outside the strict dialect,
    a top level that is not a mapping, a schema violation, a bad, duplicate or reserved ID
    (ignoring ASCII case), a bad path or glob, or a glob the matcher refuses.
    """
    trimmed = text.strip(c.WHITESPACE)
    if not trimmed:
        raise InputError(c.INPUT_TASKS)
    try:
        document = load_strict(trimmed)
    except YamlStrictError:
        raise InputError(c.INPUT_TASKS) from None
    if not isinstance(document, dict):
        raise InputError(c.INPUT_TASKS)
    if not _tasks_validator().is_valid(document):
        raise InputError(c.INPUT_TASKS)
    # The schema documents the shape; the checks below are the exact rules (case-insensitive
    # IDs, whole-string matching, the documented whitespace set) and do not rely on it.
    seen_folded: set[str] = set()
    tasks: list[Task] = []
    for task_id, body in document.items():
        _check_task_id(task_id, seen_folded)
        tasks.append(_build_task(task_id, body))
    tasks.sort(key=lambda task: code_unit_key(task.id))
    return TaskTable(tasks=tuple(tasks))


def _selection_document(model: str, skip_below: float, tasks: TaskTable) -> dict[str, Any]:
    return {
        c.SELECTION_KEY_MODEL: model,
        c.SELECTION_KEY_SKIP_BELOW: skip_below,
        c.SELECTION_KEY_TASKS: tasks.to_json(),
    }


def selection_hash_text(model: str, skip_below: float, tasks: TaskTable) -> str:
    """The exact canonical JSON text that ``compute_selection_hash`` hashes."""
    return canonical_json(_selection_document(model, skip_below, tasks))


def compute_selection_hash(model: str, skip_below: float, tasks: TaskTable) -> str:
    """SHA-256 (lowercase hex) of the canonical selection document (docs/reference.md, "Hashes")."""
    return hashlib.sha256(selection_hash_text(model, skip_below, tasks).encode("utf-8")).hexdigest()
