"""Splitting the patch into groups and planning the System One requests (docs/reference.md,
"Grouping", "Batching, concurrency and deadlines").

Pure: the patch, commits, evidence and hints come in; groups, hashes and exact request bodies go
out. Sizes are UTF-8 byte lengths throughout, because the limits are limits on request bytes and
the byte ranges are recorded in the report.

Splitting is lossless: group texts concatenate to the patch and their byte ranges tile it, so a
reader can always tell which part of the change a score belongs to.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Mapping, Sequence

import attrs

from .. import contracts as c
from .jsonutil import code_unit_key, compact_json
from .models import Commits, DiffGroup, PlannedRequest, PreparedGroup, PreparedObservation
from .patch import GroupingError, PatchFile, encode_patch, parse_patch, parse_patch_bytes
from .questions import build_questions, build_state, request_body, sha_state

__all__ = [
    "GroupingError",
    "PatchFile",
    "group_key",
    "normalise_hints",
    "parse_patch",
    "prepare_observation",
    "split_diff",
]

_WORKDIR_KEY = "workdir:"
_TREE_KEY = "tree:"
_ROOT = "."


# --------------------------------------------------------------------------------------------
# Group keys (docs/reference.md, "Grouping" step 3)
# --------------------------------------------------------------------------------------------


def _normalise_hint(hint: str) -> str | None:
    while hint.startswith("./"):
        hint = hint[2:]
    hint = hint.rstrip("/")
    if not hint or hint == _ROOT:
        return _ROOT
    if hint.startswith("/") or "\\" in hint or "\x00" in hint or "${{" in hint or "}}" in hint:
        return None
    if any(segment in ("", ".", "..") for segment in hint.split("/")):
        return None
    return hint


def normalise_hints(hints: Sequence[str]) -> tuple[str, ...]:
    """Usable hints, de-duplicated, longest first and ties in code-unit order."""
    usable = {normalised for hint in hints if (normalised := _normalise_hint(hint)) is not None}
    return tuple(sorted(usable, key=lambda hint: (-len(code_unit_key(hint)), code_unit_key(hint))))


def _key_of(path: str, ordered_hints: Sequence[str]) -> str:
    for hint in ordered_hints:
        if hint == _ROOT or path == hint or path.startswith(hint + "/"):
            return _WORKDIR_KEY + hint
    directory, slash, _ = path.partition("/")
    return _TREE_KEY + (directory if slash else _ROOT)


def group_key(paths: Sequence[str], hints: Sequence[str]) -> str:
    """The grouping key of a file, decided by its first path (docs/reference.md, "Grouping" step
    3)."""
    return _key_of(paths[0], normalise_hints(hints))


# --------------------------------------------------------------------------------------------
# Splitting (docs/reference.md, "Grouping" steps 1, 4, 5)
# --------------------------------------------------------------------------------------------


@attrs.frozen
class _Slice:
    start: int
    end: int
    context: bytes
    paths: tuple[str, ...]


def _line_end(file: PatchFile, line_index: int) -> int:
    following = line_index + 1
    return file.line_starts[following] if following < len(file.line_starts) else file.end


def _split_oversized(data: bytes, file: PatchFile, budget: int) -> list[_Slice]:
    """Cut one file at line boundaries, preferring hunk boundaries; continuations carry headers."""
    starts = file.line_starts
    header_line = data[file.start : _line_end(file, 0)]
    hunk_positions = set(file.hunk_starts)
    pieces: list[_Slice] = []
    first = 0
    while first < len(starts):
        piece_start = starts[first]
        context = b""
        if first:
            before = bisect.bisect_left(file.hunk_starts, piece_start)
            context = header_line
            if before:
                hunk_start = file.hunk_starts[before - 1]
                hunk_line = bisect.bisect_left(starts, hunk_start)
                context += data[hunk_start : _line_end(file, hunk_line)]
        room = budget - len(context)
        stop = first
        while stop < len(starts) and _line_end(file, stop) - piece_start <= room:
            stop += 1
        if stop == first:
            raise GroupingError(c.REASON_CONTEXT_TOO_LARGE)
        if stop < len(starts):
            crossed = [index for index in range(first + 1, stop) if starts[index] in hunk_positions]
            if crossed:
                stop = crossed[-1]
        pieces.append(_Slice(piece_start, _line_end(file, stop - 1), context, file.paths))
        first = stop
    return pieces


def _unique(paths: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(paths))


def _split_files(
    data: bytes, files: Sequence[PatchFile], budget: int, hints: Sequence[str]
) -> list[_Slice]:
    ordered_hints = normalise_hints(hints)
    keys = [_key_of(file.paths[0], ordered_hints) for file in files]
    slices: list[_Slice] = []
    first = 0
    while first < len(files):
        file = files[first]
        if file.size > budget:
            slices.extend(_split_oversized(data, file, budget))
            first += 1
            continue
        last = first
        while last + 1 < len(files) and files[last + 1].end - file.start <= budget:
            last += 1
        if last + 1 < len(files):
            for index in range(first + 1, last + 1):
                if keys[index] != keys[first]:
                    last = index - 1
                    break
        members = files[first : last + 1]
        paths = _unique([path for member in members for path in member.paths])
        slices.append(_Slice(file.start, files[last].end, b"", paths))
        first = last + 1
    return slices


def _to_groups(data: bytes, slices: Sequence[_Slice]) -> tuple[DiffGroup, ...]:
    return tuple(
        DiffGroup(
            index=index,
            start_byte=piece.start,
            end_byte=piece.end,
            diff=data[piece.start : piece.end].decode("utf-8"),
            context=piece.context.decode("utf-8"),
            paths=piece.paths,
        )
        for index, piece in enumerate(slices)
    )


def _empty_group() -> tuple[DiffGroup, ...]:
    return (DiffGroup(index=0, start_byte=0, end_byte=0, diff="", context="", paths=()),)


def split_diff(patch: str, budget: int, hints: Sequence[str]) -> tuple[DiffGroup, ...]:
    """Split ``patch`` into groups of at most ``budget`` bytes including their context."""
    if not patch:
        return _empty_group()
    data = encode_patch(patch)
    return _to_groups(data, _split_files(data, parse_patch_bytes(data), budget, hints))


# --------------------------------------------------------------------------------------------
# Sizing loop and batching (docs/reference.md, "Grouping", "Batching, concurrency and deadlines")
# --------------------------------------------------------------------------------------------


def _json_size(value: object) -> int:
    return len(compact_json(value).encode("utf-8"))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _batches(
    state_size: int, task_ids: Sequence[str], question_sizes: Mapping[str, int]
) -> list[tuple[str, ...]]:
    """Consecutive task batches whose state plus questions object stays within the request cap."""
    batches: list[tuple[str, ...]] = []
    batch: list[str] = []
    questions_size = 2  # "{}"
    for task_id in task_ids:
        entry = _json_size(task_id) + 1 + question_sizes[task_id]
        grown = questions_size + entry + (1 if batch else 0)
        if batch and state_size + grown > c.MAX_REQUEST_BYTES:
            batches.append(tuple(batch))
            batch = []
            grown = 2 + entry
        batch.append(task_id)
        questions_size = grown
    if batch:
        batches.append(tuple(batch))
    return batches


def prepare_observation(
    *,
    patch: str,
    commits: Commits,
    evidence_by_task: Mapping[str, Mapping[str, object]],
    hints: Sequence[str],
    api_model: str,
) -> PreparedObservation:
    """Groups, their hashes and every request body, or a ``GroupingError``."""
    questions = build_questions(evidence_by_task)
    question_sizes = {task_id: _json_size(question) for task_id, question in questions.items()}
    largest_question = max(question_sizes.values(), default=0)
    base_sha = commits.diff_base_sha or commits.base_sha
    shas = {"base_sha": base_sha, "head_sha": commits.head_sha, "tested_sha": commits.tested_sha}
    sha_size = _json_size(sha_state(**shas))
    budget = min(
        c.PREFERRED_GROUP_BYTES,
        c.MAX_STATE_PLUS_QUESTION_BYTES - sha_size - largest_question - c.BUDGET_RESERVE_BYTES,
    )

    data = encode_patch(patch)
    files: tuple[PatchFile, ...] | None = None
    accepted: list[tuple[DiffGroup, dict[str, object], bytes]] | None = None
    for _attempt in range(c.MAX_SIZING_ATTEMPTS):
        if budget < c.BUDGET_FLOOR_BYTES:
            break
        if not data:
            groups = _empty_group()
        else:
            if files is None:
                files = parse_patch_bytes(data)
            groups = _to_groups(data, _split_files(data, files, budget, hints))
        if len(groups) > c.MAX_GROUPS:
            raise GroupingError(c.REASON_DIFF_TOO_LARGE)
        built = []
        for group in groups:
            state = build_state(**shas, group=group, total=len(groups))
            built.append((group, state, compact_json(state).encode("utf-8")))
        largest_state = max(len(state_bytes) for _, _, state_bytes in built)
        excess = largest_state + largest_question - c.MAX_STATE_PLUS_QUESTION_BYTES
        if excess <= 0:
            accepted = built
            break
        budget -= excess + c.SHRINK_MARGIN_BYTES
    if accepted is None:
        raise GroupingError(c.REASON_CONTEXT_TOO_LARGE)

    prepared: list[PreparedGroup] = []
    requests: list[PlannedRequest] = []
    task_ids = list(questions)
    for group, state, state_bytes in accepted:
        prepared.append(
            PreparedGroup(
                group=group,
                diff_hash=_sha256(group.diff.encode("utf-8")),
                state_hash=_sha256(state_bytes),
            )
        )
        for batch in _batches(len(state_bytes), task_ids, question_sizes):
            batch_questions = {task_id: questions[task_id] for task_id in batch}
            body = request_body(api_model, state, batch_questions)
            requests.append(PlannedRequest(group_index=group.index, task_ids=batch, body=body))
    return PreparedObservation(groups=tuple(prepared), requests=tuple(requests))
