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
from typing import Final, Required, TypeAlias, TypedDict

import attrs

from ... import contracts as c
from .budget import OverBudget
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
from .workflow_shapes import flatten_steps, job_shape_supported, workflow_shape_supported

__all__ = [
    "EvidenceJob",
    "EvidenceStep",
    "Expansion",
    "ExpansionKey",
    "JobSource",
    "JobsPhase",
    "StepRun",
]

# Final, so that their literal values can name the keys of the entries below.
_JOBS: Final = "jobs"
_STEPS: Final = "steps"
_NAME: Final = "name"
_RUN: Final = "run"
_USES: Final = "uses"
_WITH: Final = "with"
_NEEDS = "needs"
_SHELL: Final = "shell"
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
class StepRun:
    """A step command to scan for package scripts, with its effective directory."""

    command: str
    working_directory: str


Record = Callable[..., None]


# ---- effects of expanding a job, recorded so that a reuse can replay them ------------------


@attrs.frozen
class _Warn:
    text: str


@attrs.frozen
class _Hint:
    directory: str


@attrs.frozen
class _Record:
    kind: str
    source: JobSource
    location: Mapping[str, int]


@attrs.frozen
class _Use:
    action: str
    options: Mapping[str, JsonValue] | None  # the step's ``with``, JSON-safe


# The called workflow's identity and the call as written (it labels the called jobs and their
# gaps).
ExpansionKey: TypeAlias = tuple[str, str]


@attrs.frozen(eq=False)
class Expansion:
    """A called workflow's expanded jobs and, in order, the effects expanding them had.

    ``jobs`` is shared by every reuse and never changed (the evidence is copied when its keys
    are sorted). ``size`` counts its job and step entries, nested expansions included.

    Expanding depended on the caller's chain only through its length and through the identities
    in ``reached`` (every call below checked for a cycle). The calls below were checked at most
    ``reach`` levels under ``depth``, the chain length it was expanded at; when none of them hit
    the depth limit (``limited``), any chain short enough for those checks to pass again gives
    the same expansion, provided it meets ``reached`` in exactly ``context``.
    """

    jobs: list[EvidenceJob]
    effects: tuple[_Effect, ...]
    size: int
    depth: int
    reach: int
    limited: bool
    reached: frozenset[str]
    context: frozenset[str]

    def holds_for(self, chain: tuple[str, ...]) -> bool:
        if self.limited:
            depth_holds = len(chain) == self.depth
        else:
            depth_holds = len(chain) + self.reach < c.REUSABLE_WORKFLOW_MAX_DEPTH
        return depth_holds and self.reached.intersection(chain) == self.context


_Effect: TypeAlias = "_Warn | _Hint | _Record | _Use | StepRun | Expansion"


@attrs.define
class _Frame:
    """An expansion being computed: what it records instead of applying."""

    effects: list[_Effect] = attrs.Factory(list)
    reached: set[str] = attrs.Factory(set)
    size: int = 0
    reach: int = 0
    limited: bool = False


def _run_default(owner: YamlMapping, field: str) -> str | None:
    defaults = owner.get(_DEFAULTS)
    run = defaults.get(_RUN) if isinstance(defaults, Mapping) else None
    value = run.get(field) if isinstance(run, Mapping) else None
    return value if isinstance(value, str) else None


def _first_string(*values: object) -> str | None:
    for value in values:
        if isinstance(value, str):
            return value
    return None


