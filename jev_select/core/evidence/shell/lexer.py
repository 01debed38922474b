"""The tokens of shell source, made one at a time as the parser asks for them: words with their
quotes removed, operators, redirections, newlines (after which the pending here-document bodies
are skipped, to be read by the parser once the newline is consumed) and ``((...))``. Pure.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from typing import Final, NamedTuple

import attrs

from .directories import Dir, State
from .scanner import Scanner, Unreadable

__all__ = [
    "ARITH",
    "EOF",
    "HEREDOCS",
    "NEWLINE",
    "OP",
    "REDIR",
    "WORD",
    "Heredoc",
    "Lexer",
    "Token",
    "is_word",
]


class Token(NamedTuple):
    kind: int
    start: int
    # End of the token's content (a trailing line continuation is not content).
    end: int
    # The source text of the token.
    text: str
    # For words, the value after quote removal.
    value: str


# The kinds of token.
WORD, OP, REDIR, NEWLINE, ARITH, EOF = range(6)


@attrs.define(eq=False)
class Heredoc:
    """A here-document: what the lexer finds (its delimiter, then its body), and what the parser
    learns of the command it belongs to."""

    delimiter: str
    strip_tabs: bool
    # Unquoted delimiter: the shell expands ``$`` and backquotes in the body.
    expands: bool
    # The body, from the line after the operator's to the start of the delimiter line.
    body_start: int = -1
    body_end: int = -1
    # The shell state where the redirection is made (None: not known to the parser).
    state: State | None = None
    # The body is the script of a shell reading standard input, run in ``directory``.
    shell: bool = False
    directory: Dir | None = None


_BLANKS: Final = re.compile(r"(?:[ \t]|\\\n)*")
_PLAIN: Final = re.compile(r"[^ \t\n;&|()<>\\'\"$`]+")
_OPERATOR: Final = re.compile(
    r";;&|;;|;&|;|&&|&>>|&>|&|\|\||\|&|\||\(|\)|<<<|<<-|<<|<&|<>|<|>>|>&|>\||>"
)
_IO_NUMBER: Final = re.compile(r"(?:[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})(?=[<>])")
_REDIRECTIONS: Final = frozenset(
    {"&>>", "&>", "<<<", "<<-", "<<", "<&", "<>", "<", ">>", ">&", ">|", ">"}
)
HEREDOCS: Final = frozenset({"<<", "<<-"})
_WORD_BREAK: Final = frozenset(" \t\n;&|()<>")
# Any quoting in a here-document's delimiter word keeps its body from being expanded.
_QUOTING: Final = re.compile(r"['\"\\\\]")
_ARRAY_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=\Z")


def is_word(token: Token, text: str) -> bool:
    return token.kind == WORD and token.text == text


def _skip_blanks(text: str, index: int) -> int:
    blanks = _BLANKS.match(text, index)
    return index if blanks is None else blanks.end()


class Lexer(Scanner):
    """Tokens made one at a time from ``script``, as a parser (the subclass) asks for them: what
    a token is depends on where the parser stands."""

    def __init__(self, script: str) -> None:
        super().__init__(script)
        self._pos = 0
        self._queue: list[Token] = []
        # The here-documents whose bodies start after the next newline.
        self._heredocs: list[Heredoc] = []
        # Each here-document operator's, by where its token starts.
        self._heredoc_operators: dict[int, Heredoc] = {}
        # The bodies skipped after a newline token, by where the token starts.
        self._newline_bodies: dict[int, list[Heredoc]] = {}
        self._consumed = 0
        # Inside a substitution: an unreadable text starts at the command that holds it.
        self._nested = False
        # The commands read are not reported (the outer shell already reported them).
        self._discard = False
        # Where the token being made starts: where an unreadable text starts, outside a command.
        self._token_start = 0

    def _peek(self) -> Token:
        if not self._queue:
            self._lex()
        return self._queue[0]

    def _next(self) -> Token:
        token = self._peek()
        del self._queue[0]
        self._consumed += 1
        if self._newline_bodies and token.kind == NEWLINE:
            bodies = self._newline_bodies.pop(token.start, None)
            if bodies is not None:
                # The commands of the line are read: the bodies come next in source order.
                self._read_bodies(bodies)
        return token

    @abstractmethod
    def _read_bodies(self, bodies: list[Heredoc]) -> None:
        """Reads the commands of here-document bodies, once the newline before them is consumed."""

    def _skip_newlines(self) -> None:
        while self._peek().kind == NEWLINE:
            self._next()

    def _expect(self, word: str) -> bool:
        if is_word(self._peek(), word):
            self._next()
            return True
        return False

    def _at_parentheses(self) -> bool:
        opening = self._peek()
        if opening.kind != OP or opening.text != "(":
            return False
        if len(self._queue) > 1:
            closing = self._queue[1]
            return closing.kind == OP and closing.text == ")"
        # Read from the text, not as a token: a token after "(" that is not ")" belongs to a
        # later command, whose substitutions must not be read before this one is.
        return self._text.startswith(")", _skip_blanks(self._text, self._pos))

    def _lex(self) -> None:
        text, size = self._text, self._size
        index = _skip_blanks(text, self._pos)
        while index < size and text[index] == "#":
            index = self._comment_end(index)
        if not self._nested:
            self._token_start = index
        if index >= size:
            if self._heredocs:
                raise Unreadable
            self._pos = size
            self._queue.append(Token(EOF, size, size, "", ""))
            return
        start = index
        character = text[index]
        if character == "\n":
            if self._heredocs:
                self._newline_bodies[start] = self._heredocs
                self._pos = self._heredoc_bodies(index + 1)
            else:
                self._pos = index + 1
            self._queue.append(Token(NEWLINE, start, index + 1, "\n", "\n"))
            return
        number = _IO_NUMBER.match(text, index)
        if number is not None:
            index = number.end()
            character = text[index]
        substitution = character in "<>" and text.startswith("(", index + 1)
        if character in ";&|()<>" and not substitution:
            if number is None and text.startswith("((", index):
                end = self._arithmetic_end(index)
                if end >= 0:
                    # Its substitutions are read when the parser takes it as a command.
                    self._pos = end
                    self._queue.append(Token(ARITH, start, end, text[start:end], ""))
                    return
            operator = _OPERATOR.match(text, index)
            if operator is None:  # every character tested above starts an operator
                raise Unreadable
            end = operator.end()
            self._pos = end
            token = Token(
                REDIR if operator.group() in _REDIRECTIONS else OP,
                start,
                end,
                text[start:end],
                operator.group(),
            )
            if operator.group() not in HEREDOCS:
                self._queue.append(token)
                return
            # The delimiter is read now: the body starts after the end of this line.
            word_start = _skip_blanks(text, end)
            if word_start >= size or text[word_start] in _WORD_BREAK:
                raise Unreadable
            delimiter, word_end, content_end = self._word(word_start)
            # No closure here: one would make the locals of this hot function cells.
            quoted = _QUOTING.search(text, word_start, content_end) is not None
            heredoc = Heredoc(delimiter, operator.group() == "<<-", not quoted)
            self._heredocs.append(heredoc)
            self._heredoc_operators[start] = heredoc
            self._pos = word_end
            self._queue.append(token)
            self._queue.append(
                Token(WORD, word_start, content_end, text[word_start:content_end], delimiter)
            )
            return
        value, end, content_end = self._word(start)
        self._pos = end
        self._queue.append(Token(WORD, start, content_end, text[start:content_end], value))

    def _comment_end(self, index: int) -> int:
        """The newline (or end) that ends the comment at ``index``; an expression holds none."""
        text = self._text
        while True:
            newline = text.find("\n", index)
            limit = self._size if newline < 0 else newline
            expression = text.find("${{", index, limit)
            if expression < 0:
                return limit
            index = self._expression_end(expression)

    def _heredoc_bodies(self, index: int) -> int:
        text, size = self._text, self._size
        pending, self._heredocs = self._heredocs, []
        for heredoc in pending:
            delimiter, strip_tabs = heredoc.delimiter, heredoc.strip_tabs
            heredoc.body_start = index
            while True:
                if index >= size:
                    raise Unreadable
                newline = text.find("\n", index)
                end = size if newline < 0 else newline
                line = text[index:end]
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    heredoc.body_end = index
                    index = end + 1 if newline >= 0 else size
                    break
                index = end + 1 if newline >= 0 else size
        return index

    def _word(self, index: int) -> tuple[str, int, int]:
        """A word from ``index``: its value, where it ends, and where its content ends."""
        text, size = self._text, self._size
        start = index
        parts: list[str] = []
        content_end = index
        while index < size:
            plain = _PLAIN.match(text, index)
            if plain is not None:
                parts.append(plain.group())
                index = content_end = plain.end()
                continue
            character = text[index]
            if character == "\\":
                if text.startswith("\n", index + 1):
                    index += 2
                    continue
                parts.append(text[index + 1 : index + 2] or "\\")
                index = min(index + 2, size)
            elif character == "'":
                end = self._single_end(index + 1)
                parts.append(text[index + 1 : end - 1])
                index = end
            elif character == '"':
                index = self._double_end(index + 1, parts)
            elif character == "`":
                end = self._backtick_end(index + 1)
                parts.append(text[index:end])
                index = end
            elif character == "$":
                if text.startswith('$"', index):
                    index = self._double_end(index + 2, parts)
                elif text.startswith("$'", index):
                    index = self._ansi_c_end(index + 2, parts)
                else:
                    end = self._dollar_end(index)
                    parts.append(text[index:end])
                    index = end
            elif character in "<>" and text.startswith("(", index + 1):
                end = self._substitution_end(index + 2)
                parts.append(text[index:end])
                index = end
            elif character == "(" and _ARRAY_ASSIGNMENT.match(text, start, index):
                end = self._balanced_end(index)
                if end < 0:
                    raise Unreadable
                self._expansions_in(index + 1, end - 1, quoted=True)
                parts.append(text[index:end])
                index = end
            else:
                break
            content_end = index
        return "".join(parts), index, content_end
