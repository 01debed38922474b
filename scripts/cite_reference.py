"""Rewrite section-number citations into pointers to docs/reference.md headings.

A one-off maintenance tool. Comments, docstrings and messages once cited the numbered sections
of an engineering specification that does not ship with the package (``spec §8.4``,
``(spec §6.3 step 5)``, ``§5.5 to §10``, ``docs/reference.md §4``). This script replaces every
such citation in ``jev_select/``, ``tests/`` and ``bench/`` by a pointer to the heading of
``docs/reference.md`` that documents the same rule, in the form the code already uses::

    docs/reference.md, "Grouping"
    docs/reference.md, "Change collection", "Local use"
    docs/reference.md, "Statuses" to "Report fields"

Every section number met must be in ``SECTIONS`` and every heading there must exist in
``docs/reference.md``; otherwise the script stops before writing anything. A line that grows past
100 characters is wrapped (comments and docstrings) or split into adjacent literals (strings), and
every rewritten file must still parse. Running it again finds nothing to do.

Usage: ``python scripts/cite_reference.py [--check] [ROOT]`` (ROOT defaults to the repository
containing this script). ``--check`` only reports what would change and exits 1 if anything would.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from pathlib import Path

LINE_LIMIT = 100
DIRECTORIES = ("jev_select", "tests", "bench")

# Section number of the former specification -> heading of docs/reference.md that covers it.
SECTIONS: dict[str, str] = {
    "0": "Conventions",
    "1": "Commands",
    "1.1": "Commands",
    "1.2": "Library",
    "1.3": "Commands",
    "2": "Inputs",
    "2.1": "Inputs",
    "2.2": "Inputs",
    "2.3": "API base URL",
    "2.4": "Validation order",
    "3": "Failure codes",
    "3.1": "Input errors",
    "3.2": "Failure codes",
    "3.3": "Failure codes",
    "4": "Task fields",
    "4.1": "Task fields",
    "4.2": "Task fields",
    "4.3": "Task fields",
    "4.4": "Task fields",
    "4.5": "Task fields",
    "4.6": "Task fields",
    "5": "Events",
    "5.1": "GitHub environment",
    "5.2": "Pull request events",
    "5.3": "Events",
    "5.4": "Manual pull-request mode",
    "5.5": "Statuses",
    "5.6": "Tested commit",
    "6": "Change collection",
    "6.1": "Temporary repository and git environment",
    "6.2": "Remote and credentials",
    "6.3": "Fetching and verification",
    "6.4": "Collection checks",
    "6.5": "Changed paths and diff facts",
    "6.6": "Protected path",
    "7": "Task evidence",
    "7.1": "When metadata is read",
    "7.2": "Jobs in the evidence",
    "7.3": "Actions in the evidence",
    "7.4": "Package scripts",
    "7.5": "Context files and path normalisation",
    "7.6": "Metadata warnings",
    "7.7": "Evidence object",
    "7.8": "Job metadata",
    "7.9": "Working-directory hints",
    "8": "The Jev request",
    "8.1": "Transport",
    "8.2": "Request body",
    "8.3": "Question texts",
    "8.4": "Grouping",
    "8.5": "Batching, concurrency and deadlines",
    "8.6": "Response validation",
    "8.7": "Model identity and usage",
    "8.8": "Error mapping",
    "9": "Selection policy",
    "9.1": "Decision from scores",
    "9.2": "Forced state",
    "9.3": "Mandatory tasks and the effective run",
    "9.4": "Reason codes",
    "9.5": "Statuses",
    "10": "Report fields",
    "10.1": "Report fields",
    "10.2": "Report fields",
    "10.3": "Report fields",
    "10.4": "Compact JSON and numbers",
    "10.5": "Hashes",
    "11": "Outputs",
    "11.1": "Outputs",
    "11.2": "Outputs",
    "11.3": "Publication",
    "12": "Step summary and plan block",
    "13": "Step summary and plan block",
    "14": "Shadow analysis",
    "15": "Local use",
    "16": "The action's steps",
    "18": "Evaluation replay",
    "19": "Security",
}

_NUMBER = r"§([0-9]+(?:\.[0-9]+)*)"
_ONE = re.compile(_NUMBER)
_SEPARATOR = r"(?:,[ ]*|[ ]+and[ ]+|[ ]+or[ ]+|[ ]+to[ ]+)"
CITATION = re.compile(
    rf"(?:(?:[Ss]pec|[Rr]eference|docs/reference\.md)[ ]+)?{_NUMBER}(?:{_SEPARATOR}{_NUMBER})*"
    # "as amended" is dropped: the reference documents the amended rule.
    r"(?:[ ]+as[ ]+amended|,[ ]+amended)?"
)
_RANGE = re.compile(rf"{_NUMBER}[ ]+to[ ]+{_NUMBER}")
POINTER_PREFIX = "docs/reference.md, "


class Unmapped(Exception):
    """A citation or heading the table cannot resolve; nothing is written."""


def _key(number: str) -> tuple[int, ...]:
    return tuple(int(part) for part in number.split("."))


def _heading(number: str, where: str) -> str:
    try:
        return SECTIONS[number]
    except KeyError:
        raise Unmapped(f"{where}: no heading is mapped for section {number}") from None


def _range_headings(first: str, last: str, where: str) -> list[str]:
    low, high = _key(first), _key(last)
    inside = sorted((k for k in SECTIONS if low <= _key(k) <= high), key=_key)
    headings = _unique([_heading(first, where), *(SECTIONS[k] for k in inside)])
    headings = _unique([*headings, _heading(last, where)])
    if len(headings) <= 3:
        return headings
    if low[0] == high[0] and str(low[0]) in SECTIONS:
        return [SECTIONS[str(low[0])]]
    return [f"{_heading(first, where)}\0{_heading(last, where)}"]


def _unique(items: list[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def pointer(citation: str, where: str, quote: str = '"') -> str:
    """The pointer replacing one citation group (``\\0`` in a heading marks a range)."""
    body = re.sub(r",?[ ]+(?:as[ ]+)?amended$", "", citation)
    headings: list[str] = []
    for match in _RANGE.finditer(body):
        headings.extend(_range_headings(match.group(1), match.group(2), where))
    body = _RANGE.sub("", body)
    headings.extend(_heading(number, where) for number in _ONE.findall(body))
    parts = []
    for heading in _unique(headings):
        if "\0" in heading:
            first, last = heading.split("\0")
            parts.append(f"{quote}{first}{quote} to {quote}{last}{quote}")
        else:
            parts.append(f"{quote}{heading}{quote}")
    return POINTER_PREFIX + ", ".join(parts)


def reference_headings(root: Path) -> set[str]:
    text = (root / "docs" / "reference.md").read_text(encoding="utf-8")
    headings: set[str] = set()
    in_fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and (found := re.match(r"#{2,6} (.+?)\s*$", line)):
            headings.add(found.group(1))
    return headings


# ------------------------------------------------------------------------------------------------
# Where a citation sits: a comment, a docstring (a triple-quoted string opening its line) or
# another string literal. Anything else is refused.
# ------------------------------------------------------------------------------------------------


def _segments(text: str) -> dict[int, list[tuple[int, int, str, str]]]:
    """Per 1-based line: (start column, end column, kind, quote) of comment and string tokens."""
    lines = text.splitlines(keepends=True)
    found: dict[int, list[tuple[int, int, str, str]]] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            kind, quote = "comment", '"'
        elif token.type == tokenize.STRING:
            body = token.string.lstrip("rRbBuUfF")
            triple = body[:3] in ('"""', "'''")
            opens_line = not lines[token.start[0] - 1][: token.start[1]].strip()
            kind = "docstring" if triple and opens_line else ("text" if triple else "string")
            quote = body[0]
        else:
            continue
        (row, col), (end_row, end_col) = token.start, token.end
        for line in range(row, end_row + 1):
            start = col if line == row else 0
            end = end_col if line == end_row else len(lines[line - 1])
            found.setdefault(line, []).append((start, end, kind, quote))
    return found


