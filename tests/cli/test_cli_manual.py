"""End-to-end runs of manual pull-request mode: ``workflow_dispatch`` with ``pull-request: N``.

Each run is ``jev-select plan`` in GitHub mode, its ``main`` called in the test process
(``run_cli_in_process``). A temporary git repository is the
``--remote``; an HTTPS server on 127.0.0.1 plays the GitHub REST API (``GITHUB_API_URL`` points
at it) and another plays Jev, both with throwaway CAs gathered into one ``REQUESTS_CA_BUNDLE``.
The pull request's title and body carry sentinels, and the GitHub token is a sentinel that may
appear only in the ``Authorization`` header the fake GitHub received.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import (
    API_KEY_SENTINEL,
    PARSER_SCORES,
    PARSER_TASKS,
    REPOSITORY,
    TOKEN_SENTINEL,
    UNIT_WORKFLOW,
    CliRun,
    GitHubEnv,
    run_cli_in_process,
)
from support.fakegithub import FakeGitHub, FakeResponse
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.core.plan_block import read_plan_block
from jev_select.errors import failure_message
from jev_select.version import USER_AGENT

PR_NUMBER = 7
PULL_PATH = f"/repos/{REPOSITORY}/pulls/{PR_NUMBER}"
TITLE_SENTINEL = "PRTITLESENTINEL_4d2a"
BODY_SENTINEL = "PRBODYSENTINEL_81fe"
DIFF_SENTINEL = "MANUALDIFFSENTINEL_e7"

TASKS = PARSER_TASKS
TASK_IDS = ["docs", "lint", "unit"]
SCORES = PARSER_SCORES


def assert_commits(report: Mapping[str, Any], *, tested: str, base: str, head: str) -> None:
    """The report names the pull request's commits (docs/reference.md, "Tested commit")."""
    assert (report["tested_sha"], report["base_sha"], report["head_sha"]) == (tested, base, head)


@pytest.fixture(scope="module")
def jev() -> Iterator[FakeJev]:
    with FakeJev(tls=True, scores=SCORES) as server:
        yield server


@pytest.fixture
def fresh_jev(jev: FakeJev) -> FakeJev:
    return jev.reset(dict(SCORES))


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(tls=True) as server:
        yield server


class ManualPullRequest:
    """Base, head and merge commits of an open pull request, plus the dispatch commit.

    The dispatch runs on a separate ``ops`` branch so that its commit (the metadata revision)
    differs from the pull request's base.
    """

    def __init__(self, root: Path) -> None:
        self.repo = GitRepo.init(root / "origin")
        self.base = self.repo.commit(
            {
                "src/parser/a.py": "def parse():\n    return 1\n",
                "docs/index.md": "# Docs\n",
                ".github/workflows/ci.yml": UNIT_WORKFLOW,
            }
        )
        self.dispatch = self.repo.commit(
            {"ops/runbook.md": "# Runbook\n"}, parents=[self.base], branch="ops"
        )
        self.head = self.repo.commit(
            {"src/parser/a.py": f"def parse():\n    return 2  # {DIFF_SENTINEL}\n"},
            parents=[self.base],
            branch="feature",
        )
        self.merge = self.repo.merge(self.base, self.head)

    def payload(self, **changes: Any) -> dict[str, Any]:
        """The REST answer for the pull request; ``changes`` replace top-level fields."""
        payload: dict[str, Any] = {
            "url": f"https://api.github.com{PULL_PATH}",
            "number": PR_NUMBER,
            "state": "open",
            "title": TITLE_SENTINEL,
            "body": BODY_SENTINEL,
            "merge_commit_sha": self.merge,
            "base": {"ref": "main", "sha": self.base, "repo": {"id": 42, "full_name": REPOSITORY}},
            "head": {
                "ref": "feature",
                "sha": self.head,
                "repo": {"id": 42, "full_name": REPOSITORY},
            },
        }
        payload.update(changes)
        return payload


@pytest.fixture
def pr(tmp_path: Path) -> ManualPullRequest:
    return ManualPullRequest(tmp_path)


