"""Frozen value objects shared by the pure core and the edges.

Every class here is immutable; collections are tuples or read-only mappings so that a value
handed from one stage to the next cannot be changed behind its back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TypeVar

import attrs

from .. import contracts as c

__all__ = [
    "ChangeFacts",
    "ChangeSet",
    "ChunkRecord",
    "Collection",
    "Commits",
    "DiffGroup",
    "Durations",
    "Evaluation",
    "Inputs",
    "JobRef",
    "MetadataResult",
    "Observation",
    "ObservationOutcome",
    "Plan",
    "PlannedRequest",
    "PreparedGroup",
    "PreparedObservation",
    "RequestRecord",
    "RunFacts",
    "Task",
    "TaskDecision",
    "TaskEvidence",
    "TaskTable",
    "Usage",
    "frozen_mapping",
]


V = TypeVar("V")


def frozen_mapping(value: Mapping[str, V]) -> Mapping[str, V]:
    """A read-only view of a copy of ``value`` (insertion order kept)."""
    return MappingProxyType(dict(value))


@attrs.frozen
class JobRef:
    """A reference to one job (or, without ``job``, every job) of a workflow file."""

    workflow: str
    job: str | None = None


@attrs.frozen
class Task:
    """One normalised task of the table (docs/reference.md, "Task fields")."""

    id: str
    description: str
    always: bool = False
    jobs: tuple[JobRef, ...] | None = None
    context_files: tuple[str, ...] | None = None
    force_paths: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, object]:
        """The normalised task as it enters ``selection_hash``: optional fields only when given."""
        result: dict[str, object] = {
            c.TASK_FIELD_DESCRIPTION: self.description,
            c.TASK_FIELD_ALWAYS: self.always,
        }
        if self.jobs is not None:
            result[c.TASK_FIELD_JOBS] = [
                {c.JOB_REF_FIELD_WORKFLOW: ref.workflow}
                | ({c.JOB_REF_FIELD_JOB: ref.job} if ref.job is not None else {})
                for ref in self.jobs
            ]
        if self.context_files is not None:
            result[c.TASK_FIELD_CONTEXT_FILES] = list(self.context_files)
        if self.force_paths is not None:
            result[c.TASK_FIELD_FORCE_PATHS] = list(self.force_paths)
        return result


@attrs.frozen
class TaskTable:
    """The validated task table; ``tasks`` are in code-unit order of their IDs."""

    tasks: tuple[Task, ...] = ()

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(task.id for task in self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def get(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def to_json(self) -> dict[str, dict[str, object]]:
        return {task.id: task.to_json() for task in self.tasks}


@attrs.frozen
class Inputs:
    """The validated and normalised inputs (docs/reference.md, "Inputs")."""

    tasks: TaskTable
    mode: c.Mode = attrs.field(default=c.MODE_ENFORCE, converter=c.Mode)
    model: str = c.DEFAULT_MODEL
    skip_below: float = 0.05
    api_base_url: str = c.DEFAULT_API_BASE_URL  # normalised root, no trailing "/"
    api_model: str = c.DEFAULT_MODEL  # the identifier sent; the model when the input is blank
    api_key: str = attrs.field(default="", repr=False)  # "" means no key
    allow_external_context: bool = False
    github_token: str = attrs.field(default="", repr=False)  # "" means anonymous
    tested_ref: c.TestedRef = attrs.field(default=c.TESTED_REF_MERGE, converter=c.TestedRef)
    pull_request: str = ""  # trimmed raw text; checked later (invalid-manual-request)
    merge_group: c.MergeGroupMode = attrs.field(
        default=c.MERGE_GROUP_RUN_ALL, converter=c.MergeGroupMode
    )
    force_all: bool = False
    timeout_ms: int = 10000
    max_diff_bytes: int = 65536
    # The repository path of the task table (input tasks-file), normalised; None with `tasks`.
    # Until the caller reads it at the base commit, ``tasks`` is the empty table.
    tasks_file: str | None = None

    @property
    def endpoint(self) -> str:
        return self.api_base_url + c.SYSTEM_ONE_PATH


@attrs.frozen
class Commits:
    """The commits of one analysis (docs/reference.md, "Tested commit")."""

    base_sha: str
    head_sha: str
    tested_sha: str
    metadata_sha: str
    diff_base_sha: str | None = None


@attrs.frozen
class ChangeSet:
    """A completely collected change (docs/reference.md, "Changed paths and diff facts")."""

    patch: str
    diff_hash: str
    diff_bytes: int
    changed_paths: tuple[str, ...]

    @property
    def changed_path_count(self) -> int:
        return len(self.changed_paths)


@attrs.frozen
class Collection:
    """Outcome of change collection: a change set, or an error code with the paths it knew."""

    commits: Commits
    change_set: ChangeSet | None = None
    error: str | None = None
    error_paths: tuple[str, ...] | None = None

    @property
    def known_paths(self) -> tuple[str, ...] | None:
        if self.change_set is not None:
            return self.change_set.changed_paths
        return self.error_paths


@attrs.frozen
class TaskEvidence:
    """What metadata resolution produced for one task (docs/reference.md, "Evidence object",
    "Job metadata")."""

    evidence: Mapping[str, object]  # the question's instructions.task object, keys sorted
    job_metadata: Mapping[str, object] | None  # report entry, None when resolution did not run
    incomplete: bool = False


@attrs.frozen
class DiffGroup:
    """One contiguous slice of the patch (docs/reference.md, "Grouping")."""

    index: int
    start_byte: int
    end_byte: int
    diff: str
    context: str  # preceding_diff_headers of a continuation piece, else ""
    paths: tuple[str, ...]


@attrs.frozen
class PlannedRequest:
    """One System One request: a batch of tasks for one group, with its exact body."""

    group_index: int
    task_ids: tuple[str, ...]
    body: bytes


@attrs.frozen
class Usage:
    input_tokens: int
    output_tokens: int

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )

    def to_json(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


@attrs.frozen
class RequestRecord:
    """What happened to one request (docs/reference.md, "Report fields"); ``scores`` only for a
    completed request."""

    task_ids: tuple[str, ...]
    status: c.GroupStatus
    model: str | None = None
    usage: Usage | None = None
    duration_ms: float | None = None
    error: str | None = None
    scores: Mapping[str, float] | None = None


@attrs.frozen
class ChunkRecord:
    """The observation of one group (docs/reference.md, "Report fields")."""

    index: int
    start_byte: int
    end_byte: int
    paths: tuple[str, ...]
    diff_hash: str
    state_hash: str
    diff_bytes: int
    status: c.GroupStatus
    probabilities: Mapping[str, float] | None
    model: str | None
    usage: Usage | None
    duration_ms: float | None
    error: str | None
    requests: tuple[RequestRecord, ...]


@attrs.frozen
class Observation:
    """Every group's record, in group order (docs/reference.md, "Report fields")."""

    strategy: c.Strategy
    status: c.ObservationStatus
    chunks: tuple[ChunkRecord, ...]

    @property
    def requests(self) -> tuple[RequestRecord, ...]:
        return tuple(request for chunk in self.chunks for request in chunk.requests)


