"""What the evidence carries for workspaces, matrices, inputs and composite actions
(docs/reference.md, "Package scripts", "Expressions in commands", "Composite actions")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from jev_select import contracts as c
from jev_select.core.evidence.resolve import ActionFile, LookupFailure, resolve_metadata
from jev_select.core.models import JobRef, MetadataResult, Task, TaskTable

WF = ".github/workflows/ci.yml"
REMOTE_SHA = "a" * 40


def manifest(name: str | None, scripts: Mapping[str, str], **extra: object) -> str:
    data: dict[str, object] = {"scripts": dict(scripts), **extra}
    if name is not None:
        data["name"] = name
    return json.dumps(data, indent=2)


def pnpm_workspace() -> dict[str, str]:
    """A pnpm monorepo shaped like the ones CI meets: a root of orchestration scripts, packages
    that depend on each other, and playgrounds."""
    return {
        "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  - 'playgrounds/*'\n",
        "package.json": manifest(
            "monorepo",
            {
                "lint": "eslint .",
                "check": "pnpm -r check",
                "test:kit:unit": "pnpm --filter @acme/kit test:unit",
                "test:kit:dev": "pnpm --filter @acme/kit test:dev",
                "test:kit:build": "pnpm --filter @acme/kit test:build",
                "sync-all": "pnpm -r --filter=./packages/* sync",
            },
        ),
        "packages/kit/package.json": manifest(
            "@acme/kit",
            {
                "check": "tsc",
                "test:unit": "vitest",
                "test:dev": "playwright test",
                "test:build": "playwright test --build",
                "prepublishOnly": "node scripts/generate.js",
                "build": "rollup -c",
                "sync": "node sync.js",
            },
        ),
        "packages/adapter-node/package.json": manifest(
            "@acme/adapter-node",
            {"check": "tsc --noEmit", "build": "rollup -c", "sync": "node sync.js"},
            dependencies={"@acme/kit": "workspace:*"},
        ),
        "packages/create/package.json": manifest("create-acme", {"build": "node build.js"}),
        "playgrounds/basic/package.json": manifest(
            "playground-basic", {"dev": "vite"}, devDependencies={"@acme/adapter-node": "*"}
        ),
    }


class Repository:
    """An in-memory repository at one commit with scripted lookups of other repositories."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = dict(files)
        self.actions: dict[tuple[str, str, str, str], ActionFile] = {}

    def read(self, path: str) -> bytes | None:
        text = self.files.get(path)
        return None if text is None else text.encode("utf-8")

    def fetch(self, owner: str, repo: str, subpath: str, ref: str) -> ActionFile | LookupFailure:
        return self.actions.get((owner, repo, subpath, ref), LookupFailure.MISSING)

    def resolve(self, *tasks: Task, listing: bool = True) -> MetadataResult:
        return resolve_metadata(
            TaskTable(tuple(sorted(tasks, key=lambda task: task.id))),
            read_file=self.read,
            fetch_action=self.fetch,
            fetch_workflow=self.fetch,
            repository="acme/monorepo",
            commit="c" * 40,
            list_paths=(lambda: tuple(self.files)) if listing else None,
        )


def task(job: str | None = None, workflow: str = WF) -> Task:
    return Task(id="t", description="the task", jobs=(JobRef(workflow=workflow, job=job),))


def workflow(*steps: str, matrix: str = "") -> str:
    body = "".join(f"      - {step}\n" for step in steps)
    strategy = f"    strategy:\n      matrix:\n{matrix}" if matrix else ""
    return (
        f"on: pull_request\njobs:\n  test:\n    runs-on: ubuntu-latest\n{strategy}"
        f"    steps:\n{body}"
    )


def evidence_of(result: MetadataResult) -> dict[str, Any]:
    """The task's evidence as the JSON the request carries."""
    evidence = result.evidence["t"].evidence
    assert evidence is not None
    loaded: dict[str, Any] = json.loads(json.dumps(evidence))
    return loaded


def scripts_of(result: MetadataResult) -> list[tuple[str, str]]:
    evidence = evidence_of(result)
    entries = evidence["packageScripts"]
    assert isinstance(entries, list)
    return [(entry["manifest"], entry["name"]) for entry in entries]


def gaps_of(result: MetadataResult) -> list[str]:
    metadata = result.evidence["t"].job_metadata
    assert metadata is not None
    warnings = metadata["warnings"]
    assert isinstance(warnings, list)
    return [str(warning) for warning in warnings]


def run(files: Mapping[str, str], *steps: str, matrix: str = "") -> MetadataResult:
    repository = Repository({**files, WF: workflow(*steps, matrix=matrix)})
    return repository.resolve(task("test"))


