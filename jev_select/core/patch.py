"""The strict unified-diff parser (docs/reference.md, "Grouping" step 2): the patch as files and
byte ranges.

Pure. Anything the parser does not understand is refused as ``unrepresentable-diff`` rather than
guessed, because a misread diff would be sent and scored as something it is not.
"""

from __future__ import annotations

import re

import attrs

from .. import contracts as c
from ..errors import CodedError

__all__ = ["GroupingError", "PatchFile", "encode_patch", "parse_patch", "parse_patch_bytes"]

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
# Strict parse (docs/reference.md, "Grouping" step 2)
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
        # The quotes already fix where the old path ends, so nothing else has to agree
        # (docs/reference.md, "Grouping").
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


def encode_patch(patch: str) -> bytes:
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


def parse_patch_bytes(data: bytes) -> tuple[PatchFile, ...]:
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
    return parse_patch_bytes(encode_patch(patch))
