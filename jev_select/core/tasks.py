"""The task table: its grammar and normalisation, the selection hash and ``force_paths`` globs.

docs/reference.md, "Task fields", "Hashes". Everything here is pure: the text comes in, a
``TaskTable`` goes out. The grammar is written once, as the problems ``jev-select check`` shows
the author (each with its task, field and position, :func:`read_table`); ``parse_tasks`` is that
grammar for CI: any error is the one diagnostic ``InputError("tasks")``, which never names the
defect. So a table has an error exactly when ``plan`` refuses it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Sequence
from typing import Any

import attrs
from wcmatch import glob as wcglob
from yaml.nodes import Node

from .. import contracts as c
from ..errors import InputError, JevSelectError
from . import yamlstrict
from .check.problems import ERROR, Located, Problem, ProblemLog, closest, table_offset
from .jsonutil import canonical_json, code_unit_key
from .models import JobRef, Task, TaskTable

__all__ = [
    "GLOB_FLAGS",
    "TableReading",
    "compile_glob",
    "compute_selection_hash",
    "match_force_paths",
    "parse_tasks",
    "read_table",
    "selection_hash_text",
]

# minimatch semantics with dot, nonegate and nocomment (docs/reference.md, "Task fields"); never
# NEGATE or IGNORECASE.
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE | wcglob.EXTGLOB | wcglob.FORCEUNIX


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


# --------------------------------------------------------------------------------------------
# The grammar
# --------------------------------------------------------------------------------------------

# Each refusal of the strict YAML reader, as the problem the author sees.
_YAML_KINDS = {
    yamlstrict.KIND_SYNTAX: (c.CHECK_YAML_SYNTAX, "YAML syntax error"),
    yamlstrict.KIND_TAB: (
        c.CHECK_YAML_TAB,
        "a tab character cannot indent YAML; indent with spaces",
    ),
    yamlstrict.KIND_ALIAS: (c.CHECK_YAML_ALIAS, "aliases (*name) are not allowed in the table"),
    yamlstrict.KIND_DIRECTIVE: (
        c.CHECK_YAML_DIRECTIVE,
        "directives (%YAML, %TAG) are not allowed in the table",
    ),
    yamlstrict.KIND_TAG: (
        c.CHECK_YAML_TAG,
        "only the tags !!str, !!int, !!float, !!bool, !!null, !!map and !!seq are allowed",
    ),
    yamlstrict.KIND_DUPLICATE_KEY: (
        c.CHECK_YAML_DUPLICATE_KEY,
        "this key repeats an earlier key of the same mapping",
    ),
    yamlstrict.KIND_MULTIPLE_DOCUMENTS: (
        c.CHECK_YAML_MULTIPLE_DOCUMENTS,
        "the table must be a single YAML document",
    ),
    yamlstrict.KIND_TOO_LARGE: (c.CHECK_YAML_TOO_LARGE, "the table is larger than 1 MiB"),
    yamlstrict.KIND_TOO_DEEP: (c.CHECK_YAML_TOO_DEEP, "the table is nested too deeply"),
    yamlstrict.KIND_TOO_MANY_NODES: (c.CHECK_YAML_TOO_MANY_NODES, "the table has too many values"),
    yamlstrict.KIND_SCALAR: (
        c.CHECK_YAML_SCALAR,
        "this value does not fit its explicit tag, or holds an unpaired surrogate escape",
    ),
    yamlstrict.KIND_KEY: (
        c.CHECK_YAML_KEY,
        "a mapping key must be a plain value, not a list or mapping",
    ),
}

# Plain words YAML 1.1 read as booleans; the table's YAML 1.2 reads them as text.
_YAML11_BOOLEAN_WORDS = frozenset({"yes", "no", "on", "off", "y", "n", "true", "false"})
_RESERVED_FOLDED = frozenset(task_id.lower() for task_id in c.RESERVED_TASK_IDS)


class _FirstError(JevSelectError):
    """Ends a reading at its first error: CI needs no more than that one (``parse_tasks``)."""


class _Grammar(ProblemLog):
    """The task-table grammar, field by field: each defect is a problem at its node."""

    def __init__(self, text: str, offset: int, *, stop_at_error: bool = False) -> None:
        super().__init__(text, offset)
        self._stop_at_error = stop_at_error

    def add(
        self,
        code: str,
        message: str,
        node: Node | None,
        *,
        task: str | None = None,
        field: str | None = None,
        severity: str = ERROR,
    ) -> None:
        super().add(code, message, node, task=task, field=field, severity=severity)
        if self._stop_at_error and severity == ERROR:
            raise _FirstError

    # -- the table ------------------------------------------------------------------------

    def table(self, document: Located) -> None:
        if not isinstance(document.value, dict):
            self.add(
                c.CHECK_NOT_A_MAPPING,
                "the table must be a mapping of task IDs to task objects, such as "
                "`unit: {description: ...}`",
                document.node,
            )
            return
        seen: dict[str, str] = {}
        for task_id, key_node, body in document.items():
            if self._enclosing_key(task_id, key_node, body):
                continue
            self.task_id(task_id, key_node, seen)
            self.task(task_id, key_node, body)

    def _enclosing_key(self, task_id: str, key_node: Node | None, body: Located) -> bool:
        # `tasks: {unit: {...}}`: a wrapper key whose entries all look like tasks.
        value = body.value
        if not isinstance(value, dict) or not value or set(value) & set(c.TASK_FIELDS):
            return False
        if not all(
            isinstance(inner, dict) and set(inner) & set(c.TASK_FIELDS) for inner in value.values()
        ):
            return False
        self.add(
            c.CHECK_ENCLOSING_KEY,
            f'"{task_id}" wraps the tasks: the table has no enclosing key; each top-level key '
            "is a task ID, so move the tasks one level up",
            key_node,
            task=task_id,
        )
        return True

    def task_id(self, task_id: str, key_node: Node | None, seen: dict[str, str]) -> None:
        if not re.fullmatch(c.TASK_ID_PATTERN, task_id, re.ASCII):
            self.add(
                c.CHECK_INVALID_TASK_ID,
                f'task ID "{task_id}" must start with a letter or "_" and continue with letters, '
                'digits, "_" or "-" (at most 64 characters)',
                key_node,
                task=task_id,
            )
            return
        folded = task_id.lower()
        if folded in _RESERVED_FOLDED:
            self.add(
                c.CHECK_RESERVED_TASK_ID,
                f'task ID "{task_id}" is reserved (compared ignoring case); choose another name',
                key_node,
                task=task_id,
            )
            return
        if folded in seen:
            self.add(
                c.CHECK_DUPLICATE_TASK_ID,
                f'task ID "{task_id}" repeats "{seen[folded]}" (IDs are compared ignoring case)',
                key_node,
                task=task_id,
            )
            return
        seen[folded] = task_id

    def _known_keys(
        self,
        mapping: Located,
        known: Sequence[str],
        required: str,
        *,
        task_id: str,
        field: str | None,
    ) -> tuple[dict[str, tuple[Node | None, Located]], bool]:
        """The keys of ``mapping`` that are in ``known``; each other key is an unknown-field
        problem with the closest known key suggested. The flag says whether ``required`` was the
        suggestion for some unknown key, so that its absence is not reported a second time.
        ``field`` is the problem's field (``None``: the unknown key itself)."""
        found: dict[str, tuple[Node | None, Located]] = {}
        suggested_required = False
        for key, key_node, value in mapping.items():
            if key in known:
                found[key] = (key_node, value)
                continue
            suggestion = closest(key, known)
            suggested_required |= suggestion == required
            self.add(
                c.CHECK_UNKNOWN_FIELD,
                _unknown_field_message(key, suggestion, known),
                key_node,
                task=task_id,
                field=key if field is None else field,
            )
        return found, suggested_required

    def task(self, task_id: str, key_node: Node | None, body: Located) -> None:
        if not isinstance(body.value, dict):
            self.add(
                c.CHECK_TASK_NOT_A_MAPPING,
                f'task "{task_id}" must be a mapping with at least a description',
                body.node if body.value is not None else key_node,
                task=task_id,
            )
            return
        fields, suggested_description = self._known_keys(
            body, c.TASK_FIELDS, c.TASK_FIELD_DESCRIPTION, task_id=task_id, field=None
        )
        if c.TASK_FIELD_DESCRIPTION in fields:
            self.description(task_id, *fields[c.TASK_FIELD_DESCRIPTION])
        elif not suggested_description:
            self.add(
                c.CHECK_MISSING_DESCRIPTION,
                f'task "{task_id}" has no description; add `description:` with the task\'s '
                "verification scope",
                key_node,
                task=task_id,
            )
        if c.TASK_FIELD_ALWAYS in fields:
            self.always(task_id, fields[c.TASK_FIELD_ALWAYS][1])
        if c.TASK_FIELD_JOBS in fields:
            self.jobs(task_id, *fields[c.TASK_FIELD_JOBS])
        if c.TASK_FIELD_CONTEXT_FILES in fields:
            self.path_list(
                task_id, c.TASK_FIELD_CONTEXT_FILES, fields[c.TASK_FIELD_CONTEXT_FILES][1]
            )
        if c.TASK_FIELD_FORCE_PATHS in fields:
            self.path_list(task_id, c.TASK_FIELD_FORCE_PATHS, fields[c.TASK_FIELD_FORCE_PATHS][1])

    def description(self, task_id: str, _key: Node | None, value: Located) -> None:
        field = c.TASK_FIELD_DESCRIPTION
        if not isinstance(value.value, str):
            self.add(
                c.CHECK_WRONG_TYPE,
                f'"{field}" must be text, not {_kind(value.value)}',
                value.node,
                task=task_id,
                field=field,
            )
        elif not value.value.strip(c.WHITESPACE):
            self.add(
                c.CHECK_BLANK_DESCRIPTION,
                f'"{field}" is blank; describe what the task verifies',
                value.node,
                task=task_id,
                field=field,
            )

    def always(self, task_id: str, value: Located) -> None:
        if isinstance(value.value, bool):
            return
        field = c.TASK_FIELD_ALWAYS
        message = f'"{field}" must be true or false, not {_kind(value.value)}'
        if isinstance(value.value, str) and value.value.lower() in _YAML11_BOOLEAN_WORDS:
            message += f' ("{value.value}" is text in the table\'s YAML 1.2; write true or false)'
        self.add(c.CHECK_WRONG_TYPE, message, value.node, task=task_id, field=field)

    def jobs(self, task_id: str, key_node: Node | None, value: Located) -> None:
        field = c.TASK_FIELD_JOBS
        if not isinstance(value.value, list):
            self.add(
                c.CHECK_WRONG_TYPE,
                f'"{field}" must be a list of job references, not {_kind(value.value)}',
                value.node if value.value is not None else key_node,
                task=task_id,
                field=field,
            )
            return
        if not value.value:
            self.add(
                c.CHECK_EMPTY_JOBS,
                f'"{field}" must list at least one job reference; remove the field to reference '
                "none",
                value.node,
                task=task_id,
                field=field,
            )
            return
        for item in value.elements():
            self.job_ref(task_id, item)

    def job_ref(self, task_id: str, item: Located) -> None:
        field = c.TASK_FIELD_JOBS
        if not isinstance(item.value, dict):
            self.add(
                c.CHECK_WRONG_TYPE,
                "a job reference must be a mapping with `workflow:` and an optional `job:`, not "
                + _kind(item.value),
                item.node,
                task=task_id,
                field=field,
            )
            return
        entries, suggested_workflow = self._known_keys(
            item, c.JOB_REF_FIELDS, c.JOB_REF_FIELD_WORKFLOW, task_id=task_id, field=field
        )
        workflow = entries.get(c.JOB_REF_FIELD_WORKFLOW)
        if workflow is None and not suggested_workflow:
            self.add(
                c.CHECK_MISSING_WORKFLOW,
                "this job reference has no `workflow:` (the path of a workflow file)",
                item.node,
                task=task_id,
                field=field,
            )
        elif workflow is not None:
            reason = _path_defect(workflow[1].value)
            if reason is not None:
                self.add(
                    c.CHECK_INVALID_PATH,
                    f'"{c.JOB_REF_FIELD_WORKFLOW}" {reason}',
                    workflow[1].node,
                    task=task_id,
                    field=field,
                )
        job = entries.get(c.JOB_REF_FIELD_JOB)
        if job is not None:
            job_value = job[1].value
            if not isinstance(job_value, str):
                self.add(
                    c.CHECK_WRONG_TYPE,
                    f'"{c.JOB_REF_FIELD_JOB}" must be a job key (text), not {_kind(job_value)}; '
                    "remove it to reference every job of the workflow",
                    job[1].node if job_value is not None else job[0],
                    task=task_id,
                    field=field,
                )
            elif not job_value.strip(c.WHITESPACE):
                self.add(
                    c.CHECK_BLANK_JOB,
                    f'"{c.JOB_REF_FIELD_JOB}" is blank',
                    job[1].node,
                    task=task_id,
                    field=field,
                )

    def path_list(self, task_id: str, field: str, value: Located) -> None:
        globs = field == c.TASK_FIELD_FORCE_PATHS
        noun = "globs" if globs else "file paths"
        if not isinstance(value.value, list):
            self.add(
                c.CHECK_WRONG_TYPE,
                f'"{field}" must be a list of {noun}, not {_kind(value.value)}',
                value.node,
                task=task_id,
                field=field,
            )
            return
        seen: set[str] = set()
        for item in value.elements():
            reason = _glob_defect(item.value) if globs else _path_defect(item.value)
            if reason is not None:
                self.add(
                    c.CHECK_INVALID_GLOB if globs else c.CHECK_INVALID_PATH,
                    f"this item {reason}",
                    item.node,
                    task=task_id,
                    field=field,
                )
                continue
            if item.value in seen:
                self.add(
                    c.CHECK_DUPLICATE_ITEM,
                    f'"{item.value}" is listed twice in "{field}"',
                    item.node,
                    task=task_id,
                    field=field,
                )
            seen.add(item.value)


