"""Task metadata evidence (docs/reference.md, "Task evidence"): workflows, actions, package scripts
and context files.

This module is pure apart from what it is handed: ``read_file`` (raw bytes of a repository path
at the metadata commit, or None) and a ``Lookups`` (external actions' metadata files and other
repositories' reusable workflows). Every command resolves metadata through
``resolve_with_lookups``; the lookups differ: GitHub's bounded, concurrent ones
(``edges.github.lookups.MetadataLookups``, for ``plan``, ``check`` and ``history`` with
consent), none at all (``NoLookups``), or a replay case's snapshot
(``edges.github.lookups.SnapshotLookups``). Nothing found in metadata is executed.

The builder is split by concern: ``files`` (reading, decoding, parsing and caching), ``jobs``
(jobs and reusable workflows), ``steps`` and ``composites`` (steps and composite actions),
``effects`` (what a reused expansion replays), ``expressions`` (the expressions the repository
decides), ``workflow_shapes`` (which keys and step forms are understood), and for package
scripts ``scripts_phase`` over ``shell``, ``package_managers`` and ``workspaces``. Every gap is
emitted as a ``contracts.GapKind`` (``kind.warning(detail)``).

Per task, resolution runs in four phases, and gaps are recorded in that order (first seen, once):

1. job references, in order (workflow, job, shape and reusable-workflow gaps);
2. actions, once per distinct ``uses`` in first-appearance order;
3. package scripts, reading each command of each step's ``run`` in job and step order;
4. context files, in the configured order.

Public API:

- ``resolve_with_lookups(tasks, *, read_file, lookups, repository, commit, clock=None,
  list_paths=None) -> MetadataResult``: the metadata phase of every command, in lookup rounds;
  ``list_paths()`` lists the commit's files (workspace globs need it; without it they stay gaps).
- ``Lookups`` (what the rounds ask of a lookup implementation), ``NoLookups``.
- ``resolve_metadata(tasks, *, read_file, fetch_action, repository, commit, fetch_workflow=None,
  budget=None, list_paths=None) -> MetadataResult``: one round (with per-task ``notes``
  explaining gaps to people)
- ``MetadataFiles(read_file, fetch_action, *, repository, commit, fetch_workflow=None,
  budget=None, list_paths=None)``: cached, decoded file access at one commit, shared by every
  task of a run (each file read, each workflow parsed, each action resolved, each called
  workflow expanded at most once).
- ``ExpansionBudget(*, clock=None, spent_s=0.0)``: the reusable-workflow expansion budget of
  one resolution (``expansion_budget``); the calling edge gives the clock (none: no time limit).
- ``build_evidence(task, metadata_files) -> TaskMetadata``: the pure per-task builder; its
  ``evidence`` is the ``TaskEvidence`` of the task and its ``hints`` the task's own
  working-directory hints (docs/reference.md, "Working-directory hints"), first-seen order.
- ``ActionFile``: what ``fetch_action`` returns on success, ``LookupFailure`` otherwise.
- ``normalise_path(text) -> str | None``: the path normalisation of docs/reference.md,
"Context files and path normalisation".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, NotRequired, Protocol, TypedDict

import attrs

from ... import contracts as c
from ..jsonutil import canonical_json, code_unit_key, sort_keys_deep
from ..models import MetadataResult, Task, TaskEvidence, TaskTable
from .budget import ExpansionBudget
from .files import (
    ActionFile,
    FetchAction,
    FetchWorkflow,
    ListPaths,
    LookupFailure,
    LookupOutcome,
    MetadataFiles,
    ReadFile,
    is_dynamic,
    normalise_path,
    sha256_text,
    whole_file_location,
)
from .jobs import EvidenceJob, JobsPhase
from .scripts_phase import PackageScript, ScriptsPhase

__all__ = [
    "ActionFile",
    "ExpansionBudget",
    "FetchAction",
    "FetchWorkflow",
    "LookupFailure",
    "LookupOutcome",
    "Lookups",
    "MetadataFiles",
    "NoLookups",
    "ReadFile",
    "TaskMetadata",
    "build_evidence",
    "normalise_path",
    "resolve_metadata",
    "resolve_with_lookups",
]


_MANIFEST_NAME = "package.json"
_CURRENT_DIRECTORY = "."

# Workflow and action keys read from YAML (GitHub Actions syntax, not product contracts).
_JOBS = "jobs"
# Final, so that their literal values can name the keys of the entries below.
_NAME: Final = "name"
_DESCRIPTION: Final = "description"
_INPUTS: Final = "inputs"

# Provenance kinds, by their position in the contract tuple (docs/reference.md, "Job metadata"
# order).
_KIND_ACTION = c.PROVENANCE_KINDS[4]
_KIND_CONTEXT_FILE = c.PROVENANCE_KINDS[6]


# The entries of the evidence object and of the job metadata (docs/reference.md, "Evidence
# object", "Job metadata"). The evidence has its keys sorted, but the job metadata is written
# as built: its key order is the order the builder below inserts them in, not these classes'.


class _Locator(TypedDict):
    repository: str
    commit: str
    file: str
    location: dict[str, int]


class _Provenance(TypedDict):
    kind: str
    locator: _Locator
    sha256: str
    resolvedSha: NotRequired[str]


class _ActionSummary(TypedDict):
    uses: str
    name: NotRequired[str]
    description: NotRequired[str]
    inputs: NotRequired[dict[str, str]]


class _ContextFile(TypedDict):
    path: str
    content: str


class _Evidence(TypedDict):
    actions: list[_ActionSummary]
    contextFiles: list[_ContextFile]
    description: str
    jobs: list[EvidenceJob]
    packageScripts: list[PackageScript]
    incomplete: NotRequired[bool]


class _JobMetadata(TypedDict):
    incomplete: bool
    missing: list[str]
    provenance: list[_Provenance]
    hashes: dict[str, str]
    warnings: list[str]
    nativeDependencies: list[str]
    workflow: NotRequired[str]
    job: NotRequired[str]


# --------------------------------------------------------------------------------------------
# Per-task evidence
# --------------------------------------------------------------------------------------------


@attrs.frozen
class TaskMetadata:
    """The per-task result: the task's evidence and its own working-directory hints."""

    evidence: TaskEvidence
    hints: tuple[str, ...]
    notes: tuple[str, ...] = ()  # explanations of gaps for people, never in the report


