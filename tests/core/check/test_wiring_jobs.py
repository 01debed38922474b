"""Matrix guards, gates, forms the check cannot follow, and tasks nothing reads."""

from __future__ import annotations

import pytest
from support.wiring import CI, PLAN, TABLE_PATH, codes, found, job, rest, wiring, workflow

MATRIX_JOB = """\
    strategy:
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    steps:
      - run: make ${{ matrix.task }}
"""


@pytest.mark.parametrize(
    "condition",
    [
        "needs.plan.outputs.has-tasks == 'true'",
        "${{ needs.plan.outputs.has-tasks == 'true' }}",
        "fromJSON(needs.plan.outputs.has-tasks)",
        "github.event_name == 'pull_request' && needs.plan.outputs.has-tasks == 'true'",
    ],
)
def test_a_matrix_guarded_by_has_tasks_is_clean(condition: str) -> None:
    assert wiring({CI: workflow(job("tests", condition, extra=MATRIX_JOB))}) == ()


@pytest.mark.parametrize("condition", ["", "github.event_name == 'pull_request'"])
def test_a_matrix_from_the_plan_without_has_tasks_is_an_error(condition: str) -> None:
    problems = wiring({CI: workflow(job("tests", condition, extra=MATRIX_JOB))})
    assert codes(problems) == ["matrix-without-has-tasks"]
    line = PLAN.count("\n") + 3 + (1 if condition else 0) + 2
    assert found(problems) == [("matrix-without-has-tasks", CI, line, 15)]
    assert "has-tasks" in problems[0].message


def test_a_matrix_over_the_selected_ids_needs_has_tasks_too() -> None:
    extra = """\
    strategy:
      matrix:
        task: ${{ fromJSON(needs.plan.outputs.selected) }}
    steps:
      - run: make ${{ matrix.task }}
"""
    assert codes(wiring({CI: workflow(job("tests", "", extra=extra))})) == [
        "matrix-without-has-tasks"
    ]
    guarded = job("tests", "needs.plan.outputs.has-tasks == 'true'", extra=extra)
    assert wiring({CI: workflow(guarded)}) == ()


# ---------------------------------------------------------------------------------------------
# The gate
# ---------------------------------------------------------------------------------------------

CONSUMERS = (
    job("unit", "fromJSON(needs.plan.outputs.run).unit"),
    job("lint", "fromJSON(needs.plan.outputs.run).lint"),
    job("typing", "fromJSON(needs.plan.outputs.run).typing"),
)


def _gate(condition: str, needs: str, check: str) -> str:
    return f"""\
  required:
    needs: {needs}
    if: {condition}
    runs-on: ubuntu-latest
    steps:
      - run: {check}
"""


@pytest.mark.parametrize(
    ("condition", "needs", "check"),
    [
        (
            "always()",
            "[plan, unit, lint, typing]",
            "test ${{ !contains(needs.*.result, 'failure') }}",
        ),
        ("${{ !cancelled() }}", "[unit, lint, typing]", "echo ${{ toJSON(needs) }}"),
        (
            "always()",
            "[unit, lint, typing]",
            "echo ${{ needs.unit.result }} ${{ needs.lint.result }} ${{ needs['typing'].result }}",
        ),
    ],
)
def test_a_gate_that_checks_every_consumer_is_clean(condition: str, needs: str, check: str) -> None:
    text = workflow(*CONSUMERS, gate=False) + _gate(condition, needs, check)
    assert wiring({CI: text}) == ()


@pytest.mark.parametrize(
    ("gate", "why"),
    [
        ("", "no gate at all"),
        (_gate("success()", "[unit, lint, typing]", "echo ${{ toJSON(needs) }}"), "no always()"),
        (_gate("always()", "[unit, lint]", "echo ${{ toJSON(needs) }}"), "a consumer missing"),
        (_gate("always()", "[unit, lint, typing]", "echo done"), "no result checked"),
        (
            _gate("always()", "[unit, lint, typing]", "echo ${{ needs.unit.result }}"),
            "only one result checked",
        ),
    ],
)
def test_consumers_without_a_gate_are_a_warning(gate: str, why: str) -> None:
    problems = wiring({CI: workflow(*CONSUMERS, gate=False) + gate})
    assert found(problems) == [("gate-missing", CI, 3, 1)], why
    assert problems[0].severity == "warning"
    assert '"lint", "typing", "unit"' in problems[0].message
    assert "branch protection" in problems[0].message


def test_steps_gated_by_the_plan_need_no_gate() -> None:
    steps = """\
    steps:
      - if: fromJSON(needs.plan.outputs.run).unit
        run: make unit
      - if: fromJSON(needs.plan.outputs.run).lint || fromJSON(needs.plan.outputs.run).typing
        run: make lint typing
"""
    assert wiring({CI: workflow(job("all", "", extra=steps), gate=False)}) == ()


