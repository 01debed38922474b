"""``jev-select replay``: run the evaluation corpus through the production pipeline (spec §18).

Edge module. Each case of the corpus is rebuilt as two real commits (the base tree, then the base
with the case's patch applied) in a temporary bare repository, and analysed exactly as local mode
does (``pipeline.run_analysis``, head mode, base..head) once per evaluation threshold. The only
replaced part is the transport of the evaluation phase: a request is answered from the campaign
only when the SHA-256 of its body names a recording whose stored body is byte-for-byte the same.
Any other request makes the run fail as ``stale-recording`` for that case, because a recording
made for different bytes (other question texts, evidence, grouping or commits) says nothing about
what Jev would answer now.

Campaign layout (``--campaign DIR``, default ``<corpus>/recordings``)::

    campaign.json                  synthetic flag, model, case list and the recorded metrics
    <case>/<sha256>.json           one recording: request body, response body or failure code
    <case>/expected.json           observation and per-threshold plans, durations removed

Two recording modes rewrite a campaign: ``--write-synthetic`` answers from the labels (relevant
0.8, irrelevant 0.01, plus per-case overrides and deliberate faults from ``corpus.json``), and
``--live`` asks Jev over HTTPS with the key from ``JEV_API_KEY``. Recordings hold bodies only:
never a header, a key or a token.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .. import contracts as c
from ..core.evidence import ActionFile
from ..core.inputs import parse_inputs
from ..core.jsonutil import (
    JsonError,
    canonical_json,
    code_unit_key,
    compact_json,
    format_number,
    pretty_json,
    strict_loads,
)
from ..core.models import Commits, Inputs
from ..edges import jev_client
from ..edges.environment import temp_root
from ..edges.git import GitError, normalise_remote, run_git, sanitised_environment
from ..errors import CodedError, InputError, InvocationError
from ..pipeline import Analysis, run_analysis

__all__ = [
    "Case",
    "CaseOutcome",
    "Recording",
    "ReplayFailure",
    "ReplayResult",
    "compute_metrics",
    "load_corpus",
    "register_replay",
    "render_table",
    "replay_corpus",
    "result_json",
    "run_replay",
]

# Corpus and campaign layout.
CORPUS_FILE = "corpus.json"
CASES_DIR = "cases"
BASES_DIR = "bases"
PATCH_FILE = "change.patch"
INPUTS_FILE = "inputs.json"
LABELS_FILE = "labels.json"
ACTIONS_FILE = "actions.json"
DEFAULT_CORPUS_DIR = os.path.join("tests", "evaluation")
DEFAULT_CAMPAIGN_DIR = "recordings"
CAMPAIGN_FILE = "campaign.json"
EXPECTED_FILE = "expected.json"
CORPUS_VERSION = 1
CAMPAIGN_VERSION = 1
_RECORDING_NAME = re.compile(r"[0-9a-f]{64}\.json")

# Synthetic answers: clearly separated scores so that every threshold of the evaluation list
# sees the labels, plus the deliberate faults a case may ask for.
SYNTHETIC_RELEVANT_SCORE = 0.8
SYNTHETIC_IRRELEVANT_SCORE = 0.01
FAULT_MISSING_ANSWER = "missing-answer"
FAULT_MODEL_MISMATCH = "model-mismatch"
SYNTHETIC_FAULTS = (FAULT_MISSING_ANSWER, FAULT_MODEL_MISMATCH)
RECORD_SYNTHETIC = "synthetic"
RECORD_LIVE = "live"
_SYNTHETIC_OUTPUT_TOKENS_PER_ANSWER = 6
_BYTES_PER_TOKEN = 4

# Never sent anywhere: offline replays replace the transport, but the pipeline needs a key to
# reach the evaluation phase at all.
_OFFLINE_KEY = "offline-replay"

# The replayed commits are fully determined, so request bodies (which carry the SHAs) are too.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "jev-select corpus",
    "GIT_AUTHOR_EMAIL": "corpus@jev-select.invalid",
    "GIT_COMMITTER_NAME": "jev-select corpus",
    "GIT_COMMITTER_EMAIL": "corpus@jev-select.invalid",
    "GIT_AUTHOR_DATE": "1704067200 +0000",
    "GIT_COMMITTER_DATE": "1704067200 +0000",
}
_DETERMINISTIC_TREE = (
    "-c",
    "core.fileMode=false",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.symlinks=false",
)
_GIT_CAP = 16 * 1_048_576
_WORKERS = 4

# Report keys read here; several are also input or output names owned by the contracts module.
_TASKS = c.INPUT_TASKS
_STATUS = c.OUTPUT_STATUS
_MODEL = c.INPUT_MODEL
_USAGE = c.RESPONSE_FIELD_USAGE
_PROPOSED = "proposed_run"
_OBSERVATION = "observation"
_OBSERVATION_ERROR = "observation_error"
_DIFF_HASH = "diff_hash"
_DURATIONS = "durations_ms"
_DURATION = "duration_ms"


class ReplayFailure(CodedError):
    """The replay cannot vouch for its figures. Carries a code and, when known, the case ID."""

    def __init__(self, code: str, case: str | None = None) -> None:
        super().__init__(code)
        self.case = case

    @property
    def message(self) -> str:
        if self.case is not None:
            return c.REPLAY_CASE_FAILURE_TEMPLATE.format(code=self.code, case=self.case)
        return c.REPLAY_FAILURE_TEMPLATE.format(code=self.code)


# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Case:
    """One corpus case: where its files are, its input strings, labels and synthetic settings."""

    id: str
    split: str
    directory: Path
    base_dir: Path  # the shared base tree the case's patch applies to
    inputs: Mapping[str, str]
    labels: Mapping[str, str]  # task ID -> relevant / irrelevant
    actions: Mapping[str, ActionFile]  # "owner/repo[/path]@ref" -> metadata snapshot
    synthetic_scores: Mapping[str, float] = attrs.field(factory=dict)
    synthetic_fault: str | None = None

    @property
    def patch_path(self) -> Path:
        return self.directory / PATCH_FILE


def _read_json(path: Path, failure: ReplayFailure) -> Any:
    try:
        return strict_loads(path.read_bytes())
    except (OSError, JsonError):
        raise failure from None


def _load_case(corpus_dir: Path, entry: Any) -> Case:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS)
    case_id = entry["id"]
    if re.fullmatch(c.REPLAY_CASE_ID_PATTERN, case_id, re.ASCII) is None:
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS)
    invalid = ReplayFailure(c.REPLAY_INVALID_CORPUS, case_id)
    split = entry.get("split")
    if split not in c.REPLAY_SPLITS:
        raise invalid
    directory = corpus_dir / CASES_DIR / case_id
    base_name = entry.get("base")
    if (
        not isinstance(base_name, str)
        or re.fullmatch(c.REPLAY_CASE_ID_PATTERN, base_name, re.ASCII) is None
    ):
        raise invalid
    base_dir = corpus_dir / BASES_DIR / base_name
    if not base_dir.is_dir() or not (directory / PATCH_FILE).is_file():
        raise invalid
    inputs = _read_json(directory / INPUTS_FILE, invalid)
    if not isinstance(inputs, dict) or not all(isinstance(v, str) for v in inputs.values()):
        raise invalid
    labels_document = _read_json(directory / LABELS_FILE, invalid)
    labelled = labels_document.get(_TASKS) if isinstance(labels_document, dict) else None
    if not isinstance(labelled, dict):
        raise invalid
    labels: dict[str, str] = {}
    for task_id, label in labelled.items():
        if not isinstance(label, dict) or label.get("label") not in c.REPLAY_LABELS:
            raise invalid
        if not isinstance(label.get("reason"), str) or not isinstance(label.get("provenance"), str):
            raise invalid
        labels[task_id] = label["label"]
    actions: dict[str, ActionFile] = {}
    if (directory / ACTIONS_FILE).is_file():
        snapshot = _read_json(directory / ACTIONS_FILE, invalid)
        if not isinstance(snapshot, dict):
            raise invalid
        for key, value in snapshot.items():
            try:
                actions[key] = ActionFile(
                    text=value["text"],
                    file_path=value["file_path"],
                    resolved_sha=value["resolved_sha"],
                )
            except (KeyError, TypeError):
                raise invalid from None
    synthetic = entry.get("synthetic", {})
    if not isinstance(synthetic, dict):
        raise invalid
    scores = synthetic.get("scores", {})
    fault = synthetic.get("fault")
    if not isinstance(scores, dict) or not all(
        isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
        for value in scores.values()
    ):
        raise invalid
    if fault is not None and fault not in SYNTHETIC_FAULTS:
        raise invalid
    return Case(
        id=case_id,
        split=split,
        directory=directory,
        base_dir=base_dir,
        inputs=inputs,
        labels=labels,
        actions=actions,
        synthetic_scores={key: float(value) for key, value in scores.items()},
        synthetic_fault=fault,
    )


def load_corpus(corpus_dir: Path, only: Sequence[str] = ()) -> tuple[Case, ...]:
    """Every case of ``corpus.json`` (or just the IDs in ``only``), in corpus order."""
    document = _read_json(corpus_dir / CORPUS_FILE, ReplayFailure(c.REPLAY_INVALID_CORPUS))
    if (
        not isinstance(document, dict)
        or document.get("version") != CORPUS_VERSION
        or not isinstance(document.get("cases"), list)
    ):
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS)
    cases = tuple(_load_case(corpus_dir, entry) for entry in document["cases"])
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids) or any(case_id not in ids for case_id in only):
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS)
    return tuple(case for case in cases if not only or case.id in only)


# ---------------------------------------------------------------------------------------------
# Rebuilding a case as commits
# ---------------------------------------------------------------------------------------------


class CaseRepository:
    """A temporary bare repository holding the case's base commit and its patched head."""

    def __init__(self, case: Case, *, temp_root: str, environ: Mapping[str, str]) -> None:
        self.case = case
        self._temp_root = temp_root
        self._environ = environ
        self.directory: str | None = None
        self.base_sha = ""
        self.head_sha = ""
        self.remote = ""

    def __enter__(self) -> CaseRepository:
        self.directory = tempfile.mkdtemp(prefix="jev-select-replay-", dir=self._temp_root)
        try:
            self._build(self.directory)
        except (GitError, OSError):
            self.close()
            raise ReplayFailure(c.REPLAY_CASE_UNBUILDABLE, self.case.id) from None
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        directory, self.directory = self.directory, None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)

    def _build(self, directory: str) -> None:
        git_dir = os.path.join(directory, "repo.git")
        environment = sanitised_environment(self._environ)
        environment.update(_IDENTITY)
        environment["GIT_INDEX_FILE"] = os.path.join(directory, "index")

        def git(*args: str) -> str:
            output = run_git(
                ["--git-dir", git_dir, *_DETERMINISTIC_TREE, *args],
                cwd=directory,
                environment=environment,
                cap=_GIT_CAP,
            )
            return output.decode("ascii", "replace").strip()

        run_git(
            ["init", "--bare", "--quiet", git_dir],
            cwd=directory,
            environment=environment,
            cap=_GIT_CAP,
        )
        base_tree = str(self.case.base_dir.resolve())
        git("--work-tree", base_tree, "add", "--all", "--", ".")
        self.base_sha = git("commit-tree", git("write-tree"), "-m", "case base tree")
        patch = str(self.case.patch_path.resolve())
        git("apply", "--cached", "--check", patch)
        git("apply", "--cached", patch)
        self.head_sha = git(
            "commit-tree", git("write-tree"), "-p", self.base_sha, "-m", "case change"
        )
        git("update-ref", "refs/heads/base", self.base_sha)
        git("update-ref", "refs/heads/main", self.head_sha)
        self.remote = normalise_remote(git_dir, cwd=directory)


