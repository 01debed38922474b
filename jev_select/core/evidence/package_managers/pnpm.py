"""pnpm's command line (pnpm.io/cli): the run, fixed-name and implicit script commands, ``exec``
and ``dlx``, ``--dir``, ``-w`` and the recursive and filtered runs over workspace packages
(docs/reference.md, "Package scripts"). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from ..workspaces import WorkspaceIndex, WorkspacePackage
from .builtins import (
    BUILTIN_COMMANDS,
    FIXED_SCRIPTS,
    PNPM,
    PNPM_RECURSIVE_WORDS,
    PNPM_ROOT_EXCLUDING,
    PNPM_RUN_WORDS,
)
from .common import (
    directory_option,
    dynamic,
    exec_in,
    find_subtree,
    find_workspace,
    multi,
    nested_command,
    ordered,
    script_word,
    single,
)
from .model import (
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_MISSING_VALUE,
    UNRESOLVED_NO_WORKSPACE,
    Invocation,
    Unresolvable,
)
from .options import PNPM_VALUE_OPTIONS, scan_leading
from .pnpm_filters import PnpmSelector, evaluate_selectors, parse_selector

__all__ = ["parse_pnpm"]


@attrs.frozen
class _PnpmScope:
    directory: str
    recursive: bool = False
    selectors: tuple[tuple[str, bool], ...] = ()  # (selector, production dependencies only)
    workspace_root: bool = False
    include_root: bool = False
    if_present: bool = False


def _apply_pnpm(scope: _PnpmScope, options: Iterable[tuple[str, str | None]]) -> _PnpmScope:
    for name, value in options:
        if name in ("--dir", "-C"):
            scope = attrs.evolve(scope, directory=directory_option(scope.directory, value))
        elif name in ("--filter", "-F", "--filter-prod"):
            if value is None:
                raise Unresolvable(UNRESOLVED_MISSING_VALUE)
            if dynamic(value):
                # Checked here, not when selecting: the words after a split expression must
                # not be read as the command.
                raise Unresolvable(UNRESOLVED_DYNAMIC)
            selector = (value, name == "--filter-prod")
            scope = attrs.evolve(scope, recursive=True, selectors=(*scope.selectors, selector))
        elif name in ("-r", "--recursive"):
            scope = attrs.evolve(scope, recursive=True)
        elif name in ("-w", "--workspace-root"):
            scope = attrs.evolve(scope, workspace_root=True)
        elif name == "--include-workspace-root":
            scope = attrs.evolve(scope, include_root=True)
        elif name == "--if-present":
            scope = attrs.evolve(scope, if_present=True)
    return scope


def _pnpm_selected(
    scope: _PnpmScope, index: WorkspaceIndex, *, root_excluding: bool
) -> tuple[WorkspacePackage, ...]:
    """The packages a recursive (or ``-w``) pnpm command runs in."""
    workspace = find_workspace(index, scope.directory, PNPM)
    in_workspace = workspace is not None
    if workspace is None:
        if scope.workspace_root:
            raise Unresolvable(UNRESOLVED_NO_WORKSPACE)
        # Outside a workspace pnpm's recursive mode takes every package below the directory
        # it runs in, that directory's own included.
        workspace = find_subtree(index, scope.directory, PNPM)
    if not scope.recursive:
        return (workspace.root,)
    groups: dict[bool, list[PnpmSelector]] = {False: [], True: []}
    for raw, production in scope.selectors:
        groups[production].append(parse_selector(raw, scope.directory))
    if scope.workspace_root:
        groups[bool(groups[True])].append(PnpmSelector(exclude=False, root=True))
    everything = {package.directory for package in workspace.packages}
    chosen: set[str] = set()
    if not groups[False] and not groups[True]:
        chosen = set(everything)
    for production, selectors in groups.items():
        if not selectors:
            continue
        included = [selector for selector in selectors if not selector.exclude]
        excluded = [selector for selector in selectors if selector.exclude]
        picked = (
            evaluate_selectors(workspace, included, production=production)
            if included
            else set(everything)
        )
        chosen |= picked - evaluate_selectors(workspace, excluded, production=production)
    has_inclusion = any(not selector.exclude for group in groups.values() for selector in group)
    if (
        in_workspace
        and root_excluding
        and not has_inclusion
        and not scope.include_root
        and not workspace.root_only
    ):
        chosen.discard(workspace.root.directory)
    return ordered(workspace, chosen)


def _pnpm_scripts(
    scope: _PnpmScope,
    index: WorkspaceIndex,
    names: Sequence[str],
    required: bool,
    *,
    root_excluding: bool,
    arguments: Sequence[str] = (),
    may_be_binary: bool = False,
) -> Invocation:
    required = required and not scope.if_present
    nested = nested_command(arguments) if may_be_binary else None
    if not scope.recursive and not scope.workspace_root:
        package = index.package_directory(scope.directory)
        return single(
            PNPM, package, names, required, nested=nested, nested_directory=scope.directory
        )
    selected = _pnpm_selected(scope, index, root_excluding=root_excluding)
    if not scope.recursive:
        root = selected[0].directory
        return single(PNPM, root, names, required, nested=nested, nested_directory=root)
    return multi(PNPM, selected, names, False, nested=nested)


def parse_pnpm(words: Sequence[str], directory: str, index: WorkspaceIndex) -> Invocation:
    scope = _PnpmScope(directory)
    rest: tuple[str, ...] = tuple(words)
    while True:
        scanned = scan_leading(rest, PNPM_VALUE_OPTIONS)
        if scanned.missing_value:
            raise Unresolvable(UNRESOLVED_MISSING_VALUE)
        scope = _apply_pnpm(scope, scanned.options)
        if not scanned.rest:
            return Invocation(PNPM, ())
        command = scanned.rest[0]
        if dynamic(command):
            raise Unresolvable(UNRESOLVED_DYNAMIC)
        rest = scanned.rest[1:]
        if command not in PNPM_RECURSIVE_WORDS:
            break
        scope = attrs.evolve(scope, recursive=True)
    if command in ("exec", "dlx"):
        execed = scan_leading(rest, PNPM_VALUE_OPTIONS)
        if execed.missing_value:
            raise Unresolvable(UNRESOLVED_MISSING_VALUE)
        scope = _apply_pnpm(scope, execed.options)
        if command == "dlx" or not (scope.recursive or scope.workspace_root):
            # dlx always runs where pnpm was started.
            return exec_in(PNPM, execed.rest, [scope.directory])
        selected = _pnpm_selected(scope, index, root_excluding=True)
        return exec_in(PNPM, execed.rest, [package.directory for package in selected])
    if command in PNPM_RUN_WORDS:
        run = scan_leading(rest, PNPM_VALUE_OPTIONS)
        if run.missing_value:
            raise Unresolvable(UNRESOLVED_MISSING_VALUE)
        scope = _apply_pnpm(scope, run.options)
        if not run.rest:
            return Invocation(PNPM, ())  # lists the scripts
        if dynamic(run.rest[0]):
            raise Unresolvable(UNRESOLVED_DYNAMIC)
        name = script_word(run.rest[0])
        if name is None:
            return Invocation(PNPM, ())
        return _pnpm_scripts(scope, index, (name,), True, root_excluding=True)
    fixed = FIXED_SCRIPTS[PNPM].get(command)
    if fixed is not None:
        names, required = fixed
        return _pnpm_scripts(
            scope, index, names, required, root_excluding=command in PNPM_ROOT_EXCLUDING
        )
    if command in BUILTIN_COMMANDS[PNPM]:
        return Invocation(PNPM, ())
    name = script_word(command)
    if name is None:
        return Invocation(PNPM, ())
    # pnpm runs the script of that name or, when there is none, a binary of that name.
    return _pnpm_scripts(
        scope, index, (name,), False, root_excluding=True, arguments=rest, may_be_binary=True
    )
