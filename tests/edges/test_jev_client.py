"""System One client: response validation (docs/reference.md, "Response validation",
"Model identity and usage") and the exchange (docs/reference.md, "Transport", "Error mapping")."""

from __future__ import annotations

import gzip
import json
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.deadlines import IGNORED_BOUND_S, LOAD_SLACK_S, assert_ended_at_bound, no_hang
from support.fakejev import FakeJev, Reply

from jev_select import contracts as c
from jev_select import version
from jev_select.core.models import Usage
from jev_select.edges import jev_client
from jev_select.edges.jev_client import RequestFailed, ValidatedResponse, send, validate_response

MODEL = c.DEFAULT_MODEL
IDS = ("lint", "unit")
KEY = "sk-test-SENTINEL-0123456789"


def document(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": MODEL,
        "answers": {
            "lint": {"type": "noul", "noul": 0.25},
            "unit": {"type": "noul", "noul": 0.75},
        },
        "usage": {"input_tokens": 100, "output_tokens": 3},
    }
    base.update(changes)
    return base


def encode(value: Any) -> bytes:
    return json.dumps(value).encode()


def check(value: Any, ids: tuple[str, ...] = IDS) -> ValidatedResponse:
    return validate_response(encode(value), ids, MODEL)


def answers_with(unit: Any) -> dict[str, Any]:
    return {"lint": {"type": "noul", "noul": 0.0}, "unit": unit}


# -- validation: accepted --------------------------------------------------------------------


def test_valid_response_yields_scores_model_and_usage() -> None:
    result = check(document())
    assert result == ValidatedResponse({"lint": 0.25, "unit": 0.75}, MODEL, Usage(100, 3), None)


def test_scores_are_keyed_in_code_unit_order_whatever_the_asked_order() -> None:
    ids = ("b", "B", "a")
    answers = {task: {"type": "noul", "noul": 0.5} for task in ("a", "b", "B")}
    result = validate_response(encode(document(answers=answers)), ids, MODEL)
    assert result.scores is not None
    assert list(result.scores) == ["B", "a", "b"]


@pytest.mark.parametrize(
    ("raw_score", "expected"),
    [(0, 0.0), (1, 1.0), (0.0, 0.0), (1.0, 1.0), (1e-300, 1e-300), (0.05, 0.05)],
)
def test_score_edges_are_accepted(raw_score: float, expected: float) -> None:
    result = check(document(answers=answers_with({"type": "noul", "noul": raw_score})))
    assert result.error is None
    assert result.scores == {"lint": 0.0, "unit": expected}
    assert isinstance(result.scores["unit"], float)


def test_extra_answer_fields_are_ignored() -> None:
    unit = {"type": "noul", "noul": 0.5, "rationale": "x"}
    result = check(document(answers=answers_with(unit), extra={"a": 1}))
    assert result.error is None


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"input_tokens": 5.0, "output_tokens": 0}, Usage(5, 0)),
        ({"input_tokens": 0, "output_tokens": 0}, Usage(0, 0)),
        ({"input_tokens": c.MAX_SAFE_INTEGER, "output_tokens": 1}, Usage(c.MAX_SAFE_INTEGER, 1)),
        ({"input_tokens": 1e3, "output_tokens": 2, "cached": True}, Usage(1000, 2)),
    ],
)
def test_integral_usage_values_are_accepted(usage: dict[str, Any], expected: Usage) -> None:
    result = check(document(usage=usage))
    assert result.error is None
    assert result.usage == expected
    assert isinstance(result.usage.input_tokens, int)


def test_empty_question_set_with_empty_answers_is_valid() -> None:
    result = check(document(answers={}), ids=())
    assert result == ValidatedResponse({}, MODEL, Usage(100, 3), None)


# -- validation: jev-error -------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b'{"model": "jev-1.13.0",',
        b'{"model": "jev-1.13.0", "answers": {}, "usage": NaN}',
        b'{"answers": {"unit": {"type": "noul", "noul": Infinity}}}',
        b'{"answers": {"unit": {"type": "noul", "noul": -Infinity}}}',
        b'{"model": "jev-1.13.0", "model": "jev-1.13.0"}',
        b'{"answers": {"unit": {"noul": 0.1, "noul": 0.2}}}',
        b'{"model": "jev-1.13.0", "answers": {"unit": "\xff"}}',
        b"\xef\xbb\xbf{}",
        b"{}{}",
    ],
    ids=[
        "empty",
        "text",
        "truncated",
        "nan",
        "infinity",
        "minus-infinity",
        "duplicate-top",
        "duplicate-nested",
        "invalid-utf8",
        "bom",
        "two-documents",
    ],
)
def test_body_that_is_not_strict_json_is_jev_error(body: bytes) -> None:
    assert validate_response(body, IDS, MODEL) == ValidatedResponse(
        None, None, None, c.REASON_JEV_ERROR
    )