# ---------------------------------------------------------------------------------------------
# Recordings and transports
# ---------------------------------------------------------------------------------------------


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

    def to_json(self) -> dict[str, Any]:
        return {
            "synthetic": self.synthetic,
            "request_sha256": self.digest,
            "request_body": self.request_body.decode("utf-8"),
            "response_body": (
                self.response_body.decode("utf-8") if self.response_body is not None else None
            ),
            "failure": self.failure,
        }

    @classmethod
    def from_json(cls, value: Any) -> Recording | None:
        if not isinstance(value, dict):
            return None
        request = value.get("request_body")
        response = value.get("response_body")
        failure = value.get("failure")
        synthetic = value.get("synthetic")
        if not isinstance(request, str) or not isinstance(synthetic, bool):
            return None
        if (response is None) == (failure is None):
            return None
        if response is not None and not isinstance(response, str):
            return None
        if failure is not None and failure not in c.REQUEST_ERRORS:
            return None
        recording = cls(
            request_body=request.encode("utf-8"),
            response_body=response.encode("utf-8") if isinstance(response, str) else None,
            failure=failure,
            synthetic=synthetic,
        )
        if value.get("request_sha256") != recording.digest:
            return None
        return recording


def _load_recordings(directory: Path) -> dict[str, Recording]:
    """Recordings by file name digest; a file whose content disagrees with its name is dropped,
    so the request it claims to answer is a stale-recording failure, never a silent answer."""
    recordings: dict[str, Recording] = {}
    if not directory.is_dir():
        return recordings
    for path in sorted(directory.iterdir()):
        if _RECORDING_NAME.fullmatch(path.name) is None:
            continue
        try:
            recording = Recording.from_json(strict_loads(path.read_bytes()))
        except (OSError, JsonError):
            recording = None
        if recording is not None and path.name == recording.digest + ".json":
            recordings[recording.digest] = recording
    return recordings


