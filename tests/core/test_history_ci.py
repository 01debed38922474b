"""The GitHub half of ``history`` without GitHub: which pull request a change came from, and
which CI run, if any, measures it (``core.history``)."""

from __future__ import annotations

from typing import Any

import pytest
from support.reports import make_report

from jev_select import contracts as c
from jev_select.core.history import (
    Change,
    ChangeOutcome,
    CiChoice,
    HistoryCi,
    PullRequest,
    choose_ci_run,
    ci_summary_line,
    history_json,
    history_table,
    pull_request_for_commit,
    pull_request_number,
    pull_request_of,
)
from jev_select.core.rollout import AnswerRefused

FIRST, SECOND, MERGE, SQUASH, HEAD = "1" * 40, "2" * 40, "3" * 40, "4" * 40, "5" * 40


def merge(subject: str = "Merge pull request #12 from octo/feature") -> Change:
    return Change(FIRST, MERGE, subject, c.HISTORY_KIND_MERGE, (FIRST, SECOND))


def squash(subject: str = "Add the thing (#34)") -> Change:
    return Change(FIRST, SQUASH, subject, c.HISTORY_KIND_SQUASH, (FIRST,))


def pull(number: int, head: str, merge_sha: str | None, merged: bool = True) -> dict[str, Any]:
    return {
        "number": number,
        "head": {"sha": head},
        "merge_commit_sha": merge_sha,
        "merged_at": "2026-11-20T10:00:00Z" if merged else None,
    }


@pytest.mark.parametrize(
    ("change", "number"),
    [
        (merge(), 12),
        (merge("Merge pull request #12"), None),
        (merge("Merge branch 'main' (#12)"), None),  # a merge commit names its number up front
        (squash(), 34),
        (squash("Add the thing (#34) "), 34),
        (squash("Add (#3) the thing"), None),
        (squash("Add the thing (#0)"), None),
        (squash("No number"), None),
    ],
)
def test_the_number_a_subject_names(change: Change, number: int | None) -> None:
    assert pull_request_number(change) == number


def test_a_merge_commit_pull_must_have_the_second_parent_as_head() -> None:
    assert pull_request_of(pull(12, SECOND, MERGE), merge()) == PullRequest(12, SECOND)
    assert pull_request_of(pull(12, SECOND, "9" * 40), merge()) == PullRequest(12, SECOND)
    assert pull_request_of(pull(12, HEAD, MERGE), merge()) is None
    assert pull_request_of(pull(12, SECOND, MERGE, merged=False), merge()) is None


def test_a_squash_pull_must_have_the_change_as_merge_commit() -> None:
    assert pull_request_of(pull(34, HEAD, SQUASH), squash()) == PullRequest(34, HEAD)
    assert pull_request_of(pull(34, HEAD, MERGE), squash()) is None
    assert pull_request_of(pull(34, HEAD, None, merged=False), squash()) is None


@pytest.mark.parametrize(
    "record",
    [
        [],
        {"number": "1", "head": {"sha": HEAD}},
        {"number": 1, "head": {"sha": "short"}},
        {"number": 1, "head": None},
        {"number": 1, "head": {"sha": HEAD}, "merge_commit_sha": 5},
        {"number": 1, "head": {"sha": HEAD}, "merged_at": True},
    ],
)
def test_malformed_pull_records_are_refused(record: object) -> None:
    with pytest.raises(AnswerRefused):
        pull_request_of(record, squash())


def test_the_pulls_of_a_commit_give_the_one_merged_as_the_change() -> None:
    change = squash("No number")
    own, other = pull(5, HEAD, SQUASH), pull(6, SECOND, MERGE)
    assert pull_request_for_commit([other, own], change) == PullRequest(5, HEAD)
    assert pull_request_for_commit([other], change) is None
    assert pull_request_for_commit([own, pull(7, SECOND, SQUASH)], change) is None  # never guess
    assert pull_request_for_commit([pull(5, HEAD, SQUASH, merged=False)], change) is None


def run(run_id: int, **fields: Any) -> dict[str, Any]:
    record = {
        "id": run_id,
        "run_attempt": 1,
        "event": "pull_request",
        "head_sha": HEAD,
        "status": "completed",
        "conclusion": "success",
        "pull_requests": [],
    }
    record.update(fields)
    return record


def outcome_of(records: list[dict[str, Any]]) -> tuple[str, int | None]:
    choice = choose_ci_run(records, HEAD)
    assert isinstance(choice, CiChoice)
    return choice.outcome, choice.run.id if choice.run is not None else None


def test_the_newest_relevant_run_decides() -> None:
    assert outcome_of([]) == ("no-ci-run", None)
    assert outcome_of([run(1, event="push"), run(2, head_sha=SECOND)]) == ("no-ci-run", None)
    assert outcome_of([run(5), run(9, status="in_progress", conclusion=None)]) == (
        "in-progress",
        9,
    )
    assert outcome_of([run(9, run_attempt=2, conclusion="success"), run(5)]) == ("re-run", 9)
    assert outcome_of([run(9, conclusion="cancelled"), run(5)]) == ("cancelled", 9)
    assert outcome_of([run(9, conclusion="failure"), run(5, event="push")]) == ("measured", 9)
    with pytest.raises(AnswerRefused):
        choose_ci_run([{"id": 1}], HEAD)


def outcome(change: Change, ci: HistoryCi | None) -> ChangeOutcome:
    report = make_report({"unit": False}, mode="shadow", tested_sha=change.head)
    return ChangeOutcome(
        change=change,
        report=report,
        report_path="out/report.json",
        preview_reasons={},
        preview_status="planned",
        gaps={},
        requests=0,
        collection_ms=1.0,
        ci=ci,
    )


def test_the_outputs_carry_the_ci_outcomes_only_when_measured() -> None:
    plain = [outcome(squash(), None)]
    unmeasured: dict[str, Any] = history_json(plain)
    assert "ci" not in unmeasured["summary"]
    assert "ci" not in unmeasured["changes"][0]
    assert "CI RUN" not in history_table(plain)
    measured = [
        outcome(squash(), HistoryCi("measured", 34, 901, "r.json", "p.json")),
        outcome(merge(), HistoryCi("pull-request-not-found", preview="q.json")),
    ]
    table = history_table(measured)
    assert table.splitlines()[0].split()[6:10] == ["CI", "PR", "CI", "RUN"]
    assert table.splitlines()[-1] == ci_summary_line(measured)
    assert ci_summary_line(measured) == (
        "jev-select: history: 1 measured, 0 already measured, 1 without a pull request found, "
        "0 without a CI run, 0 in progress, 0 re-run, 0 cancelled."
    )
    view: dict[str, Any] = history_json(measured)
    assert view["changes"][1]["ci"] == {
        "outcome": "pull-request-not-found",
        "pull_request": None,
        "ci_run": None,
        "results": None,
        "preview": "q.json",
    }
    assert list(view["summary"]["ci"]) == list(c.HISTORY_CI_OUTCOMES)