# -- validation: invalid-response -------------------------------------------------------------


@pytest.mark.parametrize("value", [[], "jev-1.13.0", None, 1, True], ids=repr)
def test_body_that_is_not_an_object_is_invalid(value: Any) -> None:
    assert check(value) == ValidatedResponse(None, None, None, c.REASON_INVALID_RESPONSE)


@pytest.mark.parametrize(
    ("model", "recorded"),
    [
        ("jev-1.13.1", "jev-1.13.1"),
        ("jev-2.0.0", "jev-2.0.0"),
        ("jev-latest", None),
        ("jev-1.13.0\n", None),
        (" jev-1.13.0", None),
        ("JEV-1.13.0", None),
        ("jev-1.13", None),
        ("jev-１.13.0", None),
        (None, None),
        (1130, None),
        (["jev-1.13.0"], None),
    ],
)
def test_model_other_than_the_canonical_one_is_invalid_but_recorded_when_pattern_valid(
    model: Any, recorded: str | None
) -> None:
    result = check(document(model=model))
    assert result == ValidatedResponse(None, recorded, Usage(100, 3), c.REASON_INVALID_RESPONSE)


def test_missing_model_is_invalid() -> None:
    value = document()
    del value["model"]
    assert check(value) == ValidatedResponse(None, None, Usage(100, 3), c.REASON_INVALID_RESPONSE)


@pytest.mark.parametrize(
    "usage",
    [
        None,
        {},
        [],
        "100",
        {"input_tokens": 100},
        {"output_tokens": 3},
        {"input_tokens": 5.5, "output_tokens": 3},
        {"input_tokens": -1, "output_tokens": 3},
        {"input_tokens": 100, "output_tokens": -0.5},
        {"input_tokens": True, "output_tokens": 3},
        {"input_tokens": 100, "output_tokens": False},
        {"input_tokens": "100", "output_tokens": 3},
        {"input_tokens": None, "output_tokens": 3},
        {"input_tokens": c.MAX_SAFE_INTEGER + 1, "output_tokens": 3},
        {"input_tokens": 1e300, "output_tokens": 3},
        {"input_tokens": 10**400, "output_tokens": 3},
    ],
    ids=repr,
)
def test_usage_that_is_missing_or_not_integral_is_invalid_but_model_is_kept(usage: Any) -> None:
    result = check(document(usage=usage))
    assert result == ValidatedResponse(None, MODEL, None, c.REASON_INVALID_RESPONSE)


def test_absent_usage_is_invalid() -> None:
    value = document()
    del value["usage"]
    assert check(value) == ValidatedResponse(None, MODEL, None, c.REASON_INVALID_RESPONSE)


@pytest.mark.parametrize(
    "answers",
    [
        None,
        [],
        "answers",
        {"lint": {"type": "noul", "noul": 0.1}},
        {
            "lint": {"type": "noul", "noul": 0.1},
            "unit": {"type": "noul", "noul": 0.1},
            "e2e": {"type": "noul", "noul": 0.1},
        },
        {"lint": {"type": "noul", "noul": 0.1}, "Unit": {"type": "noul", "noul": 0.1}},
        {},
    ],
    ids=["null", "array", "string", "missing", "extra", "case-differs", "empty"],
)
def test_answers_not_matching_the_asked_ids_are_invalid(answers: Any) -> None:
    result = check(document(answers=answers))
    assert result == ValidatedResponse(None, MODEL, Usage(100, 3), c.REASON_INVALID_RESPONSE)


def test_absent_answers_are_invalid() -> None:
    value = document()
    del value["answers"]
    assert check(value).error == c.REASON_INVALID_RESPONSE


@pytest.mark.parametrize(
    "unit",
    [
        None,
        0.5,
        [0.5],
        "0.5",
        {"noul": 0.5},
        {"type": "bool", "noul": 0.5},
        {"type": "NOUL", "noul": 0.5},
        {"type": "noul"},
        {"type": "noul", "noul": None},
        {"type": "noul", "noul": True},
        {"type": "noul", "noul": False},
        {"type": "noul", "noul": "0.5"},
        {"type": "noul", "noul": -0.0001},
        {"type": "noul", "noul": 1.0000001},
        {"type": "noul", "noul": 2},
        {"type": "noul", "noul": -1},
        {"type": "noul", "noul": 10**400},
        {"type": "noul", "noul": 1e308},
        {"type": "noul", "noul": {"value": 0.5}},
    ],
    ids=repr,
)
def test_malformed_answer_is_invalid(unit: Any) -> None:
    result = check(document(answers=answers_with(unit)))
    assert result == ValidatedResponse(None, MODEL, Usage(100, 3), c.REASON_INVALID_RESPONSE)


