"""A scriptable stand-in for the Jev System One endpoint, on 127.0.0.1 (HTTP or HTTPS).

Usage::

    with FakeJev(scores={"unit": 0.9}) as jev:          # FakeJev(tls=True) for HTTPS
        jev.script(Reply.status(503), Reply.drip())     # replies for the next requests, in order
        ... send to jev.endpoint ...
        jev.requests[0].json["questions"]; jev.max_in_flight

Replies are taken from the script in arrival order; when it is empty, ``responder`` (if given)
decides, else a well-formed answer is built from ``scores``. With ``tls=True`` the certificate is
issued by a throwaway ``trustme`` CA whose bundle is at ``ca_bundle`` (point ``REQUESTS_CA_BUNDLE``
at it). Every handler waits on the server's stop event, so delayed or dripping replies end as soon
as the server stops.

Delayed and dripping replies also watch their connection: when the client hangs up before the
answer is complete, the handler ends and counts the request as ``abandoned``. A deadline test
can so prove that the client gave the exchange up on the wire (``wait_abandoned``), which a
wall-clock reading on a loaded machine cannot.
"""

from __future__ import annotations

import collections
import contextlib
import http.server
import json
import select
import shutil
import socket
import ssl
import struct
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import attrs
import pytest

from jev_select import contracts as c

__all__ = ["ConnectProxy", "FakeJev", "RecordedRequest", "Reply", "ScoreSource", "fake_jev"]

DEFAULT_USAGE: Mapping[str, Any] = {"input_tokens": 1200, "output_tokens": 7}
ScoreSource = Mapping[str, float] | Callable[[str, "RecordedRequest"], Any] | float

_UNSET: Any = object()

KIND_JSON = "json"
KIND_RAW = "raw"
KIND_STATUS = "status"
KIND_RESET_BEFORE_HEADERS = "reset-before-headers"
KIND_RESET_AFTER_HEADERS = "reset-after-headers"
KIND_DRIP = "drip"
KIND_OVERSIZED = "oversized"
KIND_HEADER_DRIP = "header-drip"


@attrs.frozen
class RecordedRequest:
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]  # as received, in order
    body: bytes
    json: Any  # the parsed body, None when it is not JSON

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    @property
    def header_names(self) -> frozenset[str]:
        return frozenset(key.lower() for key, _ in self.headers)

    @property
    def task_ids(self) -> tuple[str, ...]:
        questions = self.json.get("questions") if isinstance(self.json, dict) else None
        return tuple(questions) if isinstance(questions, dict) else ()

    @property
    def group_index(self) -> int | None:
        try:
            return int(self.json["state"]["chunk"]["index"])
        except (KeyError, TypeError, ValueError):
            return None


