"""Task metadata evidence (docs/reference.md, "Task evidence") resolved from real git
repositories."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from support.fakegithub import FakeGitHub, FakeResponse
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.core.evidence.resolve import (
    ActionFile,
    LookupFailure,
    MetadataFiles,
    build_evidence,
    normalise_path,
    resolve_metadata,
)
from jev_select.core.jsonutil import canonical_json, compact_json
from jev_select.core.models import JobRef, MetadataResult, Task, TaskEvidence, TaskTable
from jev_select.edges.github.api import GitHubApi

REPOSITORY = "octo/app"
WF = ".github/workflows/ci.yml"
EMPTY_SHA = "0" * 40

_COMPAT = json.loads(
    (Path(__file__).resolve().parents[2] / "compat" / "report-v5.schema.json").read_text()
)
_TASK_METADATA = Draft7Validator(
    {"$ref": "#/definitions/taskMetadata", "definitions": _COMPAT["definitions"]}
)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def source(file: str, commit: str, repository: str = REPOSITORY) -> str:
    return f"source:{repository}@{commit}:{file}"


# ---- harness ----------------------------------------------------------------------------------


class Fetcher:
    """A scripted ``fetch_action`` that records its calls."""

    def __init__(
        self, answers: Mapping[tuple[str, str, str, str], ActionFile | LookupFailure]
    ) -> None:
        self.answers = dict(answers)
        self.calls: list[tuple[str, str, str, str]] = []

    def __call__(self, owner: str, repo: str, subpath: str, ref: str) -> ActionFile | LookupFailure:
        self.calls.append((owner, repo, subpath, ref))
        return self.answers.get((owner, repo, subpath, ref), LookupFailure.MISSING)


def git_reader(repo: GitRepo, commit: str, reads: list[str]) -> Callable[[str], bytes | None]:
    """``git cat-file blob <commit>:<path>``, capped at 1 MiB as the caller does."""

    def read_file(path: str) -> bytes | None:
        reads.append(path)
        result = subprocess.run(
            ["git", "-C", str(repo.path), "cat-file", "blob", f"{commit}:{path}"],
            env=repo.env,
            capture_output=True,
            check=False,
        )
        if result.returncode != 0 or len(result.stdout) > c.METADATA_FILE_CAP:
            return None
        return result.stdout

    return read_file


class Harness:
    def __init__(self, tmp_path: Path) -> None:
        self.repo = GitRepo.init(tmp_path / "repo")
        self.commit = EMPTY_SHA
        self.reads: list[str] = []
        self.fetcher = Fetcher({})

    def files(self, files: Mapping[str, str | bytes | None]) -> str:
        changes: dict[str | bytes, str | bytes | None] = {}
        changes.update(files.items())
        self.commit = self.repo.commit(changes)
        return self.commit

    def resolve(self, *tasks: Task, commit: str | None = None) -> MetadataResult:
        at = commit or self.commit
        result = resolve_metadata(
            TaskTable(tuple(sorted(tasks, key=lambda task: task.id))),
            read_file=git_reader(self.repo, at, self.reads),
            fetch_action=self.fetcher,
            repository=REPOSITORY,
            commit=at,
        )
        for entry in result.evidence.values():
            check_invariants(entry)
        return result

    def one(self, task: Task, commit: str | None = None) -> TaskEvidence:
        return self.resolve(task, commit=commit).evidence[task.id]


def check_invariants(entry: TaskEvidence) -> None:
    metadata = entry.job_metadata
    assert metadata is not None
    assert list(_TASK_METADATA.iter_errors(metadata)) == []
    assert list(metadata)[:6] == [
        "incomplete",
        "missing",
        "provenance",
        "hashes",
        "warnings",
        "nativeDependencies",
    ]
    assert metadata["missing"] == metadata["warnings"]
    assert metadata["incomplete"] is entry.incomplete is bool(metadata["warnings"])
    assert ("incomplete" in entry.evidence) is entry.incomplete
    # Keys sorted recursively in code-unit order; arrays in order; serialisable.
    assert compact_json(entry.evidence) == canonical_json(entry.evidence)
    for item in json_list(metadata["provenance"]):
        assert item["kind"] in c.PROVENANCE_KINDS
        locator = item["locator"]
        key = f"source:{locator['repository']}@{locator['commit']}:{locator['file']}"
        assert json_object(metadata["hashes"])[key] == item["sha256"]
    assert len({canonical_json(item) for item in json_list(metadata["provenance"])}) == len(
        json_list(metadata["provenance"])
    )


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def task(
    *refs: tuple[str, str | None],
    context_files: tuple[str, ...] | None = None,
    task_id: str = "unit",
    description: str = "Runs the unit tests.",
) -> Task:
    return Task(
        id=task_id,
        description=description,
        jobs=tuple(JobRef(workflow, job) for workflow, job in refs) if refs else None,
        context_files=context_files,
    )


def json_object(value: object) -> dict[str, Any]:
    """An object of the evidence or the job metadata (typed ``object`` there), checked for
    indexing."""
    assert isinstance(value, dict)
    return value


def json_list(value: object) -> list[Any]:
    """An array of the evidence or the job metadata, checked for indexing."""
    assert isinstance(value, list)
    return value


def steps_only(entry: TaskEvidence) -> list[list[dict[str, Any]]]:
    return [job["steps"] for job in json_list(entry.evidence["jobs"])]


# ---- description only -------------------------------------------------------------------------


def test_description_only_task_reads_nothing(h: Harness) -> None:
    result = h.resolve(task(description="Builds the docs."))
    entry = result.evidence["unit"]
    assert entry.evidence == {
        "actions": [],
        "contextFiles": [],
        "description": "Builds the docs.",
        "jobs": [],
        "packageScripts": [],
    }
    assert entry.job_metadata == {
        "incomplete": False,
        "missing": [],
        "provenance": [],
        "hashes": {},
        "warnings": [],
        "nativeDependencies": [],
    }
    assert entry.incomplete is False
    assert result.hints == ()
    assert h.reads == []
    assert h.fetcher.calls == []


def test_empty_context_file_list_is_complete(h: Harness) -> None:
    entry = h.one(task(context_files=()))
    assert entry.evidence["contextFiles"] == []
    assert entry.incomplete is False


# ---- jobs -------------------------------------------------------------------------------------

SINGLE = """\
name: CI
on: pull_request
jobs:
  lint:
    name: Lint
    runs-on: ubuntu-latest
    if: github.event_name == 'pull_request'
    env:
      SECRET_ENV: dropped
    strategy:
      matrix:
        node: [20]
    outputs:
      x: y
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - name: Lint
        id: lint
        if: always()
        env:
          A: b
        run: echo lint
  other:
    runs-on: ubuntu-latest
    steps:
      - run: echo other
