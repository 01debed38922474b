"""GitHub Actions expressions, read without evaluating them. Pure.

A workflow string holds ``${{ ... }}`` templates whose bodies are expressions of a small
language (literals, contexts, property access, filters, function calls, ``!``, comparisons,
``&&`` and ``||``); ``templates`` finds the bodies as GitHub does, ``parse_expression`` turns one
into a tree of frozen records whose offsets point back into the text, and ``walk`` visits a
tree. Every refusal, whether the text is malformed, too long or too deep, is an
``ExpressionSyntaxError`` carrying the offset and a fixed message that never quotes the input.
"""

from __future__ import annotations

from .nodes import Binary, Call, Filter, Index, Literal, Name, Node, Property, Unary
from .parser import ExpressionSyntaxError, Template, parse_expression, templates, walk

__all__ = [
    "Binary",
    "Call",
    "ExpressionSyntaxError",
    "Filter",
    "Index",
    "Literal",
    "Name",
    "Node",
    "Property",
    "Template",
    "Unary",
    "parse_expression",
    "templates",
    "walk",
]
