"""Plain-text tables for the terminal: columns padded to their widest cell.

Pure. Every command that prints a table (``analyze``, ``calibrate``, ``history``, ``rollout``,
``replay``) aligns it here, so they all look alike.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["align_columns"]


def align_columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """Each row as one line, cells padded to their column's widest cell and joined by two
    spaces, trailing spaces removed. Every row has the same number of cells."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