# ---- directory and workspace forms ------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("run: pnpm run lint", [("package.json", "lint")]),
        (
            "run: cd packages/kit && pnpm prepublishOnly",
            [("packages/kit/package.json", "prepublishOnly")],
        ),
        ("run: pnpm run --dir packages/kit build", [("packages/kit/package.json", "build")]),
        ("run: pnpm -C packages/kit build", [("packages/kit/package.json", "build")]),
        ("run: pnpm --filter @acme/kit build", [("packages/kit/package.json", "build")]),
        (
            "run: pnpm -r --filter='./packages/*' check",
            [
                ("packages/adapter-node/package.json", "check"),
                ("packages/kit/package.json", "check"),
            ],
        ),
        (
            "run: pnpm -r build",
            [
                ("packages/adapter-node/package.json", "build"),
                ("packages/create/package.json", "build"),
                ("packages/kit/package.json", "build"),
            ],
        ),
        (
            "run: pnpm --filter=!./packages/kit/ -r build",
            [
                ("packages/adapter-node/package.json", "build"),
                ("packages/create/package.json", "build"),
            ],
        ),
        (
            "run: pnpm --filter 'playground-basic...' build",
            [
                ("packages/adapter-node/package.json", "build"),
                ("packages/kit/package.json", "build"),
            ],
        ),
    ],
)
def test_workspace_forms_resolve_to_the_scripts_pnpm_runs(
    step: str, expected: list[tuple[str, str]]
) -> None:
    result = run(pnpm_workspace(), step)
    assert gaps_of(result) == []
    assert scripts_of(result) == expected


def test_a_root_script_that_recurses_lists_every_package_script() -> None:
    result = run(pnpm_workspace(), "run: pnpm check")
    assert scripts_of(result) == [
        ("package.json", "check"),
        ("packages/adapter-node/package.json", "check"),
        ("packages/kit/package.json", "check"),
    ]


@pytest.mark.parametrize(
    "step",
    [
        "run: pnpm ls -w",
        "run: pnpm --dir packages/kit ls vite",
        "run: pnpm install --frozen-lockfile",
        "run: pnpm playwright install chromium",
        "run: pnpm changeset status",
        "run: pnpm exec vitest run",
    ],
)
def test_builtins_and_binaries_are_no_gap(step: str) -> None:
    result = run(pnpm_workspace(), step)
    assert gaps_of(result) == []
    assert scripts_of(result) == []


def test_yarn_binary_that_runs_a_command_names_its_script() -> None:
    files = {"package.json": manifest("app", {"test": "jest"})}
    result = run(files, "run: yarn c8 yarn test", "run: yarn prettier . --check")
    assert gaps_of(result) == []
    assert scripts_of(result) == [("package.json", "test")]


def test_one_unresolvable_command_leaves_the_others_of_the_step_resolved() -> None:
    result = run(
        pnpm_workspace(),
        'run: |\n          pnpm run lint\n          (cd "$SOMEWHERE" && pnpm test)\n'
        '          pnpm --filter "$PACKAGE" build\n'
        "          pnpm --filter @acme/kit check",
    )
    assert gaps_of(result) == [c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning()]
    assert scripts_of(result) == [
        ("package.json", "lint"),
        ("packages/kit/package.json", "check"),
    ]


def test_a_dynamic_selector_stays_the_execution_context_gap() -> None:
    result = run(pnpm_workspace(), "run: pnpm --filter '[origin/main]' build")
    assert gaps_of(result) == [c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning()]


def test_without_a_listing_workspace_globs_stay_a_gap() -> None:
    repository = Repository({**pnpm_workspace(), WF: workflow("run: pnpm -r build")})
    result = repository.resolve(task("test"), listing=False)
    assert gaps_of(result) == [c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning()]


def test_over_the_bound_the_command_names_how_many_matched() -> None:
    files: dict[str, str] = {"pnpm-workspace.yaml": "packages: ['packages/*']\n"}
    files["package.json"] = manifest("root", {})
    for index in range(200):
        files[f"packages/p{index:03}/package.json"] = manifest(f"p{index}", {"build": "tsc"})
    result = run(files, "run: pnpm -r build")
    assert gaps_of(result) == [c.GAP_WORKSPACE_MATCH_BOUND.warning("200#build")]
    assert scripts_of(result) == []


