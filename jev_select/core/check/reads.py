"""One expression of a consuming workflow, followed through what it reads of the plan
(docs/reference.md, "Checking the workflows"). Pure.

``Reader.value`` walks the parsed expression bottom-up and gives each node the abstract
``Value`` of :mod:`.values`; on the way it records the findings of the expression (an unknown
task ID, a boolean compared with a string, a plan job not in ``needs:``, an output the plan job
does not declare, a form it cannot follow) and what the expression reads of each table.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ... import contracts as c
from ..ghexpr import Binary, Call, Filter, Index, Literal, Name, Node, Property, Unary
from .problems import closest
from .values import OTHER, Kind, PlanJob, Table, Value, fold

__all__ = ["Finding", "Reader", "Reads", "Site", "static_path"]


@attrs.frozen
class Site:
    """Where an expression is: its job and what that job can see."""

    job: str
    needs: frozenset[str]  # folded keys of the jobs in the job's ``needs:``
    plans: Mapping[str, PlanJob]  # folded key -> every plan job of the workflow
    steps: frozenset[str]  # folded IDs of the job's own steps
    # Folded matrix key -> its literal values, None when the matrix is not written out.
    matrix: Mapping[str, tuple[str, ...] | None]
    # Folded plan job key -> folded output name -> the value it declares.
    outputs: Mapping[str, Mapping[str, Value]]

    @property
    def own_plan(self) -> PlanJob | None:
        return self.plans.get(fold(self.job))


@attrs.frozen
class Finding:
    code: c.CheckCode
    message: str
    offset: int  # where it is, within the expression's text


@attrs.define
class Reads:
    """What expressions read of the plan, by table key."""

    tasks: set[tuple[str, str]] = attrs.field(factory=set)  # (table key, task ID)
    whole: set[str] = attrs.field(factory=set)  # may read any task of the table
    plans: set[str] = attrs.field(factory=set)  # read anything of the table's plan
    has_tasks: set[str] = attrs.field(factory=set)  # read has-tasks of the table's plan
    statuses: set[str] = attrs.field(factory=set)  # folded status functions called

    def merge(self, other: Reads) -> None:
        self.tasks |= other.tasks
        self.whole |= other.whole
        self.plans |= other.plans
        self.has_tasks |= other.has_tasks
        self.statuses |= other.statuses


def static_path(node: Node) -> tuple[tuple[str, ...], tuple[Node, ...]] | None:
    """The folded names of a context path (``needs.plan.outputs['run']``) and the node of each
    name, or None when the path holds a call, a filter or a computed index."""
    names: list[str] = []
    nodes: list[Node] = []
    current: Node = node
    while True:
        if isinstance(current, Name):
            names.append(fold(current.name))
            nodes.append(current)
            break
        if isinstance(current, Property):
            names.append(fold(current.name))
        elif (
            isinstance(current, Index)
            and isinstance(current.index, Literal)
            and isinstance(current.index.value, str)
        ):
            names.append(fold(current.index.value))
        else:
            return None
        nodes.append(current)
        current = current.target
    return tuple(reversed(names)), tuple(reversed(nodes))


_CONSUMING_FUNCTIONS = frozenset({"tojson", "format", "join"})
_STATUS_FUNCTIONS = frozenset({"always", "success", "failure", "cancelled"})


class Reader:
    """Follows one expression. ``declaring`` is set while a plan job's own ``outputs:`` are
    read: a forwarded task is consumed where the forwarded output is read, not where it is
    declared."""

    def __init__(self, site: Site, reads: Reads, *, declaring: bool = False) -> None:
        self.site = site
        self.reads = reads
        self.declaring = declaring
        self.findings: list[Finding] = []
        self._unreadable = False

    # ---------------------------------------------------------------------------------
    # Findings
    # ---------------------------------------------------------------------------------

    def _find(self, code: c.CheckCode, message: str, node: Node) -> None:
        self.findings.append(Finding(code, message, node.start))

    def unreadable(self, node: Node, why: str, table: Table | None) -> Value:
        """A plan value in a form the check does not follow: reported once per expression,
        and the table counts as read whole (its tasks are not reported as unconsumed)."""
        if table is not None:
            self.reads.whole.add(table.key)
        if not self._unreadable:
            self._unreadable = True
            self._find(
                c.CHECK_EXPRESSION_UNREADABLE,
                f"{why}; the check cannot tell which tasks this expression reads",
                node,
            )
        return OTHER

    def _task(self, table: Table | None, task: str, node: Node, kind: Kind) -> Value:
        if table is None or table.ids is None:
            return Value(kind, table)
        known = table.find(task)
        if known is None:
            suggestion = closest(fold(task), [fold(name) for name in table.ids])
            hint = ""
            if suggestion is not None:
                hint = "; did you mean " + next(
                    f'"{name}"' for name in table.ids if fold(name) == suggestion
                )
                hint += "?"
            self._find(
                c.CHECK_UNKNOWN_TASK,
                f'task "{task}" is not in {table.label}, so this reads null and the job or step '
                f"never runs{hint}",
                node,
            )
            return Value(kind, table)
        self._consume(table, known)
        return Value(kind, table, known)

    def _consume(self, table: Table, task: str | None) -> None:
        if self.declaring:
            return
        self.reads.plans.add(table.key)
        if task is None:
            self.reads.whole.add(table.key)
        else:
            self.reads.tasks.add((table.key, task))

    # ---------------------------------------------------------------------------------
    # Nodes
    # ---------------------------------------------------------------------------------

    def value(self, node: Node) -> Value:
        if isinstance(node, Literal):
            return Value(Kind.LITERAL, literal=node.value)
        if isinstance(node, Call):
            return self._call(node)
        if isinstance(node, Unary):
            operand = self.value(node.operand)
            if operand.structured:
                return self.unreadable(node, "a whole plan output is negated", operand.table)
            return OTHER
        if isinstance(node, Binary):
            return self._binary(node)
        path = static_path(node)
        if path is not None:
            return self._context(path[0], path[1], node)
        if isinstance(node, Filter):
            target = self.value(node.target)
            if target.is_plan:
                return self.unreadable(node, "a filter over a plan value", target.table)
            return OTHER
        if isinstance(node, Property):
            target = self.value(node.target)
            return self._member(target, node.name, None, node)
        assert isinstance(node, Index)
        target = self.value(node.target)
        index = self.value(node.index)
        if index.structured or index.kind is Kind.TASK_STRING:
            return self.unreadable(node, "a plan value used as an index", index.table)
        if index.kind is Kind.LITERAL and isinstance(index.literal, str):
            # Placed at the key, where the typo is.
            return self._member(target, index.literal, None, node.index)
        return self._member(target, None, node.index, node)

    def _binary(self, node: Binary) -> Value:
        left = self.value(node.left)
        right = self.value(node.right)
        if node.operator in ("==", "!="):
            for one, other in ((left, right), (right, left)):
                self._comparison(one, other, node)
        for side in (left, right):
            if side.structured:
                return self.unreadable(node, "a whole plan output is compared", side.table)
        return OTHER

    def _comparison(self, one: Value, other: Value, node: Binary) -> None:
        if other.kind is not Kind.LITERAL:
            return
        outcome = "false" if node.operator == "==" else "true"
        if one.kind in (Kind.TASK_BOOLEAN, Kind.HAS_TASKS_BOOLEAN) and isinstance(
            other.literal, str
        ):
            self._find(
                c.CHECK_BOOLEAN_COMPARED_TO_STRING,
                "fromJSON(...) gives a boolean here, and GitHub compares a boolean with a "
                f"string as numbers, so this is always {outcome}; use the boolean as the "
                "condition itself (or compare a forwarded string output)",
                node,
            )
        elif (
            one.kind is Kind.TASK_STRING
            or (one.kind is Kind.OUTPUT and one.name == c.OUTPUT_HAS_TASKS)
        ) and isinstance(other.literal, bool):
            self._find(
                c.CHECK_BOOLEAN_COMPARED_TO_STRING,
                "this output is the string 'true' or 'false', and GitHub compares a string with "
                f"a boolean as numbers, so this is always {outcome}; compare with the string "
                "'true'",
                node,
            )

    def _call(self, node: Call) -> Value:
        name = fold(node.function)
        arguments = [self.value(argument) for argument in node.arguments]
        if name in _STATUS_FUNCTIONS:
            self.reads.statuses.add(name)
            return OTHER
        if name == "fromjson" and len(arguments) == 1:
            return self._from_json(arguments[0], node)
        if name == "contains" and len(arguments) == 2:
            return self._contains(arguments, node)
        for argument in arguments:
            if argument.kind is Kind.TASK_BOOLEAN or argument.kind is Kind.TASK_STRING:
                continue  # already read as the one task it is
            if argument.structured:
                if name in _CONSUMING_FUNCTIONS:
                    # The whole plan handed on as text, for a script to read.
                    if argument.table is not None:
                        self._consume(argument.table, None)
                    continue
                return self.unreadable(
                    node, f"a whole plan output is passed to {node.function}()", argument.table
                )
        return OTHER

    def _from_json(self, argument: Value, node: Call) -> Value:
        if argument.kind is Kind.OUTPUT:
            kinds = {
                c.OUTPUT_RUN: Kind.RUN,
                c.OUTPUT_SELECTED: Kind.SELECTED,
                c.OUTPUT_MATRIX: Kind.MATRIX,
                c.OUTPUT_HAS_TASKS: Kind.HAS_TASKS_BOOLEAN,
            }
            kind = kinds.get(argument.name or "")
            if kind is None:
                return self.unreadable(
                    node, f'the output "{argument.name}" is not JSON', argument.table
                )
            return Value(kind, argument.table)
        if argument.kind is Kind.TASK_STRING:
            return Value(Kind.TASK_BOOLEAN, argument.table, argument.name)
        if argument.is_plan:
            return self.unreadable(node, "fromJSON() of a value that is not JSON", argument.table)
        return OTHER

    def _contains(self, arguments: list[Value], node: Call) -> Value:
        collection, item = arguments
        selected = collection.kind is Kind.SELECTED or (
            collection.kind is Kind.OUTPUT and collection.name == c.OUTPUT_SELECTED
        )
        if selected:
            if item.kind is Kind.LITERAL and isinstance(item.literal, str):
                return self._task(
                    collection.table, item.literal, node.arguments[1], Kind.TASK_BOOLEAN
                )
            matrix = self._matrix_values(node.arguments[1])
            if matrix is not None:
                return self._tasks_of_matrix(collection.table, matrix, node.arguments[1])
            return self.unreadable(
                node, "contains() over the selected tasks with a computed ID", collection.table
            )
        for value in arguments:
            if value.structured:
                return self.unreadable(node, "contains() over a plan value", value.table)
        return OTHER

    # ---------------------------------------------------------------------------------
    # Paths and members
    # ---------------------------------------------------------------------------------

    def _context(self, names: tuple[str, ...], nodes: tuple[Node, ...], node: Node) -> Value:
        if names[0] == "needs" and len(names) > 1 and names[1] in self.site.plans:
            return self._needs(names, nodes, node)
        if names[0] == "steps" and len(names) > 1:
            return self._steps(names, nodes, node)
        return OTHER

    def _needs(self, names: tuple[str, ...], nodes: tuple[Node, ...], node: Node) -> Value:
        plan = self.site.plans[names[1]]
        if names[1] not in self.site.needs:
            self._find(
                c.CHECK_PLAN_NOT_NEEDED,
                f'job "{self.site.job}" reads needs.{plan.key} without "{plan.key}" in its '
                "needs:, so this reads null",
                node,
            )
        if len(names) == 2 or (len(names) == 3 and names[2] == "outputs"):
            tables = list(plan.steps.values())
            return Value(Kind.PLAN_OBJECT, tables[0] if len(tables) == 1 else None)
        if names[2] != "outputs":
            return OTHER  # result, and what else a job has beside its outputs
        declared = self.site.outputs.get(names[1], {})
        output = declared.get(names[3])
        if output is None:
            self._output_not_forwarded(plan, names[3], list(declared), nodes[3])
            return OTHER
        if output.kind is Kind.OTHER and names[3] in c.OUTPUTS and len(plan.steps) == 1:
            # Declared under the action's output name, but not from the action step: what a
            # consumer reads is not the plan.
            step = next(iter(plan.steps))
            self._find(
                c.CHECK_OUTPUT_NOT_FORWARDED,
                f'job "{plan.key}" declares output "{names[3]}" but not from the action step; '
                f'declare it as "${{{{ steps.{step}.outputs.{names[3]} }}}}"',
                nodes[3],
            )
            return OTHER
        if output.kind is Kind.TASK_STRING and output.table is not None and output.name:
            self._consume(output.table, output.name)
        if output.kind is Kind.OUTPUT and output.name == c.OUTPUT_HAS_TASKS and output.table:
            self.reads.has_tasks.add(output.table.key)
        if output.is_plan and output.table is not None and not self.declaring:
            self.reads.plans.add(output.table.key)
        if len(names) > 4:
            return self._member(output, names[4], None, nodes[4])
        return output

    def _output_not_forwarded(
        self, plan: PlanJob, name: str, declared: list[str], node: Node
    ) -> None:
        if name in c.OUTPUTS:
            step = next(iter(plan.steps)) if len(plan.steps) == 1 else "<id>"
            hint = (
                f'; add "{name}: ${{{{ steps.{step}.outputs.{name} }}}}" to the outputs of job '
                f'"{plan.key}"'
            )
        else:
            suggestion = closest(name, [*declared, *c.OUTPUTS])
            hint = f'; did you mean "{suggestion}"?' if suggestion is not None else ""
        self._find(
            c.CHECK_OUTPUT_NOT_FORWARDED,
            f'job "{plan.key}" declares no output "{name}", so this reads null{hint}',
            node,
        )

    def _steps(self, names: tuple[str, ...], nodes: tuple[Node, ...], node: Node) -> Value:
        own = self.site.own_plan
        table = own.steps.get(names[1]) if own is not None else None
        if table is None:
            if own is not None and names[1] not in self.site.steps:
                # In the plan job itself: a misspelt step ID reads null, and so does every
                # output declared from it.
                step = next(iter(own.steps), "<id>")
                self._find(
                    c.CHECK_OUTPUT_NOT_FORWARDED,
                    f'job "{own.key}" has no step "{names[1]}", so this reads null; the action '
                    f'step is "{step}"',
                    node,
                )
                return OTHER
            if names[1] not in self.site.steps:
                for plan in self.site.plans.values():
                    if names[1] in plan.steps:
                        self._find(
                            c.CHECK_PLAN_NOT_NEEDED,
                            f'job "{self.site.job}" reads steps.{names[1]}, a step of job '
                            f'"{plan.key}"; another job reads it as needs.{plan.key}.outputs',
                            node,
                        )
            return OTHER
        if len(names) < 4 or names[2] != "outputs":
            return OTHER  # outcome, conclusion
        if names[3] not in c.OUTPUTS:
            suggestion = closest(names[3], list(c.OUTPUTS))
            hint = f'; did you mean "{suggestion}"?' if suggestion is not None else ""
            if table.find(names[3]) is not None:
                # The command writes an output per task; the action only its fixed outputs.
                hint = (
                    f"; the action has no output per task: read it as "
                    f"fromJSON(steps.{names[1]}.outputs.{c.OUTPUT_RUN})['{names[3]}']"
                )
            self._find(
                c.CHECK_OUTPUT_NOT_FORWARDED,
                f'the action has no output "{names[3]}", so this reads null{hint}',
                nodes[3],
            )
            return OTHER
        value = Value(Kind.OUTPUT, table, names[3])
        if names[3] == c.OUTPUT_HAS_TASKS:
            self.reads.has_tasks.add(table.key)
        if not self.declaring:
            self.reads.plans.add(table.key)
        if len(names) > 4:
            return self._member(value, names[4], None, nodes[4])
        return value

    def _member(self, target: Value, key: str | None, computed: Node | None, node: Node) -> Value:
        """``target.key`` or ``target[key]``; ``computed`` is the index node when the key is
        not a literal."""
        if target.kind is Kind.RUN:
            if key is not None:
                return self._task(target.table, key, node, Kind.TASK_BOOLEAN)
            assert computed is not None
            matrix = self._matrix_values(computed)
            if matrix is not None:
                return self._tasks_of_matrix(target.table, matrix, computed)
            return self.unreadable(node, "the run output indexed with a computed ID", target.table)
        if target.kind is Kind.MATRIX and key == "include":
            return target
        if target.kind is Kind.OUTPUT:
            return self.unreadable(
                node,
                f'the output "{target.name}" is a string and has no properties (read it with '
                "fromJSON)",
                target.table,
            )
        if target.is_plan:
            return self.unreadable(node, "a part of a plan value", target.table)
        return OTHER

    def _matrix_values(self, node: Node) -> tuple[str, ...] | None:
        path = static_path(node)
        if path is None or len(path[0]) != 2 or path[0][0] != "matrix":
            return None
        return self.site.matrix.get(path[0][1])

    def _tasks_of_matrix(self, table: Table | None, values: tuple[str, ...], node: Node) -> Value:
        for value in values:
            self._task(table, value, node, Kind.TASK_BOOLEAN)
        return Value(Kind.TASK_BOOLEAN, table)
