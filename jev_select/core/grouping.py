"""Splitting the patch into groups and planning the System One requests (spec §8.4, §8.5).

Pure: the patch, commits, evidence and hints come in; groups, hashes and exact request bodies go
out. Sizes are UTF-8 byte lengths throughout, because the limits are limits on request bytes and
the byte ranges are recorded in the report.

Splitting is lossless: group texts concatenate to the patch and their byte ranges tile it, so a
reader can always tell which part of the change a score belongs to.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .. import contracts as c
from ..errors import CodedError
from .jsonutil import code_unit_key, compact_json
from .models import Commits, DiffGroup, PlannedRequest, PreparedGroup, PreparedObservation
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

_FILE_HEADER = "diff --git "
_HUNK_HEADER = re.compile(r"@@ -([0-9]+)(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@.*", re.DOTALL)
_NO_NEWLINE_MARKER = "\\ No newline at end of file"
_DEV_NULL = "/dev/null"
_OLD_PREFIX = "a/"
_NEW_PREFIX = "b/"
# Extended header lines that carry nothing grouping needs; only their presence is checked.
_OPAQUE_HEADER_PREFIXES = (
    "old mode ",
    "new mode ",
    "new file mode ",
    "deleted file mode ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
    "literal ",
    "delta ",
    "Binary files ",
)
_BINARY_PATCH_LINE = "GIT binary patch"
_C_ESCAPES = {
    "a": 0x07,
    "b": 0x08,
    "t": 0x09,
    "n": 0x0A,
    "v": 0x0B,
    "f": 0x0C,
    "r": 0x0D,
    "\\": 0x5C,
    '"': 0x22,
}
_OCTAL_DIGITS = "01234567"
_QUOTE = '"'
_WORKDIR_KEY = "workdir:"
_TREE_KEY = "tree:"
_ROOT = "."


class GroupingError(CodedError):
    """The patch cannot be grouped; ``code`` is one of ``contracts.GROUPING_ERRORS`` only."""


def _unrepresentable() -> GroupingError:
    return GroupingError(c.REASON_UNREPRESENTABLE_CHANGE)


@attrs.frozen
class PatchFile:
    """One ``diff --git`` section of the patch; offsets are UTF-8 byte offsets into the patch."""

    start: int
    end: int
    old_path: str
    new_path: str
    line_starts: tuple[int, ...]  # every line of the section, the header line first
    hunk_starts: tuple[int, ...]  # the lines among them that are hunk headers

    @property
    def paths(self) -> tuple[str, ...]:
        if self.old_path == self.new_path:
            return (self.old_path,)
        return (self.old_path, self.new_path)

    @property
    def size(self) -> int:
        return self.end - self.start


# --------------------------------------------------------------------------------------------
# Strict parse (§8.4 step 2)
# --------------------------------------------------------------------------------------------


def _read_quoted(text: str, start: int) -> tuple[str, int]:
    """Decode the C-quoted token opening at ``text[start]``; returns it and the index after it."""
    if text[start : start + 1] != '"':
        raise _unrepresentable()
    raw = bytearray()
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == '"':
            try:
                return raw.decode("utf-8"), index + 1
            except UnicodeDecodeError:
                raise _unrepresentable() from None
        if char != "\\":
            raw += char.encode("utf-8")
            index += 1
            continue
        escaped = text[index + 1 : index + 2]
        if escaped in _C_ESCAPES:
            raw.append(_C_ESCAPES[escaped])
            index += 2
            continue
        digits = ""
        while len(digits) < 3:
            following = text[index + 1 + len(digits) : index + 2 + len(digits)]
            if not following or following not in _OCTAL_DIGITS:
                break
            digits += following
        if not digits or int(digits, 8) > 0xFF:
            raise _unrepresentable()
        raw.append(int(digits, 8))
        index += 1 + len(digits)
    raise _unrepresentable()


def _decode_path(text: str) -> str:
    """A path written either C-quoted (the whole token) or plain."""
    if not text.startswith('"'):
        return text
    value, end = _read_quoted(text, 0)
    if end != len(text):
        raise _unrepresentable()
    return value


def _strip_prefix(path: str, prefix: str) -> str | None:
    return path[len(prefix) :] if path.startswith(prefix) else None


def _header_candidates(rest: str) -> list[tuple[str, str]]:
    """Every reading of ``a/<old> b/<new>`` that the header text allows."""
    sides: list[tuple[str, str]] = []
    if rest.startswith('"'):
        left, end = _read_quoted(rest, 0)
        if rest[end : end + 1] != " ":
            raise _unrepresentable()
        sides.append((left, _decode_path(rest[end + 1 :])))
    elif rest.endswith('"'):
        for index in range(len(rest) - 1):
            if rest.startswith(' "', index):
                try:
                    sides.append((rest[:index], _decode_path(rest[index + 1 :])))
                except GroupingError:
                    continue
    else:
        index = rest.find(" " + _NEW_PREFIX)
        while index >= 0:
            sides.append((rest[:index], rest[index + 1 :]))
            index = rest.find(" " + _NEW_PREFIX, index + 1)
    candidates: list[tuple[str, str]] = []
    for left, right in sides:
        old = _strip_prefix(left, _OLD_PREFIX)
        new = _strip_prefix(right, _NEW_PREFIX)
        if old and new:
            candidates.append((old, new))
    return candidates


def _choose_paths(
    header: str,
    old_hints: list[str],
    new_hints: list[str],
) -> tuple[str, str]:
    """Resolve the header paths; rename/copy and ---/+++ lines settle ambiguous plain headers."""
    candidates = _header_candidates(header)
    quoted = header.startswith(_QUOTE) or header.endswith(_QUOTE)
    if quoted and len(candidates) == 1:
        # The quotes already fix where the old path ends, so nothing else has to agree (§8.4).
        return candidates[0]
    consistent = [
        (old, new)
        for old, new in candidates
        if all(old == hint for hint in old_hints) and all(new == hint for hint in new_hints)
    ]
    equal = [(old, new) for old, new in consistent if old == new]
    if equal:
        return equal[0]
    if consistent and (old_hints or new_hints):
        return consistent[0]
    raise _unrepresentable()


def _marker_path(text: str, prefixes: tuple[str, ...]) -> str | None:
    """The path of a ``---``/``+++`` line; None for /dev/null."""
    if text.endswith("\t"):
        text = text[:-1]
    if text == _DEV_NULL:
        return None
    decoded = _decode_path(text)
    for prefix in prefixes:
        path = _strip_prefix(decoded, prefix)
        if path:
            return path
    raise _unrepresentable()


def _split_lines(data: bytes) -> list[tuple[int, str]]:
    """Line start offsets and texts (without the newline); only ``\\n`` ends a line."""
    lines: list[tuple[int, str]] = []
    position = 0
    while position < len(data):
        newline = data.find(b"\n", position)
        stop = len(data) if newline < 0 else newline
        try:
            lines.append((position, data[position:stop].decode("utf-8")))
        except UnicodeDecodeError:
            raise _unrepresentable() from None
        position = stop + 1
    return lines


def _encode(patch: str) -> bytes:
    try:
        return patch.encode("utf-8")
    except UnicodeEncodeError:
        raise _unrepresentable() from None


class _SectionParser:
    """Reads one file section line by line, in the order git writes it."""

    def __init__(self, start: int, header_rest: str) -> None:
        self.start = start
        self.header_rest = header_rest
        self.line_starts: list[int] = [start]
        self.hunk_starts: list[int] = []
        self.old_hints: list[str] = []
        self.new_hints: list[str] = []
        self.saw_minus = False
        self.in_hunks = False
        self.old_left = 0
        self.new_left = 0
        self.after_body_line = False

    def feed(self, offset: int, line: str) -> None:
        self.line_starts.append(offset)
        if self.old_left or self.new_left:
            self._body(line)
        elif self.in_hunks:
            self._between_hunks(offset, line)
        elif self.saw_minus:
            if not line.startswith("+++ "):
                raise _unrepresentable()
            new_path = _marker_path(line[4:], (_NEW_PREFIX, _OLD_PREFIX))
            if new_path is not None:
                self.new_hints.append(new_path)
            self.in_hunks = True
        else:
            self._extended_header(line)

    def _extended_header(self, line: str) -> None:
        if line.startswith("--- "):
            old_path = _marker_path(line[4:], (_OLD_PREFIX, _NEW_PREFIX))
            if old_path is not None:
                self.old_hints.append(old_path)
            self.saw_minus = True
        elif line.startswith(("rename from ", "copy from ")):
            self.old_hints.append(_decode_path(line.split(" ", 2)[2]))
        elif line.startswith(("rename to ", "copy to ")):
            self.new_hints.append(_decode_path(line.split(" ", 2)[2]))
        elif not (line == _BINARY_PATCH_LINE or line.startswith(_OPAQUE_HEADER_PREFIXES)):
            raise _unrepresentable()

    def _between_hunks(self, offset: int, line: str) -> None:
        if line == _NO_NEWLINE_MARKER and self.after_body_line:
            self.after_body_line = False
            return
        match = _HUNK_HEADER.fullmatch(line)
        if match is None:
            raise _unrepresentable()
        old_count, new_count = match.group(2), match.group(4)
        self.old_left = 1 if old_count is None else int(old_count)
        self.new_left = 1 if new_count is None else int(new_count)
        self.hunk_starts.append(offset)
        self.after_body_line = False

    def _body(self, line: str) -> None:
        if line == _NO_NEWLINE_MARKER and self.after_body_line:
            self.after_body_line = False
            return
        kind = line[:1]
        if kind == " " and self.old_left and self.new_left:
            self.old_left -= 1
            self.new_left -= 1
        elif kind == "-" and self.old_left:
            self.old_left -= 1
        elif kind == "+" and self.new_left:
            self.new_left -= 1
        else:
            raise _unrepresentable()
        self.after_body_line = True

    def finish(self, end: int) -> PatchFile:
        if self.old_left or self.new_left or (self.saw_minus and not self.in_hunks):
            raise _unrepresentable()
        old_path, new_path = _choose_paths(self.header_rest, self.old_hints, self.new_hints)
        return PatchFile(
            start=self.start,
            end=end,
            old_path=old_path,
            new_path=new_path,
            line_starts=tuple(self.line_starts),
            hunk_starts=tuple(self.hunk_starts),
        )


def _parse_bytes(data: bytes) -> tuple[PatchFile, ...]:
    files: list[PatchFile] = []
    section: _SectionParser | None = None
    for offset, line in _split_lines(data):
        if line.startswith(_FILE_HEADER):
            if section is not None:
                files.append(section.finish(offset))
            section = _SectionParser(offset, line[len(_FILE_HEADER) :])
        elif section is None:
            raise _unrepresentable()
        else:
            section.feed(offset, line)
    if section is not None:
        files.append(section.finish(len(data)))
    return tuple(files)


def parse_patch(patch: str) -> tuple[PatchFile, ...]:
    """Parse a ``git diff --patch`` text strictly; the empty patch has no sections.

    Any line outside the allowed set, a hunk whose body does not match its counts, or a header
    whose paths cannot be resolved raises ``GroupingError`` with the unrepresentable-change code.
    """
    return _parse_bytes(_encode(patch))


# --------------------------------------------------------------------------------------------
# Group keys (§8.4 step 3)
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
    """The grouping key of a file, decided by its first path (§8.4 step 3)."""
    return _key_of(paths[0], normalise_hints(hints))


# --------------------------------------------------------------------------------------------
# Splitting (§8.4 steps 1, 4, 5)
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
    data = _encode(patch)
    return _to_groups(data, _split_files(data, _parse_bytes(data), budget, hints))


# --------------------------------------------------------------------------------------------
# Sizing loop and batching (§8.4, §8.5)
# --------------------------------------------------------------------------------------------


def _json_size(value: Any) -> int:
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
    evidence_by_task: Mapping[str, Mapping[str, Any]],
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

    data = _encode(patch)
    files: tuple[PatchFile, ...] | None = None
    accepted: list[tuple[DiffGroup, dict[str, Any], bytes]] | None = None
    for _attempt in range(c.MAX_SIZING_ATTEMPTS):
        if budget < c.BUDGET_FLOOR_BYTES:
            break
        if not data:
            groups = _empty_group()
        else:
            if files is None:
                files = _parse_bytes(data)
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