Sender = Callable[..., bytes]


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
        answers: dict[str, Any] = {}
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


def _snapshot_fetcher(case: Case) -> Callable[[str, str, str, str], ActionFile | str]:
    def fetch(owner: str, repo: str, subpath: str, ref: str) -> ActionFile | str:
        name = "/".join(part for part in (owner, repo, subpath) if part)
        return case.actions.get(f"{name}@{ref}", "missing")

    return fetch


# ---------------------------------------------------------------------------------------------
# Running a case
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class CaseOutcome:
    """What the pipeline proposed for one case at each threshold."""

    case: Case
    reports: Mapping[float, Mapping[str, Any]]  # threshold -> report
    recordings_used: int
    synthetic_used: int

    def proposals(self, threshold: float) -> dict[str, bool | None]:
        tasks = self.reports[threshold][_TASKS]
        return {task_id: tasks[task_id][_PROPOSED] for task_id in tasks}

    def statuses(self) -> dict[str, str]:
        return {
            format_number(threshold): report[_STATUS] for threshold, report in self.reports.items()
        }


def _case_inputs(case: Case, *, threshold: float, api_key: str, api_base_url: str | None) -> Inputs:
    raw: dict[str, str | None] = dict(case.inputs)
    raw[c.INPUT_SKIP_BELOW] = format_number(threshold)
    raw[c.INPUT_API_KEY] = api_key
    raw[c.INPUT_ALLOW_EXTERNAL_CONTEXT] = c.BOOL_TRUE
    raw[c.INPUT_TESTED_REF] = c.TESTED_REF_HEAD
    raw[c.INPUT_GITHUB_TOKEN] = ""
    raw[c.INPUT_PULL_REQUEST] = ""
    if api_base_url is not None:
        raw[c.INPUT_API_BASE_URL] = api_base_url
    try:
        inputs = parse_inputs(raw, local_mode=True)
    except InputError:
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS, case.id) from None
    if set(case.labels) != set(inputs.tasks.ids):
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS, case.id)
    return inputs


