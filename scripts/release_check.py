"""Check a release tag against the package and print its release notes.

``python scripts/release_check.py v1.2.3`` exits 0 and prints the body of the ``## [1.2.3]``
section of ``CHANGELOG.md`` when the tag is ``v`` followed by the ``version`` of
``pyproject.toml`` and that section exists with a date and some text. Otherwise it prints one
line naming what is wrong and exits 1. The release workflow runs it before building anything,
and uses its output as the notes of the GitHub release.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

TAG_PATTERN = re.compile(r"v(?P<version>(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*))")
HEADING = re.compile(r"## \[(?P<version>[^\]]+)\] - (?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})")


class ReleaseError(Exception):
    """A release precondition that does not hold; the message says which."""


def package_version(root: Path) -> str:
    project = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["project"]
    version = project.get("version")
    if not isinstance(version, str):
        raise ReleaseError("pyproject.toml has no static project.version")
    return version


def changelog_section(text: str, version: str) -> str:
    """The body of the ``## [version] - date`` section, without surrounding blank lines."""
    lines = text.splitlines()
    start: int | None = None
    for index, line in enumerate(lines):
        match = HEADING.fullmatch(line.rstrip())
        if match and match["version"] == version:
            if start is not None:
                raise ReleaseError(f"CHANGELOG.md has two sections for {version}")
            start = index + 1
    if start is None:
        raise ReleaseError(f"CHANGELOG.md has no dated section '## [{version}] - YYYY-MM-DD'")
    end = start
    while end < len(lines) and not lines[end].startswith("## "):
        end += 1
    body = "\n".join(lines[start:end]).strip()
    # Link reference definitions at the end of the file belong to no section.
    body = re.sub(r"(?:\n\[[^\]]+\]: \S+)+$", "", body).strip()
    if not body:
        raise ReleaseError(f"the CHANGELOG.md section for {version} is empty")
    return body + "\n"


def check(tag: str, root: Path) -> str:
    """The release notes for ``tag``, or :class:`ReleaseError`."""
    match = TAG_PATTERN.fullmatch(tag)
    if match is None:
        raise ReleaseError("the tag is not of the form vMAJOR.MINOR.PATCH")
    version = package_version(root)
    if match["version"] != version:
        raise ReleaseError(f"the tag names {match['version']} but the package is {version}")
    return changelog_section((root / "CHANGELOG.md").read_text("utf-8"), version)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("tag", help="the pushed tag, e.g. v0.1.0")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the repository root (default: the checkout holding this script)",
    )
    namespace = parser.parse_args(argv)
    try:
        notes = check(namespace.tag, namespace.root)
    except (ReleaseError, OSError, KeyError, tomllib.TOMLDecodeError) as error:
        sys.stderr.write(f"release check: {error}\n")
        return 1
    sys.stdout.write(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
