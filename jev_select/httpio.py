"""One bounded HTTP exchange, shared by the Jev client and the GitHub API lookups.

Rules (spec §5.4, §8.1): one attempt, no redirects (a 3xx is a failure), credentials only from
the explicit auth object (never ``~/.netrc``), a wall-clock bound covering connect, TLS, upload
and the whole body, and a cap on the body. Standard proxy and CA-bundle variables are honoured.
No body is ever logged, and the exceptions raised here carry no text from the exchange.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

import attrs
import requests
from requests.auth import AuthBase

__all__ = [
    "BearerAuth",
    "HttpFailure",
    "HttpResponse",
    "HttpTimeout",
    "NoAuth",
    "bounded_request",
    "run_with_deadline",
]

_READ_CHUNK = 65536
T = TypeVar("T")


class HttpFailure(Exception):
    """Transport failure, refused redirect or non-2xx status. ``kind`` names which."""

    def __init__(self, kind: str, status: int | None = None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.status = status


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
) -> HttpResponse:
    """Perform one request that must finish by ``deadline`` (a ``clock`` reading in seconds).

    Raises ``HttpTimeout`` when the bound expires (also between reads of a dripping body),
    ``HttpTooLarge`` past ``body_cap`` and ``HttpFailure`` for anything else, including any
    3xx or other non-2xx status (whose body is not read).
    """

    def remaining() -> float:
        left = deadline - clock()
        if left <= 0:
            raise HttpTimeout()
        return left

    session = requests.Session()
    try:
        left = remaining()
        try:
            response = session.request(
                method,
                url,
                headers={"Accept-Encoding": "identity", **headers},
                data=data,
                auth=auth if auth is not None else NoAuth(),
                allow_redirects=False,
                stream=True,
                timeout=(left, left),
                verify=_ca_bundle(),
            )
        except requests.Timeout:
            raise HttpTimeout() from None
        except (requests.RequestException, OSError, ValueError):
            raise HttpFailure("transport") from None
        try:
            if not 200 <= response.status_code < 300:
                raise HttpFailure("status", response.status_code)
            declared = response.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > body_cap:
                raise HttpTooLarge()
            chunks: list[bytes] = []
            size = 0
            raw = response.raw
            while True:
                left = remaining()
                sock_timeout = getattr(raw, "_fp", None)
                _set_read_timeout(sock_timeout, left)
                try:
                    chunk = raw.read1(_READ_CHUNK)
                except (OSError, ValueError) as error:
                    if _is_timeout(error):
                        raise HttpTimeout() from None
                    raise HttpFailure("transport") from None
                except Exception as error:  # urllib3 wraps socket timeouts in its own types
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
            return HttpResponse(response.status_code, b"".join(chunks))
        finally:
            response.close()
    finally:
        session.close()


def _set_read_timeout(fp: object, seconds: float) -> None:
    """Shorten the socket timeout to what is left, so one slow read cannot outlive the bound."""
    sock = getattr(getattr(fp, "fp", None), "raw", None)
    sock = getattr(sock, "_sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.settimeout(max(seconds, 0.001))


def _is_timeout(error: BaseException) -> bool:
    import socket

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
