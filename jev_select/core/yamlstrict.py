"""The one strict YAML loader of jev-select (docs/reference.md, "Task fields").

YAML 1.2 core schema on PyYAML's pure-Python loader: no aliases, no merge keys, no timestamps,
no YAML 1.1 booleans or octals, no directives, one document, a short list of explicit tags, and
unique keys after conversion to strings. Hostile texts (huge, deeply nested, alias bombs, node
floods) are refused while the text is being composed, before any deep recursion or large
allocation can happen.

The loader is generic: the task table, workflow files and action metadata all go through it.
Workflow files and action metadata (and only they, as GitHub accepts them there) are loaded with
``aliases=True``: anchors, aliases and ``<<`` merge keys are then expanded, under a bound on the
expanded size (``MAX_YAML_EXPANDED_NODES``), so an alias bomb is refused after composing at most
the nodes actually written, never by expanding it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable
from typing import Any, ClassVar

import yaml
from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .. import contracts as c
from ..errors import JevSelectError
from .jsonutil import format_number

__all__ = ["YamlStrictError", "load_strict", "mapping_key_text", "parse_strict"]

_TAG_PREFIX = "tag:yaml.org,2002:"
_TAG_STR = _TAG_PREFIX + "str"
_TAG_INT = _TAG_PREFIX + "int"
_TAG_FLOAT = _TAG_PREFIX + "float"
_TAG_BOOL = _TAG_PREFIX + "bool"
_TAG_NULL = _TAG_PREFIX + "null"
_TAG_MAP = _TAG_PREFIX + "map"
_TAG_SEQ = _TAG_PREFIX + "seq"
_ALLOWED_EXPLICIT_TAGS = frozenset(
    {_TAG_STR, _TAG_INT, _TAG_FLOAT, _TAG_BOOL, _TAG_NULL, _TAG_MAP, _TAG_SEQ}
)

# Core-schema plain scalar forms. PyYAML's resolver uses ``match``, so each ends in ``\Z``.
_NULL_FORM = re.compile(r"(?:null|Null|NULL|~|)\Z")
_BOOL_FORM = re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")
_INT_DECIMAL_FORM = re.compile(r"[-+]?[0-9]+\Z")
_INT_OCTAL_FORM = re.compile(r"0o[0-7]+\Z")
_INT_HEX_FORM = re.compile(r"0x[0-9a-fA-F]+\Z")
_INT_FORM = re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")
_FLOAT_FINITE_FORM = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_FLOAT_INF_FORM = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z")
_FLOAT_NAN_FORM = re.compile(r"\.(?:nan|NaN|NAN)\Z")
_FLOAT_FORM = re.compile(
    r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"
)


_SURROGATE = re.compile("[\ud800-\udfff]")
_MERGE_KEY = "<<"


# Kinds of refusal. ``jev-select check`` shows them to the author of the text; nothing else does.
KIND_SYNTAX = "syntax"
KIND_TAB = "tab"
KIND_ALIAS = "alias"
KIND_DIRECTIVE = "directive"
KIND_TAG = "tag"
KIND_DUPLICATE_KEY = "duplicate-key"
KIND_MULTIPLE_DOCUMENTS = "multiple-documents"
KIND_TOO_LARGE = "too-large"
KIND_TOO_DEEP = "too-deep"
KIND_TOO_MANY_NODES = "too-many-nodes"
KIND_SCALAR = "scalar"
KIND_KEY = "key"


class YamlStrictError(JevSelectError, ValueError):
    """The text is not acceptable strict YAML. Deliberately carries no detail of the text.

    ``code`` (one of the ``KIND_*`` words) and ``index`` (the character offset of the refused
    construct, when known) locate the refusal without quoting any of the text.
    """

    def __init__(self, code: str = KIND_SYNTAX, index: int | None = None) -> None:
        super().__init__()
        self.code = code
        self.index = index

    def __str__(self) -> str:
        return ""


def _number_key_text(value: int | float) -> str:
    if isinstance(value, int):
        try:
            value = float(value)
        except OverflowError:
            value = math.inf if value > 0 else -math.inf
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return format_number(value)


def mapping_key_text(key: object) -> str:
    """The string a constructed scalar key stands for (docs/reference.md, "Task fields");
    non-scalars are refused."""
    if isinstance(key, str):
        return key
    if key is None:
        return ""
    if isinstance(key, bool):
        return c.BOOL_TRUE if key else c.BOOL_FALSE
    if isinstance(key, int | float):
        return _number_key_text(key)
    raise YamlStrictError(KIND_KEY)


def _refused(node: Node, code: str = KIND_SCALAR) -> YamlStrictError:
    return YamlStrictError(code, node.start_mark.index if node.start_mark is not None else None)


def _scalar_text(node: Node) -> str:
    if not isinstance(node, ScalarNode):
        raise _refused(node)
    text = node.value
    if not isinstance(text, str):
        raise _refused(node)
    # A "\ud800" escape yields a lone surrogate: not a Unicode character, and text that could
    # never be written as UTF-8 (hashes, request bodies) would fail far from the parser.
    if _SURROGATE.search(text):
        raise _refused(node)
    return text


def _construct_null(_loader: object, node: Node) -> None:
    if not _NULL_FORM.match(_scalar_text(node)):
        raise _refused(node)


def _construct_bool(_loader: object, node: Node) -> bool:
    text = _scalar_text(node)
    if not _BOOL_FORM.match(text):
        raise _refused(node)
    return text.lower() == c.BOOL_TRUE


def _construct_int(_loader: object, node: Node) -> int:
    text = _scalar_text(node)
    if _INT_OCTAL_FORM.match(text):
        return int(text[2:], 8)
    if _INT_HEX_FORM.match(text):
        return int(text[2:], 16)
    if _INT_DECIMAL_FORM.match(text):
        return int(text, 10)
    raise _refused(node)


def _construct_float(_loader: object, node: Node) -> float:
    text = _scalar_text(node)
    if _FLOAT_NAN_FORM.match(text):
        return math.nan
    if _FLOAT_INF_FORM.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _FLOAT_FINITE_FORM.match(text):
        return float(text)
    raise _refused(node)


def _construct_str(_loader: object, node: Node) -> str:
    return _scalar_text(node)


def _construct_unknown(_loader: object, node: Node) -> None:
    raise _refused(node, KIND_TAG)


def _core_schema_resolvers() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    # Integer before float: a plain ``1`` fits both forms and must be an integer.
    forms = (
        (_TAG_NULL, _NULL_FORM, ["~", "n", "N", ""]),
        (_TAG_BOOL, _BOOL_FORM, list("tTfF")),
        (_TAG_INT, _INT_FORM, list("-+0123456789")),
        (_TAG_FLOAT, _FLOAT_FORM, list("-+.0123456789")),
    )
    resolvers: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for tag, form, first_characters in forms:
        for first in first_characters:
            resolvers.setdefault(first, []).append((tag, form))
    return resolvers


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader narrowed to the strict dialect."""

    yaml_implicit_resolvers = _core_schema_resolvers()
    yaml_constructors: ClassVar[dict[str | None, Any]] = {
        _TAG_NULL: _construct_null,
        _TAG_BOOL: _construct_bool,
        _TAG_INT: _construct_int,
        _TAG_FLOAT: _construct_float,
        _TAG_STR: _construct_str,
        _TAG_SEQ: yaml.constructor.SafeConstructor.construct_yaml_seq,
        _TAG_MAP: yaml.constructor.SafeConstructor.construct_yaml_map,
        None: _construct_unknown,
    }

    def __init__(self, stream: str, *, aliases: bool = False) -> None:
        super().__init__(stream)
        self._node_count = 0
        self._collection_depth = 0
        self._aliases = aliases
        # Anchors are registered only once their node is complete, so an alias can never point
        # into the node being composed (a recursive structure is refused as an unknown anchor).
        self._complete_anchors: dict[str, Node] = {}
        # Size of each composed node once every alias under it is expanded (keyed by identity).
        self._expanded: dict[int, int] = {}

    # Directives can redefine the ``!!`` handle, so refuse them at the first token.
    def fetch_directive(self) -> None:
        raise YamlStrictError(KIND_DIRECTIVE, self.get_mark().index)

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        where = event.start_mark.index if event.start_mark is not None else None
        if self.check_event(AliasEvent):
            if not self._aliases:
                raise YamlStrictError(KIND_ALIAS, where)
            alias = self.get_event()  # type: ignore[no-untyped-call]
            target = self._complete_anchors.get(alias.anchor)
            if target is None:
                raise YamlStrictError(KIND_ALIAS, where)
            return target
        if event.tag is not None and event.tag not in _ALLOWED_EXPLICIT_TAGS:
            raise YamlStrictError(KIND_TAG, where)
        self._node_count += 1
        if self._node_count > c.MAX_YAML_NODES:
            raise YamlStrictError(KIND_TOO_MANY_NODES, where)
        # PyYAML's own anchor table is never used: without aliases anchors are inert (and a
        # repeated name harmless); with aliases, ``_complete_anchors`` takes its place.
        anchor = event.anchor if self._aliases else None
        no_anchor: Any = None
        node: Node
        if self.check_event(ScalarEvent):
            node = self.compose_scalar_node(no_anchor)
        else:
            self._collection_depth += 1
            if self._collection_depth > c.MAX_YAML_DEPTH:
                raise YamlStrictError(KIND_TOO_DEEP, where)
            try:
                if self.check_event(SequenceStartEvent):
                    node = self.compose_sequence_node(no_anchor)
                elif self.check_event(MappingStartEvent):
                    node = self.compose_mapping_node(no_anchor)
                else:
                    raise YamlStrictError
            finally:
                self._collection_depth -= 1
        if self._aliases:
            self._weigh(node, where)
            if anchor is not None:
                self._complete_anchors[anchor] = node
        return node

    def _weigh(self, node: Node, where: int | None) -> None:
        """Record the expanded size of a just-composed node; refuse it past the bound."""
        weight = 1
        if isinstance(node, SequenceNode):
            weight += sum(self._expanded[id(child)] for child in node.value)
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                weight += self._expanded[id(key)] + self._expanded[id(value)]
        if weight > c.MAX_YAML_EXPANDED_NODES:
            raise YamlStrictError(KIND_TOO_MANY_NODES, where)
        self._expanded[id(node)] = weight

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Hashable, Any]:
        # Replaces PyYAML's version, which would merge ``<<`` keys and keep the last duplicate.
        if not isinstance(node, MappingNode):
            raise _refused(node)
        explicit: set[str] = set()
        mapping: dict[Hashable, Any] = {}
        for key_node, value_node in node.value:
            if self._aliases and _is_merge_key(key_node):
                # Merged keys never replace a key of this mapping nor one merged before them.
                for source in _merge_sources(value_node):
                    for key, value in self.construct_mapping(source, deep=True).items():
                        mapping.setdefault(key, value)
                continue
            try:
                key = mapping_key_text(self.construct_object(key_node, deep=True))
            except YamlStrictError as error:
                if error.index is None:
                    raise _refused(key_node, error.code) from None
                raise
            if key in explicit:
                raise _refused(key_node, KIND_DUPLICATE_KEY)
            explicit.add(key)
            mapping.pop(key, None)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