def bundle(tmp_path: Path, *servers: FakeJev | FakeGitHub) -> str:
    """One CA file trusting every given test server."""
    path = tmp_path / "ca-bundle.pem"
    parts: list[str] = []
    for server in servers:
        assert server.ca_bundle is not None
        parts.append(Path(server.ca_bundle).read_text("ascii"))
    path.write_text("".join(parts), "ascii")
    return str(path)


def manual_env(
    tmp_path: Path,
    pr: ManualPullRequest,
    jev: FakeJev,
    github: FakeGitHub,
    *,
    event_name: str = "workflow_dispatch",
    **inputs: str,
) -> GitHubEnv:
    settings = {
        "tasks": TASKS,
        "api-key": API_KEY_SENTINEL,
        "github-token": TOKEN_SENTINEL,
        "allow-external-context": "true",
        "api-base-url": jev.base_url,
        "timeout-ms": "20000",
        "pull-request": str(PR_NUMBER),
    }
    settings.update(inputs)
    env = GitHubEnv(
        root=tmp_path / "runner",
        event_name=event_name,
        inputs=settings,
        runner=run_cli_in_process,
    )
    env.sha = pr.dispatch
    env.event = {"inputs": {"pull-request": str(PR_NUMBER)}, "ref": "refs/heads/ops"}
    env.extra["GITHUB_API_URL"] = github.url
    env.extra["REQUESTS_CA_BUNDLE"] = bundle(tmp_path, jev, github)
    return env


def run(env: GitHubEnv, pr: ManualPullRequest) -> CliRun:
    return env.run("--remote", str(pr.repo.path))


def check_token_hygiene(result: CliRun, jev: FakeJev, github: FakeGitHub) -> None:
    """The token, the key and pull-request text reach nothing but their intended headers."""
    text = result.without_masks()
    for secret in (TOKEN_SENTINEL, API_KEY_SENTINEL, TITLE_SENTINEL, BODY_SENTINEL, DIFF_SENTINEL):
        assert secret not in text
    for request in github.requests:
        assert TOKEN_SENTINEL not in request.path
        assert API_KEY_SENTINEL not in str(request.headers)
        for name, value in request.headers.items():
            if name != "authorization":
                assert TOKEN_SENTINEL not in value
    for sent in jev.requests:
        assert TOKEN_SENTINEL not in sent.body.decode("utf-8")
        assert all(TOKEN_SENTINEL not in value for _, value in sent.headers)
        assert TITLE_SENTINEL not in sent.body.decode("utf-8")


def assert_published_nothing(result: CliRun, code: str) -> None:
    assert result.code == 1
    assert result.stderr == ""
    errors = [line for line in result.stdout.split("\n") if line.startswith("::error::")]
    assert errors == ["::error::" + failure_message(code)]
    assert result.outputs_text == ""
    assert result.summary_text is None
    assert result.report_paths() == []
    assert not list(result.temp_root.glob("jev-select-git-*"))


def assert_complete_outputs(result: CliRun, tested_sha: str) -> dict[str, str]:
    assert result.code == 0, result.stdout
    assert result.stderr == ""
    outputs = result.outputs
    assert list(outputs) == [*c.OUTPUTS, *TASK_IDS]
    assert outputs["tested-sha"] == tested_sha
    assert outputs["report-path"] == str(result.report_paths()[0])
    summary = result.summary_text
    assert summary is not None
    block = read_plan_block(summary, expected_tested_sha=tested_sha)
    assert block is not None
    assert block.status == outputs["status"]
    return outputs


def assert_pull_request_commits(result: CliRun, pr: ManualPullRequest, tested: str) -> None:
    report = result.report
    assert_commits(report, tested=tested, base=pr.base, head=pr.head)
    assert report["metadata_sha"] == pr.dispatch


def assert_lookup_headers(github: FakeGitHub, *, token: str | None) -> None:
    assert [request.path for request in github.requests] == [PULL_PATH]
    request = github.requests[0]
    assert request.method == "GET"
    assert request.headers["accept"] == c.GITHUB_ACCEPT
    assert request.headers["user-agent"] == USER_AGENT
    if token is None:
        assert "authorization" not in request.headers
    else:
        assert request.headers["authorization"] == f"Bearer {token}"


# ---------------------------------------------------------------------------------------------
# Successful lookups
# ---------------------------------------------------------------------------------------------


