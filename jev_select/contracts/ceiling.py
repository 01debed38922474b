"""The ceiling without a key: the CI minutes no rule forces (docs/shadow-mode.md, "The ceiling")."""

from __future__ import annotations

from typing import Final

# --------------------------------------------------------------------------------------------
# What keeps a job running whatever the scores, in the order the ceiling writes them
# --------------------------------------------------------------------------------------------

# A task of the change: configured ``always``, a ``force_paths`` match, a metadata gap. A job of
# several tasks takes the first of its tasks' categories in this order.
CEILING_ALWAYS: Final = "always"
CEILING_FORCE_PATHS: Final = "force_paths"
CEILING_GAP: Final = "gap"
# The whole change: a protected path; a fallback (fallback status, an incomplete observation,
# a collection or grouping error, any other whole-change reason of the preview); and a change
# whose forced state cannot be shown (a bypass other than a missing key or consent, or a keyless
# report without preview.json), which is counted as wholly forced: fail closed.
CEILING_PROTECTED_PATH: Final = "protected_path"
CEILING_FALLBACK: Final = "fallback"
CEILING_NOT_SHOWN: Final = "not_shown"
CEILING_CATEGORIES: Final = (
    CEILING_ALWAYS,
    CEILING_FORCE_PATHS,
    CEILING_GAP,
    CEILING_PROTECTED_PATH,
    CEILING_FALLBACK,
    CEILING_NOT_SHOWN,
)
CEILING_TASK_CATEGORIES: Final = (CEILING_ALWAYS, CEILING_FORCE_PATHS, CEILING_GAP)

# --------------------------------------------------------------------------------------------
# Output: formats, headers and lines
# --------------------------------------------------------------------------------------------

# The key of calibrate's JSON object that holds the ceiling (present when any results file has a
# ci block).
CALIBRATE_FIELD_CEILING: Final = "ceiling"
CEILING_UPPER_BOUND: Final = (
    "This is an upper bound, not a prediction: it counts every job that no rule forces as "
    "skipped, as a model that judged every such job irrelevant would. Real savings are lower."
)
CEILING_TITLE: Final = "the ceiling without a key: CI minutes no rule forces"
CEILING_MARKDOWN_TITLE: Final = "### jev-select: the ceiling without a key"
CEILING_HEADER: Final = (
    "TASK",
    "CHANGES",
    "JOBS",
    "BILLED-MIN",
    "ALWAYS",
    "FORCE-PATHS",
    "GAP",
    "PROTECTED",
    "FALLBACK",
    "NOT-SHOWN",
    "SAVABLE-MIN",
    "SAVABLE-%",
)
CEILING_NO_TASK_LABEL: Final = "(no task)"
CEILING_TOTAL_LABEL: Final = "total"
CEILING_BILLED_LINE: Final = (
    "Billed minutes: each job rounded up to a whole minute, as GitHub bills it. A job of several "
    "tasks is savable only when all of them are, and is counted once in the total; jobs of no "
    "task always run."
)
CEILING_WALL_TEMPLATE: Final = (
    "Wall time on the critical path: {total} min over {changes} change(s), of which at most "
    "{saved} min could be saved."
)
CEILING_CHANGES_TEMPLATE: Final = "{changes} change(s) with job timings."
CEILING_NO_TIMINGS_TEMPLATE: Final = (
    "{count} change(s) without job timings left out: no ci block in results.json, or a report "
    "and results that do not pair."
)
CEILING_NOT_SHOWN_TEMPLATE: Final = (
    "{count} change(s) counted as wholly forced (fail closed): their report does not show what "
    "the rules would force (a bypass other than a missing key or consent, or a keyless report "
    "without preview.json)."
)
# calibrate without a scored report: the ceiling alone, in place of a threshold table of zeros.
CALIBRATE_NOT_SCORED_LINE: Final = (
    "No change was scored by Jev (the reports were made without a key or consent, or every one "
    "was forced): there is no threshold to calibrate yet. Run history or the observer with a key "
    "to calibrate one."
)
CEILING_PERCENT_TEMPLATE: Final = "{value}%"
CEILING_NO_PERCENT: Final = "-"

# --------------------------------------------------------------------------------------------
# --plot
# --------------------------------------------------------------------------------------------

CEILING_PLOT_TITLE_TEMPLATE: Final = (
    "The ceiling without a key: {changes} change(s), {savable} of {billed} billed min savable "
    "at most ({percent})"
)
CEILING_PLOT_AXIS: Final = "billed CI minutes (jobs rounded up), summed over the changes"
CEILING_PLOT_SAVABLE: Final = "savable at most (no rule forces it)"
CEILING_PLOT_LABELS: Final = {
    CEILING_ALWAYS: "forced: always",
    CEILING_FORCE_PATHS: "forced: force_paths match",
    CEILING_GAP: "forced: metadata gap",
    CEILING_PROTECTED_PATH: "forced: protected path",
    CEILING_FALLBACK: "forced: fallback",
    CEILING_NOT_SHOWN: "forced: not shown (fail closed)",
}
CEILING_PLOT_LEGEND_TITLE: Final = "billed minutes"
CEILING_PLOT_NO_TASK: Final = "jobs of no task (always run)"
CEILING_PLOT_BAR_TEMPLATE: Final = "{savable} of {billed} min savable ({percent})"
CEILING_PLOT_NO_TASK_BAR_TEMPLATE: Final = "{billed} min, always run"
CEILING_PLOT_MORE_TEMPLATE: Final = "; {more} smaller task(s) not shown"

# --------------------------------------------------------------------------------------------
# Reading a measurement directory
# --------------------------------------------------------------------------------------------

# preview.json lists the changed paths; a change of many files stays far below this.
PREVIEW_READ_MAX_BYTES: Final = 16 * 1_048_576
