"""``force_paths`` matching (docs/reference.md, "Task fields") and glob compilation
(docs/reference.md, "Task fields")."""

from __future__ import annotations

import pytest

from jev_select.core.tasks import compile_glob, match_force_paths, parse_tasks
from jev_select.errors import InputError

# The 32 vectors of docs/reference.md, "Task fields", verbatim.
SPEC_VECTORS = [
    ("README.md", "README.md", True),
    ("README.md", "docs/README.md", False),
    ("*.py", "src/a.py", False),
    ("*", "src/a.py", False),
    ("*", ".env", True),
    ("src/*", "src/sub/a.py", False),
    ("src/**", "src/sub/deep/a.py", True),
    ("src/**", "src", False),
    ("charts/**", "charts/.hidden/value.yml", True),
    ("**/*.py", "a.py", True),
    ("a/**/b", "a/b", True),
    ("a**b", "a/x/b", False),
    ("a**b", "axxb", True),
    ("docs/", "docs/a.md", False),
    ("docs", "docs/a.md", False),
    ("*.{js,ts}", "a.ts", True),
    ("go.{mod,sum}", "go.sum", True),
    ("+(a|b).txt", "ab.txt", True),
    ("@(a|b).txt", "ab.txt", False),
    ("src/!(vendor)/*.go", "src/app/x.go", True),
    ("src/!(vendor)/*.go", "src/vendor/x.go", False),
    ("[abc].py", "b.py", True),
    ("[!abc].py", "b.py", False),
    ("[[:digit:]].txt", "7.txt", True),
    ("#c.py", "#c.py", True),
    ("\\*.py", "*.py", True),
    ("./src/a.py", "src/a.py", False),
    ("Src/**", "src/a.py", False),
    ("migrations/**", "db/migrations/001.sql", False),
    ("charts/**/values.schema.json", "charts/values.schema.json", True),
    ("src/*/a.py", "src/.hidden/a.py", True),
    ("*.md", "café.md", True),
]

MORE_VECTORS = [
    ("**", "a/b/c", True),
    ("**", ".github/workflows/ci.yml", True),
    ("src/**/*.ts", "src/a/b/c.ts", True),
    ("src/**/*.ts", "src/c.ts", True),
    ("?.py", "ab.py", False),
    ("?.py", "a.py", True),
    ("*.PY", "a.py", False),
    ("*.txt", "a.TXT", False),
    ("{a,b}/**", "b/x", True),
    ("a/{b,c}", "a/d", False),
    ("[a-c]x", "bx", True),
    ("docs/**/*.md", "docs/x.md", True),
    ("?(a).txt", "a.txt", True),
    ("a/*", "a/.env", True),
    ("[[:alpha:]]*.go", "x1.go", True),
    ("café/**", "café/x", True),
    ("a\\?", "a?", True),
    ("a\\?", "ab", False),
    ("**/node_modules/**", "node_modules/x", True),
    (".github/workflows/*.yml", ".github/workflows/ci.yml", True),
    ("*.{yml,yaml}", "ci.yaml", True),
    ("*.{yml,yaml}", "dir/ci.yaml", False),
    ("{src,lib}/**/*.{js,ts}", "lib/x/y.ts", True),
    ("**/*.py", ".venv/x/a.py", True),
    ("x/**/y", "x/.a/.b/y", True),
    ("[!.]*", ".env", False),
    ("!(x).md", "y.md", True),
    ("!(x).md", "x.md", False),
]


def test_vector_counts() -> None:
    assert len(SPEC_VECTORS) == 32
    assert len(SPEC_VECTORS) + len(MORE_VECTORS) >= 42


@pytest.mark.parametrize(("pattern", "path", "expected"), SPEC_VECTORS + MORE_VECTORS)
def test_glob_vector(pattern: str, path: str, expected: bool) -> None:
    assert compile_glob(pattern)
    assert match_force_paths([pattern], [path]) is expected


def test_any_pattern_against_any_path() -> None:
    patterns = ["docs/**", "*.cfg"]
    assert match_force_paths(patterns, ["src/a.py", "setup.cfg"])
    assert match_force_paths(patterns, ["docs/index.md"])
    assert not match_force_paths(patterns, ["src/a.py", "lib/setup.cfg"])


def test_empty_sides_never_match() -> None:
    assert not match_force_paths([], ["a"])
    assert not match_force_paths(["**"], [])


def test_refused_pattern_counts_as_match() -> None:
    # A pattern over the brace-expansion limit cannot be evaluated, so the task keeps running.
    too_many = "{1..5000}"
    assert not compile_glob(too_many)
    assert match_force_paths([too_many], ["unrelated.txt"])


@pytest.mark.parametrize(
    "pattern",
    [
        "{1..5000}",
        "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}",
    ],
)
def test_brace_expansion_over_the_limit_is_refused(pattern: str) -> None:
    assert not compile_glob(pattern)
    text = f"t:\n  description: d\n  force_paths: ['{pattern}']\n"
    with pytest.raises(InputError) as caught:
        parse_tasks(text)
    assert caught.value.field == "tasks"


@pytest.mark.parametrize("pattern", ["{1..100}", "a/[", "[", "**/.git/**", "\\*.py"])
def test_acceptable_patterns_compile(pattern: str) -> None:
    assert compile_glob(pattern)
