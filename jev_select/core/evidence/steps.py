"""Steps in the evidence: their entries, where their commands are written, and the expressions
and bounds that shape what they show (docs/reference.md, "Jobs in the evidence", "Expressions in
commands", "Composite actions"). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Required, TypedDict

import attrs

from ... import contracts as c
from .expressions import (
    Value,
    Values,
    is_whole_expression,
    references,
    substitute,
    with_alternatives,
)
from .files import JsonValue, YamlDocument, YamlMapping, is_dynamic, json_safe, normalise_path
from .workflow_shapes import MATRIX, NAME, RUN, USES, WITH

__all__ = [
    "SELF_PREFIX",
    "EvidenceJob",
    "EvidenceStep",
    "JobSource",
    "StepRun",
    "StepSite",
    "checkout_path",
    "commands_of",
    "directory_text",
    "first_string",
    "foreign_checkout",
    "is_cut",
    "local_action",
    "run_default",
    "shown_run",
    "site_of",
    "step_entry",
    "step_label",
    "step_run",
    "substituted",
    "workflow_call_inputs",
]

_CURRENT_DIRECTORY = "."
_LOCAL_PREFIX = "./"
# GitHub's self-repository form: the repository and commit of the file that says it. In this
# repository's workflows that is the metadata commit, read like ``./``.
SELF_PREFIX = "$/"
_CHECKOUT = "actions/checkout@"
# ``repository:`` values that name the repository the workflow runs for.
_THIS_REPOSITORY = frozenset({"${{github.repository}}"})
_PATH = "path"
_REPOSITORY = "repository"
_REF = "ref"
_DEFAULTS = "defaults"
_INPUTS = "inputs"
_GITHUB = "github"
_WORKSPACE = "workspace"
_ON = "on"
_WORKFLOW_CALL = "workflow_call"

# The evidence entries of a step and of a job (docs/reference.md, "Jobs in the evidence"). The
# functional form because ``with`` is a Python keyword; the evidence sorts its keys, so the order
# here is not the order written.
EvidenceStep = TypedDict(
    "EvidenceStep",
    {
        "working_directory": Required[str],
        "name": JsonValue,
        "run": JsonValue,
        "uses": JsonValue,
        "with": JsonValue,
        "shell": str,
        "parallel": int,
        "background": bool,
        "steps": list["EvidenceStep"],  # a composite action's steps
    },
    total=False,
)
EvidenceJob = TypedDict(
    "EvidenceJob",
    {
        "id": Required[str],
        "workflow": Required[str],
        "name": str,
        "uses": str,
        "with": dict[str, JsonValue],
        "jobs": list["EvidenceJob"],  # a called workflow's jobs
        "steps": list[EvidenceStep],
    },
    total=False,
)


@attrs.frozen
class JobSource:
    """Where a workflow comes from: this repository, or another one at a resolved commit."""

    label: str  # the workflow as written by the task or the caller
    file: str  # its path inside its repository
    document: YamlDocument
    repository: str
    commit: str
    resolved_sha: str | None = None  # set for another repository's workflow


@attrs.frozen
class StepSite:
    """Where a step's command is written, to name it beside the gaps it causes."""

    workflow: str  # the workflow as the task or the call names it
    job: str
    step: str  # the step's name, else its ``uses``, else its 1-based position
    file: str  # the file holding the step: a workflow, or an action's metadata file
    line: int  # 1-based line of the first character of the ``run`` value
    column: int
    block: bool  # a block scalar: the value's lines start one line below, at ``column``
    action: str | None = None  # the composite action the step belongs to


@attrs.frozen
class StepRun:
    """A step command to scan for package scripts, with its effective directory.

    ``expression`` is set when the command GitHub runs is wholly an expression that could not be
    decided (``command-expression-unresolved``): ``command`` is then that text, never scanned.
    """

    command: str
    working_directory: str
    site: StepSite | None = None
    expression: bool = False
    # Directories an earlier step of the job filled with another repository's checkout ("." for
    # the whole workspace): package scripts there are not this repository's.
    foreign: tuple[str, ...] = ()
    shell: str | None = None  # the step's ``shell`` as written, None for the runner's default


def run_default(owner: YamlMapping, field: str) -> str | None:
    defaults = owner.get(_DEFAULTS)
    run = defaults.get(RUN) if isinstance(defaults, Mapping) else None
    value = run.get(field) if isinstance(run, Mapping) else None
    return value if isinstance(value, str) else None


def first_string(*values: object) -> str | None:
    for value in values:
        if isinstance(value, str):
            return value
    return None


def checkout_path(step: YamlMapping) -> str | None:
    """The ``path`` of an ``actions/checkout`` step that checks out this repository's commit."""
    uses = step.get(USES)
    options = step.get(WITH)
    if not isinstance(uses, str) or not uses.startswith(_CHECKOUT):
        return None
    if not isinstance(options, Mapping) or _REPOSITORY in options or _REF in options:
        return None
    path = options.get(_PATH)
    if not isinstance(path, str) or is_dynamic(path):
        return None
    return normalise_path(path.rstrip("/"))


