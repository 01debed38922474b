"""The directory each command runs in: cd, pushd, popd, the step's start and function bodies
(core/evidence/shell/directories)."""

from __future__ import annotations

import pytest

from jev_select.core.evidence.shell import split_commands

Pair = tuple[tuple[str, ...], str | None]


def pairs(script: str, directory: str | None = ".") -> list[Pair]:
    return [(command.words, command.directory) for command in split_commands(script, directory)]


# The directory every command runs in, from the step's start.
DIRECTORIES: list[tuple[str, list[Pair]]] = [
    (
        "pnpm install\ncd packages/kit && pnpm test\npnpm lint",
        [
            (("pnpm", "install"), "."),
            (("cd", "packages/kit"), "."),
            (("pnpm", "test"), "packages/kit"),
            (("pnpm", "lint"), "packages/kit"),
        ],
    ),
    ("cd a; cd b/./c/; x", [(("cd", "a"), "."), (("cd", "b/./c/"), "a"), (("x",), "a/b/c")]),
    (
        "cd a/b; cd ..; x; cd ../; y",
        [
            (("cd", "a/b"), "."),
            (("cd", ".."), "a/b"),
            (("x",), "a"),
            (("cd", "../"), "a"),
            (("y",), "."),
        ],
    ),
    ("cd a/.. && x", [(("cd", "a/.."), "."), (("x",), ".")]),
    (
        "cd ..; x; cd a; y",
        [(("cd", ".."), "."), (("x",), None), (("cd", "a"), None), (("y",), None)],
    ),
    ("cd x || exit 1\ny", [(("cd", "x"), "."), (("exit", "1"), "x"), (("y",), "x")]),
    (
        "cd -P a; x; cd -L -e b; y",
        [(("cd", "-P", "a"), "."), (("x",), "a"), (("cd", "-L", "-e", "b"), "a"), (("y",), "a/b")],
    ),
    ("cd -- a; x", [(("cd", "--", "a"), "."), (("x",), "a")]),
    ("cd 'my dir'/sub; x", [(("cd", "my dir/sub"), "."), (("x",), "my dir/sub")]),
    # A subshell, a pipeline element and a background list keep their directory to themselves.
    ("(cd a && x); y", [(("cd", "a"), "."), (("x",), "a"), (("y",), ".")]),
    ("cd a | cat; y", [(("cd", "a"), "."), (("cat",), "."), (("y",), ".")]),
    ("echo | cd a; y", [(("echo",), "."), (("cd", "a"), "."), (("y",), ".")]),
    ("cd a & y", [(("cd", "a"), "."), (("y",), ".")]),
    ("x=$(cd a && pwd); y", [(("cd", "a"), "."), (("pwd",), "a"), (("y",), ".")]),
    # A group is the same shell.
    ("{ cd a; }; y", [(("cd", "a"), "."), (("y",), "a")]),
    # Straight-line: a change inside a conditional or a loop holds after it.
    (
        "if [ -d a ]; then cd a; fi; y",
        [(("[", "-d", "a", "]"), "."), (("cd", "a"), "."), (("y",), "a")],
    ),
    (
        "for p in a b; do (cd $p && pnpm test); done; z",
        [(("cd", "$p"), "."), (("pnpm", "test"), None), (("z",), ".")],
    ),
    # pushd and popd.
    (
        "pushd a; pushd b; x; popd; y; popd; z; popd; w",
        [
            (("pushd", "a"), "."),
            (("pushd", "b"), "a"),
            (("x",), "a/b"),
            (("popd",), "a/b"),
            (("y",), "a"),
            (("popd",), "a"),
            (("z",), "."),
            (("popd",), "."),
            (("w",), None),
        ],
    ),
    (
        'pushd "$DIR"; x; popd; y',
        [(("pushd", "$DIR"), "."), (("x",), None), (("popd",), None), (("y",), ".")],
    ),
    (
        "pushd a; cd b; popd; x",
        [(("pushd", "a"), "."), (("cd", "b"), "a"), (("popd",), "a/b"), (("x",), ".")],
    ),
    ("pushd a; pushd; x", [(("pushd", "a"), "."), (("pushd",), "a"), (("x",), ".")]),
    ("pushd +1; x", [(("pushd", "+1"), "."), (("x",), None)]),
    (
        "pushd a; dirs -c; popd; x",
        [(("pushd", "a"), "."), (("dirs", "-c"), "a"), (("popd",), "a"), (("x",), None)],
    ),
    # The workspace root, written three ways, is always known.
    (
        'cd "$RUNNER_TEMP"; a; cd $GITHUB_WORKSPACE; b',
        [
            (("cd", "$RUNNER_TEMP"), "."),
            (("a",), None),
            (("cd", "$GITHUB_WORKSPACE"), None),
            (("b",), "."),
        ],
    ),
    (
        'cd /tmp; cd "${GITHUB_WORKSPACE}/packages/kit"; x',
        [
            (("cd", "/tmp"), "."),
            (("cd", "${GITHUB_WORKSPACE}/packages/kit"), None),
            (("x",), "packages/kit"),
        ],
    ),
    (
        "cd ${{ github.workspace }}/a/; x",
        [(("cd", "${{ github.workspace }}/a/"), "."), (("x",), "a")],
    ),
    ("cd ${{github.workspace}}; x", [(("cd", "${{github.workspace}}"), "."), (("x",), ".")]),
    ("cd $GITHUB_WORKSPACE/$PKG; x", [(("cd", "$GITHUB_WORKSPACE/$PKG"), "."), (("x",), None)]),
    ("cd $GITHUB_WORKSPACEX; x", [(("cd", "$GITHUB_WORKSPACEX"), "."), (("x",), None)]),
    # What a cd goes to is unknown unless it is literal and relative.
    ("cd; x", [(("cd",), "."), (("x",), None)]),
    ("cd ~/src; x", [(("cd", "~/src"), "."), (("x",), None)]),
    ("cd -; x", [(("cd", "-"), "."), (("x",), None)]),
    ("cd /home/runner/work; x", [(("cd", "/home/runner/work"), "."), (("x",), None)]),
    ("cd packages/*; x", [(("cd", "packages/*"), "."), (("x",), None)]),
    ("cd pkg?; x", [(("cd", "pkg?"), "."), (("x",), None)]),
    ("cd [ab]; x", [(("cd", "[ab]"), "."), (("x",), None)]),
    (
        "cd `dirname $0`; x",
        [(("dirname", "$0"), "."), (("cd", "`dirname $0`"), "."), (("x",), None)],
    ),
    ("cd ${{ matrix.dir }}; x", [(("cd", "${{ matrix.dir }}"), "."), (("x",), None)]),
    ("cd -X a; x", [(("cd", "-X", "a"), "."), (("x",), None)]),
    ("cd a b; x", [(("cd", "a", "b"), "."), (("x",), None)]),
    (
        "cd $(mktemp -d); x; cd $GITHUB_WORKSPACE; y",
        [
            (("mktemp", "-d"), "."),
            (("cd", "$(mktemp -d)"), "."),
            (("x",), None),
            (("cd", "$GITHUB_WORKSPACE"), None),
            (("y",), "."),
        ],
    ),
    # Which wrappers run a builtin in the shell itself.
    ("command cd a; x", [(("cd", "a"), "."), (("x",), "a")]),
    ("builtin cd a; x", [(("cd", "a"), "."), (("x",), "a")]),
    ("sudo cd a; x", [(("cd", "a"), "."), (("x",), ".")]),
    ("FOO=1 cd a; x", [(("cd", "a"), "."), (("x",), "a")]),
    ("! cd a; x", [(("cd", "a"), "."), (("x",), "a")]),
    # A wrapper's working directory is for that command only.
    ("env -C packages/kit pnpm test; x", [(("pnpm", "test"), "packages/kit"), (("x",), ".")]),
    ("cd a; env --chdir=b pnpm test", [(("cd", "a"), "."), (("pnpm", "test"), "a/b")]),
    ("sudo -D /srv make", [(("make",), None)]),
    ("env -C $D make", [(("make",), None)]),
    # eval can run anything; it is read as changing the directory when it names a change.
    (
        'eval "cd a"; x; cd $GITHUB_WORKSPACE; eval "$(fnm env)"; y',
        [
            (("eval", "cd a"), "."),
            (("x",), None),
            (("cd", "$GITHUB_WORKSPACE"), None),
            (("fnm", "env"), "."),
            (("eval", "$(fnm env)"), "."),
            (("y",), "."),
        ],
    ),
]