@attrs.frozen
class Reply:
    """How the server answers one request. Build with the class methods."""

    kind: str = KIND_JSON
    status_code: int = 200
    scores: ScoreSource | None = None  # None: the server's default scores
    model: Any = _UNSET  # _UNSET: the server's model; None omits the key
    usage: Any = _UNSET  # _UNSET: DEFAULT_USAGE; None omits the key
    mutate: Callable[[dict[str, Any]], Any] | None = None
    body: bytes = b""
    delay: float = 0.0  # seconds before the status line
    headers: Mapping[str, str] = attrs.field(factory=dict)
    interval: float = 0.05
    declare_length: bool = True

    @classmethod
    def ok(
        cls,
        scores: ScoreSource | None = None,
        *,
        model: Any = _UNSET,
        usage: Any = _UNSET,
        delay: float = 0.0,
    ) -> Reply:
        """A well-formed answer for every asked task."""
        return cls(scores=scores, model=model, usage=usage, delay=delay)

    @classmethod
    def mutated(
        cls, change: Callable[[dict[str, Any]], Any], scores: ScoreSource | None = None
    ) -> Reply:
        """The well-formed document passed through ``change`` (which may edit it in place and
        return None, or return a replacement JSON value)."""
        return cls(scores=scores, mutate=change)

    @classmethod
    def raw(cls, body: bytes, status: int = 200, *, delay: float = 0.0) -> Reply:
        return cls(kind=KIND_RAW, status_code=status, body=body, delay=delay)

    @classmethod
    def status(
        cls, code: int, headers: Mapping[str, str] | None = None, body: bytes = b"{}"
    ) -> Reply:
        return cls(kind=KIND_STATUS, status_code=code, headers=dict(headers or {}), body=body)

    @classmethod
    def redirect(cls, location: str, code: int = 302) -> Reply:
        return cls.status(code, {"Location": location})

    @classmethod
    def slow(cls, delay: float, scores: ScoreSource | None = None) -> Reply:
        return cls(scores=scores, delay=delay)

    @classmethod
    def reset_before_headers(cls) -> Reply:
        return cls(kind=KIND_RESET_BEFORE_HEADERS)

    @classmethod
    def reset_after_headers(cls) -> Reply:
        return cls(kind=KIND_RESET_AFTER_HEADERS)

    @classmethod
    def drip(
        cls,
        interval: float = 0.05,
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Headers at once, then one body byte per ``interval`` until the client or server quits."""
        return cls(
            kind=KIND_DRIP, interval=interval, status_code=status, headers=dict(headers or {})
        )

    @classmethod
    def header_drip(cls, interval: float = 0.05) -> Reply:
        """The status line and headers one byte per ``interval``, never finishing."""
        return cls(kind=KIND_HEADER_DRIP, interval=interval)

    @classmethod
    def oversized(
        cls, *, declare_length: bool = True, size: int = c.RESPONSE_BODY_CAP + 1
    ) -> Reply:
        """A body of ``size`` bytes, with or without a Content-Length header."""
        return cls(kind=KIND_OVERSIZED, declare_length=declare_length, body=b" " * size)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FakeJev

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Client disconnects and TLS failures are part of the tests; stay quiet."""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """No access log."""

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _pause(self, seconds: float) -> bool:
        """Wait ``seconds``; True (and the request recorded as abandoned) as soon as the client
        has hung up, also True when the server stops."""
        owner = self.server.owner
        if self._client_gone(seconds):
            owner._abandon()
            return True
        return owner._stopping.is_set()

    def _client_gone(self, seconds: float) -> bool:
        # The client sent its whole request and waits for the answer, so anything readable now
        # is its end of the connection: EOF, a reset or a TLS alert before the close.
        owner = self.server.owner
        step = 0.02
        remaining = seconds
        while True:
            wait = min(step, remaining)
            try:
                readable, _, _ = select.select([self.connection], [], [], wait)
            except (OSError, ValueError):
                return True
            if readable:
                return True
            remaining -= wait
            if remaining <= 0 or owner._stopping.is_set():
                return False

    def _serve(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        request = RecordedRequest(
            self.command, self.path, tuple(self.headers.items()), body, parsed
        )
        owner._enter(request)
        try:
            reply = owner._next_reply(request)
            if reply.delay and self._pause(reply.delay):
                return
            self._answer(owner, request, reply)
        except OSError:
            owner._abandon()  # the client went away
        finally:
            owner._leave()
            self.close_connection = True

    def _answer(self, owner: FakeJev, request: RecordedRequest, reply: Reply) -> None:
        if reply.kind == KIND_RESET_BEFORE_HEADERS:
            self._reset()
            return
        if reply.kind == KIND_HEADER_DRIP:
            for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n":
                if self._pause(reply.interval):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            while not self._pause(reply.interval):
                self.wfile.write(b"X")
                self.wfile.flush()
            return
        if reply.kind == KIND_DRIP:
            self._head(
                reply.status_code, {"Content-Length": str(c.RESPONSE_BODY_CAP), **reply.headers}
            )
            self.wfile.flush()
            while not self._pause(reply.interval):
                self.wfile.write(b" ")
                self.wfile.flush()
            return
        if reply.kind == KIND_RESET_AFTER_HEADERS:
            payload = owner._document_bytes(request, reply)
            self._head(200, {"Content-Length": str(len(payload) + 100)})
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self._reset()
            return
        if reply.kind == KIND_OVERSIZED:
            headers = {"Content-Length": str(len(reply.body))} if reply.declare_length else {}
            if not reply.declare_length:
                headers["Transfer-Encoding"] = "chunked"
            self._head(200, headers)
            if reply.declare_length:
                self.wfile.write(reply.body)
            else:
                step = 65536
                for offset in range(0, len(reply.body), step):
                    piece = reply.body[offset : offset + step]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        if reply.kind in (KIND_RAW, KIND_STATUS):
            payload = reply.body
        else:
            payload = owner._document_bytes(request, reply)
        self._head(reply.status_code, {"Content-Length": str(len(payload)), **reply.headers})
        self.wfile.write(payload)
        self.wfile.flush()

    def _head(self, status: int, headers: Mapping[str, str]) -> None:
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()

    def _reset(self) -> None:
        """Abort with a TCP reset rather than an orderly close."""
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


class FakeJev:
    """A threaded System One server on 127.0.0.1; see the module docstring."""

    def __init__(
        self,
        *,
        tls: bool = False,
        model: str = c.DEFAULT_MODEL,
        scores: ScoreSource = 0.0,
        usage: Any = DEFAULT_USAGE,
        responder: Callable[[RecordedRequest], Reply] | None = None,
    ) -> None:
        self.tls = tls
        self.model = model
        self.scores = scores
        self.usage = usage
        self.responder = responder
        self._lock = threading.Lock()
        self._script: collections.deque[Reply] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._abandoned = 0
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._tempdir: str | None = None
        self.ca_bundle: str | None = None

    def reset(self, scores: ScoreSource) -> FakeJev:
        """Back to a plain server with ``scores``: no responder, script or recorded requests.

        Lets a module share one running server (its TLS set-up is the slow part) across tests.
        """
        self.scores = scores
        self.responder = None
        with self._lock:
            self._requests.clear()
            self._script.clear()
            self._max_in_flight = 0
            self._abandoned = 0
        return self

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeJev:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        if self.tls:
            import trustme

            ca = trustme.CA()
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
            self._tempdir = tempfile.mkdtemp(prefix="fakejev-")
            bundle = Path(self._tempdir) / "ca.pem"
            ca.cert_pem.write_to_path(str(bundle))
            self.ca_bundle = str(bundle)
            server.socket = context.wrap_socket(
                server.socket, server_side=True, do_handshake_on_connect=False
            )
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    def __enter__(self) -> FakeJev:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def endpoint(self) -> str:
        return self.base_url + c.SYSTEM_ONE_PATH

    # -- scripting and observation ---------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._max_in_flight

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def abandoned(self) -> int:
        """How many requests the client hung up on before their answer was complete."""
        with self._lock:
            return self._abandoned

    def wait_abandoned(self, count: int, timeout: float) -> bool:
        """Whether ``count`` requests were abandoned by their client within ``timeout`` s."""
        with self._changed:
            return self._changed.wait_for(lambda: self._abandoned >= count, timeout)

    def _abandon(self) -> None:
        with self._changed:
            if not self._stopping.is_set():
                self._abandoned += 1
                self._changed.notify_all()

    def _enter(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Reply.ok()

    def _score(self, source: ScoreSource, task_id: str, request: RecordedRequest) -> Any:
        if callable(source):
            return source(task_id, request)
        if isinstance(source, Mapping):
            return source.get(task_id, 0.0)
        return source

    def document(self, request: RecordedRequest, reply: Reply) -> Any:
        """The JSON value a ``json`` reply sends for ``request``."""
        source = reply.scores if reply.scores is not None else self.scores
        answers = {
            task_id: {"type": "noul", "noul": self._score(source, task_id, request)}
            for task_id in request.task_ids
        }
        document: dict[str, Any] = {}
        model = self.model if reply.model is _UNSET else reply.model
        if model is not None:
            document["model"] = model
        document["answers"] = answers
        usage = self.usage if reply.usage is _UNSET else reply.usage
        if usage is not None:
            document["usage"] = usage
        if reply.mutate is not None:
            replaced = reply.mutate(document)
            if replaced is not None:
                return replaced
        return document

    def _document_bytes(self, request: RecordedRequest, reply: Reply) -> bytes:
        return json.dumps(self.document(request, reply), allow_nan=True).encode()


class ConnectProxy:
    """A forward proxy on 127.0.0.1 that understands only ``CONNECT`` (how HTTPS goes through
    an ``HTTPS_PROXY``). ``stall=True`` reads the ``CONNECT`` and never answers it; otherwise
    bytes are relayed both ways. ``targets`` lists the ``host:port`` of every tunnel asked for.
    """

    def __init__(self, *, stall: bool = False) -> None:
        self.stall = stall
        self.targets: list[str] = []
        self._stopping = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> ConnectProxy:
        threading.Thread(target=self._accept_loop, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            sock.close()
        self._listener.close()

    def _keep(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            self._sockets.append(sock)
        return sock

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(self._keep(client),), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            client.settimeout(None)
            head = b""
            while b"\r\n\r\n" not in head:
                piece = client.recv(4096)
                if not piece:
                    return
                head += piece
            method, target = head.split(b" ")[:2]
            with self._lock:
                self.targets.append(target.decode())
            if method != b"CONNECT" or self.stall:
                self._stopping.wait()
                return
            host, _, port = target.decode().rpartition(":")
            upstream = self._keep(socket.create_connection((host, int(port))))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            threading.Thread(target=self._relay, args=(upstream, client), daemon=True).start()
            self._relay(client, upstream)
        except OSError:
            pass

    def _relay(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while piece := source.recv(65536):
                sink.sendall(piece)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def fake_jev() -> Iterator[FakeJev]:
    """A started plain-HTTP server, stopped after the test (import this name into a test module)."""
    with FakeJev() as server:
        yield server


def low_scores_answer(body: bytes, score: float = 0.01) -> bytes:
    """A well-formed System One answer scoring every asked task ``score``, for in-process
    transports that stand in for the server."""
    asked = json.loads(body)["questions"]
    return json.dumps(
        {
            "model": c.DEFAULT_MODEL,
            "usage": {"input_tokens": 10, "output_tokens": 2},
            "answers": {task_id: {"type": "noul", "noul": score} for task_id in asked},
        }
    ).encode()
