"""The layers hold: a pure core, no import cycle, and a library import without the I/O stack.

``jev_select/core`` may import the core, ``contracts``, ``errors`` and ``version`` of the package,
the standard library's pure modules and value libraries (attrs, PyYAML...), never an
edge, the shell or a module that reaches the process, the clock, files or the network. Imports
under ``if TYPE_CHECKING:`` do not run and do not count. Every check runs over a source tree, so
the self-tests below plant a violation in a copy and watch the check fail.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "jev_select"
CORE = f"{PACKAGE}.core"
CORE_MAY_IMPORT = frozenset(
    {f"{PACKAGE}.contracts", f"{PACKAGE}.errors", f"{PACKAGE}.version", PACKAGE, CORE}
)
IMPURE = frozenset(
    {
        "os",
        "subprocess",
        "socket",
        "time",
        "threading",
        "signal",
        "tempfile",
        "shutil",
        "urllib",
        "http",
        "ssl",
        "asyncio",
        "multiprocessing",
        "select",
        "selectors",
        "fcntl",
        "requests",
        "urllib3",
        "git",
    }
)
HEAVY = ("requests", "urllib3", "git")


def module_names(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name (packages by their own name)."""
    names = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that runs, at any depth (function bodies included), outside TYPE_CHECKING."""
    for child in ast.iter_child_nodes(node):
        if _type_checking_block(child):
            assert isinstance(child, ast.If)
            for alternative in child.orelse:
                yield from _import_nodes(alternative)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _import_nodes(child)


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The absolute names ``module`` imports: package modules where they resolve to one."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = package.split(".")
            base = base[: len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        for alias in node.names:
            # ``from . import models`` imports the module ``models``, not a name of ``.``.
            submodule = f"{target}.{alias.name}"
            found.add(submodule if submodule in modules else target)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = module_names(root)
    return {
        module: {name for name in imports_of(module, path, modules) if name in modules}
        for module, path in modules.items()
    }


def core_violations(root: Path) -> list[str]:
    modules = module_names(root)
    violations = []
    for module, path in modules.items():
        if module != CORE and not module.startswith(CORE + "."):
            continue
        for name in sorted(imports_of(module, path, modules)):
            top = name.partition(".")[0]
            if top == PACKAGE:
                if name not in CORE_MAY_IMPORT and not name.startswith(CORE + "."):
                    violations.append(f"{module} imports {name}")
            elif top in IMPURE:
                violations.append(f"{module} imports {name}")
    return violations


def import_cycles(root: Path) -> list[list[str]]:
    """The strongly connected components of more than one module, or with a self-import."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def heavy_modules_loaded(root: Path) -> list[str]:
    """The heavy I/O libraries that the library API loads (``import jev_select`` and every name
    of its ``__all__``), from the tree under ``root``."""
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "import jev_select\n"
        f"assert jev_select.__file__.startswith({str(root)!r}), jev_select.__file__\n"
        # The package root loads its API on first use: touch all of it.
        "for name in jev_select.__all__:\n"
        "    getattr(jev_select, name)\n"
        f"heavy = {HEAVY!r}\n"
        "print(' '.join(sorted({m for m in sys.modules if m.partition('.')[0] in heavy})))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, check=True
    )
    return completed.stdout.split()


# ---------------------------------------------------------------------------------------------
# The checks on this tree
# ---------------------------------------------------------------------------------------------


def test_the_core_imports_nothing_impure_and_nothing_above_it() -> None:
    violations = core_violations(ROOT)
    assert not violations, "\n".join(violations)


def test_no_import_cycle() -> None:
    assert import_cycles(ROOT) == []


def test_the_library_import_loads_no_http_or_git_library() -> None:
    assert heavy_modules_loaded(ROOT) == []


def test_the_checks_see_every_layer() -> None:
    graph = import_graph(ROOT)
    assert {f"{CORE}.policy", f"{PACKAGE}.edges.git", f"{PACKAGE}.cli"} <= set(graph)
    assert f"{CORE}.models" in graph[f"{CORE}.policy"]
    assert f"{PACKAGE}.contracts" in graph[f"{CORE}.policy"]


# ---------------------------------------------------------------------------------------------
# The checks fail on a planted violation
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp_path


def plant(tree: Path, module: str, line: str) -> None:
    path = tree / module.replace(".", "/")
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    text = path.read_text(encoding="utf-8")
    marker = "from __future__ import annotations\n"
    assert marker in text
    path.write_text(text.replace(marker, marker + line + "\n", 1), encoding="utf-8")


