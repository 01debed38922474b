"""Compound commands, the scripts a shell is given as a word or a here-document, and text the
reader cannot follow (core/evidence/shell/parser)."""

from __future__ import annotations

import pytest

from jev_select.core.evidence.shell import split_commands

Pair = tuple[tuple[str, ...], str | None]


def words_of(script: str) -> list[tuple[str, ...]]:
    return [command.words for command in split_commands(script)]


def pairs(script: str, directory: str | None = ".") -> list[Pair]:
    return [(command.words, command.directory) for command in split_commands(script, directory)]


def words_and_texts(script: str) -> list[tuple[tuple[str, ...], str]]:
    commands = split_commands(script)
    for command in commands:
        assert script[command.offset : command.offset + len(command.text)] == command.text
    return [(command.words, command.text) for command in commands]


# Compound commands: the reserved words are syntax, the commands inside are commands.
COMPOUNDS: list[tuple[str, list[tuple[str, ...]]]] = [
    ("if pnpm test; then cd x; fi", [("pnpm", "test"), ("cd", "x")]),
    (
        "if [ -f a ]\nthen\n  a\nelif b; then\n  c\nelse\n  d\nfi\ne",
        [("[", "-f", "a", "]"), ("a",), ("b",), ("c",), ("d",), ("e",)],
    ),
    ("if ! a; then b; fi", [("a",), ("b",)]),
    ("for p in a b 'c d'; do pnpm --filter $p test; done", [("pnpm", "--filter", "$p", "test")]),
    ("for p\ndo\n  x\ndone", [("x",)]),
    ("for ((i = 0; i < 3; i++)); do x; done", [("x",)]),
    ("while read -r line; do echo $line; done < list", [("read", "-r", "line"), ("echo", "$line")]),
    ("until a; do b; done", [("a",), ("b",)]),
    ("select x in a b; do y; done", [("y",)]),
    (
        'case "$mode" in\n  unit|int) pnpm test ;;\n  (lint) pnpm lint ;&\n  *) echo no;;\nesac',
        [("pnpm", "test"), ("pnpm", "lint"), ("echo", "no")],
    ),
    ("case x in a) b;; esac; c", [("b",), ("c",)]),
    ("{ a; b; } > log; c", [("a",), ("b",), ("c",)]),
    ("(a; b) | c", [("a",), ("b",), ("c",)]),
    ("echo { } done fi", [("echo", "{", "}", "done", "fi")]),
    ('"if" x; "{" y', [("if", "x"), ("{", "y")]),
    ("time pnpm test", [("pnpm", "test")]),
    ("time -p pnpm test", [("pnpm", "test")]),
    ("! time { a; }", [("a",)]),
    (
        "[[ -f a && $b == c* ]] && pnpm test",
        [("[[", "-f", "a", "&&", "$b", "==", "c*", "]]"), ("pnpm", "test")],
    ),
    ("(( i++ )) || x", [("((", "i++", "))"), ("x",)]),
    ("((cd a) ; b)", [("cd", "a"), ("b",)]),
    ("f() { pnpm test; }\nf", [("pnpm", "test"), ("f",)]),
    ("function g {\n  pnpm lint\n}\ng", [("pnpm", "lint"), ("g",)]),
    ("function h() ( x )", [("x",)]),
    ("fi; done; a", [("a",)]),
]


@pytest.mark.parametrize(("script", "expected"), COMPOUNDS)
def test_compound_commands(script: str, expected: list[tuple[str, ...]]) -> None:
    assert words_of(script) == expected


# Text that cannot be read: what was read, then the rest as one command of unknown directory.
UNREADABLE: list[tuple[str, list[Pair]]] = [
    (
        'pnpm test\necho "abc; cd x\npnpm lint',
        [(("pnpm", "test"), "."), (("echo", '"abc;', "cd", "x", "pnpm", "lint"), None)],
    ),
    ("a; echo 'b", [(("a",), "."), (("echo", "'b"), None)]),
    # What was read inside the unreadable command is kept: its own text is whitespace-split.
    ("a; echo $(b", [(("a",), "."), (("b",), "."), (("echo", "$(b"), None)]),
    ("a; echo `b", [(("a",), "."), (("echo", "`b"), None)]),
    ("a; echo ${b", [(("a",), "."), (("echo", "${b"), None)]),
    ("a; pnpm ${{ matrix.x", [(("a",), "."), (("pnpm", "${{", "matrix.x"), None)]),
    ("a; cat <<EOF\nbody", [(("a",), "."), (("cat", "<<EOF", "body"), None)]),
    ("a; cat <<\nb", [(("a",), "."), (("cat", "<<", "b"), None)]),
    ("a\n) b\nc", [(("a",), "."), ((")", "b", "c"), None)]),
    ('cd x\nif a; then b "c; fi', [(("cd", "x"), "."), (("a",), "x"), (("b", '"c;', "fi"), None)]),
]


