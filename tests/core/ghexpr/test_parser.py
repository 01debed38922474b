"""The expression parser (core/ghexpr): literals, names, postfix forms, precedence, offsets,
errors with their offsets, the length and depth bounds, ``walk``, and a round trip through a
printer over random trees."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jev_select.core.ghexpr import (
    Binary,
    Call,
    ExpressionSyntaxError,
    Filter,
    Index,
    Literal,
    Name,
    Node,
    Property,
    Unary,
    parse_expression,
    walk,
)
from jev_select.errors import JevSelectError


def shape(node: Node) -> Any:
    """The tree without its offsets, as nested tuples. Literal values carry their type, since
    ``1 == True == 1.0`` in Python would otherwise hide a wrong literal kind."""
    if isinstance(node, Literal):
        return ("literal", type(node.value).__name__, node.value)
    if isinstance(node, Name):
        return ("name", node.name)
    if isinstance(node, Property):
        return ("property", shape(node.target), node.name)
    if isinstance(node, Index):
        return ("index", shape(node.target), shape(node.index))
    if isinstance(node, Filter):
        return ("filter", shape(node.target))
    if isinstance(node, Call):
        return ("call", node.function, tuple(shape(argument) for argument in node.arguments))
    if isinstance(node, Unary):
        return ("unary", node.operator, shape(node.operand))
    return ("binary", node.operator, shape(node.left), shape(node.right))


def parsed(text: str) -> Any:
    return shape(parse_expression(text))


def name(text: str) -> Any:
    return ("name", text)


def lit(value: object) -> Any:
    return ("literal", type(value).__name__, value)


def prop(target: Any, key: str) -> Any:
    return ("property", target, key)


def path(*parts: str) -> Any:
    """``a.b.c`` as a shape: a name and a chain of property accesses."""
    node = name(parts[0])
    for part in parts[1:]:
        node = prop(node, part)
    return node


def binary(operator: str, left: Any, right: Any) -> Any:
    return ("binary", operator, left, right)


def call(function: str, *arguments: Any) -> Any:
    return ("call", function, arguments)


# The single-letter names the tables below are written with.
A, B, C, D, E = (name(letter) for letter in "abcde")


def error_of(text: str) -> ExpressionSyntaxError:
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_expression(text)
    return caught.value


# ------------------------------------------------------------------------------------------
# Literals
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("null", None),
        ("true", True),
        ("false", False),
        ("0", 0),
        ("42", 42),
        ("007", 7),
        ("-1", -1),
        ("-0", 0),
        ("1.5", 1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("-.5", -0.5),
        ("-2.25", -2.25),
        ("1e3", 1000.0),
        ("2.5E-2", 0.025),
        ("1E+2", 100.0),
        ("1.e3", 1000.0),
        ("0xff", 255),
        ("0XFF", 255),
        ("0x0", 0),
        ("-0x10", -16),
        ("9007199254740992", 2**53),
        ("-9007199254740992", -(2**53)),
        ("9007199254740993", 9007199254740992.0),
        ("0x20000000000001", 9007199254740992.0),
        ("''", ""),
        ("'lint'", "lint"),
        ("'it''s'", "it's"),
        ("''''", "'"),
        ("'a''''b'", "a''b"),
        ("'two\nlines'", "two\nlines"),
        ("'\"double\" inside'", '"double" inside'),
        ("'${{ }}'", "${{ }}"),
    ],
)
def test_literals(text: str, value: object) -> None:
    assert parsed(text) == lit(value)


def test_a_long_integer_is_a_float_not_a_conversion_error() -> None:
    # Python refuses int() of more than 4300 digits; the parser must not lean on it.
    assert parsed("1" * 5000) == lit(math.inf)
    assert parsed("0x" + "f" * 300) == lit(math.inf)
    assert parsed("-0x" + "f" * 300) == lit(-math.inf)
    assert parsed("0" * 5000 + "12") == lit(12)


def test_keywords_are_lower_case_and_whole_words() -> None:
    assert parsed("True") == name("True")
    assert parsed("NULL") == name("NULL")
    assert parsed("true-ish") == name("true-ish")
    assert parsed("nullable") == name("nullable")


# ------------------------------------------------------------------------------------------
# Names, property access, indexes, filters and calls
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("github", name("github")),
        ("_private", name("_private")),
        ("matrix.os", path("matrix", "os")),
        ("needs.plan.outputs.has-tasks", path("needs", "plan", "outputs", "has-tasks")),
        ("steps.x-1.outputs.a_b", path("steps", "x-1", "outputs", "a_b")),
        ("a.true", prop(A, "true")),
        ("a.null.false", prop(prop(A, "null"), "false")),
        ("a . b", path("a", "b")),
        ("needs.*.result", prop(("filter", name("needs")), "result")),
        ("a[*].b", prop(("filter", A), "b")),
        ("a[ * ]", ("filter", A)),
        ("a.*.*", ("filter", ("filter", A))),
        ("a['b']", ("index", A, lit("b"))),
        ("a[0]", ("index", A, lit(0))),
        ("a[-1]", ("index", A, lit(-1))),
        ("a[.5]", ("index", A, lit(0.5))),
        ("a[matrix.key]", ("index", A, path("matrix", "key"))),
        ("a[b == c]", ("index", A, binary("==", B, C))),
        ("a['b'].c[0]", ("index", prop(("index", A, lit("b")), "c"), lit(0))),
        ("'abc'.length", prop(lit("abc"), "length")),
        ("(a).b", path("a", "b")),
        ("(a || b).c", prop(binary("||", A, B), "c")),
        ("always()", call("always")),
        ("always ( )", call("always")),
        ("success(\n)", call("success")),
        ("format('{0}', 1, true)", call("format", lit("{0}"), lit(1), lit(True))),
        (
            "fromJSON(needs.plan.outputs.run)['unit']",
            ("index", call("fromJSON", path("needs", "plan", "outputs", "run")), lit("unit")),
        ),
        (
            "fromJSON(steps.select.outputs.run).unit",
            prop(call("fromJSON", path("steps", "select", "outputs", "run")), "unit"),
        ),
        (
            "contains(fromJSON(needs.plan.outputs.selected), 'lint')",
            call(
                "contains",
                call("fromJSON", path("needs", "plan", "outputs", "selected")),
                lit("lint"),
            ),
        ),
        (
            "join(fromJSON(toJSON(a)), format('{0}', b))",
            call("join", call("fromJSON", call("toJSON", A)), call("format", lit("{0}"), B)),
        ),
        ("f(a || b, !c)", call("f", binary("||", A, B), ("unary", "!", C))),
    ],
)
def test_postfix_forms_and_calls(text: str, expected: Any) -> None:
    assert parsed(text) == expected


def test_calls_keep_the_name_as_written_and_fold_it_for_comparison() -> None:
    node = parse_expression("FromJson(x)")
    assert isinstance(node, Call)
    assert node.function == "FromJson"
    assert node.folded == "fromjson"


# ------------------------------------------------------------------------------------------
# Precedence and associativity
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a || b && c", binary("||", A, binary("&&", B, C))),
        ("a && b || c", binary("||", binary("&&", A, B), C)),
        ("!a == b", binary("==", ("unary", "!", A), B)),
        ("!!a", ("unary", "!", ("unary", "!", A))),
        ("!a.b", ("unary", "!", path("a", "b"))),
        ("!f(x)[0]", ("unary", "!", ("index", call("f", name("x")), lit(0)))),
        ("a == b == c", binary("==", binary("==", A, B), C)),
        ("a != b == c", binary("==", binary("!=", A, B), C)),
        ("a < b == c", binary("==", binary("<", A, B), C)),
        ("a == b < c", binary("==", A, binary("<", B, C))),
        ("a < b <= c", binary("<=", binary("<", A, B), C)),
        ("a > b >= c", binary(">=", binary(">", A, B), C)),
        ("a || b || c", binary("||", binary("||", A, B), C)),
        ("a && b && c", binary("&&", binary("&&", A, B), C)),
        ("a == b && c != d", binary("&&", binary("==", A, B), binary("!=", C, D))),
        (
            "a || b == c && d < e",
            binary("||", A, binary("&&", binary("==", B, C), binary("<", D, E))),
        ),
        ("(a || b) && c", binary("&&", binary("||", A, B), C)),
        ("a == (b == c)", binary("==", A, binary("==", B, C))),
        ("!(a == b)", ("unary", "!", binary("==", A, B))),
        ("((a))", A),
        ("a==-1", binary("==", A, lit(-1))),
        ("a<.5", binary("<", A, lit(0.5))),
    ],
)
def test_precedence_and_associativity(text: str, expected: Any) -> None:
    assert parsed(text) == expected


def test_whitespace_of_every_kind_between_tokens_is_ignored() -> None:
    text = " \t\r\n github.event_name\n==\t'push'\r\n&&\n!\ncancelled( )\n "
    assert parsed(text) == binary(
        "&&",
        binary("==", path("github", "event_name"), lit("push")),
        ("unary", "!", call("cancelled")),
    )


# ------------------------------------------------------------------------------------------
# Offsets
# ------------------------------------------------------------------------------------------


def test_offsets_of_every_node() -> None:
    text = "  needs.plan.outputs.has-tasks == 'true' && !contains(x, -1)"
    node = parse_expression(text)
    assert isinstance(node, Binary)
    assert node.start == 2
    equality, negation = node.left, node.right
    assert isinstance(equality, Binary)
    assert equality.start == 2
    assert isinstance(equality.left, Property)
    assert equality.left.start == 2
    assert isinstance(equality.right, Literal)
    assert equality.right.start == text.index("'true'")
    assert isinstance(negation, Unary)
    assert negation.start == text.index("!")
    contains = negation.operand
    assert isinstance(contains, Call)
    assert contains.start == text.index("contains")
    assert [argument.start for argument in contains.arguments] == [
        text.index("x,"),
        text.index("-1"),
    ]
    names = [item for item in walk(node) if isinstance(item, Name)]
    assert [item.start for item in names] == [2, text.index("x,")]


def test_offsets_of_postfix_nodes_are_those_of_their_leftmost_operand() -> None:
    text = "x || fromJSON(a)['b'].c.*"
    node = parse_expression(text)
    assert isinstance(node, Binary)
    starts = [item.start for item in walk(node.right)]
    # Filter, Property, Index, Call: all start at the call; then the name and the index.
    assert starts == [5, 5, 5, 5, text.index("a)"), text.index("'b'")]


def test_a_group_keeps_the_inner_start_and_the_outer_node_starts_at_the_parenthesis() -> None:
    text = "( a || b ) && c"
    node = parse_expression(text)
    assert isinstance(node, Binary)
    assert node.start == 0
    assert isinstance(node.left, Binary)
    assert node.left.start == 2
    assert isinstance(node.left.left, Name)
    assert node.left.left.start == 2
    grouped = parse_expression("  (a)")
    assert grouped == Name("a", 3)


def test_equal_texts_give_equal_trees_and_the_nodes_are_frozen() -> None:
    assert parse_expression("a.b == 1") == parse_expression("a.b == 1")
    assert parse_expression("a.b == 1") != parse_expression(" a.b == 1")
    node = parse_expression("a")
    with pytest.raises(AttributeError):
        node.start = 3  # type: ignore[misc]


# ------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "offset", "message"),
    [
        ("", 0, "empty expression"),
        ("  \n\t", 4, "empty expression"),
        ("=", 0, "unexpected character"),
        ("a = b", 2, "unexpected character"),
        ("a & b", 2, "unexpected character"),
        ("a | b", 2, "unexpected character"),
        ("a &| b", 2, "unexpected character"),
        ('"push"', 0, "unexpected character"),
        ('a == "push"', 5, "unexpected character"),
        ("a + b", 2, "unexpected character"),
        ("a\fb", 1, "unexpected character"),
        ("é", 0, "unexpected character"),
        ("'abc", 0, "unterminated string"),
        ("x == 'it''s", 5, "unterminated string"),
        ("'abc''", 0, "unterminated string"),
        ("a b", 2, "unexpected token"),
        ("a == b c", 7, "unexpected token"),
        ("f(x) y", 5, "unexpected token"),
        ("(a) (b)", 4, "unexpected token"),
        ("true(1)", 4, "unexpected token"),
        ("a.b(1)", 3, "unexpected token"),
        ("f(x)(y)", 4, "unexpected token"),
        ("a.", 2, "expected a property name"),
        ("a. ", 3, "expected a property name"),
        ("a.1", 2, "expected a property name"),
        ("a.'b'", 2, "expected a property name"),
        ("a.[0]", 2, "expected a property name"),
        ("a.(b)", 2, "expected a property name"),
        ("a ==", 4, "unexpected end of expression"),
        ("!", 1, "unexpected end of expression"),
        ("a ||", 4, "unexpected end of expression"),
        ("== a", 0, "unexpected token"),
        ("a == == b", 5, "unexpected token"),
        ("*", 0, "unexpected token"),
        ("a[]", 2, "unexpected token"),
        ("a[1", 3, "expected ']'"),
        ("a[*", 2, "unexpected token"),
        ("a[1 2]", 4, "expected ']'"),
        ("(a", 2, "expected ')'"),
        ("(a b)", 3, "expected ')'"),
        ("()", 1, "unexpected token"),
        (")", 0, "unexpected token"),
        ("f(", 2, "unexpected end of expression"),
        ("f(a", 3, "expected ',' or ')'"),
        ("f(a b)", 4, "expected ',' or ')'"),
        ("f(a,)", 4, "unexpected token"),
        ("f(,a)", 2, "unexpected token"),
        ("1x", 0, "malformed number"),
        ("a == 1.5.", 9, "expected a property name"),
        ("0x", 0, "malformed number"),
        ("0xfg", 0, "malformed number"),
        ("1e", 0, "malformed number"),
        ("1e+", 0, "malformed number"),
        ("x == 2.5e-", 5, "malformed number"),
        ("-", 0, "malformed number"),
        ("-a", 0, "malformed number"),
        ("--1", 0, "malformed number"),
        ("- 1", 0, "malformed number"),
        ("1_000", 0, "malformed number"),
        ("a -1", 2, "unexpected token"),
    ],
)
def test_syntax_errors_with_their_offsets(text: str, offset: int, message: str) -> None:
    error = error_of(text)
    assert error.offset == offset
    assert error.message == message
    assert isinstance(error, JevSelectError)


def test_the_message_never_repeats_the_source() -> None:
    secret = "s3cr3t-value"
    for text in (f"'{secret}", f"{secret} {secret}", f'"{secret}"', f"{secret}.", f"{secret}="):
        error = error_of(text)
        assert secret not in str(error)
        assert secret not in error.message
        assert str(error) == f"{error.message} at offset {error.offset}"


# ------------------------------------------------------------------------------------------
# Bounds
# ------------------------------------------------------------------------------------------


def test_sixty_four_levels_are_accepted() -> None:
    assert parsed("(" * 64 + "a" + ")" * 64) == A
    assert parsed("!" * 64 + "a")[0] == "unary"
    assert parsed("a" + ".b" * 64)[0] == "property"
    assert parsed("f(" * 64 + ")" * 64)[0] == "call"
    assert parsed("a" + "[0]" * 64)[0] == "index"
    assert parsed(" || ".join(["a"] * 65))[0] == "binary"


@pytest.mark.parametrize(
    "text",
    [
        "(" * 65 + "a" + ")" * 65,
        "!" * 65 + "a",
        "a" + ".b" * 65,
        "a" + ".*" * 65,
        "f(" * 65 + ")" * 65,
        "a" + "[0]" * 65,
        "a[" * 65 + "0" + "]" * 65,
        " || ".join(["a"] * 66),
        " == ".join(["a"] * 66),
        "(" * 32 + "!" * 33 + "a" + ")" * 32,
        # Far past Python's recursion limit: refused, never a RecursionError.
        "(" * 20_000 + "a" + ")" * 20_000,
        "!" * 60_000 + "a",
        "a" + ".b" * 30_000,
        "f(" * 20_000 + ")" * 20_000,
        "a[" * 20_000 + "0" + "]" * 20_000,
        " && ".join(["a"] * 10_000),
        "(" * 65_536,
    ],
)
def test_deeper_than_sixty_four_levels_is_refused(text: str) -> None:
    error = error_of(text)
    assert error.message == "expression nested too deeply"
    assert 0 <= error.offset < len(text)


def test_the_depth_error_points_at_the_level_past_the_bound() -> None:
    assert error_of("(" * 65 + "a" + ")" * 65).offset == 64
    assert error_of("!" * 65 + "a").offset == 0
    assert error_of("a" + ".b" * 65).offset == 1 + 2 * 64


def test_longer_than_the_bound_is_refused() -> None:
    accepted = "'" + "x" * 65_534 + "'"
    assert len(accepted) == 65_536
    assert parsed(accepted) == lit("x" * 65_534)
    error = error_of(" " + accepted)
    assert error.message == "expression too long"
    assert error.offset == 65_536
    error = error_of("a" * 1_000_000)
    assert error.message == "expression too long"


# ------------------------------------------------------------------------------------------
# walk
# ------------------------------------------------------------------------------------------


def test_walk_is_pre_order_left_to_right() -> None:
    node = parse_expression("f(a.b, !c[d]) || e.*")
    kinds = [type(item) for item in walk(node)]
    assert kinds == [Binary, Call, Property, Name, Unary, Index, Name, Name, Filter, Name]
    names = [item.name for item in walk(node) if isinstance(item, Name)]
    assert names == ["a", "c", "d", "e"]


def test_walk_of_a_leaf_is_the_leaf() -> None:
    leaf = Literal(None, 0)
    assert list(walk(leaf)) == [leaf]


def test_walk_does_not_recurse_on_a_deep_tree_built_by_hand() -> None:
    node: Node = Name("a", 0)
    for _ in range(50_000):
        node = Unary("!", node, 0)
    assert sum(1 for _ in walk(node)) == 50_001


# ------------------------------------------------------------------------------------------
# Round trip: a printer over random trees, then the parser
# ------------------------------------------------------------------------------------------

PRECEDENCE = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4}
KEYWORDS = {"true", "false", "null"}

identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True)
context_names = identifiers.filter(lambda word: word not in KEYWORDS)
literals = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
).map(lambda value: Literal(value, 0))
names = context_names.map(lambda word: Name(word, 0))


def extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.builds(Property, children, identifiers, st.just(0)),
        st.builds(Index, children, children, st.just(0)),
        st.builds(Filter, children, st.just(0)),
        st.builds(
            Call,
            context_names,
            st.lists(children, max_size=3).map(tuple),
            st.just(0),
        ),
        st.builds(Unary, st.just("!"), children, st.just(0)),
        st.builds(Binary, st.sampled_from(sorted(PRECEDENCE)), children, children, st.just(0)),
    )


trees = st.recursive(st.one_of(literals, names), extend, max_leaves=12)


def render_literal(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    assert isinstance(value, str)
    return "'" + value.replace("'", "''") + "'"


def render(node: Node, gap: str = " ") -> str:
    """Source text for ``node``, with parentheses only where the grammar needs them and ``gap``
    (whitespace) around operators and arguments."""
    if isinstance(node, Literal):
        return render_literal(node.value)
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Property):
        return f"{render_target(node.target, gap)}.{node.name}"
    if isinstance(node, Index):
        return f"{render_target(node.target, gap)}[{gap}{render(node.index, gap)}{gap}]"
    if isinstance(node, Filter):
        # Both spellings of a filter: the plain printer writes ``.*``, the spaced one ``[*]``.
        star = ".*" if gap == " " else f"[{gap}*{gap}]"
        return f"{render_target(node.target, gap)}{star}"
    if isinstance(node, Call):
        arguments = f",{gap}".join(render(argument, gap) for argument in node.arguments)
        return f"{node.function}{gap}({gap}{arguments}{gap})"
    if isinstance(node, Unary):
        operand = render(node.operand, gap)
        return f"!{gap}({operand})" if isinstance(node.operand, Binary) else f"!{gap}{operand}"
    level = PRECEDENCE[node.operator]
    left = render(node.left, gap)
    right = render(node.right, gap)
    # Left-associative: a looser left operand needs parentheses, a right one of equal level too.
    if isinstance(node.left, Binary) and PRECEDENCE[node.left.operator] < level:
        left = f"({gap}{left}{gap})"
    if isinstance(node.right, Binary) and PRECEDENCE[node.right.operator] <= level:
        right = f"({gap}{right}{gap})"
    return f"{left}{gap}{node.operator}{gap}{right}"


def render_target(node: Node, gap: str) -> str:
    """A postfix target: a literal (``1.`` would swallow the dot) or an operator needs brackets."""
    text = render(node, gap)
    if isinstance(node, Literal | Unary | Binary):
        return f"({gap}{text}{gap})"
    return text


@given(trees)
def test_printed_random_trees_parse_back_to_the_same_tree(tree: Node) -> None:
    assert parsed(render(tree)) == shape(tree)


@given(trees, st.text(alphabet=" \t\r\n", min_size=1, max_size=3))
def test_random_trees_with_other_whitespace_parse_back_the_same(tree: Node, gap: str) -> None:
    text = gap + render(tree, gap) + gap
    assert parsed(text) == shape(tree)
