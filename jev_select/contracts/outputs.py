"""Outputs: the names the action publishes and their fixed forms."""

from __future__ import annotations

from typing import Final

# --------------------------------------------------------------------------------------------
# Outputs (docs/reference.md, "Outputs")
# --------------------------------------------------------------------------------------------

OUTPUT_RUN: Final = "run"
OUTPUT_SELECTED: Final = "selected"
OUTPUT_MATRIX: Final = "matrix"
OUTPUT_HAS_TASKS: Final = "has-tasks"
OUTPUT_STATUS: Final = "status"
OUTPUT_TESTED_SHA: Final = "tested-sha"
OUTPUT_REPORT_PATH: Final = "report-path"
OUTPUTS: Final = (
    OUTPUT_RUN,
    OUTPUT_SELECTED,
    OUTPUT_MATRIX,
    OUTPUT_HAS_TASKS,
    OUTPUT_STATUS,
    OUTPUT_TESTED_SHA,
    OUTPUT_REPORT_PATH,
)
OUTPUT_DESCRIPTIONS: Final = {
    OUTPUT_RUN: "JSON object of task ID to effective boolean decision.",
    OUTPUT_SELECTED: "JSON array of the IDs of the tasks that run.",
    OUTPUT_MATRIX: 'JSON object {"include":[{"task":"<id>"}]} of the tasks that run.',
    OUTPUT_HAS_TASKS: "'true' when at least one task runs.",
    OUTPUT_STATUS: "planned, bypassed or fallback.",
    OUTPUT_TESTED_SHA: "The commit the selection was made for; consumer jobs check it out.",
    OUTPUT_REPORT_PATH: "Runner-local path of the JSON report.",
}
OUTPUT_DELIMITER_PREFIX: Final = "jev-select-"