@pytest.mark.parametrize(("script", "expected"), DIRECTORIES)
def test_directories(script: str, expected: list[Pair]) -> None:
    assert pairs(script) == expected


START_DIRECTORIES: list[tuple[str | None, str, list[str | None]]] = [
    ("packages/kit", "x; cd ..; y", ["packages/kit", "packages/kit", "packages"]),
    ("packages/kit/", "x", ["packages/kit"]),
    ("./a/../b", "x", ["b"]),
    ("", "x", ["."]),
    ("../out", "x", [None]),
    ("/abs", "x", [None]),
    ("${{ github.workspace }}/a", "x", ["a"]),
    (None, "x; cd a; y; cd $GITHUB_WORKSPACE; z", [None, None, None, None, "."]),
    (None, "x; cd ${{ github.workspace }}/b; y", [None, None, "b"]),
]


@pytest.mark.parametrize(("start", "script", "expected"), START_DIRECTORIES)
def test_start_directory(start: str | None, script: str, expected: list[str | None]) -> None:
    assert [command.directory for command in split_commands(script, start)] == expected


# A function body runs where the function is called, and a call applies what the body does.
FUNCTIONS: list[tuple[str, list[Pair]]] = [
    (
        "build() { cd packages/kit; pnpm build; }\nbuild\npnpm test",
        [
            (("cd", "packages/kit"), "."),
            (("pnpm", "build"), "packages/kit"),
            (("build",), "."),
            (("pnpm", "test"), "packages/kit"),
        ],
    ),
    ("t() { pnpm test; }\ncd a\nt", [(("pnpm", "test"), "a"), (("cd", "a"), "."), (("t",), "a")]),
    (
        "t() { pnpm test; }\nt; cd a; t",
        [(("pnpm", "test"), None), (("t",), "."), (("cd", "a"), "."), (("t",), "a")],
    ),
    ("t() { pnpm test; }\nx", [(("pnpm", "test"), None), (("x",), ".")]),
    (
        "up() { cd ..; }\ncd a/b; up; x",
        [(("cd", ".."), "a/b"), (("cd", "a/b"), "."), (("up",), "a/b"), (("x",), "a")],
    ),
    ("s() ( cd a )\ns; x", [(("cd", "a"), "."), (("s",), "."), (("x",), ".")]),
    ('f() { cd "$1"; }\nf a; x', [(("cd", "$1"), "."), (("f", "a"), "."), (("x",), None)]),
    (
        "p() { pushd a; }\np; x; popd; y",
        [(("pushd", "a"), "."), (("p",), "."), (("x",), "a"), (("popd",), "a"), (("y",), ".")],
    ),
    ("r() { pnpm test; r; }\nr", [(("pnpm", "test"), None), (("r",), None), (("r",), ".")]),
    (
        "outer() { inner() { pnpm test; }; cd a; inner; }\nouter",
        [(("pnpm", "test"), "a"), (("cd", "a"), "."), (("inner",), "a"), (("outer",), ".")],
    ),
    ("(f() { cd a; }); f; x", [(("cd", "a"), None), (("f",), "."), (("x",), ".")]),
]