def _analyse(
    case: Case,
    repository: CaseRepository,
    inputs: Inputs,
    send: Sender,
    *,
    environ: Mapping[str, str],
    temp: str,
) -> Mapping[str, Any]:
    analysis = Analysis(
        commits=Commits(
            base_sha=repository.base_sha,
            head_sha=repository.head_sha,
            tested_sha=repository.head_sha,
            metadata_sha=repository.base_sha,
        ),
        pull_request=True,
        fork=False,
        remote=repository.remote,
        temp_root=temp,
        environ=environ,
        provenance_repository=c.LOCAL_REPOSITORY_NAME,
        fetch_action=_snapshot_fetcher(case),
        send=send,
    )
    return run_analysis(inputs, analysis, validated_at=time.monotonic()).report


def _without_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_durations(item)
            for key, item in value.items()
            if key not in (_DURATION, _DURATIONS)
        }
    if isinstance(value, list):
        return [_without_durations(item) for item in value]
    return value


def expected_of(outcome: CaseOutcome) -> dict[str, Any]:
    """The recorded result of a case: observation facts once, plans per threshold."""
    first = next(iter(outcome.reports.values()))
    return {
        _DIFF_HASH: first[_DIFF_HASH],
        _MODEL: first[_MODEL],
        _USAGE: first[_USAGE],
        _OBSERVATION_ERROR: first[_OBSERVATION_ERROR],
        _OBSERVATION: _without_durations(first[_OBSERVATION]),
        "plans": {
            format_number(threshold): {
                _STATUS: report[_STATUS],
                _TASKS: report[_TASKS],
            }
            for threshold, report in outcome.reports.items()
        },
    }


