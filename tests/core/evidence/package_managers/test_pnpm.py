"""pnpm's workspace runs: recursive and filtered selection, ``-w`` and runs outside a workspace."""

from __future__ import annotations

import pytest
from package_manager_repos import (
    ADAPTER,
    BASIC,
    CREATE,
    HN,
    KIT,
    MEMBERS,
    PNPM_REPO,
    ROOT,
    SINGLE_REPO,
    manifest,
    parse,
    script_targets,
    target,
    targets,
)

from jev_select.core.evidence.package_managers import (
    UNRESOLVED_CHANGED_SINCE,
    UNRESOLVED_DIRECTORY,
    UNRESOLVED_MISSING_VALUE,
    UNRESOLVED_NO_WORKSPACE,
    UNRESOLVED_SELECTOR,
    UNRESOLVED_WORKSPACE_PROBLEM,
    Invocation,
    ScriptTarget,
    parse_invocation,
)
from jev_select.core.evidence.workspaces import (
    PROBLEM_FILE_INVALID,
    PROBLEM_LISTING_MISSING,
    WorkspaceIndex,
)

# --------------------------------------------------------------------------------------------
# pnpm workspaces
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "directory", "selected"),
    [
        # Recursive runs take every member; the root only when asked for.
        ("pnpm -r build", ".", MEMBERS),
        ("pnpm --recursive run build", KIT, MEMBERS),
        ("pnpm recursive run build", ".", MEMBERS),
        ("pnpm m build", ".", MEMBERS),
        ("pnpm multi test", ".", MEMBERS),
        ("pnpm run -r build", ".", MEMBERS),
        ("pnpm -r --include-workspace-root build", ".", [ROOT, *MEMBERS]),
        ("pnpm -r start", ".", [ROOT, *MEMBERS]),  # only run, exec and test leave the root out
        ("pnpm -r -w build", ".", [ROOT]),
        # Names and name patterns.
        ("pnpm --filter @sveltejs/kit build", ".", [KIT]),
        ("pnpm -F @sveltejs/kit build", ".", [KIT]),
        ("pnpm --filter=@sveltejs/kit build", ".", [KIT]),
        ("pnpm --filter kit build", ".", [KIT]),  # an unscoped name finds the one scoped match
        ("pnpm --filter adapter build", ".", []),
        ("pnpm --filter '@sveltejs/*' build", ".", [ADAPTER, KIT]),
        ("pnpm --filter '*-node' build", ".", [ADAPTER]),
        ("pnpm --filter 'playground-*' build", ".", [BASIC, HN]),
        ("pnpm --filter kit-monorepo build", ".", [ROOT]),
        ("pnpm --filter @sveltejs/kit --filter create-svelte build", ".", [CREATE, KIT]),
        # Directories, relative to where pnpm runs.
        ("pnpm --filter ./packages/kit build", ".", [KIT]),
        ("pnpm --filter ./packages/kit/ build", ".", [KIT]),
        ("pnpm --filter './packages/*' build", ".", [ADAPTER, CREATE, KIT]),
        ("pnpm --filter './playgrounds/**' build", ".", [BASIC, HN]),
        ("pnpm --filter '{packages/kit}' build", ".", [KIT]),
        ("pnpm --filter '{packages/**}' build", ".", [ADAPTER, CREATE, KIT]),
        ("pnpm --filter ../kit build", ADAPTER, [KIT]),
        ("pnpm --filter . build", KIT, [KIT]),
        ("pnpm --filter . build", ".", [ROOT]),
        ("pnpm --filter . build", "packages/kit/src", []),  # no package in that directory
        ("pnpm --filter '@sveltejs/*{packages/**}' build", ".", [ADAPTER, KIT]),
        # Exclusions, applied after the inclusions; exclusions alone start from all members.
        ("pnpm --filter=!./packages/kit/ test", ".", [ADAPTER, CREATE, BASIC, HN]),
        ("pnpm --filter '!@sveltejs/kit' build", ".", [ADAPTER, CREATE, BASIC, HN]),
        (
            "pnpm --filter '!@sveltejs/kit' --include-workspace-root build",
            ".",
            [ROOT, ADAPTER, CREATE, BASIC, HN],
        ),
        ("pnpm --filter './packages/*' --filter '!create-svelte' build", ".", [ADAPTER, KIT]),
        ("pnpm --filter @sveltejs/kit --filter '!@sveltejs/kit' build", ".", []),
        # Dependencies and dependents, within the workspace.
        ("pnpm --filter @sveltejs/kit... build", ".", [KIT]),
        ("pnpm --filter playground-basic... build", ".", [ADAPTER, KIT, BASIC]),
        ("pnpm --filter 'playground-basic^...' build", ".", [ADAPTER, KIT]),
        ("pnpm --filter ...@sveltejs/kit build", ".", [ADAPTER, CREATE, KIT, BASIC, HN]),
        ("pnpm --filter '...^@sveltejs/kit' build", ".", [ADAPTER, CREATE, BASIC, HN]),
        ("pnpm --filter ...@sveltejs/adapter-node... build", ".", [ADAPTER, KIT, BASIC]),
        ("pnpm --filter '{playgrounds/*}...' build", ".", [ADAPTER, KIT, BASIC, HN]),
        ("pnpm --filter '...{packages/adapter-node}' build", ".", [ADAPTER, BASIC]),
        ("pnpm --filter ./packages/adapter-node... build", ".", [ADAPTER]),  # path form: no dots
        ("pnpm --filter-prod ...@sveltejs/kit build", ".", [ADAPTER, KIT, BASIC]),
        ("pnpm --filter-prod playground-hn... build", ".", [HN]),
        ("pnpm --filter playground-hn... build", ".", [KIT, HN]),
        # -w adds the root to a filtered run.
        ("pnpm --filter @sveltejs/kit -w build", ".", [ROOT, KIT]),
    ],
)
def test_pnpm_selection(command: str, directory: str, selected: list[str]) -> None:
    invocation = parse(PNPM_REPO, command, directory)
    name = command.split()[-1]
    assert script_targets(invocation) == [(d, name, False) for d in selected]


