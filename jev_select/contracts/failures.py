"""Hard failure codes and their one-line diagnostics, and the shape of a subcommand's own."""

from __future__ import annotations

from typing import Final, NamedTuple


class CommandFailures(NamedTuple):
    """What one subcommand prints when it stops: its fixed line, the codes that line may carry
    and the exit status. Each subcommand's vocabulary module declares one; the command line
    prints any failure of it the same way (``errors.CommandFailure``)."""

    command: str
    template: str  # with a ``{code}`` field
    codes: tuple[str, ...]
    fallback: str  # the code shown for one outside ``codes``, which is a bug
    exit_code: int = 1
    # A command for the developer's own machine: its line is plain on stderr even where
    # GITHUB_ACTIONS is set.
    local_only: bool = False


# --------------------------------------------------------------------------------------------
# Hard failure codes (docs/reference.md, "Failure codes")
# --------------------------------------------------------------------------------------------

FAILURE_INVALID_INVOCATION: Final = "invalid-invocation"
FAILURE_INVALID_ENVIRONMENT: Final = "invalid-environment"
FAILURE_INVALID_EVENT: Final = "invalid-event"
FAILURE_INVALID_MANUAL_REQUEST: Final = "invalid-manual-request"
FAILURE_PULL_REQUEST_UNAVAILABLE: Final = "pull-request-unavailable"
FAILURE_MERGE_UNAVAILABLE: Final = "merge-unavailable"
FAILURE_REPORT_INVALID: Final = "report-invalid"
FAILURE_REPORT_UNWRITABLE: Final = "report-unwritable"
FAILURE_OUTPUT_UNWRITABLE: Final = "output-unwritable"
FAILURE_INTERNAL_ERROR: Final = "internal-error"
FAILURE_CODES: Final = (
    FAILURE_INVALID_INVOCATION,
    FAILURE_INVALID_ENVIRONMENT,
    FAILURE_INVALID_EVENT,
    FAILURE_INVALID_MANUAL_REQUEST,
    FAILURE_PULL_REQUEST_UNAVAILABLE,
    FAILURE_MERGE_UNAVAILABLE,
    FAILURE_REPORT_INVALID,
    FAILURE_REPORT_UNWRITABLE,
    FAILURE_OUTPUT_UNWRITABLE,
    FAILURE_INTERNAL_ERROR,
)
