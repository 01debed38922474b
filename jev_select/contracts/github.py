"""The GitHub API: lookups, bounds and the metadata phase."""

from __future__ import annotations

from typing import Final

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
