"""Workflow shapes: every GitHub key is modelled, dropped or a gap; step concurrency as evidence."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from jev_select import contracts as c
from jev_select.core.evidence import workflow_shapes as shapes
from jev_select.core.evidence.resolve import ActionFile, LookupFailure, resolve_metadata
from jev_select.core.models import JobRef, Task, TaskEvidence, TaskTable

WF = ".github/workflows/ci.yml"
COMMIT = "a" * 40
GAP = f"{c.WARN_WORKFLOW_SHAPE_UNSUPPORTED}{WF}#build"


def evidence(
    workflow: Mapping[str, Any] | str,
    files: Mapping[str, str] | None = None,
    actions: Mapping[tuple[str, str, str, str], ActionFile] | None = None,
    job: str | None = "build",
) -> TaskEvidence:
    text = workflow if isinstance(workflow, str) else yaml.safe_dump(dict(workflow))
    stored = {WF: text, **(files or {})}
    answers = dict(actions or {})

    def read_file(path: str) -> bytes | None:
        value = stored.get(path)
        return None if value is None else value.encode("utf-8")

    def fetch_action(owner: str, repo: str, subpath: str, ref: str) -> ActionFile | LookupFailure:
        return answers.get((owner, repo, subpath, ref), LookupFailure.MISSING)

    table = TaskTable((Task(id="unit", description="d", jobs=(JobRef(WF, job),)),))
    result = resolve_metadata(
        table, read_file=read_file, fetch_action=fetch_action, repository="o/r", commit=COMMIT
    )
    return result.evidence["unit"]


def job_with(steps: list[Any], **job: Any) -> dict[str, Any]:
    return {"on": "push", "jobs": {"build": {"runs-on": "ubuntu-latest", **job, "steps": steps}}}


def json_list(value: object) -> list[Any]:
    """An array of the evidence or the job metadata (typed ``object`` there), checked for
    indexing."""
    assert isinstance(value, list)
    return value


def warnings(entry: TaskEvidence) -> list[str]:
    assert entry.job_metadata is not None
    return list(json_list(entry.job_metadata["warnings"]))


def steps_of(entry: TaskEvidence) -> list[dict[str, Any]]:
    return list(json_list(entry.evidence["jobs"])[0]["steps"])


# ---- every key of GitHub's workflow schema is classified ---------------------------------------


def github_schema() -> dict[str, Any]:
    # The schema check-jsonschema vendors (a test dependency) is the list of keys GitHub knows.
    spec = importlib.util.find_spec("check_jsonschema")
    assert spec is not None
    assert spec.origin is not None
    vendor = Path(spec.origin).parent / "builtin_schemas" / "vendor"
    schema: dict[str, Any] = json.loads((vendor / "github-workflows.json").read_text("utf-8"))
    return schema


SCHEMA = github_schema()
DEFINITIONS = SCHEMA["definitions"]


def schema_keys(name: str) -> set[str]:
    return set(DEFINITIONS[name]["properties"])


# A value of each dropped key that GitHub accepts; adding it must change nothing.
DROPPED_JOB_SAMPLES: dict[str, Any] = {
    "runs-on": "ubuntu-latest",
    "if": "github.event_name == 'push'",
    "env": {"A": "b"},
    "permissions": {"contents": "read"},
    "environment": "prod",
    "concurrency": "ci",
    "timeout-minutes": 5,
    "continue-on-error": True,
    "strategy": {"matrix": {"node": [20, 22]}},
    "services": {"db": {"image": "postgres"}},
    "container": "node:22",
    "outputs": {"x": "y"},
    "cache-mode": "read",
    "snapshot": "image",
}
DROPPED_STEP_SAMPLES: dict[str, Any] = {
    "id": "s",
    "if": "always()",
    "env": {"A": "b"},
    "continue-on-error": True,
    "timeout-minutes": 3,
}
DROPPED_WORKFLOW_SAMPLES: dict[str, Any] = {
    "name": "CI",
    "run-name": "CI run",
    "env": {"A": "b"},
    "permissions": "read-all",
    "concurrency": {"group": "ci"},
    "cache-mode": "none",
}


@pytest.mark.parametrize(
    ("definition", "modelled", "dropped"),
    [
        ("step", shapes.MODELLED_STEP_KEYS, shapes.DROPPED_STEP_KEYS),
        ("normalJob", shapes.MODELLED_JOB_KEYS, shapes.DROPPED_JOB_KEYS),
        ("reusableWorkflowCallJob", shapes.MODELLED_JOB_KEYS, shapes.DROPPED_JOB_KEYS),
    ],
)
def test_every_schema_key_is_modelled_or_deliberately_dropped(
    definition: str, modelled: frozenset[str], dropped: frozenset[str]
) -> None:
    # A key GitHub adds later fails here until it is classified (or left to be a gap).
    assert schema_keys(definition) <= modelled | dropped
    assert not modelled & dropped


def test_every_top_level_and_defaults_key_is_classified() -> None:
    top = set(SCHEMA["properties"])
    assert top <= shapes.MODELLED_WORKFLOW_KEYS | shapes.DROPPED_WORKFLOW_KEYS
    run_keys = set(DEFINITIONS["defaults"]["properties"]["run"]["properties"])
    assert run_keys == set(shapes.DEFAULTS_RUN_KEYS)


def test_the_dropped_tables_are_exactly_the_sampled_keys() -> None:
    assert set(DROPPED_JOB_SAMPLES) | {"secrets"} == set(shapes.DROPPED_JOB_KEYS)
    assert set(DROPPED_STEP_SAMPLES) == set(shapes.DROPPED_STEP_KEYS)
    assert set(DROPPED_WORKFLOW_SAMPLES) | {"on"} == set(shapes.DROPPED_WORKFLOW_KEYS)


BASE_STEPS = [{"uses": "./act"}, {"run": "echo hi"}]
ACT = {"act/action.yml": "name: Act\n"}


def test_the_base_workflow_is_complete() -> None:
    entry = evidence(job_with(BASE_STEPS), ACT)
    assert warnings(entry) == []


@pytest.mark.parametrize(("key", "value"), sorted(DROPPED_JOB_SAMPLES.items()))
def test_a_dropped_job_key_changes_nothing(key: str, value: Any) -> None:
    plain = evidence(job_with(BASE_STEPS), ACT)
    with_key = evidence(job_with(BASE_STEPS, **{key: value}), ACT)
    assert warnings(with_key) == []
    assert with_key.evidence == plain.evidence


@pytest.mark.parametrize(("key", "value"), sorted(DROPPED_STEP_SAMPLES.items()))
def test_a_dropped_step_key_changes_nothing(key: str, value: Any) -> None:
    plain = evidence(job_with(BASE_STEPS), ACT)
    with_key = evidence(job_with([BASE_STEPS[0], {**BASE_STEPS[1], key: value}]), ACT)
    assert warnings(with_key) == []
    assert with_key.evidence == plain.evidence


@pytest.mark.parametrize(("key", "value"), sorted(DROPPED_WORKFLOW_SAMPLES.items()))
def test_a_dropped_workflow_key_changes_nothing(key: str, value: Any) -> None:
    plain = evidence(job_with(BASE_STEPS), ACT)
    with_key = evidence({**job_with(BASE_STEPS), key: value}, ACT)
    assert warnings(with_key) == []
    assert with_key.evidence == plain.evidence


@pytest.mark.parametrize("where", ["workflow", "job", "step", "defaults.run", "defaults"])
def test_an_unknown_key_is_a_gap(where: str) -> None:
    workflow = job_with([dict(step) for step in BASE_STEPS])
    job = workflow["jobs"]["build"]
    if where == "workflow":
        workflow["x-future"] = {"run": "make"}
    elif where == "job":
        job["pre-steps"] = [{"run": "make"}]
    elif where == "step":
        job["steps"][1]["retry"] = 3
    elif where == "defaults.run":
        job["defaults"] = {"run": {"shell": "bash", "env": {"A": "b"}}}
    else:
        workflow["defaults"] = {"run": {"shell": "bash"}, "steps": []}
    entry = evidence(workflow, ACT)
    assert warnings(entry) == [GAP]
    assert entry.incomplete is True
    assert entry.evidence["incomplete"] is True


# ---- unsupported shapes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([{"run": "echo a"}, "a string step"], id="non-mapping item"),
        pytest.param([{"run": "echo a"}, ["list"]], id="list item"),
        pytest.param([{"name": "nothing"}], id="neither run nor uses"),
        pytest.param([{"run": "echo a", "uses": "./act"}], id="run and uses"),
        pytest.param([{"run": ["echo", "a"]}], id="run is a list"),
        pytest.param([{"uses": 5}], id="uses is a number"),
        pytest.param([{"uses": "./act", "shell": "bash"}], id="shell on uses"),
        pytest.param([{"run": "echo", "background": "${{ true }}"}], id="background expression"),
        pytest.param([{"parallel": []}], id="empty parallel"),
        pytest.param([{"parallel": {"a": {"run": "x"}}}], id="parallel mapping"),
        pytest.param([{"parallel": ["echo a"]}], id="parallel string item"),
        pytest.param([{"parallel": [{"parallel": [{"run": "x"}]}]}], id="nested parallel"),
        pytest.param([{"parallel": [{"run": "x", "background": True}]}], id="background in group"),
        pytest.param([{"parallel": [{"wait-all": None}]}], id="wait in group"),
        pytest.param([{"parallel": [{"run": "x"}], "if": "always()"}], id="if beside parallel"),
        pytest.param([{"parallel": [{"run": "x"}], "env": {"A": "b"}}], id="env beside parallel"),
        pytest.param([{"wait": "s", "if": "always()"}], id="if on wait"),
        pytest.param([{"wait": []}], id="empty wait list"),
        pytest.param([{"wait": {"s": 1}}], id="wait mapping"),
        pytest.param([{"wait-all": "s"}], id="wait-all with an argument"),
        pytest.param([{"cancel": ["a", "b"]}], id="cancel list"),
        pytest.param([{"cancel": "s", "run": "x"}], id="cancel with run"),
        pytest.param([{"wait-all": None, "background": True}], id="background wait-all"),
    ],
)
def test_unsupported_step_shapes_are_gaps(steps: list[Any]) -> None:
    assert warnings(evidence(job_with(steps), ACT)) == [GAP]


@pytest.mark.parametrize(
    "job",
    [
        pytest.param({"runs-on": "x"}, id="no steps"),
        pytest.param({"steps": {"a": {"run": "x"}}}, id="steps mapping"),
        pytest.param({"steps": [{"run": "x"}], "with": {"a": 1}}, id="with on a steps job"),
        pytest.param({"uses": "./.github/workflows/r.yml", "steps": []}, id="uses and steps"),
        pytest.param({"uses": ["./r.yml"]}, id="uses list"),
    ],
)
def test_unsupported_job_shapes_are_gaps(job: dict[str, Any]) -> None:
    workflow = {"on": "push", "jobs": {"build": job}}
    assert GAP in warnings(evidence(workflow))


def test_a_gap_keeps_the_readable_steps_in_the_evidence() -> None:
    entry = evidence(job_with([{"run": "make lint"}, 7, {"run": "make test", "retry": 2}]))
    assert warnings(entry) == [GAP]
    assert [step["run"] for step in steps_of(entry)] == ["make lint", "make test"]


def test_each_job_gets_its_own_gap_once() -> None:
    workflow = {
        "on": "push",
        "jobs": {
            "build": {"steps": [{"run": "a", "retry": 1}, {"run": "b", "retry": 1}]},
            "docs": {"steps": ["x"]},
            "fine": {"steps": [{"run": "c"}]},
        },
    }
    assert warnings(evidence(workflow, job=None)) == [
        GAP,
        f"{c.WARN_WORKFLOW_SHAPE_UNSUPPORTED}{WF}#docs",
    ]


# ---- step concurrency -------------------------------------------------------------------------

PNPM_JOB = """\
on: pull_request
jobs:
  build:
    runs-on: ubuntu-latest
    defaults:
      run:
        working-directory: web
    steps:
      - uses: actions/checkout@v6
      - run: pnpm install --frozen-lockfile
      - name: Checks
        parallel:
          - name: Lint
            run: pnpm run lint
          - name: Unit tests
            run: pnpm run test-unit
            working-directory: web/unit
          - uses: ./tools/report
            with:
              mode: fast
      - name: Start server
        id: server
        run: pnpm run serve
        background: true
      - run: pnpm run e2e
      - wait: server
      - wait: [server]
      - wait-all:
      - wait-all: true
      - cancel: server
      - parallel:
          - run: echo second group
