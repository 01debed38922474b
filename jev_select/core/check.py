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

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from yaml.nodes import MappingNode, Node, SequenceNode

from .. import contracts as c
from ..errors import InputError
from . import yamlstrict
from .evidence import FetchAction, ReadFile, resolve_metadata
from .models import TaskTable
from .tasks import compile_glob, match_force_paths, parse_tasks

__all__ = [
    "Problem",
    "Repository",
    "check_exit_code",
    "check_table",
    "problems_json",
    "problems_text",
]

ERROR = c.CHECK_SEVERITY_ERROR
WARNING = c.CHECK_SEVERITY_WARNING

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
_GAP_CODE = re.compile(c.CHECK_CODE_PATTERN)


@attrs.frozen
class Problem:
    """One finding. ``line`` and ``column`` are 1-based; ``None`` when there is no position."""

    severity: str
    code: str
    message: str
    task: str | None = None
    field: str | None = None
    line: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "task": self.task,
            "field": self.field,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


@attrs.frozen
class Repository:
    """What a check may know about the repository at one commit."""

    commit: str
    paths: tuple[str, ...]  # every file path at the commit
    read_file: ReadFile  # a path at the commit -> bytes, or None
    fetch_action: FetchAction
    repository: str = c.LOCAL_REPOSITORY_NAME


class _Positions:
    """Maps character offsets of the trimmed text back to lines and columns of the file."""

    def __init__(self, text: str, offset: int) -> None:
        prefix = text[:offset]
        self._lines = 0
        self._column = 0
        # PyYAML's own line counting: CR LF is one break, and a BOM takes no column.
        for index, character in enumerate(prefix):
            following = text[index + 1] if index + 1 < len(text) else ""
            if character in "\n\x85\u2028\u2029" or (character == "\r" and following != "\n"):
                self._lines += 1
                self._column = 0
            elif character != "\ufeff":
                self._column += 1
        self._trimmed = text[offset:]

    def of_mark(self, line: int, column: int) -> tuple[int, int]:
        if line == 0:
            column += self._column
        return self._lines + line + 1, column + 1

    def of_index(self, index: int | None) -> tuple[int, int]:
        if index is None:
            return 1, 1
        line = 0
        column = 0
        text = self._trimmed
        for position in range(min(index, len(text))):
            character = text[position]
            following = text[position + 1] if position + 1 < len(text) else ""
            if character in "\n\x85\u2028\u2029" or (character == "\r" and following != "\n"):
                line += 1
                column = 0
            elif character != "\ufeff":
                column += 1
        return self.of_mark(line, column)


class _Located:
    """A constructed value and its node, walked side by side (keys keep document order)."""

    def __init__(self, value: Any, node: Node | None) -> None:
        self.value = value
        self.node = node

    def items(self) -> list[tuple[str, Node | None, _Located]]:
        """(key, key node, located value) of a mapping, in document order."""
        pairs = self.node.value if isinstance(self.node, MappingNode) else []
        result: list[tuple[str, Node | None, _Located]] = []
        for index, (key, value) in enumerate(self.value.items()):
            key_node, value_node = pairs[index] if index < len(pairs) else (None, None)
            result.append((key, key_node, _Located(value, value_node)))
        return result

    def elements(self) -> list[_Located]:
        nodes = self.node.value if isinstance(self.node, SequenceNode) else []
        return [
            _Located(item, nodes[index] if index < len(nodes) else None)
            for index, item in enumerate(self.value)
        ]


class _Checker:
    def __init__(self, text: str, offset: int) -> None:
        self.positions = _Positions(text, offset)
        self.problems: list[Problem] = []

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
        line, column = (
            self.positions.of_mark(node.start_mark.line, node.start_mark.column)
            if node is not None and node.start_mark is not None
            else (None, None)
        )
        self.problems.append(
            Problem(
                severity=severity,
                code=code,
                message=message,
                task=task,
                field=field,
                line=line,
                column=column,
            )
        )

    # -- the table ------------------------------------------------------------------------

    def table(self, document: _Located) -> None:
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

    def _enclosing_key(self, task_id: str, key_node: Node | None, body: _Located) -> bool:
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

    def task(self, task_id: str, key_node: Node | None, body: _Located) -> None:
        if not isinstance(body.value, dict):
            self.add(
                c.CHECK_TASK_NOT_A_MAPPING,
                f'task "{task_id}" must be a mapping with at least a description',
                body.node if body.value is not None else key_node,
                task=task_id,
            )
            return
        suggested_description = False
        fields: dict[str, tuple[Node | None, _Located]] = {}
        for field, field_node, value in body.items():
            if field in c.TASK_FIELDS:
                fields[field] = (field_node, value)
                continue
            suggestion = _closest(field, c.TASK_FIELDS)
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

    def description(self, task_id: str, _key: Node | None, value: _Located) -> None:
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

    def always(self, task_id: str, value: _Located) -> None:
        if isinstance(value.value, bool):
            return
        field = c.TASK_FIELD_ALWAYS
        message = f'"{field}" must be true or false, not {_kind(value.value)}'
        if isinstance(value.value, str) and value.value.lower() in _YAML11_BOOLEAN_WORDS:
            message += f' ("{value.value}" is text in the table\'s YAML 1.2; write true or false)'
        self.add(c.CHECK_WRONG_TYPE, message, value.node, task=task_id, field=field)

    def jobs(self, task_id: str, key_node: Node | None, value: _Located) -> None:
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

    def job_ref(self, task_id: str, item: _Located) -> None:
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
        entries: dict[str, tuple[Node | None, _Located]] = {}
        suggested_workflow = False
        for key, key_node, entry in item.items():
            if key in _JOB_REF_FIELDS:
                entries[key] = (key_node, entry)
                continue
            suggestion = _closest(key, _JOB_REF_FIELDS)
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

    def path_list(self, task_id: str, field: str, value: _Located) -> None:
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


