"""The evaluation phase: send every planned request under one deadline and record what happened.

docs/reference.md, "Batching, concurrency and deadlines": at most three requests in flight, each
bounded by min(10 s, what is left of the total deadline); the first failure stops further dispatch;
a request still running at its bound is abandoned (its daemon worker may linger, but never delays
exit) and recorded as ``jev-timeout``, so this function returns shortly after the deadline whatever
the server does.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence

import attrs

from .. import contracts as c
from ..core.durations import milliseconds_between
from ..core.models import (
    ChunkRecord,
    Observation,
    ObservationOutcome,
    PlannedRequest,
    PreparedGroup,
    PreparedObservation,
    RequestRecord,
    Usage,
)
from ..errors import PlanningFailure
from . import jev_client

__all__ = ["run_observation"]

# Upper bound on one coordinator sleep, so that a missed wake-up costs little.
_MAX_WAIT_S = 0.05


@attrs.define
class _Slot:
    """Progress of one planned request; only touched with the phase lock held."""

    started_at: float | None = None
    bound_at: float | None = None
    record: RequestRecord | None = None

    @property
    def in_flight(self) -> bool:
        return self.started_at is not None and self.record is None


@attrs.define
class _PhaseState:
    slots: list[_Slot]
    next_index: int = 0
    stopped: bool = False
    first_failure: str | None = None
    crashed: bool = False

    def fail(self, code: str) -> None:
        if self.first_failure is None:
            self.first_failure = code
        self.stopped = True

    @property
    def dispatch_pending(self) -> bool:
        return not self.stopped and self.next_index < len(self.slots)


def run_observation(
    prepared: PreparedObservation,
    *,
    endpoint: str,
    api_key: str,
    expected_model: str,
    timeout_ms: int,
    clock: Callable[[], float] = time.monotonic,
    send: jev_client.Sender | None = None,
) -> ObservationOutcome:
    """Send ``prepared.requests`` (group, then batch order) and build the observation.

    ``send`` defaults to ``jev_client.send`` and must have its signature and failure type
    (``jev_client.RequestFailed``). Every other exception from it, or from validation, is a
    programming error and raises ``PlanningFailure(internal-error)``.
    """
    started = clock()
    deadline = started + timeout_ms / 1000.0
    sender = send if send is not None else jev_client.send
    planned = prepared.requests
    state = _PhaseState(slots=[_Slot() for _ in planned])
    condition = threading.Condition()

    def remaining_ms(now: float) -> int:
        return math.floor((deadline - now) * 1000.0)

    def claim() -> tuple[int, float, float] | None:
        with condition:
            if not state.dispatch_pending:
                return None
            now = clock()
            left = remaining_ms(now)
            if left <= 0:
                state.fail(c.REASON_JEV_TIMEOUT)
                condition.notify_all()
                return None
            index = state.next_index
            state.next_index += 1
            slot = state.slots[index]
            slot.started_at = now
            slot.bound_at = now + min(c.REQUEST_BOUND_MS, left) / 1000.0
            return index, now, slot.bound_at

    # Cause categories of failed requests, in the order they failed (for the local failure line).
    causes: list[str] = []

    def perform(request: PlannedRequest, bound_at: float) -> jev_client.ValidatedResponse:
        try:
            body = sender(endpoint, api_key, request.body, deadline=bound_at, clock=clock)
        except jev_client.RequestFailed as failure:
            with condition:
                causes.append(failure.cause or c.CAUSE_UNKNOWN)
            return jev_client.ValidatedResponse(None, None, None, failure.code)
        result = jev_client.validate_response(body, request.task_ids, expected_model)
        if result.error is not None:
            with condition:
                causes.append(c.CAUSE_INVALID_RESPONSE)
        return result

    def work() -> None:
        while True:
            claimed = claim()
            if claimed is None:
                return
            index, dispatched_at, bound_at = claimed
            request = planned[index]
            try:
                result = perform(request, bound_at)
            except BaseException:  # reported to the coordinator as a programming error
                with condition:
                    state.crashed = True
                    condition.notify_all()
                return
            finished_at = clock()
            with condition:
                slot = state.slots[index]
                if slot.record is None:  # otherwise the coordinator already gave up on it
                    slot.record = RequestRecord(
                        task_ids=request.task_ids,
                        status=c.GROUP_COMPLETED if result.error is None else c.GROUP_FAILED,
                        model=result.model,
                        usage=result.usage,
                        duration_ms=milliseconds_between(dispatched_at, finished_at),
                        error=result.error,
                        scores=result.scores,
                    )
                    if result.error is not None:
                        state.fail(result.error)
                condition.notify_all()

    for _ in range(min(c.MAX_CONCURRENT_REQUESTS, len(planned))):
        threading.Thread(target=work, daemon=True, name="jev-select-request").start()

    with condition:
        while True:
            if state.crashed:
                raise PlanningFailure(c.FAILURE_INTERNAL_ERROR)
            now = clock()
            _abandon_expired(state, planned, now)
            if state.dispatch_pending and remaining_ms(now) <= 0:
                state.fail(c.REASON_JEV_TIMEOUT)
            wake_times = [
                slot.bound_at
                for slot in state.slots
                if slot.in_flight and slot.bound_at is not None
            ]
            if not wake_times and not state.dispatch_pending:
                break
            if state.dispatch_pending:
                wake_times.append(deadline)
            wait_s = min(wake_times) - now
            condition.wait(min(max(wait_s, 0.0005), _MAX_WAIT_S))
        first_failure = state.first_failure
        records = _final_records(state, planned, first_failure)
    finished = clock()

    chunks = tuple(_chunk_record(group, planned, records) for group in prepared.groups)
    every_group_completed = all(chunk.status == c.GROUP_COMPLETED for chunk in chunks)
    observation = Observation(
        strategy=prepared.strategy,
        status=c.OBSERVATION_COMPLETE if every_group_completed else c.OBSERVATION_INCOMPLETE,
        chunks=chunks,
    )
    cause = causes[0] if causes else None
    if first_failure == c.REASON_JEV_TIMEOUT and cause is None:
        cause = c.CAUSE_TIMEOUT
    return ObservationOutcome(
        observation=observation,
        error=first_failure,
        cause=cause if first_failure is not None else None,
        usage=_sum_usage(record.usage for record in records),
        model_returned=_single_model(record.model for record in records),
        duration_ms=milliseconds_between(started, finished),
    )


def _abandon_expired(state: _PhaseState, planned: Sequence[PlannedRequest], now: float) -> None:
    for index, slot in enumerate(state.slots):
        if slot.in_flight and slot.bound_at is not None and now >= slot.bound_at:
            assert slot.started_at is not None
            slot.record = RequestRecord(
                task_ids=planned[index].task_ids,
                status=c.GROUP_FAILED,
                duration_ms=milliseconds_between(slot.started_at, now),
                error=c.REASON_JEV_TIMEOUT,
            )
            state.fail(c.REASON_JEV_TIMEOUT)


def _final_records(
    state: _PhaseState, planned: Sequence[PlannedRequest], first_failure: str | None
) -> list[RequestRecord]:
    never_started_error = first_failure if first_failure is not None else c.REASON_JEV_TIMEOUT
    return [
        slot.record
        if slot.record is not None
        else RequestRecord(
            task_ids=request.task_ids, status=c.GROUP_NOT_STARTED, error=never_started_error
        )
        for slot, request in zip(state.slots, planned, strict=True)
    ]


def _sum_usage(usages: Iterable[Usage | None]) -> Usage | None:
    total: Usage | None = None
    for usage in usages:
        if usage is not None:
            total = usage if total is None else total + usage
    return total


def _single_model(models: Iterable[str | None]) -> str | None:
    distinct = {model for model in models if model is not None}
    return distinct.pop() if len(distinct) == 1 else None


def _chunk_record(
    prepared_group: PreparedGroup,
    planned: Sequence[PlannedRequest],
    records: Sequence[RequestRecord],
) -> ChunkRecord:
    group = prepared_group.group
    own = tuple(
        record
        for request, record in zip(planned, records, strict=True)
        if request.group_index == group.index
    )
    completed = [record for record in own if record.status == c.GROUP_COMPLETED]
    if own and len(completed) == len(own):
        status = c.GROUP_COMPLETED
    elif any(record.status != c.GROUP_NOT_STARTED for record in own):
        status = c.GROUP_FAILED
    else:
        status = c.GROUP_NOT_STARTED
    probabilities: dict[str, float] | None = None
    if completed:
        probabilities = {}
        for record in completed:
            probabilities.update(record.scores or {})
    durations = [record.duration_ms for record in own if record.duration_ms is not None]
    errors = [record.error for record in own if record.error is not None]
    return ChunkRecord(
        index=group.index,
        start_byte=group.start_byte,
        end_byte=group.end_byte,
        paths=group.paths,
        diff_hash=prepared_group.diff_hash,
        state_hash=prepared_group.state_hash,
        diff_bytes=len(group.diff.encode("utf-8")),
        status=status,
        probabilities=probabilities,
        model=_single_model(record.model for record in own),
        usage=_sum_usage(record.usage for record in own),
        duration_ms=sum(durations) if durations else None,
        error=errors[0] if errors else None,
        requests=own,
    )
