"""npm's workspace runs: ``--workspace``, ``--workspaces`` and ``--include-workspace-root``."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from package_manager_repos import (
    NPM_REPO,
    ROOT,
    SINGLE_REPO,
    A,
    B,
    C,
    parse,
    script_targets,
)

from jev_select.core.evidence.package_managers import (
    UNRESOLVED_DIRECTORY,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_MISSING_VALUE,
    UNRESOLVED_NO_WORKSPACE,
    UNRESOLVED_UNKNOWN_PACKAGE,
)

# --------------------------------------------------------------------------------------------
# npm workspaces
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "directory", "expected"),
    [
        ("npm run build -w a", ".", [(A, "build", True)]),
        ("npm run build --workspace a", ".", [(A, "build", True)]),
        ("npm run build --workspace=packages/b", ".", [(B, "build", True)]),
        ("npm -w @scope/b test", ".", [(B, "test", True)]),
        ("npm run build -w a -w @scope/b", ".", [(A, "build", True), (B, "build", True)]),
        (
            "npm run build -w packages",
            ".",
            [(A, "build", True), (B, "build", True), (C, "build", True)],
        ),
        ("npm run build -w ./packages/c/", ".", [(C, "build", True)]),
        ("npm run build -w a", A, [(A, "build", True)]),  # relative to the workspace root
        ("npm test --workspaces", ".", [(A, "test", True), (B, "test", True), (C, "test", True)]),
        (
            "npm test -ws --if-present",
            ".",
            [(A, "test", False), (B, "test", False), (C, "test", False)],
        ),
        (
            "npm run lint --workspaces --include-workspace-root",
            ".",
            [(ROOT, "lint", True), (A, "lint", True), (B, "lint", True), (C, "lint", True)],
        ),
        (
            "npm run lint -w c --include-workspace-root",
            ".",
            [(ROOT, "lint", True), (C, "lint", True)],
        ),
        ("npm run lint --workspaces=false", ".", [(ROOT, "lint", True)]),
        ("npm run lint", "packages/a/src", [(A, "lint", True)]),
    ],
)
def test_npm_workspaces(
    command: str, directory: str, expected: list[tuple[str, str, bool]]
) -> None:
    assert script_targets(parse(NPM_REPO, command, directory)) == expected


@pytest.mark.parametrize(
    ("repo", "command", "reason"),
    [
        (NPM_REPO, "npm run build -w nope", UNRESOLVED_UNKNOWN_PACKAGE),
        (NPM_REPO, "npm run build -w", UNRESOLVED_MISSING_VALUE),
        (NPM_REPO, "npm run build -w $PKG", UNRESOLVED_DYNAMIC),
        (NPM_REPO, "npm run $SCRIPT", UNRESOLVED_DYNAMIC),
        (NPM_REPO, "npm $COMMAND", UNRESOLVED_DYNAMIC),
        (NPM_REPO, "npm --prefix $DIR test", UNRESOLVED_DYNAMIC),
        (NPM_REPO, "npm --prefix ../elsewhere test", UNRESOLVED_DIRECTORY),
        (SINGLE_REPO, "npm run build --workspaces", UNRESOLVED_NO_WORKSPACE),
        (SINGLE_REPO, "npm test -w a", UNRESOLVED_NO_WORKSPACE),
    ],
)
def test_npm_unresolved(repo: Mapping[str, str], command: str, reason: str) -> None:
    invocation = parse(repo, command)
    assert invocation.unresolved == reason
    assert invocation.targets == ()
