"""Task metadata evidence through the real ``jev-select plan`` process (docs/reference.md,
"Task evidence").

One repository holds every kind of metadata a task can reference: workflows with single and
expanded jobs, defaults at both levels, a YAML alias, local, external and ``docker://`` actions,
a reusable-workflow job, nested npm scripts, a ``cd`` in a command, and context files with a BOM,
binary bytes, more than 1 MiB, or only in the pull request head. One GitHub-mode run of a task
table covering all of them is shared by the tests below, each checking its task's evidence as
Jev received it, its reasons and its ``job_metadata``. External actions come from a local HTTPS
server playing the GitHub REST API. Further runs cover manual mode, where metadata is read at the
dispatch commit.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import API_KEY_SENTINEL, REPOSITORY, TOKEN_SENTINEL, CliRun, GitHubEnv
from support.fakegithub import FakeGitHub, RecordedRequest
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.version import USER_AGENT

RUN_SENTINEL = "RUNSENTINEL_9c1d"
CONTEXT_SENTINEL = "CONTEXTSENTINEL_77aa"
DESCRIPTION_SENTINEL = "DESCRIPTIONSENTINEL_0b5e"
ACTION_SENTINEL = "ACTIONSENTINEL_31f0"

CI = ".github/workflows/ci.yml"
DEFAULTS = ".github/workflows/defaults.yml"
ALIAS = ".github/workflows/alias.yml"
ACTIONS = ".github/workflows/actions.yml"
REUSABLE = ".github/workflows/reusable.yml"
SCRIPTS = ".github/workflows/scripts.yml"

CI_TEXT = f"""name: ci
on: pull_request
jobs:
  unit:
    name: Unit tests
    runs-on: ubuntu-latest
    needs: build
    if: github.actor != 'bot'
    env:
      LEVEL: high
    steps:
      - name: Test
        id: test
        run: python -m pytest tests/unit -k {RUN_SENTINEL}
        env:
          PYTHONHASHSEED: "0"
        if: always()
  build:
    runs-on: ubuntu-latest
    needs: [lint, setup]
    steps:
      - run: make build
        shell: bash
"""

DEFAULTS_TEXT = """on: pull_request
defaults:
  run:
    working-directory: web
    shell: bash
jobs:
  build:
    runs-on: ubuntu-latest
    defaults:
      run:
        working-directory: tools
    steps:
      - run: make one
      - run: make two
        working-directory: scripts
        shell: pwsh
  plain:
    runs-on: ubuntu-latest
    steps:
      - run: make three
"""

ALIAS_TEXT = """on: pull_request
jobs:
  build: &build
    runs-on: &runner ubuntu-latest
    steps:
      - run: make
  test:
    <<: *build
    runs-on: *runner
    steps:
      - run: make test
"""

ACTIONS_TEXT = """on: pull_request
jobs:
  local:
    runs-on: ubuntu-latest
    steps:
      - uses: ./.github/actions/lint
        with:
          level: strict
          quiet: true
  external:
    runs-on: ubuntu-latest
    steps:
      - uses: acme/setup@v1
        with:
          version: "1.2"
          cache: true
          unknown: x
      - uses: acme/gone@v1
      - uses: acme/setup@v1
        with:
          version: "2.0"
  docker:
    runs-on: ubuntu-latest
    steps:
      - uses: docker://alpine:3.19
        with:
          args: echo hi
"""

LOCAL_ACTION_TEXT = f"""name: Lint
description: Runs the linters. {ACTION_SENTINEL}
inputs:
  level:
    description: How strict to be.
  paths:
    description: Paths to lint.
  quiet:
    required: false
runs:
  using: composite
  steps:
    - run: npm test
      shell: bash
      working-directory: web
"""

EXTERNAL_ACTION_TEXT = f"""name: Setup toolchain
description: Installs the toolchain. {ACTION_SENTINEL}
inputs:
  version:
    description: Toolchain version to install.
  cache:
    description: Whether to cache downloads.
  unused:
    description: Not passed by the workflow.
runs:
  using: node20
  main: index.js
"""

REUSABLE_USES = "octo-org/shared/.github/workflows/build.yml@main"
REUSABLE_TEXT = f"""on: pull_request
jobs:
  call:
    uses: {REUSABLE_USES}
    needs: prepare
    with:
      target: release
