"""Which workflow job a listed job name is, and which tasks it counts for (``core.ci_jobs``),
and the ``ci`` block ``build_results`` writes from them."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import jsonschema
import pytest

from jev_select.core.ci_jobs import (
    WorkflowJob,
    attribution_for,
    ci_workflow,
    matrix_values,
    read_ci_workflow,
    workflow_path,
)
from jev_select.core.models import JobRef, Task, TaskTable
from jev_select.core.results import (
    CiJob,
    CiRun,
    CiSource,
    JobOutcome,
    build_results,
    results_json,
)

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "jev_select/schemas/results.schema.json").read_text()
)
WORKFLOW = b"""\
on: pull_request
jobs:
  unit:
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps: [{run: pytest}]
  named:
    name: Unit ${{ matrix.python }} on ${{ matrix.os }}
    strategy:
      matrix: {python: ["3.11"], os: [linux]}
    steps: [{run: pytest}]
  lint:
    name: Lint
    needs: unit
    steps: [{run: ruff}]
  release:
    name: Release
    strategy:
      matrix: ${{ fromJSON(needs.plan.outputs.targets) }}
    needs: [lint, lint, unit]
    steps: [{run: release}]
  call:
    name: Deploy
    uses: ./.github/workflows/deploy.yml
  shard-a:
    name: Shard ${{ inputs.a }}
    steps: [{run: a}]
  shard-b:
    name: Shard ${{ inputs.b }}
    steps: [{run: b}]