def test_one_bad_answer_discards_every_score_of_the_response() -> None:
    answers = {"lint": {"type": "noul", "noul": True}, "unit": {"type": "noul", "noul": 0.5}}
    result = check(document(answers=answers))
    assert result.scores is None
    assert result.error == c.REASON_INVALID_RESPONSE


# -- the exchange ------------------------------------------------------------------------------


@pytest.fixture
def jev(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJev]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeJev(scores={"lint": 0.125, "unit": 0.5}) as server:
        yield server


def request_body(ids: tuple[str, ...] = IDS) -> bytes:
    return json.dumps(
        {"model": MODEL, "questions": {task: {"type": "noul"} for task in ids}},
        separators=(",", ":"),
    ).encode()


def post(server: FakeJev, *, bound: float = LOAD_SLACK_S, body: bytes | None = None) -> bytes:
    return send(
        server.endpoint,
        KEY,
        request_body() if body is None else body,
        deadline=time.monotonic() + bound,
    )


def failure_code(server: FakeJev, *, bound: float = LOAD_SLACK_S) -> str:
    with pytest.raises(RequestFailed) as caught:
        post(server, bound=bound)
    return caught.value.code


def test_send_returns_the_body_and_validates(jev: FakeJev) -> None:
    body = post(jev)
    result = validate_response(body, IDS, MODEL)
    assert result == ValidatedResponse({"lint": 0.125, "unit": 0.5}, MODEL, Usage(1200, 7), None)


def test_send_posts_the_exact_body_with_only_the_specified_headers(jev: FakeJev) -> None:
    body = request_body()
    post(jev, body=body)
    (seen,) = jev.requests
    assert seen.method == "POST"
    assert seen.path == c.SYSTEM_ONE_PATH
    assert seen.body == body
    assert seen.header("Authorization") == f"Bearer {KEY}"
    assert seen.header("Content-Type") == "application/json"
    assert seen.header("Accept") == "application/json"
    assert seen.header("User-Agent") == version.USER_AGENT
    assert seen.header("User-Agent") == f"jev-select/{version.__version__}"
    # Host and Content-Length are inherent to HTTP/1.1; http.client would add
    # "Accept-Encoding: identity" itself, and saying it keeps every body uncompressed on the wire.
    assert seen.header("Accept-Encoding") == "identity"
    assert seen.header_names == {
        "host",
        "authorization",
        "content-type",
        "accept",
        "user-agent",
        "content-length",
        "accept-encoding",
    }
    assert len(seen.headers) == len(seen.header_names)  # no header sent twice