@pytest.mark.parametrize(
    "line",
    [
        "import os",
        "import urllib.parse",
        "from subprocess import run",
        "from ..edges import git",
        "from ..edges.httpio import BearerAuth",
        "from .. import cli",
        "from ..replay import run",
        "import jev_select.app.pipeline",
    ],
)
def test_a_planted_core_import_is_caught(tree: Path, line: str) -> None:
    plant(tree, f"{CORE}.policy", line)
    assert core_violations(tree) != []


def test_a_function_local_import_counts(tree: Path) -> None:
    path = tree / PACKAGE / "core" / "policy.py"
    path.write_text(
        path.read_text(encoding="utf-8") + "\n\ndef _later() -> None:\n    import socket\n",
        encoding="utf-8",
    )
    assert core_violations(tree) == [f"{CORE}.policy imports socket"]


def test_a_type_checking_import_does_not_count(tree: Path) -> None:
    plant(
        tree, f"{CORE}.policy", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import os"
    )
    assert core_violations(tree) == []


def test_a_planted_cycle_is_caught(tree: Path) -> None:
    plant(tree, f"{PACKAGE}.version", "from .core import render")
    assert [f"{CORE}.render", f"{PACKAGE}.version"] in import_cycles(tree)


def test_a_planted_heavy_import_is_caught(tree: Path) -> None:
    plant(tree, f"{CORE}.tasks", "import requests")
    assert "requests" in heavy_modules_loaded(tree)


def test_a_heavy_import_in_the_package_root_is_caught(tree: Path) -> None:
    plant(tree, PACKAGE, "import urllib3")
    assert "urllib3" in heavy_modules_loaded(tree)


def test_a_heavy_import_behind_a_public_name_is_caught(tree: Path) -> None:
    plant(tree, f"{PACKAGE}.edges.readers", "import git")
    assert "git" in heavy_modules_loaded(tree)


# ---------------------------------------------------------------------------------------------
# The tree: a small package root, one shell module per subcommand, nothing below the shell
# importing it
# ---------------------------------------------------------------------------------------------

SHELL = f"{PACKAGE}.cli"
APP = f"{PACKAGE}.app"
# Layers below the shell: none of them may import it.
BELOW_THE_SHELL = (f"{PACKAGE}.core", f"{PACKAGE}.edges", APP)


def shell_violations(root: Path) -> list[str]:
    graph = import_graph(root)
    return sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if module.startswith(BELOW_THE_SHELL)
        for target in targets
        if target == SHELL or target.startswith(SHELL + ".")
    )


def test_nothing_below_the_shell_imports_it() -> None:
    assert shell_violations(ROOT) == []


@pytest.mark.parametrize(
    ("module", "line"),
    [
        (f"{PACKAGE}.edges.readers", "from ..cli import console"),
        (f"{APP}.pipeline", "from ..cli.progress import Progress"),
    ],
)
def test_a_planted_shell_import_is_caught(tree: Path, module: str, line: str) -> None:
    plant(tree, module, line)
    assert shell_violations(tree) != []


def test_the_package_root_holds_at_most_six_modules() -> None:
    modules = sorted(path.name for path in (ROOT / PACKAGE).glob("*.py"))
    assert len(modules) <= 6, modules


def test_every_subcommand_is_a_shell_module_named_after_it() -> None:
    from jev_select import contracts as c
    from jev_select.cli import SUBCOMMANDS

    commands = {c.COMMAND_PLAN, *SUBCOMMANDS}
    for command in commands:
        assert (ROOT / PACKAGE / "cli" / f"{command.replace('-', '_')}.py").is_file(), command
    assert {name: module for name, module in SUBCOMMANDS.items()} == {
        name: name.replace("-", "_") for name in SUBCOMMANDS
    }


def test_no_module_of_the_package_is_over_600_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / PACKAGE).rglob("*.py")
    }
    assert {path: size for path, size in sizes.items() if size > 600} == {}


def _package_directories() -> set[str]:
    return {
        str(path.parent.relative_to(ROOT / PACKAGE))
        for path in (ROOT / PACKAGE).rglob("__init__.py")
        if path.parent != ROOT / PACKAGE
    }


def test_the_tests_mirror_the_package_tree() -> None:
    # A test of a module lives under the path of its package: tests/core/evidence for
    # jev_select/core/evidence. The other test folders are not about one package.
    elsewhere = {"e2e", "evaluation", "compat", "support", "vectors"}
    tests = ROOT / "tests"
    test_directories = {
        str(path.relative_to(tests))
        for path in tests.rglob("*")
        if path.is_dir()
        and path.name != "__pycache__"
        and path.relative_to(tests).parts[0] not in elsewhere
        and any(child.name.startswith("test_") for child in path.glob("*.py"))
    }
    assert test_directories == _package_directories()