def _observation_consistent(reports: Mapping[float, Mapping[str, Any]]) -> bool:
    """The observation never depends on the threshold; if it did, something was not replayed."""
    seen = {canonical_json(_without_durations(report[_OBSERVATION])) for report in reports.values()}
    return len(seen) == 1


def run_case(
    case: Case,
    send_for: Callable[[Case, Inputs], Sender],
    *,
    thresholds: Sequence[float],
    api_key: str,
    api_base_url: str | None,
    environ: Mapping[str, str],
    temp: str,
) -> dict[float, Mapping[str, Any]]:
    """Reports of ``case`` at every threshold; ``send_for`` gives the transport to use."""
    reports: dict[float, Mapping[str, Any]] = {}
    with CaseRepository(case, temp_root=temp, environ=environ) as repository:
        for threshold in thresholds:
            inputs = _case_inputs(
                case, threshold=threshold, api_key=api_key, api_base_url=api_base_url
            )
            reports[threshold] = _analyse(
                case, repository, inputs, send_for(case, inputs), environ=environ, temp=temp
            )
    return reports


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------


def _empty_metrics() -> dict[str, int]:
    return dict.fromkeys(c.REPLAY_METRICS, 0)


def _count(metrics: dict[str, int], label: str | None, proposed: bool | None) -> None:
    (
        relevant,
        relevant_misses,
        irrelevant,
        correct_omissions,
        irrelevant_retained,
        unknown,
    ) = c.REPLAY_METRICS
    if label == c.REPLAY_LABEL_RELEVANT:
        metrics[relevant] += 1
        if proposed is False:
            metrics[relevant_misses] += 1
    elif label == c.REPLAY_LABEL_IRRELEVANT:
        metrics[irrelevant] += 1
        if proposed is False:
            metrics[correct_omissions] += 1
        elif proposed is True:
            metrics[irrelevant_retained] += 1
    if proposed is None:
        metrics[unknown] += 1


def compute_metrics(
    outcomes: Sequence[CaseOutcome], thresholds: Sequence[float]
) -> list[dict[str, Any]]:
    """Per threshold, the spec §18 counts over every labelled task of ``outcomes``.

    ``unknown`` counts tasks (of either label) whose proposal is null: no usable evidence.
    """
    rows: list[dict[str, Any]] = []
    for threshold in thresholds:
        metrics = _empty_metrics()
        for outcome in outcomes:
            for task_id, proposed in outcome.proposals(threshold).items():
                _count(metrics, outcome.case.labels.get(task_id), proposed)
        rows.append({c.REPLAY_THRESHOLD_COLUMN: threshold, **metrics})
    return rows


