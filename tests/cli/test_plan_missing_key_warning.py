"""The setup warning of GitHub mode: a same-repository pull request bypassed with
``missing-api-key`` or ``external-context-disabled`` (docs/reference.md, "Step summary and plan
block").

Such a run prints one ``::warning::`` naming the input to set, after the outputs are published and
whether or not there is a step summary file, and its summary says the same in one line. Forks,
non-pull-request events and merge queues are bypassed on purpose and stay quiet. Each run is the
command's ``main`` in the test process (``run_cli_in_process``) with real ``GITHUB_OUTPUT``,
``GITHUB_STEP_SUMMARY``, event and ``RUNNER_TEMP`` files. Nothing of these runs fetches: the
remote is a directory that does not exist, so an attempt would turn into a fallback and fail the
assertions. Manual pull-request mode asks a local HTTPS server playing the GitHub REST API.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import (
    API_KEY_SENTINEL,
    BASE_SHA,
    BASIC_TASK_IDS,
    BASIC_TASKS,
    HEAD_SHA,
    MERGE_SHA,
    REPOSITORY,
    TOKEN_SENTINEL,
    CliRun,
    GitHubEnv,
    run_cli_in_process,
)
from support.fakegithub import FakeGitHub

from jev_select import contracts as c
from jev_select.core.plan_block import read_plan_block

TASKS = BASIC_TASKS
TASK_IDS = BASIC_TASK_IDS
ALL_TRUE = '{"docs":true,"lint":true,"unit":true}'
# The runner's own token variable, next to the input: neither may ever be printed.
ENV_TOKEN_SENTINEL = "ghp_ENVTOKENSENTINEL5a6b7c8d"
NO_KEY = {c.INPUT_API_KEY: ""}
NO_CONSENT = {c.INPUT_ALLOW_EXTERNAL_CONTEXT: c.BOOL_FALSE}
SETUP_LINES = tuple(c.SUMMARY_SETUP_MISSING_LINES.values())


def make_env(tmp_path: Path, **inputs: str) -> GitHubEnv:
    settings = {
        c.INPUT_TASKS: TASKS,
        c.INPUT_API_KEY: API_KEY_SENTINEL,
        c.INPUT_GITHUB_TOKEN: TOKEN_SENTINEL,
        c.INPUT_ALLOW_EXTERNAL_CONTEXT: c.BOOL_TRUE,
    }
    settings.update(inputs)
    env = GitHubEnv(root=tmp_path / "runner", inputs=settings, runner=run_cli_in_process)
    env.extra["GITHUB_TOKEN"] = ENV_TOKEN_SENTINEL
    return env


def run(env: GitHubEnv, tmp_path: Path) -> CliRun:
    return env.run("--remote", (tmp_path / "no-such-repository").as_uri())


def run_without_summary_file(env: GitHubEnv, tmp_path: Path) -> CliRun:
    """``env``'s run with ``GITHUB_STEP_SUMMARY`` unset (a runner without a summary)."""
    environ = env.environ()
    del environ["GITHUB_STEP_SUMMARY"]
    remote = (tmp_path / "no-such-repository").as_uri()
    completed = run_cli_in_process(["plan", "--remote", remote], environ, cwd=env.root)
    output_path = Path(environ["GITHUB_OUTPUT"])
    return CliRun(
        code=completed.returncode,
        stdout=completed.stdout,
        stderr=completed.stderr,
        outputs_text=output_path.read_text("utf-8") if output_path.is_file() else "",
        summary_text=None,
        temp_root=Path(environ["RUNNER_TEMP"]),
    )


def warnings_of(result: CliRun) -> list[str]:
    return [line for line in result.stdout.split("\n") if line.startswith("::warning::")]


def assert_bypassed_and_published(result: CliRun, reason: str) -> None:
    """Exit 0, every output published, every task runs, the log line last, no secret shown."""
    assert result.code == 0, result.stdout
    assert result.stderr == ""
    outputs = result.outputs
    assert list(outputs) == [*c.OUTPUTS, *TASK_IDS]
    assert outputs[c.OUTPUT_STATUS] == c.STATUS_BYPASSED
    assert outputs[c.OUTPUT_RUN] == ALL_TRUE
    assert outputs[c.OUTPUT_SELECTED] == '["docs","lint","unit"]'
    assert outputs[c.OUTPUT_HAS_TASKS] == c.BOOL_TRUE
    for task_id in TASK_IDS:
        assert outputs[task_id] == c.BOOL_TRUE
    report = result.report
    assert report["status"] == c.STATUS_BYPASSED
    for task_id in TASK_IDS:
        assert report["tasks"][task_id]["run"] is True
        assert reason in report["tasks"][task_id]["reasons"]
    lines = result.stdout.rstrip("\n").split("\n")
    assert lines[-1].startswith("jev-select: bypassed (")
    assert lines[-1].endswith(": 3 of 3 tasks selected")
    shown = result.without_masks()
    for secret in (API_KEY_SENTINEL, TOKEN_SENTINEL, ENV_TOKEN_SENTINEL):
        assert secret not in shown


