"""The Actions history client against local HTTPS servers: pagination, rate limits, downloads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from support.fakegithub import FakeGitHub, FakeResponse

from jev_select import contracts as c
from jev_select.core.rollout import AnswerRefused
from jev_select.edges.github.actions import ActionsHistory, ArtifactGone, RateLimitExceeded
from jev_select.edges.httpio import HttpFailure, HttpTooLarge

TOKEN = "ghs_ACTIONSTOKENSENTINEL42"
REPOSITORY = "octo-org/octo-repo"
RUNS = f"/repos/{REPOSITORY}/actions/workflows/jev-shadow.yml/runs"


@pytest.fixture
def servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeGitHub, FakeGitHub]]:
    """The API and a storage host, both HTTPS, trusted through one bundle."""
    with FakeGitHub(tls=True) as api, FakeGitHub(tls=True) as storage:
        bundle = tmp_path / "ca.pem"
        assert api.ca_bundle is not None
        assert storage.ca_bundle is not None
        bundle.write_text(
            Path(api.ca_bundle).read_text() + Path(storage.ca_bundle).read_text(), encoding="ascii"
        )
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
        yield api, storage


class Sleeper:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def record_id(record: object) -> object:
    assert isinstance(record, dict)
    return record["id"]


def client(
    api: FakeGitHub, sleeper: Sleeper | None = None, max_wait: float = 100
) -> ActionsHistory:
    return ActionsHistory(
        api.url,
        TOKEN,
        max_wait=max_wait,
        sleep=sleeper or Sleeper(),
        wall_clock=lambda: 1_800_000_000.0,
    )


def runs_page(ids: list[int], link: str | None = None) -> FakeResponse:
    page = FakeResponse.json({"total_count": 999, "workflow_runs": [{"id": i} for i in ids]})
    if link is None:
        return page
    return FakeResponse(page.status, page.body, {**page.headers, "Link": link})


def query(**fields: object) -> str:
    return urlencode({"per_page": 100, **fields})


def test_pages_follow_next_links_and_stop_at_the_limit(
    servers: tuple[FakeGitHub, FakeGitHub],
) -> None:
    api, _ = servers
    first = f"{RUNS}?{query(status='completed', created='>=2026-11-01')}"
    second, third = f"{RUNS}?page=2", f"{RUNS}?page=3"
    api.route(
        first, runs_page([1, 2], f'<{api.url}{second}>; rel="next", <{api.url}{third}>; rel="last"')
    )
    api.route(second, runs_page([3, 4], f'<{api.url}{third}>; rel="next"'))
    api.route(third, runs_page([5]))
    listing = client(api).workflow_runs(
        REPOSITORY, "jev-shadow.yml", limit=100, created_since="2026-11-01", completed=True
    )
    assert [record_id(record) for record in listing] == [1, 2, 3, 4, 5]
    assert api.paths() == [first, second, third]
    assert all(request.headers["authorization"] == f"Bearer {TOKEN}" for request in api.requests)
    # The limit ends the walk as soon as it is reached.
    api.requests.clear()
    listing = client(api).workflow_runs(
        REPOSITORY, "jev-shadow.yml", limit=3, created_since="2026-11-01", completed=True
    )
    assert [record_id(record) for record in listing] == [1, 2, 3]
    assert api.paths() == [first, second]


def test_a_next_link_outside_the_api_root_is_refused(
    servers: tuple[FakeGitHub, FakeGitHub],
) -> None:
    api, storage = servers
    first = f"{RUNS}?{query()}"
    api.route(first, runs_page([1], f'<{storage.url}{RUNS}?page=2>; rel="next"'))
    with pytest.raises(AnswerRefused):
        client(api).workflow_runs(REPOSITORY, "jev-shadow.yml", limit=100)
    assert storage.requests == []


@pytest.mark.parametrize(
    "body",
    [b"[]", b'{"workflow_runs": {}}', b"not json", b'{"workflow_runs": [], "x": NaN}'],
)
def test_a_malformed_page_is_refused(servers: tuple[FakeGitHub, FakeGitHub], body: bytes) -> None:
    api, _ = servers
    api.route(f"{RUNS}?{query()}", FakeResponse(200, body))
    with pytest.raises(AnswerRefused):
        client(api).workflow_runs(REPOSITORY, "jev-shadow.yml", limit=100)


def test_endless_pagination_is_refused(servers: tuple[FakeGitHub, FakeGitHub]) -> None:
    api, _ = servers
    first = f"{RUNS}?{query()}"
    api.route(first, runs_page([], f'<{api.url}{first}>; rel="next"'))
    with pytest.raises(AnswerRefused):
        client(api).workflow_runs(REPOSITORY, "jev-shadow.yml", limit=100)
    assert len(api.requests) == c.ROLLOUT_MAX_PAGES


def test_rate_limit_answers_wait_then_ask_again(servers: tuple[FakeGitHub, FakeGitHub]) -> None:
    api, _ = servers
    path = f"{RUNS}?{query()}"
    api.queue(
        path,
        FakeResponse(429, b"{}", {"Retry-After": "7"}),
        FakeResponse(
            403,
            b"{}",
            {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(1_800_000_000 + 20)},
        ),
    )
    api.route(path, runs_page([1]))
    sleeper = Sleeper()
    history = client(api, sleeper, max_wait=100)
    assert [record_id(r) for r in history.workflow_runs(REPOSITORY, "jev-shadow.yml", limit=9)] == [
        1
    ]
    assert sleeper.waits == [7.0, 21.0]
    assert history.waited == 28.0
    assert len(api.requests) == 3


def test_a_wait_beyond_the_budget_stops_without_sleeping(
    servers: tuple[FakeGitHub, FakeGitHub],
) -> None:
    api, _ = servers
    path = f"{RUNS}?{query()}"
    api.queue(path, FakeResponse(429, b"{}", {"Retry-After": "30"}))
    api.queue(path, FakeResponse(429, b"{}", {"Retry-After": "30"}))
    api.route(path, runs_page([1]))
    sleeper = Sleeper()
    history = client(api, sleeper, max_wait=45)
    with pytest.raises(RateLimitExceeded):
        history.workflow_runs(REPOSITORY, "jev-shadow.yml", limit=9)
    assert sleeper.waits == [30.0]  # the budget is the command's, not each request's


def test_a_refusal_without_rate_limit_headers_is_a_failure(
    servers: tuple[FakeGitHub, FakeGitHub],
) -> None:
    api, _ = servers
    api.route(f"{RUNS}?{query()}", FakeResponse.json({"message": "Forbidden"}, status=403))
    sleeper = Sleeper()
    with pytest.raises(HttpFailure) as failure:
        client(api, sleeper).workflow_runs(REPOSITORY, "jev-shadow.yml", limit=9)
    assert failure.value.status == 403
    assert sleeper.waits == []


ZIP_PATH = f"/repos/{REPOSITORY}/actions/artifacts/55/zip"


def test_the_download_follows_one_redirect_to_storage_without_the_token(
    servers: tuple[FakeGitHub, FakeGitHub],
) -> None:
    api, storage = servers
    # Another host name for the same loopback address: the storage service of the real API.
    location = storage.url.replace("127.0.0.1", "localhost") + "/blob/55?sig=abc&se=1"
    api.route(ZIP_PATH, FakeResponse.redirect(location))
    storage.route("/blob/55?sig=abc&se=1", FakeResponse(200, b"PK zip bytes"))
    assert client(api).download_artifact(REPOSITORY, 55) == b"PK zip bytes"
    assert api.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert len(storage.requests) == 1
    assert "authorization" not in storage.requests[0].headers
    assert TOKEN not in repr(storage.requests[0].headers)


def test_a_second_redirect_is_not_followed(servers: tuple[FakeGitHub, FakeGitHub]) -> None:
    api, storage = servers
    api.route(ZIP_PATH, FakeResponse.redirect(f"{storage.url}/blob/1"))
    storage.route("/blob/1", FakeResponse.redirect(f"{storage.url}/blob/2"))
    storage.route("/blob/2", FakeResponse(200, b"never"))
    with pytest.raises(HttpFailure):
        client(api).download_artifact(REPOSITORY, 55)
    assert storage.paths() == ["/blob/1"]


@pytest.mark.parametrize(
    "location",
    ["http://127.0.0.1:9/blob", "https://user:pw@127.0.0.1:9/blob", "/relative/blob", "ftp://x/y"],
)
def test_a_redirect_to_anything_but_plain_https_is_refused(
    servers: tuple[FakeGitHub, FakeGitHub], location: str
) -> None:
    api, _ = servers
    api.route(ZIP_PATH, FakeResponse.redirect(location))
    with pytest.raises(HttpFailure):
        client(api).download_artifact(REPOSITORY, 55)
    assert len(api.requests) == 1


def test_an_oversized_download_stops_at_the_cap(servers: tuple[FakeGitHub, FakeGitHub]) -> None:
    api, storage = servers
    api.route(ZIP_PATH, FakeResponse.redirect(f"{storage.url}/blob"))
    storage.route(
        "/blob", FakeResponse.oversized(c.ROLLOUT_ARTIFACT_MAX_BYTES + 1, declare_length=False)
    )
    with pytest.raises(HttpTooLarge):
        client(api).download_artifact(REPOSITORY, 55)


@pytest.mark.parametrize("status", [404, 410])
def test_a_vanished_artifact_is_gone(servers: tuple[FakeGitHub, FakeGitHub], status: int) -> None:
    api, _ = servers
    api.route(ZIP_PATH, FakeResponse.json({"message": "Gone"}, status=status))
    with pytest.raises(ArtifactGone):
        client(api).download_artifact(REPOSITORY, 55)


def test_a_direct_answer_is_taken_as_the_archive(servers: tuple[FakeGitHub, FakeGitHub]) -> None:
    api, _ = servers
    api.route(ZIP_PATH, FakeResponse(200, b"PK direct"))
    assert client(api).download_artifact(REPOSITORY, 55) == b"PK direct"


def test_the_token_never_shows_in_the_client() -> None:
    assert TOKEN not in repr(ActionsHistory("https://api.example.com", TOKEN, max_wait=0))