def test_npm_and_yarn_workspaces() -> None:
    files = {
        "package.json": manifest("root", {"lint": "eslint ."}, workspaces=["packages/*"]),
        "packages/a/package.json": manifest("a", {"test": "jest"}),
        "packages/b/package.json": manifest("b", {"test": "jest", "build": "tsc"}),
    }
    result = run(
        files,
        "run: npm run build -w b",
        "run: npm test --workspaces",
        "run: yarn workspace a test",
    )
    assert gaps_of(result) == []
    assert scripts_of(result) == [
        ("packages/b/package.json", "build"),
        ("packages/a/package.json", "test"),
        ("packages/b/package.json", "test"),
    ]


# ---- matrix values ----------------------------------------------------------------------------

_MODES = (
    "        include:\n          - mode: unit\n          - mode: dev\n          - mode: build\n"
)


def test_a_script_name_built_from_a_static_matrix_is_every_value() -> None:
    result = run(pnpm_workspace(), "run: pnpm test:kit:${{ matrix.mode }}", matrix=_MODES)
    assert gaps_of(result) == []
    root = [name for manifest_path, name in scripts_of(result) if manifest_path == "package.json"]
    assert root == ["test:kit:unit", "test:kit:dev", "test:kit:build"]


def test_an_absent_matrix_script_is_named_exactly() -> None:
    matrix = "        mode: [unit, e2e]\n"
    result = run(pnpm_workspace(), "run: pnpm run test:kit:${{ matrix.mode }}", matrix=matrix)
    assert gaps_of(result) == [c.GAP_PACKAGE_SCRIPT_ABSENT.warning("package.json#test:kit:e2e")]


def test_a_dynamic_matrix_script_name_stays_a_gap() -> None:
    matrix = "        mode: ${{ fromJSON(needs.plan.outputs.modes) }}\n"
    result = run(pnpm_workspace(), "run: pnpm test:kit:${{ matrix.mode }}", matrix=matrix)
    assert gaps_of(result) == [c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning()]


def test_a_working_directory_from_the_matrix_is_expanded() -> None:
    matrix = "        package: [kit, adapter-node]\n"
    step = "run: pnpm build\n        working-directory: packages/${{ matrix.package }}"
    result = run(pnpm_workspace(), step, matrix=matrix)
    assert gaps_of(result) == []
    assert scripts_of(result) == [
        ("packages/kit/package.json", "build"),
        ("packages/adapter-node/package.json", "build"),
    ]


# ---- inputs in commands -----------------------------------------------------------------------

_CALLED = (
    "on:\n  workflow_call:\n    inputs:\n"
    "      script:\n        type: string\n        default: yarn fix\n"
    "      extra:\n        type: string\n"
    "jobs:\n  run:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - run: ${{ inputs.script }}\n"
)


def _caller(with_block: str) -> str:
    return (
        "on: pull_request\njobs:\n  fix:\n    uses: ./.github/workflows/called.yml\n" + with_block
    )


def test_a_command_from_an_input_default_is_read_like_any_command() -> None:
    files = {
        "package.json": manifest("app", {"fix": "eslint --fix .", "lint": "eslint ."}),
        ".github/workflows/called.yml": _CALLED,
        WF: _caller(""),
    }
    result = Repository(files).resolve(task("fix"))
    assert gaps_of(result) == []
    assert scripts_of(result) == [("package.json", "fix")]
    evidence = evidence_of(result)
    called_steps = evidence["jobs"][0]["jobs"][0]["steps"]
    assert called_steps[0]["run"] == "yarn fix"


def test_a_command_from_the_callers_with_wins_over_the_default() -> None:
    files = {
        "package.json": manifest("app", {"fix": "eslint --fix .", "lint": "eslint ."}),
        ".github/workflows/called.yml": _CALLED,
        WF: _caller("    with:\n      script: yarn lint\n"),
    }
    result = Repository(files).resolve(task("fix"))
    assert gaps_of(result) == []
    assert scripts_of(result) == [("package.json", "lint")]


def test_a_command_that_is_an_undecidable_input_is_a_gap_never_evidence() -> None:
    called = _CALLED.replace("${{ inputs.script }}", "${{ inputs.extra }}")
    files = {
        "package.json": manifest("app", {}),
        ".github/workflows/called.yml": called,
        WF: _caller(""),
    }
    result = Repository(files).resolve(task("fix"))
    assert gaps_of(result) == [
        c.GAP_COMMAND_EXPRESSION_UNRESOLVED.warning("./.github/workflows/called.yml#run")
    ]


def test_a_command_from_a_step_output_is_a_gap() -> None:
    result = run({}, "run: ${{ steps.plan.outputs.command }}")
    assert gaps_of(result) == [c.GAP_COMMAND_EXPRESSION_UNRESOLVED.warning(f"{WF}#test")]


