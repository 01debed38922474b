"""What an expression of a consuming workflow reads of the plan: the abstract values the wiring
check computes over GitHub's expression language (docs/reference.md, "Checking the workflows").
Pure.

The check never evaluates an expression; it follows the plan's outputs through the forms the
contract documents. ``fromJSON`` of the ``run`` output is an object of booleans keyed by task ID,
of ``selected`` an array of IDs, of ``matrix`` a matrix; an index or property of the first, or
``contains`` over the second, reads one task. A per-task output the plan job forwards is the
string ``'true'`` or ``'false'``. Anything else that carries a plan value is a form the check
does not model, and is reported rather than passed over.
"""

from __future__ import annotations

import enum

import attrs

from ... import contracts as c

__all__ = ["OTHER", "STRUCTURED", "Kind", "PlanJob", "Table", "Value", "fold"]


def fold(name: str) -> str:
    """A name as GitHub compares context properties, object keys and function names."""
    return name.lower()


@attrs.frozen
class Table:
    """The task table of one plan step: its identity across workflows and its IDs."""

    key: str  # the same for every step that names the same table
    label: str  # how a message names it
    ids: tuple[str, ...] | None  # None when the table could not be read (nothing is checked)

    def find(self, task: str) -> str | None:
        """The ID ``task`` names, compared as GitHub compares keys: without regard to case."""
        for known in self.ids or ():
            if fold(known) == fold(task):
                return known
        return None


@attrs.frozen
class PlanJob:
    """A job holding a step that runs the action, by the folded IDs of those steps."""

    key: str
    steps: dict[str, Table]  # folded step id -> the table of that step


class Kind(enum.Enum):
    OTHER = "other"  # nothing of the plan, or nothing the wiring depends on
    LITERAL = "literal"
    OUTPUT = "output"  # a string output of the action (name in ``name``)
    RUN = "run-object"  # fromJSON(run): task ID -> boolean
    SELECTED = "selected-array"  # fromJSON(selected): array of IDs
    MATRIX = "matrix-object"  # fromJSON(matrix) or its include list
    TASK_BOOLEAN = "task-boolean"  # one task's decision as a boolean
    TASK_STRING = "task-string"  # one task's decision forwarded as 'true' / 'false'
    HAS_TASKS_BOOLEAN = "has-tasks-boolean"  # fromJSON(has-tasks)
    PLAN_OBJECT = "plan-object"  # needs.<plan> or needs.<plan>.outputs as a whole


@attrs.frozen
class Value:
    kind: Kind
    table: Table | None = None
    name: str | None = None  # the output's name, or the task's ID when known
    literal: object = None

    @property
    def is_plan(self) -> bool:
        return self.kind not in (Kind.OTHER, Kind.LITERAL)

    @property
    def structured(self) -> bool:
        """A whole plan value that only a script or a matrix can use as it is."""
        if self.kind is Kind.OUTPUT:
            return self.name in STRUCTURED
        return self.kind in (Kind.RUN, Kind.SELECTED, Kind.MATRIX, Kind.PLAN_OBJECT)


OTHER = Value(Kind.OTHER)
# The outputs that carry the whole plan: passed on as they are, they consume every task.
STRUCTURED = frozenset({c.OUTPUT_RUN, c.OUTPUT_SELECTED, c.OUTPUT_MATRIX})
