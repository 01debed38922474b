"""``jev-select calibrate``: pairs and directories in, a table, JSON or Markdown out."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.calibration import ALL_PAIRS, REPORT_A, RESULTS_A, write_measurement

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.calibrate import (
    Calibration,
    Measurement,
    calibrate,
    calibration_json,
    calibration_markdown,
)
from jev_select.core.report import report_text


@pytest.fixture(autouse=True)
def _local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _pairs(tmp_path: Path) -> list[str]:
    args: list[str] = []
    for index, (report, results) in enumerate(ALL_PAIRS):
        args += write_measurement(tmp_path / f"run-{index}", report, results)
    return args


def _expected() -> Calibration:
    return calibrate([Measurement(report, results) for report, results in ALL_PAIRS])


def test_json_from_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "calibrate", *_pairs(tmp_path), "--format", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == calibration_json(_expected())
    first = json.loads(out)["thresholds"][0]
    assert list(first) == [
        "threshold",
        "changes",
        "tasks_judged",
        "would_skip",
        "minutes_saved",
        "failures_would_miss",
        "manually_relevant_would_skip",
        "regression_miss_upper_bound",
    ]
    assert list(first["failures_would_miss"]) == list(c.FAILURE_CLASSIFICATIONS)


def test_a_directory_is_read_in_name_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _pairs(tmp_path)
    (tmp_path / "unlabelled").mkdir()
    (tmp_path / "unlabelled" / "report.json").write_text(report_text(REPORT_A), "utf-8")
    code, out, err = run(capsys, "calibrate", str(tmp_path), "--format", "markdown")
    assert (code, err) == (0, "")
    assert out == calibration_markdown(_expected())


def test_table_and_thresholds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "calibrate", *_pairs(tmp_path), "--thresholds", "0.5,0.05")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[1:3]] == ["0.05", "0.5"]
    assert lines[3].startswith("recommended: none (too few changes")


def test_a_bad_measurement_fails_with_the_analyze_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = json.loads(json.dumps(RESULTS_A))
    wrong["tasks"]["api"]["duration_ms"] = -1
    args = write_measurement(tmp_path / "a", REPORT_A, wrong)
    code, out, err = run(capsys, "calibrate", *args)
    assert (code, out) == (1, "")
    assert err == "jev-select: calibration failed (invalid-task-result).\n"


def test_an_unreadable_file_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "calibrate", str(tmp_path / "r.json"), str(tmp_path / "s.json"))
    assert (code, out) == (1, "")
    assert err == "jev-select: calibration failed (invalid-shadow-measurement).\n"


@pytest.mark.parametrize("thresholds", ["", "0.1,x", "2", "0.1;0.2"])
def test_bad_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], thresholds: str
) -> None:
    code, out, err = run(capsys, "calibrate", *_pairs(tmp_path), "--thresholds", thresholds)
    assert (code, out) == (2, "")
    assert "--thresholds" in err


def test_odd_file_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "calibrate", *_pairs(tmp_path)[:3])
    assert code == 2
    assert "pairs" in err


def test_plot_without_matplotlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    plot = tmp_path / "plot.png"
    code, out, err = run(capsys, "calibrate", *_pairs(tmp_path), "--plot", str(plot))
    assert (code, out) == (1, "")
    assert err == c.CALIBRATE_PLOT_UNAVAILABLE + "\n"
    assert not plot.exists()


def test_plot_with_matplotlib(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    plot = tmp_path / "plot.png"
    code, _, err = run(capsys, "calibrate", *_pairs(tmp_path), "--plot", str(plot))
    assert (code, err) == (0, "")
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
