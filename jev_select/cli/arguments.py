"""Argument types shared by the subcommands' parsers."""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["integer_in"]

# Plain decimal digits only: ``int`` alone would also take "+5", " 5", "5_000" and "٥".
_DECIMAL = re.compile(r"0|[1-9][0-9]*", re.ASCII)


def integer_in(
    low: int, high: int | None = None, *, name: str | None = None
) -> Callable[[str], int]:
    """An argparse ``type`` for a decimal integer from ``low`` to ``high`` (no upper bound when
    ``high`` is None). A refused value raises ``ValueError``, which argparse reports as
    "invalid NAME value"; ``name`` defaults to "integer from LOW to HIGH"."""

    def parse(text: str) -> int:
        if _DECIMAL.fullmatch(text) is None:
            raise ValueError()
        value = int(text)
        if value < low or (high is not None and value > high):
            raise ValueError()
        return value

    if name is None:
        name = f"integer from {low}" if high is None else f"integer from {low} to {high}"
    parse.__name__ = name
    return parse
