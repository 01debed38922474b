"""What the package-manager parsers share: reading words and directories, finding workspaces and
matching packages, and building the ``Invocation`` (docs/reference.md, "Package scripts"). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from wcmatch import glob as wcglob

from .... import contracts as c
from ..files import is_dynamic
from ..workspaces import (
    GLOB_FLAGS,
    ROOT_DIRECTORY,
    Workspace,
    WorkspaceIndex,
    WorkspacePackage,
    WorkspaceProblem,
    manifest_path,
)
from .builtins import ENTRY_WORDS
from .model import (
    UNRESOLVED_DIRECTORY,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_MISSING_VALUE,
    UNRESOLVED_NESTED_SEVERAL,
    UNRESOLVED_SELECTOR,
    UNRESOLVED_WORKSPACE_PROBLEM,
    Invocation,
    ScriptTarget,
    Unresolvable,
)

__all__ = [
    "directory_glob_matches",
    "directory_option",
    "dynamic",
    "exec_in",
    "find_subtree",
    "find_workspace",
    "glob_matcher",
    "is_location",
    "join_directory",
    "multi",
    "nested_command",
    "ordered",
    "script_word",
    "single",
    "unresolved_invocation",
]


# --------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------


def dynamic(word: str) -> bool:
    return "$" in word or "`" in word or is_dynamic(word)


def script_word(word: str) -> str | None:
    """The script a word names, or None when it names a file (``./x.js``, ``index.ts``)."""
    if not word or "/" in word or "\\" in word or "." in word:
        return None
    return word


def join_directory(base: str, relative: str) -> str | None:
    """``relative`` resolved against the directory ``base``; None outside the repository."""
    if relative.startswith(("/", "~")) or "\\" in relative or "\0" in relative:
        return None
    segments = [] if base == ROOT_DIRECTORY else base.split("/")
    for segment in relative.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not segments:
                return None
            segments.pop()
        else:
            segments.append(segment)
    return "/".join(segments) or ROOT_DIRECTORY


def nested_command(words: Sequence[str]) -> tuple[str, ...] | None:
    """The words from the first package-manager word on, or None when there is none."""
    for position, word in enumerate(words):
        if word in ENTRY_WORDS:
            return tuple(words[position:])
    return None


def is_location(selector: str) -> bool:
    """pnpm's test for a selector by location: ``.``, ``..`` or a path starting with them."""
    return selector in (".", "..") or selector.startswith(("./", ".\\", "../", "..\\"))


# --------------------------------------------------------------------------------------------
# Building invocations
# --------------------------------------------------------------------------------------------


def unresolved_invocation(tool: str, reason: str) -> Invocation:
    return Invocation(tool, (), unresolved=reason)


def single(
    tool: str,
    directory: str,
    names: Sequence[str],
    required: bool,
    *,
    nested: tuple[str, ...] | None = None,
    nested_directory: str | None = None,
) -> Invocation:
    targets = tuple(ScriptTarget(manifest_path(directory), directory, n, required) for n in names)
    return Invocation(
        tool,
        targets,
        nested=nested,
        nested_directory=nested_directory if nested is not None else None,
        name=names[0] if names else None,
    )


def multi(
    tool: str,
    packages: Sequence[WorkspacePackage],
    names: Sequence[str],
    required: bool,
    *,
    nested: tuple[str, ...] | None = None,
) -> Invocation:
    """Targets in every package, in the order given (root first, then by directory)."""
    name = names[0] if names else None
    if len(packages) > c.WORKSPACE_SELECTION_MAX:
        return Invocation(tool, (), over_bound=len(packages), name=name)
    if nested is not None and len(packages) > 1:
        return unresolved_invocation(tool, UNRESOLVED_NESTED_SEVERAL)
    targets = tuple(
        ScriptTarget(package.manifest, package.directory, script, required)
        for package in packages
        for script in names
    )
    directory = packages[0].directory if packages and nested is not None else None
    return Invocation(
        tool, targets, nested=nested if packages else None, nested_directory=directory, name=name
    )


def exec_in(tool: str, binary: Sequence[str], directories: Sequence[str]) -> Invocation:
    """A binary run in each of ``directories``: its nested command, if any, for the caller."""
    nested = nested_command(binary)
    if nested is None or not directories:
        return Invocation(tool, ())
    if len(directories) > 1:
        return unresolved_invocation(tool, UNRESOLVED_NESTED_SEVERAL)
    return Invocation(tool, (), nested=nested, nested_directory=directories[0])


def ordered(workspace: Workspace, directories: Iterable[str]) -> tuple[WorkspacePackage, ...]:
    chosen = set(directories)
    return tuple(package for package in workspace.packages if package.directory in chosen)


def directory_option(base: str, value: str | None) -> str:
    """A directory option's value resolved against ``base``, or the reason it cannot be."""
    if value is None:
        raise Unresolvable(UNRESOLVED_MISSING_VALUE)
    if dynamic(value):
        raise Unresolvable(UNRESOLVED_DYNAMIC)
    joined = join_directory(base, value)
    if joined is None:
        raise Unresolvable(UNRESOLVED_DIRECTORY)
    return joined


def find_workspace(index: WorkspaceIndex, directory: str, tool: str) -> Workspace | None:
    found = index.for_directory(directory, tool)
    if isinstance(found, WorkspaceProblem):
        raise Unresolvable(UNRESOLVED_WORKSPACE_PROBLEM + found.reason)
    return found


def find_subtree(index: WorkspaceIndex, directory: str, tool: str) -> Workspace:
    found = index.subtree(directory, tool)
    if isinstance(found, WorkspaceProblem):
        raise Unresolvable(UNRESOLVED_WORKSPACE_PROBLEM + found.reason)
    return found


def directory_glob_matches(
    pattern: str, packages: Sequence[WorkspacePackage]
) -> list[WorkspacePackage]:
    """Packages whose directory matches a repository-relative directory glob (``**`` also
    matching the directory itself, as micromatch does)."""

    def anchored(directory: str) -> str:
        return ("" if directory == ROOT_DIRECTORY else "/" + directory) + "/package.json"

    try:
        matcher = wcglob.compile(
            [anchored(pattern.rstrip("/") or ROOT_DIRECTORY)], flags=GLOB_FLAGS
        )
    except Exception as error:  # wcmatch refuses with several types (limits, syntax)
        raise Unresolvable(UNRESOLVED_SELECTOR) from error
    return [package for package in packages if matcher.match(anchored(package.directory))]


def glob_matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    """micromatch's ``isMatch`` over several patterns, for yarn's idents and directories."""
    try:
        matcher = wcglob.compile(list(patterns), flags=GLOB_FLAGS)
    except Exception as error:  # wcmatch refuses with several types (limits, syntax)
        raise Unresolvable(UNRESOLVED_SELECTOR) from error
    return lambda text: bool(matcher.match(text))
