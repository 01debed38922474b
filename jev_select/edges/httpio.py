"""One bounded HTTP exchange, shared by the Jev client and the GitHub API lookups.

Rules (docs/reference.md, "Manual pull-request mode", "Transport"): one attempt, no redirects (a 3xx
is a failure), credentials only from the explicit auth object (never ``~/.netrc``), a wall-clock
bound covering connect, TLS, upload and the whole body, and a cap on the body. Standard proxy and
CA-bundle variables are honoured; ``SSLKEYLOGFILE`` is not (``tls_client_context``). No body is
ever logged, and the exceptions raised here carry no text from the exchange.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar, cast

import attrs
import requests
import urllib3.exceptions
import urllib3.util
from requests.adapters import HTTPAdapter
from requests.auth import AuthBase
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager
from urllib3.response import HTTPResponse

from ..errors import CodedError

__all__ = [
    "BearerAuth",
    "HttpFailure",
    "HttpResponse",
    "HttpTimeout",
    "NoAuth",
    "bounded_request",
    "run_with_deadline",
    "tls_client_context",
]

_READ_CHUNK = 65536
# What the HTTP stack raises for a failed exchange; anything else is a programming error.
_TRANSPORT_ERRORS = (
    requests.RequestException,
    urllib3.exceptions.HTTPError,
    http.client.HTTPException,
    OSError,
    ValueError,
)
T = TypeVar("T")


class HttpFailure(CodedError):
    """Transport failure, refused redirect or non-2xx status. ``code`` names which."""

    def __init__(
        self,
        code: str,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(code)
        self.status = status
        # Only the headers the caller asked to keep (names lower-cased), never the body.
        self.headers: Mapping[str, str] = dict(headers or {})


def transport_cause(error: BaseException) -> str:
    """``dns``, ``connect``, ``tls`` or ``transport``: what failed, from the exception types in
    the chain only (never their text)."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    found: set[str] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ssl.SSLError | requests.exceptions.SSLError):
            found.add("tls")
        elif isinstance(current, socket.gaierror | urllib3.exceptions.NameResolutionError):
            found.add("dns")
        elif isinstance(current, ConnectionRefusedError | urllib3.exceptions.NewConnectionError):
            found.add("connect")
        for linked in (current.__cause__, current.__context__, *current.args):
            if isinstance(linked, BaseException):
                pending.append(linked)
        reason = getattr(current, "reason", None)
        if isinstance(reason, BaseException):
            pending.append(reason)
    for cause in ("tls", "dns", "connect"):
        if cause in found:
            return cause
    return "transport"


class HttpTimeout(HttpFailure):
    """The wall-clock bound expired."""

    def __init__(self) -> None:
        super().__init__("timeout")


class HttpTooLarge(HttpFailure):
    """The body exceeded its cap."""

    def __init__(self) -> None:
        super().__init__("too-large")


class BearerAuth(AuthBase):
    """``Authorization: Bearer <secret>``; its presence also keeps requests away from netrc."""

    def __init__(self, secret: str) -> None:
        self._secret = secret

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self._secret}"
        return request

    def __repr__(self) -> str:
        return "BearerAuth(<masked>)"


class NoAuth(AuthBase):
    """Sends no credentials and, being an explicit auth object, stops netrc lookups."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers.pop("Authorization", None)
        return request


@attrs.frozen
class HttpResponse:
    status: int
    body: bytes
    # The headers the caller asked to keep, names lower-cased.
    headers: Mapping[str, str] = attrs.field(factory=dict)


class _Watchdog:
    """Shuts down every socket of one exchange when its deadline passes.

    Socket timeouts bound each read, not their sum: a peer that sends its status line, headers
    or TLS records one byte at a time would outlive them. Shutting the socket down from a timer
    wakes any blocked read at once, whatever phase the exchange is in. The watchdog keeps a
    duplicate descriptor of each socket, because TLS wrapping detaches the original object.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._duplicates: list[socket.socket] = []
        self.fired = False

    def watch(self, sock: socket.socket) -> None:
        try:
            duplicate = sock.dup()
        except OSError:
            return
        with self._lock:
            self._duplicates.append(duplicate)
            if not self.fired:
                return
        _shutdown(duplicate)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            duplicates = list(self._duplicates)
        for duplicate in duplicates:
            _shutdown(duplicate)

    def close(self) -> None:
        with self._lock:
            duplicates, self._duplicates = self._duplicates, []
        for duplicate in duplicates:
            duplicate.close()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


# The watchdog of the exchange running on this thread; connections register their sockets.
_active = threading.local()