def local_action(uses: str, checkouts: list[str]) -> str:
    """A local action under a sub-checkout of this repository, relative to the repository."""
    if uses.startswith(SELF_PREFIX):
        return _LOCAL_PREFIX + uses[len(SELF_PREFIX) :]
    for checkout in checkouts:
        prefix = f"{_LOCAL_PREFIX}{checkout}/"
        if uses.startswith(prefix) and len(uses) > len(prefix):
            return _LOCAL_PREFIX + uses[len(prefix) :]
    return uses


def workflow_call_inputs(data: YamlMapping) -> object:
    on = data.get(_ON)
    trigger = on.get(_WORKFLOW_CALL) if isinstance(on, Mapping) else None
    return trigger.get(_INPUTS) if isinstance(trigger, Mapping) else None


def substituted(value: JsonValue, values: Values) -> JsonValue:
    """A copied value with the decidable references of every string replaced."""
    if not values:
        return value
    if isinstance(value, str):
        return substitute(value, values)
    if isinstance(value, list):
        return [substituted(item, values) for item in value]
    if isinstance(value, dict):
        return {key: substituted(item, values) for key, item in value.items()}
    return value


def directory_text(directory: str) -> str:
    """A working directory with ``${{ github.workspace }}`` read as the root it names."""
    resolved = substitute(directory, {_GITHUB: {_WORKSPACE: _CURRENT_DIRECTORY}})
    if resolved != directory:
        resolved = resolved.replace("/./", "/").removesuffix("/.") if resolved != "." else "."
        if resolved.startswith("./") and len(resolved) > 2:
            resolved = resolved[2:]
    return resolved


def commands_of(
    run: str,
    directory: str,
    values: Values,
    combinations: Sequence[Mapping[str, Value]] | None,
) -> list[tuple[str, str]]:
    """The distinct ``(command, directory)`` pairs one step runs: one per matrix combination its
    text depends on, and one per literal an expression of it can give (a matrix nobody can
    expand, and any other expression, stay in place)."""
    text = substitute(run, values)
    uses_matrix = bool(references(text, MATRIX) or references(directory, MATRIX))
    pairs: list[tuple[str, str]] = []
    if not uses_matrix or combinations is None:
        combinations = ({},)
    for combination in combinations:
        matrix: Values = {MATRIX: combination}
        command = substitute(text, matrix) if combination else text
        where = directory_text(substitute(directory, matrix)) if combination else directory
        for variant in with_alternatives(command):
            if (variant, where) not in pairs:
                pairs.append((variant, where))
    return pairs


def step_entry(step: YamlMapping, directory: str, values: Values) -> EvidenceStep:
    """A step's evidence entry: its directory, and its fields copied with the decidable
    expressions replaced."""
    entry: EvidenceStep = {"working_directory": directory}
    for field in (NAME, RUN, USES, WITH):
        if field in step:
            entry[field] = substituted(json_safe(step[field]), values)
    return entry


def step_run(
    command: str,
    directory: str,
    site: StepSite,
    foreign: tuple[str, ...] = (),
    shell: str | None = None,
) -> StepRun:
    return StepRun(command, directory, site, is_whole_expression(command), foreign, shell)


def foreign_checkout(step: YamlMapping) -> str | None:
    """Where an ``actions/checkout`` step puts another repository (``.`` for the workspace
    itself, and for a path nobody can know): None when it checks out this one."""
    uses = step.get(USES)
    options = step.get(WITH)
    if not isinstance(uses, str) or not uses.startswith(_CHECKOUT):
        return None
    if not isinstance(options, Mapping) or _REPOSITORY not in options:
        return None
    repository = options.get(_REPOSITORY)
    if isinstance(repository, str) and repository.replace(" ", "") in _THIS_REPOSITORY:
        return None
    path = options.get(_PATH)
    if path is None:
        return _CURRENT_DIRECTORY
    if not isinstance(path, str) or is_dynamic(path):
        return _CURRENT_DIRECTORY
    return normalise_path(path.rstrip("/")) or _CURRENT_DIRECTORY


def step_label(step: YamlMapping, position: int) -> str:
    name = step.get(NAME)
    if isinstance(name, str) and name:
        return name
    uses = step.get(USES)
    if isinstance(uses, str):
        return uses
    return f"#{position + 1}"


def site_of(
    document: YamlDocument,
    path: list[str | int],
    *,
    workflow: str,
    job: str,
    step: str,
    file: str,
    action: str | None = None,
) -> StepSite:
    line, column, block = document.value_start(path)
    return StepSite(workflow, job, step, file, line, column, block, action)


def shown_run(text: str, room: int) -> tuple[str, int]:
    """What another repository's composite step shows of its command: all of it when it is short
    and the action has room left, else a marker with its size; and the room left."""
    size = len(text.encode("utf-8"))
    if size <= min(room, c.COMPOSITE_REMOTE_STEP_RUN_BYTES):
        return text, room - size
    return c.COMPOSITE_REMOTE_RUN_CUT.format(count=size), room


def is_cut(run: object) -> bool:
    return isinstance(run, str) and run.startswith(c.COMPOSITE_REMOTE_RUN_CUT_PREFIX)
