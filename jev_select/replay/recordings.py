"""Campaign recordings and the transports that replay or record them (docs/reference.md,
"Evaluation replay").

A request is answered from the campaign only when the SHA-256 of its body names a recording whose
stored body is byte-for-byte the same; recordings hold bodies only, never a header, key or token.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from .. import contracts as c
from ..core.convert import DocumentError, structure, unstructure
from ..core.jsonutil import (
    JsonError,
    code_unit_key,
    compact_json,
    strict_loads,
)
from ..edges import jev_client
from ..edges.files import open_regular_file
from ..edges.jev_client import Sender
from .corpus import FAULT_MISSING_ANSWER, FAULT_MODEL_MISMATCH, RECORDING_NAME, Case

# Synthetic answers: clearly separated scores so that every threshold of the evaluation list
# sees the labels, plus the deliberate faults a case may ask for.
SYNTHETIC_RELEVANT_SCORE = 0.8
SYNTHETIC_IRRELEVANT_SCORE = 0.01
_SYNTHETIC_OUTPUT_TOKENS_PER_ANSWER = 6
_BYTES_PER_TOKEN = 4


# ---------------------------------------------------------------------------------------------
# Recordings and transports
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class RecordingFile:
    """A recording as its file holds it: one object, these keys in this order.

    The bodies are text (a body that is not UTF-8 is never recorded, see ``RecordingTransport``);
    exactly one of ``response_body`` and ``failure`` holds a value, the other is null.
    """

    synthetic: bool
    request_sha256: str
    request_body: str
    # Always written, the absent one as null; a file that leaves that key out is still read.
    response_body: str | None = None
    failure: str | None = None


@attrs.frozen
class Recording:
    """One recorded exchange: the exact request body and either a response body or a failure."""

    request_body: bytes
    response_body: bytes | None
    failure: str | None
    synthetic: bool

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.request_body).hexdigest()

    def to_file(self) -> RecordingFile:
        """The recording as its file holds it."""
        return RecordingFile(
            synthetic=self.synthetic,
            request_sha256=self.digest,
            request_body=self.request_body.decode("utf-8"),
            response_body=(
                self.response_body.decode("utf-8") if self.response_body is not None else None
            ),
            failure=self.failure,
        )

    def to_json(self) -> dict[str, object]:
        """The JSON object of the recording's file."""
        value = unstructure(self.to_file())
        assert isinstance(value, dict)  # an attrs class always unstructures to an object
        return value

    @classmethod
    def from_json(cls, value: object) -> Recording | None:
        """The recording of a parsed file, or ``None`` when the file is not one we would write
        (any such file answers nothing: its request becomes a stale recording)."""
        try:
            document = structure(value, RecordingFile)
        except DocumentError:
            return None
        if (document.response_body is None) == (document.failure is None):
            return None
        if document.failure is not None and document.failure not in c.REQUEST_ERRORS:
            return None
        recording = cls(
            request_body=document.request_body.encode("utf-8"),
            response_body=(
                document.response_body.encode("utf-8")
                if document.response_body is not None
                else None
            ),
            failure=document.failure,
            synthetic=document.synthetic,
        )
        if document.request_sha256 != recording.digest:
            return None
        return recording


def load_recordings(directory: Path) -> dict[str, Recording]:
    """Recordings by file name digest; a file whose content disagrees with its name is dropped,
    so the request it claims to answer is a stale-recording failure, never a silent answer."""
    recordings: dict[str, Recording] = {}
    if not directory.is_dir():
        return recordings
    for path in sorted(directory.iterdir()):
        if RECORDING_NAME.fullmatch(path.name) is None:
            continue
        try:
            with open_regular_file(path) as handle:
                recording = Recording.from_json(strict_loads(handle.read()))
        except (OSError, JsonError):
            recording = None
        if recording is not None and path.name == recording.digest + ".json":
            recordings[recording.digest] = recording
    return recordings


