"""Lint a task table for its author: every problem with its task, field, line and column.

Pure core (docs/reference.md, "Checking a task table"). ``parse_tasks`` answers CI with one fixed
line that never quotes the table; here the reader is the person who wrote the file, so each
problem names the task, the field and the position, and suggests the likely fix. Repository facts
(the files at a revision, file contents, external action metadata) come in through ``Repository``;
nothing here touches git, files or the network.

Every table ``parse_tasks`` refuses gets at least one error here, and a table it accepts gets
none from the text checks (a test holds both directions).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from yaml.nodes import Node

from .. import contracts as c
from ..errors import InputError
from . import yamlstrict
from .check_problems import ERROR, Located, Problem, ProblemLog, closest, sorted_problems
from .check_repository import Repository, check_repository
from .models import TaskTable
from .tasks import compile_glob, parse_tasks

__all__ = ["check_table"]

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
_JOB_REF_FIELDS = (c.JOB_REF_FIELD_WORKFLOW, c.JOB_REF_FIELD_JOB)
_RESERVED_FOLDED = frozenset(task_id.lower() for task_id in c.RESERVED_TASK_IDS)
_FILE_PATH_FORBIDDEN = frozenset("\\\x00\r\n")
_GLOB_FORBIDDEN = frozenset("\x00\r\n\u2028\u2029")


class _Checker(ProblemLog):
    """The text checks: the table's grammar, field by field."""

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

    def task(self, task_id: str, key_node: Node | None, body: Located) -> None:
        if not isinstance(body.value, dict):
            self.add(
                c.CHECK_TASK_NOT_A_MAPPING,
                f'task "{task_id}" must be a mapping with at least a description',
                body.node if body.value is not None else key_node,
                task=task_id,
            )
            return
        suggested_description = False
        fields: dict[str, tuple[Node | None, Located]] = {}
        for field, field_node, value in body.items():
            if field in c.TASK_FIELDS:
                fields[field] = (field_node, value)
                continue
            suggestion = closest(field, c.TASK_FIELDS)
            suggested_description |= suggestion == c.TASK_FIELD_DESCRIPTION
            self.add(
                c.CHECK_UNKNOWN_FIELD,
                _unknown_field_message(field, suggestion, c.TASK_FIELDS),
                field_node,
                task=task_id,
                field=field,
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
        entries: dict[str, tuple[Node | None, Located]] = {}
        suggested_workflow = False
        for key, key_node, entry in item.items():
            if key in _JOB_REF_FIELDS:
                entries[key] = (key_node, entry)
                continue
            suggestion = closest(key, _JOB_REF_FIELDS)
            suggested_workflow |= suggestion == c.JOB_REF_FIELD_WORKFLOW
            self.add(
                c.CHECK_UNKNOWN_FIELD,
                _unknown_field_message(key, suggestion, _JOB_REF_FIELDS),
                key_node,
                task=task_id,
                field=field,
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


def _shape_defect(value: object, forbidden: frozenset[str]) -> str | None:
    if not isinstance(value, str):
        return f"must be text, not {_kind(value)}"
    if value == "":
        return "is empty"
    if value.startswith("/"):
        return 'starts with "/"; paths are relative to the repository root'
    if ".." in value.split("/"):
        return 'has a ".." segment'
    if not forbidden.isdisjoint(value):
        return "holds a character that is not allowed"
    return None


def _path_defect(value: object) -> str | None:
    reason = _shape_defect(value, _FILE_PATH_FORBIDDEN)
    if reason is None and isinstance(value, str) and "\\" in value:
        return 'holds "\\"; separate directories with "/"'
    return reason


def _glob_defect(value: object) -> str | None:
    if isinstance(value, str) and value.startswith("!"):
        return 'starts with "!": negation is not supported (a match can only force a task)'
    reason = _shape_defect(value, _GLOB_FORBIDDEN)
    if reason is None and isinstance(value, str) and not compile_glob(value):
        return "is a glob the matcher refuses (check brackets, braces and extglobs)"
    return reason


def check_table(text: str, repository: Repository | None = None) -> tuple[Problem, ...]:
    """Every problem of the task-table ``text``, in file order.

    The text checks cover the whole grammar of docs/reference.md, "Task fields". With
    ``repository``, a table without errors is also checked against the files at that commit:
    ``force_paths`` that match nothing (warnings) and every metadata gap a plan would report (errors
    for references to files or jobs that are not there).
    """
    trimmed = text.strip(c.WHITESPACE)
    offset = len(text) - len(text.lstrip(c.WHITESPACE))
    checker = _Checker(text, offset)
    if not trimmed:
        checker.problems.append(
            Problem(
                severity=ERROR,
                code=c.CHECK_BLANK_TABLE,
                message="the table is blank; write a mapping of task IDs to tasks (`{}` is an "
                "empty table)",
                line=1,
                column=1,
            )
        )
        return tuple(checker.problems)
    try:
        value = yamlstrict.load_strict(trimmed)
        node = yamlstrict.compose_strict(trimmed)
    except yamlstrict.YamlStrictError as error:
        code, message = _YAML_KINDS.get(error.kind, _YAML_KINDS[yamlstrict.KIND_SYNTAX])
        line, column = checker.positions.of_index(error.index)
        checker.problems.append(
            Problem(severity=ERROR, code=code, message=message, line=line, column=column)
        )
        return tuple(checker.problems)
    document = Located(value, node)
    checker.table(document)
    table: TaskTable | None = None
    try:
        table = parse_tasks(text)
    except InputError:
        if not any(problem.severity == ERROR for problem in checker.problems):
            # A rule the checks above do not name (kept in step by a test): still an error.
            checker.add(
                c.CHECK_INVALID_TABLE,
                "the table breaks a rule of the task-table grammar (docs/reference.md, "
                '"Task fields")',
                node,
            )
    if table is not None and repository is not None:
        check_repository(checker, document, table, repository)
    return sorted_problems(checker.problems)