def _unknown_field_message(field: str, suggestion: str | None, known: Sequence[str]) -> str:
    message = f'unknown field "{field}"'
    if suggestion is not None:
        return message + f'; did you mean "{suggestion}"?'
    return message + "; the fields are " + ", ".join(f'"{name}"' for name in known)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


def _shape_defect(value: object, forbidden: str) -> str | None:
    if not isinstance(value, str):
        return f"must be text, not {_kind(value)}"
    if value == "":
        return "is empty"
    if value.startswith("/"):
        return 'starts with "/"; paths are relative to the repository root'
    if ".." in value.split("/"):
        return 'has a ".." segment'
    if any(character in forbidden for character in value):
        return "holds a character that is not allowed"
    return None


def _path_defect(value: object) -> str | None:
    reason = _shape_defect(value, c.FILE_PATH_FORBIDDEN_CHARACTERS)
    if reason is None and isinstance(value, str) and "\\" in value:
        return 'holds "\\"; separate directories with "/"'
    return reason


def _glob_defect(value: object) -> str | None:
    if isinstance(value, str) and value.startswith("!"):
        return 'starts with "!": negation is not supported (a match can only force a task)'
    reason = _shape_defect(value, c.GLOB_FORBIDDEN_CHARACTERS)
    if reason is None and isinstance(value, str) and not compile_glob(value):
        return "is a glob the matcher refuses (check brackets, braces and extglobs)"
    return reason