class RecordedTransport:
    """The evaluation transport of an offline replay: answers only byte-identical requests."""

    def __init__(self, recordings: Mapping[str, Recording]) -> None:
        self._recordings = recordings
        self._lock = threading.Lock()
        self.stale = False
        self.used: set[str] = set()

    def send(
        self,
        endpoint: str,
        api_key: str,
        body: bytes,
        *,
        deadline: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> bytes:
        digest = hashlib.sha256(body).hexdigest()
        recording = self._recordings.get(digest)
        with self._lock:
            if recording is None or recording.request_body != body:
                # The pipeline must still finish normally; the caller turns this into a failure.
                self.stale = True
                raise jev_client.RequestFailed(c.REASON_JEV_ERROR)
            self.used.add(digest)
        return _serve(recording)


def _serve(recording: Recording) -> bytes:
    if recording.failure is not None or recording.response_body is None:
        raise jev_client.RequestFailed(recording.failure or c.REASON_JEV_ERROR)
    return recording.response_body


class RecordingTransport:
    """Records what ``source`` answers, once per distinct body (later identical requests, e.g. at
    other thresholds, are served from what was recorded)."""

    def __init__(self, source: Sender, *, synthetic: bool) -> None:
        self._source = source
        self._synthetic = synthetic
        self._lock = threading.Lock()
        self.recordings: dict[str, Recording] = {}

    def send(
        self,
        endpoint: str,
        api_key: str,
        body: bytes,
        *,
        deadline: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> bytes:
        digest = hashlib.sha256(body).hexdigest()
        with self._lock:
            known = self.recordings.get(digest)
        if known is None:
            try:
                answer = self._source(endpoint, api_key, body, deadline=deadline, clock=clock)
                response: bytes | None = answer
                failure: str | None = None
                try:
                    answer.decode("utf-8")
                except UnicodeDecodeError:
                    # Not storable as text; validation would have called it jev-error anyway.
                    response, failure = None, c.REASON_JEV_ERROR
            except jev_client.RequestFailed as error:
                response, failure = None, error.code
            known = Recording(
                request_body=body,
                response_body=response,
                failure=failure,
                synthetic=self._synthetic,
            )
            with self._lock:
                known = self.recordings.setdefault(digest, known)
        return _serve(known)


def synthetic_sender(case: Case, expected_model: str) -> Sender:
    """A stand-in for Jev that scores from the case's labels (see the module docstring)."""

    def send(
        endpoint: str,
        api_key: str,
        body: bytes,
        *,
        deadline: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> bytes:
        request = strict_loads(body)
        asked = sorted(request["questions"], key=code_unit_key)
        answers: dict[str, dict[str, object]] = {}
        for task_id in asked:
            score = case.synthetic_scores.get(task_id)
            if score is None:
                relevant = case.labels.get(task_id) == c.REPLAY_LABEL_RELEVANT
                score = SYNTHETIC_RELEVANT_SCORE if relevant else SYNTHETIC_IRRELEVANT_SCORE
            answers[task_id] = {c.ANSWER_FIELD_TYPE: c.QUESTION_TYPE, c.QUESTION_TYPE: score}
        model = expected_model
        if case.synthetic_fault == FAULT_MISSING_ANSWER and answers:
            del answers[asked[0]]
        elif case.synthetic_fault == FAULT_MODEL_MISMATCH:
            model = _next_patch_version(expected_model)
        document = {
            c.RESPONSE_FIELD_MODEL: model,
            c.RESPONSE_FIELD_ANSWERS: answers,
            c.RESPONSE_FIELD_USAGE: {
                c.USAGE_FIELD_INPUT_TOKENS: len(body) // _BYTES_PER_TOKEN,
                c.USAGE_FIELD_OUTPUT_TOKENS: _SYNTHETIC_OUTPUT_TOKENS_PER_ANSWER * len(asked),
            },
        }
        return compact_json(document).encode("utf-8")

    return send


def _next_patch_version(model: str) -> str:
    prefix, _, patch = model.rpartition(".")
    return f"{prefix}.{int(patch) + 1}"
