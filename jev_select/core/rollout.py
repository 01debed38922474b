"""``jev-select rollout``: which observer reports become measurements, and why the others do not.

Pure. The command lists an observer workflow's runs, finds each run's report artifact, and looks
for the CI run that tested the same commit; this module decides each step from the API records
it is given: reading run and artifact records (anything malformed is refused, never guessed
around), matching a report with CI runs, reading rate-limit answers, and summing up the outcomes
(docs/shadow-mode.md, "Collect the reports and the CI results").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TypeGuard

import attrs

from .. import contracts as c
from ..errors import JevSelectError
from .columns import align_columns
from .convert import unstructure
from .jsonutil import pretty_json

__all__ = [
    "AnswerRefused",
    "CiMatch",
    "ReportArtifact",
    "Rollout",
    "RunOutcome",
    "WorkflowRun",
    "ci_query_sha",
    "match_ci_run",
    "rate_limit_wait",
    "report_artifact",
    "report_fits_run",
    "rollout_document",
    "rollout_json",
    "rollout_summary",
    "rollout_table",
    "rollout_text",
    "workflow_reference",
    "workflow_run",
]

_SHA40 = re.compile(r"[0-9a-f]{40}")
# Events whose run records carry, as their head SHA, the head the observer's report names: the
# pull request head, the merge-queue commit, the pushed commit (GitHub's event names).
_HEAD_EVENTS = ("pull_request", "merge_group", "push")


class AnswerRefused(JevSelectError):
    """An API record the command cannot read with certainty; the run stops (``invalid-answer``)."""


@attrs.frozen
class WorkflowRun:
    """One workflow run, reduced to what matching needs."""

    id: int
    attempt: int
    event: str
    head_sha: str
    status: str
    # (base SHA, head SHA) of each pull request the run record names.
    pull_requests: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class ReportArtifact:
    """The report artifact of one observer run attempt."""

    id: int
    attempt: int
    size: int
    expired: bool


@attrs.frozen
class CiMatch:
    """The CI run that tested a report's commit, or why there is none (``detail``)."""

    run: WorkflowRun | None
    detail: str | None


@attrs.frozen
class RunOutcome:
    """What became of one observer run; also a run's entry of the JSON output, where each
    attribute is a key, in this order, and an unknown value is null (never left out)."""

    observer_run: int
    outcome: str
    detail: str | None = None
    ci_run: int | None = None
    tested_sha: str | None = None


def _read_only(counts: Mapping[str, int]) -> Mapping[str, int]:
    return MappingProxyType(dict(counts))


@attrs.frozen
class Rollout:
    """The command's JSON output (``--format json``): the runs in ascending observer-run order,
    then how many ended in each outcome, in ``ROLLOUT_OUTCOMES`` order."""

    runs: tuple[RunOutcome, ...]
    summary: Mapping[str, int] = attrs.field(converter=_read_only)


def _positive_int(value: object) -> TypeGuard[int]:
    return type(value) is int and value > 0


