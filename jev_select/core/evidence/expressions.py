"""The GitHub expressions the evidence can decide from the repository alone (docs/reference.md,
"Expressions in commands"). Pure.

GitHub substitutes ``${{ ... }}`` before a shell reads a command, so a command that holds one is
only known once the expression is. Three kinds are decided here, and nothing else:

- ``${{ inputs.<name> }}`` in a reusable workflow or a composite action: the caller's literal
  ``with:`` value, else the input's literal ``default``;
- ``${{ matrix.<key> }}`` over a static ``strategy.matrix``: one command per combination GitHub
  would run (``include`` and ``exclude`` applied as GitHub applies them);
- ``${{ github.workspace }}``: the root of the checkout, where relative paths start.

Only the bare reference form is replaced (``${{ inputs.x || 'y' }}`` is left as written); an
expression left in a command keeps whatever gap its position calls for.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Final, TypeAlias

from ...errors import JevSelectError

__all__ = [
    "MATRIX_COMBINATIONS_MAX",
    "Values",
    "inputs_of_call",
    "is_whole_expression",
    "literal_results",
    "matrix_combinations",
    "rendered",
    "substitute",
    "with_alternatives",
]

# A value an expression can read: rendered text, an object of such values (a matrix entry such
# as ``{name: unit, script: pnpm test}``), or None when it is not decidable.
Value: TypeAlias = "str | Mapping[str, Value] | None"
# Context name -> key -> value.
Values: TypeAlias = Mapping[str, Mapping[str, Value]]
# Alternatives of one command: at most this many, else the expressions stay as written.
ALTERNATIVES_MAX: Final = 16

# A static matrix larger than this is read as dynamic: the commands it would give are not
# listed one by one, and a command that depends on it keeps its gap.
MATRIX_COMBINATIONS_MAX: Final = 256

_NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
_REFERENCE = re.compile(
    rf"\$\{{\{{\s*(inputs|matrix|github)\.({_NAME}(?:\.{_NAME})*)\s*\}}\}}", re.ASCII
)
_WHOLE = re.compile(r"\s*\$\{\{.*\}\}\s*", re.DOTALL)
_ANY_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
_WORKSPACE = "workspace"
_INCLUDE = "include"
_EXCLUDE = "exclude"


def scalar_text(value: object) -> str | None:
    """A YAML scalar as GitHub renders it in an expression; None for anything else or text that is
    itself an expression (its value depends on the caller's context)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value).removesuffix(".0")
    if isinstance(value, str):
        return None if "${{" in value else value
    return None


def substitute(text: str, values: Values) -> str:
    """``text`` with every bare reference that ``values`` decides replaced by its value.

    ``${{ github.workspace }}`` becomes ``.`` only when ``values`` has a ``github`` context
    (callers pass it for working directories and ``cd`` targets, where the root is ``.``).
    """

    def replace(match: re.Match[str]) -> str:
        found: Value | Mapping[str, Value] | None = values.get(match.group(1))
        for key in match.group(2).split("."):
            found = found.get(key) if isinstance(found, Mapping) else None
        return found if isinstance(found, str) else match.group(0)

    return _REFERENCE.sub(replace, text)


def is_whole_expression(text: str) -> bool:
    """Whether a command is nothing but one expression, so that nothing of it is known."""
    stripped = text.strip()
    if _WHOLE.fullmatch(text) is None:
        return False
    found = _ANY_EXPRESSION.findall(stripped)
    return len(found) == 1 and found[0] == stripped


def references(text: str, context: str) -> tuple[str, ...]:
    """The keys of ``context`` that ``text`` references in the bare form, first-seen order."""
    keys: list[str] = []
    for match in _REFERENCE.finditer(text):
        key = match.group(2).split(".", 1)[0]
        if match.group(1) == context and key not in keys:
            keys.append(key)
    return tuple(keys)


def rendered(value: object) -> Value:
    """A matrix value as expressions read it: scalars as text, objects key by key."""
    if isinstance(value, Mapping):
        return {str(key): rendered(item) for key, item in value.items()}
    return scalar_text(value)


def inputs_of_call(declared: object, options: Mapping[str, object] | None) -> dict[str, str | None]:
    """Each declared input's value for one call: the caller's literal ``with:`` value, else the
    literal ``default``; None when neither decides it."""
    values: dict[str, str | None] = {}
    if not isinstance(declared, Mapping):
        return values
    given = options or {}
    for key, declaration in declared.items():
        name = str(key)
        if name in given:
            values[name] = scalar_text(given[name])
            continue
        default = declaration.get("default") if isinstance(declaration, Mapping) else None
        values[name] = scalar_text(default) if default is not None else None
    return values


def _matches(combination: Mapping[str, object], entry: Mapping[str, object]) -> bool:
    return all(combination.get(key) == value for key, value in entry.items())


def matrix_combinations(matrix: object) -> tuple[dict[str, Value], ...] | None:
    """The combinations of a static ``strategy.matrix`` as GitHub expands it, each key's value as
    rendered text; None when the matrix is dynamic or over ``MATRIX_COMBINATIONS_MAX``.

    A job without ``strategy.matrix`` has one empty combination.
    """
    if matrix is None:
        return ({},)
    if not isinstance(matrix, Mapping):
        return None
    axes: list[tuple[str, Sequence[object]]] = []
    for key, values in matrix.items():
        if key in (_INCLUDE, _EXCLUDE):
            continue
        # An axis GitHub computes (an expression) has one value nobody can know here; the other
        # axes stay decidable.
        axes.append((str(key), values if isinstance(values, list) and values else [None]))
    includes = matrix.get(_INCLUDE, [])
    excludes = matrix.get(_EXCLUDE, [])
    if not isinstance(includes, list) or not isinstance(excludes, list):
        return None
    if not all(isinstance(entry, Mapping) for entry in [*includes, *excludes]):
        return None
    size = 1
    for _, values in axes:
        size *= len(values)
    if size > MATRIX_COMBINATIONS_MAX:
        return None
    keys = [key for key, _ in axes]
    base: list[dict[str, object]] = (
        [
            dict(zip(keys, product, strict=True))
            for product in itertools.product(*(values for _, values in axes))
        ]
        if axes
        else []
    )
    base = [combo for combo in base if not any(_matches(combo, entry) for entry in excludes)]
    original_keys = {key for key, _ in axes}
    combinations = [dict(combo) for combo in base]
    for entry in includes:
        original = {key: value for key, value in entry.items() if key in original_keys}
        merged = False
        for index, combo in enumerate(base):
            if _matches(combo, original):
                combinations[index].update(entry)
                merged = True
        if not merged:
            combinations.append(dict(entry))
        if len(combinations) > MATRIX_COMBINATIONS_MAX:
            return None
    if not combinations:
        return None
    return tuple(
        {str(key): rendered(value) for key, value in combo.items()} for combo in combinations
    )


# ---- expressions whose every possible result is a literal ----------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<op>\|\||&&|==|!=|<=|>=|[()!<>])"
    r"|(?P<number>-?[0-9][0-9.]*)|(?P<word>[A-Za-z_][A-Za-z0-9_.*\-]*(?:\[[^\]]*\])*))",
    re.ASCII,
)
_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})
_LITERAL_WORDS = frozenset({"true", "false", "null"})


