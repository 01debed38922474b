"""Check the workflows that run the action and consume its plan (docs/reference.md, "Checking
the workflows"). Pure: the files at the commit come in through ``Repository``.

With a table file, the workflows checked are those with a step that runs the action with
``tasks-file:`` naming it; without, every workflow that runs the action, each with its own table
(inline ``tasks:`` or its ``tasks-file:``). Each table is checked once, however many workflows
share it, and a task none of them reads is reported in the table.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
from yaml.nodes import Node

from ... import contracts as c
from .. import yamlstrict
from ..tasks import TableReading, read_table
from .consumers import check_consumers
from .problems import WARNING, Located, Problem, ProblemLog, node_at, table_offset
from .reads import Reads
from .repository import Repository
from .table import check_table
from .values import PlanJob, Table, fold
from .workflows import PlanStep, Workflow, block_scalar_indent, plan_steps, read_workflow
from .workflows import workflow_paths as _workflow_paths

__all__ = ["TableFile", "Wiring", "check_wiring"]


@attrs.frozen
class TableFile:
    """The table ``check --tasks-file`` was given: its repository-relative path (None when it
    is outside the repository) and its text."""

    path: str | None
    text: str


@attrs.frozen
class Wiring:
    """What the workflows say: their problems, and how many workflows run the action."""

    problems: tuple[Problem, ...]
    workflows: tuple[str, ...]  # the workflows checked, by path


@attrs.frozen
class _TableCheck:
    table: Table
    text: str
    reading: TableReading  # the text read once by the table grammar
    workflow: Workflow | None  # set for an inline table
    node: Node | None  # the inline table's scalar


def _own_repository(repository: Repository) -> bool:
    """Whether the repository is the action's own (its root ``action.yml`` is named so), where
    ``uses: ./`` runs the action."""
    for name in ("action.yml", "action.yaml"):
        data = repository.read_file(name)
        if data is None:
            continue
        try:
            value = yamlstrict.load_strict(data.decode("utf-8-sig"), aliases=True)
        except (UnicodeDecodeError, yamlstrict.YamlStrictError):
            return False
        return isinstance(value, dict) and value.get("name") == c.ACTION_REPOSITORY_NAME
    return False


def _ids(reading: TableReading) -> tuple[str, ...] | None:
    table = reading.table
    return None if table is None else tuple(task.id for task in table.tasks)


def _inline_problem(problem: Problem, workflow: Workflow, node: Node | None) -> Problem:
    """A problem of an inline table, placed in the workflow: line for line in a literal block
    (``tasks: |``), at the scalar's start for any other style."""
    indent = block_scalar_indent(workflow.text, node)
    line: int | None = None
    column: int | None = None
    if node is not None and node.start_mark is not None:
        if indent is not None and problem.line is not None and problem.column is not None:
            line = node.start_mark.line + 1 + problem.line
            column = indent + problem.column
        else:
            line, column = node.start_mark.line + 1, node.start_mark.column + 1
    return attrs.evolve(problem, path=workflow.path, line=line, column=column)


