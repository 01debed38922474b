"""The local preview of a run without a key or consent: what a keyed run would do with the change.

Pure core (docs/reference.md, "Local use"). The preview never decides anything itself: its plan
is the selection policy (``core.policy.decide``) applied to the change without scores, exactly as
a keyed run applies it, so a protected path, a collection error or a grouping error keeps the
whole change here as it would there. This module reads that plan and writes it for the terminal
(:func:`render_preview`) and for ``plan --json`` (:func:`preview_json`, :func:`plan_output_json`).
"""

from __future__ import annotations

import functools
import importlib.resources
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from .. import contracts as c
from .jsonutil import code_unit_key, pretty_json, strict_loads
from .models import Plan, TaskTable
from .plan_view import matched_pattern
from .policy import first_protected_path
from .report_v5 import ReportV5, report_json

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = [
    "PatchSize",
    "PreviewFacts",
    "kept_whole_reason",
    "patch_line",
    "plan_output_json",
    "plan_output_text",
    "preview_json",
    "protected_path",
    "render_preview",
    "validate_preview",
]

_WHOLE_CHANGE_REASONS = frozenset(c.KEYED_RUN_REASONS)
_PATH_LIMIT = 20


@attrs.frozen
class PatchSize:
    """A patch over ``max-diff-bytes``: the limit, and the patch's size when it was measured
    (None when it is past ``PATCH_MEASURE_CAP``, the most that is read to tell it)."""

    limit_bytes: int
    patch_bytes: int | None


@attrs.frozen
class PreviewFacts:
    """What planning found before anything would be sent, as the preview shows it.

    ``plan`` is ``decide`` applied without scores; ``protected_path`` the first changed path the
    policy protects; ``patch`` is set when collection failed on ``max-diff-bytes``; ``diff_bytes``
    is the size of the collected patch (None when it was not collected).
    """

    plan: Plan
    changed_paths: tuple[str, ...] | None
    collection_error: str | None
    gaps: Mapping[str, tuple[str, ...]]
    requests: int
    protected_path: str | None = None
    patch: PatchSize | None = None
    diff_bytes: int | None = None


def protected_path(
    changed_paths: Sequence[str] | None, protected_paths: Collection[str]
) -> str | None:
    """The first of ``changed_paths`` that the selection policy protects, or None: the
    policy's own rule (``policy.first_protected_path``), so that it stays in one place."""
    return first_protected_path(changed_paths, protected_paths)


def kept_whole_reason(plan: Plan) -> str | None:
    """The reason the plan keeps every task whatever the scores, or None when scores decide."""
    for decision in plan.decisions.values():
        for reason in decision.reasons:
            if reason in _WHOLE_CHANGE_REASONS:
                return str(reason)
        return None
    return None


def _mandatory(plan: Plan) -> dict[str, list[str]]:
    """Task ID to the reasons that make it mandatory, for the tasks that have one."""
    found: dict[str, list[str]] = {}
    for task_id, decision in plan.decisions.items():
        reasons = [str(reason) for reason in decision.reasons if reason in c.MANDATORY_REASONS]
        if reasons:
            found[task_id] = reasons
    return found


def _candidates(plan: Plan) -> list[str]:
    """The tasks a keyed run's scores would decide: none when the whole change is kept."""
    if kept_whole_reason(plan) is not None:
        return []
    mandatory = _mandatory(plan)
    return [task_id for task_id in plan.decisions if task_id not in mandatory]


def _force_paths(table: TaskTable, task_id: str) -> tuple[str, ...] | None:
    task = next((task for task in table.tasks if task.id == task_id), None)
    return task.force_paths if task is not None else None


