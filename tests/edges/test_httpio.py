"""One bounded HTTP exchange (docs/reference.md, "Manual pull-request mode", "Transport",
"Batching, concurrency and deadlines"): bounds, caps, redirects, credentials.

A bound is shown to hold by what it means (the exchange failed as a timeout, no sooner than its
bound, and the server saw the client hang up), with wall-clock slack only against servers that
would otherwise answer much later or never (support/deadlines.py).
"""

from __future__ import annotations

import contextlib
import gzip
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3.response
from requests.auth import AuthBase
from support.deadlines import (
    EARLY_S,
    IGNORED_BOUND_S,
    LOAD_SLACK_S,
    assert_ended_at_bound,
    no_hang,
)
from support.fakejev import ConnectProxy, FakeJev, Reply
from urllib3.connection import HTTPConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager

from jev_select.edges import httpio
from jev_select.edges.httpio import (
    BearerAuth,
    HttpFailure,
    HttpTimeout,
    HttpTooLarge,
    bounded_request,
    run_with_deadline,
)

CAP = 1_048_576
# Short enough to keep the deadline tests quick; what they assert holds for any bound.
BOUND_S = 0.3


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJev]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeJev() as fake:
        yield fake


def request(
    url: str, *, bound: float = LOAD_SLACK_S, cap: int = CAP, auth: AuthBase | None = None
) -> httpio.HttpResponse:
    return bounded_request(
        "POST",
        url,
        headers={},
        deadline=time.monotonic() + bound,
        body_cap=cap,
        data=b"{}",
        auth=auth,
    )


def hung_up(connection: socket.socket) -> bool:
    """Whether the peer of ``connection`` closed it: whatever it had sent, then end of file."""
    connection.settimeout(LOAD_SLACK_S)
    try:
        while connection.recv(1 << 20):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


def accept_one(listener: socket.socket) -> tuple[threading.Thread, list[socket.socket]]:
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
    thread.start()
    return thread, accepted


def test_success_returns_status_and_body(server: FakeJev) -> None:
    server.script(Reply.raw(b'{"ok":true}', status=200))
    response = request(server.endpoint)
    assert (response.status, response.body) == (200, b'{"ok":true}')


@pytest.mark.parametrize("code", [301, 302, 307, 308, 401, 404, 429, 500, 503])
def test_non_success_status_is_a_status_failure(server: FakeJev, code: int) -> None:
    target = server.base_url + "/other"
    server.script(Reply.status(code, {"Location": target, "Retry-After": "0"}))
    with pytest.raises(HttpFailure) as caught:
        request(server.endpoint)
    assert (caught.value.code, caught.value.status) == ("status", code)
    assert len(server.requests) == 1


def assert_times_out_at_bound(server: FakeJev) -> None:
    """A request to ``server`` given BOUND_S fails as a timeout at that bound, and the server
    sees its client hang up (the exchange is given up, not left running)."""
    started = time.monotonic()
    with no_hang(), pytest.raises(HttpTimeout):
        request(server.endpoint, bound=BOUND_S)
    assert_ended_at_bound(time.monotonic() - started, BOUND_S)
    assert server.wait_abandoned(1, LOAD_SLACK_S), "the server never saw the client hang up"


@pytest.mark.parametrize(
    "reply",
    [
        Reply.slow(IGNORED_BOUND_S),
        Reply.drip(0.02),
        Reply.drip(5.0),
        Reply.header_drip(0.02),
        Reply.header_drip(5.0),
    ],
    ids=["slow-headers", "fast-drip", "slow-drip", "header-drip", "slow-header-drip"],
)
def test_bound_holds_in_every_phase(server: FakeJev, reply: Reply) -> None:
    server.script(reply)
    assert_times_out_at_bound(server)


def test_bound_holds_during_a_stalled_tls_handshake() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        acceptor, accepted = accept_one(listener)
        started = time.monotonic()
        with no_hang(), pytest.raises(HttpTimeout):
            request(f"https://127.0.0.1:{listener.getsockname()[1]}/", bound=BOUND_S)
        assert_ended_at_bound(time.monotonic() - started, BOUND_S)
        acceptor.join(LOAD_SLACK_S)
        (connection,) = accepted
        with connection:
            assert hung_up(connection)


