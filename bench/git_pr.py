"""Whole-process time of ``jev-select plan`` for a realistic pull request, and git's share of it.

The repository has 2,000 commits on ``main``; the pull request changes 500 files, one line each,
and is tested at its merge commit (the default ``tested-ref: merge``). The product diffs with
full 40-hex index lines, so 500 changed files make at least about 80 KiB of patch: this is the
smallest patch over 500 files, the closest to 64 KiB there is. The product fetches from the
repository path given as ``--remote`` (as GHES mirrors and tests do) and asks the HTTPS stand-in
Jev of the test suite, which answers at once. Git's share is the report's
``durations_ms.collection`` (validation end to metadata end: fetches, checks, diff and metadata
reads) against ``durations_ms.total`` and the process wall time.

    python bench/git_pr.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from common import API_KEY, github_environment, median, run_product, table, write_results
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

HISTORY = 2000
FILES = 500
TASKS = """unit:
  description: Unit tests of every module of the repository.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: unit
docs:
  description: Builds the documentation in docs/.
  force_paths: ["docs/**"]
lint:
  description: Lints the whole repository.
  always: true
"""
WORKFLOW = """name: ci
on: pull_request
jobs:
  unit:
    runs-on: ubuntu-latest
    steps:
      - run: make test
"""


# The product diffs with full 40-hex index lines, so a one-line change of a file costs about 160
# bytes of headers and lines even with three-character paths: 500 such files are the smallest
# patch over 500 files the product can see (about 80 KiB, the closest to 64 KiB there is).


def _path(index: int) -> str:
    return f"{index:03d}"


def _line(index: int, fill: str) -> str:
    return f"{index:03d}{fill}\n"


def build(root: Path) -> tuple[GitRepo, str, str, str]:
    repo = GitRepo.init(root / "origin")
    files: dict[str | bytes, Any] = {".github/workflows/ci.yml": WORKFLOW}
    for index in range(FILES):
        files[_path(index)] = _line(index, "o")
    start = repo.commit(files, message="initial tree")
    base = repo.linear_history(start, HISTORY - 1)
    changes: dict[str | bytes, Any] = {_path(index): _line(index, "n") for index in range(FILES)}
    head = repo.commit(changes, parents=[base], branch="feature")
    merge = repo.merge(base, head)
    return repo, base, head, merge


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    runs = max(1, parser.parse_args().runs)
    rows: list[dict[str, Any]] = []
    with FakeJev(tls=True, scores=0.5) as jev, tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        repo, base, head, merge = build(root)
        assert jev.ca_bundle is not None
        for attempt in range(runs):
            env = github_environment(
                root / f"runner-{attempt}",
                inputs={
                    "tasks": TASKS,
                    "api-key": API_KEY,
                    "allow-external-context": "true",
                    "api-base-url": jev.base_url,
                    "max-diff-bytes": "262144",
                    "timeout-ms": "60000",
                },
                base_sha=base,
                head_sha=head,
                merge_sha=merge,
            )
            env["REQUESTS_CA_BUNDLE"] = jev.ca_bundle
            run = run_product(["plan", "--remote", str(repo.path)], env, root)
            if run.code != 0:
                raise SystemExit(f"plan failed: {run.stdout.strip()}")
            report_path = next(Path(env["RUNNER_TEMP"]).glob("jev-select-report-*/report.json"))

            report = json.loads(report_path.read_text("utf-8"))
            durations = report["durations_ms"]
            rows.append(
                {
                    "wall_ms": run.seconds * 1000,
                    "total_ms": durations["total"],
                    "collection_ms": durations["collection"],
                    "jev_ms": durations["jev"],
                    "status": report["status"],
                    "diff_bytes": report["diff_bytes"],
                    "changed_paths": report["changed_path_count"],
                    "groups": len(report["observation"]["chunks"]),
                }
            )
    wall = median([row["wall_ms"] for row in rows])
    total = median([row["total_ms"] for row in rows])
    collection = median([row["collection_ms"] for row in rows])
    jev_ms = median([row["jev_ms"] or 0.0 for row in rows])
    first = rows[0]
    print(
        f"PR of {first['changed_paths']} files, {first['diff_bytes']} patch bytes, "
        f"{first['groups']} groups, over {HISTORY} commits; median of {runs}"
    )
    print(
        table(
            ["measure", "median ms", "share of total"],
            [
                ["process wall time", wall, "-"],
                ["report total", total, "100 %"],
                ["collection (git + metadata)", collection, f"{100 * collection / total:.0f} %"],
                ["jev phase", jev_ms, f"{100 * jev_ms / total:.0f} %"],
            ],
        )
    )
    path = write_results(
        "git_pr",
        {
            "history_commits": HISTORY,
            "changed_files": FILES,
            "patch_bytes": rows[0]["diff_bytes"],
            "runs": rows,
            "median_wall_ms": wall,
            "median_total_ms": total,
            "median_collection_ms": collection,
            "median_jev_ms": jev_ms,
            "collection_share": collection / total,
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
