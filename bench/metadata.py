"""Time to resolve task metadata, from memory, from git, and through a slow GitHub API.

Each task names two jobs and a context file; every job checks out with an external action, runs a
local composite action and an npm script in its own package (whose script calls a second one).
``metadata.resolve_metadata`` is timed twice: with files served from memory (the pure resolver)
and with every file read through ``git cat-file`` from a real repository, one process per file
as the product reads them. External action metadata comes from an in-memory snapshot, so no
network time is included.

The lookup scenario times the whole metadata phase (``resolve_with_lookups``) for one task over
a workflow with 40 jobs: 37 run steps that use 30 distinct external actions, 3 call reusable
workflows of other repositories (each of whose jobs uses one more external action). The
actions and workflows come from the fake GitHub API of the test suite, answering every request
after 200 ms, and then from the same API never answering, where the overall lookup bound
(15 s) must hold.

    python bench/metadata.py [--runs 9] [--lookup-runs 5] [--silent-runs 2]
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
from jev_select.core.evidence.resolve import (
    ActionFile,
    LookupFailure,
    resolve_metadata,
    resolve_with_lookups,
)
from jev_select.core.inputs import parse_inputs
from jev_select.edges.git.runner import GitError, run_git, sanitised_environment
from jev_select.edges.github.api import GitHubApi
from jev_select.edges.github.lookups import MetadataLookups

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


def fetch_action(owner: str, repo: str, subpath: str, ref: str) -> ActionFile | LookupFailure:
    if (owner, repo, ref) == ("actions", "checkout", CHECKOUT):
        return CHECKOUT_METADATA
    return LookupFailure.MISSING


LOOKUP_JOBS = 40
REUSABLE = 3
EXTERNAL_ACTIONS = 30
LATENCY_S = 0.2


def lookup_scenario(github: Any) -> tuple[dict[str, bytes], Any]:
    """The repository files and task table of the lookup scenario, registered in ``github``."""
    lines = ["on: pull_request", "jobs:"]
    for index in range(LOOKUP_JOBS - REUSABLE):
        action = index % EXTERNAL_ACTIONS
        lines += [
            f"  job{index}:",
            "    runs-on: ubuntu-latest",
            "    steps:",
            f"      - uses: bench-org/action{action}@v1",
            f"      - run: make check{index}",
        ]
    for index in range(REUSABLE):
        lines += [
            f"  call{index}:",
            f"    uses: bench-org/shared{index}/.github/workflows/ci.yml@v1",
        ]
    for action in range(EXTERNAL_ACTIONS):
        github.add_action(f"bench-org/action{action}", "v1", {"action.yml": f"name: A{action}\n"})
    for index in range(REUSABLE):
        called = (
            "on: workflow_call\njobs:\n  build:\n    steps:\n"
            f"      - uses: bench-org/tool{index}@v1\n      - run: make build\n"
        )
        github.add_action(f"bench-org/shared{index}", "v1", {".github/workflows/ci.yml": called})
        github.add_action(f"bench-org/tool{index}", "v1", {"action.yml": f"name: T{index}\n"})
    files = {".github/workflows/ci.yml": ("\n".join(lines) + "\n").encode("utf-8")}
    table = "all:\n  description: Every job.\n  jobs:\n    - workflow: .github/workflows/ci.yml\n"
    tasks = parse_inputs({c.INPUT_TASKS: table}, local_mode=True).tasks
    return files, tasks


def lookup_rows(lookup_runs: int, silent_runs: int) -> list[dict[str, Any]]:
    from support.fakegithub import FakeGitHub

    rows: list[dict[str, Any]] = []
    with FakeGitHub() as github:
        files, tasks = lookup_scenario(github)
        for name, silent, count in (
            ("answers in 200 ms", False, lookup_runs),
            ("never answers", True, silent_runs),
        ):
            github.latency = LATENCY_S
            github.silent = silent
            github.max_in_flight = 0
            samples = []
            gaps = 0
            requests_before = len(github.requests)
            for _ in range(count):
                lookups = MetadataLookups(GitHubApi(github.url, ""))
                started = time.perf_counter()
                result = resolve_with_lookups(
                    tasks, read_file=files.get, lookups=lookups, repository="local", commit="0" * 40
                )
                samples.append((time.perf_counter() - started) * 1000)
                metadata = result.evidence["all"].job_metadata or {}
                warnings = metadata["warnings"]
                assert isinstance(warnings, list)
                gaps = len(warnings)
            rows.append(
                {
                    "api": name,
                    "median_ms": median(samples),
                    "max_ms": max(samples),
                    "gaps": gaps,
                    "requests_per_run": (len(github.requests) - requests_before) // count,
                    # A silent fake keeps connections the client gave up on open, so its count
                    # is not the client's concurrency; only the answering case reports it.
                    "max_in_flight": None if silent else github.max_in_flight,
                }
            )
    return rows


MONOREPO_PACKAGES = 300
MONOREPO_TASKS = 30


def monorepo_scenario() -> tuple[dict[str, bytes], Any]:
    """A pnpm workspace of ``MONOREPO_PACKAGES`` packages, each depending on the one before,
    and one job per task: a local composite setup, a filtered run with dependencies, a recursive
    run over a directory glob and a matrix-built script name."""
    files: dict[str, str] = {
        "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
        "package.json": '{"name": "root", "scripts": {"doctor": "node doctor.js", '
        '"test:unit": "vitest", "test:e2e": "playwright test", "test:build": "vite build"}}\n',
        ".github/actions/setup/action.yml": (
            "name: setup\ndescription: Installs the workspace.\ninputs:\n  node:\n"
            "    default: '22'\nruns:\n  using: composite\n  steps:\n"
            "    - run: pnpm install --frozen-lockfile\n      shell: bash\n"
            "    - run: pnpm run doctor\n      shell: bash\n"
        ),
    }
    for index in range(MONOREPO_PACKAGES):
        dependencies = f', "dependencies": {{"p{index - 1}": "workspace:*"}}' if index else ""
        typecheck = ', "typecheck": "tsc"' if index % 10 == 0 else ""
        scripts = f'{{"test": "vitest run"{typecheck}}}'
        files[f"packages/p{index}/package.json"] = (
            f'{{"name": "p{index}", "scripts": {scripts}{dependencies}}}\n'
        )
    lines = ["on: pull_request", "jobs:"]
    for index in range(MONOREPO_TASKS):
        lines += [
            f"  job{index}:",
            "    runs-on: ubuntu-latest",
            "    strategy:",
            "      matrix:",
            "        mode: [unit, e2e, build]",
            "    steps:",
            "      - uses: ./.github/actions/setup",
            f"      - run: pnpm --filter 'p{index}...' test",
            "      - run: pnpm -r --filter './packages/*' typecheck",
            "      - run: pnpm test:${{ matrix.mode }}",
        ]
    files[".github/workflows/ci.yml"] = "\n".join(lines) + "\n"
    table = "".join(
        f"t{index}:\n  description: Tests of package {index}.\n  jobs:\n"
        f"    - workflow: .github/workflows/ci.yml\n      job: job{index}\n"
        for index in range(MONOREPO_TASKS)
    )
    tasks = parse_inputs({c.INPUT_TASKS: table}, local_mode=True).tasks
    return {path: text.encode("utf-8") for path, text in files.items()}, tasks


def monorepo_row(runs: int) -> dict[str, Any]:
    files, tasks = monorepo_scenario()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        result = resolve_metadata(
            tasks,
            read_file=files.get,
            fetch_action=fetch_action,
            repository="local",
            commit="0" * 40,
            list_paths=lambda: tuple(files),
        )
        samples.append((time.perf_counter() - started) * 1000)
        scripts = 0
        for entry in result.evidence.values():
            listed = entry.evidence["packageScripts"]
            assert isinstance(listed, list)
            scripts += len(listed)
        if any(entry.incomplete for entry in result.evidence.values()):
            raise SystemExit("some monorepo task metadata was incomplete")
    return {"median_ms": median(samples), "min_ms": min(samples), "scripts": scripts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--lookup-runs", type=int, default=5)
    parser.add_argument("--silent-runs", type=int, default=2)
    arguments = parser.parse_args()
    runs = max(1, arguments.runs)
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
    monorepo = monorepo_row(runs)
    print(
        f"Monorepo: {MONOREPO_TASKS} tasks over a pnpm workspace of {MONOREPO_PACKAGES} packages "
        f"(filters, a directory glob, a composite action, a matrix), in memory, median of {runs}"
    )
    print(
        table(
            ["median ms", "min ms", "package scripts listed"],
            [[monorepo["median_ms"], monorepo["min_ms"], monorepo["scripts"]]],
        )
    )
    lookups = lookup_rows(max(1, arguments.lookup_runs), max(1, arguments.silent_runs))
    print(
        f"Metadata phase, {LOOKUP_JOBS} jobs, {REUSABLE} reusable workflows, "
        f"{EXTERNAL_ACTIONS} external actions, fake GitHub API"
    )
    print(
        table(
            ["GitHub API", "median ms", "max ms", "gaps", "requests", "max in flight"],
            [
                [
                    row["api"],
                    row["median_ms"],
                    row["max_ms"],
                    row["gaps"],
                    row["requests_per_run"],
                    row["max_in_flight"] if row["max_in_flight"] is not None else "-",
                ]
                for row in lookups
            ],
        )
    )
    path = write_results(
        "metadata",
        {
            "runs": runs,
            "tasks": TASKS,
            "jobs": JOBS,
            "rows": rows,
            "monorepo": monorepo,
            "lookups": lookups,
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
