"""Reading measurement directories: the walk, the preview, the ci block, and the lenient read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.ceiling import MINUTE, job, keyless, planned, preview, timed_results, write_change

from jev_select import contracts as c
from jev_select.core.ceiling import ceiling, ceiling_text
from jev_select.core.shadow import AnalysisError
from jev_select.edges.measurements import (
    list_measurements,
    read_changes,
    read_checked,
    read_preview,
)

TASKS = ("lint", "unit")
JOBS = [job("lint", "lint", ["lint"], MINUTE), job("unit", "unit", ["unit"], 3 * MINUTE)]


def test_the_walk_lists_reports_in_code_unit_order_with_the_files_beside_them(
    tmp_path: Path,
) -> None:
    report = keyless(TASKS)
    write_change(tmp_path / "b", report, timed_results(report, JOBS), preview({}))
    write_change(tmp_path / "B", report, None)
    write_change(tmp_path / "a", report, timed_results(report, JOBS))
    (tmp_path / "notes").mkdir()  # no report.json: not a measurement
    entries = list_measurements([str(tmp_path)])
    assert [entry.name for entry in entries] == ["B", "a", "b"]
    assert [entry.results is not None for entry in entries] == [False, True, True]
    assert [entry.preview is not None for entry in entries] == [False, False, True]
    assert entries[2].preview == str(tmp_path / "b" / c.PREVIEW_FILE_NAME)


def test_a_directory_that_cannot_be_listed_is_an_invalid_measurement(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError) as caught:
        list_measurements([str(tmp_path / "missing")])
    assert caught.value.code == c.ANALYSIS_INVALID_SHADOW_MEASUREMENT


def test_a_preview_is_read_only_when_its_schema_holds(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(preview({"lint": ["always"]})), "utf-8")
    document = read_preview(str(good))
    assert document is not None
    assert [task.task for task in document.forced_tasks] == ["lint"]
    bad = tmp_path / "bad.json"
    broken = preview({"lint": ["always"]})
    broken["forced_tasks"][0]["reasons"] = ["jev-below-threshold"]
    bad.write_text(json.dumps(broken), "utf-8")
    assert read_preview(str(bad)) is None
    (tmp_path / "text.json").write_text("not json", "utf-8")
    assert read_preview(str(tmp_path / "text.json")) is None
    assert read_preview(None) is None


def test_the_checked_read_keeps_the_ci_block_for_the_ceiling_only(tmp_path: Path) -> None:
    report = planned({"lint": ["always"], "unit": []})
    write_change(tmp_path / "a", report, timed_results(report, JOBS))
    (entry,) = list_measurements([str(tmp_path)])
    measurement, change = read_checked(entry)
    # The threshold table reads the results as analyze does: without the ci block.
    assert getattr(measurement.results, "ci", "absent") is None
    assert change.results is not None
    assert change.results.ci is not None
    assert [record.name for record in change.results.ci.jobs] == ["lint", "unit"]


def test_the_checked_read_refuses_a_pair_that_does_not_check_out(tmp_path: Path) -> None:
    report = planned({"lint": ["always"], "unit": []})
    write_change(tmp_path / "a", report, timed_results(report, JOBS, tested_sha="d" * 40))
    (entry,) = list_measurements([str(tmp_path)])
    with pytest.raises(AnalysisError):
        read_checked(entry)


def test_the_lenient_read_counts_what_it_cannot_time(tmp_path: Path) -> None:
    report = keyless(TASKS)
    write_change(tmp_path / "a", report, timed_results(report, JOBS), preview({}))
    write_change(tmp_path / "b", report, timed_results(report, JOBS, tested_sha="d" * 40))
    write_change(tmp_path / "c", report, None, preview({}))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "report.json").write_text("{}", "utf-8")  # unreadable: left out
    changes = read_changes(str(tmp_path))
    assert len(changes) == 3
    assert [change.results is not None for change in changes] == [True, False, False]
    view = ceiling(changes)
    assert view is not None
    assert (view.changes, view.changes_without_timings) == (1, 2)
    assert view.total.savable_minutes == 4
    text = ceiling_text(changes, c.CALIBRATE_FORMAT_MARKDOWN)
    assert text is not None
    assert text.startswith(c.CEILING_MARKDOWN_TITLE)


def test_the_lenient_read_of_nothing_is_nothing(tmp_path: Path) -> None:
    assert read_changes(str(tmp_path / "missing")) == ()
    assert ceiling_text(read_changes(str(tmp_path)), c.CALIBRATE_FORMAT_TABLE) is None