# ---- composite actions ------------------------------------------------------------------------


def composite(*steps: str, inputs: str = "") -> str:
    body = "".join(f"    - {step}\n" for step in steps)
    declared = f"inputs:\n{inputs}" if inputs else ""
    return (
        f"name: setup\ndescription: sets up\n{declared}runs:\n  using: composite\n  steps:\n{body}"
    )


def test_a_local_composite_action_expands_into_its_steps() -> None:
    files = {
        **pnpm_workspace(),
        ".github/actions/setup/action.yml": composite(
            "uses: ./.github/actions/inner",
            "shell: bash\n      run: pnpm install --frozen-lockfile",
            "shell: bash\n      run: pnpm run ${{ inputs.task }}",
            inputs="  task:\n    default: lint\n",
        ),
        ".github/actions/inner/action.yml": composite(
            "shell: bash\n      run: pnpm --filter @acme/kit build"
        ),
    }
    result = run(files, "uses: ./.github/actions/setup")
    assert gaps_of(result) == []
    assert scripts_of(result) == [
        ("packages/kit/package.json", "build"),
        ("package.json", "lint"),
    ]
    evidence = evidence_of(result)
    step = evidence["jobs"][0]["steps"][0]
    assert [inner.get("run") for inner in step["steps"]] == [
        None,
        "pnpm install --frozen-lockfile",
        "pnpm run lint",
    ]
    assert step["steps"][0]["steps"][0]["run"] == "pnpm --filter @acme/kit build"
    uses = [action["uses"] for action in evidence["actions"]]
    assert uses == ["./.github/actions/setup", "./.github/actions/inner"]


def test_a_package_script_gap_inside_a_composite_is_raised() -> None:
    files = {
        "package.json": manifest("app", {}),
        ".github/actions/setup/action.yml": composite("shell: bash\n      run: npm run build"),
    }
    result = run(files, "uses: ./.github/actions/setup")
    assert gaps_of(result) == [c.GAP_PACKAGE_SCRIPT_ABSENT.warning("package.json#build")]


def test_a_composite_cycle_is_a_gap() -> None:
    files = {
        ".github/actions/a/action.yml": composite("uses: ./.github/actions/b"),
        ".github/actions/b/action.yml": composite("uses: ./.github/actions/a"),
    }
    result = run(files, "uses: ./.github/actions/a")
    assert gaps_of(result) == [c.GAP_COMPOSITE_ACTION_CYCLE.warning("./.github/actions/a")]


def test_composites_deeper_than_the_limit_are_a_gap() -> None:
    files = {
        f".github/actions/a{index}/action.yml": composite(f"uses: ./.github/actions/a{index + 1}")
        for index in range(c.COMPOSITE_ACTION_MAX_DEPTH + 2)
    }
    result = run(files, "uses: ./.github/actions/a0")
    limit = c.COMPOSITE_ACTION_MAX_DEPTH
    assert gaps_of(result)[0] == c.GAP_COMPOSITE_ACTION_DEPTH_LIMIT.warning(
        f"./.github/actions/a{limit}"
    )


def test_an_unreadable_nested_action_keeps_its_metadata_gap() -> None:
    files = {".github/actions/a/action.yml": composite("uses: ./.github/actions/gone")}
    result = run(files, "uses: ./.github/actions/a")
    assert gaps_of(result) == [c.GAP_ACTION_METADATA_MISSING.warning("./.github/actions/gone")]


def test_a_remote_composite_contributes_its_steps_within_the_bound() -> None:
    long_script = "echo " + "x" * c.COMPOSITE_REMOTE_STEP_RUN_BYTES
    text = composite(
        "shell: bash\n      run: pnpm install",
        f"shell: bash\n      run: {long_script}",
        f"name: Long\n      shell: bash\n      run: {long_script}",
        "shell: bash\n      run: pnpm run build",
    )
    repository = Repository(
        {**pnpm_workspace(), WF: workflow("uses: acme/setup@v1")},
    )
    repository.actions[("acme", "setup", "", "v1")] = ActionFile(text, "action.yml", REMOTE_SHA)
    result = repository.resolve(task("test"))
    # Every command is read, the ones not shown included.
    assert gaps_of(result) == [c.GAP_PACKAGE_SCRIPT_ABSENT.warning("package.json#build")]
    evidence = evidence_of(result)
    shown = [
        (inner.get("name"), inner["run"]) for inner in evidence["jobs"][0]["steps"][0]["steps"]
    ]
    cut = c.COMPOSITE_REMOTE_RUN_CUT.format(count=len(long_script))
    assert shown == [(None, "pnpm install"), ("Long", cut), (None, "pnpm run build")]


