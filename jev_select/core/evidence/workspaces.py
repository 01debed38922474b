"""Which packages a JavaScript workspace has at one commit (docs/reference.md, "Package
scripts"). Pure.

A workspace is found from the directory a command runs in, walking up towards the repository
root:

- pnpm: the nearest directory holding ``pnpm-workspace.yaml``; its ``packages`` list of globs
  names the members (an entry starting with ``!`` excludes). pnpm never reads the ``workspaces``
  field of ``package.json``. Without a ``packages`` list the workspace is the root package alone
  (pnpm.io/pnpm-workspace_yaml). pnpm's package discovery also skips ``test``, ``tests`` and
  ``bower_components`` directories.
- npm, yarn and bun: the nearest ``package.json`` that has a ``workspaces`` field, either an array
  of globs or an object with a ``packages`` array (yarn classic's form, also read by bun).

A glob names the directories whose ``package.json`` it matches, as each tool expands
``<glob>/package.json`` (``packages/*``, ``packages/**`` with ``packages`` itself, literal
directories, a trailing ``/``). Wildcards do not enter hidden directories, and nothing under a
``node_modules`` directory is ever a package. Matching walks the file listing once per workspace,
so the work stays linear in the number of paths.

Directories here are repository-relative: ``"."`` is the repository root, every other directory
a normalised path. Files come in through a ``read_text`` callable and the commit's file listing;
nothing here touches the disk, the environment or the clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

import attrs
from wcmatch import glob as wcglob

from ..jsonutil import JsonError, code_unit_key, strict_loads
from ..yamlstrict import load_strict

__all__ = [
    "GLOB_FLAGS",
    "MANIFEST_NAME",
    "PNPM_WORKSPACE_FILE",
    "PROBLEM_FILE_INVALID",
    "PROBLEM_FILE_UNREADABLE",
    "PROBLEM_GLOB_NOT_STRING",
    "PROBLEM_GLOB_UNUSABLE",
    "PROBLEM_LISTING_MISSING",
    "PROBLEM_MEMBER_INVALID",
    "PROBLEM_PACKAGES_MALFORMED",
    "ROOT_DIRECTORY",
    "ReadText",
    "Workspace",
    "WorkspaceIndex",
    "WorkspacePackage",
    "WorkspaceProblem",
    "ancestors",
    "is_within",
    "manifest_path",
    "relative_to",
]

ReadText = Callable[[str], "str | None"]

MANIFEST_NAME: Final = "package.json"
PNPM_WORKSPACE_FILE: Final = "pnpm-workspace.yaml"
ROOT_DIRECTORY: Final = "."

# Why a workspace cannot be known. Fixed texts: no part of any file is ever echoed.
PROBLEM_FILE_UNREADABLE: Final = "workspace file listed but unreadable"
PROBLEM_FILE_INVALID: Final = "workspace file does not parse"
PROBLEM_PACKAGES_MALFORMED: Final = "workspace package list is not a list of globs"
PROBLEM_GLOB_NOT_STRING: Final = "workspace glob is not a string"
PROBLEM_GLOB_UNUSABLE: Final = "workspace glob cannot be expanded"
PROBLEM_LISTING_MISSING: Final = "file listing unavailable to expand workspace globs"
PROBLEM_MEMBER_INVALID: Final = "workspace member manifest is not a JSON object"

_TOOL_PNPM: Final = "pnpm"
_NODE_MODULES: Final = "node_modules"
# Directories pnpm's package discovery never descends into, whatever the globs say.
_PNPM_IGNORED_DIRECTORIES: Final = frozenset({_NODE_MODULES, "bower_components", "test", "tests"})
_EXCLUDE_PREFIX: Final = "!"
_LOCAL_PREFIX: Final = "./"
# Globs match as the tools' glob libraries do: ``**`` spans directories, braces and extended
# globs expand, ``*`` skips hidden names, ``/`` is the only separator on every platform.
GLOB_FLAGS: Final = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.EXTGLOB | wcglob.FORCEUNIX
_DEPENDENCY_FIELDS: Final = (
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
)
# pnpm's ``--filter-prod`` leaves out devDependencies and nothing else (pnpm.io/filtering).
_PRODUCTION_FIELDS: Final = ("dependencies", "optionalDependencies", "peerDependencies")


def _is_normalised(directory: str) -> bool:
    """Whether a listed directory is a plain relative path: no empty, ``.`` or ``..`` segment,
    no backslash or NUL. (``files`` imports this module, so its ``normalise_path`` cannot be
    imported here.)"""
    return (
        "\\" not in directory
        and "\0" not in directory
        and not directory.startswith("/")
        and all(segment not in ("", ".", "..") for segment in directory.split("/"))
    )


def manifest_path(directory: str) -> str:
    """The ``package.json`` path of a repository-relative directory."""
    return MANIFEST_NAME if directory == ROOT_DIRECTORY else f"{directory}/{MANIFEST_NAME}"


def ancestors(directory: str) -> tuple[str, ...]:
    """``directory`` and every directory above it, nearest first, ending with the root."""
    if directory == ROOT_DIRECTORY:
        return (ROOT_DIRECTORY,)
    segments = directory.split("/")
    found = ["/".join(segments[:count]) for count in range(len(segments), 0, -1)]
    return (*found, ROOT_DIRECTORY)


def is_within(directory: str, ancestor: str) -> bool:
    """Whether ``directory`` is ``ancestor`` or lies below it."""
    return (
        ancestor == ROOT_DIRECTORY or directory == ancestor or directory.startswith(ancestor + "/")
    )


def relative_to(directory: str, ancestor: str) -> str:
    """``directory`` relative to ``ancestor`` (which must contain it); ``"."`` for itself."""
    if directory == ancestor:
        return ROOT_DIRECTORY
    return directory if ancestor == ROOT_DIRECTORY else directory[len(ancestor) + 1 :]


@attrs.frozen
class WorkspacePackage:
    """One package of a workspace.

    ``dependencies`` holds the names in ``dependencies``, ``devDependencies``,
    ``optionalDependencies`` and ``peerDependencies``; ``production_dependencies`` the same
    without ``devDependencies``. Version ranges are not compared, so an edge to a workspace
    package exists whenever its name is depended on (this can only widen a selection).
    """

    directory: str
    name: str | None
    manifest: str
    dependencies: frozenset[str]
    production_dependencies: frozenset[str] = frozenset()


@attrs.frozen
class WorkspaceProblem:
    """A workspace file exists but cannot be used; ``reason`` is one of the ``PROBLEM_*`` texts."""

    reason: str


@attrs.frozen
class Workspace:
    """A workspace root and its members.

    ``members`` excludes the root and is sorted by directory in code-unit order.
    ``root_is_package`` is False when the root directory holds no ``package.json`` (pnpm allows
    such a root): the root then takes part in no selection. ``root_only`` is True for a pnpm
    workspace whose ``packages`` list is missing or just ``"."``.
    """

    root: WorkspacePackage
    members: tuple[WorkspacePackage, ...]
    root_is_package: bool = True
    root_only: bool = False

    @property
    def packages(self) -> tuple[WorkspacePackage, ...]:
        """Every package, the root first (when it is one), then the members in order."""
        return ((self.root,) if self.root_is_package else ()) + self.members

    def by_name(self, name: str) -> WorkspacePackage | None:
        """The first package (root first, then by directory) with that ``name``."""
        for package in self.packages:
            if package.name == name:
                return package
        return None

    def by_directory(self, directory: str) -> WorkspacePackage | None:
        for package in self.packages:
            if package.directory == directory:
                return package
        return None

    def package_containing(self, directory: str) -> WorkspacePackage | None:
        """The deepest package whose directory is ``directory`` or one above it."""
        best: WorkspacePackage | None = None
        for package in self.packages:
            if is_within(directory, package.directory) and (
                best is None or len(package.directory) > len(best.directory)
            ):
                best = package
        return best

    def relative_directory(self, package: WorkspacePackage) -> str:
        """The package's directory relative to the workspace root (``"."`` for the root)."""
        return relative_to(package.directory, self.root.directory)

    def reachable(
        self,
        starts: Iterable[WorkspacePackage],
        *,
        dependents: bool = False,
        production: bool = False,
    ) -> tuple[WorkspacePackage, ...]:
        """Packages reached from ``starts`` over one or more dependency edges, in package order.

        Edges go from a package to the workspace packages it depends on, or the other way
        round with ``dependents``; ``production`` follows only non-dev dependencies. A start is
        in the answer only when some edge leads back to it.
        """
        packages = self.packages
        index = {package.directory: position for position, package in enumerate(packages)}
        by_name: dict[str, list[int]] = {}
        for position, package in enumerate(packages):
            if package.name is not None:
                by_name.setdefault(package.name, []).append(position)
        edges: list[list[int]] = [[] for _ in packages]
        for position, package in enumerate(packages):
            names = package.production_dependencies if production else package.dependencies
            for name in names:
                for target in by_name.get(name, ()):
                    if dependents:
                        edges[target].append(position)
                    else:
                        edges[position].append(target)
        frontier = [index[start.directory] for start in starts if start.directory in index]
        seen: set[int] = set()
        while frontier:
            current = frontier.pop()
            for target in edges[current]:
                if target not in seen:
                    seen.add(target)
                    frontier.append(target)
        return tuple(packages[position] for position in sorted(seen))


