"""The commands that run inside others: those of substitutions (``$(...)``, backquotes,
``<(...)``), of the expansions of a here-document body, and of the script a shell is given as a
word (``-c``, a here-string) or as a here-document. Pure.

Text whose extent is known before its commands are read (a backquoted command, a here-document
body, a shell's ``-c`` word, an arithmetic expression, an array's words) is read as a region of
its own (``Inner._read_region``): the reader reads it as if it were the whole source, then maps
what it found back to where it stands. Text a region cannot read ends that region only: the
commands read so far in it, then the rest of it as one command of unknown directory.
"""

from __future__ import annotations

import re
import sys
from abc import abstractmethod
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Final

from .directories import Dir, Function, State
from .lexer import OP, Heredoc, Lexer, Token
from .scanner import Unreadable

__all__ = [
    "NO_CLOSERS",
    "PARENTHESIS",
    "SHELLS",
    "STDIN_REDIRECTIONS",
    "Inner",
    "Record",
    "reads_stdin",
]

# A command read: its words, where its text starts and ends, and its directory.
Record = tuple[tuple[str, ...], int, int, Dir | None]
# From where a command's text stands in a region to where it stands in the text around it.
Remap = Callable[[int, int], tuple[int, int]]

PARENTHESIS: Final = frozenset({")"})
NO_CLOSERS: Final = frozenset[str]()
# The shells whose script can be a word (``-c``) or standard input (a here-document).
SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# The options of those shells that take the next word as their argument.
_SHELL_OPTION_ARGUMENTS: Final = frozenset("oO")
_SHELL_LONG_ARGUMENTS: Final = frozenset({"--rcfile", "--init-file"})
# ``_shell_script``: the shell reads its script from standard input.
_STDIN: Final = -1
STDIN_REDIRECTIONS: Final = frozenset({"<", "<<", "<<-", "<<<", "<>", "<&"})
# What a backslash escapes in a backquoted command, and in an expanding here-document body.
_BACKQUOTE_ESCAPES: Final = "$`\\"
_BODY_ESCAPES: Final = "$`\\\n"
# Where a piece that may run a command can start: in a here-document body or an arithmetic
# expression, and among words.
_BODY_STOP: Final = re.compile(r"[\\$`]")
_WORDS_STOP: Final = re.compile(r"[\\$`'\"<>]")
# What a region holds: commands, or the expansions of a here-document body or of words.
_COMMANDS, _BODY, _WORDS = range(3)
_FAR: Final = sys.maxsize


def _shell_script(words: Sequence[str]) -> int | None:
    """Where a shell command's script is: the index of the word ``-c`` runs, ``_STDIN`` when the
    shell reads it from standard input; None when ``words`` are no shell's or name a script
    file. Options are read as bash reads them; a word holding ``$`` or a backquote before the
    script is taken for options, so that a script that may be there is read."""
    name = words[0]
    if (name.rsplit("/", 1)[-1] if name.startswith("/") else name) not in SHELLS:
        return None
    command = from_stdin = False
    index, count = 1, len(words)
    while index < count:
        word = words[index]
        if word in ("--", "-"):
            index += 1
            break
        if word.startswith("--"):
            index += 2 if word in _SHELL_LONG_ARGUMENTS else 1
            continue
        if len(word) > 1 and word[0] in "-+":
            letters = word[1:]
            if word[0] == "-":
                command = command or "c" in letters
                from_stdin = from_stdin or "s" in letters
            index += 1 + sum(letter in _SHELL_OPTION_ARGUMENTS for letter in letters)
            continue
        if not command and ("$" in word or "`" in word):
            index += 1
            continue
        break
    if command:
        return index if index < count else None
    return _STDIN if index >= count or from_stdin else None


def _verbatim(text: str, value: str) -> tuple[int, bool] | None:
    """Where a word's ``value`` stands unchanged in its source ``text`` (all of it, or inside one
    pair of quotes), and whether the shell expanded its substitutions; None when quote removal
    changed more than the quotes around it."""
    if text == value:
        return 0, True
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and text[1:-1] == value:
        return 1, text[0] == '"'
    if text.startswith("$'") and text.endswith("'") and text[2:-1] == value:
        return 2, False
    return None


def _may_run(text: str) -> bool:
    return "$(" in text or "`" in text