"""

PNPM_FILES = {
    "web/package.json": json.dumps(
        {"scripts": {"lint": "eslint .", "serve": "vite", "e2e": "playwright test"}}
    ),
    "web/unit/package.json": json.dumps({"scripts": {"test-unit": "vitest run"}}),
    "tools/report/action.yml": "name: Report\ninputs:\n  mode:\n    description: How fast\n",
}
CHECKOUT = ActionFile("name: Checkout\n", "action.yml", "c" * 40)


def test_parallel_and_background_steps_are_evidence_in_document_order() -> None:
    entry = evidence(PNPM_JOB, PNPM_FILES, {("actions", "checkout", "", "v6"): CHECKOUT})
    assert warnings(entry) == []
    assert steps_of(entry) == [
        {"uses": "actions/checkout@v6", "working_directory": "web"},
        {"run": "pnpm install --frozen-lockfile", "working_directory": "web"},
        {"name": "Lint", "parallel": 0, "run": "pnpm run lint", "working_directory": "web"},
        {
            "name": "Unit tests",
            "parallel": 0,
            "run": "pnpm run test-unit",
            "working_directory": "web/unit",
        },
        {
            "parallel": 0,
            "uses": "./tools/report",
            "with": {"mode": "fast"},
            "working_directory": "web",
        },
        {
            "background": True,
            "name": "Start server",
            "run": "pnpm run serve",
            "working_directory": "web",
        },
        {"run": "pnpm run e2e", "working_directory": "web"},
        {"parallel": 1, "run": "echo second group", "working_directory": "web"},
    ]
    # Steps inside a group contribute actions, scripts and hints like any other step.
    assert entry.evidence["actions"] == [
        {"name": "Checkout", "uses": "actions/checkout@v6"},
        {"inputs": {"mode": "How fast"}, "name": "Report", "uses": "./tools/report"},
    ]
    assert [script["name"] for script in json_list(entry.evidence["packageScripts"])] == [
        "lint",
        "test-unit",
        "serve",
        "e2e",
    ]
    assert json_list(entry.evidence["packageScripts"])[1]["manifest"] == "web/unit/package.json"
    assert entry.job_metadata is not None
    steps = [p for p in json_list(entry.job_metadata["provenance"]) if p["kind"] == "workflow-step"]
    assert [p["locator"]["location"]["line"] for p in steps] == [9, 10, 13, 15, 18, 21, 25, 32]


def test_parallel_steps_reach_the_gaps_they_would_cause_as_plain_steps() -> None:
    # Before step concurrency was read, these commands vanished and the task looked complete.
    workflow = job_with([{"uses": "./act"}, {"parallel": [{"run": "pnpm run lint"}]}])
    entry = evidence(workflow, {**ACT, "package.json": "{}"})
    assert warnings(entry) == [f"{c.WARN_PACKAGE_SCRIPT_ABSENT}package.json#lint"]


def test_background_false_is_a_plain_step() -> None:
    entry = evidence(job_with([{"run": "make", "background": False}]))
    assert warnings(entry) == []
    assert steps_of(entry) == [{"run": "make", "working_directory": "."}]


def test_concurrency_marks_fit_the_request_schema() -> None:
    text = (files("jev_select") / "schemas" / c.SYSTEM_ONE_REQUEST_SCHEMA_FILE).read_text("utf-8")
    schema = json.loads(text)
    validator = jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/evidence", "$defs": schema["$defs"]}
    )
    entry = evidence(PNPM_JOB, PNPM_FILES, {("actions", "checkout", "", "v6"): CHECKOUT})
    assert list(validator.iter_errors(entry.evidence)) == []
    broken = json.loads(json.dumps(entry.evidence))
    broken["jobs"][0]["steps"][2]["parallel"] = -1
    broken["jobs"][0]["steps"][5]["background"] = False
    assert len(list(validator.iter_errors(broken))) == 2


# ---- anchors, aliases and merge keys -----------------------------------------------------------

ANCHORED = """\
on: push
x-shared: &setup
  - uses: ./act
  - run: make deps