def _checkout_path(step: YamlMapping) -> str | None:
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
        self.budget = files.budget
        self.warn = warn
        self.hint = hint
        self.record = record
        self.uses: dict[str, dict[str, JsonValue]] = {}  # action -> merged ``with``
        self.runs: list[StepRun] = []
        self.native_dependencies: set[str] = set()
        self.notes: list[str] = []
        self._frames: list[_Frame] = []  # expansions being computed, innermost last
        self._replayed: set[Expansion] = set()  # applied to this task already

    def local_source(self, workflow: str, document: YamlDocument) -> JobSource:
        file = normalise_path(workflow) or workflow
        return JobSource(workflow, file, document, self.files.repository, self.files.commit)

    def missing_job(self, source: JobSource, job_id: str) -> None:
        """``job-missing``; a note names the key when the task used a job's display name."""
        self.warn(c.GAP_JOB_MISSING.warning(f"{source.label}#{job_id}"))
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
        job: YamlMapping,
        chain: tuple[str, ...],
        *,
        top_level: bool = True,
    ) -> EvidenceJob:
        document = source.document
        workflow_data = document.data
        item: EvidenceJob = {"id": job_id, "workflow": source.label}
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
            self._emit(_Warn(c.GAP_WORKFLOW_SHAPE_UNSUPPORTED.warning(f"{source.label}#{job_id}")))
        uses = job.get(_USES)
        if isinstance(uses, str):
            item[_USES] = uses
            options = job.get(_WITH)
            if isinstance(options, Mapping):
                item[_WITH] = json_safe(options)
            called = self._call(uses, source, chain)
            if called is None:
                self._emit(_Warn(c.GAP_REUSABLE_WORKFLOW_UNRESOLVED.warning(uses)))
            else:
                item[_JOBS] = called
            return item
        item[_STEPS] = self._steps(source, job, job_path)
        return item

    # ---- effects: applied to the task, or recorded while an expansion is computed -----------

    def _emit(self, effect: _Effect) -> None:
        if self._frames:
            self._frames[-1].effects.append(effect)
        else:
            self._apply(effect)

    def _apply(self, effect: _Effect) -> None:
        if isinstance(effect, _Warn):
            self.warn(effect.text)
        elif isinstance(effect, _Hint):
            self.hint(effect.directory)
        elif isinstance(effect, _Record):
            self._record_now(effect.source, effect.kind, effect.location)
        elif isinstance(effect, _Use):
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
        self._emit(_Record(kind, source, location))

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
        self, source: JobSource, job: YamlMapping, job_path: list[str | int]
    ) -> list[EvidenceStep]:
        workflow_data = source.document.data
        workflow_directory = _run_default(workflow_data, _WORKING_DIRECTORY)
        job_directory = _run_default(job, _WORKING_DIRECTORY)
        workflow_shell = _run_default(workflow_data, _SHELL)
        job_shell = _run_default(job, _SHELL)
        if workflow_directory is not None:
            self._emit(_Hint(workflow_directory))
        if job_directory is not None:
            self._emit(_Hint(job_directory))
        raw_steps = job.get(_STEPS)
        shape = flatten_steps(raw_steps) if isinstance(raw_steps, list) else None
        if shape is not None and not shape.supported:
            self._emit(
                _Warn(c.GAP_WORKFLOW_SHAPE_UNSUPPORTED.warning(f"{source.label}#{job_path[-1]}"))
            )
        steps: list[EvidenceStep] = []
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
            entry: EvidenceStep = {"working_directory": directory}
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
            self._emit(_Hint(directory))
            self._record(
                source, _KIND_WORKFLOW_STEP, source.document.location([*job_path, *flat.path])
            )
            step_uses = step.get(_USES)
            if isinstance(step_uses, str):
                if source.resolved_sha is None and step_uses.startswith(
                    (_LOCAL_PREFIX, _SELF_PREFIX)
                ):
                    step_uses = _local_action(step_uses, checkouts)
                step_with = step.get(_WITH)
                options = json_safe(step_with) if isinstance(step_with, Mapping) else None
                self._emit(_Use(step_uses, options))
                checkout = _checkout_path(step)
                if checkout is not None and checkout not in checkouts:
                    checkouts.append(checkout)
            run = step.get(_RUN)
            if isinstance(run, str):
                self._emit(StepRun(run, directory))
        return steps

    def _call(
        self, uses: str, caller: JobSource, chain: tuple[str, ...]
    ) -> list[EvidenceJob] | None:
        """The called workflow's jobs, or None when the call stays unresolved."""
        outermost = not self._frames
        if outermost:
            self.budget.start()
        try:
            expansion = self._expansion(uses, caller, chain)
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

    def _expansion(self, uses: str, caller: JobSource, chain: tuple[str, ...]) -> Expansion | None:
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
        variants = self.files.expansions.setdefault((identity, uses), [])
        for known in variants:
            if known.holds_for(chain):
                return known
        expansion = self._expand(source, identity, jobs, chain)
        variants.append(expansion)
        return expansion

    def _called(self, uses: str, caller: JobSource) -> tuple[JobSource, str] | None:
        """The called workflow and its identity, or None when it cannot be read."""
        if uses.startswith((_LOCAL_PREFIX, _SELF_PREFIX)):
            if caller.resolved_sha is not None:
                return None
            path = _local_action(uses, [])
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
    ) -> Expansion:
        frame = _Frame()
        self._frames.append(frame)
        try:
            called: list[EvidenceJob] = []
            for key, job in jobs.items():
                self.budget.take_job()
                job_id = str(key)
                if not isinstance(job, Mapping):
                    self._emit(
                        _Warn(c.GAP_WORKFLOW_SHAPE_UNSUPPORTED.warning(f"{source.label}#{job_id}"))
                    )
                    continue
                item = self.job(source, job_id, job, (*chain, identity), top_level=False)
                frame.size += 1 + len(item.get(_STEPS, ()))
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
