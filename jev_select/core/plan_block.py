"""The machine-readable plan block at the end of the step summary (docs/reference.md,
"Step summary and plan block").

The writer makes the block ASCII-only and escapes ``<``, ``>`` and ``&`` inside JSON strings, so
no text carried in the payload can close the HTML comment early or forge a second block. The
reader is fail-closed: anything doubtful yields ``None``, which consumers read as "run everything".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

from .. import contracts as c
from .jsonutil import code_unit_key, pretty_json, strict_loads

__all__ = ["PlanBlock", "read_plan_block", "render_plan_block"]

_OPENING = "<!-- " + c.PLAN_BLOCK_MARKER
_CLOSING = "-->"
_OPENING_LINE = re.compile(re.escape(_OPENING) + r"\r?\n")
_PAYLOAD_END = re.compile(r"(?:\r\n|\n|\r)" + re.escape(_CLOSING))
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_HTML_SENSITIVE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def _read_only(run: Mapping[str, bool]) -> Mapping[str, bool]:
    return MappingProxyType(dict(run))


def _id_tuple(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(ids)


@attrs.frozen
class PlanBlock:
    """A plan block that passed every check of the reader."""

    schema_version: int
    engine_version: str
    report_version: int
    tested_sha: str
    base_sha: str
    head_sha: str
    selection_hash: str
    mode: str
    status: str
    run: Mapping[str, bool] = attrs.field(converter=_read_only)
    selected: tuple[str, ...] = attrs.field(converter=_id_tuple)

    def runs(self, task_id: str) -> bool:
        """Whether ``task_id`` runs; an ID the block does not list always runs."""
        return self.run.get(task_id, True)


def _escape_non_ascii(match: re.Match[str]) -> str:
    encoded = match.group(0).encode("utf-16-be", "surrogatepass")
    return "".join(
        f"\\u{int.from_bytes(encoded[i : i + 2], 'big'):04x}" for i in range(0, len(encoded), 2)
    )


def _block_payload(value: Mapping[str, Any]) -> str:
    text = _NON_ASCII.sub(_escape_non_ascii, pretty_json(value))
    for character, escape in _HTML_SENSITIVE.items():
        text = text.replace(character, escape)
    return text


def render_plan_block(report: Mapping[str, Any], engine_version: str) -> str:
    """The plan block for ``report``: marker line, 2-space JSON, ``-->`` and a final LF."""
    tasks: Mapping[str, Mapping[str, Any]] = report[c.REPORT_FIELD_TASKS]
    run = {
        task_id: bool(tasks[task_id][c.REPORT_TASK_RUN])
        for task_id in sorted(tasks, key=code_unit_key)
    }
    payload = {
        "schemaVersion": c.PLAN_SCHEMA_VERSION,
        "engineVersion": engine_version,
        "reportVersion": c.REPORT_VERSION,
        "testedSha": report["tested_sha"],
        "baseSha": report["base_sha"],
        "headSha": report["head_sha"],
        "selectionHash": report["selection_hash"],
        c.PLAN_BLOCK_FIELD_MODE: report[c.REPORT_FIELD_MODE],
        c.PLAN_BLOCK_FIELD_STATUS: report[c.REPORT_FIELD_STATUS],
        c.PLAN_BLOCK_FIELD_RUN: run,
        c.PLAN_BLOCK_FIELD_SELECTED: [task_id for task_id, runs in run.items() if runs],
    }
    return f"{_OPENING}\n{_block_payload(payload)}\n{_CLOSING}\n"


def _exact_int(value: Any, allowed: tuple[int, ...]) -> bool:
    return type(value) is int and value in allowed


def _matches(pattern: str, value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(pattern, value, re.ASCII) is not None


def _parse(payload: Any) -> PlanBlock | None:
    if not isinstance(payload, dict):
        return None
    if not _exact_int(payload.get("schemaVersion"), c.PLAN_SCHEMA_VERSIONS):
        return None
    if not _exact_int(payload.get("reportVersion"), (c.REPORT_VERSION,)):
        return None
    engine_version = payload.get("engineVersion")
    if not isinstance(engine_version, str) or not engine_version:
        return None
    shas: list[str] = []
    for key in ("testedSha", "baseSha", "headSha"):
        sha = payload.get(key)
        if not isinstance(sha, str) or not _matches(c.SHA40_PATTERN, sha):
            return None
        shas.append(sha)
    if not _matches(c.HEX64_PATTERN, payload.get("selectionHash")):
        return None
    mode, status = payload.get(c.PLAN_BLOCK_FIELD_MODE), payload.get(c.PLAN_BLOCK_FIELD_STATUS)
    if mode not in c.MODES or status not in c.STATUSES:
        return None
    run, selected = payload.get(c.PLAN_BLOCK_FIELD_RUN), payload.get(c.PLAN_BLOCK_FIELD_SELECTED)
    if not isinstance(run, dict) or not isinstance(selected, list):
        return None
    if not all(_matches(c.TASK_ID_PATTERN, key) and type(v) is bool for key, v in run.items()):
        return None
    expected = sorted((task_id for task_id, runs in run.items() if runs), key=code_unit_key)
    if selected != expected:
        return None
    if (mode == c.MODE_SHADOW or status != c.STATUS_PLANNED) and not all(run.values()):
        return None
    return PlanBlock(
        schema_version=payload["schemaVersion"],
        engine_version=engine_version,
        report_version=payload["reportVersion"],
        tested_sha=shas[0],
        base_sha=shas[1],
        head_sha=shas[2],
        selection_hash=payload["selectionHash"],
        mode=mode,
        status=status,
        run=run,
        selected=tuple(selected),
    )


def read_plan_block(text: str, *, expected_tested_sha: str | None = None) -> PlanBlock | None:
    """The last plan block of ``text``, or ``None`` when it is absent, malformed, of an
    unsupported version or (given ``expected_tested_sha``) for another commit. Never raises.
    """
    try:
        if not isinstance(text, str):
            return None
        openings = list(_OPENING_LINE.finditer(text))
        if not openings:
            return None
        start = openings[-1].end()
        end = _PAYLOAD_END.search(text, start)
        if end is None:
            return None
        block = _parse(strict_loads(text[start : end.start()]))
        if block is None:
            return None
        if expected_tested_sha is not None and block.tested_sha != expected_tested_sha:
            return None
        return block
    except Exception:
        # Fail closed on anything at all: a consumer must never act on a partial plan.
        return None
