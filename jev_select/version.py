"""The package version and the User-Agent every HTTP request of the product sends."""

from __future__ import annotations

from . import contracts as c

__all__ = ["USER_AGENT", "__version__"]

# Written here rather than read from the installed distribution's metadata: importing
# ``importlib.metadata`` (and the ``email`` package it loads) and scanning ``sys.path`` for the
# distribution cost every run more than 10 ms, and a source tree that was never installed still
# knows its version. tests/test_supply_chain.py keeps it equal to pyproject.toml's.
__version__: str = "0.1.0"

USER_AGENT: str = f"{c.PRODUCT_NAME}/{__version__}"