def _may_run_in(text: str, start: int, end: int, *, quoted: bool) -> bool:
    if end <= start:
        return False
    if text.find("$(", start, end) >= 0 or text.find("`", start, end) >= 0:
        return True
    return quoted and (text.find("<(", start, end) >= 0 or text.find(">(", start, end) >= 0)


def reads_stdin(token: Token) -> bool:
    """Whether the redirection ``token`` is of standard input (no descriptor, or 0)."""
    operator, text = token.value, token.text
    return operator in STDIN_REDIRECTIONS and (text == operator or text == "0" + operator)


def _shifted(delta: int) -> Remap:
    return lambda start, end: (start + delta, end + delta)


def _mapped(positions: Sequence[int]) -> Remap:
    """A remap through the positions, in the text around, of each character of a region."""
    return lambda start, end: (positions[start], positions[end - 1] + 1)


def _unescaped(
    text: str, start: int, end: int, escapes: str, kept: Sequence[tuple[int, int]]
) -> tuple[str, Remap, list[tuple[int, int]]]:
    """``text[start:end]`` with each backslash before one of ``escapes`` removed (and a
    backslash-newline pair, when ``escapes`` holds the newline), except in the ``kept`` spans
    (relative to ``start``), which are copied as written: the result, its remap into ``text``
    and where the kept spans stand in it."""
    parts: list[str] = []
    positions: list[int] = []
    spans: list[tuple[int, int]] = []
    index = start
    for kept_start, kept_end in [*kept, (end - start, end - start)]:
        stop = start + kept_start
        while index < stop:
            slash = text.find("\\", index, stop)
            plain_end = stop if slash < 0 else slash
            parts.append(text[index:plain_end])
            positions.extend(range(index, plain_end))
            index = plain_end
            if slash < 0:
                break
            following = text[slash + 1 : slash + 2] if slash + 1 < stop else ""
            if following and following in escapes:
                if following != "\n":
                    parts.append(following)
                    positions.append(slash + 1)
                index = slash + 2
            else:
                parts.append("\\")
                positions.append(slash)
                index = slash + 1
        if kept_end > kept_start:
            spans.append((len(positions), len(positions) + kept_end - kept_start))
            parts.append(text[start + kept_start : start + kept_end])
            positions.extend(range(start + kept_start, start + kept_end))
            index = start + kept_end
    return "".join(parts), _mapped(positions), spans


def _merged(expanded: Sequence[Record], inner: Sequence[Record]) -> list[Record]:
    """The outer shell's commands of a here-document body among the inner shell's: each before
    the first inner command that ends after it starts (the one that holds it, or the next). When
    their texts do not nest (quotes of the inner script that cut through a substitution), all of
    them by where they start."""
    merged: list[Record] = []
    index, count = 0, len(expanded)
    for command in inner:
        while index < count and expanded[index][1] < command[2]:
            merged.append(expanded[index])
            index += 1
        merged.append(command)
    merged.extend(expanded[index:])
    for before, after in pairwise(merged):
        if after[1] < before[1] and before[2] > after[2]:
            return sorted(merged, key=lambda command: command[1])
    return merged


