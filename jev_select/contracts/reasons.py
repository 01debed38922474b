"""Statuses, reasons, bypass precedence, collection, request and observation codes."""

from __future__ import annotations

from typing import Final

from .vocab import GroupStatus, ObservationStatus, Reason, Status, Strategy

# --------------------------------------------------------------------------------------------
# Statuses and reasons (docs/reference.md, "Selection policy")
# --------------------------------------------------------------------------------------------

STATUS_PLANNED: Final = Status.PLANNED
STATUS_BYPASSED: Final = Status.BYPASSED
STATUS_FALLBACK: Final = Status.FALLBACK
STATUSES: Final = (STATUS_PLANNED, STATUS_BYPASSED, STATUS_FALLBACK)

REASON_ALWAYS: Final = Reason.ALWAYS
REASON_PATH_MATCH: Final = Reason.PATH_MATCH
REASON_JEV_BELOW_THRESHOLD: Final = Reason.JEV_BELOW_THRESHOLD
REASON_JEV_AT_OR_ABOVE_THRESHOLD: Final = Reason.JEV_AT_OR_ABOVE_THRESHOLD
REASON_SHADOW_MODE: Final = Reason.SHADOW_MODE
REASON_FORCE_ALL: Final = Reason.FORCE_ALL
REASON_PROTECTED_PATH: Final = Reason.PROTECTED_PATH
REASON_FORK: Final = Reason.FORK
REASON_MISSING_API_KEY: Final = Reason.MISSING_API_KEY
REASON_EXTERNAL_CONTEXT_DISABLED: Final = Reason.EXTERNAL_CONTEXT_DISABLED
REASON_NON_PULL_REQUEST: Final = Reason.NON_PULL_REQUEST
REASON_GIT_FETCH_FAILED: Final = Reason.GIT_FETCH_FAILED
REASON_GIT_READ_FAILED: Final = Reason.GIT_READ_FAILED
REASON_SHA_INCOHERENT: Final = Reason.SHA_INCOHERENT
REASON_DIFF_TOO_LARGE: Final = Reason.DIFF_TOO_LARGE
REASON_BINARY_CHANGE: Final = Reason.BINARY_CHANGE
REASON_SUBMODULE_CHANGE: Final = Reason.SUBMODULE_CHANGE
REASON_UNREPRESENTABLE_CHANGE: Final = Reason.UNREPRESENTABLE_CHANGE
REASON_JEV_TIMEOUT: Final = Reason.JEV_TIMEOUT
REASON_JEV_ERROR: Final = Reason.JEV_ERROR
REASON_INVALID_RESPONSE: Final = Reason.INVALID_RESPONSE
REASON_CONTEXT_TOO_LARGE: Final = Reason.CONTEXT_TOO_LARGE
REASON_CHUNKED_OBSERVATION: Final = Reason.CHUNKED_OBSERVATION
REASON_OBSERVATION_ONLY: Final = Reason.OBSERVATION_ONLY
REASON_METADATA_UNAVAILABLE: Final = Reason.METADATA_UNAVAILABLE
REASON_OBSERVATION_INCOMPLETE: Final = Reason.OBSERVATION_INCOMPLETE

REASONS: Final = (
    REASON_ALWAYS,
    REASON_PATH_MATCH,
    REASON_JEV_BELOW_THRESHOLD,
    REASON_JEV_AT_OR_ABOVE_THRESHOLD,
    REASON_SHADOW_MODE,
    REASON_FORCE_ALL,
    REASON_PROTECTED_PATH,
    REASON_FORK,
    REASON_MISSING_API_KEY,
    REASON_EXTERNAL_CONTEXT_DISABLED,
    REASON_NON_PULL_REQUEST,
    REASON_GIT_FETCH_FAILED,
    REASON_GIT_READ_FAILED,
    REASON_SHA_INCOHERENT,
    REASON_DIFF_TOO_LARGE,
    REASON_BINARY_CHANGE,
    REASON_SUBMODULE_CHANGE,
    REASON_UNREPRESENTABLE_CHANGE,
    REASON_JEV_TIMEOUT,
    REASON_JEV_ERROR,
    REASON_INVALID_RESPONSE,
    REASON_CONTEXT_TOO_LARGE,
    REASON_CHUNKED_OBSERVATION,
    REASON_OBSERVATION_ONLY,
    REASON_METADATA_UNAVAILABLE,
    REASON_OBSERVATION_INCOMPLETE,
)

