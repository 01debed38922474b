"""npm's command line (docs.npmjs.com/cli/commands): options anywhere before ``--``, the run and
fixed-name commands, ``exec``, ``--prefix`` and the workspace options (docs/reference.md,
"Package scripts"). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import attrs

from ..workspaces import WorkspaceIndex, WorkspacePackage, is_within
from .builtins import FIXED_SCRIPTS, NPM, NPM_EXEC_WORDS, NPM_RUN_WORDS
from .common import (
    directory_option,
    dynamic,
    exec_in,
    find_workspace,
    join_directory,
    multi,
    ordered,
    script_word,
    single,
)
from .model import (
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_MISSING_VALUE,
    UNRESOLVED_NO_WORKSPACE,
    UNRESOLVED_UNKNOWN_PACKAGE,
    Invocation,
    Unresolvable,
)
from .options import NPM_VALUE_OPTIONS, scan_anywhere, scan_leading

__all__ = ["parse_npm"]

_FALSE_WORDS: Final = frozenset({"false", "0", ""})


@attrs.frozen
class _NpmScope:
    directory: str
    prefix: bool = False
    workspaces: tuple[str, ...] = ()
    all_workspaces: bool = False
    include_root: bool = False
    if_present: bool = False


def _apply_npm(scope: _NpmScope, options: Iterable[tuple[str, str | None]]) -> _NpmScope:
    for name, value in options:
        if name in ("--prefix", "-C"):
            directory = directory_option(scope.directory, value)
            scope = attrs.evolve(scope, directory=directory, prefix=True)
        elif name in ("--workspace", "-w"):
            if value is None:
                raise Unresolvable(UNRESOLVED_MISSING_VALUE)
            if dynamic(value):
                raise Unresolvable(UNRESOLVED_DYNAMIC)
            scope = attrs.evolve(scope, workspaces=(*scope.workspaces, value))
        elif name in ("--workspaces", "-ws"):
            enabled = value is None or value.lower() not in _FALSE_WORDS
            scope = attrs.evolve(scope, all_workspaces=enabled)
        elif name == "--no-workspaces":
            scope = attrs.evolve(scope, all_workspaces=False)
        elif name == "--include-workspace-root":
            scope = attrs.evolve(scope, include_root=True)
        elif name == "--if-present":
            scope = attrs.evolve(scope, if_present=True)
    return scope


def _npm_selected(scope: _NpmScope, index: WorkspaceIndex) -> tuple[WorkspacePackage, ...] | None:
    """The workspace packages npm's workspace options select; None when there are none."""
    if not scope.workspaces and not scope.all_workspaces:
        return None
    workspace = find_workspace(index, scope.directory, NPM)
    if workspace is None:
        raise Unresolvable(UNRESOLVED_NO_WORKSPACE)
    chosen: set[str] = set()
    if scope.all_workspaces:
        chosen.update(member.directory for member in workspace.members)
    for value in scope.workspaces:
        # A name, or a path (from the workspace root) to a member or to a directory of members.
        path = join_directory(workspace.root.directory, value)
        matches = [
            member.directory
            for member in workspace.members
            if member.name == value or (path is not None and is_within(member.directory, path))
        ]
        if not matches:
            raise Unresolvable(UNRESOLVED_UNKNOWN_PACKAGE)
        chosen.update(matches)
    if scope.include_root:
        chosen.add(workspace.root.directory)
    return ordered(workspace, chosen)


def parse_npm(words: Sequence[str], directory: str, index: WorkspaceIndex) -> Invocation:
    leading = scan_leading(words, NPM_VALUE_OPTIONS)
    if leading.missing_value:
        raise Unresolvable(UNRESOLVED_MISSING_VALUE)
    if not leading.rest:
        return Invocation(NPM, ())
    command = leading.rest[0]
    if dynamic(command):
        raise Unresolvable(UNRESOLVED_DYNAMIC)
    if command in NPM_EXEC_WORDS:
        # The binary's own words start at the first positional: npm reads no option after it.
        execed = scan_leading(leading.rest[1:], NPM_VALUE_OPTIONS)
        if execed.missing_value:
            raise Unresolvable(UNRESOLVED_MISSING_VALUE)
        scope = _apply_npm(_NpmScope(directory), (*leading.options, *execed.options))
        selected = _npm_selected(scope, index)
        directories = [scope.directory] if selected is None else [p.directory for p in selected]
        return exec_in(NPM, execed.rest, directories)
    fixed = FIXED_SCRIPTS[NPM].get(command)
    if command not in NPM_RUN_WORDS and fixed is None:
        return Invocation(NPM, ())
    remaining = scan_anywhere(leading.rest[1:], NPM_VALUE_OPTIONS)
    if remaining.missing_value:
        raise Unresolvable(UNRESOLVED_MISSING_VALUE)
    scope = _apply_npm(_NpmScope(directory), (*leading.options, *remaining.options))
    if fixed is not None:
        names, required = fixed
    else:
        if not remaining.rest:
            return Invocation(NPM, ())  # lists the scripts
        word = remaining.rest[0]
        if dynamic(word):
            raise Unresolvable(UNRESOLVED_DYNAMIC)
        name = script_word(word)
        if name is None:
            return Invocation(NPM, ())
        names, required = (name,), True
    required = required and not scope.if_present
    selected = _npm_selected(scope, index)
    if selected is not None:
        return multi(NPM, selected, names, required)
    # --prefix names the package directory outright; otherwise npm looks upwards.
    package = scope.directory if scope.prefix else index.package_directory(scope.directory)
    return single(NPM, package, names, required)
