"""Which ``package.json`` scripts a shell command runs (docs/reference.md, "Package scripts", as
amended). Pure.

A script is named only by an invocation that runs one, as each package manager reads its
command line:

- npm: ``run``/``run-script`` (and the aliases ``rum``, ``urn``) followed by the name; ``test``
  (``t``, ``tst``), ``start``, ``stop`` and ``restart`` run the script of that name;
  ``install-test``/``it`` and ``install-ci-test``/``cit`` run ``test`` after installing.
- pnpm: ``run``/``run-script`` followed by the name; ``test`` (``t``, ``tst``), ``start`` and
  ``install-test``/``it`` as for npm; any other first word that is not a pnpm command is a
  script name.
- yarn: ``run`` followed by the name; any other first word that is not a yarn command is a
  script name (``yarn test`` and ``yarn start`` included).
- bun: ``run`` followed by the name.

``npx``, ``bunx``, ``exec``, ``dlx`` and every other built-in command run no script and are not
gaps. Options before the command word or the name are skipped; a name immediately followed by
``/`` or ``.`` is a file, not a script. A command whose scripts run elsewhere than in the step's
working directory (a directory change, a directory or package selection flag, pnpm's recursive
and filter modes, ``yarn workspace``) yields no names and is ``unresolved``.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from ... import contracts as c

__all__ = ["BUILTIN_COMMANDS", "ScriptScan", "scan_command"]


@attrs.frozen
class ScriptScan:
    """Script names a command invokes, or ``unresolved`` when its directory cannot be known."""

    names: tuple[str, ...] = ()
    unresolved: bool = False


_WS_CHARS = re.escape(c.WHITESPACE)
_WS = f"[{_WS_CHARS}]"
_TOOL_CALL = re.compile(rf"\b(npm|pnpm|yarn|bun)(?={_WS})", re.ASCII)
_SEGMENT_END = re.compile(r"[;&|()\n`]")
_TOKEN_SPLIT = re.compile(f"{_WS}+")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9:_-]*", re.ASCII)
_TOOL_WORD = re.compile(r"\b(?:npm|pnpm|yarn|bun)\b", re.ASCII)
_DIRECTORY_CHANGE = re.compile(rf"(?:\A|(?<=[{_WS_CHARS};&|()]))(?:cd|pushd|popd)(?={_WS})")
_DIRECTORY_FLAG = re.compile(
    rf"(?:\A|(?<={_WS}))"
    rf"(?:--prefix|--cwd|--dir|--workspaces|--workspace|--filter)(?=[={_WS_CHARS}]|\Z)",
)
_SHORT_DIRECTORY_FLAG = re.compile(rf"(?:\A|(?<={_WS}))-[Cw](?={_WS}|\Z)")
# pnpm options that run scripts in other packages than the one of the working directory.
_PNPM_ELSEWHERE = frozenset({"-r", "--recursive", "-F", "--filter-prod", "--workspace-root"})
_END_OF_OPTIONS = "--"

_RUN_WORDS: Final = {
    "npm": frozenset({"run", "run-script", "rum", "urn"}),
    "pnpm": frozenset({"run", "run-script"}),
    "yarn": frozenset({"run"}),
    "bun": frozenset({"run"}),
}
# Command words that run a script of a fixed name.
_FIXED_SCRIPTS: Final = {
    "npm": {
        "test": "test",
        "t": "test",
        "tst": "test",
        "start": "start",
        "stop": "stop",
        "restart": "restart",
        "install-test": "test",
        "it": "test",
        "install-ci-test": "test",
        "cit": "test",
    },
    "pnpm": {
        "test": "test",
        "t": "test",
        "tst": "test",
        "start": "start",
        "install-test": "test",
        "it": "test",
    },
    "yarn": {},
    "bun": {},
}
# Built-in commands (and their aliases) from each tool's command reference. For npm and bun
# any word that is not a run word or a fixed script is built in, so only pnpm and yarn need a
# list: there an unknown first word is a script name.
BUILTIN_COMMANDS: Final = {
    "pnpm": frozenset(
        [
            "access",
            "add",
            "adduser",
            "approve-builds",
            "audit",
            "bin",
            "bugs",
            "c",
            "cache",
            "cat-file",
            "cat-index",
            "catalog",
            "config",
            "create",
            "dedupe",
            "deploy",
            "deprecate",
            "dist-tag",
            "dlx",
            "docs",
            "doctor",
            "edit",
            "env",
            "exec",
            "fetch",
            "find-hash",
            "get",
            "help",
            "home",
            "i",
            "ignored-builds",
            "import",
            "info",
            "init",
            "install",
            "issues",
            "licenses",
            "link",
            "list",
            "ll",
            "ln",
            "login",
            "logout",
            "ls",
            "m",
            "multi",
            "outdated",
            "owner",
            "pack",
            "patch",
            "patch-commit",
            "patch-remove",
            "ping",
            "pkg",
            "prefix",
            "profile",
            "prune",
            "publish",
            "rb",
            "rebuild",
            "recursive",
            "remove",
            "repo",
            "restart",
            "rm",
            "root",
            "runtime",
            "s",
            "se",
            "search",
            "self-update",
            "server",
            "set",
            "set-script",
            "setup",
            "show",
            "star",
            "stars",
            "stop",
            "store",
            "team",
            "token",
            "un",
            "uninstall",
            "unlink",
            "unpublish",
            "unstar",
            "up",
            "update",
            "upgrade",
            "v",
            "version",
            "view",
            "whoami",
            "why",
            "xmas",
        ]
    ),
    "yarn": frozenset(
        [
            "access",
            "add",
            "audit",
            "autoclean",
            "bin",
            "cache",
            "check",
            "config",
            "constraints",
            "create",
            "dedupe",
            "dlx",
            "exec",
            "explain",
            "generate-lock-entry",
            "global",
            "help",
            "import",
            "info",
            "init",
            "install",
            "licenses",
            "link",
            "list",
            "login",
            "logout",
            "node",
            "npm",
            "outdated",
            "owner",
            "pack",
            "patch",
            "patch-commit",
            "plugin",
            "policies",
            "publish",
            "rebuild",
            "remove",
            "sdks",
            "search",
            "set",
            "stage",
            "tag",
            "team",
            "unlink",
            "unplug",
            "up",
            "upgrade",
            "upgrade-interactive",
            "version",
            "versions",
            "why",
            "workspace",
            "workspaces",
        ]
    ),
}
# Command words that run their command in other packages.
_ELSEWHERE_COMMANDS: Final = {
    "pnpm": frozenset({"recursive", "m", "multi"}),
    "yarn": frozenset({"workspace", "workspaces"}),
}


_COMMAND_START = re.compile(r"[;&|(){}`\n]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*\Z")
_PREFIX_WORDS = frozenset({"sudo", "time", "exec", "env", "command", "nice"})


def _at_command_start(before: str) -> bool:
    """Whether a tool word after ``before`` starts a command (not text such as an echo's)."""
    starts = list(_COMMAND_START.finditer(before))
    words = before[starts[-1].end() :] if starts else before
    return all(
        word in _PREFIX_WORDS or _ASSIGNMENT.match(word) is not None
        for word in _TOKEN_SPLIT.split(words)
        if word
    )


def _changes_directory(command: str) -> bool:
    return _TOOL_WORD.search(command) is not None and (
        _DIRECTORY_CHANGE.search(command) is not None
        or _DIRECTORY_FLAG.search(command) is not None
        or _SHORT_DIRECTORY_FLAG.search(command) is not None
    )


def _script_name(token: str) -> str | None:
    match = _NAME.match(token)
    if match is None or token[match.end() : match.end() + 1] in ("/", "."):
        return None
    return match.group()


def _words(tokens: list[str]) -> tuple[list[str], bool]:
    """Non-option words up to ``--``, and whether an option runs scripts elsewhere."""
    words: list[str] = []
    elsewhere = False
    for token in tokens:
        if token == _END_OF_OPTIONS:
            break
        if token.startswith("-"):
            elsewhere = elsewhere or token.split("=", 1)[0] in _PNPM_ELSEWHERE
            continue
        words.append(token)
    return words, elsewhere


def _invocation(tool: str, tokens: list[str], *, starts: bool) -> tuple[str | None, bool]:
    """The script one invocation runs, and whether it runs it in an unknown directory.

    ``starts`` is False when the tool word sits inside another command's arguments: only an
    explicit ``run <name>`` counts there, so that prose such as ``echo "pnpm CLI"`` names no
    script.
    """
    words, elsewhere = _words(tokens)
    if not words:
        return None, False
    command = words[0]
    if tool == "pnpm" and elsewhere:
        return None, True
    if command in _ELSEWHERE_COMMANDS.get(tool, ()):
        return None, True
    if command in _RUN_WORDS[tool]:
        return (_script_name(words[1]) if len(words) > 1 else None), False
    if not starts:
        return None, False
    fixed = _FIXED_SCRIPTS[tool].get(command)
    if fixed is not None:
        return fixed, False
    if tool in BUILTIN_COMMANDS and command not in BUILTIN_COMMANDS[tool]:
        return _script_name(command), False
    return None, False


def scan_command(command: str) -> ScriptScan:
    """Find the package scripts ``command`` runs, in order of appearance."""
    if _changes_directory(command):
        return ScriptScan(unresolved=True)
    names: list[str] = []
    for match in _TOOL_CALL.finditer(command):
        rest = command[match.end() :]
        end = _SEGMENT_END.search(rest)
        segment = rest[: end.start()] if end is not None else rest
        tokens = [token for token in _TOKEN_SPLIT.split(segment) if token]
        starts = _at_command_start(command[: match.start()])
        name, elsewhere = _invocation(match.group(1), tokens, starts=starts)
        if elsewhere:
            return ScriptScan(unresolved=True)
        if name is not None:
            names.append(name)
    return ScriptScan(names=tuple(names))