"""

CHECKOUT = ActionFile(
    "name: Checkout\ndescription: Check out a repository\n"
    "inputs:\n  fetch-depth:\n    description: Number of commits\n  token:\n"
    "    description: Token\n",
    "action.yml",
    "c" * 40,
)


def test_single_job_exact_evidence_and_job_metadata(h: Harness) -> None:
    commit = h.files({WF: SINGLE})
    h.fetcher.answers[("actions", "checkout", "", "v4")] = CHECKOUT
    result = h.resolve(task((WF, "lint")))
    entry = result.evidence["unit"]
    assert entry.evidence == {
        "actions": [
            {
                "description": "Check out a repository",
                "inputs": {"fetch-depth": "Number of commits"},
                "name": "Checkout",
                "uses": "actions/checkout@v4",
            }
        ],
        "contextFiles": [],
        "description": "Runs the unit tests.",
        "jobs": [
            {
                "id": "lint",
                "name": "Lint",
                "steps": [
                    {
                        "uses": "actions/checkout@v4",
                        "with": {"fetch-depth": 0},
                        "working_directory": ".",
                    },
                    {"name": "Lint", "run": "echo lint", "working_directory": "."},
                ],
                "workflow": WF,
            }
        ],
        "packageScripts": [],
    }
    workflow_hash = sha256(SINGLE)
    action_hash = sha256(CHECKOUT.text)

    def local(kind: str, location: dict[str, int]) -> dict[str, Any]:
        return {
            "kind": kind,
            "locator": {
                "repository": REPOSITORY,
                "commit": commit,
                "file": WF,
                "location": location,
            },
            "sha256": workflow_hash,
        }

    assert entry.job_metadata == {
        "incomplete": False,
        "missing": [],
        "provenance": [
            local("workflow-job", {"line": 4, "column": 3, "endLine": 25, "endColumn": 3}),
            local("workflow-step", {"line": 16, "column": 9, "endLine": 19, "endColumn": 7}),
            local("workflow-step", {"line": 19, "column": 9, "endLine": 25, "endColumn": 3}),
            {
                "kind": "action",
                "locator": {
                    "repository": "actions/checkout",
                    "commit": "c" * 40,
                    "file": "action.yml",
                    "location": {"line": 1, "column": 1, "endLine": 8, "endColumn": 1},
                },
                "sha256": action_hash,
                "resolvedSha": "c" * 40,
            },
        ],
        "hashes": {
            f"source:actions/checkout@{'c' * 40}:action.yml": action_hash,
            source(WF, commit): workflow_hash,
        },
        "warnings": [],
        "nativeDependencies": [],
        "workflow": WF,
        "job": "lint",
    }
    assert list(entry.job_metadata or {}) == [
        "incomplete",
        "missing",
        "provenance",
        "hashes",
        "warnings",
        "nativeDependencies",
        "workflow",
        "job",
    ]
    assert result.hints == (".",)
    assert h.fetcher.calls == [("actions", "checkout", "", "v4")]


ALL_JOBS = """\
on: push
jobs:
  build:
    name: Build
    steps:
      - run: make build
  test:
    needs: build
    steps:
      - run: make test
  e2e:
    needs: [test, build, 7]
    steps:
      - run: make e2e
