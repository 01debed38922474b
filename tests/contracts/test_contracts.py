"""Structural contract: action.yml, the schemas, the docs, the examples and the package agree with
``jev_select/contracts``.

Everything here parses (YAML, JSON, Markdown tables, Python AST); nothing greps.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from jev_select import contracts as c

ROOT = Path(__file__).resolve().parents[2]
ACTION_FILE = ROOT / "action.yml"
SCHEMA_DIR = ROOT / "jev_select" / "schemas"
PACKAGE_DIR = ROOT / "jev_select"
REFERENCE_DOC = ROOT / "docs" / "reference.md"
EXAMPLE_WORKFLOWS = sorted((ROOT / "examples").glob("*/.github/workflows/*.y*ml"))

SHA_PINNED_USES = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}")
# Any owner: the examples name the published repository, forks keep working.
THIS_ACTION_USES = re.compile(r"[A-Za-z0-9_.-]+/jev-select@\S+")
STEP_OUTPUT_READ = re.compile(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)")
NEEDS_OUTPUT_READ = re.compile(r"needs\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)")
EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)


def input_env_name(name: str) -> str:
    return "INPUT_" + name.upper().replace("-", "_")


def input_expression(name: str) -> str:
    return "${{ inputs." + name + " }}"


def output_expression(name: str) -> str:
    return "${{ steps.plan.outputs." + name + " }}"


@cache
def action() -> dict[str, Any]:
    loaded = yaml.safe_load(ACTION_FILE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def action_steps() -> list[dict[str, Any]]:
    steps = action()["runs"]["steps"]
    assert isinstance(steps, list)
    return steps


def action_step(step_id: str) -> dict[str, Any]:
    matches = [step for step in action_steps() if step.get("id") == step_id]
    assert len(matches) == 1, f"action.yml needs exactly one step with id {step_id!r}"
    return matches[0]


# ------------------------------------------------------------------------------------------
# action.yml
# ------------------------------------------------------------------------------------------


def test_action_inputs_have_the_contract_names_in_order() -> None:
    assert list(action()["inputs"]) == list(c.INPUT_NAMES)


@pytest.mark.parametrize("spec", c.INPUTS, ids=lambda spec: spec.name)
def test_action_input_declaration_matches_contracts(spec: c.InputSpec) -> None:
    declared = action()["inputs"][spec.name]
    assert declared["required"] is spec.required
    assert declared["description"] == spec.description
    if spec.required:
        # The CLI validates a blank value; a default would only hide a missing input.
        assert "default" not in declared
    else:
        assert isinstance(declared["default"], str), "quote defaults so YAML keeps them strings"
        assert declared["default"] == spec.action_default


def test_input_env_names_follow_the_runner_convention() -> None:
    for spec in c.INPUTS:
        assert spec.env == input_env_name(spec.name)


def test_plan_step_passes_every_input_through_env_and_nothing_else() -> None:
    plan = action_step("plan")
    expected = {spec.env: input_expression(spec.name) for spec in c.INPUTS}
    assert plan["env"] == expected
    assert list(plan["env"]) == list(expected)


def test_action_outputs_are_wired_to_the_plan_step() -> None:
    outputs = action()["outputs"]
    assert list(outputs) == list(c.OUTPUTS)
    for name in c.OUTPUTS:
        assert outputs[name]["value"] == output_expression(name)
        assert outputs[name]["description"] == c.OUTPUT_DESCRIPTIONS[name]


def test_action_runs_three_composite_steps_in_order() -> None:
    runs = action()["runs"]
    assert runs["using"] == "composite"
    assert [step.get("id") for step in action_steps()] == ["python", "install", "plan"]


def test_setup_python_is_pinned_private_and_311() -> None:
    setup = action_step("python")
    assert SHA_PINNED_USES.fullmatch(setup["uses"])
    assert setup["uses"].startswith("actions/setup-python@")
    assert setup["with"]["python-version"] == "3.11"
    assert str(setup["with"]["update-environment"]).lower() == "false"


def test_install_step_uses_the_interpreter_output_and_the_action_path() -> None:
    install = action_step("install")
    assert install["env"]["JEV_SELECT_PYTHON"] == "${{ steps.python.outputs.python-path }}"
    assert install["env"]["JEV_SELECT_ACTION_PATH"] == "${{ github.action_path }}"
    assert install["working-directory"] == "${{ runner.temp }}"
    # After the variable scrub (tests/e2e/test_action_shell.py), one line starts the installer.
    assert install["run"].endswith(
        '\nexec "$JEV_SELECT_PYTHON" -I "$JEV_SELECT_ACTION_PATH/action/install.py"\n'
    )


def test_every_run_step_is_bash_without_expressions() -> None:
    for step in action_steps():
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], "expressions in scripts allow script injection"


def test_every_nested_uses_is_pinned_by_full_sha_with_a_tag_comment() -> None:
    raw_lines = ACTION_FILE.read_text(encoding="utf-8").splitlines()
    for step in action_steps():
        if "uses" in step:
            assert SHA_PINNED_USES.fullmatch(step["uses"]), step["uses"]
            line = next(text for text in raw_lines if step["uses"] in text)
            assert re.search(r"#\s*v[0-9]", line), "name the release tag in a comment"


# ------------------------------------------------------------------------------------------
# Schemas
# ------------------------------------------------------------------------------------------


@cache
def schema(file_name: str) -> dict[str, Any]:
    loaded = json.loads((SCHEMA_DIR / file_name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def resolve(root: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow local ``$ref`` links until a node that defines something itself."""
    while "$ref" in node:
        pointer = node["$ref"]
        assert pointer.startswith("#/"), pointer
        target: Any = root
        for part in pointer[2:].split("/"):
            target = target[part]
        node = target
    return node


