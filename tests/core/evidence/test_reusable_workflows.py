"""Reusable workflows expand into the called jobs; gap details for job names and sub-checkouts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.resources import files
from typing import Any

import jsonschema
import pytest

from jev_select import contracts as c
from jev_select.core.evidence.resolve import (
    ActionFile,
    LookupFailure,
    LookupOutcome,
    NoLookups,
    resolve_metadata,
    resolve_with_lookups,
)
from jev_select.core.models import JobRef, MetadataResult, Task, TaskTable

WF = ".github/workflows/ci.yml"
LIB = ".github/workflows/lib.yml"
COMMIT = "a" * 40
REMOTE_SHA = "b" * 40


class World:
    def __init__(self, files: Mapping[str, str], remote: Mapping[str, str] | None = None) -> None:
        self.files = dict(files)
        self.remote = dict(remote or {})  # "owner/repo/path@ref" -> text
        self.workflow_calls: list[tuple[str, str, str, str]] = []

    def resolve(self, *refs: tuple[str, str | None]) -> MetadataResult:
        def read_file(path: str) -> bytes | None:
            value = self.files.get(path)
            return None if value is None else value.encode("utf-8")

        def fetch_action(
            owner: str, repo: str, subpath: str, ref: str
        ) -> ActionFile | LookupFailure:
            return LookupFailure.MISSING

        def fetch_workflow(
            owner: str, repo: str, path: str, ref: str
        ) -> ActionFile | LookupFailure:
            self.workflow_calls.append((owner, repo, path, ref))
            text = self.remote.get(f"{owner}/{repo}/{path}@{ref}")
            return LookupFailure.MISSING if text is None else ActionFile(text, path, REMOTE_SHA)

        table = TaskTable(
            (Task(id="unit", description="d", jobs=tuple(JobRef(w, j) for w, j in refs)),)
        )
        return resolve_metadata(
            table,
            read_file=read_file,
            fetch_action=fetch_action,
            fetch_workflow=fetch_workflow,
            repository="o/r",
            commit=COMMIT,
        )


def one(result: MetadataResult) -> tuple[dict[str, Any], dict[str, Any]]:
    entry = result.evidence["unit"]
    assert entry.job_metadata is not None
    return dict(entry.evidence), dict(entry.job_metadata)


CALLER = """\
on: pull_request
jobs:
  test:
    needs: lint
    uses: ./.github/workflows/lib.yml
    with:
      python: "3.13"
    secrets: inherit
"""

LIB_TEXT = """\
on:
  workflow_call:
    inputs:
      python: {type: string}
defaults:
  run:
    working-directory: src
jobs:
  unit:
    runs-on: ubuntu-latest
    steps:
      - uses: ./act
      - run: npm test
  lint:
    needs: unit
    steps:
      - run: make lint