# ---------------------------------------------------------------------------------------------
# The whole replay
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class ReplayResult:
    outcomes: tuple[CaseOutcome, ...]
    thresholds: tuple[float, ...]
    metrics: list[dict[str, Any]]
    by_split: dict[str, list[dict[str, Any]]]

    @property
    def answers(self) -> int:
        return sum(outcome.recordings_used for outcome in self.outcomes)

    @property
    def synthetic_answers(self) -> int:
        return sum(outcome.synthetic_used for outcome in self.outcomes)


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8", newline="\n")
    os.replace(temporary, path)


def _write_case_campaign(
    campaign: Path, outcome: CaseOutcome, recordings: Mapping[str, Recording]
) -> None:
    directory = campaign / outcome.case.id
    if directory.is_dir():
        for path in directory.iterdir():
            if _RECORDING_NAME.fullmatch(path.name) or path.name == EXPECTED_FILE:
                path.unlink()
    for digest, recording in sorted(recordings.items()):
        _write_text(directory / f"{digest}.json", pretty_json(recording.to_json()) + "\n")
    _write_text(directory / EXPECTED_FILE, pretty_json(expected_of(outcome)) + "\n")


def _campaign_document(result: ReplayResult, model: str) -> dict[str, Any]:
    return {
        "version": CAMPAIGN_VERSION,
        "synthetic": result.synthetic_answers == result.answers,
        _MODEL: model,
        "cases": [outcome.case.id for outcome in result.outcomes],
        "metrics": result.metrics,
    }


def _check_expected(campaign: Path, outcome: CaseOutcome) -> None:
    mismatch = ReplayFailure(c.REPLAY_RESULT_MISMATCH, outcome.case.id)
    stored = _read_json(campaign / outcome.case.id / EXPECTED_FILE, mismatch)
    derived = strict_loads(compact_json(expected_of(outcome)))
    if canonical_json(stored) != canonical_json(derived):
        raise mismatch


def _summarise(outcomes: Sequence[CaseOutcome], thresholds: Sequence[float]) -> ReplayResult:
    by_split = {
        split: compute_metrics([o for o in outcomes if o.case.split == split], thresholds)
        for split in c.REPLAY_SPLITS
    }
    return ReplayResult(
        outcomes=tuple(outcomes),
        thresholds=tuple(thresholds),
        metrics=compute_metrics(outcomes, thresholds),
        by_split=by_split,
    )


@attrs.frozen
class _RunSettings:
    thresholds: tuple[float, ...]
    api_key: str = attrs.field(repr=False)
    api_base_url: str | None
    environ: Mapping[str, str] = attrs.field(repr=False)
    temp: str


def _run(
    case: Case, send_for: Callable[[Case, Inputs], Sender], settings: _RunSettings
) -> dict[float, Mapping[str, Any]]:
    return run_case(
        case,
        send_for,
        thresholds=settings.thresholds,
        api_key=settings.api_key,
        api_base_url=settings.api_base_url,
        environ=settings.environ,
        temp=settings.temp,
    )


def _replay_case(case: Case, campaign: Path, settings: _RunSettings) -> CaseOutcome:
    recordings = _load_recordings(campaign / case.id)
    transports: list[RecordedTransport] = []

    def offline(_case: Case, _inputs: Inputs) -> Sender:
        transport = RecordedTransport(recordings)
        transports.append(transport)
        return transport.send

    reports = _run(case, offline, settings)
    if any(transport.stale for transport in transports):
        raise ReplayFailure(c.REPLAY_STALE_RECORDING, case.id)
    used: set[str] = set().union(*(transport.used for transport in transports))
    outcome = CaseOutcome(
        case=case,
        reports=reports,
        recordings_used=len(used),
        synthetic_used=sum(1 for digest in used if recordings[digest].synthetic),
    )
    if not _observation_consistent(reports):
        raise ReplayFailure(c.REPLAY_RESULT_MISMATCH, case.id)
    _check_expected(campaign, outcome)
    return outcome


