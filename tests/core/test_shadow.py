"""Shadow analysis (docs/reference.md, "Shadow analysis"): the pure analyzer, the aggregate view and
``jev-select analyze``."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support.reports import TESTED, make_report

from jev_select.cli import main
from jev_select.core.jsonutil import pretty_json
from jev_select.core.report import validate_report
from jev_select.core.shadow import (
    Analysis,
    AnalysisError,
    aggregate,
    aggregate_json,
    aggregate_table,
    analysis_json,
    analysis_table,
    analyze_shadow,
    shadow_analysis,
)


def result(outcome: str, duration: float = 0, classification: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"result": outcome, "duration_ms": duration}
    if classification is not None:
        entry["classification"] = classification
    return entry


# A shadow run of five tasks where enforce mode would have skipped three.
REPORT = make_report(
    {"unit": True, "docs": False, "e2e": False, "lint": True, "Zeta": False},
)
RESULTS: dict[str, Any] = {
    "tested_sha": TESTED,
    "tasks": {
        "unit": result("success", 1000),
        "docs": result("failure", 250.5, "flaky"),
        "e2e": result("failure", 60000),
        "lint": result("failure", 10, "regression"),
        "Zeta": result("cancelled", 5),
    },
    "relevant_tasks": ["e2e", "unit"],
}


def test_fixture_report_is_valid() -> None:
    validate_report(REPORT)


# ---------------------------------------------------------------------------------------------
# The pure analyzer
# ---------------------------------------------------------------------------------------------


def test_happy_path_counts_would_skip_tasks() -> None:
    analysis = analyze_shadow(REPORT, RESULTS)
    assert list(analysis) == [
        "tested_sha",
        "selection_hash",
        "status",
        "fallback",
        "tasks_total",
        "tasks_would_skip",
        "duration_ms_would_skip",
        "failures_would_miss",
        "skipped_or_cancelled_would_skip",
        "manually_relevant_would_skip",
    ]
    assert analysis["tested_sha"] == TESTED
    assert analysis["selection_hash"] == "e" * 64
    assert analysis["status"] == "planned"
    assert analysis["fallback"] is False
    assert analysis["tasks_total"] == 5
    # Code-unit order: upper case before lower case.
    assert analysis["tasks_would_skip"] == ["Zeta", "docs", "e2e"]
    assert analysis["duration_ms_would_skip"] == 60255.5
    # A failed task that would have run (lint) is not a miss.
    assert analysis["failures_would_miss"] == {
        "regression": [],
        "flaky": ["docs"],
        "infrastructure": [],
        "unknown": ["e2e"],
    }
    assert analysis["skipped_or_cancelled_would_skip"] == ["Zeta"]
    assert analysis["manually_relevant_would_skip"] == ["e2e"]


def test_classification_defaults_to_unknown_and_ignores_successes() -> None:
    report = make_report({"a": False, "b": False, "c": False})
    results = {
        "tested_sha": TESTED,
        "tasks": {
            "a": result("failure", 1),
            "b": result("success", 2, "regression"),
            "c": result("failure", 3, "infrastructure"),
        },
    }
    analysis = analyze_shadow(report, results)
    assert analysis["failures_would_miss"] == {
        "regression": [],
        "flaky": [],
        "infrastructure": ["c"],
        "unknown": ["a"],
    }
    assert analysis["manually_relevant_would_skip"] == []


def test_skipped_and_cancelled_would_skip_tasks() -> None:
    report = make_report({"a": False, "b": False, "c": True, "d": False})
    results = {
        "tested_sha": TESTED,
        "tasks": {
            "a": result("skipped"),
            "b": result("cancelled", 7),
            "c": result("skipped"),
            "d": result("success", 1),
        },
    }
    analysis = analyze_shadow(report, results)
    assert analysis["skipped_or_cancelled_would_skip"] == ["a", "b"]
    misses = analysis["failures_would_miss"]
    assert isinstance(misses, dict)
    assert misses["unknown"] == []
    assert analysis["duration_ms_would_skip"] == 8


def test_manual_labels_intersect_with_would_skip() -> None:
    report = make_report({"a": False, "b": True, "c": False})
    results = {
        "tested_sha": TESTED,
        "tasks": {name: result("success", 1) for name in "abc"},
        "relevant_tasks": ["c", "b"],
    }
    assert analyze_shadow(report, results)["manually_relevant_would_skip"] == ["c"]


def test_fallback_report_has_no_would_skip_tasks() -> None:
    report = make_report({"a": None, "b": None}, status="fallback")
    report["tasks"]["a"]["reasons"] = ["jev-timeout", "shadow-mode"]
    report["tasks"]["b"]["reasons"] = ["jev-timeout", "shadow-mode"]
    validate_report(report)
    results = {"tested_sha": TESTED, "tasks": {"a": result("failure"), "b": result("success")}}
    analysis = analyze_shadow(report, results)
    assert analysis["fallback"] is True
    assert analysis["status"] == "fallback"
    assert analysis["tasks_would_skip"] == []
    assert analysis["duration_ms_would_skip"] == 0


def test_empty_task_table() -> None:
    analysis = analyze_shadow(make_report({}), {"tested_sha": TESTED, "tasks": {}})
    assert analysis["tasks_total"] == 0
    assert analysis["tasks_would_skip"] == []


def _code(report: Any, results: Any) -> str:
    with pytest.raises(AnalysisError) as caught:
        analyze_shadow(report, results)
    assert str(caught.value) == caught.value.code
    return caught.value.code


def _with(base: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    copied = copy.deepcopy(dict(base))
    copied.update(changes)
    return copied


@pytest.mark.parametrize(
    "report",
    [
        make_report({"unit": True}, mode="enforce"),
        _with(make_report({"unit": True}), version=4),
        _with(make_report({"unit": True}), version=5.0),
        _with(make_report({"unit": True}), extra=1),
        _with(make_report({"unit": True}), tested_sha="C" * 40),
        _with(make_report({"unit": True}), skip_below=float("nan")),
        {k: v for k, v in make_report({"unit": True}).items() if k != "observation"},
        [],
        None,
    ],
)
def test_invalid_report_is_an_invalid_measurement(report: Any) -> None:
    results = {"tested_sha": TESTED, "tasks": {"unit": result("success")}}
    assert _code(report, results) == "invalid-shadow-measurement"


@pytest.mark.parametrize(
    "results",
    [
        [],
        None,
        {"tested_sha": "d" * 40, "tasks": {"unit": result("success")}},
        {"tasks": {"unit": result("success")}},
        {"tested_sha": TESTED},
        {"tested_sha": TESTED, "tasks": []},
        {"tested_sha": TESTED, "tasks": {"unit": result("success")}, "notes": "x"},
    ],
)
def test_invalid_results_shape_is_an_invalid_measurement(results: Any) -> None:
    assert _code(make_report({"unit": True}), results) == "invalid-shadow-measurement"


@pytest.mark.parametrize(
    "names",
    [["unit"], ["unit", "docs", "extra"], ["UNIT", "docs"], []],
)
def test_task_ids_must_match_exactly(names: list[str]) -> None:
    report = make_report({"unit": True, "docs": False})
    results = {"tested_sha": TESTED, "tasks": {name: result("success") for name in names}}
    assert _code(report, results) == "task-results-mismatch"


@pytest.mark.parametrize(
    "labels",
    [["unit", "unit"], ["nope"], "unit", [1], {"unit": True}, None],
)
def test_manual_labels_must_be_unique_known_ids(labels: Any) -> None:
    report = make_report({"unit": True, "docs": False})
    results = {
        "tested_sha": TESTED,
        "tasks": {"unit": result("success"), "docs": result("success")},
        "relevant_tasks": labels,
    }
    assert _code(report, results) == "invalid-manual-labels"


@pytest.mark.parametrize(
    "entry",
    [
        {"result": "passed", "duration_ms": 1},
        {"result": "success"},
        {"duration_ms": 1},
        {"result": "success", "duration_ms": -1},
        {"result": "success", "duration_ms": float("inf")},
        {"result": "success", "duration_ms": float("nan")},
        {"result": "success", "duration_ms": 10**400},
        {"result": "success", "duration_ms": True},
        {"result": "success", "duration_ms": "5"},
        {"result": "failure", "duration_ms": 1, "classification": "bug"},
        {"result": "success", "duration_ms": 1, "note": "x"},
        "success",
    ],
)
def test_malformed_task_result(entry: Any) -> None:
    report = make_report({"unit": True, "docs": False})
    results = {"tested_sha": TESTED, "tasks": {"unit": result("success"), "docs": entry}}
    assert _code(report, results) == "invalid-task-result"


def test_a_task_that_did_not_run_in_shadow_mode_is_refused() -> None:
    report = make_report({"unit": True, "docs": False})
    report["tasks"]["docs"]["run"] = False
    results = {
        "tested_sha": TESTED,
        "tasks": {"unit": result("success"), "docs": result("skipped")},
    }
    assert _code(report, results) == "invalid-shadow-effective-selection"


def test_checks_run_in_the_order_of_the_spec() -> None:
    report = make_report({"unit": True, "docs": False})
    report["tasks"]["docs"]["run"] = False
    bad_entry = {"result": "maybe", "duration_ms": 1}
    # Every later problem present at once: the first check wins each time.
    results: dict[str, Any] = {
        "tested_sha": TESTED,
        "tasks": {"unit": bad_entry, "other": bad_entry},
        "relevant_tasks": ["ghost"],
    }
    assert _code(report, results) == "task-results-mismatch"
    results["tasks"] = {"unit": bad_entry, "docs": bad_entry}
    assert _code(report, results) == "invalid-manual-labels"
    results["relevant_tasks"] = ["docs"]
    assert _code(report, results) == "invalid-task-result"
    results["tasks"] = {"unit": result("success"), "docs": result("success")}
    assert _code(report, results) == "invalid-shadow-effective-selection"
    results["tested_sha"] = "f" * 40
    assert _code(report, results) == "invalid-shadow-measurement"


# ---------------------------------------------------------------------------------------------
# Aggregate
# ---------------------------------------------------------------------------------------------


def three_analyses() -> list[Analysis]:
    second = make_report({"api": False, "web": False}, tested_sha="d" * 40)
    third = make_report({"api": None, "web": None}, status="fallback", tested_sha="f" * 40)
    for decision in third["tasks"].values():
        decision["reasons"] = ["jev-error", "shadow-mode"]
    return [
        shadow_analysis(REPORT, RESULTS),
        shadow_analysis(
            second,
            {
                "tested_sha": "d" * 40,
                "tasks": {
                    "api": result("failure", 100, "infrastructure"),
                    "web": result("success", 20),
                },
                "relevant_tasks": ["web"],
            },
        ),
        shadow_analysis(
            third,
            {"tested_sha": "f" * 40, "tasks": {"api": result("success"), "web": result("success")}},
        ),
    ]


def test_aggregate_over_three_runs() -> None:
    analyses = three_analyses()
    view = aggregate_json(aggregate(analyses))
    assert view["pull_requests"] == 3
    assert view["fallback_runs"] == 1
    assert view["tasks_total"] == 9
    assert view["tasks_would_skip"] == 5
    assert view["duration_ms_would_skip"] == 60255.5 + 120
    assert view["failures_would_miss"] == {
        "regression": 0,
        "flaky": 1,
        "infrastructure": 1,
        "unknown": 1,
    }
    assert view["skipped_or_cancelled_would_skip"] == 1
    assert view["manually_relevant_would_skip"] == 2
    assert view["analyses"] == [analysis_json(analysis) for analysis in analyses]


def test_tables_name_every_run() -> None:
    analyses = three_analyses()
    single = analysis_table(analyses[0])
    assert TESTED in single
    assert "Zeta, docs, e2e" in single
    table = aggregate_table(aggregate(analyses))
    lines = table.splitlines()
    assert len(lines) == 5  # header, three runs, total
    assert lines[1].startswith("c" * 12)
    assert lines[3].split()[1] == "fallback"
    assert lines[-1].startswith("total (3)")


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def write(path: Path, value: Any) -> str:
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_command_prints_the_analysis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "report.json", pretty_json(REPORT) + "\n")
    results = write(tmp_path / "results.json", RESULTS)
    code, out, err = run(capsys, "analyze", report, results)
    assert (code, err) == (0, "")
    assert out == pretty_json(analyze_shadow(REPORT, RESULTS)) + "\n"
    assert out.startswith('{\n  "tested_sha": "' + TESTED + '",\n')


def test_command_table_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "report.json", REPORT)
    results = write(tmp_path / "results.json", RESULTS)
    code, out, err = run(capsys, "analyze", "--format", "table", report, results)
    assert (code, err) == (0, "")
    assert out == analysis_table(shadow_analysis(REPORT, RESULTS))


def test_command_aggregates_several_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = make_report({"api": False}, tested_sha="d" * 40)
    second_results = {"tested_sha": "d" * 40, "tasks": {"api": result("failure", 4)}}
    paths = [
        write(tmp_path / "r1.json", REPORT),
        write(tmp_path / "s1.json", RESULTS),
        write(tmp_path / "r2.json", second),
        write(tmp_path / "s2.json", second_results),
    ]
    code, out, err = run(capsys, "analyze", *paths)
    assert (code, err) == (0, "")
    view = json.loads(out)
    assert view["pull_requests"] == 2
    assert view["tasks_would_skip"] == 4
    assert view["failures_would_miss"]["unknown"] == 2
    assert [item["tested_sha"] for item in view["analyses"]] == [TESTED, "d" * 40]
    code, out, _ = run(capsys, "analyze", "--format", "table", *paths)
    assert code == 0
    assert out.splitlines()[-1].startswith("total (2)")


def _shadow_with_run_false() -> dict[str, Any]:
    report = make_report({"unit": True})
    report["tasks"]["unit"]["run"] = False
    return report


FAILING_PAIRS: list[tuple[Any, Any, str]] = [
    ("not json", RESULTS, "invalid-shadow-measurement"),
    ('{"version": 5, "version": 5}', RESULTS, "invalid-shadow-measurement"),
    (REPORT, '{"tested_sha": NaN}', "invalid-shadow-measurement"),
    (make_report({"unit": True}, mode="enforce"), RESULTS, "invalid-shadow-measurement"),
    (REPORT, _with(RESULTS, tested_sha="0" * 40), "invalid-shadow-measurement"),
    (REPORT, _with(RESULTS, tasks={"unit": result("success")}), "task-results-mismatch"),
    (REPORT, _with(RESULTS, relevant_tasks=["unit", "unit"]), "invalid-manual-labels"),
    (
        REPORT,
        _with(RESULTS, tasks={**RESULTS["tasks"], "docs": result("success", -5)}),
        "invalid-task-result",
    ),
    (
        _shadow_with_run_false(),
        {"tested_sha": TESTED, "tasks": {"unit": result("success")}},
        "invalid-shadow-effective-selection",
    ),
]


@pytest.mark.parametrize(("report", "results", "code"), FAILING_PAIRS)
def test_command_failure_line_and_exit_code(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    report: Any,
    results: Any,
    code: str,
) -> None:
    report_path = write(tmp_path / "report.json", report)
    results_path = write(tmp_path / "results.json", results)
    exit_code, out, err = run(capsys, "analyze", report_path, results_path)
    assert exit_code == 1
    assert out == ""
    assert err == f"jev-select: analysis failed ({code}).\n"


def test_command_missing_file_is_an_invalid_measurement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write(tmp_path / "results.json", RESULTS)
    code, out, err = run(capsys, "analyze", str(tmp_path / "absent.json"), results)
    assert (code, out) == (1, "")
    assert err == "jev-select: analysis failed (invalid-shadow-measurement).\n"


def test_one_bad_pair_fails_the_whole_aggregate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = [write(tmp_path / "r.json", REPORT), write(tmp_path / "s.json", RESULTS)]
    bad = [write(tmp_path / "r2.json", REPORT), write(tmp_path / "s2.json", {"tasks": {}})]
    code, out, err = run(capsys, "analyze", *good, *bad)
    assert (code, out) == (1, "")
    assert err == "jev-select: analysis failed (invalid-shadow-measurement).\n"


def test_github_mode_prints_the_failure_as_a_workflow_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    results = write(tmp_path / "results.json", RESULTS)
    code, out, err = run(capsys, "analyze", str(tmp_path / "absent.json"), results)
    assert (code, err) == (1, "")
    assert out == "::error::jev-select: analysis failed (invalid-shadow-measurement).\n"


@pytest.mark.parametrize(
    "args",
    [
        ["analyze"],
        ["analyze", "only-one.json"],
        ["analyze", "a", "b", "c"],
        ["analyze", "--format", "yaml", "a", "b"],
    ],
)
def test_bad_usage_is_an_invalid_invocation(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert err.startswith("usage: jev-select analyze ")
    assert "\njev-select analyze: error: " in err


def _with_ci(**overrides: Any) -> dict[str, Any]:
    ci: dict[str, Any] = {
        "version": 1,
        "workflow": "ci.yml",
        "run_id": 7,
        "run_attempt": 1,
        "jobs": [
            {
                "name": "e2e (1)",
                "job": "e2e",
                "tasks": ["e2e"],
                "result": "failure",
                "duration_ms": 61_000,
            },
            {"name": "plan", "job": "plan", "tasks": [], "result": "success", "duration_ms": 4_000},
        ],
        "needs": {"e2e": ["plan"], "plan": []},
    }
    ci.update(overrides)
    return {**RESULTS, "ci": ci}


def test_a_ci_block_is_read_and_leaves_the_analysis_as_it_was() -> None:
    assert analyze_shadow(REPORT, _with_ci()) == analyze_shadow(REPORT, RESULTS)


@pytest.mark.parametrize(
    "overrides",
    [
        {"version": 2},
        {
            "jobs": [
                {"name": "x", "job": None, "tasks": ["nope"], "result": "success", "duration_ms": 1}
            ]
        },
        {
            "jobs": [
                {"name": "x", "job": None, "tasks": [], "result": "success", "duration_ms": 1.5}
            ]
        },
        {"extra": True},
    ],
    ids=["unknown-version", "unknown-task", "fractional-duration", "unknown-key"],
)
def test_a_ci_block_not_understood_makes_the_pair_unreadable(overrides: dict[str, Any]) -> None:
    with pytest.raises(AnalysisError) as caught:
        analyze_shadow(REPORT, _with_ci(**overrides))
    assert caught.value.code == "invalid-shadow-measurement"
