"""The pure decisions of `jev-select rollout`: records, artifacts, matching, rate limits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.reports import make_report
from support.strategies import SHAS

from jev_select import contracts as c
from jev_select.core.convert import DocumentError, structure, unstructure
from jev_select.core.jsonutil import pretty_json, strict_loads
from jev_select.core.rollout import (
    AnswerRefused,
    Rollout,
    RunOutcome,
    WorkflowRun,
    ci_query_sha,
    match_ci_run,
    rate_limit_wait,
    report_artifact,
    report_fits_run,
    rollout_document,
    rollout_json,
    rollout_summary,
    rollout_table,
    rollout_text,
    workflow_reference,
    workflow_run,
)

BASE, HEAD, MERGE, OTHER = "a" * 40, "b" * 40, "c" * 40, "d" * 40


def run_record(run_id: int = 7, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": run_id,
        "run_attempt": 1,
        "event": "pull_request",
        "head_sha": HEAD,
        "status": "completed",
        "pull_requests": [{"base": {"sha": BASE}, "head": {"sha": HEAD}, "number": 3}],
    }
    record.update(fields)
    return record


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ci.yml", "ci.yml"),
        ("jev-shadow.yaml", "jev-shadow.yaml"),
        (".github/workflows/ci.yml", "ci.yml"),
        (" ci.yml ", "ci.yml"),
        ("12345", "12345"),
        ("0", None),
        ("ci", None),
        ("sub/ci.yml", None),
        (".github/workflows/a/ci.yml", None),
        ("ci.yml?x=1", None),
        ("", None),
    ],
)
def test_workflow_reference(text: str, expected: str | None) -> None:
    assert workflow_reference(text) == expected


def test_a_run_record_is_read_with_its_pull_requests() -> None:
    assert workflow_run(run_record()) == WorkflowRun(
        id=7,
        attempt=1,
        event="pull_request",
        head_sha=HEAD,
        status="completed",
        pull_requests=((BASE, HEAD),),
    )
    # Records of pushes carry no pull requests; an absent attempt is the first.
    record = run_record(pull_requests=[])
    del record["run_attempt"]
    assert workflow_run(record).pull_requests == ()
    assert workflow_run(record).attempt == 1


@pytest.mark.parametrize(
    "change",
    [
        {"id": "7"},
        {"id": 0},
        {"id": True},
        {"run_attempt": 0},
        {"event": ""},
        {"event": None},
        {"status": None},
        {"head_sha": "B" * 40},
        {"head_sha": "b" * 39},
        {"pull_requests": None},
        {"pull_requests": [{"base": {"sha": BASE}}]},
        {"pull_requests": [{"base": {"sha": BASE}, "head": {"sha": "x"}}]},
        {"pull_requests": ["x"]},
    ],
)
def test_malformed_run_records_are_refused(change: dict[str, Any]) -> None:
    with pytest.raises(AnswerRefused):
        workflow_run(run_record(**change))
    with pytest.raises(AnswerRefused):
        workflow_run([run_record()])


def artifact(name: str, artifact_id: int = 1, *, size: int = 10, expired: bool = False) -> Any:
    return {"id": artifact_id, "name": name, "size_in_bytes": size, "expired": expired}


def test_the_newest_attempts_report_is_picked_and_other_artifacts_ignored() -> None:
    records = [
        artifact("coverage", 1),
        artifact("jev-plan-report-7-1", 2),
        artifact("jev-plan-report-7-3", 3, expired=True),
        artifact("jev-plan-report-7-3", 4),
        artifact("jev-plan-report-7-2", 5),
        artifact("jev-plan-report-8-9", 6),  # another run's name
        artifact("jev-plan-report-7-1-extra", 7),
        {"name": "unrelated", "id": "not checked"},
    ]
    found = report_artifact(7, records)
    assert found is not None
    assert (found.id, found.attempt, found.expired) == (4, 3, False)
    assert report_artifact(7, [artifact("coverage")]) is None
    assert report_artifact(7, []) is None
    expired = report_artifact(7, [artifact("jev-plan-report-7-1", expired=True)])
    assert expired is not None
    assert expired.expired


@pytest.mark.parametrize(
    "record",
    [
        {"id": 1, "name": "jev-plan-report-7-1", "size_in_bytes": -1, "expired": False},
        {"id": 0, "name": "jev-plan-report-7-1", "size_in_bytes": 1, "expired": False},
        {"id": 1, "name": "jev-plan-report-7-1", "size_in_bytes": 1, "expired": "no"},
        {"id": 1, "name": None},
        "jev-plan-report-7-1",
    ],
)
def test_malformed_report_artifacts_are_refused(record: Any) -> None:
    with pytest.raises(AnswerRefused):
        report_artifact(7, [record])


def head_report() -> dict[str, Any]:
    report = make_report({"unit": True}, tested_sha=HEAD)
    report["tested_ref"] = "head"
    return report


def merge_report() -> dict[str, Any]:
    return make_report({"unit": True}, tested_sha=MERGE)  # base a…, head b…, tested c…


def ci_run(run_id: int, **fields: Any) -> WorkflowRun:
    return workflow_run(run_record(run_id, **fields))


def test_a_head_report_matches_the_run_of_its_commit_and_event() -> None:
    report = head_report()
    assert ci_query_sha(report) == HEAD
    candidates = [ci_run(1, event="push"), ci_run(2), ci_run(3, head_sha=OTHER)]
    match = match_ci_run(report, "pull_request", candidates)
    assert match.run is not None
    assert match.run.id == 2
    assert match.detail is None


def test_a_merge_report_needs_the_same_base_and_head() -> None:
    report = merge_report()
    assert ci_query_sha(report) == HEAD  # run records name the head, not the merge commit
    moved = ci_run(1, pull_requests=[{"base": {"sha": OTHER}, "head": {"sha": HEAD}}])
    bare = ci_run(2, pull_requests=[])
    assert match_ci_run(report, "pull_request", [moved, bare]).detail == c.ROLLOUT_DETAIL_NO_CI_RUN
    match = match_ci_run(report, "pull_request", [moved, bare, ci_run(3)])
    assert match.run is not None
    assert match.run.id == 3


def test_no_run_several_runs_and_a_pending_run_are_not_guessed() -> None:
    report = head_report()
    assert match_ci_run(report, "pull_request", []) == match_ci_run(
        report, "pull_request", [ci_run(1, event="push")]
    )
    assert match_ci_run(report, "pull_request", []).detail == c.ROLLOUT_DETAIL_NO_CI_RUN
    ambiguous = match_ci_run(report, "pull_request", [ci_run(1), ci_run(2)])
    assert (ambiguous.run, ambiguous.detail) == (None, c.ROLLOUT_DETAIL_CI_RUN_AMBIGUOUS)
    # The same run listed twice (pages that overlap while runs are added) is still one run.
    assert match_ci_run(report, "pull_request", [ci_run(1), ci_run(1)]).run == ci_run(1)
    pending = match_ci_run(report, "pull_request", [ci_run(1, status="in_progress")])
    assert (pending.run, pending.detail) == (None, c.ROLLOUT_DETAIL_CI_RUN_PENDING)


NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("status", "headers", "wait"),
    [
        (429, {"retry-after": "30"}, 30.0),
        (403, {"retry-after": "5"}, 5.0),
        (429, {"retry-after": "0"}, 1.0),  # never a zero wait: a loop must spend the budget
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 90)}, 91.0),
        (429, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) - 50)}, 1.0),
        (429, {}, 60.0),
        (429, {"retry-after": "soon"}, 60.0),
        (403, {}, None),  # a plain refusal, not a limit
        (403, {"x-ratelimit-remaining": "12", "x-ratelimit-reset": str(int(NOW) + 9)}, None),
        (403, {"x-ratelimit-remaining": "0"}, None),
        (500, {"retry-after": "3"}, None),
        (None, {"retry-after": "3"}, None),
        (403, {"retry-after": "３"}, None),  # a digit, but not an ASCII one
    ],
)
def test_rate_limit_wait(status: int | None, headers: dict[str, str], wait: float | None) -> None:
    assert rate_limit_wait(status, headers, NOW) == wait


OUTCOMES = [
    RunOutcome(30, c.ROLLOUT_UNMATCHED, c.ROLLOUT_DETAIL_NO_CI_RUN, None, MERGE),
    RunOutcome(10, c.ROLLOUT_COLLECTED, None, 99, HEAD),
    RunOutcome(20, c.ROLLOUT_MISSING, c.ROLLOUT_DETAIL_NO_ARTIFACT),
    RunOutcome(40, c.ROLLOUT_REJECTED, c.ROLLOUT_DETAIL_ARTIFACT_TOO_LARGE),
    RunOutcome(50, c.ROLLOUT_EXISTING),
    RunOutcome(60, c.ROLLOUT_COLLECTED, None, 98, OTHER),
]


def test_summary_counts_every_outcome_in_order() -> None:
    summary = rollout_summary(OUTCOMES)
    assert list(summary) == list(c.ROLLOUT_OUTCOMES)
    assert summary == {"collected": 2, "unmatched": 1, "missing": 1, "rejected": 1, "existing": 1}
    assert rollout_summary([]) == dict.fromkeys(c.ROLLOUT_OUTCOMES, 0)


def test_json_lists_runs_in_ascending_order() -> None:
    view = rollout_json(OUTCOMES)
    runs = view["runs"]
    assert isinstance(runs, list)
    assert [run["observer_run"] for run in runs] == [10, 20, 30, 40, 50, 60]
    assert runs[0] == {
        "observer_run": 10,
        "outcome": "collected",
        "detail": None,
        "ci_run": 99,
        "tested_sha": HEAD,
    }
    json.dumps(view, allow_nan=False)


def test_table_rows_and_summary_line() -> None:
    lines = rollout_table(OUTCOMES).splitlines()
    assert lines[0].split() == ["OBSERVER", "RUN", "OUTCOME", "DETAIL", "CI", "RUN", "TESTED"]
    assert lines[1].split() == ["10", "collected", "-", "99", HEAD[:12]]
    assert lines[3].split() == ["30", "unmatched", "no-ci-run", "-", MERGE[:12]]
    assert lines[-1] == (
        "jev-select: rollout: 2 collected, 1 unmatched, 1 missing, 1 rejected, 1 already collected."
    )


@pytest.mark.parametrize(
    ("event", "run_head", "fits"),
    [
        ("pull_request", HEAD, True),
        ("pull_request", OTHER, False),
        ("merge_group", OTHER, False),
        ("push", OTHER, False),
        # A manual evaluation runs on the dispatch commit, not on the pull request it planned.
        ("workflow_dispatch", OTHER, True),
    ],
)
def test_a_report_must_be_its_runs_own(event: str, run_head: str, fits: bool) -> None:
    run = ci_run(1, event=event, head_sha=run_head)
    assert report_fits_run(merge_report(), run) is fits


# ---------------------------------------------------------------------------------------------
# The typed JSON output and the converter
# ---------------------------------------------------------------------------------------------

RUN_OUTCOMES = st.builds(
    RunOutcome,
    observer_run=st.integers(1, 2**53),
    outcome=st.sampled_from(c.ROLLOUT_OUTCOMES),
    detail=st.none() | st.sampled_from((c.ROLLOUT_DETAIL_NO_CI_RUN, c.ROLLOUT_DETAIL_NO_ARTIFACT)),
    ci_run=st.none() | st.integers(1, 2**53),
    tested_sha=st.none() | SHAS,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(RUN_OUTCOMES, max_size=8))
def test_the_json_output_reads_back_and_writes_the_same_bytes(outcomes: list[RunOutcome]) -> None:
    text = rollout_text(outcomes, c.ROLLOUT_FORMAT_JSON)
    document = structure(strict_loads(text), Rollout)
    assert document == rollout_document(outcomes)
    assert pretty_json(unstructure(document)) + "\n" == text


def test_the_json_output_keeps_its_bytes() -> None:
    outcomes = [RunOutcome(7, c.ROLLOUT_COLLECTED, None, 9, HEAD)]
    assert rollout_text(outcomes, c.ROLLOUT_FORMAT_JSON) == (
        '{\n  "runs": [\n    {\n      "observer_run": 7,\n      "outcome": "collected",\n'
        '      "detail": null,\n      "ci_run": 9,\n      "tested_sha": "' + HEAD + '"\n'
        '    }\n  ],\n  "summary": {\n    "collected": 1,\n    "unmatched": 0,\n'
        '    "missing": 0,\n    "rejected": 0,\n    "existing": 0\n  }\n}\n'
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        pytest.param("unknown", 1, id="unknown-key"),
        pytest.param("observer_run", "7", id="run-string"),
        pytest.param("observer_run", True, id="run-boolean"),
        pytest.param("ci_run", 9.5, id="ci-run-float"),
        pytest.param("detail", 1, id="detail-number"),
        pytest.param("outcome", None, id="outcome-null"),
    ],
)
def test_the_converter_refuses_a_malformed_run(key: str, value: object) -> None:
    view = strict_loads(rollout_text(OUTCOMES, c.ROLLOUT_FORMAT_JSON))
    view["runs"][0][key] = value
    with pytest.raises(DocumentError) as caught:
        structure(view, Rollout)
    assert caught.value.path == "$.runs[0]" + ("" if key == "unknown" else f".{key}")
