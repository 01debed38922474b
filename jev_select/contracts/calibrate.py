"""jev-select calibrate: thresholds, columns and messages."""

from __future__ import annotations

from typing import Final

from .failures import CommandFailures
from .report import ANALYSIS_CODES, ANALYSIS_INVALID_SHADOW_MEASUREMENT

# --------------------------------------------------------------------------------------------
# jev-select calibrate (docs/shadow-mode.md, "Calibrate the threshold")
# --------------------------------------------------------------------------------------------

COMMAND_CALIBRATE: Final = "calibrate"
CALIBRATE_THRESHOLDS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
CALIBRATE_THRESHOLDS_TEXT: Final = "0.01,0.02,0.05,0.1,0.2,0.3,0.5"
# One-sided confidence of the Clopper–Pearson upper bound of the regression-miss rate.
CALIBRATE_CONFIDENCE: Final = 0.95
# Changes judged by scores (complete observation, not forced) needed before recommending: even
# with no miss at all, 30 would-skip tasks only bound the miss rate below about 9.5%.
CALIBRATE_MIN_SCORED_CHANGES: Final = 30
CALIBRATE_FORMAT_TABLE: Final = "table"
CALIBRATE_FORMAT_JSON: Final = "json"
CALIBRATE_FORMAT_MARKDOWN: Final = "markdown"
CALIBRATE_FORMATS: Final = (
    CALIBRATE_FORMAT_TABLE,
    CALIBRATE_FORMAT_JSON,
    CALIBRATE_FORMAT_MARKDOWN,
)
CALIBRATE_RESULTS_FILE_NAME: Final = "results.json"
CALIBRATE_NOTE_TOO_FEW: Final = (
    "too few changes judged by scores to recommend a threshold: {scored} of at least {minimum}"
)
CALIBRATE_NOTE_RECOMMENDED: Final = (
    "highest threshold with no regression miss and no manually relevant miss "
    "over {scored} changes judged by scores"
)
CALIBRATE_NOTE_NONE_SAFE: Final = (
    "every threshold would miss a regression or a manually relevant task "
    "over {scored} changes judged by scores"
)
CALIBRATE_NO_RECOMMENDATION: Final = "none"
CALIBRATE_RECOMMENDED_TEMPLATE: Final = "recommended: {value} ({note})"
CALIBRATE_MARKDOWN_TITLE: Final = "### jev-select calibration"
CALIBRATE_MARKDOWN_FOOTNOTE: Final = (
    "REGRESSION-UB95: one-sided 95% Clopper–Pearson upper bound of the share of would-skip tasks "
    "that hid a regression. Minutes are summed task durations, not elapsed time."
)
CALIBRATE_FAILURE_TEMPLATE: Final = "jev-select: calibration failed ({code})."
# calibrate reads its pairs with analyze's checks, so it stops with analyze's codes.
CALIBRATE_FAILURES: Final = CommandFailures(
    command=COMMAND_CALIBRATE,
    template=CALIBRATE_FAILURE_TEMPLATE,
    codes=ANALYSIS_CODES,
    fallback=ANALYSIS_INVALID_SHADOW_MEASUREMENT,
)
# Directories of measurements: a report without a results file beside it is not labelled yet and
# is left out; with none left, there is nothing to calibrate (exit 1). Plain lines on stderr, even
# in GitHub Actions, where stdout often goes to the step summary.
CALIBRATE_NO_REPORTS: Final = (
    "jev-select: nothing to calibrate: no <id>/report.json in the directories given."
)
CALIBRATE_NO_RESULTS_TEMPLATE: Final = (
    "jev-select: nothing to calibrate: none of the {reports} report(s) has a results.json beside "
    "it. Write one per report from the CI run that tested its commit with 'jev-select results "
    "--report DIR/<id>/report.json --run-id <run> --output DIR/<id>/results.json', or collect a "
    "shadow observer's runs with 'jev-select rollout', which writes both files."
)
CALIBRATE_LEFT_OUT_TEMPLATE: Final = (
    "jev-select: {left_out} of {reports} report(s) left out: no results.json beside them "
    "('jev-select results' or 'jev-select rollout' writes it)."
)
# The plot extra of pyproject.toml (`bench` is its former name) brings matplotlib. It installs
# from a checkout, never by name from the package index; the action's own environment has only
# the lock's packages and no pip (docs/shadow-mode.md, "5. Calibrate the threshold").
CALIBRATE_PLOT_UNAVAILABLE: Final = (
    "jev-select: --plot needs matplotlib, from the plot extra: in a clone of jev-select, "
    "pip install -e '.[plot]' (or pip install '.[plot]'); it installs from a checkout, "
    "not by name from the package index."
)
CALIBRATE_PLOT_EMPTY: Final = (
    "jev-select: --plot has nothing to draw: no task was judged by scores at any threshold "
    "(every report was bypassed, fell back or was incomplete)."
)
CALIBRATE_PLOT_UNWRITABLE: Final = "jev-select: the plot could not be written."