"""


def table(**jobs: tuple[JobRef, ...] | None) -> TaskTable:
    return TaskTable(
        tasks=tuple(
            Task(id=task_id, description=f"Runs {task_id}.", jobs=refs)
            for task_id, refs in sorted(jobs.items())
        )
    )


def ref(job: str | None, workflow: str = ".github/workflows/ci.yml") -> JobRef:
    return JobRef(workflow=workflow, job=job)


@pytest.mark.parametrize(
    ("name", "candidates"),
    [
        ("unit", ("unit",)),  # a matrix whose values GitHub leaves out
        ("unit (3.11)", ("unit",)),
        ("unit (3.11, x)", ("unit",)),
        ("Unit 3.11 on linux", ("named",)),  # the name reads matrix: no suffix is added
        # A written-out matrix value reads as one of its values, nothing longer.
        ("Unit 3.11 on linux (3.11, linux)", ()),
        ("Unit 3.12 on linux", ()),
        ("Lint", ("lint",)),
        ("lint", ()),  # the ID of a named job is not its listed name
        ("Lint (x)", ()),
        ("Release (amd64)", ("release",)),
        ("Deploy / staging", ("call",)),
        ("Deploy", ()),
        ("Shard 1", ("shard-a", "shard-b")),
        ("nothing", ()),
    ],
)
def test_candidates(name: str, candidates: tuple[str, ...]) -> None:
    workflow = read_ci_workflow(WORKFLOW)
    assert workflow is not None
    assert workflow.candidates(name) == candidates


def test_needs_in_written_order_once_each() -> None:
    workflow = read_ci_workflow(WORKFLOW)
    assert workflow is not None
    assert dict(workflow.needs) == {
        "unit": (),
        "named": (),
        "lint": ("unit",),
        "release": ("lint", "unit"),
        "call": (),
        "shard-a": (),
        "shard-b": (),
    }


@pytest.mark.parametrize(
    "data", [b"", b"[1]", b"jobs: []", b"jobs: {}", b"jobs: {a: 1}", b"\xff", b"a: [", b"on: x"]
)
def test_unreadable_workflows_are_none(data: bytes) -> None:
    assert read_ci_workflow(data) is None


def test_a_name_that_is_not_text_may_be_any_job() -> None:
    workflow = ci_workflow({"jobs": {"odd": {"name": 3}, "unit": {}}})
    assert workflow is not None
    assert workflow.candidates("unit") == ("odd", "unit")


def test_workflow_path() -> None:
    assert workflow_path("ci.yml") == ".github/workflows/ci.yml"
    assert workflow_path("1234") is None


def outcome(name: str, result: str = "success", duration: int = 1000) -> JobOutcome:
    return JobOutcome(name=name, result=result, duration_ms=duration)


REPORT = {"tested_sha": "c" * 40, "tasks": {"a": {}, "b": {}, "docs": {}, "lint": {}, "unit": {}}}


def test_doubt_counts_for_every_candidate_task_and_never_hides_a_failure() -> None:
    tasks = table(
        a=(ref("shard-a"),),
        b=(ref("shard-b"),),
        docs=None,
        lint=(ref("lint"),),
        unit=(ref("unit"), ref("named")),
    )
    attribution = attribution_for(tasks, "ci.yml", read_ci_workflow(WORKFLOW))
    jobs = [
        outcome("unit (3.11)"),
        outcome("Unit 3.11 on linux", "failure"),
        outcome("Shard 1", "failure"),
        outcome("Lint"),
        outcome("docs", "cancelled"),
        outcome("Mystery", "failure"),  # no job of the file: it may be any referenced one
    ]
    source = CiSource(workflow="ci.yml", run_id=7, run_attempt=1, attribution=attribution)
    results = build_results(REPORT, jobs, ci=source)
    assert {task: entry.result for task, entry in results.tasks.items()} == {
        "a": "failure",
        "b": "failure",
        "docs": "cancelled",
        "lint": "failure",
        "unit": "failure",
    }
    assert results.ci is not None
    assert [(job.name, job.job, job.tasks) for job in results.ci.jobs] == [
        ("unit (3.11)", "unit", ("unit",)),
        ("Unit 3.11 on linux", "named", ("unit",)),
        ("Shard 1", None, ("a", "b")),
        ("Lint", "lint", ("lint",)),
        # No job of the file is listed as "docs": the naming rule gives docs, and the job may
        # be any of the file's, so it counts for every task that references the file too.
        ("docs", None, ("a", "b", "docs", "lint", "unit")),
        ("Mystery", None, ("a", "b", "lint", "unit")),
    ]
    jsonschema.Draft202012Validator(SCHEMA).validate(results_json(results))


def test_without_the_file_references_fall_back_to_the_job_ids() -> None:
    tasks = table(a=(ref(None),), b=(ref("unit"),), docs=None, lint=None, unit=None)
    attribution = attribution_for(tasks, "ci.yml", None)
    source = CiSource(workflow="ci.yml", run_id=7, run_attempt=2, attribution=attribution)
    results = build_results(
        REPORT, [outcome("unit (1)", "failure"), outcome("lint"), outcome("Other")], ci=source
    )
    assert results.ci is not None
    assert dict(results.ci.needs) == {}
    assert [(job.job, job.tasks) for job in results.ci.jobs] == [
        # a names the whole workflow; b the job unit, listed by its ID; unit, by the naming rule
        (None, ("a", "b", "unit")),
        (None, ("a", "lint")),
        (None, ("a",)),
    ]
    assert results.tasks["b"].result == "failure"


def test_references_to_other_workflows_do_not_count() -> None:
    other = (ref("unit", ".github/workflows/other.yml"),)
    tasks = table(a=other, b=None, docs=None, lint=None, unit=other)
    attribution = attribution_for(tasks, "ci.yml", read_ci_workflow(WORKFLOW))
    results = build_results(
        REPORT, [outcome("unit (1)", "failure")], ci=CiSource("ci.yml", 1, 1, attribution)
    )
    assert results.tasks["a"].result == "skipped"
    assert results.tasks["unit"].result == "skipped"  # its jobs: name another file
    assert results.ci is not None
    assert results.ci.jobs[0].tasks == ()


def test_without_a_source_there_is_no_ci_block() -> None:
    results = build_results(REPORT, [outcome("unit")])
    assert results.ci is None
    assert "ci" not in results_json(results)


def test_a_source_without_attribution_keeps_the_naming_rule() -> None:
    results = build_results(
        REPORT, [outcome("unit (3.11)"), outcome("gate")], ci=CiSource("ci.yml", 9, 1)
    )
    value = results_json(results)
    assert value["ci"] == {
        "version": 1,
        "workflow": "ci.yml",
        "run_id": 9,
        "run_attempt": 1,
        "jobs": [
            {
                "name": "unit (3.11)",
                "job": None,
                "tasks": ["unit"],
                "result": "success",
                "duration_ms": 1000,
            },
            {"name": "gate", "job": None, "tasks": [], "result": "success", "duration_ms": 1000},
        ],
        "needs": {},
    }
    jsonschema.Draft202012Validator(SCHEMA).validate(value)


@pytest.mark.parametrize(("kind", "definition"), [(CiRun, "ciRun"), (CiJob, "ciJob")])
def test_the_schema_keys_are_the_class_attributes(kind: type, definition: str) -> None:
    declared = SCHEMA["$defs"][definition]
    names = [field.name for field in attrs.fields(kind)]
    assert list(declared["properties"]) == names
    assert declared["required"] == names
    assert SCHEMA["properties"]["ci"] == {"$ref": "#/$defs/ciRun"}


def test_billed_minutes_round_each_job_up() -> None:
    assert CiJob("a", None, (), "success", 0).billed_minutes == 0
    assert CiJob("a", None, (), "success", 1).billed_minutes == 1
    assert CiJob("a", None, (), "success", 60_000).billed_minutes == 1
    assert CiJob("a", None, (), "success", 60_001).billed_minutes == 2


def _pattern_of(name: str, matrix: object) -> WorkflowJob:
    found = ci_workflow({"jobs": {"job": {"name": name, "strategy": {"matrix": matrix}}}})
    assert found is not None
    return found.jobs[0]


def test_a_written_out_matrix_names_exactly_its_values() -> None:
    job = _pattern_of(
        "${{ matrix.target }}",
        {"target": ["wasm32-wasip1", "wasm32-wasip1-threads"], "include": [{"target": "x"}]},
    )
    assert [job.may_be(name) for name in ("wasm32-wasip1", "wasm32-wasip1-threads", "x")] == [
        True,
        True,
        True,
    ]
    # Not any other job's name: a name that is only an expression no longer matches everything.
    assert not job.may_be("clippy")
    assert not job.may_be("wasm32")


def test_matrix_values_render_as_github_renders_them() -> None:
    assert matrix_values(
        {"matrix": {"Python": [3.10, "3.11", 3], "ok": [True], "include": [{"extra": "a"}]}}
    ) == {"python": ("3", "3.1", "3.11"), "ok": ("true",), "extra": ("", "a")}
    # A property is read whatever its case; a key the matrix lacks reads as empty text.
    job = _pattern_of("Test ${{ MATRIX.PYTHON }}${{ matrix.none }}", {"python": ["3.12"]})
    assert job.may_be("Test 3.12")
    assert not job.may_be("Test 3.13")


@pytest.mark.parametrize(
    "matrix",
    [
        "${{ fromJSON(needs.setup.outputs.matrix) }}",
        {"os": "${{ fromJSON(inputs.os) }}"},
        {"os": [{"name": "linux"}]},
        {"include": "${{ fromJSON(needs.setup.outputs.rows) }}"},
    ],
    ids=["computed", "computed-axis", "object-values", "computed-include"],
)
def test_a_computed_or_structured_matrix_may_read_as_anything(matrix: object) -> None:
    assert _pattern_of("Build ${{ matrix.os }}", matrix).may_be("Build anything at all")


def test_other_expressions_still_read_as_anything() -> None:
    job = _pattern_of("Lint ${{ matrix.os || 'all' }}", {"os": ["linux"]})
    assert job.may_be("Lint all")
    assert job.may_be("Lint something else")


def test_a_skipped_matrix_job_is_listed_under_its_name_as_written() -> None:
    job = _pattern_of("Build ${{ matrix.os }}", {"os": ["linux", "macos"]})
    assert job.may_be("Build ${{ matrix.os }}")
    assert not job.may_be("Build ${{ matrix.arch }}")
