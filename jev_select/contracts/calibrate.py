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
CALIBRATE_PLOT_UNAVAILABLE: Final = (
    "jev-select: --plot needs matplotlib, from the bench extra of jev-ci-select."
)
CALIBRATE_PLOT_UNWRITABLE: Final = "jev-select: the plot could not be written."
