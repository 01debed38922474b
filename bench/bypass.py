"""Whole-process time of ``jev-select plan`` in GitHub mode on a bypass (no API key).

A bypass reads the event, validates the inputs, builds and writes the report and the outputs,
and never touches git or the network, so this is the floor every pull request pays. Python's own
start-up and the package import are measured beside it for scale.

    python bench/bypass.py [--runs 11]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, median, run_product, table, write_results

TASKS = "\n".join(
    f"task{index}:\n  description: Test suite number {index} of the project.\n"
    for index in range(20)
)


def time_python(code: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        samples.append(time.perf_counter() - started)
    return median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=11)
    runs = max(7, parser.parse_args().runs)
    samples: list[float] = []
    rss: list[int] = []
    with tempfile.TemporaryDirectory(prefix="jev-bench-bypass-") as temp:
        root = Path(temp)
        from common import github_environment

        env = github_environment(
            root,
            inputs={"tasks": TASKS, "api-key": "", "allow-external-context": "true"},
            base_sha="1" * 40,
            head_sha="2" * 40,
            merge_sha="3" * 40,
        )
        for _ in range(runs):
            run = run_product(["plan"], env, root)
            if run.code != 0 or "bypassed" not in run.stdout:
                raise SystemExit("the bypass run failed")
            samples.append(run.seconds * 1000)
            rss.append(run.max_rss_kib)
    python_ms = time_python("pass", runs)
    import_ms = time_python("import jev_select.cli", runs)
    rows = [
        ["python -c pass", python_ms, "-"],
        ["import jev_select.cli", import_ms, "-"],
        ["jev-select plan (bypass)", median(samples), max(rss) // 1024],
    ]
    print(f"jev-select plan, GitHub mode, missing-api-key bypass, 20 tasks, median of {runs}")
    print(table(["what", "median ms", "peak RSS MiB"], rows))
    path = write_results(
        "bypass",
        {
            "runs": runs,
            "plan_ms": samples,
            "plan_median_ms": median(samples),
            "plan_min_ms": min(samples),
            "plan_max_ms": max(samples),
            "python_startup_median_ms": python_ms,
            "import_median_ms": import_ms,
            "peak_rss_kib": max(rss),
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
