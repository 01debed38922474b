"""The jobs of a CI workflow file, and which tasks a job GitHub lists counts for.

Pure core. A workflow run lists its jobs by display name: a job's ``name:`` as evaluated (its
ID without one), a matrix job's name followed by `` (<values>)`` unless the name already reads
``matrix``, and a job of a called workflow as ``<caller name> / <called job name>``. This module
turns each workflow job into the set of names it may be listed under (an expression matches any
text) and attributes a listed name: one workflow job when exactly one can carry the name, none
(null) otherwise. Tasks name their jobs in the table (``jobs:``); a listed job counts for every
task that references a workflow job it may be, so that a doubtful attribution can only make a
task's result worse, never hide a failure.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from types import MappingProxyType

import attrs

from .. import contracts as c
from . import yamlstrict
from .evidence.files import normalise_path
from .jsonutil import code_unit_key
from .models import TaskTable

__all__ = [
    "CiWorkflow",
    "JobAttribution",
    "WorkflowJob",
    "attribution_for",
    "ci_workflow",
    "matrix_values",
    "read_ci_workflow",
    "sorted_tasks",
    "workflow_path",
]

_EXPRESSION = re.compile(c.WORKFLOW_EXPRESSION_PATTERN, re.DOTALL)
_MATRIX_WORD = re.compile(rf"\b{c.WORKFLOW_KEY_MATRIX}\b")
# An expression that is a matrix value and nothing else: ``${{ matrix.os }}``.
_MATRIX_KEY = re.compile(
    rf"\$\{{\{{\s*{c.WORKFLOW_KEY_MATRIX}\.([A-Za-z_][A-Za-z0-9_-]*)\s*\}}\}}",
    re.ASCII | re.IGNORECASE,
)
# Whatever an expression or a matrix evaluates to: any text, none included.
_ANY = ".*"
_MATRIX_SUFFIX = rf"(?:{re.escape(c.MATRIX_JOB_NAME_SEPARATOR)}.*\))?"


@attrs.frozen
class WorkflowJob:
    """One job of the workflow: its ID, the names GitHub may list it under (a regular
    expression matched whole), and the job IDs it needs, in written order."""

    id: str
    pattern: str
    needs: tuple[str, ...]

    def may_be(self, name: str) -> bool:
        """Whether a job listed as ``name`` may be this job."""
        return re.fullmatch(self.pattern, name, re.DOTALL) is not None


def _read_only(needs: Mapping[str, tuple[str, ...]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(dict(needs))


@attrs.frozen
class CiWorkflow:
    """The jobs of one workflow file, in written order."""

    jobs: tuple[WorkflowJob, ...]

    def candidates(self, name: str) -> tuple[str, ...]:
        """The IDs of every job a job listed as ``name`` may be, in written order."""
        return tuple(job.id for job in self.jobs if job.may_be(name))

    @property
    def needs(self) -> Mapping[str, tuple[str, ...]]:
        """Job ID -> the job IDs it needs, for every job of the file."""
        return _read_only({job.id: job.needs for job in self.jobs})


def _scalar_text(value: object) -> str | None:
    """A matrix value as an expression renders it in a name, or None for one that is not a
    plain scalar (an object or a list is rendered in ways not modelled here)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None


