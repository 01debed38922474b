"""A local stand-in for the GitHub REST API, served on 127.0.0.1 over plain HTTP or HTTPS.

It answers the lookups jev-select makes (pulls, commits, contents, and the Actions runs, jobs
and artifacts the test routes) from data the test registers, records every request with its
headers, and can be scripted per path to answer with any status, a redirect, an oversized body,
a non-JSON body or a slowly dripping body, or with a queue of answers in turn.

Usage::

    with FakeGitHub(prefix="/api/v3") as fake:
        fake.add_pull("octo/app", 7, {"state": "open", ...})
        sha = fake.add_action("acme/setup", "v1", {"action.yml": "name: Setup\\n"})
        fake.script("/repos/acme/setup/commits/v2", FakeResponse.redirect("https://x.invalid/"))
        api = GitHubApi(fake.url, "token")

With ``tls=True`` the server speaks HTTPS with a certificate from a throwaway ``trustme`` CA;
``ca_bundle`` is the path of that CA's PEM file (point ``REQUESTS_CA_BUNDLE`` at it, or at a
concatenation with other test CAs).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import ssl
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["FakeGitHub", "FakeResponse", "RecordedRequest"]


@dataclass(frozen=True)
class FakeResponse:
    """One scripted answer. ``delay`` is slept before each of ``pieces`` body pieces."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    pieces: int = 1
    delay: float = 0.0
    declare_length: bool = True  # False: no Content-Length, the body ends when the socket closes

    @classmethod
    def json(cls, value: Any, status: int = 200) -> FakeResponse:
        return cls(status, json.dumps(value).encode(), {"Content-Type": "application/json"})

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> FakeResponse:
        return cls(status, b"", {"Location": location})

    @classmethod
    def not_found(cls) -> FakeResponse:
        return cls.json({"message": "Not Found"}, status=404)

    @classmethod
    def oversized(cls, size: int, *, declare_length: bool = True) -> FakeResponse:
        """A valid JSON string literal of ``size`` bytes."""
        body = b'"' + b"a" * (size - 2) + b'"'
        return cls(200, body, {"Content-Type": "application/json"}, declare_length=declare_length)

    @classmethod
    def slow(cls, value: Any, *, pieces: int, delay: float) -> FakeResponse:
        """A JSON body dripped in ``pieces`` parts, ``delay`` seconds apart."""
        return cls(200, json.dumps(value).encode(), {}, pieces=pieces, delay=delay)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # raw request target, query included
    headers: Mapping[str, str]  # header names lower-cased


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up or refuse the certificate are part of the tests; stay quiet."""


class FakeGitHub:
    """The fake server. ``url`` is the API root (with ``prefix``, without a trailing slash)."""

    def __init__(self, prefix: str = "", *, tls: bool = False) -> None:
        self.prefix = prefix.rstrip("/")
        self.tls = tls
        self.ca_bundle: str | None = None
        self._tempdir: str | None = None
        self.requests: list[RecordedRequest] = []
        self._routes: dict[str, FakeResponse] = {}
        self._scripted: dict[str, FakeResponse] = {}
        self._queued: dict[str, list[FakeResponse]] = {}
        self._lock = threading.Lock()
        # Seconds every answer waits before its status line; ``silent`` answers never (until
        # the server closes). ``max_in_flight`` is the most requests handled at one time.
        self.latency = 0.0
        self.silent = False
        self._closing = threading.Event()
        self._in_flight = 0
        self.max_in_flight = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                fake._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        if tls:
            self._serve_tls()
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )

    def _serve_tls(self) -> None:
        import trustme

        authority = trustme.CA()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        authority.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        self._tempdir = tempfile.mkdtemp(prefix="fakegithub-")
        bundle = Path(self._tempdir) / "ca.pem"
        authority.cert_pem.write_to_path(str(bundle))
        self.ca_bundle = str(bundle)
        # The handshake runs in the handler thread, so a client that never finishes it cannot
        # stall the accept loop.
        self._server.socket = context.wrap_socket(
            self._server.socket, server_side=True, do_handshake_on_connect=False
        )

    # ---- lifecycle ----------------------------------------------------------------------------

    def __enter__(self) -> FakeGitHub:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{host!s}:{port}{self.prefix}"

    # ---- registering data ---------------------------------------------------------------------

    def route(self, path: str, response: FakeResponse) -> None:
        """Answer ``path`` (below the prefix, query included) with ``response``."""
        with self._lock:
            self._routes[path] = response

    def script(self, path: str, response: FakeResponse) -> None:
        """Like ``route`` but takes precedence over registered data."""
        with self._lock:
            self._scripted[path] = response

    def queue(self, path: str, *responses: FakeResponse) -> None:
        """Answer the next requests for ``path`` with ``responses``, one each, in order; after
        that, ``script`` and ``route`` answer again."""
        with self._lock:
            self._queued.setdefault(path, []).extend(responses)

    def add_pull(self, owner_repo: str, number: int, payload: Mapping[str, Any]) -> None:
        self.route(f"/repos/{owner_repo}/pulls/{number}", FakeResponse.json(dict(payload)))

    def add_commit(self, owner_repo: str, ref: str, sha: str) -> None:
        path = f"/repos/{owner_repo}/commits/{quote(ref, safe='')}"
        self.route(path, FakeResponse.json({"sha": sha, "commit": {"message": "x"}}))

    def add_file(self, owner_repo: str, sha: str, path: str, content: bytes | str) -> None:
        data = content.encode() if isinstance(content, str) else content
        encoded = base64.encodebytes(data).decode("ascii")  # GitHub wraps lines too
        segments = "/".join(quote(segment, safe="") for segment in path.split("/"))
        self.route(
            f"/repos/{owner_repo}/contents/{segments}?ref={sha}",
            FakeResponse.json(
                {
                    "type": "file",
                    "encoding": "base64",
                    "name": path.rsplit("/", 1)[-1],
                    "path": path,
                    "size": len(data),
                    "content": encoded,
                }
            ),
        )

    def add_action(self, owner_repo: str, ref: str, files: Mapping[str, bytes | str]) -> str:
        """Register ``ref`` at a derived commit SHA with ``files``; returns the SHA."""
        sha = hashlib.sha1(f"{owner_repo}@{ref}".encode()).hexdigest()  # noqa: S324
        self.add_commit(owner_repo, ref, sha)
        for path, content in files.items():
            self.add_file(owner_repo, sha, path, content)
        return sha

    def paths(self) -> list[str]:
        """Request targets received so far, prefix removed."""
        return [request.path.removeprefix(self.prefix) for request in self.requests]

    # ---- serving ------------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self.silent:
                self._closing.wait()
                return
            if self.latency:
                self._closing.wait(self.latency)
            self._answer(handler)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        target = handler.path
        with self._lock:
            self.requests.append(
                RecordedRequest(
                    handler.command,
                    target,
                    {name.lower(): value for name, value in handler.headers.items()},
                )
            )
            relative = target.removeprefix(self.prefix) if self.prefix else target
            if self.prefix and not target.startswith(self.prefix + "/"):
                response = FakeResponse.not_found()
            else:
                queued = self._queued.get(relative)
                response = (
                    (queued.pop(0) if queued else None)
                    or self._scripted.get(relative)
                    or self._routes.get(relative)
                    or FakeResponse.not_found()
                )
        try:
            handler.send_response(response.status)
            for name, value in response.headers.items():
                handler.send_header(name, value)
            if response.declare_length:
                handler.send_header("Content-Length", str(len(response.body)))
            else:
                handler.send_header("Connection", "close")
                handler.close_connection = True
            handler.end_headers()
            body = response.body
            pieces = max(1, response.pieces)
            size = -(-len(body) // pieces) if body else 0
            for index in range(pieces):
                # A stopping server ends a slow answer at once, not after its last piece.
                if response.delay and self._closing.wait(response.delay):
                    return
                piece = body[index * size : (index + 1) * size] if size else b""
                if piece:
                    handler.wfile.write(piece)
                    handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