@pytest.mark.parametrize(("script", "expected"), UNREADABLE)
def test_unreadable_text(script: str, expected: list[Pair]) -> None:
    assert pairs(script) == expected


@pytest.mark.parametrize(
    "script", ["(" * 100 + "a", "$(" * 100 + "a", "if a; then " * 100 + "b", "f() " * 100 + "b"]
)
def test_nesting_deeper_than_followed(script: str) -> None:
    *read, rest = split_commands(script)
    assert rest.directory is None
    assert script.endswith(rest.text)
    assert rest.words[-1].endswith(script[-1])
    assert all(command.offset + len(command.text) <= rest.offset for command in read)


def test_unclosed_compounds_keep_what_was_read() -> None:
    assert pairs("if a; then cd b; pnpm test") == [
        (("a",), "."),
        (("cd", "b"), "."),
        (("pnpm", "test"), "b"),
    ]
    assert pairs("(cd a; x") == [(("cd", "a"), "."), (("x",), "a")]


# A shell (behind wrappers too) reading its script from a here-document (no script file, -s) or
# given it as the word after -c (or a here-string): that script's commands are commands too, after
# the shell's, at their own text; another command's here-document stays data.
SHELL_SCRIPTS: list[tuple[str, list[tuple[tuple[str, ...], str]]]] = [
    (
        "bash <<EOF\npnpm test\nEOF\npnpm lint",
        [
            (("bash",), "bash <<EOF"),
            (("pnpm", "test"), "pnpm test"),
            (("pnpm", "lint"), "pnpm lint"),
        ],
    ),
    ("sh -e <<'EOF'\npnpm a\nEOF", [(("sh", "-e"), "sh -e <<'EOF'"), (("pnpm", "a"), "pnpm a")]),
    (
        "bash -s -- x <<EOF\npnpm a\nEOF",
        [(("bash", "-s", "--", "x"), "bash -s -- x <<EOF"), (("pnpm", "a"), "pnpm a")],
    ),
    (
        "sudo -u ci /bin/bash -eo pipefail <<EOF\npnpm a\nEOF",
        [
            (("/bin/bash", "-eo", "pipefail"), "sudo -u ci /bin/bash -eo pipefail <<EOF"),
            (("pnpm", "a"), "pnpm a"),
        ],
    ),
    (
        "env FOO=1 zsh <<-EOF\n\tpnpm a\n\tEOF",
        [(("zsh",), "env FOO=1 zsh <<-EOF"), (("pnpm", "a"), "pnpm a")],
    ),
    (
        "dash 0<<EOF\nksh <<X\npnpm a\nX\nEOF",
        [
            (("dash",), "dash 0<<EOF"),
            (("ksh",), "ksh <<X"),
            (("pnpm", "a"), "pnpm a"),
        ],
    ),
    # In source order: the commands after the shell's on its line come before the body.
    (
        "bash <<EOF && pnpm after\npnpm in\nEOF",
        [(("bash",), "bash <<EOF"), (("pnpm", "after"), "pnpm after"), (("pnpm", "in"), "pnpm in")],
    ),
    # The last redirection of standard input is the script.
    (
        "bash <<A <<B\npnpm no\nA\npnpm yes\nB",
        [(("bash",), "bash <<A <<B"), (("pnpm", "yes"), "pnpm yes")],
    ),
    # The body is data: a script file, another descriptor, another input, -c, or no shell.
    ("bash run.sh <<EOF\npnpm no\nEOF", [(("bash", "run.sh"), "bash run.sh <<EOF")]),
    ("bash 3<<EOF\npnpm no\nEOF", [(("bash",), "bash 3<<EOF")]),
    ("bash <<EOF < f\npnpm no\nEOF", [(("bash",), "bash <<EOF < f")]),
    ("cat <<EOF | bash\npnpm no\nEOF", [(("cat",), "cat <<EOF"), (("bash",), "bash")]),
    ("fish <<EOF\npnpm no\nEOF", [(("fish",), "fish <<EOF")]),
    (
        "bash -c 'pnpm a' <<EOF\npnpm no\nEOF",
        [(("bash", "-c", "pnpm a"), "bash -c 'pnpm a' <<EOF"), (("pnpm", "a"), "pnpm a")],
    ),
    # -c: the first word after the options.
    ("bash -c 'pnpm test'", [(("bash", "-c", "pnpm test"), ""), (("pnpm", "test"), "pnpm test")]),
    (
        'sh -c "pnpm a && pnpm b"',
        [
            (("sh", "-c", "pnpm a && pnpm b"), ""),
            (("pnpm", "a"), "pnpm a"),
            (("pnpm", "b"), "pnpm b"),
        ],
    ),
    ("bash -xc pnpm\\ a", [(("bash", "-xc", "pnpm a"), ""), (("pnpm", "a"), "")]),
    (
        "bash --noprofile --norc -eo pipefail -c 'pnpm a'",
        [
            (("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", "pnpm a"), ""),
            (("pnpm", "a"), "pnpm a"),
        ],
    ),
    (
        "sh -c 'pnpm \"$1\"' sh lint",
        [(("sh", "-c", 'pnpm "$1"', "sh", "lint"), ""), (("pnpm", "$1"), 'pnpm "$1"')],
    ),
    ("bash -c", [(("bash", "-c"), "")]),
    ("bash -c ''", [(("bash", "-c", ""), "")]),
    ("fish -c 'pnpm a'", [(("fish", "-c", "pnpm a"), "")]),
    ("bash <<< 'pnpm a'", [(("bash",), ""), (("pnpm", "a"), "pnpm a")]),
    (
        "bash -c \"sh -c 'pnpm a'\"",
        [
            (("bash", "-c", "sh -c 'pnpm a'"), ""),
            (("sh", "-c", "pnpm a"), "sh -c 'pnpm a'"),
            (("pnpm", "a"), "pnpm a"),
        ],
    ),
    # Quote removal that changed more than the quotes around: the shell command's own text.
    (
        'bash -c "echo \\"hi\\"; pnpm a"',
        [(("bash", "-c", 'echo "hi"; pnpm a'), ""), (("echo", "hi"), ""), (("pnpm", "a"), "")],
    ),
    (
        "bash -c $'pnpm a\\npnpm b'",
        [(("bash", "-c", "pnpm a\npnpm b"), ""), (("pnpm", "a"), ""), (("pnpm", "b"), "")],
    ),
    # A double-quoted (or unquoted) word's substitutions run in the outer shell, once.
    (
        'bash -c "pnpm $(echo a)"',
        [
            (("echo", "a"), "echo a"),
            (("bash", "-c", "pnpm $(echo a)"), ""),
            (("pnpm", "$(echo a)"), "pnpm $(echo a)"),
        ],
    ),
    ("bash -c 'v=$(pnpm a)'", [(("bash", "-c", "v=$(pnpm a)"), ""), (("pnpm", "a"), "pnpm a")]),
    # An expanding body: its substitutions are the outer shell's, its escapes the inner's.
    (
        "bash <<EOF\nv=$(pnpm x) w=\\$(pnpm y)\nEOF",
        [(("bash",), "bash <<EOF"), (("pnpm", "x"), "pnpm x"), (("pnpm", "y"), "pnpm y")],
    ),
    (
        "bash <<EOF\necho \\`pnpm y\\` `pnpm x`\nEOF",
        [
            (("bash",), "bash <<EOF"),
            (("pnpm", "y"), "pnpm y"),
            (("pnpm", "x"), "pnpm x"),
            (("echo", "`pnpm y`", "`pnpm x`"), "echo \\`pnpm y\\` `pnpm x`"),
        ],
    ),
]


