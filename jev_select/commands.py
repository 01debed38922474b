"""Subcommands beyond ``plan`` (``analyze``, ``replay``, plan-block tools) register here."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[Any]) -> None:
    """Add every extra subcommand to the ``jev-select`` parser."""
