"""How long after its deadline a ``jev-select plan`` process that Jev never answers has exited.

Each run is one real process in GitHub mode on a pull request (a file remote, three tasks, an
HTTPS stand-in Jev that holds every request far past the deadline) with ``timeout-ms`` 2000.
The overshoot is the time from the first request reaching the server to the exit the caller
sees (``wait4`` returning), less the deadline: what a workflow waits beyond what it asked for.
The deadline itself starts a little before that request (connect and TLS), so the figure errs
on the side of looking shorter than the whole process's wait by those few milliseconds. Beside
it, the time from the process's last write (the step summary's modification time) to its exit
shows how much of the overshoot is the way out of the interpreter.

Three loads, 20 runs each by default:

- ``quiet``: one run at a time on an otherwise idle machine;
- ``busy``: one run at a time beside two processes spinning on the CPU;
- ``crowd``: ten runs started at once (so 20 runs are two rounds of ten).

    python bench/deadline.py [--runs 20] [--deadline-ms 2000] [--package-root DIR]

``--package-root`` runs the package of another checkout (a worktree of an older commit, say)
instead of this one, for a before-and-after comparison in one session.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from common import machine, median, table, write_results
from support.cliutil import API_KEY_SENTINEL, THREE_TASKS_TEMPLATE, UNIT_WORKFLOW, GitHubEnv
from support.fakejev import FakeJev, RecordedRequest, Reply
from support.gitrepo import GitRepo

HOLD_S = 60.0
LOADS = ("quiet", "busy", "crowd")
CROWD = 10
SPINNERS = 2


class ArrivalLog:
    """The first arrival time (``perf_counter``) of a request under each run's path prefix."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.first: dict[str, float] = {}

    def respond(self, request: RecordedRequest) -> Reply:
        arrived = time.perf_counter()
        prefix = request.path.split("/")[1]
        with self._lock:
            self.first.setdefault(prefix, arrived)
        return Reply.slow(HOLD_S)


def pull_request(root: Path) -> tuple[str, str, str, str]:
    repo = GitRepo.init(root / "origin")
    base = repo.commit(
        {
            "src/parser/a.py": "def parse():\n    return 1\n",
            "docs/index.md": "# Docs\n",
            "tests/conftest.py": "# fixtures\n",
            ".github/workflows/ci.yml": UNIT_WORKFLOW,
        }
    )
    head = repo.commit(
        {"src/parser/a.py": "def parse():\n    return 2\n"}, parents=[base], branch="change"
    )
    return repo.url, base, head, repo.merge(base, head)


def environment(
    root: Path, jev: FakeJev, prefix: str, commits: tuple[str, str, str, str], deadline_ms: int
) -> dict[str, str]:
    _remote, base, head, merge = commits
    github = GitHubEnv(
        root=root,
        inputs={
            "tasks": THREE_TASKS_TEMPLATE.format(unit="Runs the unit tests of the parser."),
            "api-key": API_KEY_SENTINEL,
            "allow-external-context": "true",
            "api-base-url": f"{jev.base_url}/{prefix}",
            "timeout-ms": str(deadline_ms),
        },
        sha=merge,
    )
    github.event = github.pull_request_event(base=base, head=head)
    env = github.environ()
    assert jev.ca_bundle is not None
    env["REQUESTS_CA_BUNDLE"] = jev.ca_bundle
    return env


