"""The GitHub REST root of a run, without the HTTP stack.

Edge module (docs/reference.md, "Manual pull-request mode", "API base URL"). Kept apart from
``api`` so that a local run can name its lookup cache's key before, or without, loading the HTTP
client: a run whose lookups are all cached never imports it. ``api`` re-exports both functions.
"""

from __future__ import annotations

from collections.abc import Mapping

from ... import contracts as c
from ...core.inputs import normalise_https_url

__all__ = ["api_root", "api_root_from_environment"]


def api_root(server_origin: str, api_url: str | None) -> str | None:
    """The GitHub REST root (docs/reference.md, "Manual pull-request mode"), or None when the
    configured value is not acceptable.

    ``api_url`` is ``GITHUB_API_URL`` (None or empty when unset): validated by the rules of
    docs/reference.md, "API base URL" with a path allowed, trailing ``/`` stripped. Otherwise
    ``https://github.com`` maps to ``https://api.github.com`` and any other origin to
    ``<origin>/api/v3``.
    """
    if api_url:
        return normalise_https_url(api_url.strip(c.WHITESPACE), allow_path=True)
    origin = normalise_https_url(server_origin, allow_path=True)
    if origin is None:
        return None
    if origin == c.GITHUB_DEFAULT_SERVER_URL:
        return c.GITHUB_DEFAULT_API_URL
    return origin + c.GITHUB_ENTERPRISE_API_SUFFIX


def api_root_from_environment(environ: Mapping[str, str]) -> str | None:
    """The REST root from ``GITHUB_SERVER_URL`` (default github.com) and ``GITHUB_API_URL``."""
    server = environ.get("GITHUB_SERVER_URL", "") or c.GITHUB_DEFAULT_SERVER_URL
    return api_root(server, environ.get("GITHUB_API_URL"))
