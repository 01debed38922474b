"""Reading GitHub Actions expressions: the ``${{ }}`` templates of a workflow string, and the
syntax tree of one expression. Pure.

The grammar, loosest binding first (every binary operator is left-associative)::

    expression := or
    or         := and ("||" and)*
    and        := equality ("&&" equality)*
    equality   := comparison (("==" | "!=") comparison)*
    comparison := unary (("<" | "<=" | ">" | ">=") unary)*
    unary      := "!"* postfix
    postfix    := primary ("." (identifier | "*") | "[" ("*" | expression) "]")*
    primary    := literal | identifier "(" [expression ("," expression)*] ")"
                | identifier | "(" expression ")"

Workflow text is untrusted input, so the work is bounded: a text longer than ``MAX_LENGTH``
characters, or whose tree is deeper than ``MAX_DEPTH`` levels, is refused with the same
``ExpressionSyntaxError`` as any other unreadable text. Depth counts one level for every node
between the root and a leaf (binary operands included, so a long ``||`` chain counts too) and
one for every pair of parentheses. Callers that recurse over a tree can then rely on its depth,
and the parser itself recurses only into parentheses, brackets and call arguments, each of
which adds a level, so it never comes near Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import attrs

from .lexer import KEYWORDS, ExpressionSyntaxError, Kind, Token, tokenize
from .nodes import Binary, Call, Filter, Index, Literal, Name, Node, Property, Unary

__all__ = [
    "MAX_DEPTH",
    "MAX_LENGTH",
    "ExpressionSyntaxError",
    "Template",
    "parse_expression",
    "templates",
    "walk",
]

MAX_DEPTH: Final = 64
MAX_LENGTH: Final = 65_536

# Binding strength of the binary operators: a higher number binds tighter.
_PRECEDENCE: Final[dict[str, int]] = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
}

_TEMPLATE_OPEN: Final = "${{"
_TEMPLATE_CLOSE: Final = "}}"

_TOO_LONG: Final = "expression too long"
_TOO_DEEP: Final = "expression nested too deeply"
_EMPTY: Final = "empty expression"
_UNEXPECTED_TOKEN: Final = "unexpected token"
_UNEXPECTED_END: Final = "unexpected end of expression"
_EXPECTED_PROPERTY: Final = "expected a property name"
_EXPECTED_BRACKET: Final = "expected ']'"
_EXPECTED_PAREN: Final = "expected ')'"
_EXPECTED_ARGUMENT_END: Final = "expected ',' or ')'"
_UNTERMINATED_TEMPLATE: Final = "unterminated template"


@attrs.frozen
class Template:
    """One ``${{ ... }}`` of a workflow string. ``body`` is the text between the braces as
    written (spaces kept), so that ``body_start`` plus an offset within the body (for example an
    ``ExpressionSyntaxError.offset`` from parsing it) is an offset in the whole string."""

    body: str
    start: int
    body_start: int


def templates(text: str) -> tuple[Template, ...]:
    """Every ${{ ... }} in a workflow string, in order.

    The closing ``}}`` is the first one outside a single-quoted string literal of the body, so
    ``${{ format('}}') }}`` is one template, as GitHub reads it. An unterminated ``${{`` raises
    ExpressionSyntaxError at its offset. Text outside the templates is not looked at.
    """
    found: list[Template] = []
    position = 0
    while (start := text.find(_TEMPLATE_OPEN, position)) >= 0:
        body_start = start + len(_TEMPLATE_OPEN)
        end = _template_end(text, body_start)
        if end < 0:
            raise ExpressionSyntaxError(_UNTERMINATED_TEMPLATE, start)
        found.append(Template(text[body_start:end], start, body_start))
        position = end + len(_TEMPLATE_CLOSE)
    return tuple(found)


def _template_end(text: str, position: int) -> int:
    """The offset of the ``}}`` that closes a body starting at ``position``, or -1.

    Inside a string literal a doubled quote escapes one quote; toggling on every quote treats
    ``''`` as leaving the string and entering it again at once, which lands in the same place.
    """
    in_string = False
    while position < len(text):
        char = text[position]
        if char == "'":
            in_string = not in_string
        elif not in_string and text.startswith(_TEMPLATE_CLOSE, position):
            return position
        position += 1
    return -1


def parse_expression(text: str) -> Node:
    """The syntax tree of ``text``, which must be exactly one expression (whitespace around it
    is allowed). Raises ExpressionSyntaxError, with the offset of the problem, otherwise."""
    if len(text) > MAX_LENGTH:
        raise ExpressionSyntaxError(_TOO_LONG, MAX_LENGTH)
    tokens = tokenize(text)
    if tokens[0].kind is Kind.END:
        raise ExpressionSyntaxError(_EMPTY, tokens[0].start)
    parser = _Parser(tokens)
    result = parser.expression()
    parser.expect_end()
    return result.node


def walk(node: Node) -> Iterator[Node]:
    """The node and every node below it, pre-order, left to right.

    An explicit stack rather than recursion, so that a tree built by hand (deeper than the
    parser would allow) is walked all the same.
    """
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(_children(current)))


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Property | Filter):
        return (node.target,)
    if isinstance(node, Index):
        return (node.target, node.index)
    if isinstance(node, Call):
        return node.arguments
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    return ()


@attrs.frozen
class _Parsed:
    """A node with what building on it needs: its depth, and where its source begins (which is
    before ``node.start`` when the node was written in parentheses)."""

    node: Node
    depth: int
    begin: int


class _Parser:
    """Recursive descent over the token list, with an explicit operator stack for the binary
    levels so that a deep nesting costs few Python frames per level."""

    def __init__(self, tokens: list[Token]) -> None:
        self._tokens = tokens
        self._index = 0
        # How many parentheses, brackets and argument lists enclose the current token.
        self._nesting = 0

    def _peek(self, ahead: int = 0) -> Token:
        return self._tokens[min(self._index + ahead, len(self._tokens) - 1)]

    def _advance(self) -> Token:
        token = self._peek()
        self._index += 1
        return token

    def _fail(self, message: str, token: Token) -> ExpressionSyntaxError:
        if token.kind is Kind.END and message == _UNEXPECTED_TOKEN:
            message = _UNEXPECTED_END
        return ExpressionSyntaxError(message, token.start)

    def _expect(self, kind: Kind, message: str) -> Token:
        token = self._peek()
        if token.kind is not kind:
            raise self._fail(message, token)
        return self._advance()

    def expect_end(self) -> None:
        self._expect(Kind.END, _UNEXPECTED_TOKEN)

    def _enter(self, token: Token) -> None:
        """Note one more enclosing bracket; refused before the recursion it would start."""
        self._nesting += 1
        if self._nesting > MAX_DEPTH:
            raise ExpressionSyntaxError(_TOO_DEEP, token.start)

    def _leave(self) -> None:
        self._nesting -= 1

    @staticmethod
    def _built(node: Node, depth: int, begin: int, at: int) -> _Parsed:
        if depth > MAX_DEPTH:
            raise ExpressionSyntaxError(_TOO_DEEP, at)
        return _Parsed(node, depth, begin)

    def expression(self) -> _Parsed:
        """One expression of binary operators over operands, reduced by precedence."""
        operands = [self._operand()]
        operators: list[Token] = []
        while (token := self._peek()).kind is Kind.OPERATOR:
            precedence = _PRECEDENCE[token.text]
            # Left associativity: an operator of the same level already on the stack binds
            # first, so ``a == b == c`` groups as ``(a == b) == c``.
            while operators and _PRECEDENCE[operators[-1].text] >= precedence:
                self._reduce(operands, operators)
            operators.append(self._advance())
            operands.append(self._operand())
        while operators:
            self._reduce(operands, operators)
        return operands[0]

    def _reduce(self, operands: list[_Parsed], operators: list[Token]) -> None:
        operator = operators.pop()
        right = operands.pop()
        left = operands.pop()
        node = Binary(operator.text, left.node, right.node, left.begin)
        depth = max(left.depth, right.depth) + 1
        operands.append(self._built(node, depth, left.begin, operator.start))

    def _operand(self) -> _Parsed:
        """``!``* then a primary and its property accesses, indexes and filters."""
        bangs: list[Token] = []
        while self._peek().kind is Kind.BANG:
            bangs.append(self._advance())
        parsed = self._postfix(self._primary())
        for bang in reversed(bangs):
            node = Unary(bang.text, parsed.node, bang.start)
            parsed = self._built(node, parsed.depth + 1, bang.start, bang.start)
        return parsed

    def _postfix(self, parsed: _Parsed) -> _Parsed:
        while True:
            token = self._peek()
            node: Node
            if token.kind is Kind.DOT:
                self._advance()
                name = self._advance()
                if name.kind is Kind.STAR:
                    node = Filter(parsed.node, parsed.begin)
                elif name.kind is Kind.WORD:
                    node = Property(parsed.node, name.text, parsed.begin)
                else:
                    raise self._fail(_EXPECTED_PROPERTY, name)
                depth = parsed.depth + 1
            elif token.kind is Kind.LEFT_BRACKET:
                self._advance()
                self._enter(token)
                if self._peek().kind is Kind.STAR and self._peek(1).kind is Kind.RIGHT_BRACKET:
                    self._advance()
                    node = Filter(parsed.node, parsed.begin)
                    depth = parsed.depth + 1
                else:
                    index = self.expression()
                    node = Index(parsed.node, index.node, parsed.begin)
                    depth = max(parsed.depth, index.depth) + 1
                self._expect(Kind.RIGHT_BRACKET, _EXPECTED_BRACKET)
                self._leave()
            else:
                return parsed
            parsed = self._built(node, depth, parsed.begin, token.start)

    def _primary(self) -> _Parsed:
        token = self._advance()
        if token.kind is Kind.NUMBER or token.kind is Kind.STRING:
            return _Parsed(Literal(token.value, token.start), 0, token.start)
        if token.kind is Kind.WORD:
            if token.text in KEYWORDS:
                return _Parsed(Literal(KEYWORDS[token.text], token.start), 0, token.start)
            if self._peek().kind is Kind.LEFT_PAREN:
                return self._call(token)
            return _Parsed(Name(token.text, token.start), 0, token.start)
        if token.kind is Kind.LEFT_PAREN:
            self._enter(token)
            inner = self.expression()
            self._expect(Kind.RIGHT_PAREN, _EXPECTED_PAREN)
            self._leave()
            # The group adds a level without a node: the node inside keeps its own start.
            return self._built(inner.node, inner.depth + 1, token.start, token.start)
        raise self._fail(_UNEXPECTED_TOKEN, token)

    def _call(self, name: Token) -> _Parsed:
        opening = self._advance()
        self._enter(opening)
        arguments: list[_Parsed] = []
        if self._peek().kind is Kind.RIGHT_PAREN:
            self._advance()
        else:
            while True:
                arguments.append(self.expression())
                separator = self._advance()
                if separator.kind is Kind.RIGHT_PAREN:
                    break
                if separator.kind is not Kind.COMMA:
                    raise self._fail(_EXPECTED_ARGUMENT_END, separator)
        self._leave()
        node = Call(name.text, tuple(argument.node for argument in arguments), name.start)
        depth = max((argument.depth for argument in arguments), default=0) + 1
        return self._built(node, depth, name.start, opening.start)
