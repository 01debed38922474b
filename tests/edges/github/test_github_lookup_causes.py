"""Why lookups failed: the cause record of ``GitHubApi`` and ``MetadataLookups``, and its line.

Every server is local: a closed port, a fake GitHub that never answers, and scripted 401, 403
and 429 answers.
"""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator

import pytest
from support.cliutil import TOKEN_SENTINEL
from support.deadlines import no_hang
from support.fakegithub import FakeGitHub, FakeResponse

from jev_select import contracts as c
from jev_select.app.settings import lookup_cause_of, metadata_lookups
from jev_select.core.evidence.resolve import ActionFile, NoLookups
from jev_select.core.lookup_causes import LookupCause, lookup_cause_line
from jev_select.edges.github.api import GitHubApi
from jev_select.edges.github.lookups import MetadataLookups, announce_cause

K = c.LookupCauseKind
COMMITS = "/repos/acme/setup/commits/v1"
RESET = "1893456000"  # 2030-01-01T00:00:00Z


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def look_up(lookups: MetadataLookups, *keys: tuple[str, str, str, str]) -> list[object]:
    for key in keys:
        lookups.fetch_action(*key)
    lookups.run_pending()
    return [lookups.fetch_action(*key) for key in keys]


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def test_a_closed_port_is_unreachable() -> None:
    root = f"http://127.0.0.1:{closed_port()}"
    lookups = MetadataLookups(GitHubApi(root, ""))
    assert look_up(lookups, ("acme", "setup", "", "v1")) == ["missing"]
    assert lookups.cause == LookupCause(K.UNREACHABLE, root, False)


def test_a_server_that_never_answers_times_out_at_the_phase_bound(github: FakeGitHub) -> None:
    github.silent = True
    lookups = MetadataLookups(GitHubApi(github.url, TOKEN_SENTINEL), bound_s=0.3)
    with no_hang():
        assert look_up(lookups, ("acme", "setup", "", "v1")) == ["missing"]
    assert lookups.cause == LookupCause(K.TIMED_OUT, github.url, True)


def test_a_request_past_its_own_bound_times_out(github: FakeGitHub) -> None:
    github.silent = True
    api = GitHubApi(github.url, "", request_timeout=0.3)
    with no_hang():
        assert api.fetch_action("acme", "setup", "", "v1") == "missing"
    assert api.lookup_cause() == LookupCause(K.TIMED_OUT, github.url, False)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            FakeResponse(403, b"{}", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET}),
            (K.RATE_LIMITED, int(RESET)),
            id="403-remaining-0",
        ),
        pytest.param(
            FakeResponse(403, b"{}", {"Retry-After": "60"}), (K.RATE_LIMITED, None), id="403-retry"
        ),
        pytest.param(
            FakeResponse(429, b"{}", {"X-RateLimit-Reset": RESET}),
            (K.RATE_LIMITED, int(RESET)),
            id="429",
        ),
        pytest.param(
            FakeResponse(403, b"{}", {"X-RateLimit-Remaining": "12", "X-RateLimit-Reset": RESET}),
            (K.UNAUTHORIZED, None),
            id="403-forbidden",
        ),
        pytest.param(FakeResponse(401, b"{}"), (K.UNAUTHORIZED, None), id="401"),
        pytest.param(FakeResponse(502, b"{}"), (K.UNREACHABLE, None), id="502"),
        pytest.param(FakeResponse.not_found(), None, id="404"),
        pytest.param(FakeResponse(422, b"{}"), None, id="422"),
        pytest.param(FakeResponse(200, b"not json"), None, id="not-json"),
    ],
)
def test_statuses_name_their_cause(
    github: FakeGitHub, answer: FakeResponse, expected: tuple[K, int | None] | None
) -> None:
    github.script(COMMITS, answer)
    lookups = MetadataLookups(GitHubApi(github.url, TOKEN_SENTINEL))
    assert look_up(lookups, ("acme", "setup", "", "v1")) == ["missing"]
    if expected is None:
        assert lookups.cause is None
    else:
        assert lookups.cause == LookupCause(expected[0], github.url, True, expected[1])


def test_a_missing_file_at_a_found_commit_is_no_cause(github: FakeGitHub) -> None:
    github.add_commit("acme/setup", "v1", "b" * 40)
    lookups = MetadataLookups(GitHubApi(github.url, ""))
    assert look_up(lookups, ("acme", "setup", "", "v1")) == ["missing"]
    assert lookups.cause is None


