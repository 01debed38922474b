"""Reusable-workflow fan-out on a base branch: n jobs that each call a workflow of n jobs, level
after level, so that expanding every call again would grow exponentially with the depth."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["TOP_WORKFLOW", "fan_out", "fan_out_commit"]

TOP_WORKFLOW = ".github/workflows/ci.yml"


def _local_call(level: int) -> str:
    return f"./.github/workflows/w{level}.yml"


def fan_out(
    callers: int, levels: int, *, call: Callable[[int], str] = _local_call
) -> dict[str, str]:
    """The top workflow and ``w1`` ... ``w<levels>``: each has ``callers`` jobs calling the next
    level's workflow (``call(level)`` writes that reference); the last level's jobs run ``make``.
    """
    files = {}
    for level in range(levels + 1):
        path = TOP_WORKFLOW if level == 0 else f".github/workflows/w{level}.yml"
        lines = ["on: workflow_call", "jobs:"]
        for index in range(callers):
            lines.append(f"  j{index}:")
            if level < levels:
                lines.append(f"    uses: {call(level + 1)}")
            else:
                lines.append("    steps: [{run: make}]")
        files[path] = "\n".join(lines) + "\n"
    return files


def fan_out_commit(callers: int, levels: int) -> dict[str | bytes, str]:
    """The files of a base commit: the fan-out and one source file a change can edit."""
    files: dict[str | bytes, str] = {"src/a.py": "a = 1\n"}
    files.update((path, text) for path, text in fan_out(callers, levels).items())
    return files
