"""Which workflows are checked, with which table: inline tables, shared tables, table files."""

from __future__ import annotations

import pytest
from support.wiring import CI, PLAN, TABLE, TABLE_PATH, codes, found, job, rest, wiring, workflow

from jev_select.core.check.workflows import is_action_step

INLINE_HEAD = """\
name: CI
on: pull_request
jobs:
  plan:
    runs-on: ubuntu-latest
    outputs:
      run: ${{ steps.select.outputs.run }}
    steps:
      - id: select
        uses: typesafe-ai/jev-select@v0.1.0
        with:
          tasks: |
            unit:
              descripton: Runs the unit tests.
            lint:
              description: Runs the linters.
"""


def test_an_inline_table_field_error_is_reported_at_its_line_in_the_workflow() -> None:
    problems = wiring({CI: workflow(rest("typing"), head=INLINE_HEAD)})
    assert found(problems)[0] == ("unknown-field", CI, 14, 15)
    assert problems[0].task == "unit"
    assert problems[0].field == "descripton"
    assert 'did you mean "description"?' in problems[0].message


def test_an_inline_table_defines_the_ids_its_consumers_may_read() -> None:
    head = INLINE_HEAD.replace("descripton", "description")
    problems = wiring(
        {
            CI: workflow(
                job("unit", "fromJSON(needs.plan.outputs.run).unit"),
                # `typing` is in the file table, not in this workflow's inline table.
                job("lint", "fromJSON(needs.plan.outputs.run).typing"),
                head=head,
            )
        }
    )
    assert codes(problems) == ["task-unconsumed", "unknown-task"]
    assert "the inline table of job" in problems[1].message
    # The unconsumed task is placed at its key inside the workflow's inline table.
    assert found(problems)[0] == ("task-unconsumed", CI, 15, 13)


def test_an_inline_table_in_a_quoted_scalar_is_placed_at_the_value() -> None:
    head = PLAN.replace(
        "          tasks-file: .github/jev-tasks.yml\n",
        "          tasks: '{unit: {descripton: x}}'\n",
    )
    problems = wiring(
        {CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unit"), head=head)}
    )
    assert found(problems)[0] == ("unknown-field", CI, 16, 18)


def test_two_workflows_share_one_table_and_each_has_its_own_plan_job() -> None:
    other = ".github/workflows/docs.yml"
    files = {
        CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unit")),
        other: workflow(
            job("lint", "fromJSON(needs.plan.outputs.run).lint"),
            job("typo", "fromJSON(needs.plan.outputs.run).lnit"),
        ),
    }
    problems = wiring(files)
    # Typing is read by neither; unit and lint each by one of them.
    assert found(problems) == [
        ("task-unconsumed", TABLE_PATH, 5, 1),
        ("unknown-task", other, 25, 9),
    ]
    selected = wiring(files, given=TABLE_PATH)
    assert codes(selected) == codes(problems)


def test_a_consumer_cannot_read_the_plan_job_of_another_workflow() -> None:
    other = ".github/workflows/docs.yml"
    consumer_only = "name: Docs\non: pull_request\njobs:\n" + job(
        "docs", "fromJSON(needs.plan.outputs.run).lint"
    )
    # The docs workflow runs no plan step, so it is not read; its `needs.plan` reads nothing.
    problems = wiring({CI: workflow(rest()), other: consumer_only})
    assert problems == ()


def test_with_a_table_file_only_the_workflows_that_name_it_are_checked() -> None:
    other_table = ".github/other-tasks.yml"
    other = ".github/workflows/other.yml"
    files = {
        CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unti"), rest()),
        other_table: TABLE,
        other: workflow(
            job("lint", "fromJSON(needs.plan.outputs.run).lnit"),
            job("unit", "fromJSON(needs.plan.outputs.run).unit"),
            head=PLAN.replace(TABLE_PATH, "./" + other_table),
        ),
    }
    assert {problem.path for problem in wiring(files, given=TABLE_PATH)} == {CI}
    assert {problem.path for problem in wiring(files, given=other_table)} == {other, other_table}
    # Without a table, both, and each table once.
    assert {problem.path for problem in wiring(files)} == {CI, other, other_table}


def test_the_table_given_on_the_command_line_is_the_one_read() -> None:
    edited = TABLE + "docs:\n  description: Builds the docs.\n"
    problems = wiring({CI: workflow(rest())}, given=TABLE_PATH, given_text=edited)
    assert found(problems) == [("task-unconsumed", TABLE_PATH, 7, 1)]


@pytest.mark.parametrize(
    ("inputs", "code"),
    [
        ("          tasks-file: .github/none.yml\n", "table-missing"),
        ("          tasks: '{}'\n          tasks-file: .github/jev-tasks.yml\n", "table-missing"),
        ("          api-key: x\n", "table-missing"),
        ("          tasks: ${{ vars.TASKS }}\n", "table-dynamic"),
    ],
)
def test_a_step_without_a_usable_table(inputs: str, code: str) -> None:
    head = PLAN.replace("          tasks-file: .github/jev-tasks.yml\n", inputs)
    problems = wiring(
        {CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unti"), head=head)}
    )
    # Without IDs nothing is reported as unknown or unconsumed.
    assert codes(tuple(problem for problem in problems if problem.path == CI)) == [code]


@pytest.mark.parametrize(
    ("uses", "own", "expected"),
    [
        ("typesafe-ai/jev-select@v0.1.0", False, True),
        ("someone/Jev-Select@0123456789abcdef0123456789abcdef01234567", False, True),
        ("typesafe-ai/jev-select", False, False),
        ("typesafe-ai/jev-select/sub@v1", False, False),
        ("typesafe-ai/jev-selector@v1", False, False),
        ("./", True, True),
        ("./", False, False),
        ("./.github/actions/jev-select", True, False),
        ("docker://jev-select:latest", False, False),
    ],
)
def test_which_steps_run_the_action(uses: str, own: bool, expected: bool) -> None:
    assert is_action_step(uses, own_repository=own) is expected


def test_the_actions_own_repository_runs_it_as_dot_slash() -> None:
    head = PLAN.replace("typesafe-ai/jev-select@v0.1.0", "./")
    files = {
        CI: workflow(job("unit", "fromJSON(needs.plan.outputs.run).unti"), rest()),
        "action.yml": "name: jev-select\nruns:\n  using: composite\n  steps: []\n",
    }
    assert codes(wiring({**files, CI: head + files[CI][len(PLAN) :]})) == ["unknown-task"]
    elsewhere = {**files, "action.yml": "name: other\n"}
    assert wiring({**elsewhere, CI: head + files[CI][len(PLAN) :]}) == ()


def test_a_workflow_that_is_not_yaml_but_mentions_the_action_is_a_warning() -> None:
    broken = "jobs:\n  plan:\n    steps: [uses: typesafe-ai/jev-select@v1\n"
    problems = wiring({CI: workflow(rest()), ".github/workflows/broken.yml": broken})
    assert found(problems) == [("workflow-unreadable", ".github/workflows/broken.yml", 1, 1)]
