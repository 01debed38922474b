"""Shared pytest configuration: hypothesis profiles and the markers of the test suite.

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
