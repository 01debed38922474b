"""One planning run from validated inputs to a validated report.

This module wires the stages together (docs/reference.md, "Statuses" to "Report fields"): bypass,
change collection, metadata, grouping, evaluation, policy and report. It is shared by GitHub mode
and local mode, which differ only in where the commits and settings come from and where the result
is published.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from .. import contracts as c
from ..core.durations import milliseconds_between
from ..core.models import (
    ChangeFacts,
    Collection,
    Commits,
    Durations,
    Evaluation,
    Inputs,
    MetadataResult,
    ObservationOutcome,
    Plan,
    PreparedObservation,
    RunFacts,
)
from ..core.policy import choose_bypass, decide, score_decisions
from ..core.preview import PatchSize, PreviewFacts, kept_whole_reason, protected_path
from ..core.report import build_report, validate_report
from ..core.report_v5 import ReportV5
from ..core.tasks import compute_selection_hash

if TYPE_CHECKING:
    from ..core.evidence.resolve import Lookups
    from ..edges.git.runner import GitTimeBound
    from ..edges.git.session import GitSession
    from ..edges.jev_client import Sender

__all__ = [
    "ChangePreview",
    "CollectedChange",
    "PlanResult",
    "RunContext",
    "collect_change_once",
    "preview_change",
    "run_plan_pipeline",
]


def _no_lookups() -> Lookups:
    # Imported on use: a bypass run never resolves metadata and must not load the evidence code.
    from ..core.evidence.resolve import NoLookups

    return NoLookups()


@attrs.frozen
class RunContext:
    """The facts of one planning run that do not come from the inputs."""

    commits: Commits  # diff_base_sha is filled by collection
    pull_request: bool  # a change to analyse: a pull request, or a merge-queue commit on opt-in
    fork: bool
    remote: str
    temp_root: str
    environ: Mapping[str, str] = attrs.field(repr=False)
    provenance_repository: str
    # Other repositories' actions and reusable workflows: GitHub's bounded, concurrent lookups,
    # a replay snapshot, or none.
    lookups: Lookups = attrs.field(factory=_no_lookups)
    # Replaces the HTTP transport of the evaluation phase (evaluation replay); None means HTTPS.
    send: Sender | None = None
    # A merge_group queue commit planned against its base (merge-group: select): verified by
    # ancestry and recorded as merge mode, whatever tested-ref says.
    merge_queue: bool = False
    # A local repository whose objects collection borrows instead of fetching (local mode with
    # the default remote); None fetches from ``remote``.
    borrow_from: str | None = None
    # Local mode: without a key or consent, still collect the change for the terminal (nothing
    # leaves the machine); the plan and the report stay those of the bypass.
    preview: bool = False
    # Local mode: the time bound of every git command of the run (None: unbounded, GitHub mode).
    git_bound: GitTimeBound | None = None
    # Local plan: when collection fails on max-diff-bytes, read the patch once more (at most
    # PATCH_MEASURE_CAP bytes) to tell the reader its size.
    measure_patch: bool = False


@attrs.frozen
class PlanResult:
    plan: Plan
    report: ReportV5
    changed_paths: tuple[str, ...] | None = None  # the paths the plan saw, when collected
    # Local mode without a key or consent: what planning found before anything would be sent.
    preview: ChangePreview | None = None
    failure_cause: str | None = None  # cause category of the first failed Jev request
    # The patch over max-diff-bytes behind a collection's diff-too-large, when it was measured.
    patch: PatchSize | None = None
    # Per task, explanations of metadata gaps for the terminal view and the step summary.
    notes: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)


def run_plan_pipeline(
    inputs: Inputs,
    run: RunContext,
    *,
    validated_at: float,
    clock: Callable[[], float] = time.monotonic,
    collected: CollectedChange | None = None,
) -> PlanResult:
    """Plan the run. ``validated_at`` is the ``clock`` reading when input validation ended.

    ``collected`` is the change as a preview of this very run collected it (``history`` asks for
    consent between the two): it is used as it is instead of collecting the change again.
    """
    tasks = inputs.tasks
    tested_ref = _tested_ref(inputs, run)
    selection_hash = compute_selection_hash(inputs.model, inputs.skip_below, tasks)
    bypass = choose_bypass(
        pull_request=run.pull_request,
        force_all=inputs.force_all,
        fork=run.fork,
        api_key=inputs.api_key,
        allow_external_context=inputs.allow_external_context,
    )
    commits = run.commits
    staged: CollectedChange | None = None
    collection: Collection | None = None
    metadata: MetadataResult | None = None
    grouping_error: str | None = None
    outcome: ObservationOutcome | None = None
    jev_ms: float | None = None

    if bypass is None and len(tasks) > 0:
        # Imported here rather than at the top: a bypass (every push, fork or run without a key)
        # needs neither git nor HTTP, and loading GitPython, requests and urllib3 would cost it
        # more than all its own work.
        from ..edges.evaluate import run_observation

        staged = collected if collected is not None else collect_change_once(inputs, run, clock)
        collection, metadata = staged.collection, staged.metadata
        commits = collection.commits
        # A change collected before this run (history's preview) took none of its time.
        collected_at = max(staged.collected_at, validated_at)
        grouping_error = staged.grouping_error
        if grouping_error is not None:
            jev_ms = staged.grouping_ms
        elif staged.prepared is not None:
            outcome = run_observation(
                staged.prepared,
                endpoint=inputs.endpoint,
                api_key=inputs.api_key,
                expected_model=inputs.model,
                timeout_ms=inputs.timeout_ms,
                clock=clock,
                send=run.send,
            )
            jev_ms = outcome.duration_ms
    else:
        collected_at = clock()

    observation = outcome.observation if outcome is not None else None
    change = ChangeFacts.of(collection, metadata) if collection is not None else None
    evaluation = Evaluation(
        observation=observation,
        decisions=(
            score_decisions(observation, tasks.ids, inputs.skip_below)
            if observation is not None
            else None
        ),
        grouping_error=grouping_error,
        first_failure=outcome.error if outcome is not None else None,
        model_returned=outcome.model_returned if outcome is not None else None,
        usage=outcome.usage if outcome is not None else None,
    )
    plan = decide(
        tasks,
        mode=inputs.mode,
        bypass=bypass,
        change=change,
        evaluation=evaluation,
        protected_paths=_protected_paths(inputs),
    )
    report = build_report(
        plan,
        RunFacts(
            tested_ref=tested_ref,
            skip_below=inputs.skip_below,
            commits=commits,
            selection_hash=selection_hash,
            model_requested=inputs.api_model,
            model_expected=inputs.model,
            durations_ms=Durations(
                collection=milliseconds_between(validated_at, collected_at),
                jev=jev_ms,
                total=milliseconds_between(validated_at, clock()),
            ),
        ),
        change,
        evaluation,
    )
    validate_report(report)
    preview = None
    if run.preview and bypass in _PREVIEW_BYPASSES and len(tasks) > 0:
        # After the report, so that its timings are those of the bypass.
        preview = preview_change(inputs, run, clock=clock)
    return PlanResult(
        plan=plan,
        report=report,
        changed_paths=collection.known_paths if collection is not None else None,
        preview=preview,
        failure_cause=outcome.cause if outcome is not None else None,
        notes=metadata.notes if metadata else {},
        patch=staged.patch if staged is not None else None,
    )


_PREVIEW_BYPASSES = (c.REASON_MISSING_API_KEY, c.REASON_EXTERNAL_CONTEXT_DISABLED)


def _protected_paths(inputs: Inputs) -> tuple[str, ...]:
    """Exact paths that bypass selection like a workflow edit: the ``tasks-file`` table."""
    return (inputs.tasks_file,) if inputs.tasks_file is not None else ()


def _tested_ref(inputs: Inputs, run: RunContext) -> c.TestedRef:
    # A merge-queue commit is what merges: the report records it as the merge that is tested.
    return c.TESTED_REF_MERGE if run.merge_queue else inputs.tested_ref


def _collect(
    inputs: Inputs, run: RunContext
) -> tuple[Collection, MetadataResult | None, PatchSize | None]:
    """Collect the change and, once it is collected and there are tasks, their metadata.

    One git session serves both, so the metadata is read from the objects just verified; the
    patch over ``max-diff-bytes`` is measured in it too when the run asks for that.
    """
    from ..edges.collect import collect_change
    from ..edges.git.session import GitSession

    commits = run.commits
    with GitSession(
        run.remote,
        token=inputs.github_token,
        temp_root=run.temp_root,
        environ=run.environ,
        borrow_from=run.borrow_from,
        bound=run.git_bound,
    ) as session:
        collection = collect_change(
            session,
            base_sha=commits.base_sha,
            head_sha=commits.head_sha,
            tested_sha=commits.tested_sha,
            tested_ref=_tested_ref(inputs, run),
            metadata_sha=commits.metadata_sha,
            max_diff_bytes=inputs.max_diff_bytes,
            queue=run.merge_queue,
        )
        metadata = (
            _resolve_metadata(inputs, run, session)
            if collection.change_set is not None and len(inputs.tasks) > 0
            else None
        )
        patch = (
            _measure_patch(session, collection, inputs.max_diff_bytes)
            if run.measure_patch
            else None
        )
    return collection, metadata, patch


def _measure_patch(session: GitSession, collection: Collection, limit: int) -> PatchSize | None:
    """The patch's size when collection refused it for ``max-diff-bytes``, else None.

    ``diff-too-large`` with the changed paths known comes from a blob over its cap or from the
    patch (docs/reference.md, "Collection checks"); reading the patch once more, up to
    ``PATCH_MEASURE_CAP`` bytes, tells which. Past that cap the patch is past the limit too.
    """
    from ..edges.git.runner import GitError, GitOutputTooLarge

    diff_base = collection.commits.diff_base_sha
    if (
        collection.error != c.REASON_DIFF_TOO_LARGE
        or collection.error_paths is None
        or diff_base is None
        or limit >= c.PATCH_MEASURE_CAP
    ):
        return None
    try:
        size = len(session.patch(diff_base, collection.commits.tested_sha, c.PATCH_MEASURE_CAP))
    except GitOutputTooLarge:
        return PatchSize(limit_bytes=limit, patch_bytes=None)
    except GitError:
        return None
    return PatchSize(limit_bytes=limit, patch_bytes=size) if size > limit else None


def _gaps(metadata: MetadataResult | None) -> dict[str, tuple[str, ...]]:
    """Task ID to its metadata warnings, first-seen order; tasks without any are left out."""
    gaps: dict[str, tuple[str, ...]] = {}
    if metadata is not None:
        for task_id, entry in metadata.evidence.items():
            warnings = (entry.job_metadata or {}).get("warnings") or ()
            if isinstance(warnings, list | tuple) and warnings:
                gaps[task_id] = tuple(str(warning) for warning in warnings)
    return gaps


def _resolve_metadata(inputs: Inputs, run: RunContext, session: GitSession) -> MetadataResult:
    from ..core.evidence.resolve import resolve_with_lookups

    commits = run.commits
    needs_files = any(
        task.jobs is not None or task.context_files is not None for task in inputs.tasks.tasks
    )
    readable = True
    if needs_files and commits.metadata_sha != commits.base_sha:
        readable = session.ensure_commit(commits.metadata_sha)

    texts: dict[str, bytes | None] = {}

    def read_file(path: str) -> bytes | None:
        if not readable:
            return None
        if path not in texts:
            texts[path] = session.read_file_at(commits.metadata_sha, path, c.METADATA_FILE_CAP)
        return texts[path]

    def list_paths() -> tuple[str, ...] | None:
        return session.list_paths_at(commits.metadata_sha) if readable else None

    return resolve_with_lookups(
        inputs.tasks,
        read_file=read_file,
        lookups=run.lookups,
        repository=run.provenance_repository,
        commit=commits.metadata_sha,
        clock=time.monotonic,
        list_paths=list_paths,
    )


@attrs.frozen
class CollectedChange:
    """A change collected, its metadata resolved and its requests grouped: everything planning
    does before it sends, done once per change.

    ``collected_at`` is the clock reading when collection ended; ``grouping_ms`` how long grouping
    took. ``prepared`` is set when the change could be grouped, ``grouping_error`` when it could
    not; both are ``None`` when collection failed or there was no metadata to group with.
    ``patch`` is the measured patch over ``max-diff-bytes`` (``RunContext.measure_patch``).
    """

    collection: Collection
    metadata: MetadataResult | None
    prepared: PreparedObservation | None
    grouping_error: str | None
    collected_at: float
    grouping_ms: float
    patch: PatchSize | None = None


def collect_change_once(
    inputs: Inputs, run: RunContext, clock: Callable[[], float] = time.monotonic
) -> CollectedChange:
    """Collect the change, resolve its metadata and group it, exactly as planning does."""
    from ..core.grouping import GroupingError, prepare_observation

    collection, metadata, patch = _collect(inputs, run)
    collected_at = clock()
    prepared: PreparedObservation | None = None
    grouping_error: str | None = None
    if collection.change_set is not None and metadata is not None:
        try:
            prepared = prepare_observation(
                patch=collection.change_set.patch,
                commits=collection.commits,
                evidence_by_task={
                    task_id: entry.evidence for task_id, entry in metadata.evidence.items()
                },
                hints=metadata.hints,
                api_model=inputs.api_model,
            )
        except GroupingError as error:
            grouping_error = error.code
    return CollectedChange(
        collection=collection,
        metadata=metadata,
        prepared=prepared,
        grouping_error=grouping_error,
        collected_at=collected_at,
        grouping_ms=milliseconds_between(collected_at, clock()),
        patch=patch,
    )


@attrs.frozen
class ChangePreview:
    """What planning one change finds before anything is sent (``jev-select history``, and
    local ``plan`` without a key or consent).

    ``plan`` is the policy applied without scores, with the keyed run's protected paths: forced
    states, ``always``, ``path-match`` and metadata gaps are final; every candidate is undecided.
    ``requests`` is the number of Jev requests the observation would send (0 when collection or
    grouping failed; under a protected path they are sent and their answers only recorded).
    """

    plan: Plan
    changed_paths: tuple[str, ...] | None  # None when the change could not be collected
    collection_error: str | None
    grouping_error: str | None
    gaps: Mapping[str, tuple[str, ...]]  # task ID -> metadata warnings, first-seen order
    requests: int
    collection_ms: float
    # The change as collected and grouped, for the planning run that follows the preview.
    collected: CollectedChange = attrs.field(repr=False, eq=False)
    # The first changed path that makes the plan ``protected-path``, when one does.
    protected_path: str | None = None

    @property
    def facts(self) -> PreviewFacts:
        """What the terminal and ``plan --json`` show of this preview."""
        change_set = self.collected.collection.change_set
        return PreviewFacts(
            plan=self.plan,
            changed_paths=self.changed_paths,
            collection_error=self.collection_error,
            gaps=self.gaps,
            requests=self.requests,
            protected_path=self.protected_path,
            patch=self.collected.patch,
            diff_bytes=change_set.diff_bytes if change_set is not None else None,
        )


def preview_change(
    inputs: Inputs, run: RunContext, *, clock: Callable[[], float] = time.monotonic
) -> ChangePreview:
    """Collect the change, resolve metadata and group it exactly as planning does, send nothing.

    The bypasses of a missing key or missing consent do not stop the preview: it is how a dry
    run without a key still sees collection errors, protected paths, ``force_paths``, ``always``
    and metadata gaps. Other bypasses (``force-all``) do stop it.
    """
    tasks = inputs.tasks
    started = clock()
    staged = collect_change_once(inputs, run, clock)
    collection, metadata = staged.collection, staged.metadata
    collection_ms = milliseconds_between(started, staged.collected_at)
    grouping_error = staged.grouping_error
    requests = len(staged.prepared.requests) if staged.prepared is not None else 0
    # The keyed run's own policy and protected paths; only the scores are missing.
    plan = decide(
        tasks,
        mode=inputs.mode,
        bypass=c.REASON_FORCE_ALL if inputs.force_all else None,
        change=ChangeFacts.of(collection, metadata),
        evaluation=Evaluation(grouping_error=grouping_error),
        protected_paths=_protected_paths(inputs),
    )
    return ChangePreview(
        plan=plan,
        changed_paths=collection.known_paths,
        collection_error=collection.error,
        grouping_error=grouping_error,
        gaps=_gaps(metadata),
        requests=0 if inputs.force_all else requests,
        collection_ms=collection_ms,
        collected=staged,
        protected_path=(
            protected_path(collection.known_paths, _protected_paths(inputs))
            if kept_whole_reason(plan) == c.REASON_PROTECTED_PATH
            else None
        ),
    )