def test_bound_holds_over_https(server: FakeJev, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeJev(tls=True) as tls_server:
        assert tls_server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", tls_server.ca_bundle)
        assert request(tls_server.endpoint).status == 200
        tls_server.script(Reply.header_drip(0.02))
        assert_times_out_at_bound(tls_server)


def test_expired_deadline_sends_nothing(server: FakeJev) -> None:
    with pytest.raises(HttpTimeout):
        request(server.endpoint, bound=0.0)
    assert server.requests == []


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_body_cap(server: FakeJev, declared: bool) -> None:
    server.script(Reply.oversized(declare_length=declared, size=1001))
    with pytest.raises(HttpTooLarge):
        request(server.endpoint, cap=1000)
    server.script(Reply.oversized(declare_length=declared, size=1000))
    assert len(request(server.endpoint, cap=1000).body) == 1000


@pytest.mark.parametrize(
    "reply", [Reply.reset_before_headers(), Reply.reset_after_headers()], ids=["before", "after"]
)
def test_connection_reset_is_a_transport_failure(server: FakeJev, reply: Reply) -> None:
    server.script(reply)
    with pytest.raises(HttpFailure) as caught:
        request(server.endpoint)
    assert caught.value.code == "transport"
    assert not isinstance(caught.value, HttpTimeout)


def test_failures_carry_no_text_from_the_exchange(server: FakeJev) -> None:
    server.script(Reply.status(500, body=b"SECRET-BODY"))
    with pytest.raises(HttpFailure) as caught:
        request(server.endpoint)
    assert "SECRET" not in str(caught.value) + repr(caught.value.args)
    assert caught.value.__cause__ is None


def test_no_credentials_without_an_auth_object_even_with_netrc(
    server: FakeJev, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login user password NETRC-SECRET\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(netrc))
    request(server.endpoint)
    request(server.endpoint, auth=BearerAuth("our-key"))
    first, second = server.requests
    assert first.header("Authorization") is None
    assert second.header("Authorization") == "Bearer our-key"


def test_bearer_auth_masks_its_secret() -> None:
    assert "our-key" not in repr(BearerAuth("our-key"))


def test_no_watchdog_threads_or_sockets_are_left_behind(server: FakeJev) -> None:
    before = threading.active_count()
    for _ in range(5):
        request(server.endpoint)
    assert threading.active_count() <= before + 1  # server handlers may still be closing


def test_run_with_deadline_returns_raises_or_gives_up() -> None:
    assert run_with_deadline(lambda: 42, 1.0) == 42

    def broken() -> int:
        raise HttpFailure("transport")

    with pytest.raises(HttpFailure):
        run_with_deadline(broken, 1.0)

    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(HttpTimeout):
        run_with_deadline(lambda: release.wait(IGNORED_BOUND_S), BOUND_S)
    assert_ended_at_bound(time.monotonic() - started, BOUND_S)
    release.set()


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308, 500])
def test_error_status_fails_at_once_without_reading_a_dripping_body(
    server: FakeJev, code: int
) -> None:
    # A redirect answer must not be drained either: its body is never read, whatever its size.
    # Reading the endless body would end in a timeout at the bound instead.
    server.script(Reply.drip(0.05, status=code, headers={"Location": server.base_url + "/x"}))
    started = time.monotonic()
    with pytest.raises(HttpFailure) as caught:
        request(server.endpoint, bound=IGNORED_BOUND_S)
    assert (caught.value.code, caught.value.status) == ("status", code)
    assert not isinstance(caught.value, HttpTimeout)
    assert time.monotonic() - started < LOAD_SLACK_S
    assert server.wait_abandoned(1, LOAD_SLACK_S), "the client kept the body coming"


@pytest.mark.parametrize("declared", ["\u00b2", "\u00b9\u00b2", "12a", "-5", " "])
def test_unparseable_content_length_falls_back_to_the_streamed_cap(
    server: FakeJev, declared: str
) -> None:
    # "²" passes str.isdigit() yet int() refuses it; such a header must never be a crash.
    server.script(Reply.status(200, {"Content-Length": declared}, body=b'{"a":1}'))
    assert request(server.endpoint).body == b'{"a":1}'
    server.script(Reply.status(200, {"Content-Length": declared}, body=b"x" * 1001))
    with pytest.raises(HttpTooLarge):
        request(server.endpoint, cap=1000)


def test_only_the_callers_headers_and_http_essentials_go_on_the_wire(server: FakeJev) -> None:
    bounded_request(
        "POST",
        server.endpoint,
        headers={"User-Agent": "probe/1"},
        deadline=time.monotonic() + 2.0,
        body_cap=CAP,
        data=b"{}",
    )
    (seen,) = server.requests
    assert sorted(seen.headers) == [
        ("Accept-Encoding", "identity"),
        ("Content-Length", "2"),
        ("Host", f"127.0.0.1:{server.port}"),
        ("User-Agent", "probe/1"),
    ]