"""

SCRIPTS_TEXT = """on: pull_request
jobs:
  npm:
    runs-on: ubuntu-latest
    defaults:
      run:
        working-directory: web
    steps:
      - run: npm ci && npm run check
      - run: yarn build --verbose
  cd:
    runs-on: ubuntu-latest
    steps:
      - run: cd web && npm test
"""

PACKAGE_JSON = json.dumps(
    {
        "name": "web",
        "scripts": {
            "check": "npm run lint && pnpm run types",
            "lint": "eslint .",
            "types": "tsc --noEmit",
            "build": "vite build",
            "test": "vitest",
        },
    },
    indent=2,
)

NOTES_TEXT = f"# Notes\nThe parser keeps a cache. {CONTEXT_SENTINEL}\n"
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
BIG_TEXT = "a" * c.METADATA_FILE_CAP + "\n"


def task(description: str, body: str = "") -> str:
    return f"  description: {description} {DESCRIPTION_SENTINEL}\n{body}"


def jobs(workflow: str, job: str | None = None) -> str:
    line = f"    - workflow: {workflow}\n"
    if job is not None:
        line += f"      job: {job}\n"
    return "  jobs:\n" + line


TASKS = "".join(
    f"{task_id}:\n{body}"
    for task_id, body in [
        ("single", task("Runs the unit tests.", jobs(CI, "unit"))),
        ("alljobs", task("Runs every CI job.", jobs(CI))),
        ("noworkflow", task("Runs a job of a missing workflow.", jobs(".github/x/absent.yml"))),
        ("nojob", task("Runs a missing job.", jobs(CI, "deploy"))),
        ("byname", task("Runs the unit job by its name.", jobs(CI, "Unit tests"))),
        ("alias", task("Runs a workflow with an alias.", jobs(ALIAS))),
        ("defaults", task("Builds with defaults.", jobs(DEFAULTS))),
        ("localaction", task("Lints with the local action.", jobs(ACTIONS, "local"))),
        ("external", task("Sets up the toolchain.", jobs(ACTIONS, "external"))),
        ("docker", task("Runs a container step.", jobs(ACTIONS, "docker"))),
        ("reusable", task("Calls a shared workflow.", jobs(REUSABLE, "call"))),
        ("scripts", task("Checks the web package.", jobs(SCRIPTS, "npm"))),
        ("cdcommand", task("Tests the web package.", jobs(SCRIPTS, "cd"))),
        ("bom", task("Reads the notes.", "  context_files: [./docs/notes.md]\n")),
        ("binary", task("Reads the logo.", "  context_files: [assets/logo.png]\n")),
        ("big", task("Reads the big data file.", "  context_files: [data/big.txt]\n")),
        ("headonly", task("Reads a new page.", "  context_files: [docs/new.md]\n")),
        (
            "dynamic",
            task("Reads a computed path.", "  context_files: ['${{ env.DOCS }}/a.md']\n"),
        ),
        ("plain", task("Checks the parser package.")),
    ]
)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def source_key(commit: str, file: str, repository: str = REPOSITORY) -> str:
    return f"source:{repository}@{commit}:{file}"


def ca_bundle(path: Path, *servers: FakeJev | FakeGitHub) -> str:
    parts = []
    for server in servers:
        assert server.ca_bundle is not None
        parts.append(Path(server.ca_bundle).read_text("ascii"))
    path.write_text("".join(parts), "ascii")
    return str(path)


def base_files() -> dict[str | bytes, Any]:
    return {
        "src/parser/a.py": "def parse():\n    return 1\n",
        CI: CI_TEXT,
        DEFAULTS: DEFAULTS_TEXT,
        ALIAS: ALIAS_TEXT,
        ACTIONS: ACTIONS_TEXT,
        REUSABLE: REUSABLE_TEXT,
        SCRIPTS: SCRIPTS_TEXT,
        ".github/actions/lint/action.yml": LOCAL_ACTION_TEXT,
        "web/package.json": PACKAGE_JSON,
        "docs/notes.md": ("\ufeff" + NOTES_TEXT).encode("utf-8"),
        "assets/logo.png": BINARY,
        "data/big.txt": BIG_TEXT,
    }


HEAD_CHANGES: dict[str | bytes, Any] = {
    "src/parser/a.py": "def parse():\n    return 2\n",
    "docs/new.md": "# New page\n",
}


@dataclass
class Scenario:
    result: CliRun
    base: str
    questions: dict[str, Any]
    github_requests: list[RecordedRequest]
    action_sha: str
    jev_requests: int

    def evidence(self, task_id: str) -> dict[str, Any]:
        evidence: dict[str, Any] = self.questions[task_id]["instructions"]["task"]
        return evidence

    def metadata(self, task_id: str) -> dict[str, Any]:
        metadata: dict[str, Any] = self.result.report["job_metadata"][task_id]
        return metadata

    def decision(self, task_id: str) -> dict[str, Any]:
        decision: dict[str, Any] = self.result.report["tasks"][task_id]
        return decision


def merged_questions(jev: FakeJev) -> dict[str, Any]:
    """Each task's question; every group asks the same question, so one copy is kept."""
    questions: dict[str, Any] = {}
    for request in jev.requests:
        for task_id, question in request.json["questions"].items():
            assert questions.setdefault(task_id, question) == question
    return questions


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    root = tmp_path_factory.mktemp("metadata")
    repo = GitRepo.init(root / "origin")
    base = repo.commit(base_files())
    head = repo.commit(HEAD_CHANGES, parents=[base], branch="feature")
    merge = repo.merge(base, head)
    with FakeJev(tls=True, scores=0.0) as jev, FakeGitHub(tls=True) as github:
        action_sha = github.add_action("acme/setup", "v1", {"action.yml": EXTERNAL_ACTION_TEXT})
        env = GitHubEnv(
            root=root / "runner",
            inputs={
                "tasks": TASKS,
                "api-key": API_KEY_SENTINEL,
                "github-token": TOKEN_SENTINEL,
                "allow-external-context": "true",
                "api-base-url": jev.base_url,
                "timeout-ms": "20000",
            },
            sha=merge,
        )
        env.event = env.pull_request_event(base=base, head=head)
        env.extra["GITHUB_API_URL"] = github.url
        env.extra["REQUESTS_CA_BUNDLE"] = ca_bundle(root / "ca.pem", jev, github)
        result = env.run("--remote", str(repo.path))
        yield Scenario(
            result=result,
            base=base,
            questions=merged_questions(jev),
            github_requests=list(github.requests),
            action_sha=action_sha,
            jev_requests=len(jev.requests),
        )