def _size_details(facts: PreviewFacts, reason: str | None) -> dict[str, int | None]:
    """Patch size and limit behind a ``diff-too-large``; empty for any other reason."""
    if reason != c.REASON_DIFF_TOO_LARGE:
        return {}
    if facts.patch is not None:
        return {
            c.KEYED_RUN_PATCH_BYTES: facts.patch.patch_bytes,
            c.KEYED_RUN_LIMIT_BYTES: facts.patch.limit_bytes,
        }
    if facts.collection_error is None and facts.diff_bytes is not None:
        # Collected, then refused by grouping: more groups than a run may send.
        return {c.KEYED_RUN_PATCH_BYTES: facts.diff_bytes, c.KEYED_RUN_LIMIT_GROUPS: c.MAX_GROUPS}
    return {}


def _detail_text(facts: PreviewFacts, reason: str) -> str:
    if reason == c.REASON_PROTECTED_PATH and facts.protected_path is not None:
        return c.PROTECTED_PATH_DETAIL_TEMPLATE.format(path=facts.protected_path)
    sizes = _size_details(facts, reason)
    if c.KEYED_RUN_LIMIT_GROUPS in sizes:
        return c.PATCH_TOO_MANY_GROUPS_TEMPLATE.format(
            patch_bytes=sizes[c.KEYED_RUN_PATCH_BYTES],
            limit_groups=sizes[c.KEYED_RUN_LIMIT_GROUPS],
        )
    if facts.patch is not None and sizes:
        return _patch_text(facts.patch)
    return ""


def _patch_text(patch: PatchSize) -> str:
    if patch.patch_bytes is None:
        return c.PATCH_PAST_MEASURE_TEMPLATE.format(
            measured=c.PATCH_MEASURE_CAP, limit_bytes=patch.limit_bytes
        )
    return c.PATCH_OVER_LIMIT_TEMPLATE.format(
        patch_bytes=patch.patch_bytes, limit_bytes=patch.limit_bytes
    )


def render_preview(table: TaskTable, facts: PreviewFacts) -> str:
    """The preview for the terminal: the change, the tasks kept whatever the scores, and what a
    keyed run would do: ask Jev about the other tasks in so many requests, or keep the whole
    change (with its reason code, the protected path or the patch size against the limit)."""
    lines = [c.PREVIEW_HEADING]
    reason = kept_whole_reason(facts.plan)
    paths = facts.changed_paths
    if paths is None:
        lines.append(
            c.PREVIEW_NOT_COLLECTED_TEMPLATE.format(
                reason=facts.collection_error or reason or c.TERMINAL_NULL
            )
        )
    else:
        lines.append(f"  {len(paths)} changed file(s):")
        lines.extend(f"    {path}" for path in paths[:_PATH_LIMIT])
        if len(paths) > _PATH_LIMIT:
            lines.append(f"    ... {len(paths) - _PATH_LIMIT} more")
    for task_id, reasons in _mandatory(facts.plan).items():
        parts: list[str] = []
        for code in reasons:
            match = matched_pattern(_force_paths(table, task_id), paths)
            if code == c.REASON_PATH_MATCH and match is not None:
                parts.append(f"{match[0]} matched {match[1]}")
            elif code == c.REASON_METADATA_UNAVAILABLE and facts.gaps.get(task_id):
                parts.append(c.PLAN_VIEW_GAPS_PREFIX + ", ".join(facts.gaps[task_id]))
            else:
                parts.append(code)
        lines.append(f"  kept: {task_id} ({'; '.join(parts)})")
    if reason is None:
        asked = _candidates(facts.plan)
        lines.append(
            c.PREVIEW_ASKED_TEMPLATE.format(
                asked=len(asked),
                total=len(facts.plan.decisions),
                names=f": {', '.join(asked)}" if asked else "",
                requests=f" ({facts.requests} request(s))" if asked and facts.requests else "",
            )
        )
    else:
        detail = _detail_text(facts, reason)
        lines.append(
            c.PREVIEW_KEPT_WHOLE_TEMPLATE.format(
                reason=reason,
                detail=f" ({detail})" if detail else "",
                sent=(
                    c.PREVIEW_RECORDED_ONLY_TEMPLATE.format(requests=facts.requests)
                    if facts.requests
                    else c.PREVIEW_NOTHING_SENT
                ),
            )
        )
    lines.append(c.PREVIEW_HINT)
    return "\n".join(lines) + "\n"


