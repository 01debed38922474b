"""Whatever a workflow holds, the wiring check answers with placed problems, never an exception."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from support.wiring import CI, PLAN, wiring

_PIECES = st.sampled_from(
    [
        "needs.plan.outputs.run",
        "needs.plan.outputs.selected",
        "needs.plan.outputs.matrix",
        "needs.plan.outputs.has-tasks",
        "needs.plan.outputs.unit",
        "needs.plan.outputs.nope",
        "needs.plan",
        "needs.*.result",
        "steps.select.outputs.run",
        "matrix.task",
        "'unit'",
        "'true'",
        "true",
        "null",
        "1.5",
        "github.event_name",
    ]
)


@st.composite
def _expressions(draw: st.DrawFn, depth: int = 0) -> str:
    if depth > 3 or draw(st.booleans()):
        return draw(_PIECES)
    form = draw(st.integers(0, 6))
    inner = draw(_expressions(depth + 1))
    other = draw(_expressions(depth + 1))
    return [
        f"fromJSON({inner})",
        f"{inner}[{other}]",
        f"{inner}.unit",
        f"contains({inner}, {other})",
        f"{inner} == {other}",
        f"!{inner} || {other}",
        f"toJSON({inner})",
    ][form]


@settings(max_examples=150, deadline=None)
@given(
    conditions=st.lists(_expressions(), min_size=1, max_size=4),
    needs=st.sampled_from(["plan", "[]", "[plan, other]"]),
    wrapped=st.booleans(),
    garbage=st.sampled_from(["", "${{", "}}", "${{ needs.plan.outputs.run[ }}", "${{ ] }}"]),
)
def test_any_expression_gets_an_answer(
    conditions: list[str], needs: str, wrapped: bool, garbage: str
) -> None:
    jobs = ""
    for index, condition in enumerate(conditions):
        text = "${{ " + condition + " }}" if wrapped else condition
        jobs += (
            f"  job{index}:\n    needs: {needs}\n    if: {json.dumps(text)}\n"
            "    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        task: [unit, x]\n"
            f"    steps:\n      - run: {json.dumps('echo ' + garbage)}\n"
        )
    problems = wiring({CI: PLAN + jobs})
    for problem in problems:
        assert problem.path is not None
        assert problem.line is not None
        assert problem.line >= 1
        assert problem.column is not None
        assert problem.column >= 1
