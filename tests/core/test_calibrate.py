"""``core.calibrate``: shadow reports re-decided at several thresholds, against hand-computed
figures (tests/support/calibration.py explains each fixture)."""

from __future__ import annotations

import copy
import math

import pytest
from support.calibration import (
    ALL_PAIRS,
    REPORT_A,
    REPORT_B,
    REPORT_C,
    REPORT_D,
    REPORT_E,
    RESULTS_A,
    RESULTS_B,
    observed_report,
    results,
)

from jev_select import contracts as c
from jev_select.core.calibrate import (
    Calibration,
    Measurement,
    calibrate,
    calibration_json,
    calibration_markdown,
    calibration_table,
    clopper_pearson_upper,
    parse_thresholds,
    redecide,
    regularized_beta,
)
from jev_select.core.convert import unstructure
from jev_select.core.report_v5 import parse_report
from jev_select.core.shadow import AnalysisError, analyze_shadow, shadow_analysis

MEASUREMENTS = [Measurement(report, res) for report, res in ALL_PAIRS]


def _misses(regression: int = 0, flaky: int = 0, unknown: int = 0) -> dict[str, int]:
    return {"regression": regression, "flaky": flaky, "infrastructure": 0, "unknown": unknown}


def _bound(misses: int, trials: int) -> float | None:
    return clopper_pearson_upper(misses, trials)


# (threshold, would_skip, minutes_saved, misses, manually relevant skipped), worked out by hand:
# A skips api from 0.05 (0.02 is retained at 0.02: equality keeps), ui from 0.1, unit from 0.2;
# B skips y from 0.02 (0.01 kept at 0.01), x only at 0.5 (0.3 is retained at 0.3);
# C (bypassed), D (incomplete observation) and E (collection error) never skip.
EXPECTED = [
    (0.01, 0, 0.0, _misses(), 0),
    (0.02, 1, 2.0, _misses(), 0),
    (0.05, 2, 3.0, _misses(), 0),
    (0.1, 3, 3.5, _misses(flaky=1), 1),
    (0.2, 4, 6.5, _misses(regression=1, flaky=1), 1),
    (0.3, 4, 6.5, _misses(regression=1, flaky=1), 1),
    (0.5, 5, 16.5, _misses(regression=1, flaky=1, unknown=1), 1),
]


def test_every_threshold_matches_the_hand_computed_figures() -> None:
    view = calibrate(MEASUREMENTS)
    assert [row.threshold for row in view.thresholds] == list(c.CALIBRATE_THRESHOLDS)
    for row, (threshold, skip, minutes, misses, relevant) in zip(
        view.thresholds, EXPECTED, strict=True
    ):
        assert unstructure(row) == {
            "threshold": threshold,
            "changes": 5,
            "tasks_judged": 5,  # A's unit, api, ui and B's x, y; mandatory and forced never
            "would_skip": skip,
            "minutes_saved": minutes,
            "failures_would_miss": misses,
            "manually_relevant_would_skip": relevant,
            "regression_miss_upper_bound": _bound(misses["regression"], skip),
        }


def test_too_few_scored_changes_recommend_nothing() -> None:
    view = calibrate(MEASUREMENTS)
    assert view.recommended is None
    # Only A and B were judged by scores.
    assert view.note == c.CALIBRATE_NOTE_TOO_FEW.format(scored=2, minimum=30)
    assert list(calibration_json(view)) == ["thresholds", "recommended", "note"]


def test_the_highest_safe_threshold_is_recommended() -> None:
    view = calibrate(MEASUREMENTS[:2] * 15)  # 30 scored changes
    assert view.recommended == 0.05  # 0.1 skips ui, labelled relevant; 0.2 misses a regression
    assert view.note == c.CALIBRATE_NOTE_RECOMMENDED.format(scored=30)
    row = view.thresholds[2]
    assert (row.would_skip, row.regression_miss_upper_bound) == (30, _bound(0, 30))


def test_no_safe_threshold() -> None:
    view = calibrate(MEASUREMENTS[:2] * 15, [0.2, 0.5])
    assert view.recommended is None
    assert view.note == c.CALIBRATE_NOTE_NONE_SAFE.format(scored=30)


def test_equality_at_the_threshold_keeps_the_task() -> None:
    assert redecide(parse_report(REPORT_A), 0.02).would_skip == ()
    assert redecide(parse_report(REPORT_A), 0.020000000000000004).would_skip == ("api",)
    assert redecide(parse_report(REPORT_A), 0.05).would_skip == ("api",)
    assert redecide(parse_report(REPORT_B), 0.3).would_skip == ("y",)


