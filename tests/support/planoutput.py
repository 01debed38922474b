"""What ``jev-select plan --json`` prints, checked against ``schemas/plan-output.schema.json``.

The document's ``report`` refers to ``report.schema.json`` and its ``preview`` to
``preview.schema.json`` by their file names; the registry here serves them under those names, as
the files sit side by side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from jev_select import contracts as c

__all__ = ["plan_output_schema", "preview_schema", "validate_plan_output"]

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "jev_select" / "schemas"


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text("utf-8"))
    return loaded


def plan_output_schema() -> dict[str, Any]:
    return _load(c.PLAN_OUTPUT_SCHEMA_FILE)


def preview_schema() -> dict[str, Any]:
    return _load(c.PREVIEW_SCHEMA_FILE)


def validate_plan_output(value: object) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``value`` is a valid ``plan --json`` output."""
    registry: Registry[Any] = Registry().with_resources(
        (name, Resource.from_contents(_load(name)))
        for name in (c.REPORT_SCHEMA_FILE, c.PREVIEW_SCHEMA_FILE)
    )
    jsonschema.Draft202012Validator(plan_output_schema(), registry=registry).validate(value)
