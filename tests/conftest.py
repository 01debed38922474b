"""Shared pytest configuration: hypothesis profiles and the markers of the test suite.

Platform markers, for the CI jobs on macOS and Windows: a test marked ``posix`` needs POSIX
semantics (shell scripts run as programs, permission bits) and is skipped on Windows;
one marked ``linux`` needs a Linux-only device such as ``/dev/full`` and is skipped elsewhere.
Both skips name their reason in the summary, so a platform's gaps stay visible.

Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE`` (default ``ci`` when ``CI=true``, else
``dev``):

- ``dev``: small and quick, with fresh random examples on every run, so local runs keep exploring;
- ``ci``: the same size, derandomized, so a CI verdict depends only on the code under test (a new
  example found locally becomes a pinned regression test instead);
- ``deep``: 10,000 examples per property, for an occasional long fuzzing session
  (``HYPOTHESIS_PROFILE=deep .venv/bin/pytest tests/test_fuzz.py -q``).

Tests that pin their own ``@settings(max_examples=...)`` keep them; the profile only sets what a
test leaves open.
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("ci", settings.get_profile("dev"), derandomize=True)
settings.register_profile(
    "deep",
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_DEFAULT_PROFILE = "ci" if os.environ.get("CI") == "true" else "dev"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", _DEFAULT_PROFILE))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "faults: end-to-end fault-injection matrix (real processes); deselect with -m 'not faults'",
    )
    config.addinivalue_line(
        "markers",
        "posix: needs POSIX semantics (shell scripts, permission bits); skipped on Windows",
    )
    config.addinivalue_line(
        "markers", "linux: needs a Linux-only facility such as /dev/full; skipped elsewhere"
    )


def platform_skip_reason(markers: set[str], os_name: str, platform: str) -> str | None:
    """Why a test with ``markers`` cannot run on ``os_name``/``platform``, or None."""
    if "posix" in markers and os_name != "posix":
        return f"needs POSIX semantics; this is {platform}"
    if "linux" in markers and platform != "linux":
        return f"needs a Linux-only facility; this is {platform}"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    del config
    for item in items:
        markers = {marker.name for marker in item.iter_markers()}
        reason = platform_skip_reason(markers, os.name, sys.platform)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
