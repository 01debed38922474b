"""Shared plumbing of the benchmarks: process runs, a GitHub-like environment, tables, results.

Benchmarks run on demand (never in CI) and assert nothing about time; each one prints a table
and writes its figures as JSON under ``bench/results/`` (git-ignored).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
TESTS = ROOT / "tests"
if str(TESTS) not in sys.path:
    # The git and Jev stand-ins of the test suite are reused as they are.
    sys.path.insert(0, str(TESTS))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

API_KEY = "bench-key-0123456789"
REPOSITORY = "bench-org/bench-repo"


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def base_environment(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
    }


def github_environment(
    root: Path,
    *,
    inputs: Mapping[str, str],
    base_sha: str,
    head_sha: str,
    merge_sha: str,
) -> dict[str, str]:
    """A runner-like environment for a ``pull_request`` event in ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    event = {
        "pull_request": {
            "number": 7,
            "base": {"sha": base_sha, "repo": {"id": 42, "full_name": REPOSITORY}},
            "head": {"sha": head_sha, "repo": {"id": 42, "full_name": REPOSITORY}},
        }
    }
    (root / "event.json").write_text(json.dumps(event), "utf-8")
    temp = root / "runner-temp"
    temp.mkdir(exist_ok=True)
    env = base_environment(root / "home")
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(root / "event.json"),
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_SHA": merge_sha,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_OUTPUT": str(root / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(root / "summary.md"),
            "RUNNER_TEMP": str(temp),
        }
    )
    for name, value in inputs.items():
        env["INPUT_" + name.upper().replace("-", "_")] = value
    return env


class ProcessRun:
    """One finished ``jev-select`` process: wall time, peak RSS, exit code and output."""

    def __init__(
        self, seconds: float, max_rss_kib: int, code: int, stdout: str, stderr: str
    ) -> None:
        self.seconds = seconds
        self.max_rss_kib = max_rss_kib
        self.code = code
        self.stdout = stdout
        self.stderr = stderr

    def report(self) -> dict[str, Any]:
        """The report whose path the run printed (GitHub mode output or local terminal view)."""
        for line in self.stdout.splitlines():
            if line.startswith("report: "):
                loaded: dict[str, Any] = json.loads(Path(line[8:]).read_text("utf-8"))
                return loaded
        raise RuntimeError("the run printed no report path")


def run_product(args: Sequence[str], env: Mapping[str, str], cwd: Path) -> ProcessRun:
    """Run ``python -m jev_select`` and measure it from fork to exit, with its own peak RSS."""
    out_path = cwd / "bench-stdout.txt"
    err_path = cwd / "bench-stderr.txt"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "jev_select", *args],
            env=dict(env),
            cwd=cwd,
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return ProcessRun(
        seconds=seconds,
        max_rss_kib=int(usage.ru_maxrss),
        code=process.returncode,
        stdout=out_path.read_text("utf-8"),
        stderr=err_path.read_text("utf-8"),
    )


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [list(headers)] + [[_cell(value) for value in row] for row in rows]
    widths = [max(len(row[index]) for row in cells) for index in range(len(headers))]
    lines = [
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def write_results(name: str, document: Mapping[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"benchmark": name, "machine": machine(), **document}
    path.write_text(json.dumps(payload, indent=2) + "\n", "utf-8")
    return path