# ---------------------------------------------------------------------------------------------
# Forms the check does not follow
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "condition",
    [
        "fromJSON(needs.plan.outputs.run)[format('{0}', 'unit')]",
        "fromJSON(needs.plan.outputs.run)[matrix.task]",
        "startsWith(needs.plan.outputs.run, '{')",
        "needs.plan.outputs.run.unit",
        "needs.plan.outputs.run",
        "${{ needs.plan.outputs.run }} && true",
        "fromJSON(needs.plan.outputs.run)['unit'",
        "fromJSON(needs.plan.outputs.has-tasks).unit",
    ],
)
def test_a_plan_read_the_check_cannot_follow_is_a_warning_never_skipped(condition: str) -> None:
    problems = wiring({CI: workflow(job("unit", condition), rest("unit"))})
    assert codes(problems) == ["expression-unreadable"], problems
    assert problems[0].severity == "warning"
    assert problems[0].line == PLAN.count("\n") + 3


def test_an_unclosed_template_that_mentions_the_plan_is_a_warning() -> None:
    extra = """\
    steps:
      - run: echo "${{ needs.plan.outputs.run"
"""
    problems = wiring(
        {CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unit", extra=extra), rest())}
    )
    assert codes(problems) == ["expression-unreadable"]


def test_expressions_that_do_not_mention_the_plan_are_left_alone() -> None:
    extra = """\
    steps:
      - run: echo "${{ github.sha" ${{ matrix.os[ }}
      - if: github.event_name == 'push'
        run: echo ok
"""
    problems = wiring(
        {CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unit", extra=extra), rest())}
    )
    assert problems == ()


# ---------------------------------------------------------------------------------------------
# Tasks nothing reads
# ---------------------------------------------------------------------------------------------


def test_a_task_no_workflow_reads_is_a_warning_at_the_task_in_the_table() -> None:
    problems = wiring({CI: workflow(rest("lint"))})
    assert found(problems) == [("task-unconsumed", TABLE_PATH, 3, 1)]
    assert problems[0].task == "lint"
    assert problems[0].severity == "warning"


@pytest.mark.parametrize(
    "consumer",
    [
        job("tests", "needs.plan.outputs.has-tasks == 'true'", extra=MATRIX_JOB),
        job(
            "all",
            "",
            extra='    steps:\n      - run: ./ci "$PLAN"\n'
            "        env:\n          PLAN: ${{ needs.plan.outputs.run }}\n",
        ),
        job(
            "all",
            "",
            extra="    steps:\n      - run: ./ci ${{ join(fromJSON("
            "needs.plan.outputs.selected), ' ') }}\n",
        ),
        job(
            "all",
            "",
            extra="    steps:\n      - uses: ./.github/actions/run\n"
            "        with:\n          plan: ${{ toJSON(needs.plan.outputs) }}\n",
        ),
    ],
)
def test_the_whole_plan_handed_on_reads_every_task(consumer: str) -> None:
    assert wiring({CI: workflow(consumer)}) == ()


def test_a_plan_no_job_gates_on_is_not_blamed_for_its_tasks() -> None:
    # An observer: the plan feeds a report, no condition reads a task.
    observer = job(
        "archive",
        "",
        extra="    steps:\n      - run: cat ${{ needs.plan.outputs.report-path }}\n",
    )
    head = PLAN.replace(
        "      run: ${{ steps.select.outputs.run }}\n",
        "      report-path: ${{ steps.select.outputs.report-path }}\n",
    )
    assert wiring({CI: workflow(observer, gate=False, head=head)}) == ()


def test_a_task_read_through_the_step_of_the_command_is_told_how_the_action_reads_it() -> None:
    steps = "    steps:\n      - id: select\n        uses: typesafe-ai/jev-select@v1\n" + (
        "        with:\n          tasks-file: .github/jev-tasks.yml\n"
        "      - if: steps.select.outputs.unit == 'true'\n        run: make unit\n"
    )
    text = "name: CI\non: pull_request\njobs:\n" + job("all", "", needs="[]", extra=steps)
    problems = wiring({CI: text})
    assert codes(problems) == ["output-not-forwarded"]
    assert "fromJSON(steps.select.outputs.run)['unit']" in problems[0].message


def test_a_gate_that_reads_the_whole_plan_consumes_no_task() -> None:
    gate = _gate(
        "always()",
        "[plan, unit, lint]",
        "./judge \"$PLAN\" '${{ toJSON(needs) }}'",
    ).replace("    steps:\n", "    env:\n      PLAN: ${{ needs.plan.outputs.run }}\n    steps:\n")
    problems = wiring({CI: workflow(*CONSUMERS[:2], gate=False) + gate})
    assert found(problems) == [("task-unconsumed", TABLE_PATH, 5, 1)]
    assert problems[0].task == "typing"
