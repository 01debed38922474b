"""Phase 1 of the evidence builder: jobs, their steps and the reusable workflows they call. Pure.

A job that calls a reusable workflow (``jobs.<id>.uses``) carries the caller's ``with`` values
and, under ``jobs``, every job of the called workflow in document order, expanded the same way
to the nesting depth GitHub allows (``REUSABLE_WORKFLOW_MAX_DEPTH`` workflows in one chain). A
local call (``./path.yml``) is read at the metadata commit; a call into another repository
(``owner/repo/path@ref``) is fetched like an external action. A cycle, a chain that is too deep,
a call that cannot be read or parsed, and a local call made from another repository's workflow
(whose meaning depends on that repository) keep ``reusable-workflow-unresolved:<uses>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .. import contracts as c
from .evidence_files import (
    MetadataFiles,
    RemoteWorkflow,
    YamlDocument,
    is_dynamic,
    json_safe,
    normalise_path,
)
from .workflow_shapes import flatten_steps, job_shape_supported, workflow_shape_supported

__all__ = ["JobSource", "JobsPhase", "StepRun"]

_JOBS = "jobs"
_STEPS = "steps"
_NAME = "name"
_RUN = "run"
_USES = "uses"
_WITH = "with"
_NEEDS = "needs"
_SHELL = "shell"
_PATH = "path"
_REPOSITORY = "repository"
_REF = "ref"
_DEFAULTS = "defaults"
_WORKING_DIRECTORY = "working-directory"
_CURRENT_DIRECTORY = "."
_LOCAL_PREFIX = "./"
# GitHub's self-repository form: the repository and commit of the file that says it. In this
# repository's workflows that is the metadata commit, read like ``./``.
_SELF_PREFIX = "$/"
_CHECKOUT = "actions/checkout@"

_KIND_WORKFLOW_JOB = c.PROVENANCE_KINDS[0]
_KIND_WORKFLOW_DEFAULTS = c.PROVENANCE_KINDS[1]
_KIND_JOB_DEFAULTS = c.PROVENANCE_KINDS[2]
_KIND_WORKFLOW_STEP = c.PROVENANCE_KINDS[3]


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
class StepRun:
    """A step command to scan for package scripts, with its effective directory."""

    command: str
    working_directory: str


Record = Callable[..., None]


def _run_default(owner: Mapping[str, Any], field: str) -> str | None:
    defaults = owner.get(_DEFAULTS)
    run = defaults.get(_RUN) if isinstance(defaults, Mapping) else None
    value = run.get(field) if isinstance(run, Mapping) else None
    return value if isinstance(value, str) else None


def _first_string(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str):
            return value
    return None


def _checkout_path(step: Mapping[str, Any]) -> str | None:
    """The ``path`` of an ``actions/checkout`` step that checks out this repository's commit."""
    uses = step.get(_USES)
    options = step.get(_WITH)
    if not isinstance(uses, str) or not uses.startswith(_CHECKOUT):
        return None
    if not isinstance(options, Mapping) or _REPOSITORY in options or _REF in options:
        return None
    path = options.get(_PATH)
    if not isinstance(path, str) or is_dynamic(path):
        return None
    return normalise_path(path.rstrip("/"))


def _local_action(uses: str, checkouts: list[str]) -> str:
    """A local action under a sub-checkout of this repository, relative to the repository."""
    if uses.startswith(_SELF_PREFIX):
        return _LOCAL_PREFIX + uses[len(_SELF_PREFIX) :]
    for checkout in checkouts:
        prefix = f"{_LOCAL_PREFIX}{checkout}/"
        if uses.startswith(prefix) and len(uses) > len(prefix):
            return _LOCAL_PREFIX + uses[len(prefix) :]
    return uses