@pytest.mark.parametrize(("script", "expected"), SHELL_SCRIPTS)
def test_shell_scripts(script: str, expected: list[tuple[tuple[str, ...], str]]) -> None:
    # An empty text in the table stands for the whole script.
    assert words_and_texts(script) == [(words, text or script) for words, text in expected]


# Text of a known extent that cannot be read (a backquoted command, a shell's word or
# here-document, an expanding here-document body) ends only itself: what was read in it, then its
# rest as one command of unknown directory; the reading goes on after it.
UNREADABLE_REGIONS: list[tuple[str, list[Pair]]] = [
    (
        "echo `pnpm 'a`; pnpm b",
        [(("pnpm", "'a"), None), (("echo", "`pnpm 'a`"), "."), (("pnpm", "b"), ".")],
    ),
    (
        "bash -c 'pnpm \"a'; pnpm b",
        [(("bash", "-c", 'pnpm "a'), "."), (("pnpm", '"a'), None), (("pnpm", "b"), ".")],
    ),
    (
        "bash -c 'x; )'; y",
        [(("bash", "-c", "x; )"), "."), (("x",), "."), ((")",), None), (("y",), ".")],
    ),
    (
        'bash <<EOF\npnpm "a\nEOF\npnpm b',
        [(("bash",), "."), (("pnpm", '"a'), None), (("pnpm", "b"), ".")],
    ),
    (
        "cat <<EOF\nx $(pnpm a\nEOF\npnpm b",
        [(("cat",), "."), (("pnpm", "a"), "."), (("$(pnpm", "a"), None), (("pnpm", "b"), ".")],
    ),
    # Nesting deeper than the reader follows, inside a backquoted command.
    (
        "echo `" + "$(" * 40 + "`; pnpm b",
        [(("$(" * 40,), None), (("echo", "`" + "$(" * 40 + "`"), "."), (("pnpm", "b"), ".")],
    ),
]


@pytest.mark.parametrize(("script", "expected"), UNREADABLE_REGIONS)
def test_unreadable_regions(script: str, expected: list[Pair]) -> None:
    assert pairs(script) == expected
