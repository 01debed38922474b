"""The package version and the User-Agent every HTTP request of the product sends."""

from __future__ import annotations

from importlib import metadata

from . import contracts as c

__all__ = ["USER_AGENT", "__version__"]

try:
    __version__: str = metadata.version(c.DISTRIBUTION_NAME)
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

USER_AGENT: str = f"{c.PRODUCT_NAME}/{__version__}"
