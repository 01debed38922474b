"""The platform markers of conftest: which tests skip where, and that the skip says why."""

from __future__ import annotations

import pytest
from conftest import platform_skip_reason


@pytest.mark.parametrize(
    ("markers", "os_name", "platform", "reason"),
    [
        (set(), "nt", "win32", None),
        ({"posix"}, "posix", "linux", None),
        ({"posix"}, "posix", "darwin", None),
        ({"posix"}, "nt", "win32", "needs POSIX semantics; this is win32"),
        ({"linux"}, "posix", "linux", None),
        ({"linux"}, "posix", "darwin", "needs a Linux-only facility; this is darwin"),
        ({"linux"}, "nt", "win32", "needs a Linux-only facility; this is win32"),
        ({"posix", "faults"}, "nt", "win32", "needs POSIX semantics; this is win32"),
    ],
)
def test_platform_skip_reason(
    markers: set[str], os_name: str, platform: str, reason: str | None
) -> None:
    assert platform_skip_reason(markers, os_name, platform) == reason


def test_the_markers_are_registered(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":", 1)[0] for line in pytestconfig.getini("markers")}
    assert {"posix", "linux"} <= registered
