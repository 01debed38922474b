"""``jev-select block`` and ``jev-select read-block``: embedding a plan and reading it back."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import run_main
from support.reports import make_report

from jev_select import contracts as c
from jev_select.core.plan_block import read_plan_block, render_plan_block
from jev_select.core.report import report_text
from jev_select.version import __version__

TESTED = "c" * 40
NO_PLAN = "jev-select: no usable plan block; run every task.\n"
NO_REPORT = "jev-select: the report is not a valid v5 report; no plan block written.\n"
ENFORCED = make_report({"unit": True, "docs": False, "Lint": True}, mode="enforce")


@pytest.fixture(autouse=True)
def _local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def write_report(tmp_path: Path, report: Any) -> str:
    path = tmp_path / "report.json"
    path.write_text(report_text(report) if isinstance(report, dict) else report, "utf-8")
    return str(path)


def test_block_prints_the_plan_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, "block", write_report(tmp_path, ENFORCED))
    assert (code, err) == (0, "")
    assert out == render_plan_block(ENFORCED, __version__)
    assert out.startswith("<!-- jev-select-plan\n{\n")
    assert out.endswith("\n}\n-->\n")


@pytest.mark.parametrize(
    "content",
    ["", "{}", json.dumps({**ENFORCED, "version": 4}), json.dumps({**ENFORCED, "x": 1})],
)
def test_block_refuses_an_invalid_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    code, out, err = run_main(capsys, "block", write_report(tmp_path, content))
    assert (code, out, err) == (1, "", NO_REPORT)


def test_block_refuses_a_missing_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, "block", str(tmp_path / "absent.json"))
    assert (code, out, err) == (1, "", NO_REPORT)


def block_text(tmp_path: Path, capsys: pytest.CaptureFixture[str], report: Any) -> str:
    code, out, _ = run_main(capsys, "block", write_report(tmp_path, report))
    assert code == 0
    return out


def test_round_trip_through_a_comment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    block = block_text(tmp_path, capsys, ENFORCED)
    comment = tmp_path / "comment.md"
    comment.write_text("Selection for this pull request.\n\n" + block, encoding="utf-8")
    code, out, err = run_main(capsys, "read-block", str(comment), "--tested-sha", TESTED)
    assert (code, err) == (0, "")
    plan = json.loads(out)
    assert out == json.dumps(plan, indent=2) + "\n"
    assert list(plan) == [
        "schemaVersion",
        "engineVersion",
        "reportVersion",
        "testedSha",
        "baseSha",
        "headSha",
        "selectionHash",
        "mode",
        "status",
        "run",
        "selected",
    ]
    assert plan["run"] == {"Lint": True, "docs": False, "unit": True}
    assert plan["selected"] == ["Lint", "unit"]
    assert plan["testedSha"] == TESTED
    assert plan["engineVersion"] == __version__
    parsed = read_plan_block(block)
    assert parsed is not None
    assert parsed.to_json() == plan


def test_read_block_from_standard_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    block = block_text(tmp_path, capsys, ENFORCED)
    stdin = io.TextIOWrapper(io.BytesIO(block.encode()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, err = run_main(capsys, "read-block")
    assert (code, err) == (0, "")
    assert json.loads(out)["selected"] == ["Lint", "unit"]


def test_the_last_block_wins_even_when_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = block_text(tmp_path, capsys, ENFORCED)
    broken = good.replace('"schemaVersion": 1', '"schemaVersion": "1"')
    assert broken != good
    text = tmp_path / "summary.md"
    text.write_text(good + "\nlater text\n" + broken, encoding="utf-8")
    code, out, err = run_main(capsys, "read-block", str(text))
    assert (code, out, err) == (3, "", NO_PLAN)
    text.write_text(broken + good, encoding="utf-8")
    code, out, _ = run_main(capsys, "read-block", str(text))
    assert code == 0
    assert json.loads(out)["testedSha"] == TESTED


def test_stale_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "summary.md"
    text.write_text(block_text(tmp_path, capsys, ENFORCED), encoding="utf-8")
    code, out, err = run_main(capsys, "read-block", str(text), "--tested-sha", "d" * 40)
    assert (code, out, err) == (3, "", NO_PLAN)


@pytest.mark.parametrize(
    "content",
    [b"", b"no block here\n", b"<!-- jev-select-plan\n{}\n-->\n", b"\xff\xfe"],
    ids=["empty", "no-block", "empty-object", "not-utf8"],
)
def test_no_usable_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    text = tmp_path / "summary.md"
    text.write_bytes(content)
    code, out, err = run_main(capsys, "read-block", str(text))
    assert (code, out, err) == (3, "", NO_PLAN)


def test_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, "read-block", str(tmp_path / "absent.md"))
    assert (code, out, err) == (3, "", NO_PLAN)
    assert code == c.NO_PLAN_BLOCK_EXIT_CODE


def test_shadow_block_runs_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shadow = make_report({"unit": True, "docs": False})
    text = tmp_path / "summary.md"
    text.write_text(block_text(tmp_path, capsys, shadow), encoding="utf-8")
    code, out, _ = run_main(capsys, "read-block", str(text))
    assert code == 0
    plan = json.loads(out)
    assert plan["mode"] == "shadow"
    assert plan["run"] == {"docs": True, "unit": True}


def test_github_mode_prints_to_stdout_as_workflow_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, err = run_main(capsys, "read-block", str(tmp_path / "absent.md"))
    assert (code, out, err) == (3, "::warning::" + NO_PLAN, "")
    code, out, err = run_main(capsys, "block", str(tmp_path / "absent.json"))
    assert (code, out, err) == (1, "::error::" + NO_REPORT, "")


@pytest.mark.parametrize(
    "args",
    [["block"], ["block", "a", "b"], ["read-block", "a", "b"], ["read-block", "--tested-sha"]],
)
def test_bad_usage(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, out, err = run_main(capsys, *args)
    # Local mode: argparse's usage of the subcommand and exit 2.
    assert (code, out) == (2, "")
    assert err.startswith(f"usage: jev-select {args[0]} ")
    assert f"\njev-select {args[0]}: error: " in err
