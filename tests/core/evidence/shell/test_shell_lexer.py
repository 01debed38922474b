"""Which words make which command: separators, quoting, comments, substitutions, ``${{ }}``
and here-documents, and the commands inside substitutions (core/evidence/shell/lexer, scanner,
parser)."""

from __future__ import annotations

import pytest

from jev_select.core.evidence.shell import split_commands


def words_of(script: str) -> list[tuple[str, ...]]:
    return [command.words for command in split_commands(script)]


def words_and_texts(script: str) -> list[tuple[tuple[str, ...], str]]:
    commands = split_commands(script)
    for command in commands:
        assert script[command.offset : command.offset + len(command.text)] == command.text
    return [(command.words, command.text) for command in commands]


# Separators, quoting, comments, substitutions and expressions: which words make which command.
SPLITS: list[tuple[str, list[tuple[str, ...]]]] = [
    ("", []),
    ("   \n\t\n", []),
    ("pnpm test", [("pnpm", "test")]),
    (
        "pnpm install\npnpm test\n\npnpm lint\n",
        [("pnpm", "install"), ("pnpm", "test"), ("pnpm", "lint")],
    ),
    ("a; b && c || d", [("a",), ("b",), ("c",), ("d",)]),
    ("a | b |& c", [("a",), ("b",), ("c",)]),
    ("a & b", [("a",), ("b",)]),
    ("a &&\n  b ||\n  c |\n  d", [("a",), ("b",), ("c",), ("d",)]),
    ("pnpm \\\n  --filter kit \\\n  test", [("pnpm", "--filter", "kit", "test")]),
    ("pn\\\npm test", [("pnpm", "test")]),
    ("pnpm test # cd packages/kit; rm -rf /", [("pnpm", "test")]),
    ("# only a comment\npnpm lint", [("pnpm", "lint")]),
    ("echo a#b", [("echo", "a#b")]),
    ("echo 'a  b' \"c  d\" e\\ f", [("echo", "a  b", "c  d", "e f")]),
    ("echo 'it''s' \"a'b\" 'a\"b'", [("echo", "its", "a'b", 'a"b')]),
    ('echo "a \\" \\\\ \\$ \\` \\x"', [("echo", 'a " \\ $ ` \\x')]),
    ("echo $'a\\tb\\n' $'it\\'s' $'\\x41\\101\\u00e9'", [("echo", "a\tb\n", "it's", "AAé")]),
    ("echo \"a; b && c\" 'd | e'", [("echo", "a; b && c", "d | e")]),
    ('echo $HOME ${HOME} "$HOME/x"', [("echo", "$HOME", "${HOME}", "$HOME/x")]),
    ("echo ${x:-a b} next", [("echo", "${x:-a b}", "next")]),
    # A substitution stays in its word as written; its commands come before the command.
    (
        "echo $(cd x && pnpm test); pnpm lint",
        [("cd", "x"), ("pnpm", "test"), ("echo", "$(cd x && pnpm test)"), ("pnpm", "lint")],
    ),
    (
        "echo $(a $(b | c) (d)) e",
        [("b",), ("c",), ("a", "$(b | c)"), ("d",), ("echo", "$(a $(b | c) (d))", "e")],
    ),
    ('v="$(printf \'%s)\' "$(date)")" ok', [("date",), ("printf", "%s)", "$(date)"), ("ok",)]),
    (
        "echo `cd x; pnpm test` done",
        [("cd", "x"), ("pnpm", "test"), ("echo", "`cd x; pnpm test`", "done")],
    ),
    ("echo $((1 + (2 * 3))) x", [("echo", "$((1 + (2 * 3)))", "x")]),
    ("echo $( (cd a) ; b ) z", [("cd", "a"), ("b",), ("echo", "$( (cd a) ; b )", "z")]),
    ("x=$(case $a in b) echo 1;; esac) pnpm t", [("echo", "1"), ("pnpm", "t")]),
    (
        "diff <(sort a) >(tee b) c",
        [("sort", "a"), ("tee", "b"), ("diff", "<(sort a)", ">(tee b)", "c")],
    ),
    ("pnpm test:kit:${{ matrix.mode }}", [("pnpm", "test:kit:${{ matrix.mode }}")]),
    ("pnpm ${{ inputs.a && 'x' || 'y' }} b", [("pnpm", "${{ inputs.a && 'x' || 'y' }}", "b")]),
    ("echo ${{ format('{0}}}; a', 'b') }} c", [("echo", "${{ format('{0}}}; a', 'b') }}", "c")]),
    ("echo '${{ a == 'b' }}' \"${{ x }}\"", [("echo", "${{ a == 'b' }}", "${{ x }}")]),
    ("${{ matrix.command }} --flag", [("${{ matrix.command }}", "--flag")]),
    ("# ${{ a\n b }} c\nd", [("d",)]),
    ("FOO=1 BAR='a b' pnpm test", [("pnpm", "test")]),
    ("FOO=1\nBAR=$(pnpm test)", [("pnpm", "test")]),
    ("arr=(a 'b c' $(d)) pnpm t", [("d",), ("pnpm", "t")]),
    ('"FOO"=1 x', [("FOO=1", "x")]),
    ("pnpm test > out.txt 2>&1 < in &>> log", [("pnpm", "test")]),
    ("> out pnpm 2>/dev/null test >&2 3<&- <<<'word'", [("pnpm", "test")]),
    ("{fd}>log exec x", [("x",)]),
    ("echo a2>b", [("echo", "a2")]),
    ("echo a)b", [("echo", "a"), (")b",)]),
]


