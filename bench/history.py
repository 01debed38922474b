"""Collection cost against the age of the repository: local, head and merge mode.

Builds repositories of 1,000, 20,000 and 100,000 commits with ``git fast-import`` (a tree of
1,000 small files, each commit rewriting one of them) and a pull request branched 20 commits
before the tip of ``main`` (three commits, a patch of about 3 KiB). For each size it collects the
change three ways, each in a fresh process:

- ``local``: head mode, borrowing the repository's objects (what ``jev-select plan`` does
  locally without ``--remote``);
- ``head``: head mode fetching from the repository as a ``file://`` remote, deepening only until
  the merge base is proven unique;
- ``merge``: merge mode (depth-1 fetches of base, head and merge commit), the control.

Time is the wall time of the whole collection (temporary repository to its removal), median of
the runs. Peak RSS is given for the product process and for the largest git process it ran, with
the processes that git process waited for (``upload-pack``, ``pack-objects``); it comes from one
more run in which each git runs under ``/usr/bin/time`` through a wrapper first on ``PATH``,
because the product's own forks would otherwise count as git (the column shows ``-`` without
``/usr/bin/time``).

    python bench/history.py [--runs 3] [--sizes 1000,20000,100000]
    python bench/history.py --repo PATH --base REV --head REV   # a real repository

With ``--repo`` only ``local`` and ``head`` are measured, between the two revisions given.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import ROOT, median, table, write_results
from support.gitrepo import git_env

SIZES = (1000, 20000, 100000)
FILES = 1000
PR_OFFSET = 20
MODES = ("local", "head", "merge")


def _git(repo: Path, *args: str, data: bytes | None = None) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args], input=data, env=git_env(), capture_output=True, check=True
    )
    return result.stdout.decode("utf-8").strip()


def _file(index: int) -> str:
    return f"src/d{index % 20:02d}/f{index:04d}.txt"


def _commit(stream: list[bytes], ref: str, mark: int, stamp: int, message: str) -> None:
    body = message.encode()
    stream.append(f"commit {ref}\nmark :{mark}\n".encode())
    stream.append(f"committer Bench <bench@example.invalid> {stamp} +0000\n".encode())
    stream.append(f"data {len(body)}\n".encode() + body + b"\n")


def _blob(stream: list[bytes], path: str, content: bytes) -> None:
    stream.append(f"M 100644 inline {path}\ndata {len(content)}\n".encode() + content + b"\n")


def build(path: Path, commits: int) -> dict[str, str]:
    """A repository with ``commits`` on main and a pull request; returns base, head and merge."""
    subprocess.run(
        ["git", "init", "--quiet", "-b", "main", str(path)],
        env=git_env(),
        check=True,
        capture_output=True,
    )
    stream: list[bytes] = []
    stamp = 1_600_000_000
    _commit(stream, "refs/heads/main", 1, stamp, "initial tree")
    for index in range(FILES):
        _blob(stream, _file(index), f"file {index}\n".encode() * 8)
    for number in range(2, commits + 1):
        stamp += 60
        _commit(stream, "refs/heads/main", number, stamp, f"change {number}")
        stream.append(f"from :{number - 1}\n".encode())
        _blob(stream, _file(number % FILES), f"file {number % FILES} at {number}\n".encode() * 8)
    fork = commits - PR_OFFSET
    feature = "".join(f"def feature_{n}(value):\n    return value * {n}\n\n" for n in range(60))
    for offset, (name, content) in enumerate(
        [
            ("feature/feature.py", feature[:1200]),
            ("feature/feature.py", feature[:2400]),
            ("docs/feature.md", "# Feature\n\nWhat the feature does and why.\n" * 8),
        ]
    ):
        stamp += 60
        mark = commits + 1 + offset
        _commit(stream, "refs/heads/pr", mark, stamp, f"pull request {offset}")
        stream.append(f"from :{fork if offset == 0 else mark - 1}\n".encode())
        _blob(stream, name, content.encode())
    _git(path, "fast-import", "--quiet", data=b"".join(stream))
    base = _git(path, "rev-parse", "refs/heads/main")
    head = _git(path, "rev-parse", "refs/heads/pr")
    tree = _git(path, "merge-tree", "--write-tree", base, head).split()[0]
    merge = _git(path, "commit-tree", tree, "-p", base, "-p", head, "-m", "merge")
    _git(path, "update-ref", "refs/pull/1/merge", merge)
    return {"base": base, "head": head, "merge": merge}


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs in a fresh process: one collection, its time and peak memory."""
    sys.path.insert(0, str(ROOT))
    from jev_select import contracts as c
    from jev_select.edges.collect import collect_change
    from jev_select.edges.git.session import GitSession

    repo = spec["repo"]
    mode = spec["mode"]
    merge_mode = mode == "merge"
    temp_root = tempfile.mkdtemp(prefix="jev-bench-")
    started = time.perf_counter()
    with GitSession(
        Path(repo).as_uri(),
        token="",
        temp_root=temp_root,
        environ=os.environ,
        borrow_from=repo if mode == "local" else None,
    ) as session:
        result = collect_change(
            session,
            base_sha=spec["base"],
            head_sha=spec["head"],
            tested_sha=spec["merge"] if merge_mode else spec["head"],
            tested_ref=c.TESTED_REF_MERGE if merge_mode else c.TESTED_REF_HEAD,
            metadata_sha=spec["base"],
            max_diff_bytes=int(c.DEFAULT_MAX_DIFF_BYTES),
        )
        borrowed = session.borrowing
    seconds = time.perf_counter() - started
    os.rmdir(temp_root)
    return {
        "ms": seconds * 1000.0,
        "error": result.error,
        "diff_bytes": result.change_set.diff_bytes if result.change_set else None,
        "borrowed": borrowed,
        "rss_self_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }


TIME = Path("/usr/bin/time")


def _git_wrapper(directory: Path) -> Path | None:
    """A ``git`` that runs the real one under ``/usr/bin/time``, appending peak RSS to a log."""
    real = shutil.which("git")
    if real is None or not TIME.exists():
        return None
    wrapper = directory / "git"
    wrapper.write_text(
        f'#!/bin/sh\nexec {TIME} -a -o "$JEV_BENCH_RSS_LOG" -f %M {real} "$@"\n',
        "utf-8",
    )
    wrapper.chmod(0o755)
    return directory


def _run(spec: dict[str, Any], *, memory: bool) -> dict[str, Any]:
    """One collection in a fresh process; with ``memory``, git runs under ``/usr/bin/time``."""
    with tempfile.TemporaryDirectory(prefix="jev-bench-git-") as scratch:
        env = dict(os.environ)
        log = Path(scratch) / "rss.log"
        wrapper = _git_wrapper(Path(scratch)) if memory else None
        if wrapper is not None:
            env["PATH"] = f"{wrapper}{os.pathsep}{env.get('PATH', '')}"
            env["JEV_BENCH_RSS_LOG"] = str(log)
        output = subprocess.run(
            [sys.executable, __file__, "--measure", json.dumps(spec)],
            capture_output=True,
            check=True,
            text=True,
            env=env,
        ).stdout
        result: dict[str, Any] = json.loads(output)
        text = log.read_text() if log.exists() else ""
        # Failed commands add a "Command exited ..." line before their figure.
        peaks = [int(line) for line in text.splitlines() if line.isdigit()]
    if result["error"] is not None:
        raise RuntimeError(f"collection failed in {spec['mode']} mode: {result['error']}")
    result["rss_git_mib"] = max(peaks) / 1024.0 if peaks else None
    result["git_processes"] = len(peaks)
    return result


def _series(
    specs: list[tuple[str, dict[str, Any]]], modes: tuple[str, ...], runs: int
) -> list[Any]:
    """Every repository in every mode, ``runs`` rounds, interleaved.

    Round after round rather than one series after another, so that a change in the machine's
    load while the benchmark runs falls on every figure alike instead of on one size.
    """
    keys = [(label, spec, mode) for label, spec in specs for mode in modes]
    timed: dict[tuple[str, str], list[dict[str, Any]]] = {
        (name, mode): [] for name, _, mode in keys
    }
    for round_number in range(runs):
        for label, spec, mode in keys:
            timed[(label, mode)].append(_run({**spec, "mode": mode}, memory=False))
        print(f"  round {round_number + 1} of {runs} done", file=sys.stderr)
    rows: list[Any] = []
    for label, spec, mode in keys:
        results = timed[(label, mode)]
        # One more run under /usr/bin/time gives git's memory (the wrapper's own processes
        # would otherwise be timed too).
        sized = _run({**spec, "mode": mode}, memory=True)
        rows.append(
            {
                "repository": label,
                "mode": mode,
                "ms": median([result["ms"] for result in results]),
                "runs_ms": [round(result["ms"], 1) for result in results],
                "rss_self_mib": max(result["rss_self_mib"] for result in [*results, sized]),
                "rss_git_mib": _largest([sized["rss_git_mib"]]),
                "git_processes": sized["git_processes"],
                "diff_bytes": results[0]["diff_bytes"],
            }
        )
    return rows


def _largest(values: list[float | None]) -> float | str:
    known = [value for value in values if value is not None]
    return max(known) if known else "-"


def _ratios(rows: list[dict[str, Any]], sizes: list[int]) -> dict[str, float]:
    by_key = {(row["repository"], row["mode"]): row["ms"] for row in rows}
    smallest, largest = str(sizes[0]), str(sizes[-1])
    return {
        mode: by_key[(largest, mode)] / by_key[(smallest, mode)]
        for mode in MODES
        if (largest, mode) in by_key and (smallest, mode) in by_key
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default=",".join(str(size) for size in SIZES))
    parser.add_argument("--repo")
    parser.add_argument("--base")
    parser.add_argument("--head")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--build", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build is not None:
        print(json.dumps(build(Path(args.build[0]), int(args.build[1]))))
        return 0
    if args.measure is not None:
        print(json.dumps(measure(json.loads(args.measure))))
        return 0
    rows: list[dict[str, Any]] = []
    document: dict[str, Any] = {"runs": args.runs}
    if args.repo is not None:
        repo = Path(args.repo).resolve()
        spec = {
            "repo": str(repo),
            "base": _git(repo, "rev-parse", "--verify", f"{args.base}^{{commit}}"),
            "head": _git(repo, "rev-parse", "--verify", f"{args.head}^{{commit}}"),
        }
        spec["merge"] = spec["head"]
        commits = _git(repo, "rev-list", "--count", "--all")
        print(f"{repo}: {commits} commits", file=sys.stderr)
        rows = _series([(repo.name, spec)], ("local", "head"), args.runs)
        document.update({"repository": str(repo), "commits": int(commits), **spec})
    else:
        sizes = [int(size) for size in args.sizes.split(",")]
        with tempfile.TemporaryDirectory(prefix="jev-bench-history-") as scratch:
            specs: list[tuple[str, dict[str, Any]]] = []
            for size in sizes:
                started = time.perf_counter()
                repo = Path(scratch) / f"repo-{size}"
                # Built by another process: a forked child's peak RSS would otherwise count the
                # memory this process used to build the stream.
                built_spec = subprocess.run(
                    [sys.executable, __file__, "--build", str(repo), str(size)],
                    capture_output=True,
                    check=True,
                    text=True,
                ).stdout
                spec = {"repo": str(repo), **json.loads(built_spec)}
                built = time.perf_counter() - started
                print(f"built {size} commits in {built:.1f} s", file=sys.stderr)
                specs.append((str(size), spec))
            rows = _series(specs, MODES, args.runs)
        document["ratios_largest_to_smallest"] = _ratios(rows, sizes)
    document["rows"] = rows
    print(
        table(
            ["commits", "mode", "median ms", "RSS product MiB", "RSS git MiB", "git runs", "patch"],
            [
                [
                    row["repository"],
                    row["mode"],
                    row["ms"],
                    row["rss_self_mib"],
                    row["rss_git_mib"],
                    row["git_processes"],
                    row["diff_bytes"],
                ]
                for row in rows
            ],
        )
    )
    for mode, ratio in document.get("ratios_largest_to_smallest", {}).items():
        print(f"{mode}: largest / smallest = {ratio:.2f}")
    path = write_results("history", document)
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
