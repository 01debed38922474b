"""``jev-select calibrate``: pairs and directories in, a table, JSON or Markdown out."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.calibration import (
    ALL_PAIRS,
    REPORT_A,
    REPORT_C,
    REPORT_E,
    RESULTS_A,
    RESULTS_C,
    RESULTS_E,
    write_measurement,
)
from support.cliutil import run_main

from jev_select import contracts as c
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


def _pairs(tmp_path: Path) -> list[str]:
    args: list[str] = []
    for index, (report, results) in enumerate(ALL_PAIRS):
        args += write_measurement(tmp_path / f"run-{index}", report, results)
    return args


def _expected() -> Calibration:
    return calibrate([Measurement(report, results) for report, results in ALL_PAIRS])


def test_json_from_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, "calibrate", *_pairs(tmp_path), "--format", "json")
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
    code, out, err = run_main(capsys, "calibrate", str(tmp_path), "--format", "markdown")
    assert code == 0
    assert err == c.CALIBRATE_LEFT_OUT_TEMPLATE.format(left_out=1, reports=6) + "\n"
    assert out == calibration_markdown(_expected())


def test_table_and_thresholds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, "calibrate", *_pairs(tmp_path), "--thresholds", "0.5,0.05")
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
    code, out, err = run_main(capsys, "calibrate", *args)
    assert (code, out) == (1, "")
    assert err == "jev-select: calibration failed (invalid-task-result).\n"


def test_an_unreadable_file_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(
        capsys, "calibrate", str(tmp_path / "r.json"), str(tmp_path / "s.json")
    )
    assert (code, out) == (1, "")
    assert err == "jev-select: calibration failed (invalid-shadow-measurement).\n"


@pytest.mark.parametrize("thresholds", ["", "0.1,x", "2", "0.1;0.2"])
def test_bad_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], thresholds: str
) -> None:
    code, out, err = run_main(capsys, "calibrate", *_pairs(tmp_path), "--thresholds", thresholds)
    assert (code, out) == (2, "")
    assert "--thresholds" in err


def test_odd_file_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(capsys, "calibrate", *_pairs(tmp_path)[:3])
    assert code == 2
    assert "pairs" in err


def test_plot_without_matplotlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    plot = tmp_path / "plot.png"
    code, out, err = run_main(capsys, "calibrate", *_pairs(tmp_path), "--plot", str(plot))
    assert (code, out) == (1, "")
    assert err == c.CALIBRATE_PLOT_UNAVAILABLE + "\n"
    assert not plot.exists()


def test_plot_with_matplotlib(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    plot = tmp_path / "plot.png"
    code, _, err = run_main(capsys, "calibrate", *_pairs(tmp_path), "--plot", str(plot))
    assert (code, err) == (0, "")
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


# ---------------------------------------------------------------------------------------------
# Directories: reports without a results file
# ---------------------------------------------------------------------------------------------


def _unlabelled(directory: Path, *names: str) -> None:
    for name in names:
        (directory / name).mkdir(parents=True)
        (directory / name / "report.json").write_text(report_text(REPORT_A), "utf-8")


def test_reports_without_any_results_file_are_nothing_to_calibrate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What `history --out DIR` leaves: reports only.
    _unlabelled(tmp_path, "3f7c2a9d0e4b", "81be03c4d2a7")
    (tmp_path / "notes").mkdir()  # no report: not a measurement, not counted
    code, out, err = run_main(capsys, "calibrate", str(tmp_path), "--format", "json")
    assert (code, out) == (1, "")
    assert err == c.CALIBRATE_NO_RESULTS_TEMPLATE.format(reports=2) + "\n"
    assert "none of the 2 report(s) has a results.json" in err
    assert "'jev-select results --report DIR/<id>/report.json" in err
    assert "'jev-select rollout'" in err


def test_a_directory_without_reports_is_nothing_to_calibrate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(capsys, "calibrate", str(tmp_path))
    assert (code, out, err) == (1, "", c.CALIBRATE_NO_REPORTS + "\n")


def test_reports_without_results_are_counted_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _pairs(tmp_path)
    _unlabelled(tmp_path, "unlabelled-1", "unlabelled-2")
    # Plain stderr in GitHub Actions too: stdout may be the step summary.
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, err = run_main(capsys, "calibrate", str(tmp_path), "--format", "markdown")
    assert code == 0
    assert out == calibration_markdown(_expected())
    assert err == c.CALIBRATE_LEFT_OUT_TEMPLATE.format(left_out=2, reports=7) + "\n"
    assert err.startswith("jev-select: 2 of 7 report(s) left out: no results.json beside them")
    assert err.count("\n") == 1


# ---------------------------------------------------------------------------------------------
# --plot
# ---------------------------------------------------------------------------------------------


def test_the_install_advice_names_an_extra_that_exists() -> None:
    import re
    import tomllib

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["project"][
        "optional-dependencies"
    ]
    advised = re.findall(r"pip install (?:-e )?'\.\[([a-z]+)\]'", c.CALIBRATE_PLOT_UNAVAILABLE)
    assert advised == ["plot", "plot"]  # from a clone, editable or not
    assert any(entry.startswith("matplotlib") for entry in extras["plot"])
    assert extras["bench"] == extras["plot"]  # the former name keeps working
    # jev-ci-select is not on the package index: no advice installs it by name.
    assert "jev-ci-select[" not in c.CALIBRATE_PLOT_UNAVAILABLE
    for path in [*root.glob("*.md"), *root.glob("docs/*.md"), *root.glob("bench/*.md")]:
        assert "jev-ci-select[" not in path.read_text("utf-8"), path


def test_plot_of_nothing_judged_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A bypass and a collection error: measurements, but no task judged by scores.
    args = write_measurement(tmp_path / "c", REPORT_C, RESULTS_C)
    args += write_measurement(tmp_path / "e", REPORT_E, RESULTS_E)
    plot = tmp_path / "plot.png"
    code, out, err = run_main(capsys, "calibrate", *args, "--plot", str(plot))
    assert (code, out) == (1, "")
    assert err == c.CALIBRATE_PLOT_EMPTY + "\n"
    assert not plot.exists()


def test_plot_of_an_empty_calibration_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from jev_select.cli.calibrate import _plot

    plot = tmp_path / "plot.png"
    empty = Calibration(thresholds=(), recommended=None, note="")
    assert _plot(empty, str(plot), {}) is False
    assert capsys.readouterr().err == c.CALIBRATE_PLOT_EMPTY + "\n"
    assert not plot.exists()


def test_the_plot_keeps_every_series_in_sight() -> None:
    pytest.importorskip("matplotlib")
    from jev_select.cli.calibrate import _MISS_STYLES, _draw

    view = calibrate(
        [Measurement(report, results) for report, results in ALL_PAIRS], (0.02, 0.05, 0.1, 0.5)
    )
    figure = _draw(view)
    try:
        figure.canvas.draw()
        savings, misses, minutes = figure.axes  # the twin axis is created last
        lines = [line for line in misses.get_lines() if line.get_label() != "_nolegend_"]
        series = [line for line in lines if not line.get_label().startswith("recommended")]
        assert [line.get_label() for line in series] == [
            *(f"failed, {name}" for name in c.FAILURE_CLASSIFICATIONS),
            "manually relevant",
        ]
        # No two series share a colour, a marker or a dash pattern.
        assert len({line.get_color() for line in series}) == len(series)
        assert len({line.get_marker() for line in series}) == len(series)
        assert len({repr(style[2]) for style in _MISS_STYLES}) == len(series)
        # Equal counts never sit on the same spot: the series are side by side at each threshold.
        for index in range(len(view.thresholds)):
            assert len({float(line.get_xdata()[index]) for line in series}) == len(series)
        # The first series (regression) is drawn above every other.
        assert series[0].get_zorder() == max(line.get_zorder() for line in series)
        # Every axis says what it counts and in which unit.
        assert savings.get_ylabel().endswith("(count)")
        assert minutes.get_ylabel().startswith("task-minutes saved (min")
        assert misses.get_ylabel().endswith("(count)")
        assert misses.get_xlabel().startswith("skip-below threshold (Jev score, 0 to 1")
        assert [label.get_text() for label in misses.get_xticklabels()] == [
            "0.02",
            "0.05",
            "0.1",
            "0.5",
        ]
        # The legends are outside every axes, so they cover no data.
        renderer = figure.canvas.get_renderer()
        assert len(figure.legends) == 2
        for legend in figure.legends:
            box = legend.get_window_extent(renderer)
            for axis in figure.axes:
                assert not box.overlaps(axis.get_window_extent(renderer))
    finally:
        from matplotlib import pyplot

        pyplot.close(figure)