@pytest.mark.parametrize(
    "command",
    [
        # Options that take a value never let it be read as the command, or as a selector.
        "pnpm --workspace-concurrency 1 -r build",
        "pnpm --reporter append-only --recursive build",
        "pnpm --loglevel error -r --color build",
        "pnpm -r --test-pattern test/** build",
        "pnpm --aggregate-output --parallel --stream -r build",
        "pnpm --config.engine-strict=true -r build",
        "pnpm -r --changed-files-ignore-pattern **/README.md build",
    ],
)
def test_pnpm_option_values(command: str) -> None:
    assert parse(PNPM_REPO, command).targets == targets(MEMBERS, "build")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm --loglevel silent --userconfig .npmrc run lint", target(ROOT, "lint", True)),
        ("npm run lint --script-shell bash", target(ROOT, "lint", True)),
        ("npm --color run lint", target(ROOT, "lint", True)),  # --color is a flag
        ("yarn --mutex network --network-timeout 100000 lint", target(ROOT, "lint", False)),
        ("yarn --modules-folder vendor run lint", target(ROOT, "lint", False)),
        ("bun --env-file .env.ci run lint", target(ROOT, "lint", False)),
        ("bun --config bunfig.ci.toml run lint", target(ROOT, "lint", False)),
        ("bun -r ./setup.ts run lint", target(ROOT, "lint", False)),
    ],
)
def test_option_values_of_other_tools(command: str, expected: ScriptTarget) -> None:
    assert parse(SINGLE_REPO, command).targets == (expected,)


def test_pnpm_multi_package_runs_are_never_required() -> None:
    # pnpm skips a selected package without the script: the caller checks that one exists.
    invocation = parse(PNPM_REPO, "pnpm --filter @sveltejs/kit run build")
    assert invocation.targets == (target(KIT, "build", False),)
    assert parse(PNPM_REPO, "pnpm -r test").targets == targets(MEMBERS, "test")


