"""Recording files as typed documents: what is read back is what was written, byte for byte, and a
file we would not write answers nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jev_select import contracts as c
from jev_select.core.convert import DocumentError, structure
from jev_select.core.jsonutil import pretty_json, strict_loads
from jev_select.replay.recordings import Recording, RecordingFile

CAMPAIGN = Path(__file__).parent.parent / "evaluation" / "recordings"
COMMITTED = sorted(CAMPAIGN.glob("*/" + "[0-9a-f]" * 64 + ".json"))

# Text a recording can hold: any string that is valid UTF-8 (no lone surrogates).
BODIES = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)


@st.composite
def recordings(draw: st.DrawFn) -> Recording:
    request = draw(BODIES).encode("utf-8")
    answered = draw(st.booleans())
    return Recording(
        request_body=request,
        response_body=draw(BODIES).encode("utf-8") if answered else None,
        failure=None if answered else draw(st.sampled_from(c.REQUEST_ERRORS)),
        synthetic=draw(st.booleans()),
    )


def _written(recording: Recording) -> str:
    # As replay/run.py writes a recording's file.
    return pretty_json(recording.to_json()) + "\n"


@settings(max_examples=200, deadline=None)
@given(recordings())
def test_a_recording_round_trips_byte_for_byte(recording: Recording) -> None:
    text = _written(recording)
    read = Recording.from_json(strict_loads(text))
    assert read == recording
    assert _written(read) == text


def test_the_committed_campaign_reads_back_to_its_own_bytes() -> None:
    assert COMMITTED
    for path in COMMITTED:
        text = path.read_text(encoding="utf-8")
        recording = Recording.from_json(strict_loads(text))
        assert recording is not None, path.name
        assert path.name == recording.digest + ".json"
        assert _written(recording) == text, path.name


def test_the_file_keeps_its_keys_and_nulls() -> None:
    recording = Recording(b"{}", None, c.REASON_JEV_ERROR, synthetic=False)
    assert list(recording.to_json()) == [
        "synthetic",
        "request_sha256",
        "request_body",
        "response_body",
        "failure",
    ]
    assert recording.to_json()["response_body"] is None
    assert recording.to_json()["request_sha256"] == hashlib.sha256(b"{}").hexdigest()


GOOD = Recording(b'{"q": 1}', b'{"a": 2}', None, synthetic=True).to_json()


def _with(**changes: object) -> dict[str, object]:
    document: dict[str, object] = json.loads(json.dumps(GOOD))
    document.update(changes)
    return document


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(_with(unknown=1), id="unknown-key"),
        pytest.param(_with(synthetic="true"), id="synthetic-string"),
        pytest.param(_with(synthetic=1), id="synthetic-number"),
        pytest.param(_with(request_body=None), id="request-null"),
        pytest.param(_with(request_body=[1]), id="request-array"),
        pytest.param(_with(response_body=3), id="response-number"),
        pytest.param(_with(failure=7), id="failure-number"),
        pytest.param(_with(request_sha256=None), id="digest-null"),
    ],
)
def test_the_converter_refuses_a_malformed_file(document: dict[str, object]) -> None:
    with pytest.raises(DocumentError):
        structure(document, RecordingFile)
    assert Recording.from_json(document) is None


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(_with(failure=c.REASON_JEV_ERROR), id="both-answer-and-failure"),
        pytest.param(_with(response_body=None), id="neither"),
        pytest.param(_with(response_body=None, failure="not-a-failure"), id="unknown-failure"),
        pytest.param(_with(request_sha256="0" * 64), id="another-digest"),
        pytest.param(_with(request_body='{"q": 2}'), id="another-body"),
        pytest.param([GOOD], id="not-an-object"),
    ],
)
def test_a_well_typed_file_that_disagrees_with_itself_answers_nothing(document: object) -> None:
    assert Recording.from_json(document) is None


def test_the_good_file_is_read() -> None:
    read = Recording.from_json(_with())
    assert read is not None
    assert read.response_body == b'{"a": 2}'
