"""Time to resolve the metadata of 20 tasks over one workflow with 30 jobs.

Each task names two jobs and a context file; every job checks out with an external action, runs a
local composite action and an npm script in its own package (whose script calls a second one).
``metadata.resolve_metadata`` is timed twice: with files served from memory (the pure resolver)
and with every file read through ``git cat-file`` from a real repository, one process per file
as the product reads them. External action metadata comes from an in-memory snapshot, so no
network time is included.

    python bench/metadata.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from common import median, table, write_results
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.core.evidence import ActionFile, resolve_metadata
from jev_select.core.inputs import parse_inputs
from jev_select.edges.git import GitError, run_git, sanitised_environment

JOBS = 30
TASKS = 20
CHECKOUT = "b4ffde65f46336ab88eb53be808477a3936bae11"
CHECKOUT_METADATA = ActionFile(
    text="name: Checkout\ndescription: Fetches the repository.\ninputs:\n  fetch-depth:\n"
    "    description: Commits of history to fetch.\nruns:\n  using: node20\n  main: index.js\n",
    file_path="action.yml",
    resolved_sha=CHECKOUT,
)


def repository_files() -> dict[str, str]:
    lines = ["name: ci", "on: pull_request", "jobs:"]
    files: dict[str, str] = {}
    for index in range(JOBS):
        lines += [
            f"  job{index}:",
            f"    name: Package {index}",
            "    runs-on: ubuntu-latest",
            "    defaults:",
            "      run:",
            f"        working-directory: packages/p{index}",
            "    steps:",
            f"      - uses: actions/checkout@{CHECKOUT}",
            "        with:",
            "          fetch-depth: 1",
            "      - uses: ./.github/actions/setup",
            "      - run: npm run test",
        ]
        files[f"packages/p{index}/package.json"] = (
            f'{{"name": "p{index}", "scripts": {{"test": "npm run build && vitest run", '
            '"build": "tsc -p ."}}\n'
        )
        files[f"packages/p{index}/README.md"] = f"# Package {index}\n\n" + "Notes.\n" * 200
    files[".github/workflows/ci.yml"] = "\n".join(lines) + "\n"
    files[".github/actions/setup/action.yml"] = (
        "name: setup\ndescription: Installs Node and the locked dependencies.\n"
        "runs:\n  using: composite\n  steps:\n    - run: npm ci\n      shell: bash\n"
    )
    return files


def tasks_yaml() -> str:
    blocks = []
    for index in range(TASKS):
        blocks.append(
            f"t{index}:\n"
            f"  description: Tests of packages {index} and {(index + 10) % JOBS}.\n"
            "  jobs:\n"
            "    - workflow: .github/workflows/ci.yml\n"
            f"      job: job{index}\n"
            "    - workflow: .github/workflows/ci.yml\n"
            f"      job: job{(index + 10) % JOBS}\n"
            f"  context_files: [packages/p{index}/README.md]\n"
        )
    return "".join(blocks)


def fetch_action(owner: str, repo: str, subpath: str, ref: str) -> ActionFile | str:
    return CHECKOUT_METADATA if (owner, repo, ref) == ("actions", "checkout", CHECKOUT) else "x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    runs = max(1, parser.parse_args().runs)
    files = repository_files()
    tasks = parse_inputs({c.INPUT_TASKS: tasks_yaml()}, local_mode=True).tasks
    memory = {path: text.encode("utf-8") for path, text in files.items()}

    def timed(read_file: Any) -> tuple[float, int, bool]:
        started = time.perf_counter()
        result = resolve_metadata(
            tasks, read_file=read_file, fetch_action=fetch_action, repository="local", commit=sha
        )
        elapsed = (time.perf_counter() - started) * 1000
        incomplete = any(entry.incomplete for entry in result.evidence.values())
        return elapsed, len(result.hints), incomplete

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as temp:
        repo = GitRepo.init(Path(temp) / "repo")
        tree: dict[str | bytes, Any] = {path: text for path, text in files.items()}
        sha = repo.commit(tree)
        environment = sanitised_environment(os.environ)
        reads = [0]

        def from_git(path: str) -> bytes | None:
            reads[0] += 1
            try:
                return run_git(
                    ["cat-file", "blob", f"{sha}:{path}"],
                    cwd=str(repo.path),
                    environment=environment,
                    cap=c.METADATA_FILE_CAP,
                )
            except GitError:
                return None

        for name, reader in (("in memory", memory.get), ("git cat-file", from_git)):
            samples = []
            reads[0] = 0
            for _ in range(runs):
                elapsed, hints, incomplete = timed(reader)
                samples.append(elapsed)
            if incomplete:
                raise SystemExit("some task metadata was incomplete")
            rows.append(
                {
                    "files": name,
                    "median_ms": median(samples),
                    "min_ms": min(samples),
                    "hints": hints,
                    "file_reads_per_run": reads[0] // runs if reads[0] else None,
                }
            )
    print(f"Metadata of {TASKS} tasks over a workflow with {JOBS} jobs, median of {runs}")
    print(
        table(
            ["files", "median ms", "min ms", "file reads"],
            [
                [row["files"], row["median_ms"], row["min_ms"], row["file_reads_per_run"] or "-"]
                for row in rows
            ],
        )
    )
    path = write_results("metadata", {"runs": runs, "tasks": TASKS, "jobs": JOBS, "rows": rows})
    print(f"results: {path}")


if __name__ == "__main__":
    main()