@pytest.mark.parametrize(
    ("command", "directory", "expected"),
    [
        ("pnpm -w build", KIT, (target(ROOT, "build", False),)),
        ("pnpm --workspace-root run build", "packages/kit/src", (target(ROOT, "build", True),)),
        ("pnpm -w test", ".", (target(ROOT, "test", True),)),
        ("pnpm build", KIT, (target(KIT, "build", False),)),
        ("pnpm run build", "packages/kit/src/runtime", (target(KIT, "build", True),)),
        ("pnpm --dir packages/kit test", ".", (target(KIT, "test", True),)),
        ("pnpm --dir packages/kit -w test", ".", (target(ROOT, "test", True),)),
    ],
)
def test_pnpm_single_package_runs(
    command: str, directory: str, expected: tuple[ScriptTarget, ...]
) -> None:
    assert parse(PNPM_REPO, command, directory).targets == expected


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("pnpm --filter '[origin/main]' build", UNRESOLVED_CHANGED_SINCE),
        ("pnpm --filter '...[origin/main]' build", UNRESOLVED_CHANGED_SINCE),
        ("pnpm --filter '[HEAD~1]...' build", UNRESOLVED_CHANGED_SINCE),
        ("pnpm --filter '{packages/**}[origin/main]' build", UNRESOLVED_CHANGED_SINCE),
        ("pnpm --filter ... build", UNRESOLVED_SELECTOR),
        ("pnpm --filter .hidden build", UNRESOLVED_SELECTOR),
        ("pnpm --filter ../../.. build", UNRESOLVED_DIRECTORY),
        ("pnpm --dir ../x build", UNRESOLVED_DIRECTORY),
        ("pnpm --dir /abs build", UNRESOLVED_DIRECTORY),
        ("pnpm --filter", UNRESOLVED_MISSING_VALUE),
        ("pnpm build --filter", None),  # after the script name, the script's own words
    ],
)
def test_pnpm_unresolved_selection(command: str, reason: str | None) -> None:
    assert parse(PNPM_REPO, command).unresolved == reason


OUTSIDE_PNPM = {
    "package.json": manifest("app", workspaces=["packages/*"]),
    "packages/a/package.json": manifest("a"),
    "tests/fixture/package.json": manifest("fixture"),
    "node_modules/x/package.json": manifest("x"),
}


@pytest.mark.parametrize(
    ("command", "directory", "selected"),
    [
        # Outside a pnpm workspace recursive mode takes every package below the directory,
        # its own included (pnpm ignores package.json "workspaces", test dirs and node_modules).
        ("pnpm -r build", ".", [ROOT, "packages/a"]),
        ("pnpm -r build", "packages", ["packages/a"]),
        ("pnpm --filter a build", ".", ["packages/a"]),
        ("pnpm --filter '!a' build", ".", [ROOT]),
    ],
)
def test_pnpm_recursive_outside_a_workspace(
    command: str, directory: str, selected: list[str]
) -> None:
    assert script_targets(parse(OUTSIDE_PNPM, command, directory)) == [
        (d, "build", False) for d in selected
    ]


def test_pnpm_workspace_root_outside_a_workspace_is_unresolved() -> None:
    assert parse(OUTSIDE_PNPM, "pnpm -w build").unresolved == UNRESOLVED_NO_WORKSPACE


def test_pnpm_root_only_workspace_keeps_the_root_in_recursive_runs() -> None:
    repo = {"pnpm-workspace.yaml": "catalog:\n  react: ^19\n", "package.json": manifest("x")}
    assert parse(repo, "pnpm -r build").targets == (target(ROOT, "build", False),)


def test_pnpm_broken_workspace_file() -> None:
    repo = dict(PNPM_REPO, **{"pnpm-workspace.yaml": "packages:\n  - [unclosed\n"})
    invocation = parse(repo, "pnpm -r build")
    assert invocation == Invocation(
        "pnpm", (), unresolved=UNRESOLVED_WORKSPACE_PROBLEM + PROBLEM_FILE_INVALID
    )
    # A run in one package needs no workspace.
    assert parse(repo, "pnpm build", KIT).targets == (target(KIT, "build", False),)


def test_pnpm_without_a_file_listing() -> None:
    index = WorkspaceIndex(PNPM_REPO.get, None)
    invocation = parse_invocation(["pnpm", "-r", "build"], ".", index)
    assert invocation is not None
    assert invocation.unresolved == UNRESOLVED_WORKSPACE_PROBLEM + PROBLEM_LISTING_MISSING
    single = parse_invocation(["pnpm", "build"], KIT, index)
    assert single is not None
    assert single.targets == (target(KIT, "build", False),)
