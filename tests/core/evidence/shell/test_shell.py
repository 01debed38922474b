"""The simple commands of a ``run:`` step, and the directory each runs in: the result as a whole
(core/evidence/shell)."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jev_select.core.evidence.shell import ShellCommand, split_commands


def test_text_and_offset() -> None:
    script = "  FOO=1 pnpm test > out \\\n  --x\n\tcd 'a b' # why\ncat <<EOF\nbody\nEOF\n"
    commands = split_commands(script)
    assert commands == (
        ShellCommand(
            words=("pnpm", "test", "--x"),
            text="FOO=1 pnpm test > out \\\n  --x",
            offset=2,
            directory=".",
        ),
        ShellCommand(
            words=("cd", "a b"), text="cd 'a b'", offset=script.index("cd"), directory="."
        ),
        ShellCommand(words=("cat",), text="cat <<EOF", offset=script.index("cat"), directory="a b"),
    )
    for command in commands:
        assert script[command.offset : command.offset + len(command.text)] == command.text


def test_inner_commands_text_and_offset() -> None:
    script = (
        'cd web && V="$(pnpm run version)" pnpm build > `yarn -s out`\n'
        'for p in $(ls packages); do bash -c \'pnpm -C "$0" test\' "$p"; done\n'
        "sh -e <<'EOF'\n  cd ../api\n  npm run lint\nEOF\n"
        'bash -c "echo \\"x\\"; npm test"\n'
    )
    commands = split_commands(script)
    for command in commands:
        assert script[command.offset : command.offset + len(command.text)] == command.text
    assert [(command.words, command.text, command.directory) for command in commands] == [
        (("cd", "web"), "cd web", "."),
        (("pnpm", "run", "version"), "pnpm run version", "web"),
        (("yarn", "-s", "out"), "yarn -s out", "web"),
        (
            ("pnpm", "build"),
            'V="$(pnpm run version)" pnpm build > `yarn -s out`',
            "web",
        ),
        (("ls", "packages"), "ls packages", "web"),
        (
            ("bash", "-c", 'pnpm -C "$0" test', "$p"),
            'bash -c \'pnpm -C "$0" test\' "$p"',
            "web",
        ),
        (("pnpm", "-C", "$0", "test"), 'pnpm -C "$0" test', "web"),
        (("sh", "-e"), "sh -e <<'EOF'", "web"),
        (("cd", "../api"), "cd ../api", "web"),
        (("npm", "run", "lint"), "npm run lint", "api"),
        # Not written 1:1 in the source: the text and offset of the bash command.
        (("bash", "-c", 'echo "x"; npm test'), 'bash -c "echo \\"x\\"; npm test"', "web"),
        (("echo", "x"), 'bash -c "echo \\"x\\"; npm test"', "web"),
        (("npm", "test"), 'bash -c "echo \\"x\\"; npm test"', "web"),
    ]
    assert commands[-1].offset == commands[-3].offset == script.rindex("bash -c")


def test_unreadable_text_and_offset() -> None:
    script = "ok\n  echo 'open  \n"
    last = split_commands(script)[-1]
    assert last == ShellCommand(
        words=("echo", "'open"), text="echo 'open", offset=5, directory=None
    )


def test_long_step_is_fast() -> None:
    lines = []
    for number in range(50):
        lines += [
            f'cd packages/p{number} && pnpm test --filter "x y" | tee log{number}.txt',
            f'if [[ -f a{number} ]]; then echo "$(git rev-parse HEAD)" >> "$GITHUB_OUTPUT"; fi',
            f"FOO={number} sudo -E env BAR=${{{{ matrix.x }}}} yarn build:{number} 2>&1",
            'cd "$GITHUB_WORKSPACE"',
        ]
    script = "\n".join(lines)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        commands = split_commands(script)
        best = min(best, time.perf_counter() - started)
    # 350 commands, and the 50 in substitutions.
    assert len(commands) == 400
    assert [command.directory for command in commands[-3:]] == ["packages/p49"] * 3
    assert split_commands(script + "\nx")[-1].directory == "."
    # Far under a millisecond per line; the bound leaves room for a loaded machine.
    assert best < len(lines) * 0.001


_PIECES = st.sampled_from(
    [
        *"ab \t\n;&|()<>{}'\"\\$`#=-/.*~!",
        "${{",
        "}}",
        "$(",
        "$((",
        "${",
        "$'",
        "<<EOF",
        "<<-X",
        "\nEOF\n",
        "\n\tX\n",
        "cd ",
        "pushd ",
        "popd",
        "if ",
        "then ",
        "fi",
        "for ",
        " in ",
        "do ",
        "done",
        "case ",
        "esac",
        ";;",
        "f() ",
        "f ",
        "function ",
        "[[",
        "]]",
        "((",
        "))",
        "sudo -u ",
        "env -C ",
        "\\\n",
        "time ",
        "2>&1",
        "$GITHUB_WORKSPACE",
        "bash ",
        "sh -c ",
        "bash -c '",
        'sh -c "',
        "bash <<EOF\n",
        "sh -s <<'X'\n",
        "<<<",
        "\\`",
        "\\$(",
        "$(<",
        "arr=(",
    ]
)
_SCRIPTS = st.one_of(st.lists(_PIECES, max_size=50).map("".join), st.text(max_size=60))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=_SCRIPTS, start=st.sampled_from([".", None, "a/b", "/x", "..", "a/../.."]))
def test_any_text_is_read_without_raising(script: str, start: str | None) -> None:
    commands = split_commands(script, start)
    for before, command in zip((None, *commands), commands, strict=False):
        assert 0 <= command.offset < len(script)
        assert command.text
        assert script[command.offset : command.offset + len(command.text)] == command.text
        assert command.words
        # Source order, except that a command comes after the commands inside it.
        if before is not None and command.offset < before.offset:
            assert before.offset + len(before.text) <= command.offset + len(command.text)
        directory = command.directory
        assert (
            directory is None
            or directory == "."
            or (
                not directory.startswith("/")
                and all(part not in ("", ".", "..") for part in directory.split("/"))
            )
        )
