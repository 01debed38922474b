"""Package scripts are recognised as each package manager reads its command line."""

from __future__ import annotations

import pytest

from jev_select.core.evidence.package_scripts import BUILTIN_COMMANDS, ScriptScan, scan_command

# Invocations that run a package.json script, per tool, from each tool's command reference.
RUNS_A_SCRIPT = [
    ("npm run lint", "lint"),
    ("npm run-script lint", "lint"),
    ("npm rum lint", "lint"),
    ("npm urn lint", "lint"),
    ("npm run --silent lint -- --fix", "lint"),
    ("npm run lint --if-present", "lint"),
    ("npm test", "test"),
    ("npm t", "test"),
    ("npm tst", "test"),
    ("npm start", "start"),
    ("npm stop", "stop"),
    ("npm restart", "restart"),
    ("npm install-test", "test"),
    ("npm it", "test"),
    ("npm install-ci-test", "test"),
    ("npm cit", "test"),
    ("npm --silent test", "test"),
    ("pnpm run lint", "lint"),
    ("pnpm run-script lint", "lint"),
    ("pnpm lint", "lint"),
    ("pnpm test-unit", "test-unit"),
    ("pnpm test", "test"),
    ("pnpm t", "test"),
    ("pnpm start", "start"),
    ("pnpm it", "test"),
    ("pnpm --silent build:prod", "build:prod"),
    ("yarn run lint", "lint"),
    ("yarn lint", "lint"),
    ("yarn test", "test"),
    ("yarn start", "start"),
    ("yarn build:prod --watch", "build:prod"),
    ("bun run dev", "dev"),
    ("bun run --bun dev", "dev"),
]

# Built-in commands and runners of package binaries: no script, and no gap.
RUNS_NO_SCRIPT = [
    "npm i",
    "npm install",
    "npm ci",
    "npm install --no-audit && npm ci --omit=dev",
    "npm exec eslint .",
    "npm x eslint",
    "npm pack && npm publish && npm version patch",
    "npm audit --production",
    "npm --version",
    "npx eslint .",
    "npx -y playwright install --with-deps",
    "pnpm install --frozen-lockfile",
    "pnpm i",
    "pnpm add -D typescript",
    "pnpm exec tsc --noEmit",
    "pnpm exec eslint",
    "pnpm dlx create-vite",
    "pnpm store prune",
    "pnpm audit",
    "pnpm runtime set node 22 --global",
    "pnpm install && pnpm exec playwright install",
    "yarn",
    "yarn install --immutable",
    "yarn install --frozen-lockfile",
    "yarn add react",
    "yarn dlx create-react-app x",
    "yarn exec tsc",
    "yarn why react",
    "yarn config set x y",
    "bun install",
    "bun add zod",
    "bun test",
    "bun x tsc",
    "bunx tsc",
    "bun run ./scripts/build.ts",
    "bun run index.ts",
    "echo npm run",
    "npm run",
    "npm run -- build",
]

# Invocations whose scripts run in another directory or in several packages.
RUNS_ELSEWHERE = [
    "pnpm -r build",
    "pnpm --recursive run test",
    "pnpm -F web build",
    "pnpm --filter web build",
    "pnpm --filter-prod web build",
    "yarn workspace web build",
    "yarn workspaces foreach run build",
    "npm run build --workspace=a",
    "npm --prefix web test",
    "cd web && pnpm test",
    "pnpm -C web lint",
    "pnpm recursive run build",
    "pnpm m test",
]


@pytest.mark.parametrize(("command", "name"), RUNS_A_SCRIPT)
def test_invocations_that_run_a_script(command: str, name: str) -> None:
    assert scan_command(command) == ScriptScan((name,))


@pytest.mark.parametrize("command", RUNS_NO_SCRIPT)
def test_builtins_and_binary_runners_are_not_scripts(command: str) -> None:
    assert scan_command(command) == ScriptScan()


@pytest.mark.parametrize("command", RUNS_ELSEWHERE)
def test_scripts_run_elsewhere_are_unresolved(command: str) -> None:
    assert scan_command(command) == ScriptScan(unresolved=True)


@pytest.mark.parametrize("tool", ["pnpm", "yarn"])
def test_every_builtin_command_is_no_script(tool: str) -> None:
    for command in sorted(BUILTIN_COMMANDS[tool]):
        if command in ("workspace", "workspaces", "recursive", "m", "multi"):
            continue
        assert scan_command(f"{tool} {command} x") == ScriptScan(), command


def test_several_invocations_in_order() -> None:
    command = "pnpm install && pnpm lint; npm test | yarn run e2e\nbun run docs && npx x"
    assert scan_command(command) == ScriptScan(("lint", "test", "e2e", "docs"))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('echo "Publishing the pnpm CLI from CI"', ()),
        ("echo building with yarn 4 now", ()),
        ("echo run npm test later", ()),
        ("echo 'x' && pnpm lint", ("lint",)),
        ("CI=1 FORCE_COLOR=0 pnpm lint", ("lint",)),
        ("sudo -E env A=b yarn build", ()),  # "-E" is no prefix word: not a command start
        ("time pnpm test", ("test",)),
        ("out=$(pnpm lint)", ("lint",)),
        ("xargs -n1 npm run build", ("build",)),  # an explicit run counts anywhere
    ],
)
def test_implicit_forms_count_only_at_the_start_of_a_command(
    command: str, expected: tuple[str, ...]
) -> None:
    assert scan_command(command) == ScriptScan(expected)


def test_pnpm_recursive_flags_do_not_leak_into_other_tools() -> None:
    # "-r" belongs to pip here, not to pnpm.
    assert scan_command("pip install -r req.txt && pnpm lint") == ScriptScan(("lint",))