class Inner(Lexer):
    """The reading of the commands inside others, under the grammar of the subclass: what the
    reader holds (the commands read, the shell state, the open constructs) and how it is saved
    and restored around a region."""

    def __init__(self, script: str, start: Dir | None) -> None:
        super().__init__(script)
        self._closers: list[frozenset[str]] = []
        self._state = State(start, (), False)
        self._functions: dict[str, Function] = {}
        # The commands read, in source order: words, start, end and directory.
        self.commands: list[Record] = []
        # Where an unreadable text starts: the command being read, else the token being made.
        self._open_command: int | None = None
        # In a region, sorted: the spans whose substitutions the outer shell ran (and whose
        # commands were reported there, so are not again).
        self._outer: list[tuple[int, int]] = []

    @abstractmethod
    def _parse_list(self, closers: frozenset[str]) -> None:
        """Reads a list of commands up to a word or operator of ``closers`` (or of an enclosing
        list), or the end."""

    def read_inside(self, unread: int, mark: int = 0) -> int:
        """Where the commands read from ``unread`` on (of those from ``mark`` on) end: the text
        left unread covers them, up to an escaped blank that ends one."""
        ends = [end for _, start, end, _ in self.commands[mark:] if start >= unread]
        return max(ends, default=unread)

    def _record(self, words: list[str], start: int, end: int, directory: Dir | None) -> None:
        if not self._discard:
            self.commands.append((tuple(words), start, end, directory))

    def _shell_input(
        self,
        tokens: Sequence[Token],
        command: Sequence[str],
        directory: Dir | None,
        span: tuple[int, int],
        stdin: Heredoc | Token | None,
    ) -> None:
        """When the simple command ``tokens`` (``command`` once unwrapped, run in ``directory``,
        at ``span``) is a shell given its script, reads that script, or marks the here-document
        that holds it; ``stdin`` is its last redirection of standard input."""
        script = _shell_script(command)
        if script is None:
            return
        if script != _STDIN:
            self._read_string(tokens[len(tokens) - len(command) + script], directory, span)
        elif isinstance(stdin, Heredoc):
            stdin.shell, stdin.directory = True, directory
        elif stdin is not None:
            self._read_string(stdin, directory, span)

    def _substitution_end(self, index: int) -> int:
        """Reads the commands of a ``$(``/``<(``/``>(`` from ``index`` to their ``)``: a
        subshell, whose changes of directory stay in it."""
        self._enter()
        saved = (
            self._state,
            self._nested,
            self._discard,
            self._closers,
            self._queue,
            self._functions,
        )
        self._nested, self._closers, self._queue = True, [], []
        if self._outer:
            self._discard = self._discard or self._in_outer(index - 2)
        self._functions = dict(self._functions)
        self._pos = index
        self._parse_list(PARENTHESIS)
        close = self._next()
        if close.kind != OP or close.text != ")":
            raise Unreadable
        (
            self._state,
            self._nested,
            self._discard,
            self._closers,
            self._queue,
            self._functions,
        ) = saved
        self._depth -= 1
        return close.end

    def _backquoted(self, start: int, end: int) -> None:
        """Reads the commands of a backquoted command, a subshell; inside the backquotes a
        backslash before ``$``, a backquote or a backslash is removed before they are read."""
        begin, finish = start + 1, end - 1
        if finish <= begin:
            return
        text = self._text
        discard = self._discard or self._in_outer(start)
        if text.find("\\", begin, finish) < 0:
            script, remap = text[begin:finish], _shifted(begin)
        else:
            script, remap, _ = _unescaped(text, begin, finish, _BACKQUOTE_ESCAPES, ())
        self._read_region(script, remap, self._state, dict(self._functions), discard=discard)

    def _expansions_in(self, start: int, end: int, *, quoted: bool) -> None:
        text = self._text
        if not _may_run_in(text, start, end, quoted=quoted):
            return
        self._read_region(
            text[start:end],
            _shifted(start),
            self._state,
            self._functions,
            mode=_WORDS if quoted else _BODY,
            discard=self._discard or self._in_outer(start),
        )

    def _read_bodies(self, bodies: list[Heredoc]) -> None:
        """A here-document body is data, but an expanding one runs its substitutions where the
        redirection is made; the body of a shell reading standard input is its script."""
        text = self._text
        for heredoc in bodies:
            begin, finish = heredoc.body_start, heredoc.body_end
            if finish <= begin:
                continue
            body = text[begin:finish]
            state = self._state if heredoc.state is None else heredoc.state
            if not heredoc.shell:
                if heredoc.expands and _may_run(body):
                    self._read_expansions(body, begin, state)
                continue
            inner = State(heredoc.directory, (), False)
            if not heredoc.expands:
                self._read_region(body, _shifted(begin), inner, {})
                continue
            # The outer shell expands the body first: its substitutions run there, and the inner
            # shell reads their output, and what their escapes leave.
            mark = len(self.commands)
            spans = self._read_expansions(body, begin, state) if _may_run(body) else []
            if spans is None:
                # A body the outer shell cannot expand is never run.
                continue
            expanded = self.commands[mark:]
            del self.commands[mark:]
            script, remap, outer = _unescaped(text, begin, finish, _BODY_ESCAPES, spans)
            self._read_region(script, remap, inner, {}, outer=outer)
            self.commands[mark:] = _merged(expanded, self.commands[mark:])

    def _read_expansions(self, body: str, begin: int, state: State) -> list[tuple[int, int]] | None:
        return self._read_region(
            body,
            _shifted(begin),
            state,
            self._functions,
            mode=_BODY,
            discard=self._discard or self._in_outer(begin),
        )

    def _read_string(self, token: Token, directory: Dir | None, span: tuple[int, int]) -> None:
        """Reads the script a shell is given as the word ``token`` (``-c``'s, a here-string),
        run in a new shell in ``directory``. Where quote removal changed only the quotes around
        it, its commands stand where they are written; else each stands as the shell command
        (``span``), since their text is not written as such in the source."""
        value = token.value
        if not value.strip():
            return
        state = State(directory, (), False)
        verbatim = _verbatim(token.text, value)
        if verbatim is None:
            self._read_region(value, lambda _start, _end: span, state, {})
            return
        at, expanded = verbatim
        self._read_region(
            value,
            _shifted(token.start + at),
            state,
            {},
            outer=[(0, len(value))] if expanded else [],
        )

    def _in_outer(self, position: int) -> bool:
        outer = self._outer
        if not outer:
            return False
        index = bisect_right(outer, (position, _FAR)) - 1
        return index >= 0 and position < outer[index][1]

    def _read_region(
        self,
        text: str,
        remap: Remap,
        state: State,
        functions: dict[str, Function],
        *,
        mode: int = _COMMANDS,
        discard: bool | None = None,
        outer: Sequence[tuple[int, int]] = (),
    ) -> list[tuple[int, int]] | None:
        """Reads ``text`` as a region of its own: its commands (or, by ``mode``, the expansions
        of a here-document body or of words), from ``state``, reported through ``remap``; text it
        cannot read ends the region, not the reading. The whole reader is saved and restored
        around it, so nothing in it changes what follows. Returns, for expansions, the spans of
        the pieces read that may run commands; None when the region could not be read."""
        saved = (
            self._text,
            self._size,
            self._pos,
            self._queue,
            self._heredocs,
            self._heredoc_operators,
            self._newline_bodies,
            self._nested,
            self._discard,
            self._token_start,
            self._open_command,
            self._closers,
            self._state,
            self._functions,
            self._depth,
            self._outer,
        )
        self._text, self._size, self._pos, self._queue = text, len(text), 0, []
        self._heredocs, self._heredoc_operators, self._newline_bodies = [], {}, {}
        self._nested, self._token_start, self._open_command, self._closers = False, 0, None, []
        if discard is not None:
            self._discard = discard
        self._state, self._functions, self._outer = state, functions, list(outer)
        mark = len(self.commands)
        spans: list[tuple[int, int]] = []
        read = True
        try:
            self._enter()
            if mode == _COMMANDS:
                self._parse_list(NO_CLOSERS)
            else:
                self._scan(mode == _WORDS, spans)
        except Unreadable:
            read = False
            unread = self._token_start if self._open_command is None else self._open_command
            rest = text[unread:]
            stripped = rest.strip()
            if stripped:
                begin = unread + len(rest) - len(rest.lstrip())
                finish = max(begin + len(stripped), self.read_inside(unread, mark))
                self._record(rest.split(), begin, finish, None)
        finally:
            (
                self._text,
                self._size,
                self._pos,
                self._queue,
                self._heredocs,
                self._heredoc_operators,
                self._newline_bodies,
                self._nested,
                self._discard,
                self._token_start,
                self._open_command,
                self._closers,
                self._state,
                self._functions,
                self._depth,
                self._outer,
            ) = saved
        commands = self.commands
        for index in range(mark, len(commands)):
            words, begin, finish, directory = commands[index]
            begin, finish = remap(begin, finish)
            commands[index] = (words, begin, finish, directory)
        return spans if read else None

    def _scan(self, quoted: bool, spans: list[tuple[int, int]]) -> None:
        """Reads the pieces of the region that may run commands: in a here-document body or an
        arithmetic expression only ``$`` and backquotes, escaped by a backslash; among words
        (``quoted``) quotes too, and process substitutions."""
        text = self._text
        stop = _WORDS_STOP if quoted else _BODY_STOP
        index = 0
        while True:
            found = stop.search(text, index)
            if found is None:
                return
            start = index = found.start()
            character = text[index]
            if character == "\\":
                index += 2
                continue
            self._open_command = start
            if character == "`":
                index = self._backtick_end(index + 1)
            elif character == "'":
                index = self._single_end(index + 1)
            elif character == '"':
                index = self._double_end(index + 1, [])
            elif character in "<>":
                following = text.startswith("(", index + 1)
                index = self._substitution_end(index + 2) if following else index + 1
            elif quoted and text.startswith("$'", index):
                index = self._ansi_c_end(index + 2, [])
            elif quoted and text.startswith('$"', index):
                index = self._double_end(index + 2, [])
            else:
                index = self._dollar_end(index)
            if index > start + 1:
                spans.append((start, index))