"""


def test_all_jobs_in_document_order_and_deduplicated(h: Harness) -> None:
    h.files({WF: ALL_JOBS})
    entry = h.one(task((WF, "test"), (WF, None), (WF, None), (WF, "build")))
    assert [job["id"] for job in json_list(entry.evidence["jobs"])] == ["test", "build", "e2e"]
    assert json_list(entry.evidence["jobs"])[1] == {
        "id": "build",
        "name": "Build",
        "steps": [{"run": "make build", "working_directory": "."}],
        "workflow": WF,
    }
    metadata = json_object(entry.job_metadata or {})
    assert metadata["nativeDependencies"] == ["build", "test"]
    assert metadata["workflow"] == WF
    assert "job" not in metadata  # more than one reference
    assert [item["kind"] for item in metadata["provenance"]].count("workflow-job") == 3
    assert entry.incomplete is False
    assert h.reads == [WF]  # parsed once


def test_job_key_only_with_one_named_reference(h: Harness) -> None:
    h.files({WF: ALL_JOBS})
    metadata = json_object(h.one(task((WF, None))).job_metadata or {})
    assert metadata["workflow"] == WF
    assert "job" not in metadata
    assert [job["id"] for job in json_list(h.one(task((WF, None))).evidence["jobs"])] == [
        "build",
        "test",
        "e2e",
    ]


def test_workflow_read_once_across_tasks(h: Harness) -> None:
    h.files({WF: ALL_JOBS})
    result = h.resolve(
        task((WF, "build"), task_id="a"),
        task((WF, "test"), task_id="b"),
        task(("./" + WF, "e2e"), task_id="c"),
    )
    assert list(result.evidence) == ["a", "b", "c"]
    assert h.reads == [WF]
    assert json_list(result.evidence["c"].evidence["jobs"])[0]["workflow"] == "./" + WF
    assert (
        json_object(result.evidence["c"].job_metadata or {})["provenance"][0]["locator"]["file"]
        == WF
    )


def test_missing_workflow(h: Harness) -> None:
    h.files({"README.md": "hi\n"})
    entry = h.one(task((".github/workflows/gone.yml", "x"), (WF, None)))
    assert entry.incomplete is True
    assert entry.evidence == {
        "actions": [],
        "contextFiles": [],
        "description": "Runs the unit tests.",
        "incomplete": True,
        "jobs": [],
        "packageScripts": [],
    }
    assert entry.job_metadata == {
        "incomplete": True,
        "missing": ["workflow-missing:.github/workflows/gone.yml", f"workflow-missing:{WF}"],
        "provenance": [],
        "hashes": {},
        "warnings": ["workflow-missing:.github/workflows/gone.yml", f"workflow-missing:{WF}"],
        "nativeDependencies": [],
        "workflow": ".github/workflows/gone.yml",
    }


def test_missing_and_malformed_jobs(h: Harness) -> None:
    h.files(
        {
            WF: "on: push\njobs:\n  good:\n    steps: []\n  scalar: oops\n",
            ".github/workflows/nojobs.yml": "on: push\n",
            ".github/workflows/emptyjobs.yml": "on: push\njobs: {}\n",
            ".github/workflows/listjobs.yml": "on: push\njobs: [a, b]\n",
        }
    )
    entry = h.one(
        task(
            (WF, "absent"),
            (WF, "scalar"),
            (WF, None),
            (".github/workflows/nojobs.yml", None),
            (".github/workflows/emptyjobs.yml", None),
            (".github/workflows/listjobs.yml", "a"),
        )
    )
    assert (entry.job_metadata or {})["warnings"] == [
        f"job-missing:{WF}#absent",
        f"job-missing:{WF}#scalar",
        "workflow-jobs-missing:.github/workflows/nojobs.yml",
        "workflow-jobs-missing:.github/workflows/emptyjobs.yml",
        "job-missing:.github/workflows/listjobs.yml#a",
    ]
    assert entry.evidence["jobs"] == [
        {"id": "good", "steps": [], "workflow": WF},
    ]
    assert entry.evidence["incomplete"] is True


@pytest.mark.parametrize(
    "text",
    [
        "jobs:\n  a:\n    defaults: *d\n    steps: []\n",
        "jobs:\n  a: {}\n  a: {}\n",
        "- just\n- a list\n",
        "plain scalar\n",
        "",
        "jobs: [unclosed\n",
        "%YAML 1.2\n---\njobs: {}\n",
        "jobs: {}\n---\njobs: {}\n",
        "jobs: !!python/object:os.system {}\n",
    ],
    ids=[
        "undefined-alias",
        "duplicate",
        "list",
        "scalar",
        "empty",
        "syntax",
        "directive",
        "two-docs",
        "tag",
    ],
)
def test_invalid_workflow(h: Harness, text: str) -> None:
    h.files({WF: text})
    entry = h.one(task((WF, "a")))
    assert (entry.job_metadata or {})["warnings"] == [f"workflow-invalid:{WF}"]
    assert entry.evidence["jobs"] == []


def test_workflow_with_invalid_utf8_or_over_the_cap_is_missing(h: Harness) -> None:
    big = "on: push\n" + "#" * c.METADATA_FILE_CAP + "\n"
    h.files({WF: b"on: push\n# \xff\n", ".github/workflows/big.yml": big})
    entry = h.one(task((WF, "a"), (".github/workflows/big.yml", "a")))
    assert (entry.job_metadata or {})["warnings"] == [
        f"workflow-missing:{WF}",
        "workflow-missing:.github/workflows/big.yml",
    ]


DEFAULTS = """\
on: push
defaults:
  run:
    working-directory: web
    shell: bash
jobs:
  inherit:
    steps:
      - run: echo a
  job-level:
    defaults:
      run:
        working-directory: api
    steps:
      - run: echo b
      - run: echo c
        working-directory: ./tools
        shell: pwsh
      - uses: ./missing-action
  bad-values:
    defaults:
      run:
        working-directory: 5
        shell: [x]
    steps:
      - run: echo d
        working-directory: null
"""


def test_defaults_precedence_for_directory_and_shell(h: Harness) -> None:
    commit = h.files({WF: DEFAULTS})
    result = h.resolve(task((WF, None)))
    entry = result.evidence["unit"]
    assert steps_only(entry) == [
        [{"run": "echo a", "shell": "bash", "working_directory": "web"}],
        [
            {"run": "echo b", "shell": "bash", "working_directory": "api"},
            {"run": "echo c", "shell": "pwsh", "working_directory": "./tools"},
            {"shell": "bash", "uses": "./missing-action", "working_directory": "api"},
        ],
        [{"run": "echo d", "shell": "bash", "working_directory": "web"}],
    ]
    assert result.hints == ("web", "api", "./tools")
    kinds = [item["kind"] for item in json_object(entry.job_metadata or {})["provenance"]]
    assert kinds == [
        "workflow-job",
        "workflow-defaults",
        "workflow-step",
        "workflow-job",
        "job-defaults",
        "workflow-step",
        "workflow-step",
        "workflow-step",
        "workflow-job",
        "job-defaults",
        "workflow-step",
    ]
    defaults_item = json_object(entry.job_metadata or {})["provenance"][1]
    assert defaults_item["locator"] == {
        "repository": REPOSITORY,
        "commit": commit,
        "file": WF,
        "location": {"line": 2, "column": 1, "endLine": 6, "endColumn": 1},
    }
    assert (entry.job_metadata or {})["warnings"] == ["action-metadata-missing:./missing-action"]


def test_an_empty_working_directory_is_kept_as_written(h: Harness) -> None:
    workflow = (
        "defaults:\n  run:\n    working-directory: web\n"
        "jobs:\n  unit:\n    steps:\n"
        "      - run: echo a\n        working-directory: ''\n"
        "      - run: echo b\n"
    )
    h.files({WF: workflow})
    entry = h.resolve(task((WF, "unit"))).evidence["unit"]
    assert steps_only(entry) == [
        [
            {"run": "echo a", "working_directory": ""},
            {"run": "echo b", "working_directory": "web"},
        ]
    ]


def test_hints_across_tasks_in_first_seen_order(h: Harness) -> None:
    h.files(
        {
            WF: DEFAULTS,
            ".github/workflows/other.yml": (
                "on: push\njobs:\n  x:\n    steps:\n      - run: npm run build\n"
                "        working-directory: packages/ui\n      - run: echo\n"
            ),
            "packages/ui/package.json": '{"scripts": {"build": "vite build"}}',
        }
    )
    result = h.resolve(
        task((".github/workflows/other.yml", "x"), task_id="a"),
        task((WF, "job-level"), task_id="b"),
        task(task_id="c"),
    )
    assert result.hints == ("packages/ui", ".", "web", "api", "./tools")


# ---- actions ----------------------------------------------------------------------------------

LOCAL_ACTIONS = """\
on: push
jobs:
  a:
    steps:
      - uses: ./.github/actions/setup
        with:
          node-version: 18
          cache: npm
          no-description: x
          undeclared: y
      - uses: ./.github/actions/plain
      - uses: ./.github/actions/setup
        with:
          node-version: 20
          token: t
      - uses: ./.github/actions/yaml-only
        with: not-a-map
      - uses: ./.github/actions/absent
      - uses: ./.github/actions/broken
      - uses: ./.github/../escape
      - uses: ./
      - uses: ./.github/actions/setup/
      - uses: ./${{ matrix.action }}