def matrix_values(strategy: object) -> Mapping[str, tuple[str, ...]] | None:
    """Each key of a written-out matrix (lower-cased) and every text its value may read as, or
    None when the matrix is computed (an expression in its shape) and any value is possible.

    A key that only ``include`` adds is missing from some legs, which read it as empty text.
    """
    if not isinstance(strategy, Mapping):
        return None
    matrix = strategy.get(c.WORKFLOW_KEY_MATRIX)
    if not isinstance(matrix, Mapping):
        return None
    axes: dict[str, list[object]] = {}
    included: list[Mapping[object, object]] = []
    for key, value in matrix.items():
        if key == c.WORKFLOW_MATRIX_INCLUDE:
            if not isinstance(value, list) or not all(isinstance(row, Mapping) for row in value):
                return None
            included = value
        elif key == c.WORKFLOW_MATRIX_EXCLUDE:
            continue  # removing legs never adds a name
        elif isinstance(key, str) and isinstance(value, list):
            axes[key] = value
        else:
            return None
    values: dict[str, set[str]] = {}
    for key, listed in axes.items():
        for item in listed:
            text = _scalar_text(item)
            if text is None:
                return None
            values.setdefault(key, set()).add(text)
    for row in included:
        for key, item in row.items():
            text = _scalar_text(item)
            if not isinstance(key, str) or text is None:
                return None
            values.setdefault(key, set()).add(text)
    for key in values:
        if key not in axes:
            # Only some legs carry a key that include alone adds; the others read it as empty.
            values[key].add("")
    # Expressions read properties whatever their case, as GitHub does.
    folded: dict[str, set[str]] = {}
    for key, found in values.items():
        folded.setdefault(key.lower(), set()).update(found)
    return MappingProxyType({key: tuple(sorted(found)) for key, found in folded.items()})


def _expression_pattern(expression: str, matrix: Mapping[str, tuple[str, ...]] | None) -> str:
    """What one ``${{ }}`` may read as: a written-out matrix key's values (empty text for a key
    the matrix lacks) or the expression itself, when it is nothing but ``matrix.<key>``; any
    text otherwise."""
    named = _MATRIX_KEY.fullmatch(expression)
    if named is None or matrix is None:
        return _ANY
    # A job its condition skipped is listed once, its matrix never expanded: the expression
    # then stands in the name as written.
    found = (*matrix.get(named.group(1).lower(), ("",)), expression)
    return "(?:" + "|".join(re.escape(text) for text in found) + ")"