class _SocketWithoutDup:
    """A socket stand-in offering everything but ``dup``, as a changed urllib3 might return."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def __getattr__(self, name: str) -> object:
        if name == "dup":
            raise AttributeError(name)
        return getattr(self._sock, name)


def test_a_socket_the_watchdog_cannot_watch_is_not_a_crash(
    server: FakeJev, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = HTTPConnection._new_conn

    def new_conn(self: HTTPConnection) -> object:
        return _SocketWithoutDup(original(self))

    monkeypatch.setattr(HTTPConnection, "_new_conn", new_conn)
    server.script(Reply.raw(b'{"ok":true}'))
    assert request(server.endpoint).body == b'{"ok":true}'


def test_a_failing_watchdog_registration_is_not_a_crash(
    server: FakeJev, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_watch(self: object, sock: object) -> None:
        raise RuntimeError("internals changed")

    monkeypatch.setattr(httpio._Watchdog, "watch", broken_watch)
    server.script(Reply.raw(b'{"ok":true}'))
    assert request(server.endpoint).body == b'{"ok":true}'


def test_pool_classes_other_than_the_stock_ones_are_left_in_place() -> None:
    # A SOCKS proxy manager brings its own pools; replacing them would bypass the proxy.
    class OwnHTTPPool(HTTPConnectionPool):
        pass

    class OwnHTTPSPool(HTTPSConnectionPool):
        pass

    manager = PoolManager()
    manager.pool_classes_by_scheme = {"http": OwnHTTPPool, "https": OwnHTTPSPool}
    httpio._use_watched_pools(manager)
    assert manager.pool_classes_by_scheme == {"http": OwnHTTPPool, "https": OwnHTTPSPool}

    stock = PoolManager()
    httpio._use_watched_pools(stock)
    assert stock.pool_classes_by_scheme["http"] is httpio._WatchedHTTPPool
    assert stock.pool_classes_by_scheme["https"] is httpio._WatchedHTTPSPool


@pytest.fixture
def tls_server(server: FakeJev, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJev]:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeJev(tls=True) as tls:
        assert tls.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", tls.ca_bundle)
        yield tls


def test_https_proxy_is_honoured_and_no_proxy_bypasses_it(
    tls_server: FakeJev, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ConnectProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        assert request(tls_server.endpoint).status == 200
        assert proxy.targets == [f"127.0.0.1:{tls_server.port}"]
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert request(tls_server.endpoint).status == 200
        assert len(proxy.targets) == 1
    assert len(tls_server.requests) == 2


@pytest.mark.parametrize("reply", [Reply.header_drip(0.02), Reply.drip(0.02)])
def test_bound_holds_through_a_proxy_tunnel(
    tls_server: FakeJev, monkeypatch: pytest.MonkeyPatch, reply: Reply
) -> None:
    with ConnectProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        tls_server.script(reply)
        assert_times_out_at_bound(tls_server)
        assert proxy.targets == [f"127.0.0.1:{tls_server.port}"]


def test_bound_holds_when_the_proxy_never_answers(
    tls_server: FakeJev, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ConnectProxy(stall=True) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        started = time.monotonic()
        with no_hang(), pytest.raises(HttpTimeout):
            request(tls_server.endpoint, bound=BOUND_S)
        assert_ended_at_bound(time.monotonic() - started, BOUND_S)
        assert len(proxy.targets) == 1
    assert tls_server.requests == []


def test_ssl_cert_file_is_honoured(tls_server: FakeJev, monkeypatch: pytest.MonkeyPatch) -> None:
    assert tls_server.ca_bundle is not None
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    with pytest.raises(HttpFailure) as caught:
        request(tls_server.endpoint)
    assert caught.value.code == "tls"  # an untrusted certificate is a TLS failure
    monkeypatch.setenv("SSL_CERT_FILE", tls_server.ca_bundle)
    assert request(tls_server.endpoint).status == 200


def test_a_compressed_body_is_returned_as_received_and_capped_on_the_wire(
    server: FakeJev,
) -> None:
    # We ask for identity; a server that compresses anyway gets its bytes back undecoded, so
    # the cap bounds memory and a small compressed body can never inflate past it.
    bomb = gzip.compress(b" " * (8 * CAP))
    assert len(bomb) < CAP
    server.script(Reply.status(200, {"Content-Encoding": "gzip"}, body=bomb))
    assert request(server.endpoint).body == bomb
    server.script(Reply.status(200, {"Content-Encoding": "gzip"}, body=bomb))
    with pytest.raises(HttpTooLarge):
        request(server.endpoint, cap=len(bomb) - 1)


def test_bound_holds_against_a_server_that_never_reads_the_request() -> None:
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        acceptor, accepted = accept_one(listener)
        started = time.monotonic()
        with no_hang(), pytest.raises(HttpTimeout):
            bounded_request(
                "POST",
                f"http://127.0.0.1:{listener.getsockname()[1]}/",
                headers={},
                deadline=time.monotonic() + BOUND_S,
                body_cap=CAP,
                data=b"x" * (64 * CAP),  # far beyond what the socket buffers absorb
            )
        assert_ended_at_bound(time.monotonic() - started, BOUND_S)
        acceptor.join(LOAD_SLACK_S)
        (connection,) = accepted
        with connection:
            assert hung_up(connection)


def test_socket_timeouts_alone_end_by_the_bound_after_a_slow_upload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without the watchdog (urllib3 internals changed), the wait for the status line must still
    # be bounded by the time left after the upload, not by the whole bound again. Waiting the
    # whole bound again could not end before upload + bound; the upload's length is the slack.
    upload_s, bound_s = 2.0, 2.5
    monkeypatch.setattr(httpio, "_register_socket", lambda sock: sock)
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        accepted: list[socket.socket] = []

        def read_late_then_stay_silent() -> None:
            connection = listener.accept()[0]
            accepted.append(connection)
            time.sleep(upload_s)
            with contextlib.suppress(OSError):
                while connection.recv(1 << 20):
                    pass

        threading.Thread(target=read_late_then_stay_silent, daemon=True).start()
        started = time.monotonic()
        with no_hang(), pytest.raises(HttpTimeout):
            bounded_request(
                "POST",
                f"http://127.0.0.1:{listener.getsockname()[1]}/",
                headers={},
                deadline=time.monotonic() + bound_s,
                body_cap=CAP,
                data=b"x" * (16 * CAP),
            )
        elapsed = time.monotonic() - started
        assert bound_s - EARLY_S <= elapsed < upload_s + bound_s
        for connection in accepted:
            connection.close()


@pytest.fixture
def without_read1(monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib3 before 2.3 (which requests still accepts) has no ``read1`` on its responses."""
    for cls in urllib3.response.HTTPResponse.__mro__:
        if "read1" in vars(cls):
            monkeypatch.delattr(cls, "read1")


