"""Workflows that run the action, written for the wiring checks of ``jev-select check``."""

from __future__ import annotations

from collections.abc import Mapping

from jev_select.core.check.problems import Problem
from jev_select.core.check.repository import Repository
from jev_select.core.check.wiring import TableFile, check_wiring

TABLE_PATH = ".github/jev-tasks.yml"
CI = ".github/workflows/ci.yml"

TABLE = """\
unit:
  description: Runs the unit tests.
lint:
  description: Runs the linters.
typing:
  description: Runs the type checker.
"""

# The plan job, with every output forwarded; consumer jobs are appended after it.
PLAN = """\
name: CI
on: pull_request
jobs:
  plan:
    runs-on: ubuntu-latest
    outputs:
      run: ${{ steps.select.outputs.run }}
      selected: ${{ steps.select.outputs.selected }}
      matrix: ${{ steps.select.outputs.matrix }}
      has-tasks: ${{ steps.select.outputs.has-tasks }}
      unit: ${{ fromJSON(steps.select.outputs.run).unit }}
    steps:
      - id: select
        uses: typesafe-ai/jev-select@v0.1.0
        with:
          tasks-file: .github/jev-tasks.yml
"""

# A gate that makes every other job's failure count.
GATE = """\
  required:
    needs: [plan, {needs}]
    if: always()
    runs-on: ubuntu-latest
    steps:
      - run: echo "$RESULTS" | grep -qv failure
        env:
          RESULTS: ${{{{ toJSON(needs) }}}}
"""


def job(name: str, condition: str, *, needs: str = "plan", extra: str = "") -> str:
    """A consumer job ``name`` with the job-level condition ``condition`` (as written)."""
    lines = [f"  {name}:", f"    needs: {needs}"]
    if condition:
        lines.append(f"    if: {condition}")
    lines.append("    runs-on: ubuntu-latest")
    lines.append(extra.rstrip("\n") if extra else "    steps:\n      - run: make " + name)
    return "\n".join(lines) + "\n"


def rest(*tasks: str) -> str:
    """A job that reads every task of ``TABLE`` but ``tasks``, so no task is left unconsumed."""
    read = [task for task in ("unit", "lint", "typing") if task not in tasks]
    return job("rest", " || ".join(f"fromJSON(needs.plan.outputs.run).{task}" for task in read))


def workflow(*jobs: str, gate: bool = True, head: str = PLAN) -> str:
    """The plan job, the consumer jobs ``jobs`` and (by default) a gate over all of them."""
    text = head + "".join(jobs)
    names = [block.split(":", 1)[0].strip() for block in jobs]
    if gate and names:
        text += GATE.format(needs=", ".join(names))
    return text


def repository(files: Mapping[str, str], commit: str = "c" * 40) -> Repository:
    def read_file(path: str) -> bytes | None:
        text = files.get(path)
        return text.encode("utf-8") if text is not None else None

    return Repository(commit=commit, paths=tuple(files), read_file=read_file)


def wiring(
    files: Mapping[str, str], *, given: str | None = None, given_text: str | None = None
) -> tuple[Problem, ...]:
    """The wiring problems of ``files`` (the table file at its path is added unless present)."""
    every = {TABLE_PATH: TABLE, **files}
    table = None
    if given is not None:
        table = TableFile(given, given_text if given_text is not None else every[given])
    return check_wiring(repository(every), table).problems


def codes(problems: tuple[Problem, ...]) -> list[str]:
    return [str(problem.code) for problem in problems]


def found(problems: tuple[Problem, ...]) -> list[tuple[str, str | None, int | None, int | None]]:
    return [(str(problem.code), problem.path, problem.line, problem.column) for problem in problems]
