"""End-to-end runs of ``jev-select plan`` in GitHub mode on paths that need neither git nor Jev.

Each run is the command's ``main`` in the test process (``run_cli_in_process``: none of these
tests is about the process boundary; the one about raw bytes on stdout starts a real process),
with real ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, event and ``RUNNER_TEMP`` files. The git
remote points at a directory that does not exist, so any attempt to fetch would turn into a
fallback and fail the assertions.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cliutil import (
    API_KEY_SENTINEL,
    BASE_SHA,
    BASIC_TASK_IDS,
    BASIC_TASKS,
    HEAD_SHA,
    MERGE_SHA,
    TOKEN_SENTINEL,
    GitHubEnv,
    run_cli_in_process,
)

from jev_select import contracts as c
from jev_select.core.plan_block import read_plan_block
from jev_select.errors import InputError, PlanningFailure, failure_message, input_error_message

TASKS = BASIC_TASKS
TASK_IDS = BASIC_TASK_IDS


def make_env(tmp_path: Path, **inputs: str) -> GitHubEnv:
    base_inputs = {
        "tasks": TASKS,
        "api-key": API_KEY_SENTINEL,
        "github-token": TOKEN_SENTINEL,
        "allow-external-context": "true",
    }
    base_inputs.update(inputs)
    return GitHubEnv(root=tmp_path / "runner", inputs=base_inputs, runner=run_cli_in_process)


def assert_everything_runs(run_result: object, status: str, reason: str, tested_sha: str) -> None:
    from support.cliutil import CliRun

    assert isinstance(run_result, CliRun)
    assert run_result.code == 0, run_result.stdout
    assert run_result.stderr == ""
    outputs = run_result.outputs
    assert list(outputs) == [*c.OUTPUTS, *TASK_IDS]
    assert outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    assert outputs["selected"] == '["docs","lint","unit"]'
    assert outputs["matrix"] == '{"include":[{"task":"docs"},{"task":"lint"},{"task":"unit"}]}'
    assert outputs["has-tasks"] == "true"
    assert outputs["status"] == status
    assert outputs["tested-sha"] == tested_sha
    for task_id in TASK_IDS:
        assert outputs[task_id] == "true"
    report_path = Path(outputs["report-path"])
    assert report_path.is_absolute()
    assert report_path.is_file()
    if os.name == "posix":  # only POSIX has the permission bits the report is written with
        assert report_path.stat().st_mode & 0o777 == 0o600
        assert report_path.parent.stat().st_mode & 0o777 == 0o700
    report = run_result.report
    assert report["version"] == c.REPORT_VERSION
    assert report["status"] == status
    assert report["tested_sha"] == tested_sha
    assert report["observation"] is None
    assert report["diff_hash"] is None
    assert report["job_metadata"] == {}
    assert report["durations_ms"]["jev"] is None
    for task_id in TASK_IDS:
        decision = report["tasks"][task_id]
        assert decision["run"] is True
        assert decision["proposed_run"] is None
        assert reason in decision["reasons"]
    assert report["tasks"]["lint"]["reasons"][0] == c.REASON_ALWAYS
    summary = run_result.summary_text
    assert summary is not None
    assert summary.startswith(f"### jev-select: {status}, enforce mode\n")
    block = read_plan_block(summary, expected_tested_sha=tested_sha)
    assert block is not None
    assert block.status == status
    assert dict(block.run) == {"docs": True, "lint": True, "unit": True}
    assert run_result.stdout.rstrip("\n").split("\n")[-1] == (
        f"jev-select: {status} (enforce): 3 of 3 tasks selected"
    )
    assert API_KEY_SENTINEL not in run_result.without_masks()
    assert TOKEN_SENTINEL not in run_result.without_masks()


@pytest.mark.parametrize(
    "event_name", ["push", "schedule", "merge_group", "pull_request_target", "workflow_dispatch"]
)
def test_non_pull_request_events_keep_every_task(tmp_path: Path, event_name: str) -> None:
    env = make_env(tmp_path)
    env.event_name = event_name
    env.event = {"ref": "refs/heads/main"}
    result = env.run("--remote", (tmp_path / "no-such-repository").as_uri())
    assert_everything_runs(result, c.STATUS_BYPASSED, c.REASON_NON_PULL_REQUEST, MERGE_SHA)
    report = result.report
    assert report["base_sha"] == report["head_sha"] == report["metadata_sha"] == MERGE_SHA
    assert report["diff_base_sha"] == MERGE_SHA


def test_fork_pull_request_is_bypassed(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.event = env.pull_request_event(fork=True)
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    assert_everything_runs(result, c.STATUS_BYPASSED, c.REASON_FORK, MERGE_SHA)
    assert result.report["base_sha"] == BASE_SHA
    assert result.report["head_sha"] == HEAD_SHA
    assert result.report["metadata_sha"] == BASE_SHA


def test_force_all_wins_over_fork(tmp_path: Path) -> None:
    env = make_env(tmp_path, **{"force-all": "true"})
    env.event = env.pull_request_event(fork=True)
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    assert_everything_runs(result, c.STATUS_BYPASSED, c.REASON_FORCE_ALL, MERGE_SHA)


def test_missing_key_is_bypassed(tmp_path: Path) -> None:
    env = make_env(tmp_path, **{"api-key": "   "})
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    assert_everything_runs(result, c.STATUS_BYPASSED, c.REASON_MISSING_API_KEY, MERGE_SHA)


def test_missing_consent_is_bypassed(tmp_path: Path) -> None:
    env = make_env(tmp_path, **{"allow-external-context": ""})
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    assert_everything_runs(result, c.STATUS_BYPASSED, c.REASON_EXTERNAL_CONTEXT_DISABLED, MERGE_SHA)


def test_head_mode_tests_the_head_commit(tmp_path: Path) -> None:
    env = make_env(tmp_path, **{"tested-ref": "head", "api-key": ""})
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    assert_everything_runs(result, c.STATUS_BYPASSED, c.REASON_MISSING_API_KEY, HEAD_SHA)
    assert result.report["diff_base_sha"] is None
    assert result.report["tested_ref"] == "head"


def test_shadow_mode_bypass_adds_shadow_reason(tmp_path: Path) -> None:
    env = make_env(tmp_path, mode="shadow", **{"api-key": ""})
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    assert result.code == 0
    for decision in result.report["tasks"].values():
        assert decision["reasons"][-1] == c.REASON_SHADOW_MODE
        assert decision["run"] is True


def test_empty_task_table_publishes_an_empty_plan_without_git(tmp_path: Path) -> None:
    env = make_env(tmp_path, tasks="{}")
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    assert result.code == 0, result.stdout
    assert result.stderr == ""
    assert result.outputs == {
        "run": "{}",
        "selected": "[]",
        "matrix": '{"include":[]}',
        "has-tasks": "false",
        "status": c.STATUS_PLANNED,
        "tested-sha": MERGE_SHA,
        "report-path": result.outputs["report-path"],
    }
    report = result.report
    assert report["tasks"] == {}
    assert report["observation"] is None
    assert report["changed_path_count"] is None
    assert not list((tmp_path / "runner" / "runner-temp").glob("jev-select-git-*"))
    assert result.stdout.rstrip("\n").split("\n")[-1] == (
        "jev-select: planned (enforce): 0 of 0 tasks selected"
    )


def test_masks_come_first_and_cover_every_form(tmp_path: Path) -> None:
    env = make_env(tmp_path, **{"api-key": "  " + API_KEY_SENTINEL + "  "})
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    lines = result.stdout.split("\n")
    masks = [line for line in lines if line.startswith("::add-mask::")]
    assert lines[: len(masks)] == masks
    assert f"::add-mask::{API_KEY_SENTINEL}" in masks
    assert f"::add-mask::  {API_KEY_SENTINEL}  " in masks
    assert f"::add-mask::{TOKEN_SENTINEL}" in masks
    import base64

    encoded = base64.b64encode(f"x-access-token:{TOKEN_SENTINEL}".encode()).decode()
    assert f"::add-mask::{encoded}" in masks


# ---------------------------------------------------------------------------------------------
# Input errors: exact diagnostic, exit 1, nothing published, value never echoed
# ---------------------------------------------------------------------------------------------

BAD_INPUTS = [
    ("mode", "Enforce-SECRETVALUE"),
    ("tested-ref", "MERGE-SECRETVALUE"),
    ("skip-below", "1e-2SECRETVALUE"),
    ("skip-below", "1.5"),
    ("tasks", "SECRETVALUE: [unterminated"),
    ("tasks", "./tasks-SECRETVALUE.yml"),
    ("model", "jev-latest-SECRETVALUE"),
    ("allow-external-context", "yes-SECRETVALUE"),
    ("force-all", "TRUE-SECRETVALUE"),
    ("timeout-ms", "10msSECRETVALUE"),
    ("timeout-ms", "2147483648"),
    ("max-diff-bytes", "010"),
    ("api-base-url", "http://SECRETVALUE.example"),
    ("api-model", "-SECRETVALUE"),
    ("api-key", "key with SECRETVALUE spaces"),
]


@pytest.mark.parametrize(("field", "value"), BAD_INPUTS)
def test_bad_input_is_a_fixed_diagnostic_and_publishes_nothing(
    tmp_path: Path, field: str, value: str
) -> None:
    # force-all never skips validation, so it is set wherever it is not the field under test.
    overrides = {field: value} if field == "force-all" else {field: value, "force-all": "true"}
    env = make_env(tmp_path, **overrides)
    result = env.run()
    assert result.code == 1
    assert result.stderr == ""
    error_lines = [line for line in result.stdout.split("\n") if line.startswith("::error::")]
    assert error_lines == ["::error::" + input_error_message(field)]
    # Only a task-table error gets the second, fixed line pointing at `jev-select check`.
    notices = [line for line in result.stdout.split("\n") if line.startswith("::notice::")]
    assert notices == (["::notice::" + c.TASKS_CHECK_HINT] if field == "tasks" else [])
    assert result.outputs_text == ""
    assert result.summary_text is None
    assert result.report_paths() == []
    assert "SECRETVALUE" not in result.without_masks()


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("no-output", c.FAILURE_INVALID_ENVIRONMENT),
        ("uppercase-sha", c.FAILURE_INVALID_ENVIRONMENT),
        ("bad-repository", c.FAILURE_INVALID_ENVIRONMENT),
        ("server-path", c.FAILURE_INVALID_ENVIRONMENT),
        ("no-event-file", c.FAILURE_INVALID_EVENT),
        ("event-not-object", c.FAILURE_INVALID_EVENT),
        ("event-uppercase-sha", c.FAILURE_INVALID_EVENT),
        ("event-other-repository", c.FAILURE_INVALID_EVENT),
        ("manual-outside-dispatch", c.FAILURE_INVALID_MANUAL_REQUEST),
        ("manual-not-a-number", c.FAILURE_INVALID_MANUAL_REQUEST),
        ("local-flag", c.FAILURE_INVALID_INVOCATION),
        ("unknown-flag", c.FAILURE_INVALID_INVOCATION),
        ("output-is-directory", c.FAILURE_OUTPUT_UNWRITABLE),
        ("report-dir-unwritable", c.FAILURE_REPORT_UNWRITABLE),
    ],
)
def test_hard_failures_publish_nothing(tmp_path: Path, case: str, code: str) -> None:
    env = make_env(tmp_path, **{"api-key": ""})
    args: list[str] = ["--remote", (tmp_path / "missing").as_uri()]
    environ_overrides: dict[str, str] = {}
    if case == "no-output":
        environ_overrides["GITHUB_OUTPUT"] = ""
    elif case == "uppercase-sha":
        env.sha = MERGE_SHA.upper().replace("3", "A")
    elif case == "bad-repository":
        environ_overrides["GITHUB_REPOSITORY"] = "not a repository"
    elif case == "server-path":
        environ_overrides["GITHUB_SERVER_URL"] = "https://ghe.example/prefix"
    elif case == "no-event-file":
        environ_overrides["GITHUB_EVENT_PATH"] = str(tmp_path / "nowhere.json")
    elif case == "event-not-object":
        env.event = ["SECRETVALUE"]  # type: ignore[assignment]
    elif case == "event-uppercase-sha":
        env.event = env.pull_request_event(head="A" * 40)
    elif case == "event-other-repository":
        env.event = env.pull_request_event(repository="other/SECRETVALUE")
    elif case == "manual-outside-dispatch":
        env.inputs["pull-request"] = "12"
    elif case == "manual-not-a-number":
        env.event_name = "workflow_dispatch"
        env.inputs["pull-request"] = "12SECRETVALUE"
    elif case == "local-flag":
        args += ["--tasks-file", "tasks-SECRETVALUE.yml"]
    elif case == "unknown-flag":
        args += ["--SECRETVALUE"]
    elif case == "output-is-directory":
        (tmp_path / "runner").mkdir(parents=True, exist_ok=True)
        os.mkdir(tmp_path / "runner" / "output.txt")
    elif case == "report-dir-unwritable":
        environ_overrides["RUNNER_TEMP"] = str(tmp_path / "no" / "such" / "dir")
    env.extra.update(environ_overrides)
    result = env.run(*args)
    assert result.code == 1
    assert result.stderr == ""
    error_lines = [line for line in result.stdout.split("\n") if line.startswith("::error::")]
    assert error_lines == ["::error::" + failure_message(code)]
    if case != "output-is-directory":
        assert result.outputs_text == ""
    assert result.summary_text is None
    assert list((tmp_path / "runner" / "runner-temp").glob("jev-select-report-*")) == []
    assert "SECRETVALUE" not in result.without_masks()


def test_inputs_are_validated_before_the_environment(tmp_path: Path) -> None:
    env = make_env(tmp_path, mode="bad", **{"force-all": "true"})
    env.extra["GITHUB_OUTPUT"] = ""
    env.extra["GITHUB_EVENT_PATH"] = str(tmp_path / "missing.json")
    result = env.run()
    assert result.stdout.strip().split("\n")[-1] == "::error::" + input_error_message("mode")


def test_report_is_valid_json_with_two_space_indentation(tmp_path: Path) -> None:
    env = make_env(tmp_path, **{"api-key": ""})
    result = env.run("--remote", (tmp_path / "missing").as_uri())
    path = result.report_paths()[0]
    text = path.read_text("utf-8")
    assert text.endswith("}\n")
    assert text.startswith('{\n  "version": 5,\n')
    assert json.loads(text) == result.report
    assert list(result.report) == list(c.REPORT_FIELDS)


# ---------------------------------------------------------------------------------------------
# In-process runs of the command: invocation rules, masks and the choice of diagnostic
# ---------------------------------------------------------------------------------------------


def run_in_process(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    environ: dict[str, str],
    *args: str,
) -> tuple[int, str, str]:
    from jev_select import cli

    monkeypatch.setattr(cli, "process_environment", lambda: dict(environ))
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def error_lines(stdout: str) -> list[str]:
    return [line for line in stdout.split("\n") if line.startswith("::error::")]


@pytest.mark.parametrize(
    "args",
    [
        ["plan", "--remo", "https://example.invalid/repo.git"],
        ["plan", "--remote=https://example.invalid/repo.git", "--task", "x"],
        ["analyze", "--form", "table", "a", "b"],
    ],
)
def test_abbreviated_flags_are_unknown_flags(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
) -> None:
    environ = make_env(tmp_path, **{"api-key": ""}).environ()
    code, out, err = run_in_process(monkeypatch, capsys, environ, *args)
    assert code == 1
    assert err == ""
    assert error_lines(out) == ["::error::" + failure_message(c.FAILURE_INVALID_INVOCATION)]
    assert not Path(environ["GITHUB_OUTPUT"]).exists()


def test_abbreviated_flags_are_refused_in_local_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.yml"
    tasks.write_text("unit:\n  description: Unit tests.\n", "utf-8")
    environ = {"PATH": os.environ.get("PATH", "")}
    code, out, err = run_in_process(monkeypatch, capsys, environ, "plan", "--tasks", str(tasks))
    assert code == 2
    assert out == ""
    assert err.startswith("usage: jev-select plan ")
    assert err.endswith(
        "jev-select plan: error: unrecognized arguments: --tasks " + str(tasks) + "\n"
    )


def test_masks_come_before_an_invocation_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    environ = make_env(tmp_path).environ()
    code, out, err = run_in_process(monkeypatch, capsys, environ, "plan", "--no-such-flag")
    assert code == 1
    assert err == ""
    lines = out.rstrip("\n").split("\n")
    assert f"::add-mask::{API_KEY_SENTINEL}" in lines[:-1]
    assert f"::add-mask::{TOKEN_SENTINEL}" in lines[:-1]
    assert all(line.startswith("::add-mask::") for line in lines[:-1])
    assert lines[-1] == "::error::" + failure_message(c.FAILURE_INVALID_INVOCATION)


def test_masks_are_printed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    environ = make_env(tmp_path).environ()
    remote = (tmp_path / "missing").as_uri()
    code, out, _ = run_in_process(
        monkeypatch, capsys, {**environ, "INPUT_API_KEY": ""}, "plan", "--remote", remote
    )
    assert code == 0
    assert out.count(f"::add-mask::{TOKEN_SENTINEL}\n") == 1


def test_help_in_github_mode_keeps_stderr_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    environ = make_env(tmp_path).environ()
    for args in (["--help"], ["plan", "--help"], ["--version"]):
        code, out, err = run_in_process(monkeypatch, capsys, environ, *args)
        assert code == 0
        assert err == ""
        assert out
        assert API_KEY_SENTINEL not in "\n".join(
            line for line in out.split("\n") if not line.startswith("::add-mask::")
        )


class _DerivedInputError(InputError):
    pass


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (InputError("mode"), input_error_message("mode")),
        (InputError("remote"), input_error_message("remote")),
        (InputError("not-a-field"), failure_message(c.FAILURE_INTERNAL_ERROR)),
        (InputError(["mode"]), failure_message(c.FAILURE_INTERNAL_ERROR)),  # type: ignore[arg-type]
        (_DerivedInputError("mode"), failure_message(c.FAILURE_INTERNAL_ERROR)),
        (PlanningFailure(c.FAILURE_MERGE_UNAVAILABLE), failure_message("merge-unavailable")),
        (PlanningFailure("SECRET-made-up-code"), failure_message(c.FAILURE_INTERNAL_ERROR)),
        (PlanningFailure(["x"]), failure_message(c.FAILURE_INTERNAL_ERROR)),  # type: ignore[arg-type]
        (RuntimeError("SECRET exception text"), failure_message(c.FAILURE_INTERNAL_ERROR)),
        (KeyError("SECRET"), failure_message(c.FAILURE_INTERNAL_ERROR)),
    ],
)
def test_only_genuine_errors_choose_the_diagnostic(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: Exception,
    expected: str,
) -> None:
    from jev_select.cli import plan_github

    def raising(*_args: object, **_kwargs: object) -> object:
        raise error

    monkeypatch.setattr(plan_github, "run_plan_pipeline", raising)
    environ = make_env(tmp_path).environ()
    code, out, err = run_in_process(monkeypatch, capsys, environ, "plan")
    assert code == 1
    assert err == ""
    assert "Traceback" not in out
    assert "SECRET" not in out
    assert error_lines(out) == ["::error::" + expected]
    assert not Path(environ["GITHUB_OUTPUT"]).exists()
    assert list(Path(environ["RUNNER_TEMP"]).glob("jev-select-report-*")) == []


def test_local_mode_unexpected_error_is_internal_error_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from jev_select.cli import plan_local

    def raising(*_args: object, **_kwargs: object) -> object:
        raise ValueError("SECRET")

    monkeypatch.setattr(plan_local, "local_inputs", raising)
    code, out, err = run_in_process(monkeypatch, capsys, {}, "plan", "--tasks-file", "x")
    assert (code, out) == (1, "")
    assert err == failure_message(c.FAILURE_INTERNAL_ERROR) + "\n"


def test_an_unusable_api_url_sends_no_token_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    from jev_select.app import settings as local_settings
    from jev_select.core.evidence.resolve import ActionFile
    from jev_select.core.inputs import parse_inputs
    from jev_select.edges.github import api as github_api

    constructed: list[str] = []

    class RecordingApi:
        def __init__(self, root: str, token: str) -> None:
            constructed.append(root)

        def set_deadline(self, deadline: float) -> None:
            pass

        def fetch_action(self, *_args: str) -> str:
            return ""

        def fetch_workflow(self, *_args: str) -> str:
            return ""

    monkeypatch.setattr(github_api, "GitHubApi", RecordingApi)
    token = parse_inputs({"tasks": "{}", "github-token": TOKEN_SENTINEL}).github_token
    lookups = local_settings.metadata_lookups(
        "https://ghes.example", "http://ghes.example/api/v3", token
    )
    assert not isinstance(lookups.fetch_action("octo", "setup", "", "v1"), ActionFile)
    assert lookups.run_pending() is True
    assert not isinstance(lookups.fetch_action("octo", "setup", "", "v1"), ActionFile)
    assert constructed == []
    for origin, api_url in (
        ("https://ghes.example", None),
        ("https://github.com", "https://API.github.com/"),
    ):
        other = local_settings.metadata_lookups(origin, api_url, token)
        assert constructed == [] or origin == "https://github.com"  # nothing before a lookup
        other.fetch_action("o", "r", "", "v")
        other.run_pending()
    assert constructed == ["https://ghes.example/api/v3", "https://api.github.com"]


def test_a_token_that_is_not_utf8_is_masked_and_the_run_succeeds(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = make_env(tmp_path, **{"github-token": "ghs_\udcffSECRET", "api-key": ""})
    environ = env.environ()
    completed = subprocess.run(
        [sys.executable, "-m", "jev_select", "plan", "--remote", (tmp_path / "x").as_uri()],
        env=environ,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 0
    assert completed.stderr == b""
    lines = completed.stdout.split(b"\n")
    assert lines[0] == b"::add-mask::ghs_\xffSECRET"
    assert b"SECRET" not in b"\n".join(line for line in lines if b"::add-mask::" not in line)
