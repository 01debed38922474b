"""Exceptions that carry only fixed identifiers, never a supplied value."""

from __future__ import annotations

__all__ = ["InputError", "PlanningFailure"]


class InputError(Exception):
    """An input failed validation. Carries only the field name (``field``)."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field

    def __str__(self) -> str:
        return self.field


class PlanningFailure(Exception):
    """A hard failure of spec §3.2. Carries only the fixed failure code (``code``)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code

    def __str__(self) -> str:
        return self.code
