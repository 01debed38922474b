"""Which ``package.json`` scripts one package-manager command runs, and where (docs/reference.md,
"Package scripts"). Pure.

The input is one simple command's words after quote removal, with leading variable assignments
and wrappers (``sudo``, ``xvfb-run`` ...) already removed, and the repository-relative directory
it runs in. Each tool reads its command line as its documentation says:

- npm (docs.npmjs.com/cli/commands): options are read anywhere before ``--``. ``run`` (with
  ``run-script``, ``rum``, ``urn``) runs the named script; ``test``/``t``/``tst``, ``start``,
  ``stop``, ``restart``, ``install-test``/``it`` and ``install-ci-test``/``cit`` run the script
  of that fixed name. Every other command is built in. ``--prefix``/``-C`` names the package
  directory outright; ``--workspace``/``-w`` (a member's name or a directory holding members,
  relative to the workspace root), ``--workspaces``/``-ws`` and ``--include-workspace-root``
  select workspace members. npm fails on a missing script, in every selected package, unless
  ``--if-present`` is given: so npm's targets are required even in a multi-package run.
- pnpm (pnpm.io/cli): ``run``/``run-script`` runs the named script; ``test``/``t``/``tst``,
  ``start`` and ``install-test``/``it`` run fixed scripts, ``restart`` runs ``stop``,
  ``restart`` and ``start``; any other word that is no pnpm command is a script or, failing
  that, a binary. ``--dir``/``-C`` runs as if started in that directory; ``-w``
  (``--workspace-root``) in the workspace root; ``-r``, the ``recursive``/``m``/``multi`` forms
  and ``--filter``/``-F``/``--filter-prod`` over the selected workspace packages, with the
  selector grammar of pnpm.io/filtering (see ``pnpm_filters``). Options after the
  script name belong to the script. A recursive run, exec or test leaves the workspace root
  out unless ``--include-workspace-root``, ``-w`` or an including selector brings it in (as
  current pnpm does; a root-only workspace keeps it). Outside a pnpm workspace ``-r`` and
  ``--filter`` work over every package at or below the directory, as pnpm's default package
  patterns do, and ``-w`` is unresolved.
- yarn, classic and berry (classic.yarnpkg.com/en/docs/cli, yarnpkg.com/cli): ``run`` and any
  word that is no yarn command name a script or a binary; ``--cwd`` changes directory;
  ``yarn workspace NAME ...`` runs the rest in that workspace; ``yarn workspaces foreach`` runs
  the rest in each selected workspace; classic ``yarn workspaces run NAME`` in every member.
- bun (bun.sh/docs/cli): ``run`` and any word that is no bun command run a script, a source
  file or a package binary (bun.sh/docs/cli/run: ``bun run --bun vite`` runs the ``vite``
  binary), so a missing script is no gap; ``test`` is bun's test runner. ``--cwd`` changes
  directory; ``--filter``/``-F`` selects packages by name glob or ``./`` path glob, ``!``
  excluding, over the workspace or else the packages below; ``--workspaces`` selects every
  member. bun takes its command from the first word not starting with ``-``: when that is an
  option's value, even a built-in's name (``bun --filter '*' build``) names a script.
- ``npx``, ``npm exec``/``x``, ``pnpm exec``/``dlx``, ``pnpx``, ``yarn exec``/``dlx``, ``bunx``
  and ``bun x`` run a binary: no script. When that binary's words contain a package-manager
  word, the words from there are ``nested``: a command the caller resolves again, in
  ``nested_directory``.

A word holding ``$``, ``${{`` or a backtick where a command word, script name, directory or
package selector is expected makes the invocation ``unresolved``; elsewhere (an argument to the
script) it is fine. A script word holding ``/`` or ``.`` is a file, not a script.

A single-package run targets the nearest package at or above the effective directory; npm's
``--prefix`` names the package directory outright. A multi-package run targets every selected
package (root first, then by directory in code-unit order), with ``required=False`` except for
npm: pnpm, yarn and bun skip a package without the script, so the caller checks that at least
one of the targets exists. Past ``c.WORKSPACE_SELECTION_MAX`` packages the targets are replaced
by ``over_bound``, the number of packages selected; the caller bounds the packages that have the
script at ``c.WORKSPACE_MATCH_BOUND``.

The modules: ``model`` (the records and the ``UNRESOLVED_*`` reasons), ``builtins`` (each tool's
command words and built-in commands, with their sources), ``options`` (option tables and
scans), ``common`` (words, directories, workspaces, building invocations), and one parser per
tool: ``npm``, ``pnpm`` (with ``pnpm_filters`` for the selector grammar), ``yarn``, ``bun``.
This module picks the parser from the first word.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from ..files import normalise_path
from ..workspaces import ROOT_DIRECTORY, WorkspaceIndex
from .builtins import BUILTIN_COMMANDS, BUN, ENTRY_WORDS, NPM, PNPM, YARN
from .bun import parse_bun
from .common import unresolved_invocation
from .model import (
    UNRESOLVED_CHANGED_SINCE,
    UNRESOLVED_CWD_WORKSPACE,
    UNRESOLVED_DIRECTORY,
    UNRESOLVED_DYNAMIC,
    UNRESOLVED_FOREACH_SCOPE,
    UNRESOLVED_MISSING_VALUE,
    UNRESOLVED_NESTED_SEVERAL,
    UNRESOLVED_NO_WORKSPACE,
    UNRESOLVED_SELECTOR,
    UNRESOLVED_UNKNOWN_PACKAGE,
    UNRESOLVED_WORKSPACE_PROBLEM,
    Invocation,
    ScriptTarget,
    Unresolvable,
)
from .npm import parse_npm
from .pnpm import parse_pnpm
from .yarn import parse_yarn

__all__ = [
    "BUILTIN_COMMANDS",
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
    "parse_invocation",
]


_PARSERS: Final[Mapping[str, Callable[[Sequence[str], str, WorkspaceIndex], Invocation]]] = {
    NPM: parse_npm,
    PNPM: parse_pnpm,
    YARN: parse_yarn,
    BUN: parse_bun,
}


def parse_invocation(
    words: Sequence[str], directory: str, workspaces: WorkspaceIndex
) -> Invocation | None:
    """What the command ``words`` runs in ``directory`` ("." or a normalised repository path).

    None when the command is not a package manager's: its first word is none of npm, npx,
    pnpm, pnpx, yarn, yarnpkg, bun, bunx.
    """
    if not words or words[0] not in ENTRY_WORDS:
        return None
    tool, implied = ENTRY_WORDS[words[0]]
    rest = list(words[1:])
    if implied is not None:
        rest.insert(0, implied)
    if directory != ROOT_DIRECTORY and normalise_path(directory) != directory:
        return unresolved_invocation(tool, UNRESOLVED_DIRECTORY)
    parser = _PARSERS[tool]
    try:
        return parser(rest, directory, workspaces)
    except Unresolvable as error:
        return unresolved_invocation(tool, error.reason)
