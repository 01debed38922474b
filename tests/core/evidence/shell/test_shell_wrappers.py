"""The wrapper commands whose options are dropped from the words (core/evidence/shell/wrappers)."""

from __future__ import annotations

import pytest

from jev_select.core.evidence.shell import WRAPPER_COMMANDS, split_commands


def words_of(script: str) -> list[tuple[str, ...]]:
    return [command.words for command in split_commands(script)]


WRAPPED: list[tuple[str, tuple[str, ...]]] = [
    ("xvfb-run -a pnpm test", ("pnpm", "test")),
    ("xargs -n1 npm run build", ("npm", "run", "build")),
    ("xargs -0 -P 4 --max-args=1 pnpm lint", ("pnpm", "lint")),
    ("xvfb-run --auto-servernum --server-args='-screen 0 1280x1024x24' pnpm t", ("pnpm", "t")),
    ("xvfb-run -s '-screen 0 1024x768x24' -n 99 pnpm t", ("pnpm", "t")),
    ("CI=1 sudo -E env FOO=bar yarn build", ("yarn", "build")),
    ("sudo -u runner -H pnpm test", ("pnpm", "test")),
    ("sudo -uroot --preserve-env=PATH FOO=1 pnpm test", ("pnpm", "test")),
    ("sudo --user root -- pnpm test", ("pnpm", "test")),
    ("env -i -u HOME PATH=/bin pnpm test", ("pnpm", "test")),
    ("env - A=1 pnpm test", ("pnpm", "test")),
    ("/usr/bin/env A=1 pnpm test", ("pnpm", "test")),
    ("time pnpm test", ("pnpm", "test")),
    ("sudo time -v -o log make", ("make",)),
    ("nice -n 10 make", ("make",)),
    ("nice -10 make", ("make",)),
    ("nohup pnpm start", ("pnpm", "start")),
    ("command -p pnpm test", ("pnpm", "test")),
    ("exec -a name pnpm test", ("pnpm", "test")),
    ("timeout 10m pnpm test", ("pnpm", "test")),
    ("timeout -k 5 --signal=KILL 60 pnpm test", ("pnpm", "test")),
    ("stdbuf -o0 -eL pnpm test", ("pnpm", "test")),
    ("timeout 5m xvfb-run -a nice -n 5 pnpm test", ("pnpm", "test")),
    ("nohup FOO=1 pnpm test", ("pnpm", "test")),
    # Nothing to unwrap, or options the wrapper is not known to take: the words stay as written.
    ("env", ("env",)),
    ("sudo -v", ("sudo", "-v")),
    ("command -v pnpm", ("command", "-v", "pnpm")),
    ("sudo -Z pnpm test", ("sudo", "-Z", "pnpm", "test")),
    ("env -S 'pnpm test'", ("env", "-S", "pnpm test")),
    ("timeout", ("timeout",)),
    ("exec > log 2>&1", ("exec",)),
    ("retry pnpm test", ("retry", "pnpm", "test")),
]


@pytest.mark.parametrize(("script", "expected"), WRAPPED)
def test_wrappers(script: str, expected: tuple[str, ...]) -> None:
    assert words_of(script) == [expected]


# A shell behind wrappers still has its script read.
WRAPPED_SHELLS: list[tuple[str, list[tuple[str, ...]]]] = [
    ("sudo -E bash -c 'pnpm a'", [("bash", "-c", "pnpm a"), ("pnpm", "a")]),
    ("timeout 5m sh -c 'pnpm a'", [("sh", "-c", "pnpm a"), ("pnpm", "a")]),
    ("nohup /usr/bin/env FOO=1 bash -lc 'pnpm a'", [("bash", "-lc", "pnpm a"), ("pnpm", "a")]),
    ("exec bash <<EOF\npnpm a\nEOF", [("bash",), ("pnpm", "a")]),
    ("sudo -u ci -H sh -s <<'EOF'\npnpm a\nEOF", [("sh", "-s"), ("pnpm", "a")]),
    # A wrapper that is not stripped leaves no shell in front.
    ("retry bash -c 'pnpm a'", [("retry", "bash", "-c", "pnpm a")]),
    ("command -v bash <<EOF\npnpm no\nEOF", [("command", "-v", "bash")]),
]


@pytest.mark.parametrize(("script", "expected"), WRAPPED_SHELLS)
def test_wrapped_shells(script: str, expected: list[tuple[str, ...]]) -> None:
    assert words_of(script) == expected


def test_wrapper_names() -> None:
    assert {
        "sudo",
        "env",
        "time",
        "nice",
        "nohup",
        "command",
        "exec",
        "timeout",
        "xvfb-run",
        "stdbuf",
        "xargs",
    } <= set(WRAPPER_COMMANDS)
    assert "retry" not in WRAPPER_COMMANDS
