"""jev-select: run only the CI tasks a pull request needs, and never skip one on doubtful evidence.

The stable library API (spec §1.2) is re-exported here. The core functions are pure: they take
facts as data and never read the environment, the clock, files, the network or git.

>>> import jev_select
>>> table = jev_select.parse_tasks("unit:\\n  description: Runs the unit tests.\\n")
>>> table.ids
('unit',)
"""

from __future__ import annotations

from .core.evidence import build_evidence, resolve_metadata
from .core.grouping import GroupingError, prepare_observation, split_diff
from .core.inputs import parse_inputs
from .core.jsonutil import canonical_json, compact_json, format_number
from .core.models import Inputs, Plan, TaskTable
from .core.plan_block import PlanBlock, read_plan_block, render_plan_block
from .core.policy import decide, score_decisions
from .core.questions import build_questions
from .core.render import render_outputs, render_summary
from .core.report import build_report, validate_report
from .core.responses import validate_response
from .core.shadow import AnalysisError, analyze_shadow
from .core.tasks import compute_selection_hash, match_force_paths, parse_tasks
from .edges.readers import read_report
from .errors import InputError, PlanningFailure
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
