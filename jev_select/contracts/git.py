"""Git and change collection: depths, caps and the time bound of local runs."""

from __future__ import annotations

from typing import Final

# --------------------------------------------------------------------------------------------
# Git and change collection (docs/reference.md, "Change collection")
# --------------------------------------------------------------------------------------------

GIT_TEMP_PREFIX: Final = "jev-select-git-"
GIT_INVENTORY_CAP: Final = 4 * 1_048_576
GIT_COMMIT_CAP: Final = 4 * 1_048_576
GIT_BLOB_CAP: Final = 16 * 1_048_576
# Head mode and merge-queue ancestry: absolute depths (from both tips) fetched in turn until the
# merge base is proven unique or the base is reached; absolute, because a relative deepening can
# leave a shallow tip where it is.
GIT_DEPTH_STEPS: Final = (32, 128, 512, 2048)
GIT_FULL_DEPTH: Final = 2147483647
# The shallow boundary is read from the temporary repository's own file; a boundary of more
# commits than GIT_BOUNDARY_LIMIT is not examined (the full history decides instead).
GIT_SHALLOW_FILE_CAP: Final = 1_048_576
GIT_BOUNDARY_LIMIT: Final = 4096
METADATA_FILE_CAP: Final = 1_048_576

# --------------------------------------------------------------------------------------------
# Input hardening: the git time bound of local mode (docs/reference.md, "Local use")
# --------------------------------------------------------------------------------------------

# Seconds each git command of a local run (plan, check, history) may take before its process
# group is killed; after one timeout the run starts no more git. A repository whose
# configuration includes a FIFO would otherwise hang the command for good.
LOCAL_GIT_TIMEOUT_S: Final = 30.0
# check's usage error when git on the repository timed out (the path is the user's own).
LOCAL_GIT_TIMED_OUT_TEMPLATE: Final = "git did not answer within {seconds:g} s in {repo!r}"
