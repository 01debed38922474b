"""The workflows of a repository that run the action, and the task table each step names
(docs/reference.md, "Checking the workflows"). Pure.

A workflow is read with the node tree beside its value, so every expression found later can be
placed at its line and column. A step runs the action when its ``uses:`` names a repository
called ``jev-select`` (any owner, any ref), or ``./`` inside the action's own repository.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from yaml.nodes import Node, ScalarNode

from ... import contracts as c
from .. import yamlstrict
from .problems import Located, node_at

__all__ = [
    "PlanStep",
    "TableSource",
    "Workflow",
    "is_action_step",
    "plan_steps",
    "read_workflow",
    "workflow_paths",
]


@attrs.frozen
class Workflow:
    """One workflow file at the commit: its text, value and nodes."""

    path: str  # repository-relative, as listed at the commit
    text: str
    document: Located


@attrs.frozen
class TableSource:
    """Where a step's task table comes from: inline text, a file of the repository, or neither
    (then ``problem`` says why no table can be read)."""

    inline: str | None = None
    inline_node: Node | None = None
    file: str | None = None  # repository-relative, without a leading ./
    file_node: Node | None = None
    problem: str | None = None  # a fixed sentence for table-missing or table-dynamic
    dynamic: bool = False  # the table comes from an expression: nothing can be checked


@attrs.frozen
class PlanStep:
    """A step that runs the action, in the job that holds it."""

    workflow: str
    job: str  # the job key as written
    index: int  # the step's index in ``steps``
    step_id: str | None
    table: TableSource
    node: Node | None  # the step's ``uses:`` value, where problems of the step are placed


def workflow_paths(paths: Sequence[str]) -> tuple[str, ...]:
    """The workflow files GitHub runs: YAML files directly under ``.github/workflows/``."""
    return tuple(
        sorted(
            path
            for path in paths
            if path.startswith(c.WORKFLOWS_DIRECTORY)
            and "/" not in path[len(c.WORKFLOWS_DIRECTORY) :]
            and path.endswith(c.WORKFLOW_SUFFIXES)
        )
    )


def read_workflow(path: str, data: bytes) -> Workflow | None:
    """The workflow of ``data``, or None when it is not UTF-8 YAML of a mapping."""
    try:
        text = data.decode("utf-8-sig")
        # Workflows may use anchors and aliases: GitHub reads them.
        value, node = yamlstrict.parse_strict(text, aliases=True)
    except (UnicodeDecodeError, yamlstrict.YamlStrictError):
        return None
    if not isinstance(value, dict):
        return None
    return Workflow(path=path, text=text, document=Located(value, node))


def is_action_step(uses: object, *, own_repository: bool) -> bool:
    """Whether ``uses`` runs the action: ``<owner>/jev-select@<ref>``, or ``./`` in the action's
    own repository (a local action takes no ref, so only the bare form counts)."""
    if not isinstance(uses, str):
        return False
    reference = uses.strip()
    if reference in ("./", ".") and own_repository:
        return True
    name, at, ref = reference.partition("@")
    if not at or not ref:
        return False
    parts = name.split("/")
    # Repository names are case-insensitive on GitHub.
    return len(parts) == 2 and bool(parts[0]) and parts[1].lower() == c.ACTION_REPOSITORY_NAME


def _text_input(inputs: dict[str, object], name: str) -> str | None:
    value = inputs.get(name)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _table_source(workflow: Workflow, job: str, index: int, step: dict[str, object]) -> TableSource:
    inputs = step.get("with")
    inputs = inputs if isinstance(inputs, dict) else {}
    inline = _text_input(inputs, c.INPUT_TASKS)
    file = _text_input(inputs, c.INPUT_TASKS_FILE)
    inline = inline if inline is not None and inline.strip(c.WHITESPACE) else None
    file = file.strip(c.WHITESPACE) if file is not None and file.strip(c.WHITESPACE) else None
    place = ("jobs", job, "steps", index, "with")
    inline_node = node_at(workflow.document, *place, c.INPUT_TASKS)
    file_node = node_at(workflow.document, *place, c.INPUT_TASKS_FILE)
    if inline is not None and file is not None:
        return TableSource(
            inline_node=inline_node,
            problem=f"the step sets both {c.INPUT_TASKS} and {c.INPUT_TASKS_FILE}; the action "
            "refuses that, set one",
        )
    if inline is None and file is None:
        return TableSource(
            problem=f"the step sets neither {c.INPUT_TASKS} nor {c.INPUT_TASKS_FILE}; the action "
            "needs one"
        )
    chosen = inline if inline is not None else file
    assert chosen is not None
    if "${{" in chosen:
        return TableSource(
            inline_node=inline_node if inline is not None else file_node,
            problem="the task table comes from an expression, so its task IDs cannot be checked",
            dynamic=True,
        )
    if inline is not None:
        return TableSource(inline=inline, inline_node=inline_node)
    assert file is not None
    return TableSource(file=file.removeprefix("./"), file_node=file_node)


def plan_steps(workflow: Workflow, *, own_repository: bool) -> tuple[PlanStep, ...]:
    """Every step of ``workflow`` that runs the action, in file order."""
    jobs = workflow.document.value.get("jobs")
    if not isinstance(jobs, dict):
        return ()
    found: list[PlanStep] = []
    for job, body in jobs.items():
        steps = body.get("steps") if isinstance(body, dict) else None
        if not isinstance(steps, list):
            continue
        for index, step in enumerate(steps):
            if not isinstance(step, dict) or not is_action_step(
                step.get("uses"), own_repository=own_repository
            ):
                continue
            step_id = step.get("id")
            found.append(
                PlanStep(
                    workflow=workflow.path,
                    job=str(job),
                    index=index,
                    step_id=step_id if isinstance(step_id, str) else None,
                    table=_table_source(workflow, str(job), index, step),
                    node=node_at(workflow.document, "jobs", job, "steps", index, "uses"),
                )
            )
    return tuple(found)


def block_scalar_indent(text: str, node: Node | None) -> int | None:
    """The indentation of a literal block scalar's content (``|``, ``|-``, ``|+``), or None for
    any other style, where the lines of the value are not the lines of the file."""
    if not isinstance(node, ScalarNode) or node.style != "|" or node.start_mark is None:
        return None
    start = node.start_mark.index
    end = node.end_mark.index if node.end_mark is not None else len(text)
    header, _, body = text[start:end].partition("\n")
    if any(character.isdigit() for character in header):
        return None  # an explicit indentation indicator: counted from the parent, not read here
    for line in body.split("\n"):
        if line.strip(" \r"):
            return len(line) - len(line.lstrip(" "))
    return None