def test_contents_refused_after_the_commit_count_too(github: FakeGitHub) -> None:
    sha = "c" * 40
    github.add_commit("acme/setup", "v1", sha)
    github.script(f"/repos/acme/setup/contents/action.yml?ref={sha}", FakeResponse(401, b"{}"))
    lookups = MetadataLookups(GitHubApi(github.url, ""))
    assert look_up(lookups, ("acme", "setup", "", "v1")) == ["missing"]
    assert lookups.cause == LookupCause(K.UNAUTHORIZED, github.url, False)


def test_the_most_severe_cause_of_a_run_wins(github: FakeGitHub) -> None:
    github.script("/repos/acme/a/commits/v1", FakeResponse(502, b"{}"))
    github.script(
        "/repos/acme/b/commits/v1",
        FakeResponse(403, b"{}", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESET}),
    )
    github.script("/repos/acme/c/commits/v1", FakeResponse.not_found())
    lookups = MetadataLookups(GitHubApi(github.url, ""))
    look_up(lookups, *(("acme", name, "", "v1") for name in "abc"))
    assert lookups.cause == LookupCause(K.RATE_LIMITED, github.url, False, int(RESET))


def test_the_token_is_never_in_the_cause() -> None:
    # Even a token spelt into GITHUB_API_URL stays out of the record and its line.
    with FakeGitHub(prefix="/" + TOKEN_SENTINEL) as server:
        server.script(COMMITS, FakeResponse(401, b"{}"))
        lookups = MetadataLookups(GitHubApi(server.url, TOKEN_SENTINEL))
        look_up(lookups, ("acme", "setup", "", "v1"))
        requests = list(server.requests)
    record = lookups.cause
    assert record is not None
    assert (record.kind, record.token) == (K.UNAUTHORIZED, True)
    assert TOKEN_SENTINEL not in repr(record)
    assert TOKEN_SENTINEL not in lookup_cause_line(record)
    # It was sent all the same, as the credential.
    assert requests[0].headers["authorization"] == f"Bearer {TOKEN_SENTINEL}"


def test_the_cause_is_handed_on_once_when_the_phase_ends(github: FakeGitHub) -> None:
    github.script(COMMITS, FakeResponse(401, b"{}"))
    seen: list[LookupCause] = []
    lookups = MetadataLookups(GitHubApi(github.url, ""), on_cause=seen.append)
    lookups.fetch_action("acme", "setup", "", "v1")
    assert lookups.run_pending() is True
    assert seen == []  # a later round could still find a more severe cause
    assert lookups.run_pending() is False
    assert lookups.run_pending() is False
    assert seen == [LookupCause(K.UNAUTHORIZED, github.url, False)]


def test_no_cause_no_call(github: FakeGitHub) -> None:
    github.add_action("acme/setup", "v1", {"action.yml": "name: Setup\n"})
    seen: list[LookupCause] = []
    lookups = MetadataLookups(GitHubApi(github.url, ""), on_cause=seen.append)
    assert isinstance(look_up(lookups, ("acme", "setup", "", "v1"))[0], ActionFile)
    assert lookups.run_pending() is False
    assert (seen, lookups.cause) == ([], None)


def test_an_unusable_api_url_is_a_cause_without_a_root() -> None:
    lookups = metadata_lookups("https://github.com", "http://ghes.example/api/v3", TOKEN_SENTINEL)
    assert look_up(lookups, ("acme", "setup", "", "v1")) == ["missing"]
    assert lookup_cause_of(lookups) == LookupCause(K.UNREACHABLE, None, False)
    assert lookup_cause_of(NoLookups()) is None


def test_github_mode_lookups_keep_the_cause_and_print_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeGitHub(tls=True) as server:
        assert server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        server.script(COMMITS, FakeResponse(401, b"{}"))
        lookups = metadata_lookups("https://github.com", server.url, "")
        look_up(lookups, ("acme", "setup", "", "v1"))
        assert lookups.run_pending() is False
    assert lookup_cause_of(lookups) == LookupCause(K.UNAUTHORIZED, server.url, False)
    assert capsys.readouterr() == ("", "")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_is_printed_once_per_stream() -> None:
    record = LookupCause(K.UNREACHABLE, "https://api.github.com", False)
    stream, other = io.StringIO(), _Terminal()
    announce_cause(record, stream)
    announce_cause(LookupCause(K.TIMED_OUT, "https://api.github.com", False), stream)
    announce_cause(record, other)
    assert stream.getvalue() == lookup_cause_line(record) + "\n"
    # On a terminal the line first erases a progress line it may be written over.
    assert other.getvalue() == "\r\x1b[K" + lookup_cause_line(record) + "\n"


def test_a_closed_stream_is_left_alone() -> None:
    stream = io.StringIO()
    stream.close()
    announce_cause(LookupCause(K.UNREACHABLE, None, False), stream)
