"""The task table (docs/reference.md, "Task fields"), its schema, and the selection hash
(docs/reference.md, "Hashes")."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jev_select import contracts as c
from jev_select.core.models import JobRef, Task, TaskTable
from jev_select.core.tasks import compute_selection_hash, parse_tasks, selection_hash_text
from jev_select.errors import InputError, input_error_message

TESTS = Path(__file__).parent.parent
TASKS_MESSAGE = (
    'jev-select: invalid input "tasks"; expected a YAML mapping of uniquely named task objects, '
    "each with a nonblank description and only the documented fields; no plan published."
)


def bad(text: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_tasks(text)
    assert caught.value.field == "tasks"
    assert input_error_message(caught.value.field) == TASKS_MESSAGE
    assert str(caught.value) == "tasks"
    assert repr(caught.value) == "InputError('tasks')"


def one_task(body: str) -> str:
    return "t:\n" + "".join(f"  {line}\n" for line in body.splitlines())


def parse_one(body: str) -> Task:
    table = parse_tasks(one_task(body))
    assert table.ids == ("t",)
    return table.tasks[0]


# --- top level -----------------------------------------------------------------------------------


def test_full_example() -> None:
    table = parse_tasks(
        """
integration:
  description: Verifies HTTP authentication and PostgreSQL persistence.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: integration
  context_files: [tests/integration/setup.ts]
  force_paths: [migrations/**]
lint:
  description: Verifies TypeScript ESLint rules.
  always: true
"""
    )
    assert table == TaskTable(
        tasks=(
            Task(
                id="integration",
                description="Verifies HTTP authentication and PostgreSQL persistence.",
                always=False,
                jobs=(JobRef(workflow=".github/workflows/ci.yml", job="integration"),),
                context_files=("tests/integration/setup.ts",),
                force_paths=("migrations/**",),
            ),
            Task(id="lint", description="Verifies TypeScript ESLint rules.", always=True),
        )
    )


@pytest.mark.parametrize("text", ["{}", "{}\n", "  {}  ", "\n{}\n# nothing\n", "--- {}"])
def test_empty_mapping_is_an_empty_table(text: str) -> None:
    table = parse_tasks(text)
    assert table == TaskTable()
    assert len(table) == 0


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "\n\t\n",
        "\u3000\ufeff\u2028",
        "# only a comment",
        "null",
        "~",
        "[]",
        "- unit",
        "./tasks.yml",
        "5",
        "true",
        "'unit'",
        "tasks:\n  unit:\n    description: x\n    extra: 1",
    ],
)
def test_top_level_must_be_a_nonblank_mapping(text: str) -> None:
    bad(text)


def test_enclosing_tasks_key_is_just_a_task_id() -> None:
    # ``tasks`` is an ordinary ID; its body must then be a task object.
    table = parse_tasks("tasks:\n  description: Named tasks.")
    assert table.ids == ("tasks",)


def test_surrounding_whitespace_is_trimmed() -> None:
    assert parse_tasks("\ufeff\n  \nunit: {description: x}\n\u3000").ids == ("unit",)


def test_tasks_are_in_code_unit_order() -> None:
    table = parse_tasks(
        "b: {description: x}\nZ: {description: x}\n_u: {description: x}\n"
        "a: {description: x}\nA1: {description: x}\na-b: {description: x}\na_b: {description: x}"
    )
    assert table.ids == ("A1", "Z", "_u", "a", "a-b", "a_b", "b")


# --- task IDs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task_id",
    [
        "a",
        "_",
        "A",
        "unit",
        "unit-tests",
        "unit_tests_2",
        "a" * 64,
        "_" + "9" * 63,
        "plan",
        "ci-contract",
        "ci-required",
        "runner",
        "statuses",
        "Matrix2",
    ],
)
def test_valid_ids(task_id: str) -> None:
    assert parse_tasks(f"{task_id}: {{description: x}}").ids == (task_id,)


@pytest.mark.parametrize(
    "key",
    [
        "1a",
        "-a",
        "a" * 65,
        "a.b",
        "'a b'",
        "café",
        "''",
        '"unit\\n"',
        '"\\tunit"',
        "a/b",
        "a:b",
        "1",
        "1.5",
        "null",
        "ｕnit",
    ],
)
def test_invalid_ids(key: str) -> None:
    bad(f"{key}: {{description: x}}")


def test_boolean_key_becomes_its_text() -> None:
    assert parse_tasks("true: {description: x}").ids == ("true",)


@pytest.mark.parametrize(
    "reserved",
    [
        *c.RESERVED_TASK_IDS,
        *(task_id.upper() for task_id in c.RESERVED_TASK_IDS),
        *(task_id.lower() for task_id in c.RESERVED_TASK_IDS),
        "RUN",
        "Status",
        "TOSTRING",
        "Has-Tasks",
        "__PROTO__",
        "Tested-SHA",
        "REPORT-PATH",
        "Constructor",
        "valueof",
    ],
)
def test_reserved_ids_in_any_case(reserved: str) -> None:
    bad(f"{reserved}: {{description: x}}")


@pytest.mark.parametrize(
    ("first", "second"), [("unit", "UNIT"), ("unit", "Unit"), ("a_B", "A_b"), ("x-Y", "X-y")]
)
def test_ids_unique_ignoring_case(first: str, second: str) -> None:
    bad(f"{first}: {{description: x}}\n{second}: {{description: y}}")


def test_exact_duplicate_id() -> None:
    bad("unit: {description: x}\nunit: {description: y}")


# --- task objects --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["a string", "[description]", "null", "~", "5", "", "true"])
def test_task_must_be_a_mapping(value: str) -> None:
    bad(f"t: {value}")


def test_description_alone_is_complete() -> None:
    task = parse_one("description: Runs go test ./...")
    assert task == Task(id="t", description="Runs go test ./...", always=False)
    assert task.to_json() == {"description": "Runs go test ./...", "always": False}


def test_description_is_kept_exactly() -> None:
    assert parse_one("description: '  padded\u3000 '").description == "  padded\u3000 "


def test_description_of_control_characters_is_not_blank() -> None:
    # Only the spec's whitespace set counts as blank; U+001C is not in it.
    assert parse_one('description: "\\x1c"').description == "\x1c"


@pytest.mark.parametrize(
    "body",
    [
        "always: true",
        "description: 5",
        "description: 1.5",
        "description: true",
        "description: null",
        "description:",
        "description: ''",
        "description: '   '",
        "description: '\t\n'",
        'description: "\\u3000\\ufeff\\u00a0\\u2028"',
        "description: [x]",
        "description: {x: y}",
    ],
)
def test_description_required_nonblank_string(body: str) -> None:
    bad(one_task(body))


@pytest.mark.parametrize(
    "field", ["question", "requires", "threshold", "Description", "descriptions", "job", "paths"]
)
def test_unknown_fields(field: str) -> None:
    bad(one_task(f"description: x\n{field}: y"))


@pytest.mark.parametrize(("text", "value"), [("true", True), ("false", False), ("True", True)])
def test_always_boolean(text: str, value: bool) -> None:
    assert parse_one(f"description: x\nalways: {text}").always is value


@pytest.mark.parametrize("text", ["'true'", "yes", "on", "1", "0", "null", "[true]", "'false'"])
def test_always_wrong_types(text: str) -> None:
    bad(one_task(f"description: x\nalways: {text}"))


def test_always_defaults_to_false() -> None:
    assert parse_one("description: x").always is False


# --- jobs --------------------------------------------------------------------------------------


def test_jobs_with_and_without_job() -> None:
    task = parse_one(
        "description: x\njobs:\n  - workflow: .github/workflows/ci.yml\n"
        "  - {workflow: .github/workflows/e2e.yml, job: ' e2e '}"
    )
    assert task.jobs == (
        JobRef(workflow=".github/workflows/ci.yml"),
        JobRef(workflow=".github/workflows/e2e.yml", job=" e2e "),
    )


@pytest.mark.parametrize(
    "jobs",
    [
        "[]",
        "x.yml",
        "{workflow: x.yml}",
        "[x.yml]",
        "[{}]",
        "[{job: unit}]",
        "[{workflow: x.yml, job: unit, extra: 1}]",
        "[{workflow: x.yml, name: unit}]",
        "[{workflow: x.yml, job: ''}]",
        "[{workflow: x.yml, job: '  '}]",
        "[{workflow: x.yml, job: null}]",
        "[{workflow: x.yml, job: 5}]",
        "[{workflow: x.yml, job: [a]}]",
        "[{workflow: 5}]",
        "[{workflow: null}]",
        "null",
    ],
)
def test_bad_jobs(jobs: str) -> None:
    bad(one_task(f"description: x\njobs: {jobs}"))


# --- paths and globs ------------------------------------------------------------------------------

GOOD_PATHS = [".github/workflows/ci.yml", "a/..b", "..a", "a..", "./a", "a/./b", "a b", "café.md"]
BAD_PATHS = [
    "/tmp/file",
    "../file",
    "x/../file",
    "x/..",
    "..",
    "x\\\\y",
    "",
    "a\\nb",
    "a\\rb",
    "a\\0b",
]


@pytest.mark.parametrize("path", GOOD_PATHS)
def test_good_file_paths(path: str) -> None:
    task = parse_one(f'description: x\njobs: [{{workflow: "{path}"}}]\ncontext_files: ["{path}"]')
    assert task.jobs == (JobRef(workflow=path),)
    assert task.context_files == (path,)


@pytest.mark.parametrize("path", BAD_PATHS)
def test_bad_workflow_paths(path: str) -> None:
    bad(one_task(f'description: x\njobs: [{{workflow: "{path}"}}]'))


@pytest.mark.parametrize("path", BAD_PATHS)
def test_bad_context_files(path: str) -> None:
    bad(one_task(f'description: x\ncontext_files: ["{path}"]'))


def test_context_files_may_be_empty_and_keep_order() -> None:
    assert parse_one("description: x\ncontext_files: []").context_files == ()
    assert parse_one("description: x\ncontext_files: [b, a]").context_files == ("b", "a")


@pytest.mark.parametrize(
    "value", ["[a, a]", "a", "[5]", "[null]", "[[a]]", "{a: b}", "null", "[true]"]
)
def test_bad_context_file_lists(value: str) -> None:
    bad(one_task(f"description: x\ncontext_files: {value}"))


GOOD_GLOBS = [
    "src/**",
    "\\\\*.py",
    "a\\\\b",
    "*.{js,ts}",
    "+(a|b).txt",
    "#c.py",
    "docs/",
    "..a/**",
    "a/!(b)",
    "x!",
    "\\u00e9/**",
]
BAD_GLOBS = [
    "!src/**",
    "/src/**",
    "../src/**",
    "a/../b",
    "a/..",
    "",
    "a\\nb",
    "a\\rb",
    "a\\0b",
    "a\\u2028b",
    "a\\u2029b",
    "{1..5000}",
]


@pytest.mark.parametrize("glob", GOOD_GLOBS)
def test_good_globs(glob: str) -> None:
    (expected,) = json.loads(f'["{glob}"]')
    assert parse_one(f'description: x\nforce_paths: ["{glob}"]').force_paths == (expected,)


@pytest.mark.parametrize("glob", BAD_GLOBS)
def test_bad_globs(glob: str) -> None:
    bad(one_task(f'description: x\nforce_paths: ["{glob}"]'))


def test_force_paths_may_be_empty() -> None:
    assert parse_one("description: x\nforce_paths: []").force_paths == ()


@pytest.mark.parametrize("value", ["['a/**', 'a/**']", "'a/**'", "[1]", "[null]", "null"])
def test_bad_force_path_lists(value: str) -> None:
    bad(one_task(f"description: x\nforce_paths: {value}"))


# --- schema file ------------------------------------------------------------------------------


def load_product_schema() -> dict[str, Any]:
    text = (resources.files("jev_select") / "schemas" / c.TASKS_SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def test_product_schema_is_draft_2020_12_and_matches_contracts() -> None:
    schema = load_product_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    task_id = schema["$defs"]["taskId"]
    assert task_id["pattern"] == "^" + c.TASK_ID_PATTERN + "$"
    assert tuple(task_id["not"]["enum"]) == c.RESERVED_TASK_IDS
    task = schema["$defs"]["task"]
    assert task["additionalProperties"] is False
    assert tuple(task["properties"]) == c.TASK_FIELDS
    assert schema["$defs"]["jobRef"]["additionalProperties"] is False


def test_product_schema_agrees_with_the_rules() -> None:
    validator = jsonschema.Draft202012Validator(load_product_schema())

    def ok(table: Any) -> bool:
        return bool(validator.is_valid(table))

    assert ok({})
    assert ok(
        {
            "unit": {
                "description": "x",
                "always": False,
                "force_paths": [],
                "jobs": [{"workflow": "ci.yml", "job": "unit"}],
            }
        }
    )
    assert not ok({"unit": {"description": " \u3000"}})
    assert not ok({"unit": {"description": "x", "extra": 1}})
    assert not ok({"run": {"description": "x"}})
    assert not ok({"1a": {"description": "x"}})
    assert not ok({"unit": {"description": "x", "jobs": []}})
    for path in ["/a", "../a", "a/../b", "a\\b", "a\nb", "a\rb", "a\x00b", ""]:
        assert not ok({"unit": {"description": "x", "context_files": [path]}}), path
    for glob in ["!a", "/a", "../a", "a/..", "a\nb", "a\u2028b", "a\u2029b", "a\x00", ""]:
        assert not ok({"unit": {"description": "x", "force_paths": [glob]}}), glob
    assert ok({"unit": {"description": "x", "force_paths": ["a\\b", "..a"]}})


# Every ASCII character, the spec's whitespace and a few others: enough to tell the sets apart.
_CHARACTERS = sorted(
    {chr(code) for code in range(0x80)} | set(c.WHITESPACE) | set("\x85\u180e\u200b\u2029\ufffd")
)


def test_product_schema_and_grammar_share_the_character_sets() -> None:
    # The schema is not checked at run time: its character classes must be the grammar's.
    validator = jsonschema.Draft202012Validator(load_product_schema())

    def both(body: dict[str, Any]) -> tuple[bool, bool]:
        table = {"unit": {"description": "x", **body}}
        try:
            parse_tasks(json.dumps(table))
        except InputError:
            accepted = False
        else:
            accepted = True
        return bool(validator.is_valid(table)), accepted

    for character in _CHARACTERS:
        blank = character in c.WHITESPACE
        assert both({"description": character}) == (not blank, not blank), repr(character)
        path = character not in c.FILE_PATH_FORBIDDEN_CHARACTERS
        assert both({"context_files": [f"a{character}b"]}) == (path, path), repr(character)
        glob = character not in c.GLOB_FORBIDDEN_CHARACTERS
        # The schema cannot say which globs compile; the grammar also refuses those the matcher
        # refuses, and none of these two-character patterns is one.
        assert both({"force_paths": [f"a{character}"]}) == (glob, glob), repr(character)


# --- selection hash -------------------------------------------------------------------------------

SPEC_EXAMPLE_HASH = "5a63fed57346fd768efbc2f1a1dcb209ee34eb8538762f3c22567c2b98527cab"
SPEC_EXAMPLE_TEXT = (
    '{"model":"jev-1.13.0","skip_below":0.1,"tasks":{"api_e2e":{"always":true,"description":'
    '"Runs the HTTP API end-to-end suite against PostgreSQL.","jobs":[{"job":"e2e","workflow":'
    '".github/workflows/ci.yml"}]},"docs":{"always":false,"description":"Builds the '
    'documentation site with MkDocs.","force_paths":["docs/**","mkdocs.yml"]}}}'
)
SPEC_EXAMPLE_YAML = """
docs:
  description: Builds the documentation site with MkDocs.
  force_paths: [docs/**, mkdocs.yml]
api_e2e:
  description: Runs the HTTP API end-to-end suite against PostgreSQL.
  always: true
  jobs:
    - workflow: .github/workflows/ci.yml
      job: e2e
"""


def load_vectors() -> list[dict[str, Any]]:
    document = json.loads((TESTS / "vectors" / "selection-hash.json").read_text("utf-8"))
    vectors: list[dict[str, Any]] = document["vectors"]
    return vectors


@pytest.mark.parametrize("vector", load_vectors(), ids=lambda vector: vector["sha256"][:12])
def test_selection_hash_vectors(vector: dict[str, Any]) -> None:
    # JSON is valid YAML, so the vector's table goes through the real parser.
    table = parse_tasks(json.dumps(vector["tasks"]))
    text = selection_hash_text(vector["model"], vector["skip_below"], table)
    assert text == vector["canonical_json"]
    assert compute_selection_hash(vector["model"], vector["skip_below"], table) == vector["sha256"]
    assert hashlib.sha256(text.encode()).hexdigest() == vector["sha256"]


def test_selection_hash_spec_example() -> None:
    table = parse_tasks(SPEC_EXAMPLE_YAML)
    assert selection_hash_text("jev-1.13.0", 0.1, table) == SPEC_EXAMPLE_TEXT
    assert compute_selection_hash("jev-1.13.0", 0.1, table) == SPEC_EXAMPLE_HASH


@pytest.mark.parametrize(
    "variant",
    [
        # flow style, other key order, quoting, comments and explicit document markers
        '{"api_e2e": {"jobs": [{"job": "e2e", "workflow": ".github/workflows/ci.yml"}], '
        '"always": true, "description": "Runs the HTTP API end-to-end suite against PostgreSQL."},'
        ' "docs": {"force_paths": ["docs/**", "mkdocs.yml"], "always": false, '
        '"description": "Builds the documentation site with MkDocs."}}',
        "---\n# tasks\napi_e2e:\n  jobs:\n  - job: e2e\n    workflow: '.github/workflows/ci.yml'\n"
        "  description: >-\n    Runs the HTTP API end-to-end\n    suite against PostgreSQL.\n"
        '  always: TRUE\ndocs:\n  force_paths:\n    - "docs/**"\n    - mkdocs.yml\n'
        "  description: Builds the documentation site with MkDocs.  # trailing comment\n...\n",
    ],
)
def test_yaml_formatting_and_key_order_do_not_change_the_hash(variant: str) -> None:
    assert compute_selection_hash("jev-1.13.0", 0.1, parse_tasks(variant)) == SPEC_EXAMPLE_HASH


def test_hash_depends_on_model_threshold_and_content() -> None:
    table = parse_tasks(SPEC_EXAMPLE_YAML)
    hashes = {
        compute_selection_hash("jev-1.13.0", 0.1, table),
        compute_selection_hash("jev-1.13.1", 0.1, table),
        compute_selection_hash("jev-1.13.0", 0.2, table),
        compute_selection_hash("jev-1.13.0", 0.1, parse_tasks("docs: {description: x}")),
        compute_selection_hash(
            "jev-1.13.0", 0.1, parse_tasks(SPEC_EXAMPLE_YAML.replace("MkDocs.", "MkDocs!"))
        ),
    }
    assert len(hashes) == 5
    assert all(re.fullmatch(c.HEX64_PATTERN, value) for value in hashes)


def test_explicit_always_false_hashes_like_a_missing_one() -> None:
    explicit = parse_tasks("unit: {description: x, always: false}")
    implicit = parse_tasks("unit: {description: x}")
    assert compute_selection_hash("jev-1.13.0", 0.05, explicit) == compute_selection_hash(
        "jev-1.13.0", 0.05, implicit
    )


def test_empty_optional_lists_are_kept_in_the_hash() -> None:
    with_empty = parse_tasks("unit: {description: x, force_paths: []}")
    without = parse_tasks("unit: {description: x}")
    assert compute_selection_hash("jev-1.13.0", 0.05, with_empty) != compute_selection_hash(
        "jev-1.13.0", 0.05, without
    )
    assert '"force_paths":[]' in selection_hash_text("jev-1.13.0", 0.05, with_empty)


# --- property: accepted tables satisfy the compatibility schema and round-trip --------------------

# The spec's whitespace set equals ECMAScript's ``\s``; the compatibility schema's patterns are
# ECMAScript regular expressions, so ``\S`` is evaluated with that meaning rather than Python's.
_ECMA_NON_SPACE = "[^" + re.escape(c.WHITESPACE) + "]"


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    if isinstance(instance, str) and not re.search(
        pattern.replace("\\S", _ECMA_NON_SPACE), instance
    ):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def compat_validator() -> Any:
    schema = json.loads((TESTS / "compat" / "tasks-v5.schema.json").read_text("utf-8"))
    validator_class = jsonschema.validators.extend(
        jsonschema.Draft7Validator, {"pattern": _ecma_pattern}
    )
    return validator_class(schema)


COMPAT = compat_validator()

_id_text = st.from_regex(re.compile(c.TASK_ID_PATTERN, re.ASCII), fullmatch=True)
_any_text = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], max_codepoint=0x3100), max_size=12
)
# U+FFFE and U+FFFF are noncharacters the YAML reader refuses anywhere in a table.
_valid_text = st.text(
    st.characters(
        codec="utf-8",
        exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
        exclude_characters="\ufffe\uffff",
    ),
    min_size=1,
    max_size=12,
).filter(lambda text: text.strip(c.WHITESPACE) != "")
_valid_path = st.builds(
    "/".join, st.lists(st.sampled_from(["a", "src", ".github", "x.y", "é", "b-c"]), min_size=1)
)
# Each "{a,b}" doubles the brace expansion; nine of them (512 patterns) stay under the matcher's
# limit of 1,000, past which a glob is refused by design (tests/core/test_globs.py).
_valid_glob = st.builds(
    "/".join,
    st.lists(st.sampled_from(["a", "src", "**", "*.py", "{a,b}", "[ab]", "+(x|y)"]), min_size=1),
).filter(lambda glob: glob.count("{a,b}") <= 9)
_segment = st.sampled_from(["a", "src", ".github", "..", ".", "x.y", "**", "!x", "é", "", "\\\\"])
_pathish = st.builds("/".join, st.lists(_segment, min_size=1, max_size=4)) | _any_text
_anything = st.one_of(_any_text, _pathish, st.integers(), st.booleans(), st.none(), st.just([]))

_valid_body = st.fixed_dictionaries(
    {"description": _valid_text},
    optional={
        "always": st.booleans(),
        "jobs": st.lists(
            st.fixed_dictionaries({"workflow": _valid_path}, optional={"job": _valid_text}),
            min_size=1,
            max_size=2,
        ),
        "context_files": st.lists(_valid_path, max_size=3, unique=True),
        "force_paths": st.lists(_valid_glob, max_size=3, unique=True),
    },
)
_RESERVED_FOLDED = {task_id.lower() for task_id in c.RESERVED_TASK_IDS}
_valid_table = st.dictionaries(
    _id_text.filter(lambda task_id: task_id.lower() not in _RESERVED_FOLDED),
    _valid_body,
    max_size=4,
).filter(lambda table: len({task_id.lower() for task_id in table}) == len(table))


_FIELDS = ("description", "always", "jobs", "context_files", "force_paths", "question")


@st.composite
def _maybe_table(draw: st.DrawFn) -> dict[str, Any]:
    """A valid table, half of the time with one field or ID replaced by arbitrary data."""
    table: dict[str, Any] = draw(_valid_table)
    if not table or draw(st.booleans()):
        return table
    task_id = draw(st.sampled_from(sorted(table)))
    body = dict(table[task_id])
    target = draw(st.sampled_from([*_FIELDS, "job", "id"]))
    if target == "id":
        table[draw(st.one_of(_any_text, st.just(task_id.upper())))] = body
    elif target == "job":
        body["jobs"] = [{"workflow": draw(_pathish), "job": draw(_anything)}]
    elif target in ("context_files", "force_paths", "jobs"):
        body[target] = draw(st.lists(_anything, max_size=3))
    else:
        body[target] = draw(_anything)
    table[task_id] = body
    return table


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_maybe_table())
def test_accepted_tables_satisfy_the_compat_schema_and_round_trip(table: dict[str, Any]) -> None:
    text = json.dumps(table, ensure_ascii=False)
    rejected_field = None
    try:
        parsed = parse_tasks(text)
    except InputError as error:
        rejected_field = error.field
    if rejected_field is not None:
        assert rejected_field == "tasks"
        return
    normalised = parsed.to_json()
    errors = list(COMPAT.iter_errors(normalised))
    assert not errors, errors
    again = parse_tasks(json.dumps(normalised, ensure_ascii=False))
    assert again == parsed
    assert compute_selection_hash("jev-1.13.0", 0.05, again) == compute_selection_hash(
        "jev-1.13.0", 0.05, parsed
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_valid_table)
def test_valid_tables_are_accepted_and_hash_independent_of_key_order(
    table: dict[str, Any],
) -> None:
    parsed = parse_tasks(json.dumps(table, ensure_ascii=False))
    assert set(parsed.ids) == set(table)
    assert not list(COMPAT.iter_errors(parsed.to_json()))
    reordered = {task_id: dict(reversed(body.items())) for task_id, body in reversed(table.items())}
    assert compute_selection_hash(
        "jev-1.13.0", 0.5, parse_tasks(json.dumps(reordered, ensure_ascii=False))
    ) == compute_selection_hash("jev-1.13.0", 0.5, parsed)
