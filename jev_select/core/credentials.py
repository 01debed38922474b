"""The GitHub token as it may be sent: one rule for every edge that sends it (pure).

The REST client, the git fetch and the masks all ask here, so the token is either sendable
everywhere or nowhere, and the masked header form is byte for byte the one git sends.
"""

from __future__ import annotations

import base64

__all__ = ["basic_credential", "usable_token"]

_GIT_USER = b"x-access-token:"


def usable_token(token: str) -> bool:
    """Whether ``token`` may be sent: non-blank, U+0021 to U+007E only (docs/reference.md,
    "Manual pull-request mode", "Remote and credentials")."""
    return bool(token) and all("!" <= char <= "~" for char in token)


def basic_credential(token: str) -> str | None:
    """The Base64 form of the token as the git credential header carries it (docs/reference.md,
    "Remote and credentials").

    A token read from an environment that was not valid UTF-8 holds escaped bytes; they are
    encoded back to those bytes. ``None`` when the text has no byte form at all.
    """
    try:
        raw = token.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None
    return base64.b64encode(_GIT_USER + raw).decode("ascii")
