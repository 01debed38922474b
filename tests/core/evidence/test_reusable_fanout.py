"""Reusable-workflow fan-out: each called workflow is expanded once per run, within one budget.

A base branch can make the expansion exponential (n jobs that each call a workflow of n jobs,
level after level). The expansion is memoised and bounded by a budget shared by every task of
the run; a call over budget keeps ``reusable-workflow-unresolved``. Reuse must give exactly the
evidence that expanding again gives: ``forgetful`` resolves with a memo that keeps nothing,
which is the expansion without reuse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from support.fanout import fan_out

from jev_select import contracts as c
from jev_select.core.evidence.resolve import (
    ActionFile,
    ExpansionBudget,
    LookupFailure,
    MetadataFiles,
    build_evidence,
    resolve_metadata,
)
from jev_select.core.models import JobRef, MetadataResult, Task, TaskTable

WF = ".github/workflows/ci.yml"
COMMIT = "a" * 40
REFERENCE = Path(__file__).resolve().parents[3] / "docs" / "reference.md"


def workflow(path: str) -> str:
    return f".github/workflows/{path}.yml"


def call(path: str) -> str:
    return f"./{workflow(path)}"


def calls(*targets: str, steps: str | None = None) -> str:
    """A workflow whose jobs ``j0``, ``j1`` ... call ``targets`` in turn."""
    lines = ["on: workflow_call", "jobs:"]
    for index, target in enumerate(targets):
        lines += [f"  j{index}:", f"    uses: {call(target)}"]
    if steps is not None:
        lines += ["  s:", "    steps:", steps]
    return "\n".join(lines) + "\n"


class Forgetful(dict[Any, Any]):
    """A memo that never keeps an expansion: every call is expanded again, as without reuse."""

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return [] if default is None else default

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __contains__(self, key: object) -> bool:
        return False

    def __setitem__(self, key: Any, value: Any) -> None:
        return None


def reader(files: Mapping[str, str], on_read: Callable[[str], None] | None = None) -> Any:
    def read_file(path: str) -> bytes | None:
        if on_read is not None:
            on_read(path)
        value = files.get(path)
        return None if value is None else value.encode("utf-8")

    return read_file


def no_action(owner: str, repo: str, subpath: str, ref: str) -> ActionFile | LookupFailure:
    return LookupFailure.MISSING


def table(*tasks: tuple[str, tuple[tuple[str, str | None], ...]]) -> TaskTable:
    return TaskTable(
        tuple(
            Task(id=task_id, description="d", jobs=tuple(JobRef(w, j) for w, j in refs))
            for task_id, refs in tasks
        )
    )


def resolve(
    files: Mapping[str, str],
    tasks: TaskTable,
    budget: ExpansionBudget | None = None,
    *,
    remember: bool = True,
    on_read: Callable[[str], None] | None = None,
) -> MetadataResult:
    if remember:
        return resolve_metadata(
            tasks,
            read_file=reader(files, on_read),
            fetch_action=no_action,
            repository="o/r",
            commit=COMMIT,
            budget=budget,
        )
    shared = MetadataFiles(
        reader(files, on_read), no_action, repository="o/r", commit=COMMIT, budget=budget
    )
    shared.expansions = Forgetful()
    evidence = {}
    for task in tasks.tasks:
        evidence[task.id] = build_evidence(task, shared).evidence
    return MetadataResult(evidence=evidence, hints=(), notes={})


def dumped(result: MetadataResult) -> str:
    """Everything a run keeps of the metadata, byte for byte."""
    return json.dumps(
        {
            task_id: [entry.evidence, entry.job_metadata]
            for task_id, entry in result.evidence.items()
        }
    )


def json_list(value: object) -> list[Any]:
    """An array of the evidence or the job metadata (typed ``object`` there), checked for
    indexing."""
    assert isinstance(value, list)
    return value


def warnings(result: MetadataResult, task_id: str) -> list[str]:
    metadata = result.evidence[task_id].job_metadata
    assert metadata is not None
    return list(json_list(metadata["warnings"]))


def nested(jobs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for job in jobs:
        yield job
        yield from nested(job.get("jobs", []))


# ---- the fan-out shapes ---------------------------------------------------------------------


@pytest.mark.parametrize(("callers", "levels"), [(4, 8), (6, 9)], ids=["4x8", "6x9"])
def test_fan_out_is_expanded_once_per_workflow_and_capped(callers: int, levels: int) -> None:
    budget = ExpansionBudget()
    result = resolve(fan_out(callers, levels), table(("t", ((WF, None),))), budget)
    # Each level's workflow is expanded once; its tree would be callers**levels jobs, far over
    # the entries the budget allows, so every top-level call stays a gap, named once.
    assert budget.jobs == callers * levels
    assert budget.workflows == {call(f"w{n}") for n in range(1, levels + 1)}
    assert budget.nodes == 0
    assert warnings(result, "t") == [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("w1")]
    evidence = result.evidence["t"].evidence
    assert [job["uses"] for job in json_list(evidence["jobs"])] == [call("w1")] * callers
    assert all("jobs" not in job for job in json_list(evidence["jobs"]))
    assert len(json.dumps(evidence)) < 1_000


def test_a_fan_out_within_the_budget_is_expanded_in_full() -> None:
    budget = ExpansionBudget()
    result = resolve(fan_out(3, 4), table(("t", ((WF, None),))), budget)
    assert warnings(result, "t") == []
    jobs = list(nested(json_list(result.evidence["t"].evidence["jobs"])))
    assert len(jobs) == sum(3**level for level in range(1, 6))
    assert budget.jobs == 3 * 4
    # Entries placed: every called job and the leaves' steps, reuses counted in full.
    assert budget.nodes == len(jobs) - 3 + 3**5


def test_the_expansion_is_identical_without_reuse_for_fan_out_within_the_budget() -> None:
    files = fan_out(3, 5)
    tasks = table(("a", ((WF, None),)), ("b", ((WF, "j1"),)))
    budget = ExpansionBudget()
    assert dumped(resolve(files, tasks, budget)) == dumped(resolve(files, tasks, remember=False))
    assert budget.jobs == 3 * 5  # without reuse: 3 + 9 + ... + 243 for a, and again for b


# ---- diamonds and cycles --------------------------------------------------------------------

LIB_STEPS = """\
      - uses: ./act
        with: {k: 1}
      - uses: acme/tool@v1
      - run: npm run build
        working-directory: web
      - run: npm test
