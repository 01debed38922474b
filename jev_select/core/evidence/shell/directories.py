"""The working directory of each command: ``cd``, ``pushd``, ``popd``, ``dirs -c`` and ``eval``,
and what a call of a function applies of its body. Pure.

A directory is relative to the repository root, or, in a function body, to the directory the
function is called from; where it cannot be known it is None, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, NamedTuple

__all__ = [
    "ROOT",
    "ROOT_DIR",
    "Dir",
    "Function",
    "State",
    "after_call",
    "directory_builtin",
    "join",
    "start_directory",
    "target",
]


class Dir(NamedTuple):
    """A directory: ``parts`` below the root, or, in a function body, ``ups`` levels above and
    then ``parts`` below the directory the function is called from."""

    anchor: int
    ups: int
    parts: tuple[str, ...]


class State(NamedTuple):
    current: Dir | None
    # The pushd stack below ``current``, most recent last.
    stack: tuple[Dir | None, ...]
    # A function body popped more entries than it pushed: the caller's stack is unknown after.
    underflow: bool


class Function(NamedTuple):
    number: int
    # What the body leaves behind; None while the body is still being read (a recursive call).
    effect: State | None


# The anchor of a directory below the repository root; a function body's is its number.
ROOT: Final = -1
ROOT_DIR: Final = Dir(ROOT, 0, ())

_WORKSPACE: Final = re.compile(
    r"(?:\$GITHUB_WORKSPACE|\$\{GITHUB_WORKSPACE\}|\$\{\{\s*(?i:github\.workspace)\s*\}\})"
    r"(?=/|\Z)"
)
_NOT_LITERAL: Final = re.compile(r"[$`*?\[]")
_NAMES_DIRECTORY_CHANGE: Final = re.compile(r"(?<![\w.-])(?:cd|pushd|popd)(?![\w.-])")


def start_directory(directory: str | None) -> Dir | None:
    """Where a step starts, from its ``working-directory`` relative to the repository root."""
    if directory is None:
        return None
    if directory in ("", "."):
        return ROOT_DIR
    return target(ROOT_DIR, directory)


def join(base: Dir | None, ups: int, parts: Sequence[str]) -> Dir | None:
    """``base``, then ``ups`` levels up, then down ``parts`` (which may hold ``.``/``..``)."""
    if base is None:
        return None
    anchor, above, below = base.anchor, base.ups, list(base.parts)
    for part in [".."] * ups + list(parts):
        if part in ("", "."):
            continue
        if part != "..":
            below.append(part)
        elif below:
            below.pop()
        elif anchor == ROOT:
            return None
        else:
            above += 1
    return Dir(anchor, above, tuple(below))


def target(current: Dir | None, path: str) -> Dir | None:
    """Where a ``cd`` to the literal word ``path`` goes from ``current``."""
    workspace = _WORKSPACE.match(path)
    if workspace is not None:
        current, path = ROOT_DIR, path[workspace.end() :]
    elif not path or path == "-" or path.startswith(("/", "~")):
        return None
    if _NOT_LITERAL.search(path):
        return None
    return join(current, 0, path.split("/"))


def _cd(current: Dir | None, arguments: Sequence[str]) -> Dir | None:
    operands = list(arguments)
    while operands and operands[0].startswith("-") and operands[0] != "-":
        option = operands.pop(0)
        if option == "--":
            break
        # -P, -L, -e and -@ change how a path is resolved or reported, not which one it is.
        if not set(option[1:]) <= set("PLe@"):
            return None
    # No operand goes home, more than one is an error: neither is a place in the repository.
    if len(operands) != 1:
        return None
    return target(current, operands[0])


def directory_builtin(name: str, arguments: Sequence[str], state: State) -> State:
    """The state after the builtin ``name`` (which may change no directory at all)."""
    current, stack, underflow = state
    operands = list(arguments)
    if operands[:1] == ["--"]:
        del operands[0]
    if name == "cd":
        return state._replace(current=_cd(current, arguments))
    if name == "pushd":
        if any(operand[:1] in ("-", "+") for operand in operands) or len(operands) > 1:
            # Rotations and -n move entries this reader does not follow.
            return state._replace(current=None)
        if not operands:
            # A bare pushd swaps the two top entries (and fails on an empty stack).
            if not stack:
                return state
            return State(stack[-1], (*stack[:-1], current), underflow)
        return State(target(current, operands[0]), (*stack, current), underflow)
    if name == "popd":
        if operands:
            return state._replace(current=None)
        if not stack:
            return State(None, (), True)
        return State(stack[-1], stack[:-1], underflow)
    if name == "dirs" and "-c" in arguments:
        return state._replace(stack=())
    if name == "eval" and any(_NAMES_DIRECTORY_CHANGE.search(word) for word in arguments):
        return state._replace(current=None)
    return state


def after_call(state: State, function: Function) -> State:
    """The state after a call of ``function`` from ``state``: what its body leaves behind, seen
    from the caller's directory."""
    number, effect = function
    current, stack, _ = state
    if effect is None:
        return state._replace(current=None)

    def rebase(directory: Dir | None) -> Dir | None:
        if directory is None or directory.anchor == ROOT:
            return directory
        if directory.anchor != number:
            return None
        return join(current, directory.ups, directory.parts)

    kept = () if effect.underflow else stack
    return State(
        rebase(effect.current),
        (*kept, *(rebase(entry) for entry in effect.stack)),
        state.underflow or effect.underflow,
    )