class _Check:
    def __init__(self, repository: Repository, given: TableFile | None) -> None:
        self.repository = repository
        self.given = given
        self.problems: list[Problem] = []
        self.tables: dict[str, _TableCheck] = {}
        self.reads = Reads()

    def _text_at(self, path: str) -> str | None:
        data = self.repository.read_file(path)
        if data is None:
            return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None

    def _file_table(self, workflow: Workflow, step: PlanStep, log: ProblemLog) -> Table | None:
        path = step.table.file
        assert path is not None
        key = "file:" + path
        if key in self.tables:
            return self.tables[key].table
        text = (
            self.given.text
            if self.given is not None and self.given.path == path
            else self._text_at(path)
        )
        if text is None:
            log.add(
                c.CHECK_TABLE_MISSING,
                f'the {c.INPUT_TASKS_FILE} "{path}" is not a UTF-8 file at '
                f"{self.repository.commit[:12]}, so the plan step fails",
                step.table.file_node,
            )
            return None
        reading = read_table(text)
        table = Table(key=key, label=f'"{path}"', ids=_ids(reading))
        self.tables[key] = _TableCheck(table, text, reading, None, None)
        return table

    def _table(self, workflow: Workflow, step: PlanStep, log: ProblemLog) -> Table | None:
        source = step.table
        if source.problem is not None:
            log.add(
                c.CHECK_TABLE_DYNAMIC if source.dynamic else c.CHECK_TABLE_MISSING,
                source.problem,
                source.inline_node or step.node,
                severity=WARNING if source.dynamic else c.CHECK_SEVERITY_ERROR,
            )
            return None
        if source.file is not None:
            return self._file_table(workflow, step, log)
        assert source.inline is not None
        key = f"inline:{workflow.path}#{step.job}#{step.index}"
        reading = read_table(source.inline)
        table = Table(key=key, label=f'the inline table of job "{step.job}"', ids=_ids(reading))
        self.tables[key] = _TableCheck(table, source.inline, reading, workflow, source.inline_node)
        return table

    def workflow(self, workflow: Workflow, steps: tuple[PlanStep, ...]) -> None:
        log = ProblemLog(workflow.text, 0)
        plans: dict[str, PlanJob] = {}
        for step in steps:
            table = self._table(workflow, step, log)
            plan = plans.setdefault(fold(step.job), PlanJob(key=step.job, steps={}))
            if step.step_id is not None and table is not None:
                plan.steps[fold(step.step_id)] = table
        self.reads.merge(check_consumers(workflow, plans, log))
        self.problems.extend(attrs.evolve(problem, path=workflow.path) for problem in log.problems)

    def tables_checked(self) -> None:
        """Each table once: its own problems (inline ones; a file given on the command line is
        checked by the caller), then the tasks no workflow reads."""
        for check in self.tables.values():
            if check.workflow is not None:
                self.problems.extend(
                    _inline_problem(problem, check.workflow, check.node)
                    for problem in check_table(check.text, self.repository)
                )
            elif self.given is None or check.table.key != "file:" + (self.given.path or ""):
                path = check.table.key.removeprefix("file:")
                self.problems.extend(
                    attrs.evolve(problem, path=path)
                    for problem in check_table(check.text, self.repository)
                )
            self._unconsumed(check)

    def _unconsumed(self, check: _TableCheck) -> None:
        table = check.table
        if table.ids is None or table.key in self.reads.whole:
            return
        if not any(key == table.key for key, _task in self.reads.tasks):
            # No job reads any task: the plan serves a report, a comment or shadow mode, not
            # conditions, and no task of it is an omission.
            return
        reading = check.reading
        document = reading.document
        log = ProblemLog(check.text, table_offset(check.text))
        for task in table.ids:
            if (table.key, task) in self.reads.tasks:
                continue
            key_node = _key_node(document, task) if document is not None else None
            log.add(
                c.CHECK_TASK_UNCONSUMED,
                f'no workflow reads task "{task}" from the plan, so selecting it changes nothing; '
                "add a job condition that reads it, or remove the task",
                key_node,
                task=task,
                severity=WARNING,
            )
        for problem in log.problems:
            if check.workflow is not None:
                self.problems.append(_inline_problem(problem, check.workflow, check.node))
            else:
                self.problems.append(attrs.evolve(problem, path=table.key.removeprefix("file:")))


def _key_node(document: Located, task: str) -> Node | None:
    for key, key_node, _value in document.items():
        if key == task:
            return key_node
    return node_at(document, task)


def _sorted(problems: Iterable[Problem]) -> tuple[Problem, ...]:
    return tuple(
        sorted(
            problems,
            key=lambda problem: (
                problem.path or "",
                problem.line if problem.line is not None else 0,
                problem.column if problem.column is not None else 0,
            ),
        )
    )


def check_wiring(repository: Repository, given: TableFile | None = None) -> Wiring:
    """The problems of the workflows at the commit that run the action (with ``given``, those
    whose step names that table file) and of their tables."""
    check = _Check(repository, given)
    own = _own_repository(repository)
    checked: list[str] = []
    for path in _workflow_paths(repository.paths):
        data = repository.read_file(path)
        if data is None:
            continue
        workflow = read_workflow(path, data)
        if workflow is None:
            if c.ACTION_REPOSITORY_NAME.encode() in data:
                check.problems.append(
                    Problem(
                        severity=WARNING,
                        code=c.CHECK_WORKFLOW_UNREADABLE,
                        message="this workflow mentions jev-select but is not a YAML mapping "
                        "the check can read; its wiring was not checked",
                        line=1,
                        column=1,
                        path=path,
                    )
                )
            continue
        steps = plan_steps(workflow, own_repository=own)
        if given is not None and not any(
            step.table.file is not None and step.table.file == given.path for step in steps
        ):
            continue
        if not steps:
            continue
        checked.append(path)
        check.workflow(workflow, steps)
    check.tables_checked()
    return Wiring(problems=_sorted(check.problems), workflows=tuple(checked))