def test_netrc_and_provider_variables_never_replace_the_key(
    jev: FakeJev, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login netrc-user password NETRC-SECRET\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("TYPESAFE_API_KEY", "TYPESAFE-SECRET")
    monkeypatch.setenv("TYPESAFE_BASE_URL", "http://127.0.0.1:9/")
    post(jev)
    (seen,) = jev.requests
    assert seen.header("Authorization") == f"Bearer {KEY}"
    assert "NETRC-SECRET" not in repr(seen.headers)
    assert "TYPESAFE-SECRET" not in repr(seen.headers)


def test_no_provider_sdk_variable_is_named_in_the_package() -> None:
    package = Path(jev_client.__file__).parent.parent
    for source in package.rglob("*.py"):
        assert "TYPESAFE_" not in source.read_text(encoding="utf-8"), source.name


@pytest.mark.parametrize(
    "reply",
    [
        Reply.status(401),
        Reply.status(403),
        Reply.status(429, {"Retry-After": "0"}),
        Reply.status(500),
        Reply.status(503, {"Retry-After": "0"}),
        Reply.status(404),
        Reply.status(204, body=b""),
    ],
    ids=["401", "403", "429", "500", "503", "404", "204-empty"],
)
def test_error_statuses_are_jev_error_without_retry(jev: FakeJev, reply: Reply) -> None:
    jev.script(reply)
    if reply.status_code == 204:
        # a 2xx without a body reaches validation, which rejects it as non-JSON
        assert validate_response(post(jev), IDS, MODEL).error == c.REASON_JEV_ERROR
    else:
        assert failure_code(jev) == c.REASON_JEV_ERROR
    assert len(jev.requests) == 1


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_redirects_are_failures_and_never_followed(jev: FakeJev, code: int) -> None:
    jev.script(Reply.redirect(jev.base_url + "/elsewhere", code))
    assert failure_code(jev) == c.REASON_JEV_ERROR
    assert [seen.path for seen in jev.requests] == [c.SYSTEM_ONE_PATH]


def test_error_status_body_is_not_kept(jev: FakeJev) -> None:
    jev.script(Reply.status(500, body=b"PROVIDER-BODY-SENTINEL"))
    with pytest.raises(RequestFailed) as caught:
        post(jev)
    assert "SENTINEL" not in repr(caught.value)
    assert str(caught.value) == c.REASON_JEV_ERROR
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


@pytest.mark.parametrize(
    "reply", [Reply.reset_before_headers(), Reply.reset_after_headers()], ids=["before", "after"]
)
def test_connection_reset_is_jev_error(jev: FakeJev, reply: Reply) -> None:
    jev.script(reply)
    assert failure_code(jev) == c.REASON_JEV_ERROR


def test_refused_connection_is_jev_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(RequestFailed) as caught:
        send(
            f"http://127.0.0.1:{port}/v1/systemone",
            KEY,
            b"{}",
            deadline=time.monotonic() + LOAD_SLACK_S,
        )
    assert caught.value.code == c.REASON_JEV_ERROR


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_oversized_body_is_invalid_response(jev: FakeJev, declared: bool) -> None:
    jev.script(Reply.oversized(declare_length=declared))
    assert failure_code(jev) == c.REASON_INVALID_RESPONSE


def test_body_exactly_at_the_cap_is_read(jev: FakeJev) -> None:
    padding = b" " * (c.RESPONSE_BODY_CAP - 2)
    jev.script(Reply.raw(b"{" + padding + b"}"))
    assert len(post(jev)) == c.RESPONSE_BODY_CAP


@pytest.mark.parametrize(
    "reply",
    [Reply.slow(IGNORED_BOUND_S), Reply.drip(0.02), Reply.drip(5.0), Reply.header_drip(0.02)],
    ids=["slow-headers", "drip", "slow-drip", "header-drip"],
)
def test_bound_expiry_is_jev_timeout_and_holds(jev: FakeJev, reply: Reply) -> None:
    jev.script(reply)
    started = time.monotonic()
    with no_hang():
        assert failure_code(jev, bound=0.3) == c.REASON_JEV_TIMEOUT
    assert_ended_at_bound(time.monotonic() - started, 0.3)
    assert jev.wait_abandoned(1, LOAD_SLACK_S), "the exchange was left running"


def test_deadline_already_passed_sends_nothing(jev: FakeJev) -> None:
    assert failure_code(jev, bound=-0.001) == c.REASON_JEV_TIMEOUT
    assert jev.requests == []


def test_https_with_a_trusted_ca(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeJev(tls=True, scores=0.5) as server:
        assert server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        assert server.endpoint.startswith("https://127.0.0.1:")
        result = validate_response(post(server), IDS, MODEL)
        assert result.scores == {"lint": 0.5, "unit": 0.5}
        assert server.requests[0].header("Authorization") == f"Bearer {KEY}"


def test_https_with_an_untrusted_certificate_is_jev_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeJev(tls=True) as server:
        monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
        monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        assert failure_code(server) == c.REASON_JEV_ERROR


def test_a_compressed_answer_is_not_strict_json_and_is_capped_as_sent(jev: FakeJev) -> None:
    answer = json.dumps(document()).encode()
    jev.script(Reply.status(200, {"Content-Encoding": "gzip"}, body=gzip.compress(answer)))
    assert validate_response(post(jev), IDS, MODEL).error == c.REASON_JEV_ERROR
    incompressible = random.Random(7).randbytes(c.RESPONSE_BODY_CAP + 1)
    jev.script(Reply.status(200, {"Content-Encoding": "gzip"}, body=incompressible))
    assert failure_code(jev) == c.REASON_INVALID_RESPONSE


def test_unparseable_content_length_is_never_a_crash(jev: FakeJev) -> None:
    jev.script(Reply.status(200, {"Content-Length": "\u00b2"}, body=encode(document())))
    assert validate_response(post(jev), IDS, MODEL).error is None


@pytest.mark.parametrize("code", [301, 302, 307, 308, 503])
def test_error_status_with_an_endless_body_is_jev_error_at_once(jev: FakeJev, code: int) -> None:
    # Reading the endless body would end in a timeout at the bound instead.
    jev.script(Reply.drip(0.05, status=code, headers={"Location": jev.base_url + "/x"}))
    started = time.monotonic()
    assert failure_code(jev, bound=IGNORED_BOUND_S) == c.REASON_JEV_ERROR
    assert time.monotonic() - started < LOAD_SLACK_S
    assert jev.wait_abandoned(1, LOAD_SLACK_S), "the client kept the body coming"
