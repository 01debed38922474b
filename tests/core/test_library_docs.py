"""docs/library.md compiles: every code block runs, and every exported name is documented."""

from __future__ import annotations

import re
from pathlib import Path

import jev_select

LIBRARY = Path(__file__).resolve().parents[2] / "docs" / "library.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def test_every_code_block_runs_in_order() -> None:
    blocks = BLOCK.findall(LIBRARY.read_text("utf-8"))
    assert len(blocks) >= 5
    namespace: dict[str, object] = {}
    for index, block in enumerate(blocks):
        # The documentation's own examples, from the repository: running them is the point.
        exec(compile(block, f"docs/library.md block {index + 1}", "exec"), namespace)  # noqa: S102


def test_every_exported_name_is_documented() -> None:
    text = LIBRARY.read_text("utf-8")
    for name in jev_select.__all__:
        assert re.search(rf"`{re.escape(name)}[`(]", text), name


def test_decide_refuses_a_misspelt_vocabulary() -> None:
    import pytest

    table = jev_select.parse_tasks("unit: {description: d}")
    from jev_select.core.models import ChangeFacts, Evaluation

    cases: tuple[tuple[str, str, dict[str, object]], ...] = (
        ("mode", "shadwo", {"mode": "shadwo"}),
        ("bypass", "no-key", {"bypass": "no-key"}),
        (
            "collection_error",
            "fetch-error",
            {"change": ChangeFacts(collection_error="fetch-error")},
        ),
        ("grouping_error", "jev-timeout", {"evaluation": Evaluation(grouping_error="jev-timeout")}),
        ("first_failure", "slow", {"evaluation": Evaluation(first_failure="slow")}),
    )
    for name, value, arguments in cases:
        with pytest.raises(ValueError, match=f"^decide: {name} must be one of ") as caught:
            jev_select.decide(table, **{"mode": "enforce", "bypass": None, **arguments})  # type: ignore[arg-type]
        assert value not in str(caught.value)
