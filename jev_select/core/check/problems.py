"""The problems a check reports, where they are in the file, and how they are printed.

Pure core, shared by the task-table grammar (:mod:`..tasks`), the check (:mod:`.table`) and the
repository checks (:mod:`.repository`): the ``Problem`` record, the mapping from YAML marks
back to lines and columns of the file as written, the constructed table walked beside its YAML
nodes, and the compiler-style and JSON renderings with the exit code.
"""

from __future__ import annotations

import bisect
import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from yaml.nodes import MappingNode, Node, SequenceNode

from ... import contracts as c

__all__ = [
    "ERROR",
    "WARNING",
    "Located",
    "Problem",
    "ProblemLog",
    "check_exit_code",
    "closest",
    "node_at",
    "problems_json",
    "problems_text",
    "sorted_problems",
    "table_offset",
]

ERROR = c.CHECK_SEVERITY_ERROR
WARNING = c.CHECK_SEVERITY_WARNING


def _problem_code(code: str) -> c.CheckCode | c.GapName:
    """The code as a member of its vocabulary: a check code, else a gap's name."""
    try:
        return c.CheckCode(code)
    except ValueError:
        return c.GapName(code)


@attrs.frozen
class Problem:
    """One finding. ``line`` and ``column`` are 1-based; ``None`` when there is no position."""

    severity: c.CheckSeverity = attrs.field(converter=c.CheckSeverity)
    # A problem of the table, or a metadata gap under its own name.
    code: c.CheckCode | c.GapName = attrs.field(converter=_problem_code)
    message: str
    task: str | None = None
    field: str | None = None
    line: int | None = None
    column: int | None = None
    # The repository-relative file the problem is in; None for a table checked on its own.
    path: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "severity": self.severity,
            "code": self.code,
            "path": self.path,
            "task": self.task,
            "field": self.field,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


class Positions:
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
        self._starts: list[int] | None = None

    def of_mark(self, line: int, column: int) -> tuple[int, int]:
        if line == 0:
            column += self._column
        return self._lines + line + 1, column + 1

    def of_index(self, index: int | None) -> tuple[int, int]:
        if index is None:
            return 1, 1
        text = self._trimmed
        index = min(index, len(text))
        starts = self._line_starts()
        line = bisect.bisect_right(starts, index) - 1
        column = index - starts[line] - text.count("\ufeff", starts[line], index)
        return self.of_mark(line, column)

    def _line_starts(self) -> list[int]:
        """Where each line of the trimmed text starts, counted as PyYAML counts breaks."""
        if self._starts is None:
            text = self._trimmed
            starts = [0]
            for position, character in enumerate(text):
                if character in "\n\x85\u2028\u2029" or (
                    character == "\r" and text[position + 1 : position + 2] != "\n"
                ):
                    starts.append(position + 1)
            self._starts = starts
        return self._starts


class Located:
    """A constructed value and its node, walked side by side (keys keep document order)."""

    def __init__(self, value: Any, node: Node | None) -> None:
        self.value = value
        self.node = node

    def items(self) -> list[tuple[str, Node | None, Located]]:
        """(key, key node, located value) of a mapping, in document order."""
        pairs = self.node.value if isinstance(self.node, MappingNode) else []
        result: list[tuple[str, Node | None, Located]] = []
        for index, (key, value) in enumerate(self.value.items()):
            key_node, value_node = pairs[index] if index < len(pairs) else (None, None)
            result.append((key, key_node, Located(value, value_node)))
        return result

    def elements(self) -> list[Located]:
        nodes = self.node.value if isinstance(self.node, SequenceNode) else []
        return [
            Located(item, nodes[index] if index < len(nodes) else None)
            for index, item in enumerate(self.value)
        ]


def table_offset(text: str) -> int:
    """Where the YAML of a task-table ``text`` starts: it is read with surrounding whitespace
    trimmed, and positions still count from the file's first character."""
    return len(text) - len(text.lstrip(c.WHITESPACE))


class ProblemLog:
    """The problems found so far in one file, each placed at its node's line and column."""

    def __init__(self, text: str, offset: int) -> None:
        self.positions = Positions(text, offset)
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
        self._append(code, message, severity, task, field, line, column)

    def add_at(
        self,
        code: str,
        message: str,
        index: int,
        *,
        task: str | None = None,
        field: str | None = None,
        severity: str = ERROR,
    ) -> None:
        """A problem at character ``index`` of the trimmed text (for a place inside a scalar)."""
        line, column = self.positions.of_index(index)
        self._append(code, message, severity, task, field, line, column)

    def _append(
        self,
        code: str,
        message: str,
        severity: str,
        task: str | None,
        field: str | None,
        line: int | None,
        column: int | None,
    ) -> None:
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


def closest(word: str, choices: Sequence[str]) -> str | None:
    """The one choice close enough to ``word`` to suggest, or None."""
    matches = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return matches[0] if matches else None


def node_at(document: Located, *path: str | int) -> Node | None:
    """The node at ``path`` (mapping keys and list indexes), or None when it is not there."""
    current: Located | None = document
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


def sorted_problems(problems: list[Problem]) -> tuple[Problem, ...]:
    """``problems`` in file order (a problem without a position first); ties keep their order."""
    return tuple(
        sorted(
            problems,
            key=lambda problem: (
                problem.line if problem.line is not None else 0,
                problem.column if problem.column is not None else 0,
            ),
        )
    )


def check_exit_code(problems: Sequence[Problem]) -> int:
    """0 without errors (warnings allowed), 1 with at least one error."""
    if any(problem.severity == ERROR for problem in problems):
        return c.CHECK_EXIT_PROBLEMS
    return c.CHECK_EXIT_OK


def problems_text(path: str, problems: Sequence[Problem]) -> str:
    """Compiler-style lines, ``PATH:LINE:COLUMN: severity: message [code]``; ``path`` names the
    file of a problem that has no path of its own."""
    lines = [
        c.CHECK_LINE_TEMPLATE.format(
            path=problem.path if problem.path is not None else path,
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
