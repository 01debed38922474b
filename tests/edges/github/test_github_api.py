"""GitHub REST lookups against a local fake server (docs/reference.md, "Manual pull-request mode",
"Actions in the evidence")."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.deadlines import IGNORED_BOUND_S, assert_ended_at_bound
from support.fakegithub import FakeGitHub, FakeResponse

from jev_select import contracts as c
from jev_select.core.evidence.resolve import ActionFile
from jev_select.edges.github.api import GitHubApi, api_root, usable_token
from jev_select.errors import PlanningFailure
from jev_select.version import USER_AGENT

PULL = {"state": "open", "number": 7, "head": {"sha": "a" * 40}, "base": {"sha": "b" * 40}}
ACTION_TEXT = "name: Setup\ndescription: Prepares the toolchain\n"
# A dripping answer comes in this many pieces, spread over IGNORED_BOUND_S.
DRIP_PIECES = 300


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(prefix="/api/v3") as server:
        yield server


# ---- api_root ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "api_url", "expected"),
    [
        ("https://github.com", None, "https://api.github.com"),
        ("https://github.com", "", "https://api.github.com"),
        ("HTTPS://GitHub.com/", None, "https://api.github.com"),
        ("https://ghe.example", None, "https://ghe.example/api/v3"),
        ("https://ghe.example:8443", None, "https://ghe.example:8443/api/v3"),
        ("https://github.com", "https://api.github.com", "https://api.github.com"),
        ("https://github.com", "https://api.github.com///", "https://api.github.com"),
        ("https://ghe.example", "https://ghe.example/api/v3/", "https://ghe.example/api/v3"),
        ("https://ghe.example", "HTTPS://GHE.Example:443/api/v3", "https://ghe.example/api/v3"),
        ("https://github.com", "http://api.github.com", None),
        ("https://github.com", "https://user@api.github.com", None),
        ("https://github.com", "https://api.github.com/?x=1", None),
        ("https://github.com", "https://api.github.com/#x", None),
        ("https://github.com", "https://api.github.com/a\\b", None),
        ("http://github.com", None, None),
        ("not a url", None, None),
    ],
)
def test_api_root(origin: str, api_url: str | None, expected: str | None) -> None:
    assert api_root(origin, api_url) == expected


@pytest.mark.parametrize(
    ("token", "usable"),
    [
        ("ghs_abc123", True),
        ("", False),
        ("   ", False),
        ("t\u00f6ken", False),
        ("tok\nen", False),
        ("tok\x7fen", False),
        ("tok en", False),
        ("!~", True),
    ],
)
def test_usable_token(token: str, usable: bool) -> None:
    assert usable_token(token) is usable


# ---- get_pull ---------------------------------------------------------------------------------


def test_get_pull_returns_the_object_and_sends_the_fixed_headers(fake: FakeGitHub) -> None:
    fake.add_pull("octo/app", 7, PULL)
    api = GitHubApi(fake.url, "ghs_secret")
    assert api.get_pull("octo/app", 7) == PULL
    assert fake.paths() == ["/repos/octo/app/pulls/7"]
    headers = fake.requests[0].headers
    assert headers["accept"] == c.GITHUB_ACCEPT
    assert headers["user-agent"] == USER_AGENT
    assert headers["authorization"] == "Bearer ghs_secret"
    assert fake.requests[0].method == "GET"


@pytest.mark.parametrize("token", ["", "  ", "t\u00f6ken"])
def test_no_authorization_without_a_usable_token(fake: FakeGitHub, token: str) -> None:
    fake.add_pull("octo/app", 7, PULL)
    GitHubApi(fake.url, token).get_pull("octo/app", 7)
    assert "authorization" not in fake.requests[0].headers


def test_no_netrc_credentials_are_sent(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login user password netrc-secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    fake.add_pull("octo/app", 7, PULL)
    GitHubApi(fake.url, "").get_pull("octo/app", 7)
    assert "authorization" not in fake.requests[0].headers


@pytest.mark.parametrize(
    "response",
    [
        FakeResponse.not_found(),
        FakeResponse.json({"message": "boom"}, status=500),
        FakeResponse.redirect("/api/v3/repos/octo/app/pulls/8"),
        FakeResponse.redirect("/api/v3/repos/octo/app/pulls/8", status=301),
        FakeResponse.oversized(c.GITHUB_BODY_CAP + 1),
        FakeResponse.oversized(c.GITHUB_BODY_CAP + 1, declare_length=False),
        FakeResponse(200, b"<html>not json</html>"),
        FakeResponse(200, b'{"state": "open", "state": "closed"}'),
        FakeResponse(200, b'{"number": NaN}'),
        FakeResponse.json(["not", "an", "object"]),
        FakeResponse(200, b'{"title": "\xff"}'),
    ],
    ids=[
        "404",
        "500",
        "redirect-302",
        "redirect-301",
        "oversized",
        "oversized-undeclared",
        "non-json",
        "duplicate-key",
        "nan",
        "array",
        "bad-utf8",
    ],
)
def test_get_pull_failures(fake: FakeGitHub, response: FakeResponse) -> None:
    fake.add_pull("octo/app", 8, PULL)
    fake.script("/repos/octo/app/pulls/7", response)
    api = GitHubApi(fake.url, "ghs_secret")
    with pytest.raises(PlanningFailure) as failure:
        api.get_pull("octo/app", 7)
    assert failure.value.code == c.FAILURE_PULL_REQUEST_UNAVAILABLE
    assert "ghs_secret" not in str(failure.value)
    # A redirect is never followed.
    assert fake.paths() == ["/repos/octo/app/pulls/7"]


def test_get_pull_accepts_a_body_at_the_cap(fake: FakeGitHub) -> None:
    fake.script("/repos/octo/app/pulls/7", FakeResponse.oversized(c.GITHUB_BODY_CAP))
    with pytest.raises(PlanningFailure):  # a string is not an object, but it was read whole
        GitHubApi(fake.url, "").get_pull("octo/app", 7)


def test_get_pull_times_out_on_a_dripping_body(fake: FakeGitHub) -> None:
    # Without its bound, the request would get the whole answer after IGNORED_BOUND_S.
    dripping = FakeResponse.slow(PULL, pieces=DRIP_PIECES, delay=IGNORED_BOUND_S / DRIP_PIECES)
    fake.script("/repos/octo/app/pulls/7", dripping)
    api = GitHubApi(fake.url, "", request_timeout=0.4)
    started = time.monotonic()
    with pytest.raises(PlanningFailure) as failure:
        api.get_pull("octo/app", 7)
    assert failure.value.code == c.FAILURE_PULL_REQUEST_UNAVAILABLE
    assert_ended_at_bound(time.monotonic() - started, 0.4)


def test_get_pull_completes_a_slow_body_within_the_bound(fake: FakeGitHub) -> None:
    fake.script("/repos/octo/app/pulls/7", FakeResponse.slow(PULL, pieces=3, delay=0.05))
    assert GitHubApi(fake.url, "", request_timeout=5).get_pull("octo/app", 7) == PULL


def test_get_pull_transport_failure() -> None:
    with FakeGitHub() as closed:
        url = closed.url
    with pytest.raises(PlanningFailure):
        GitHubApi(url, "", request_timeout=2).get_pull("octo/app", 7)


# ---- fetch_action -----------------------------------------------------------------------------


def test_fetch_action_at_the_root(fake: FakeGitHub) -> None:
    sha = fake.add_action("acme/setup", "v1", {"action.yml": ACTION_TEXT})
    api = GitHubApi(fake.url, "ghs_secret")
    assert api.fetch_action("acme", "setup", "", "v1") == ActionFile(ACTION_TEXT, "action.yml", sha)
    assert fake.paths() == [
        "/repos/acme/setup/commits/v1",
        f"/repos/acme/setup/contents/action.yml?ref={sha}",
    ]
    assert all(r.headers["authorization"] == "Bearer ghs_secret" for r in fake.requests)
    assert all(r.headers["user-agent"] == USER_AGENT for r in fake.requests)


def test_fetch_action_falls_back_to_action_yaml_and_encodes_segments(fake: FakeGitHub) -> None:
    sha = fake.add_action("acme/tools", "release/v2", {"my dir/lint/action.yaml": ACTION_TEXT})
    api = GitHubApi(fake.url, "")
    result = api.fetch_action("acme", "tools", "my dir/lint", "release/v2")
    assert result == ActionFile(ACTION_TEXT, "my dir/lint/action.yaml", sha)
    assert fake.paths() == [
        "/repos/acme/tools/commits/release%2Fv2",
        f"/repos/acme/tools/contents/my%20dir/lint/action.yml?ref={sha}",
        f"/repos/acme/tools/contents/my%20dir/lint/action.yaml?ref={sha}",
    ]


def test_fetch_action_caches_per_ref_and_per_path(fake: FakeGitHub) -> None:
    sha = fake.add_action(
        "acme/tools", "v1", {"a/action.yml": ACTION_TEXT, "b/action.yml": "name: B\n"}
    )
    api = GitHubApi(fake.url, "")
    first = api.fetch_action("acme", "tools", "a", "v1")
    assert api.fetch_action("acme", "tools", "a", "v1") == first
    assert api.fetch_action("acme", "tools", "b", "v1") == ActionFile(
        "name: B\n", "b/action.yml", sha
    )
    assert api.fetch_action("acme", "tools", "missing", "v1") == "missing"
    assert api.fetch_action("acme", "tools", "missing", "v1") == "missing"
    assert fake.paths() == [
        "/repos/acme/tools/commits/v1",
        f"/repos/acme/tools/contents/a/action.yml?ref={sha}",
        f"/repos/acme/tools/contents/b/action.yml?ref={sha}",
        f"/repos/acme/tools/contents/missing/action.yml?ref={sha}",
        f"/repos/acme/tools/contents/missing/action.yaml?ref={sha}",
    ]


def test_fetch_action_keeps_a_bom_for_the_resolver(fake: FakeGitHub) -> None:
    fake.add_action("acme/setup", "v1", {"action.yml": "\ufeff" + ACTION_TEXT})
    result = GitHubApi(fake.url, "").fetch_action("acme", "setup", "", "v1")
    assert isinstance(result, ActionFile)
    assert result.text == "\ufeff" + ACTION_TEXT


def _contents(data: bytes, **overrides: object) -> FakeResponse:
    payload: dict[str, object] = {
        "type": "file",
        "encoding": "base64",
        "content": base64.b64encode(data).decode(),
    }
    payload.update(overrides)
    return FakeResponse.json(payload)


@pytest.mark.parametrize(
    ("commit_response", "contents_response"),
    [
        (FakeResponse.not_found(), None),
        (FakeResponse.redirect("/api/v3/repos/acme/other/commits/v1"), None),
        (FakeResponse.oversized(c.GITHUB_BODY_CAP + 1), None),
        (FakeResponse.json({"sha": "not-a-sha"}), None),
        (FakeResponse.json({"sha": "a" * 39}), None),
        (FakeResponse.json(["a" * 40]), None),
        (FakeResponse(200, b"not json"), None),
        (None, FakeResponse.not_found()),
        (None, FakeResponse.redirect("/api/v3/repos/acme/setup/contents/x")),
        (None, FakeResponse.oversized(c.GITHUB_BODY_CAP + 1)),
        (None, _contents(b"a" * (c.GITHUB_FILE_CAP + 1))),
        (None, _contents(b"name: \xff\n")),
        (None, _contents(b"name: x\n", type="dir")),
        (None, _contents(b"name: x\n", encoding="utf-8")),
        (None, FakeResponse.json({"type": "file", "encoding": "base64", "content": 5})),
        (None, FakeResponse.json({"type": "file", "encoding": "base64", "content": "!!!"})),
        (None, FakeResponse.json([{"type": "file"}])),
    ],
    ids=[
        "commit-404",
        "commit-redirect",
        "commit-oversized",
        "commit-bad-sha",
        "commit-short-sha",
        "commit-array",
        "commit-non-json",
        "contents-404",
        "contents-redirect",
        "contents-oversized",
        "file-over-1mib",
        "file-not-utf8",
        "not-a-file",
        "not-base64",
        "content-not-string",
        "content-garbage",
        "contents-array",
    ],
)
def test_fetch_action_failures_are_missing(
    fake: FakeGitHub,
    commit_response: FakeResponse | None,
    contents_response: FakeResponse | None,
) -> None:
    sha = fake.add_action("acme/setup", "v1", {"action.yml": ACTION_TEXT})
    if commit_response is not None:
        fake.script("/repos/acme/setup/commits/v1", commit_response)
    if contents_response is not None:
        fake.script(f"/repos/acme/setup/contents/action.yml?ref={sha}", contents_response)
    assert GitHubApi(fake.url, "").fetch_action("acme", "setup", "", "v1") == "missing"
    assert "/repos/acme/other/commits/v1" not in fake.paths()
    assert "/repos/acme/setup/contents/x" not in fake.paths()


def test_fetch_action_accepts_a_file_of_exactly_one_mebibyte(fake: FakeGitHub) -> None:
    data = b"#" * (c.GITHUB_FILE_CAP - 1) + b"\n"
    sha = fake.add_action("acme/big", "v1", {"action.yml": data})
    result = GitHubApi(fake.url, "").fetch_action("acme", "big", "", "v1")
    assert result == ActionFile(data.decode(), "action.yml", sha)


def test_fetch_action_upper_case_sha_is_lowered(fake: FakeGitHub) -> None:
    sha = "ABCDEF" + "0" * 34
    fake.add_commit("acme/setup", "v1", sha)
    fake.add_file("acme/setup", sha.lower(), "action.yml", ACTION_TEXT)
    result = GitHubApi(fake.url, "").fetch_action("acme", "setup", "", "v1")
    assert result == ActionFile(ACTION_TEXT, "action.yml", sha.lower())


def test_fetch_action_times_out(fake: FakeGitHub) -> None:
    fake.script(
        "/repos/acme/setup/commits/v1",
        FakeResponse.slow(
            {"sha": "a" * 40}, pieces=DRIP_PIECES, delay=IGNORED_BOUND_S / DRIP_PIECES
        ),
    )
    api = GitHubApi(fake.url, "", request_timeout=0.3)
    started = time.monotonic()
    assert api.fetch_action("acme", "setup", "", "v1") == "missing"
    assert_ended_at_bound(time.monotonic() - started, 0.3)


def test_fetch_action_rejects_traversal_in_the_subpath(fake: FakeGitHub) -> None:
    fake.add_action("acme/setup", "v1", {"action.yml": ACTION_TEXT})
    api = GitHubApi(fake.url, "")
    assert api.fetch_action("acme", "setup", "a/../b", "v1") == "missing"
    assert api.fetch_action("acme", "setup", "a//b", "v1") == "missing"
    assert all("/contents/" not in path for path in fake.paths())
