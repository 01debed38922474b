"""Check a task table against the repository at one commit (docs/reference.md, "Checking a
task table").

Pure core: the files at the commit, their contents and the lookups of other repositories'
actions and reusable workflows come in through ``Repository``; metadata is resolved by the same
entry point as a plan's (``resolve_with_lookups``), so check reports the gaps a plan would.
``force_paths`` that match no file are warnings; every metadata gap becomes a problem with the
code, message, severity and placement of its kind (``contracts.GAP_KINDS``), with a suggestion
where one job key is close.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs
from yaml.nodes import Node

from ... import contracts as c
from .. import yamlstrict
from ..evidence.resolve import Lookups, NoLookups, ReadFile, resolve_with_lookups
from ..models import TaskTable
from ..tasks import match_force_paths
from .problems import ERROR, WARNING, Located, ProblemLog, closest, node_at

__all__ = ["Repository", "check_repository"]

_GAP_CODE = re.compile(c.CHECK_CODE_PATTERN)


@attrs.frozen
class Repository:
    """What a check may know about the repository at one commit."""

    commit: str
    paths: tuple[str, ...]  # every file path at the commit
    read_file: ReadFile  # a path at the commit -> bytes, or None
    # Other repositories' actions and reusable workflows, looked up as a plan looks them up.
    lookups: Lookups = attrs.field(factory=NoLookups)
    repository: str = c.LOCAL_REPOSITORY_NAME
    clock: Callable[[], float] | None = None  # bounds the reusable-workflow expansion in time


def _gap_code(gap: str) -> tuple[str, str]:
    """The problem code and the detail of a warning: the kind's name, or for a warning of no
    known shape ``CHECK_METADATA_GAP`` and the whole warning."""
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
    suggestion = closest(job, list(keys))
    if suggestion is not None:
        return f'; did you mean "{suggestion}"?'
    if keys:
        return "; the jobs are " + ", ".join(f'"{key}"' for key in list(keys)[:10])
    return ""


def _gap_message(code: str, detail: str, repository: Repository) -> str:
    kind = c.GAP_KIND_BY_NAME.get(code)
    if kind is None or kind.check_message is None:
        template = c.GAP_CHECK_MESSAGE if detail else c.GAP_CHECK_MESSAGE_BARE
        return template.format(name=code, detail=detail)
    commit = repository.commit[:12]
    if kind.locator != c.GAP_AT_JOB:
        return kind.check_message.format(detail=detail, commit=commit)
    workflow, _, job = detail.rpartition("#")
    return kind.check_message.format(
        detail=detail, commit=commit, workflow=workflow, job=job
    ) + _job_suggestion(repository, workflow, job)


def _gap_node(document: Located, task_id: str, code: str, detail: str) -> tuple[Node | None, str]:
    kind = c.GAP_KIND_BY_NAME.get(code)
    locator = c.GAP_AT_WORKFLOW if kind is None else kind.locator
    task = document.value.get(task_id) if isinstance(document.value, dict) else None
    if isinstance(task, dict):
        if locator == c.GAP_AT_CONTEXT_FILE and isinstance(
            task.get(c.TASK_FIELD_CONTEXT_FILES), list
        ):
            items = task[c.TASK_FIELD_CONTEXT_FILES]
            for index, item in enumerate(items):
                if item == detail or (isinstance(item, str) and item.removeprefix("./") == detail):
                    return node_at(
                        document, task_id, c.TASK_FIELD_CONTEXT_FILES, index
                    ), c.TASK_FIELD_CONTEXT_FILES
        refs = task.get(c.TASK_FIELD_JOBS)
        if isinstance(refs, list):
            # A context file not found above falls back to the references, as any detail does.
            workflow, _, job = (
                detail.rpartition("#") if locator == c.GAP_AT_JOB else (detail, "", "")
            )
            for index, ref in enumerate(refs):
                if not isinstance(ref, dict) or ref.get(c.JOB_REF_FIELD_WORKFLOW) != workflow:
                    continue
                if job and ref.get(c.JOB_REF_FIELD_JOB) == job:
                    return node_at(
                        document, task_id, c.TASK_FIELD_JOBS, index, c.JOB_REF_FIELD_JOB
                    ), c.TASK_FIELD_JOBS
                if not job or ref.get(c.JOB_REF_FIELD_JOB) is None:
                    return node_at(
                        document, task_id, c.TASK_FIELD_JOBS, index, c.JOB_REF_FIELD_WORKFLOW
                    ), c.TASK_FIELD_JOBS
            return node_at(document, task_id, c.TASK_FIELD_JOBS), c.TASK_FIELD_JOBS
    return node_at(document, task_id), ""


def _causes(notes: tuple[str, ...]) -> dict[str, str]:
    """Gap -> the command it comes from, read from the notes of the evidence builder."""
    causes: dict[str, str] = {}
    for note in notes:
        gap, separator, cause = note.partition(c.NOTE_GAP_CAUSE_SEPARATOR)
        if separator and gap not in causes:
            causes[gap] = c.NOTE_GAP_CAUSE_SEPARATOR.strip() + " " + cause
    return causes


def check_repository(
    checker: ProblemLog, document: Located, table: TaskTable, repository: Repository
) -> None:
    """Add to ``checker`` what ``table`` (already free of errors) gets wrong at the commit."""
    for task in table.tasks:
        for index, pattern in enumerate(task.force_paths or ()):
            if not match_force_paths((pattern,), repository.paths):
                checker.add(
                    c.CHECK_FORCE_PATHS_NO_MATCH,
                    f'pattern "{pattern}" matches no file at {repository.commit[:12]}',
                    node_at(document, task.id, c.TASK_FIELD_FORCE_PATHS, index),
                    task=task.id,
                    field=c.TASK_FIELD_FORCE_PATHS,
                    severity=WARNING,
                )
    metadata = resolve_with_lookups(
        table,
        read_file=repository.read_file,
        lookups=repository.lookups,
        repository=repository.repository,
        commit=repository.commit,
        clock=repository.clock,
        list_paths=lambda: repository.paths,
    )
    for task_id, entry in metadata.evidence.items():
        gaps = entry.job_metadata.get("warnings", []) if entry.job_metadata is not None else []
        causes = _causes(metadata.notes.get(task_id, ()))
        for gap in gaps if isinstance(gaps, list) else ():
            if not isinstance(gap, str):
                continue
            code, detail = _gap_code(gap)
            node, field = _gap_node(document, task_id, code, detail)
            message = _gap_message(code, detail, repository)
            if gap in causes:
                # The command that causes it, at its line and column in the workflow or action.
                message += "; " + causes[gap]
            checker.add(
                code,
                message,
                node,
                task=task_id,
                field=field or None,
                severity=ERROR if code in c.CHECK_GAP_ERRORS else WARNING,
            )