"""

SETUP_ACTION = """\
name: Setup
description: Installs the toolchain
inputs:
  node-version:
    description: Node.js version
  cache:
    description: Package manager cache
  token:
    description: Token used for downloads
  no-description:
    default: x
  numeric:
    description: 5
runs:
  using: composite
  steps:
    - run: npm run secret-build
      shell: bash
"""


def test_local_actions(h: Harness) -> None:
    commit = h.files(
        {
            ".github/workflows/actions.yml": LOCAL_ACTIONS,
            ".github/actions/setup/action.yml": SETUP_ACTION,
            ".github/actions/plain/action.yml": "name: 7\ndescription: Plain\n",
            ".github/actions/yaml-only/action.yaml": "name: Yaml only\ninputs: []\n",
            ".github/actions/broken/action.yml": "name: [unclosed\n",
            ".github/actions/broken/action.yaml": "name: Never read\n",
            "package.json": '{"scripts": {"secret-build": "x"}}',
        }
    )
    entry = h.one(task((".github/workflows/actions.yml", "a")))
    assert entry.evidence["actions"] == [
        {
            "description": "Installs the toolchain",
            "inputs": {
                "cache": "Package manager cache",
                "node-version": "Node.js version",
                "token": "Token used for downloads",
            },
            "name": "Setup",
            "uses": "./.github/actions/setup",
        },
        {"description": "Plain", "uses": "./.github/actions/plain"},
        {"name": "Yaml only", "uses": "./.github/actions/yaml-only"},
    ]
    metadata = json_object(entry.job_metadata or {})
    assert metadata["warnings"] == [
        "action-metadata-missing:./.github/actions/absent",
        "action-metadata-invalid:./.github/actions/broken",
        "action-metadata-unavailable:./.github/../escape",
        "action-metadata-unavailable:./",
        "action-metadata-unavailable:./.github/actions/setup/",
        "action-metadata-unavailable:./${{ matrix.action }}",
    ]
    # A composite action's commands are read like the job's own (the script is the caller's).
    assert entry.evidence["packageScripts"] == [
        {
            "command": "x",
            "manifest": "package.json",
            "name": "secret-build",
            "workingDirectory": ".",
        }
    ]
    action_items = [item for item in metadata["provenance"] if item["kind"] == "action"]
    assert [item["locator"]["file"] for item in action_items] == [
        ".github/actions/setup/action.yml",
        ".github/actions/plain/action.yml",
        ".github/actions/yaml-only/action.yaml",
    ]
    assert action_items[0] == {
        "kind": "action",
        "locator": {
            "repository": REPOSITORY,
            "commit": commit,
            "file": ".github/actions/setup/action.yml",
            "location": {"line": 1, "column": 1, "endLine": 19, "endColumn": 1},
        },
        "sha256": sha256(SETUP_ACTION),
    }
    assert metadata["hashes"][source(".github/actions/setup/action.yml", commit)] == sha256(
        SETUP_ACTION
    )
    assert ".github/actions/broken/action.yaml" not in h.reads
    assert h.fetcher.calls == []


def test_local_action_without_described_inputs_has_no_inputs_key(h: Harness) -> None:
    h.files(
        {
            WF: (
                "on: push\njobs:\n  a:\n    steps:\n      - uses: ./act\n        with:\n"
                "          x: 1\n      - uses: ./act\n"
            ),
            "act/action.yml": "name: Act\ninputs:\n  x:\n    required: true\n",
        }
    )
    entry = h.one(task((WF, "a")))
    assert entry.evidence["actions"] == [{"name": "Act", "uses": "./act"}]
    assert entry.incomplete is False


def test_external_and_unresolvable_actions(h: Harness) -> None:
    h.files(
        {
            WF: (
                "on: push\njobs:\n  a:\n    steps:\n"
                "      - uses: acme/tools/lint@v2\n        with: {level: high, 1: one}\n"
                "      - uses: docker://alpine:3\n"
                "      - uses: actions/checkout\n"
                "      - uses: actions/checkout@\n"
                "      - uses: single@v1\n"
                "      - uses: acme/gone@v1\n"
                "      - uses: acme/bad-yaml@v1\n"
                "      - uses: acme/said-invalid@v1\n"
                "      - uses: acme/tools/../x@v1\n"
                "      - uses: acme/tools@${{ inputs.ref }}\n"
                "      - uses: acme/tools/lint@v2\n        with: {level: low}\n"
            )
        }
    )
    lint = ActionFile(
        "\ufeffname: Lint\ninputs:\n  level:\n    description: Strictness\n  '1':\n"
        "    description: One\n",
        "lint/action.yaml",
        "D" * 40,
    )
    h.fetcher.answers.update(
        {
            ("acme", "tools", "lint", "v2"): lint,
            ("acme", "bad-yaml", "", "v1"): ActionFile("a: *b\n", "action.yml", "e" * 40),
            ("acme", "said-invalid", "", "v1"): LookupFailure.INVALID,
        }
    )
    entry = h.one(task((WF, "a")))
    assert entry.evidence["actions"] == [
        {
            "inputs": {"1": "One", "level": "Strictness"},
            "name": "Lint",
            "uses": "acme/tools/lint@v2",
        }
    ]
    assert steps_only(entry)[0][0]["with"] == {"1": "one", "level": "high"}
    metadata = json_object(entry.job_metadata or {})
    assert metadata["warnings"] == [
        "action-metadata-unavailable:docker://alpine:3",
        "action-metadata-unavailable:actions/checkout",
        "action-metadata-unavailable:actions/checkout@",
        "action-metadata-unavailable:single@v1",
        "action-metadata-missing:acme/gone@v1",
        "action-metadata-invalid:acme/bad-yaml@v1",
        "action-metadata-invalid:acme/said-invalid@v1",
        "action-metadata-unavailable:acme/tools/../x@v1",
        "action-metadata-unavailable:acme/tools@${{ inputs.ref }}",
    ]
    text = lint.text.removeprefix("\ufeff")
    assert metadata["provenance"][-1] == {
        "kind": "action",
        "locator": {
            "repository": "acme/tools",
            "commit": "d" * 40,
            "file": "lint/action.yaml",
            "location": {"line": 1, "column": 1, "endLine": 7, "endColumn": 1},
        },
        "sha256": sha256(text),
        "resolvedSha": "d" * 40,
    }
    assert metadata["hashes"][f"source:acme/tools@{'d' * 40}:lint/action.yaml"] == sha256(text)
    assert h.fetcher.calls == [
        ("acme", "tools", "lint", "v2"),
        ("acme", "gone", "", "v1"),
        ("acme", "bad-yaml", "", "v1"),
        ("acme", "said-invalid", "", "v1"),
    ]


EXTERNAL = """\
on: push
jobs:
  a:
    steps:
      - uses: acme/setup@v1
        with:
          version: 3
      - uses: acme/gone@v1
      - uses: acme/moved@v1
      - uses: acme/huge/sub@v1