"""


def test_a_local_reusable_workflow_expands_to_its_jobs() -> None:
    world = World(
        {
            WF: CALLER,
            LIB: LIB_TEXT,
            "act/action.yml": "name: Act\n",
            "src/package.json": '{"scripts": {"test": "jest"}}',
        }
    )
    evidence, metadata = one(world.resolve((WF, "test")))
    assert metadata["warnings"] == []
    assert evidence["jobs"] == [
        {
            "id": "test",
            "jobs": [
                {
                    "id": "unit",
                    "steps": [
                        {"uses": "./act", "working_directory": "src"},
                        {"run": "npm test", "working_directory": "src"},
                    ],
                    "workflow": "./.github/workflows/lib.yml",
                },
                {
                    "id": "lint",
                    "steps": [{"run": "make lint", "working_directory": "src"}],
                    "workflow": "./.github/workflows/lib.yml",
                },
            ],
            "uses": "./.github/workflows/lib.yml",
            "with": {"python": "3.13"},
            "workflow": WF,
        }
    ]
    # Called steps contribute actions, scripts and provenance like the caller's own.
    assert evidence["actions"] == [{"name": "Act", "uses": "./act"}]
    assert evidence["packageScripts"] == [
        {
            "command": "jest",
            "manifest": "src/package.json",
            "name": "test",
            "workingDirectory": "src",
        }
    ]
    files = {item["locator"]["file"] for item in metadata["provenance"]}
    assert LIB in files
    # Only the caller's own needs are native dependencies.
    assert metadata["nativeDependencies"] == ["lint"]


def test_a_remote_reusable_workflow_is_fetched_once_and_pinned() -> None:
    uses = "acme/ci/.github/workflows/py.yml@v2"
    caller = (
        f"on: push\njobs:\n  a:\n    uses: {uses}\n  b:\n    uses: {uses}\n    with: {{x: 1}}\n"
    )
    world = World({WF: caller}, {uses: "on: workflow_call\njobs:\n  t:\n    steps: [{run: tox}]\n"})
    evidence, metadata = one(world.resolve((WF, None)))
    assert metadata["warnings"] == []
    assert world.workflow_calls == [("acme", "ci", ".github/workflows/py.yml", "v2")]
    called = evidence["jobs"][0]["jobs"]
    assert called == [
        {"id": "t", "steps": [{"run": "tox", "working_directory": "."}], "workflow": uses}
    ]
    job_items = [p for p in metadata["provenance"] if p["locator"]["repository"] == "acme/ci"]
    assert {p["locator"]["commit"] for p in job_items} == {REMOTE_SHA}
    assert all(p["resolvedSha"] == REMOTE_SHA for p in job_items)


def chain(length: int) -> dict[str, str]:
    """ci.yml calls w1.yml, which calls w2.yml ... up to w<length-1>.yml, which runs a step."""
    files = {}
    for level in range(length):
        path = WF if level == 0 else f".github/workflows/w{level}.yml"
        if level == length - 1:
            body = "    steps: [{run: make}]\n"
        else:
            body = f"    uses: ./.github/workflows/w{level + 1}.yml\n"
        files[path] = f"on: workflow_call\njobs:\n  j:\n{body}"
    return files


def test_calls_nest_to_the_depth_github_allows() -> None:
    _, metadata = one(World(chain(c.REUSABLE_WORKFLOW_MAX_DEPTH)).resolve((WF, "j")))
    assert metadata["warnings"] == []
    _, metadata = one(World(chain(c.REUSABLE_WORKFLOW_MAX_DEPTH + 1)).resolve((WF, "j")))
    deepest = f"./.github/workflows/w{c.REUSABLE_WORKFLOW_MAX_DEPTH}.yml"
    assert metadata["warnings"] == [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + deepest]


@pytest.mark.parametrize(
    ("files", "unresolved"),
    [
        pytest.param(
            {WF: "on: push\njobs:\n  j:\n    uses: ./.github/workflows/ci.yml\n"},
            "./.github/workflows/ci.yml",
            id="calls itself",
        ),
        pytest.param(
            {
                WF: "on: push\njobs:\n  j:\n    uses: ./.github/workflows/lib.yml\n",
                LIB: "on: workflow_call\njobs:\n  k:\n    uses: ./.github/workflows/ci.yml\n",
            },
            "./.github/workflows/ci.yml",
            id="cycle",
        ),
        pytest.param(
            {WF: "on: push\njobs:\n  j:\n    uses: ./.github/workflows/none.yml\n"},
            "./.github/workflows/none.yml",
            id="missing",
        ),
        pytest.param(
            {
                WF: "on: push\njobs:\n  j:\n    uses: ./.github/workflows/lib.yml\n",
                LIB: "jobs: [not, a, mapping]\n",
            },
            "./.github/workflows/lib.yml",
            id="no jobs",
        ),
        pytest.param(
            {WF: "on: push\njobs:\n  j:\n    uses: ./.github/workflows/${{ inputs.x }}.yml\n"},
            "./.github/workflows/${{ inputs.x }}.yml",
            id="dynamic",
        ),
        pytest.param(
            {WF: "on: push\njobs:\n  j:\n    uses: acme/ci/.github/workflows/x.yml@v1\n"},
            "acme/ci/.github/workflows/x.yml@v1",
            id="remote missing",
        ),
        pytest.param(
            {WF: "on: push\njobs:\n  j:\n    uses: acme/.github/workflows/x.yml\n"},
            "acme/.github/workflows/x.yml",
            id="remote without ref",
        ),
    ],
)
def test_unresolvable_calls_stay_gaps(files: dict[str, str], unresolved: str) -> None:
    _, metadata = one(World(files).resolve((WF, "j")))
    assert c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + unresolved in metadata["warnings"]


def test_a_local_call_inside_a_remote_workflow_stays_unresolved() -> None:
    uses = "acme/ci/.github/workflows/py.yml@v2"
    world = World(
        {WF: f"on: push\njobs:\n  j:\n    uses: {uses}\n", LIB: LIB_TEXT},
        {uses: "on: workflow_call\njobs:\n  k:\n    uses: ./.github/workflows/lib.yml\n"},
    )
    _, metadata = one(world.resolve((WF, "j")))
    assert metadata["warnings"] == [
        c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + "./.github/workflows/lib.yml"
    ]


# ---- gap details ----------------------------------------------------------------------------


def test_a_job_named_by_its_display_name_gets_a_note() -> None:
    world = World({WF: "on: push\njobs:\n  unit:\n    name: Unit tests\n    steps: [{run: x}]\n"})
    result = world.resolve((WF, "Unit tests"))
    _, metadata = one(result)
    assert metadata["warnings"] == [f"{c.WARN_JOB_MISSING}{WF}#Unit tests"]
    assert result.notes == {
        "unit": (c.NOTE_JOB_NAME_NOT_KEY.format(workflow=WF, name="Unit tests", key="unit"),)
    }
    assert "unit" not in str(metadata["warnings"]).replace(f"{WF}#Unit tests", "")


def test_a_truly_missing_job_gets_no_note() -> None:
    result = World({WF: "on: push\njobs:\n  unit:\n    steps: [{run: x}]\n"}).resolve((WF, "e2e"))
    assert result.notes == {}


SUB_CHECKOUT = """\
on: push
jobs:
  j:
    steps:
      - uses: ./tools/setup
      - uses: actions/checkout@v4
        with:
          path: sub/
      - uses: ./sub/tools/setup
      - uses: actions/checkout@v4
        with:
          repository: other/repo
          path: other
      - uses: ./other/tools/setup