def _reasons(reasons: Iterable[str]) -> tuple[c.Reason, ...]:
    """Reason codes as members of their vocabulary; a code outside it is refused here."""
    return tuple(c.Reason(reason) for reason in reasons)


@attrs.frozen
class TaskDecision:
    proposed_run: bool | None
    run: bool
    reasons: tuple[c.Reason, ...] = attrs.field(converter=_reasons)


@attrs.frozen
class Plan:
    """The decision for every task (docs/reference.md, "Selection policy"); ``decisions`` in
    code-unit order of IDs."""

    mode: c.Mode = attrs.field(converter=c.Mode)
    status: c.Status = attrs.field(converter=c.Status)
    decisions: Mapping[str, TaskDecision]

    @property
    def selected(self) -> tuple[str, ...]:
        return tuple(task_id for task_id, decision in self.decisions.items() if decision.run)

    @property
    def run(self) -> dict[str, bool]:
        return {task_id: decision.run for task_id, decision in self.decisions.items()}


@attrs.frozen
class PreparedGroup:
    """A group ready to send: its slice of the patch and the hashes the report records."""

    group: DiffGroup
    diff_hash: str  # SHA-256 of the group's diff text (UTF-8)
    state_hash: str  # SHA-256 of the compact JSON of the group's state object


