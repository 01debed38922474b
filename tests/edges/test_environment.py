"""The GitHub Actions environment (docs/reference.md, "Events"): variables, event file, pull request
facts, fork detection, the manual number and the bypass order."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from jev_select import contracts as c
from jev_select.edges.environment import (
    MergeGroupFacts,
    is_merge_group_event,
    parse_manual_number,
    parse_merge_group,
    parse_pull_request,
    read_github_context,
    server_origin,
    temp_root,
)
from jev_select.errors import PlanningFailure

REPOSITORY = "Octo-Org/octo.repo_1"
BASE = "b" * 40
HEAD = "c" * 40
SHA = "a" * 40


def failure_code(action: Any) -> str:
    with pytest.raises(PlanningFailure) as caught:
        action()
    return caught.value.code


# --------------------------------------------------------------------------------------------
# GITHUB_SERVER_URL (docs/reference.md, "GitHub environment")
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "origin"),
    [
        ("https://github.com", "https://github.com"),
        ("https://github.com/", "https://github.com"),
        ("HTTPS://GHES.Example:8443/", "https://ghes.example:8443"),
        ("https://ghes.example:443", "https://ghes.example"),
        ("https://[::1]:8443", "https://[::1]:8443"),
    ],
)
def test_server_origin_accepts_an_origin(text: str, origin: str) -> None:
    assert server_origin(text) == origin


@pytest.mark.parametrize(
    "text",
    [
        "https://ghes.example/prefix",
        "https://ghes.example/prefix/",
        "https://ghes.example/.",  # a path, even though it normalises away
        "https://ghes.example//",
        "https://ghes.example/./",
        "https://ghes.example/a/..",
        "http://github.com",
        "https://user@github.com",
        "https://github.com?x",
        "https://github.com/#f",
        "https:// github.com",
        "github.com",
        "",
    ],
)
def test_server_origin_refuses_paths_and_other_schemes(text: str) -> None:
    assert server_origin(text) is None


# --------------------------------------------------------------------------------------------
# read_github_context (docs/reference.md, "GitHub environment", "Validation order" order)
# --------------------------------------------------------------------------------------------


def runner_env(tmp_path: Path, event: Any = None, **overrides: str) -> dict[str, str]:
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps({"ref": "x"} if event is None else event), "utf-8")
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_SHA": SHA,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "RUNNER_TEMP": str(tmp_path),
    }
    env.update(overrides)
    return {name: value for name, value in env.items() if value != "<unset>"}


def test_context_of_a_complete_environment(tmp_path: Path) -> None:
    context = read_github_context(runner_env(tmp_path, GITHUB_API_URL="https://api.example"))
    assert context.event_name == "pull_request"
    assert context.repository == REPOSITORY
    assert context.sha == SHA
    assert context.server_origin == "https://github.com"
    assert context.api_url == "https://api.example"
    assert context.event == {"ref": "x"}
    assert context.output_path == str(tmp_path / "output")
    assert context.summary_path == str(tmp_path / "summary")
    assert context.temp_root == str(tmp_path)


def test_server_url_defaults_when_unset_or_empty(tmp_path: Path) -> None:
    for value in ("<unset>", ""):
        context = read_github_context(runner_env(tmp_path, GITHUB_SERVER_URL=value))
        assert context.server_origin == c.GITHUB_DEFAULT_SERVER_URL


def test_optional_variables(tmp_path: Path) -> None:
    env = runner_env(tmp_path, GITHUB_STEP_SUMMARY="<unset>", RUNNER_TEMP="<unset>")
    context = read_github_context(env)
    assert context.summary_path is None
    assert context.temp_root == tempfile.gettempdir()
    assert context.api_url is None
    assert temp_root({"RUNNER_TEMP": "/runner/tmp"}) == "/runner/tmp"


@pytest.mark.parametrize(
    "overrides",
    [
        {"GITHUB_EVENT_NAME": ""},
        {"GITHUB_EVENT_NAME": "<unset>"},
        {"GITHUB_REPOSITORY": "octo"},
        {"GITHUB_REPOSITORY": "octo/repo/extra"},
        {"GITHUB_REPOSITORY": "octo/rép"},
        {"GITHUB_REPOSITORY": "octo/repo\n"},
        {"GITHUB_SHA": "A" * 40},
        {"GITHUB_SHA": "a" * 39},
        {"GITHUB_SHA": "a" * 40 + "\n"},
        {"GITHUB_SERVER_URL": "https://ghes.example/prefix"},
        {"GITHUB_SERVER_URL": "http://github.com"},
        {"GITHUB_OUTPUT": "<unset>"},
        {"GITHUB_OUTPUT": ""},
    ],
)
def test_invalid_environment(tmp_path: Path, overrides: dict[str, str]) -> None:
    env = runner_env(tmp_path, **overrides)
    assert failure_code(lambda: read_github_context(env)) == c.FAILURE_INVALID_ENVIRONMENT


def test_environment_is_checked_before_the_event_file(tmp_path: Path) -> None:
    env = runner_env(tmp_path, GITHUB_SHA="bad", GITHUB_EVENT_PATH=str(tmp_path / "missing"))
    assert failure_code(lambda: read_github_context(env)) == c.FAILURE_INVALID_ENVIRONMENT


@pytest.mark.parametrize("event_name", ["push", "schedule", "workflow_dispatch", "pull_request"])
@pytest.mark.parametrize(
    "content",
    [b"", b"[]", b"null", b'"text"', b'{"a": 1, "a": 2}', b'{"a": NaN}', b'{"\xff": 1}', b"{"],
)
def test_event_file_is_read_for_every_event(
    tmp_path: Path, event_name: str, content: bytes
) -> None:
    path = tmp_path / "bad-event.json"
    path.write_bytes(content)
    env = runner_env(tmp_path, GITHUB_EVENT_NAME=event_name, GITHUB_EVENT_PATH=str(path))
    assert failure_code(lambda: read_github_context(env)) == c.FAILURE_INVALID_EVENT


@pytest.mark.parametrize("path", ["<unset>", "", "missing.json", "."])
def test_missing_or_unreadable_event_file(tmp_path: Path, path: str) -> None:
    value = path if path in ("<unset>", "") else str(tmp_path / path)
    env = runner_env(tmp_path, GITHUB_EVENT_NAME="push", GITHUB_EVENT_PATH=value)
    assert failure_code(lambda: read_github_context(env)) == c.FAILURE_INVALID_EVENT


# --------------------------------------------------------------------------------------------
# pull_request payloads and forks (docs/reference.md, "Pull request events")
# --------------------------------------------------------------------------------------------


def payload(
    *,
    base_id: Any = 42,
    head_id: Any = 42,
    head_name: Any = REPOSITORY,
    base_name: Any = REPOSITORY,
    base_sha: Any = BASE,
    head_sha: Any = HEAD,
) -> dict[str, Any]:
    return {
        "base": {"sha": base_sha, "repo": {"id": base_id, "full_name": base_name}},
        "head": {"sha": head_sha, "repo": {"id": head_id, "full_name": head_name}},
    }


def test_same_repository_pull_request() -> None:
    facts = parse_pull_request(payload(), REPOSITORY)
    assert (facts.base_sha, facts.head_sha, facts.fork) == (BASE, HEAD, False)


def test_repository_names_compare_ignoring_ascii_case_only() -> None:
    assert not parse_pull_request(payload(head_name=REPOSITORY.upper()), REPOSITORY).fork
    facts = parse_pull_request(payload(base_name=REPOSITORY.lower()), REPOSITORY.upper())
    assert facts.base_sha == BASE
    # U+212A KELVIN SIGN lower-cases to "k" in Unicode, but it is not an ASCII letter.
    assert failure_code(lambda: parse_pull_request(payload(base_name="o/\u212a"), "o/k")) == (
        c.FAILURE_INVALID_EVENT
    )
    assert parse_pull_request(payload(head_name="o/\u212a", base_name="o/k"), "o/k").fork


@pytest.mark.parametrize(
    "changes",
    [
        {"base_id": True, "head_id": True},  # booleans are not numbers, even when equal
        {"base_id": 1, "head_id": True},
        {"base_id": "42", "head_id": "42"},
        {"base_id": None, "head_id": None},
        {"head_id": 43},
        {"head_name": "someone/fork"},
        {"head_name": None},
        {"head_name": 5},
    ],
)
def test_fork_is_decided_conservatively(changes: dict[str, Any]) -> None:
    assert parse_pull_request(payload(**changes), REPOSITORY).fork


def test_numeric_ids_compare_as_json_numbers() -> None:
    assert not parse_pull_request(payload(base_id=42, head_id=42.0), REPOSITORY).fork
    assert not parse_pull_request(payload(base_id=2**60, head_id=2**60), REPOSITORY).fork


@pytest.mark.parametrize("head_repo", ["<missing>", None, "octo/repo", [], 42])
def test_head_repository_that_is_not_an_object_is_a_fork(head_repo: Any) -> None:
    value = payload()
    if head_repo == "<missing>":
        del value["head"]["repo"]
    else:
        value["head"]["repo"] = head_repo
    assert parse_pull_request(value, REPOSITORY).fork


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        "pull",
        {},
        {"base": {"sha": BASE}, "head": {"sha": HEAD}},
        payload(base_sha=BASE.upper()),
        payload(head_sha="C" * 40),
        payload(head_sha=HEAD[:39]),
        payload(base_sha=None),
        payload(head_sha=7),
        payload(base_name="other/repo"),
        payload(base_name=None),
        {"base": "x", "head": payload()["head"]},
        {"base": payload()["base"], "head": None},
    ],
)
def test_invalid_pull_request_payload(value: Any) -> None:
    assert failure_code(lambda: parse_pull_request(value, REPOSITORY)) == c.FAILURE_INVALID_EVENT


# --------------------------------------------------------------------------------------------
# merge_group payloads (merge-group: select)
# --------------------------------------------------------------------------------------------


def test_merge_group_payload_names_the_queue_commit_and_its_base() -> None:
    payload = {
        "head_sha": SHA,
        "head_ref": "refs/heads/gh-readonly-queue/main/pr-7-" + HEAD,
        "base_sha": BASE,
        "base_ref": "refs/heads/main",
        "head_commit": {"id": SHA},
    }
    assert parse_merge_group(payload, SHA) == MergeGroupFacts(base_sha=BASE, head_sha=SHA)
    # Only the two SHAs are needed: the refs are informative.
    assert parse_merge_group({"head_sha": SHA, "base_sha": BASE}, SHA).base_sha == BASE


def test_only_the_exact_event_name_is_a_merge_group() -> None:
    assert is_merge_group_event("merge_group")
    for name in ("Merge_Group", "merge-group", "merge_group ", "pull_request", "push"):
        assert not is_merge_group_event(name)


@pytest.mark.parametrize(
    "value",
    [
        None,
        [SHA, BASE],
        "merge_group",
        {},
        {"head_sha": SHA},
        {"base_sha": BASE},
        {"head_sha": HEAD, "base_sha": BASE},  # not GITHUB_SHA
        {"head_sha": SHA.upper(), "base_sha": BASE},
        {"head_sha": SHA, "base_sha": BASE.upper()},
        {"head_sha": SHA, "base_sha": BASE[:-1]},
        {"head_sha": SHA, "base_sha": BASE + "0" * 24},  # 64 hex is not a 40-hex SHA
        {"head_sha": SHA, "base_sha": 7},
        {"head_sha": SHA, "base_sha": None},
    ],
)
def test_invalid_merge_group_payload(value: Any) -> None:
    assert failure_code(lambda: parse_merge_group(value, SHA)) == c.FAILURE_INVALID_EVENT


# --------------------------------------------------------------------------------------------
# Manual number (docs/reference.md, "Manual pull-request mode") and bypass order (docs/reference.md,
# "Statuses")
# --------------------------------------------------------------------------------------------


def test_manual_number() -> None:
    assert parse_manual_number("", "push") is None
    assert parse_manual_number("", "workflow_dispatch") is None
    assert parse_manual_number("12", "workflow_dispatch") == 12
    assert parse_manual_number("9007199254740991", "workflow_dispatch") == 9007199254740991


@pytest.mark.parametrize(
    ("text", "event_name"),
    [
        ("12", "push"),
        ("12", "pull_request"),
        ("12", "Workflow_Dispatch"),
        ("0", "workflow_dispatch"),
        ("012", "workflow_dispatch"),
        ("+12", "workflow_dispatch"),
        ("1e3", "workflow_dispatch"),
        ("12.0", "workflow_dispatch"),
        ("١٢", "workflow_dispatch"),  # non-ASCII digits
        ("9007199254740992", "workflow_dispatch"),
    ],
)
def test_invalid_manual_request(text: str, event_name: str) -> None:
    code = failure_code(lambda: parse_manual_number(text, event_name))
    assert code == c.FAILURE_INVALID_MANUAL_REQUEST