"""


def test_a_local_action_under_a_sub_checkout_resolves_relative_to_it() -> None:
    world = World({WF: SUB_CHECKOUT, "tools/setup/action.yml": "name: Setup\n"})
    evidence, metadata = one(world.resolve((WF, "j")))
    # ./sub/tools/setup is this repository's ./tools/setup; ./other/... is another repository.
    assert [action["uses"] for action in evidence["actions"]] == ["./tools/setup"]
    assert metadata["warnings"] == [
        "action-metadata-missing:actions/checkout@v4",
        "action-metadata-missing:./other/tools/setup",
    ]


def test_expanded_jobs_fit_the_request_schema() -> None:
    text = (files("jev_select") / "schemas" / c.SYSTEM_ONE_REQUEST_SCHEMA_FILE).read_text("utf-8")
    schema = json.loads(text)
    validator = jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/evidence", "$defs": schema["$defs"]}
    )
    world = World({WF: CALLER, LIB: LIB_TEXT, "act/action.yml": "name: Act\n"})
    evidence, _ = one(world.resolve((WF, "test")))
    assert list(validator.iter_errors(evidence)) == []
    evidence["jobs"][0]["jobs"][0]["steps"] = "not a list"
    assert len(list(validator.iter_errors(evidence))) == 1


def test_the_self_repository_form_reads_this_repository() -> None:
    caller = "on: push\njobs:\n  j:\n    uses: $/.github/workflows/lib.yml\n"
    lib = "on: workflow_call\njobs:\n  k:\n    steps:\n      - uses: $/act\n"
    world = World({WF: caller, LIB: lib, "act/action.yml": "name: Act\n"})
    evidence, metadata = one(world.resolve((WF, "j")))
    assert metadata["warnings"] == []
    assert evidence["jobs"][0]["jobs"][0]["workflow"] == "$/.github/workflows/lib.yml"
    # The action summary names the path it was read from.
    assert evidence["actions"] == [{"name": "Act", "uses": "./act"}]


# ---- the lookup rounds of the one metadata entry point ------------------------------------------


class RoundLookups:
    """A ``Lookups`` that answers what it was asked in the previous round, as GitHub's does."""

    def __init__(self, remote: Mapping[str, str]) -> None:
        self.remote = dict(remote)  # "owner/repo/path@ref" -> text
        self.known: dict[str, ActionFile | LookupFailure] = {}
        self.pending: list[str] = []
        self.rounds = 0

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> LookupOutcome:
        return LookupFailure.MISSING

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> LookupOutcome:
        key = f"{owner}/{repo}/{path}@{ref}"
        if key in self.known:
            return self.known[key]
        if key not in self.pending:
            self.pending.append(key)
        return LookupFailure.MISSING

    def run_pending(self) -> bool:
        if not self.pending:
            return False
        self.rounds += 1
        for key in self.pending:
            text = self.remote.get(key)
            path = key.split("@", 1)[0].split("/", 2)[2]
            self.known[key] = (
                LookupFailure.MISSING if text is None else ActionFile(text, path, REMOTE_SHA)
            )
        self.pending.clear()
        return True


