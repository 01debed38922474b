"""Patch parsing, grouping, the sizing loop and batching (docs/reference.md, "Grouping",
"Batching, concurrency and deadlines")."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import subprocess
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any, Protocol

import attrs
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.gitrepo import Change, GitRepo, executable

from jev_select import contracts as c
from jev_select.core import grouping
from jev_select.core.grouping import (
    GroupingError,
    group_key,
    normalise_hints,
    parse_patch,
    prepare_observation,
    split_diff,
)
from jev_select.core.jsonutil import code_unit_key, compact_json, strict_loads
from jev_select.core.models import Commits, DiffGroup
from jev_select.core.questions import build_questions, build_state, description_only_evidence

BASE = "1" * 40
HEAD = "2" * 40
TESTED = "3" * 40
MERGE_BASE = "4" * 40
COMMITS = Commits(base_sha=BASE, head_sha=HEAD, tested_sha=TESTED, metadata_sha=BASE)
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

SCHEMA = json.loads(
    (files("jev_select") / "schemas" / c.SYSTEM_ONE_REQUEST_SCHEMA_FILE).read_text("utf-8")
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

# --------------------------------------------------------------------------------------------
# Writing unified diffs the way git does
# --------------------------------------------------------------------------------------------

_C_ESCAPES = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r"}


def quote(token: str) -> str:
    """Git's C quoting of a header token (core.quotePath on)."""
    needs = any(ch in '"\\' or ord(ch) < 0x20 or ord(ch) >= 0x7F for ch in token)
    if not needs:
        return token
    parts: list[str] = []
    for byte in token.encode("utf-8"):
        if byte in (0x22, 0x5C):
            parts.append("\\" + chr(byte))
        elif byte in _C_ESCAPES:
            parts.append("\\" + _C_ESCAPES[byte])
        elif byte < 0x20 or byte >= 0x7F:
            parts.append(f"\\{byte:03o}")
        else:
            parts.append(chr(byte))
    return '"' + "".join(parts) + '"'


def marker(prefix: str, path: str | None) -> str:
    if path is None:
        return "/dev/null"
    token = quote(prefix + path)
    return token + ("\t" if " " in token and not token.startswith('"') else "")


NO_NEWLINE = "\\ No newline at end of file\n"


@attrs.frozen
class Hunk:
    lines: tuple[str, ...]  # each starts with " ", "+" or "-"
    no_newline: bool = False
    old_no_newline: bool = False  # the old side ends without a newline at its last "-" line

    def text(self, old_start: int, new_start: int) -> str:
        old = sum(1 for line in self.lines if line[0] in " -")
        new = sum(1 for line in self.lines if line[0] in " +")
        last_removed = max(
            (index for index, line in enumerate(self.lines) if line[0] == "-"), default=-1
        )
        body = ""
        for index, line in enumerate(self.lines):
            body += line + "\n"
            if self.old_no_newline and index == last_removed:
                body += NO_NEWLINE
        if self.no_newline and not body.endswith(NO_NEWLINE):
            body += NO_NEWLINE
        return f"@@ -{old_start},{old} +{new_start},{new} @@ def f():\n" + body


@attrs.frozen
class FileDiff:
    kind: str  # modify, add, delete, rename, copy, mode, mode-edit, empty-add, empty-delete
    old: str
    new: str
    hunks: tuple[Hunk, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.old,) if self.old == self.new else (self.old, self.new)

    def text(self) -> str:
        head = f"diff --git {quote('a/' + self.old)} {quote('b/' + self.new)}\n"
        index = f"index {'5' * 40}..{'6' * 40}"
        minus: str | None = self.old
        plus: str | None = self.new
        if self.kind == "add":
            head += f"new file mode 100644\n{index}\n"
            minus = None
        elif self.kind == "empty-add":
            return head + f"new file mode 100644\nindex {'0' * 40}..{'6' * 40}\n"
        elif self.kind == "delete":
            head += f"deleted file mode 100644\n{index}\n"
            plus = None
        elif self.kind == "empty-delete":
            return head + f"deleted file mode 100644\nindex {'6' * 40}..{'0' * 40}\n"
        elif self.kind == "mode":
            return head + "old mode 100644\nnew mode 100755\n"
        elif self.kind == "mode-edit":
            head += f"old mode 100644\nnew mode 100755\n{index}\n"
        elif self.kind in ("rename", "copy"):
            verb = "rename" if self.kind == "rename" else "copy"
            head += "similarity index 100%\n" if not self.hunks else "similarity index 91%\n"
            head += f"{verb} from {quote(self.old)}\n{verb} to {quote(self.new)}\n"
            if not self.hunks:
                return head
            head += f"{index} 100644\n"
        else:
            head += f"{index} 100644\n"
        head += f"--- {marker('a/', minus)}\n+++ {marker('b/', plus)}\n"
        position = 1
        for hunk in self.hunks:
            head += hunk.text(position, position)
            position += len(hunk.lines) + 5
        return head


class Section(Protocol):
    """One ``diff --git`` section with the paths it is known to name."""

    @property
    def paths(self) -> tuple[str, ...]: ...

    def text(self) -> str: ...


@attrs.frozen
class GitSection:
    """A section cut from real git output; ``paths`` come from the matching raw record."""

    body: str
    paths: tuple[str, ...]

    def text(self) -> str:
        return self.body


def modified(path: str, *hunks: Sequence[str]) -> FileDiff:
    return FileDiff("modify", path, path, tuple(Hunk(tuple(lines)) for lines in hunks))


def join(diffs: Sequence[FileDiff]) -> str:
    return "".join(diff.text() for diff in diffs)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


# --------------------------------------------------------------------------------------------
# Checks every split must satisfy
# --------------------------------------------------------------------------------------------


def expected_context(data: bytes, start: int) -> bytes:
    """Independent reading of the continuation context of a piece starting at ``start``."""
    lines = data[:start].split(b"\n")[:-1]
    section = max(i for i, line in enumerate(lines) if line.startswith(b"diff --git "))
    context = lines[section] + b"\n"
    hunks = [line for line in lines[section + 1 :] if line.startswith(b"@@ -")]
    if hunks:
        context += hunks[-1] + b"\n"
    return context


def check_split(
    patch: str, diffs: Sequence[Section], groups: Sequence[DiffGroup], budget: int
) -> None:
    data = patch.encode("utf-8")
    assert [group.index for group in groups] == list(range(len(groups)))
    assert groups[0].start_byte == 0
    assert groups[-1].end_byte == len(data)
    for before, after in itertools.pairwise(groups):
        assert before.end_byte == after.start_byte
    assert "".join(group.diff for group in groups) == patch
    ranges = []
    position = 0
    for diff in diffs:
        size = utf8_len(diff.text())
        ranges.append((position, position + size, diff.paths))
        position += size
    file_starts = {start for start, _, _ in ranges}
    for group in groups:
        assert group.start_byte < group.end_byte
        assert data[group.start_byte : group.end_byte] == group.diff.encode("utf-8")
        assert utf8_len(group.diff) + utf8_len(group.context) <= budget
        overlapping = [
            path
            for start, end, paths in ranges
            if start < group.end_byte and group.start_byte < end
            for path in paths
        ]
        assert group.paths == tuple(dict.fromkeys(overlapping))
        if group.start_byte in file_starts:
            assert group.context == ""
        else:
            assert group.context.encode("utf-8") == expected_context(data, group.start_byte)
    every_path = {path for diff in diffs for path in diff.paths}
    assert {path for group in groups for path in group.paths} == every_path