def assert_quiet(result: CliRun) -> None:
    """No warning at all, and no setup line in the summary."""
    assert warnings_of(result) == []
    assert result.summary_text is not None
    for line in SETUP_LINES:
        assert line not in result.summary_text


# ---------------------------------------------------------------------------------------------
# A same-repository pull request without key or consent
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["", "   "], ids=["empty", "blank"])
def test_pull_request_without_a_key_warns_once_naming_the_input(tmp_path: Path, key: str) -> None:
    env = make_env(tmp_path, **{c.INPUT_API_KEY: key})
    result = run(env, tmp_path)
    assert_bypassed_and_published(result, c.REASON_MISSING_API_KEY)
    assert warnings_of(result) == ["::warning::" + c.MISSING_API_KEY_WARNING]
    assert c.INPUT_API_KEY in c.MISSING_API_KEY_WARNING
    lines = result.stdout.rstrip("\n").split("\n")
    # After the outputs and the summary, right before the log line.
    assert lines[-2] == "::warning::" + c.MISSING_API_KEY_WARNING
    summary = result.summary_text
    assert summary is not None
    assert c.SUMMARY_MISSING_API_KEY_LINE in summary
    assert c.SUMMARY_EXTERNAL_CONTEXT_DISABLED_LINE not in summary
    # The plan block is that of the bypass.
    block = read_plan_block(summary, expected_tested_sha=MERGE_SHA)
    assert block is not None
    assert dict(block.run) == {"docs": True, "lint": True, "unit": True}


def test_pull_request_without_consent_warns_once_naming_the_input(tmp_path: Path) -> None:
    result = run(make_env(tmp_path, **NO_CONSENT), tmp_path)
    assert_bypassed_and_published(result, c.REASON_EXTERNAL_CONTEXT_DISABLED)
    assert warnings_of(result) == ["::warning::" + c.EXTERNAL_CONTEXT_DISABLED_WARNING]
    assert f"{c.INPUT_ALLOW_EXTERNAL_CONTEXT}: '{c.BOOL_TRUE}'" in (
        c.EXTERNAL_CONTEXT_DISABLED_WARNING
    )
    summary = result.summary_text
    assert summary is not None
    assert c.SUMMARY_EXTERNAL_CONTEXT_DISABLED_LINE in summary
    assert c.SUMMARY_MISSING_API_KEY_LINE not in summary


def test_the_missing_key_wins_over_the_missing_consent(tmp_path: Path) -> None:
    result = run(make_env(tmp_path, **NO_KEY, **NO_CONSENT), tmp_path)
    assert_bypassed_and_published(result, c.REASON_MISSING_API_KEY)
    assert warnings_of(result) == ["::warning::" + c.MISSING_API_KEY_WARNING]


def test_shadow_mode_without_a_key_warns_too(tmp_path: Path) -> None:
    result = run(make_env(tmp_path, **NO_KEY, **{c.INPUT_MODE: c.MODE_SHADOW}), tmp_path)
    assert_bypassed_and_published(result, c.REASON_MISSING_API_KEY)
    assert warnings_of(result) == ["::warning::" + c.MISSING_API_KEY_WARNING]


@pytest.mark.parametrize(
    ("inputs", "warning"),
    [(NO_KEY, c.MISSING_API_KEY_WARNING), (NO_CONSENT, c.EXTERNAL_CONTEXT_DISABLED_WARNING)],
    ids=["no-key", "no-consent"],
)
def test_the_warning_is_printed_without_a_summary_file(
    tmp_path: Path, inputs: dict[str, str], warning: str
) -> None:
    env = make_env(tmp_path, **inputs)
    result = run_without_summary_file(env, tmp_path)
    assert result.code == 0, result.stdout
    assert result.outputs[c.OUTPUT_STATUS] == c.STATUS_BYPASSED
    assert result.outputs[c.OUTPUT_RUN] == ALL_TRUE
    assert warnings_of(result) == ["::warning::" + warning]
    assert not (env.root / "summary.md").exists()
    for secret in (API_KEY_SENTINEL, TOKEN_SENTINEL, ENV_TOKEN_SENTINEL):
        assert secret not in result.without_masks()


def test_an_empty_table_has_nothing_to_warn_about(tmp_path: Path) -> None:
    result = run(make_env(tmp_path, **NO_KEY, **{c.INPUT_TASKS: "{}"}), tmp_path)
    assert result.code == 0, result.stdout
    assert result.outputs[c.OUTPUT_RUN] == "{}"
    assert_quiet(result)