"""


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def test_external_actions_through_the_github_api(h: Harness, fake: FakeGitHub) -> None:
    h.files({WF: EXTERNAL})
    setup_text = "name: Setup\ninputs:\n  version:\n    description: Tool version\n"
    sha = fake.add_action("acme/setup", "v1", {"action.yml": setup_text})
    fake.script("/repos/acme/moved/commits/v1", FakeResponse.redirect(fake.url + "/elsewhere"))
    huge_sha = fake.add_action("acme/huge", "v1", {})
    fake.script(
        f"/repos/acme/huge/contents/sub/action.yml?ref={huge_sha}",
        FakeResponse.oversized(c.GITHUB_BODY_CAP + 1),
    )
    api = GitHubApi(fake.url, "ghs_token")
    h.fetcher = Fetcher({})
    result = resolve_metadata(
        TaskTable((task((WF, "a"), task_id="a"), task((WF, "a"), task_id="b"))),
        read_file=git_reader(h.repo, h.commit, h.reads),
        fetch_action=api.fetch_action,
        repository=REPOSITORY,
        commit=h.commit,
    )
    for entry in result.evidence.values():
        check_invariants(entry)
        assert entry.evidence["actions"] == [
            {"inputs": {"version": "Tool version"}, "name": "Setup", "uses": "acme/setup@v1"}
        ]
        metadata = json_object(entry.job_metadata or {})
        assert metadata["warnings"] == [
            "action-metadata-missing:acme/gone@v1",
            "action-metadata-missing:acme/moved@v1",
            "action-metadata-missing:acme/huge/sub@v1",
        ]
        action = next(item for item in metadata["provenance"] if item["kind"] == "action")
        assert action["resolvedSha"] == sha
        assert action["locator"]["repository"] == "acme/setup"
        assert action["locator"]["commit"] == sha
    # Every action was looked up once for both tasks; the redirect was never followed.
    assert fake.paths() == [
        "/repos/acme/setup/commits/v1",
        f"/repos/acme/setup/contents/action.yml?ref={sha}",
        "/repos/acme/gone/commits/v1",
        "/repos/acme/moved/commits/v1",
        "/repos/acme/huge/commits/v1",
        f"/repos/acme/huge/contents/sub/action.yml?ref={huge_sha}",
        f"/repos/acme/huge/contents/sub/action.yaml?ref={huge_sha}",
    ]


def test_reusable_workflow_job(h: Harness) -> None:
    h.files(
        {
            WF: (
                "on: push\njobs:\n  deploy:\n    name: Deploy\n    needs: [build]\n"
                "    uses: acme/infra/.github/workflows/deploy.yml@v3\n"
                "    with:\n      env: prod\n    secrets: inherit\n"
            )
        }
    )
    entry = h.one(task((WF, "deploy")))
    assert entry.evidence["jobs"] == [
        {
            "id": "deploy",
            "name": "Deploy",
            "uses": "acme/infra/.github/workflows/deploy.yml@v3",
            "with": {"env": "prod"},
            "workflow": WF,
        }
    ]
    metadata = json_object(entry.job_metadata or {})
    assert metadata["warnings"] == [
        "reusable-workflow-unresolved:acme/infra/.github/workflows/deploy.yml@v3"
    ]
    assert metadata["nativeDependencies"] == ["build"]
    assert h.fetcher.calls == []


def test_with_values_are_copied_as_parsed_and_serialisable(h: Harness) -> None:
    h.files(
        {
            WF: (
                "on: push\njobs:\n  a:\n    steps:\n      - uses: ./act\n        with:\n"
                "          1: int key\n          true: bool key\n          null: null key\n"
                "          1.5: float key\n          big: .inf\n          list: [1, 0x10, 0o7]\n"
                "          date: 2024-01-01\n          yes: no\n"
                "      - name: 5\n        run: 7\n"
            ),
            "act/action.yml": "name: Act\n",
        }
    )
    entry = h.one(task((WF, "a")))
    step, numeric = steps_only(entry)[0]
    assert step["with"] == {
        "": "null key",
        "1": "int key",
        "1.5": "float key",
        "big": float("inf"),
        "date": "2024-01-01",
        "list": [1, 16, 7],
        "true": "bool key",
        "yes": "no",
    }
    assert numeric == {"name": 5, "run": 7, "working_directory": "."}
    assert '"big":null' in compact_json(entry.evidence)


# ---- package scripts --------------------------------------------------------------------------

SCRIPTS_MANIFEST = json.dumps(
    {
        "name": "web",
        "scripts": {
            "build": "npm run compile && yarn lint",
            "compile": "tsc -p .",
            "lint": "eslint . && pnpm run lint:css",
            "lint:css": "stylelint '**/*.css'",
            "test": "bun run unit",
            "unit": "vitest run",
            "e2e": "playwright test",
        },
    },
    indent=2,
)


def scripts_workflow(run: str, directory: str | None = None) -> str:
    lines = ["on: push", "jobs:", "  a:", "    steps:", f"      - run: {json.dumps(run)}"]
    if directory is not None:
        lines.append(f"        working-directory: {json.dumps(directory)}")
    return "\n".join(lines) + "\n"


def test_package_scripts_with_nesting(h: Harness) -> None:
    commit = h.files(
        {
            WF: scripts_workflow(
                "npm ci\nnpm run build\npnpm test\nyarn exec tsc\nyarn e2e", "./web"
            ),
            "web/package.json": SCRIPTS_MANIFEST,
        }
    )
    result = h.resolve(task((WF, "a")))
    entry = result.evidence["unit"]
    manifest = "web/package.json"
    assert entry.evidence["packageScripts"] == [
        {"command": command, "manifest": manifest, "name": name, "workingDirectory": "./web"}
        for name, command in [
            ("build", "npm run compile && yarn lint"),
            ("compile", "tsc -p ."),
            ("lint", "eslint . && pnpm run lint:css"),
            ("lint:css", "stylelint '**/*.css'"),
            ("test", "bun run unit"),
            ("unit", "vitest run"),
            ("e2e", "playwright test"),
        ]
    ]
    assert entry.incomplete is False
    metadata = json_object(entry.job_metadata or {})
    scripts = [item for item in metadata["provenance"] if item["kind"] == "package-script"]
    assert len(scripts) == 7
    assert scripts[0] == {
        "kind": "package-script",
        "locator": {
            "repository": REPOSITORY,
            "commit": commit,
            "file": manifest,
            "location": {"line": 4, "column": 5, "endLine": 4, "endColumn": 12},
        },
        "sha256": sha256(SCRIPTS_MANIFEST),
    }
    assert metadata["hashes"][source(manifest, commit)] == sha256(SCRIPTS_MANIFEST)
    assert result.hints == ("./web",)
    assert h.reads.count(manifest) == 1


def test_root_package_scripts_add_no_hint(h: Harness) -> None:
    h.files({WF: scripts_workflow("npm test"), "package.json": SCRIPTS_MANIFEST})
    result = h.resolve(task((WF, "a")))
    assert [s["name"] for s in json_list(result.evidence["unit"].evidence["packageScripts"])] == [
        "test",
        "unit",
    ]
    assert (
        json_list(result.evidence["unit"].evidence["packageScripts"])[0]["manifest"]
        == "package.json"
    )
    assert result.hints == (".",)


def test_script_cycle_is_visited_once(h: Harness) -> None:
    manifest = json.dumps({"scripts": {"a": "npm run b", "b": "npm run a && npm run b"}})
    h.files({WF: scripts_workflow("npm run a; npm run a"), "package.json": manifest})
    entry = h.one(task((WF, "a")))
    assert [s["name"] for s in json_list(entry.evidence["packageScripts"])] == ["a", "b"]
    assert entry.incomplete is False


def test_script_depth_limit(h: Harness) -> None:
    chain = {f"s{n}": f"npm run s{n + 1}" for n in range(1, 20)}
    h.files({WF: scripts_workflow("npm run s1"), "package.json": json.dumps({"scripts": chain})})
    entry = h.one(task((WF, "a")))
    names = [s["name"] for s in json_list(entry.evidence["packageScripts"])]
    assert names == [f"s{n}" for n in range(1, c.PACKAGE_SCRIPT_MAX_DEPTH + 1)]
    assert (entry.job_metadata or {})["warnings"] == ["package-script-depth-limit:s17"]


_WEB_MISSING = "package-script-missing:web/package.json#build"
_ROOT_BUILD = ["build", "compile", "lint", "lint:css"]


@pytest.mark.parametrize(
    ("run", "names", "gaps"),
    [
        # The directory a command moves to is where its package is looked up: the nearest
        # package.json upward, or exactly the directory npm's --prefix names.
        ("cd web && npm run build", _ROOT_BUILD, []),
        ("pushd web; npm run build; popd", _ROOT_BUILD, []),
        ("(cd web) && npm test", ["test", "unit"], []),
        ("npm --prefix web run build", [], [_WEB_MISSING]),
        ("npm run build --prefix=web", [], [_WEB_MISSING]),
        ("pnpm --dir web run build", _ROOT_BUILD, []),
        ("pnpm -C web run build", _ROOT_BUILD, []),
        ("cd web\nnpm ci", [], []),
        # What the repository cannot decide stays the execution-context gap.
        ('cd "$WEB" && npm run build', [], [c.WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED]),
        ("npm run build --workspace web", [], [c.WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED]),
        ("npm run build --workspaces", [], [c.WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED]),
        ("pnpm --filter ui build", [], [c.WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED]),
        ("pnpm --filter $PKG build", [], [c.WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED]),
    ],
)
def test_directory_forms(h: Harness, run: str, names: list[str], gaps: list[str]) -> None:
    h.files({WF: scripts_workflow(run), "package.json": SCRIPTS_MANIFEST})
    entry = h.one(task((WF, "a")))
    assert [s["name"] for s in json_list(entry.evidence["packageScripts"])] == names
    assert (entry.job_metadata or {})["warnings"] == gaps


def test_directory_change_in_a_nested_script(h: Harness) -> None:
    manifest = json.dumps({"scripts": {"build": 'cd "$OUT" && npm run x'}})
    h.files({WF: scripts_workflow("npm run build"), "package.json": manifest})
    entry = h.one(task((WF, "a")))
    assert [s["name"] for s in json_list(entry.evidence["packageScripts"])] == ["build"]
    assert (entry.job_metadata or {})["warnings"] == [c.WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED]


def test_script_gaps(h: Harness) -> None:
    h.files(
        {
            ".github/workflows/gaps.yml": (
                "on: push\njobs:\n  a:\n    steps:\n"
                "      - run: npm run build\n        working-directory: missing\n"
                "      - run: npm run build\n        working-directory: bad-json\n"
                "      - run: npm run build\n        working-directory: array\n"
                "      - run: npm run build\n        working-directory: dup\n"
                "      - run: npm run nope && npm run build\n"
                "      - run: npm run build\n        working-directory: ${{ matrix.dir }}\n"
                "      - run: npm run build\n        working-directory: a/../b\n"
                "      - run: npm run build\n        working-directory: scripts-list\n"
                "      - run: echo no scripts here\n        working-directory: ${{ x }}\n"
            ),
            "package.json": json.dumps({"scripts": {"build": 5}}),
            "bad-json/package.json": "{not json",
            "array/package.json": "[]",
            "dup/package.json": '{"scripts": {}, "scripts": {"build": "x"}}',
            "scripts-list/package.json": '{"scripts": ["build"]}',
        }
    )
    entry = h.one(task((".github/workflows/gaps.yml", "a")))
    assert entry.evidence["packageScripts"] == []
    assert (entry.job_metadata or {})["warnings"] == [
        # A directory without a package.json runs the nearest one upward, the root's.
        "package-script-absent:package.json#build",
        "package-manifest-invalid:bad-json/package.json",
        "package-manifest-invalid:array/package.json",
        "package-manifest-invalid:dup/package.json",
        "package-script-absent:package.json#nope",
        "package-script-dynamic-directory:${{ matrix.dir }}",
        "package-script-dynamic-directory:a/../b",
        "package-script-absent:scripts-list/package.json#build",
    ]


def test_manifest_with_bom_is_read(h: Harness) -> None:
    manifest = '{"scripts": {"build": "vite"}}'
    commit = h.files({WF: scripts_workflow("npm run build"), "package.json": "\ufeff" + manifest})
    entry = h.one(task((WF, "a")))
    assert json_list(entry.evidence["packageScripts"])[0]["command"] == "vite"
    assert json_object(entry.job_metadata or {})["hashes"][
        source("package.json", commit)
    ] == sha256(manifest)


# ---- scanner and normalisation units ----------------------------------------------------------


_ROOT_SCRIPTS = ("build", "test", "dev", "build:prod", "a", "b", "cc", "d", "_private")
_CONTEXT = c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning()


def _scripts_of_command(command: str) -> tuple[list[str], list[str]]:
    """The ``manifest#name`` scripts and the gaps one step command gives, read in memory."""
    workflow = (
        "on: pull_request\njobs:\n  a:\n    runs-on: x\n    steps:\n"
        f"      - run: {json.dumps(command)}\n"
    )
    files = {
        WF: workflow,
        "package.json": json.dumps({"scripts": {name: "true" for name in _ROOT_SCRIPTS}}),
        "web/package.json": json.dumps({"scripts": {"x": "true"}}),
    }
    result = resolve_metadata(
        TaskTable((task((WF, "a")),)),
        read_file=lambda path: files[path].encode() if path in files else None,
        fetch_action=lambda *_: LookupFailure.MISSING,
        repository=REPOSITORY,
        commit=EMPTY_SHA,
        list_paths=lambda: tuple(files),
    )
    entry = result.evidence["unit"]
    scripts = [
        f"{item['manifest']}#{item['name']}" for item in json_list(entry.evidence["packageScripts"])
    ]
    return scripts, [str(gap) for gap in json_list(json_object(entry.job_metadata)["warnings"])]


