"""The grammar of shell source: lists, pipelines, simple and compound commands, function
definitions and calls, and the directory each command runs in; the commands inside others are
read by ``inner``, which this grammar extends. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from .directories import (
    ROOT,
    Dir,
    Function,
    State,
    after_call,
    directory_builtin,
    join,
    target,
)
from .inner import NO_CLOSERS, PARENTHESIS, SHELLS, STDIN_REDIRECTIONS, Inner, reads_stdin
from .lexer import ARITH, EOF, HEREDOCS, NEWLINE, OP, REDIR, WORD, Heredoc, Token, is_word
from .scanner import NESTING_MAX, Unreadable
from .wrappers import unwrap

__all__ = ["Reader"]

_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_CLOSING_WORDS: Final = frozenset({"then", "elif", "else", "fi", "do", "done", "esac", "}"})
_CASE_ENDS: Final = frozenset({";;", ";&", ";;&"})
_STRAY_OPERATORS: Final = frozenset({";", "&", "&&", "||", "|", "|&"})
_CONDITION_END: Final = frozenset({"then", "elif", "else", "fi"})
_IF_BODY_END: Final = frozenset({"elif", "else", "fi"})
_FI: Final = frozenset({"fi"})
_LOOP_CONDITION_END: Final = frozenset({"do", "done"})
_DONE: Final = frozenset({"done"})
_BRACE: Final = frozenset({"}"})
_CASE_BODY_END: Final = frozenset({";;", "esac"})
_TEST_ENDS: Final = frozenset({";", "&", ";;", ";&", ";;&"})
# The reserved words of a loop over words, which read alike. One string, split: no literal of the
# package may spell ``select`` alone, an owned contract value of another meaning.
_WORD_LOOPS: Final = tuple("for select".split())  # noqa: SIM905


def _closer(token: Token) -> str | None:
    """The name under which ``token`` ends an enclosing list, if it can."""
    if token.kind == WORD:
        return token.text if token.text in _CLOSING_WORDS else None
    if token.kind == OP:
        if token.text == ")":
            return ")"
        if token.text in _CASE_ENDS:
            return ";;"
    return None


class Reader(Inner):
    """A recursive-descent reader over a lexer that runs on demand: what a token is depends on
    where the parser stands (a reserved word only starts a command, a ``$(`` is read by the
    parser itself), so tokens are made one at a time as the parser asks for them."""

    def __init__(self, script: str, start: Dir | None) -> None:
        super().__init__(script, start)
        # Per function, in definition order: the directory at each call.
        self._calls: list[list[Dir | None]] = []
        self._starts: dict[int, Dir | None] = {}
        self._resolving: set[int] = set()
        self._compound_readers = self._compounds()

    def read(self) -> int | None:
        """Reads the whole script into ``commands``; returns where the text that cannot be read
        starts, if there is one."""
        try:
            self._parse_list(NO_CLOSERS)
        except Unreadable:
            return self._token_start if self._open_command is None else self._open_command
        return None

    # Directories of function bodies, once every call is known.

    def directory(self, directory: Dir | None) -> str | None:
        """The name of a directory of ``commands``, relative to the repository root, once the
        whole script is read: "." or a normalised relative path, None when unknown."""
        resolved = self._resolve(directory, 0)
        if resolved is None:
            return None
        return "/".join(resolved.parts) or "."

    def _resolve(self, directory: Dir | None, depth: int) -> Dir | None:
        if directory is None or directory.anchor == ROOT:
            return directory
        return join(self._start_of(directory.anchor, depth), directory.ups, directory.parts)

    def _start_of(self, function: int, depth: int) -> Dir | None:
        """Where the body of ``function`` runs: the one directory every call is made from."""
        if function in self._starts:
            return self._starts[function]
        if depth > NESTING_MAX or function in self._resolving:
            # A recursive call runs the body from wherever the body has moved to by then.
            return None
        self._resolving.add(function)
        places = {self._resolve(call, depth + 1) for call in self._calls[function]}
        self._resolving.discard(function)
        start = places.pop() if len(places) == 1 else None
        self._starts[function] = start
        return start

    # Grammar.

    def _parse_list(self, closers: frozenset[str]) -> None:
        self._enter()
        self._closers.append(closers)
        while True:
            token = self._peek()
            if token.kind == EOF:
                break
            if token.kind == NEWLINE or (token.kind == OP and token.text in _STRAY_OPERATORS):
                self._next()
                continue
            closer = _closer(token)
            if closer is not None:
                if any(closer in enclosing for enclosing in self._closers):
                    break
                if closer == ")":
                    raise Unreadable
                # A reserved word that closes nothing open: a syntax error bash would stop at.
                self._next()
                continue
            consumed, before = self._consumed, self._state
            self._parse_and_or()
            if self._consumed == consumed:
                self._next()
                continue
            following = self._peek()
            if following.kind == OP and following.text == "&":
                # A background list runs in a subshell.
                self._state = before
        self._closers.pop()
        self._depth -= 1

    def _parse_and_or(self) -> None:
        self._parse_pipeline()
        while True:
            token = self._peek()
            if token.kind != OP or token.text not in ("&&", "||"):
                return
            self._next()
            self._skip_newlines()
            self._parse_pipeline()

    def _parse_pipeline(self) -> None:
        while True:
            token = self._peek()
            if is_word(token, "!"):
                self._next()
            elif is_word(token, "time"):
                self._next()
                if is_word(self._peek(), "-p"):
                    self._next()
                if is_word(self._peek(), "--"):
                    self._next()
            else:
                break
        before = self._state
        self._parse_command()
        piped = False
        while True:
            token = self._peek()
            if token.kind != OP or token.text not in ("|", "|&"):
                break
            self._next()
            self._skip_newlines()
            # Every element of a pipeline runs in a subshell of its own.
            piped, self._state = True, before
            self._parse_command()
        if piped:
            self._state = before

    def _parse_command(self) -> None:
        token = self._peek()
        before = self._state
        if token.kind == WORD:
            if token.text in _CLOSING_WORDS:
                return
            compound = self._compound_readers.get(token.text)
            if compound is None:
                self._parse_simple()
                return
            compound()
        elif token.kind == REDIR:
            self._parse_simple()
            return
        elif token.kind == OP and token.text == "(":
            self._parse_subshell()
        elif token.kind == ARITH:
            self._next()
            self._expansions_in(token.start + 2, token.end - 2, quoted=False)
            words = ["((", token.text[2:-2].strip(), "))"]
            self._record(words, token.start, token.end, self._state.current)
        else:
            return
        self._redirections(before)

    def _compounds(self) -> dict[str, Callable[[], None]]:
        return {
            "if": self._parse_if,
            "while": self._parse_loop,
            "until": self._parse_loop,
            **dict.fromkeys(_WORD_LOOPS, self._parse_for),
            "case": self._parse_case,
            "{": self._parse_group,
            "function": self._parse_function,
            "[[": self._parse_test,
        }

    def _redirections(self, state: State) -> None:
        """The redirections after a compound command, made before it runs, from ``state``."""
        while self._peek().kind == REDIR:
            token = self._next()
            if self._peek().kind == WORD:
                self._next()
            heredoc = self._heredoc_operators.pop(token.start, None)
            if heredoc is not None:
                heredoc.state = state

    def _parse_simple(self) -> None:
        start = end = self._peek().start
        if not self._nested:
            self._open_command = start
        words: list[Token] = []
        heredocs: list[Heredoc] | None = None
        # The last redirection of standard input: a here-document, a here-string's word, or
        # None for anything else.
        stdin: Heredoc | Token | None = None
        while True:
            token = self._peek()
            if token.kind == WORD:
                self._next()
                end = token.end
                if not words and _ASSIGNMENT.match(token.text):
                    continue
                words.append(token)
                if len(words) == 1 and self._at_parentheses():
                    self._next()
                    self._next()
                    if not self._nested:
                        self._open_command = None
                    for heredoc in heredocs or ():
                        heredoc.state = self._state
                    self._define(token.value)
                    return
            elif token.kind == REDIR:
                self._next()
                end = token.end
                operand = self._next() if self._peek().kind == WORD else None
                if operand is not None:
                    end = operand.end
                operator = token.value
                heredoc = None
                if operator in HEREDOCS:
                    heredoc = self._heredoc_operators.pop(token.start, None)
                    if heredoc is not None:
                        heredocs = [*(heredocs or ()), heredoc]
                if operator in STDIN_REDIRECTIONS and reads_stdin(token):
                    stdin = heredoc or (operand if operator == "<<<" else None)
            else:
                break
        if not self._nested:
            self._open_command = None
        if heredocs is not None:
            for heredoc in heredocs:
                heredoc.state = self._state
        if words:
            self._simple(words, start, end, stdin)

    def _simple(
        self, tokens: list[Token], start: int, end: int, stdin: Heredoc | Token | None
    ) -> None:
        values = [token.value for token in tokens]
        function = self._functions.get(values[0])
        command, moves, same_shell = unwrap(values)
        state = self._state
        directory = state.current
        for move in moves:
            directory = target(directory, move)
        self._record(command, start, end, directory)
        name = command[0]
        if name in SHELLS or "/" in name:
            self._shell_input(tokens, command, directory, (start, end), stdin)
        if function is not None:
            self._call(function)
        elif same_shell:
            self._state = directory_builtin(command[0], command[1:], state)

    def _call(self, function: Function) -> None:
        self._calls[function.number].append(self._state.current)
        self._state = after_call(self._state, function)

    def _define(self, name: str) -> None:
        index = len(self._calls)
        self._calls.append([])
        # Known before the body is read, so that a recursive call is seen as one.
        self._functions[name] = Function(index, None)
        caller = self._state
        self._state = State(Dir(index, 0, ()), (), False)
        self._enter()
        self._skip_newlines()
        self._parse_command()
        self._depth -= 1
        self._functions[name] = Function(index, self._state)
        self._state = caller

    def _parse_function(self) -> None:
        self._next()
        name = self._peek()
        if name.kind != WORD:
            return
        self._next()
        if self._at_parentheses():
            self._next()
            self._next()
        self._define(name.value)

    def _parse_subshell(self) -> None:
        self._next()
        saved = (self._state, self._functions)
        self._functions = dict(self._functions)
        self._parse_list(PARENTHESIS)
        closing = self._peek()
        if closing.kind == OP and closing.text == ")":
            self._next()
        self._state, self._functions = saved

    def _parse_group(self) -> None:
        self._next()
        self._parse_list(_BRACE)
        self._expect("}")

    def _parse_if(self) -> None:
        self._next()
        self._parse_list(_CONDITION_END)
        self._expect("then")
        self._parse_list(_IF_BODY_END)
        while True:
            if self._expect("elif"):
                self._parse_list(_CONDITION_END)
                self._expect("then")
                self._parse_list(_IF_BODY_END)
            elif self._expect("else"):
                self._parse_list(_FI)
            else:
                break
        self._expect("fi")

    def _parse_loop(self) -> None:
        self._next()
        self._parse_list(_LOOP_CONDITION_END)
        self._parse_do_group()

    def _parse_do_group(self) -> None:
        if self._expect("do"):
            self._parse_list(_DONE)
            self._expect("done")
        elif is_word(self._peek(), "{"):
            self._parse_group()

    def _parse_for(self) -> None:
        self._next()
        header = self._peek()
        if header.kind == ARITH:
            self._next()
            self._expansions_in(header.start + 2, header.end - 2, quoted=False)
        elif header.kind == WORD:
            self._next()
            self._skip_newlines()
            if self._expect("in"):
                while self._peek().kind == WORD:
                    self._next()
        while self._peek().kind == NEWLINE or (
            self._peek().kind == OP and self._peek().text == ";"
        ):
            self._next()
        self._parse_do_group()

    def _parse_case(self) -> None:
        self._next()
        if self._peek().kind == WORD:
            self._next()
        self._skip_newlines()
        if not self._expect("in"):
            return
        while True:
            consumed = self._consumed
            self._skip_newlines()
            token = self._peek()
            if token.kind == EOF or self._expect("esac"):
                return
            closer = _closer(token)
            if closer is not None and any(closer in open_ for open_ in self._closers):
                return
            if token.kind == OP and token.text == "(":
                self._next()
            # The patterns, up to the ")" that ends them, are not commands.
            while True:
                token = self._peek()
                if token.kind == WORD or (token.kind == OP and token.text == "|"):
                    self._next()
                    continue
                if token.kind == OP and token.text == ")":
                    self._next()
                break
            self._parse_list(_CASE_BODY_END)
            if _closer(self._peek()) == ";;":
                self._next()
            if self._consumed == consumed:
                return

    def _parse_test(self) -> None:
        first = self._next()
        start, end = first.start, first.end
        if not self._nested:
            self._open_command = start
        words = ["[["]
        previous = "[["
        while True:
            token = self._peek()
            if token.kind == NEWLINE and previous in ("&&", "||"):
                self._next()
                continue
            if token.kind in (EOF, NEWLINE) or token.text in _TEST_ENDS:
                break
            self._next()
            # Inside [[ ]], && || ( ) < > are the test's own operators, not the shell's.
            words.append(token.value if token.kind == WORD else token.text)
            end, previous = token.end, token.text
            if is_word(token, "]]"):
                break
        if not self._nested:
            self._open_command = None
        self._record(words, start, end, self._state.current)
