"""Phase 1 of the evidence builder: jobs, their steps and the reusable workflows they call. Pure.

A job that calls a reusable workflow (``jobs.<id>.uses``) carries the caller's ``with`` values
and, under ``jobs``, every job of the called workflow in document order, expanded the same way
to the nesting depth GitHub allows (``REUSABLE_WORKFLOW_MAX_DEPTH`` workflows in one chain). A
local call (``./path.yml``) is read at the metadata commit; a call into another repository
(``owner/repo/path@ref``) is fetched like an external action. A cycle, a chain that is too deep,
a call that cannot be read or parsed, and a local call made from another repository's workflow
(whose meaning depends on that repository) keep ``reusable-workflow-unresolved:<uses>``.

Fan-out (a workflow reached through many callers) would repeat the same expansion in every
branch, exponentially in the depth. So each called workflow is expanded once per resolution into
an ``Expansion``: its jobs, shared by every caller and task, and the effects expanding them had
(gaps, provenance, hints, actions, commands), which each task replays once. The evidence is
still a tree, so the run's ``ExpansionBudget`` counts every reuse in full; a call it cannot pay
for keeps the same gap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

import attrs

from ... import contracts as c
from ..jsonutil import canonical_json
from .budget import OverBudget
from .composites import CompositeSteps
from .effects import Effect, Expansion, ExpansionKey, Frame, Hint, RecordEffect, Use, Warn
from .expressions import Values, inputs_of_call, matrix_combinations, substitute
from .files import (
    JsonValue,
    MetadataFiles,
    RemoteWorkflow,
    YamlDocument,
    YamlMapping,
    is_dynamic,
    json_safe,
    normalise_path,
)
from .steps import (
    SELF_PREFIX,
    EvidenceJob,
    EvidenceStep,
    JobSource,
    StepRun,
    StepSite,
    checkout_path,
    commands_of,
    directory_text,
    first_string,
    foreign_checkout,
    local_action,
    run_default,
    site_of,
    step_entry,
    step_label,
    step_run,
    substituted,
    workflow_call_inputs,
)
from .workflow_shapes import (
    MATRIX,
    NAME,
    RUN,
    SHELL,
    STEPS,
    USES,
    WITH,
    WORKING_DIRECTORY,
    flatten_steps,
    job_shape_supported,
    workflow_shape_supported,
)

__all__ = [
    "EvidenceJob",
    "EvidenceStep",
    "Expansion",
    "ExpansionKey",
    "JobSource",
    "JobsPhase",
    "StepRun",
    "StepSite",
]

# What records one provenance entry (``resolve._TaskBuilder.record``).
Record = Callable[..., None]

_JOBS: Final = "jobs"
_NEEDS = "needs"
_DEFAULTS = "defaults"
_CURRENT_DIRECTORY = "."
_LOCAL_PREFIX = "./"
_STRATEGY = "strategy"
_INPUTS = "inputs"

_KIND_WORKFLOW_JOB = c.PROVENANCE_KINDS[0]
_KIND_WORKFLOW_DEFAULTS = c.PROVENANCE_KINDS[1]
_KIND_JOB_DEFAULTS = c.PROVENANCE_KINDS[2]
_KIND_WORKFLOW_STEP = c.PROVENANCE_KINDS[3]


class JobsPhase(CompositeSteps):
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
        self.budget = files.budget
        self.warn = warn
        self.hint = hint
        self.record = record
        self.uses: dict[str, dict[str, JsonValue]] = {}  # action -> merged ``with``
        self.runs: list[StepRun] = []
        self.native_dependencies: set[str] = set()
        self.notes: list[str] = []
        self._frames: list[Frame] = []  # expansions being computed, innermost last
        self._replayed: set[Expansion] = set()  # applied to this task already

    def local_source(self, workflow: str, document: YamlDocument) -> JobSource:
        file = normalise_path(workflow) or workflow
        return JobSource(workflow, file, document, self.files.repository, self.files.commit)

    def missing_job(self, source: JobSource, job_id: str) -> None:
        """``job-missing``; a note names the key when the task used a job's display name."""
        self.warn(c.GAP_JOB_MISSING.warning(f"{source.label}#{job_id}"))
        jobs = source.document.data.get(_JOBS)
        for key, job in jobs.items() if isinstance(jobs, Mapping) else ():
            if isinstance(job, Mapping) and job.get(NAME) == job_id:
                self.notes.append(
                    c.NOTE_JOB_NAME_NOT_KEY.format(workflow=source.label, name=job_id, key=str(key))
                )
                return

    def job(
        self,
        source: JobSource,
        job_id: str,
        job: YamlMapping,
        chain: tuple[str, ...],
        *,
        top_level: bool = True,
        inputs: Mapping[str, str | None] | None = None,
    ) -> EvidenceJob:
        document = source.document
        workflow_data = document.data
        item: EvidenceJob = {"id": job_id, "workflow": source.label}
        name = job.get(NAME)
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
            self._emit(Warn(c.GAP_WORKFLOW_SHAPE_UNSUPPORTED.warning(f"{source.label}#{job_id}")))
        values: Values = {_INPUTS: inputs} if inputs is not None else {}
        uses = job.get(USES)
        if isinstance(uses, str):
            item[USES] = uses
            options = job.get(WITH)
            passed: dict[str, JsonValue] | None = None
            if isinstance(options, Mapping):
                copied = substituted(json_safe(options), values)
                passed = copied if isinstance(copied, dict) else None
                if passed is not None:
                    item[WITH] = passed
            called = self._call(uses, source, chain, passed)
            if called is None:
                self._emit(Warn(c.GAP_REUSABLE_WORKFLOW_UNRESOLVED.warning(uses)))
            else:
                item[_JOBS] = called
            return item
        item[STEPS] = self._steps(source, job, job_path, values)
        return item

    # ---- effects: applied to the task, or recorded while an expansion is computed -----------

    def _emit(self, effect: Effect) -> None:
        if self._frames:
            self._frames[-1].effects.append(effect)
        else:
            self._apply(effect)

    def _apply(self, effect: Effect) -> None:
        if isinstance(effect, Warn):
            self.warn(effect.text)
        elif isinstance(effect, Hint):
            self.hint(effect.directory)
        elif isinstance(effect, RecordEffect):
            self._record_now(effect.source, effect.kind, effect.location)
        elif isinstance(effect, Use):
            merged = self.uses.setdefault(effect.action, {})
            if effect.options is not None:
                merged.update(effect.options)
        elif isinstance(effect, StepRun):
            self.runs.append(effect)
        else:
            self._replay(effect)

    def _replay(self, expansion: Expansion) -> None:
        # A second replay in the same task would add nothing: gaps, provenance and hints are
        # kept once, the actions and their ``with`` keys are already listed in order (only the
        # keys reach the evidence), and a command scanned again finds its scripts visited.
        if expansion in self._replayed:
            return
        self._replayed.add(expansion)
        for effect in expansion.effects:
            self._apply(effect)

    def _record(self, source: JobSource, kind: str, location: Mapping[str, int]) -> None:
        self._emit(RecordEffect(kind, source, location))

    def _record_now(self, source: JobSource, kind: str, location: Mapping[str, int]) -> None:
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
        self,
        source: JobSource,
        job: YamlMapping,
        job_path: list[str | int],
        values: Values,
    ) -> list[EvidenceStep]:
        workflow_data = source.document.data
        workflow_directory = run_default(workflow_data, WORKING_DIRECTORY)
        job_directory = run_default(job, WORKING_DIRECTORY)
        workflow_shell = run_default(workflow_data, SHELL)
        job_shell = run_default(job, SHELL)
        if workflow_directory is not None:
            self._emit(Hint(workflow_directory))
        if job_directory is not None:
            self._emit(Hint(job_directory))
        raw_steps = job.get(STEPS)
        shape = flatten_steps(raw_steps) if isinstance(raw_steps, list) else None
        if shape is not None and not shape.supported:
            self._emit(
                Warn(c.GAP_WORKFLOW_SHAPE_UNSUPPORTED.warning(f"{source.label}#{job_path[-1]}"))
            )
        strategy = job.get(_STRATEGY)
        combinations = matrix_combinations(
            strategy.get(MATRIX) if isinstance(strategy, Mapping) else None
        )
        if strategy is not None and not isinstance(strategy, Mapping):
            combinations = None
        steps: list[EvidenceStep] = []
        checkouts: list[str] = []
        foreign: tuple[str, ...] = ()
        for position, flat in enumerate(shape.steps if shape is not None else ()):
            step = flat.step
            # An empty string is still the first string (docs/reference.md, "Jobs in the evidence");
            # only absence means ".".
            directory = first_string(step.get(WORKING_DIRECTORY), job_directory, workflow_directory)
            if directory is None:
                directory = _CURRENT_DIRECTORY
            directory = directory_text(substitute(directory, values))
            shell = first_string(step.get(SHELL), job_shell, workflow_shell)
            entry = step_entry(step, directory, values)
            if shell is not None:
                entry[SHELL] = shell
            if flat.parallel is not None:
                entry[c.EVIDENCE_STEP_PARALLEL] = flat.parallel
            if flat.background:
                entry[c.EVIDENCE_STEP_BACKGROUND] = True
            steps.append(entry)
            self._emit(Hint(directory))
            step_path = [*job_path, *flat.path]
            self._record(source, _KIND_WORKFLOW_STEP, source.document.location(step_path))
            step_uses = step.get(USES)
            if isinstance(step_uses, str):
                if source.resolved_sha is None and step_uses.startswith(
                    (_LOCAL_PREFIX, SELF_PREFIX)
                ):
                    step_uses = local_action(step_uses, checkouts)
                options = entry.get(WITH)
                passed = options if isinstance(options, dict) else None
                self._emit(Use(step_uses, passed))
                nested = self._composite(step_uses, passed, (), source.label, str(job_path[-1]))
                if nested is not None:
                    entry[STEPS] = nested
                checkout = checkout_path(step)
                if checkout is not None and checkout not in checkouts:
                    checkouts.append(checkout)
                elsewhere = foreign_checkout(step)
                if elsewhere is not None and elsewhere not in foreign:
                    foreign = (*foreign, elsewhere)
            run = step.get(RUN)
            if isinstance(run, str):
                site = site_of(
                    source.document,
                    [*step_path, RUN],
                    workflow=source.label,
                    job=str(job_path[-1]),
                    step=step_label(step, position),
                    file=source.file,
                )
                for command, where in commands_of(run, directory, values, combinations):
                    self._emit(step_run(command, where, site, foreign, shell))
        return steps

    def _call(
        self,
        uses: str,
        caller: JobSource,
        chain: tuple[str, ...],
        options: Mapping[str, JsonValue] | None,
    ) -> list[EvidenceJob] | None:
        """The called workflow's jobs, or None when the call stays unresolved."""
        outermost = not self._frames
        if outermost:
            self.budget.start()
        try:
            expansion = self._expansion(uses, caller, chain, options)
        except OverBudget:
            return None
        finally:
            if outermost:
                self.budget.stop()
        if expansion is None:
            return None
        if not outermost:
            frame = self._frames[-1]
            frame.size += expansion.size
            frame.reached.update(expansion.reached)
            frame.reach = max(frame.reach, 1 + expansion.reach)
            frame.limited = frame.limited or expansion.limited
        elif not self.budget.take_nodes(expansion.size):
            # Paid where the tree enters the task's evidence: nested sizes are in this one.
            return None
        self._emit(expansion)
        return expansion.jobs

    def _expansion(
        self,
        uses: str,
        caller: JobSource,
        chain: tuple[str, ...],
        options: Mapping[str, JsonValue] | None,
    ) -> Expansion | None:
        frame = self._frames[-1] if self._frames else None
        if is_dynamic(uses):
            return None
        if frame is not None:
            frame.reach = max(frame.reach, 1)
        if len(chain) >= c.REUSABLE_WORKFLOW_MAX_DEPTH:
            if frame is not None:
                frame.limited = True
            return None
        called = self._called(uses, caller)
        if called is None:
            return None
        source, identity = called
        if frame is not None:
            frame.reached.add(identity)
        if identity in chain:
            return None
        jobs = source.document.data.get(_JOBS)
        if not isinstance(jobs, Mapping) or not jobs:
            return None
        key = (identity, uses, canonical_json(options or {}))
        variants = self.files.expansions.setdefault(key, [])
        for known in variants:
            if known.holds_for(chain):
                return known
        inputs = inputs_of_call(workflow_call_inputs(source.document.data), options)
        expansion = self._expand(source, identity, jobs, chain, inputs)
        variants.append(expansion)
        return expansion

    def _called(self, uses: str, caller: JobSource) -> tuple[JobSource, str] | None:
        """The called workflow and its identity, or None when it cannot be read."""
        if uses.startswith((_LOCAL_PREFIX, SELF_PREFIX)):
            if caller.resolved_sha is not None:
                return None
            path = local_action(uses, [])
            self.budget.take_workflow(path)
            document = self.files.workflow(path)
            if isinstance(document, c.GapKind):
                return None
            source = attrs.evolve(self.local_source(path, document), label=uses)
            return source, source.file
        self.budget.take_workflow(uses)
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
        return source, f"{remote.repository}@{remote.resolved_sha}:{remote.file}"

    def _expand(
        self,
        source: JobSource,
        identity: str,
        jobs: YamlMapping,
        chain: tuple[str, ...],
        inputs: Mapping[str, str | None],
    ) -> Expansion:
        frame = Frame()
        self._frames.append(frame)
        try:
            called: list[EvidenceJob] = []
            for key, job in jobs.items():
                self.budget.take_job()
                job_id = str(key)
                if not isinstance(job, Mapping):
                    self._emit(
                        Warn(c.GAP_WORKFLOW_SHAPE_UNSUPPORTED.warning(f"{source.label}#{job_id}"))
                    )
                    continue
                item = self.job(
                    source, job_id, job, (*chain, identity), top_level=False, inputs=inputs
                )
                frame.size += 1 + len(item.get(STEPS, ()))
                called.append(item)
        finally:
            self._frames.pop()
        reached = frozenset(frame.reached)
        return Expansion(
            jobs=called,
            effects=tuple(frame.effects),
            size=frame.size,
            depth=len(chain),
            reach=frame.reach,
            limited=frame.limited,
            reached=reached,
            context=reached.intersection(chain),
        )