JOB_METADATA_KEYS = ["incomplete", "missing", "provenance", "hashes", "warnings"]


def assert_complete(scenario: Scenario, task_id: str) -> None:
    metadata = scenario.metadata(task_id)
    assert metadata["incomplete"] is False
    assert metadata["missing"] == metadata["warnings"] == []
    assert "incomplete" not in scenario.evidence(task_id)
    assert scenario.decision(task_id) == {
        "proposed_run": False,
        "run": False,
        "reasons": [c.REASON_JEV_BELOW_THRESHOLD],
    }


def assert_gaps(scenario: Scenario, task_id: str, gaps: list[str]) -> None:
    metadata = scenario.metadata(task_id)
    assert metadata["incomplete"] is True
    assert metadata["missing"] == gaps
    assert metadata["warnings"] == gaps
    assert scenario.evidence(task_id)["incomplete"] is True
    assert scenario.decision(task_id) == {
        "proposed_run": True,
        "run": True,
        "reasons": [c.REASON_METADATA_UNAVAILABLE],
    }


def kinds(metadata: dict[str, Any]) -> list[str]:
    return [item["kind"] for item in metadata["provenance"]]


# ---------------------------------------------------------------------------------------------
# The run as a whole
# ---------------------------------------------------------------------------------------------


def test_run_is_planned_and_gaps_retain_only_their_tasks(scenario: Scenario) -> None:
    result = scenario.result
    assert result.code == 0, result.stdout
    assert result.stderr == ""
    assert result.outputs["status"] == c.STATUS_PLANNED
    report = result.report
    assert report["metadata_sha"] == scenario.base
    assert list(report["job_metadata"]) == sorted(report["tasks"])
    retained = sorted(task_id for task_id, item in report["tasks"].items() if item["run"])
    assert retained == [
        "big",
        "binary",
        "byname",
        "docker",
        "dynamic",
        "external",
        "headonly",
        "nojob",
        "noworkflow",
        "reusable",
    ]
    for task_id, metadata in report["job_metadata"].items():
        assert list(metadata)[: len(JOB_METADATA_KEYS)] == JOB_METADATA_KEYS, task_id
        assert list(metadata)[len(JOB_METADATA_KEYS)] == "nativeDependencies"
    # Every task, complete or not, was asked.
    assert sorted(scenario.questions) == sorted(report["tasks"])