def start(env: Mapping[str, str], remote: str, root: Path, package_root: Path | None) -> Any:
    env = dict(env)
    if package_root is not None:
        env["PYTHONPATH"] = str(package_root)
    return subprocess.Popen(
        [sys.executable, "-m", "jev_select", "plan", "--remote", remote],
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_exit(process: Any) -> tuple[float, float, int]:
    """``perf_counter`` and wall-clock readings of the exit, and the exit code."""
    _, status, _ = os.wait4(process.pid, 0)
    ended, ended_wall = time.perf_counter(), time.time()
    process.returncode = os.waitstatus_to_exitcode(status)
    return ended, ended_wall, process.returncode


@contextlib.contextmanager
def spinners(count: int) -> Iterator[None]:
    processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for process in processes:
            process.kill()
            process.wait()


def run_round(
    root: Path,
    jev: FakeJev,
    log: ArrivalLog,
    commits: tuple[str, str, str, str],
    *,
    names: list[str],
    deadline_ms: int,
    package_root: Path | None,
) -> list[tuple[float, float]]:
    """Start one process per name at once; return, for each, the overshoot and the time from
    its last write (the step summary) to its exit, in milliseconds."""
    processes = []
    summaries: dict[str, Path] = {}
    for name in names:
        run_root = root / name
        env = environment(run_root, jev, name, commits, deadline_ms)
        summaries[name] = Path(env["GITHUB_STEP_SUMMARY"])
        processes.append((name, start(env, commits[0], run_root, package_root)))
    ended: dict[str, float] = {}
    last_write_to_exit: dict[str, float] = {}
    waiters = []
    for name, process in processes:

        def wait(name: str = name, process: Any = process) -> None:
            ended[name], ended_wall, code = wait_exit(process)
            if code != 0:
                raise SystemExit(f"{name}: plan exited {code}")
            written = summaries[name].stat().st_mtime_ns / 1e9
            last_write_to_exit[name] = (ended_wall - written) * 1000

        waiter = threading.Thread(target=wait)
        waiter.start()
        waiters.append(waiter)
    for waiter in waiters:
        waiter.join()
    samples = []
    for name in names:
        if name not in log.first:
            raise SystemExit(f"{name}: no request reached the server")
        overshoot = (ended[name] - log.first[name]) * 1000 - deadline_ms
        samples.append((overshoot, last_write_to_exit[name]))
    return samples


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def measure(
    root: Path,
    jev: FakeJev,
    log: ArrivalLog,
    commits: tuple[str, str, str, str],
    load: str,
    *,
    runs: int,
    deadline_ms: int,
    package_root: Path | None,
) -> list[tuple[float, float]]:
    overshoots: list[tuple[float, float]] = []
    counter = 0

    def names(count: int) -> list[str]:
        nonlocal counter
        chosen = [f"{load}{counter + index}" for index in range(count)]
        counter += count
        return chosen

    def one_round(batch: list[str]) -> list[tuple[float, float]]:
        return run_round(
            root, jev, log, commits, names=batch, deadline_ms=deadline_ms, package_root=package_root
        )

    if load == "crowd":
        while len(overshoots) < runs:
            overshoots += one_round(names(min(CROWD, runs - len(overshoots))))
        return overshoots
    with spinners(SPINNERS if load == "busy" else 0):
        for _ in range(runs):
            overshoots += one_round(names(1))
    return overshoots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--deadline-ms", type=int, default=2000)
    parser.add_argument("--loads", default=",".join(LOADS))
    parser.add_argument("--package-root", type=Path, default=None)
    args = parser.parse_args()
    loads = [load for load in args.loads.split(",") if load]
    log = ArrivalLog()
    results: dict[str, Any] = {}
    with FakeJev(tls=True, responder=log.respond) as jev, tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        commits = pull_request(root)
        for load in loads:
            results[load] = measure(
                root,
                jev,
                log,
                commits,
                load,
                runs=args.runs,
                deadline_ms=args.deadline_ms,
                package_root=args.package_root,
            )
    rows = []
    for load, samples in results.items():
        values = [overshoot for overshoot, _ in samples]
        tails = [tail for _, tail in samples]
        within_250 = sum(1 for value in values if value <= 250) / len(values)
        within_500 = sum(1 for value in values if value <= 500) / len(values)
        rows.append(
            [
                load,
                len(values),
                min(values),
                median(values),
                percentile(values, 0.9),
                max(values),
                f"{within_250:.0%}",
                f"{within_500:.0%}",
                median(tails),
                max(tails),
            ]
        )
    print(f"overshoot past a {args.deadline_ms} ms deadline, ms (first request to exit):")
    headers = ["LOAD", "RUNS", "MIN", "MEDIAN", "P90", "MAX", "<=250", "<=500"]
    print(table([*headers, "WRITE-TO-EXIT", "MAX"], rows))
    path = write_results(
        "deadline",
        {
            "machine": machine(),
            "deadline_ms": args.deadline_ms,
            "package_root": str(args.package_root) if args.package_root else None,
            "overshoot_ms": {load: [o for o, _ in samples] for load, samples in results.items()},
            "last_write_to_exit_ms": {
                load: [t for _, t in samples] for load, samples in results.items()
            },
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
