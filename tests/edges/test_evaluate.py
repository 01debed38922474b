"""The evaluation phase (docs/reference.md, "Batching, concurrency and deadlines",
"Response validation", "Model identity and usage", "Report fields") against the fake System One
server."""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from support.deadlines import EARLY_S, IGNORED_BOUND_S, LOAD_SLACK_S, assert_ended_at_bound
from support.fakejev import ConnectProxy, FakeJev, RecordedRequest, Reply

from jev_select import contracts as c
from jev_select.core.models import (
    DiffGroup,
    ObservationOutcome,
    PlannedRequest,
    PreparedGroup,
    PreparedObservation,
    RequestRecord,
    Usage,
)
from jev_select.edges import httpio, jev_client
from jev_select.edges.evaluate import run_observation
from jev_select.edges.jev_client import RequestFailed
from jev_select.errors import PlanningFailure

MODEL = c.DEFAULT_MODEL
KEY = "sk-observe-SENTINEL"
LOAD_SLACK_MS = LOAD_SLACK_S * 1000
USAGE = Usage(1200, 7)


def prepare(
    layout: Sequence[Sequence[Sequence[str]]], *, api_model: str = MODEL
) -> PreparedObservation:
    """``layout[g]`` is the list of batches of group ``g``, each a list of task IDs."""
    groups: list[PreparedGroup] = []
    requests: list[PlannedRequest] = []
    offset = 0
    for index, batches in enumerate(layout):
        diff = f"diff --git a/f{index}é b/f{index}é\n"
        size = len(diff.encode())
        group = DiffGroup(index, offset, offset + size, diff, "", (f"f{index}é",))
        offset += size
        groups.append(
            PreparedGroup(
                group,
                diff_hash=hashlib.sha256(diff.encode()).hexdigest(),
                state_hash=hashlib.sha256(f"state{index}".encode()).hexdigest(),
            )
        )
        for batch in batches:
            body = {
                "model": api_model,
                "state": {"chunk": {"index": index, "total": len(layout)}},
                "questions": {task: {"type": "noul"} for task in batch},
            }
            requests.append(
                PlannedRequest(
                    index, tuple(batch), json.dumps(body, separators=(",", ":")).encode()
                )
            )
    return PreparedObservation(tuple(groups), tuple(requests))


def run(
    server: FakeJev, prepared: PreparedObservation, timeout_ms: int = 5000, **kwargs: Any
) -> ObservationOutcome:
    return run_observation(
        prepared,
        endpoint=server.endpoint,
        api_key=KEY,
        expected_model=MODEL,
        timeout_ms=timeout_ms,
        **kwargs,
    )


def by_group(replies: dict[int, Reply], default: Reply | None = None) -> Callable[..., Reply]:
    def respond(request: RecordedRequest) -> Reply:
        index = request.group_index
        if index is not None and index in replies:
            return replies[index]
        return default if default is not None else Reply.ok()

    return respond


@pytest.fixture
def jev(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJev]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeJev(scores={"a": 0.01, "b": 0.5, "c": 1.0}) as server:
        yield server


# -- everything answers ------------------------------------------------------------------------


def test_single_group_in_two_batches_completes(jev: FakeJev) -> None:
    prepared = prepare([[["a", "b"], ["c"]]])
    outcome = run(jev, prepared)

    assert outcome.error is None
    assert outcome.model_returned == MODEL
    assert outcome.usage == USAGE + USAGE
    assert outcome.duration_ms > 0
    observation = outcome.observation
    assert observation.strategy == c.STRATEGY_WHOLE_DIFF
    assert observation.status == c.OBSERVATION_COMPLETE
    (chunk,) = observation.chunks
    group = prepared.groups[0]
    assert (chunk.index, chunk.start_byte, chunk.end_byte) == (0, 0, group.group.end_byte)
    assert chunk.paths == group.group.paths
    assert chunk.diff_hash == group.diff_hash
    assert chunk.state_hash == group.state_hash
    assert chunk.diff_bytes == len(group.group.diff.encode()) == len(group.group.diff) + 2
    assert chunk.status == c.GROUP_COMPLETED
    assert chunk.probabilities == {"a": 0.01, "b": 0.5, "c": 1.0}
    assert list(chunk.probabilities) == ["a", "b", "c"]
    assert chunk.model == MODEL
    assert chunk.usage == USAGE + USAGE
    assert chunk.error is None
    assert [request.task_ids for request in chunk.requests] == [("a", "b"), ("c",)]
    durations = [request.duration_ms for request in chunk.requests]
    assert all(duration is not None and duration > 0 for duration in durations)
    assert chunk.duration_ms == pytest.approx(sum(d for d in durations if d is not None))
    for request in chunk.requests:
        assert request.status == c.GROUP_COMPLETED
        assert (request.model, request.usage, request.error) == (MODEL, USAGE, None)
    assert chunk.requests[0].scores == {"a": 0.01, "b": 0.5}
    assert len(jev.requests) == 2
    assert all(seen.header("Authorization") == f"Bearer {KEY}" for seen in jev.requests)