def test_open_pull_request_in_merge_mode_is_planned(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload())
    result = run(manual_env(tmp_path, pr, fresh_jev, github), pr)
    outputs = assert_complete_outputs(result, pr.merge)
    assert outputs["status"] == c.STATUS_PLANNED
    assert outputs["run"] == '{"docs":false,"lint":true,"unit":true}'
    report = result.report
    assert report["tested_ref"] == c.TESTED_REF_MERGE
    assert report["tested_sha"] == pr.merge
    assert report["base_sha"] == pr.base
    assert report["head_sha"] == pr.head
    assert report["diff_base_sha"] == pr.base
    assert report["metadata_sha"] == pr.dispatch
    assert report["changed_path_count"] == 1
    assert report["tasks"]["docs"]["reasons"] == [c.REASON_JEV_BELOW_THRESHOLD]
    # Metadata came from the dispatch commit, the trusted workflow revision.
    provenance = report["job_metadata"]["unit"]["provenance"]
    assert {item["locator"]["commit"] for item in provenance} == {pr.dispatch}
    assert_lookup_headers(github, token=TOKEN_SENTINEL)
    assert len(fresh_jev.requests) == 1
    state = fresh_jev.requests[0].json["state"]
    assert (state["base_sha"], state["head_sha"], state["tested_sha"]) == (
        pr.base,
        pr.head,
        pr.merge,
    )
    assert DIFF_SENTINEL in state["diff"]
    check_token_hygiene(result, fresh_jev, github)


@pytest.mark.parametrize("token", ["", "ghs_caf\u00e9"])
def test_unusable_token_sends_no_authorization(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub, token: str
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload())
    env = manual_env(tmp_path, pr, fresh_jev, github, **{"github-token": token})
    result = run(env, pr)
    outputs = assert_complete_outputs(result, pr.merge)
    assert outputs["status"] == c.STATUS_PLANNED
    assert_lookup_headers(github, token=None)


def test_head_mode_tests_the_head_from_the_merge_base(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload(merge_commit_sha=None))
    env = manual_env(tmp_path, pr, fresh_jev, github, **{"tested-ref": "head"})
    result = run(env, pr)
    outputs = assert_complete_outputs(result, pr.head)
    assert outputs["status"] == c.STATUS_PLANNED
    report = result.report
    assert report["tested_ref"] == c.TESTED_REF_HEAD
    assert_commits(report, tested=pr.head, base=pr.base, head=pr.head)
    assert report["diff_base_sha"] == pr.base
    assert report["metadata_sha"] == pr.dispatch
    assert fresh_jev.requests[0].json["state"]["tested_sha"] == pr.head
    assert_lookup_headers(github, token=TOKEN_SENTINEL)
    check_token_hygiene(result, fresh_jev, github)


def test_api_root_with_a_path_prefix(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev
) -> None:
    with FakeGitHub(prefix="/api/v3", tls=True) as github:
        github.add_pull(REPOSITORY, PR_NUMBER, pr.payload())
        env = manual_env(tmp_path, pr, fresh_jev, github)
        env.extra["GITHUB_API_URL"] = github.url + "/"
        result = run(env, pr)
    assert_complete_outputs(result, pr.merge)
    assert_pull_request_commits(result, pr, pr.merge)
    assert [request.path for request in github.requests] == ["/api/v3" + PULL_PATH]
    assert github.requests[0].headers["authorization"] == f"Bearer {TOKEN_SENTINEL}"
    check_token_hygiene(result, fresh_jev, github)


def test_force_all_still_resolves_the_pull_request_first(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload())
    env = manual_env(tmp_path, pr, fresh_jev, github, **{"force-all": "true"})
    result = run(env, pr)
    outputs = assert_complete_outputs(result, pr.merge)
    assert outputs["status"] == c.STATUS_BYPASSED
    assert outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    report = result.report
    assert_commits(report, tested=pr.merge, base=pr.base, head=pr.head)
    assert report["metadata_sha"] == pr.dispatch
    assert report["diff_base_sha"] == pr.base
    assert report["job_metadata"] == {}
    for decision in report["tasks"].values():
        assert c.REASON_FORCE_ALL in decision["reasons"]
    assert_lookup_headers(github, token=TOKEN_SENTINEL)
    assert fresh_jev.requests == []
    check_token_hygiene(result, fresh_jev, github)


