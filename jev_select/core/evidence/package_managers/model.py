"""What a package-manager command runs: the records ``parse_invocation`` answers with, the fixed
reasons of an unresolved one, and the exception a parser gives up with (docs/reference.md,
"Package scripts"). Pure.
"""

from __future__ import annotations

from typing import Final

import attrs

from ....errors import JevSelectError

__all__ = [
    "UNRESOLVED_CHANGED_SINCE",
    "UNRESOLVED_CWD_WORKSPACE",
    "UNRESOLVED_DIRECTORY",
    "UNRESOLVED_DYNAMIC",
    "UNRESOLVED_FOREACH_SCOPE",
    "UNRESOLVED_MISSING_VALUE",
    "UNRESOLVED_NESTED_SEVERAL",
    "UNRESOLVED_NO_WORKSPACE",
    "UNRESOLVED_SELECTOR",
    "UNRESOLVED_UNKNOWN_PACKAGE",
    "UNRESOLVED_WORKSPACE_PROBLEM",
    "Invocation",
    "ScriptTarget",
    "Unresolvable",
]


@attrs.frozen
class ScriptTarget:
    """One script a command may run.

    ``required``: True when the absence of the script is a gap (an explicit ``run``, a single
    named package, npm everywhere without ``--if-present``); False when absence is fine (the tool
    falls back to a binary of that name, or a multi-package run skips packages without it).
    """

    manifest: str
    directory: str
    name: str
    required: bool


@attrs.frozen
class Invocation:
    """What one package-manager command runs.

    ``tool`` is npm, pnpm, yarn or bun (``npx`` is npm, ``pnpx`` pnpm, ``bunx`` bun, ``yarnpkg``
    yarn). ``targets`` are in the documented order. ``unresolved`` is one of the
    ``UNRESOLVED_*`` texts when the package(s) or directory cannot be decided from the
    repository; ``over_bound`` the number of packages selected when more than
    ``c.WORKSPACE_SELECTION_MAX`` were (``targets`` is then empty); ``nested`` the words of a
    command this one runs in turn, starting with a package-manager word, for the caller to
    resolve again in ``nested_directory``. ``name`` is the script the command runs (the first,
    for a command that runs several), kept with ``over_bound`` for the gap's detail.
    """

    tool: str
    targets: tuple[ScriptTarget, ...]
    unresolved: str | None = None
    over_bound: int | None = None
    nested: tuple[str, ...] | None = None
    nested_directory: str | None = None
    name: str | None = None


# Why an invocation is unresolved. Fixed texts: no word of the command is ever echoed.
UNRESOLVED_DYNAMIC: Final = "dynamic word where a script, directory or selector is expected"
UNRESOLVED_CHANGED_SINCE: Final = "packages selected by changes since a git ref"
UNRESOLVED_DIRECTORY: Final = "directory outside the repository"
UNRESOLVED_MISSING_VALUE: Final = "option without its value"
UNRESOLVED_NO_WORKSPACE: Final = "workspace selection outside any workspace"
UNRESOLVED_UNKNOWN_PACKAGE: Final = "named workspace package not found"
UNRESOLVED_SELECTOR: Final = "unsupported package selector"
UNRESOLVED_FOREACH_SCOPE: Final = "yarn workspaces foreach without --all, --recursive or --worktree"
UNRESOLVED_NESTED_SEVERAL: Final = "nested package-manager command runs in several packages"
UNRESOLVED_CWD_WORKSPACE: Final = "directory belongs to no workspace package"
UNRESOLVED_WORKSPACE_PROBLEM: Final = "workspace problem: "  # followed by the problem's reason


class Unresolvable(JevSelectError):
    """Raised inside a parser to give up with one of the ``UNRESOLVED_*`` reasons."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