@pytest.mark.parametrize(("script", "expected"), FUNCTIONS)
def test_function_bodies(script: str, expected: list[Pair]) -> None:
    assert pairs(script) == expected


# The commands inside a substitution run where the command holding it is; a substitution is a
# subshell, so what it does to the directory stays in it.
SUBSTITUTION_DIRECTORIES: list[tuple[str, list[Pair]]] = [
    (
        "cd a; v=$(pnpm x); pnpm y",
        [(("cd", "a"), "."), (("pnpm", "x"), "a"), (("pnpm", "y"), "a")],
    ),
    (
        "v=$(cd b && pnpm x); pnpm y",
        [(("cd", "b"), "."), (("pnpm", "x"), "b"), (("pnpm", "y"), ".")],
    ),
    (
        "echo `cd b; pnpm x`; pnpm y",
        [
            (("cd", "b"), "."),
            (("pnpm", "x"), "b"),
            (("echo", "`cd b; pnpm x`"), "."),
            (("pnpm", "y"), "."),
        ],
    ),
    (
        'cd a && echo "$(cd .. && pnpm x)" && pnpm y',
        [
            (("cd", "a"), "."),
            (("cd", ".."), "a"),
            (("pnpm", "x"), "."),
            (("echo", "$(cd .. && pnpm x)"), "a"),
            (("pnpm", "y"), "a"),
        ],
    ),
    # The substitution runs in the shell, before env moves the command it runs.
    ("env -C b pnpm t $(pnpm u)", [(("pnpm", "u"), "."), (("pnpm", "t", "$(pnpm u)"), "b")]),
    # The directory of a substitution in a function body is that of its calls.
    (
        "f() { v=$(pnpm x); }\ncd a; f",
        [(("pnpm", "x"), "a"), (("cd", "a"), "."), (("f",), "a")],
    ),
    # A here-document body is expanded where the redirection is made.
    (
        "cat <<EOF; cd a\n$(pnpm x)\nEOF\npnpm y",
        [(("cat",), "."), (("cd", "a"), "."), (("pnpm", "x"), "."), (("pnpm", "y"), "a")],
    ),
    (
        "{ cd a; pnpm y; } <<EOF\n$(pnpm x)\nEOF",
        [(("cd", "a"), "."), (("pnpm", "y"), "a"), (("pnpm", "x"), ".")],
    ),
]