def test_force_all_does_not_hide_a_closed_pull_request(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload(state="closed"))
    env = manual_env(tmp_path, pr, fresh_jev, github, **{"force-all": "true"})
    result = run(env, pr)
    assert_published_nothing(result, c.FAILURE_MERGE_UNAVAILABLE)
    check_token_hygiene(result, fresh_jev, github)


def test_fork_pull_request_from_the_api_is_bypassed(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    head = {"ref": "feature", "sha": pr.head, "repo": {"id": 99, "full_name": "someone/fork"}}
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload(head=head))
    result = run(manual_env(tmp_path, pr, fresh_jev, github), pr)
    outputs = assert_complete_outputs(result, pr.merge)
    assert outputs["status"] == c.STATUS_BYPASSED
    assert outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    report = result.report
    assert_commits(report, tested=pr.merge, base=pr.base, head=pr.head)
    assert report["metadata_sha"] == pr.dispatch
    assert report["observation"] is None
    for decision in report["tasks"].values():
        assert c.REASON_FORK in decision["reasons"]
    assert fresh_jev.requests == []
    check_token_hygiene(result, fresh_jev, github)


@pytest.mark.parametrize(
    "head_repo",
    [None, {"id": True, "full_name": REPOSITORY}],
    ids=["no-repo", "boolean-id"],
)
def test_doubtful_head_repository_counts_as_a_fork(
    tmp_path: Path,
    pr: ManualPullRequest,
    fresh_jev: FakeJev,
    github: FakeGitHub,
    head_repo: Mapping[str, Any] | None,
) -> None:
    head: dict[str, Any] = {"sha": pr.head}
    if head_repo is not None:
        head["repo"] = dict(head_repo)
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload(head=head))
    result = run(manual_env(tmp_path, pr, fresh_jev, github), pr)
    outputs = assert_complete_outputs(result, pr.merge)
    assert outputs["status"] == c.STATUS_BYPASSED
    assert_pull_request_commits(result, pr, pr.merge)
    assert all(c.REASON_FORK in item["reasons"] for item in result.report["tasks"].values())
    assert fresh_jev.requests == []
    check_token_hygiene(result, fresh_jev, github)


def test_stale_base_in_the_answer_falls_back_as_incoherent(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    # The base branch moved after GitHub computed the merge commit, but the answer still names
    # the old base: the merge commit's parents no longer match.
    moved = pr.repo.commit({"docs/index.md": "# Docs, moved\n"}, parents=[pr.base])
    payload = pr.payload()
    payload["base"] = {"sha": moved, "repo": {"id": 42, "full_name": REPOSITORY}}
    github.add_pull(REPOSITORY, PR_NUMBER, payload)
    result = run(manual_env(tmp_path, pr, fresh_jev, github), pr)
    outputs = assert_complete_outputs(result, pr.merge)
    assert outputs["status"] == c.STATUS_FALLBACK
    assert outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    report = result.report
    assert_commits(report, tested=pr.merge, base=moved, head=pr.head)
    assert report["diff_base_sha"] == moved
    assert report["changed_path_count"] is None
    assert report["diff_hash"] is None
    assert report["job_metadata"] == {}
    assert report["tasks"]["docs"] == {
        "proposed_run": None,
        "run": True,
        "reasons": [c.REASON_SHA_INCOHERENT],
    }
    assert fresh_jev.requests == []
    check_token_hygiene(result, fresh_jev, github)


# ---------------------------------------------------------------------------------------------
# Lookups that fail: exit 1, one fixed diagnostic, nothing published
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tested_ref", "changes"),
    [
        ("merge", {"state": "closed"}),
        ("merge", {"state": "OPEN"}),
        ("merge", {"merge_commit_sha": None}),
        ("head", {"head": {"sha": None, "repo": {"id": 42, "full_name": REPOSITORY}}}),
    ],
    ids=["closed", "state-case", "merge-null", "head-sha-null"],
)
def test_merge_unavailable(
    tmp_path: Path,
    pr: ManualPullRequest,
    fresh_jev: FakeJev,
    github: FakeGitHub,
    tested_ref: str,
    changes: Mapping[str, Any],
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload(**changes))
    env = manual_env(tmp_path, pr, fresh_jev, github, **{"tested-ref": tested_ref})
    result = run(env, pr)
    assert_published_nothing(result, c.FAILURE_MERGE_UNAVAILABLE)
    assert_lookup_headers(github, token=TOKEN_SENTINEL)
    assert fresh_jev.requests == []
    check_token_hygiene(result, fresh_jev, github)


