"""Reusable-workflow fan-out on the base branch: local ``jev-select plan`` over N x L shapes.

Shape ``NxL``: ``ci.yml`` has N jobs that each call ``w1.yml``, which has N jobs that each call
``w2.yml``, and so on to ``wL.yml``, whose N jobs run one step (L + 1 tiny files). Fully
expanded, one task that references ``ci.yml`` would carry N**(L+1) jobs. The product runs as a
real process, planning from the base (which holds the files) to a head that changes one source
file, without a key: collection, metadata and the preview run, nothing is sent. Each run prints
wall time and peak RSS (``wait4``; for a run stopped at ``--timeout``, the peak reached by then,
from ``/proc``) and the gaps the preview names.

``--code DIR`` runs another checkout's package (``git worktree add /tmp/old HEAD``) instead of
this one, to compare the code before a change.

    python bench/fanout.py [--shapes 4x8,6x9] [--runs 3] [--timeout 60] [--code DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import ROOT, base_environment, median, table, write_results
from support.fanout import fan_out_commit
from support.gitrepo import GitRepo

WF = ".github/workflows/ci.yml"
TASKS = f"fanout:\n  description: Runs the fanned-out workflow.\n  jobs:\n    - workflow: {WF}\n"
POLL_S = 0.05


def peak_rss_kib(pid: int) -> int:
    """The process's peak RSS so far (``VmHWM``), 0 when it cannot be read."""
    try:
        status = Path(f"/proc/{pid}/status").read_text("ascii")
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def run_plan(args: list[str], env: dict[str, str], cwd: Path, timeout: float) -> dict[str, Any]:
    """One process: seconds, peak RSS in MiB, whether it finished, and its preview's gaps."""
    out_path = cwd / "bench-stdout.txt"
    with out_path.open("wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "jev_select", *args],
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        peak = 0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                seconds = time.perf_counter() - started
                return {
                    "finished": True,
                    "seconds": seconds,
                    "peak_mib": usage.ru_maxrss / 1024,
                    "code": os.waitstatus_to_exitcode(status),
                    "gaps": gaps(out_path.read_text("utf-8")),
                }
            peak = max(peak, peak_rss_kib(process.pid))
            if time.perf_counter() - started >= timeout:
                process.kill()
                os.wait4(process.pid, 0)
                return {
                    "finished": False,
                    "seconds": timeout,
                    "peak_mib": peak / 1024,
                    "code": None,
                    "gaps": None,
                }
            time.sleep(POLL_S)


def gaps(stdout: str) -> str:
    prefix = "  kept: fanout (gaps: "
    for line in stdout.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) : -1]
    return "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shapes", default="4x8,6x9")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose package runs")
    arguments = parser.parse_args()
    code = arguments.code.resolve()
    shapes = [
        (int(callers), int(levels))
        for callers, _, levels in (shape.partition("x") for shape in arguments.shapes.split(","))
    ]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="jev-bench-fanout-") as temp:
        root = Path(temp)
        env = base_environment(root / "home")
        # The package under test comes first on the path, whichever is installed.
        env["PYTHONPATH"] = str(code)
        for callers, levels in shapes:
            repo = GitRepo.init(root / f"repo-{callers}x{levels}")
            base = repo.commit(fan_out_commit(callers, levels))
            head = repo.commit({"src/a.py": "a = 2\n"}, parents=[base])
            tasks = root / "tasks.yml"
            tasks.write_text(TASKS, "utf-8")
            args = ["plan", "--tasks-file", str(tasks), "--repo", str(repo.path)]
            args += ["--base", base, "--head", head]
            runs = []
            for _ in range(max(1, arguments.runs)):
                run = run_plan(args, env, root, arguments.timeout)
                if run["finished"] and run["code"] != 0:
                    raise SystemExit(f"{callers}x{levels}: the plan failed")
                runs.append(run)
                if not run["finished"]:
                    break  # a run that does not finish is not repeated
            finished = all(run["finished"] for run in runs)
            rows.append(
                {
                    "shape": f"{callers}x{levels}",
                    "files": levels + 1,
                    "full_jobs": callers ** (levels + 1),
                    "finished": finished,
                    "median_s": median([run["seconds"] for run in runs]) if finished else None,
                    "peak_mib": max(run["peak_mib"] for run in runs),
                    "gaps": runs[-1]["gaps"],
                    "runs": runs,
                }
            )
    print(f"Local plan over reusable-workflow fan-out, package from {code}")
    print(
        table(
            ["shape", "files", "jobs if expanded", "wall s", "peak MiB", "gaps"],
            [
                [
                    row["shape"],
                    row["files"],
                    f"{row['full_jobs']:,}",
                    f"{row['median_s']:.2f}"
                    if row["finished"]
                    else f"did not finish in {arguments.timeout:g} s",
                    row["peak_mib"],
                    row["gaps"] if row["finished"] else "-",
                ]
                for row in rows
            ],
        )
    )
    path = write_results(
        "fanout", {"code": str(code), "timeout_s": arguments.timeout, "rows": rows}
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