def _register_socket(sock: socket.socket) -> socket.socket:
    """Best effort: this hook rides on urllib3 internals. If they change and registration
    fails, the exchange goes on bounded by its socket timeouts and the checks between reads,
    and the callers' abandonment (``run_with_deadline``, the evaluation coordinator) still
    ends the wait at the bound."""
    watchdog: _Watchdog | None = getattr(_active, "watchdog", None)
    if watchdog is not None:
        with contextlib.suppress(Exception):
            watchdog.watch(sock)
    return sock


class _WatchedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return _register_socket(super()._new_conn())


class _WatchedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return _register_socket(super()._new_conn())


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_STOCK_POOLS: Mapping[str, tuple[type[HTTPConnectionPool], type[HTTPConnectionPool]]] = {
    "http": (HTTPConnectionPool, _WatchedHTTPPool),
    "https": (HTTPSConnectionPool, _WatchedHTTPSPool),
}


def _use_watched_pools(manager: PoolManager) -> PoolManager:
    """Swap in the watched pools only where the manager uses the stock ones: a manager with
    its own pools (a SOCKS proxy's, say) keeps them, so the proxy is never bypassed."""
    classes = dict(manager.pool_classes_by_scheme)
    for scheme, (stock, watched) in _STOCK_POOLS.items():
        if classes.get(scheme) is stock:
            classes[scheme] = watched
    manager.pool_classes_by_scheme = classes
    return manager


