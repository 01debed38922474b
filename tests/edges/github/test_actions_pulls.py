"""The Actions history client's pull-request lookups (``history --repository``): one pull by
number, and the pulls of a commit as a bare array over ``Link`` pages, with rate-limit waits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.fakeactions import FakeActions
from support.fakegithub import FakeGitHub, FakeResponse

from jev_select.core.rollout import AnswerRefused
from jev_select.edges.github.actions import ActionsHistory, RateLimitExceeded
from jev_select.edges.httpio import HttpFailure

TOKEN = "ghs_PULLSTOKENSENTINEL42"
REPOSITORY = "octo-org/octo-repo"
SHA = "c" * 40


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub(tls=True) as server:
        assert server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        yield server


def client(api: FakeGitHub, waits: list[float], max_wait: float = 100) -> ActionsHistory:
    return ActionsHistory(
        api.url, TOKEN, max_wait=max_wait, sleep=waits.append, wall_clock=lambda: 1_800_000_000.0
    )


def test_a_pull_by_number_or_none_when_github_has_none(api: FakeGitHub) -> None:
    actions = FakeActions(api, REPOSITORY)
    actions.pull(7, head="a" * 40, merge_commit=SHA)
    waits: list[float] = []
    record = client(api, waits).pull_request(REPOSITORY, 7)
    assert record is not None
    assert record["merge_commit_sha"] == SHA
    assert client(api, waits).pull_request(REPOSITORY, 8) is None
    assert api.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("body", [b"[]", b"not json", b'"x"'])
def test_a_pull_that_is_not_an_object_is_refused(api: FakeGitHub, body: bytes) -> None:
    api.route(f"/repos/{REPOSITORY}/pulls/7", FakeResponse(200, body))
    with pytest.raises(AnswerRefused):
        client(api, []).pull_request(REPOSITORY, 7)


def test_a_failing_pull_lookup_raises_without_text(api: FakeGitHub) -> None:
    api.route(f"/repos/{REPOSITORY}/pulls/7", FakeResponse(500, b"secret"))
    with pytest.raises(HttpFailure) as raised:
        client(api, []).pull_request(REPOSITORY, 7)
    assert "secret" not in str(raised.value)


def test_the_pulls_of_a_commit_follow_link_pages(api: FakeGitHub) -> None:
    actions = FakeActions(api, REPOSITORY)
    first = actions.commit_pulls_path(SHA)
    second = f"/repos/{REPOSITORY}/commits/{SHA}/pulls?per_page=100&page=2"
    api.route(
        first,
        FakeResponse(200, b'[{"number": 1}]', {"Link": f'<{api.url}{second}>; rel="next"'}),
    )
    api.route(second, FakeResponse.json([{"number": 2}]))
    assert client(api, []).commit_pulls(REPOSITORY, SHA) == [{"number": 1}, {"number": 2}]


def test_a_link_off_the_api_root_is_refused(api: FakeGitHub) -> None:
    actions = FakeActions(api, REPOSITORY)
    api.route(
        actions.commit_pulls_path(SHA),
        FakeResponse(200, b"[]", {"Link": '<https://elsewhere.invalid/x>; rel="next"'}),
    )
    with pytest.raises(AnswerRefused):
        client(api, []).commit_pulls(REPOSITORY, SHA)


@pytest.mark.parametrize("status", [404, 422])
def test_an_unknown_commit_has_no_pulls(api: FakeGitHub, status: int) -> None:
    api.route(FakeActions(api, REPOSITORY).commit_pulls_path(SHA), FakeResponse.json({}, status))
    assert client(api, []).commit_pulls(REPOSITORY, SHA) is None


def test_rate_limits_are_waited_within_the_budget(api: FakeGitHub) -> None:
    actions = FakeActions(api, REPOSITORY)
    actions.pull(7, head="a" * 40, merge_commit=SHA)
    limited = FakeResponse(
        403, b"{}", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1800000009"}
    )
    api.queue(actions.pull_path(7), limited)
    waits: list[float] = []
    assert client(api, waits).pull_request(REPOSITORY, 7) is not None
    assert waits == [10.0]
    api.queue(actions.pull_path(7), limited)
    with pytest.raises(RateLimitExceeded):
        client(api, [], max_wait=5).pull_request(REPOSITORY, 7)