def test_no_source_text_or_secret_is_published(scenario: Scenario) -> None:
    text = scenario.result.without_masks()
    for secret in (
        API_KEY_SENTINEL,
        TOKEN_SENTINEL,
        RUN_SENTINEL,
        CONTEXT_SENTINEL,
        DESCRIPTION_SENTINEL,
        ACTION_SENTINEL,
    ):
        assert secret not in text


def test_github_api_requests_for_external_actions(scenario: Scenario) -> None:
    paths = [request.path for request in scenario.github_requests]
    # One lookup per distinct action and ref, although acme/setup@v1 is used twice; the
    # reusable workflow of another repository is looked up the same way (and is missing).
    assert sorted(paths) == sorted(
        [
            "/repos/acme/setup/commits/v1",
            f"/repos/acme/setup/contents/action.yml?ref={scenario.action_sha}",
            "/repos/acme/gone/commits/v1",
            "/repos/octo-org/shared/commits/main",
        ]
    )
    for request in scenario.github_requests:
        assert request.method == "GET"
        assert request.headers["accept"] == c.GITHUB_ACCEPT
        assert request.headers["user-agent"] == USER_AGENT
        assert request.headers["authorization"] == f"Bearer {TOKEN_SENTINEL}"


# ---------------------------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------------------------


def test_single_job(scenario: Scenario) -> None:
    assert scenario.evidence("single") == {
        "actions": [],
        "contextFiles": [],
        "description": f"Runs the unit tests. {DESCRIPTION_SENTINEL}",
        "jobs": [
            {
                "id": "unit",
                "name": "Unit tests",
                "steps": [
                    {
                        "name": "Test",
                        "run": f"python -m pytest tests/unit -k {RUN_SENTINEL}",
                        "working_directory": ".",
                    }
                ],
                "workflow": CI,
            }
        ],
        "packageScripts": [],
    }
    assert_complete(scenario, "single")
    metadata = scenario.metadata("single")
    assert metadata["nativeDependencies"] == ["build"]
    assert metadata["workflow"] == CI
    assert metadata["job"] == "unit"
    assert list(metadata)[-2:] == ["workflow", "job"]
    assert metadata["hashes"] == {source_key(scenario.base, CI): sha256(CI_TEXT)}
    assert kinds(metadata) == ["workflow-job", "workflow-step"]
    for item in metadata["provenance"]:
        assert item["locator"]["repository"] == REPOSITORY
        assert item["locator"]["commit"] == scenario.base
        assert item["locator"]["file"] == CI
        assert item["sha256"] == sha256(CI_TEXT)
        assert "resolvedSha" not in item
        assert set(item["locator"]["location"]) == {"line", "column", "endLine", "endColumn"}
    assert metadata["provenance"][0]["locator"]["location"]["line"] == 4


def test_all_jobs_of_a_workflow_in_document_order(scenario: Scenario) -> None:
    evidence = scenario.evidence("alljobs")
    assert [job["id"] for job in evidence["jobs"]] == ["unit", "build"]
    assert evidence["jobs"][1] == {
        "id": "build",
        "steps": [{"run": "make build", "shell": "bash", "working_directory": "."}],
        "workflow": CI,
    }
    assert_complete(scenario, "alljobs")
    metadata = scenario.metadata("alljobs")
    assert metadata["workflow"] == CI
    assert "job" not in metadata
    assert metadata["nativeDependencies"] == ["build", "lint", "setup"]
    assert kinds(metadata) == ["workflow-job", "workflow-step", "workflow-job", "workflow-step"]


def test_missing_workflow(scenario: Scenario) -> None:
    assert scenario.evidence("noworkflow")["jobs"] == []
    assert_gaps(scenario, "noworkflow", [c.WARN_WORKFLOW_MISSING + ".github/x/absent.yml"])
    metadata = scenario.metadata("noworkflow")
    assert metadata["provenance"] == []
    assert metadata["hashes"] == {}
    assert metadata["workflow"] == ".github/x/absent.yml"


def test_missing_job(scenario: Scenario) -> None:
    assert scenario.evidence("nojob")["jobs"] == []
    assert_gaps(scenario, "nojob", [f"{c.WARN_JOB_MISSING}{CI}#deploy"])
    assert scenario.metadata("nojob")["job"] == "deploy"