Slice = tuple[int, int, str, tuple[str, ...]]  # start, end, context, paths


def reference_split(
    diffs: Sequence[Section], budget: int, hints: Sequence[str]
) -> list[Slice] | str:
    """A second, line-based reading of docs/reference.md, "Grouping" steps 4 and 5, for comparison
    with ``split_diff``.

    Files come from the generator or git itself, not from the parser; the result is the groups as
    (start, end, context, paths) or the error code.
    """
    if not diffs:
        return [(0, 0, "", ())]  # step 1: the empty patch is one empty group
    texts = [diff.text().encode("utf-8") for diff in diffs]
    starts = list(itertools.accumulate((len(text) for text in texts), initial=0))
    keys = [group_key(diff.paths, hints) for diff in diffs]
    result: list[Slice] = []
    first = 0
    while first < len(diffs):
        if len(texts[first]) > budget:
            # Only LF ends a patch line; a CR is content (bytes.splitlines would also cut at CR).
            lines = texts[first].split(b"\n")
            lines = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
            position = starts[first]
            line = 0
            while line < len(lines):
                context = b""
                if line:
                    earlier = [lines[k] for k in range(1, line) if lines[k].startswith(b"@@ -")]
                    context = lines[0] + (earlier[-1] if earlier else b"")
                stop, taken = line, 0
                while stop < len(lines) and taken + len(lines[stop]) <= budget - len(context):
                    taken += len(lines[stop])
                    stop += 1
                if stop == line:
                    return c.REASON_CONTEXT_TOO_LARGE
                crossed = [k for k in range(line + 1, stop) if lines[k].startswith(b"@@ -")]
                if stop < len(lines) and crossed:
                    stop = crossed[-1]
                size = len(b"".join(lines[line:stop]))
                result.append((position, position + size, context.decode(), diffs[first].paths))
                position += size
                line = stop
            first += 1
            continue
        last = first
        while last + 1 < len(diffs) and starts[last + 2] - starts[first] <= budget:
            last += 1
        if last + 1 < len(diffs):
            differing = [k for k in range(first + 1, last + 1) if keys[k] != keys[first]]
            if differing:
                last = differing[0] - 1
        paths = tuple(
            dict.fromkeys(path for diff in diffs[first : last + 1] for path in diff.paths)
        )
        result.append((starts[first], starts[last + 1], "", paths))
        first = last + 1
    return result


def split_or_code(patch: str, budget: int, hints: Sequence[str]) -> list[Slice] | str:
    try:
        groups = split_diff(patch, budget, hints)
    except GroupingError as error:
        return error.code
    return [(group.start_byte, group.end_byte, group.context, group.paths) for group in groups]


# --------------------------------------------------------------------------------------------
# Generated patches
# --------------------------------------------------------------------------------------------

_SEGMENT = st.one_of(
    st.text(alphabet='abXY09-_. \t"\\éß日', min_size=1, max_size=6).filter(
        lambda segment: segment not in (".", "..")
    ),
    # segments that put " b/" (or "a/") inside a path, so plain headers become ambiguous
    st.sampled_from(["x b", "b", " b", "a b", "a", "b c"]),
)
_PATH = st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join)
_LONG_LINE_TEXT = st.text(alphabet='abc xyz(){};=\t"éß日', min_size=40, max_size=80)
# Content that looks like patch syntax once its marker column is stripped.
_PATCH_LOOKALIKE = st.sampled_from(
    [
        "diff --git a/x b/x",
        "diff --git a/src/a.py b/src/a.py",
        "--- a/x",
        "+++ b/x",
        "@@ -1 +1 @@",
        "@@ -1,3 +1,4 @@ def f():",
        "\\ No newline at end of file",
        "index 0000000..1111111 100644",
        "rename from x",
        "GIT binary patch",
        "",
    ]
)
_LINE_TEXT = st.one_of(
    st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\n\x00"),
        max_size=80,
    ),
    _LONG_LINE_TEXT,
    _PATCH_LOOKALIKE,
    # CRLF files keep their carriage returns inside the lines
    st.text(alphabet="abc é\t", max_size=20).map(lambda text: text + "\r"),
)


@st.composite
def hunks(draw: st.DrawFn, kind: str = " +-", big: bool = False) -> tuple[Hunk, ...]:
    count = draw(st.integers(1, 3))
    text = _LONG_LINE_TEXT if big else _LINE_TEXT
    result = []
    for position in range(count):
        lines = draw(
            st.lists(
                st.tuples(st.sampled_from(kind), text).map("".join),
                min_size=30 if big else 1,
                max_size=50 if big else 25,
            )
        )
        last = position == count - 1
        result.append(
            Hunk(
                tuple(lines),
                no_newline=last and draw(st.booleans()),
                old_no_newline=last and "-" in kind and draw(st.booleans()),
            )
        )
    return tuple(result)


@st.composite
def long_line_hunk(draw: st.DrawFn) -> tuple[Hunk, ...]:
    """One very long line, sometimes longer than any budget, between short ones."""
    width = draw(st.integers(500, 5000))
    long_line = draw(st.sampled_from("+- ")) + draw(st.sampled_from("xé日")) * width
    before = draw(st.lists(st.sampled_from([" ctx", "-old", "+new"]), max_size=3))
    return (Hunk((*before, long_line, " tail")),)


@st.composite
def file_diff(draw: st.DrawFn, number: int) -> FileDiff:
    kind = draw(
        st.sampled_from(
            [
                "modify",
                "modify",
                "add",
                "delete",
                "rename",
                "copy",
                "mode",
                "mode-edit",
                "empty-add",
                "empty-delete",
                "long-line",
            ]
        )
    )
    old = draw(_PATH) + f"~{number}"
    if kind in ("rename", "copy"):
        new = draw(_PATH) + f"~{kind[0]}{number}"
        body = draw(st.one_of(st.just(()), hunks()))
        return FileDiff(kind, old, new, body)
    if kind == "add":
        return FileDiff(kind, old, old, draw(hunks("+"))[:1])
    if kind == "delete":
        return FileDiff(kind, old, old, draw(hunks("-"))[:1])
    if kind in ("mode", "empty-add", "empty-delete"):
        return FileDiff(kind, old, old)
    if kind == "long-line":
        return FileDiff("modify", old, old, draw(long_line_hunk()))
    if kind == "mode-edit":
        return FileDiff(kind, old, old, draw(hunks()))
    # about half of the edited files outgrow the budget and must be cut into pieces
    return FileDiff(kind, old, old, draw(hunks(big=draw(st.booleans()))))


