"""jev-select: run only the CI tasks a pull request needs, and never skip one on doubtful evidence.

The stable library API (spec §1.2) is re-exported here. The core functions are pure: they take
facts as data and never read the environment, the clock, files, the network or git.

>>> import jev_select
>>> table = jev_select.parse_tasks("unit:\\n  description: Runs the unit tests.\\n")
>>> table.ids
('unit',)
"""

from __future__ import annotations

from .analyze import AnalysisError, analyze_shadow
from .errors import InputError, PlanningFailure
from .grouping import GroupingError, prepare_observation, split_diff
from .inputs import parse_inputs
from .responses import validate_response
from .jsonutil import canonical_json, compact_json, format_number
from .metadata import build_evidence, resolve_metadata
from .models import Inputs, Plan, TaskTable
from .planblock import PlanBlock, read_plan_block, render_plan_block
from .policy import decide, score_decisions
from .questions import build_questions
from .readers import read_report
from .render import render_outputs, render_summary
from .report import build_report, validate_report
from .tasks import compute_selection_hash, match_force_paths, parse_tasks
from .version import __version__

__all__ = [
    "AnalysisError",
    "GroupingError",
    "InputError",
    "Inputs",
    "Plan",
    "PlanBlock",
    "PlanningFailure",
    "TaskTable",
    "__version__",
    "analyze_shadow",
    "build_evidence",
    "build_questions",
    "build_report",
    "canonical_json",
    "compact_json",
    "compute_selection_hash",
    "decide",
    "format_number",
    "match_force_paths",
    "parse_inputs",
    "parse_tasks",
    "prepare_observation",
    "read_plan_block",
    "read_report",
    "render_outputs",
    "render_plan_block",
    "render_summary",
    "resolve_metadata",
    "score_decisions",
    "split_diff",
    "validate_report",
    "validate_response",
]