def _record_case(case: Case, campaign: Path, settings: _RunSettings, *, live: bool) -> CaseOutcome:
    recorders: list[RecordingTransport] = []

    def recording(case_: Case, inputs: Inputs) -> Sender:
        if not recorders:
            source = jev_client.send if live else synthetic_sender(case_, inputs.model)
            recorders.append(RecordingTransport(source, synthetic=not live))
        return recorders[0].send

    reports = _run(case, recording, settings)
    made = recorders[0].recordings if recorders else {}
    outcome = CaseOutcome(
        case=case,
        reports=reports,
        recordings_used=len(made),
        synthetic_used=0 if live else len(made),
    )
    _write_case_campaign(campaign, outcome, made)
    return outcome


def replay_corpus(
    corpus_dir: Path,
    campaign_dir: Path | None = None,
    *,
    environ: Mapping[str, str],
    only: Sequence[str] = (),
    record: str | None = None,
    api_key: str = "",
    api_base_url: str | None = None,
    thresholds: Sequence[float] = c.EVALUATION_THRESHOLDS,
) -> ReplayResult:
    """Replay (``record`` None) or re-record (``RECORD_SYNTHETIC``, ``RECORD_LIVE``) the corpus.

    Raises :class:`ReplayFailure`. A full offline replay also checks the metrics stored in
    ``campaign.json``; a replay of selected cases (``only``) checks only their expectations.
    """
    campaign = campaign_dir if campaign_dir is not None else corpus_dir / DEFAULT_CAMPAIGN_DIR
    cases = load_corpus(corpus_dir, only)
    settings = _RunSettings(
        thresholds=tuple(thresholds),
        api_key=api_key if record == RECORD_LIVE else _OFFLINE_KEY,
        api_base_url=api_base_url,
        environ=environ,
        temp=temp_root(environ),
    )

    def one(case: Case) -> CaseOutcome:
        if record is None:
            return _replay_case(case, campaign, settings)
        return _record_case(case, campaign, settings, live=record == RECORD_LIVE)

    # Cases are independent (own repositories, own transports); results keep corpus order, and
    # the first failing case in that order is the one reported.
    with concurrent.futures.ThreadPoolExecutor(max_workers=_WORKERS) as executor:
        outcomes = list(executor.map(one, cases))
    model = (
        next(iter(outcomes[-1].reports.values()))[_MODEL]["expected"]
        if outcomes
        else c.DEFAULT_MODEL
    )
    result = _summarise(outcomes, thresholds)
    if record is not None and not only:
        _write_text(campaign / CAMPAIGN_FILE, pretty_json(_campaign_document(result, model)) + "\n")
    elif record is None and not only:
        stored = _read_json(campaign / CAMPAIGN_FILE, ReplayFailure(c.REPLAY_INVALID_CAMPAIGN))
        derived = strict_loads(compact_json(_campaign_document(result, model)))
        if not isinstance(stored, dict):
            raise ReplayFailure(c.REPLAY_INVALID_CAMPAIGN)
        if canonical_json(stored) != canonical_json(derived):
            raise ReplayFailure(c.REPLAY_RESULT_MISMATCH)
    return result


# ---------------------------------------------------------------------------------------------
# Presentation
# ---------------------------------------------------------------------------------------------


