"""A minimal valid report v5, the starting point of the shadow-analysis and results tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TESTED = "c" * 40


def make_report(
    proposals: Mapping[str, bool | None],
    *,
    mode: str = "shadow",
    status: str = "planned",
    tested_sha: str = TESTED,
) -> dict[str, Any]:
    """A minimal report v5 that passes validation (tests build their variations from it)."""
    reasons = ["shadow-mode"] if mode == "shadow" else ["jev-below-threshold"]
    return {
        "version": 5,
        "tested_ref": "merge",
        "diff_base_sha": "a" * 40,
        "job_metadata": {},
        "observation_error": None,
        "metadata_sha": "a" * 40,
        "base_sha": "a" * 40,
        "head_sha": "b" * 40,
        "tested_sha": tested_sha,
        "selection_hash": "e" * 64,
        "skip_below": 0.05,
        "diff_hash": "1" * 64,
        "diff_bytes": 100,
        "changed_path_count": 2,
        "mode": mode,
        "status": status,
        "model": {"requested": "jev-1.13.0", "expected": "jev-1.13.0", "returned": "jev-1.13.0"},
        "durations_ms": {"collection": 1.5, "jev": 2.5, "total": 5.0},
        "usage": None,
        "tasks": {
            task_id: {
                "proposed_run": proposed,
                "run": True if mode == "shadow" else bool(proposed),
                "reasons": reasons,
            }
            for task_id, proposed in proposals.items()
        },
        "observation": None,
    }