def test_a_job_named_by_its_display_name_is_explained_in_the_summary(scenario: Scenario) -> None:
    assert_gaps(scenario, "byname", [f"{c.WARN_JOB_MISSING}{CI}#Unit tests"])
    # The note quotes the workflow, so the summary shows it as a code span, like the task ID.
    explanation = c.NOTE_JOB_NAME_NOT_KEY.format(workflow=CI, name="Unit tests", key="unit")
    note = c.SUMMARY_NOTE_TEMPLATE.format(task="`byname`", note=f"`{explanation}`")
    assert scenario.result.summary_text is not None
    assert note in scenario.result.summary_text
    # The report keeps the fixed warning form only.
    assert "reference the job by its key" not in json.dumps(scenario.result.report)


def test_yaml_anchors_aliases_and_merge_keys_are_read(scenario: Scenario) -> None:
    assert scenario.evidence("alias")["jobs"] == [
        {"id": "build", "steps": [{"run": "make", "working_directory": "."}], "workflow": ALIAS},
        {
            "id": "test",
            "steps": [{"run": "make test", "working_directory": "."}],
            "workflow": ALIAS,
        },
    ]
    assert scenario.metadata("alias")["incomplete"] is False


def test_defaults_at_workflow_and_job_level(scenario: Scenario) -> None:
    evidence = scenario.evidence("defaults")
    assert evidence["jobs"] == [
        {
            "id": "build",
            "steps": [
                {"run": "make one", "shell": "bash", "working_directory": "tools"},
                {"run": "make two", "shell": "pwsh", "working_directory": "scripts"},
            ],
            "workflow": DEFAULTS,
        },
        {
            "id": "plain",
            "steps": [{"run": "make three", "shell": "bash", "working_directory": "web"}],
            "workflow": DEFAULTS,
        },
    ]
    assert_complete(scenario, "defaults")
    assert kinds(scenario.metadata("defaults")) == [
        "workflow-job",
        "workflow-defaults",
        "job-defaults",
        "workflow-step",
        "workflow-step",
        "workflow-job",
        "workflow-step",
    ]


# ---------------------------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------------------------


def test_local_action_with_described_inputs(scenario: Scenario) -> None:
    evidence = scenario.evidence("localaction")
    assert evidence["actions"] == [
        {
            "description": f"Runs the linters. {ACTION_SENTINEL}",
            "inputs": {"level": "How strict to be."},
            "name": "Lint",
            "uses": "./.github/actions/lint",
        }
    ]
    assert evidence["jobs"][0]["steps"] == [
        {
            "steps": [{"run": "npm test", "shell": "bash", "working_directory": "web"}],
            "uses": "./.github/actions/lint",
            "with": {"level": "strict", "quiet": True},
            "working_directory": ".",
        }
    ]
    # The composite's npm command is read like the job's own.
    assert [script["name"] for script in evidence["packageScripts"]] == ["test"]
    assert_complete(scenario, "localaction")
    metadata = scenario.metadata("localaction")
    kinds = [item["kind"] for item in metadata["provenance"]]
    assert kinds[-2:] == ["action", "package-script"]
    action = metadata["provenance"][-2]
    assert action["locator"]["repository"] == REPOSITORY
    assert action["locator"]["commit"] == scenario.base
    assert action["locator"]["file"] == ".github/actions/lint/action.yml"
    assert action["sha256"] == sha256(LOCAL_ACTION_TEXT)
    assert "resolvedSha" not in action
    assert metadata["hashes"][
        source_key(scenario.base, ".github/actions/lint/action.yml")
    ] == sha256(LOCAL_ACTION_TEXT)


