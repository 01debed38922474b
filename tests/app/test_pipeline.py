"""``app.pipeline``: one planning run from inputs to a typed, validated report.

A temporary git repository plays the pull request and a stand-in transport plays Jev, so the run
is the production pipeline with nothing replaced but the network.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.fakejev import low_scores_answer
from support.gitrepo import GitRepo
from support.runs import pull_request_context

from jev_select import contracts as c
from jev_select.app import pipeline
from jev_select.app.pipeline import RunContext, preview_change, run_plan_pipeline
from jev_select.core.inputs import parse_inputs
from jev_select.core.models import Inputs
from jev_select.core.report import report_text, validate_report
from jev_select.core.report_v5 import ReportV5, report_json

TASKS = """\
docs:
  description: Builds the documentation site.
  force_paths: ["docs/**"]
unit:
  description: Runs the unit tests of the application.
"""


class Answering:
    """A transport that scores every asked task 0.01 and records each body it was given."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def __call__(
        self,
        endpoint: str,
        api_key: str,
        body: bytes,
        *,
        deadline: float,
        clock: Callable[[], float],
    ) -> bytes:
        self.bodies.append(body)
        return low_scores_answer(body)


def _inputs(**extra: str) -> Inputs:
    return parse_inputs(
        {
            c.INPUT_TASKS: TASKS,
            c.INPUT_API_KEY: "pipeline-key",
            c.INPUT_ALLOW_EXTERNAL_CONTEXT: "true",
            c.INPUT_TESTED_REF: c.TESTED_REF_HEAD,
            **extra,
        }
    )


@pytest.fixture
def change(tmp_path: Path) -> tuple[GitRepo, str, str]:
    repo = GitRepo.init(tmp_path / "origin")
    base = repo.commit({"src/app.py": "print(1)\n", "docs/index.md": "# Docs\n"})
    head = repo.commit({"src/app.py": "print(2)\n"}, parents=[base])
    return repo, base, head


def _context(
    tmp_path: Path, change: tuple[GitRepo, str, str], send: Any, *, pull_request: bool = True
) -> RunContext:
    repo, base, head = change
    return pull_request_context(tmp_path, repo, base, head, send, pull_request=pull_request)


def test_a_planned_run_gives_a_typed_valid_report(
    tmp_path: Path, change: tuple[GitRepo, str, str]
) -> None:
    send = Answering()
    result = run_plan_pipeline(
        _inputs(), _context(tmp_path, change, send), validated_at=time.monotonic()
    )
    assert isinstance(result.report, ReportV5)
    validate_report(result.report)
    assert result.report.status == c.STATUS_PLANNED
    assert result.report.tasks["unit"].reasons == (c.REASON_JEV_BELOW_THRESHOLD,)
    assert not result.report.tasks["unit"].run
    assert result.plan.selected == ()
    assert len(send.bodies) == 1
    # The file text is the JSON value of the typed report, keys in the contract's order.
    assert list(json.loads(report_text(result.report))) == list(c.REPORT_FIELDS)
    assert json.loads(report_text(result.report)) == json.loads(
        json.dumps(report_json(result.report))
    )


def test_a_bypass_needs_no_git_and_still_reports(
    tmp_path: Path, change: tuple[GitRepo, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_collection(*_: object) -> None:
        raise AssertionError("a bypass collects nothing")

    monkeypatch.setattr(pipeline, "_collect", no_collection)
    send = Answering()
    context = _context(tmp_path, change, send, pull_request=False)
    result = run_plan_pipeline(_inputs(), context, validated_at=time.monotonic())
    validate_report(result.report)
    assert result.report.status == c.STATUS_BYPASSED
    assert result.report.observation is None
    assert result.report.durations_ms.jev is None
    assert result.plan.selected == ("docs", "unit")
    assert send.bodies == []


def test_a_previewed_change_is_sent_as_it_was_grouped(
    tmp_path: Path, change: tuple[GitRepo, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    send = Answering()
    inputs = _inputs()
    preview = preview_change(inputs, _context(tmp_path, change, send))
    prepared = preview.collected.prepared
    assert prepared is not None
    assert preview.requests == len(prepared.requests) == 1

    def no_second_collection(*_: object) -> None:
        raise AssertionError("the preview already collected this change")

    monkeypatch.setattr(pipeline, "_collect", no_second_collection)
    result = run_plan_pipeline(
        inputs,
        _context(tmp_path, change, send),
        validated_at=time.monotonic(),
        collected=preview.collected,
    )
    assert send.bodies == [request.body for request in prepared.requests]
    assert result.report.status == c.STATUS_PLANNED
    change_set = preview.collected.collection.change_set
    assert change_set is not None
    assert result.report.diff_hash == change_set.diff_hash