def _protected(line: str) -> list[tuple[int, int]]:
    """Spans of quoted headings in ``line``, where no wrap may break."""
    spans = []
    for match in re.finditer(
        re.escape(POINTER_PREFIX) + r'(?:\\?["\'][^"\'\\]+\\?["\'](?:, | to )?)+', line
    ):
        for inner in re.finditer(r'\\?["\'][^"\'\\]+\\?["\']', match.group(0)):
            spans.append((match.start() + inner.start(), match.start() + inner.end()))
    return spans


def _break_at(line: str, floor: int, limit: int = LINE_LIMIT) -> int | None:
    """The rightmost space that leaves the first part within the limit, outside headings."""
    spans = _protected(line)
    for index in range(min(len(line) - 1, limit), floor, -1):
        if line[index] == " " and not any(start < index < end for start, end in spans):
            return index
    return None


def _wrap(line: str, kind: str, where: str) -> list[str]:
    ending = "\n" if line.endswith("\n") else ""
    line = line.rstrip("\n")
    indent = line[: len(line) - len(line.lstrip())]
    if kind == "comment":
        hash_at = line.index("#")
        if line[:hash_at].strip():
            # A trailing comment moves above its code line, then wraps like any comment.
            code, comment = line[:hash_at].rstrip(), line[hash_at:]
            return [*_wrap(indent + comment + "\n", kind, where), code + ending]
        marker = re.match(r"\s*#+\s?", line)
        assert marker is not None
        continuation = marker.group(0)
    elif kind == "docstring":
        continuation = indent
    else:
        raise Unmapped(f"{where}: a rewritten line exceeds {LINE_LIMIT} characters in a {kind}")
    out: list[str] = []
    while len(line) > LINE_LIMIT:
        at = _break_at(line, len(continuation))
        if at is None:
            raise Unmapped(f"{where}: cannot wrap a rewritten line")
        out.append(line[:at].rstrip() + "\n")
        line = continuation + line[at + 1 :].lstrip()
    out.append(line + ending)
    return out