class JobsPhase:
    """Collects the evidence of a task's jobs into the lists it is given."""

    def __init__(
        self,
        files: MetadataFiles,
        *,
        warn: Callable[[str], None],
        hint: Callable[[str], None],
        record: Record,
    ) -> None:
        self.files = files
        self.warn = warn
        self.hint = hint
        self.record = record
        self.uses: dict[str, dict[str, Any]] = {}  # action -> merged ``with``
        self.runs: list[StepRun] = []
        self.native_dependencies: set[str] = set()
        self.notes: list[str] = []

    def local_source(self, workflow: str, document: YamlDocument) -> JobSource:
        file = normalise_path(workflow) or workflow
        return JobSource(workflow, file, document, self.files.repository, self.files.commit)

    def missing_job(self, source: JobSource, job_id: str) -> None:
        """``job-missing``; a note names the key when the task used a job's display name."""
        self.warn(f"{c.WARN_JOB_MISSING}{source.label}#{job_id}")
        jobs = source.document.data.get(_JOBS)
        for key, job in jobs.items() if isinstance(jobs, Mapping) else ():
            if isinstance(job, Mapping) and job.get(_NAME) == job_id:
                self.notes.append(
                    c.NOTE_JOB_NAME_NOT_KEY.format(workflow=source.label, name=job_id, key=str(key))
                )
                return

    def job(
        self,
        source: JobSource,
        job_id: str,
        job: Mapping[str, Any],
        chain: tuple[str, ...],
        *,
        top_level: bool = True,
    ) -> dict[str, Any]:
        document = source.document
        workflow_data = document.data
        item: dict[str, Any] = {"id": job_id, "workflow": source.label}
        name = job.get(_NAME)
        if isinstance(name, str):
            item["name"] = name
        needs = job.get(_NEEDS)
        if top_level and isinstance(needs, str):
            self.native_dependencies.add(needs)
        elif top_level and isinstance(needs, list):
            self.native_dependencies.update(need for need in needs if isinstance(need, str))

        job_path: list[str | int] = [_JOBS, job_id]
        self._record(source, _KIND_WORKFLOW_JOB, document.location(job_path, with_key=True))
        if isinstance(workflow_data.get(_DEFAULTS), Mapping):
            location = document.location([_DEFAULTS], with_key=True)
            self._record(source, _KIND_WORKFLOW_DEFAULTS, location)
        if isinstance(job.get(_DEFAULTS), Mapping):
            location = document.location([*job_path, _DEFAULTS], with_key=True)
            self._record(source, _KIND_JOB_DEFAULTS, location)

        if not workflow_shape_supported(workflow_data) or not job_shape_supported(job):
            self.warn(f"{c.WARN_WORKFLOW_SHAPE_UNSUPPORTED}{source.label}#{job_id}")
        uses = job.get(_USES)
        if isinstance(uses, str):
            item[_USES] = uses
            if isinstance(job.get(_WITH), Mapping):
                item[_WITH] = json_safe(job[_WITH])
            called = self._call(uses, source, chain)
            if called is None:
                self.warn(c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + uses)
            else:
                item[_JOBS] = called
            return item
        item[_STEPS] = self._steps(source, job, job_path)
        return item

    def _record(self, source: JobSource, kind: str, location: Mapping[str, int]) -> None:
        self.record(
            kind,
            repository=source.repository,
            commit=source.commit,
            file=source.file,
            location=location,
            sha256=source.document.sha256,
            resolved_sha=source.resolved_sha,
        )

    def _steps(
        self, source: JobSource, job: Mapping[str, Any], job_path: list[str | int]
    ) -> list[dict[str, Any]]:
        workflow_data = source.document.data
        workflow_directory = _run_default(workflow_data, _WORKING_DIRECTORY)
        job_directory = _run_default(job, _WORKING_DIRECTORY)
        workflow_shell = _run_default(workflow_data, _SHELL)
        job_shell = _run_default(job, _SHELL)
        if workflow_directory is not None:
            self.hint(workflow_directory)
        if job_directory is not None:
            self.hint(job_directory)
        raw_steps = job.get(_STEPS)
        shape = flatten_steps(raw_steps) if isinstance(raw_steps, list) else None
        if shape is not None and not shape.supported:
            self.warn(f"{c.WARN_WORKFLOW_SHAPE_UNSUPPORTED}{source.label}#{job_path[-1]}")
        steps: list[dict[str, Any]] = []
        checkouts: list[str] = []
        for flat in shape.steps if shape is not None else ():
            step = flat.step
            # An empty string is still the first string (docs/reference.md, "Jobs in the evidence");
            # only absence means ".".
            directory = _first_string(
                step.get(_WORKING_DIRECTORY), job_directory, workflow_directory
            )
            if directory is None:
                directory = _CURRENT_DIRECTORY
            shell = _first_string(step.get(_SHELL), job_shell, workflow_shell)
            entry: dict[str, Any] = {"working_directory": directory}
            for field in (_NAME, _RUN, _USES, _WITH):
                if field in step:
                    entry[field] = json_safe(step[field])
            if shell is not None:
                entry[_SHELL] = shell
            if flat.parallel is not None:
                entry[c.EVIDENCE_STEP_PARALLEL] = flat.parallel
            if flat.background:
                entry[c.EVIDENCE_STEP_BACKGROUND] = True
            steps.append(entry)
            self.hint(directory)
            self._record(
                source, _KIND_WORKFLOW_STEP, source.document.location([*job_path, *flat.path])
            )
            step_uses = step.get(_USES)
            if isinstance(step_uses, str):
                if source.resolved_sha is None and step_uses.startswith(
                    (_LOCAL_PREFIX, _SELF_PREFIX)
                ):
                    step_uses = _local_action(step_uses, checkouts)
                merged = self.uses.setdefault(step_uses, {})
                step_with = step.get(_WITH)
                if isinstance(step_with, Mapping):
                    merged.update(json_safe(step_with))
                checkout = _checkout_path(step)
                if checkout is not None and checkout not in checkouts:
                    checkouts.append(checkout)
            run = step.get(_RUN)
            if isinstance(run, str):
                self.runs.append(StepRun(run, directory))
        return steps

    def _call(
        self, uses: str, caller: JobSource, chain: tuple[str, ...]
    ) -> list[dict[str, Any]] | None:
        """The called workflow's jobs, or None when the call stays unresolved."""
        if len(chain) >= c.REUSABLE_WORKFLOW_MAX_DEPTH or is_dynamic(uses):
            return None
        source: JobSource
        if uses.startswith((_LOCAL_PREFIX, _SELF_PREFIX)):
            if caller.resolved_sha is not None:
                return None
            document = self.files.workflow(_local_action(uses, []))
            if isinstance(document, str):
                return None
            source = self.local_source(_local_action(uses, []), document)
            source = attrs.evolve(source, label=uses)
            identity = source.file
        else:
            remote = self.files.remote_workflow(uses)
            if not isinstance(remote, RemoteWorkflow):
                return None
            source = JobSource(
                uses,
                remote.file,
                remote.document,
                remote.repository,
                remote.resolved_sha,
                remote.resolved_sha,
            )
            identity = f"{remote.repository}@{remote.resolved_sha}:{remote.file}"
        if identity in chain:
            return None
        jobs = source.document.data.get(_JOBS)
        if not isinstance(jobs, Mapping) or not jobs:
            return None
        called: list[dict[str, Any]] = []
        for key, job in jobs.items():
            job_id = str(key)
            if not isinstance(job, Mapping):
                self.warn(f"{c.WARN_WORKFLOW_SHAPE_UNSUPPORTED}{source.label}#{job_id}")
                continue
            called.append(self.job(source, job_id, job, (*chain, identity), top_level=False))
        return called