def _sha(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _SHA40.fullmatch(value) is not None


def workflow_reference(text: str) -> str | None:
    """The workflow as the REST API names it: a file name (``ci.yml``, also given as
    ``.github/workflows/ci.yml``) or a numeric ID; ``None`` when it is neither."""
    name = text.strip(c.WHITESPACE)
    prefix = ".github/workflows/"
    if name.startswith(prefix):
        name = name[len(prefix) :]
    if re.fullmatch(c.ROLLOUT_WORKFLOW_PATTERN, name, re.ASCII) is None:
        return None
    return name


def _pull_request_shas(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        raise AnswerRefused()
    pairs: list[tuple[str, str]] = []
    for entry in value:
        if not isinstance(entry, dict):
            raise AnswerRefused()
        base, head = entry.get("base"), entry.get("head")
        if not isinstance(base, dict) or not isinstance(head, dict):
            raise AnswerRefused()
        base_sha, head_sha = base.get("sha"), head.get("sha")
        if not _sha(base_sha) or not _sha(head_sha):
            raise AnswerRefused()
        pairs.append((base_sha, head_sha))
    return tuple(pairs)


def workflow_run(record: object) -> WorkflowRun:
    """A run record of ``GET .../actions/workflows/<id>/runs``; raises ``AnswerRefused`` when a
    field matching depends on is missing or malformed."""
    if not isinstance(record, dict):
        raise AnswerRefused()
    run_id, attempt = record.get("id"), record.get("run_attempt", 1)
    event, head_sha, status = record.get("event"), record.get("head_sha"), record.get("status")
    if not _positive_int(run_id) or not _positive_int(attempt):
        raise AnswerRefused()
    if not isinstance(event, str) or not event or not isinstance(status, str):
        raise AnswerRefused()
    if not _sha(head_sha):
        raise AnswerRefused()
    return WorkflowRun(
        id=run_id,
        attempt=attempt,
        event=event,
        head_sha=head_sha,
        status=status,
        pull_requests=_pull_request_shas(record.get("pull_requests", [])),
    )


def report_artifact(run_id: int, records: Iterable[object]) -> ReportArtifact | None:
    """The report artifact of ``run_id``'s newest attempt that uploaded one, expired or not.

    Only names of the observer examples' form count (``jev-plan-report-<run>-<attempt>`` with
    this run's ID); other artifacts of the run are ignored. A record with such a name but
    malformed fields raises ``AnswerRefused``.
    """
    found: ReportArtifact | None = None
    for record in records:
        if not isinstance(record, dict):
            raise AnswerRefused()
        name = record.get("name")
        if not isinstance(name, str):
            raise AnswerRefused()
        named = re.fullmatch(c.ROLLOUT_ARTIFACT_PATTERN, name, re.ASCII)
        if named is None or int(named["run_id"]) != run_id:
            continue
        artifact_id, size, expired = (
            record.get("id"),
            record.get("size_in_bytes"),
            record.get("expired"),
        )
        if not _positive_int(artifact_id) or type(size) is not int or size < 0:
            raise AnswerRefused()
        if type(expired) is not bool:
            raise AnswerRefused()
        candidate = ReportArtifact(
            id=artifact_id, attempt=int(named["attempt"]), size=size, expired=expired
        )
        # The newest attempt wins; among its uploads (should there be several), a live one.
        if (
            found is None
            or candidate.attempt > found.attempt
            or (candidate.attempt == found.attempt and found.expired and not expired)
        ):
            found = candidate
    return found


def report_fits_run(report: Mapping[str, object], run: WorkflowRun) -> bool:
    """Whether the report in a run's artifact is that run's own: for the events whose run
    record names the head the report planned, the two must agree (another run's report under
    this run's name is refused, not measured)."""
    return run.event not in _HEAD_EVENTS or report["head_sha"] == run.head_sha


def _merge_commit(report: Mapping[str, object]) -> bool:
    """True when the report tested a commit other than the head: a pull request's merge."""
    return report["tested_sha"] != report["head_sha"]


def ci_query_sha(report: Mapping[str, object]) -> str:
    """The head SHA the CI runs of ``report``'s commit carry in their run records."""
    return str(report["head_sha"] if _merge_commit(report) else report["tested_sha"])


def match_ci_run(
    report: Mapping[str, object], event: str, candidates: Sequence[WorkflowRun]
) -> CiMatch:
    """The one CI run that tested the commit ``report`` tested, for the observer's ``event``.

    A run tested the same commit when it was triggered by the same event and:

    - the report tested its head (head mode, merge queue, pushes): its head SHA is the tested SHA;
    - the report tested a pull request's merge commit: run records never carry that commit, so
      the run must name the pull request with the same base and head, the two parents the
      tested merge commit was verified to have.

    No such run, several distinct ones, or one not yet completed: no match, with the reason.
    """
    tested, head, base = report["tested_sha"], report["head_sha"], report["base_sha"]
    if _merge_commit(report):
        found = [
            run
            for run in candidates
            if run.event == event and run.head_sha == head and (base, head) in run.pull_requests
        ]
    else:
        found = [run for run in candidates if run.event == event and run.head_sha == tested]
    distinct = {run.id: run for run in found}
    if not distinct:
        return CiMatch(None, c.ROLLOUT_DETAIL_NO_CI_RUN)
    if len(distinct) > 1:
        return CiMatch(None, c.ROLLOUT_DETAIL_CI_RUN_AMBIGUOUS)
    (run,) = distinct.values()
    if run.status != c.GITHUB_RUN_COMPLETED:
        return CiMatch(None, c.ROLLOUT_DETAIL_CI_RUN_PENDING)
    return CiMatch(run, None)


def _whole_seconds(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    if not text.isascii() or not text.isdigit():
        return None
    return int(text)


def rate_limit_wait(status: int | None, headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait before asking again, or ``None`` when the answer is no rate limit.

    ``headers`` has lower-cased names; ``now`` is the wall clock in seconds since the epoch.
    A 403 or 429 is a rate limit when it carries ``retry-after`` (that many seconds), or
    ``x-ratelimit-remaining: 0`` with ``x-ratelimit-reset`` (until that time, plus a second for
    clock skew). A 429 naming neither waits a minute, as GitHub asks; a bare 403 is a refusal.
    Every wait is at least a second, so a loop of answers always spends the budget.
    """
    if status not in (403, 429):
        return None
    retry_after = _whole_seconds(headers.get("retry-after"))
    if retry_after is not None:
        return float(max(retry_after, c.ROLLOUT_MIN_WAIT_S))
    reset = _whole_seconds(headers.get("x-ratelimit-reset"))
    if _whole_seconds(headers.get("x-ratelimit-remaining")) == 0 and reset is not None:
        wait = reset - now + 1
        if not math.isfinite(wait):
            return None
        return max(float(math.ceil(wait)), float(c.ROLLOUT_MIN_WAIT_S))
    if status == 429:
        return float(c.ROLLOUT_UNNAMED_WAIT_S)
    return None


def rollout_summary(outcomes: Sequence[RunOutcome]) -> dict[str, int]:
    """How many observer runs ended in each outcome, in ``ROLLOUT_OUTCOMES`` order."""
    counts = dict.fromkeys(c.ROLLOUT_OUTCOMES, 0)
    for outcome in outcomes:
        counts[outcome.outcome] += 1
    return counts


def _ordered(outcomes: Sequence[RunOutcome]) -> list[RunOutcome]:
    return sorted(outcomes, key=lambda outcome: outcome.observer_run)


def rollout_document(outcomes: Sequence[RunOutcome]) -> Rollout:
    """The JSON output of ``outcomes``, typed."""
    return Rollout(runs=tuple(_ordered(outcomes)), summary=rollout_summary(outcomes))


def rollout_json(outcomes: Sequence[RunOutcome]) -> dict[str, object]:
    """``{"runs": [...], "summary": {...}}`` with the runs in ascending observer-run order."""
    value = unstructure(rollout_document(outcomes))
    assert isinstance(value, dict)  # an attrs class always unstructures to an object
    return value


def rollout_table(outcomes: Sequence[RunOutcome]) -> str:
    """An aligned table, one row per observer run, then the summary line."""
    header = ("OBSERVER RUN", "OUTCOME", "DETAIL", "CI RUN", "TESTED")
    rows = [header] + [
        (
            str(outcome.observer_run),
            outcome.outcome,
            outcome.detail or "-",
            str(outcome.ci_run) if outcome.ci_run is not None else "-",
            outcome.tested_sha[:12] if outcome.tested_sha else "-",
        )
        for outcome in _ordered(outcomes)
    ]
    lines = align_columns(rows)
    lines.append(c.ROLLOUT_SUMMARY_TEMPLATE.format(**rollout_summary(outcomes)))
    return "\n".join(lines) + "\n"


def rollout_text(outcomes: Sequence[RunOutcome], output_format: str) -> str:
    """The command's standard output in ``output_format``."""
    if output_format == c.ROLLOUT_FORMAT_JSON:
        return pretty_json(rollout_json(outcomes)) + "\n"
    return rollout_table(outcomes)
