"""The wrapper commands (``sudo``, ``env``, ``timeout``...) that run the command in their remaining
words, and how each reads its own options before it. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

import attrs

__all__ = ["WRAPPER_COMMANDS", "unwrap"]


@attrs.frozen
class _Wrapper:
    """How a wrapper command reads its own options before the command it runs."""

    # Short options without an argument, and short options that take one (attached or next).
    flags: str = ""
    short_arguments: str = ""
    long_flags: frozenset[str] = frozenset()
    long_arguments: frozenset[str] = frozenset()
    # Options after which the remaining words are not a command it runs (``command -v``).
    refusals: frozenset[str] = frozenset()
    # Options whose argument is the wrapped command's working directory.
    directories: frozenset[str] = frozenset()
    # Operands before the command (``timeout``'s duration).
    operands: int = 0
    # ``nice -10``: an option that is only a number.
    numeric: bool = False
    # ``env -``: a lone dash is an option.
    dash: bool = False


# Commands that run the command in their remaining words, keyed by name, with the options each
# takes. Their options, their operands and the VAR=value words after them are dropped from
# ``ShellCommand.words``, so a caller sees the command they run. An option not listed here stops
# the stripping, since the wrapper's own argument and the wrapped command can no longer be told
# apart; a wrapper with nothing after it is itself the command (``env`` alone prints the
# environment). ``command`` and ``builtin`` run a builtin in the same shell, so ``command cd``
# changes the directory; every other wrapper runs a separate program, which cannot.
WRAPPER_COMMANDS: Final[Mapping[str, _Wrapper]] = MappingProxyType(
    {
        "builtin": _Wrapper(),
        "command": _Wrapper(flags="p", refusals=frozenset({"v", "V"})),
        "env": _Wrapper(
            flags="i0v",
            short_arguments="uCS",
            long_flags=frozenset(
                {
                    "--ignore-environment",
                    "--null",
                    "--debug",
                    "--block-signal",
                    "--default-signal",
                    "--ignore-signal",
                    "--list-signal-handling",
                }
            ),
            long_arguments=frozenset({"--unset", "--chdir", "--split-string"}),
            # -S re-splits one word into several; which of them is the command is not read here.
            refusals=frozenset({"S", "--split-string"}),
            directories=frozenset({"C", "--chdir"}),
            dash=True,
        ),
        "exec": _Wrapper(flags="cl", short_arguments="a"),
        "nice": _Wrapper(
            short_arguments="n", long_arguments=frozenset({"--adjustment"}), numeric=True
        ),
        "nohup": _Wrapper(),
        "stdbuf": _Wrapper(
            short_arguments="ioe", long_arguments=frozenset({"--input", "--output", "--error"})
        ),
        "sudo": _Wrapper(
            flags="AbBEHiKknNPSs",
            short_arguments="CDghpRrTtUu",
            long_flags=frozenset(
                {
                    "--askpass",
                    "--background",
                    "--bell",
                    "--preserve-env",
                    "--set-home",
                    "--login",
                    "--remove-timestamp",
                    "--reset-timestamp",
                    "--non-interactive",
                    "--no-update",
                    "--preserve-groups",
                    "--stdin",
                    "--shell",
                }
            ),
            long_arguments=frozenset(
                {
                    "--close-from",
                    "--chdir",
                    "--group",
                    "--host",
                    "--prompt",
                    "--chroot",
                    "--role",
                    "--type",
                    "--command-timeout",
                    "--other-user",
                    "--user",
                    "--login-class",
                }
            ),
            # sudoedit, listing and validation run no command.
            refusals=frozenset({"e", "l", "v", "V", "--edit", "--list", "--validate"}),
            directories=frozenset({"D", "--chdir"}),
        ),
        # GNU time as a program (``sudo time -v make``); the ``time`` reserved word at the start
        # of a pipeline is syntax and takes only ``-p``.
        "time": _Wrapper(
            flags="pvaq",
            short_arguments="fo",
            long_flags=frozenset({"--portability", "--verbose", "--append", "--quiet"}),
            long_arguments=frozenset({"--format", "--output"}),
        ),
        "timeout": _Wrapper(
            flags="v",
            short_arguments="ks",
            long_flags=frozenset({"--preserve-status", "--foreground", "--verbose"}),
            long_arguments=frozenset({"--kill-after", "--signal"}),
            operands=1,
        ),
        # GNU xargs runs its command once per batch of input words, in the same directory.
        "xargs": _Wrapper(
            flags="0oprtxiel",
            short_arguments="adEILnPs",
            long_flags=frozenset(
                {
                    "--null",
                    "--open-tty",
                    "--interactive",
                    "--no-run-if-empty",
                    "--verbose",
                    "--exit",
                }
            ),
            long_arguments=frozenset(
                {
                    "--arg-file",
                    "--delimiter",
                    "--eof",
                    "--replace",
                    "--max-lines",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                }
            ),
            refusals=frozenset({"--show-limits", "--help", "--version"}),
        ),
        "xvfb-run": _Wrapper(
            flags="adl",
            short_arguments="efnpsw",
            long_flags=frozenset({"--auto-servernum", "--auto-display", "--listen-tcp"}),
            long_arguments=frozenset(
                {
                    "--error-file",
                    "--auth-file",
                    "--server-num",
                    "--xauth-protocol",
                    "--server-args",
                    "--wait",
                }
            ),
        ),
    }
)

# Wrappers that run a builtin in the shell itself, so a directory change they run holds.
_SAME_SHELL: Final = frozenset({"builtin", "command"})
_ENVIRONMENT_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_NUMBER_OPTION: Final = re.compile(r"-[0-9]+\Z")


def _skip_options(wrapper: _Wrapper, words: Sequence[str], index: int) -> tuple[int, list[str]]:
    """The index of the first word after ``wrapper``'s options and operands, and the working
    directories those options set; raises LookupError on an option ``wrapper`` does not take."""
    directories: list[str] = []
    count = len(words)
    while index < count:
        word = words[index]
        if word == "--":
            index += 1
            break
        if word == "-" and wrapper.dash:
            index += 1
            continue
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if name in wrapper.refusals:
                raise LookupError(name)
            if name in wrapper.long_arguments:
                if not equals:
                    if index + 1 >= count:
                        raise LookupError(name)
                    index += 1
                    value = words[index]
                if name in wrapper.directories:
                    directories.append(value)
            elif name not in wrapper.long_flags:
                raise LookupError(name)
            index += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        if wrapper.numeric and _NUMBER_OPTION.match(word):
            index += 1
            continue
        for position, letter in enumerate(word[1:], start=1):
            if letter in wrapper.refusals or (
                letter not in wrapper.flags and letter not in wrapper.short_arguments
            ):
                raise LookupError(letter)
            if letter in wrapper.short_arguments:
                value = word[position + 1 :]
                if not value:
                    if index + 1 >= count:
                        raise LookupError(letter)
                    index += 1
                    value = words[index]
                if letter in wrapper.directories:
                    directories.append(value)
                break
        index += 1
    if index + wrapper.operands > count:
        raise LookupError("operand")
    return index + wrapper.operands, directories


def unwrap(words: list[str]) -> tuple[list[str], list[str], bool]:
    """``words`` without wrapper prefixes, the working directories the wrappers set, and whether
    the command left runs in the shell itself."""
    index = 0
    directories: list[str] = []
    same_shell = True
    while index < len(words):
        name = words[index]
        wrapper = WRAPPER_COMMANDS.get(name.rsplit("/", 1)[-1] if name.startswith("/") else name)
        if wrapper is None:
            break
        try:
            after, moves = _skip_options(wrapper, words, index + 1)
        except LookupError:
            break
        while after < len(words) and _ENVIRONMENT_ASSIGNMENT.match(words[after]):
            after += 1
        if after >= len(words):
            break
        same_shell = same_shell and name in _SAME_SHELL
        directories.extend(moves)
        index = after
    return words[index:], directories, same_shell