@st.composite
def patches(draw: st.DrawFn) -> list[FileDiff]:
    count = draw(st.integers(1, 6))
    return [draw(file_diff(number)) for number in range(count)]


def hints_for(diffs: Sequence[FileDiff]) -> st.SearchStrategy[list[str]]:
    candidates = [diff.old.split("/")[0] for diff in diffs] + [".", "./", "../x", "/abs", "x/"]
    return st.lists(st.sampled_from(candidates), max_size=3)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), diffs=patches(), budget=st.integers(1024, 4096))
def test_generated_patches_split_losslessly(
    data: st.DataObject, diffs: list[FileDiff], budget: int
) -> None:
    patch = join(diffs)
    parsed = parse_patch(patch)
    assert [(entry.old_path, entry.new_path) for entry in parsed] == [
        (diff.old, diff.new) for diff in diffs
    ]
    assert [entry.paths for entry in parsed] == [diff.paths for diff in diffs]
    hints = data.draw(hints_for(diffs))
    expected = reference_split(diffs, budget, hints)
    assert split_or_code(patch, budget, hints) == expected
    if expected != c.REASON_CONTEXT_TOO_LARGE:
        check_split(patch, diffs, split_diff(patch, budget, hints), budget)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(diffs=patches(), description=st.text(min_size=1, max_size=200))
def test_generated_requests_validate_and_hash(diffs: list[FileDiff], description: str) -> None:
    patch = join(diffs)
    evidence = {"unit": description_only_evidence(description), "lint": rich_evidence()}
    prepared = prepare_observation(
        patch=patch, commits=COMMITS, evidence_by_task=evidence, hints=["."], api_model="jev-x"
    )
    check_split(patch, diffs, [entry.group for entry in prepared.groups], c.PREFERRED_GROUP_BYTES)
    check_requests(prepared.requests, prepared.groups, ["lint", "unit"])


# --------------------------------------------------------------------------------------------
# Request checks shared by several tests
# --------------------------------------------------------------------------------------------


def rich_evidence() -> dict[str, Any]:
    return {
        "description": "Lints the web client.",
        "jobs": [
            {
                "id": "lint",
                "workflow": ".github/workflows/ci.yml",
                "steps": [{"run": "npm run lint", "working_directory": "web"}],
            }
        ],
        "actions": [],
        "contextFiles": [],
        "packageScripts": [],
        "incomplete": True,
    }


def check_requests(requests: Sequence[Any], groups: Sequence[Any], task_ids: list[str]) -> None:
    by_group: dict[int, list[str]] = {}
    previous_group = 0
    for request in requests:
        assert request.group_index >= previous_group
        previous_group = request.group_index
        parsed = strict_loads(request.body)
        VALIDATOR.validate(parsed)
        assert compact_json(parsed).encode("utf-8") == request.body
        assert list(parsed) == ["model", "state", "questions"]
        assert tuple(parsed["questions"]) == request.task_ids
        prepared = groups[request.group_index]
        state_bytes = compact_json(parsed["state"]).encode("utf-8")
        assert hashlib.sha256(state_bytes).hexdigest() == prepared.state_hash
        expected_state = build_state(
            base_sha=parsed["state"]["base_sha"],
            head_sha=HEAD,
            tested_sha=TESTED,
            group=prepared.group,
            total=len(groups),
        )
        assert compact_json(expected_state).encode("utf-8") == state_bytes
        assert hashlib.sha256(prepared.group.diff.encode("utf-8")).hexdigest() == prepared.diff_hash
        questions_bytes = compact_json(parsed["questions"]).encode("utf-8")
        assert len(state_bytes) + len(questions_bytes) <= c.MAX_REQUEST_BYTES
        by_group.setdefault(request.group_index, []).extend(request.task_ids)
    assert sorted(by_group) == list(range(len(groups)))
    for asked in by_group.values():
        assert asked == sorted(task_ids, key=code_unit_key)


# --------------------------------------------------------------------------------------------
# Real git output
# --------------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")} | {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "LC_ALL": "C",
    }
    result = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, check=True
    )
    return result.stdout.decode("utf-8")


_GIT_SEGMENT = st.sampled_from(
    ["src", "a b", "x b", "b", "t\tab", "ü", "日本", 'q"t', "back\\s", "sp ", "-dash", "d.d"]
)
_GIT_PATH = st.lists(_GIT_SEGMENT, min_size=1, max_size=3).map("/".join)
_GIT_LINE = st.one_of(
    st.text(alphabet="abc é\t\r", max_size=30),
    _PATCH_LOOKALIKE,
    st.sampled_from(["x", "é", "日"]).map(lambda char: char * 1500),
)


@st.composite
def file_text(draw: st.DrawFn) -> str:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = "".join(line + newline for line in draw(st.lists(_GIT_LINE, max_size=30)))
    return text[:-1] if text and draw(st.booleans()) else text


@st.composite
def edited(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(lines)))
        operation = draw(st.sampled_from(["insert", "delete", "replace"]))
        if operation == "insert" or not lines:
            lines.insert(position, draw(_GIT_LINE) + "\n")
        elif operation == "delete":
            del lines[min(position, len(lines) - 1)]
        else:
            lines[min(position, len(lines) - 1)] = draw(_GIT_LINE) + "\n"
    result = "".join(lines)
    return result[:-1] if result.endswith("\n") and draw(st.booleans()) else result


def without_prefix_clashes(paths: set[str]) -> set[str]:
    """Drop paths that are also directories of other paths: a tree cannot hold both."""
    return {path for path in paths if not any(other.startswith(path + "/") for other in paths)}


@st.composite
def git_histories(draw: st.DrawFn) -> tuple[dict[str, str], dict[str | bytes, Change]]:
    """A base tree and the changes of the head: edits, deletions, renames, copies, modes."""
    names = without_prefix_clashes(set(draw(st.lists(_GIT_PATH, min_size=1, max_size=6))))
    base = {name: draw(file_text()) for name in sorted(names)}
    changes: dict[str | bytes, Change] = {}
    for name, text in base.items():
        action = draw(
            st.sampled_from(["keep", "edit", "delete", "rename", "copy", "mode", "mode-edit"])
        )
        if action == "edit":
            changes[name] = draw(edited(text))
        elif action == "delete":
            changes[name] = None
        elif action == "rename":
            changes[name] = None
            moved = name + draw(st.sampled_from([" b/moved", "~r", ".ü"]))
            changes[moved] = text if draw(st.booleans()) else draw(edited(text))
        elif action == "copy":
            changes[name + "~copy"] = text
        elif action in ("mode", "mode-edit"):
            changes[name] = executable(text if action == "mode" else draw(edited(text)))
    for added in draw(st.lists(_GIT_PATH, max_size=2)):
        changes[added + "~new"] = draw(st.one_of(st.just(""), file_text()))
    allowed = without_prefix_clashes(set(base) | {str(name) for name in changes})
    return base, {name: change for name, change in changes.items() if name in allowed}