@attrs.frozen
class TableReading:
    """What the grammar makes of a task-table text.

    ``problems`` are in the order the grammar meets them. ``document`` is the YAML value beside
    its nodes, None when the text is blank or not strict YAML. ``table`` is the normalised
    table, None exactly when a problem is an error (today every problem of the text is one).
    """

    problems: tuple[Problem, ...]
    document: Located | None
    table: TaskTable | None


def read_table(text: str) -> TableReading:
    """Read the task-table ``text`` with the grammar of docs/reference.md, "Task fields": every
    problem, each placed at a line and column of ``text`` as given.

    The YAML is parsed once, with surrounding whitespace trimmed.
    """
    return _read(text, stop_at_error=False)


def _read(text: str, *, stop_at_error: bool) -> TableReading:
    grammar = _Grammar(text, table_offset(text), stop_at_error=stop_at_error)
    trimmed = text.strip(c.WHITESPACE)
    if not trimmed:
        grammar.problems.append(
            Problem(
                severity=ERROR,
                code=c.CHECK_BLANK_TABLE,
                message="the table is blank; write a mapping of task IDs to tasks (`{}` is an "
                "empty table)",
                line=1,
                column=1,
            )
        )
        return TableReading(problems=tuple(grammar.problems), document=None, table=None)
    try:
        value, node = yamlstrict.parse_strict(trimmed)
    except yamlstrict.YamlStrictError as error:
        code, message = _YAML_KINDS.get(error.code, _YAML_KINDS[yamlstrict.KIND_SYNTAX])
        line, column = grammar.positions.of_index(error.index)
        grammar.problems.append(
            Problem(severity=ERROR, code=code, message=message, line=line, column=column)
        )
        return TableReading(problems=tuple(grammar.problems), document=None, table=None)
    document = Located(value, node)
    with contextlib.suppress(_FirstError):
        grammar.table(document)
    refused = any(problem.severity == ERROR for problem in grammar.problems)
    return TableReading(
        problems=tuple(grammar.problems),
        document=document,
        table=None if refused else _normalised(value),
    )


