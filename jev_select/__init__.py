"""jev-select: run only the CI tasks a pull request needs, and never skip one on doubtful evidence.

The stable library API (docs/reference.md, "Library") is re-exported here. The core functions are
pure: they take facts as data and never read the environment, the clock, files, the network or git.

>>> import jev_select
>>> table = jev_select.parse_tasks("unit:\\n  description: Runs the unit tests.\\n")
>>> table.ids
('unit',)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .errors import InputError, JevSelectError, PlanningFailure
from .version import __version__

# The API is loaded on first use (PEP 562): ``jev-select plan`` imports this package before any of
# its own modules, and on a bypass most of the API (evidence, grouping, questions, the shadow
# analyzer, the plan-block reader) is never called; importing it all up front cost such a run
# about 7 ms of its 100 ms import budget. Name -> module that defines it:
_LAZY: dict[str, str] = {
    "AnalysisError": ".core.shadow",
    "analyze_shadow": ".core.shadow",
    "build_evidence": ".core.evidence.resolve",
    "build_questions": ".core.questions",
    "build_report": ".core.report",
    "canonical_json": ".core.jsonutil",
    "compact_json": ".core.jsonutil",
    "compute_selection_hash": ".core.tasks",
    "ChangeFacts": ".core.models",
    "DocumentError": ".core.convert",
    "ReportV5": ".core.report_v5",
    "parse_report": ".core.report_v5",
    "report_json": ".core.report_v5",
    "Commits": ".core.models",
    "Durations": ".core.models",
    "Evaluation": ".core.models",
    "decide": ".core.policy",
    "format_number": ".core.jsonutil",
    "GroupingError": ".core.grouping",
    "Inputs": ".core.models",
    "match_force_paths": ".core.tasks",
    "parse_inputs": ".core.inputs",
    "parse_tasks": ".core.tasks",
    "Plan": ".core.models",
    "RunFacts": ".core.models",
    "PlanBlock": ".core.plan_block",
    "prepare_observation": ".core.grouping",
    "read_plan_block": ".core.plan_block",
    "read_report": ".edges.readers",
    "render_outputs": ".core.render",
    "render_plan_block": ".core.plan_block",
    "render_summary": ".core.render",
    "resolve_metadata": ".core.evidence.resolve",
    "score_decisions": ".core.policy",
    "split_diff": ".core.grouping",
    "TaskTable": ".core.models",
    "validate_report": ".core.report",
    "validate_response": ".core.responses",
}

if TYPE_CHECKING:
    from .core.convert import DocumentError
    from .core.evidence.resolve import build_evidence, resolve_metadata
    from .core.grouping import GroupingError, prepare_observation, split_diff
    from .core.inputs import parse_inputs
    from .core.jsonutil import canonical_json, compact_json, format_number
    from .core.models import (
        ChangeFacts,
        Commits,
        Durations,
        Evaluation,
        Inputs,
        Plan,
        RunFacts,
        TaskTable,
    )
    from .core.plan_block import PlanBlock, read_plan_block, render_plan_block
    from .core.policy import decide, score_decisions
    from .core.questions import build_questions
    from .core.render import render_outputs, render_summary
    from .core.report import build_report, validate_report
    from .core.report_v5 import ReportV5, parse_report, report_json
    from .core.responses import validate_response
    from .core.shadow import AnalysisError, analyze_shadow
    from .core.tasks import compute_selection_hash, match_force_paths, parse_tasks
    from .edges.readers import read_report


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AnalysisError",
    "ChangeFacts",
    "Commits",
    "DocumentError",
    "Durations",
    "Evaluation",
    "GroupingError",
    "InputError",
    "Inputs",
    "JevSelectError",
    "Plan",
    "PlanBlock",
    "PlanningFailure",
    "ReportV5",
    "RunFacts",
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
    "parse_report",
    "parse_tasks",
    "prepare_observation",
    "read_plan_block",
    "read_report",
    "render_outputs",
    "render_plan_block",
    "render_summary",
    "report_json",
    "resolve_metadata",
    "score_decisions",
    "split_diff",
    "validate_report",
    "validate_response",
]