def test_a_remote_composite_shows_at_most_its_room() -> None:
    steps = [f"shell: bash\n      run: echo {'y' * 100} {index}" for index in range(10)]
    repository = Repository({WF: workflow("uses: acme/setup@v1")})
    repository.actions[("acme", "setup", "", "v1")] = ActionFile(
        composite(*steps), "action.yml", REMOTE_SHA
    )
    evidence = evidence_of(repository.resolve(task("test")))
    shown = [inner["run"] for inner in evidence["jobs"][0]["steps"][0]["steps"]]
    assert sum(len(run.encode()) for run in shown) <= c.COMPOSITE_REMOTE_RUN_BYTES
    assert len(shown) == c.COMPOSITE_REMOTE_RUN_BYTES // 107


# ---- naming the cause -------------------------------------------------------------------------


def test_a_gap_note_names_the_file_line_column_job_step_and_command() -> None:
    files = {"package.json": manifest("app", {})}
    files[WF] = (
        "on: pull_request\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - name: Lint\n        run: |\n          echo start\n          npm run lint\n"
    )
    result = Repository(files).resolve(task("test"))
    assert result.notes["t"] == (
        "package-script-absent:package.json#lint comes from .github/workflows/ci.yml:9:11, "
        'workflow ".github/workflows/ci.yml", job "test", step "Lint": npm run lint',
    )


# ---- whose checkout a command runs in ---------------------------------------------------------


def test_scripts_in_another_repositorys_checkout_are_a_gap() -> None:
    checkout = "uses: actions/checkout@v4\n        with:\n          repository: acme/emails\n"
    files = {
        "package.json": manifest("app", {"build": "tsc"}),
        "server/emails/package.json": manifest("emails", {"build": "mjml"}),
    }
    steps = (
        "run: npm run build",
        checkout + "          path: server/emails",
        "run: npm run build\n        working-directory: server/emails",
        "run: npm run build",
    )
    result = run(files, *steps)
    assert gaps_of(result) == [
        c.GAP_ACTION_METADATA_MISSING.warning("actions/checkout@v4"),
        c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning(),
    ]
    # The root's script is still this repository's, before and after the other checkout.
    assert scripts_of(result) == [("package.json", "build")]


def test_a_checkout_of_this_repository_by_name_is_not_another() -> None:
    checkout = (
        "uses: actions/checkout@v4\n        with:\n          repository: ${{ github.repository }}\n"
    )
    result = run(
        {"package.json": manifest("app", {"build": "tsc"})}, checkout, "run: npm run build"
    )
    assert gaps_of(result) == [c.GAP_ACTION_METADATA_MISSING.warning("actions/checkout@v4")]
    assert scripts_of(result) == [("package.json", "build")]


def test_a_remote_reusable_workflow_runs_the_callers_scripts() -> None:
    called = (
        "on:\n  workflow_call:\njobs:\n  build:\n    runs-on: x\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: pnpm run build\n"
    )
    repository = Repository(
        {
            "package.json": manifest("app", {"build": "tsc"}),
            WF: "on: pull_request\njobs:\n  call:\n    uses: acme/ci/.github/workflows/b.yml@v1\n",
        }
    )
    repository.actions[("acme", "ci", ".github/workflows/b.yml", "v1")] = ActionFile(
        called, ".github/workflows/b.yml", REMOTE_SHA
    )
    result = repository.resolve(task("call"))
    assert [gap for gap in gaps_of(result) if "actions/checkout" not in gap] == []
    assert scripts_of(result) == [("package.json", "build")]


def test_commands_of_another_shell_are_read_line_by_line() -> None:
    files = {"package.json": manifest("app", {"build": "tsc", "test": "vitest"})}
    step = (
        "shell: pwsh\n        run: |\n          $env:CI = 'true'; npm run build\n"
        "          Set-Location web\n          npm test"
    )
    result = run(files, step)
    # After a directory change only that shell knows, the directory is unknown.
    assert gaps_of(result) == [c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning()]
    assert scripts_of(result) == [("package.json", "build")]


def test_a_boolean_expression_as_a_command_is_true_or_false() -> None:
    step = "run: if ${{ github.event.issue.pull_request.url != '' }}; then npm run build; fi"
    result = run({"package.json": manifest("app", {"build": "tsc"})}, step)
    assert gaps_of(result) == []
    assert scripts_of(result) == [("package.json", "build")]