def _normalised(document: dict[str, Any]) -> TaskTable:
    """The table of a document the grammar accepted: defaults filled in, tasks in ID order."""
    tasks = [_task(task_id, body) for task_id, body in document.items()]
    tasks.sort(key=lambda task: code_unit_key(task.id))
    return TaskTable(tasks=tuple(tasks))


def _task(task_id: str, body: dict[str, Any]) -> Task:
    jobs = body.get(c.TASK_FIELD_JOBS)
    context_files = body.get(c.TASK_FIELD_CONTEXT_FILES)
    force_paths = body.get(c.TASK_FIELD_FORCE_PATHS)
    return Task(
        id=task_id,
        description=body[c.TASK_FIELD_DESCRIPTION],
        always=body.get(c.TASK_FIELD_ALWAYS, False),
        jobs=(
            tuple(
                JobRef(workflow=ref[c.JOB_REF_FIELD_WORKFLOW], job=ref.get(c.JOB_REF_FIELD_JOB))
                for ref in jobs
            )
            if jobs is not None
            else None
        ),
        context_files=tuple(context_files) if context_files is not None else None,
        force_paths=tuple(force_paths) if force_paths is not None else None,
    )


def parse_tasks(text: str) -> TaskTable:
    """Validate and normalise the task-table YAML (docs/reference.md, "Task fields").

    Raises ``InputError("tasks")`` when the grammar finds any problem: blank text, YAML outside
    the strict dialect, a top level that is not a mapping, a bad, duplicate or reserved ID
    (ignoring ASCII case), an unknown field, a wrong type, a bad path or glob, or a glob the
    matcher refuses. The error names none of them; ``jev-select check`` does.
    """
    table = _read(text, stop_at_error=True).table
    if table is None:
        raise InputError(c.INPUT_TASKS)
    return table


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
