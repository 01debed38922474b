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

import attrs

from .. import contracts as c
from .convert import DocumentError, register_document, structure, unstructure
from .jsonutil import code_unit_key, pretty_json, strict_loads
from .report_v5 import ReportV5

__all__ = ["PlanBlock", "plan_block_of", "read_plan_block", "render_plan_block"]

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
    """A plan block that passed every check of the reader, or one about to be written.

    The attributes are the block's JSON keys, in the order the block writes them and spelt in
    camelCase there.
    """

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

    def to_json(self) -> dict[str, object]:
        """The block as its JSON object: the block's own key names, in the order it writes them."""
        value = unstructure(self)
        assert isinstance(value, dict)  # an attrs class always unstructures to an object
        return value


# The block spells its two-word keys in camelCase; the one-word keys are the attribute names
# (the PLAN_BLOCK_FIELD_* constants). The schema lets a later writer add fields and tells
# consumers to ignore them, so unlike the other documents a block with an unknown key is read.
register_document(
    PlanBlock,
    keys={
        "schema_version": "schemaVersion",
        "engine_version": "engineVersion",
        "report_version": "reportVersion",
        "tested_sha": "testedSha",
        "base_sha": "baseSha",
        "head_sha": "headSha",
        "selection_hash": "selectionHash",
    },
    ignore_extra_keys=True,
)


def _escape_non_ascii(match: re.Match[str]) -> str:
    encoded = match.group(0).encode("utf-16-be", "surrogatepass")
    return "".join(
        f"\\u{int.from_bytes(encoded[i : i + 2], 'big'):04x}" for i in range(0, len(encoded), 2)
    )


def _block_payload(value: Mapping[str, object]) -> str:
    text = _NON_ASCII.sub(_escape_non_ascii, pretty_json(value))
    for character, escape in _HTML_SENSITIVE.items():
        text = text.replace(character, escape)
    return text


def _text(report: Mapping[str, object], key: str) -> str:
    value = report[key]
    if not isinstance(value, str):  # a validated report holds strings; nothing else is echoed
        raise TypeError(key)
    return value


def _runs(report: Mapping[str, object]) -> dict[str, bool]:
    tasks = report[c.REPORT_FIELD_TASKS]
    if not isinstance(tasks, Mapping):
        raise TypeError(c.REPORT_FIELD_TASKS)
    run: dict[str, bool] = {}
    for task_id in sorted(tasks, key=code_unit_key):
        decision = tasks[task_id]
        if not isinstance(decision, Mapping):
            raise TypeError(c.REPORT_FIELD_TASKS)
        run[task_id] = bool(decision[c.REPORT_TASK_RUN])
    return run


def render_plan_block(report: Mapping[str, object], engine_version: str) -> str:
    """The plan block for a parsed ``report`` mapping: marker line, 2-space JSON, ``-->`` and a
    final LF. Only the fields the block carries are read."""
    return _block_text(
        tested_sha=_text(report, "tested_sha"),
        base_sha=_text(report, "base_sha"),
        head_sha=_text(report, "head_sha"),
        selection_hash=_text(report, "selection_hash"),
        mode=_text(report, c.REPORT_FIELD_MODE),
        status=_text(report, c.REPORT_FIELD_STATUS),
        run=_runs(report),
        engine_version=engine_version,
    )


def plan_block_of(report: ReportV5, engine_version: str) -> str:
    """:func:`render_plan_block` of a typed report, read from its attributes."""
    return _block_text(
        tested_sha=report.tested_sha,
        base_sha=report.base_sha,
        head_sha=report.head_sha,
        selection_hash=report.selection_hash,
        mode=report.mode,
        status=report.status,
        run={
            task_id: report.tasks[task_id].run
            for task_id in sorted(report.tasks, key=code_unit_key)
        },
        engine_version=engine_version,
    )


def _block_text(
    *,
    tested_sha: str,
    base_sha: str,
    head_sha: str,
    selection_hash: str,
    mode: str,
    status: str,
    run: dict[str, bool],
    engine_version: str,
) -> str:
    block = PlanBlock(
        schema_version=c.PLAN_SCHEMA_VERSION,
        engine_version=engine_version,
        report_version=c.REPORT_VERSION,
        tested_sha=tested_sha,
        base_sha=base_sha,
        head_sha=head_sha,
        selection_hash=selection_hash,
        mode=mode,
        status=status,
        run=run,
        selected=[task_id for task_id, runs in run.items() if runs],
    )
    return f"{_OPENING}\n{_block_payload(block.to_json())}\n{_CLOSING}\n"


def _matches(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value, re.ASCII) is not None


def _parse(payload: object) -> PlanBlock | None:
    """The block of a parsed payload, or ``None`` when any check fails.

    The converter settles the shape (every key present, each of its JSON type, booleans never
    standing in for numbers); the values and the invariants between them are checked here.
    """
    if not isinstance(payload, dict):
        return None
    try:
        block = structure(payload, PlanBlock)
    except DocumentError:
        return None
    if block.schema_version not in c.PLAN_SCHEMA_VERSIONS:
        return None
    if block.report_version != c.REPORT_VERSION or not block.engine_version:
        return None
    if not all(
        _matches(c.SHA40_PATTERN, sha) for sha in (block.tested_sha, block.base_sha, block.head_sha)
    ):
        return None
    if not _matches(c.HEX64_PATTERN, block.selection_hash):
        return None
    if block.mode not in c.MODES or block.status not in c.STATUSES:
        return None
    if not all(_matches(c.TASK_ID_PATTERN, task_id) for task_id in block.run):
        return None
    expected = sorted((task_id for task_id, runs in block.run.items() if runs), key=code_unit_key)
    if list(block.selected) != expected:
        return None
    if (block.mode == c.MODE_SHADOW or block.status != c.STATUS_PLANNED) and not all(
        block.run.values()
    ):
        return None
    return block


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
