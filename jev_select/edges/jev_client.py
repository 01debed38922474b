"""The System One exchange: one bounded POST (the network edge).

``send`` neither logs nor keeps a body, and every failure is reduced to one of the three request
codes of docs/reference.md, "Error mapping". What comes back is checked by the pure
``responses.validate_response``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from .. import contracts as c
from .. import version
from ..core.responses import ValidatedResponse, validate_response
from ..errors import CodedError
from . import httpio

__all__ = [
    "RequestFailed",
    "Sender",
    "ValidatedResponse",
    "request_headers",
    "send",
    "validate_response",
]


class RequestFailed(CodedError):
    """A request produced no usable body. ``code`` is ``jev-timeout``, ``jev-error`` or
    ``invalid-response``; ``cause`` its category for people (``dns``, ``connect``, ``tls``,
    ``timeout``, ``http-<status>``, ``invalid-response``, ``transport``). Nothing from the
    exchange is kept."""

    def __init__(self, code: str, cause: str | None = None) -> None:
        super().__init__(code)
        self.cause = cause


class Sender(Protocol):
    """The transport of the evaluation phase: ``send`` below, or a stand-in with its contract.

    It POSTs ``body`` once, finishes by ``deadline`` (a ``clock`` reading) and returns the body
    of a 2xx answer; any other outcome raises ``RequestFailed``.
    """

    def __call__(
        self,
        endpoint: str,
        api_key: str,
        body: bytes,
        *,
        deadline: float,
        clock: Callable[[], float],
    ) -> bytes: ...


def request_headers() -> dict[str, str]:
    """The headers of docs/reference.md, "Transport" other than the credential (added by
    ``httpio.BearerAuth``)."""
    return {
        "Content-Type": c.JSON_MEDIA_TYPE,
        "Accept": c.JSON_MEDIA_TYPE,
        "User-Agent": version.USER_AGENT,
    }


def send(
    endpoint: str,
    api_key: str,
    body: bytes,
    *,
    deadline: float,
    clock: Callable[[], float] = time.monotonic,
) -> bytes:
    """POST ``body`` to ``endpoint`` once, finishing by ``deadline`` (a ``clock`` reading).

    Returns the response body of a 2xx answer; raises ``RequestFailed`` otherwise.
    """
    try:
        response = httpio.bounded_request(
            "POST",
            endpoint,
            headers=request_headers(),
            deadline=deadline,
            body_cap=c.RESPONSE_BODY_CAP,
            data=body,
            auth=httpio.BearerAuth(api_key),
            clock=clock,
        )
    except httpio.HttpTimeout:
        raise RequestFailed(c.REASON_JEV_TIMEOUT, c.CAUSE_TIMEOUT) from None
    except httpio.HttpTooLarge:
        raise RequestFailed(c.REASON_INVALID_RESPONSE, c.CAUSE_INVALID_RESPONSE) from None
    except httpio.HttpFailure as failure:
        cause = (
            c.CAUSE_HTTP_TEMPLATE.format(status=failure.status)
            if failure.status is not None
            else failure.code
            if failure.code in (c.CAUSE_DNS, c.CAUSE_CONNECT, c.CAUSE_TLS)
            else c.CAUSE_UNKNOWN
        )
        raise RequestFailed(c.REASON_JEV_ERROR, cause) from None
    return response.body