@pytest.mark.usefixtures("without_read1")
def test_bodies_are_read_and_capped_without_read1(server: FakeJev) -> None:
    server.script(Reply.raw(b'{"ok":true}'))
    assert request(server.endpoint).body == b'{"ok":true}'
    for declared in (True, False):
        server.script(Reply.oversized(declare_length=declared, size=1001))
        with pytest.raises(HttpTooLarge):
            request(server.endpoint, cap=1000)


@pytest.mark.usefixtures("without_read1")
def test_a_dripping_body_is_bounded_without_read1(server: FakeJev) -> None:
    server.script(Reply.drip(0.02))
    assert_times_out_at_bound(server)


@pytest.mark.parametrize("through_proxy", [False, True])
def test_no_tls_key_log_is_written_whatever_the_environment_says(
    tls_server: FakeJev, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, through_proxy: bool
) -> None:
    # With the session secrets of a capture, the bearer key can be read off the wire.
    key_log = tmp_path / "keys.log"
    monkeypatch.setenv("SSLKEYLOGFILE", str(key_log))
    with ConnectProxy() as proxy:
        if through_proxy:
            monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        response = request(tls_server.endpoint, auth=BearerAuth("jev-key-under-test"))
        assert response.status == 200
        assert len(proxy.targets) == (1 if through_proxy else 0)
    assert tls_server.requests[0].header("Authorization") == "Bearer jev-key-under-test"
    assert not key_log.exists()


def test_the_tls_context_still_verifies_the_server(
    tls_server: FakeJev, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with pytest.raises(HttpFailure) as caught:
        request(tls_server.endpoint)
    assert caught.value.code == "tls"
    context = httpio.tls_client_context()
    assert context.keylog_filename is None
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.minimum_version >= ssl.TLSVersion.TLSv1_2
