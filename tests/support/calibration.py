"""Hand-computed calibration fixtures: shadow reports with stored scores and their CI results.

The expected figures of tests/core/test_calibrate.py are worked out by hand from these values;
change a score or a duration here and those tables change with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jev_select.core.report import report_text
from support.reports import make_report

SHADOW = "shadow-mode"


def _chunk(
    index: int,
    start: int,
    end: int,
    probabilities: Mapping[str, float] | None,
    *,
    status: str = "completed",
    error: str | None = None,
) -> dict[str, Any]:
    completed = status == "completed"
    ids = sorted(probabilities) if probabilities else ["placeholder"]
    return {
        "index": index,
        "start_byte": start,
        "end_byte": end,
        "paths": [f"src/part{index}.py"],
        "diff_hash": f"{index + 1}" * 64,
        "state_hash": f"{index + 5}" * 64,
        "diff_bytes": end - start,
        "status": status,
        "probabilities": dict(probabilities) if probabilities is not None else None,
        "model": "jev-1.13.0" if completed else None,
        "usage": None,
        "duration_ms": 12.5 if completed else None,
        "error": error,
        "requests": [
            {
                "task_ids": ids,
                "status": status,
                "model": "jev-1.13.0" if completed else None,
                "usage": None,
                "duration_ms": 12.5 if completed else None,
                "error": error,
            }
        ],
    }


def observed_report(
    tasks: Mapping[str, tuple[bool | None, Sequence[str]]],
    chunks: Sequence[Mapping[str, float] | None],
    *,
    status: str = "planned",
    skip_below: float = 0.05,
    failed_groups: Sequence[int] = (),
    observation_error: str | None = None,
    tested_sha: str = "c" * 40,
) -> dict[str, Any]:
    """A valid shadow report: ``tasks`` maps an ID to (proposed_run, reasons without
    ``shadow-mode``); ``chunks`` are each group's stored scores."""
    report = make_report(
        {task_id: proposed for task_id, (proposed, _) in tasks.items()},
        status=status,
        tested_sha=tested_sha,
    )
    for task_id, (_, reasons) in tasks.items():
        report["tasks"][task_id]["reasons"] = [*reasons, SHADOW]
    size = 100 // max(len(chunks), 1)
    records = []
    for index, probabilities in enumerate(chunks):
        end = 100 if index == len(chunks) - 1 else (index + 1) * size
        failed = index in failed_groups
        records.append(
            _chunk(
                index,
                index * size,
                end,
                probabilities,
                status="failed" if failed else "completed",
                error=observation_error if failed else None,
            )
        )
    if chunks:
        report["observation"] = {
            "strategy": "whole-diff" if len(chunks) == 1 else "chunked-diff",
            "status": "incomplete" if failed_groups else "complete",
            "chunks": records,
        }
    report["skip_below"] = skip_below
    report["observation_error"] = observation_error
    return report


def results(
    entries: Mapping[str, tuple[str, int, str | None]],
    relevant: Sequence[str] = (),
    *,
    tested_sha: str = "c" * 40,
) -> dict[str, Any]:
    """A results file: ID → (result, duration_ms, classification or None)."""
    tasks: dict[str, Any] = {}
    for task_id, (result, duration, classification) in entries.items():
        entry: dict[str, Any] = {"result": result, "duration_ms": duration}
        if classification is not None:
            entry["classification"] = classification
        tasks[task_id] = entry
    value: dict[str, Any] = {"tested_sha": tested_sha, "tasks": tasks}
    if relevant:
        value["relevant_tasks"] = list(relevant)
    return value


# Change A: one group; two mandatory tasks, three candidates (unit 0.1, api 0.02, ui 0.05).
REPORT_A = observed_report(
    {
        "api": (False, ["jev-below-threshold"]),
        "docs": (True, ["path-match"]),
        "lint": (True, ["always"]),
        "ui": (True, ["jev-at-or-above-threshold"]),
        "unit": (True, ["jev-at-or-above-threshold"]),
    },
    [{"api": 0.02, "docs": 0.0, "lint": 0.0, "ui": 0.05, "unit": 0.1}],
)
RESULTS_A = results(
    {
        "api": ("success", 60_000, None),
        "docs": ("success", 120_000, None),
        "lint": ("failure", 90_000, "regression"),
        "ui": ("failure", 30_000, "flaky"),
        "unit": ("failure", 180_000, "regression"),
    },
    relevant=["ui"],
)

# Change B: two groups; x scores 0.03 then 0.3, y 0.01 in both.
REPORT_B = observed_report(
    {
        "x": (True, ["jev-at-or-above-threshold"]),
        "y": (False, ["jev-below-threshold"]),
    },
    [{"x": 0.03, "y": 0.01}, {"x": 0.3, "y": 0.01}],
)
REPORT_B["tasks"]["x"]["reasons"].append("chunked-observation")
REPORT_B["tasks"]["y"]["reasons"].append("chunked-observation")
RESULTS_B = results({"x": ("failure", 600_000, None), "y": ("success", 120_000, None)})

# Change C: a protected-path bypass whose answers were recorded (all zero) but never applied.
REPORT_C = observed_report(
    {
        "x": (None, ["protected-path", "observation-only"]),
        "y": (None, ["protected-path", "observation-only"]),
    },
    [{"x": 0.0, "y": 0.0}],
    status="bypassed",
)
REPORT_C["tasks"]["x"]["reasons"] = ["protected-path", SHADOW, "observation-only"]
REPORT_C["tasks"]["y"]["reasons"] = ["protected-path", SHADOW, "observation-only"]
RESULTS_C = results({"x": ("success", 60_000, None), "y": ("success", 60_000, None)})

# Change D: the second group failed; production still planned (x below in both groups, y above in
# the first), but an incomplete observation never skips in calibration.
REPORT_D = observed_report(
    {
        "x": (False, ["jev-below-threshold"]),
        "y": (True, ["jev-at-or-above-threshold"]),
    },
    [{"x": 0.0, "y": 0.9}, {"x": 0.0}],
    failed_groups=(1,),
    observation_error="jev-timeout",
)
for _task in ("x", "y"):
    REPORT_D["tasks"][_task]["reasons"].append("chunked-observation")
RESULTS_D = results({"x": ("success", 60_000, None), "y": ("success", 60_000, None)})

# Change E: a collection error, nothing observed.
REPORT_E = observed_report(
    {"x": (None, ["git-fetch-failed"]), "y": (None, ["git-fetch-failed"])},
    [],
    status="fallback",
)
RESULTS_E = results({"x": ("failure", 60_000, "regression"), "y": ("success", 60_000, None)})

ALL_PAIRS = (
    (REPORT_A, RESULTS_A),
    (REPORT_B, RESULTS_B),
    (REPORT_C, RESULTS_C),
    (REPORT_D, RESULTS_D),
    (REPORT_E, RESULTS_E),
)


def write_measurement(
    directory: Path, report: dict[str, Any], results: dict[str, Any]
) -> list[str]:
    """``report.json`` and ``results.json`` in ``directory``: the paths of one REPORT RESULTS
    pair, as ``analyze`` and ``calibrate`` take them."""
    directory.mkdir(parents=True, exist_ok=True)
    report_path = directory / "report.json"
    results_path = directory / "results.json"
    report_path.write_text(report_text(report), "utf-8")
    results_path.write_text(json.dumps(results), "utf-8")
    return [str(report_path), str(results_path)]
