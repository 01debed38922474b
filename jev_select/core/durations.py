"""Durations as the report states them (docs/reference.md, "Report fields")."""

from __future__ import annotations

__all__ = ["milliseconds_between"]


def milliseconds_between(start: float, end: float) -> float:
    """Milliseconds from ``start`` to ``end``, two readings of one clock in seconds.

    Never negative: readings taken on different threads may arrive in either order.
    """
    return max(0.0, (end - start) * 1000.0)
