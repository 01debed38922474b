"""scripts/release_check.py: a release tag must name the package version and a dated changelog
section, whose text becomes the release notes."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "release_check.py"

CHANGELOG = """# Changelog

Intro text.

## [Unreleased]

### Added

- Not released yet.

## [1.2.0] - 2026-11-30

### Fixed

- The second fix.

## [1.1.0] - 2026-10-01

- The first release.

[1.2.0]: https://example.invalid/compare/v1.1.0...v1.2.0
[1.1.0]: https://example.invalid/releases/v1.1.0
"""


def _root(tmp_path: Path, version: str = "1.2.0", changelog: str = CHANGELOG) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "x"\nversion = "{version}"\n', "utf-8"
    )
    (tmp_path / "CHANGELOG.md").write_text(changelog, "utf-8")
    return tmp_path


def _check(tag: str, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), tag, "--root", str(root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_a_matching_tag_prints_its_section(tmp_path: Path) -> None:
    completed = _check("v1.2.0", _root(tmp_path))
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "### Fixed\n\n- The second fix.\n"


def test_the_last_section_leaves_out_the_link_definitions(tmp_path: Path) -> None:
    completed = _check("v1.1.0", _root(tmp_path, version="1.1.0"))
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "- The first release.\n"


@pytest.mark.parametrize(
    ("tag", "version", "changelog", "message"),
    [
        ("v1.2.1", "1.2.0", CHANGELOG, "the tag names 1.2.1 but the package is 1.2.0"),
        ("1.2.0", "1.2.0", CHANGELOG, "not of the form vMAJOR.MINOR.PATCH"),
        ("v1.2", "1.2.0", CHANGELOG, "not of the form vMAJOR.MINOR.PATCH"),
        ("v01.2.0", "01.2.0", CHANGELOG, "not of the form vMAJOR.MINOR.PATCH"),
        ("v1.3.0", "1.3.0", CHANGELOG, "no dated section '## [1.3.0] - YYYY-MM-DD'"),
        (
            "v1.3.0",
            "1.3.0",
            CHANGELOG.replace("## [Unreleased]", "## [1.3.0]"),
            "no dated section",
        ),
        (
            "v1.3.0",
            "1.3.0",
            CHANGELOG.replace(
                "## [Unreleased]\n\n### Added\n\n- Not released yet.\n", "## [1.3.0] - 2026-12-01\n"
            ),
            "section for 1.3.0 is empty",
        ),
        (
            "v1.2.0",
            "1.2.0",
            CHANGELOG + "\n## [1.2.0] - 2026-12-02\n\n- Again.\n",
            "two sections for 1.2.0",
        ),
    ],
)
def test_a_release_that_does_not_add_up_is_refused(
    tmp_path: Path, tag: str, version: str, changelog: str, message: str
) -> None:
    completed = _check(tag, _root(tmp_path, version=version, changelog=changelog))
    assert completed.returncode == 1
    assert completed.stdout == ""
    assert message in completed.stderr


def test_this_repository_can_release_its_current_version() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    completed = _check(f"v{version}", ROOT)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip()
