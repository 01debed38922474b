"""Pointers from the code to docs/reference.md name existing headings; no section numbers remain.

Comments, docstrings and messages point at the reference as ``docs/reference.md, "<heading>"``
(several headings separated by ``, `` or `` to ``). A pointer to a heading that was renamed or
removed, or a numbered citation (``§6.4``) of a document that does not ship, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jev_select"
REFERENCE = ROOT / "docs" / "reference.md"

# A heading in quotes, possibly escaped inside a string literal.
_QUOTED = r'\\?["\']([^"\'\\]+)\\?["\']'
POINTER = re.compile(rf"docs/reference\.md,\s+{_QUOTED}((?:(?:,\s+|\s+to\s+){_QUOTED})*)")
# A wrapped comment continues on the next line after "#"; joining removes that marker.
_COMMENT_BREAK = re.compile(r"\n[ \t]*#[ \t]?")
# Two adjacent string literals split a message: "...(docs/reference.md, "\n'"Heading")'.
_LITERAL_BREAK = re.compile(r"""["']\s*\n\s*[rRbBuUfF]*["']""")


def reference_headings() -> set[str]:
    headings: set[str] = set()
    in_fence = False
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and (found := re.match(r"#{2,6} (.+?)\s*$", line)):
            headings.add(found.group(1))
    return headings


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def pointed_headings(text: str) -> list[str]:
    joined = _LITERAL_BREAK.sub("", _COMMENT_BREAK.sub(" ", text))
    headings = []
    for match in POINTER.finditer(joined):
        headings.append(match.group(1))
        headings.extend(re.findall(_QUOTED, match.group(2)))
    return [re.sub(r"\s+", " ", heading) for heading in headings]


def test_reference_headings_are_unique() -> None:
    lines = [
        line
        for line in REFERENCE.read_text(encoding="utf-8").splitlines()
        if re.match(r"#{2,6} ", line)
    ]
    titles = [line.lstrip("#").strip() for line in lines]
    assert len(titles) == len(set(titles))


@pytest.mark.parametrize("path", sources(), ids=lambda path: str(path.relative_to(ROOT)))
def test_pointers_name_existing_headings(path: Path) -> None:
    known = reference_headings()
    unknown = [h for h in pointed_headings(path.read_text(encoding="utf-8")) if h not in known]
    assert unknown == []


@pytest.mark.parametrize("path", sources(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_section_number_citations(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    cited = [number for number, line in enumerate(lines, start=1) if "§" in line]
    assert cited == []


def test_the_package_points_at_the_reference() -> None:
    # The pointer pattern must keep matching what the code writes, or the tests above pass idly.
    count = sum(len(pointed_headings(path.read_text(encoding="utf-8"))) for path in sources())
    assert count >= 100


def test_pointer_parsing() -> None:
    text = (
        '# A rule (docs/reference.md, "Batching, concurrency\n'
        '# and deadlines", "Statuses" to "Report fields").\n'
        'x = ("see (docs/reference.md, "\n     \'"Task fields")\')\n'
    )
    assert pointed_headings(text) == [
        "Batching, concurrency and deadlines",
        "Statuses",
        "Report fields",
        "Task fields",
    ]


SHADOW_MODE = ROOT / "docs" / "shadow-mode.md"
SHADOW_POINTER = re.compile(rf"docs/shadow-mode\.md,\s+{_QUOTED}")


def test_pointers_into_the_shadow_mode_guide_name_its_steps() -> None:
    """The guide numbers its steps ("## 3. Collect ..."): a pointer names a step's title."""
    steps = [
        line.lstrip("#").strip()
        for line in SHADOW_MODE.read_text(encoding="utf-8").splitlines()
        if re.match(r"#{2,3} ", line)
    ]
    pointed = []
    for path in sources():
        text = _LITERAL_BREAK.sub("", _COMMENT_BREAK.sub(" ", path.read_text(encoding="utf-8")))
        pointed += [
            (path.name, re.sub(r"\s+", " ", m.group(1))) for m in SHADOW_POINTER.finditer(text)
        ]
    assert len(pointed) >= 3
    unknown = [(name, title) for name, title in pointed if not any(title in s for s in steps)]
    assert unknown == []
