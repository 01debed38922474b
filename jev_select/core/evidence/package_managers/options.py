"""Reading a package manager's options: which options take the next word as their value, per tool,
and the scans that read options from a command's words (docs/reference.md, "Package scripts").
Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import attrs

__all__ = [
    "BUNX_VALUE_OPTIONS",
    "BUN_CODE_OPTIONS",
    "BUN_VALUE_OPTIONS",
    "NPM_VALUE_OPTIONS",
    "PNPM_VALUE_OPTIONS",
    "YARN_FOREACH_VALUE_OPTIONS",
    "YARN_VALUE_OPTIONS",
    "Scanned",
    "scan_anywhere",
    "scan_leading",
]

# Options that take the next word as their value, per tool. Every other option is a flag;
# ``--name=value`` never takes the next word.
NPM_VALUE_OPTIONS: Final = frozenset(
    {
        "--access",
        "--auth-type",
        "--before",
        "--cache",
        "--call",
        "-c",
        "--depth",
        "--fetch-retries",
        "--fetch-timeout",
        "--globalconfig",
        "--include",
        "--install-strategy",
        "--loglevel",
        "--logs-dir",
        "--logs-max",
        "--node-options",
        "--omit",
        "--otp",
        "--package",
        "-p",
        "--prefix",
        "-C",
        "--registry",
        "--scope",
        "--script-shell",
        "--tag",
        "--user-agent",
        "--userconfig",
        "--workspace",
        "-w",
    }
)
PNPM_VALUE_OPTIONS: Final = frozenset(
    {
        "--allow-build",
        "--changed-files-ignore-pattern",
        "--dir",
        "-C",
        "--filter",
        "-F",
        "--filter-prod",
        "--lockfile-dir",
        "--loglevel",
        "--modules-dir",
        "--package",
        "--reporter",
        "--resume-from",
        "--store-dir",
        "--test-pattern",
        "--virtual-store-dir",
        "--workspace-concurrency",
    }
)
YARN_VALUE_OPTIONS: Final = frozenset(
    {
        "--cache-folder",
        "--cwd",
        "--global-folder",
        "--https-proxy",
        "--link-folder",
        "--modules-folder",
        "--mutex",
        "--network-concurrency",
        "--network-timeout",
        "--otp",
        "--package",
        "-p",
        "--preferred-cache-folder",
        "--proxy",
        "--registry",
        "--require",
        "--use-yarnrc",
    }
)
YARN_FOREACH_VALUE_OPTIONS: Final = frozenset({"--from", "--include", "--exclude", "-j", "--jobs"})
BUN_VALUE_OPTIONS: Final = frozenset(
    {
        "--conditions",
        "--config",
        "-c",
        "--console-depth",
        "--cwd",
        "--define",
        "-d",
        "--elide-lines",
        "--env-file",
        "--extension-order",
        "--filter",
        "-F",
        "--import",
        "--install",
        "--jsx-factory",
        "--jsx-fragment",
        "--jsx-import-source",
        "--jsx-runtime",
        "--loader",
        "-l",
        "--main-fields",
        "--port",
        "--preload",
        "-r",
        "--require",
        "--shell",
        "--title",
        "--tsconfig-override",
        "--user-agent",
    }
)
# bun options whose value is code to run: the command then runs no script.
BUN_CODE_OPTIONS: Final = frozenset({"-e", "--eval", "-p", "--print"})
BUNX_VALUE_OPTIONS: Final = frozenset({"--package", "-p"})

_END_OF_OPTIONS: Final = "--"
_SHORT_CLUSTER = re.compile(r"-[A-Za-z]{2,}\Z", re.ASCII)


@attrs.frozen
class Scanned:
    """Options read from the front of some words, and the words from the first positional."""

    options: tuple[tuple[str, str | None], ...]
    rest: tuple[str, ...]
    missing_value: bool = False


def _option_at(
    words: Sequence[str], position: int, value_options: frozenset[str]
) -> tuple[tuple[str, str | None], int] | None:
    """The option starting at ``words[position]`` and the position after it; None when a
    value option ends the words without its value."""
    word = words[position]
    if word.startswith("--") and "=" in word:
        name, _, value = word.partition("=")
        return (name, value), position + 1
    if word in value_options:
        if position + 1 >= len(words):
            return None
        return (word, words[position + 1]), position + 2
    return (word, None), position + 1


def _is_option(word: str) -> bool:
    return word.startswith("-") and word not in ("-", _END_OF_OPTIONS)


def scan_leading(
    words: Sequence[str], value_options: frozenset[str], *, clusters: bool = False
) -> Scanned:
    """Read options up to the first positional word; ``--`` ends them and is dropped.

    With ``clusters``, ``-Apt`` is ``-A -p -t`` (clipanion's reading, for yarn berry); a value
    option inside a cluster takes the rest of the cluster, or else the next word.
    """
    options: list[tuple[str, str | None]] = []
    position = 0
    while position < len(words) and _is_option(words[position]):
        word = words[position]
        if clusters and _SHORT_CLUSTER.match(word):
            position += 1
            for offset, letter in enumerate(word[1:]):
                name = "-" + letter
                if name not in value_options:
                    options.append((name, None))
                    continue
                attached = word[offset + 2 :]
                if attached:
                    options.append((name, attached))
                elif position < len(words):
                    options.append((name, words[position]))
                    position += 1
                else:
                    return Scanned(tuple(options), (), missing_value=True)
                break
            continue
        read = _option_at(words, position, value_options)
        if read is None:
            return Scanned(tuple(options), (), missing_value=True)
        option, position = read
        options.append(option)
    if position < len(words) and words[position] == _END_OF_OPTIONS:
        position += 1
    return Scanned(tuple(options), tuple(words[position:]))


def scan_anywhere(words: Sequence[str], value_options: frozenset[str]) -> Scanned:
    """npm's reading: options anywhere before ``--``; ``rest`` holds the positionals before it
    (what follows ``--`` goes to the script)."""
    options: list[tuple[str, str | None]] = []
    positionals: list[str] = []
    position = 0
    while position < len(words) and words[position] != _END_OF_OPTIONS:
        if not _is_option(words[position]):
            positionals.append(words[position])
            position += 1
            continue
        read = _option_at(words, position, value_options)
        if read is None:
            return Scanned(tuple(options), tuple(positionals), missing_value=True)
        option, position = read
        options.append(option)
    return Scanned(tuple(options), tuple(positionals))
