"""The library API of docs/reference.md, "Library" is importable from the package root and behaves
as documented."""

from __future__ import annotations

import doctest

import jev_select

SPEC_FUNCTIONS = (
    "parse_inputs",
    "parse_tasks",
    "compute_selection_hash",
    "match_force_paths",
    "build_evidence",
    "split_diff",
    "build_questions",
    "validate_response",
    "decide",
    "build_report",
    "render_outputs",
    "render_summary",
    "render_plan_block",
    "read_plan_block",
    "canonical_json",
    "format_number",
    "analyze_shadow",
)
SPEC_CLASSES = ("Inputs", "TaskTable", "Plan", "PlanBlock", "InputError")


def test_every_documented_name_is_exported() -> None:
    for name in SPEC_FUNCTIONS:
        assert callable(getattr(jev_select, name)), name
        assert name in jev_select.__all__
    for name in SPEC_CLASSES:
        assert isinstance(getattr(jev_select, name), type), name
        assert name in jev_select.__all__


def test_package_docstring_example_runs() -> None:
    failures, attempted = doctest.testmod(jev_select)
    assert attempted > 0
    assert failures == 0


def test_core_round_trip_without_any_environment() -> None:
    table = jev_select.parse_tasks("b:\n  description: Second.\na:\n  description: First.\n")
    assert table.ids == ("a", "b")
    digest = jev_select.compute_selection_hash("jev-1.13.0", 0.05, table)
    assert len(digest) == 64
    assert jev_select.canonical_json({"b": 1, "a": [0.05, 1e-7]}) == '{"a":[0.05,1e-7],"b":1}'
    assert jev_select.match_force_paths(["docs/**"], ["docs/a/b.md"])
    assert not jev_select.match_force_paths(["docs/**"], ["src/docs/a.md"])


def test_every_exported_name_resolves_where_the_table_says() -> None:
    import importlib

    lazy = jev_select._LAZY
    assert set(jev_select.__all__) == set(lazy) | {
        "InputError",
        "JevSelectError",
        "PlanningFailure",
        "__version__",
    }
    for name, module in lazy.items():
        defining = importlib.import_module(module, "jev_select")
        assert getattr(jev_select, name) is getattr(defining, name), name
    assert set(jev_select.__all__) <= set(dir(jev_select))


def test_an_unknown_name_is_an_attribute_error() -> None:
    assert not hasattr(jev_select, "no_such_function")


def test_every_exception_of_the_package_has_one_root() -> None:
    import importlib
    import inspect
    import pkgutil

    from jev_select.edges.cancellation import Cancelled

    found = []
    for info in pkgutil.walk_packages(jev_select.__path__, "jev_select."):
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == info.name and issubclass(value, BaseException):
                found.append(value)
    assert len(found) > 20
    # A cancellation stays a BaseException: no ``except Exception`` may swallow it.
    assert [error for error in found if not issubclass(error, jev_select.JevSelectError)] == [
        Cancelled
    ]