def test_threshold_zero_never_skips() -> None:
    zero = observed_report({"x": (True, ["jev-at-or-above-threshold"])}, [{"x": 0.0}])
    assert redecide(parse_report(zero), 0.0).would_skip == ()
    assert redecide(parse_report(zero), 0.01).would_skip == ("x",)


def test_forced_and_mandatory_tasks_never_skip() -> None:
    for threshold in (0.5, 1.0):
        assert "lint" not in redecide(parse_report(REPORT_A), threshold).would_skip
        assert "docs" not in redecide(parse_report(REPORT_A), threshold).would_skip
        assert redecide(parse_report(REPORT_C), threshold).would_skip == ()
        assert redecide(parse_report(REPORT_E), threshold).would_skip == ()
    assert redecide(parse_report(REPORT_C), 1.0).judged == ()


def test_metadata_unavailable_tasks_stay_mandatory() -> None:
    report = observed_report(
        {"x": (True, ["metadata-unavailable"]), "y": (False, ["jev-below-threshold"])},
        [{"x": 0.0, "y": 0.0}],
    )
    assert redecide(parse_report(report), 0.5).would_skip == ("y",)
    assert redecide(parse_report(report), 0.5).judged == ("y",)


def test_an_incomplete_observation_never_skips() -> None:
    for threshold in c.CALIBRATE_THRESHOLDS:
        assert redecide(parse_report(REPORT_D), threshold).would_skip == ()
    # analyze reads the stored proposal and counts x: the one documented difference.
    assert analyze_shadow(
        REPORT_D, results({"x": ("success", 1, None), "y": ("success", 1, None)})
    )["tasks_would_skip"] == ["x"]


def test_a_candidate_without_a_decision_makes_the_change_run() -> None:
    # z has no score in the second group: at 0.5 its decision is null, so every task runs
    # (docs/reference.md, "Mandatory tasks and the effective run") although x and y are below in
    # both groups; at 0.05 z is kept by group one.
    report = observed_report(
        {
            "x": (False, ["jev-below-threshold"]),
            "y": (False, ["jev-below-threshold"]),
            "z": (True, ["jev-at-or-above-threshold"]),
        },
        [{"x": 0.0, "y": 0.0, "z": 0.4}, {"x": 0.0, "y": 0.0}],
    )
    assert redecide(parse_report(report), 0.05).would_skip == ("x", "y")
    assert redecide(parse_report(report), 0.5).would_skip == ()
    assert redecide(parse_report(report), 0.5).judged == ("x", "y")


@pytest.mark.parametrize("pair", range(len(ALL_PAIRS)))
def test_at_the_reports_own_threshold_it_agrees_with_analyze(pair: int) -> None:
    report, res = ALL_PAIRS[pair]
    analysis = shadow_analysis(report, res)
    again = redecide(parse_report(report), report["skip_below"])
    if report["observation"] is not None and report["observation"]["status"] == "incomplete":
        assert again.would_skip == ()  # see test_an_incomplete_observation_never_skips
    elif analysis.fallback:
        assert again.would_skip == () == analysis.tasks_would_skip
    else:
        assert again.would_skip == analysis.tasks_would_skip
    row = calibrate([Measurement(report, res)], [report["skip_below"]]).thresholds[0]
    if report is not REPORT_D:
        assert row.would_skip == len(analysis.tasks_would_skip)
        assert row.minutes_saved * 60_000 == analysis.duration_ms_would_skip
        assert row.failures_would_miss == {
            name: len(ids) for name, ids in analysis.failures_would_miss.items()
        }
        assert row.manually_relevant_would_skip == len(analysis.manually_relevant_would_skip)


def test_a_measurement_analyze_refuses_is_refused() -> None:
    wrong = copy.deepcopy(RESULTS_A)
    del wrong["tasks"]["api"]
    with pytest.raises(AnalysisError) as raised:
        calibrate([Measurement(REPORT_A, wrong)])
    assert raised.value.code == c.ANALYSIS_TASK_RESULTS_MISMATCH


