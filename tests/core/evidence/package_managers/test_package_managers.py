"""Package-manager commands run the scripts each tool's documentation says they run: the
commands, single-package runs, built-ins, binaries, dynamic words and the bound.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

import pytest
from package_manager_repos import (
    BUN_REPO,
    KIT,
    NPM_REPO,
    PNPM_REPO,
    ROOT,
    SINGLE_REPO,
    YARN_REPO,
    A,
    index_of,
    manifest,
    parse,
    target,
)

from jev_select import contracts as c
from jev_select.core.evidence.package_managers import (
    BUILTIN_COMMANDS,
    UNRESOLVED_DIRECTORY,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_NESTED_SEVERAL,
    Invocation,
    ScriptTarget,
    parse_invocation,
)
from jev_select.core.evidence.workspaces import manifest_path

# --------------------------------------------------------------------------------------------
# Which commands are a package manager's
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("words", [[], ["node", "x.js"], ["npmx"], ["./npm"], ["corepack", "pnpm"]])
def test_other_commands_are_none(words: list[str]) -> None:
    assert parse_invocation(words, ".", index_of(SINGLE_REPO)) is None


@pytest.mark.parametrize(
    ("command", "tool"),
    [
        ("npm ci", "npm"),
        ("npx eslint .", "npm"),
        ("pnpm install", "pnpm"),
        ("pnpx create-vite", "pnpm"),
        ("yarn install", "yarn"),
        ("yarnpkg install", "yarn"),
        ("bun install", "bun"),
        ("bunx tsc", "bun"),
    ],
)
def test_tool_names(command: str, tool: str) -> None:
    assert parse(SINGLE_REPO, command) == Invocation(tool, ())


# --------------------------------------------------------------------------------------------
# Scripts in a single package
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name", "required"),
    [
        # npm: run and its aliases, and the fixed-name commands, all fail on a missing script.
        ("npm run lint", "lint", True),
        ("npm run-script lint", "lint", True),
        ("npm rum lint", "lint", True),
        ("npm urn lint", "lint", True),
        ("npm run --silent lint -- --fix", "lint", True),
        ("npm run lint --if-present", "lint", False),
        ("npm --loglevel warn run lint", "lint", True),
        ("npm run build $EXTRA_ARGS", "build", True),
        ("npm test", "test", True),
        ("npm t", "test", True),
        ("npm tst", "test", True),
        ("npm start", "start", True),
        ("npm stop", "stop", True),
        ("npm restart", "restart", True),
        ("npm install-test", "test", True),
        ("npm it", "test", True),
        ("npm install-ci-test", "test", True),
        ("npm cit", "test", True),
        # pnpm: explicit run and fixed names are required; any other word may be a binary.
        ("pnpm run lint", "lint", True),
        ("pnpm run-script lint", "lint", True),
        ("pnpm run --if-present lint", "lint", False),
        ("pnpm test", "test", True),
        ("pnpm t", "test", True),
        ("pnpm tst", "test", True),
        ("pnpm start", "start", True),
        ("pnpm install-test", "test", True),
        ("pnpm it", "test", True),
        ("pnpm lint", "lint", False),
        ("pnpm test:kit:unit", "test:kit:unit", False),
        ("pnpm --silent build:prod", "build:prod", False),
        ("pnpm build --filter $ANYTHING", "build", False),  # options after the name: the script's
        ("pnpm changeset status", "changeset", False),
        ("pnpm playwright install chromium", "playwright", False),
        # yarn: run and implicit names fall back to binaries.
        ("yarn run lint", "lint", False),
        ("yarn lint", "lint", False),
        ("yarn test", "test", False),
        ("yarn start", "start", False),
        ("yarn build:prod --watch", "build:prod", False),
        ("yarn prettier . --check", "prettier", False),
        ("yarnpkg lint", "lint", False),
        # bun: run and implicit names also run files and package binaries.
        ("bun run dev", "dev", False),
        ("bun run --bun vite", "vite", False),
        ("bun --watch run dev", "dev", False),
        ("bun dev", "dev", False),
    ],
)
def test_single_package_scripts(command: str, name: str, required: bool) -> None:
    invocation = parse(SINGLE_REPO, command)
    assert invocation.targets == (target(ROOT, name, required),)
    assert invocation.unresolved is None
    assert invocation.name == name


def test_pnpm_restart_runs_stop_restart_and_start() -> None:
    assert parse(SINGLE_REPO, "pnpm restart").targets == (
        target(ROOT, "stop", False),
        target(ROOT, "restart", False),
        target(ROOT, "start", False),
    )


@pytest.mark.parametrize(
    ("command", "directory", "package"),
    [
        # The nearest package.json at or above the directory.
        ("npm test", "src", ROOT),
        ("pnpm lint", "src/deep", ROOT),
        ("yarn lint", "tools/gen/src", "tools/gen"),
        ("bun run gen", "tools/gen", "tools/gen"),
        # Directory options, joined with the directory the command runs in.
        ("pnpm --dir tools/gen lint", ".", "tools/gen"),
        ("pnpm -C gen lint", "tools", "tools/gen"),
        ("pnpm -C ../gen lint", "tools/other", "tools/gen"),
        ("pnpm --dir=tools/gen/src lint", ".", "tools/gen"),
        ("yarn --cwd tools/gen lint", ".", "tools/gen"),
        ("bun --cwd tools/gen run lint", ".", "tools/gen"),
        ("bun run --cwd=tools/gen lint", ".", "tools/gen"),
        ("npm --prefix tools/gen run lint", ".", "tools/gen"),
        ("npm run lint -C tools/gen", ".", "tools/gen"),
        # npm's --prefix names the package directory outright: no walking up.
        ("npm --prefix tools/gen/src run lint", ".", "tools/gen/src"),
        # No package.json anywhere: the directory's own, reported missing by the caller.
        ("pnpm lint", "nowhere", ROOT),
    ],
)
def test_the_package_directory(command: str, directory: str, package: str) -> None:
    invocation = parse(SINGLE_REPO, command, directory)
    assert [t.directory for t in invocation.targets] == [package]
    assert invocation.targets[0].manifest == manifest_path(package)


def test_without_any_manifest_the_directory_itself_is_named() -> None:
    invocation = parse({"src/x.js": ""}, "npm test", "src")
    assert invocation.targets == (target("src", "test", True),)


@pytest.mark.parametrize(
    "command",
    [
        "npm run",
        "npm run -- build",
        "pnpm run",
        "yarn run",
        "bun run",
        "pnpm ./scripts/build.js",
        "pnpm run ./scripts/build.js",
        "bun run ./scripts/build.ts",
        "bun run index.ts",
        "bun ./index.ts",
        "yarn ./bin/x",
        "npm run ./x",
        "pnpm",
        "npm",
        "yarn",
        "bun",
        "npm --version",
        "pnpm --version",
        "bun -e 'console.log(1)'",
        "bun --print 1+1",
        "bun run -e 'x()'",
    ],
)
def test_files_listings_and_bare_tools_run_no_script(command: str) -> None:
    assert parse(SINGLE_REPO, command) == Invocation(parse(SINGLE_REPO, command).tool, ())


# --------------------------------------------------------------------------------------------
# Built-in commands
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("repo", "command", "directory"),
    [
        (PNPM_REPO, "pnpm ls -w", "."),
        (PNPM_REPO, "pnpm --dir packages/kit ls vite", "."),
        (PNPM_REPO, "pnpm install --frozen-lockfile", "."),
        (PNPM_REPO, "pnpm -r install", "."),
        (PNPM_REPO, "pnpm --filter @sveltejs/kit add -D vitest", "."),
        (PNPM_REPO, "pnpm recursive update", "."),
        (PNPM_REPO, "pnpm store prune", "."),
        (PNPM_REPO, "pnpm stop", "."),
        (YARN_REPO, "yarn install --immutable", "."),
        (YARN_REPO, "yarn", "."),
        (YARN_REPO, "yarn workspaces list --json", "."),
        (YARN_REPO, "yarn workspace @acme/ui add react", "."),
        (YARN_REPO, "yarn node scripts/x.js", "."),
        (NPM_REPO, "npm ci", "."),
        (NPM_REPO, "npm install --no-audit", "."),
        (NPM_REPO, "npm ci -w a", "."),
        (NPM_REPO, "npm publish --workspaces", "."),
        (NPM_REPO, "npm audit --omit dev", "."),
        (NPM_REPO, "npm version patch", "."),
        (BUN_REPO, "bun install --frozen-lockfile", "."),
        (BUN_REPO, "bun test", "."),
        (BUN_REPO, "bun test --coverage", "packages/pkg-a"),
        (BUN_REPO, "bun install --filter pkg-a", "."),
        (BUN_REPO, "bun build ./src/index.ts", "."),
    ],
)
def test_builtins_run_no_script(repo: Mapping[str, str], command: str, directory: str) -> None:
    invocation = parse(repo, command, directory)
    assert invocation.targets == ()
    assert invocation.unresolved is None
    assert invocation.nested is None


@pytest.mark.parametrize("tool", ["npm", "pnpm", "yarn", "bun"])
def test_every_listed_builtin_runs_no_script(tool: str) -> None:
    special = {"workspace", "workspaces", "exec", "dlx", "x", "recursive", "m", "multi"}
    for command in sorted(BUILTIN_COMMANDS[tool] - special):
        invocation = parse(SINGLE_REPO, f"{tool} {command} x")
        assert invocation == Invocation(tool, ()), command


def test_builtin_tables_leave_script_commands_out() -> None:
    assert not {"run", "run-script", "test", "start", "restart"} & BUILTIN_COMMANDS["npm"]
    assert not {"run", "test", "start", "restart"} & BUILTIN_COMMANDS["pnpm"]
    assert not {"run", "test", "start"} & BUILTIN_COMMANDS["yarn"]
    assert "test" in BUILTIN_COMMANDS["bun"]
    assert "run" not in BUILTIN_COMMANDS["bun"]


# --------------------------------------------------------------------------------------------
# Binaries and nested commands
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("repo", "command", "directory", "expected_targets", "nested", "nested_directory"),
    [
        (SINGLE_REPO, "npx cross-env FOO=1 pnpm build", ".", (), ("pnpm", "build"), "."),
        (SINGLE_REPO, "npx -y playwright install --with-deps", ".", (), None, None),
        (SINGLE_REPO, "npx pnpm -r build", "src", (), ("pnpm", "-r", "build"), "src"),
        (SINGLE_REPO, "npm exec -- c8 npm test", ".", (), ("npm", "test"), "."),
        (SINGLE_REPO, "npm x --package=c8 c8 yarn test", ".", (), ("yarn", "test"), "."),
        (SINGLE_REPO, "npx -p c8 c8 bun run t", ".", (), ("bun", "run", "t"), "."),
        (SINGLE_REPO, "pnpm exec c8 pnpm test", ".", (), ("pnpm", "test"), "."),
        (SINGLE_REPO, "pnpm exec tsc --noEmit", ".", (), None, None),
        (SINGLE_REPO, "pnpm dlx concurrently 'pnpm a' 'pnpm b'", ".", (), None, None),
        (SINGLE_REPO, "pnpx nyc npm test", ".", (), ("npm", "test"), "."),
        (
            SINGLE_REPO,
            "pnpm --dir tools/gen exec c8 pnpm test",
            ".",
            (),
            ("pnpm", "test"),
            "tools/gen",
        ),
        (SINGLE_REPO, "yarn exec c8 yarn test", ".", (), ("yarn", "test"), "."),
        (SINGLE_REPO, "yarn dlx -p c8 c8 yarnpkg test", ".", (), ("yarnpkg", "test"), "."),
        (SINGLE_REPO, "yarn run -B c8 yarn test", ".", (), ("yarn", "test"), "."),
        (SINGLE_REPO, "bunx c8 bun test", ".", (), ("bun", "test"), "."),
        (SINGLE_REPO, "bun x --bun c8 npx vitest", ".", (), ("npx", "vitest"), "."),
        (
            SINGLE_REPO,
            "yarn c8 yarn test",
            ".",
            (target(ROOT, "c8", False),),
            ("yarn", "test"),
            ".",
        ),
        (
            SINGLE_REPO,
            "pnpm c8 --reporter lcov pnpm run test",
            "src",
            (target(ROOT, "c8", False),),
            ("pnpm", "run", "test"),
            "src",
        ),
        (
            SINGLE_REPO,
            "bun c8 bun run unit",
            ".",
            (target(ROOT, "c8", False),),
            ("bun", "run", "unit"),
            ".",
        ),
        (NPM_REPO, "npm exec -w a -- c8 npm test", ".", (), ("npm", "test"), A),
        (
            PNPM_REPO,
            "pnpm --filter @sveltejs/kit exec c8 pnpm test",
            ".",
            (),
            ("pnpm", "test"),
            KIT,
        ),
        (PNPM_REPO, "pnpm -w exec pnpm lint", "packages/kit", (), ("pnpm", "lint"), ROOT),
    ],
)
def test_binaries_and_nested_commands(
    repo: Mapping[str, str],
    command: str,
    directory: str,
    expected_targets: tuple[ScriptTarget, ...],
    nested: tuple[str, ...] | None,
    nested_directory: str | None,
) -> None:
    invocation = parse(repo, command, directory)
    assert invocation.unresolved is None
    assert invocation.targets == expected_targets
    assert invocation.nested == nested
    assert invocation.nested_directory == nested_directory


@pytest.mark.parametrize(
    ("repo", "command"),
    [
        (PNPM_REPO, "pnpm -r exec pnpm test"),
        (PNPM_REPO, "pnpm -r c8 pnpm test"),
        (NPM_REPO, "npm exec --workspaces -- c8 npm test"),
        (YARN_REPO, "yarn workspaces foreach -A exec pnpm test"),
    ],
)
def test_a_nested_command_in_several_packages_is_unresolved(
    repo: Mapping[str, str], command: str
) -> None:
    assert parse(repo, command).unresolved == UNRESOLVED_NESTED_SEVERAL


# --------------------------------------------------------------------------------------------
# Dynamic words
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "words",
    [
        ["pnpm", "--filter", "${{", "inputs.pkg", "}}", "build"],
        ["pnpm", "--filter", "${{ inputs.pkg }}", "build"],
        ["pnpm", "--filter=${{ inputs.pkg }}...", "build"],
        ["pnpm", "$CMD"],
        ["pnpm", "run", "${{ matrix.script }}"],
        ["pnpm", "--dir", "${{ matrix.dir }}", "test"],
        ["pnpm", "-C", "`pwd`", "test"],
        ["yarn", "workspace", "${{ matrix.ws }}", "build"],
        ["npm", "run", "test:$SUITE"],
        ["bun", "--cwd", "$DIR", "test"],
    ],
)
def test_dynamic_words_where_a_script_directory_or_selector_is_expected(
    words: list[str],
) -> None:
    invocation = parse_invocation(words, ".", index_of(PNPM_REPO))
    assert invocation is not None
    assert invocation.unresolved == UNRESOLVED_DYNAMIC
    assert invocation.targets == ()


@pytest.mark.parametrize(
    "words",
    [
        ["pnpm", "test", "--", "--shard=${{ matrix.shard }}"],
        ["npm", "run", "build", "--", "$ARGS"],
        ["yarn", "lint", "${{ inputs.paths }}"],
        ["pnpm", "--reporter", "$REPORTER", "lint"],
    ],
)
def test_dynamic_arguments_elsewhere_are_fine(words: list[str]) -> None:
    invocation = parse_invocation(words, ".", index_of(PNPM_REPO))
    assert invocation is not None
    assert invocation.unresolved is None
    assert len(invocation.targets) == 1


def test_a_malformed_directory_is_unresolved() -> None:
    invocation = parse_invocation(["pnpm", "build"], "../x", index_of(PNPM_REPO))
    assert invocation == Invocation("pnpm", (), unresolved=UNRESOLVED_DIRECTORY)


# --------------------------------------------------------------------------------------------
# The bound
# --------------------------------------------------------------------------------------------


def big_repo(count: int, kind: str) -> dict[str, str]:
    files: dict[str, str] = {}
    if kind == "pnpm":
        files["pnpm-workspace.yaml"] = "packages: ['packages/*']\n"
        files["package.json"] = manifest("big")
    else:
        files["package.json"] = manifest("big", workspaces=["packages/*"])
    for number in range(count):
        files[f"packages/p{number:03}/package.json"] = manifest(f"p{number:03}")
    return files


@pytest.mark.parametrize(
    ("kind", "command", "matched"),
    [
        ("pnpm", "pnpm -r build", 200),
        ("pnpm", "pnpm -r --include-workspace-root run build", 201),
        ("pnpm", "pnpm --filter 'p1*' build", 100),
        ("pnpm", "pnpm --filter '!p000' build", 199),
        ("npm", "npm run build --workspaces", 200),
        ("yarn", "yarn workspaces foreach -A run build", 201),
        ("yarn", "yarn workspaces run build", 200),
        ("bun", "bun --filter 'p*' build", 200),
    ],
)
def test_every_selected_package_is_a_target(kind: str, command: str, matched: int) -> None:
    # The bound on packages that have the script is the caller's: it reads the manifests.
    invocation = parse(big_repo(200, kind), command)
    assert invocation.over_bound is None
    assert len(invocation.targets) == matched


def test_over_the_selection_maximum_only_the_count_is_kept() -> None:
    count = c.WORKSPACE_SELECTION_MAX + 1
    invocation = parse(big_repo(count, "pnpm"), "pnpm -r build")
    assert invocation == Invocation("pnpm", (), over_bound=count, name="build")


def test_at_the_bound_the_targets_are_kept_in_order() -> None:
    repo = big_repo(c.WORKSPACE_MATCH_BOUND, "pnpm")
    invocation = parse(repo, "pnpm -r build")
    assert invocation.over_bound is None
    assert [t.directory for t in invocation.targets] == [
        f"packages/p{number:03}" for number in range(c.WORKSPACE_MATCH_BOUND)
    ]
    narrowed = parse(big_repo(200, "pnpm"), "pnpm --filter 'p00*' build")
    assert [t.directory for t in narrowed.targets] == [f"packages/p00{n}" for n in range(10)]


def test_targets_put_the_root_first_then_code_unit_order() -> None:
    repo = {
        "pnpm-workspace.yaml": "packages: ['*']\n",
        "package.json": manifest("root"),
        "Zeta/package.json": manifest("Z"),
        "alpha/package.json": manifest("a"),
        "-dash/package.json": manifest("d"),
    }
    invocation = parse(repo, "pnpm -r --include-workspace-root build")
    assert [t.directory for t in invocation.targets] == [ROOT, "-dash", "Zeta", "alpha"]


# --------------------------------------------------------------------------------------------
# Cases of the former shell-text scanner (package_scripts), read through parse_invocation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name", "required"),
    [
        ("npm --silent test", "test", True),
        ("pnpm test-unit", "test-unit", False),
        ("bun run --bun dev", "dev", False),
    ],
)
def test_more_single_package_scripts(command: str, name: str, required: bool) -> None:
    invocation = parse(SINGLE_REPO, command)
    assert invocation.targets == (target(ROOT, name, required),)
    assert invocation.unresolved is None
    assert invocation.name == name


@pytest.mark.parametrize(
    "command",
    [
        "npm i",
        "npm install",
        "npm install --no-audit && npm ci --omit=dev",
        "npm exec eslint .",
        "npm x eslint",
        "npm pack && npm publish && npm version patch",
        "npm audit --production",
        "pnpm i",
        "pnpm add -D typescript",
        "pnpm exec eslint",
        "pnpm dlx create-vite",
        "pnpm audit",
        "pnpm runtime set node 22 --global",
        "pnpm install && pnpm exec playwright install",
        "yarn install --frozen-lockfile",
        "yarn add react",
        "yarn dlx create-react-app x",
        "yarn exec tsc",
        "yarn why react",
        "yarn config set x y",
        "bun add zod",
        "bun x tsc",
    ],
)
def test_more_builtins_and_binary_runners_run_no_script(command: str) -> None:
    # The shell splits a list at "&&"; each simple command is read on its own.
    for part in command.split(" && "):
        invocation = parse(SINGLE_REPO, part)
        assert invocation == Invocation(invocation.tool, ()), part


@pytest.mark.parametrize(
    "command",
    [
        "echo npm run",
        'echo "Publishing the pnpm CLI from CI"',
        "echo building with yarn 4 now",
        "echo run npm test later",
        "echo 'x'",
        "pip install -r req.txt",
        # Wrappers are the caller's to remove (test_shell.py): these words are not yet the
        # package manager's.
        "sudo -E env A=b yarn build",
        "time pnpm test",
        "xargs -n1 npm run build",
    ],
)
def test_a_package_manager_word_after_the_first_is_no_invocation(command: str) -> None:
    assert parse_invocation(shlex.split(command), ".", index_of(SINGLE_REPO)) is None


def test_several_invocations_in_order() -> None:
    # "pnpm install && pnpm lint; npm test | yarn run e2e\nbun run docs && npx x", as the shell
    # splits it into simple commands.
    commands = ["pnpm install", "pnpm lint", "npm test", "yarn run e2e", "bun run docs", "npx x"]
    names = [t.name for command in commands for t in parse(SINGLE_REPO, command).targets]
    assert names == ["lint", "test", "e2e", "docs"]


def test_pnpm_recursive_flags_do_not_leak_into_other_tools() -> None:
    # "pip install -r req.txt && pnpm lint": "-r" belongs to pip, not to pnpm.
    assert parse_invocation(["pip", "install", "-r", "req.txt"], ".", index_of(SINGLE_REPO)) is None
    assert parse(SINGLE_REPO, "pnpm lint").targets == (target(ROOT, "lint", False),)


# Both workspace kinds at once: pnpm reads pnpm-workspace.yaml, npm and yarn package.json.
ELSEWHERE_REPO = {
    "pnpm-workspace.yaml": "packages:\n  - web\n  - packages/*\n",
    "package.json": manifest("root", workspaces=["web", "packages/*"]),
    "web/package.json": manifest("web"),
    "packages/a/package.json": manifest("a"),
}
WEB = "web"


@pytest.mark.parametrize(
    ("command", "directory", "selected"),
    [
        ("pnpm -r build", ".", [A, WEB]),
        ("pnpm --recursive run test", ".", [A, WEB]),
        ("pnpm -F web build", ".", [WEB]),
        ("pnpm --filter web build", ".", [WEB]),
        ("pnpm --filter-prod web build", ".", [WEB]),
        ("yarn workspace web build", ".", [WEB]),
        ("npm run build --workspace=a", ".", [A]),
        ("npm --prefix web test", ".", [WEB]),
        ("pnpm test", WEB, [WEB]),  # "cd web && pnpm test": the shell passes the directory
        ("pnpm -C web lint", ".", [WEB]),
        ("pnpm recursive run build", ".", [A, WEB]),
        ("pnpm m test", ".", [A, WEB]),
    ],
)
def test_scripts_run_elsewhere_name_their_packages(
    command: str, directory: str, selected: list[str]
) -> None:
    invocation = parse(ELSEWHERE_REPO, command, directory)
    assert invocation.unresolved is None
    assert [t.directory for t in invocation.targets] == selected
