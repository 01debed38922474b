"""The expressions of consuming jobs: task IDs in every form, comparisons, needs and outputs."""

from __future__ import annotations

import pytest
from support.wiring import CI, PLAN, codes, found, job, rest, wiring, workflow

# The first consumer job's `if:` is on this line, its value starting at this column.
IF_LINE = PLAN.count("\n") + 3
IF_COLUMN = len("    if: ") + 1


def _one(*jobs: str) -> list[tuple[str, str | None, int | None, int | None]]:
    return [entry for entry in found(wiring({CI: workflow(*jobs)}))]


def test_correct_wiring_in_every_form_is_clean() -> None:
    problems = wiring(
        {
            CI: workflow(
                job("unit", "fromJSON(needs.plan.outputs.run)['unit']"),
                job("lint", "${{ fromJSON(needs.plan.outputs.run).lint }}"),
                job("typing", "contains(fromJSON(needs.plan.outputs.selected), 'typing')"),
                job("forwarded", "needs.plan.outputs.unit == 'true'"),
                job("any", "needs.plan.outputs.has-tasks == 'true'"),
            )
        }
    )
    assert problems == ()


@pytest.mark.parametrize(
    ("condition", "column"),
    [
        # The index form: the problem is at the key, where the typo is.
        ("fromJSON(needs.plan.outputs.run)['typnig']", IF_COLUMN + 33),
        ("fromJSON(needs.plan.outputs.run).typnig", IF_COLUMN),
        ("${{ fromJSON(needs.plan.outputs.run)['typnig'] }}", IF_COLUMN + 37),
        ("contains(fromJSON(needs.plan.outputs.selected), 'typnig')", IF_COLUMN + 48),
        ("contains(needs.plan.outputs.selected, 'typnig')", IF_COLUMN + 38),
        ("always() && fromJSON(needs.plan.outputs.run)['typnig']", IF_COLUMN + 45),
    ],
)
def test_a_misspelt_task_id_is_an_error_at_its_position(condition: str, column: int) -> None:
    problems = wiring(
        {
            CI: workflow(
                job("unit", condition),
                rest(),
            )
        }
    )
    assert found(problems) == [("unknown-task", CI, IF_LINE, column)]
    assert 'task "typnig" is not in ".github/jev-tasks.yml"' in problems[0].message
    assert 'did you mean "typing"?' in problems[0].message
    assert problems[0].severity == "error"


def test_a_task_id_that_is_nothing_like_any_gets_no_suggestion() -> None:
    problems = wiring({CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).zzz"))})
    unknown = [problem for problem in problems if problem.code == "unknown-task"]
    assert len(unknown) == 1
    assert "did you mean" not in unknown[0].message


def test_task_ids_match_without_regard_to_case_as_github_does() -> None:
    problems = wiring(
        {
            CI: workflow(
                job("unit", "fromJSON(needs.plan.outputs.run)['UNIT']"),
                job("lint", "fromJSON(needs.plan.outputs.run).Lint"),
                job("typing", "contains(fromJSON(needs.plan.outputs.selected), 'Typing')"),
            )
        }
    )
    assert problems == ()


def test_step_level_conditions_and_other_values_are_read() -> None:
    steps = """\
    steps:
      - if: fromJSON(needs.plan.outputs.run).lnit
        run: make lint
      - run: make typing
        env:
          RUN_TYPING: ${{ fromJSON(needs.plan.outputs.run).typign }}
"""
    problems = wiring(
        {CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unit", extra=steps), rest())}
    )
    assert [(code, line) for code, _path, line, _column in found(problems)] == [
        ("unknown-task", IF_LINE + 3),
        ("unknown-task", IF_LINE + 7),
    ]


def test_a_forwarded_output_with_a_misspelt_task_is_an_error_where_it_is_declared() -> None:
    head = PLAN.replace(
        "unit: ${{ fromJSON(steps.select.outputs.run).unit }}",
        "unit: ${{ fromJSON(steps.select.outputs.run).uint }}",
    )
    problems = wiring(
        {
            CI: workflow(
                job("unit", "needs.plan.outputs.unit == 'true'"),
                rest("unit"),
                head=head,
            )
        }
    )
    declared = head.splitlines().index("      unit: ${{ fromJSON(steps.select.outputs.run).uint }}")
    assert found(problems)[1] == ("unknown-task", CI, declared + 1, 17)
    # The task the output meant is not read by anything: it is reported in the table too.
    assert codes(problems) == ["task-unconsumed", "unknown-task"]


def test_a_matrix_key_used_as_the_task_id_is_checked_value_by_value() -> None:
    extra = """\
    strategy:
      matrix:
        task: [unit, lint, typnig]
    steps:
      - if: fromJSON(needs.plan.outputs.run)[matrix.task]
        run: make ${{ matrix.task }}
"""
    problems = wiring({CI: workflow(job("tests", "", extra=extra), rest())})
    assert codes(problems) == ["unknown-task"]
    assert 'task "typnig"' in problems[0].message


# ---------------------------------------------------------------------------------------------
# Comparisons
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "always"),
    [
        ("fromJSON(needs.plan.outputs.run)['unit'] == 'true'", "false"),
        ("${{ fromJSON(needs.plan.outputs.run).unit == 'true' }}", "false"),
        ("${{ 'false' != fromJSON(needs.plan.outputs.run).unit }}", "true"),
        ("fromJSON(needs.plan.outputs.has-tasks) == 'true'", "false"),
        ("fromJSON(needs.plan.outputs.unit) == 'true'", "false"),
        ("needs.plan.outputs.unit == true", "false"),
        ("needs.plan.outputs.has-tasks != false", "true"),
    ],
)
def test_a_boolean_compared_with_a_string_is_an_error(condition: str, always: str) -> None:
    problems = wiring(
        {
            CI: workflow(
                job("unit", condition),
                rest(),
            )
        }
    )
    assert codes(problems) == ["boolean-compared-to-string"]
    assert f"always {always}" in problems[0].message