def at(root: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    node = resolve(root, root)
    for key in path:
        node = resolve(root, node[key])
    return node


def anchored(pattern: str) -> str:
    return "^" + pattern + "$"


def enum_without_null(node: Mapping[str, Any]) -> list[Any]:
    return [value for value in node["enum"] if value is not None]


def test_report_schema_version_title_and_root_fields() -> None:
    report = schema(c.REPORT_SCHEMA_FILE)
    assert report["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert report["title"] == c.REPORT_SCHEMA_TITLE
    assert at(report, "properties", "version")["const"] == c.REPORT_VERSION
    assert report["required"] == list(c.REPORT_FIELDS)
    assert list(report["properties"]) == list(c.REPORT_FIELDS)
    assert report["additionalProperties"] is False


def test_report_schema_vocabularies() -> None:
    report = schema(c.REPORT_SCHEMA_FILE)
    assert at(report, "properties", "mode")["enum"] == list(c.MODES)
    assert at(report, "properties", "status")["enum"] == list(c.STATUSES)
    assert at(report, "properties", "tested_ref")["enum"] == list(c.TESTED_REFS)
    assert at(report, "properties", "observation_error")["enum"] == [*c.OBSERVATION_ERRORS, None]
    decision = at(report, "properties", "tasks", "additionalProperties")
    assert at(report, "properties", "tasks", "propertyNames")["pattern"] == anchored(
        c.TASK_ID_PATTERN
    )
    assert resolve(report, decision["properties"]["reasons"]["items"])["enum"] == list(c.REASONS)


def test_report_schema_observation_vocabularies() -> None:
    report = schema(c.REPORT_SCHEMA_FILE)
    observation = report["properties"]["observation"]
    branches = [resolve(report, node) for node in observation.get("anyOf", [observation])]
    records = [node for node in branches if "properties" in node]
    assert len(records) == 1
    record = records[0]
    assert resolve(report, record["properties"]["strategy"])["enum"] == list(c.STRATEGIES)
    assert resolve(report, record["properties"]["status"])["enum"] == list(c.OBSERVATION_STATUSES)
    chunk = resolve(report, record["properties"]["chunks"]["items"])
    assert resolve(report, chunk["properties"]["status"])["enum"] == list(c.GROUP_STATUSES)
    assert enum_without_null(resolve(report, chunk["properties"]["error"])) == list(
        c.REQUEST_ERRORS
    )


def test_plan_block_schema_matches_contracts() -> None:
    block = schema(c.PLAN_BLOCK_SCHEMA_FILE)
    assert block["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert at(block, "properties", "schemaVersion")["const"] == c.PLAN_SCHEMA_VERSION
    assert c.PLAN_SCHEMA_VERSION in c.PLAN_SCHEMA_VERSIONS
    assert at(block, "properties", "reportVersion")["const"] == c.REPORT_VERSION
    assert at(block, "properties", "mode")["enum"] == list(c.MODES)
    assert at(block, "properties", "status")["enum"] == list(c.STATUSES)
    assert at(block, "properties", "run", "propertyNames")["pattern"] == anchored(c.TASK_ID_PATTERN)
    assert at(block, "properties", "selected", "items")["pattern"] == anchored(c.TASK_ID_PATTERN)


def test_tasks_schema_ids_reserved_names_and_fields() -> None:
    tasks = schema(c.TASKS_SCHEMA_FILE)
    assert tasks["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    task_id = resolve(tasks, tasks["propertyNames"])
    assert task_id["pattern"] == anchored(c.TASK_ID_PATTERN)
    assert task_id["not"]["enum"] == list(c.RESERVED_TASK_IDS)
    task = resolve(tasks, tasks["additionalProperties"])
    assert task["additionalProperties"] is False
    assert list(task["properties"]) == list(c.TASK_FIELDS)
    assert task["required"] == [c.TASK_FIELD_DESCRIPTION]


# ------------------------------------------------------------------------------------------
# docs/reference.md
# ------------------------------------------------------------------------------------------


def split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [cell.strip().replace("\\|", "|") for cell in cells]


@cache
def doc_tables() -> dict[str, list[list[str]]]:
    """The first table under every ``## `` heading, without its header and rule rows."""
    tables: dict[str, list[list[str]]] = {}
    heading: str | None = None
    collecting = False
    for line in REFERENCE_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            heading, collecting = line[3:].strip(), False
        elif heading is not None and line.startswith("|"):
            if heading not in tables:
                tables[heading], collecting = [], True
            if collecting:
                tables[heading].append(split_row(line))
        else:
            collecting = False
    return {name: rows[2:] for name, rows in tables.items()}


def doc_table(heading: str) -> list[list[str]]:
    tables = doc_tables()
    assert heading in tables, f"docs/reference.md needs a table under '## {heading}'"
    return tables[heading]


def code_name(cell: str) -> str:
    match = re.fullmatch(r"`([^`]*)`", cell)
    assert match, f"the first column holds one backquoted name, not {cell!r}"
    return match.group(1)


def test_docs_input_table_matches_contracts() -> None:
    rows = doc_table("Inputs")
    assert [code_name(row[0]) for row in rows] == list(c.INPUT_NAMES)
    for row, spec in zip(rows, c.INPUTS, strict=True):
        assert row[1] == f"`{spec.env}`"
        shown = spec.action_default or "''"
        expected_default = "required" if spec.required else f"`{shown}`"
        assert row[2] == expected_default


def test_docs_output_table_matches_contracts() -> None:
    assert [code_name(row[0]) for row in doc_table("Outputs")] == list(c.OUTPUTS)


def test_docs_status_table_matches_contracts() -> None:
    assert [code_name(row[0]) for row in doc_table("Statuses")] == list(c.STATUSES)


def test_docs_reason_table_matches_contracts_in_enum_order() -> None:
    rows = doc_table("Reason codes")
    assert [code_name(row[0]) for row in rows] == list(c.REASONS)
    for row in rows:
        assert row[1] == c.REASON_MEANINGS[code_name(row[0])]


def test_docs_failure_table_matches_contracts() -> None:
    assert [code_name(row[0]) for row in doc_table("Failure codes")] == list(c.FAILURE_CODES)


def test_docs_input_error_table_matches_contracts() -> None:
    rows = doc_table("Input errors")
    assert [code_name(row[0]) for row in rows] == list(c.INPUT_CONSTRAINTS)
    for row in rows:
        assert row[1] == f"`{c.INPUT_CONSTRAINTS[code_name(row[0])]}`"


def test_docs_give_the_cancellation_lines_verbatim() -> None:
    text = REFERENCE_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Cancellation\n", 1)[1].split("\n## ", 1)[0]
    for message in (c.CANCELLED_MESSAGE, c.CANCELLED_AFTER_PUBLICATION_MESSAGE):
        assert f"`{message}`" in section


def test_docs_task_field_table_matches_contracts() -> None:
    assert [code_name(row[0]) for row in doc_table("Task fields")] == list(c.TASK_FIELDS)


def test_docs_report_field_table_matches_contracts() -> None:
    assert [code_name(row[0]) for row in doc_table("Report fields")] == list(c.REPORT_FIELDS)


def test_docs_warning_table_matches_contracts() -> None:
    names = [code_name(row[0]) for row in doc_table("Metadata warnings")]
    assert [name.split("<", 1)[0] for name in names] == list(c.WARNING_PREFIXES)
    # The bare name and the form of the detail, kind by kind.
    assert names == [kind.prefix + kind.detail for kind in c.GAP_KINDS]


def test_gap_registry_is_the_one_vocabulary_of_gaps() -> None:
    names = [kind.name for kind in c.GAP_KINDS]
    assert names == list(c.GAP_NAMES)
    assert len(set(names)) == len(names)
    assert dict(zip(names, c.GAP_KINDS, strict=True)) == c.GAP_KIND_BY_NAME
    assert tuple(kind.prefix for kind in c.GAP_KINDS) == c.WARNING_PREFIXES
    assert tuple(kind.name for kind in c.GAP_KINDS if kind.check_error) == c.CHECK_GAP_ERRORS
    locators = {c.GAP_AT_CONTEXT_FILE, c.GAP_AT_JOB, c.GAP_AT_WORKFLOW}
    for kind in c.GAP_KINDS:
        # The bare name is the check's problem code; a warning without a detail has no colon.
        assert re.fullmatch(c.CHECK_CODE_PATTERN, kind.name), kind.name
        assert kind.prefix == (kind.name + ":" if kind.detail else kind.name)
        assert kind.warning("x") == kind.prefix + "x"
        assert kind.locator in locators, kind.name
        if kind.check_message is not None:
            kind.check_message.format(detail="d", commit="c", workflow="w", job="j")
        # Every error names something of the table that is not there: it has its own text.
        assert not kind.check_error or kind.check_message is not None, kind.name
    job_kinds = [kind for kind in c.GAP_KINDS if kind.locator == c.GAP_AT_JOB]
    assert all(kind.detail.endswith("#<job>") for kind in job_kinds)


def test_docs_check_section_names_the_gap_errors() -> None:
    text = REFERENCE_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Checking a task table\n", 1)[1].split("\n## ", 1)[0]
    sentence = " ".join(section.split()).split("under the gap's own name", 1)[1]
    # The names of the sentence that ends "are errors", without its parenthetical remarks.
    errors = re.sub(r"\([^)]*\)", "", sentence.split(" are errors", 1)[0])
    named = re.findall(r"`([^`]*)`", errors)
    assert len(named) == len(set(named))
    assert set(named) == set(c.CHECK_GAP_ERRORS)


def test_the_package_emits_gaps_through_the_registry() -> None:
    """Outside the contracts, a gap is written as ``GapKind.warning``, never from a prefix."""
    spelled = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if path.parent == PACKAGE_DIR / "contracts":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("WARN_"):
                spelled.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.attr}")
    assert not spelled, spelled


# ------------------------------------------------------------------------------------------
# Example workflows
# ------------------------------------------------------------------------------------------


def load_workflow(path: Path) -> dict[str, Any]:
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def triggers(workflow: Mapping[Any, Any]) -> set[str]:
    # YAML 1.1 reads the key `on` as True.
    value = workflow.get("on", workflow.get(True))
    if isinstance(value, str):
        return {value}
    assert isinstance(value, (list, dict))
    return {str(name) for name in value}


def strings_in(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from strings_in(key)
            yield from strings_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings_in(item)


def is_this_action(step: Mapping[str, Any]) -> bool:
    return isinstance(step.get("uses"), str) and bool(THIS_ACTION_USES.fullmatch(step["uses"]))


def runs_cli_plan(step: Mapping[str, Any]) -> bool:
    script = step.get("run")
    return isinstance(script, str) and bool(
        re.search(r"(?:jev-select\S*\"?|-m jev_select)\s+plan\b", script)
    )


def cli_task_ids(step: Mapping[str, Any]) -> set[str]:
    tasks = yaml.safe_load(step["env"][c.INPUTS[0].env])
    assert isinstance(tasks, dict)
    return set(tasks)


def cli_inputs(step: Mapping[str, Any]) -> dict[str, str]:
    env = step.get("env", {})
    return {spec.name: env[spec.env] for spec in c.INPUTS if spec.env in env}


def example_jobs() -> Iterator[tuple[Path, str, dict[str, Any]]]:
    for path in EXAMPLE_WORKFLOWS:
        for job_id, job in load_workflow(path)["jobs"].items():
            yield path, job_id, job


def runs_cli_command(step: Mapping[str, Any], command: str) -> bool:
    script = step.get("run")
    return isinstance(script, str) and bool(
        re.search(rf"(?:jev-select\S*\"?|-m jev_select)\s+{re.escape(command)}\b", script)
    )


# Examples of the measurement commands, which run after the fact and plan nothing.
MEASUREMENT_EXAMPLES = {
    "rollout-report": (c.COMMAND_ROLLOUT, c.COMMAND_CALIBRATE),
    "ceiling-weekly": (c.COMMAND_HISTORY, c.COMMAND_CALIBRATE),
}


def test_examples_exist_for_every_scenario() -> None:
    scenarios = {path.parents[2].name for path in EXAMPLE_WORKFLOWS}
    assert len(scenarios) >= 6
    assert set(MEASUREMENT_EXAMPLES) <= scenarios
    for path in EXAMPLE_WORKFLOWS:
        steps = [
            step for job in load_workflow(path)["jobs"].values() for step in job.get("steps", [])
        ]
        scenario = path.parents[2].name
        if scenario in MEASUREMENT_EXAMPLES:
            for command in MEASUREMENT_EXAMPLES[scenario]:
                assert any(runs_cli_command(step, command) for step in steps), (path, command)
            assert not any(is_this_action(step) or runs_cli_plan(step) for step in steps)
            continue
        assert any(is_this_action(step) or runs_cli_plan(step) for step in steps), (
            f"{path} never runs the selector"
        )


def test_examples_use_only_declared_inputs() -> None:
    for path, job_id, job in example_jobs():
        for step in job.get("steps", []):
            if is_this_action(step):
                given = set(step.get("with", {}))
                assert given <= set(c.INPUT_NAMES), (path, job_id, given - set(c.INPUT_NAMES))
                # Exactly one source of the table.
                assert len(given & {c.INPUT_TASKS, c.INPUT_TASKS_FILE}) == 1, (path, job_id)
            if runs_cli_plan(step):
                env = set(step.get("env", {}))
                declared = {spec.env for spec in c.INPUTS}
                assert {name for name in env if name.startswith("INPUT_")} <= declared
                assert c.INPUTS[0].env in env


def test_examples_read_only_declared_outputs() -> None:
    for path, job_id, job in example_jobs():
        allowed: dict[str, set[str]] = {}
        for step in job.get("steps", []):
            if is_this_action(step):
                allowed[step["id"]] = set(c.OUTPUTS)
            elif runs_cli_plan(step):
                # The CLI also writes one named output per task.
                allowed[step["id"]] = set(c.OUTPUTS) | cli_task_ids(step)
        for text in strings_in(job):
            for step_id, name in STEP_OUTPUT_READ.findall(text):
                if step_id in allowed:
                    assert name in allowed[step_id], (path, job_id, step_id, name)


def test_examples_read_only_forwarded_job_outputs() -> None:
    for path in EXAMPLE_WORKFLOWS:
        jobs = load_workflow(path)["jobs"]
        for job_id, job in jobs.items():
            for text in strings_in(job):
                for needed, name in NEEDS_OUTPUT_READ.findall(text):
                    assert needed in jobs, (path, job_id, needed)
                    assert name in jobs[needed].get("outputs", {}), (path, job_id, needed, name)


def test_example_selector_jobs_are_isolated() -> None:
    for path in EXAMPLE_WORKFLOWS:
        workflow = load_workflow(path)
        assert "pull_request_target" not in triggers(workflow)
        assert workflow.get("permissions") == {}, f"{path}: grant permissions per job"
        for job_id, job in workflow["jobs"].items():
            steps = job.get("steps", [])
            selectors = [step for step in steps if is_this_action(step) or runs_cli_plan(step)]
            if not selectors:
                continue
            permissions = job["permissions"]
            assert permissions.get("contents") == "read", (path, job_id)
            assert set(permissions.values()) == {"read"}, (path, job_id)
            assert not any(
                str(step.get("uses", "")).startswith("actions/checkout@") for step in steps
            ), f"{path}:{job_id} checks out code in the job that holds the key"
            for step in selectors:
                given = step["with"] if is_this_action(step) else cli_inputs(step)
                assert given[c.INPUT_API_KEY] == "${{ secrets.JEV_API_KEY }}"
                assert given[c.INPUT_ALLOW_EXTERNAL_CONTEXT] == c.BOOL_TRUE


def test_example_triggers_fit_their_scenario() -> None:
    for path in EXAMPLE_WORKFLOWS:
        names = triggers(load_workflow(path))
        uses_manual_input = any(
            c.INPUT_PULL_REQUEST in step.get("with", {})
            for job in load_workflow(path)["jobs"].values()
            for step in job.get("steps", [])
        )
        if uses_manual_input:
            assert names == {"workflow_dispatch"}, path
        elif path.parents[2].name in MEASUREMENT_EXAMPLES:
            # Measurements run after the fact, never on a pull request's event.
            assert names == {"schedule", "workflow_dispatch"}, path
        else:
            assert "pull_request" in names, path
        selects_in_queue = any(
            step.get("with", {}).get(c.INPUT_MERGE_GROUP) == c.MERGE_GROUP_SELECT
            for job in load_workflow(path)["jobs"].values()
            for step in job.get("steps", [])
        )
        # merge-group: select only means something where merge_group triggers the workflow.
        assert selects_in_queue == ("merge_group" in names), path


def test_example_third_party_actions_are_pinned_with_tag_comments() -> None:
    for path in EXAMPLE_WORKFLOWS:
        raw = path.read_text(encoding="utf-8").splitlines()
        for job in load_workflow(path)["jobs"].values():
            for step in job.get("steps", []):
                uses = step.get("uses")
                if uses is None or is_this_action(step):
                    continue
                assert SHA_PINNED_USES.fullmatch(uses), (path, uses)
                line = next(text for text in raw if uses in text)
                assert re.search(r"#\s*v[0-9]", line), (path, uses)


SHADOW_ARTIFACT = (
    f"{c.ROLLOUT_ARTIFACT_PREFIX}${{{{ github.run_id }}}}-${{{{ github.run_attempt }}}}"
)


def test_the_documented_artifact_name_is_the_one_rollout_reads() -> None:
    named = SHADOW_ARTIFACT.replace("${{ github.run_id }}", "4242").replace(
        "${{ github.run_attempt }}", "2"
    )
    found = re.fullmatch(c.ROLLOUT_ARTIFACT_PATTERN, named)
    assert found is not None
    assert (found["run_id"], found["attempt"]) == ("4242", "2")
    assert f"`{SHADOW_ARTIFACT}`" in (ROOT / "docs" / "shadow-mode.md").read_text("utf-8")


def test_every_rollout_detail_is_in_the_vocabulary_and_the_guide() -> None:
    declared = {
        value
        for name, value in vars(c).items()
        if name.startswith("ROLLOUT_DETAIL_") and isinstance(value, str)
    }
    assert set(c.ROLLOUT_DETAILS) == declared
    assert len(c.ROLLOUT_DETAILS) == len(declared)
    guide = (ROOT / "docs" / "shadow-mode.md").read_text("utf-8")
    assert [detail for detail in c.ROLLOUT_DETAILS if f"`{detail}`" not in guide] == []


def test_shadow_archives_use_the_documented_artifact() -> None:
    uploads = 0
    for path, job_id, job in example_jobs():
        for step in job.get("steps", []):
            if str(step.get("uses", "")).startswith("actions/upload-artifact@"):
                assert step["with"]["retention-days"] == 14
                assert step.get("continue-on-error") is True
                if path.parents[2].name in MEASUREMENT_EXAMPLES:
                    continue
                uploads += 1
                assert step["with"]["name"] == SHADOW_ARTIFACT
                assert step["with"]["path"].endswith(f".outputs.{c.OUTPUT_REPORT_PATH} }}}}")
            elif is_this_action(step):
                assert "continue-on-error" not in step, (path, job_id)
    assert uploads >= 2


def test_example_scripts_contain_no_expressions() -> None:
    for path, job_id, job in example_jobs():
        for step in job.get("steps", []):
            if "run" in step:
                assert not EXPRESSION.search(step["run"]), (path, job_id)
                assert step.get("shell") == "bash", (path, job_id)


# ------------------------------------------------------------------------------------------
# No owned string outside jev_select/contracts (AST)
# ------------------------------------------------------------------------------------------

# Literals that equal an owned string but name another concept. Keep this short.
ALLOWED_LITERALS: dict[tuple[str, str], str] = {
    ("core.evidence.resolve", "run"): "the `run:` key of a workflow step, not the output",
    ("core.evidence.resolve", "incomplete"): "the evidence and job_metadata key, not the "
    "observation status",
    ("core.evidence.workflow_shapes", "run"): "the `run:` key of a workflow step, not the output",
    ("core.evidence.workflow_shapes", "matrix"): "a job's `strategy.matrix`, not the output",
    ("core.evidence.steps", "run"): "the `run:` key of a step's evidence entry, not the output",
    ("core.evidence.package_managers.builtins", "run"): "the package managers' `run` command, "
    "not the output",
    ("core.report", "incomplete"): "the job_metadata key, not the observation status",
    ("core.questions", "model"): "the model field of the System One request body",
    ("edges.httpio", "status"): "the HTTP failure kind for a non-2xx answer",
    ("edges.environment", "head"): "the head object of a pull_request payload",
    ("cli.plan_github", "head"): "the head object of the pull request API answer",
    ("core.rollout", "head"): "the head object of a workflow run's pull request record",
    ("core.rollout", "status"): "the status field of a workflow run record",
    ("edges.github.actions", "status"): "the status filter of GitHub's workflow-runs listing",
    ("core.check.consumers", "matrix"): "a job's `strategy.matrix`, not the output",
    ("core.check.reads", "matrix"): "the `matrix` context of an expression, not the output",
    ("core.check.reads", "always"): "the status function always(), not the reason",
}


def owned_strings() -> dict[str, str]:
    owned: dict[str, str] = {}
    groups: dict[str, tuple[str, ...]] = {
        "input name": c.INPUT_NAMES,
        "input variable": tuple(spec.env for spec in c.INPUTS),
        "output name": c.OUTPUTS,
        "mode": c.MODES,
        "tested ref": c.TESTED_REFS,
        "merge-group value": c.MERGE_GROUP_MODES,
        "status": c.STATUSES,
        "reason code": c.REASONS,
        "reserved task ID": c.RESERVED_TASK_IDS,
        "failure code": c.FAILURE_CODES,
        "warning prefix": c.WARNING_PREFIXES,
        "gap name": c.GAP_NAMES,
        "analysis code": c.ANALYSIS_CODES,
        "observation vocabulary": c.STRATEGIES + c.OBSERVATION_STATUSES + c.GROUP_STATUSES,
        "marker": (c.PLAN_BLOCK_MARKER, c.REPORT_SCHEMA_TITLE),
        "default": (c.DEFAULT_MODEL, c.DEFAULT_API_BASE_URL, c.SYSTEM_ONE_PATH),
        "pattern": (c.TASK_ID_PATTERN, c.MODEL_PATTERN),
    }
    for kind, values in groups.items():
        for value in values:
            owned.setdefault(value, kind)
    return owned


def message_fragments() -> set[str]:
    """The fixed parts of every message text; a module must not rebuild one by hand."""
    texts = [
        c.INPUT_ERROR_TEMPLATE,
        c.FAILURE_TEMPLATE,
        c.CANCELLED_MESSAGE,
        c.CANCELLED_AFTER_PUBLICATION_MESSAGE,
        c.LOG_LINE_TEMPLATE,
        c.SUMMARY_UNAVAILABLE_WARNING,
        c.PLAN_BLOCK_OMITTED_WARNING,
        c.ANALYSIS_FAILURE_TEMPLATE,
        c.SUMMARY_HEADING_TEMPLATE,
        c.SUMMARY_SHADOW_SENTENCE,
        c.SUMMARY_SCORE_DISCLAIMER,
        c.SUMMARY_GROUP_TABLE_OMITTED,
        c.SUMMARY_MORE_TASKS_TEMPLATE,
        c.QUESTION_JUDGMENT,
        c.QUESTION_SCOPE,
        c.QUESTION_TRUE,
        c.QUESTION_FALSE,
        c.QUESTION_CHUNK_SCOPE,
        *c.SUMMARY_STATUS_SENTENCES.values(),
        *c.INPUT_CONSTRAINTS.values(),
    ]
    fragments = set()
    for text in texts:
        for fragment in re.split(r"\{[a-z_]*\}", text):
            if len(fragment.strip()) >= 16:
                fragments.add(fragment)
    return fragments


def docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _module_of(path: Path) -> str:
    """The module's dotted name below the package (``core.evidence.resolve``): a file's stem alone
    is not unique once modules are grouped in packages."""
    return ".".join(path.relative_to(PACKAGE_DIR).with_suffix("").parts)


def owned_literal_violations() -> list[str]:
    owned = owned_strings()
    fragments = message_fragments()
    violations = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        module = _module_of(path)
        if path.parent == PACKAGE_DIR / "contracts":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        docstrings = docstring_nodes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if id(node) in docstrings:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if node.value in owned and (module, node.value) not in ALLOWED_LITERALS:
                violations.append(f"{where}: {node.value!r} is an owned {owned[node.value]}")
            for fragment in fragments:
                if fragment in node.value:
                    violations.append(f"{where}: spells part of a message text: {fragment!r}")
    return violations


def test_no_module_spells_an_owned_string() -> None:
    violations = owned_literal_violations()
    assert not violations, "use the constant from jev_select.contracts:\n" + "\n".join(violations)


def test_allowlist_names_existing_modules() -> None:
    modules = {_module_of(path) for path in PACKAGE_DIR.rglob("*.py")}
    for module, literal in ALLOWED_LITERALS:
        assert module in modules, module
        assert literal in owned_strings(), literal
