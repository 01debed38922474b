"""Outputs, step summary, terminal rendering and the log line (docs/reference.md, "Outputs",
"Step summary and plan block", "Local use")."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from test_report import (
    BASE,
    HEAD,
    TESTED,
    bypass_report,
    chunked_report,
    make_plan,
    make_report,
    planned_report,
)

from jev_select import contracts as c
from jev_select.core.convert import DocumentError
from jev_select.core.jsonutil import code_unit_key
from jev_select.core.models import Plan, Task, TaskDecision, TaskTable, frozen_mapping
from jev_select.core.plan_block import read_plan_block
from jev_select.core.render import (
    Summary,
    log_line,
    render_outputs,
    render_summary,
    render_terminal,
)
from jev_select.core.tasks import parse_tasks
from jev_select.version import __version__

REPORT_PATH = "/runner/tmp/jev-select-report-x/report.json"

# --------------------------------------------------------------------------------------------
# Outputs (docs/reference.md, "Outputs")
# --------------------------------------------------------------------------------------------


def test_outputs_for_an_empty_table() -> None:
    plan = Plan(mode=c.MODE_ENFORCE, status=c.STATUS_PLANNED, decisions=frozen_mapping({}))
    assert render_outputs(plan, TESTED, REPORT_PATH) == [
        ("run", "{}"),
        ("selected", "[]"),
        ("matrix", '{"include":[]}'),
        ("has-tasks", "false"),
        ("status", "planned"),
        ("tested-sha", TESTED),
        ("report-path", REPORT_PATH),
    ]


def test_outputs_for_a_mixed_plan() -> None:
    plan = Plan(
        mode=c.MODE_ENFORCE,
        status=c.STATUS_PLANNED,
        decisions=frozen_mapping(
            {
                "helm": TaskDecision(False, False, (c.REASON_JEV_BELOW_THRESHOLD,)),
                "build": TaskDecision(True, True, (c.REASON_ALWAYS,)),
                "e2e-net": TaskDecision(True, True, (c.REASON_JEV_AT_OR_ABOVE_THRESHOLD,)),
                "Docs": TaskDecision(False, False, (c.REASON_JEV_BELOW_THRESHOLD,)),
            }
        ),
    )
    assert render_outputs(plan, TESTED, REPORT_PATH) == [
        ("run", '{"Docs":false,"build":true,"e2e-net":true,"helm":false}'),
        ("selected", '["build","e2e-net"]'),
        ("matrix", '{"include":[{"task":"build"},{"task":"e2e-net"}]}'),
        ("has-tasks", "true"),
        ("status", "planned"),
        ("tested-sha", TESTED),
        ("report-path", REPORT_PATH),
        ("Docs", "false"),
        ("build", "true"),
        ("e2e-net", "true"),
        ("helm", "false"),
    ]


@pytest.mark.parametrize("factory", [bypass_report, chunked_report, planned_report])
def test_outputs_report_and_plan_block_agree(factory: Any) -> None:
    report = factory()
    plan = Plan(
        mode=report["mode"],
        status=report["status"],
        decisions=frozen_mapping(
            {
                task_id: TaskDecision(task["proposed_run"], task["run"], tuple(task["reasons"]))
                for task_id, task in report["tasks"].items()
            }
        ),
    )
    outputs = dict(render_outputs(plan, report["tested_sha"], REPORT_PATH))
    run = json.loads(outputs["run"])
    assert run == {task_id: task["run"] for task_id, task in report["tasks"].items()}
    block = read_plan_block(render_summary(report, engine_version="0.1.0").text)
    assert block is not None
    assert dict(block.run) == run
    assert list(block.selected) == json.loads(outputs["selected"])
    assert outputs["status"] == block.status == report["status"]
    assert outputs["tested-sha"] == block.tested_sha
    for task_id, runs in run.items():
        assert outputs[task_id] == ("true" if runs else "false")


def test_log_line() -> None:
    plan = make_plan(bypass=c.REASON_FORK, changed_paths=None)
    assert log_line(plan, 4) == "jev-select: bypassed (enforce): 4 of 4 tasks selected"
    empty = Plan(mode=c.MODE_SHADOW, status=c.STATUS_PLANNED, decisions=frozen_mapping({}))
    assert log_line(empty, 0) == "jev-select: planned (shadow): 0 of 0 tasks selected"


# --------------------------------------------------------------------------------------------
# Step summary golden texts (docs/reference.md, "Step summary and plan block")
# --------------------------------------------------------------------------------------------

DISCLAIMER = (
    "Scores are per-group relevance signals used to select tasks. They are not predictions of "
    "task outcomes,\nand a low score does not guarantee that a skipped task would have passed.\n"
)

GAP = "gaps: `context-file-missing:notes/café.md`"
PLANNED_SUMMARY = f"""### jev-select: planned, enforce mode