@pytest.mark.parametrize(
    ("command", "scripts", "gaps"),
    [
        ("npm run build", ["package.json#build"], []),
        ("npm test", ["package.json#test"], []),
        ("pnpm exec lint", [], []),
        ("yarn build:prod", ["package.json#build:prod"], []),
        ("bun run dev", ["package.json#dev"], []),
        ("bun test", [], []),
        ("bun install", [], []),
        # Only spaces, tabs and line breaks separate words in the shell.
        ("npm\trun build", ["package.json#build"], []),
        ("npm\trun\u00a0build", [], []),
        ("npm install && npm ci && npm add x && npm publish", [], []),
        ("npm version patch && npm pack && npm init", [], []),
        ("pnpm dlx create-app && npm config set x && pnpm update && npm remove y", [], []),
        ("npm exec", [], []),
        ("npm run ./script.js", [], []),
        ("npm run build.js", [], []),
        ("npm run scripts/x", [], []),
        ("npm run -- build", [], []),
        ("npm --version", [], []),
        ("npmx run build", [], []),
        ("xnpm run build", [], []),
        ("my-npm run build", [], []),
        (
            "npm run a && yarn b; pnpm cc | bun run d",
            ["package.json#a", "package.json#b", "package.json#cc", "package.json#d"],
            [],
        ),
        ("echo npm", [], []),
        ('echo "the pnpm CLI"', [], []),
        ("npm run _private", ["package.json#_private"], []),
        ("abcd web && npm run build", ["package.json#build"], []),
        ("echo --prefixed && npm run build", ["package.json#build"], []),
        ("make -C web && echo", [], []),
        # ``-C`` of another program moves nothing; a ``cd`` moves the commands after it.
        ("make -C web && npm run build", ["package.json#build"], []),
        ("cd web && make", [], []),
        ("cd web && bun run x", ["web/package.json#x"], []),
        ("npm run build;cd web", ["package.json#build"], []),
        ("npm run build|cd web && npm run build", ["package.json#build"], []),
        ('cd "$DIR" && npm run build', [], [_CONTEXT]),
        (
            "(cd web && npm run x) && npm run build",
            ["web/package.json#x", "package.json#build"],
            [],
        ),
        ("npm run build --workspace=a", [], [_CONTEXT]),
        ("npm run build -w", [], [_CONTEXT]),
        ("npm run build abcd x", ["package.json#build"], []),
        ("npm run build; cd", ["package.json#build"], []),
        ("npm run nope", [], ["package-script-absent:package.json#nope"]),
        ("find . -name '*.ts' | xargs -n1 npm run build", ["package.json#build"], []),
        ("yarn nope", [], []),
    ],
)
def test_scripts_of_one_command(command: str, scripts: list[str], gaps: list[str]) -> None:
    assert _scripts_of_command(command) == (scripts, gaps)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a/b.txt", "a/b.txt"),
        ("./a/b.txt", "a/b.txt"),
        (".", "."),
        ("a/./b", "a/./b"),
        (".github/x", ".github/x"),
        ("././a", "./a"),
        ("./", None),
        ("", None),
        ("/etc/passwd", None),
        ("a//b", None),
        ("a/", None),
        ("a/../b", None),
        ("..", None),
        ("a\\b", None),
        ("a\0b", None),
    ],
)
def test_normalise_path(text: str, expected: str | None) -> None:
    assert normalise_path(text) == expected


