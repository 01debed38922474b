"""bun's workspace runs: ``--filter`` and ``--workspaces``."""

from __future__ import annotations

import pytest
from package_manager_repos import (
    BUN_REPO,
    ROOT,
    SINGLE_REPO,
    parse,
    script_targets,
    target,
)

from jev_select.core.evidence.package_managers import (
    UNRESOLVED_DIRECTORY,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_MISSING_VALUE,
)

# --------------------------------------------------------------------------------------------
# bun workspaces
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "directory", "selected"),
    [
        ("bun run --filter 'pkg-*' build", ".", ["packages/pkg-a", "packages/pkg-b"]),
        ("bun --filter 'pkg-*' build", ".", ["packages/pkg-a", "packages/pkg-b"]),
        ("bun -F pkg-a build", "packages/other", ["packages/pkg-a"]),
        (
            "bun --filter '*' build",
            ".",
            [ROOT, "packages/other", "packages/pkg-a", "packages/pkg-b"],
        ),
        (
            "bun --filter './packages/*' build",
            ".",
            ["packages/other", "packages/pkg-a", "packages/pkg-b"],
        ),
        ("bun --filter ./packages/other build", ".", ["packages/other"]),
        ("bun --filter '!pkg-b' build", ".", [ROOT, "packages/other", "packages/pkg-a"]),
        (
            "bun --filter '!./' --filter './packages/*' build",
            ".",
            ["packages/other", "packages/pkg-a", "packages/pkg-b"],
        ),
        ("bun run --workspaces build", ".", ["packages/other", "packages/pkg-a", "packages/pkg-b"]),
        ("bun --filter nothing build", ".", []),
        ("bun --cwd packages/pkg-a build", ".", ["packages/pkg-a"]),
        (
            "bun --cwd packages run --filter 'pkg-*' build",
            ".",
            ["packages/pkg-a", "packages/pkg-b"],
        ),
    ],
)
def test_bun_filters(command: str, directory: str, selected: list[str]) -> None:
    assert script_targets(parse(BUN_REPO, command, directory)) == [
        (d, "build", False) for d in selected
    ]


def test_bun_filter_without_workspaces_takes_the_packages_below() -> None:
    invocation = parse(SINGLE_REPO, "bun --filter gen run build")
    assert invocation.targets == (target("tools/gen", "build", False),)


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("bun --filter $PKG build", UNRESOLVED_DYNAMIC),
        ("bun --filter", UNRESOLVED_MISSING_VALUE),
        ("bun --cwd ../.. run build", UNRESOLVED_DIRECTORY),
        ("bun run $SCRIPT", UNRESOLVED_DYNAMIC),
    ],
)
def test_bun_unresolved(command: str, reason: str) -> None:
    assert parse(BUN_REPO, command).unresolved == reason
