"""The fetch source of a session (docs/reference.md, "Remote and credentials"): the default remote
and ``--remote``.

``normalise_remote`` looks at the file system for a local path, so it lives with the edges.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ... import contracts as c
from ...core.inputs import normalise_https_url
from ...errors import InputError

__all__ = ["default_remote", "normalise_remote"]

_URL_FORBIDDEN = frozenset("\\?#")
_PORT = re.compile(r"[0-9]{1,5}")
_PATH_SEGMENT = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*")
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def default_remote(server_origin: str, repository: str) -> str:
    """``<server origin>/<owner>/<repo>.git``."""
    return f"{server_origin.rstrip('/')}/{repository}.git"


def _has_forbidden_character(text: str) -> bool:
    return any(
        character in c.WHITESPACE
        or ord(character) < 0x20
        or ord(character) >= 0x7F
        or character in _URL_FORBIDDEN
        for character in text
    )


def _valid_port(port: str) -> bool:
    return _PORT.fullmatch(port) is not None and 1 <= int(port) <= 65535


def _split_authority(rest: str) -> tuple[str, str, str] | None:
    """``(host, port, path)`` of the text after ``scheme://``, or None when malformed."""
    authority, slash, path = rest.partition("/")
    if "@" in authority or not authority:
        return None
    if authority.startswith("["):
        closing = authority.find("]")
        if closing < 0:
            return None
        host, after = authority[: closing + 1], authority[closing + 1 :]
        if after and not after.startswith(":"):
            return None
        port = after[1:] if after else ""
        if after and not port:
            return None
    else:
        host, colon, port = authority.partition(":")
        if colon and not port:
            return None
    return host, port, slash + path


def _loopback_http_url(text: str) -> str | None:
    """``text`` when it is an http:// URL on a loopback host under the docs/reference.md,
    "API base URL" character rules."""
    scheme = "http://"
    if not text.lower().startswith(scheme) or _has_forbidden_character(text):
        return None
    parts = _split_authority(text[len(scheme) :])
    if parts is None:
        return None
    host, port, path = parts
    if host.lower() not in _LOOPBACK_HOSTS or (port and not _valid_port(port)):
        return None
    segments = path.split("/")[1:] if path else []
    for segment in segments:
        if _PATH_SEGMENT.fullmatch(segment) is None or re.search("%2[eE]", segment):
            return None
    authority = host.lower() + (f":{port}" if port else "")
    return scheme + authority + path


def normalise_remote(text: str, *, cwd: str) -> str:
    """The fetch URL for ``--remote`` (docs/reference.md, "Remote and credentials"); raises
    ``InputError("remote")``.

    Accepts an https:// URL under the docs/reference.md, "API base URL" character rules, an http://
    URL on a loopback host, a file:// URL, or an existing directory (made an absolute file:// URL).
    """
    value = text.strip(c.WHITESPACE)
    lowered = value.lower()
    result: str | None = None
    if lowered.startswith("https://"):
        result = normalise_https_url(value, allow_path=True)
    elif lowered.startswith("http://"):
        result = _loopback_http_url(value)
    elif lowered.startswith("file://"):
        rest = value[len("file://") :]
        if rest and not any(ord(character) < 0x20 or ord(character) == 0x7F for character in rest):
            result = "file://" + rest
    elif value and "\0" not in value:
        candidate = os.path.join(cwd, value)
        if os.path.isdir(candidate):
            result = Path(os.path.abspath(candidate)).as_uri()
    if result is None:
        raise InputError(c.FIELD_REMOTE)
    return result