2 of 4 tasks run. Selection applied.

| Task | Effective | Proposed | Reasons | Details |
| --- | --- | --- | --- | --- |
| `B_upper` | skip | skip | `jev-below-threshold` | score 0.01 &lt; 0.05; {GAP} |
| `_private` | run | run | `always` | {GAP} |
| `docs` | skip | skip | `jev-below-threshold` | score 0.02 &lt; 0.05; {GAP} |
| `unit` | run | run | `jev-at-or-above-threshold` | score 0.93 &gt;= 0.05; {GAP} |

<details>
<summary>Commits, model and per-group scores</summary>

- Tested commit: `{TESTED}` (`merge`); base `{BASE}`, head `{HEAD}`
- Diff: 668 bytes, 2 changed paths
- Model: requested `jev-latest`, expected `jev-1.13.0`, returned `jev-1.13.0`
- Observation: complete, whole-diff, 1 group(s)

| Group | Bytes | Status | Model | Time (ms) | Scores | Error |
| ---: | ---: | --- | --- | ---: | --- | --- |
| 0 | 0–668 | completed | `jev-1.13.0` | 412 | `B_upper` 0.01, `docs` 0.02, `unit` 0.93 | — |

{DISCLAIMER}
</details>

<!-- jev-select-plan
{{
  "schemaVersion": 1,
  "engineVersion": "0.1.0",
  "reportVersion": 5,
  "testedSha": "{TESTED}",
  "baseSha": "{BASE}",
  "headSha": "{HEAD}",
  "selectionHash": "{"e" * 64}",
  "mode": "enforce",
  "status": "planned",
  "run": {{
    "B_upper": false,
    "_private": true,
    "docs": false,
    "unit": true
  }},
  "selected": [
    "_private",
    "unit"
  ]
}}
-->
"""

BYPASSED_SUMMARY = f"""### jev-select: bypassed, enforce mode

4 of 4 tasks run. Selection was bypassed; every task runs.

| Task | Effective | Proposed | Reasons | Details |
| --- | --- | --- | --- | --- |
| `B_upper` | run | — | `missing-api-key` | — |
| `_private` | run | — | `always`, `missing-api-key` | — |
| `docs` | run | — | `missing-api-key` | — |
| `unit` | run | — | `missing-api-key` | — |

<details>
<summary>Commits, model and per-group scores</summary>

- Tested commit: `{TESTED}` (`merge`); base `{BASE}`, head `{HEAD}`
- Diff: not collected
- Model: requested `jev-latest`, expected `jev-1.13.0`, returned `none`
- Observation: not collected; no request was sent

{DISCLAIMER}
</details>

