"""The jobs of one workflow that read a plan, checked expression by expression
(docs/reference.md, "Checking the workflows"). Pure.

Every string of every job is read: ``if:`` conditions (with or without ``${{ }}``), the
``strategy.matrix``, ``env``, ``with``, ``run`` and the rest. The plan job's ``outputs:`` are read
first, since a consumer reads the plan through them. A job whose condition reads the plan is a
consumer: it can be skipped, and a skipped job passes branch protection, so a gate job must check
the consumers' results.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs
from yaml.nodes import MappingNode, ScalarNode
from yaml.nodes import Node as YamlNode

from ... import contracts as c
from ..ghexpr import (
    Call,
    ExpressionSyntaxError,
    Filter,
    Property,
    parse_expression,
    templates,
    walk,
)
from ..ghexpr import Node as Expression
from .problems import ERROR, WARNING, Located, ProblemLog, node_at
from .reads import Reader, Reads, Site, static_path
from .values import OTHER, Kind, PlanJob, Value, fold
from .workflows import Workflow

__all__ = ["check_consumers", "source_index"]

_ALL = "*"


@attrs.frozen
class _Text:
    """One string of a job: its place in the job and its node."""

    path: tuple[str | int, ...]
    value: str
    node: YamlNode | None


@attrs.frozen
class _Expression:
    text: str
    offset: int  # where ``text`` starts in the string's value


def _strings(located: Located, path: tuple[str | int, ...]) -> Iterator[_Text]:
    if isinstance(located.value, dict):
        for key, _key_node, value in located.items():
            yield from _strings(value, (*path, key))
    elif isinstance(located.value, list):
        for index, element in enumerate(located.elements()):
            yield from _strings(element, (*path, index))
    elif isinstance(located.value, str):
        yield _Text(path, located.value, located.node)


def _is_condition(path: tuple[str | int, ...]) -> bool:
    return path == ("if",) or (len(path) == 3 and path[0] == "steps" and path[2] == "if")


def _expressions(text: _Text) -> tuple[list[_Expression], int | None]:
    """The expressions of a string, and the offset of a ``${{`` left open (None when none)."""
    try:
        found = templates(text.value)
    except ExpressionSyntaxError as error:
        return [], error.offset
    if _is_condition(text.path) and not found:
        # A condition without ${{ }} is an expression as a whole.
        return [_Expression(text.value, 0)], None
    return [_Expression(template.body, template.body_start) for template in found], None


def source_index(text: str, node: YamlNode | None, value: str, offset: int) -> int | None:
    """The index in the file ``text`` of character ``offset`` of the scalar ``value``, or None
    when the scalar's style folds or escapes that line (then the node's start is used)."""
    if node is None or node.start_mark is None or node.end_mark is None:
        return None
    start = node.start_mark.index
    raw = text[start : node.end_mark.index]
    line_start = value.rfind("\n", 0, offset) + 1
    line_end = value.find("\n", offset)
    segment = value[line_start : line_end if line_end >= 0 else len(value)]
    if not segment:
        return None
    # The same line may occur more than once: take the occurrence of the same rank.
    rank = value.count(segment, 0, line_start)
    position = -1
    for _ in range(rank + 1):
        position = raw.find(segment, position + 1)
        if position < 0:
            return None
    return start + position + (offset - line_start)


class _Workflow:
    def __init__(self, workflow: Workflow, plans: Mapping[str, PlanJob], log: ProblemLog) -> None:
        self.workflow = workflow
        self.plans = plans
        self.log = log
        self.reads = Reads()
        jobs = workflow.document.value.get("jobs")
        self.jobs: dict[str, object] = jobs if isinstance(jobs, dict) else {}
        self.outputs: dict[str, dict[str, Value]] = {}
        self._reported: set[str] = set()

    # -- placing -----------------------------------------------------------------------

    def _add(
        self,
        code: c.CheckCode,
        message: str,
        text: _Text,
        offset: int,
    ) -> None:
        if code in (c.CHECK_PLAN_NOT_NEEDED, c.CHECK_OUTPUT_NOT_FORWARDED):
            # One missing `needs:` entry or output, however many times it is read: the fix is
            # in one place.
            if message in self._reported:
                return
            self._reported.add(message)
        index = source_index(self.workflow.text, text.node, text.value, offset)
        severity = ERROR if code in c.CHECK_WIRING_ERRORS else WARNING
        if index is None:
            self.log.add(code, message, text.node, severity=severity)
        else:
            self.log.add_at(code, message, index, severity=severity)

    # -- sites -------------------------------------------------------------------------

    def site(self, job: str) -> Site:
        body = self.jobs.get(job)
        body = body if isinstance(body, dict) else {}
        needs = body.get("needs")
        needed = [needs] if isinstance(needs, str) else needs if isinstance(needs, list) else []
        steps = body.get("steps")
        step_ids = {
            fold(step["id"])
            for step in (steps if isinstance(steps, list) else [])
            if isinstance(step, dict) and isinstance(step.get("id"), str)
        }
        return Site(
            job=job,
            needs=frozenset(fold(item) for item in needed if isinstance(item, str)),
            plans=self.plans,
            steps=frozenset(step_ids),
            matrix=_matrix_values(body.get("strategy")),
            outputs=self.outputs,
        )

    def _evaluate(
        self, text: _Text, expression: _Expression, reader: Reader
    ) -> tuple[Value, Expression | None]:
        try:
            tree = parse_expression(expression.text)
        except ExpressionSyntaxError:
            if self._mentions_plan(expression.text):
                # What it reads is unknown: none of the plans' tasks is reported unconsumed.
                self.reads.whole.update(
                    table.key for plan in self.plans.values() for table in plan.steps.values()
                )
                self._add(
                    c.CHECK_EXPRESSION_UNREADABLE,
                    "this expression mentions the plan but is not a valid expression",
                    text,
                    expression.offset,
                )
            return OTHER, None
        value = reader.value(tree)
        for finding in reader.findings:
            self._add(finding.code, finding.message, text, expression.offset + finding.offset)
        reader.findings.clear()
        return value, tree

    def _mentions_plan(self, text: str) -> bool:
        folded = fold(text)
        return any(f"needs.{key}" in folded for key in self.plans) or any(
            f"steps.{step}" in folded for plan in self.plans.values() for step in plan.steps
        )

    # -- the plan jobs' outputs --------------------------------------------------------

    def declare(self) -> None:
        for key, plan in self.plans.items():
            body = self.jobs.get(plan.key)
            outputs = body.get("outputs") if isinstance(body, dict) else None
            declared: dict[str, Value] = {}
            self.outputs[key] = declared
            if not isinstance(outputs, dict):
                continue
            site = self.site(plan.key)
            located = node_at(self.workflow.document, "jobs", plan.key, "outputs")
            for name, value in outputs.items():
                node = _value_node(located, str(name))
                declared[fold(str(name))] = self._declaration(site, _Text((), str(value), node))

    def _declaration(self, site: Site, text: _Text) -> Value:
        expressions, _open = _expressions(text)
        whole = (
            len(expressions) == 1
            and text.value.strip().startswith("${{")
            and (text.value.strip().endswith("}}"))
        )
        if not whole:
            # Text around the expressions: the output is no plan value a consumer can follow,
            # so whatever it reads of the plan counts as read.
            reads = Reads()
            for expression in expressions:
                self._evaluate(text, expression, Reader(site, reads))
            self.reads.whole |= reads.plans
            return OTHER
        value, _tree = self._evaluate(text, expressions[0], Reader(site, Reads(), declaring=True))
        # An output is text: a boolean becomes 'true' or 'false', JSON is written out again.
        if value.kind is Kind.TASK_BOOLEAN:
            return Value(Kind.TASK_STRING, value.table, value.name)
        if value.kind is Kind.HAS_TASKS_BOOLEAN:
            return Value(Kind.OUTPUT, value.table, c.OUTPUT_HAS_TASKS)
        names = {
            Kind.RUN: c.OUTPUT_RUN,
            Kind.SELECTED: c.OUTPUT_SELECTED,
            Kind.MATRIX: c.OUTPUT_MATRIX,
        }
        if value.kind in names:
            return Value(Kind.OUTPUT, value.table, names[value.kind])
        return value

    # -- the jobs ----------------------------------------------------------------------

    def check_job(self, job: str, located: Located) -> _JobReads:
        site = self.site(job)
        condition = Reads()
        everywhere = Reads()
        results: set[str] = set()
        matrix_tables: dict[str, _Text] = {}
        for text in _strings(located, ()):
            if text.path[:1] == ("outputs",) and fold(job) in self.plans:
                continue  # read by declare()
            expressions, unterminated = _expressions(text)
            if unterminated is not None and self._mentions_plan(text.value):
                self._add(
                    c.CHECK_EXPRESSION_UNREADABLE,
                    "an expression that mentions the plan is not closed with }}",
                    text,
                    unterminated,
                )
            job_condition = text.path == ("if",)
            in_matrix = text.path[:2] == ("strategy", "matrix")
            for expression in expressions:
                reads = condition if job_condition else everywhere
                reader = Reader(site, reads)
                value, tree = self._evaluate(text, expression, reader)
                if tree is not None:
                    results |= _results_read(tree)
                self._top_level(value, text, expression, reads, in_matrix, matrix_tables)
        for key, text in matrix_tables.items():
            if key not in condition.has_tasks:
                self._add(
                    c.CHECK_MATRIX_WITHOUT_HAS_TASKS,
                    f'job "{job}" builds its matrix from the plan without a condition on '
                    "has-tasks; when no task is selected the matrix is empty and the job fails: "
                    f"add \"if: needs.<plan job>.outputs.{c.OUTPUT_HAS_TASKS} == 'true'\"",
                    text,
                    0,
                )
        if condition.statuses & set(c.GATE_STATUS_FUNCTIONS) and results:
            # A gate reads the plan to judge the results of the jobs that ran the tasks; what
            # it reads runs no task, so it does not count as consuming one.
            everywhere.tasks.clear()
            everywhere.whole.clear()
        self.reads.merge(condition)
        self.reads.merge(everywhere)
        return _JobReads(
            consumer=bool(condition.plans) or bool(matrix_tables),
            needs=site.needs,
            statuses=frozenset(condition.statuses),
            results=frozenset(results),
        )

    def _top_level(
        self,
        value: Value,
        text: _Text,
        expression: _Expression,
        reads: Reads,
        in_matrix: bool,
        matrix_tables: dict[str, _Text],
    ) -> None:
        if not value.structured:
            return
        if _is_condition(text.path):
            if value.table is not None:
                reads.whole.add(value.table.key)
            self._add(
                c.CHECK_EXPRESSION_UNREADABLE,
                "a whole plan output as a condition is a non-empty string, always true; the "
                "check cannot tell which task this condition means",
                text,
                expression.offset,
            )
            return
        if value.table is not None:
            reads.whole.add(value.table.key)
            reads.plans.add(value.table.key)
        matrix = value.kind in (Kind.MATRIX, Kind.SELECTED) or (
            value.kind is Kind.OUTPUT and value.name in (c.OUTPUT_MATRIX, c.OUTPUT_SELECTED)
        )
        if in_matrix and matrix and value.table is not None:
            matrix_tables.setdefault(value.table.key, text)

    def check(self) -> None:
        self.declare()
        jobs: dict[str, _JobReads] = {}
        for section, _node, located in self.workflow.document.items():
            if section != "jobs":
                continue
            for key, _key_node, body in located.items():
                if isinstance(body.value, dict):
                    jobs[str(key)] = self.check_job(str(key), body)
        self._gate(jobs)

    def _gate(self, jobs: dict[str, _JobReads]) -> None:
        consumers = sorted(key for key, reads in jobs.items() if reads.consumer)
        if not consumers:
            return
        wanted = {fold(key) for key in consumers}
        for key, reads in jobs.items():
            if key in consumers or not wanted <= reads.needs:
                continue
            if not reads.statuses & set(c.GATE_STATUS_FUNCTIONS):
                continue
            if _ALL in reads.results or wanted <= reads.results:
                return
        shown = ", ".join(f'"{key}"' for key in consumers[:6]) + (
            ", ..." if len(consumers) > 6 else ""
        )
        self.log.add(
            c.CHECK_GATE_MISSING,
            f"no job needs every job the plan can skip ({shown}), runs with always() and checks "
            "their results; a skipped job counts as passed for branch protection, so only such "
            "a gate, made the required check, catches a failure among them",
            _key_node(self.workflow.document, "jobs"),
            severity=WARNING,
        )


@attrs.frozen
class _JobReads:
    consumer: bool
    needs: frozenset[str]
    statuses: frozenset[str]
    results: frozenset[str]  # folded job keys whose result is read; "*" for all


def _results_read(tree: Expression) -> set[str]:
    """The jobs whose ``result`` an expression reads (``needs.*.result`` and ``toJSON(needs)``
    read them all)."""
    found: set[str] = set()
    for node in walk(tree):
        if isinstance(node, Property) and fold(node.name) == "result":
            if isinstance(node.target, Filter):
                inner = static_path(node.target.target)
                if inner is not None and inner[0] == ("needs",):
                    found.add(_ALL)
            path = static_path(node)
            if path is not None and len(path[0]) == 3 and path[0][0] == "needs":
                found.add(path[0][1])
        elif isinstance(node, Call) and fold(node.function) == "tojson" and node.arguments:
            path = static_path(node.arguments[0])
            if path is not None and path[0] == ("needs",):
                found.add(_ALL)
    return found


def _matrix_values(strategy: object) -> dict[str, tuple[str, ...] | None]:
    """Matrix key -> the values written out for it (``include`` entries too), None for a key
    whose values are not all plain text."""
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if not isinstance(matrix, dict):
        return {}
    values: dict[str, list[str] | None] = {}

    def add(key: str, value: object) -> None:
        if key in values and values[key] is None:
            return
        if isinstance(value, str) and "${{" not in value:
            values.setdefault(key, [])
            known = values[key]
            assert known is not None
            known.append(value)
        else:
            values[key] = None

    for key, entries in matrix.items():
        if key in ("include", "exclude"):
            continue
        if isinstance(entries, list):
            for entry in entries:
                add(fold(str(key)), entry)
        else:
            values[fold(str(key))] = None
    include = matrix.get("include")
    for entry in include if isinstance(include, list) else []:
        if isinstance(entry, dict):
            for key, value in entry.items():
                add(fold(str(key)), value)
    return {key: tuple(found) if found is not None else None for key, found in values.items()}


def _value_node(outputs: YamlNode | None, name: str) -> YamlNode | None:
    if not isinstance(outputs, MappingNode):
        return None
    pairs: list[tuple[YamlNode, YamlNode]] = outputs.value
    for key, value in pairs:
        if isinstance(key, ScalarNode) and key.value == name:
            return value
    return None


def _key_node(document: Located, name: str) -> YamlNode | None:
    for key, key_node, _value in document.items():
        if key == name:
            return key_node
    return None


def check_consumers(workflow: Workflow, plans: Mapping[str, PlanJob], log: ProblemLog) -> Reads:
    """Add to ``log`` the problems of ``workflow``'s jobs with the plans of ``plans`` (folded job
    key -> plan job), and return what the workflow reads of each table."""
    checker = _Workflow(workflow, plans, log)
    checker.check()
    return checker.reads
