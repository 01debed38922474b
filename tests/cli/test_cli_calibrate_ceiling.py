"""``jev-select calibrate`` on measurements with job timings: the ceiling, with a key or none."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support.ceiling import MINUTE, job, keyless, planned, preview, timed_results, write_change
from support.cliutil import run_main

from jev_select import contracts as c
from jev_select.core.calibrate import calibrate, calibration_json, calibration_table
from jev_select.core.ceiling import (
    Ceiling,
    ceiling,
    ceiling_json,
    ceiling_markdown,
    ceiling_table,
)
from jev_select.core.shadow import Measurement
from jev_select.edges.measurements import list_measurements, read_checked

TASKS = ("docs", "lint", "unit")
NEEDS = {"lint": [], "unit": ["lint"], "docs": []}


def jobs(scale: int) -> list[dict[str, object]]:
    return [
        job("lint", "lint", ["lint"], MINUTE),
        job("unit (3.11)", "unit", ["unit"], 4 * MINUTE * scale),
        job("unit (3.12)", "unit", ["unit"], 5 * MINUTE * scale),
        job("docs", "docs", ["docs"], 2 * MINUTE),
        job("gate", "gate", [], 20_000),
    ]


@pytest.fixture(autouse=True)
def _local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def keyless_history(directory: Path) -> Path:
    """What history without a key leaves with --ci-workflow: bypass reports, results with ci
    blocks and previews; one change without a preview, one without a ci block."""
    forced = preview({"lint": ["always"], "docs": ["path-match"]})
    write_change(directory / "0a", keyless(TASKS), timed_results(keyless(TASKS), jobs(1), NEEDS))
    (directory / "0a" / "preview.json").write_text(json.dumps(forced), "utf-8")
    write_change(
        directory / "0b",
        keyless(TASKS),
        timed_results(keyless(TASKS), jobs(2), NEEDS),
        preview({"lint": ["always"]}),
    )
    write_change(directory / "0c", keyless(TASKS), timed_results(keyless(TASKS), jobs(1), NEEDS))
    untimed = timed_results(keyless(TASKS), jobs(1), NEEDS)
    del untimed["ci"]
    write_change(directory / "0d", keyless(TASKS), untimed, preview({}))
    return directory


def keyed_history(directory: Path) -> Path:
    report = planned({"docs": [], "lint": ["always"], "unit": []})
    for name in ("1a", "1b"):
        write_change(directory / name, report, timed_results(report, jobs(1), NEEDS))
    return directory


def expected_ceiling(directory: Path) -> tuple[list[Measurement], Ceiling]:
    found = [read_checked(entry) for entry in list_measurements([str(directory)])]
    view = ceiling([change for _, change in found])
    assert view is not None
    return [measurement for measurement, _ in found], view


def test_without_a_key_the_ceiling_is_printed_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = keyless_history(tmp_path)
    code, out, err = run_main(capsys, "calibrate", str(directory))
    assert (code, err) == (0, "")
    _, view = expected_ceiling(directory)
    assert out == ceiling_table(view) + c.CALIBRATE_NOT_SCORED_LINE + "\n"
    assert "THRESHOLD" not in out
    # 0a: lint and docs forced, unit savable; 0b: lint forced; 0c: no preview (fail closed);
    # 0d: no ci block. Billed: lint 1, unit legs 4+5 (or 8+10), docs 2, gate 1.
    assert (view.changes, view.changes_without_timings, view.changes_not_shown) == (3, 1, 1)
    assert view.total.savable_minutes == 9 + 18 + 2
    assert dict(view.total.forced)[c.CEILING_NOT_SHOWN] == 12
    assert c.CEILING_UPPER_BOUND in out


def test_without_a_key_the_json_keeps_its_rows_of_no_skips_and_adds_the_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = keyless_history(tmp_path)
    code, out, _ = run_main(capsys, "calibrate", str(directory), "--format", "json")
    assert code == 0
    value = json.loads(out)
    assert list(value) == ["thresholds", "recommended", "note", c.CALIBRATE_FIELD_CEILING]
    # Every row is there, and none skips anything: no task was judged by scores.
    assert [row["threshold"] for row in value["thresholds"]] == list(c.CALIBRATE_THRESHOLDS)
    assert all(row["tasks_judged"] == row["would_skip"] == 0 for row in value["thresholds"])
    assert value["recommended"] is None
    assert value["note"] == c.CALIBRATE_NOT_SCORED_LINE
    assert value["ceiling"] == ceiling_json(expected_ceiling(directory)[1])


def test_without_a_key_the_markdown_is_the_ceiling_and_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = keyless_history(tmp_path)
    code, out, _ = run_main(capsys, "calibrate", str(directory), "--format", "markdown")
    assert code == 0
    view = expected_ceiling(directory)[1]
    assert out == ceiling_markdown(view) + "\n" + c.CALIBRATE_NOT_SCORED_LINE + "\n"


def test_with_a_key_the_threshold_table_comes_first_then_the_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = keyed_history(tmp_path)
    code, out, err = run_main(capsys, "calibrate", str(directory))
    assert (code, err) == (0, "")
    measurements, view = expected_ceiling(directory)
    assert out == calibration_table(calibrate(measurements)) + "\n" + ceiling_table(view)
    # lint always (1 min a change); unit (4 + 5) and docs (2) savable; the gate always runs.
    assert (view.total.billed_minutes, view.total.savable_minutes) == (26, 22)


def test_with_a_key_the_json_keeps_the_calibration_keys_and_adds_the_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = keyed_history(tmp_path)
    code, out, _ = run_main(capsys, "calibrate", str(directory), "--format", "json")
    assert code == 0
    measurements, view = expected_ceiling(directory)
    assert json.loads(out) == {
        **calibration_json(calibrate(measurements)),
        c.CALIBRATE_FIELD_CEILING: ceiling_json(view),
    }


def test_pairs_of_files_give_the_ceiling_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = keyed_history(tmp_path)
    code, out, _ = run_main(
        capsys,
        "calibrate",
        str(directory / "1a" / "report.json"),
        str(directory / "1a" / "results.json"),
        "--format",
        "json",
    )
    assert code == 0
    assert json.loads(out)["ceiling"]["total"]["savable_minutes"] == 11


def test_an_invalid_ci_block_is_an_invalid_measurement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = planned({"unit": []})
    results = timed_results(report, [job("unit", "unit", ["unit"], MINUTE)])
    results["ci"]["version"] = 2  # a version this reader does not know
    write_change(tmp_path / "1a", report, results)
    code, out, err = run_main(capsys, "calibrate", str(tmp_path))
    assert (code, out) == (1, "")
    assert err == c.CALIBRATE_FAILURE_TEMPLATE.format(code="invalid-shadow-measurement") + "\n"


@pytest.mark.parametrize("history", [keyless_history, keyed_history], ids=["keyless", "keyed"])
def test_the_plot_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], history: Callable[[Path], Path]
) -> None:
    pytest.importorskip("matplotlib")
    directory = history(tmp_path / "history")
    plot = tmp_path / "ceiling.png"
    code, _, err = run_main(capsys, "calibrate", str(directory), "--plot", str(plot))
    assert (code, err) == (0, "")
    data = plot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 10_000


def test_the_ceiling_bars_show_forced_and_savable_minutes(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib import pyplot

    from jev_select.cli.calibrate import _draw

    measurements, view = expected_ceiling(keyless_history(tmp_path))
    both = _draw(calibrate(measurements), view)
    pyplot.close(both)
    figure = _draw(None, view)
    try:
        figure.canvas.draw()
        (axis,) = figure.axes
        # One bar per task, the most minutes on top, and the jobs of no task last.
        labels = [label.get_text() for label in axis.get_yticklabels()]
        assert labels == ["unit", "docs", "lint", c.CEILING_NO_TASK_LABEL]
        legend = [text.get_text() for text in figure.legends[0].get_texts()]
        assert legend == [
            c.CEILING_PLOT_LABELS[c.CEILING_ALWAYS],
            c.CEILING_PLOT_LABELS[c.CEILING_FORCE_PATHS],
            c.CEILING_PLOT_LABELS[c.CEILING_NOT_SHOWN],
            c.CEILING_PLOT_SAVABLE,
            c.CEILING_PLOT_NO_TASK,
        ]
        # unit: 9 + 18 savable, 9 not shown (fail closed): the bar ends at 36 minutes.
        unit = [patch for patch in axis.patches if round(patch.get_y() + 0.31) == 3]
        assert sum(patch.get_width() for patch in unit) == 36
        assert c.CEILING_UPPER_BOUND.split(":")[0] in axis.get_title()
        # The legend sits outside the axes.
        renderer = figure.canvas.get_renderer()
        box = figure.legends[0].get_window_extent(renderer)
        assert not box.overlaps(axis.get_window_extent(renderer))
    finally:
        pyplot.close(figure)
