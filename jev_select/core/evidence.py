"""Task metadata evidence (spec §7): workflows, actions, package scripts and context files.

This module is pure apart from the two callables it is handed: ``read_file`` (raw bytes of a
repository path at the metadata commit, or None) and ``fetch_action`` (an external action's
metadata file, see ``github_api.GitHubApi.fetch_action``). Nothing found in metadata is executed.

Per task, resolution runs in four phases, and gaps are recorded in that order (first seen, once):

1. job references, in order (workflow, job and reusable-workflow gaps);
2. actions, once per distinct ``uses`` in first-appearance order;
3. package scripts, scanning each step's ``run`` in job and step order;
4. context files, in the configured order.

Public API:

- ``resolve_metadata(tasks, *, read_file, fetch_action, repository, commit) -> MetadataResult``
- ``MetadataFiles(read_file, fetch_action, *, repository, commit)``: cached, decoded file access at
  one commit, shared by every task of a run (each file read, each workflow parsed, each action
  resolved at most once).
- ``build_evidence(task, metadata_files) -> TaskMetadata``: the pure per-task builder; its
  ``evidence`` is the ``TaskEvidence`` of the task and its ``hints`` the task's own
  working-directory hints (spec §7.9), first-seen order.
- ``ActionFile``: what ``fetch_action`` returns on success.
- ``normalise_path(text) -> str | None``: the path normalisation of spec §7.5.
- ``scan_command(command) -> ScriptScan``: the package-script scanner of spec §7.4.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from .. import contracts as c
from .evidence_files import (
    ActionFile,
    FetchAction,
    Manifest,
    MetadataFiles,
    ReadFile,
    YamlDocument,
    is_dynamic,
    json_safe,
    normalise_path,
    sha256_text,
    text_location,
    whole_file_location,
)
from .jsonutil import canonical_json, code_unit_key, sort_keys_deep
from .models import MetadataResult, Task, TaskEvidence, TaskTable
from .package_scripts import ScriptScan, scan_command
from .workflow_shapes import flatten_steps, job_shape_supported, workflow_shape_supported

__all__ = [
    "ActionFile",
    "MetadataFiles",
    "ScriptScan",
    "TaskMetadata",
    "build_evidence",
    "normalise_path",
    "resolve_metadata",
    "scan_command",
]


_MANIFEST_NAME = "package.json"
_CURRENT_DIRECTORY = "."

# Workflow and action keys read from YAML (GitHub Actions syntax, not product contracts).
_JOBS = "jobs"
_STEPS = "steps"
_NAME = "name"
_RUN = "run"
_USES = "uses"
_WITH = "with"
_NEEDS = "needs"
_SHELL = "shell"
_DEFAULTS = "defaults"
_WORKING_DIRECTORY = "working-directory"
_DESCRIPTION = "description"
_INPUTS = "inputs"
_SCRIPTS = "scripts"

# Provenance kinds, by their position in the contract tuple (spec §7.8 order).
_KIND_WORKFLOW_JOB = c.PROVENANCE_KINDS[0]
_KIND_WORKFLOW_DEFAULTS = c.PROVENANCE_KINDS[1]
_KIND_JOB_DEFAULTS = c.PROVENANCE_KINDS[2]
_KIND_WORKFLOW_STEP = c.PROVENANCE_KINDS[3]
_KIND_ACTION = c.PROVENANCE_KINDS[4]
_KIND_PACKAGE_SCRIPT = c.PROVENANCE_KINDS[5]
_KIND_CONTEXT_FILE = c.PROVENANCE_KINDS[6]

# --------------------------------------------------------------------------------------------
# Per-task evidence
# --------------------------------------------------------------------------------------------


@attrs.frozen
class TaskMetadata:
    """The per-task result: the task's evidence and its own working-directory hints."""

    evidence: TaskEvidence
    hints: tuple[str, ...]


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


@attrs.frozen
class _StepRun:
    """A step command to scan for package scripts, with its effective directory."""

    command: str
    working_directory: str