@pytest.mark.parametrize(("script", "expected"), SPLITS)
def test_split_words(script: str, expected: list[tuple[str, ...]]) -> None:
    assert words_of(script) == expected


# Here-documents: their bodies are data, however much they look like commands (the bodies a
# shell reads as its script are in test_shell_parser).
HEREDOCS: list[tuple[str, list[tuple[str, ...]]]] = [
    ("cat <<EOF\ncd x; pnpm test\nEOF\npnpm lint", [("cat",), ("pnpm", "lint")]),
    ("cat <<EOF > f\n  EOF\npnpm no\nEOF\npnpm yes", [("cat",), ("pnpm", "yes")]),
    ("cat <<-EOF\n\tpnpm no\n\tEOF\npnpm yes", [("cat",), ("pnpm", "yes")]),
    ("cat << 'EOF'\n$(\nEOF\nok", [("cat",), ("ok",)]),
    ('cat <<"E F"\n`\nE F\nok', [("cat",), ("ok",)]),
    ("cat <<\\EOF\n'\nEOF\nok", [("cat",), ("ok",)]),
    ("cat <<A; cat <<B\nno\nA\nnot\nB\nok", [("cat",), ("cat",), ("ok",)]),
    (
        "cat <<A | grep x && tee <<B\nno\nA\nnot\nB\nok",
        [("cat",), ("grep", "x"), ("tee",), ("ok",)],
    ),
    ("x=$(cat <<EOF\na)b 'c\nEOF\n)\npnpm test", [("cat",), ("pnpm", "test")]),
    ("cat <<EOF\nlast\nEOF", [("cat",)]),
    ("cat <<<'here string' && b", [("cat",), ("b",)]),
]


@pytest.mark.parametrize(("script", "expected"), HEREDOCS)
def test_heredoc_bodies_are_not_commands(script: str, expected: list[tuple[str, ...]]) -> None:
    assert words_of(script) == expected