class _TaskBuilder:
    def __init__(self, task: Task, files: MetadataFiles) -> None:
        self.task = task
        self.files = files
        self.warnings: list[str] = []
        self.provenance: list[_Provenance] = []
        self._provenance_keys: set[str] = set()
        self.hashes: dict[str, str] = {}
        self.jobs: list[EvidenceJob] = []
        self.actions: list[_ActionSummary] = []
        self.context_files: list[_ContextFile] = []
        self.hints: list[str] = []
        self._jobs = JobsPhase(files, warn=self.warn, hint=self.hint, record=self.record)
        self._scripts = ScriptsPhase(files, warn=self.warn, record=self.record_local)

    # ---- recording --------------------------------------------------------------------------

    def warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)

    def hint(self, directory: str, into: list[str] | None = None) -> None:
        target = self.hints if into is None else into
        if directory not in target:
            target.append(directory)

    def record(
        self,
        kind: str,
        *,
        repository: str,
        commit: str,
        file: str,
        location: Mapping[str, int],
        sha256: str,
        resolved_sha: str | None = None,
    ) -> None:
        item: _Provenance = {
            "kind": kind,
            "locator": {
                "repository": repository,
                "commit": commit,
                "file": file,
                "location": dict(location),
            },
            "sha256": sha256,
        }
        if resolved_sha is not None:
            item["resolvedSha"] = resolved_sha
        identity = canonical_json(item)
        if identity not in self._provenance_keys:
            self._provenance_keys.add(identity)
            self.provenance.append(item)
        self.hashes[f"source:{repository}@{commit}:{file}"] = sha256

    def record_local(self, kind: str, file: str, location: Mapping[str, int], sha256: str) -> None:
        self.record(
            kind,
            repository=self.files.repository,
            commit=self.files.commit,
            file=file,
            location=location,
            sha256=sha256,
        )

    # ---- phase 1: jobs ----------------------------------------------------------------------

    def resolve_jobs(self) -> None:
        references: list[tuple[str, str]] = []
        for reference in self.task.jobs or ():
            key = (reference.workflow, reference.job or "")
            if key not in references:
                references.append(key)
        reached: set[tuple[str, str]] = set()
        for workflow, job in references:
            document = self.files.workflow(workflow)
            if isinstance(document, c.GapKind):
                self.warn(document.warning(workflow))
                continue
            source = self._jobs.local_source(workflow, document)
            jobs = document.data.get(_JOBS)
            if job:
                job_ids = [job]
            elif isinstance(jobs, Mapping) and jobs:
                job_ids = [str(job_id) for job_id in jobs]
            else:
                self.warn(c.GAP_WORKFLOW_JOBS_MISSING.warning(workflow))
                continue
            for job_id in job_ids:
                if (workflow, job_id) in reached:
                    continue
                reached.add((workflow, job_id))
                job_value = jobs.get(job_id) if isinstance(jobs, Mapping) else None
                if not isinstance(job_value, Mapping):
                    self._jobs.missing_job(source, job_id)
                    continue
                self.jobs.append(self._jobs.job(source, job_id, job_value, (source.file,)))

    # ---- phase 2: actions -------------------------------------------------------------------

    def resolve_actions(self) -> None:
        for uses, merged_with in self._jobs.uses.items():
            outcome = self.files.action(uses)
            if isinstance(outcome, c.GapKind):
                self.warn(outcome.warning(uses))
                continue
            data = outcome.document.data
            summary: _ActionSummary = {"uses": uses}
            for field in (_NAME, _DESCRIPTION):
                value = data.get(field)
                if isinstance(value, str):
                    summary[field] = value
            declared = data.get(_INPUTS)
            inputs: dict[str, str] = {}
            if isinstance(declared, Mapping):
                for key in merged_with:
                    declaration = declared.get(key)
                    if isinstance(declaration, Mapping):
                        description = declaration.get(_DESCRIPTION)
                        if isinstance(description, str):
                            inputs[key] = description
            if inputs:
                summary[_INPUTS] = inputs
            self.actions.append(summary)
            self.record(
                _KIND_ACTION,
                repository=outcome.repository,
                commit=outcome.commit,
                file=outcome.file,
                location=whole_file_location(outcome.document.text),
                sha256=outcome.document.sha256,
                resolved_sha=outcome.resolved_sha,
            )

    # ---- phase 3: package scripts -----------------------------------------------------------

    def resolve_scripts(self) -> None:
        for step_run in self._jobs.runs:
            self._scripts.step(step_run)
        for directory in self._scripts.hints:
            self.hint(directory)

    # ---- phase 4: context files -------------------------------------------------------------

    def resolve_context_files(self) -> None:
        for configured in self.task.context_files or ():
            normalised = normalise_path(configured)
            if normalised is None or is_dynamic(configured):
                self.warn(c.GAP_CONTEXT_FILE_DYNAMIC.warning(configured))
                continue
            text = self.files.text(normalised)
            if text is None:
                self.warn(c.GAP_CONTEXT_FILE_MISSING.warning(normalised))
                continue
            self.context_files.append({"path": configured, "content": text})
            self.record_local(
                _KIND_CONTEXT_FILE, normalised, whole_file_location(text), sha256_text(text)
            )

    # ---- assembly ---------------------------------------------------------------------------

    def result(self) -> TaskMetadata:
        incomplete = bool(self.warnings)
        evidence: _Evidence = {
            "actions": self.actions,
            "contextFiles": self.context_files,
            "description": self.task.description,
            "jobs": self.jobs,
            "packageScripts": self._scripts.scripts,
        }
        if incomplete:
            evidence["incomplete"] = True
        job_metadata: _JobMetadata = {
            "incomplete": incomplete,
            "missing": list(self.warnings),
            "provenance": self.provenance,
            "hashes": {key: self.hashes[key] for key in sorted(self.hashes, key=code_unit_key)},
            "warnings": list(self.warnings),
            "nativeDependencies": sorted(self._jobs.native_dependencies, key=code_unit_key),
        }
        references = self.task.jobs or ()
        if references:
            job_metadata["workflow"] = references[0].workflow
            if len(references) == 1 and references[0].job is not None:
                job_metadata["job"] = references[0].job
        return TaskMetadata(
            evidence=TaskEvidence(
                evidence=sort_keys_deep(evidence),
                job_metadata=job_metadata,
                incomplete=incomplete,
            ),
            hints=tuple(self.hints),
            notes=(*self._jobs.notes, *self._scripts.notes),
        )