class _TaskBuilder:
    def __init__(self, task: Task, files: MetadataFiles) -> None:
        self.task = task
        self.files = files
        self.warnings: list[str] = []
        self.provenance: list[dict[str, Any]] = []
        self._provenance_keys: set[str] = set()
        self.hashes: dict[str, str] = {}
        self.jobs: list[dict[str, Any]] = []
        self.actions: list[dict[str, Any]] = []
        self.scripts: list[dict[str, Any]] = []
        self.context_files: list[dict[str, Any]] = []
        self.native_dependencies: set[str] = set()
        self.hints: list[str] = []
        self._script_hints: list[str] = []
        self._uses: dict[str, dict[str, Any]] = {}
        self._runs: list[_StepRun] = []
        self._visited_scripts: set[tuple[str, str]] = set()

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
        item: dict[str, Any] = {
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
            if isinstance(document, str):
                self.warn(document + workflow)
                continue
            jobs = document.data.get(_JOBS)
            if job:
                job_ids = [job]
            elif isinstance(jobs, Mapping) and jobs:
                job_ids = [str(job_id) for job_id in jobs]
            else:
                self.warn(c.WARN_WORKFLOW_JOBS_MISSING + workflow)
                continue
            for job_id in job_ids:
                if (workflow, job_id) in reached:
                    continue
                reached.add((workflow, job_id))
                job_value = jobs.get(job_id) if isinstance(jobs, Mapping) else None
                if not isinstance(job_value, Mapping):
                    self.warn(f"{c.WARN_JOB_MISSING}{workflow}#{job_id}")
                    continue
                self._add_job(workflow, document, job_id, job_value)

    def _add_job(
        self, workflow: str, document: YamlDocument, job_id: str, job: Mapping[str, Any]
    ) -> None:
        file = normalise_path(workflow) or workflow
        workflow_data = document.data
        item: dict[str, Any] = {"id": job_id, "workflow": workflow}
        name = job.get(_NAME)
        if isinstance(name, str):
            item["name"] = name
        uses = job.get(_USES)
        if isinstance(uses, str):
            item["uses"] = uses
            self.warn(c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + uses)
        needs = job.get(_NEEDS)
        if isinstance(needs, str):
            self.native_dependencies.add(needs)
        elif isinstance(needs, list):
            self.native_dependencies.update(need for need in needs if isinstance(need, str))

        job_path: list[str | int] = [_JOBS, job_id]
        self.record_local(
            _KIND_WORKFLOW_JOB,
            file,
            document.location(job_path, with_key=True),
            document.sha256,
        )
        if isinstance(workflow_data.get(_DEFAULTS), Mapping):
            self.record_local(
                _KIND_WORKFLOW_DEFAULTS,
                file,
                document.location([_DEFAULTS], with_key=True),
                document.sha256,
            )
        if isinstance(job.get(_DEFAULTS), Mapping):
            self.record_local(
                _KIND_JOB_DEFAULTS,
                file,
                document.location([*job_path, _DEFAULTS], with_key=True),
                document.sha256,
            )

        workflow_directory = _run_default(workflow_data, _WORKING_DIRECTORY)
        job_directory = _run_default(job, _WORKING_DIRECTORY)
        workflow_shell = _run_default(workflow_data, _SHELL)
        job_shell = _run_default(job, _SHELL)
        if workflow_directory is not None:
            self.hint(workflow_directory)
        if job_directory is not None:
            self.hint(job_directory)

        shape = flatten_steps(raw_steps) if isinstance(raw_steps := job.get(_STEPS), list) else None
        if (
            not workflow_shape_supported(workflow_data)
            or not job_shape_supported(job)
            or (shape is not None and not shape.supported)
        ):
            self.warn(f"{c.WARN_WORKFLOW_SHAPE_UNSUPPORTED}{workflow}#{job_id}")
        steps: list[dict[str, Any]] = []
        for flat in shape.steps if shape is not None else ():
            step = flat.step
            # An empty string is still the first string (spec §7.2); only absence means ".".
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
            self.record_local(
                _KIND_WORKFLOW_STEP,
                file,
                document.location([*job_path, *flat.path]),
                document.sha256,
            )
            step_uses = step.get(_USES)
            if isinstance(step_uses, str):
                merged = self._uses.setdefault(step_uses, {})
                step_with = step.get(_WITH)
                if isinstance(step_with, Mapping):
                    merged.update(json_safe(step_with))
            run = step.get(_RUN)
            if isinstance(run, str):
                self._runs.append(_StepRun(run, directory))
        item[_STEPS] = steps
        self.jobs.append(item)

    # ---- phase 2: actions -------------------------------------------------------------------

    def resolve_actions(self) -> None:
        for uses, merged_with in self._uses.items():
            outcome = self.files.action(uses)
            if isinstance(outcome, str):
                self.warn(outcome + uses)
                continue
            data = outcome.document.data
            summary: dict[str, Any] = {"uses": uses}
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
        for step_run in self._runs:
            self._scan(step_run.command, step_run.working_directory, 1)
        for directory in self._script_hints:
            self.hint(directory)

    def _scan(self, command: str, directory: str, depth: int) -> None:
        scan = scan_command(command)
        if scan.unresolved:
            self.warn(c.WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED)
            return
        if not scan.names:
            return
        normalised = normalise_path(directory)
        if directory == _CURRENT_DIRECTORY:
            manifest_path = _MANIFEST_NAME
        elif normalised is None or is_dynamic(directory):
            self.warn(c.WARN_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY + directory)
            return
        else:
            manifest_path = f"{normalised}/{_MANIFEST_NAME}"
        for name in scan.names:
            if (manifest_path, name) in self._visited_scripts:
                continue
            if depth > c.PACKAGE_SCRIPT_MAX_DEPTH:
                self.warn(c.WARN_PACKAGE_SCRIPT_DEPTH_LIMIT + name)
                continue
            self._visited_scripts.add((manifest_path, name))
            manifest = self.files.manifest(manifest_path)
            if manifest == c.WARN_PACKAGE_SCRIPT_MISSING:
                self.warn(f"{c.WARN_PACKAGE_SCRIPT_MISSING}{manifest_path}#{name}")
                continue
            if not isinstance(manifest, Manifest):
                self.warn(c.WARN_PACKAGE_MANIFEST_INVALID + manifest_path)
                continue
            scripts = manifest.data.get(_SCRIPTS)
            script = scripts.get(name) if isinstance(scripts, Mapping) else None
            if not isinstance(script, str):
                self.warn(f"{c.WARN_PACKAGE_SCRIPT_ABSENT}{manifest_path}#{name}")
                continue
            self.scripts.append(
                {
                    "name": name,
                    "command": script,
                    "workingDirectory": directory,
                    "manifest": manifest_path,
                }
            )
            self.record_local(
                _KIND_PACKAGE_SCRIPT,
                manifest_path,
                text_location(manifest.text, json.dumps(name, ensure_ascii=False)),
                sha256_text(manifest.text),
            )
            if directory != _CURRENT_DIRECTORY:
                self.hint(directory, self._script_hints)
            self._scan(script, directory, depth + 1)

    # ---- phase 4: context files -------------------------------------------------------------

    def resolve_context_files(self) -> None:
        for configured in self.task.context_files or ():
            normalised = normalise_path(configured)
            if normalised is None or is_dynamic(configured):
                self.warn(c.WARN_CONTEXT_FILE_DYNAMIC + configured)
                continue
            text = self.files.text(normalised)
            if text is None:
                self.warn(c.WARN_CONTEXT_FILE_MISSING + normalised)
                continue
            self.context_files.append({"path": configured, "content": text})
            self.record_local(
                _KIND_CONTEXT_FILE, normalised, whole_file_location(text), sha256_text(text)
            )

    # ---- assembly ---------------------------------------------------------------------------

    def result(self) -> TaskMetadata:
        incomplete = bool(self.warnings)
        evidence: dict[str, Any] = {
            "actions": self.actions,
            "contextFiles": self.context_files,
            "description": self.task.description,
            "jobs": self.jobs,
            "packageScripts": self.scripts,
        }
        if incomplete:
            evidence["incomplete"] = True
        job_metadata: dict[str, Any] = {
            "incomplete": incomplete,
            "missing": list(self.warnings),
            "provenance": self.provenance,
            "hashes": {key: self.hashes[key] for key in sorted(self.hashes, key=code_unit_key)},
            "warnings": list(self.warnings),
            "nativeDependencies": sorted(self.native_dependencies, key=code_unit_key),
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
        )


def build_evidence(task: Task, metadata_files: MetadataFiles) -> TaskMetadata:
    """Resolve one task's metadata (spec §7.2 to §7.8) through ``metadata_files``.

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
) -> MetadataResult:
    """Evidence for every task, in table order, plus the working-directory hints (spec §7.9).

    ``read_file(path)`` returns the raw bytes of a normalised repository path at ``commit`` (the
    metadata commit), or None; ``fetch_action(owner, repo, subpath, ref)`` returns an
    ``ActionFile`` or a failure kind (``"missing"`` or ``"invalid"``).
    """
    files = MetadataFiles(read_file, fetch_action, repository=repository, commit=commit)
    evidence: dict[str, TaskEvidence] = {}
    hints: list[str] = []
    for task in tasks.tasks:
        resolved = build_evidence(task, files)
        evidence[task.id] = resolved.evidence
        for hint in resolved.hints:
            if hint not in hints:
                hints.append(hint)
    return MetadataResult(evidence=evidence, hints=tuple(hints))