@pytest.mark.parametrize(
    "condition",
    [
        "needs.plan.outputs.unit == 'true'",
        "needs.plan.outputs.has-tasks == 'true'",
        "${{ 'true' == needs.plan.outputs.unit }}",
        "fromJSON(needs.plan.outputs.run).unit == true",
        "needs.plan.outputs.unit != 'false'",
    ],
)
def test_correct_comparisons_are_not_reported(condition: str) -> None:
    problems = wiring(
        {
            CI: workflow(
                job("unit", condition),
                rest(),
            )
        }
    )
    assert problems == ()


# ---------------------------------------------------------------------------------------------
# needs: and outputs:
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("needs", ["[]", "build", "[build, lint]"])
def test_reading_the_plan_without_needing_its_job_is_an_error(needs: str) -> None:
    problems = wiring(
        {
            CI: workflow(
                job("unit", "fromJSON(needs.plan.outputs.run).unit", needs=needs),
                rest("unit"),
            )
        }
    )
    assert found(problems) == [("plan-not-needed", CI, IF_LINE, IF_COLUMN + 9)]
    assert 'job "unit" reads needs.plan without "plan" in its needs:' in problems[0].message


def test_reading_the_plan_step_from_another_job_is_an_error() -> None:
    problems = wiring(
        {
            CI: workflow(
                job("unit", "fromJSON(steps.select.outputs.run).unit"),
                rest(),
            )
        }
    )
    assert codes(problems) == ["plan-not-needed"]
    assert "a step of job" in problems[0].message


def test_an_output_the_plan_job_does_not_declare_is_an_error() -> None:
    head = PLAN.replace("      selected: ${{ steps.select.outputs.selected }}\n", "")
    problems = wiring(
        {
            CI: workflow(
                job("unit", "contains(fromJSON(needs.plan.outputs.selected), 'unit')"),
                rest(),
                head=head,
            )
        }
    )
    assert codes(problems) == ["output-not-forwarded"]
    message = problems[0].message
    assert 'job "plan" declares no output "selected"' in message
    assert 'add "selected: ${{ steps.select.outputs.selected }}"' in message
    # Placed at the path that reads it.
    assert problems[0].column == IF_COLUMN + len("contains(fromJSON(")


def test_a_misspelt_output_name_gets_a_suggestion() -> None:
    problems = wiring(
        {
            CI: workflow(
                job("unit", "needs.plan.outputs.has-task == 'true'"),
                rest(),
            )
        }
    )
    assert codes(problems) == ["output-not-forwarded"]
    assert 'did you mean "has-tasks"?' in problems[0].message


def test_an_output_the_action_does_not_have_is_an_error() -> None:
    head = PLAN.replace(
        "      run: ${{ steps.select.outputs.run }}\n",
        "      run: ${{ steps.select.outputs.runs }}\n",
    )
    problems = wiring(
        {CI: workflow(job("unit", "needs.plan.outputs.has-tasks == 'true'"), rest(), head=head)}
    )
    in_workflow = [problem for problem in problems if problem.path == CI]
    assert codes(tuple(in_workflow)) == ["output-not-forwarded", "output-not-forwarded"]
    assert 'the action has no output "runs"' in in_workflow[0].message
    # Where it is read, once, however many reads.
    assert 'declares output "run" but not from the action step' in in_workflow[1].message
    # Nothing reads a task then, and the table is not blamed for it.
    assert len(problems) == 2


def test_an_expression_in_a_literal_block_is_placed_at_its_own_line_and_column() -> None:
    steps = """\
    steps:
      - run: |
          echo start
          if ${{ fromJSON(needs.plan.outputs.run).lnit }}; then make lint; fi
"""
    problems = wiring(
        {CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unit", extra=steps), rest())}
    )
    assert found(problems) == [("unknown-task", CI, IF_LINE + 5, 18)]


def test_a_job_missing_the_plan_in_needs_is_reported_once_at_its_first_read() -> None:
    steps = """\
    steps:
      - uses: actions/checkout@v5
        with:
          fetch-depth: ${{ needs.plan.outputs.has-tasks == 'true' && 1 || 0 }}
      - if: fromJSON(needs.plan.outputs.run).lint
        run: make lint
"""
    problems = wiring(
        {
            CI: workflow(
                job("unit", "fromJSON(needs.plan.outputs.run).unit", needs="[]", extra=steps),
                rest(),
            )
        }
    )
    assert found(problems) == [("plan-not-needed", CI, IF_LINE, IF_COLUMN + 9)]


def test_an_output_declared_from_a_misspelt_step_is_an_error_at_both_ends() -> None:
    head = PLAN.replace(
        "      run: ${{ steps.select.outputs.run }}\n",
        "      run: ${{ steps.selct.outputs.run }}\n",
    )
    problems = wiring(
        {CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unit"), rest(), head=head)}
    )
    in_workflow = [problem for problem in problems if problem.path == CI]
    assert [problem.line for problem in in_workflow] == [7, IF_LINE]
    assert 'job "plan" has no step "selct"' in in_workflow[0].message
    assert 'declares output "run" but not from the action step' in in_workflow[1].message
    assert {str(problem.code) for problem in in_workflow} == {"output-not-forwarded"}