def build_evidence(task: Task, metadata_files: MetadataFiles) -> TaskMetadata:
    """Resolve one task's metadata (docs/reference.md, "Task evidence") through ``metadata_files``.

    A description-only task reads nothing and carries the four empty arrays.
    """
    builder = _TaskBuilder(task, metadata_files)
    builder.resolve_jobs()
    builder.resolve_actions()
    builder.resolve_scripts()
    builder.resolve_context_files()
    return builder.result()


def resolve_metadata(
    tasks: TaskTable,
    *,
    read_file: ReadFile,
    fetch_action: FetchAction,
    repository: str,
    commit: str,
    fetch_workflow: FetchWorkflow | None = None,
    budget: ExpansionBudget | None = None,
    list_paths: ListPaths | None = None,
) -> MetadataResult:
    """Evidence for every task, in table order, plus the working-directory hints (docs/reference.md,
    "Working-directory hints").

    ``read_file(path)`` returns the raw bytes of a normalised repository path at ``commit`` (the
    metadata commit), or None; ``fetch_action(owner, repo, subpath, ref)`` returns an
    ``ActionFile`` or a ``LookupFailure``;
    ``fetch_workflow(owner, repo, path, ref)`` does the same for another repository's reusable
    workflow (without it, such calls stay unresolved). ``budget`` bounds the reusable-workflow
    expansion of every task together (by default a fresh one without a clock, so no time limit).
    """
    files = MetadataFiles(
        read_file,
        fetch_action,
        repository=repository,
        commit=commit,
        fetch_workflow=fetch_workflow,
        budget=budget,
        list_paths=list_paths,
    )
    evidence: dict[str, TaskEvidence] = {}
    notes: dict[str, tuple[str, ...]] = {}
    hints: list[str] = []
    for task in tasks.tasks:
        resolved = build_evidence(task, files)
        evidence[task.id] = resolved.evidence
        if resolved.notes:
            notes[task.id] = resolved.notes
        for hint in resolved.hints:
            if hint not in hints:
                hints.append(hint)
    return MetadataResult(evidence=evidence, hints=tuple(hints), notes=notes)


