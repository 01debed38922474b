"""Running the corpus through the production pipeline, once per evaluation threshold."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

from .. import contracts as c
from ..app.pipeline import RunContext, run_plan_pipeline
from ..core.convert import register_document, unstructure
from ..core.inputs import parse_inputs
from ..core.jsonutil import (
    canonical_json,
    compact_json,
    format_number,
    pretty_json,
    strict_loads,
)
from ..core.models import Commits, Inputs
from ..core.report_v5 import ReportV5, report_json
from ..edges import jev_client
from ..edges.environment import temp_root
from ..edges.files import write_atomically
from ..edges.github.lookups import SnapshotLookups
from ..edges.jev_client import Sender
from ..errors import InputError
from .corpus import (
    CAMPAIGN_FILE,
    CAMPAIGN_VERSION,
    DEFAULT_CAMPAIGN_DIR,
    EXPECTED_FILE,
    RECORDING_NAME,
    Case,
    CaseRepository,
    ReplayFailure,
    load_corpus,
    read_json,
)
from .metrics import CaseOutcome, MetricRow, ReplayResult, compute_metrics
from .recordings import (
    RecordedTransport,
    Recording,
    RecordingTransport,
    load_recordings,
    synthetic_sender,
)

RECORD_SYNTHETIC = "synthetic"
RECORD_LIVE = "live"

# Never sent anywhere: offline replays replace the transport, but the pipeline needs a key to
# reach the evaluation phase at all.
_OFFLINE_KEY = "offline-replay"

_WORKERS = 4

# Report keys read here (the ones that spell an input or output name are in contracts).
_USAGE = "usage"
_OBSERVATION = "observation"
_OBSERVATION_ERROR = "observation_error"
_DIFF_HASH = "diff_hash"
_DURATIONS = "durations_ms"
_DURATION = "duration_ms"


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
) -> ReportV5:
    run = RunContext(
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
        lookups=SnapshotLookups(case.actions),
        send=send,
    )
    return run_plan_pipeline(inputs, run, validated_at=time.monotonic()).report


def _without_durations(value: object) -> object:
    if isinstance(value, dict):
        return {
            key: _without_durations(item)
            for key, item in value.items()
            if key not in (_DURATION, _DURATIONS)
        }
    if isinstance(value, list):
        return [_without_durations(item) for item in value]
    return value


def expected_of(outcome: CaseOutcome) -> dict[str, object]:
    """The recorded result of a case: observation facts once, plans per threshold."""
    first = report_json(next(iter(outcome.reports.values())))
    return {
        _DIFF_HASH: first[_DIFF_HASH],
        c.REPORT_FIELD_MODEL: first[c.REPORT_FIELD_MODEL],
        _USAGE: first[_USAGE],
        _OBSERVATION_ERROR: first[_OBSERVATION_ERROR],
        _OBSERVATION: _without_durations(first[_OBSERVATION]),
        "plans": {
            format_number(threshold): {
                c.REPORT_FIELD_STATUS: report.status,
                c.REPORT_FIELD_TASKS: report_json(report)[c.REPORT_FIELD_TASKS],
            }
            for threshold, report in outcome.reports.items()
        },
    }


def _observation_consistent(reports: Mapping[float, ReportV5]) -> bool:
    """The observation never depends on the threshold; if it did, something was not replayed."""
    seen = {
        canonical_json(_without_durations(report_json(report)[_OBSERVATION]))
        for report in reports.values()
    }
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
) -> dict[float, ReportV5]:
    """Reports of ``case`` at every threshold; ``send_for`` gives the transport to use."""
    reports: dict[float, ReportV5] = {}
    with CaseRepository(case, temp_root=temp, environ=environ) as repository:
        for threshold in thresholds:
            inputs = _case_inputs(
                case, threshold=threshold, api_key=api_key, api_base_url=api_base_url
            )
            reports[threshold] = _analyse(
                case, repository, inputs, send_for(case, inputs), environ=environ, temp=temp
            )
    return reports


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all, creating missing parent directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Campaign files are committed to the repository: the usual mode, not a private one.
    write_atomically(path, text, prefix=".jev-select-replay-", private=False)


def _write_case_campaign(
    campaign: Path, outcome: CaseOutcome, recordings: Mapping[str, Recording]
) -> None:
    directory = campaign / outcome.case.id
    if directory.is_dir():
        for path in directory.iterdir():
            if RECORDING_NAME.fullmatch(path.name) or path.name == EXPECTED_FILE:
                path.unlink()
    for digest, recording in sorted(recordings.items()):
        write_text(directory / f"{digest}.json", pretty_json(recording.to_json()) + "\n")
    write_text(directory / EXPECTED_FILE, pretty_json(expected_of(outcome)) + "\n")


@attrs.frozen
class _Campaign:
    """The campaign file: what the stored answers were recorded for, and the figures they gave."""

    version: int
    synthetic: bool
    model: str
    cases: tuple[str, ...]
    metrics: tuple[MetricRow, ...]


register_document(_Campaign)


def _campaign_document(result: ReplayResult, model: str) -> dict[str, object]:
    document = _Campaign(
        version=CAMPAIGN_VERSION,
        synthetic=result.synthetic_answers == result.answers,
        model=model,
        cases=tuple(outcome.case.id for outcome in result.outcomes),
        metrics=tuple(result.metrics),
    )
    value = unstructure(document)
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def _check_expected(campaign: Path, outcome: CaseOutcome) -> None:
    mismatch = ReplayFailure(c.REPLAY_RESULT_MISMATCH, outcome.case.id)
    stored = read_json(campaign / outcome.case.id / EXPECTED_FILE, mismatch)
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
) -> dict[float, ReportV5]:
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
    recordings = load_recordings(campaign / case.id)
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
        next(iter(outcomes[-1].reports.values())).model.expected if outcomes else c.DEFAULT_MODEL
    )
    result = _summarise(outcomes, thresholds)
    if record is not None and not only:
        write_text(campaign / CAMPAIGN_FILE, pretty_json(_campaign_document(result, model)) + "\n")
    elif record is None and not only:
        stored = read_json(campaign / CAMPAIGN_FILE, ReplayFailure(c.REPLAY_INVALID_CAMPAIGN))
        derived = strict_loads(compact_json(_campaign_document(result, model)))
        if not isinstance(stored, dict):
            raise ReplayFailure(c.REPLAY_INVALID_CAMPAIGN)
        if canonical_json(stored) != canonical_json(derived):
            raise ReplayFailure(c.REPLAY_RESULT_MISMATCH)
    return result