def test_proposals_that_do_not_follow_from_the_scores_are_refused() -> None:
    tampered = copy.deepcopy(REPORT_A)
    tampered["tasks"]["ui"]["proposed_run"] = False  # 0.05 is not below 0.05
    with pytest.raises(AnalysisError) as raised:
        calibrate([Measurement(tampered, RESULTS_A)])
    assert raised.value.code == c.ANALYSIS_INVALID_SHADOW_MEASUREMENT


def test_results_without_a_classification_count_as_unknown() -> None:
    row = calibrate([Measurement(REPORT_B, RESULTS_B)], [0.5]).thresholds[0]
    assert row.failures_would_miss == _misses(unknown=1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.1", (0.1,)),
        ("0.5, 0.1,0.1", (0.1, 0.5)),
        ("0,1", (0.0, 1.0)),
        ("", None),
        ("0.1,", None),
        ("1.5", None),
        ("-0.1", None),
        ("nan", None),
        ("1e-2", None),
    ],
)
def test_parse_thresholds(text: str, expected: tuple[float, ...] | None) -> None:
    assert parse_thresholds(text) == expected


# ---------------------------------------------------------------------------------------------
# The bound
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("trials", [1, 3, 10, 30, 299, 5000])
def test_no_miss_has_the_closed_form(trials: int) -> None:
    upper = clopper_pearson_upper(0, trials)
    assert upper is not None
    assert math.isclose(upper, 1 - 0.05 ** (1 / trials), rel_tol=1e-9)


@pytest.mark.parametrize(
    ("misses", "trials", "expected"),
    # Published one-sided 95% Clopper–Pearson upper limits (4 decimals).
    [(1, 10, 0.3942), (2, 20, 0.2826), (5, 100, 0.1023)],
)
def test_known_upper_limits(misses: int, trials: int, expected: float) -> None:
    upper = clopper_pearson_upper(misses, trials)
    assert upper is not None
    assert round(upper, 4) == expected


def test_the_bound_is_the_binomial_tail() -> None:
    # At the bound p, P(X <= k) = 0.05 exactly: the definition, checked by direct summation.
    for misses, trials in [(0, 7), (2, 9), (4, 25)]:
        p = clopper_pearson_upper(misses, trials)
        assert p is not None
        tail = sum(math.comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(misses + 1))
        assert math.isclose(tail, 0.05, rel_tol=1e-9)


def test_bound_edges() -> None:
    assert clopper_pearson_upper(0, 0) is None
    assert clopper_pearson_upper(3, 3) == 1.0


def test_regularized_beta_matches_the_binomial_sum() -> None:
    # I_x(a, n - a + 1) = P(Binomial(n, x) >= a).
    for a, n, x in [(2, 4, 0.4), (1, 1, 0.3), (5, 12, 0.7), (30, 40, 0.72)]:
        expected = sum(math.comb(n, k) * x**k * (1 - x) ** (n - k) for k in range(a, n + 1))
        assert math.isclose(regularized_beta(a, n - a + 1, x), expected, rel_tol=1e-10)


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def _view() -> Calibration:
    return calibrate(MEASUREMENTS, [0.05, 0.5])


def test_table() -> None:
    lines = calibration_table(_view()).splitlines()
    assert lines[0].split() == [
        "THRESHOLD",
        "CHANGES",
        "JUDGED",
        "WOULD-SKIP",
        "MINUTES-SAVED",
        "MISSED-REGRESSION",
        "MISSED-FLAKY",
        "MISSED-INFRASTRUCTURE",
        "MISSED-UNKNOWN",
        "RELEVANT-SKIPPED",
        "REGRESSION-UB95",
    ]
    assert lines[1].split() == ["0.05", "5", "5", "2", "3.0", "0", "0", "0", "0", "0", "0.7764"]
    assert lines[2].split() == ["0.5", "5", "5", "5", "16.5", "1", "1", "0", "1", "1", "0.6574"]
    assert (
        lines[3]
        == "recommended: none (" + c.CALIBRATE_NOTE_TOO_FEW.format(scored=2, minimum=30) + ")"
    )


def test_markdown() -> None:
    text = calibration_markdown(_view())
    lines = text.splitlines()
    assert lines[0] == c.CALIBRATE_MARKDOWN_TITLE
    assert lines[2].startswith("| THRESHOLD | CHANGES |")
    assert lines[4] == "| 0.05 | 5 | 5 | 2 | 3.0 | 0 | 0 | 0 | 0 | 0 | 0.7764 |"
    assert lines[-1] == c.CALIBRATE_MARKDOWN_FOOTNOTE
    assert REPORT_A["tested_sha"] not in text