def test_closed_pull_request_without_merge_commit_in_head_mode_is_unavailable(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload(state="closed", merge_commit_sha=None))
    env = manual_env(tmp_path, pr, fresh_jev, github, **{"tested-ref": "head"})
    result = run(env, pr)
    assert_published_nothing(result, c.FAILURE_MERGE_UNAVAILABLE)
    check_token_hygiene(result, fresh_jev, github)


@pytest.mark.parametrize(
    "response",
    [
        FakeResponse.not_found(),
        FakeResponse.json({"message": "oops"}, status=500),
        FakeResponse(200, b"<html>" + BODY_SENTINEL.encode() + b"</html>"),
        FakeResponse(200, b'{"state": "open", "state": "open"}'),
        FakeResponse(200, b"[]"),
        FakeResponse.oversized(c.GITHUB_BODY_CAP + 1),
        FakeResponse.oversized(c.GITHUB_BODY_CAP + 1, declare_length=False),
    ],
    ids=["404", "500", "html", "duplicate-key", "array", "oversized", "oversized-undeclared"],
)
def test_pull_request_unavailable(
    tmp_path: Path,
    pr: ManualPullRequest,
    fresh_jev: FakeJev,
    github: FakeGitHub,
    response: FakeResponse,
) -> None:
    github.script(PULL_PATH, response)
    result = run(manual_env(tmp_path, pr, fresh_jev, github), pr)
    assert_published_nothing(result, c.FAILURE_PULL_REQUEST_UNAVAILABLE)
    assert_lookup_headers(github, token=TOKEN_SENTINEL)
    assert fresh_jev.requests == []
    check_token_hygiene(result, fresh_jev, github)


@pytest.mark.parametrize("status", [302, 307])
def test_redirect_is_unavailable_and_never_followed(
    tmp_path: Path,
    pr: ManualPullRequest,
    fresh_jev: FakeJev,
    github: FakeGitHub,
    status: int,
) -> None:
    elsewhere = f"/repos/{REPOSITORY}/pulls/{PR_NUMBER + 1}"
    github.add_pull(REPOSITORY, PR_NUMBER + 1, pr.payload())
    github.script(PULL_PATH, FakeResponse.redirect(github.url + elsewhere, status=status))
    result = run(manual_env(tmp_path, pr, fresh_jev, github), pr)
    assert_published_nothing(result, c.FAILURE_PULL_REQUEST_UNAVAILABLE)
    assert [request.path for request in github.requests] == [PULL_PATH]
    check_token_hygiene(result, fresh_jev, github)


def test_unreachable_api_is_unavailable(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    env = manual_env(tmp_path, pr, fresh_jev, github)
    # A TLS server whose certificate the bundle does not trust.
    env.extra["REQUESTS_CA_BUNDLE"] = bundle(tmp_path, fresh_jev)
    result = run(env, pr)
    assert_published_nothing(result, c.FAILURE_PULL_REQUEST_UNAVAILABLE)
    assert github.requests == []
    check_token_hygiene(result, fresh_jev, github)


@pytest.mark.parametrize(
    "changes",
    [
        {"base": {"sha": "A" * 40, "repo": {"id": 42, "full_name": REPOSITORY}}},
        {"base": {"sha": "1" * 40, "repo": {"id": 42, "full_name": "other/repository"}}},
    ],
    ids=["uppercase-base", "other-repository"],
)
def test_answer_failing_the_event_rules_is_an_invalid_event(
    tmp_path: Path,
    pr: ManualPullRequest,
    fresh_jev: FakeJev,
    github: FakeGitHub,
    changes: Mapping[str, Any],
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload(**changes))
    result = run(manual_env(tmp_path, pr, fresh_jev, github), pr)
    assert_published_nothing(result, c.FAILURE_INVALID_EVENT)
    check_token_hygiene(result, fresh_jev, github)


# ---------------------------------------------------------------------------------------------
# Requests refused before any network access
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event_name", "number"),
    [
        ("pull_request", "7"),
        ("push", "7"),
        ("workflow_dispatch", "07"),
        ("workflow_dispatch", "9007199254740992"),
    ],
)
def test_invalid_manual_request_makes_no_request(
    tmp_path: Path,
    pr: ManualPullRequest,
    fresh_jev: FakeJev,
    github: FakeGitHub,
    event_name: str,
    number: str,
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload())
    env = manual_env(
        tmp_path, pr, fresh_jev, github, event_name=event_name, **{"pull-request": number}
    )
    if event_name == "pull_request":
        env.event = env.pull_request_event(base=pr.base, head=pr.head)
    result = run(env, pr)
    assert_published_nothing(result, c.FAILURE_INVALID_MANUAL_REQUEST)
    assert github.requests == []
    assert fresh_jev.requests == []
    check_token_hygiene(result, fresh_jev, github)