def raw_paths(raw: bytes) -> list[tuple[str, ...]]:
    """The paths of each ``git diff --raw -z`` record, both sides for renames and copies."""
    fields = raw.split(b"\0")[:-1]
    records: list[tuple[str, ...]] = []
    index = 0
    while index < len(fields):
        status = fields[index].split(b" ")[-1]
        count = 2 if status[:1] in (b"R", b"C") else 1
        paths = fields[index + 1 : index + 1 + count]
        records.append(tuple(dict.fromkeys(path.decode("utf-8") for path in paths)))
        index += 1 + count
    return records


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(history=git_histories())
def test_real_git_diffs_parse_and_split_like_the_reference(
    tmp_path_factory: pytest.TempPathFactory,
    history: tuple[dict[str, str], dict[str | bytes, Change]],
) -> None:
    base_files, changes = history
    repo = GitRepo.init(tmp_path_factory.mktemp("history"))
    tree: dict[str | bytes, Change] = {name: text for name, text in base_files.items()}
    base = repo.commit(tree)
    head = repo.commit(changes, parents=[base])
    common = ["--full-index", "--no-ext-diff", "--no-textconv", base, head, "--"]
    # the collector's rename detection, then copies as well
    for detection in (["-M"], ["-M", "-C", "--find-copies-harder"]):
        patch = repo.git("diff", "--patch", "--no-color", *detection, *common).decode("utf-8")
        records = raw_paths(repo.git("diff", "--raw", "-z", *detection, *common))
        assert [entry.paths for entry in parse_patch(patch)] == records
        bodies = re.split(r"(?m)^(?=diff --git )", patch)[1:] if patch else []
        sections = [GitSection(body, paths) for body, paths in zip(bodies, records, strict=True)]
        assert "".join(bodies) == patch
        first_segments = [name.split("/")[0] for name in base_files]
        for budget in (1024, 3000, c.PREFERRED_GROUP_BYTES):
            for hints in ([], ["."], [".", *first_segments]):
                expected = reference_split(sections, budget, hints)
                assert split_or_code(patch, budget, hints) == expected
                if expected != c.REASON_CONTEXT_TOO_LARGE and patch:
                    check_split(patch, sections, split_diff(patch, budget, hints), budget)


