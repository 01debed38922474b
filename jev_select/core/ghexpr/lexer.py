"""The tokens of a GitHub Actions expression, read in one pass before parsing. Pure.

The language needs one token of memory: a ``.`` is a property access after something that ends
an operand (``a.b``, ``f(x).b``) but starts a number where an operand is due (``a == .5``).
Every other decision is local to the characters at hand, so the whole text is turned into a
list of tokens once, and the parser only looks ahead in that list.
"""

from __future__ import annotations

import enum
from typing import Final

import attrs

from ...errors import JevSelectError

__all__ = [
    "KEYWORDS",
    "MAX_EXACT_INTEGER",
    "ExpressionSyntaxError",
    "Kind",
    "Token",
    "tokenize",
]

# The values the three keyword words stand for, where an operand is due. After a dot the same
# words are plain property names.
KEYWORDS: Final[dict[str, bool | None]] = {"true": True, "false": False, "null": None}

# Integers beyond this size would not survive the trip through a double, GitHub's number type,
# so they are kept as floats: the value a caller sees is the one GitHub computes with.
MAX_EXACT_INTEGER: Final = 2**53

_WHITESPACE: Final = frozenset(" \t\n\r")
_DIGITS: Final = frozenset("0123456789")
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
_IDENTIFIER_START: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_IDENTIFIER_PART: Final = _IDENTIFIER_START | _DIGITS | {"-"}
# A number glued to one of these (``1x``, ``0xfg``, ``1.5_``) is a typo, not two tokens.
_NUMBER_FOLLOWER: Final = _IDENTIFIER_START | _DIGITS
# The number of decimal digits of MAX_EXACT_INTEGER.
_EXACT_DIGITS: Final = len(str(MAX_EXACT_INTEGER))

_UNEXPECTED_CHARACTER: Final = "unexpected character"
_UNTERMINATED_STRING: Final = "unterminated string"
_MALFORMED_NUMBER: Final = "malformed number"


class ExpressionSyntaxError(JevSelectError):
    """The text is not an expression of the language, or is too long or too deep to read.

    ``offset`` is where the problem was found, 0-based within the text given to the parser;
    ``message`` is a short fixed description that never repeats any of that text, since the
    text may come from a workflow an attacker wrote.
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message, offset)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        return f"{self.message} at offset {self.offset}"


class Kind(enum.Enum):
    """What a token is. Punctuation kinds carry no value; ``OPERATOR`` holds any binary operator
    in ``Token.text``, since the parser treats them alike apart from their precedence."""

    NUMBER = enum.auto()
    STRING = enum.auto()
    WORD = enum.auto()
    OPERATOR = enum.auto()
    BANG = enum.auto()
    DOT = enum.auto()
    STAR = enum.auto()
    COMMA = enum.auto()
    LEFT_PAREN = enum.auto()
    RIGHT_PAREN = enum.auto()
    LEFT_BRACKET = enum.auto()
    RIGHT_BRACKET = enum.auto()
    END = enum.auto()


@attrs.frozen
class Token:
    """One token: its kind, its source text, where it starts, and the decoded value of a number
    or string (None for every other kind)."""

    kind: Kind
    text: str
    start: int
    value: str | int | float | None = None


# After one of these a ``.`` reads as a property access, not as the start of a number.
_ENDS_OPERAND: Final = frozenset(
    {Kind.NUMBER, Kind.STRING, Kind.WORD, Kind.STAR, Kind.RIGHT_PAREN, Kind.RIGHT_BRACKET}
)

_SINGLE: Final[dict[str, Kind]] = {
    "(": Kind.LEFT_PAREN,
    ")": Kind.RIGHT_PAREN,
    "[": Kind.LEFT_BRACKET,
    "]": Kind.RIGHT_BRACKET,
    ",": Kind.COMMA,
    "*": Kind.STAR,
}

# Two-character operators first, so that ``<=`` is never read as ``<`` then ``=``.
_OPERATORS: Final = ("==", "!=", "<=", ">=", "&&", "||", "<", ">")


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text`` in order, ending with one ``END`` token at ``len(text)``."""
    tokens: list[Token] = []
    size = len(text)
    position = 0
    while True:
        while position < size and text[position] in _WHITESPACE:
            position += 1
        if position >= size:
            tokens.append(Token(Kind.END, "", size))
            return tokens
        token = _token_at(text, position, tokens[-1].kind if tokens else None)
        tokens.append(token)
        position += len(token.text)