@attrs.frozen
class PreparedObservation:
    """Everything the evaluation phase sends: groups in order, requests by group then batch."""

    groups: tuple[PreparedGroup, ...]
    requests: tuple[PlannedRequest, ...]

    @property
    def strategy(self) -> c.Strategy:
        return c.STRATEGY_WHOLE_DIFF if len(self.groups) == 1 else c.STRATEGY_CHUNKED_DIFF


@attrs.frozen
class ObservationOutcome:
    """Result of the evaluation phase (docs/reference.md, "Batching, concurrency and deadlines",
    "Response validation", "Model identity and usage")."""

    observation: Observation
    error: str | None  # first request failure code, else None
    usage: Usage | None  # summed over requests with usage
    model_returned: str | None  # the single distinct non-null model, else None
    duration_ms: float  # wall time of the evaluation phase
    cause: str | None = None  # cause category of the first failure, for people (never reported)


@attrs.frozen
class MetadataResult:
    """Evidence per task (code-unit order of IDs) and the working-directory hints
    (docs/reference.md, "Working-directory hints")."""

    evidence: Mapping[str, TaskEvidence]
    hints: tuple[str, ...] = ()
    # Per task, explanations of its gaps for the terminal view and the step summary (never in
    # the report, whose warnings keep their fixed forms).
    notes: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)


@attrs.frozen
class ChangeFacts:
    """What planning learned about the change before anything was sent: the input of the policy
    and of the report on the side of the diff (docs/reference.md, "Changed paths and diff facts",
    "Job metadata").

    ``changed_paths`` are the paths known to collection, also when it failed but still knew them
    (``None`` when it knew none); ``change_set`` is set only when the change was completely
    collected; ``metadata_incomplete`` holds the IDs of tasks with a metadata gap.
    """

    changed_paths: tuple[str, ...] | None = None
    collection_error: str | None = None
    change_set: ChangeSet | None = None
    metadata_incomplete: frozenset[str] = frozenset()
    # Task ID to its report entry, for the tasks whose metadata resolution ran.
    job_metadata: Mapping[str, Mapping[str, object]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, collection: Collection, metadata: MetadataResult | None) -> ChangeFacts:
        """The facts of a collection and of the metadata resolved from it (if it ran)."""
        evidence = metadata.evidence if metadata is not None else {}
        return cls(
            changed_paths=collection.known_paths,
            collection_error=collection.error,
            change_set=collection.change_set,
            metadata_incomplete=frozenset(
                task_id for task_id, entry in evidence.items() if entry.incomplete
            ),
            job_metadata=frozen_mapping(
                {
                    task_id: entry.job_metadata
                    for task_id, entry in evidence.items()
                    if entry.job_metadata is not None
                }
            ),
        )


@attrs.frozen
class Evaluation:
    """What the evaluation phase observed, or why it could not (docs/reference.md, "Selection
    policy", "Model identity and usage").

    ``decisions`` come from ``score_decisions`` (``None`` when nothing was observed);
    ``grouping_error`` is set when the change could not be grouped, so nothing was sent;
    ``first_failure`` is the code of the first failed request.
    """

    observation: Observation | None = None
    decisions: Mapping[str, object] | None = None
    grouping_error: str | None = None
    first_failure: str | None = None
    model_returned: str | None = None
    usage: Usage | None = None

    @property
    def observation_error(self) -> str | None:
        """The report's ``observation_error``: why the observation is missing or incomplete."""
        return self.grouping_error or self.first_failure

    @property
    def group_count(self) -> int:
        return len(self.observation.chunks) if self.observation is not None else 0


@attrs.frozen
class Durations:
    """The report's ``durations_ms``; ``jev`` is ``None`` when the evaluation phase never began."""

    collection: float
    jev: float | None
    total: float


@attrs.frozen
class RunFacts:
    """The facts of a run the report records beside the plan, the change and the evaluation."""

    tested_ref: c.TestedRef = attrs.field(converter=c.TestedRef)
    skip_below: float
    commits: Commits
    selection_hash: str
    model_requested: str
    model_expected: str
    durations_ms: Durations
