"""The evaluation replay of the corpus."""

from __future__ import annotations

from typing import Final

from .failures import CommandFailures
from .report import COMMAND_REPLAY

# --------------------------------------------------------------------------------------------
# replay: evaluation replay of the corpus (docs/reference.md, "Evaluation replay")
# --------------------------------------------------------------------------------------------

REPLAY_LABEL_RELEVANT: Final = "relevant"
REPLAY_LABEL_IRRELEVANT: Final = "irrelevant"
REPLAY_LABELS: Final = (REPLAY_LABEL_RELEVANT, REPLAY_LABEL_IRRELEVANT)
REPLAY_SPLITS: Final = ("calibration", "validation")
REPLAY_METRICS: Final = (
    "relevant",
    "relevant_misses",
    "irrelevant",
    "correct_omissions",
    "irrelevant_retained",
    "unknown",
)
REPLAY_CASE_ID_PATTERN: Final = r"[a-z0-9][a-z0-9-]{0,62}"
REPLAY_STALE_RECORDING: Final = "stale-recording"
REPLAY_RESULT_MISMATCH: Final = "result-mismatch"
REPLAY_INVALID_CORPUS: Final = "invalid-corpus"
REPLAY_INVALID_CAMPAIGN: Final = "invalid-campaign"
REPLAY_CASE_UNBUILDABLE: Final = "case-unbuildable"
REPLAY_LIVE_UNAVAILABLE: Final = "live-unavailable"
REPLAY_JSON_UNWRITABLE: Final = "json-unwritable"
REPLAY_FAILURE_CODES: Final = (
    REPLAY_STALE_RECORDING,
    REPLAY_RESULT_MISMATCH,
    REPLAY_INVALID_CORPUS,
    REPLAY_INVALID_CAMPAIGN,
    REPLAY_CASE_UNBUILDABLE,
    REPLAY_LIVE_UNAVAILABLE,
    REPLAY_JSON_UNWRITABLE,
)
REPLAY_FAILURE_TEMPLATE: Final = "jev-select: replay failed ({code})."
REPLAY_CASE_FAILURE_TEMPLATE: Final = "jev-select: replay failed ({code}) in case {case}."
REPLAY_FAILURES: Final = CommandFailures(
    command=COMMAND_REPLAY,
    template=REPLAY_FAILURE_TEMPLATE,
    codes=REPLAY_FAILURE_CODES,
    fallback=REPLAY_INVALID_CORPUS,
)
REPLAY_HEADING_TEMPLATE: Final = (
    "jev-select replay: {cases} cases, {answers} recorded answers ({synthetic} synthetic)"
)
REPLAY_SYNTHETIC_NOTE: Final = (
    "Synthetic answers are scores derived from the labels, not Jev judgements; "
    "they check the pipeline, not the model."
)
REPLAY_THRESHOLD_COLUMN: Final = "threshold"