def test_external_action_resolved_and_missing(scenario: Scenario) -> None:
    evidence = scenario.evidence("external")
    assert evidence["actions"] == [
        {
            "description": f"Installs the toolchain. {ACTION_SENTINEL}",
            "inputs": {
                "cache": "Whether to cache downloads.",
                "version": "Toolchain version to install.",
            },
            "name": "Setup toolchain",
            "uses": "acme/setup@v1",
        }
    ]
    steps = evidence["jobs"][0]["steps"]
    assert [step["uses"] for step in steps] == ["acme/setup@v1", "acme/gone@v1", "acme/setup@v1"]
    assert steps[0]["with"] == {"cache": True, "unknown": "x", "version": "1.2"}
    assert steps[2]["with"] == {"version": "2.0"}
    assert "with" not in steps[1]
    assert_gaps(scenario, "external", [c.WARN_ACTION_METADATA_MISSING + "acme/gone@v1"])
    metadata = scenario.metadata("external")
    action = [item for item in metadata["provenance"] if item["kind"] == "action"]
    assert action == [
        {
            "kind": "action",
            "locator": {
                "repository": "acme/setup",
                "commit": scenario.action_sha,
                "file": "action.yml",
                "location": action[0]["locator"]["location"],
            },
            "sha256": sha256(EXTERNAL_ACTION_TEXT),
            "resolvedSha": scenario.action_sha,
        }
    ]
    key = source_key(scenario.action_sha, "action.yml", repository="acme/setup")
    assert metadata["hashes"][key] == sha256(EXTERNAL_ACTION_TEXT)


def test_docker_action_is_unavailable(scenario: Scenario) -> None:
    evidence = scenario.evidence("docker")
    assert evidence["actions"] == []
    assert evidence["jobs"][0]["steps"] == [
        {"uses": "docker://alpine:3.19", "with": {"args": "echo hi"}, "working_directory": "."}
    ]
    assert_gaps(scenario, "docker", [c.WARN_ACTION_METADATA_UNAVAILABLE + "docker://alpine:3.19"])


def test_reusable_workflow_job(scenario: Scenario) -> None:
    assert scenario.evidence("reusable")["jobs"] == [
        {
            "id": "call",
            "uses": REUSABLE_USES,
            "with": {"target": "release"},
            "workflow": REUSABLE,
        }
    ]
    assert_gaps(scenario, "reusable", [c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + REUSABLE_USES])
    metadata = scenario.metadata("reusable")
    assert metadata["nativeDependencies"] == ["prepare"]
    assert kinds(metadata) == ["workflow-job"]


# ---------------------------------------------------------------------------------------------
# Package scripts
# ---------------------------------------------------------------------------------------------


def test_npm_scripts_with_nesting(scenario: Scenario) -> None:
    def script(name: str, command: str) -> dict[str, str]:
        return {
            "command": command,
            "manifest": "web/package.json",
            "name": name,
            "workingDirectory": "web",
        }

    assert scenario.evidence("scripts")["packageScripts"] == [
        script("check", "npm run lint && pnpm run types"),
        script("lint", "eslint ."),
        script("types", "tsc --noEmit"),
        script("build", "vite build"),
    ]
    assert_complete(scenario, "scripts")
    metadata = scenario.metadata("scripts")
    scripts = [item for item in metadata["provenance"] if item["kind"] == "package-script"]
    assert [item["locator"]["file"] for item in scripts] == ["web/package.json"] * 4
    assert {item["sha256"] for item in scripts} == {sha256(PACKAGE_JSON)}
    # The first occurrence of "check" in the manifest is the script's key.
    line = PACKAGE_JSON.split("\n").index('    "check": "npm run lint && pnpm run types",') + 1
    assert scripts[0]["locator"]["location"]["line"] == line
    assert metadata["hashes"][source_key(scenario.base, "web/package.json")] == sha256(PACKAGE_JSON)


def test_cd_in_a_command_moves_its_scripts(scenario: Scenario) -> None:
    evidence = scenario.evidence("cdcommand")
    assert evidence["packageScripts"] == [
        {
            "command": "vitest",
            "manifest": "web/package.json",
            "name": "test",
            "workingDirectory": "web",
        }
    ]
    assert evidence["jobs"][0]["steps"] == [{"run": "cd web && npm test", "working_directory": "."}]
    assert_complete(scenario, "cdcommand")


# ---------------------------------------------------------------------------------------------
# Context files
# ---------------------------------------------------------------------------------------------


def test_context_file_with_a_bom_is_sent_without_it(scenario: Scenario) -> None:
    assert scenario.evidence("bom")["contextFiles"] == [
        {"content": NOTES_TEXT, "path": "./docs/notes.md"}
    ]
    assert_complete(scenario, "bom")
    metadata = scenario.metadata("bom")
    assert metadata["hashes"] == {source_key(scenario.base, "docs/notes.md"): sha256(NOTES_TEXT)}
    assert metadata["provenance"] == [
        {
            "kind": "context-file",
            "locator": {
                "repository": REPOSITORY,
                "commit": scenario.base,
                "file": "docs/notes.md",
                "location": {"line": 1, "column": 1, "endLine": 3, "endColumn": 1},
            },
            "sha256": sha256(NOTES_TEXT),
        }
    ]
    assert "workflow" not in metadata
    assert metadata["nativeDependencies"] == []


