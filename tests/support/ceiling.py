"""Measurements with job timings for the ceiling: reports, results files with a ci block, and
the preview.json beside a keyless report, as ``history`` writes them.

The expected figures of tests/core/test_ceiling.py are worked out by hand from these values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jev_select.core.report import report_text
from support.calibration import observed_report
from support.reports import TESTED, make_report

MINUTE = 60_000


def keyless(tasks: Sequence[str], *, reason: str = "missing-api-key") -> dict[str, Any]:
    """The bypass report of a run without a key (or consent): every task runs, nothing scored."""
    report = make_report(dict.fromkeys(tasks), status="bypassed")
    for task_id in tasks:
        report["tasks"][task_id]["reasons"] = [reason, "shadow-mode"]
    report["model"]["returned"] = None
    report["durations_ms"]["jev"] = None
    return report


def planned(tasks: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A scored shadow report: ``tasks`` maps an ID to its reasons; a task without a mandatory
    reason is a candidate scored 0.5 (kept), the mandatory ones score 0."""
    mandatory = {"always", "path-match", "metadata-unavailable"}
    shaped = {
        task_id: (
            (True, list(reasons))
            if mandatory.intersection(reasons)
            else (True, ["jev-at-or-above-threshold"])
        )
        for task_id, reasons in tasks.items()
    }
    scores = {
        task_id: 0.0 if mandatory.intersection(reasons) else 0.5
        for task_id, reasons in tasks.items()
    }
    return observed_report(shaped, [scores])


def job(
    name: str,
    workflow_job: str | None,
    tasks: Sequence[str],
    duration_ms: int,
    result: str = "success",
) -> dict[str, Any]:
    return {
        "name": name,
        "job": workflow_job,
        "tasks": sorted(tasks),
        "result": result,
        "duration_ms": duration_ms,
    }


def timed_results(
    report: Mapping[str, Any],
    jobs: Sequence[Mapping[str, Any]],
    needs: Mapping[str, Sequence[str]] | None = None,
    *,
    tested_sha: str = TESTED,
) -> dict[str, Any]:
    """A results file for ``report`` with a ci block of ``jobs``: each task's result is the sum of
    its jobs' durations (skipped with 0 when it has none)."""
    tasks: dict[str, Any] = {}
    for task_id in sorted(report["tasks"]):
        own = [entry for entry in jobs if task_id in entry["tasks"]]
        tasks[task_id] = {
            "result": "success" if own else "skipped",
            "duration_ms": sum(entry["duration_ms"] for entry in own),
        }
    return {
        "tested_sha": tested_sha,
        "tasks": tasks,
        "ci": {
            "version": 1,
            "workflow": "ci.yml",
            "run_id": 4242,
            "run_attempt": 1,
            "jobs": [dict(entry) for entry in jobs],
            "needs": {key: list(value) for key, value in (needs or {}).items()},
        },
    }


def preview(
    forced: Mapping[str, Sequence[str]] | None = None,
    *,
    reason: str | None = None,
    path: str | None = None,
) -> dict[str, Any]:
    """A preview.json: ``forced`` maps a task to its mandatory reasons; ``reason`` is the keyed
    run's whole-change reason."""
    return {
        "changed_files": ["src/app.py"],
        "forced_tasks": [
            {
                "task": task_id,
                "reasons": list(reasons),
                "pattern": "src/**" if "path-match" in reasons else None,
                "path": "src/app.py" if "path-match" in reasons else None,
            }
            for task_id, reasons in sorted((forced or {}).items())
        ],
        "gaps": {
            task_id: ["action-metadata-missing: octo/setup@v1"]
            for task_id, reasons in sorted((forced or {}).items())
            if "metadata-unavailable" in reasons
        },
        "keyed_run": {
            "reason": reason,
            "path": path,
            "patch_bytes": None,
            "limit_bytes": None,
            "limit_groups": None,
            "candidates": [],
            "requests": 0 if reason is not None else 1,
        },
    }


def write_change(
    directory: Path,
    report: Mapping[str, Any],
    results: Mapping[str, Any] | None,
    preview_document: Mapping[str, Any] | None = None,
) -> Path:
    """``report.json`` and, when given, ``results.json`` and ``preview.json`` in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "report.json").write_text(report_text(dict(report)), "utf-8")
    if results is not None:
        (directory / "results.json").write_text(json.dumps(results), "utf-8")
    if preview_document is not None:
        (directory / "preview.json").write_text(json.dumps(preview_document), "utf-8")
    return directory
