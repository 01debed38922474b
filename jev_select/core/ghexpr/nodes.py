"""The syntax tree of a GitHub Actions expression. Pure.

Each record keeps ``start``, the 0-based offset of the first character of its source in the text
that was parsed, so that a caller can point at the part of a workflow string it could not
decide. A node's source includes the parentheses written around its leftmost operand: in
``(a || b) && c`` the ``&&`` node starts at 0 and the ``||`` node inside at 1. Parentheses
themselves leave no node; the grouped node keeps the start of its own first character.

The records are frozen and compare by value (``start`` included), so two parses of one text
give equal trees.
"""

from __future__ import annotations

from typing import TypeAlias

import attrs

__all__ = [
    "Binary",
    "Call",
    "Filter",
    "Index",
    "Literal",
    "Name",
    "Node",
    "Property",
    "Unary",
]


@attrs.frozen
class Literal:
    """``null``, ``true``, ``false``, a number or a single-quoted string, already decoded.

    A number written as an integer (decimal without fraction or exponent, or hexadecimal) is an
    ``int`` while it lies within 2**53 of zero, where a double (GitHub's one number type) still
    holds it exactly; any other number is a ``float``.
    """

    value: str | int | float | bool | None
    start: int


@attrs.frozen
class Name:
    """A top-level identifier such as ``github`` or ``needs``: a context, spelled as written."""

    name: str
    start: int


@attrs.frozen
class Property:
    """``target.name``, with ``name`` as written: it may hold hyphens or be a keyword word."""

    target: Node
    name: str
    start: int


@attrs.frozen
class Index:
    """``target[index]``, where the index is any expression (``'b'``, ``0``, ``matrix.key``)."""

    target: Node
    index: Node
    start: int


@attrs.frozen
class Filter:
    """``target.*`` or ``target[*]``: the two spellings select the same thing, so share a node."""

    target: Node
    start: int


@attrs.frozen
class Call:
    """``function(arguments...)``. GitHub matches function names without regard to case, so the
    name is kept as written for messages and ``folded`` is what a caller compares."""

    function: str
    arguments: tuple[Node, ...]
    start: int

    @property
    def folded(self) -> str:
        """The function name in lower case: ``fromJSON`` and ``fromjson`` are one function."""
        return self.function.lower()


@attrs.frozen
class Unary:
    """``!operand``; ``operator`` is always ``"!"``, the language's one prefix operator."""

    operator: str
    operand: Node
    start: int


@attrs.frozen
class Binary:
    """``left operator right`` for the comparisons, the equalities, ``&&`` and ``||``."""

    operator: str
    left: Node
    right: Node
    start: int


Node: TypeAlias = Literal | Name | Property | Index | Filter | Call | Unary | Binary