@pytest.mark.parametrize(
    ("task_id", "path"),
    [("binary", "assets/logo.png"), ("big", "data/big.txt"), ("headonly", "docs/new.md")],
)
def test_unreadable_context_files_are_missing(scenario: Scenario, task_id: str, path: str) -> None:
    assert scenario.evidence(task_id)["contextFiles"] == []
    assert_gaps(scenario, task_id, [c.WARN_CONTEXT_FILE_MISSING + path])
    assert scenario.metadata(task_id)["provenance"] == []


def test_dynamic_context_path(scenario: Scenario) -> None:
    assert scenario.evidence("dynamic")["contextFiles"] == []
    assert_gaps(scenario, "dynamic", [c.WARN_CONTEXT_FILE_DYNAMIC + "${{ env.DOCS }}/a.md"])


def test_description_only_task(scenario: Scenario) -> None:
    assert scenario.evidence("plain") == {
        "actions": [],
        "contextFiles": [],
        "description": f"Checks the parser package. {DESCRIPTION_SENTINEL}",
        "jobs": [],
        "packageScripts": [],
    }
    assert_complete(scenario, "plain")
    assert scenario.metadata("plain") == {
        "incomplete": False,
        "missing": [],
        "provenance": [],
        "hashes": {},
        "warnings": [],
        "nativeDependencies": [],
    }


# ---------------------------------------------------------------------------------------------
# Manual mode: metadata comes from the dispatch commit
# ---------------------------------------------------------------------------------------------

MANUAL_TASKS = f"""
unit:
  description: Runs the unit tests. {DESCRIPTION_SENTINEL}
  jobs:
    - workflow: {CI}
      job: unit
  context_files: [docs/ops.md]
"""

DISPATCH_CI_TEXT = CI_TEXT.replace("name: Unit tests", "name: Unit tests (dispatch)")


def manual_run(tmp_path: Path, *, dispatch_in_remote: bool) -> tuple[CliRun, str, dict[str, Any]]:
    repo = GitRepo.init(tmp_path / "origin")
    base = repo.commit({"src/parser/a.py": "x = 1\n", CI: CI_TEXT})
    head = repo.commit({"src/parser/a.py": "x = 2\n"}, parents=[base], branch="feature")
    merge = repo.merge(base, head)
    if dispatch_in_remote:
        dispatch = repo.commit(
            {CI: DISPATCH_CI_TEXT, "docs/ops.md": "Operations notes.\n"},
            parents=[base],
            branch="ops",
        )
    else:
        dispatch = "d" * 40
    with FakeJev(tls=True, scores=0.0) as jev, FakeGitHub(tls=True) as github:
        github.add_pull(
            REPOSITORY,
            7,
            {
                "state": "open",
                "merge_commit_sha": merge,
                "base": {"sha": base, "repo": {"id": 42, "full_name": REPOSITORY}},
                "head": {"sha": head, "repo": {"id": 42, "full_name": REPOSITORY}},
            },
        )
        env = GitHubEnv(
            root=tmp_path / "runner",
            event_name="workflow_dispatch",
            event={"inputs": {"pull-request": "7"}},
            inputs={
                "tasks": MANUAL_TASKS,
                "api-key": API_KEY_SENTINEL,
                "github-token": TOKEN_SENTINEL,
                "allow-external-context": "true",
                "api-base-url": jev.base_url,
                "timeout-ms": "20000",
                "pull-request": "7",
            },
            sha=dispatch,
        )
        env.extra["GITHUB_API_URL"] = github.url
        env.extra["REQUESTS_CA_BUNDLE"] = ca_bundle(tmp_path / "ca.pem", jev, github)
        result = env.run("--remote", str(repo.path))
        questions = merged_questions(jev)
    assert result.code == 0, result.stdout
    assert result.outputs["tested-sha"] == merge
    report = result.report
    assert (report["base_sha"], report["head_sha"], report["tested_sha"]) == (base, head, merge)
    assert report["metadata_sha"] == dispatch
    return result, dispatch, questions


