"""yarn's workspace runs: ``yarn workspace``, ``yarn workspaces foreach`` and classic
``yarn workspaces run``.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from package_manager_repos import (
    APP,
    CLASSIC_REPO,
    CLI,
    CORE,
    ROOT,
    SINGLE_REPO,
    UI,
    YARN_REPO,
    parse,
    script_targets,
    target,
    targets,
)

from jev_select.core.evidence.package_managers import (
    UNRESOLVED_CHANGED_SINCE,
    UNRESOLVED_CWD_WORKSPACE,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_FOREACH_SCOPE,
    UNRESOLVED_MISSING_VALUE,
    UNRESOLVED_NO_WORKSPACE,
    UNRESOLVED_UNKNOWN_PACKAGE,
    Invocation,
)

# --------------------------------------------------------------------------------------------
# yarn workspaces
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "directory", "expected"),
    [
        ("yarn workspace @acme/ui build", ".", [(UI, "build", False)]),
        ("yarn workspace @acme/ui run test --coverage", ".", [(UI, "test", False)]),
        ("yarn workspace monorepo lint", UI, [(ROOT, "lint", False)]),
        ("yarn workspace @acme/app c8 yarn test", ".", [(APP, "c8", False)]),
        ("yarn run -T lint", "packages/ui/src", [(ROOT, "lint", False)]),
        ("yarn --cwd packages/ui build", ".", [(UI, "build", False)]),
        ("yarn build", "packages/ui/src", [(UI, "build", False)]),
    ],
)
def test_yarn_single_workspace(
    command: str, directory: str, expected: list[tuple[str, str, bool]]
) -> None:
    assert script_targets(parse(YARN_REPO, command, directory)) == expected


def test_yarn_workspace_passes_on_nested_commands() -> None:
    invocation = parse(YARN_REPO, "yarn workspace @acme/app c8 yarn test")
    assert invocation.nested == ("yarn", "test")
    assert invocation.nested_directory == APP


@pytest.mark.parametrize(
    ("command", "directory", "selected"),
    [
        ("yarn workspaces foreach -A run build", ".", [ROOT, APP, CORE, UI, CLI]),
        ("yarn workspaces foreach --all run build", UI, [ROOT, APP, CORE, UI, CLI]),
        ("yarn workspaces foreach -Apt run build", ".", [ROOT, APP, CORE, UI, CLI]),
        (
            "yarn workspaces foreach -A -p -j 4 --topological-dev run build",
            ".",
            [ROOT, APP, CORE, UI, CLI],
        ),
        ("yarn workspaces foreach -Apj 4 run build", ".", [ROOT, APP, CORE, UI, CLI]),
        ("yarn workspaces foreach --all --exclude monorepo run build", ".", [APP, CORE, UI, CLI]),
        ("yarn workspaces foreach -A --include '@acme/*' run build", ".", [APP, CORE, UI]),
        ("yarn workspaces foreach -A --include 'packages/*' run build", ".", [APP, CORE, UI]),
        (
            "yarn workspaces foreach -A --include '{tools/cli,@acme/core}' run build",
            ".",
            [CORE, CLI],
        ),
        (
            "yarn workspaces foreach -A --no-private -v -i run build",
            ".",
            [ROOT, APP, CORE, UI, CLI],
        ),
        ("yarn workspaces foreach -R run build", APP, [APP, CORE, UI]),
        ("yarn workspaces foreach -R run build", "packages/ui/src", [CORE, UI]),
        ("yarn workspaces foreach -Rpt --from @acme/app run build", ".", [APP, CORE, UI]),
        ("yarn workspaces foreach -R --from '{acme-cli,@acme/ui}' run build", ".", [CORE, UI, CLI]),
        ("yarn workspaces foreach -W run build", ".", [ROOT, APP, CORE, UI, CLI]),
        ("yarn workspaces foreach --worktree run build", UI, [UI]),
        ("yarn workspaces foreach -A build", ".", [ROOT, APP, CORE, UI, CLI]),
    ],
)
def test_yarn_foreach(command: str, directory: str, selected: list[str]) -> None:
    invocation = parse(YARN_REPO, command, directory)
    assert script_targets(invocation) == [(d, "build", False) for d in selected]


@pytest.mark.parametrize(
    ("repo", "command", "directory", "reason"),
    [
        (YARN_REPO, "yarn workspaces foreach run build", ".", UNRESOLVED_FOREACH_SCOPE),
        (YARN_REPO, "yarn workspaces foreach -p run build", ".", UNRESOLVED_FOREACH_SCOPE),
        (YARN_REPO, "yarn workspaces foreach --since -R run build", ".", UNRESOLVED_CHANGED_SINCE),
        (
            YARN_REPO,
            "yarn workspaces foreach --since=main run build",
            ".",
            UNRESOLVED_CHANGED_SINCE,
        ),
        (YARN_REPO, "yarn workspaces foreach -A --include $PKG run build", ".", UNRESOLVED_DYNAMIC),
        (YARN_REPO, "yarn workspaces foreach -A --from", ".", UNRESOLVED_MISSING_VALUE),
        (YARN_REPO, "yarn workspaces foreach -A run $SCRIPT", ".", UNRESOLVED_DYNAMIC),
        (
            YARN_REPO,
            "yarn workspaces foreach -R run build",
            "examples/demo",
            UNRESOLVED_CWD_WORKSPACE,
        ),
        (YARN_REPO, "yarn workspace nope build", ".", UNRESOLVED_UNKNOWN_PACKAGE),
        (YARN_REPO, "yarn workspace $WS build", ".", UNRESOLVED_DYNAMIC),
        (YARN_REPO, "yarn --cwd $DIR build", ".", UNRESOLVED_DYNAMIC),
        (YARN_REPO, "yarn $SCRIPT", ".", UNRESOLVED_DYNAMIC),
        (SINGLE_REPO, "yarn workspace a build", ".", UNRESOLVED_NO_WORKSPACE),
        (SINGLE_REPO, "yarn workspaces foreach -A run build", ".", UNRESOLVED_NO_WORKSPACE),
        (SINGLE_REPO, "yarn workspaces run build", ".", UNRESOLVED_NO_WORKSPACE),
    ],
)
def test_yarn_unresolved(
    repo: Mapping[str, str], command: str, directory: str, reason: str
) -> None:
    invocation = parse(repo, command, directory)
    assert invocation.unresolved == reason
    assert invocation.targets == ()


@pytest.mark.parametrize(
    "command",
    [
        "yarn workspaces foreach -A --dry-run run build",
        "yarn workspaces foreach -A npm publish --tolerate-republish",
        "yarn workspaces foreach -A",
        "yarn workspaces",
        "yarn workspace @acme/ui",
    ],
)
def test_yarn_workspace_commands_that_run_no_script(command: str) -> None:
    assert parse(YARN_REPO, command) == Invocation("yarn", ())


def test_yarn_classic_workspaces_run_every_member() -> None:
    invocation = parse(CLASSIC_REPO, "yarn workspaces run test --ci")
    assert invocation.targets == targets(["packages/mobile", "packages/web"], "test")
    assert parse(CLASSIC_REPO, "yarn workspace web start").targets == (
        target("packages/web", "start", False),
    )