<!-- jev-select-plan
{{
  "schemaVersion": 1,
  "engineVersion": "0.1.0",
  "reportVersion": 5,
  "testedSha": "{TESTED}",
  "baseSha": "{BASE}",
  "headSha": "{HEAD}",
  "selectionHash": "{"e" * 64}",
  "mode": "enforce",
  "status": "bypassed",
  "run": {{
    "B_upper": true,
    "_private": true,
    "docs": true,
    "unit": true
  }},
  "selected": [
    "B_upper",
    "_private",
    "docs",
    "unit"
  ]
}}
-->
"""


def test_planned_summary_golden() -> None:
    summary = render_summary(planned_report(), engine_version="0.1.0")
    assert summary == Summary(text=PLANNED_SUMMARY, plan_block_omitted=False)


def test_bypassed_summary_golden() -> None:
    summary = render_summary(bypass_report(), engine_version="0.1.0")
    assert summary == Summary(text=BYPASSED_SUMMARY, plan_block_omitted=False)


COUNT_LINE = "4 of 4 tasks run. Selection was bypassed; every task runs.\n\n"


@pytest.mark.parametrize(
    ("reason", "line", "input_name"),
    [
        (c.REASON_MISSING_API_KEY, c.SUMMARY_MISSING_API_KEY_LINE, c.INPUT_API_KEY),
        (
            c.REASON_EXTERNAL_CONTEXT_DISABLED,
            c.SUMMARY_EXTERNAL_CONTEXT_DISABLED_LINE,
            c.INPUT_ALLOW_EXTERNAL_CONTEXT,
        ),
    ],
)
def test_bypassed_summary_names_the_input_a_missing_setup_needs(
    reason: c.Reason, line: str, input_name: str
) -> None:
    summary = render_summary(bypass_report(), engine_version="0.1.0", setup_missing=reason)
    # The golden summary with one line under the count sentence, and nothing else changed.
    expected = BYPASSED_SUMMARY.replace(COUNT_LINE, COUNT_LINE + line + "\n\n", 1)
    assert expected != BYPASSED_SUMMARY
    assert summary == Summary(text=expected, plan_block_omitted=False)
    assert f"`{input_name}" in line
    assert sum(summary.text.count(text) for text in c.SUMMARY_SETUP_MISSING_LINES.values()) == 1


@pytest.mark.parametrize(
    ("factory", "setup_missing"),
    [
        (bypass_report, None),  # every other caller: today's summary
        (bypass_report, c.REASON_FORK),  # a bypass by design names no input
        (bypass_report, c.REASON_NON_PULL_REQUEST),
        (planned_report, c.REASON_MISSING_API_KEY),  # only a bypassed report has the line
    ],
)
def test_summary_has_no_setup_line_otherwise(factory: Any, setup_missing: c.Reason | None) -> None:
    text = render_summary(factory(), engine_version="0.1.0", setup_missing=setup_missing).text
    assert text == render_summary(factory(), engine_version="0.1.0").text
    for line in c.SUMMARY_SETUP_MISSING_LINES.values():
        assert line not in text


def test_engine_version_defaults_to_the_package_version() -> None:
    block = read_plan_block(render_summary(planned_report()).text)
    assert block is not None
    assert block.engine_version == __version__


def test_shadow_summary_shows_proposals_and_shadow_sentence() -> None:
    text = render_summary(planned_report(c.MODE_SHADOW), engine_version="0.1.0").text
    assert text.startswith(
        "### jev-select: planned, shadow mode\n\n4 of 4 tasks run. Shadow mode: every task runs; "
        "Proposed shows what enforce mode would do.\n\n"
    )
    assert "| `docs` | run | skip | `jev-below-threshold`, `shadow-mode` |" in text


def test_fallback_summary_with_failed_groups() -> None:
    text = render_summary(chunked_report(), engine_version="0.1.0").text
    assert "4 of 4 tasks run. Evidence was incomplete; every task runs.\n" in text
    assert "- Observation: incomplete, chunked-diff, 2 group(s)\n" in text
    assert "- Observation error: `jev-timeout`\n" in text
    assert "| 1 | 400–668 | not-started | — | — | — | `jev-timeout` |\n" in text
    assert (
        "| `docs` | run | — | `jev-timeout`, `chunked-observation` | score 0.02 &lt; 0.05 |\n"
        in text
    )


def test_durations_round_half_up_to_whole_milliseconds() -> None:
    report = chunked_report()
    report["observation"]["chunks"][0]["duration_ms"] = 2.5
    text = render_summary(report, engine_version="0.1.0").text
    assert "| 0 | 0–400 | completed | `jev-1.13.0` | 3 |" in text


def test_dynamic_cells_are_escaped() -> None:
    report = copy.deepcopy(planned_report())
    hostile = "a|b<c>&d\r\ne\nf\rg"
    report["tasks"] = {hostile: {"proposed_run": True, "run": True, "reasons": [hostile]}}
    report["model"]["returned"] = hostile
    report["observation"]["chunks"][0]["probabilities"] = {hostile: 0.5}
    report["observation"]["chunks"][0]["model"] = hostile
    report["observation_error"] = hostile
    text = render_summary(report, engine_version="0.1.0").text
    # Inside a code span `<`, `>` and `&` are literal (an entity would show as typed); only a
    # table cell needs `|` escaped, and line endings become spaces everywhere.
    in_cell = "a\\|b<c>&d e f g"
    on_line = "a|b<c>&d e f g"
    assert f"| `{in_cell}` | run | run | `{in_cell}` | score 0.5 &gt;= 0.05 |\n" in text
    assert f"returned `{on_line}`\n" in text
    assert f"- Observation error: `{on_line}`\n" in text
    assert f"| `{in_cell}` | 0 | 0–668 |" not in text
    assert f"`{in_cell}` 0.5 |" in text
    before_block = text.split("<!-- jev-select-plan")[0]
    assert "\r" not in before_block
    rows = [line for line in before_block.split("\n") if line.startswith("|")]
    assert not [row for row in rows if "a|b" in row]


def test_empty_table_summary() -> None:
    plan = make_plan(changed_paths=(), tasks=TaskTable())
    text = render_summary(make_report(plan), engine_version="0.1.0").text
    assert "0 of 0 tasks run. Selection applied.\n\n" in text
    assert "| --- | --- | --- | --- |\n\n<details>" in text
    block = read_plan_block(text)
    assert block is not None
    assert dict(block.run) == {}
    assert block.selected == ()


# --------------------------------------------------------------------------------------------
# Size limits
# --------------------------------------------------------------------------------------------


def big_report(
    count: int,
    id_length: int,
    *,
    runs: bool,
    groups: int,
    reasons: tuple[c.Reason, ...],
    status: c.Status = c.STATUS_PLANNED,
) -> dict[str, Any]:
    ids = [f"t{i:05d}".ljust(id_length, "_") for i in range(count)]
    tasks = TaskTable(tuple(Task(id=task_id, description="d") for task_id in ids))
    plan = Plan(
        mode=c.MODE_ENFORCE,
        status=status,
        decisions=frozen_mapping(
            {
                task_id: TaskDecision(None if status != c.STATUS_PLANNED else runs, runs, reasons)
                for task_id in ids
            }
        ),
    )
    report = make_report(plan)
    if groups:
        chunk = {
            "index": 0,
            "start_byte": 0,
            "end_byte": 10,
            "paths": ["a"],
            "diff_hash": "1" * 64,
            "state_hash": "2" * 64,
            "diff_bytes": 10,
            "status": "completed",
            "probabilities": dict.fromkeys(tasks.ids, 0.01),
            "model": c.DEFAULT_MODEL,
            "usage": None,
            "duration_ms": 1.0,
            "error": None,
            "requests": [],
        }
        report["observation"] = {
            "strategy": "chunked-diff",
            "status": "complete",
            "chunks": [dict(chunk, index=index) for index in range(groups)],
        }
    return report


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def test_group_table_is_dropped_first() -> None:
    report = big_report(
        5000,
        6,
        runs=True,
        groups=20,
        reasons=(c.REASON_JEV_AT_OR_ABOVE_THRESHOLD, c.REASON_CHUNKED_OBSERVATION),
    )
    summary = render_summary(report, engine_version="0.1.0")
    assert size(summary.text) <= c.SUMMARY_MAX_BYTES
    assert not summary.plan_block_omitted
    assert "Group table omitted (size limit); see the report.\n" in summary.text
    assert "| Group | Bytes |" not in summary.text
    assert "more tasks; see the report." not in summary.text
    assert summary.text.count("\n| `t") == 5000
    block = read_plan_block(summary.text)
    assert block is not None
    assert len(block.selected) == 5000


def test_task_rows_are_cut_with_a_count_line_and_the_block_survives() -> None:
    report = big_report(
        5000,
        64,
        runs=False,
        groups=3,
        reasons=(c.REASON_JEV_BELOW_THRESHOLD, c.REASON_CHUNKED_OBSERVATION),
    )
    summary = render_summary(report, engine_version="0.1.0")
    text = summary.text
    assert size(text) <= c.SUMMARY_MAX_BYTES
    assert not summary.plan_block_omitted
    assert "Group table omitted (size limit); see the report.\n" in text
    rows = [line for line in text.split("\n") if line.startswith("| `t")]
    kept = len(rows)
    assert 0 < kept < 5000
    ids = sorted(report["tasks"], key=code_unit_key)
    assert rows == [
        f"| `{task_id}` | skip | skip | `jev-below-threshold`, `chunked-observation` | "
        "score 0.01 &lt; 0.05 |"
        for task_id in ids[:kept]
    ]
    assert f"\n\n… {5000 - kept} more tasks; see the report.\n\n<details>" in text
    # Only as many rows as fit were dropped: one more row would break the limit.
    one_more = size(rows[0]) + 1 - (len(str(5000 - kept)) - len(str(5000 - kept - 1)))
    assert size(text) + one_more > c.SUMMARY_MAX_BYTES
    block = read_plan_block(text, expected_tested_sha=TESTED)
    assert block is not None
    assert len(block.run) == 5000
    assert block.selected == ()
    assert text.endswith("-->\n")


def test_an_oversized_plan_block_is_omitted() -> None:
    report = big_report(
        5000, 64, runs=True, groups=0, reasons=(c.REASON_MISSING_API_KEY,), status=c.STATUS_BYPASSED
    )
    summary = render_summary(report, engine_version="0.1.0")
    assert summary.plan_block_omitted
    assert size(summary.text) <= c.SUMMARY_MAX_BYTES
    assert "jev-select-plan" not in summary.text
    assert read_plan_block(summary.text) is None
    assert summary.text.endswith("</details>\n\n")
    assert summary.text.count("\n| `t") == 5000


# --------------------------------------------------------------------------------------------
# Terminal rendering (docs/reference.md, "Local use")
# --------------------------------------------------------------------------------------------


def test_terminal_rendering() -> None:
    text = render_terminal(chunked_report(), "/tmp/r/report.json")
    assert text == (
        "jev-select: fallback (enforce): 4 of 4 tasks selected\n"
        "TASK      RUN  PROPOSED  REASONS                                         DETAILS\n"
        "B_upper   yes  -         jev-timeout, chunked-observation                "
        "score 0.01 < 0.05\n"
        "_private  yes  yes       always, chunked-observation\n"
        "docs      yes  -         jev-timeout, chunked-observation                "
        "score 0.02 < 0.05\n"
        "unit      yes  yes       jev-at-or-above-threshold, chunked-observation  "
        "score 0.93 >= 0.05\n"
        "collection: 13 ms\n"
        "report: /tmp/r/report.json\n"
    )


def test_terminal_rendering_of_a_planned_report() -> None:
    text = render_terminal(planned_report(), "r.json")
    lines = text.splitlines()
    assert lines[0] == "jev-select: planned (enforce): 2 of 4 tasks selected"
    assert lines[2] == (
        "B_upper   no   no        jev-below-threshold        "
        "score 0.01 < 0.05; gaps: context-file-missing:notes/café.md"
    )
    assert lines[-2:] == ["collection: 13 ms", "report: r.json"]


def test_terminal_rendering_of_an_empty_table() -> None:
    plan = make_plan(changed_paths=(), tasks=TaskTable())
    text = render_terminal(make_report(plan), "r.json")
    assert text == (
        "jev-select: planned (enforce): 0 of 0 tasks selected\n"
        "TASK  RUN  PROPOSED  REASONS  DETAILS\n"
        "collection: 13 ms\n"
        "report: r.json\n"
    )


def test_terminal_rendering_shows_the_collection_cost() -> None:
    report = make_report(make_plan(changed_paths=(), tasks=TaskTable()))
    for milliseconds, shown in ((0.0, "0"), (12.5, "13"), (104.49, "104"), (16702.5, "16703")):
        report["durations_ms"]["collection"] = milliseconds
        lines = render_terminal(report, "r.json").splitlines()
        assert lines[-2] == f"collection: {shown} ms"
    # The schema makes the collection cost a number: a report without one is not rendered.
    report["durations_ms"]["collection"] = None
    with pytest.raises(DocumentError) as refused:
        render_terminal(report, "r.json")
    assert refused.value.path == "$.durations_ms.collection"


def test_terminal_details_name_the_matched_pattern() -> None:
    table = parse_tasks("docs: {description: d, force_paths: [site/**, 'docs/**']}")
    plan = make_plan(changed_paths=("src/a.py", "docs/b.md"), tasks=table)
    text = render_terminal(
        make_report(plan), None, table=table, changed_paths=("src/a.py", "docs/b.md")
    )
    assert text.splitlines()[-2] == "docs  yes  yes       path-match  docs/** matched docs/b.md"
    assert "report:" not in text


def test_summary_details_name_the_matched_pattern_but_never_the_changed_path() -> None:
    table = parse_tasks("docs: {description: d, force_paths: [site/**, 'docs/**']}")
    changed = ("src/a.py", "docs/<img src=x>.md")
    plan = make_plan(changed_paths=changed, tasks=table)
    report = make_report(plan)
    text = render_summary(report, table=table, changed_paths=changed).text
    assert "| `docs` | run | run | `path-match` | `docs/**` matched |" in text.splitlines()
    assert "img" not in text
    # Without the table and the paths, the same report renders no pattern.
    assert "matched" not in render_summary(report).text


def test_terminal_and_summary_show_notes_on_gaps() -> None:
    notes = {"docs": ("ci.yml: use the key\nnot the name",), "B_upper": ("first", "second")}
    lines = render_terminal(planned_report(), "r.json", notes=notes).splitlines()
    assert lines[-4:] == [
        "note: B_upper: first",
        "note: B_upper: second",
        "note: docs: ci.yml: use the key not the name",
        "report: r.json",
    ]
    summary = render_summary(planned_report(), notes={"docs": ("a | b",)}).text
    assert "- Note on `docs`: `a | b`\n" in summary
    assert "Note on" not in render_summary(planned_report()).text


def test_summary_details_name_where_a_command_gap_comes_from() -> None:
    gap = "context-file-missing:notes/café.md"
    note = f'{gap} comes from ci.yml:7:11, workflow "ci.yml", job "unit", step "Test": npm test'
    summary = render_summary(planned_report(), notes={"B_upper": (note,)}).text
    row = next(line for line in summary.splitlines() if line.startswith("| `B_upper` |"))
    assert row.endswith(f"gaps: `{gap}` at `ci.yml:7:11` |")
    other = next(line for line in summary.splitlines() if line.startswith("| `_private` |"))
    assert other.endswith(f"{GAP} |")
    assert f"- Note on `B_upper`: `{note}`" in summary


def test_summary_names_why_github_lookups_failed() -> None:
    from jev_select.core.lookup_causes import LookupCause, lookup_cause_summary_line

    cause = LookupCause(c.LookupCauseKind.RATE_LIMITED, "https://api.github.com", token=False)
    line = lookup_cause_summary_line(cause)
    assert line is not None
    summary = render_summary(bypass_report(), engine_version="0.1.0", lookup_cause=cause)
    assert summary.text == BYPASSED_SUMMARY.replace(COUNT_LINE, COUNT_LINE + line + "\n\n", 1)
    assert render_summary(bypass_report(), engine_version="0.1.0").text == BYPASSED_SUMMARY
