"""bun's command line (bun.sh/docs/cli): ``run`` and implicit names for scripts, files and
binaries, ``x``, ``--cwd``, ``--filter`` and ``--workspaces`` (docs/reference.md, "Package
scripts"). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import attrs
from wcmatch import fnmatch as wcfnmatch

from ..workspaces import WorkspaceIndex, WorkspacePackage
from .builtins import BUILTIN_COMMANDS, BUN, RUN_WORD
from .common import (
    directory_glob_matches,
    directory_option,
    dynamic,
    exec_in,
    find_subtree,
    find_workspace,
    is_location,
    join_directory,
    multi,
    nested_command,
    ordered,
    script_word,
    single,
)
from .model import (
    UNRESOLVED_DIRECTORY,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_MISSING_VALUE,
    Invocation,
    Unresolvable,
)
from .options import BUN_CODE_OPTIONS, BUN_VALUE_OPTIONS, BUNX_VALUE_OPTIONS, scan_leading

__all__ = ["parse_bun"]

_FNMATCH_FLAGS: Final = wcfnmatch.BRACE | wcfnmatch.EXTMATCH | wcfnmatch.FORCEUNIX


@attrs.frozen
class _BunScope:
    directory: str
    filters: tuple[str, ...] = ()
    all_workspaces: bool = False
    code: bool = False


def _apply_bun(scope: _BunScope, options: Iterable[tuple[str, str | None]]) -> _BunScope:
    for name, value in options:
        if name == "--cwd":
            scope = attrs.evolve(scope, directory=directory_option(scope.directory, value))
        elif name in ("--filter", "-F"):
            if value is None:
                raise Unresolvable(UNRESOLVED_MISSING_VALUE)
            if dynamic(value):
                raise Unresolvable(UNRESOLVED_DYNAMIC)
            scope = attrs.evolve(scope, filters=(*scope.filters, value))
        elif name == "--workspaces":
            scope = attrs.evolve(scope, all_workspaces=True)
        elif name in BUN_CODE_OPTIONS:
            scope = attrs.evolve(scope, code=True)
    return scope


def _bun_selected(scope: _BunScope, index: WorkspaceIndex) -> tuple[WorkspacePackage, ...]:
    """bun's ``--filter`` (bun.sh/docs/cli/filter) and ``--workspaces`` selection."""
    workspace = find_workspace(index, scope.directory, BUN)
    if workspace is None:
        # Without workspaces bun matches the packages in the directories below.
        workspace = find_subtree(index, scope.directory, BUN)
    base = workspace.members if scope.all_workspaces else workspace.packages
    included: set[str] = set()
    excluded: set[str] = set()
    has_inclusion = False
    for raw in scope.filters:
        exclude = raw.startswith("!")
        pattern = raw[1:] if exclude else raw
        if is_location(pattern):
            directory = join_directory(scope.directory, pattern)
            if directory is None:
                raise Unresolvable(UNRESOLVED_DIRECTORY)
            found = directory_glob_matches(directory, workspace.packages)
        else:
            found = [
                package
                for package in workspace.packages
                if package.name is not None
                and wcfnmatch.fnmatch(package.name, pattern, flags=_FNMATCH_FLAGS)
            ]
        target = excluded if exclude else included
        target.update(package.directory for package in found)
        has_inclusion = has_inclusion or not exclude
    chosen = {package.directory for package in base}
    if has_inclusion:
        chosen &= included
    return ordered(workspace, chosen - excluded)


def _bun_script(
    scope: _BunScope, word: str, arguments: Sequence[str], index: WorkspaceIndex
) -> Invocation:
    if dynamic(word):
        raise Unresolvable(UNRESOLVED_DYNAMIC)
    name = script_word(word)
    if name is None:
        return Invocation(BUN, ())
    nested = nested_command(arguments)
    if scope.filters or scope.all_workspaces:
        return multi(BUN, _bun_selected(scope, index), (name,), False, nested=nested)
    package = index.package_directory(scope.directory)
    return single(BUN, package, (name,), False, nested=nested, nested_directory=scope.directory)


def parse_bun(words: Sequence[str], directory: str, index: WorkspaceIndex) -> Invocation:
    value_options = BUN_VALUE_OPTIONS | BUN_CODE_OPTIONS
    scanned = scan_leading(words, value_options)
    if scanned.missing_value:
        raise Unresolvable(UNRESOLVED_MISSING_VALUE)
    scope = _apply_bun(_BunScope(directory), scanned.options)
    if scope.code or not scanned.rest:
        return Invocation(BUN, ())
    command, rest = scanned.rest[0], scanned.rest[1:]
    if dynamic(command):
        raise Unresolvable(UNRESOLVED_DYNAMIC)
    # bun picks its command from the first word not starting with "-". When that word is an
    # option's value (``bun --filter '*' build``), no built-in is chosen and the positional
    # word names a script, a file or a binary, as bun.sh/docs/cli/filter shows.
    first_plain = next((n for n, word in enumerate(words) if not word.startswith("-")), None)
    by_name = first_plain == len(words) - len(scanned.rest)
    if command == RUN_WORD:
        run = scan_leading(rest, value_options)
        if run.missing_value:
            raise Unresolvable(UNRESOLVED_MISSING_VALUE)
        scope = _apply_bun(scope, run.options)
        if scope.code or not run.rest:
            return Invocation(BUN, ())
        return _bun_script(scope, run.rest[0], run.rest[1:], index)
    if not by_name:
        return _bun_script(scope, command, rest, index)
    if command == "x":
        execed = scan_leading(rest, BUNX_VALUE_OPTIONS)
        if execed.missing_value:
            raise Unresolvable(UNRESOLVED_MISSING_VALUE)
        return exec_in(BUN, execed.rest, [scope.directory])
    if command in BUILTIN_COMMANDS[BUN]:
        return Invocation(BUN, ())
    return _bun_script(scope, command, rest, index)
