"""The ceiling without a key: hand-computed billed minutes, forced categories and critical paths."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from support.calibration import REPORT_D, REPORT_E
from support.ceiling import MINUTE, job, keyless, planned, preview, timed_results

from jev_select import contracts as c
from jev_select.core.ceiling import (
    Ceiling,
    CeilingChange,
    PreviewDocument,
    ceiling,
    ceiling_json,
    ceiling_markdown,
    ceiling_table,
    ceiling_text,
    critical_paths,
)
from jev_select.core.convert import structure
from jev_select.core.results import CiRun, Results


def change(
    report: Mapping[str, Any],
    jobs: Sequence[Mapping[str, Any]],
    needs: Mapping[str, Sequence[str]] | None = None,
    preview_document: Mapping[str, Any] | None = None,
) -> CeilingChange:
    return CeilingChange(
        report=dict(report),
        results=structure(timed_results(report, jobs, needs), Results),
        preview=(
            structure(dict(preview_document), PreviewDocument)
            if preview_document is not None
            else None
        ),
    )


def view(*changes: CeilingChange) -> Ceiling:
    result = ceiling(changes)
    assert result is not None
    return result


def task_row(result: Ceiling, task_id: str) -> tuple[int, int, dict[str, int], int]:
    (row,) = [row for row in result.tasks if row.task == task_id]
    return row.jobs, row.billed_minutes, dict(row.forced), row.savable_minutes


def forced(**minutes: int) -> dict[str, int]:
    return {name: minutes.get(name, 0) for name in c.CEILING_CATEGORIES}


# ---------------------------------------------------------------------------------------------
# Billed minutes and how jobs count
# ---------------------------------------------------------------------------------------------


def test_each_job_is_billed_rounded_up_to_a_whole_minute() -> None:
    report = planned({"unit": []})
    jobs = [
        job("unit (1)", "unit", ["unit"], 1),  # 1 min
        job("unit (2)", "unit", ["unit"], MINUTE),  # 1 min
        job("unit (3)", "unit", ["unit"], MINUTE + 1),  # 2 min
        job("unit (4)", "unit", ["unit"], 0),  # never started: 0 min
    ]
    result = view(change(report, jobs))
    assert task_row(result, "unit") == (4, 4, forced(), 4)
    assert result.total.billed_minutes == 4


def test_a_job_of_two_tasks_is_savable_only_when_both_are_and_counts_once() -> None:
    # api is a candidate; lint is always. The shared job runs for lint, so neither saves it.
    report = planned({"api": [], "lint": ["always"]})
    jobs = [
        job("api", "api", ["api"], 2 * MINUTE),
        job("api and lint", "both", ["api", "lint"], 3 * MINUTE),
        job("lint", "lint", ["lint"], MINUTE),
    ]
    result = view(change(report, jobs))
    assert task_row(result, "api") == (2, 5, forced(always=3), 2)
    assert task_row(result, "lint") == (2, 4, forced(always=4), 0)
    total = result.total
    assert (total.jobs, total.billed_minutes, total.savable_minutes) == (3, 6, 2)
    assert dict(total.forced) == forced(always=4)


def test_a_shared_job_of_two_savable_tasks_is_savable() -> None:
    report = planned({"api": [], "ui": []})
    result = view(change(report, [job("e2e", "e2e", ["api", "ui"], 90_000)]))
    assert task_row(result, "api") == (1, 2, forced(), 2)
    assert task_row(result, "ui") == (1, 2, forced(), 2)
    assert (result.total.billed_minutes, result.total.savable_minutes) == (2, 2)


def test_jobs_of_no_task_always_run() -> None:
    report = planned({"unit": []})
    jobs = [job("unit", "unit", ["unit"], 5 * MINUTE), job("gate", "gate", [], 30_000)]
    result = view(change(report, jobs))
    total = result.total
    assert (total.no_task_jobs, total.no_task_minutes) == (1, 1)
    assert (total.jobs, total.billed_minutes, total.savable_minutes) == (2, 6, 5)
    assert dict(total.forced) == forced()
    assert [row.task for row in result.tasks] == ["unit"]


# ---------------------------------------------------------------------------------------------
# Where the forced state comes from
# ---------------------------------------------------------------------------------------------

TASKS = ("docs", "lint", "setup", "unit")
JOBS = [
    job("docs", "docs", ["docs"], 2 * MINUTE),
    job("lint", "lint", ["lint"], 1 * MINUTE),
    job("setup", "setup", ["setup"], 3 * MINUTE),
    job("unit", "unit", ["unit"], 4 * MINUTE),
]
FORCED_TASKS = {"docs": ["path-match"], "lint": ["always"], "setup": ["metadata-unavailable"]}


def test_a_keyless_report_takes_the_forced_tasks_from_its_preview() -> None:
    result = view(change(keyless(TASKS), JOBS, preview_document=preview(FORCED_TASKS)))
    assert dict(result.total.forced) == forced(always=1, force_paths=2, gap=3)
    assert result.total.savable_minutes == 4
    assert task_row(result, "unit") == (1, 4, forced(), 4)
    assert result.changes_not_shown == 0


def test_external_context_disabled_is_keyless_too() -> None:
    report = keyless(TASKS, reason="external-context-disabled")
    result = view(change(report, JOBS, preview_document=preview(FORCED_TASKS)))
    assert result.total.savable_minutes == 4


def test_a_task_with_several_reasons_counts_under_the_first_category() -> None:
    both = {"lint": ["always", "path-match"], "setup": ["path-match", "metadata-unavailable"]}
    result = view(change(keyless(TASKS), JOBS, preview_document=preview(both)))
    assert dict(result.total.forced) == forced(always=1, force_paths=3)


def test_a_planned_report_tells_the_same_forced_state_as_the_preview() -> None:
    report = planned(
        {
            "docs": ["path-match"],
            "lint": ["always"],
            "setup": ["metadata-unavailable"],
            "unit": [],
        }
    )
    from_report = view(change(report, JOBS))
    from_preview = view(change(keyless(TASKS), JOBS, preview_document=preview(FORCED_TASKS)))
    assert ceiling_json(from_report) == ceiling_json(from_preview)
    assert dict(from_report.total.forced) == forced(always=1, force_paths=2, gap=3)


@pytest.mark.parametrize(
    ("reason", "category"),
    [
        ("protected-path", c.CEILING_PROTECTED_PATH),
        ("diff-too-large", c.CEILING_FALLBACK),
        ("git-fetch-failed", c.CEILING_FALLBACK),
        ("context-too-large", c.CEILING_FALLBACK),
    ],
)
def test_a_whole_change_reason_of_the_preview_forces_every_job(reason: str, category: str) -> None:
    document = preview(FORCED_TASKS, reason=reason, path=".github/workflows/ci.yml")
    result = view(change(keyless(TASKS), JOBS, preview_document=document))
    assert dict(result.total.forced) == forced(**{category: 10})
    assert result.total.savable_minutes == 0


def test_a_protected_path_bypass_forces_every_job() -> None:
    report = keyless(TASKS, reason="protected-path")
    result = view(change(report, JOBS))
    assert dict(result.total.forced) == forced(protected_path=10)
    assert result.changes_not_shown == 0


def test_a_fallback_report_forces_every_job() -> None:
    # REPORT_E: a collection error (status fallback) on tasks x and y.
    jobs = [job("x", "x", ["x"], MINUTE), job("y", "y", ["y"], 2 * MINUTE)]
    result = view(change(REPORT_E, jobs))
    assert dict(result.total.forced) == forced(fallback=3)


def test_an_incomplete_observation_forces_every_job() -> None:
    # REPORT_D: planned, but one group failed; the missing answers might have kept anything.
    jobs = [job("x", "x", ["x"], MINUTE), job("y", "y", ["y"], 2 * MINUTE)]
    result = view(change(REPORT_D, jobs))
    assert dict(result.total.forced) == forced(fallback=3)


def test_a_keyless_report_without_a_preview_fails_closed() -> None:
    result = view(change(keyless(TASKS), JOBS))
    assert dict(result.total.forced) == forced(not_shown=10)
    assert (result.total.savable_minutes, result.changes_not_shown) == (0, 1)
    assert c.CEILING_NOT_SHOWN_TEMPLATE.format(count=1) in ceiling_table(result)


def test_a_preview_of_other_tasks_fails_closed() -> None:
    document = preview({"elsewhere": ["always"]})
    result = view(change(keyless(TASKS), JOBS, preview_document=document))
    assert dict(result.total.forced) == forced(not_shown=10)


@pytest.mark.parametrize("reason", ["fork", "force-all", "non-pull-request"])
def test_another_bypass_fails_closed_even_with_a_preview(reason: str) -> None:
    document = preview(FORCED_TASKS)
    result = view(change(keyless(TASKS, reason=reason), JOBS, preview_document=document))
    assert dict(result.total.forced) == forced(not_shown=10)
    assert result.changes_not_shown == 1


# ---------------------------------------------------------------------------------------------
# Changes without job timings
# ---------------------------------------------------------------------------------------------


def test_changes_without_timings_are_left_out_and_counted() -> None:
    report = planned({"unit": []})
    timed = change(report, [job("unit", "unit", ["unit"], 5 * MINUTE)])
    document = timed_results(report, [job("unit", "unit", ["unit"], 5 * MINUTE)])
    without_ci = {key: value for key, value in document.items() if key != "ci"}
    other_commit = {**document, "tested_sha": "d" * 40}
    unknown_task = timed_results(report, [job("api", "api", ["api"], MINUTE)])
    unknown_task["tasks"] = document["tasks"]
    changes = [
        timed,
        CeilingChange(report=report, results=None),
        CeilingChange(report=report, results=structure(without_ci, Results)),
        CeilingChange(report=report, results=structure(other_commit, Results)),
        CeilingChange(report=report, results=structure(unknown_task, Results)),
    ]
    result = ceiling(changes)
    assert result is not None
    assert (result.changes, result.changes_without_timings) == (1, 4)
    assert result.total.billed_minutes == 5
    assert c.CEILING_NO_TIMINGS_TEMPLATE.format(count=4) in ceiling_table(result)


def test_no_change_with_timings_is_no_ceiling() -> None:
    report = planned({"unit": []})
    assert ceiling([CeilingChange(report=report, results=None)]) is None
    assert ceiling([]) is None
    assert ceiling_text([CeilingChange(report=report, results=None)], "table") is None


# ---------------------------------------------------------------------------------------------
# The critical path
# ---------------------------------------------------------------------------------------------


def run_of(jobs: Sequence[Mapping[str, Any]], needs: Mapping[str, Sequence[str]]) -> CiRun:
    return structure(timed_results(planned({"x": []}), jobs, needs)["ci"], CiRun)


def test_the_critical_path_follows_needs_and_matrix_legs_run_side_by_side() -> None:
    # lint (1) -> unit (legs of 4 and 6: 6) and lint -> integration (9): 1 + 9 = 10 minutes.
    # lint is always and unit a force_paths match; integration is savable: 1 + 6 = 7 kept.
    report = planned({"integration": [], "lint": ["always"], "unit": ["path-match"]})
    jobs = [
        job("lint", "lint", ["lint"], 1 * MINUTE),
        job("unit (3.11)", "unit", ["unit"], 4 * MINUTE),
        job("unit (3.12)", "unit", ["unit"], 6 * MINUTE),
        job("integration", "integration", ["integration"], 9 * MINUTE),
    ]
    needs = {"lint": [], "unit": ["lint"], "integration": ["lint"]}
    result = view(change(report, jobs, needs))
    assert result.total.critical_path_ms == 10 * MINUTE
    assert result.total.critical_path_savable_ms == 3 * MINUTE
    assert "Wall time on the critical path: 10.0 min over 1 change(s), of which at most 3.0" in (
        ceiling_table(result)
    )


def test_edges_through_a_dropped_job_are_contracted() -> None:
    # a (2) -> b (5) -> c (3); b dropped: c still waits for a, 2 + 3 = 5 kept of 10.
    jobs = [job("a", "a", [], 2 * MINUTE), job("b", "b", [], 5 * MINUTE)]
    jobs.append(job("c", "c", [], 3 * MINUTE))
    run = run_of(jobs, {"a": [], "b": ["a"], "c": ["b"]})
    assert critical_paths(run, [True, False, True]) == (10 * MINUTE, 5 * MINUTE)
    assert critical_paths(run, [True, True, True]) == (10 * MINUTE, 10 * MINUTE)
    assert critical_paths(run, [False, False, False]) == (10 * MINUTE, 0)


def test_a_matrix_leg_that_stays_keeps_its_own_length() -> None:
    jobs = [job("t (1)", "t", [], 4 * MINUTE), job("t (2)", "t", [], 6 * MINUTE)]
    run = run_of(jobs, {"t": []})
    assert critical_paths(run, [True, False]) == (6 * MINUTE, 4 * MINUTE)


@pytest.mark.parametrize(
    "needs",
    [
        {"a": ["b"], "b": ["a"], "c": []},  # a cycle
        {"a": ["a"], "b": ["a"], "c": ["b"]},  # a job that needs itself
        {"a": [], "b": ["a"], "c": ["nowhere"]},  # a job the workflow does not declare
        {"a": [], "b": ["a"]},  # a job that ran but is not declared
        {},  # the workflow file was not read
    ],
)
def test_an_unknown_or_cyclic_graph_has_no_edges(needs: Mapping[str, Sequence[str]]) -> None:
    jobs = [job("a", "a", [], 2 * MINUTE), job("b", "b", [], 5 * MINUTE)]
    jobs.append(job("c", "c", [], 3 * MINUTE))
    run = run_of(jobs, needs)
    # Side by side: the longest job, 5; kept a and c: 3.
    assert critical_paths(run, [True, False, True]) == (5 * MINUTE, 3 * MINUTE)


def test_jobs_without_a_workflow_job_are_nodes_of_their_own() -> None:
    jobs = [job("one", None, [], 2 * MINUTE), job("two", None, [], 3 * MINUTE)]
    jobs.append(job("a", "a", [], 4 * MINUTE))
    run = run_of(jobs, {"a": []})
    assert critical_paths(run, [True, True, False]) == (4 * MINUTE, 3 * MINUTE)


def test_wall_time_is_summed_over_the_changes() -> None:
    report = planned({"lint": ["always"], "unit": []})
    jobs = [job("lint", "lint", ["lint"], MINUTE), job("unit", "unit", ["unit"], 4 * MINUTE)]
    needs = {"lint": [], "unit": ["lint"]}
    result = view(change(report, jobs, needs), change(report, jobs, needs))
    assert result.total.critical_path_ms == 10 * MINUTE
    assert result.total.critical_path_savable_ms == 8 * MINUTE


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def sample() -> Ceiling:
    jobs = [*JOBS, job("gate", "gate", [], 10_000)]
    return view(
        change(keyless(TASKS), jobs, preview_document=preview(FORCED_TASKS)),
        change(keyless(TASKS), jobs),
    )


def test_the_table_says_it_is_an_upper_bound() -> None:
    text = ceiling_table(sample())
    lines = text.splitlines()
    assert lines[0] == c.CEILING_TITLE
    assert lines[1].split() == list(c.CEILING_HEADER)
    assert lines[-1] == c.CEILING_UPPER_BOUND
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:8]}
    # unit: 4 min in each change; savable only in the one with a preview.
    assert rows["unit"] == ["2", "2", "8", "0", "0", "0", "0", "0", "4", "4", "50%"]
    assert rows["(no"] == ["task)", "2", "2", "-", "-", "-", "-", "-", "-", "0", "0%"]
    assert rows["total"] == ["2", "10", "22", "1", "2", "3", "0", "0", "10", "4", "18%"]


def test_the_markdown_leads_with_the_upper_bound() -> None:
    text = ceiling_markdown(sample())
    assert text.startswith(c.CEILING_MARKDOWN_TITLE + "\n\n**" + c.CEILING_UPPER_BOUND + "**\n")
    assert "| unit | 2 | 2 | 8 | 0 | 0 | 0 | 0 | 0 | 4 | 4 | 50% |" in text
    assert c.CEILING_NOT_SHOWN_TEMPLATE.format(count=1) in text


def test_the_json_keeps_every_figure() -> None:
    value = json.loads(ceiling_text([*sample_changes()], c.CALIBRATE_FORMAT_JSON) or "null")
    assert list(value) == [
        "upper_bound",
        "changes",
        "changes_without_timings",
        "changes_not_shown",
        "tasks",
        "total",
    ]
    assert value["upper_bound"] == c.CEILING_UPPER_BOUND
    assert value["total"] == {
        "jobs": 10,
        "billed_minutes": 22,
        "forced": forced(always=1, force_paths=2, gap=3, not_shown=10),
        "no_task_jobs": 2,
        "no_task_minutes": 2,
        "savable_minutes": 4,
        "critical_path_ms": 8 * MINUTE,
        # Side by side (no needs): 4 min each; the keyed change keeps setup, 3 min.
        "critical_path_savable_ms": 1 * MINUTE,
    }
    assert value == ceiling_json(sample())


def sample_changes() -> list[CeilingChange]:
    jobs = [*JOBS, job("gate", "gate", [], 10_000)]
    return [
        change(keyless(TASKS), jobs, preview_document=preview(FORCED_TASKS)),
        change(keyless(TASKS), jobs),
    ]
