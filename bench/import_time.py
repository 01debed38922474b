"""Import time of ``jev-select plan`` on a bypass, from ``python -X importtime``.

A push event in GitHub mode: the run validates the inputs, builds, validates and writes the
report and the outputs, and never touches git or the network. The figure is the sum of every
module's own import time (what ``-X importtime`` reports, Python's own start-up modules included),
and the table lists the largest contributors by top-level package (``jev_select`` modules one by
one). ``--baseline REV`` measures the package of another commit beside the working tree, runs
interleaved, so both see the same machine load.

    python bench/import_time.py [--runs 11] [--baseline REV]
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from common import ROOT, base_environment, median, table, write_results

TASKS = "\n".join(
    f"task{index}:\n  description: Test suite number {index} of the project.\n"
    for index in range(20)
)
# Libraries a bypass must not load (tests/test_cli_imports.py holds the product to it).
HEAVY = ("requests", "urllib3", "git")
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def environment(root: Path, source: Path | None) -> dict[str, str]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "event.json").write_text("{}", "utf-8")
    temp = root / "runner-temp"
    temp.mkdir(exist_ok=True)
    env = base_environment(root / "home")
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_EVENT_PATH": str(root / "event.json"),
            "GITHUB_REPOSITORY": "bench-org/bench-repo",
            "GITHUB_SHA": "3" * 40,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_OUTPUT": str(root / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(root / "summary.md"),
            "RUNNER_TEMP": str(temp),
            "INPUT_TASKS": TASKS,
        }
    )
    if source is not None:
        env["PYTHONPATH"] = str(source)
    return env


def one_run(env: dict[str, str], cwd: Path) -> dict[str, int]:
    """Own import time in microseconds per module of one bypass run."""
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "jev_select", "plan"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0 or "bypassed" not in completed.stdout:
        raise SystemExit("the bypass run failed")
    own: dict[str, int] = {}
    for line in completed.stderr.splitlines():
        match = _LINE.match(line)
        if match is not None:
            own[match[4]] = own.get(match[4], 0) + int(match[1])
    return own


def group(module: str) -> str:
    return module if module.startswith("jev_select") else module.split(".")[0]


@dataclass
class Summary:
    total_median_ms: float
    total_min_ms: float
    totals_ms: list[float]
    top: list[tuple[str, float]]
    heavy_loaded: list[str]
    modules: int


def summarise(runs: list[dict[str, int]]) -> Summary:
    totals = [sum(run.values()) / 1000 for run in runs]
    names = {group(module) for run in runs for module in run}
    per_group: dict[str, list[float]] = {name: [] for name in names}
    for run in runs:
        sums: collections.Counter[str] = collections.Counter()
        for module, micros in run.items():
            sums[group(module)] += micros
        for name in names:
            per_group[name].append(sums.get(name, 0) / 1000)
    medians = {name: median(values) for name, values in per_group.items()}
    loaded = {group(module) for run in runs for module in run}
    return Summary(
        total_median_ms=median(totals),
        total_min_ms=min(totals),
        totals_ms=totals,
        top=sorted(medians.items(), key=lambda item: -item[1])[:15],
        heavy_loaded=sorted(name for name in HEAVY if name in loaded),
        modules=len({module for run in runs for module in run}),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--baseline", help="a commit whose jev_select package is measured beside")
    options = parser.parse_args()
    runs = max(5, options.runs)
    with tempfile.TemporaryDirectory(prefix="jev-bench-imports-") as temp:
        root = Path(temp)
        sources: dict[str, Path | None] = {"working tree": None}
        if options.baseline:
            baseline = root / "baseline"
            baseline.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", options.baseline, "jev_select"],
                capture_output=True,
                check=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive, check=True)
            sources = {f"baseline {options.baseline}": baseline, **sources}
        samples: dict[str, list[dict[str, int]]] = {name: [] for name in sources}
        for _ in range(runs):
            for index, (name, source) in enumerate(sources.items()):
                run_root = root / f"run-{index}"
                samples[name].append(one_run(environment(run_root, source), run_root))
    results = {name: summarise(found) for name, found in samples.items()}
    print(f"python -X importtime -m jev_select plan, push-event bypass, 20 tasks, {runs} runs")
    print(
        table(
            ["source", "median ms", "min ms", "modules", "requests/urllib3/git"],
            [
                [
                    name,
                    summary.total_median_ms,
                    summary.total_min_ms,
                    summary.modules,
                    ", ".join(summary.heavy_loaded) or "none",
                ]
                for name, summary in results.items()
            ],
        )
    )
    for name, summary in results.items():
        print(f"\nlargest contributors, {name} (median own ms per package)")
        print(table(["package", "ms"], summary.top))
    document = {"runs": runs, "sources": {name: asdict(one) for name, one in results.items()}}
    print(f"\nresults: {write_results('import_time', document)}")


if __name__ == "__main__":
    main()
