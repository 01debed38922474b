"""``analyze`` and ``calibrate`` read a measurement through one reader with the same refusals.

A report can pass its schema and still carry proposals its own scores do not give: a completed
group without scores, or a proposal edited after the run. ``calibrate`` always refused such a
report; ``analyze`` counted its skips. Both now refuse it, with the same code, and accept the
same pairs.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from support.calibration import (
    ALL_PAIRS,
    REPORT_A,
    REPORT_B,
    RESULTS_A,
    RESULTS_B,
    write_measurement,
)

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.calibrate import Measurement, calibrate, calibration_json
from jev_select.core.report import validate_report
from jev_select.core.results import parse_results
from jev_select.core.shadow import AnalysisError, analyze_shadow
from jev_select.edges.readers import read_measurement


def _without_scores(report: dict[str, Any], group: int = 0) -> dict[str, Any]:
    changed = copy.deepcopy(report)
    changed["observation"]["chunks"][group]["probabilities"] = None
    return changed


def _edited_proposal(report: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(report)
    changed["tasks"]["ui"]["proposed_run"] = False  # its 0.05 is not below 0.05
    return changed


REFUSED = {
    "completed-group-without-scores": (_without_scores(REPORT_A), RESULTS_A),
    "second-group-without-scores": (_without_scores(REPORT_B, 1), RESULTS_B),
    "edited-proposal": (_edited_proposal(REPORT_A), RESULTS_A),
}


@pytest.fixture(autouse=True)
def _local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


@pytest.mark.parametrize("name", list(REFUSED))
def test_the_report_is_valid_by_its_schema(name: str) -> None:
    # What is refused is not a malformed file: only the scores and the proposals disagree.
    validate_report(REFUSED[name][0])


@pytest.mark.parametrize("name", list(REFUSED))
def test_analyze_and_calibrate_refuse_it_with_the_same_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    arguments = write_measurement(tmp_path, *REFUSED[name])
    for command, template in (
        ("analyze", c.ANALYSIS_FAILURE_TEMPLATE),
        ("calibrate", c.CALIBRATE_FAILURE_TEMPLATE),
    ):
        code = main([command, *arguments])
        captured = capsys.readouterr()
        assert (code, captured.out) == (1, ""), command
        assert captured.err == (
            template.format(code=c.ANALYSIS_INVALID_SHADOW_MEASUREMENT) + "\n"
        ), command


@pytest.mark.parametrize("name", list(REFUSED))
def test_the_library_functions_refuse_it_too(name: str, tmp_path: Path) -> None:
    report, results = REFUSED[name]
    for action in (
        lambda: analyze_shadow(report, results),
        lambda: calibrate([Measurement(report, results)]),
        lambda: read_measurement(*write_measurement(tmp_path, report, results)),
    ):
        with pytest.raises(AnalysisError) as raised:
            action()
        assert raised.value.code == c.ANALYSIS_INVALID_SHADOW_MEASUREMENT


def test_an_earlier_check_keeps_its_own_code(tmp_path: Path) -> None:
    # The new check runs last: a pair failing an earlier one still names that one.
    report, results = REFUSED["completed-group-without-scores"]
    wrong = copy.deepcopy(results)
    del wrong["tasks"]["api"]
    with pytest.raises(AnalysisError) as raised:
        read_measurement(*write_measurement(tmp_path, report, wrong))
    assert raised.value.code == c.ANALYSIS_TASK_RESULTS_MISMATCH


@pytest.mark.parametrize("pair", range(len(ALL_PAIRS)))
def test_every_pair_one_accepts_the_other_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pair: int
) -> None:
    report, results = ALL_PAIRS[pair]
    arguments = write_measurement(tmp_path, report, results)
    measurement = read_measurement(*arguments)
    typed_results = parse_results(results)
    assert typed_results is not None
    assert measurement == Measurement(report, typed_results)
    assert main(["analyze", *arguments]) == 0
    assert json.loads(capsys.readouterr().out) == analyze_shadow(report, results)
    assert main(["calibrate", *arguments, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == calibration_json(calibrate([measurement]))