def preview_json(table: TaskTable, facts: PreviewFacts) -> dict[str, object]:
    """The ``preview`` object of ``plan --json`` (schemas/plan-output.schema.json)."""
    paths = facts.changed_paths
    forced: list[dict[str, object]] = []
    for task_id, reasons in _mandatory(facts.plan).items():
        match = (
            matched_pattern(_force_paths(table, task_id), paths)
            if c.REASON_PATH_MATCH in reasons
            else None
        )
        forced.append(
            {
                c.PREVIEW_TASK_ID: task_id,
                c.PREVIEW_TASK_REASONS: reasons,
                c.PREVIEW_TASK_PATTERN: match[0] if match is not None else None,
                c.PREVIEW_TASK_PATH: match[1] if match is not None else None,
            }
        )
    reason = kept_whole_reason(facts.plan)
    sizes = _size_details(facts, reason)
    keyed_run: dict[str, object] = {
        c.KEYED_RUN_REASON: reason,
        c.KEYED_RUN_PATH: facts.protected_path if reason == c.REASON_PROTECTED_PATH else None,
        c.KEYED_RUN_PATCH_BYTES: sizes.get(c.KEYED_RUN_PATCH_BYTES),
        c.KEYED_RUN_LIMIT_BYTES: sizes.get(c.KEYED_RUN_LIMIT_BYTES),
        c.KEYED_RUN_LIMIT_GROUPS: sizes.get(c.KEYED_RUN_LIMIT_GROUPS),
        c.KEYED_RUN_CANDIDATES: _candidates(facts.plan),
        c.KEYED_RUN_REQUESTS: facts.requests,
    }
    return {
        c.PREVIEW_CHANGED_FILES: list(paths) if paths is not None else None,
        c.PREVIEW_FORCED_TASKS: forced,
        c.PREVIEW_GAPS: {
            task_id: list(facts.gaps[task_id])
            for task_id in sorted(facts.gaps, key=code_unit_key)
            if facts.gaps[task_id]
        },
        c.PREVIEW_KEYED_RUN: keyed_run,
    }


def plan_output_json(report: ReportV5, preview: Mapping[str, object] | None) -> dict[str, object]:
    """What ``plan --json`` prints: the report v5 unchanged, and the preview or null."""
    return {c.PLAN_OUTPUT_REPORT: report_json(report), c.PLAN_OUTPUT_PREVIEW: preview}


def plan_output_text(report: ReportV5, preview: Mapping[str, object] | None) -> str:
    """:func:`plan_output_json` as 2-space JSON with one final newline, like the report file."""
    return pretty_json(plan_output_json(report, preview)) + "\n"


def patch_line(report: ReportV5, patch: PatchSize | None) -> str | None:
    """After the table of a keyed run: the patch size against the limit behind its
    ``diff-too-large``, or None when that is not the reason shown or the size is unknown."""
    if not any(c.REASON_DIFF_TOO_LARGE in entry.reasons for entry in report.tasks.values()):
        return None
    if patch is not None:
        detail = _patch_text(patch)
    elif report.observation_error == c.REASON_DIFF_TOO_LARGE and report.diff_bytes is not None:
        detail = c.PATCH_TOO_MANY_GROUPS_TEMPLATE.format(
            patch_bytes=report.diff_bytes, limit_groups=c.MAX_GROUPS
        )
    else:
        return None
    return c.PATCH_LINE_TEMPLATE.format(reason=c.REASON_DIFF_TOO_LARGE, detail=detail)


@functools.cache
def _preview_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    resource = importlib.resources.files("jev_select") / "schemas" / c.PREVIEW_SCHEMA_FILE
    return Draft202012Validator(strict_loads(resource.read_bytes()))


def validate_preview(value: object) -> bool:
    """Whether ``value`` (a parsed JSON value) matches ``schemas/preview.schema.json``: what
    ``history`` writes beside a report and the ceiling reads back."""
    try:
        return bool(_preview_validator().is_valid(value))
    except Exception:
        return False
