"""Strict validation of a System One answer (docs/reference.md, "Response validation"): pure, no
I/O.

Every defect is reduced to one of the request codes of docs/reference.md, "Error mapping"; nothing
from the body is kept beyond the scores, the model name and the token counts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TypeGuard

import attrs

from .. import contracts as c
from .jsonutil import JsonError, code_unit_key, strict_loads
from .models import Usage

__all__ = ["ValidatedResponse", "validate_response"]


@attrs.frozen
class ValidatedResponse:
    """A checked response. ``scores`` is set exactly when ``error`` is None; ``model`` and
    ``usage`` are whatever could be extracted, even from an invalid response."""

    scores: Mapping[str, float] | None
    model: str | None
    usage: Usage | None
    error: str | None


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _token_count(value: object) -> int | None:
    if not _is_number(value):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    count = int(value)
    if not 0 <= count <= c.MAX_SAFE_INTEGER:
        return None
    return count


def _extract_model(document: Mapping[str, object]) -> str | None:
    model = document.get(c.RESPONSE_FIELD_MODEL)
    if isinstance(model, str) and re.fullmatch(c.MODEL_PATTERN, model):
        return model
    return None


def _extract_usage(document: Mapping[str, object]) -> Usage | None:
    usage = document.get(c.RESPONSE_FIELD_USAGE)
    if not isinstance(usage, dict):
        return None
    input_tokens = _token_count(usage.get(c.USAGE_FIELD_INPUT_TOKENS))
    output_tokens = _token_count(usage.get(c.USAGE_FIELD_OUTPUT_TOKENS))
    if input_tokens is None or output_tokens is None:
        return None
    return Usage(input_tokens, output_tokens)


def _score(answer: object) -> float | None:
    if not isinstance(answer, dict) or answer.get(c.ANSWER_FIELD_TYPE) != c.QUESTION_TYPE:
        return None
    value = answer.get(c.QUESTION_TYPE)
    if not _is_number(value):
        return None
    if isinstance(value, int) and not 0 <= value <= 1:
        return None  # also keeps huge integers away from float()
    score = float(value)
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        return None
    return score


def validate_response(
    body: bytes, asked_ids: Sequence[str], expected_model: str
) -> ValidatedResponse:
    """Check a 2xx body against docs/reference.md, "Response validation" for a request that asked
    ``asked_ids``."""
    try:
        document = strict_loads(body)
    except JsonError:
        return ValidatedResponse(None, None, None, c.REASON_JEV_ERROR)

    if not isinstance(document, dict):
        return ValidatedResponse(None, None, None, c.REASON_INVALID_RESPONSE)
    model = _extract_model(document)
    usage = _extract_usage(document)

    def invalid() -> ValidatedResponse:
        return ValidatedResponse(None, model, usage, c.REASON_INVALID_RESPONSE)

    if document.get(c.RESPONSE_FIELD_MODEL) != expected_model or model is None or usage is None:
        return invalid()
    answers = document.get(c.RESPONSE_FIELD_ANSWERS)
    if not isinstance(answers, dict) or set(answers) != set(asked_ids):
        return invalid()
    scores: dict[str, float] = {}
    for task_id in sorted(asked_ids, key=code_unit_key):
        score = _score(answers[task_id])
        if score is None:
            return invalid()
        scores[task_id] = score
    return ValidatedResponse(scores, model, usage, None)