def result_json(result: ReplayResult) -> dict[str, Any]:
    """The replay as a JSON value: metrics overall and per split, and every case's proposals."""
    return {
        "answers": result.answers,
        "synthetic_answers": result.synthetic_answers,
        "synthetic": result.answers > 0 and result.synthetic_answers == result.answers,
        "thresholds": result.metrics,
        "splits": result.by_split,
        "cases": [
            {
                "id": outcome.case.id,
                "split": outcome.case.split,
                "answers": outcome.recordings_used,
                "synthetic_answers": outcome.synthetic_used,
                "statuses": outcome.statuses(),
                "proposals": {
                    format_number(threshold): outcome.proposals(threshold)
                    for threshold in result.thresholds
                },
                "labels": dict(outcome.case.labels),
            }
            for outcome in result.outcomes
        ],
    }


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def render_table(result: ReplayResult) -> str:
    """Heading, the metric table per threshold, a per-case line, and the synthetic note."""
    lines = [
        c.REPLAY_HEADING_TEMPLATE.format(
            cases=len(result.outcomes),
            answers=result.answers,
            synthetic=result.synthetic_answers,
        ),
        "",
    ]
    header = [c.REPLAY_THRESHOLD_COLUMN, *c.REPLAY_METRICS]
    rows = [header] + [
        [format_number(row[c.REPLAY_THRESHOLD_COLUMN])] + [str(row[name]) for name in header[1:]]
        for row in result.metrics
    ]
    lines += _table(rows)
    lines.append("")
    case_rows = [["case", "split", "answers", "synthetic", _STATUS]]
    for outcome in result.outcomes:
        statuses = sorted(set(outcome.statuses().values()))
        case_rows.append(
            [
                outcome.case.id,
                outcome.case.split,
                str(outcome.recordings_used),
                str(outcome.synthetic_used),
                ",".join(statuses),
            ]
        )
    lines += _table(case_rows)
    if result.synthetic_answers:
        lines += ["", c.REPLAY_SYNTHETIC_NOTE]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def register_replay(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``jev-select replay`` to the command parser."""
    replay = commands.add_parser(
        c.COMMAND_REPLAY,
        help="replay the evaluation corpus against a recorded campaign (offline)",
        exit_on_error=False,
    )
    replay.add_argument("--corpus", default=DEFAULT_CORPUS_DIR, help="corpus directory")
    replay.add_argument("--campaign", help="campaign directory (default <corpus>/recordings)")
    replay.add_argument("--case", action="append", default=[], help="replay only this case")
    replay.add_argument("--json", dest="json_path", help="also write the result as JSON here")
    replay.add_argument(
        "--live",
        action="store_true",
        help="record a new campaign from Jev (key from JEV_API_KEY; never run in CI)",
    )
    replay.add_argument(
        "--write-synthetic",
        action="store_true",
        help="regenerate the synthetic campaign from the labels",
    )
    replay.add_argument(
        f"--{c.INPUT_API_BASE_URL}", dest="api_base_url", help="Jev API root for --live"
    )
    replay.set_defaults(handler=run_replay)


def _emit(message: str, environ: Mapping[str, str]) -> None:
    if environ.get("GITHUB_ACTIONS") == c.BOOL_TRUE:
        sys.stdout.write(f"::error::{message}\n")
        sys.stdout.flush()
    else:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


@contextlib.contextmanager
def _failures(environ: Mapping[str, str]) -> Iterator[list[int]]:
    status = [0]
    try:
        yield status
    except ReplayFailure as failure:
        code = failure.code if failure.code in c.REPLAY_FAILURE_CODES else c.REPLAY_INVALID_CORPUS
        _emit(ReplayFailure(code, failure.case).message, environ)
        status[0] = 1


def run_replay(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select replay``: print the table (and write JSON), or one fixed failure line."""
    if namespace.live and namespace.write_synthetic:
        raise InvocationError()
    if namespace.api_base_url is not None and not namespace.live:
        raise InvocationError()
    record = (
        RECORD_LIVE if namespace.live else RECORD_SYNTHETIC if namespace.write_synthetic else None
    )
    corpus = Path(namespace.corpus)
    campaign = Path(namespace.campaign) if namespace.campaign is not None else None
    with _failures(environ) as status:
        api_key = ""
        if record == RECORD_LIVE:
            api_key = environ.get(c.LOCAL_API_KEY_ENV, "").strip(c.WHITESPACE)
            if not api_key:
                raise ReplayFailure(c.REPLAY_LIVE_UNAVAILABLE)
        result = replay_corpus(
            corpus,
            campaign,
            environ=environ,
            only=tuple(namespace.case),
            record=record,
            api_key=api_key,
            api_base_url=namespace.api_base_url,
        )
        if namespace.json_path is not None:
            try:
                _write_text(Path(namespace.json_path), pretty_json(result_json(result)) + "\n")
            except OSError:
                raise ReplayFailure(c.REPLAY_JSON_UNWRITABLE) from None
        sys.stdout.write(render_table(result))
        sys.stdout.flush()
    return status[0]