# ---- context files ----------------------------------------------------------------------------


def test_context_files(h: Harness) -> None:
    big = "x" * (c.METADATA_FILE_CAP + 1)
    commit = h.files(
        {
            "docs/setup.md": "# Setup\nRun it.\n",
            "docs/bom.md": "\ufeffWith BOM\n",
            "assets/logo.png": b"\x89PNG\r\n\x1a\n\xff\xfe",
            "big.txt": big,
            "exact.txt": "y" * (c.METADATA_FILE_CAP - 1) + "\n",
            "later.txt": None,
        }
    )
    h.repo.commit({"later.txt": "added later\n"})
    entry = h.one(
        task(
            context_files=(
                "./docs/setup.md",
                "docs/bom.md",
                "assets/logo.png",
                "big.txt",
                "exact.txt",
                "${{ github.workspace }}/x.txt",
                "a//b.txt",
                "docs/./setup.md",
                "later.txt",
            )
        ),
        commit=commit,
    )
    assert entry.evidence["contextFiles"] == [
        {"content": "# Setup\nRun it.\n", "path": "./docs/setup.md"},
        {"content": "With BOM\n", "path": "docs/bom.md"},
        {"content": "y" * (c.METADATA_FILE_CAP - 1) + "\n", "path": "exact.txt"},
    ]
    metadata = json_object(entry.job_metadata or {})
    assert metadata["warnings"] == [
        "context-file-missing:assets/logo.png",
        "context-file-missing:big.txt",
        "context-file-dynamic:${{ github.workspace }}/x.txt",
        "context-file-dynamic:a//b.txt",
        "context-file-missing:docs/./setup.md",
        "context-file-missing:later.txt",
    ]
    assert metadata["provenance"][:2] == [
        {
            "kind": "context-file",
            "locator": {
                "repository": REPOSITORY,
                "commit": commit,
                "file": "docs/setup.md",
                "location": {"line": 1, "column": 1, "endLine": 3, "endColumn": 1},
            },
            "sha256": sha256("# Setup\nRun it.\n"),
        },
        {
            "kind": "context-file",
            "locator": {
                "repository": REPOSITORY,
                "commit": commit,
                "file": "docs/bom.md",
                "location": {"line": 1, "column": 1, "endLine": 2, "endColumn": 1},
            },
            "sha256": sha256("With BOM\n"),
        },
    ]
    assert metadata["hashes"][source("docs/bom.md", commit)] == sha256("With BOM\n")
    assert "workflow" not in metadata
    assert "docs/./setup.md" not in h.reads
    assert entry.evidence["incomplete"] is True


