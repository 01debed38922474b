"""The local preview (``core.preview``): the policy of a keyed run, applied without scores.

Every plan here comes from ``core.policy.decide``, as the pipeline's preview makes it, so what is
tested is how the preview reads and writes the keyed run's own decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jsonschema
import pytest
from support.planoutput import plan_output_schema, preview_schema, validate_plan_output
from test_report import bypass_report

from jev_select import contracts as c
from jev_select.core.models import ChangeFacts, Evaluation
from jev_select.core.policy import decide
from jev_select.core.preview import (
    PatchSize,
    PreviewFacts,
    kept_whole_reason,
    patch_line,
    plan_output_json,
    preview_json,
    protected_path,
    render_preview,
)
from jev_select.core.report_v5 import parse_report
from jev_select.core.tasks import parse_tasks

TABLE = parse_tasks(
    "lint:\n  description: Lints.\n  always: true\n"
    "api:\n  description: Checks the API.\n"
    "docs:\n  description: Builds the docs.\n  force_paths: [docs/**]\n"
)
WORKFLOW = ".github/workflows/ci.yml"


def facts(
    paths: Sequence[str] | None,
    *,
    collection_error: str | None = None,
    grouping_error: str | None = None,
    requests: int = 0,
    protected: Sequence[str] = (),
    gaps: dict[str, tuple[str, ...]] | None = None,
    incomplete: frozenset[str] = frozenset(),
    patch: PatchSize | None = None,
    diff_bytes: int | None = None,
) -> PreviewFacts:
    """The preview of a change, its plan made by ``decide`` as the pipeline makes it."""
    changed = tuple(paths) if paths is not None else None
    plan = decide(
        TABLE,
        mode=c.MODE_ENFORCE,
        bypass=None,
        change=ChangeFacts(
            changed_paths=changed,
            collection_error=collection_error,
            metadata_incomplete=incomplete,
        ),
        evaluation=Evaluation(grouping_error=grouping_error),
        protected_paths=protected,
    )
    return PreviewFacts(
        plan=plan,
        changed_paths=changed,
        collection_error=collection_error,
        gaps=gaps or {},
        requests=requests,
        protected_path=protected_path(changed, protected),
        patch=patch,
        diff_bytes=diff_bytes,
    )


def keyed_line(preview: PreviewFacts) -> str:
    lines = render_preview(TABLE, preview).splitlines()
    assert lines[0] == c.PREVIEW_HEADING
    assert lines[-1] == c.PREVIEW_HINT
    return lines[-2]


def keyed_run(preview: PreviewFacts) -> dict[str, Any]:
    value = preview_json(TABLE, preview)[c.PREVIEW_KEYED_RUN]
    assert isinstance(value, dict)
    return value


def test_the_tasks_jev_would_be_asked_about_and_the_requests() -> None:
    text = render_preview(TABLE, facts(["src/a.py"], requests=2))
    assert text.splitlines() == [
        c.PREVIEW_HEADING,
        "  1 changed file(s):",
        "    src/a.py",
        "  kept: lint (always)",
        "  with a key, Jev would be asked about 2 of 3 task(s): api, docs (2 request(s))",
        c.PREVIEW_HINT,
    ]


def test_nothing_to_ask_names_no_request_count() -> None:
    table = parse_tasks("lint:\n  description: Lints.\n  always: true\n")
    plan = decide(table, mode=c.MODE_ENFORCE, bypass=None, change=ChangeFacts(changed_paths=()))
    preview = PreviewFacts(plan=plan, changed_paths=(), collection_error=None, gaps={}, requests=0)
    assert (
        "  with a key, Jev would be asked about 0 of 1 task(s)"
        in render_preview(table, preview).splitlines()
    )


def test_patterns_and_gaps_keep_their_tasks() -> None:
    preview = facts(
        ["docs/a.md"],
        requests=1,
        gaps={"api": ("job-missing:ci.yml#API",)},
        incomplete=frozenset({"api"}),
    )
    lines = render_preview(TABLE, preview).splitlines()
    assert "  kept: api (gaps: job-missing:ci.yml#API)" in lines
    assert "  kept: docs (docs/** matched docs/a.md)" in lines
    assert keyed_line(preview) == "  with a key, Jev would be asked about 0 of 3 task(s)"
    value = preview_json(TABLE, preview)
    assert value[c.PREVIEW_FORCED_TASKS] == [
        {"task": "api", "reasons": ["metadata-unavailable"], "pattern": None, "path": None},
        {"task": "docs", "reasons": ["path-match"], "pattern": "docs/**", "path": "docs/a.md"},
        {"task": "lint", "reasons": ["always"], "pattern": None, "path": None},
    ]
    assert value[c.PREVIEW_GAPS] == {"api": ["job-missing:ci.yml#API"]}


def test_a_workflow_edit_keeps_every_task_and_names_the_path() -> None:
    preview = facts([WORKFLOW, "src/a.py"], requests=1)
    assert kept_whole_reason(preview.plan) == c.REASON_PROTECTED_PATH
    assert keyed_line(preview) == (
        "  with a key, every task would run: protected-path (.github/workflows/ci.yml changed); "
        "Jev would still be sent 1 request(s), its answers recorded and not applied"
    )
    assert "Jev would be asked" not in render_preview(TABLE, preview)
    assert keyed_run(preview) == {
        "reason": "protected-path",
        "path": WORKFLOW,
        "patch_bytes": None,
        "limit_bytes": None,
        "limit_groups": None,
        "candidates": [],
        "requests": 1,
    }


def test_the_tasks_file_is_protected_when_the_keyed_run_protects_it() -> None:
    preview = facts(["src/a.py", "ci/tasks.yml"], protected=("ci/tasks.yml",), requests=1)
    assert keyed_run(preview)["reason"] == c.REASON_PROTECTED_PATH
    assert keyed_run(preview)["path"] == "ci/tasks.yml"
    # Not protected by a keyed run: not protected here either.
    assert keyed_run(facts(["src/a.py", "ci/tasks.yml"]))["reason"] is None


def test_the_protected_path_is_the_first_the_policy_protects() -> None:
    assert protected_path(["a.py", ".github/workflows/b.yml", WORKFLOW], ()) == (
        ".github/workflows/b.yml"
    )
    assert protected_path([".github/dependabot.yml"], ()) is None
    assert protected_path(None, ()) is None


def test_a_binary_change_keeps_every_task_and_sends_nothing() -> None:
    preview = facts(["logo.png"], collection_error=c.REASON_BINARY_CHANGE)
    assert keyed_line(preview) == (
        "  with a key, every task would run: binary-change; no request would be sent"
    )
    run = keyed_run(preview)
    assert run["reason"] == c.REASON_BINARY_CHANGE
    assert run["requests"] == 0
    assert run["candidates"] == []


def test_a_patch_over_the_limit_gives_its_size_and_the_limit() -> None:
    preview = facts(
        ["src/big.py"],
        collection_error=c.REASON_DIFF_TOO_LARGE,
        patch=PatchSize(limit_bytes=65536, patch_bytes=70123),
    )
    assert keyed_line(preview) == (
        "  with a key, every task would run: diff-too-large (the patch is 70123 bytes, over the "
        "max-diff-bytes limit of 65536 bytes); no request would be sent"
    )
    run = keyed_run(preview)
    assert (run["reason"], run["patch_bytes"], run["limit_bytes"]) == (
        c.REASON_DIFF_TOO_LARGE,
        70123,
        65536,
    )


def test_a_patch_too_large_to_measure_says_so() -> None:
    preview = facts(
        ["src/big.py"],
        collection_error=c.REASON_DIFF_TOO_LARGE,
        patch=PatchSize(limit_bytes=100, patch_bytes=None),
    )
    assert (
        f"(the patch is over {c.PATCH_MEASURE_CAP} bytes, past the max-diff-bytes limit of "
        "100 bytes)"
    ) in keyed_line(preview)
    assert keyed_run(preview)["patch_bytes"] is None
    assert keyed_run(preview)["limit_bytes"] == 100


def test_another_size_cap_gives_the_code_alone() -> None:
    # A blob over its cap: the patch itself was within the limit, so no size is claimed.
    preview = facts(["src/huge.bin"], collection_error=c.REASON_DIFF_TOO_LARGE)
    assert keyed_line(preview) == (
        "  with a key, every task would run: diff-too-large; no request would be sent"
    )
    assert keyed_run(preview)["patch_bytes"] is None


def test_a_change_that_cannot_be_grouped_runs_everything() -> None:
    preview = facts(["docs/a.md"], grouping_error=c.REASON_DIFF_TOO_LARGE, diff_bytes=2_000_000)
    assert keyed_line(preview) == (
        "  with a key, every task would run: diff-too-large (the patch of 2000000 bytes needs "
        "more than 64 groups); no request would be sent"
    )
    run = keyed_run(preview)
    assert (run["patch_bytes"], run["limit_bytes"], run["limit_groups"]) == (2_000_000, None, 64)
    context = facts(["src/a.py"], grouping_error=c.REASON_CONTEXT_TOO_LARGE)
    assert keyed_line(context) == (
        "  with a key, every task would run: context-too-large; no request would be sent"
    )


def test_a_change_that_was_not_collected() -> None:
    preview = facts(None, collection_error=c.REASON_GIT_FETCH_FAILED)
    lines = render_preview(TABLE, preview).splitlines()
    assert "  the change could not be collected (git-fetch-failed)" in lines
    assert keyed_line(preview) == (
        "  with a key, every task would run: git-fetch-failed; no request would be sent"
    )
    assert preview_json(TABLE, preview)[c.PREVIEW_CHANGED_FILES] is None


@pytest.mark.parametrize(
    "preview",
    [
        facts(["src/a.py"], requests=2),
        facts([WORKFLOW], requests=1),
        facts(["logo.png"], collection_error=c.REASON_BINARY_CHANGE),
        facts(["a"], collection_error=c.REASON_DIFF_TOO_LARGE, patch=PatchSize(1, 5)),
        facts(["a"], collection_error=c.REASON_DIFF_TOO_LARGE, patch=PatchSize(1, None)),
        facts(["a"], grouping_error=c.REASON_DIFF_TOO_LARGE, diff_bytes=9),
        facts(None, collection_error=c.REASON_SHA_INCOHERENT),
    ],
    ids=["asked", "protected", "binary", "over-limit", "unmeasured", "groups", "uncollected"],
)
def test_the_document_matches_its_schema(preview: PreviewFacts) -> None:
    report = parse_report(bypass_report())
    document = plan_output_json(report, preview_json(TABLE, preview))
    validate_plan_output(document)
    assert list(document) == list(c.PLAN_OUTPUT_FIELDS)
    value = document[c.PLAN_OUTPUT_PREVIEW]
    assert isinstance(value, dict)
    assert list(value) == list(c.PREVIEW_FIELDS)
    assert list(value[c.PREVIEW_KEYED_RUN]) == list(c.KEYED_RUN_FIELDS)
    for task in value[c.PREVIEW_FORCED_TASKS]:
        assert list(task) == list(c.PREVIEW_TASK_FIELDS)
    validate_plan_output(plan_output_json(report, None))


def test_the_patch_line_of_a_keyed_run() -> None:
    plan = decide(
        TABLE,
        mode=c.MODE_ENFORCE,
        bypass=None,
        change=ChangeFacts(changed_paths=("a",), collection_error=c.REASON_DIFF_TOO_LARGE),
    )
    report = parse_report(
        {
            **bypass_report(),
            "status": plan.status,
            "tasks": {
                task_id: {
                    "proposed_run": decision.proposed_run,
                    "run": decision.run,
                    "reasons": list(decision.reasons),
                }
                for task_id, decision in plan.decisions.items()
            },
        }
    )
    assert patch_line(report, PatchSize(65536, 70000)) == (
        "jev-select: diff-too-large: the patch is 70000 bytes, over the max-diff-bytes limit of "
        "65536 bytes; every task runs."
    )
    assert patch_line(report, None) is None
    # Any other reason shown: no line, whatever was measured.
    assert patch_line(parse_report(bypass_report()), PatchSize(1, 2)) is None


def test_the_schema_matches_the_contracts() -> None:
    schema = plan_output_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == c.PLAN_OUTPUT_SCHEMA_TITLE
    assert schema["required"] == list(schema["properties"]) == list(c.PLAN_OUTPUT_FIELDS)
    assert schema["properties"][c.PLAN_OUTPUT_REPORT] == {"$ref": c.REPORT_SCHEMA_FILE}
    assert schema["properties"][c.PLAN_OUTPUT_PREVIEW] == {
        "anyOf": [{"$ref": c.PREVIEW_SCHEMA_FILE}, {"type": "null"}]
    }
    preview = preview_schema()
    jsonschema.Draft202012Validator.check_schema(preview)
    assert preview["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert preview["title"] == c.PREVIEW_SCHEMA_TITLE
    definitions = preview["$defs"]
    task, keyed = definitions["forcedTask"], definitions["keyedRun"]
    assert preview["required"] == list(preview["properties"]) == list(c.PREVIEW_FIELDS)
    assert task["required"] == list(task["properties"]) == list(c.PREVIEW_TASK_FIELDS)
    assert task["properties"][c.PREVIEW_TASK_REASONS]["items"]["enum"] == list(c.MANDATORY_REASONS)
    assert keyed["required"] == list(keyed["properties"]) == list(c.KEYED_RUN_FIELDS)
    assert keyed["properties"][c.KEYED_RUN_REASON]["enum"] == [None, *c.KEYED_RUN_REASONS]
    assert definitions["taskId"]["pattern"] == "^" + c.TASK_ID_PATTERN + "$"
