"""The effects of expanding a job, recorded so that a reused expansion can replay them
(docs/reference.md, "Reusable workflows and local actions"). Pure.

Expanding a job gives gaps, working-directory hints, provenance records, actions used and
commands to read. Outside an expansion they are applied to the task at once; inside one they are
recorded in order (``Frame``), and every task that reuses the expansion replays them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

import attrs

from ... import contracts as c
from .files import JsonValue
from .steps import EvidenceJob, JobSource, StepRun

__all__ = ["Effect", "Expansion", "ExpansionKey", "Frame", "Hint", "RecordEffect", "Use", "Warn"]


@attrs.frozen
class Warn:
    text: str


@attrs.frozen
class Hint:
    directory: str


@attrs.frozen
class RecordEffect:
    kind: str
    source: JobSource
    location: Mapping[str, int]


@attrs.frozen
class Use:
    action: str
    options: Mapping[str, JsonValue] | None  # the step's ``with``, JSON-safe


# The called workflow's identity, the call as written (it labels the called jobs and their
# gaps) and the caller's ``with`` (its inputs become part of the called commands).
ExpansionKey: TypeAlias = tuple[str, str, str]


@attrs.frozen(eq=False)
class Expansion:
    """A called workflow's expanded jobs and, in order, the effects expanding them had.

    ``jobs`` is shared by every reuse and never changed (the evidence is copied when its keys
    are sorted). ``size`` counts its job and step entries, nested expansions included.

    Expanding depended on the caller's chain only through its length and through the identities
    in ``reached`` (every call below checked for a cycle). The calls below were checked at most
    ``reach`` levels under ``depth``, the chain length it was expanded at; when none of them hit
    the depth limit (``limited``), any chain short enough for those checks to pass again gives
    the same expansion, provided it meets ``reached`` in exactly ``context``.
    """

    jobs: list[EvidenceJob]
    effects: tuple[Effect, ...]
    size: int
    depth: int
    reach: int
    limited: bool
    reached: frozenset[str]
    context: frozenset[str]

    def holds_for(self, chain: tuple[str, ...]) -> bool:
        if self.limited:
            depth_holds = len(chain) == self.depth
        else:
            depth_holds = len(chain) + self.reach < c.REUSABLE_WORKFLOW_MAX_DEPTH
        return depth_holds and self.reached.intersection(chain) == self.context


Effect: TypeAlias = "Warn | Hint | RecordEffect | Use | StepRun | Expansion"


@attrs.define
class Frame:
    """An expansion being computed: what it records instead of applying."""

    effects: list[Effect] = attrs.Factory(list)
    reached: set[str] = attrs.Factory(set)
    size: int = 0
    reach: int = 0
    limited: bool = False
