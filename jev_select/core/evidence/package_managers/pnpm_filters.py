"""pnpm's package selectors, the ``--filter`` grammar of pnpm.io/filtering: names and name
patterns, directories, ``!`` exclusions, and the ``...`` dependency and dependent forms
(docs/reference.md, "Package scripts"). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from ..workspaces import Workspace, WorkspacePackage
from .common import directory_glob_matches, dynamic, is_location, join_directory
from .model import (
    UNRESOLVED_CHANGED_SINCE,
    UNRESOLVED_DIRECTORY,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_SELECTOR,
    Unresolvable,
)

__all__ = ["PnpmSelector", "evaluate_selectors", "parse_selector"]

# pnpm's selector shape: a name pattern, then a ``{directory}``, then a ``[git ref]``, each
# optional; the name may not start with a dot.
_PNPM_SELECTOR = re.compile(r"([^.][^{}\[\]]*)?(\{[^}]+\})?(\[[^\]]+\])?")


@attrs.frozen
class PnpmSelector:
    """One selector, read: what it matches and which relations of the matches it adds."""

    exclude: bool
    exclude_self: bool = False
    dependencies: bool = False
    dependents: bool = False
    name: str | None = None
    directory: str | None = None  # a repository-relative directory glob
    root: bool = False  # the workspace root, as ``-w`` adds it


def parse_selector(raw: str, cwd: str) -> PnpmSelector:
    """One ``--filter`` value, read as pnpm.io/filtering describes it.

    ``!`` excludes; a trailing ``...`` adds dependencies and a leading one dependents, ``^``
    next to the dots leaving out the matched packages themselves. What remains is a name
    pattern, a ``{directory glob}`` and a ``[git ref]``, each optional, or a path starting with
    ``.``/``..`` (pnpm applies no ``...`` to that form). Paths are relative to ``cwd``.
    """
    if dynamic(raw):
        raise Unresolvable(UNRESOLVED_DYNAMIC)
    selector = raw
    exclude = selector.startswith("!")
    if exclude:
        selector = selector[1:]
    exclude_self = False
    dependencies = selector.endswith("...")
    if dependencies:
        selector = selector[:-3]
        if selector.endswith("^"):
            exclude_self = True
            selector = selector[:-1]
    dependents = selector.startswith("...")
    if dependents:
        selector = selector[3:]
        if selector.startswith("^"):
            exclude_self = True
            selector = selector[1:]
    match = _PNPM_SELECTOR.fullmatch(selector)
    if match is None:
        if not is_location(selector):
            raise Unresolvable(UNRESOLVED_SELECTOR)
        directory = join_directory(cwd, selector)
        if directory is None:
            raise Unresolvable(UNRESOLVED_DIRECTORY)
        return PnpmSelector(exclude, directory=directory)
    name, braces, since = match.groups()
    if since is not None:
        raise Unresolvable(UNRESOLVED_CHANGED_SINCE)
    if name is None and braces is None:
        raise Unresolvable(UNRESOLVED_SELECTOR)
    directory = None
    if braces is not None:
        directory = join_directory(cwd, braces[1:-1])
        if directory is None:
            raise Unresolvable(UNRESOLVED_DIRECTORY)
    return PnpmSelector(exclude, exclude_self, dependencies, dependents, name, directory)


def _pnpm_name_matches(
    pattern: str, packages: Sequence[WorkspacePackage]
) -> list[WorkspacePackage]:
    """pnpm's name matching: ``*`` is the only wildcard; an unscoped pattern that matches
    nothing tries ``@*/<pattern>`` and keeps the answer only when it is a single package."""
    regex = re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)
    found = [p for p in packages if p.name is not None and regex.fullmatch(p.name)]
    if not found and not pattern.startswith("@") and "/" not in pattern:
        scoped = _pnpm_name_matches("@*/" + pattern, packages)
        return scoped if len(scoped) == 1 else []
    return found


def evaluate_selectors(
    workspace: Workspace, selectors: Sequence[PnpmSelector], *, production: bool
) -> set[str]:
    """The directories a group of selectors picks, with their dependency relations."""
    chosen: set[str] = set()
    for selector in selectors:
        entries: list[WorkspacePackage]
        if selector.root:
            entries = [workspace.root] if workspace.root_is_package else []
        else:
            entries = list(workspace.packages)
            if selector.directory is not None:
                entries = directory_glob_matches(selector.directory, entries)
            if selector.name is not None:
                entries = _pnpm_name_matches(selector.name, entries)
        if not selector.dependencies and not selector.dependents:
            chosen.update(entry.directory for entry in entries)
            continue
        itself = [] if selector.exclude_self else entries
        if selector.dependencies:
            chosen.update(p.directory for p in workspace.reachable(entries, production=production))
            chosen.update(p.directory for p in itself)
        if selector.dependents:
            dependents = [
                *workspace.reachable(entries, dependents=True, production=production),
                *itself,
            ]
            chosen.update(p.directory for p in dependents)
            if selector.dependencies:
                reached = workspace.reachable(dependents, production=production)
                chosen.update(p.directory for p in reached)
    return chosen