REASON_MEANINGS: Final[dict[str, str]] = {
    REASON_ALWAYS: "configured `always: true`",
    REASON_PATH_MATCH: "a changed path matches one of the task's `force_paths`",
    REASON_JEV_BELOW_THRESHOLD: "every group scored the task strictly below `skip-below`",
    REASON_JEV_AT_OR_ABOVE_THRESHOLD: "some group scored the task at or above `skip-below`",
    REASON_SHADOW_MODE: "shadow mode keeps the task regardless of the proposal",
    REASON_FORCE_ALL: "`force-all: 'true'` bypassed selection",
    REASON_PROTECTED_PATH: "a `.github/workflows/` file or the `tasks-file` table changed",
    REASON_FORK: "the pull request comes from a fork",
    REASON_MISSING_API_KEY: "no API key was provided",
    REASON_EXTERNAL_CONTEXT_DISABLED: "consent to send the diff and metadata was not given",
    REASON_NON_PULL_REQUEST: "the event is not a pull request analysis",
    REASON_GIT_FETCH_FAILED: "a commit could not be fetched or history stayed shallow",
    REASON_GIT_READ_FAILED: "a git read command failed",
    REASON_SHA_INCOHERENT: "commits were malformed or inconsistent (parents, head identity, "
    "merge base)",
    REASON_DIFF_TOO_LARGE: "a size cap was exceeded or more than 64 groups were needed",
    REASON_BINARY_CHANGE: "a changed blob is binary",
    REASON_SUBMODULE_CHANGE: "a submodule (gitlink) changed",
    REASON_UNREPRESENTABLE_CHANGE: "paths, blobs or the patch are not representable text",
    REASON_JEV_TIMEOUT: "a request bound or the total deadline expired",
    REASON_JEV_ERROR: "transport failure or non-success HTTP status",
    REASON_INVALID_RESPONSE: "a response failed validation, or decisions were malformed",
    REASON_CONTEXT_TOO_LARGE: "task evidence or a single line leaves no room for the diff",
    REASON_CHUNKED_OBSERVATION: "the change was evaluated in several groups",
    REASON_OBSERVATION_ONLY: "model answers were recorded under a bypass and not applied",
    REASON_METADATA_UNAVAILABLE: "requested task metadata could not be read, so the task is "
    "mandatory",
    REASON_OBSERVATION_INCOMPLETE: "a candidate lacks a score from some group without a recorded "
    "failure",
}

# Bypass reasons in precedence order (docs/reference.md, "Statuses").
BYPASS_REASONS: Final = (
    REASON_NON_PULL_REQUEST,
    REASON_FORCE_ALL,
    REASON_FORK,
    REASON_MISSING_API_KEY,
    REASON_EXTERNAL_CONTEXT_DISABLED,
)

# Collection error codes (docs/reference.md, "Collection checks").
COLLECTION_ERRORS: Final = (
    REASON_GIT_FETCH_FAILED,
    REASON_GIT_READ_FAILED,
    REASON_SHA_INCOHERENT,
    REASON_DIFF_TOO_LARGE,
    REASON_BINARY_CHANGE,
    REASON_SUBMODULE_CHANGE,
    REASON_UNREPRESENTABLE_CHANGE,
)

# Request failure codes and grouping errors (docs/reference.md, "Grouping", "Error mapping",
# "Report fields").
REQUEST_ERRORS: Final = (REASON_JEV_TIMEOUT, REASON_JEV_ERROR, REASON_INVALID_RESPONSE)
GROUPING_ERRORS: Final = (
    REASON_CONTEXT_TOO_LARGE,
    REASON_DIFF_TOO_LARGE,
    REASON_UNREPRESENTABLE_CHANGE,
)
OBSERVATION_ERRORS: Final = (
    REASON_JEV_TIMEOUT,
    REASON_JEV_ERROR,
    REASON_INVALID_RESPONSE,
    REASON_CONTEXT_TOO_LARGE,
    REASON_DIFF_TOO_LARGE,
    REASON_UNREPRESENTABLE_CHANGE,
)

# Observation vocabularies (docs/reference.md, "Report fields").
STRATEGY_WHOLE_DIFF: Final = Strategy.WHOLE_DIFF
STRATEGY_CHUNKED_DIFF: Final = Strategy.CHUNKED_DIFF
STRATEGIES: Final = (STRATEGY_WHOLE_DIFF, STRATEGY_CHUNKED_DIFF)
OBSERVATION_COMPLETE: Final = ObservationStatus.COMPLETE
OBSERVATION_INCOMPLETE: Final = ObservationStatus.INCOMPLETE
OBSERVATION_STATUSES: Final = (OBSERVATION_COMPLETE, OBSERVATION_INCOMPLETE)
GROUP_COMPLETED: Final = GroupStatus.COMPLETED
GROUP_FAILED: Final = GroupStatus.FAILED
GROUP_NOT_STARTED: Final = GroupStatus.NOT_STARTED
GROUP_STATUSES: Final = (GROUP_COMPLETED, GROUP_FAILED, GROUP_NOT_STARTED)