def _literal(prefix: str, quote: str, body: str) -> str:
    # A piece that only escapes double quotes is written in single quotes, as ruff format would.
    if quote == '"' and '\\"' in body and "'" not in body:
        return prefix + "'" + body.replace('\\"', '"') + "'"
    return prefix + quote + body + quote


def _split_literal(line: str, start: int, end: int, quote: str, where: str) -> list[str]:
    """Split the single-line string literal ``line[start:end]`` into two adjacent literals."""
    ending = "\n" if line.endswith("\n") else ""
    line = line.rstrip("\n")
    found = re.match(r"[rRbBuUfF]*", line[start:])
    assert found is not None
    prefix = found.group(0)
    opening = start + len(prefix) + 1
    at = _break_at(line[: end - 1], opening, LINE_LIMIT - 2)
    if at is None:
        raise Unmapped(f"{where}: cannot split a rewritten string literal")
    first, second = line[opening : at + 1], line[at + 1 : end - 1]
    return [
        line[:start] + _literal(prefix, quote, first) + "\n",
        " " * start + _literal(prefix, quote, second) + line[end:] + ending,
    ]


_LIST_ITEM = re.compile(r"(?:[-*]|[0-9]+[.)]|>>>|-{3,}|={3,})(?:\s|$)")


def _continuation(line: str, kind: str, prefix: str, is_docstring: bool) -> str | None:
    """The text of ``line`` when it continues the paragraph of a wrapped line, else None."""
    if kind == "comment":
        marker = re.match(r"\s*#+\s?", line)
        if marker is None or marker.group(0) != prefix:
            return None
    elif (
        not is_docstring
        or line[: len(prefix)] != prefix
        or line[len(prefix) : len(prefix) + 1] == " "
    ):
        return None
    rest = line[len(prefix) :].rstrip("\n")
    if not rest.strip() or _LIST_ITEM.match(rest) or rest.startswith(('"""', "'''", ":")):
        return None
    return rest


def _prefix(line: str, kind: str) -> str:
    if kind == "comment":
        marker = re.match(r"\s*#+\s?", line)
        assert marker is not None
        return marker.group(0)
    return line[: len(line) - len(line.lstrip())]


