"""Fetching over smart HTTP from 127.0.0.1: credentials and redirects (docs/reference.md,
"Temporary repository and git environment", "Remote and credentials")."""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.gitrepo import GitRepo, git_env

from jev_select import contracts as c
from jev_select.core.models import Collection
from jev_select.edges.collect import collect_change
from jev_select.edges.git.session import GitSession

TOKEN = "ghs_HTTP_SENTINEL_91ab"
EXPECTED_AUTHORIZATION = "Basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, project_root: Path, redirect_to: str | None) -> None:
        super().__init__(("127.0.0.1", 0), _GitBackend)
        self.project_root = project_root
        self.redirect_to = redirect_to
        self.requests: list[dict[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _GitBackend(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output quiet

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(body)
                body += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        record = {name.lower(): value for name, value in self.headers.items()}
        record[":path"] = self.path
        self.server.requests.append(record)
        if self.server.redirect_to is not None:
            self.send_response(302)
            self.send_header("Location", self.server.redirect_to + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self._read_body()
        path, _, query = self.path.partition("?")
        environment = {
            **git_env(),
            "GIT_PROJECT_ROOT": str(self.server.project_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
        }
        for header, variable in (
            ("Git-Protocol", "HTTP_GIT_PROTOCOL"),
            ("Content-Encoding", "HTTP_CONTENT_ENCODING"),
        ):
            if header in self.headers:
                environment[variable] = self.headers[header]
        result = subprocess.run(
            ["git", "http-backend"], input=body, env=environment, capture_output=True, check=False
        )
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        status = 200
        headers: list[tuple[str, str]] = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _start(project_root: Path, redirect_to: str | None = None) -> _Server:
    server = _Server(project_root, redirect_to)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[_Server, GitRepo]]:
    origin = GitRepo.init(tmp_path / "served" / "origin.git", bare=True)
    server = _start(tmp_path / "served")
    yield server, origin
    server.shutdown()
    server.server_close()


@pytest.fixture
def environ() -> dict[str, str]:
    # Proxies would route loopback traffic away from the test server.
    return {
        name: value
        for name, value in os.environ.items()
        if name.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
    }


def _pull_request(origin: GitRepo) -> tuple[str, str, str]:
    base = origin.commit({"src/app.py": "value = 1\n", "README.md": "demo\n"})
    head = origin.commit({"src/app.py": "value = 2\n"}, parents=[base], branch="feature")
    return base, head, origin.merge(base, head)


def _collect(
    remote: str,
    tmp_path: Path,
    environ: dict[str, str],
    *,
    token: str,
    base: str,
    head: str,
    tested: str,
    tested_ref: str = c.TESTED_REF_MERGE,
) -> Collection:
    temp_root = tmp_path / "temp"
    temp_root.mkdir(exist_ok=True)
    with GitSession(remote, token=token, temp_root=str(temp_root), environ=environ) as session:
        result = collect_change(
            session,
            base_sha=base,
            head_sha=head,
            tested_sha=tested,
            tested_ref=tested_ref,
            metadata_sha=base,
            max_diff_bytes=65536,
        )
    assert list(temp_root.iterdir()) == []
    return result


def test_token_is_sent_as_basic_credentials_to_http_remotes(
    tmp_path: Path, served: tuple[_Server, GitRepo], environ: dict[str, str]
) -> None:
    server, origin = served
    base, head, merge = _pull_request(origin)
    result = _collect(
        f"{server.url}/origin.git",
        tmp_path,
        environ,
        token=TOKEN,
        base=base,
        head=head,
        tested=merge,
    )
    assert result.error is None
    assert result.change_set is not None
    assert result.change_set.changed_paths == ("src/app.py",)
    assert server.requests
    assert all(
        request.get("authorization") == EXPECTED_AUTHORIZATION for request in server.requests
    )
    assert not any("x-leak" in request for request in server.requests)


def test_head_mode_deepening_over_http(
    tmp_path: Path, served: tuple[_Server, GitRepo], environ: dict[str, str]
) -> None:
    server, origin = served
    fork_point = origin.commit({"a.txt": "a\n"})
    base = origin.linear_history(fork_point, 5, path="main.txt", branch="main")
    head = origin.linear_history(fork_point, 45, path="feature.txt", branch="feature")
    result = _collect(
        f"{server.url}/origin.git",
        tmp_path,
        environ,
        token=TOKEN,
        base=base,
        head=head,
        tested=head,
        tested_ref=c.TESTED_REF_HEAD,
    )
    assert result.error is None
    assert result.commits.diff_base_sha == fork_point
    assert all(
        request.get("authorization") == EXPECTED_AUTHORIZATION for request in server.requests
    )


def test_blank_token_fetches_anonymously(
    tmp_path: Path, served: tuple[_Server, GitRepo], environ: dict[str, str]
) -> None:
    server, origin = served
    base, head, merge = _pull_request(origin)
    result = _collect(
        f"{server.url}/origin.git",
        tmp_path,
        environ,
        token="  ",
        base=base,
        head=head,
        tested=merge,
    )
    assert result.error is None
    assert server.requests
    assert not any("authorization" in request for request in server.requests)


def test_unsendable_token_fails_without_contacting_the_server(
    tmp_path: Path, served: tuple[_Server, GitRepo], environ: dict[str, str]
) -> None:
    server, origin = served
    base, head, merge = _pull_request(origin)
    result = _collect(
        f"{server.url}/origin.git",
        tmp_path,
        environ,
        token="tok\u00e9n",
        base=base,
        head=head,
        tested=merge,
    )
    assert result.error == c.REASON_GIT_FETCH_FAILED
    assert server.requests == []


def test_file_remote_never_contacts_http(
    tmp_path: Path, served: tuple[_Server, GitRepo], environ: dict[str, str]
) -> None:
    server, origin = served
    base, head, merge = _pull_request(origin)
    result = _collect(
        origin.url, tmp_path, environ, token=TOKEN, base=base, head=head, tested=merge
    )
    assert result.error is None
    assert server.requests == []


def test_redirect_is_not_followed(
    tmp_path: Path, served: tuple[_Server, GitRepo], environ: dict[str, str]
) -> None:
    real, origin = served
    base, head, merge = _pull_request(origin)
    redirector = _start(tmp_path / "served", redirect_to=real.url)
    try:
        result = _collect(
            f"{redirector.url}/origin.git",
            tmp_path,
            environ,
            token=TOKEN,
            base=base,
            head=head,
            tested=merge,
        )
    finally:
        redirector.shutdown()
        redirector.server_close()
    assert result.error == c.REASON_GIT_FETCH_FAILED
    assert result.change_set is None
    assert redirector.requests
    assert real.requests == []