# Commands inside $(...), backquotes and process substitutions, at any nesting and in any word
# position, are commands too: each before the command that holds it, at its own text.
SUBSTITUTIONS: list[tuple[str, list[tuple[tuple[str, ...], str]]]] = [
    ("VERSION=$(pnpm run version)", [(("pnpm", "run", "version"), "pnpm run version")]),
    (
        'echo "$(npm run build)"',
        [(("npm", "run", "build"), "npm run build"), (("echo", "$(npm run build)"), "")],
    ),
    ("x=`yarn lint`", [(("yarn", "lint"), "yarn lint")]),
    (
        "for p in $(pnpm -s ls); do echo $p; done",
        [(("pnpm", "-s", "ls"), "pnpm -s ls"), (("echo", "$p"), "echo $p")],
    ),
    (
        "case $(uname -s) in Linux) pnpm a;; esac",
        [(("uname", "-s"), "uname -s"), (("pnpm", "a"), "pnpm a")],
    ),
    (
        'pnpm build > "$(mktemp)" 2> `yarn -s log`',
        [(("mktemp",), "mktemp"), (("yarn", "-s", "log"), "yarn -s log"), (("pnpm", "build"), "")],
    ),
    ("cat < <(pnpm ls)", [(("pnpm", "ls"), "pnpm ls"), (("cat",), "cat < <(pnpm ls)")]),
    (
        'echo "v=$(node -p 1) `git rev-parse HEAD`"',
        [
            (("node", "-p", "1"), "node -p 1"),
            (("git", "rev-parse", "HEAD"), "git rev-parse HEAD"),
            (("echo", "v=$(node -p 1) `git rev-parse HEAD`"), ""),
        ],
    ),
    (
        "a=$(echo $(pnpm b) `yarn c`)",
        [
            (("pnpm", "b"), "pnpm b"),
            (("yarn", "c"), "yarn c"),
            (("echo", "$(pnpm b)", "`yarn c`"), "echo $(pnpm b) `yarn c`"),
        ],
    ),
    ("x=$(y=$(pnpm z))", [(("pnpm", "z"), "pnpm z")]),
    ("echo ${V:-$(pnpm v)}", [(("pnpm", "v"), "pnpm v"), (("echo", "${V:-$(pnpm v)}"), "")]),
    (
        "[[ -n $(git status) ]] && pnpm t",
        [
            (("git", "status"), "git status"),
            (("[[", "-n", "$(git status)", "]]"), "[[ -n $(git status) ]]"),
            (("pnpm", "t"), "pnpm t"),
        ],
    ),
    # A backslash inside backquotes escapes $, ` and \; the text stays as written.
    (
        "x=`echo \\`pnpm inner\\``",
        [(("pnpm", "inner"), "pnpm inner"), (("echo", "`pnpm inner`"), "echo \\`pnpm inner\\`")],
    ),
    ("x=`echo \\$HOME a\\b`", [(("echo", "$HOME", "ab"), "echo \\$HOME a\\b")]),
    # Arithmetic and array words are read for the substitutions in them.
    (
        "(( $(wc -l < f) > 1 ))",
        [(("wc", "-l"), "wc -l < f"), (("((", "$(wc -l < f) > 1", "))"), "")],
    ),
    (
        "echo $(( $(pnpm count) + 1 ))",
        [(("pnpm", "count"), "pnpm count"), (("echo", "$(( $(pnpm count) + 1 ))"), "")],
    ),
    (
        "arr=( $(pnpm ls) '$(no)' `yarn x` )",
        [(("pnpm", "ls"), "pnpm ls"), (("yarn", "x"), "yarn x")],
    ),
    # An expanding here-document body runs its substitutions (in source order after the line);
    # a quoted delimiter or an escape keeps them data.
    (
        "cat > f <<EOF\nv=$(pnpm run version)\n\\$(not) `yarn v`\nEOF",
        [
            (("cat",), "cat > f <<EOF"),
            (("pnpm", "run", "version"), "pnpm run version"),
            (("yarn", "v"), "yarn v"),
        ],
    ),
    ("cat <<'EOF'\n$(no) `no`\nEOF", [(("cat",), "cat <<'EOF'")]),
    (
        "f <<EOF; g $(h)\n$(i)\nEOF\nj",
        [
            (("f",), "f <<EOF"),
            (("h",), "h"),
            (("g", "$(h)"), "g $(h)"),
            (("i",), "i"),
            (("j",), "j"),
        ],
    ),
    (
        "while read -r p; do pnpm -C $p t; done <<EOF\n$(ls packages)\nEOF",
        [
            (("read", "-r", "p"), "read -r p"),
            (("pnpm", "-C", "$p", "t"), "pnpm -C $p t"),
            (("ls", "packages"), "ls packages"),
        ],
    ),
]


@pytest.mark.parametrize(("script", "expected"), SUBSTITUTIONS)
def test_substitution_commands(script: str, expected: list[tuple[tuple[str, ...], str]]) -> None:
    found = words_and_texts(script)
    # An empty text in the table stands for the whole script.
    assert found == [(words, text or script) for words, text in expected]


# $((...)) is arithmetic, not a command substitution, and $(<file) runs nothing.
NOT_COMMANDS: list[tuple[str, list[tuple[str, ...]]]] = [
    ("echo $((1 + 2))", [("echo", "$((1 + 2))")]),
    ("x=$(( (1 + 2) * 3 ))", []),
    ("for ((i = 0; i < 3; i++)); do x; done", [("x",)]),
    ("echo $(<file)", [("echo", "$(<file)")]),
    ("x=$( < file ) y=`<f`", []),
    ("echo $((cd a); b)", [("cd", "a"), ("b",), ("echo", "$((cd a); b)")]),
    ("echo '$(no)' \"\\$(no)\" $'$(no)'", [("echo", "$(no)", "$(no)", "$(no)")]),
    ("echo '`no`' \\`no\\`", [("echo", "`no`", "`no`")]),
]


@pytest.mark.parametrize(("script", "expected"), NOT_COMMANDS)
def test_not_command_substitutions(script: str, expected: list[tuple[str, ...]]) -> None:
    assert words_of(script) == expected