class _Unknown(JevSelectError):
    """A result of the expression can be something no literal in it says."""


def _tokens(body: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(body):
        if body[position:].strip() == "":
            break
        match = _TOKEN.match(body, position)
        if match is None or match.end() == position:
            raise _Unknown
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


# What a part of an expression can be: when truthy, and when falsy. A context's value is
# ``_UNKNOWN``; a falsy value nobody can name is ``_NO_TEXT`` (no command text); a boolean is
# rendered as GitHub renders it.
_UNKNOWN = "\0unknown"
_NO_TEXT = "\0none"
_TRUE = "true"
_FALSE = "false"
_Outcomes: TypeAlias = tuple[list[str], list[str]]


class _Results:
    """The possible results of an expression made of literals, context references, ``&&``,
    ``||``, ``!``, comparisons and parentheses, as GitHub evaluates them: ``a && b`` is ``a``
    when ``a`` is falsy, else ``b``; ``a || b`` is ``a`` when ``a`` is truthy, else ``b``."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.index = 0

    def peek(self) -> str:
        return self.tokens[self.index][1] if self.index < len(self.tokens) else ""

    def take(self) -> tuple[str, str]:
        if self.index >= len(self.tokens):
            raise _Unknown
        token = self.tokens[self.index]
        self.index += 1
        return token

    def alternatives(self) -> _Outcomes:
        truthy, falsy = self.conjunction()
        while self.peek() == "||":
            self.take()
            right_truthy, right_falsy = self.conjunction()
            truthy, falsy = [*truthy, *right_truthy], right_falsy
        return truthy, falsy

    def conjunction(self) -> _Outcomes:
        truthy, falsy = self.comparison()
        while self.peek() == "&&":
            self.take()
            right_truthy, right_falsy = self.comparison()
            truthy, falsy = right_truthy, [*falsy, *right_falsy]
        return truthy, falsy

    def comparison(self) -> _Outcomes:
        outcomes = self.unary()
        if self.peek() in _COMPARISONS:
            self.take()
            self.unary()
            return [_TRUE], [_FALSE]
        return outcomes

    def unary(self) -> _Outcomes:
        kind, text = self.take()
        if text == "!":
            self.unary()
            return [_TRUE], [_FALSE]
        if text == "(":
            outcomes = self.alternatives()
            if self.take()[1] != ")":
                raise _Unknown
            return outcomes
        if kind == "string":
            value = text[1:-1].replace("''", "'")
            return ([value], []) if value else ([], [_NO_TEXT])
        if kind == "number":
            return ([text], []) if float(text) != 0 else ([], [_NO_TEXT])
        if kind == "word" and text in _LITERAL_WORDS:
            if text == _TRUE:
                return [_TRUE], []
            return [], [_FALSE if text == _FALSE else _NO_TEXT]
        if kind == "word" and self.peek() != "(":
            return [_UNKNOWN], [_NO_TEXT]
        raise _Unknown


def literal_results(body: str) -> tuple[str, ...] | None:
    """The texts an expression's body can evaluate to, when each possible result is a literal of
    it (``(matrix.os == 'windows' && 'dir') || 'ls -lh'`` gives ``dir`` and ``ls -lh``); None when
    a result can be anything else."""
    try:
        parser = _Results(_tokens(body))
        truthy, falsy = parser.alternatives()
        if parser.index != len(parser.tokens):
            return None
    except (_Unknown, ValueError):
        return None
    results = [*truthy, *falsy]
    if _UNKNOWN in results:
        return None
    texts = [result for result in dict.fromkeys(results) if result != _NO_TEXT]
    return tuple(texts) if texts else None


def with_alternatives(text: str) -> tuple[str, ...]:
    """``text`` once per combination of the literal results of its expressions (at most
    ``ALTERNATIVES_MAX``); an expression with other results stays as written."""
    variants = [text]
    for match in _EXPRESSION.finditer(text):
        results = literal_results(match.group(1))
        if results is None:
            continue
        expanded = [
            variant.replace(match.group(0), result, 1) for variant in variants for result in results
        ]
        if len(expanded) > ALTERNATIVES_MAX:
            return (text,)
        variants = expanded
    return tuple(dict.fromkeys(variants))