def test_manual_mode_reads_metadata_at_the_dispatch_commit(tmp_path: Path) -> None:
    result, dispatch, questions = manual_run(tmp_path, dispatch_in_remote=True)
    evidence = questions["unit"]["instructions"]["task"]
    assert evidence["jobs"][0]["name"] == "Unit tests (dispatch)"
    assert evidence["contextFiles"] == [{"content": "Operations notes.\n", "path": "docs/ops.md"}]
    assert "incomplete" not in evidence
    metadata = result.report["job_metadata"]["unit"]
    assert metadata["incomplete"] is False
    assert {item["locator"]["commit"] for item in metadata["provenance"]} == {dispatch}
    assert metadata["hashes"] == {
        source_key(dispatch, CI): sha256(DISPATCH_CI_TEXT),
        source_key(dispatch, "docs/ops.md"): sha256("Operations notes.\n"),
    }
    assert result.outputs["status"] == c.STATUS_PLANNED
    assert result.report["tasks"]["unit"]["reasons"] == [c.REASON_JEV_BELOW_THRESHOLD]
    assert TOKEN_SENTINEL not in result.without_masks()


def test_unfetchable_dispatch_commit_makes_the_task_incomplete_not_the_run(
    tmp_path: Path,
) -> None:
    result, _dispatch, questions = manual_run(tmp_path, dispatch_in_remote=False)
    assert result.outputs["status"] == c.STATUS_PLANNED
    gaps = [c.WARN_WORKFLOW_MISSING + CI, c.WARN_CONTEXT_FILE_MISSING + "docs/ops.md"]
    metadata = result.report["job_metadata"]["unit"]
    assert metadata["warnings"] == metadata["missing"] == gaps
    assert result.report["tasks"]["unit"]["reasons"] == [c.REASON_METADATA_UNAVAILABLE]
    assert questions["unit"]["instructions"]["task"]["incomplete"] is True


# ---------------------------------------------------------------------------------------------
# Where external action lookups may go
# ---------------------------------------------------------------------------------------------


class RecordingProxy:
    """An HTTP proxy on 127.0.0.1 that records each request line and then hangs up."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self._listener.settimeout(0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(2)
                try:
                    data = connection.recv(4096)
                except OSError:
                    data = b""
                self.lines.append(data.split(b"\r\n", 1)[0].decode("latin-1"))

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._listener.close()


def test_invalid_api_url_sends_no_action_lookup_elsewhere(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "origin")
    base = repo.commit({"src/parser/a.py": "x = 1\n", ACTIONS: ACTIONS_TEXT})
    head = repo.commit({"src/parser/a.py": "x = 2\n"}, parents=[base], branch="feature")
    merge = repo.merge(base, head)
    tasks = "setup:\n" + task("Sets up the toolchain.", jobs(ACTIONS, "external"))
    with FakeJev(tls=True, scores=0.0) as jev, RecordingProxy() as proxy:
        env = GitHubEnv(
            root=tmp_path / "runner",
            inputs={
                "tasks": tasks,
                "api-key": API_KEY_SENTINEL,
                "github-token": TOKEN_SENTINEL,
                "allow-external-context": "true",
                "api-base-url": jev.base_url,
                "timeout-ms": "20000",
            },
            sha=merge,
        )
        env.event = env.pull_request_event(base=base, head=head)
        # Plain http is not an acceptable API root (docs/reference.md, "API base URL" rules).
        env.extra["GITHUB_API_URL"] = "http://127.0.0.1:9/api"
        env.extra["HTTPS_PROXY"] = proxy.url
        env.extra["NO_PROXY"] = "127.0.0.1,localhost"
        env.extra["REQUESTS_CA_BUNDLE"] = ca_bundle(tmp_path / "ca.pem", jev)
        result = env.run("--remote", str(repo.path))
    # The spec keeps every GitHub REST call on the one configured root (docs/reference.md,
    # "Manual pull-request mode"): an unusable GITHUB_API_URL leaves the external actions unresolved
    # instead of asking another host.
    assert result.code == 0, result.stdout
    assert proxy.lines == []
    metadata = result.report["job_metadata"]["setup"]
    assert metadata["warnings"] == [
        c.WARN_ACTION_METADATA_MISSING + "acme/setup@v1",
        c.WARN_ACTION_METADATA_MISSING + "acme/gone@v1",
    ]
    assert result.report["tasks"]["setup"]["reasons"] == [c.REASON_METADATA_UNAVAILABLE]
    assert TOKEN_SENTINEL not in result.without_masks()