def _read_package(directory: str, text: str) -> WorkspacePackage | None:
    """The package a manifest text describes, or None when it is not a JSON object."""
    try:
        data: object = strict_loads(text)
    except JsonError:
        return None
    if not isinstance(data, Mapping):
        return None
    return _package_from(directory, data)


def _package_from(directory: str, data: Mapping[str, object]) -> WorkspacePackage:
    name = data.get("name")
    return WorkspacePackage(
        directory=directory,
        name=name if isinstance(name, str) else None,
        manifest=manifest_path(directory),
        dependencies=_dependency_names(data, _DEPENDENCY_FIELDS),
        production_dependencies=_dependency_names(data, _PRODUCTION_FIELDS),
    )


def _dependency_names(data: Mapping[str, object], fields: Sequence[str]) -> frozenset[str]:
    names: set[str] = set()
    for field in fields:
        value = data.get(field)
        if isinstance(value, Mapping):
            names.update(key for key in value if isinstance(key, str))
    return frozenset(names)


def _manifest_glob(pattern: str) -> str:
    """The ``package.json`` glob of one workspace glob, as the tools build it."""
    while pattern.startswith(_LOCAL_PREFIX):
        pattern = pattern[len(_LOCAL_PREFIX) :]
    pattern = pattern.rstrip("/")
    return MANIFEST_NAME if pattern in ("", ROOT_DIRECTORY) else f"{pattern}/{MANIFEST_NAME}"