def test_input_errors_win_over_the_lookup(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    from jev_select.errors import input_error_message

    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload())
    env = manual_env(tmp_path, pr, fresh_jev, github, **{"timeout-ms": "0"})
    result = run(env, pr)
    assert result.code == 1
    assert result.stderr == ""
    errors = [line for line in result.stdout.split("\n") if line.startswith("::error::")]
    assert errors == ["::error::" + input_error_message(c.INPUT_TIMEOUT_MS)]
    assert result.outputs_text == ""
    assert result.summary_text is None
    assert result.report_paths() == []
    assert github.requests == []
    check_token_hygiene(result, fresh_jev, github)


def test_blank_pull_request_input_is_an_ordinary_dispatch(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    env = manual_env(tmp_path, pr, fresh_jev, github, **{"pull-request": "   "})
    result = run(env, pr)
    outputs = assert_complete_outputs(result, pr.dispatch)
    assert outputs["status"] == c.STATUS_BYPASSED
    report = result.report
    assert report["tested_sha"] == report["base_sha"] == report["head_sha"] == pr.dispatch
    assert report["metadata_sha"] == pr.dispatch
    assert report["tasks"]["unit"]["reasons"] == [c.REASON_NON_PULL_REQUEST]
    assert github.requests == []
    assert fresh_jev.requests == []


def test_invalid_api_url_makes_no_request(
    tmp_path: Path, pr: ManualPullRequest, fresh_jev: FakeJev, github: FakeGitHub
) -> None:
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload())
    env = manual_env(tmp_path, pr, fresh_jev, github)
    env.extra["GITHUB_API_URL"] = github.url.replace("https://", "http://")
    result = run(env, pr)
    # The spec leaves the code open; the product treats the runner variable as environment.
    assert_published_nothing(result, c.FAILURE_INVALID_ENVIRONMENT)
    assert github.requests == []
    check_token_hygiene(result, fresh_jev, github)


@pytest.mark.parametrize(
    "merge_sha", ["z" * 40, "A" * 40, "a" * 64, ""], ids=["non-hex", "upper", "sha256", "empty"]
)
def test_merge_sha_that_is_not_a_commit_id_publishes_nothing(
    tmp_path: Path,
    pr: ManualPullRequest,
    fresh_jev: FakeJev,
    github: FakeGitHub,
    merge_sha: str,
) -> None:
    # A merge commit the report could not name as tested_sha (docs/reference.md, "Report fields") is
    # as unusable as a missing one (docs/reference.md, "Manual pull-request mode"): the run fails
    # closed before any git command.
    github.add_pull(REPOSITORY, PR_NUMBER, pr.payload(merge_commit_sha=merge_sha))
    result = run(manual_env(tmp_path, pr, fresh_jev, github), pr)
    assert result.code == 1
    errors = [line for line in result.stdout.split("\n") if line.startswith("::error::")]
    assert errors == ["::error::" + failure_message(c.FAILURE_MERGE_UNAVAILABLE)]
    assert result.outputs_text == ""
    assert result.summary_text is None
    assert result.report_paths() == []
    assert fresh_jev.requests == []
    check_token_hygiene(result, fresh_jev, github)