def _closest(word: str, choices: Sequence[str]) -> str | None:
    matches = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return matches[0] if matches else None


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


# ---------------------------------------------------------------------------------------------
# Repository checks
# ---------------------------------------------------------------------------------------------


def _node_at(document: _Located, *path: str | int) -> Node | None:
    current: _Located | None = document
    for step in path:
        if current is None:
            return None
        if isinstance(step, int):
            if not isinstance(current.value, list):
                return None
            elements = current.elements()
            current = elements[step] if step < len(elements) else None
        else:
            if not isinstance(current.value, dict):
                return None
            current = next((value for key, _node, value in current.items() if key == step), None)
    return current.node if current is not None else None


def _gap_code(gap: str) -> tuple[str, str]:
    name, _, detail = gap.partition(":")
    if _GAP_CODE.fullmatch(name) is None:
        return c.CHECK_METADATA_GAP, gap
    return name, detail


def _workflow_job_keys(repository: Repository, workflow: str) -> dict[str, str | None]:
    """Job key -> job ``name:`` of a workflow at the commit; empty when it cannot be read."""
    data = repository.read_file(workflow.removeprefix("./"))
    if data is None:
        return {}
    try:
        # A workflow file, not the table: aliases are read as GitHub reads them.
        document = yamlstrict.load_strict(data.decode("utf-8-sig"), aliases=True)
    except (yamlstrict.YamlStrictError, UnicodeDecodeError):
        return {}
    jobs = document.get("jobs") if isinstance(document, dict) else None
    if not isinstance(jobs, dict):
        return {}
    return {
        key: (
            body.get("name")
            if isinstance(body, dict) and isinstance(body.get("name"), str)
            else None
        )
        for key, body in jobs.items()
    }


def _job_suggestion(repository: Repository, workflow: str, job: str) -> str:
    keys = _workflow_job_keys(repository, workflow)
    named = [key for key, name in keys.items() if name is not None and name == job]
    if named:
        return f'; "{job}" is the name of job "{named[0]}": reference the job key'
    folded = [key for key, name in keys.items() if name is not None and name.lower() == job.lower()]
    if folded:
        return f'; did you mean job "{folded[0]}" (named "{keys[folded[0]]}")?'
    closest = _closest(job, list(keys))
    if closest is not None:
        return f'; did you mean "{closest}"?'
    if keys:
        return "; the jobs are " + ", ".join(f'"{key}"' for key in list(keys)[:10])
    return ""


def _gap_message(code: str, detail: str, repository: Repository) -> str:
    if code == "workflow-missing":
        return f'workflow "{detail}" does not exist at {repository.commit[:12]}'
    if code == "workflow-invalid":
        return f'workflow "{detail}" is not a YAML mapping the strict loader accepts'
    if code == "workflow-jobs-missing":
        return f'workflow "{detail}" has no jobs'
    if code == "job-missing":
        workflow, _, job = detail.rpartition("#")
        return f'job "{job}" does not exist in "{workflow}"' + _job_suggestion(
            repository, workflow, job
        )
    if code == "context-file-missing":
        return (
            f'context file "{detail}" does not exist at {repository.commit[:12]} '
            "(or is over 1 MiB, or not UTF-8)"
        )
    if code == "context-file-dynamic":
        return f'context file "{detail}" holds an expression or is not a normalised path'
    return (
        f"metadata gap {code}" + (f' "{detail}"' if detail else "") + "; the task will always run"
    )