class WorkspaceIndex:
    """Workspaces of one commit, found and parsed once per root.

    ``read_text`` answers a repository file's text (None when absent or unreadable); ``paths``
    is every file path at the commit, or None when no listing is available, in which case no
    glob can be expanded and every workspace with globs is a ``WorkspaceProblem``.
    """

    def __init__(self, read_text: ReadText, paths: Sequence[str] | None) -> None:
        self._read_text = read_text
        self._paths = None if paths is None else frozenset(paths)
        self._texts: dict[str, str | None] = {}
        self._package_directories: tuple[str, ...] | None = None
        self._found: dict[tuple[str, str], Workspace | WorkspaceProblem | None] = {}
        self._roots: dict[tuple[str, str], Workspace | WorkspaceProblem] = {}

    # ----------------------------------------------------------------------------------------
    # Files
    # ----------------------------------------------------------------------------------------

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            try:
                text = self._read_text(path)
            except Exception:  # a failing reader is the same as an unreadable file
                text = None
            self._texts[path] = text if isinstance(text, str) else None
        return self._texts[path]

    def _file(self, path: str) -> tuple[bool, str | None]:
        """Whether ``path`` exists, and its text. With a listing, a listed file whose text
        cannot be had exists but has no text; without one, only a readable file exists."""
        if self._paths is not None and path not in self._paths:
            return False, None
        text = self._text(path)
        return (True if self._paths is not None else text is not None), text

    def exists(self, path: str) -> bool:
        return self._file(path)[0]

    def package_directory(self, directory: str) -> str:
        """The nearest directory at or above ``directory`` holding a ``package.json``, as npm,
        pnpm, yarn and bun look for the package to run in; ``directory`` itself when none does
        (so that the caller reports its missing manifest)."""
        for candidate in ancestors(directory):
            if self.exists(manifest_path(candidate)):
                return candidate
        return directory

    def _listed_package_directories(self) -> tuple[str, ...]:
        """Every directory holding a ``package.json``, outside ``node_modules``, sorted."""
        if self._package_directories is None:
            assert self._paths is not None
            found: list[str] = []
            suffix = "/" + MANIFEST_NAME
            for path in self._paths:
                if path == MANIFEST_NAME:
                    found.append(ROOT_DIRECTORY)
                elif path.endswith(suffix):
                    directory = path[: -len(suffix)]
                    if _is_normalised(directory) and _NODE_MODULES not in directory.split("/"):
                        found.append(directory)
            self._package_directories = tuple(sorted(found, key=code_unit_key))
        return self._package_directories

    # ----------------------------------------------------------------------------------------
    # Workspaces
    # ----------------------------------------------------------------------------------------

    def for_directory(self, directory: str, tool: str) -> Workspace | WorkspaceProblem | None:
        """The workspace ``tool`` (npm, pnpm, yarn or bun) uses for a command run in
        ``directory``; None when there is none (a plain single-package project)."""
        family = _TOOL_PNPM if tool == _TOOL_PNPM else MANIFEST_NAME
        key = (family, directory)
        if key not in self._found:
            if family == _TOOL_PNPM:
                self._found[key] = self._find_pnpm(directory)
            else:
                self._found[key] = self._find_manifest_workspace(directory)
        return self._found[key]

    def _find_pnpm(self, directory: str) -> Workspace | WorkspaceProblem | None:
        for candidate in ancestors(directory):
            file = (
                PNPM_WORKSPACE_FILE
                if candidate == ROOT_DIRECTORY
                else f"{candidate}/{PNPM_WORKSPACE_FILE}"
            )
            exists, text = self._file(file)
            if exists:
                key = (_TOOL_PNPM, candidate)
                if key not in self._roots:
                    self._roots[key] = self._pnpm_workspace(candidate, text)
                return self._roots[key]
        return None

    def _pnpm_workspace(self, root: str, text: str | None) -> Workspace | WorkspaceProblem:
        if text is None:
            return WorkspaceProblem(PROBLEM_FILE_UNREADABLE)
        try:
            data: object = load_strict(text, aliases=True)
        except Exception:  # any loader failure, strict rejections included, is "invalid"
            return WorkspaceProblem(PROBLEM_FILE_INVALID)
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            return WorkspaceProblem(PROBLEM_FILE_INVALID)
        patterns = data.get("packages")
        root_package = self._root_package(root)
        if isinstance(root_package, WorkspaceProblem):
            return root_package
        package, is_package = root_package
        if patterns is None or patterns == [ROOT_DIRECTORY]:
            # Without a package list only the root belongs to the workspace.
            return Workspace(package, (), root_is_package=is_package, root_only=True)
        members = self._members(root, patterns, _PNPM_IGNORED_DIRECTORIES)
        if isinstance(members, WorkspaceProblem):
            return members
        return Workspace(package, members, root_is_package=is_package)

    def _root_package(self, root: str) -> tuple[WorkspacePackage, bool] | WorkspaceProblem:
        """The root's package, and whether it has a manifest at all."""
        manifest = manifest_path(root)
        exists, text = self._file(manifest)
        if not exists:
            return WorkspacePackage(root, None, manifest, frozenset(), frozenset()), False
        package = None if text is None else _read_package(root, text)
        if package is None:
            return WorkspaceProblem(PROBLEM_MEMBER_INVALID)
        return package, True

    def _find_manifest_workspace(self, directory: str) -> Workspace | WorkspaceProblem | None:
        for candidate in ancestors(directory):
            exists, text = self._file(manifest_path(candidate))
            if not exists:
                continue
            key = (MANIFEST_NAME, candidate)
            if key in self._roots:
                return self._roots[key]
            if text is None:
                return WorkspaceProblem(PROBLEM_FILE_UNREADABLE)
            try:
                data: object = strict_loads(text)
            except JsonError:
                # A manifest on the way up that does not parse may be the workspace root.
                return WorkspaceProblem(PROBLEM_FILE_INVALID)
            if not isinstance(data, Mapping):
                return WorkspaceProblem(PROBLEM_FILE_INVALID)
            if "workspaces" not in data:
                continue
            self._roots[key] = self._manifest_workspace(candidate, data)
            return self._roots[key]
        return None

    def _manifest_workspace(
        self, root: str, data: Mapping[str, object]
    ) -> Workspace | WorkspaceProblem:
        field = data.get("workspaces")
        # yarn classic's object form holds the globs under "packages" (none when absent).
        patterns: object = field.get("packages", []) if isinstance(field, Mapping) else field
        members = self._members(root, patterns, frozenset({_NODE_MODULES}))
        if isinstance(members, WorkspaceProblem):
            return members
        return Workspace(_package_from(root, data), members)

    def subtree(self, directory: str, tool: str) -> Workspace | WorkspaceProblem:
        """Every package at or below ``directory``, rooted there: what pnpm's recursive mode
        and bun's ``--filter`` work over when no workspace file is found."""
        ignored = _PNPM_IGNORED_DIRECTORIES if tool == _TOOL_PNPM else frozenset({_NODE_MODULES})
        key = (f"subtree:{tool}", directory)
        if key not in self._roots:
            root_package = self._root_package(directory)
            if isinstance(root_package, WorkspaceProblem):
                self._roots[key] = root_package
            else:
                members = self._members(directory, ["**"], ignored)
                if isinstance(members, WorkspaceProblem):
                    self._roots[key] = members
                else:
                    package, is_package = root_package
                    self._roots[key] = Workspace(package, members, root_is_package=is_package)
        return self._roots[key]

    def _members(
        self, root: str, patterns: object, ignored: frozenset[str]
    ) -> tuple[WorkspacePackage, ...] | WorkspaceProblem:
        if not isinstance(patterns, list):
            return WorkspaceProblem(PROBLEM_PACKAGES_MALFORMED)
        included: list[str] = []
        excluded: list[str] = []
        for pattern in patterns:
            if not isinstance(pattern, str):
                return WorkspaceProblem(PROBLEM_GLOB_NOT_STRING)
            if pattern.startswith(_EXCLUDE_PREFIX):
                excluded.append(_manifest_glob(pattern[len(_EXCLUDE_PREFIX) :]))
            else:
                included.append(_manifest_glob(pattern))
        if not included:
            return ()
        if self._paths is None:
            return WorkspaceProblem(PROBLEM_LISTING_MISSING)
        try:
            matcher = wcglob.compile(included, flags=GLOB_FLAGS, exclude=excluded or None)
        except Exception:  # wcmatch refuses with several types (brace expansion limit, syntax)
            return WorkspaceProblem(PROBLEM_GLOB_UNUSABLE)
        members: list[WorkspacePackage] = []
        for directory in self._listed_package_directories():
            if directory == root or not is_within(directory, root):
                continue
            relative = relative_to(directory, root)
            if ignored.intersection(relative.split("/")):
                continue
            if not matcher.match(f"{relative}/{MANIFEST_NAME}"):
                continue
            text = self._text(manifest_path(directory))
            package = None if text is None else _read_package(directory, text)
            if package is None:
                return WorkspaceProblem(PROBLEM_MEMBER_INVALID)
            members.append(package)
        return tuple(members)