def test_requests_are_sent_in_group_then_batch_order_and_bodies_unchanged(jev: FakeJev) -> None:
    prepared = prepare([[["a"], ["b"]], [["a", "b"]]])
    outcome = run(jev, prepared)
    assert outcome.observation.strategy == c.STRATEGY_CHUNKED_DIFF
    assert outcome.observation.status == c.OBSERVATION_COMPLETE
    assert sorted(seen.body for seen in jev.requests) == sorted(r.body for r in prepared.requests)
    assert [chunk.index for chunk in outcome.observation.chunks] == [0, 1]


def test_alias_requested_and_canonical_model_returned_is_accepted(jev: FakeJev) -> None:
    prepared = prepare([[["a"]]], api_model="jev-latest")
    outcome = run(jev, prepared)
    assert jev.requests[0].json["model"] == "jev-latest"
    assert outcome.error is None
    assert outcome.model_returned == MODEL


def test_concurrency_never_exceeds_three_with_nine_requests(jev: FakeJev) -> None:
    jev.responder = lambda request: Reply.slow(0.1)
    prepared = prepare([[["a"], ["b"], ["c"]] for _ in range(3)])
    outcome = run(jev, prepared)
    assert outcome.observation.status == c.OBSERVATION_COMPLETE
    assert len(jev.requests) == 9
    assert jev.max_in_flight == c.MAX_CONCURRENT_REQUESTS == 3


def test_fewer_requests_use_fewer_workers(jev: FakeJev) -> None:
    jev.responder = lambda request: Reply.slow(0.1)
    outcome = run(jev, prepare([[["a"]], [["b"]]]))
    assert outcome.error is None
    assert jev.max_in_flight == 2


# -- failures -----------------------------------------------------------------------------------


def test_first_failure_stops_dispatch_and_in_flight_requests_finish(jev: FakeJev) -> None:
    failing = attrs.evolve(Reply.status(500), delay=0.1)  # the other two have started by then
    jev.responder = by_group({1: failing}, default=Reply.slow(0.3))
    prepared = prepare([[["a", "b"]] for _ in range(5)])
    outcome = run(jev, prepared)

    assert outcome.error == c.REASON_JEV_ERROR
    assert len(jev.requests) == 3
    chunks = outcome.observation.chunks
    assert outcome.observation.status == c.OBSERVATION_INCOMPLETE
    assert [chunk.status for chunk in chunks] == [
        c.GROUP_COMPLETED,
        c.GROUP_FAILED,
        c.GROUP_COMPLETED,
        c.GROUP_NOT_STARTED,
        c.GROUP_NOT_STARTED,
    ]
    assert chunks[0].probabilities == {"a": 0.01, "b": 0.5}
    assert chunks[1].probabilities is None
    assert chunks[1].error == c.REASON_JEV_ERROR
    (failed,) = chunks[1].requests
    assert (failed.status, failed.model, failed.usage) == (c.GROUP_FAILED, None, None)
    assert failed.duration_ms is not None
    assert failed.scores is None
    for chunk in chunks[3:]:
        assert chunk.probabilities is None
        assert (chunk.model, chunk.usage, chunk.duration_ms) == (None, None, None)
        assert chunk.error == c.REASON_JEV_ERROR
        (never,) = chunk.requests
        assert never.status == c.GROUP_NOT_STARTED
        assert (never.model, never.usage, never.duration_ms) == (None, None, None)
        assert never.error == c.REASON_JEV_ERROR
    assert outcome.usage == USAGE + USAGE
    assert outcome.model_returned == MODEL


