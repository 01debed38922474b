"""yarn's command line, classic and berry (classic.yarnpkg.com/en/docs/cli, yarnpkg.com/cli):
``run`` and implicit script names, ``--cwd``, ``yarn workspace``, ``yarn workspaces foreach`` and
classic ``yarn workspaces run`` (docs/reference.md, "Package scripts"). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import attrs

from .... import contracts as c
from ..workspaces import WorkspaceIndex, WorkspacePackage, is_within
from .builtins import BUILTIN_COMMANDS, RUN_WORD, YARN
from .common import (
    directory_option,
    dynamic,
    exec_in,
    find_workspace,
    glob_matcher,
    nested_command,
    ordered,
    script_word,
    single,
    unresolved_invocation,
)
from .model import (
    UNRESOLVED_CHANGED_SINCE,
    UNRESOLVED_CWD_WORKSPACE,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_FOREACH_SCOPE,
    UNRESOLVED_MISSING_VALUE,
    UNRESOLVED_NESTED_SEVERAL,
    UNRESOLVED_NO_WORKSPACE,
    UNRESOLVED_UNKNOWN_PACKAGE,
    Invocation,
    ScriptTarget,
    Unresolvable,
)
from .options import YARN_FOREACH_VALUE_OPTIONS, YARN_VALUE_OPTIONS, scan_leading

__all__ = ["parse_yarn"]


def _yarn_directory(options: Iterable[tuple[str, str | None]], directory: str) -> str:
    for name, value in options:
        if name == "--cwd":
            directory = directory_option(directory, value)
    return directory


def _yarn_each(
    packages: Sequence[WorkspacePackage],
    words: Sequence[str],
    index: WorkspaceIndex,
) -> Invocation:
    """``words`` as a yarn command in each package; a missing script is skipped there."""
    if not packages:
        return Invocation(YARN, ())
    if len(packages) > c.WORKSPACE_SELECTION_MAX:
        # The command reads the same in every package: the first tells the script's name.
        probe = parse_yarn(words, packages[0].directory, index)
        return Invocation(YARN, (), over_bound=len(packages), name=probe.name)
    targets: list[ScriptTarget] = []
    nested: list[Invocation] = []
    name: str | None = None
    for package in packages:
        found = parse_yarn(words, package.directory, index)
        if found.unresolved is not None or found.over_bound is not None:
            return found
        targets.extend(attrs.evolve(target, required=False) for target in found.targets)
        name = name or found.name
        if found.nested is not None:
            nested.append(found)
    if len(nested) > 1:
        return unresolved_invocation(YARN, UNRESOLVED_NESTED_SEVERAL)
    return Invocation(
        YARN,
        tuple(targets),
        nested=nested[0].nested if nested else None,
        nested_directory=nested[0].nested_directory if nested else None,
        name=name,
    )


def _yarn_script(
    word: str, arguments: Sequence[str], directory: str, index: WorkspaceIndex
) -> Invocation:
    """A word that names a script or, failing that, a binary (yarn falls back to both)."""
    if dynamic(word):
        raise Unresolvable(UNRESOLVED_DYNAMIC)
    name = script_word(word)
    if name is None:
        return Invocation(YARN, ())
    package = index.package_directory(directory)
    return single(
        YARN, package, (name,), False, nested=nested_command(arguments), nested_directory=directory
    )


def parse_yarn(words: Sequence[str], directory: str, index: WorkspaceIndex) -> Invocation:
    scanned = scan_leading(words, YARN_VALUE_OPTIONS)
    if scanned.missing_value:
        raise Unresolvable(UNRESOLVED_MISSING_VALUE)
    directory = _yarn_directory(scanned.options, directory)
    if not scanned.rest:
        return Invocation(YARN, ())  # a bare yarn installs
    command, rest = scanned.rest[0], scanned.rest[1:]
    if dynamic(command):
        raise Unresolvable(UNRESOLVED_DYNAMIC)
    if command == RUN_WORD:
        run = scan_leading(rest, YARN_VALUE_OPTIONS)
        if run.missing_value:
            raise Unresolvable(UNRESOLVED_MISSING_VALUE)
        flags = {name for name, _ in run.options}
        if not run.rest:
            return Invocation(YARN, ())  # lists the scripts
        if flags & {"-B", "--binaries-only"}:
            return exec_in(YARN, run.rest, [directory])
        if flags & {"-T", "--top-level"}:
            # berry: the project's top-level workspace instead of the current one.
            workspace = find_workspace(index, directory, YARN)
            if workspace is not None:
                directory = workspace.root.directory
        return _yarn_script(run.rest[0], run.rest[1:], directory, index)
    if command == "workspace":
        if not rest:
            return Invocation(YARN, ())
        if dynamic(rest[0]):
            raise Unresolvable(UNRESOLVED_DYNAMIC)
        workspace = find_workspace(index, directory, YARN)
        if workspace is None:
            raise Unresolvable(UNRESOLVED_NO_WORKSPACE)
        package = workspace.by_name(rest[0])
        if package is None:
            raise Unresolvable(UNRESOLVED_UNKNOWN_PACKAGE)
        return parse_yarn(rest[1:], package.directory, index)
    if command == "workspaces":
        if rest[:1] == ("foreach",):
            return _yarn_foreach(rest[1:], directory, index)
        if rest[:1] == (RUN_WORD,):
            # yarn classic: ``yarn run <rest>`` in every member, the root left out.
            workspace = find_workspace(index, directory, YARN)
            if workspace is None:
                raise Unresolvable(UNRESOLVED_NO_WORKSPACE)
            if len(rest) < 2:
                return Invocation(YARN, ())
            return _yarn_each(workspace.members, (RUN_WORD, *rest[1:]), index)
        return Invocation(YARN, ())
    if command in ("exec", "dlx"):
        execed = scan_leading(rest, YARN_VALUE_OPTIONS)
        if execed.missing_value:
            raise Unresolvable(UNRESOLVED_MISSING_VALUE)
        return exec_in(YARN, execed.rest, [directory])
    if command in BUILTIN_COMMANDS[YARN]:
        return Invocation(YARN, ())
    return _yarn_script(command, rest, directory, index)


def _yarn_foreach(words: Sequence[str], directory: str, index: WorkspaceIndex) -> Invocation:
    """berry's ``yarn workspaces foreach`` (yarnpkg.com/cli/workspaces/foreach)."""
    scanned = scan_leading(words, YARN_FOREACH_VALUE_OPTIONS, clusters=True)
    if scanned.missing_value:
        raise Unresolvable(UNRESOLVED_MISSING_VALUE)
    flags = {name for name, _ in scanned.options}
    values: dict[str, list[str]] = {"--from": [], "--include": [], "--exclude": []}
    for name, value in scanned.options:
        if name in values and value is not None:
            if dynamic(value):
                raise Unresolvable(UNRESOLVED_DYNAMIC)
            values[name].append(value)
    if "--since" in flags:
        raise Unresolvable(UNRESOLVED_CHANGED_SINCE)
    if flags & {"-n", "--dry-run"} or not scanned.rest:
        return Invocation(YARN, ())
    every = bool(flags & {"-A", "--all", "-a"})
    recursive = bool(flags & {"-R", "--recursive"})
    worktree = bool(flags & {"-W", "--worktree"})
    if not (every or recursive or worktree):
        # yarn 4 refuses this; yarn 3 took the worktree. Either way it cannot be decided here.
        raise Unresolvable(UNRESOLVED_FOREACH_SCOPE)
    workspace = find_workspace(index, directory, YARN)
    if workspace is None:
        raise Unresolvable(UNRESOLVED_NO_WORKSPACE)

    def matches(patterns: Sequence[str]) -> Callable[[WorkspacePackage], bool]:
        # An ident or a directory relative to the project root, as berry matches both.
        match = glob_matcher(patterns)
        return lambda package: (
            (package.name is not None and match(package.name))
            or match(workspace.relative_directory(package))
        )

    selection: list[WorkspacePackage]
    if every:
        selection = list(workspace.packages)
    else:
        if values["--from"]:
            start = matches(values["--from"])
            selection = [package for package in workspace.packages if start(package)]
        else:
            # berry's current workspace is the one whose manifest is the nearest above.
            current = workspace.by_directory(index.package_directory(directory))
            if current is None:
                raise Unresolvable(UNRESOLVED_CWD_WORKSPACE)
            selection = [current]
        extra: list[WorkspacePackage] = []
        if recursive:
            extra.extend(workspace.reachable(selection))
        if worktree:
            # The nested workspaces of each selected one; the root's are every member.
            extra.extend(
                package
                for chosen in selection
                for package in workspace.members
                if package.directory != chosen.directory
                and is_within(package.directory, chosen.directory)
            )
        selection.extend(extra)
    if values["--include"]:
        keep = matches(values["--include"])
        selection = [package for package in selection if keep(package)]
    if values["--exclude"]:
        drop = matches(values["--exclude"])
        selection = [package for package in selection if not drop(package)]
    return _yarn_each(ordered(workspace, (p.directory for p in selection)), scanned.rest, index)