def _token_at(text: str, position: int, previous: Kind | None) -> Token:
    char = text[position]
    following = text[position + 1 : position + 2]
    if char == "'":
        return _string(text, position)
    if char in _DIGITS or char == "-":
        return _number(text, position)
    if char == ".":
        if previous not in _ENDS_OPERAND and following in _DIGITS:
            return _number(text, position)
        return Token(Kind.DOT, char, position)
    if char in _IDENTIFIER_START:
        end = position + 1
        while end < len(text) and text[end] in _IDENTIFIER_PART:
            end += 1
        return Token(Kind.WORD, text[position:end], position)
    if char in _SINGLE:
        return Token(_SINGLE[char], char, position)
    for operator in _OPERATORS:
        if text.startswith(operator, position):
            return Token(Kind.OPERATOR, operator, position)
    if char == "!":
        return Token(Kind.BANG, char, position)
    # A lone ``=``, ``&`` or ``|``, a double quote, and anything else outside the language.
    raise ExpressionSyntaxError(_UNEXPECTED_CHARACTER, position)


def _string(text: str, start: int) -> Token:
    """A single-quoted string; two quotes in a row stand for one quote inside it."""
    pieces: list[str] = []
    position = start + 1
    while True:
        close = text.find("'", position)
        if close < 0:
            raise ExpressionSyntaxError(_UNTERMINATED_STRING, start)
        pieces.append(text[position:close])
        if text.startswith("''", close):
            pieces.append("'")
            position = close + 2
            continue
        return Token(Kind.STRING, text[start : close + 1], start, "".join(pieces))


def _digits_end(text: str, position: int, allowed: frozenset[str]) -> int:
    while position < len(text) and text[position] in allowed:
        position += 1
    return position


def _number(text: str, start: int) -> Token:
    """A number as JavaScript writes one, with an optional ``-`` glued to it.

    The language has no subtraction, so a ``-`` can only begin a negative number; one not
    followed by the number's digits is an error here rather than a token of its own.
    """
    negative = text[start] == "-"
    position = start + 1 if negative else start
    value: int | float
    if text.startswith(("0x", "0X"), position):
        end = _digits_end(text, position + 2, _HEX_DIGITS)
        if end == position + 2:
            raise ExpressionSyntaxError(_MALFORMED_NUMBER, start)
        magnitude = int(text[position + 2 : end], 16)
        value = _integer(-magnitude if negative else magnitude)
    else:
        end = _digits_end(text, position, _DIGITS)
        digits = end - position
        integral = True
        if end < len(text) and text[end] == ".":
            integral = False
            fraction_end = _digits_end(text, end + 1, _DIGITS)
            digits += fraction_end - end - 1
            end = fraction_end
        if not digits:
            raise ExpressionSyntaxError(_MALFORMED_NUMBER, start)
        if end < len(text) and text[end] in "eE":
            integral = False
            exponent = end + 1
            if exponent < len(text) and text[exponent] in "+-":
                exponent += 1
            end = _digits_end(text, exponent, _DIGITS)
            if end == exponent:
                raise ExpressionSyntaxError(_MALFORMED_NUMBER, start)
        source = text[start:end]
        # Python refuses to convert very long digit strings to int; past 16 significant digits
        # the value is beyond MAX_EXACT_INTEGER anyway, so the float parser (which has no such
        # limit) gives the answer directly.
        significant = text[position:end].lstrip("0")
        if integral and len(significant) <= _EXACT_DIGITS:
            magnitude = int(significant or "0")
            value = _integer(-magnitude if negative else magnitude)
        else:
            value = float(source)
    if end < len(text) and text[end] in _NUMBER_FOLLOWER:
        raise ExpressionSyntaxError(_MALFORMED_NUMBER, start)
    return Token(Kind.NUMBER, text[start:end], start, value)


def _integer(value: int) -> int | float:
    """``value`` itself while a double holds it exactly, else the double nearest it (an infinity
    past the double range, as in JavaScript)."""
    if abs(value) <= MAX_EXACT_INTEGER:
        return value
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")