@pytest.mark.parametrize(("script", "expected"), SUBSTITUTION_DIRECTORIES)
def test_substitution_directories(script: str, expected: list[Pair]) -> None:
    assert pairs(script) == expected


# A shell's script (-c, a here-document) runs in a new shell, in the directory of the shell
# command, without the caller's functions or directory stack; its changes stay in it.
SHELL_DIRECTORIES: list[tuple[str, list[Pair]]] = [
    (
        "cd a; bash -c 'cd b; pnpm x'; pnpm y",
        [
            (("cd", "a"), "."),
            (("bash", "-c", "cd b; pnpm x"), "a"),
            (("cd", "b"), "a"),
            (("pnpm", "x"), "a/b"),
            (("pnpm", "y"), "a"),
        ],
    ),
    (
        "bash <<EOF\ncd b\npnpm x\nEOF\npnpm y",
        [(("bash",), "."), (("cd", "b"), "."), (("pnpm", "x"), "b"), (("pnpm", "y"), ".")],
    ),
    ("cd a && sh <<'EOF'\npnpm x\nEOF", [(("cd", "a"), "."), (("sh",), "a"), (("pnpm", "x"), "a")]),
    ("env -C w bash -c 'pnpm x'", [(("bash", "-c", "pnpm x"), "w"), (("pnpm", "x"), "w")]),
    # The outer shell runs an expanding body's substitutions before the inner shell's cd.
    (
        "bash <<EOF\ncd b\nv=$(pnpm x)\nv=\\$(pnpm y)\nEOF",
        [(("bash",), "."), (("cd", "b"), "."), (("pnpm", "x"), "."), (("pnpm", "y"), "b")],
    ),
    (
        "f() { cd x; }\nbash -c 'f; pnpm a'",
        [
            (("cd", "x"), None),
            (("bash", "-c", "f; pnpm a"), "."),
            (("f",), "."),
            (("pnpm", "a"), "."),
        ],
    ),
    (
        "pushd a; bash -c 'popd; pnpm x'",
        [
            (("pushd", "a"), "."),
            (("bash", "-c", "popd; pnpm x"), "a"),
            (("popd",), "a"),
            (("pnpm", "x"), None),
        ],
    ),
    (
        "f() { bash -c 'pnpm a'; }\ncd w; f",
        [(("bash", "-c", "pnpm a"), "w"), (("pnpm", "a"), "w"), (("cd", "w"), "."), (("f",), "w")],
    ),
]


@pytest.mark.parametrize(("script", "expected"), SHELL_DIRECTORIES)
def test_shell_script_directories(script: str, expected: list[Pair]) -> None:
    assert pairs(script) == expected