@pytest.mark.posix
def test_real_git_patch_with_awkward_names(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    files_before = {
        "src/a.py": "a\nb\nc\n",
        "sp ace/a b.txt": "x\n",
        "t\tx": "tab\n",
        'q"uote': "q\n",
        "über.md": "ü\n",
        "old.txt": "keep this line\nand this one\n",
        "big.txt": "".join(f"{n}\n" for n in range(1, 101)),
        "nonl.txt": "nonl",
    }
    for name, content in files_before.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(content, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "src/a.py").write_text("a\nB\nc\nd\n", encoding="utf-8")
    (repo / "sp ace/a b").mkdir()
    git(repo, "mv", "sp ace/a b.txt", "sp ace/a b/c.txt")
    (repo / "t\tx").write_text("tab\ntab2\n", encoding="utf-8")
    git(repo, "rm", "-q", 'q"uote')
    (repo / "über.md").write_text("ü\nü2\n", encoding="utf-8")
    git(repo, "mv", "old.txt", "new ü.txt")
    (repo / "src/a.py").chmod(0o755)
    big = "".join(f"{n}\n".replace("5", "five") for n in range(1, 101))
    (repo / "big.txt").write_text(big, encoding="utf-8")
    (repo / "nonl.txt").write_text("nonl2", encoding="utf-8")
    (repo / "empty.txt").write_text("", encoding="utf-8")
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--patch", "--full-index", "-M", "--no-color")
    assert '"a/q\\"uote"' in patch
    assert "\\303\\274" in patch

    parsed = parse_patch(patch)
    assert [entry.paths for entry in parsed] == [
        ("big.txt",),
        ("empty.txt",),
        ("old.txt", "new ü.txt"),
        ("nonl.txt",),
        ('q"uote',),
        ("sp ace/a b.txt", "sp ace/a b/c.txt"),
        ("src/a.py",),
        ("t\tx",),
        ("über.md",),
    ]
    assert len(parsed[0].hunk_starts) == 8
    for budget in (300, 700, 2000, 20480):
        groups = split_diff(patch, budget, ["src"])
        assert "".join(group.diff for group in groups) == patch
        for group in groups:
            assert utf8_len(group.diff) + utf8_len(group.context) <= budget
            if group.context:
                assert group.context.startswith("diff --git a/big.txt b/big.txt\n@@ -")


# --------------------------------------------------------------------------------------------
# Strict parse
# --------------------------------------------------------------------------------------------

SIMPLE = modified("src/a.py", [" keep", "-old", "+new"]).text()


@pytest.mark.parametrize(
    "patch",
    [
        "not a diff\n",
        "\n" + SIMPLE,
        SIMPLE.replace("index ", "idx "),
        SIMPLE.replace(" keep\n", "keep\n"),  # body line without a marker
        SIMPLE.replace("+new\n", ""),  # body shorter than the counts
        SIMPLE + "+extra\n",  # body longer than the counts
        SIMPLE.replace("--- a/src/a.py\n+++ b/src/a.py\n", ""),  # hunk without ---/+++
        SIMPLE.replace("+++ b/src/a.py\n", ""),
        SIMPLE.replace("@@ -1,2 +1,2 @@", "@@ -1,2 +1,2"),
        SIMPLE.replace("@@ -1,2 +1,2 @@", "@@ -x +1 @@"),
        SIMPLE.replace("--- a/src/a.py", "--- src/a.py"),
        SIMPLE.replace("-old\n", "-old\n\\ Something else\n"),
        SIMPLE + "trailing garbage\n",
        SIMPLE.replace("diff --git a/src/a.py b/src/a.py", 'diff --git "a/src\\q.py" b/src/a.py'),
        SIMPLE.replace("diff --git a/src/a.py b/src/a.py", 'diff --git "a/\\377" "b/\\377"'),
        SIMPLE.replace("diff --git a/src/a.py b/src/a.py", 'diff --git "a/open b/open'),
        SIMPLE.replace("diff --git a/src/a.py b/src/a.py", "diff --git a/x b/y"),
        "diff --git a/one b/two\nold mode 100644\nnew mode 100755\n",
        "diff --git a/only\nold mode 100644\nnew mode 100755\n",
        "diff --cc src/a.py\n",
        "GIT binary patch\n",
    ],
)
def test_parse_errors_are_unrepresentable(patch: str) -> None:
    with pytest.raises(GroupingError) as caught:
        parse_patch(patch)
    assert caught.value.code == c.REASON_UNREPRESENTABLE_CHANGE
    assert str(caught.value) == c.REASON_UNREPRESENTABLE_CHANGE
    with pytest.raises(GroupingError) as caught_split:
        split_diff(patch, 20480, [])
    assert caught_split.value.code == c.REASON_UNREPRESENTABLE_CHANGE


def test_parse_accepts_git_variants() -> None:
    patch = (
        "diff --git a/x b/x\n"
        "index 1..2 100644\n"
        "--- a/x\n"
        "+++ b/x\n"
        "@@ -1 +1 @@\n"  # missing counts mean 1
        "-a\n"
        "\\ No newline at end of file\n"
        "+b\n"
        "\\ No newline at end of file\n"
        "@@ -10,0 +11,2 @@ context text @@ more\n"
        "+c\n"
        "+d\n"
        "diff --git a/bin b/bin\n"
        "index 1..2 100644\n"
        "Binary files a/bin and b/bin differ\n"
        "diff --git a/dis b/dis\n"
        "dissimilarity index 80%\n"
        "index 1..2 100644\n"
        "--- a/dis\n"
        "+++ b/dis\n"
        "diff --git a/src b/dst\n"
        "similarity index 100%\n"
        "copy from src\n"
        "copy to dst\n"
        'diff --git a/tab "b/t\\ta b"\n'
        "similarity index 100%\n"
        "rename from tab\n"
        'rename to "t\\ta b"\n'
        "diff --git a/p b/q b/p b/q\n"
        "deleted file mode 100644\n"
        "index 1..0\n"
        "--- a/p b/q\t\n"
        "+++ /dev/null\n"
        "@@ -1 +0,0 @@\n"
        "-gone\n"
        "diff --git a/m b/n b/m b/n\n"
        "old mode 100644\n"
        "new mode 100755\n"
    )
    parsed = parse_patch(patch)
    assert [entry.paths for entry in parsed] == [
        ("x",),
        ("bin",),
        ("dis",),
        ("src", "dst"),
        ("tab", "t\ta b"),
        ("p b/q",),
        ("m b/n",),
    ]
    assert [len(entry.hunk_starts) for entry in parsed] == [2, 0, 0, 0, 0, 1, 0]
    assert parsed[0].start == 0
    assert parsed[-1].end == utf8_len(patch)
    assert parse_patch("") == ()


def test_rename_header_resolved_by_plus_minus_lines() -> None:
    diff = FileDiff(
        "rename",
        "a b/c",
        "a b/c b/d",
        (Hunk((" x", "-y", "+z")),),
    )
    patch = diff.text()
    assert patch.startswith("diff --git a/a b/c b/a b/c b/d\n")
    assert parse_patch(patch)[0].paths == ("a b/c", "a b/c b/d")
    without_rename_lines = patch.replace("rename from a b/c\nrename to a b/c b/d\n", "")
    assert parse_patch(without_rename_lines)[0].paths == ("a b/c", "a b/c b/d")


def test_quoted_header_is_split_by_its_quotes_alone() -> None:
    # Only a plain header needs rename/copy or ---/+++ lines, or equal sides, to be split: a
    # quoted side fixes the boundary by itself.
    modes = "old mode 100644\nnew mode 100755\n"
    assert parse_patch(f'diff --git "a/t\\tx" "b/u b/v"\n{modes}')[0].paths == ("t\tx", "u b/v")
    assert parse_patch(f'diff --git "a/t\\tx" b/y b/z\n{modes}')[0].paths == ("t\tx", "y b/z")
    assert parse_patch(f'diff --git a/y b/z "b/t\\tx"\n{modes}')[0].paths == ("y b/z", "t\tx")
    # a plain header with unequal sides and nothing to settle the split stays an error
    with pytest.raises(GroupingError):
        parse_patch(f"diff --git a/y b/z\n{modes}")


# --------------------------------------------------------------------------------------------
# Group keys
# --------------------------------------------------------------------------------------------


def test_group_key_rules() -> None:
    assert group_key(["src/app/main.py"], []) == "tree:src"
    assert group_key(["README.md"], []) == "tree:."
    assert group_key(["README.md", "docs/README.md"], []) == "tree:."
    assert group_key(["docs/a.md", "README.md"], []) == "tree:docs"
    assert group_key(["src/app/main.py"], ["src"]) == "workdir:src"
    assert group_key(["src"], ["src"]) == "workdir:src"
    assert group_key(["srcx/a.py"], ["src"]) == "tree:srcx"
    assert group_key(["src/app/main.py"], ["src", "src/app"]) == "workdir:src/app"
    assert group_key(["src/lib/x.py"], ["src", "src/app"]) == "workdir:src"
    assert group_key(["README.md"], ["."]) == "workdir:."
    assert group_key(["src/app/main.py"], ["."]) == "workdir:."
    assert group_key(["src/app/main.py"], [".", "src/app"]) == "workdir:src/app"
    assert group_key(["web/a.ts"], ["./web/"]) == "workdir:web"
    assert group_key(["web/a.ts"], [""]) == "workdir:."
    assert group_key(["web/a.ts"], ["./"]) == "workdir:."
    assert group_key(["web/a.ts"], ["../web", "/web", "web//x", "${{ matrix.dir }}"]) == (
        "tree:web"
    )


def test_hint_normalisation_and_order() -> None:
    hints = ["./b/", "a", "bb", "b", "./b", "..", "x/../y", "/abs", "c\\d", ".", ""]
    # "." is an ordinary one-character hint for ordering: it ties with "a" and "b" and sorts first
    assert normalise_hints(hints) == ("bb", ".", "a", "b")
    assert group_key(["a/x.py"], ["a", "."]) == "workdir:."
    assert group_key(["ab/x.py"], ["ab", "."]) == "workdir:ab"
    assert normalise_hints(["ab/c", "aa/c", "z"]) == ("aa/c", "ab/c", "z")


# --------------------------------------------------------------------------------------------
# Windows, key boundaries and oversized files
# --------------------------------------------------------------------------------------------

EQUAL_FILES = [
    modified(path, [" context", "-before", "+after"])
    for path in ("src/a.txt", "src/b.txt", "doc/c.txt", "doc/d.txt")
]
FILE_SIZE = utf8_len(EQUAL_FILES[0].text())


def spans(groups: Sequence[DiffGroup]) -> list[tuple[str, ...]]:
    return [group.paths for group in groups]


def test_window_ends_at_the_first_key_change() -> None:
    patch = join(EQUAL_FILES)
    assert {utf8_len(diff.text()) for diff in EQUAL_FILES} == {FILE_SIZE}
    groups = split_diff(patch, 3 * FILE_SIZE, [])
    assert spans(groups) == [("src/a.txt", "src/b.txt"), ("doc/c.txt", "doc/d.txt")]
    check_split(patch, EQUAL_FILES, groups, 3 * FILE_SIZE)


def test_window_reaching_the_last_file_takes_every_key() -> None:
    patch = join(EQUAL_FILES)
    groups = split_diff(patch, 4 * FILE_SIZE, [])
    assert spans(groups) == [("src/a.txt", "src/b.txt", "doc/c.txt", "doc/d.txt")]
    groups = split_diff(patch, 3 * FILE_SIZE, ["doc"])
    assert spans(groups) == [("src/a.txt", "src/b.txt"), ("doc/c.txt", "doc/d.txt")]
    late = [EQUAL_FILES[0], EQUAL_FILES[2], EQUAL_FILES[3]]
    assert spans(split_diff(join(late), 2 * FILE_SIZE, [])) == [
        ("src/a.txt",),
        ("doc/c.txt", "doc/d.txt"),
    ]


def test_whole_window_when_keys_agree() -> None:
    patch = join(EQUAL_FILES)
    groups = split_diff(patch, 3 * FILE_SIZE, ["."])
    assert spans(groups) == [("src/a.txt", "src/b.txt", "doc/c.txt"), ("doc/d.txt",)]
    groups = split_diff(patch, 3 * FILE_SIZE - 1, ["."])
    assert spans(groups) == [("src/a.txt", "src/b.txt"), ("doc/c.txt", "doc/d.txt")]
    assert all(group.context == "" for group in groups)


def test_hints_keep_work_directories_together() -> None:
    names = ("web/app/a.ts", "web/lib/b.ts", "web/app/c.ts", "web/app/d.ts", "web/app/e.ts")
    diffs = [modified(path, [" context", "-before", "+after"]) for path in names]
    patch = join(diffs)
    size = utf8_len(diffs[0].text())
    assert spans(split_diff(patch, 3 * size, ["web", "web/app"])) == [
        ("web/app/a.ts",),
        ("web/lib/b.ts",),
        ("web/app/c.ts", "web/app/d.ts", "web/app/e.ts"),
    ]
    assert spans(split_diff(patch, 3 * size, [])) == [names[:3], names[3:]]


def lines(prefix: str, count: int, width: int = 30) -> list[str]:
    return [
        f"{prefix}{prefix * 2}{n:04d}".ljust(width, prefix.strip() or "x") for n in range(count)
    ]


def test_oversized_file_is_cut_before_hunk_headers() -> None:
    hunks = [
        [" ctx-1", *lines("-", 4), *lines("+", 4)],
        [" ctx-2", *lines("-", 4), *lines("+", 4)],
        [" ctx-3", *lines("-", 4), *lines("+", 4)],
    ]
    big = modified("pkg/big.py", *hunks)
    patch = join([EQUAL_FILES[0], big, EQUAL_FILES[3]])
    text = big.text()
    header_line = text.split("\n")[0] + "\n"
    hunk_lines = [line + "\n" for line in text.split("\n") if line.startswith("@@")]
    header_block = text[: text.index("@@")]
    hunk_texts = text[len(header_block) :].split("@@ -")[1:]
    hunk_texts = ["@@ -" + part for part in hunk_texts]
    budget = utf8_len(header_block) + utf8_len(hunk_texts[0]) + 60
    assert utf8_len(big.text()) > budget
    groups = split_diff(patch, budget, [])
    check_split(patch, [EQUAL_FILES[0], big, EQUAL_FILES[3]], groups, budget)
    pieces = [group for group in groups if group.paths == ("pkg/big.py",)]
    # each piece ends before the last hunk header it crossed
    assert [piece.diff for piece in pieces] == [header_block + hunk_texts[0], *hunk_texts[1:]]
    assert pieces[0].context == ""
    for piece in pieces[1:]:
        assert piece.diff.startswith("@@ -")
    assert pieces[-1].context == header_line + hunk_lines[1]


def test_first_piece_is_the_header_block_when_the_first_hunk_does_not_fit() -> None:
    body = [" ctx", *lines("+", 60)]
    big = modified("pkg/long.py", body)
    patch = big.text()
    header_line = patch.split("\n")[0] + "\n"
    hunk_line = next(line for line in patch.split("\n") if line.startswith("@@")) + "\n"
    header_block = patch[: patch.index("@@")]
    groups = split_diff(patch, 400, [])
    check_split(patch, [big], groups, 400)
    assert groups[0].diff == header_block
    assert groups[1].diff.startswith(hunk_line)
    assert groups[1].context == header_line  # no hunk header before this piece
    for piece in groups[2:]:
        assert piece.context == header_line + hunk_line
        assert piece.diff.startswith("+")  # cut at a line boundary inside the hunk
        assert utf8_len(piece.diff) + utf8_len(piece.context) <= 400
    assert len(groups) > 4


def test_hunk_cut_examples_exactly() -> None:
    first = [" a", "-b", "+c"]
    second = [" d", "-e", "+f"]
    big = modified("z.py", first, second)
    patch = big.text()
    header_block = patch[: patch.index("@@")]
    second_hunk = patch[patch.rindex("@@ -") :]
    first_hunk = patch[len(header_block) : len(patch) - len(second_hunk)]
    header_line = patch.split("\n")[0] + "\n"
    first_header = first_hunk.split("\n")[0] + "\n"
    groups = split_diff(patch, utf8_len(patch) - 1, [])
    assert [group.diff for group in groups] == [header_block + first_hunk, second_hunk]
    # the continuation context names the hunk before the piece, not the piece's own header
    assert groups[1].context == header_line + first_header
    assert groups[1].paths == ("z.py",)
    # when only the first hunk header was crossed, the first piece is the header block alone
    groups = split_diff(patch, utf8_len(header_block + first_hunk) + 5, [])
    assert [group.diff for group in groups] == [header_block, first_hunk + second_hunk]
    assert groups[1].context == header_line


def test_a_line_that_cannot_fit_is_context_too_large() -> None:
    patch = modified("src/x.py", [" short", "+" + "y" * 3000]).text()
    with pytest.raises(GroupingError) as caught:
        split_diff(patch, 1024, [])
    assert caught.value.code == c.REASON_CONTEXT_TOO_LARGE
    # the last line fits the budget alone, but not after the continuation context
    tight = modified("src/x.py", [" short", "+" + "y" * 900, "+" + "z" * 990]).text()
    with pytest.raises(GroupingError) as caught:
        split_diff(tight, 1024, [])
    assert caught.value.code == c.REASON_CONTEXT_TOO_LARGE


def test_empty_patch_is_one_empty_group() -> None:
    assert split_diff("", 1024, ["."]) == (
        DiffGroup(index=0, start_byte=0, end_byte=0, diff="", context="", paths=()),
    )
    prepared = prepare_observation(
        patch="",
        commits=COMMITS,
        evidence_by_task={"docs": description_only_evidence("Docs.")},
        hints=[],
        api_model=c.DEFAULT_MODEL,
    )
    assert prepared.strategy == c.STRATEGY_WHOLE_DIFF
    assert len(prepared.groups) == 1
    only = prepared.groups[0]
    assert only.group.paths == ()
    assert only.diff_hash == EMPTY_SHA256
    state = build_state(base_sha=BASE, head_sha=HEAD, tested_sha=TESTED, group=only.group, total=1)
    assert only.state_hash == hashlib.sha256(compact_json(state).encode("utf-8")).hexdigest()
    assert len(prepared.requests) == 1
    assert prepared.requests[0].task_ids == ("docs",)
    body = strict_loads(prepared.requests[0].body)
    assert body["state"]["diff"] == ""
    assert body["state"]["changed_paths"] == []
    assert body["state"]["chunk"] == {
        "index": 0,
        "total": 1,
        "start_byte": 0,
        "end_byte": 0,
        "preceding_diff_headers": "",
        "scope": c.QUESTION_CHUNK_SCOPE,
    }


# --------------------------------------------------------------------------------------------
# prepare_observation: sizing loop, errors, states, batching
# --------------------------------------------------------------------------------------------


def prepare(patch: str, evidence: dict[str, Any], **overrides: Any) -> Any:
    arguments: dict[str, Any] = {
        "patch": patch,
        "commits": COMMITS,
        "evidence_by_task": evidence,
        "hints": [],
        "api_model": c.DEFAULT_MODEL,
    }
    arguments.update(overrides)
    return prepare_observation(**arguments)


def evidence_with_context_file(size: int) -> dict[str, Any]:
    return {
        "description": "Runs the suite with its fixtures.",
        "actions": [],
        "contextFiles": [{"path": "fixtures.txt", "content": "f" * size}],
        "jobs": [],
        "packageScripts": [],
    }


def question_size(evidence: dict[str, Any]) -> int:
    (question,) = build_questions({"t": evidence}).values()
    return utf8_len(compact_json(question))


def test_state_uses_the_diff_base_and_the_model_sent() -> None:
    commits = attrs.evolve(COMMITS, diff_base_sha=MERGE_BASE)
    prepared = prepare(SIMPLE, {"t": description_only_evidence("T.")}, commits=commits)
    body = strict_loads(prepared.requests[0].body)
    assert body["model"] == c.DEFAULT_MODEL
    assert body["state"]["base_sha"] == MERGE_BASE
    assert body["state"]["head_sha"] == HEAD
    assert body["state"]["tested_sha"] == TESTED
    assert body["state"]["changed_paths"] == ["src/a.py"]
    assert body["state"]["diff"] == SIMPLE
    state_text = compact_json(body["state"])
    assert (
        prepared.requests[0]
        .body.decode("utf-8")
        .startswith(
            '{"model":"jev-1.13.0","state":' + state_text + ',"questions":{"t":{"type":"noul",'
        )
    )
    assert prepared.groups[0].state_hash == hashlib.sha256(state_text.encode()).hexdigest()
    assert prepared.groups[0].diff_hash == hashlib.sha256(SIMPLE.encode()).hexdigest()
    aliased = prepare(SIMPLE, {"t": description_only_evidence("T.")}, api_model="jev-latest")
    assert strict_loads(aliased.requests[0].body)["model"] == "jev-latest"


def test_large_evidence_shrinks_the_budget() -> None:
    diffs = [modified(f"d{n}/f.txt", [" ctx", *lines("+", 40, 60)]) for n in range(7)]
    patch = join(diffs)
    small = prepare(patch, {"t": description_only_evidence("T.")})
    assert len(small.groups) == 1  # the whole patch fits the preferred size
    evidence = evidence_with_context_file(50000)
    largest = question_size(evidence)
    prepared = prepare(patch, {"t": evidence, "u": description_only_evidence("U.")})
    sha_size = utf8_len(compact_json({"base_sha": BASE, "head_sha": HEAD, "tested_sha": TESTED}))
    budget = min(
        c.PREFERRED_GROUP_BYTES,
        c.MAX_STATE_PLUS_QUESTION_BYTES - sha_size - largest - c.BUDGET_RESERVE_BYTES,
    )
    assert budget < utf8_len(patch)
    groups = [entry.group for entry in prepared.groups]
    assert groups == list(split_diff(patch, budget, []))
    check_split(patch, diffs, groups, budget)
    check_requests(prepared.requests, prepared.groups, ["t", "u"])
    assert prepared.strategy == c.STRATEGY_CHUNKED_DIFF
    for request in prepared.requests:
        state = compact_json(strict_loads(request.body)["state"])
        assert utf8_len(state) + largest <= c.MAX_STATE_PLUS_QUESTION_BYTES


def test_escaping_overflow_shrinks_by_the_excess_plus_margin() -> None:
    # Tabs double in JSON, so a group that fits the byte budget overflows the state limit.
    tabbed = ["+" + "\t" * 90 + f"{n:04d}" for n in range(60)]
    diffs = [modified(f"d{n}/f.txt", [" ctx", *tabbed]) for n in range(6)]
    patch = join(diffs)
    evidence = evidence_with_context_file(30000)
    largest = question_size(evidence)
    sha_size = utf8_len(compact_json({"base_sha": BASE, "head_sha": HEAD, "tested_sha": TESTED}))
    budget = min(
        c.PREFERRED_GROUP_BYTES,
        c.MAX_STATE_PLUS_QUESTION_BYTES - sha_size - largest - c.BUDGET_RESERVE_BYTES,
    )
    assert budget == c.PREFERRED_GROUP_BYTES
    attempts = 0
    while True:
        attempts += 1
        groups = split_diff(patch, budget, [])
        excess = max(
            utf8_len(
                compact_json(
                    build_state(
                        base_sha=BASE,
                        head_sha=HEAD,
                        tested_sha=TESTED,
                        group=group,
                        total=len(groups),
                    )
                )
            )
            + largest
            - c.MAX_STATE_PLUS_QUESTION_BYTES
            for group in groups
        )
        if excess <= 0:
            break
        budget -= excess + c.SHRINK_MARGIN_BYTES
    assert attempts > 1
    prepared = prepare(patch, {"t": evidence})
    assert [entry.group for entry in prepared.groups] == list(groups)
    check_requests(prepared.requests, prepared.groups, ["t"])


def test_evidence_too_large_for_any_group_is_context_too_large() -> None:
    with pytest.raises(GroupingError) as caught:
        prepare(SIMPLE, {"t": evidence_with_context_file(64000)})
    assert caught.value.code == c.REASON_CONTEXT_TOO_LARGE
    # the budget is checked before parsing: even an unparseable patch fails this way
    with pytest.raises(GroupingError) as caught:
        prepare("garbage\n", {"t": evidence_with_context_file(64000)})
    assert caught.value.code == c.REASON_CONTEXT_TOO_LARGE
    # heavy escaping drives the budget under the floor
    control = modified("x/y.txt", [" ctx", *["+" + "\x01" * 150 for _ in range(300)]]).text()
    with pytest.raises(GroupingError) as caught:
        prepare(control, {"t": evidence_with_context_file(30000)})
    assert caught.value.code == c.REASON_CONTEXT_TOO_LARGE


def test_parse_failure_and_unsplittable_line_codes() -> None:
    with pytest.raises(GroupingError) as caught:
        prepare("garbage\n", {"t": description_only_evidence("T.")})
    assert caught.value.code == c.REASON_UNREPRESENTABLE_CHANGE
    long_line = modified("src/x.py", [" short", "+" + "y" * 30000]).text()
    with pytest.raises(GroupingError) as caught:
        prepare(long_line, {"t": description_only_evidence("T.")})
    assert caught.value.code == c.REASON_CONTEXT_TOO_LARGE


def test_more_than_64_groups_is_diff_too_large() -> None:
    diffs = [modified(f"d{n:03d}/f.txt", [" ctx", *lines("+", 8)]) for n in range(200)]
    with pytest.raises(GroupingError) as caught:
        prepare(join(diffs), {"t": description_only_evidence("T.")})
    assert caught.value.code == c.REASON_DIFF_TOO_LARGE
    fewer = join(diffs[:100])
    prepared = prepare(fewer, {"t": description_only_evidence("T.")})
    assert 1 < len(prepared.groups) <= c.MAX_GROUPS


def test_batches_stay_under_the_request_limit_and_never_split_a_task() -> None:
    task_ids = [f"task_{n:02d}" for n in range(40)] + ["A", "Z", "_late"]
    evidence = {
        task_id: description_only_evidence(f"{task_id}: " + "long description " * 500)
        for task_id in task_ids
    }
    diffs = [modified(f"d{n}/f.txt", [" ctx", *lines("+", 150, 100)]) for n in range(2)]
    patch = join(diffs)
    prepared = prepare(patch, evidence)
    assert len(prepared.groups) == 2
    check_requests(prepared.requests, prepared.groups, task_ids)
    questions = build_questions(evidence)
    for group_index in range(2):
        batches = [r for r in prepared.requests if r.group_index == group_index]
        assert len(batches) > 2
        for current, following in itertools.pairwise(batches):
            body = strict_loads(current.body)
            grown = dict(body["questions"])
            grown[following.task_ids[0]] = questions[following.task_ids[0]]
            total = utf8_len(compact_json(body["state"])) + utf8_len(compact_json(grown))
            assert total > c.MAX_REQUEST_BYTES  # the batch was closed only when it had to be
    assert [r.group_index for r in prepared.requests] == sorted(
        r.group_index for r in prepared.requests
    )


def test_batch_boundary_is_exact() -> None:
    # Three tasks whose questions fill the request to the byte, then one byte more.
    group = split_diff(SIMPLE, 20480, [])[0]
    state_size = utf8_len(
        compact_json(
            build_state(base_sha=BASE, head_sha=HEAD, tested_sha=TESTED, group=group, total=1)
        )
    )
    filler = question_size(description_only_evidence(""))
    one_key = len('"a":')
    # {"a":Q1,"b":Q2,"c":Q3}: 2 braces, 3 keys, 2 commas and the questions
    room = c.MAX_REQUEST_BYTES - state_size - 2 - 3 * one_key - 2 - 3 * filler
    sizes = [room // 3, room // 3, room - 2 * (room // 3)]
    evidence = {
        task_id: description_only_evidence("x" * size)
        for task_id, size in zip("abc", sizes, strict=True)
    }
    exact = prepare(SIMPLE, evidence)
    assert [r.task_ids for r in exact.requests] == [("a", "b", "c")]
    body = strict_loads(exact.requests[0].body)
    size = utf8_len(compact_json(body["state"])) + utf8_len(compact_json(body["questions"]))
    assert size == c.MAX_REQUEST_BYTES
    evidence["c"] = description_only_evidence("x" * (sizes[2] + 1))
    over = prepare(SIMPLE, evidence)
    assert [r.task_ids for r in over.requests] == [("a", "b"), ("c",)]


def overflowing_states(
    monkeypatch: pytest.MonkeyPatch, largest_question: int, excesses: Sequence[int]
) -> list[int]:
    """Make the n-th built state overflow the state limit by ``excesses[n]`` bytes.

    Returns the list that records the budget of every split the sizing loop makes.
    """
    budgets: list[int] = []
    real_split = grouping._split_files

    def recording_split(*args: Any) -> Any:
        budgets.append(args[2])
        return real_split(*args)

    built = itertools.count()

    def padded_state(**arguments: Any) -> dict[str, Any]:
        state = build_state(**arguments)
        attempt = next(built)
        if attempt >= len(excesses):
            return state
        target = c.MAX_STATE_PLUS_QUESTION_BYTES - largest_question + excesses[attempt]
        pad = target - utf8_len(compact_json(state)) - len(',"pad":""')
        return {**state, "pad": "x" * pad}

    monkeypatch.setattr(grouping, "_split_files", recording_split)
    monkeypatch.setattr(grouping, "build_state", padded_state)
    return budgets


def test_sizing_loop_makes_at_most_twelve_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    evidence = {"t": description_only_evidence("T.")}
    largest = question_size(evidence["t"])
    step = 1 + c.SHRINK_MARGIN_BYTES
    budgets = overflowing_states(monkeypatch, largest, [1] * 12)
    with pytest.raises(GroupingError) as caught:
        prepare(SIMPLE, evidence)
    assert caught.value.code == c.REASON_CONTEXT_TOO_LARGE
    assert budgets == [c.PREFERRED_GROUP_BYTES - attempt * step for attempt in range(12)]
    # accepted on the twelfth attempt
    budgets = overflowing_states(monkeypatch, largest, [1] * 11)
    prepared = prepare(SIMPLE, evidence)
    assert len(budgets) == 12
    assert len(prepared.groups) == 1


def test_sizing_loop_still_tries_a_budget_of_exactly_the_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    evidence = {"t": description_only_evidence("T.")}
    largest = question_size(evidence["t"])
    to_floor = c.PREFERRED_GROUP_BYTES - c.BUDGET_FLOOR_BYTES - c.SHRINK_MARGIN_BYTES
    budgets = overflowing_states(monkeypatch, largest, [to_floor])
    prepare(SIMPLE, evidence)
    assert budgets == [c.PREFERRED_GROUP_BYTES, c.BUDGET_FLOOR_BYTES]
    budgets = overflowing_states(monkeypatch, largest, [to_floor + 1])
    with pytest.raises(GroupingError) as caught:
        prepare(SIMPLE, evidence)
    assert caught.value.code == c.REASON_CONTEXT_TOO_LARGE
    assert budgets == [c.PREFERRED_GROUP_BYTES]


def test_binary_patch_keyword_lines_are_allowed() -> None:
    # docs/reference.md, "Grouping" lists these lines; the collector refuses binaries before
    # grouping, but the parser itself accepts the lines in a section without ---/+++ and hunks.
    patch = (
        "diff --git a/logo.png b/logo.png\n"
        "index 1111111..2222222 100644\n"
        "GIT binary patch\n"
        "literal 5\n"
        "delta 3\n"
        "diff --git a/icon.png b/icon.png\n"
        "new file mode 100644\n"
        "index 0000000..3333333\n"
        "Binary files /dev/null and b/icon.png differ\n"
    )
    assert [entry.paths for entry in parse_patch(patch)] == [("logo.png",), ("icon.png",)]
    for misplaced in ("GIT binary patch", "literal 5", "Binary files a/x and b/x differ"):
        with pytest.raises(GroupingError):
            parse_patch(SIMPLE + misplaced + "\n")
