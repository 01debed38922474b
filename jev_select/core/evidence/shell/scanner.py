"""Where the pieces of a shell word end: quoted strings (single, double, ANSI-C), backticks,
``$`` expansions, arithmetic, balanced parentheses and GitHub's ``${{ }}``. Pure.

A piece is skipped, not expanded: a substitution stays in its word as written. The commands of a
``$(...)`` are read by the parser (``Scanner._substitution_end``), since only a parser can tell
which ``)`` ends them; the scanner finds where a backquoted command, an arithmetic expression
or an array's words end and hands their text to the parser too (``_backquoted``,
``_expansions_in``), which reads the commands they run.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Final

from ....errors import JevSelectError

__all__ = ["NESTING_MAX", "Scanner", "Unreadable"]


class Unreadable(JevSelectError):
    """The source stops being shell this reader can follow."""


# Deeper nesting than this is read as unreadable, which bounds the recursion of the reader.
NESTING_MAX: Final = 32


_DOUBLE_PLAIN: Final = re.compile(r'[^"\\$`]+')
_ANSI_PLAIN: Final = re.compile(r"[^'\\$]+")
_BALANCE_STOP: Final = re.compile(r"[()'\"\\`$]")
_BACKTICK_STOP: Final = re.compile(r"[`\\$]")
_PARAMETER_STOP: Final = re.compile(r"[}'\"\\`$]")
_EXPRESSION_STOP: Final = re.compile(r"[}']")
_ANSI_ESCAPE: Final = re.compile(
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})"
    r"|U([0-9A-Fa-f]{1,8})|c(.))",
    re.DOTALL,
)
_ANSI_CHARACTERS: Final = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


class Scanner(ABC):
    """The ends of the pieces of a word in ``script``, from an index to the index after them;
    an unterminated piece raises ``Unreadable``, or gives -1 where a method says so. The nesting
    depth (``_enter``) counts the recursion of the scanner, the lexer and the parser alike."""

    def __init__(self, script: str) -> None:
        self._text = script
        self._size = len(script)
        self._depth = 0

    def _enter(self) -> None:
        self._depth += 1
        if self._depth > NESTING_MAX:
            raise Unreadable

    def _single_end(self, index: int) -> int:
        text = self._text
        while True:
            quote = text.find("'", index)
            expression = text.find("${{", index, self._size if quote < 0 else quote)
            if expression >= 0:
                index = self._expression_end(expression)
            elif quote < 0:
                raise Unreadable
            else:
                return quote + 1

    def _double_end(self, index: int, parts: list[str]) -> int:
        """Reads a double-quoted string from after its opening quote; returns its end."""
        text, size = self._text, self._size
        while True:
            plain = _DOUBLE_PLAIN.match(text, index)
            if plain is not None:
                parts.append(plain.group())
                index = plain.end()
            if index >= size:
                raise Unreadable
            character = text[index]
            if character == '"':
                return index + 1
            if character == "\\":
                following = text[index + 1 : index + 2]
                if following == "\n":
                    index += 2
                elif following and following in '$`"\\':
                    parts.append(following)
                    index += 2
                else:
                    parts.append("\\")
                    index += 1
            elif character == "`":
                end = self._backtick_end(index + 1)
                parts.append(text[index:end])
                index = end
            else:
                end = self._dollar_end(index)
                parts.append(text[index:end])
                index = end

    def _ansi_c_end(self, index: int, parts: list[str]) -> int:
        text, size = self._text, self._size
        while True:
            plain = _ANSI_PLAIN.match(text, index)
            if plain is not None:
                parts.append(plain.group())
                index = plain.end()
            if index >= size:
                raise Unreadable
            character = text[index]
            if character == "'":
                return index + 1
            if character == "$":
                end = self._expression_end(index) if text.startswith("${{", index) else index + 1
                parts.append(text[index:end])
                index = end
                continue
            escape = _ANSI_ESCAPE.match(text, index)
            if escape is None:
                parts.append(text[index : index + 2])
                index += 2
                continue
            parts.append(_ansi_character(escape))
            index = escape.end()

    def _backtick_end(self, index: int) -> int:
        """Reads a backquoted command from after its opening backquote; returns its end."""
        text = self._text
        start = index - 1
        while True:
            stop = _BACKTICK_STOP.search(text, index)
            if stop is None:
                raise Unreadable
            index = stop.start()
            character = text[index]
            if character == "`":
                self._backquoted(start, index + 1)
                return index + 1
            if character == "\\":
                index += 2
            elif text.startswith("${{", index):
                index = self._expression_end(index)
            else:
                index += 1

    def _dollar_end(self, index: int) -> int:
        """The end of whatever a ``$`` at ``index`` starts (often just the ``$``)."""
        text = self._text
        if text.startswith("${{", index):
            return self._expression_end(index)
        if text.startswith("$((", index):
            end = self._arithmetic_end(index + 1)
            if end < 0:
                return self._substitution_end(index + 2)
            self._expansions_in(index + 3, end - 2, quoted=False)
            return end
        if text.startswith("$(", index):
            return self._substitution_end(index + 2)
        if text.startswith("${", index):
            return self._parameter_end(index + 2)
        return index + 1

    def _expression_end(self, index: int) -> int:
        """The end of the ``${{ ... }}`` at ``index``; a ``}}`` in a string literal ends none."""
        text = self._text
        in_string = False
        index += 3
        while True:
            stop = _EXPRESSION_STOP.search(text, index)
            if stop is None:
                raise Unreadable
            index = stop.start()
            if text[index] == "'":
                # GitHub escapes a quote in a string by doubling it, which toggles twice.
                in_string = not in_string
            elif not in_string and text.startswith("}}", index):
                return index + 2
            index += 1

    def _parameter_end(self, index: int) -> int:
        text = self._text
        self._enter()
        while True:
            stop = _PARAMETER_STOP.search(text, index)
            if stop is None:
                raise Unreadable
            index = stop.start()
            character = text[index]
            if character == "}":
                self._depth -= 1
                return index + 1
            if character == "\\":
                index += 2
            elif character == "'":
                index = self._single_end(index + 1)
            elif character == '"':
                index = self._double_end(index + 1, [])
            elif character == "`":
                index = self._backtick_end(index + 1)
            else:
                index = self._dollar_end(index)

    def _balanced_end(self, index: int) -> int:
        """The end of the parenthesised text at ``index``, or -1; quotes are skipped."""
        text = self._text
        depth = 0
        while True:
            stop = _BALANCE_STOP.search(text, index)
            if stop is None:
                return -1
            index = stop.start()
            character = text[index]
            if character == "(":
                depth += 1
                index += 1
            elif character == ")":
                depth -= 1
                index += 1
                if depth <= 0:
                    return index
            elif character == "\\":
                index += 2
            elif character == "'":
                index = text.find("'", index + 1) + 1
                if index == 0:
                    return -1
            elif character in '"`':
                index = self._quoted_end(index + 1, character)
                if index < 0:
                    return -1
            elif text.startswith("${{", index):
                index = self._expression_end(index)
            else:
                index += 1

    def _quoted_end(self, index: int, quote: str) -> int:
        text = self._text
        while True:
            stop = text.find(quote, index)
            if stop < 0:
                return -1
            backslashes = len(text[index:stop]) - len(text[index:stop].rstrip("\\"))
            if backslashes % 2 == 0:
                return stop + 1
            index = stop + 1

    def _arithmetic_end(self, index: int) -> int:
        """The end of ``((...))`` at ``index``, or -1 when the text is two opening parentheses
        (bash's rule: the parenthesis matching the second ``(`` must be followed by ``)``)."""
        inner = self._balanced_end(index + 1)
        if inner < 0 or not self._text.startswith(")", inner):
            return -1
        return inner + 1

    @abstractmethod
    def _substitution_end(self, index: int) -> int:
        """Reads the commands of a ``$(``/``<(``/``>(`` from ``index`` to their ``)``; returns
        the end of the ``)``."""

    @abstractmethod
    def _backquoted(self, start: int, end: int) -> None:
        """Reads the commands of the backquoted text from the backquote at ``start`` to ``end``
        (after the closing backquote)."""

    @abstractmethod
    def _expansions_in(self, start: int, end: int, *, quoted: bool) -> None:
        """Reads the commands of the substitutions in ``start:end``, text whose extent is already
        known (an arithmetic expression, an array's words); ``quoted``: quotes are quotes there
        (not in arithmetic)."""


def _ansi_character(escape: re.Match[str]) -> str:
    named, octal, hexadecimal, short, long, control = escape.groups()
    if named is not None:
        return _ANSI_CHARACTERS[named]
    if control is not None:
        return chr(ord(control) & 0x1F)
    if octal is not None:
        return chr(int(octal, 8) & 0xFF)
    code = int(hexadecimal or short or long, 16)
    return chr(code) if code <= 0x10FFFF else escape.group()
