"""Versions and names: the product, the distribution, the report and plan-block versions."""

from __future__ import annotations

from typing import Final

# --------------------------------------------------------------------------------------------
# Versions and names
# --------------------------------------------------------------------------------------------

PRODUCT_NAME: Final = "jev-select"
# The name on the package index; `jev-select` there belongs to an unrelated project.
DISTRIBUTION_NAME: Final = "jev-ci-select"
REPORT_VERSION: Final = 5
PLAN_BLOCK_MARKER: Final = "jev-select-plan"
PLAN_SCHEMA_VERSIONS: Final = (1,)
PLAN_SCHEMA_VERSION: Final = 1
REPORT_SCHEMA_TITLE: Final = "jev-select source-free report v5"
REPORT_SCHEMA_FILE: Final = "report.schema.json"
TASKS_SCHEMA_FILE: Final = "tasks.schema.json"
PLAN_BLOCK_SCHEMA_FILE: Final = "plan-block.schema.json"
RESULTS_SCHEMA_FILE: Final = "results.schema.json"
SYSTEM_ONE_REQUEST_SCHEMA_FILE: Final = "systemone-request.schema.json"