def test_group_keeps_answers_of_its_completed_batch(jev: FakeJev) -> None:
    def respond(request: RecordedRequest) -> Reply:
        return Reply.status(503) if request.task_ids == ("c",) else Reply.ok()

    jev.responder = respond
    outcome = run(jev, prepare([[["a", "b"], ["c"]]]))
    (chunk,) = outcome.observation.chunks
    assert chunk.status == c.GROUP_FAILED
    assert chunk.probabilities == {"a": 0.01, "b": 0.5}
    assert chunk.error == c.REASON_JEV_ERROR
    assert chunk.usage == USAGE
    assert chunk.model == MODEL
    assert [request.status for request in chunk.requests] == [c.GROUP_COMPLETED, c.GROUP_FAILED]


@pytest.mark.parametrize(
    "reply",
    [
        Reply.status(401),
        Reply.status(403),
        Reply.status(429, {"Retry-After": "0"}),
        Reply.status(500),
        Reply.status(503),
        Reply.redirect("/v1/elsewhere"),
        Reply.reset_before_headers(),
        Reply.reset_after_headers(),
        Reply.raw(b"<html>busy</html>"),
        Reply.raw(b'{"model":"jev-1.13.0","answers":{"a":{"type":"noul","noul":NaN}}}'),
        Reply.raw(b'{"model":"jev-1.13.0","model":"jev-1.13.0"}'),
        Reply.raw(b'{"model":"jev-1.13.0","answers":"\xc3\x28"}'),
    ],
    ids=[
        "401",
        "403",
        "429",
        "500",
        "503",
        "302",
        "reset-before-headers",
        "reset-after-headers",
        "not-json",
        "nan",
        "duplicate-keys",
        "invalid-utf8",
    ],
)
def test_transport_status_and_parse_failures_are_jev_error(jev: FakeJev, reply: Reply) -> None:
    delayed = attrs.evolve(reply, delay=0.1)  # the other two have started by then

    def respond(request: RecordedRequest) -> Reply:
        return delayed if request.task_ids == ("a",) else Reply.slow(0.3)

    jev.responder = respond
    outcome = run(jev, prepare([[["a"], ["b"], ["c"], ["a", "b"]]]))
    assert outcome.error == c.REASON_JEV_ERROR
    first, second, third, fourth = outcome.observation.chunks[0].requests
    assert (first.status, first.error, first.model, first.usage) == (
        c.GROUP_FAILED,
        c.REASON_JEV_ERROR,
        None,
        None,
    )
    # the requests already in flight finish; nothing new starts; nothing is retried
    assert (second.status, third.status) == (c.GROUP_COMPLETED, c.GROUP_COMPLETED)
    assert (fourth.status, fourth.error) == (c.GROUP_NOT_STARTED, c.REASON_JEV_ERROR)
    assert sorted(seen.task_ids for seen in jev.requests) == [("a",), ("b",), ("c",)]


