"""``jev-select history --repository`` against a GitHub stand-in: requests and time per change.

Builds a temporary repository of N merged changes (merge commits and squash merges alternating,
each touching one file, the CI workflow at the root), and serves each change's pull request, its
CI runs and their jobs from the test suite's fake GitHub API (HTTPS, a fixed latency per answer):
most changes measured, a few with a run in progress, re-run or cancelled, a few squash merges
whose pull request GitHub only finds through the commit. Runs ``jev-select history`` as a real
process twice over the same ``--out``: the second run must send no request at all about the
changes the first one measured.

    python bench/history_ci.py [--changes 100] [--latency-ms 30]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import REPOSITORY, base_environment, run_product, table, write_results

TOKEN = "bench-token-0123456789"
WORKFLOW = """\
on: pull_request
jobs:
  unit:
    strategy:
      matrix:
        python: ["3.11", "3.12", "3.13"]
    runs-on: ubuntu-latest
    steps: [{run: pytest}]
  lint:
    name: Lint
    runs-on: ubuntu-latest
    steps: [{run: ruff check .}]
  build:
    name: Build
    needs: [unit, lint]
    uses: ./.github/workflows/build.yml
  docs:
    runs-on: ubuntu-latest
    steps: [{run: make docs}]
"""
TASKS = """\
build:
  description: Builds the package.
  jobs: [{workflow: .github/workflows/ci.yml, job: build}]
docs:
  description: Builds the documentation site.
  force_paths: ["docs/**"]
lint:
  description: Runs the linters.
  jobs: [{workflow: .github/workflows/ci.yml, job: lint}]
unit:
  description: Runs the unit tests.
  jobs: [{workflow: .github/workflows/ci.yml, job: unit}]
"""
JOB_NAMES = ("unit (3.11)", "unit (3.12)", "unit (3.13)", "Lint", "Build / wheel", "docs")


def build(work: Path, actions: Any, count: int, rng: random.Random) -> dict[str, list[str]]:
    """The repository and its GitHub data; returns, per expected outcome, the marks of each
    change a request about it carries (its commit, its pull request's head, number and run)."""
    from support.fakeactions import FakeActions, job, run
    from support.gitrepo import GitRepo

    repo = GitRepo.init(work / "repo")
    first: dict[str | bytes, str | None] = {
        ".github/workflows/ci.yml": WORKFLOW,
        "docs/index.md": "# Docs\n",
    }
    repo.commit(first, message="init")
    expected: dict[str, list[str]] = {}
    for index in range(1, count + 1):
        tip = repo.tip()
        assert tip is not None
        files: dict[str | bytes, str | None] = {f"src/m{index % 10}.py": f"value = {index}\n"}
        number = index
        if index % 2:
            feature = repo.commit(files, parents=[tip], branch=None)
            head = repo.merge(
                tip, feature, message=f"Merge pull request #{number} from bench/f{index}"
            )
            repo.set_ref("refs/heads/main", head)
            pr_head = feature
        else:
            head = repo.commit(files, message=f"Change {index} (#{number})")
            pr_head = f"{index:040x}"
        record = FakeActions.pull_record(number, head=pr_head, merge_commit=head)
        if index % 17 == 0:
            # A number of another repository's numbering: found through the commit instead.
            actions.pull(number, head=f"{index + 9000:040x}", merge_commit=f"{index + 9000:040x}")
            actions.commit_pulls(head, [record])
        else:
            actions.fake.route(actions.pull_path(number), _json(record))
        run_id = 100_000 + index
        roll = rng.random()
        if roll < 0.04:
            outcome, runs = "in-progress", [run(run_id, pr_head, status="in_progress")]
        elif roll < 0.07:
            outcome, runs = "re-run", [run(run_id, pr_head, attempt=2)]
        elif roll < 0.09:
            outcome, runs = "cancelled", [run(run_id, pr_head, conclusion="cancelled")]
        else:
            outcome, runs = "measured", [run(run_id, pr_head)]
            actions.jobs(
                run_id,
                [
                    job(name, "failure" if rng.random() < 0.03 else "success", rng.randint(30, 900))
                    for name in JOB_NAMES
                ],
            )
        actions.runs(pr_head, runs)
        marks = [head, pr_head, f"/pulls/{number}", f"/runs/{run_id}/"]
        expected.setdefault(outcome, []).extend(marks)
    return expected


def _marks(path: str, mark: str) -> bool:
    if mark.startswith("/pulls/"):
        return path.endswith(mark)
    return mark in path


def _json(value: Any) -> Any:
    from support.fakegithub import FakeResponse

    return FakeResponse.json(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--latency-ms", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=17)
    arguments = parser.parse_args()
    from support.fakeactions import FakeActions
    from support.fakegithub import FakeGitHub

    rng = random.Random(arguments.seed)
    with (
        tempfile.TemporaryDirectory(prefix="bench-history-ci-") as scratch,
        FakeGitHub(tls=True) as api,
    ):
        work = Path(scratch)
        assert api.ca_bundle is not None
        expected = build(work, FakeActions(api, REPOSITORY), arguments.changes, rng)
        api.latency = arguments.latency_ms / 1000
        (work / "tasks.yml").write_text(TASKS, "utf-8")
        env = base_environment(work / "home")
        env.update(
            {
                "GITHUB_API_URL": api.url,
                "GITHUB_TOKEN": TOKEN,
                "REQUESTS_CA_BUNDLE": api.ca_bundle,
                "TMPDIR": str(work),
            }
        )
        out = work / "out"
        command = [
            "history",
            "--tasks-file",
            str(work / "tasks.yml"),
            "--repo",
            str(work / "repo"),
            "--last",
            str(arguments.changes),
            "--repository",
            REPOSITORY,
            "--ci-workflow",
            "ci.yml",
            "--out",
            str(out),
            "--format",
            "json",
        ]
        rows = []
        measured = expected.get("measured", [])
        for label in ("first", "second"):
            before = len(api.requests)
            finished = run_product(command, env, work)
            if finished.code != 0:
                sys.stderr.write(finished.stdout + finished.stderr)
                return 1
            view = json.loads(finished.stdout)
            sent = [request.path for request in api.requests[before:]]
            heads = {change["head"] for change in view["changes"]}
            # "/pulls/1" also marks "/pulls/10": the query strings end each mark unambiguously.
            about_measured = [path for path in sent if any(_marks(path, mark) for mark in measured)]
            rows.append(
                {
                    "run": label,
                    "changes": len(view["changes"]),
                    "latency_ms": arguments.latency_ms,
                    "wall_s": round(finished.seconds, 2),
                    "requests": len(sent),
                    "requests_per_change": round(len(sent) / max(len(heads), 1), 2),
                    "requests_about_measured": len(about_measured) if label == "second" else "-",
                    "peak_rss_mib": round(finished.max_rss_kib / 1024, 1),
                    "ci": view["summary"]["ci"],
                }
            )
    headers = [name for name in rows[0] if name != "ci"]
    print(table(headers, [[row[name] for name in headers] for row in rows]))
    for row in rows:
        print(f"{row['run']}: {json.dumps(row['ci'])}")
    write_results("history_ci", {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