def test_context_file_present_at_a_later_commit_only(h: Harness) -> None:
    base = h.files({"README.md": "base\n"})
    h.repo.commit({"notes.md": "later\n"})
    entry = h.one(task(context_files=("notes.md",)), commit=base)
    assert (entry.job_metadata or {})["warnings"] == ["context-file-missing:notes.md"]
    assert entry.evidence["contextFiles"] == []


# ---- the per-task builder ---------------------------------------------------------------------


def test_build_evidence_shares_caches_through_metadata_files(h: Harness) -> None:
    h.files({WF: ALL_JOBS, "docs/a.md": "A\n"})
    files = MetadataFiles(
        git_reader(h.repo, h.commit, h.reads),
        h.fetcher,
        repository=REPOSITORY,
        commit=h.commit,
    )
    first = build_evidence(task((WF, "build"), context_files=("docs/a.md",)), files)
    second = build_evidence(task((WF, "e2e"), context_files=("docs/a.md",)), files)
    check_invariants(first.evidence)
    check_invariants(second.evidence)
    assert first.hints == second.hints == (".",)
    assert second.evidence.evidence["contextFiles"] == [{"content": "A\n", "path": "docs/a.md"}]
    assert (second.evidence.job_metadata or {})["nativeDependencies"] == ["build", "test"]
    assert h.reads == [WF, "docs/a.md"]


def test_failing_reader_and_fetcher_count_as_missing() -> None:
    def read_file(path: str) -> bytes | None:
        raise OSError("boom")

    def fetch_action(owner: str, repo: str, subpath: str, ref: str) -> ActionFile | LookupFailure:
        raise RuntimeError("boom")

    result = resolve_metadata(
        TaskTable((task((WF, "a"), context_files=("x.md",)),)),
        read_file=read_file,
        fetch_action=fetch_action,
        repository=REPOSITORY,
        commit="a" * 40,
    )
    assert (result.evidence["unit"].job_metadata or {})["warnings"] == [
        f"workflow-missing:{WF}",
        "context-file-missing:x.md",
    ]


def test_a_fetcher_answering_the_documented_strings_still_works() -> None:
    """docs/library.md names ``"missing"`` and ``"invalid"``: the enum compares equal to them."""
    workflow = (
        "jobs:\n  a:\n    steps:\n"
        "      - uses: acme/said-invalid@v1\n      - uses: acme/said-missing@v1\n"
    )
    answers: dict[str, Any] = {"said-invalid": "invalid", "said-missing": "missing"}

    def fetch_action(owner: str, repo: str, subpath: str, ref: str) -> Any:
        return answers[repo]

    result = resolve_metadata(
        TaskTable((task((WF, "a")),)),
        read_file=lambda path: workflow.encode("utf-8") if path == WF else None,
        fetch_action=fetch_action,
        repository=REPOSITORY,
        commit="a" * 40,
    )
    metadata = json_object(next(iter(result.evidence.values())).job_metadata or {})
    assert metadata["warnings"] == [
        c.GAP_ACTION_METADATA_INVALID.warning("acme/said-invalid@v1"),
        c.GAP_ACTION_METADATA_MISSING.warning("acme/said-missing@v1"),
    ]
    assert [(failure, str(failure)) for failure in LookupFailure] == [
        (LookupFailure.MISSING, "missing"),
        (LookupFailure.INVALID, "invalid"),
    ]