def _set_answer(task: str, answer: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        document["answers"][task] = answer

    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        del document[key]

    return change


@pytest.mark.parametrize(
    ("reply", "model", "usage"),
    [
        (Reply.mutated(_set_answer("a", {"type": "noul", "noul": True})), MODEL, USAGE),
        (Reply.mutated(_set_answer("a", {"type": "noul", "noul": "0.1"})), MODEL, USAGE),
        (Reply.mutated(_set_answer("a", {"type": "noul", "noul": 1.5})), MODEL, USAGE),
        (Reply.mutated(_set_answer("a", {"type": "yes", "noul": 0.1})), MODEL, USAGE),
        (Reply.mutated(_set_answer("zz", {"type": "noul", "noul": 0.1})), MODEL, USAGE),
        (Reply.mutated(lambda d: {**d, "answers": {"b": d["answers"]["b"]}}), MODEL, USAGE),
        (Reply.mutated(_drop("answers")), MODEL, USAGE),
        (Reply.mutated(lambda d: [d]), None, None),
        (Reply.ok(model="jev-1.13.1"), "jev-1.13.1", USAGE),
        (Reply.ok(model="jev-latest"), None, USAGE),
        (Reply.ok(usage=None), MODEL, None),
        (Reply.ok(usage={"input_tokens": -1, "output_tokens": 2}), MODEL, None),
        (Reply.ok(usage={"input_tokens": 1.5, "output_tokens": 2}), MODEL, None),
        (Reply.oversized(), None, None),
        (Reply.oversized(declare_length=False), None, None),
    ],
    ids=[
        "bool-score",
        "string-score",
        "score-above-one",
        "wrong-type",
        "extra-answer",
        "missing-answer",
        "no-answers",
        "array",
        "other-model",
        "alias-returned",
        "no-usage",
        "negative-usage",
        "fractional-usage",
        "oversized",
        "oversized-chunked",
    ],
)
def test_invalid_responses_keep_their_model_and_usage(
    jev: FakeJev, reply: Reply, model: str | None, usage: Usage | None
) -> None:
    jev.script(reply)
    outcome = run(jev, prepare([[["a", "b"]]]))
    assert outcome.error == c.REASON_INVALID_RESPONSE
    (chunk,) = outcome.observation.chunks
    (request,) = chunk.requests
    assert (request.status, request.error) == (c.GROUP_FAILED, c.REASON_INVALID_RESPONSE)
    assert (request.model, request.usage, request.scores) == (model, usage, None)
    assert (chunk.status, chunk.probabilities) == (c.GROUP_FAILED, None)
    assert (chunk.model, chunk.usage) == (model, usage)
    assert outcome.model_returned == model
    assert outcome.usage == usage


def test_disagreeing_models_leave_model_returned_null(jev: FakeJev) -> None:
    jev.responder = by_group({1: Reply.ok(model="jev-1.13.1", delay=0.1)})
    outcome = run(jev, prepare([[["a"]], [["a"]]]))
    chunks = outcome.observation.chunks
    assert (chunks[0].model, chunks[1].model) == (MODEL, "jev-1.13.1")
    assert outcome.model_returned is None
    assert outcome.usage == USAGE + USAGE
    assert outcome.error == c.REASON_INVALID_RESPONSE


# -- deadlines ----------------------------------------------------------------------------------
#
# A deadline is shown to hold by what it means: every request is sent with the phase's deadline
# (or what is left of it), requests still out at the deadline are recorded as timed out and the
# server sees their connections close. Wall-clock readings only add lower bounds and a slack
# that a loaded machine cannot exhaust (support/deadlines.py).


@attrs.define
class Bounds:
    """The clock readings of one phase and the deadline each request was sent with."""

    readings: list[float] = attrs.field(factory=list)
    sent: list[float] = attrs.field(factory=list)
    entered: dict[bytes, float] = attrs.field(factory=dict)  # by request body

    def clock(self) -> float:
        now = time.monotonic()
        self.readings.append(now)
        return now

    def send(
        self, endpoint: str, api_key: str, body: bytes, *, deadline: float, clock: Any
    ) -> bytes:
        self.entered[body] = time.monotonic()
        self.sent.append(deadline)
        return jev_client.send(endpoint, api_key, body, deadline=deadline, clock=clock)

    def phase_deadline(self, timeout_ms: int) -> float:
        # run_observation reads its clock first of all, to set the phase's deadline.
        return self.readings[0] + timeout_ms / 1000

    def assert_sent_with_the_phase_deadline(self, timeout_ms: int, count: int) -> None:
        deadline = self.phase_deadline(timeout_ms)
        assert len(self.sent) == count
        for sent in self.sent:  # what is left of it, in whole milliseconds
            assert deadline - 0.001 <= sent <= deadline

    def assert_given_up_at_the_deadline(
        self,
        timeout_ms: int,
        planned: Sequence[PlannedRequest],
        records: Sequence[RequestRecord],
    ) -> None:
        """Each request lasted until the phase's deadline, however late its worker started it
        on a loaded machine (it was dispatched before it entered ``send``), and no longer than
        the slack past it."""
        deadline = self.phase_deadline(timeout_ms)
        for request, record in zip(planned, records, strict=True):
            assert record.duration_ms is not None
            ended = self.entered[request.body] + record.duration_ms / 1000
            assert ended >= deadline - EARLY_S
            assert record.duration_ms < timeout_ms + LOAD_SLACK_MS


@pytest.mark.parametrize(
    "reply",
    [Reply.slow(IGNORED_BOUND_S), Reply.drip(0.02), Reply.header_drip(0.02)],
    ids=["slow", "drip", "header-drip"],
)
def test_deadline_with_requests_in_flight(jev: FakeJev, reply: Reply) -> None:
    jev.responder = lambda request: reply
    timeout_ms = 400
    bounds = Bounds()
    prepared = prepare([[["a"]] for _ in range(5)])
    started = time.monotonic()
    outcome = run(
        jev,
        prepared,
        timeout_ms=timeout_ms,
        clock=bounds.clock,
        send=bounds.send,
    )
    elapsed = time.monotonic() - started

    bounds.assert_sent_with_the_phase_deadline(timeout_ms, 3)
    assert jev.wait_abandoned(3, LOAD_SLACK_S), "requests were left running past the deadline"
    assert_ended_at_bound(elapsed, timeout_ms / 1000)
    assert timeout_ms - 50 <= outcome.duration_ms < timeout_ms + LOAD_SLACK_MS
    assert outcome.error == c.REASON_JEV_TIMEOUT
    assert outcome.observation.status == c.OBSERVATION_INCOMPLETE
    requests = outcome.observation.requests
    statuses = [request.status for request in requests]
    assert statuses == [c.GROUP_FAILED] * 3 + [c.GROUP_NOT_STARTED] * 2
    for request in requests:
        assert request.error == c.REASON_JEV_TIMEOUT
        assert (request.model, request.usage) == (None, None)
    bounds.assert_given_up_at_the_deadline(timeout_ms, prepared.requests[:3], requests[:3])
    assert len(jev.requests) == 3


def test_each_request_is_bounded_by_what_is_left(jev: FakeJev) -> None:
    # The first three answer quickly, the fourth starts late: it is sent with what is left of
    # the phase's deadline, not with a whole bound of its own, and is given up at the deadline.
    def respond(request: RecordedRequest) -> Reply:
        return Reply.slow(IGNORED_BOUND_S) if request.group_index == 3 else Reply.slow(0.2)

    jev.responder = respond
    timeout_ms = 1500  # leaves the three quick answers room on a loaded machine
    bounds = Bounds()
    prepared = prepare([[["a"]] for _ in range(4)])
    started = time.monotonic()
    outcome = run(
        jev,
        prepared,
        timeout_ms=timeout_ms,
        clock=bounds.clock,
        send=bounds.send,
    )
    assert_ended_at_bound(time.monotonic() - started, timeout_ms / 1000)
    statuses = [request.status for request in outcome.observation.requests]
    assert statuses == [c.GROUP_COMPLETED] * 3 + [c.GROUP_FAILED]
    bounds.assert_sent_with_the_phase_deadline(timeout_ms, 4)
    last = outcome.observation.requests[3]
    assert last.error == c.REASON_JEV_TIMEOUT
    # Sent with what was left (above), it ended at the phase's deadline, not a bound later.
    bounds.assert_given_up_at_the_deadline(timeout_ms, prepared.requests[3:], [last])
    assert jev.wait_abandoned(1, LOAD_SLACK_S)
    assert outcome.error == c.REASON_JEV_TIMEOUT


class _SteppedClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now

    def set(self, value: float) -> None:
        with self.lock:
            self.now = value


def _answer(task_ids: Sequence[str]) -> bytes:
    answers = {task: {"type": "noul", "noul": 0.5} for task in task_ids}
    document = {"model": MODEL, "answers": answers, "usage": USAGE.to_json()}
    return json.dumps(document).encode()


def test_no_time_left_at_dispatch_records_jev_timeout_and_stops() -> None:
    clock = _SteppedClock()
    entered: list[threading.Event] = [threading.Event() for _ in range(3)]
    release = [threading.Event() for _ in range(3)]
    bounds: list[float] = []
    order: list[bytes] = []
    lock = threading.Lock()

    def send(endpoint: str, api_key: str, body: bytes, *, deadline: float, clock: Any) -> bytes:
        with lock:
            position = len(order)
            order.append(body)
            bounds.append(deadline)
        entered[position].set()
        assert release[position].wait(10)
        return _answer(json.loads(body)["questions"])

    prepared = prepare([[["a"]], [["b"]], [["c"]], [["a"]]])
    result: list[ObservationOutcome] = []
    worker = threading.Thread(
        target=lambda: result.append(
            run_observation(
                prepared,
                endpoint="http://127.0.0.1:9/v1/systemone",
                api_key=KEY,
                expected_model=MODEL,
                timeout_ms=1000,
                clock=clock,
                send=send,
            )
        )
    )
    worker.start()
    for event in entered:
        assert event.wait(10)
    assert bounds == [1001.0] * 3
    clock.set(1000.9995)  # before every bound, but less than one whole millisecond left
    for event in release:
        event.set()
    worker.join(10)
    (outcome,) = result

    assert len(order) == 3
    assert outcome.error == c.REASON_JEV_TIMEOUT
    statuses = [request.status for request in outcome.observation.requests]
    assert statuses == [c.GROUP_COMPLETED] * 3 + [c.GROUP_NOT_STARTED]
    last_chunk = outcome.observation.chunks[3]
    assert (last_chunk.status, last_chunk.error) == (c.GROUP_NOT_STARTED, c.REASON_JEV_TIMEOUT)
    assert outcome.observation.chunks[0].error is None
    assert outcome.usage == Usage(3600, 21)


def test_request_bound_is_capped_at_ten_seconds() -> None:
    bounds: list[float] = []

    def send(endpoint: str, api_key: str, body: bytes, *, deadline: float, clock: Any) -> bytes:
        bounds.append(deadline - clock())
        return _answer(json.loads(body)["questions"])

    outcome = run_observation(
        prepare([[["a"]]]),
        endpoint="http://127.0.0.1:9/v1/systemone",
        api_key=KEY,
        expected_model=MODEL,
        timeout_ms=60000,
        send=send,
    )
    assert outcome.error is None
    (bound,) = bounds
    assert 9.9 < bound <= c.REQUEST_BOUND_MS / 1000


def test_injected_send_failure_codes_are_recorded() -> None:
    def send(endpoint: str, api_key: str, body: bytes, *, deadline: float, clock: Any) -> bytes:
        raise RequestFailed(c.REASON_INVALID_RESPONSE)

    outcome = run_observation(
        prepare([[["a"]]]),
        endpoint="http://127.0.0.1:9/v1/systemone",
        api_key=KEY,
        expected_model=MODEL,
        timeout_ms=1000,
        send=send,
    )
    assert outcome.error == c.REASON_INVALID_RESPONSE
    assert outcome.usage is None
    assert outcome.model_returned is None


def test_programming_error_in_the_client_is_internal_error() -> None:
    def send(endpoint: str, api_key: str, body: bytes, *, deadline: float, clock: Any) -> bytes:
        raise RuntimeError("bug")

    with pytest.raises(PlanningFailure) as caught:
        run_observation(
            prepare([[["a"]], [["b"]]]),
            endpoint="http://127.0.0.1:9/v1/systemone",
            api_key=KEY,
            expected_model=MODEL,
            timeout_ms=1000,
            send=send,
        )
    assert caught.value.code == c.FAILURE_INTERNAL_ERROR


def test_https_observation(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeJev(tls=True, scores=0.2) as server:
        assert server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        outcome = run(server, prepare([[["a"]], [["b"]]]))
    assert outcome.error is None
    assert [chunk.probabilities for chunk in outcome.observation.chunks] == [
        {"a": 0.2},
        {"b": 0.2},
    ]


_EXIT_SCRIPT = """
import sys, threading
from jev_select.core.models import DiffGroup, PlannedRequest, PreparedGroup, PreparedObservation
from jev_select.edges.evaluate import run_observation

def never_returns(*args, **kwargs):
    threading.Event().wait()

group = PreparedGroup(DiffGroup(0, 0, 0, "", "", ()), "0" * 64, "0" * 64)
requests = tuple(PlannedRequest(0, ("a",), b"{}") for _ in range(3))
outcome = run_observation(
    PreparedObservation((group,), requests),
    endpoint="http://127.0.0.1:9/v1/systemone", api_key="k", expected_model="jev-1.13.0",
    timeout_ms=300, send=never_returns,
)
print(outcome.error, [request.status for request in outcome.observation.requests], flush=True)
"""


def test_abandoned_requests_never_delay_process_exit() -> None:
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(  # three workers stay blocked forever; exit must not wait
        [sys.executable, "-c", _EXIT_SCRIPT],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=root,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.split()[0] == c.REASON_JEV_TIMEOUT
    assert completed.stdout.count(repr(c.GROUP_FAILED)) == 3


# -- the deadline against servers that stall below HTTP ----------------------------------------


@contextlib.contextmanager
def silent_listener(*, receive_buffer: int | None = None) -> Iterator[int]:
    """A TCP port that accepts connections and then neither reads nor writes."""
    with socket.socket() as listener:
        if receive_buffer is not None:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        accepted: list[socket.socket] = []

        def accept_all() -> None:
            with contextlib.suppress(OSError):
                while True:
                    accepted.append(listener.accept()[0])

        acceptor = threading.Thread(target=accept_all, daemon=True)
        acceptor.start()
        try:
            yield listener.getsockname()[1]
        finally:
            # Closing alone does not wake a thread blocked in accept(); left blocked, it could
            # take connections meant for a later listener that reuses the descriptor.
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            acceptor.join(timeout=5)
            for connection in accepted:
                connection.close()


def run_against(endpoint: str, prepared: PreparedObservation, timeout_ms: int) -> Any:
    bounds = Bounds()
    started = time.monotonic()
    outcome = run_observation(
        prepared,
        endpoint=endpoint,
        api_key=KEY,
        expected_model=MODEL,
        timeout_ms=timeout_ms,
        clock=bounds.clock,
        send=bounds.send,
    )
    elapsed = time.monotonic() - started
    bounds.assert_sent_with_the_phase_deadline(timeout_ms, len(bounds.sent))
    return outcome, elapsed, bounds


def assert_timed_out_in_flight(
    outcome: ObservationOutcome,
    timeout_ms: int,
    started: int,
    bounds: Bounds,
    prepared: PreparedObservation,
) -> None:
    assert outcome.error == c.REASON_JEV_TIMEOUT
    assert timeout_ms - 50 <= outcome.duration_ms < timeout_ms + LOAD_SLACK_MS
    requests = outcome.observation.requests
    assert [request.status for request in requests[:started]] == [c.GROUP_FAILED] * started
    assert all(request.status == c.GROUP_NOT_STARTED for request in requests[started:])
    for request in requests:
        assert (request.error, request.model, request.usage) == (c.REASON_JEV_TIMEOUT, None, None)
    bounds.assert_given_up_at_the_deadline(
        timeout_ms, prepared.requests[:started], requests[:started]
    )


def test_deadline_holds_against_a_tls_handshake_that_never_completes() -> None:
    prepared = prepare([[["a"]]] * 4)
    with silent_listener() as port:
        outcome, elapsed, bounds = run_against(
            f"https://127.0.0.1:{port}/v1/systemone", prepared, 400
        )
    assert_ended_at_bound(elapsed, 0.4)
    # Up to three start at once; on a loaded machine a worker may start only after the deadline.
    assert 1 <= len(bounds.sent) <= 3
    assert_timed_out_in_flight(outcome, 400, len(bounds.sent), bounds, prepared)


def test_deadline_holds_against_a_server_that_never_reads_the_request() -> None:
    prepared = prepare([[["a"]], [["b"]]])
    huge = attrs.evolve(prepared.requests[0], body=b"x" * (64 * 1_048_576))
    prepared = attrs.evolve(prepared, requests=(huge, prepared.requests[1]))
    with silent_listener(receive_buffer=4096) as port:
        outcome, elapsed, bounds = run_against(
            f"http://127.0.0.1:{port}/v1/systemone", prepared, 400
        )
    assert_ended_at_bound(elapsed, 0.4)
    # The second worker may start only after the deadline on a loaded machine.
    assert 1 <= len(bounds.sent) <= 2
    assert_timed_out_in_flight(outcome, 400, len(bounds.sent), bounds, prepared)


def test_deadline_holds_when_the_socket_hook_is_unavailable(
    jev: FakeJev, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Should urllib3 internals change so no socket reaches the watchdog, a header drip keeps
    # the exchange itself alive; the coordinator must still give up on it at its bound.
    monkeypatch.setattr(httpio, "_register_socket", lambda sock: sock)
    jev.responder = lambda request: Reply.header_drip(0.02)
    bounds = Bounds()
    prepared = prepare([[["a"]]] * 4)
    started = time.monotonic()
    outcome = run(jev, prepared, timeout_ms=400, clock=bounds.clock, send=bounds.send)
    # Nothing ends these exchanges (the drip never stops): only the coordinator's own bound can
    # have ended the phase, and it did so at the deadline.
    assert_ended_at_bound(time.monotonic() - started, 0.4)
    bounds.assert_sent_with_the_phase_deadline(400, 3)
    assert_timed_out_in_flight(outcome, 400, 3, bounds, prepared)


@pytest.mark.parametrize("stall", [False, True], ids=["tunnel-to-drip", "proxy-silent"])
def test_deadline_holds_through_an_https_proxy(
    monkeypatch: pytest.MonkeyPatch, stall: bool
) -> None:
    for name in ("NO_PROXY", "no_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeJev(tls=True) as server, ConnectProxy(stall=stall) as proxy:
        assert server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        server.responder = lambda request: Reply.header_drip(0.02)
        bounds = Bounds()
        prepared = prepare([[["a"]]] * 4)
        started = time.monotonic()
        outcome = run(server, prepared, timeout_ms=400, clock=bounds.clock, send=bounds.send)
        assert_ended_at_bound(time.monotonic() - started, 0.4)
        bounds.assert_sent_with_the_phase_deadline(400, 3)
        if not stall:  # the tunnels were closed, so the server saw its clients go
            assert server.wait_abandoned(3, LOAD_SLACK_S)
        assert len(proxy.targets) == 3
    assert_timed_out_in_flight(outcome, 400, 3, bounds, prepared)


def test_https_proxy_carries_a_whole_observation(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeJev(tls=True, scores=0.25) as server, ConnectProxy() as proxy:
        assert server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        outcome = run(server, prepare([[["a"]], [["b"]]]))
        assert proxy.targets == [f"127.0.0.1:{server.port}"] * 2
    assert outcome.error is None
    assert outcome.observation.status == c.OBSERVATION_COMPLETE


# -- records ------------------------------------------------------------------------------------


def test_group_error_follows_batch_order_and_outcome_error_the_first_failure(
    jev: FakeJev,
) -> None:
    # batch 0 fails later (invalid), batch 1 fails first (503): the group reports batch 0's
    # error, the outcome the failure that happened first.
    late_invalid = attrs.evolve(Reply.ok(model="jev-1.13.1"), delay=0.3)

    def respond(request: RecordedRequest) -> Reply:
        return late_invalid if request.task_ids == ("a",) else Reply.status(503)

    jev.responder = respond
    outcome = run(jev, prepare([[["a"], ["b"]]]))
    (chunk,) = outcome.observation.chunks
    assert [request.error for request in chunk.requests] == [
        c.REASON_INVALID_RESPONSE,
        c.REASON_JEV_ERROR,
    ]
    assert chunk.error == c.REASON_INVALID_RESPONSE
    assert outcome.error == c.REASON_JEV_ERROR
    assert (chunk.status, chunk.probabilities) == (c.GROUP_FAILED, None)
    assert chunk.model == "jev-1.13.1"
    assert outcome.model_returned == "jev-1.13.1"
    assert chunk.usage == USAGE
    assert outcome.usage == USAGE


def test_group_model_is_null_when_its_batches_disagree(jev: FakeJev) -> None:
    last_request_arrived = threading.Event()

    def respond(request: RecordedRequest) -> Reply:
        if request.task_ids == ("c",):
            last_request_arrived.set()
        if request.task_ids == ("b",):
            # The first failure stops further dispatch: answer only once the second group's
            # request is under way, so that it completes whatever the threads' timing.
            last_request_arrived.wait(timeout=10)
            return Reply.ok(model="jev-1.13.1")
        return Reply.ok()

    jev.responder = respond
    outcome = run(jev, prepare([[["a"], ["b"]], [["c"]]]))
    first, second = outcome.observation.chunks
    assert (first.status, first.model, first.probabilities) == (
        c.GROUP_FAILED,
        None,
        {"a": 0.01},
    )
    assert (second.status, second.model) == (c.GROUP_COMPLETED, MODEL)
    assert first.usage == USAGE + USAGE
    assert outcome.model_returned is None
    assert outcome.usage is not None


_STUCK_EXIT_SCRIPT = """
import sys
from jev_select.edges import httpio
from jev_select.core.models import DiffGroup, PlannedRequest, PreparedGroup, PreparedObservation
from jev_select.edges.evaluate import run_observation

httpio._register_socket = lambda sock: sock  # nothing will ever interrupt the stuck reads
group = PreparedGroup(DiffGroup(0, 0, 0, "", "", ()), "0" * 64, "0" * 64)
requests = tuple(PlannedRequest(0, ("a",), b"{}") for _ in range(3))
outcome = run_observation(
    PreparedObservation((group,), requests),
    endpoint=sys.argv[1], api_key="k", expected_model="jev-1.13.0", timeout_ms=300,
)
print(outcome.error, flush=True)
"""


def test_workers_stuck_on_real_sockets_never_delay_process_exit(jev: FakeJev) -> None:
    jev.responder = lambda request: Reply.header_drip(0.02)
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [sys.executable, "-c", _STUCK_EXIT_SCRIPT, jev.endpoint],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=root,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.split() == [c.REASON_JEV_TIMEOUT]
    assert completed.stderr == ""
    assert len(jev.requests) == 3