def rewrite(text: str, where: str) -> str:
    """``text`` with every citation replaced, long lines wrapped; refuses what it cannot map."""
    if "§" not in text:
        return text
    segments = _segments(text)
    lines = text.splitlines(keepends=True)
    replaced = list(lines)
    contexts: dict[int, tuple[str, int, str, int]] = {}
    for index, line in enumerate(lines):
        number = index + 1
        matches = list(CITATION.finditer(line))
        if not matches:
            continue
        kinds = set()
        pieces, last = [], 0
        for match in matches:
            home = [s for s in segments.get(number, []) if s[0] <= match.start() < s[1]]
            if not home:
                raise Unmapped(f"{where}:{number}: a citation outside any comment or string")
            start, end, kind, quote = home[0]
            kinds.add((kind, start, quote, end))
            inner = '\\"' if kind == "string" and quote == '"' else '"'
            pieces.append(line[last : match.start()])
            pieces.append(pointer(match.group(0), f"{where}:{number}", inner))
            last = match.end()
        pieces.append(line[last:])
        replaced[index] = "".join(pieces)
        if len(kinds) != 1 and len(replaced[index].rstrip("\n")) > LINE_LIMIT:
            raise Unmapped(f"{where}:{number}: a long line mixes citation contexts")
        kind, start, quote, end = kinds.pop()
        # All changes of the line lie in this one token, so its end moves by the growth.
        contexts[index] = (kind, start, quote, end + len(replaced[index]) - len(line))

    def docstring_line(index: int) -> bool:
        return any(kind == "docstring" for _s, _e, kind, _q in segments.get(index + 1, []))

    out: list[str] = []
    index = 0
    while index < len(replaced):
        line = replaced[index]
        if len(line.rstrip("\n")) <= LINE_LIMIT or index not in contexts:
            out.append(line)
            index += 1
            continue
        kind, start, quote, end = contexts[index]
        place = f"{where}:{index + 1}"
        if kind == "string":
            out.extend(_split_literal(line, start, end, quote, place))
            index += 1
            continue
        trailing = kind == "comment" and bool(line[: line.index("#")].strip())
        wrapped = _wrap(line, kind, place)
        while True:
            following = index + 1
            remainder = wrapped[-1]
            text_after = None
            if not trailing and following < len(replaced) and not remainder.rstrip().endswith("::"):
                text_after = _continuation(
                    replaced[following], kind, _prefix(remainder, kind), docstring_line(following)
                )
            if text_after is None:
                out.extend(wrapped)
                index += 1
                break
            # Re-flow: the wrapped tail joins the next line of its paragraph.
            out.extend(wrapped[:-1])
            ending = "\n" if replaced[following].endswith("\n") else ""
            merged = remainder.rstrip("\n") + " " + text_after + ending
            index = following
            if len(merged.rstrip("\n")) <= LINE_LIMIT:
                out.append(merged)
                index += 1
                break
            wrapped = _wrap(merged, kind, f"{where}:{index + 1}")
    result = "".join(out)
    if "§" in result:
        raise Unmapped(f"{where}: a section sign is left that is not a citation")
    try:
        ast.parse(result)
    except SyntaxError as error:
        raise Unmapped(f"{where}: the rewritten file does not parse ({error.msg})") from None
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--check", action="store_true", help="report only; exit 1 on changes")
    options = parser.parse_args(argv)
    root: Path = options.root
    headings = reference_headings(root)
    missing = sorted(set(SECTIONS.values()) - headings)
    if missing:
        print(f"docs/reference.md lacks the headings: {missing}", file=sys.stderr)
        return 2
    changed: dict[Path, str] = {}
    try:
        for directory in DIRECTORIES:
            for path in sorted((root / directory).rglob("*.py")):
                text = path.read_text(encoding="utf-8")
                new = rewrite(text, str(path.relative_to(root)))
                if new != text:
                    changed[path] = new
    except Unmapped as error:
        print(f"cite_reference: {error}", file=sys.stderr)
        return 2
    for path in changed:
        print(path.relative_to(root))
    if options.check:
        return 1 if changed else 0
    for path, new in changed.items():
        path.write_text(new, encoding="utf-8")
    print(f"{len(changed)} files rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
