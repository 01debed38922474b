"""``check_table``: each problem with its code, task, field, line and column."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

import pytest

from jev_select import contracts as c
from jev_select.core.check.problems import (
    Problem,
    check_exit_code,
    problems_json,
    problems_text,
)
from jev_select.core.check.repository import Repository
from jev_select.core.check.table import check_table
from jev_select.core.evidence.resolve import NoLookups, resolve_with_lookups
from jev_select.core.tasks import parse_tasks
from jev_select.errors import InputError

CI_WORKFLOW = """name: CI
on: pull_request
jobs:
  unit:
    name: Unit tests
    runs-on: ubuntu-latest
    steps:
      - run: python -m pytest
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
"""


def _repository(files: Mapping[str, str], commit: str = "a" * 40) -> Repository:
    def read_file(path: str) -> bytes | None:
        text = files.get(path)
        return text.encode("utf-8") if text is not None else None

    return Repository(commit=commit, paths=tuple(files), read_file=read_file)


def _where(problem: Problem) -> tuple[str, str | None, str | None, int | None, int | None]:
    return problem.code, problem.task, problem.field, problem.line, problem.column


def _only(text: str, repository: Repository | None = None) -> Problem:
    problems = check_table(text, repository)
    assert len(problems) == 1, problems
    return problems[0]


# ---------------------------------------------------------------------------------------------
# The mistakes a first-time user makes, each at its exact position
# ---------------------------------------------------------------------------------------------


def test_misspelt_field_suggests_the_closest_field() -> None:
    problem = _only("unit:\n  descripton: Unit tests\n")
    assert _where(problem) == ("unknown-field", "unit", "descripton", 2, 3)
    assert problem.severity == "error"
    assert problem.message == 'unknown field "descripton"; did you mean "description"?'


def test_always_yes_is_text_in_yaml_1_2() -> None:
    problem = _only("unit:\n  description: Unit tests\n  always: yes\n")
    assert _where(problem) == ("wrong-type", "unit", "always", 3, 11)
    assert '"yes" is text' in problem.message
    assert "write true or false" in problem.message


def test_tab_indentation() -> None:
    problem = _only("unit:\n  description: Unit tests\n\talways: true\n")
    assert _where(problem) == ("yaml-tab", None, None, 3, 1)


def test_empty_file() -> None:
    assert _where(_only("")) == ("blank-table", None, None, 1, 1)
    assert _where(_only(" \n\n")) == ("blank-table", None, None, 1, 1)


def test_table_wrapped_in_tasks_key() -> None:
    text = "tasks:\n  unit:\n    description: Unit tests\n  docs:\n    description: Docs\n"
    problem = _only(text)
    assert _where(problem) == ("enclosing-key", "tasks", None, 1, 1)
    assert "no enclosing key" in problem.message


def test_job_reference_by_display_name_suggests_the_job_key() -> None:
    text = (
        "unit:\n"
        "  description: Unit tests\n"
        "  jobs:\n"
        "    - workflow: .github/workflows/ci.yml\n"
        "      job: Unit tests\n"
    )
    problem = _only(text, _repository({".github/workflows/ci.yml": CI_WORKFLOW}))
    assert _where(problem) == ("job-missing", "unit", "jobs", 5, 12)
    assert problem.severity == "error"
    assert '"Unit tests" is the name of job "unit": reference the job key' in problem.message


def test_misspelt_job_key_suggests_the_closest_key() -> None:
    text = (
        "unit:\n  description: d\n  jobs:\n    - {workflow: .github/workflows/ci.yml, job: lnit}\n"
    )
    problem = _only(text, _repository({".github/workflows/ci.yml": CI_WORKFLOW}))
    assert _where(problem) == ("job-missing", "unit", "jobs", 4, 49)
    assert problem.message.endswith('did you mean "unit"?')


def test_missing_and_invalid_workflows_are_errors() -> None:
    text = (
        "unit:\n"
        "  description: d\n"
        "  jobs:\n"
        "    - workflow: .github/workflows/gone.yml\n"
        "    - workflow: .github/workflows/broken.yml\n"
    )
    problems = check_table(text, _repository({".github/workflows/broken.yml": "jobs: [unclosed\n"}))
    assert [_where(problem) for problem in problems] == [
        ("workflow-missing", "unit", "jobs", 4, 17),
        ("workflow-invalid", "unit", "jobs", 5, 17),
    ]
    assert check_exit_code(problems) == 1


def test_force_paths_matching_no_file_is_a_warning() -> None:
    text = "docs:\n  description: d\n  force_paths: [docs/**, site/**]\n"
    problems = check_table(text, _repository({"docs/index.md": "x"}))
    assert [_where(problem) for problem in problems] == [
        ("force-paths-no-match", "docs", "force_paths", 3, 26)
    ]
    assert problems[0].severity == "warning"
    assert check_exit_code(problems) == 0


def test_missing_context_file() -> None:
    text = "unit:\n  description: d\n  context_files:\n    - setup.cfg\n    - pyproject.toml\n"
    problems = check_table(text, _repository({"pyproject.toml": "[project]\n"}))
    assert [_where(problem) for problem in problems] == [
        ("context-file-missing", "unit", "context_files", 4, 7)
    ]


def test_metadata_gaps_of_evidence_are_warnings_with_their_code() -> None:
    workflow = "jobs:\n  unit:\n    steps:\n      - uses: actions/checkout@v4\n"
    text = "unit:\n  description: d\n  jobs:\n    - workflow: ci.yml\n"
    problems = check_table(text, _repository({"ci.yml": workflow}))
    assert [(problem.code, problem.severity, problem.line) for problem in problems] == [
        ("action-metadata-missing", "warning", 4)
    ]


def test_repository_checks_need_a_valid_table() -> None:
    text = "unit:\n  description: d\n  always: 1\n  force_paths: [nothing/**]\n"
    problems = check_table(text, _repository({}))
    assert [problem.code for problem in problems] == ["wrong-type"]


def test_leading_blank_lines_and_indentation_keep_file_positions() -> None:
    problem = _only("\n\n  unit:\n    description: x\n    bogus: 1\n")
    assert _where(problem) == ("unknown-field", "unit", "bogus", 5, 5)
    assert "the fields are" in problem.message


def test_repository_problems_keep_file_positions_after_leading_blank_lines() -> None:
    text = "\n\n  docs:\n    description: d\n    force_paths: [docs/**, site/**]\n"
    problems = check_table(text, _repository({"docs/index.md": "x"}))
    assert [_where(problem) for problem in problems] == [
        ("force-paths-no-match", "docs", "force_paths", 5, 28)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: [1\n", ("yaml-syntax", 1, 6)),
        ("a: b: c\n", ("yaml-syntax", 1, 5)),
        ("a: {description: x}\n---\nb: {description: y}\n", ("yaml-multiple-documents", 2, 1)),
        ("a: {description: *x}\n", ("yaml-alias", 1, 18)),
        ("%YAML 1.2\n---\na: {description: x}\n", ("yaml-directive", 1, 1)),
        ("a: {description: !!python/name x}\n", ("yaml-tag", 1, 18)),
        (
            "a: {description: x}\nb: {description: y}\na: {description: z}\n",
            ("yaml-duplicate-key", 3, 1),
        ),
        ("a: {always: !!bool yes, description: x}\n", ("yaml-scalar", 1, 13)),
        ("'1': {description: x}\n1: {description: y}\n", ("yaml-duplicate-key", 2, 1)),
        ("- unit\n", ("not-a-mapping", 1, 1)),
        ("./tasks.yml\n", ("not-a-mapping", 1, 1)),
    ],
)
def test_yaml_problems_have_positions(text: str, expected: tuple[str, int, int]) -> None:
    problem = _only(text)
    assert (problem.code, problem.line, problem.column) == expected


def test_every_rule_of_the_grammar_is_named() -> None:
    text = (
        "unit:\n"
        "  description: 5\n"
        "  jobs: []\n"
        '  force_paths: ["!src/**", "a", "a", "/abs/**", "x/../y", "[z"]\n'
        "  context_files: [/etc/x, a\\b, ../up]\n"
        "UNIT:\n"
        "  description: y\n"
        "run:\n"
        "  description: z\n"
        "9x: {description: q}\n"
        "none:\n"
        "blank: {description: '  '}\n"
        "refs:\n"
        "  description: r\n"
        "  jobs:\n"
        "    - workflw: ci.yml\n"
        "      job: 5\n"
        "    - job: unit\n"
        "    - ci.yml\n"
        "    - {workflow: ci.yml, job: ' '}\n"
        "    - {workflow: ci.yml, job: null}\n"
        "listy:\n"
        "  description: d\n"
        "  jobs: ci.yml\n"
        "  force_paths: docs/**\n"
        "  context_files: {a: 1}\n"
    )
    got = [_where(problem) for problem in check_table(text)]
    assert got == [
        ("wrong-type", "unit", "description", 2, 16),
        ("empty-jobs", "unit", "jobs", 3, 9),
        ("invalid-glob", "unit", "force_paths", 4, 17),
        ("duplicate-item", "unit", "force_paths", 4, 33),
        ("invalid-glob", "unit", "force_paths", 4, 38),
        ("invalid-glob", "unit", "force_paths", 4, 49),
        ("invalid-path", "unit", "context_files", 5, 19),
        ("invalid-path", "unit", "context_files", 5, 27),
        ("invalid-path", "unit", "context_files", 5, 32),
        ("duplicate-task-id", "UNIT", None, 6, 1),
        ("reserved-task-id", "run", None, 8, 1),
        ("invalid-task-id", "9x", None, 10, 1),
        ("task-not-a-mapping", "none", None, 11, 1),
        ("blank-description", "blank", "description", 12, 22),
        ("unknown-field", "refs", "jobs", 16, 7),
        ("wrong-type", "refs", "jobs", 17, 12),
        ("missing-workflow", "refs", "jobs", 18, 7),
        ("wrong-type", "refs", "jobs", 19, 7),
        ("blank-job", "refs", "jobs", 20, 31),
        ("wrong-type", "refs", "jobs", 21, 26),
        ("wrong-type", "listy", "jobs", 24, 9),
        ("wrong-type", "listy", "force_paths", 25, 16),
        ("wrong-type", "listy", "context_files", 26, 18),
    ]


# ---------------------------------------------------------------------------------------------
# Agreement with parse_tasks: an error here exactly when CI refuses the table
# ---------------------------------------------------------------------------------------------

_AGREEMENT_TEXTS = [
    "{}",
    "unit: {description: x}",
    "unit: {description: x, always: false, force_paths: [], context_files: []}",
    "unit: {description: x, jobs: [{workflow: a.yml}, {workflow: b.yml, job: j}]}",
    "tasks:\n  unit: {description: x}\n",
    "tasks: {description: x, unit: {description: y}}",
    "unit: {description: x, force_paths: ['a\\\\*.py', 'src/!(vendor)/*.go', '{a,b}']}",
    "unit: {description: x, force_paths: ['{1..1000}{1..1000}']}",
    "unit: {description: x, force_paths: ['a\\u2028b']}",
    "unit: {description: x, context_files: ['a\\u0000b']}",
    "unit: {description: x, context_files: ['./a', 'a//b']}",
    "true: {description: x}",
    "null: {description: x}",
    "1.5: {description: x}",
    "a: {description: '\\u0001'}",
    "a: {description: '\\ud800'}",
    "a: {description: x, jobs: [{workflow: ''}]}",
    "a: {description: x, jobs: [{workflow: a, job: ''}]}",
    "_: {description: x}",
    "a" * 64 + ": {description: x}",
    "a" * 65 + ": {description: x}",
    "a-: {description: x}",
    "-a: {description: x}",
    "Status: {description: x}",
    "plan: {description: x}",
    "unit: {description: x, always: 'true'}",
    "unit: {description: x, always: True}",
    "unit: {description: [x]}",
    "unit: []",
    "unit: x",
    "unit: {description: x, force_paths: [1]}",
    "unit: {description: x, context_files: [null]}",
]


@pytest.mark.parametrize("text", _AGREEMENT_TEXTS)
def test_errors_exactly_when_parse_tasks_refuses(text: str) -> None:
    try:
        parse_tasks(text)
    except InputError:
        refused = True
    else:
        refused = False
    problems = check_table(text)
    assert check_exit_code(problems) == (1 if refused else 0), problems
    assert all(problem.code != c.CHECK_INVALID_TABLE for problem in problems)


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def test_text_lines_are_compiler_style() -> None:
    problems = check_table("unit:\n  descripton: x\n  always: on\n")
    lines = problems_text("ci/tasks.yml", problems).splitlines()
    assert lines == [
        'ci/tasks.yml:2:3: error: unknown field "descripton"; did you mean "description"? '
        "[unknown-field]",
        'ci/tasks.yml:3:11: error: "always" must be true or false, not text ("on" is text in '
        "the table's YAML 1.2; write true or false) [wrong-type]",
    ]
    pattern = re.compile(r"[^:]+:\d+:\d+: (error|warning): .+ \[" + c.CHECK_CODE_PATTERN + r"\]")
    assert all(pattern.fullmatch(line) for line in lines)


def test_json_shape() -> None:
    problems = check_table("unit:\n  descripton: x\n")
    document = json.loads(problems_json(problems))
    assert document == {
        "ok": False,
        "problems": [
            {
                "severity": "error",
                "code": "unknown-field",
                "path": None,
                "task": "unit",
                "field": "descripton",
                "line": 2,
                "column": 3,
                "message": 'unknown field "descripton"; did you mean "description"?',
            }
        ],
    }
    assert list(document["problems"][0]) == list(c.CHECK_JSON_PROBLEM_KEYS)
    assert json.loads(problems_json(())) == {"ok": True, "problems": []}


def test_every_code_is_lowercase_words() -> None:
    codes = [
        value
        for name, value in vars(c).items()
        if name.startswith("CHECK_")
        and name
        not in {
            "CHECK_CODE_PATTERN",
            "CHECK_LINE_TEMPLATE",
            "CHECK_JSON_PROBLEM_KEYS",
            "CHECK_FORMATS",
            "CHECK_GAP_ERRORS",
            "CHECK_WIRING_ERRORS",
            "CHECK_TREE_CAP",
            "CHECK_EXIT_OK",
            "CHECK_EXIT_PROBLEMS",
            "CHECK_EXIT_USAGE",
        }
        and not name.startswith(("CHECK_FORMAT_", "CHECK_SEVERITY_"))
    ]
    assert codes
    for code in [*codes, *c.CHECK_GAP_ERRORS]:
        assert re.fullmatch(c.CHECK_CODE_PATTERN, code), code


def test_every_code_is_documented() -> None:
    from pathlib import Path

    reference = (Path(__file__).resolve().parents[3] / "docs" / "reference.md").read_text("utf-8")
    section = reference.split("## Checking a task table", 1)[1].split("\n## ", 1)[0]
    codes = [
        value
        for name, value in vars(c).items()
        if name.startswith("CHECK_")
        and isinstance(value, str)
        and re.fullmatch(c.CHECK_CODE_PATTERN, value)
        and not name.startswith(("CHECK_FORMAT_", "CHECK_SEVERITY_"))
        and name != "CHECK_METADATA_GAP"
    ]
    for code in [*codes, *c.CHECK_GAP_ERRORS]:
        assert f"`{code}`" in section, code


def test_a_command_gap_names_the_command_at_its_line_and_column() -> None:
    workflow = (
        "jobs:\n  unit:\n    steps:\n      - name: Test\n        run: |\n"
        "          npm ci\n          npm run tset\n"
    )
    text = "unit:\n  description: d\n  jobs:\n    - workflow: ci.yml\n"
    repository = _repository({"ci.yml": workflow, "package.json": '{"scripts": {"test": "x"}}'})
    problems = check_table(text, repository)
    assert [(problem.code, problem.line) for problem in problems] == [("package-script-absent", 4)]
    assert problems[0].message.endswith(
        'comes from ci.yml:7:11, workflow "ci.yml", job "unit", step "Test": npm run tset'
    )


def test_check_reports_the_gaps_a_plan_would() -> None:
    workflow = (
        "jobs:\n  unit:\n    steps:\n      - run: pnpm --filter web test\n"
        '      - run: cd "$SOMEWHERE" && pnpm build\n      - uses: ./.github/actions/setup\n'
    )
    files = {
        "ci.yml": workflow,
        "pnpm-workspace.yaml": "packages: [packages/*]\n",
        "package.json": "{}",
        "packages/web/package.json": '{"name": "web", "scripts": {"test": "vitest"}}',
        ".github/actions/setup/action.yml": (
            "runs:\n  using: composite\n  steps:\n    - run: pnpm run nope\n      shell: bash\n"
        ),
    }
    text = "unit:\n  description: d\n  jobs:\n    - workflow: ci.yml\n"
    repository = _repository(files)
    problems = check_table(text, repository)
    plan = resolve_with_lookups(
        parse_tasks(text),
        read_file=repository.read_file,
        lookups=NoLookups(),
        repository=repository.repository,
        commit=repository.commit,
        list_paths=lambda: repository.paths,
    )
    warnings = (plan.evidence["unit"].job_metadata or {})["warnings"]
    assert isinstance(warnings, list)
    assert [problem.code for problem in problems] == [gap.split(":", 1)[0] for gap in warnings]
    assert warnings == [
        "package-script-execution-context-unresolved",
        "package-script-absent:package.json#nope",
    ]