def _gap_node(document: _Located, task_id: str, code: str, detail: str) -> tuple[Node | None, str]:
    task = document.value.get(task_id) if isinstance(document.value, dict) else None
    if isinstance(task, dict):
        if code.startswith("context-file") and isinstance(
            task.get(c.TASK_FIELD_CONTEXT_FILES), list
        ):
            items = task[c.TASK_FIELD_CONTEXT_FILES]
            for index, item in enumerate(items):
                if item == detail or (isinstance(item, str) and item.removeprefix("./") == detail):
                    return _node_at(
                        document, task_id, c.TASK_FIELD_CONTEXT_FILES, index
                    ), c.TASK_FIELD_CONTEXT_FILES
        refs = task.get(c.TASK_FIELD_JOBS)
        if isinstance(refs, list):
            workflow, _, job = detail.rpartition("#") if code == "job-missing" else (detail, "", "")
            for index, ref in enumerate(refs):
                if not isinstance(ref, dict) or ref.get(c.JOB_REF_FIELD_WORKFLOW) != workflow:
                    continue
                if job and ref.get(c.JOB_REF_FIELD_JOB) == job:
                    return _node_at(
                        document, task_id, c.TASK_FIELD_JOBS, index, c.JOB_REF_FIELD_JOB
                    ), c.TASK_FIELD_JOBS
                if not job or ref.get(c.JOB_REF_FIELD_JOB) is None:
                    return _node_at(
                        document, task_id, c.TASK_FIELD_JOBS, index, c.JOB_REF_FIELD_WORKFLOW
                    ), c.TASK_FIELD_JOBS
            return _node_at(document, task_id, c.TASK_FIELD_JOBS), c.TASK_FIELD_JOBS
    return _node_at(document, task_id), ""


def _check_repository(
    checker: _Checker, document: _Located, table: TaskTable, repository: Repository
) -> None:
    for task in table.tasks:
        for index, pattern in enumerate(task.force_paths or ()):
            if not match_force_paths((pattern,), repository.paths):
                checker.add(
                    c.CHECK_FORCE_PATHS_NO_MATCH,
                    f'pattern "{pattern}" matches no file at {repository.commit[:12]}',
                    _node_at(document, task.id, c.TASK_FIELD_FORCE_PATHS, index),
                    task=task.id,
                    field=c.TASK_FIELD_FORCE_PATHS,
                    severity=WARNING,
                )
    metadata = resolve_metadata(
        table,
        read_file=repository.read_file,
        fetch_action=repository.fetch_action,
        repository=repository.repository,
        commit=repository.commit,
    )
    for task_id, entry in metadata.evidence.items():
        gaps = entry.job_metadata.get("warnings", []) if entry.job_metadata is not None else []
        for gap in gaps:
            if not isinstance(gap, str):
                continue
            code, detail = _gap_code(gap)
            node, field = _gap_node(document, task_id, code, detail)
            checker.add(
                code,
                _gap_message(code, detail, repository),
                node,
                task=task_id,
                field=field or None,
                severity=ERROR if code in c.CHECK_GAP_ERRORS else WARNING,
            )


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def _sorted(problems: list[Problem]) -> tuple[Problem, ...]:
    return tuple(
        sorted(
            problems,
            key=lambda problem: (
                problem.line if problem.line is not None else 0,
                problem.column if problem.column is not None else 0,
            ),
        )
    )


def check_table(text: str, repository: Repository | None = None) -> tuple[Problem, ...]:
    """Every problem of the task-table ``text``, in file order.

    The text checks cover the whole grammar of docs/reference.md §4. With ``repository``, a
    table without errors is also checked against the files at that commit: ``force_paths`` that
    match nothing (warnings) and every metadata gap a plan would report (errors for references
    to files or jobs that are not there).
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
    document = _Located(value, node)
    checker.table(document)
    table: TaskTable | None = None
    try:
        table = parse_tasks(text)
    except InputError:
        if not any(problem.severity == ERROR for problem in checker.problems):
            # A rule the checks above do not name (kept in step by a test): still an error.
            checker.add(
                c.CHECK_INVALID_TABLE,
                "the table breaks a rule of the task-table grammar (docs/reference.md §4)",
                node,
            )
    if table is not None and repository is not None:
        _check_repository(checker, document, table, repository)
    return _sorted(checker.problems)


def check_exit_code(problems: Sequence[Problem]) -> int:
    """0 without errors (warnings allowed), 1 with at least one error."""
    if any(problem.severity == ERROR for problem in problems):
        return c.CHECK_EXIT_PROBLEMS
    return c.CHECK_EXIT_OK


def problems_text(path: str, problems: Sequence[Problem]) -> str:
    """Compiler-style lines, ``PATH:LINE:COLUMN: severity: message [code]``."""
    lines = [
        c.CHECK_LINE_TEMPLATE.format(
            path=path,
            line=problem.line if problem.line is not None else 1,
            column=problem.column if problem.column is not None else 1,
            severity=problem.severity,
            message=problem.message,
            code=problem.code,
        )
        for problem in problems
    ]
    return "".join(line + "\n" for line in lines)


def problems_json(problems: Sequence[Problem]) -> str:
    """``{"ok": bool, "problems": [...]}`` with two-space indentation and a final newline."""
    document: Mapping[str, Any] = {
        "ok": check_exit_code(problems) == c.CHECK_EXIT_OK,
        "problems": [problem.to_json() for problem in problems],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