# --------------------------------------------------------------------------------------------
# The metadata phase: lookup rounds
# --------------------------------------------------------------------------------------------


class Lookups(Protocol):
    """What the metadata phase asks of a lookup implementation.

    ``fetch_action`` and ``fetch_workflow`` answer at once from what the implementation has; an
    implementation that fetches later records what it could not answer yet and counts it as
    missing for now. ``run_pending`` then fetches what was recorded and is False when there was
    nothing to fetch, which ends the rounds.
    """

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> LookupOutcome: ...

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> LookupOutcome: ...

    def run_pending(self) -> bool: ...


class NoLookups:
    """Nothing is looked up: every external action and reusable workflow of another repository
    is a metadata gap of its task (nothing may leave the machine, or there is nowhere to ask)."""

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> LookupOutcome:
        return LookupFailure.MISSING

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> LookupOutcome:
        return LookupFailure.MISSING

    def run_pending(self) -> bool:
        return False


def resolve_with_lookups(
    tasks: TaskTable,
    *,
    read_file: ReadFile,
    lookups: Lookups,
    repository: str,
    commit: str,
    clock: Callable[[], float] | None = None,
    list_paths: ListPaths | None = None,
) -> MetadataResult:
    """The metadata phase: build the evidence, fetch what it asked for, build it again.

    Each round fetches what the previous one asked for; a fetched reusable workflow can ask for
    more, one nesting level per round. Lookups still unanswered after the last round count as
    missing, so their tasks keep gaps. ``read_file`` is called again in every round (cache it).
    Every round has its own expansion budget, but the rounds share one expansion time bound on
    ``clock`` (None: no time bound).
    """
    budget: ExpansionBudget | None = None

    def resolve() -> MetadataResult:
        nonlocal budget
        spent = 0.0 if budget is None else budget.spent_s
        budget = ExpansionBudget(clock=clock, spent_s=spent)
        return resolve_metadata(
            tasks,
            read_file=read_file,
            fetch_action=lookups.fetch_action,
            fetch_workflow=lookups.fetch_workflow,
            repository=repository,
            commit=commit,
            budget=budget,
            list_paths=listing,
        )

    # Listed once for every round.
    listed: list[Sequence[str] | None] = []

    def listing() -> Sequence[str] | None:
        if not listed:
            listed.append(list_paths() if list_paths is not None else None)
        return listed[0]

    result = resolve()
    for _ in range(c.REUSABLE_WORKFLOW_MAX_DEPTH + 1):
        if not lookups.run_pending():
            break
        result = resolve()
    return result
