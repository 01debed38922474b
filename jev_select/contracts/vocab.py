"""The closed vocabularies of the contract, as string enumerations.

Every member *is* its string (``Mode.SHADOW == "shadow"``), so JSON, hashes and printed text
are unchanged, while a type checker refuses a misspelt mode or reason. The ``MODE_*``,
``REASON_*`` ... constants of the other contract modules are these members.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "GroupStatus",
    "MergeGroupMode",
    "Mode",
    "ObservationStatus",
    "Reason",
    "Status",
    "Strategy",
    "TestedRef",
]


class Status(StrEnum):
    """The status of a plan (docs/reference.md, "Statuses")."""

    PLANNED = "planned"
    BYPASSED = "bypassed"
    FALLBACK = "fallback"


class Reason(StrEnum):
    """A reason code of a task decision (docs/reference.md, "Reason codes")."""

    ALWAYS = "always"
    PATH_MATCH = "path-match"
    JEV_BELOW_THRESHOLD = "jev-below-threshold"
    JEV_AT_OR_ABOVE_THRESHOLD = "jev-at-or-above-threshold"
    SHADOW_MODE = "shadow-mode"
    FORCE_ALL = "force-all"
    PROTECTED_PATH = "protected-path"
    FORK = "fork"
    MISSING_API_KEY = "missing-api-key"
    EXTERNAL_CONTEXT_DISABLED = "external-context-disabled"
    NON_PULL_REQUEST = "non-pull-request"
    GIT_FETCH_FAILED = "git-fetch-failed"
    GIT_READ_FAILED = "git-read-failed"
    SHA_INCOHERENT = "sha-incoherent"
    DIFF_TOO_LARGE = "diff-too-large"
    BINARY_CHANGE = "binary-change"
    SUBMODULE_CHANGE = "submodule-change"
    UNREPRESENTABLE_CHANGE = "unrepresentable-change"
    JEV_TIMEOUT = "jev-timeout"
    JEV_ERROR = "jev-error"
    INVALID_RESPONSE = "invalid-response"
    CONTEXT_TOO_LARGE = "context-too-large"
    CHUNKED_OBSERVATION = "chunked-observation"
    OBSERVATION_ONLY = "observation-only"
    METADATA_UNAVAILABLE = "metadata-unavailable"
    OBSERVATION_INCOMPLETE = "observation-incomplete"


class Strategy(StrEnum):
    """How the change was observed: as one group or several."""

    WHOLE_DIFF = "whole-diff"
    CHUNKED_DIFF = "chunked-diff"


class ObservationStatus(StrEnum):
    """Whether every group of an observation completed."""

    COMPLETE = "complete"
    INCOMPLETE = "incomplete"


class GroupStatus(StrEnum):
    """What happened to one group, or one request of it."""

    COMPLETED = "completed"
    FAILED = "failed"
    NOT_STARTED = "not-started"


class Mode(StrEnum):
    """The `mode` input: enforce the plan, or only record it (shadow)."""

    ENFORCE = "enforce"
    SHADOW = "shadow"


class TestedRef(StrEnum):
    """The `tested-ref` input: the merge commit or the head is what CI tests."""

    MERGE = "merge"
    HEAD = "head"


class MergeGroupMode(StrEnum):
    """The `merge-group` input: what a merge-queue commit does."""

    RUN_ALL = "run-all"
    SELECT = "select"