"""


def diamond() -> dict[str, str]:
    return {
        WF: calls("a", "b"),
        workflow("a"): calls("lib", steps="      - run: make a\n"),
        workflow("b"): calls("lib", "lib"),
        workflow("lib"): (
            "on: workflow_call\ndefaults:\n  run:\n    working-directory: src\njobs:\n"
            f"  unit:\n    steps:\n{LIB_STEPS}  bad:\n    runs-on: x\n    fancy: 1\n"
            "    steps: [{run: make}]\n"
        ),
        "act/action.yml": "name: Act\ninputs:\n  k: {description: the k}\n",
        "web/package.json": '{"scripts": {"build": "tsc"}}',
    }


def test_a_diamond_is_expanded_once_and_reads_as_two_expansions() -> None:
    tasks = table(("t", ((WF, None),)), ("u", ((workflow("b"), "j1"),)))
    budget = ExpansionBudget()
    memoised = resolve(diamond(), tasks, budget)
    assert dumped(memoised) == dumped(resolve(diamond(), tasks, remember=False))
    # a, b and lib once each (2 + 2 + 2 jobs), although lib is called three times in t and
    # once more in u; every reuse still places its entries in the evidence.
    assert budget.jobs == 6
    lib_size = 2 + 4 + 1  # two jobs, their steps
    assert budget.nodes == (2 + 1 + lib_size) + (2 + 2 * lib_size) + lib_size
    evidence = memoised.evidence["t"].evidence
    via_a, via_b = json_list(evidence["jobs"])[0]["jobs"][0], json_list(evidence["jobs"])[1]["jobs"]
    assert via_a["jobs"] == via_b[0]["jobs"] == via_b[1]["jobs"]
    assert [job["workflow"] for job in via_a["jobs"]] == [call("lib")] * 2
    assert warnings(memoised, "t") == [
        f"{c.WARN_WORKFLOW_SHAPE_UNSUPPORTED}{call('lib')}#bad",
        f"{c.WARN_ACTION_METADATA_MISSING}acme/tool@v1",
        f"{c.WARN_PACKAGE_SCRIPT_MISSING}src/package.json#test",
    ]
    assert evidence["actions"] == [{"inputs": {"k": "the k"}, "name": "Act", "uses": "./act"}]


def test_a_cycle_through_a_diamond_stays_a_gap_on_each_branch() -> None:
    # ci -> a -> d -> a is a cycle; ci -> b -> d -> a -> d is one too, one level further down.
    files = {
        WF: calls("a", "b"),
        workflow("a"): calls("d"),
        workflow("b"): calls("d"),
        workflow("d"): calls("a", steps="      - run: make d\n"),
    }
    tasks = table(("t", ((WF, None),)), ("u", ((WF, "j1"),)))
    budget = ExpansionBudget()
    memoised = resolve(files, tasks, budget)
    assert dumped(memoised) == dumped(resolve(files, tasks, remember=False))
    assert warnings(memoised, "t") == [
        c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("a"),
        c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("d"),
    ]
    assert warnings(memoised, "u") == [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("d")]
    # a and d twice each (their cycles differ under a and under b), b once: u reuses b.
    assert budget.jobs == 2 * (1 + 2) + 1
    jobs = json_list(memoised.evidence["t"].evidence["jobs"])
    d_via_a = jobs[0]["jobs"][0]["jobs"]
    d_via_b = jobs[1]["jobs"][0]["jobs"]
    assert "jobs" not in d_via_a[0]  # d calling a under a
    assert d_via_b[0]["jobs"][0]["uses"] == call("d")  # a expanded under b, then d is the cycle
    assert "jobs" not in d_via_b[0]["jobs"][0]


def test_a_cycle_seen_from_another_task_is_decided_by_that_tasks_chain() -> None:
    # lib calls ci: a cycle for a task that starts at ci, not for one that starts elsewhere.
    files = {
        WF: calls("lib", steps="      - run: make ci\n"),
        workflow("other"): calls("lib"),
        workflow("lib"): calls("ci"),
    }
    other = ((workflow("other"), None),)
    tasks = table(("ci", ((WF, "j0"),)), ("other", other), ("again", other))
    budget = ExpansionBudget()
    memoised = resolve(files, tasks, budget)
    assert dumped(memoised) == dumped(resolve(files, tasks, remember=False))
    assert warnings(memoised, "ci") == [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("ci")]
    assert warnings(memoised, "other") == [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("lib")]
    assert warnings(memoised, "again") == warnings(memoised, "other")
    # lib under ci (1 job); lib and ci under other (1 + 2), which "again" reuses.
    assert budget.jobs == 1 + 3


# ---- one budget for the run -----------------------------------------------------------------


def test_the_budget_is_shared_by_every_task_of_the_run() -> None:
    files = fan_out(3, 3)  # one call of w1 places 3 + 9 + 27 jobs and 27 steps: 66 entries
    tasks = table(("first", ((WF, "j0"),)), ("second", ((WF, "j1"),)), ("third", ((WF, "j2"),)))
    budget = ExpansionBudget(max_nodes=2 * 66 + 65)
    result = resolve(files, tasks, budget)
    assert warnings(result, "first") == warnings(result, "second") == []
    assert warnings(result, "third") == [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("w1")]
    assert budget.nodes == 2 * 66
    assert budget.jobs == 3 * 3  # expanded for the first task, reused by the others


def test_jobs_and_workflows_are_paid_once_across_tasks() -> None:
    files = {WF: calls("x", "y"), workflow("x"): calls("z"), workflow("y"): calls("z")}
    files[workflow("z")] = "on: workflow_call\njobs:\n  k:\n    steps: [{run: make}]\n"
    tasks = table(("first", ((WF, "j0"),)), ("second", ((WF, "j1"),)))
    budget = ExpansionBudget(max_jobs=2, max_workflows=2)
    result = resolve(files, tasks, budget)
    # first: x and z, two jobs, two workflows; second needs y, which nothing is left for.
    assert warnings(result, "first") == []
    assert warnings(result, "second") == [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("y")]
    assert budget.jobs == 2
    assert budget.workflows == {call("x"), call("z")}


def test_a_task_over_budget_keeps_its_other_evidence() -> None:
    files = fan_out(6, 9)
    files[workflow("own")] = "on: push\njobs:\n  lint:\n    steps: [{run: make lint}]\n"
    tasks = table(("t", ((WF, "j0"), (workflow("own"), "lint"))))
    result = resolve(files, tasks, ExpansionBudget())
    assert warnings(result, "t") == [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("w1")]
    jobs = json_list(result.evidence["t"].evidence["jobs"])
    assert jobs[1]["steps"] == [{"run": "make lint", "working_directory": "."}]
    assert result.evidence["t"].incomplete is True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_only_time_spent_expanding_counts_against_the_bound() -> None:
    clock = Clock()
    files = {WF: calls("w1", "w2", "w3", "w4")}
    for name in ("w1", "w2", "w3", "w4"):
        files[workflow(name)] = "on: workflow_call\njobs:\n  k:\n    steps: [{run: make}]\n"
    docs = [f"docs/{n}.md" for n in range(10)]
    files.update(dict.fromkeys(docs, "text\n"))

    def slow_read(path: str) -> None:
        clock.now += 1.0  # every read takes a second, inside an expansion or not

    tasks = TaskTable(
        (
            Task(id="docs", description="d", context_files=tuple(docs)),
            Task(id="ci", description="d", jobs=(JobRef(WF, None),)),
        )
    )
    budget = ExpansionBudget(clock=clock, bound_s=2.5)
    result = resolve(files, tasks, budget, on_read=slow_read)
    assert warnings(result, "docs") == []
    # w1 and w2 take a second each; reading w3 ends past 2.5 s, and w4 is not read at all.
    assert warnings(result, "ci") == [
        c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("w3"),
        c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + call("w4"),
    ]
    assert budget.spent_s == pytest.approx(3.0)
    assert call("w4") not in budget.workflows


def test_default_limits_leave_room_for_a_large_monorepo() -> None:
    # 300 jobs, each calling one of 30 shared workflows of 3 jobs with 5 steps; 50 tasks of 6
    # jobs each and one task with the whole workflow.
    steps = "".join(f"      - run: make step{n}\n" for n in range(5))
    files = {
        workflow(f"shared{n}"): (
            "on: workflow_call\njobs:\n"
            + "".join(f"  k{k}:\n    steps:\n{steps}" for k in range(3))
        )
        for n in range(30)
    }
    files[WF] = "on: pull_request\njobs:\n" + "".join(
        f"  job{n}:\n    uses: {call(f'shared{n % 30}')}\n" for n in range(300)
    )
    tasks = [(f"t{t}", tuple((WF, f"job{t * 6 + n}") for n in range(6))) for t in range(50)]
    budget = ExpansionBudget()
    result = resolve(files, table(*tasks, ("all", ((WF, None),))), budget)
    assert all(not warnings(result, task_id) for task_id in result.evidence)
    assert budget.jobs == 30 * 3
    assert budget.nodes == (50 * 6 + 300) * 3 * 6


def test_the_reference_states_the_limits() -> None:
    text = re.sub(r"\s+", " ", REFERENCE.read_text("utf-8"))
    assert f"{c.REUSABLE_EXPANSION_MAX_JOBS:,} jobs of called workflows" in text
    assert f"{c.REUSABLE_EXPANSION_MAX_NODES:,} job and step entries" in text
    assert f"{c.REUSABLE_EXPANSION_MAX_WORKFLOWS} distinct called workflows" in text
    assert f"{c.REUSABLE_EXPANSION_BOUND_S:g} seconds spent expanding" in text