jobs:
  build: &job
    runs-on: &runner ubuntu-24.04
    steps:
      - <<: {name: Deps, run: make deps}
        working-directory: lib
      - run: make build
  test:
    <<: *job
    runs-on: *runner
    steps: *setup
"""


def test_anchors_aliases_and_merge_keys_in_a_workflow() -> None:
    # "x-shared" is not a key GitHub models: a gap for that, but the aliases themselves load.
    text = ANCHORED.replace("x-shared: &setup", "env: &setup")
    build = evidence(text, ACT)
    assert warnings(build) == []
    assert steps_of(build) == [
        {"name": "Deps", "run": "make deps", "working_directory": "lib"},
        {"run": "make build", "working_directory": "."},
    ]
    test = evidence(text, ACT, job="test")
    assert warnings(test) == []
    assert steps_of(test) == [
        {"uses": "./act", "working_directory": "."},
        {"run": "make deps", "working_directory": "."},
    ]


def test_action_metadata_may_use_aliases() -> None:
    action = "name: Act\ninputs:\n  a: &doc {description: Shared}\n  b: *doc\n"
    entry = evidence(
        job_with([{"uses": "./act", "with": {"a": 1, "b": 2}}]), {"act/action.yml": action}
    )
    assert warnings(entry) == []
    assert entry.evidence["actions"] == [
        {"inputs": {"a": "Shared", "b": "Shared"}, "name": "Act", "uses": "./act"}
    ]


def test_an_alias_bomb_workflow_is_invalid() -> None:
    lines = ["on: push", "l0: &l0 [lol]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 10)]
    lines += ["jobs:", "  build:", "    steps: [{run: make}]"]
    entry = evidence("\n".join(lines) + "\n")
    assert warnings(entry) == [f"{c.WARN_WORKFLOW_INVALID}{WF}"]