# ---------------------------------------------------------------------------------------------
# Bypasses by design stay quiet
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("inputs", [NO_KEY, NO_CONSENT], ids=["no-key", "no-consent"])
def test_fork_pull_request_stays_quiet(tmp_path: Path, inputs: dict[str, str]) -> None:
    env = make_env(tmp_path, **inputs)
    env.event = env.pull_request_event(fork=True)
    result = run(env, tmp_path)
    assert_bypassed_and_published(result, c.REASON_FORK)
    assert_quiet(result)


@pytest.mark.parametrize("event_name", ["push", "schedule", "pull_request_target", "merge_group"])
@pytest.mark.parametrize("inputs", [NO_KEY, NO_CONSENT], ids=["no-key", "no-consent"])
def test_non_pull_request_events_stay_quiet(
    tmp_path: Path, event_name: str, inputs: dict[str, str]
) -> None:
    env = make_env(tmp_path, **inputs)
    env.event_name = event_name
    env.event = {"ref": "refs/heads/main"}
    result = run(env, tmp_path)
    assert_bypassed_and_published(result, c.REASON_NON_PULL_REQUEST)
    assert_quiet(result)


@pytest.mark.parametrize("inputs", [NO_KEY, NO_CONSENT], ids=["no-key", "no-consent"])
def test_merge_queue_with_select_stays_quiet(tmp_path: Path, inputs: dict[str, str]) -> None:
    env = make_env(tmp_path, **inputs, **{c.INPUT_MERGE_GROUP: c.MERGE_GROUP_SELECT})
    env.event_name = "merge_group"
    env.event = {
        "merge_group": {
            "head_sha": MERGE_SHA,
            "head_ref": f"refs/heads/gh-readonly-queue/main/pr-7-{HEAD_SHA}",
            "base_sha": BASE_SHA,
            "base_ref": "refs/heads/main",
        }
    }
    result = run(env, tmp_path)
    reason = c.REASON_MISSING_API_KEY if inputs is NO_KEY else c.REASON_EXTERNAL_CONTEXT_DISABLED
    # The queue is bypassed for the same reason, but a queue is not where the setup is fixed.
    assert_bypassed_and_published(result, reason)
    assert_quiet(result)


def test_force_all_without_a_key_stays_quiet(tmp_path: Path) -> None:
    result = run(make_env(tmp_path, **NO_KEY, **{c.INPUT_FORCE_ALL: c.BOOL_TRUE}), tmp_path)
    assert_bypassed_and_published(result, c.REASON_FORCE_ALL)
    assert_quiet(result)


# ---------------------------------------------------------------------------------------------
# Manual pull-request mode: workflow_dispatch with pull-request
# ---------------------------------------------------------------------------------------------

PR_NUMBER = 7
DISPATCH_SHA = "4" * 40


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(tls=True) as server:
        yield server


def pull_payload(*, fork: bool) -> dict[str, Any]:
    head_repo: dict[str, Any] = (
        {"id": 99, "full_name": "someone/fork"} if fork else {"id": 42, "full_name": REPOSITORY}
    )
    return {
        "number": PR_NUMBER,
        "state": "open",
        "title": "a title",
        "body": "a body",
        "merge_commit_sha": MERGE_SHA,
        "base": {"ref": "main", "sha": BASE_SHA, "repo": {"id": 42, "full_name": REPOSITORY}},
        "head": {"ref": "feature", "sha": HEAD_SHA, "repo": head_repo},
    }


def manual_env(tmp_path: Path, github: FakeGitHub, **inputs: str) -> GitHubEnv:
    env = make_env(tmp_path, **{c.INPUT_PULL_REQUEST: str(PR_NUMBER)}, **inputs)
    env.event_name = "workflow_dispatch"
    env.sha = DISPATCH_SHA
    env.event = {"inputs": {c.INPUT_PULL_REQUEST: str(PR_NUMBER)}, "ref": "refs/heads/ops"}
    assert github.ca_bundle is not None
    env.extra["GITHUB_API_URL"] = github.url
    env.extra["REQUESTS_CA_BUNDLE"] = github.ca_bundle
    return env


def test_manual_pull_request_without_a_key_warns(tmp_path: Path, github: FakeGitHub) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pull_payload(fork=False))
    result = run(manual_env(tmp_path, github, **NO_KEY), tmp_path)
    assert_bypassed_and_published(result, c.REASON_MISSING_API_KEY)
    assert result.outputs[c.OUTPUT_TESTED_SHA] == MERGE_SHA
    assert warnings_of(result) == ["::warning::" + c.MISSING_API_KEY_WARNING]
    assert result.summary_text is not None
    assert c.SUMMARY_MISSING_API_KEY_LINE in result.summary_text


def test_manual_fork_pull_request_stays_quiet(tmp_path: Path, github: FakeGitHub) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pull_payload(fork=True))
    result = run(manual_env(tmp_path, github, **NO_KEY), tmp_path)
    assert_bypassed_and_published(result, c.REASON_FORK)
    assert_quiet(result)
