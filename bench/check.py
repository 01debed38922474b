"""Time of ``jev-select check``'s workflow reading: the pure wiring check over large workflows.

A repository of W workflow files shares one table of T tasks; each workflow has a plan job and
J consumer jobs, each with a job condition, a step condition, an ``env`` value and a multi-line
``run`` that read the plan, and a gate job over all of them. ``check_wiring`` is timed from
memory (no git), so the figure is the parsing and the expression analysis alone.

    python bench/check.py [--runs 7]
"""

from __future__ import annotations

import argparse
import time

from common import median, table, write_results

from jev_select.core.check.repository import Repository
from jev_select.core.check.wiring import check_wiring

TABLE_PATH = ".github/jev-tasks.yml"


def _table(tasks: int) -> str:
    return "".join(f"task{index}:\n  description: Runs suite {index}.\n" for index in range(tasks))


def _workflow(jobs: int, tasks: int) -> str:
    lines = [
        "name: CI",
        "on: pull_request",
        "jobs:",
        "  plan:",
        "    runs-on: ubuntu-latest",
        "    outputs:",
        "      run: ${{ steps.select.outputs.run }}",
        "      has-tasks: ${{ steps.select.outputs.has-tasks }}",
        "    steps:",
        "      - id: select",
        "        uses: typesafe-ai/jev-select@v1",
        "        with:",
        f"          tasks-file: {TABLE_PATH}",
    ]
    for index in range(jobs):
        task = f"task{index % tasks}"
        lines += [
            f"  job{index}:",
            "    needs: plan",
            f"    if: fromJSON(needs.plan.outputs.run)['{task}'] && github.event_name != 'push'",
            "    runs-on: ubuntu-latest",
            "    steps:",
            f"      - if: ${{{{ fromJSON(needs.plan.outputs.run).{task} }}}}",
            "        env:",
            "          HAS: ${{ needs.plan.outputs.has-tasks }}",
            "        run: |",
            "          echo start",
            f"          make {task} ARGS='${{{{ github.sha }}}}'",
        ]
    lines += [
        "  required:",
        "    needs: [" + ", ".join(f"job{index}" for index in range(jobs)) + "]",
        "    if: always()",
        "    runs-on: ubuntu-latest",
        "    steps:",
        "      - run: test ${{ !contains(needs.*.result, 'failure') }}",
    ]
    return "\n".join(lines) + "\n"


def _repository(workflows: int, jobs: int, tasks: int) -> Repository:
    files = {TABLE_PATH: _table(tasks).encode()}
    for index in range(workflows):
        files[f".github/workflows/ci{index}.yml"] = _workflow(jobs, tasks).encode()
    return Repository(commit="b" * 40, paths=tuple(files), read_file=files.get)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = max(3, parser.parse_args().runs)
    rows = []
    figures = {}
    for workflows, jobs, tasks in ((1, 10, 10), (1, 100, 50), (4, 100, 100), (1, 400, 200)):
        repository = _repository(workflows, jobs, tasks)
        size = sum(len(repository.read_file(path) or b"") for path in repository.paths)
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            wiring = check_wiring(repository)
            samples.append((time.perf_counter() - started) * 1000)
        if any(problem.severity == "error" for problem in wiring.problems):
            raise SystemExit("the generated workflows should be clean")
        name = f"{workflows} workflow(s) x {jobs} jobs, {tasks} tasks"
        expressions = workflows * (jobs * 4 + 4)
        rows.append([name, size // 1024, expressions, median(samples)])
        figures[name] = {"bytes": size, "expressions": expressions, "ms": samples}
    print(f"check_wiring from memory, median of {runs}")
    print(table(["scenario", "KiB", "expressions", "median ms"], rows))
    path = write_results("check", figures)
    print(f"results: {path}")


if __name__ == "__main__":
    main()