def _is_merge_key(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.style is None and node.value == _MERGE_KEY


def _merge_sources(node: Node) -> list[MappingNode]:
    """The mappings a ``<<`` value names: one mapping, or a sequence of mappings."""
    if isinstance(node, MappingNode):
        return [node]
    if isinstance(node, SequenceNode) and all(isinstance(item, MappingNode) for item in node.value):
        return list(node.value)
    raise _refused(node, KIND_KEY)


def _refusal(error: yaml.YAMLError) -> YamlStrictError:
    """The kind and position of a PyYAML error, without any of its message text."""
    mark = getattr(error, "problem_mark", None)
    index = mark.index if mark is not None else None
    problem = getattr(error, "problem", None) or ""
    context = getattr(error, "context", None) or ""
    if "'\\t'" in problem:
        return YamlStrictError(KIND_TAB, index)
    if "another document" in problem or "single document" in context:
        return YamlStrictError(KIND_MULTIPLE_DOCUMENTS, index)
    return YamlStrictError(KIND_SYNTAX, index)


def _check_size(text: str) -> None:
    if len(text) > c.MAX_TASKS_TEXT_BYTES or len(text.encode("utf-8", "surrogatepass")) > (
        c.MAX_TASKS_TEXT_BYTES
    ):
        raise YamlStrictError(KIND_TOO_LARGE)


def parse_strict(text: str, *, aliases: bool = False) -> tuple[Any, Node | None]:
    """Parse one strict YAML document (docs/reference.md, "Task fields") into its value and its
    node tree, composed once: the value for the program, the nodes' marks for the author.

    Mapping keys of the value are always strings. An empty stream gives ``(None, None)``.
    Raises ``YamlStrictError`` for anything refused. ``aliases=True`` (workflow files and
    action metadata only) accepts anchors, aliases and ``<<`` merge keys within the
    expanded-size bound; the node tree then shares the nodes an alias repeats.
    """
    _check_size(text)
    loader: _StrictLoader | None = None
    try:
        loader = _StrictLoader(text, aliases=aliases)
        # PyYAML's own get_single_data, split so that the node it composes is kept.
        node = loader.get_single_node()
        value = loader.construct_document(node) if node is not None else None
        return value, node
    except YamlStrictError:
        raise
    except yaml.YAMLError as error:
        raise _refusal(error) from None
    except (ValueError, TypeError, OverflowError, RecursionError):
        raise YamlStrictError from None
    finally:
        if loader is not None:
            loader.dispose()


def load_strict(text: str, *, aliases: bool = False) -> Any:
    """The value of ``parse_strict`` alone, for readers that never point into the text."""
    value, _node = parse_strict(text, aliases=aliases)
    return value
