"""The GitHub API: lookups, bounds and the metadata phase."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from .git import METADATA_FILE_CAP
from .report import GITHUB_API_URL_ENV, LOCAL_GITHUB_TOKEN_ENV

# --------------------------------------------------------------------------------------------
# GitHub API (docs/reference.md, "Manual pull-request mode", "Actions in the evidence")
# --------------------------------------------------------------------------------------------

GITHUB_DEFAULT_SERVER_URL: Final = "https://github.com"
GITHUB_DEFAULT_API_URL: Final = "https://api.github.com"
GITHUB_ENTERPRISE_API_SUFFIX: Final = "/api/v3"
GITHUB_ACCEPT: Final = "application/vnd.github+json"
GITHUB_REQUEST_TIMEOUT_S: Final = 10.0
# The metadata phase's GitHub lookups (external actions, other repositories' reusable
# workflows): at most this many in flight, all within one overall bound.
METADATA_LOOKUP_IN_FLIGHT: Final = 4
METADATA_LOOKUP_BOUND_S: Final = 15.0
GITHUB_BODY_CAP: Final = 2 * 1_048_576
GITHUB_FILE_CAP: Final = 1_048_576

# --------------------------------------------------------------------------------------------
# Lookup failures and the local lookup cache (docs/reference.md, "Lookup failures and the local
# cache")
# --------------------------------------------------------------------------------------------


class LookupCauseKind(StrEnum):
    """Why GitHub lookups failed, other than "this file does not exist"."""

    TIMED_OUT = "timed out"  # no answer within the request's or the phase's bound
    UNREACHABLE = "unreachable"  # DNS, connection, TLS, transport, a 5xx, or no usable API URL
    RATE_LIMITED = "rate-limited"  # 403 with X-RateLimit-Remaining: 0, a Retry-After, or 429
    UNAUTHORIZED = "unauthorized"  # 401, or 403 without a rate limit


# Least to most severe: a run's record keeps the most severe cause it saw.
LOOKUP_CAUSE_SEVERITY: Final = (
    LookupCauseKind.TIMED_OUT,
    LookupCauseKind.UNREACHABLE,
    LookupCauseKind.RATE_LIMITED,
    LookupCauseKind.UNAUTHORIZED,
)
# The response headers a lookup keeps for telling a rate limit from a refusal.
RATE_LIMIT_REMAINING_HEADER: Final = "X-RateLimit-Remaining"
RATE_LIMIT_RESET_HEADER: Final = "X-RateLimit-Reset"
RETRY_AFTER_HEADER: Final = "Retry-After"

# The one line a local run prints on stderr when lookups failed for a cause (never the token).
LOOKUP_CAUSE_LINE_TEMPLATE: Final = (
    "jev-select: GitHub lookups failed: {cause} ({detail}); affected tasks run; {fix}."
)
LOOKUP_CAUSE_UNTIL_TEMPLATE: Final = "{cause} until {reset}"
LOOKUP_DETAIL_NO_ROOT: Final = f"{GITHUB_API_URL_ENV} is not a usable https:// URL"
LOOKUP_FIX_NO_ROOT: Final = f"check {GITHUB_API_URL_ENV}"
_TOKEN = LOCAL_GITHUB_TOKEN_ENV
_SET_TOKEN = f"set {_TOKEN} (e.g. {_TOKEN}=$(gh auth token))"
_NETWORK = f"check {GITHUB_API_URL_ENV} and the network"
_UNREACHABLE = LookupCauseKind.UNREACHABLE
_TIMED_OUT = LookupCauseKind.TIMED_OUT
_RATE_LIMITED = LookupCauseKind.RATE_LIMITED
_UNAUTHORIZED = LookupCauseKind.UNAUTHORIZED
# Keyed by the cause and whether a token was sent; ``{root}`` is the REST root.
LOOKUP_DETAILS: Final[dict[tuple[str, bool], str]] = {
    (_UNREACHABLE, False): "no answer from {root}",
    (_UNREACHABLE, True): "no answer from {root}",
    (_TIMED_OUT, False): "{root} did not answer in time",
    (_TIMED_OUT, True): "{root} did not answer in time",
    (_RATE_LIMITED, False): "{root} allows few requests an hour without a token",
    (_RATE_LIMITED, True): f"{{root}} limits the requests of {_TOKEN}",
    (_UNAUTHORIZED, False): "{root} refused requests without a token",
    (_UNAUTHORIZED, True): f"{{root}} refused {_TOKEN}",
}
LOOKUP_FIXES: Final[dict[tuple[str, bool], str]] = {
    (_UNREACHABLE, False): _NETWORK,
    (_UNREACHABLE, True): _NETWORK,
    (_TIMED_OUT, False): _NETWORK,
    (_TIMED_OUT, True): _NETWORK,
    (_RATE_LIMITED, False): f"{_SET_TOKEN} and check {GITHUB_API_URL_ENV}",
    (_RATE_LIMITED, True): f"wait for the reset, or check {_TOKEN} and {GITHUB_API_URL_ENV}",
    (_UNAUTHORIZED, False): f"{_SET_TOKEN} and check {GITHUB_API_URL_ENV}",
    (_UNAUTHORIZED, True): (
        f"set {_TOKEN} to a valid token (e.g. {_TOKEN}=$(gh auth token)) and check "
        f"{GITHUB_API_URL_ENV}"
    ),
}
# What the terminal preview shows instead of one gap per lookup once the cause line said why.
LOOKUP_GAPS_GROUPED_TEMPLATE: Final = "{count} action(s) or workflow(s) could not be looked up"

# The same cause as one line of the GitHub-mode step summary. ``{cause}``, ``{root}``, ``{url}``
# (the variable) and ``{input}`` (``github-token``) are code spans; ``{until}`` is empty or
# `` until <time>``.
SUMMARY_LOOKUP_CAUSE_TEMPLATE: Final = (
    "GitHub lookups of actions and reusable workflows failed: {cause}{until} ({detail}), so the "
    "tasks that use them run: {fix}."
)
SUMMARY_LOOKUP_UNTIL_TEMPLATE: Final = " until {reset}"
_RUNNER_NETWORK = "check {url} and the runner's network"
SUMMARY_LOOKUP_DETAILS: Final[dict[tuple[str, bool], str]] = {
    **LOOKUP_DETAILS,
    (_RATE_LIMITED, True): "{root} limits the requests of the {input} token",
    (_UNAUTHORIZED, True): "{root} refused the {input} token",
}
SUMMARY_LOOKUP_FIXES: Final[dict[tuple[str, bool], str]] = {
    (_UNREACHABLE, False): _RUNNER_NETWORK,
    (_UNREACHABLE, True): _RUNNER_NETWORK,
    (_TIMED_OUT, False): _RUNNER_NETWORK,
    (_TIMED_OUT, True): _RUNNER_NETWORK,
    (_RATE_LIMITED, False): "pass a token in {input} (its default, the job's token, will do)",
    (_RATE_LIMITED, True): "wait for the reset, or pass another token in {input}",
    (_UNAUTHORIZED, False): "pass a token in {input}",
    (_UNAUTHORIZED, True): "check the {input} input and {url}",
}
SUMMARY_LOOKUP_DETAIL_NO_ROOT: Final = "{url} is not a usable https:// URL"
SUMMARY_LOOKUP_FIX_NO_ROOT: Final = "check {url}"

# The cache of local runs: metadata fetched for a 40-hex commit reference, in the user's cache
# directory, never in GitHub mode.
XDG_CACHE_HOME_ENV: Final = "XDG_CACHE_HOME"
LOCALAPPDATA_ENV: Final = "LOCALAPPDATA"
HOME_ENV: Final = "HOME"
GITHUB_ACTIONS_ENV: Final = "GITHUB_ACTIONS"
LOOKUP_CACHE_DIRECTORY: Final = "github-lookups"
LOOKUP_CACHE_FORMAT: Final = "jev-select-lookup-cache"
LOOKUP_CACHE_VERSION: Final = 1
LOOKUP_CACHE_TOTAL_CAP: Final = 64 * 1_048_576
LOOKUP_CACHE_ENTRY_CAP: Final = METADATA_FILE_CAP
# The envelope's first line (the JSON header) is at most this long.
LOOKUP_CACHE_HEADER_CAP: Final = 16_384
