"""The System One questions, group states and request bodies (docs/reference.md, "Evidence object",
"Request body", "Question texts").

Pure: every function builds plain JSON values or their compact bytes. Key order matters because
request bodies and state hashes are compared byte for byte, so every object is built literally in
the documented order.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import contracts as c
from .jsonutil import code_unit_key, compact_json, sort_keys_deep
from .models import DiffGroup

__all__ = [
    "build_question",
    "build_questions",
    "build_state",
    "description_only_evidence",
    "request_body",
    "sha_state",
]


def description_only_evidence(description: str) -> dict[str, object]:
    """Evidence of a task that names no jobs and no context files (docs/reference.md,
    "Evidence object"), keys sorted."""
    return {
        "actions": [],
        "contextFiles": [],
        "description": description,
        "jobs": [],
        "packageScripts": [],
    }


def build_question(evidence: Mapping[str, object]) -> dict[str, object]:
    """One ``noul`` question about one task; the evidence is re-sorted so callers cannot skew it."""
    return {
        "type": c.QUESTION_TYPE,
        "instructions": {
            "judgment": c.QUESTION_JUDGMENT,
            "scope": c.QUESTION_SCOPE,
            "task": sort_keys_deep(evidence),
        },
        "criteria": {"true": c.QUESTION_TRUE, "false": c.QUESTION_FALSE},
    }


def build_questions(
    evidence_by_task: Mapping[str, Mapping[str, object]],
) -> dict[str, dict[str, object]]:
    """Questions of every task, keyed by task ID in code-unit order."""
    return {
        task_id: build_question(evidence_by_task[task_id])
        for task_id in sorted(evidence_by_task, key=code_unit_key)
    }


def sha_state(*, base_sha: str, head_sha: str, tested_sha: str) -> dict[str, object]:
    """The commit part shared by every group state; its size is the ``S`` of the sizing loop."""
    return {"base_sha": base_sha, "head_sha": head_sha, "tested_sha": tested_sha}


def build_state(
    *, base_sha: str, head_sha: str, tested_sha: str, group: DiffGroup, total: int
) -> dict[str, object]:
    """The ``state`` object of one group (docs/reference.md, "Request body"); ``base_sha`` is the
    diff base."""
    return {
        **sha_state(base_sha=base_sha, head_sha=head_sha, tested_sha=tested_sha),
        "changed_paths": list(group.paths),
        "diff": group.diff,
        "chunk": {
            "index": group.index,
            "total": total,
            "start_byte": group.start_byte,
            "end_byte": group.end_byte,
            "preceding_diff_headers": group.context,
            "scope": c.QUESTION_CHUNK_SCOPE,
        },
    }


def request_body(model: str, state: Mapping[str, object], questions: Mapping[str, object]) -> bytes:
    """The exact bytes of one System One request (compact JSON, UTF-8)."""
    body = {"model": model, "state": state, "questions": questions}
    return compact_json(body).encode("utf-8")