def test_the_rounds_fetch_nested_remote_workflows_one_level_at_a_time() -> None:
    caller = "on: pull_request\njobs:\n  call:\n    uses: acme/ci/.github/workflows/a.yml@v1\n"
    remote = {
        "acme/ci/.github/workflows/a.yml@v1": (
            "on: workflow_call\njobs:\n  nest:\n    uses: acme/ci/.github/workflows/b.yml@v1\n"
        ),
        "acme/ci/.github/workflows/b.yml@v1": (
            "on: workflow_call\njobs:\n  build:\n    steps: [{run: make}]\n"
        ),
    }
    lookups = RoundLookups(remote)
    table = TaskTable((Task(id="unit", description="d", jobs=(JobRef(WF, "call"),)),))
    result = resolve_with_lookups(
        table,
        read_file=lambda path: caller.encode("utf-8") if path == WF else None,
        lookups=lookups,
        repository="o/r",
        commit=COMMIT,
    )
    evidence, metadata = one(result)
    assert metadata["warnings"] == []
    assert lookups.rounds == 2
    assert evidence["jobs"][0]["jobs"][0]["jobs"][0]["steps"][0]["run"] == "make"


def test_no_lookups_leave_a_remote_workflow_unresolved_in_one_round() -> None:
    caller = "on: pull_request\njobs:\n  call:\n    uses: acme/ci/.github/workflows/a.yml@v1\n"
    table = TaskTable((Task(id="unit", description="d", jobs=(JobRef(WF, "call"),)),))
    result = resolve_with_lookups(
        table,
        read_file=lambda path: caller.encode("utf-8") if path == WF else None,
        lookups=NoLookups(),
        repository="o/r",
        commit=COMMIT,
    )
    _, metadata = one(result)
    assert metadata["warnings"] == [
        c.GAP_REUSABLE_WORKFLOW_UNRESOLVED.warning("acme/ci/.github/workflows/a.yml@v1")
    ]
    # The same as one round without any fetcher at all.
    assert result == resolve_metadata(
        table,
        read_file=lambda path: caller.encode("utf-8") if path == WF else None,
        fetch_action=lambda *_: LookupFailure.MISSING,
        repository="o/r",
        commit=COMMIT,
    )