def tls_client_context() -> ssl.SSLContext:
    """A client TLS context that never writes a key log.

    urllib3's and the standard library's default contexts honour ``SSLKEYLOGFILE``: they would
    append the session secrets of every connection to that file, and with a capture of the
    traffic those secrets reveal the bearer key. A variable set by an earlier step of the job
    must not have that power, so every connection gets a context built here instead. The trust
    store is not decided here: requests hands its CA bundle (``REQUESTS_CA_BUNDLE`` ...,
    else certifi) to urllib3, which loads it into this context.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.options |= ssl.OP_NO_COMPRESSION
    context.hostname_checks_common_name = False
    return context


class _WatchedAdapter(HTTPAdapter):
    """An adapter whose connections (direct or through a proxy) report their sockets and use
    TLS contexts without a key log."""

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: object
    ) -> None:
        pool_kwargs["ssl_context"] = tls_client_context()
        super().init_poolmanager(connections, maxsize, block=block, **pool_kwargs)
        _use_watched_pools(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: object) -> PoolManager:
        if proxy not in self.proxy_manager:
            # The TLS inside the tunnel (to the API), and the TLS to an https:// proxy.
            proxy_kwargs["ssl_context"] = tls_client_context()
            if not proxy.lower().startswith("socks"):
                proxy_kwargs["proxy_ssl_context"] = tls_client_context()
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        return _use_watched_pools(manager)


def _ca_bundle() -> str | bool:
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"):
        value = os.environ.get(name)
        if value:
            return value
    return True


def bounded_request(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    deadline: float,
    body_cap: int,
    data: bytes | None = None,
    auth: AuthBase | None = None,
    clock: Callable[[], float] = time.monotonic,
    keep_headers: Sequence[str] = (),
) -> HttpResponse:
    """Perform one request that must finish by ``deadline`` (a ``clock`` reading in seconds;
    the clock must advance at the rate of real time, as ``time.monotonic`` does).

    Raises ``HttpTimeout`` when the bound expires in any phase (connect, TLS, upload, headers or
    a dripping body), ``HttpTooLarge`` past ``body_cap`` and ``HttpFailure`` for anything else,
    including any 3xx or other non-2xx status (whose body is not read). The response headers
    named in ``keep_headers`` travel with the answer or with a status failure (a redirect's
    ``Location``, pagination, rate-limit resets); no other header is kept.
    """
    left = deadline - clock()
    if left <= 0:
        raise HttpTimeout()
    watchdog = _Watchdog()
    timer = threading.Timer(left, watchdog.fire)
    timer.daemon = True
    previous = getattr(_active, "watchdog", None)
    _active.watchdog = watchdog
    timer.start()
    try:
        return _exchange(method, url, headers, deadline, body_cap, data, auth, clock, keep_headers)
    except HttpFailure as failure:
        if watchdog.fired and failure.code != "status":
            raise HttpTimeout() from None
        raise
    finally:
        timer.cancel()
        # A cancelled timer ends at once; joining it leaves no thread behind the exchange.
        timer.join()
        _active.watchdog = previous
        watchdog.close()


def _exchange(
    method: str,
    url: str,
    headers: Mapping[str, str],
    deadline: float,
    body_cap: int,
    data: bytes | None,
    auth: AuthBase | None,
    clock: Callable[[], float],
    keep_headers: Sequence[str] = (),
) -> HttpResponse:
    def remaining() -> float:
        left = deadline - clock()
        if left <= 0:
            raise HttpTimeout()
        return left

    # The session only prepares the request and resolves the proxy and CA settings of the
    # environment; the adapter sends it. Session.send would drain the body of any 3xx answer
    # (to reuse the connection for a redirect) even with redirects disabled, unbounded in size.
    session = requests.Session()
    # Its defaults (a library User-Agent, "Accept: */*", "Connection: keep-alive") would add
    # headers the caller did not ask for. "Accept-Encoding: identity" is what http.client sends
    # anyway; a body compressed regardless is returned as received (never inflated), so the
    # cap bounds the bytes held and a compressed answer fails as non-JSON.
    session.headers.clear()
    adapter = _WatchedAdapter()
    try:
        try:
            prepared = session.prepare_request(
                requests.Request(
                    method,
                    url,
                    headers={"Accept-Encoding": "identity", **headers},
                    data=data,
                    auth=auth if auth is not None else NoAuth(),
                )
            )
            verify = _ca_bundle()
            settings = session.merge_environment_settings(prepared.url, {}, True, verify, None)
            left = remaining()
            # With a total, urllib3 sets the wait for the status line to what is left after
            # connecting and uploading, not to the whole bound again. requests passes a urllib3
            # Timeout through unchanged; its type stubs only know floats and tuples.
            timeout = urllib3.util.Timeout(total=left, connect=left, read=left)
            response = adapter.send(
                prepared,
                stream=True,
                timeout=timeout,  # type: ignore[arg-type]
                verify=verify,
                cert=settings["cert"],
                proxies=settings["proxies"],
            )
        except requests.Timeout:
            raise HttpTimeout() from None
        except _TRANSPORT_ERRORS as error:
            if _is_timeout(error):
                raise HttpTimeout() from None
            raise HttpFailure(transport_cause(error)) from None
        kept = {
            name.lower(): response.headers[name]
            for name in keep_headers
            if response.headers.get(name) is not None
        }
        try:
            if not 200 <= response.status_code < 300:
                raise HttpFailure("status", response.status_code, kept)
            declared = response.headers.get("Content-Length")
            # isdigit() alone admits digits such as "²" that int() refuses.
            if (
                declared is not None
                and declared.isascii()
                and declared.isdigit()
                and int(declared) > body_cap
            ):
                raise HttpTooLarge()
            chunks: list[bytes] = []
            size = 0
            raw = response.raw
            read_some = _partial_reader(raw)
            while True:
                _set_read_timeout(getattr(raw, "_fp", None), remaining())
                try:
                    chunk = read_some(_READ_CHUNK)
                except _TRANSPORT_ERRORS as error:
                    if _is_timeout(error):
                        raise HttpTimeout() from None
                    raise HttpFailure("transport") from None
                if not chunk:
                    break
                size += len(chunk)
                if size > body_cap:
                    raise HttpTooLarge()
                chunks.append(chunk)
            remaining()
            return HttpResponse(response.status_code, b"".join(chunks), kept)
        finally:
            response.close()
    finally:
        adapter.close()
        session.close()


def _partial_reader(raw: HTTPResponse) -> Callable[[int], bytes]:
    """``read1`` returns whatever has arrived, so the clock is checked between small reads.
    urllib3 before 2.3 (still allowed by requests) lacks it; a plain read then waits for a
    whole chunk, and the watchdog or the socket timeout still ends it at the bound."""
    read1 = getattr(raw, "read1", None)
    if callable(read1):
        return cast(Callable[[int], bytes], read1)

    def read_chunk(size: int) -> bytes:
        return raw.read(size, decode_content=False)

    return read_chunk


def _set_read_timeout(fp: object, seconds: float) -> None:
    """Shorten the socket timeout to what is left, so one slow read cannot outlive the bound."""
    sock = getattr(getattr(fp, "fp", None), "raw", None)
    sock = getattr(sock, "_sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.settimeout(max(seconds, 0.001))


def _is_timeout(error: BaseException) -> bool:
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, socket.timeout | TimeoutError):
            return True
        name = type(current).__name__
        if "Timeout" in name:
            return True
        current = current.__cause__ or current.__context__
    return False


def run_with_deadline(work: Callable[[], T], seconds: float) -> T:
    """Run ``work`` in a daemon thread and stop waiting after ``seconds``.

    A still-running worker is abandoned (it never delays process exit) and ``HttpTimeout`` is
    raised; the worker's own bound makes it finish soon after.
    """
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as error:  # handed to the waiting thread below
            failure.append(error)

    worker = threading.Thread(target=target, daemon=True, name="jev-select-http")
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        raise HttpTimeout()
    if failure:
        raise failure[0]
    return outcome[0]