def _name_pattern(template: str, matrix: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """The names ``template`` may evaluate to: its text as written, each expression as what it
    may read as (:func:`_expression_pattern`)."""
    parts: list[str] = []
    position = 0
    for found in _EXPRESSION.finditer(template):
        parts.append(re.escape(template[position : found.start()]))
        parts.append(_expression_pattern(found.group(), matrix))
        position = found.end()
    parts.append(re.escape(template[position:]))
    return "".join(parts)


def _needs(value: object) -> tuple[str, ...]:
    listed = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    needs: list[str] = []
    for item in listed:
        if isinstance(item, str) and item and item not in needs:
            needs.append(item)
    return tuple(needs)


def _job_pattern(job_id: str, body: Mapping[object, object]) -> str:
    template = body.get(c.WORKFLOW_KEY_NAME)
    if template is None:
        own = re.escape(job_id)
        uses_matrix = False
    elif isinstance(template, str):
        own = _name_pattern(template, matrix_values(body.get(c.WORKFLOW_KEY_STRATEGY)))
        uses_matrix = any(
            _MATRIX_WORD.search(found.group()) for found in _EXPRESSION.finditer(template)
        )
    else:
        # A name GitHub would not take as text: any listed name may be this job.
        own, uses_matrix = _ANY, True
    strategy = body.get(c.WORKFLOW_KEY_STRATEGY)
    matrix = isinstance(strategy, Mapping) and c.WORKFLOW_KEY_MATRIX in strategy
    if matrix and not uses_matrix:
        own += _MATRIX_SUFFIX
    if body.get(c.WORKFLOW_KEY_USES) is not None:
        # The called workflow's own jobs follow the caller's name; they are not read here.
        own += re.escape(c.WORKFLOW_CALLED_JOB_SEPARATOR) + _ANY
    return own


def ci_workflow(document: object) -> CiWorkflow | None:
    """The jobs of a parsed workflow file, or None when it holds no ``jobs`` mapping."""
    if not isinstance(document, Mapping):
        return None
    jobs = document.get(c.WORKFLOW_KEY_JOBS)
    if not isinstance(jobs, Mapping) or not jobs:
        return None
    found: list[WorkflowJob] = []
    for key, body in jobs.items():
        if not isinstance(key, str) or not key or not isinstance(body, Mapping):
            return None
        found.append(
            WorkflowJob(
                id=key,
                pattern=_job_pattern(key, body),
                needs=_needs(body.get(c.WORKFLOW_KEY_NEEDS)),
            )
        )
    return CiWorkflow(jobs=tuple(found))


def read_ci_workflow(data: bytes) -> CiWorkflow | None:
    """The jobs of a workflow file's bytes, or None when they are not a readable workflow."""
    try:
        # Workflows may use anchors and aliases: GitHub reads them.
        document = yamlstrict.load_strict(data.decode("utf-8-sig"), aliases=True)
    except (UnicodeDecodeError, yamlstrict.YamlStrictError):
        return None
    return ci_workflow(document)


def workflow_path(workflow: str) -> str | None:
    """The repository path of a workflow the REST API names by file (``ci.yml``), or None for
    a numeric workflow ID, whose file cannot be told without asking."""
    if workflow.isdigit():
        return None
    return c.WORKFLOWS_DIRECTORY + workflow


def _is_prefix_match(name: str, job: str) -> bool:
    prefix, separator, _ = name.partition(c.MATRIX_JOB_NAME_SEPARATOR)
    return name == job or (bool(separator) and prefix == job)


def _read_only_references(
    references: Mapping[str, tuple[str | None, ...]],
) -> Mapping[str, tuple[str | None, ...]]:
    return MappingProxyType(dict(references))


def _frozen(names: Iterable[str]) -> frozenset[str]:
    return frozenset(names)


@attrs.frozen
class JobAttribution:
    """How the listed jobs of one workflow's runs map to tasks.

    ``references`` holds, per task with ``jobs:`` references to this workflow, the job IDs it
    names (None: every job of the workflow); ``referencing`` every task with ``jobs:`` at all.
    Tasks without any keep the naming rule (``results.task_for_job``), or the job map.
    ``workflow`` is the file's jobs, None when it was not read.
    """

    workflow: CiWorkflow | None
    references: Mapping[str, tuple[str | None, ...]] = attrs.field(converter=_read_only_references)
    referencing: frozenset[str] = attrs.field(converter=_frozen)

    @property
    def needs(self) -> Mapping[str, tuple[str, ...]]:
        """The ``needs`` of the workflow's jobs; empty when the file was not read."""
        return self.workflow.needs if self.workflow is not None else _read_only({})

    def job_of(self, name: str) -> tuple[str | None, tuple[str, ...]]:
        """The one workflow job ``name`` may be (None when not exactly one), and every job it
        may be (all of them when the file was not read and the name is no job's)."""
        if self.workflow is None:
            return None, ()
        candidates = self.workflow.candidates(name)
        return (candidates[0] if len(candidates) == 1 else None), candidates

    def tasks_of(self, name: str, candidates: Sequence[str]) -> set[str]:
        """The referencing tasks a job listed as ``name`` counts for."""
        tasks: set[str] = set()
        for task_id, jobs in self.references.items():
            for job in jobs:
                if job is None:
                    tasks.add(task_id)  # every job of the workflow
                elif self.workflow is None:
                    # Not read: a job without a name of its own is listed by its ID.
                    if _is_prefix_match(name, job):
                        tasks.add(task_id)
                elif not candidates or job in candidates:
                    # A name no job of the file can carry may be any of them (the run may come
                    # from another version of the file): it counts for every referencing task.
                    tasks.add(task_id)
        return tasks


def attribution_for(table: TaskTable, workflow: str, jobs: CiWorkflow | None) -> JobAttribution:
    """The attribution of ``workflow``'s listed jobs (``ci.yml``) to the tasks of ``table``."""
    path = workflow_path(workflow)
    references: dict[str, tuple[str | None, ...]] = {}
    referencing: set[str] = set()
    for task in table.tasks:
        if task.jobs is None:
            continue
        referencing.add(task.id)
        named = tuple(
            ref.job
            for ref in task.jobs
            if path is not None and normalise_path(ref.workflow) == path
        )
        if named:
            references[task.id] = named
    return JobAttribution(workflow=jobs, references=references, referencing=referencing)


def sorted_tasks(tasks: Iterable[str], known: Collection[str]) -> tuple[str, ...]:
    """``tasks`` that are known task IDs, once each, in code-unit order."""
    return tuple(sorted({task for task in tasks if task in known}, key=code_unit_key))
