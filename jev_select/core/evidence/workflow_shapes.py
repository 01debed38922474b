"""Which workflow shapes the evidence builder understands (docs/reference.md,
"Jobs in the evidence", "Workflow shapes").

Pure. Every key GitHub accepts in a workflow, a job, a step or ``defaults.run`` is in exactly
one of two tables here: *modelled* (the builder reads it into the evidence) or *dropped* (it
cannot change which commands a job runs, so leaving it out loses nothing). A key in neither
table, a key whose value has a shape the builder cannot read, a step that is neither ``run``,
``uses`` nor a supported concurrency form, and a non-mapping item make the job's shape
*unsupported*: the caller then records ``workflow-shape-unsupported:<wf>#<job>``, so that any
doubt about what a job runs keeps its task running.

Step concurrency (GitHub's ``background``, ``wait``, ``wait-all``, ``cancel`` and
``parallel``) is flattened here: every step that runs a command or an action comes out in
document order, ``parallel`` items with the index of their group (0 for the first ``parallel``
step of the job) and ``background: true`` steps marked as such. ``wait``, ``wait-all`` and
``cancel`` only synchronise or stop steps listed elsewhere, so they contribute no entry. Forms
that GitHub's documentation does not show (a ``parallel`` group inside another, ``background``
or a synchronisation step inside a group, keys beside ``parallel`` other than ``name`` and
``id``) are unsupported rather than guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from .files import YamlMapping

__all__ = [
    "DEFAULTS_RUN_KEYS",
    "DROPPED_JOB_KEYS",
    "DROPPED_STEP_KEYS",
    "DROPPED_WORKFLOW_KEYS",
    "MODELLED_JOB_KEYS",
    "MODELLED_STEP_KEYS",
    "MODELLED_WORKFLOW_KEYS",
    "FlatStep",
    "JobSteps",
    "flatten_steps",
    "job_shape_supported",
    "workflow_shape_supported",
]

# GitHub Actions vocabulary (not product contracts).
RUN: Final = "run"
USES: Final = "uses"
WITH: Final = "with"
NAME: Final = "name"
ID: Final = "id"
SHELL: Final = "shell"
WORKING_DIRECTORY: Final = "working-directory"
BACKGROUND: Final = "background"
PARALLEL: Final = "parallel"
WAIT: Final = "wait"
WAIT_ALL: Final = "wait-all"
CANCEL: Final = "cancel"
STEPS: Final = "steps"
MATRIX: Final = "matrix"
DEFAULTS: Final = "defaults"
CONTINUE_ON_ERROR: Final = "continue-on-error"

MODELLED_WORKFLOW_KEYS: Final = frozenset({"jobs", DEFAULTS})
DROPPED_WORKFLOW_KEYS: Final = frozenset(
    {"name", "run-name", "on", "env", "permissions", "concurrency", "cache-mode"}
)
MODELLED_JOB_KEYS: Final = frozenset({NAME, "needs", STEPS, DEFAULTS, USES, WITH})
DROPPED_JOB_KEYS: Final = frozenset(
    {
        "runs-on",
        "if",
        "env",
        "permissions",
        "environment",
        "concurrency",
        "timeout-minutes",
        CONTINUE_ON_ERROR,
        "strategy",
        "services",
        "container",
        "outputs",
        "secrets",
        "cache-mode",
        "snapshot",
    }
)
MODELLED_STEP_KEYS: Final = frozenset(
    {NAME, RUN, USES, WITH, SHELL, WORKING_DIRECTORY, BACKGROUND, PARALLEL, WAIT, WAIT_ALL, CANCEL}
)
DROPPED_STEP_KEYS: Final = frozenset({ID, "if", "env", CONTINUE_ON_ERROR, "timeout-minutes"})
DEFAULTS_RUN_KEYS: Final = frozenset({SHELL, WORKING_DIRECTORY})

_KNOWN_WORKFLOW_KEYS = MODELLED_WORKFLOW_KEYS | DROPPED_WORKFLOW_KEYS
_KNOWN_JOB_KEYS = MODELLED_JOB_KEYS | DROPPED_JOB_KEYS
_COMMAND_STEP_KEYS = (MODELLED_STEP_KEYS | DROPPED_STEP_KEYS) - {PARALLEL, WAIT, WAIT_ALL, CANCEL}
# Keys shown beside the synchronisation keywords; ``if`` is refused by GitHub there.
_SYNC_STEP_KEYS = frozenset({NAME, ID, CONTINUE_ON_ERROR})
_GROUP_STEP_KEYS = frozenset({PARALLEL, NAME, ID})
_KINDS = (RUN, USES, WAIT, WAIT_ALL, CANCEL, PARALLEL)


@attrs.frozen
class FlatStep:
    """A step that runs a command or an action, where it sits, and its concurrency marks."""

    step: YamlMapping
    path: tuple[str | int, ...]  # below the job mapping, e.g. ("steps", 3, "parallel", 1)
    parallel: int | None = None
    background: bool = False


@attrs.frozen
class JobSteps:
    """A job's runnable steps in document order; ``supported`` is False on any doubt."""

    steps: tuple[FlatStep, ...]
    supported: bool


def _defaults_supported(owner: YamlMapping) -> bool:
    if DEFAULTS not in owner:
        return True
    defaults = owner[DEFAULTS]
    if not isinstance(defaults, Mapping) or set(defaults) - {RUN}:
        return False
    run = defaults.get(RUN, {})
    return isinstance(run, Mapping) and not set(run) - DEFAULTS_RUN_KEYS


def workflow_shape_supported(workflow: YamlMapping) -> bool:
    """Whether every top-level key of a workflow is known and ``defaults`` is readable."""
    return not set(workflow) - _KNOWN_WORKFLOW_KEYS and _defaults_supported(workflow)


def job_shape_supported(job: YamlMapping) -> bool:
    """Whether a job's own keys are known and consistent (steps are checked separately).

    A job either calls a reusable workflow (``uses``, optional ``with``, no ``steps``) or runs
    ``steps`` (no ``with``).
    """
    if set(job) - _KNOWN_JOB_KEYS or not _defaults_supported(job):
        return False
    if USES in job:
        return isinstance(job[USES], str) and STEPS not in job and DEFAULTS not in job
    return WITH not in job and isinstance(job.get(STEPS), list)


def _kind(step: YamlMapping) -> str | None:
    present = [kind for kind in _KINDS if kind in step]
    return present[0] if len(present) == 1 else None


def _readable(step: YamlMapping, kind: str) -> bool:
    """A ``uses`` string, or a ``run`` scalar (GitHub reads a plain ``7`` as the text "7")."""
    value = step.get(kind)
    if kind == USES:
        return isinstance(value, str)
    return kind == RUN and isinstance(value, str | int | float) and value is not None


def _command_step_supported(step: YamlMapping, *, in_group: bool) -> bool:
    allowed = _COMMAND_STEP_KEYS - {BACKGROUND} if in_group else _COMMAND_STEP_KEYS
    if set(step) - allowed:
        return False
    kind = _kind(step)
    if kind is None or not _readable(step, kind):
        return False
    if kind == USES and (SHELL in step or WORKING_DIRECTORY in step):
        return False
    return isinstance(step.get(BACKGROUND, False), bool)


def _sync_step_supported(step: YamlMapping, kind: str) -> bool:
    if set(step) - (_SYNC_STEP_KEYS | {kind}):
        return False
    value = step[kind]
    if kind == WAIT:
        return isinstance(value, str) or (
            isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
        )
    if kind == WAIT_ALL:
        return value is None or value is True
    return isinstance(value, str)


def flatten_steps(raw_steps: Sequence[object]) -> JobSteps:
    """The runnable steps of a job's ``steps`` list, with its support verdict."""
    flat: list[FlatStep] = []
    supported = True
    group = 0
    for index, step in enumerate(raw_steps):
        if not isinstance(step, Mapping):
            supported = False
            continue
        kind = _kind(step)
        if kind in (RUN, USES):
            if not _command_step_supported(step, in_group=False):
                supported = False
                if not _readable(step, kind):
                    continue
            flat.append(FlatStep(step, (STEPS, index), background=step.get(BACKGROUND) is True))
        elif kind == PARALLEL:
            items = step[PARALLEL]
            if set(step) - _GROUP_STEP_KEYS or not isinstance(items, list) or not items:
                supported = False
            for position, item in enumerate(items if isinstance(items, list) else ()):
                if not isinstance(item, Mapping):
                    supported = False
                    continue
                if not _command_step_supported(item, in_group=True):
                    supported = False
                if _readable(item, RUN) or _readable(item, USES):
                    flat.append(FlatStep(item, (STEPS, index, PARALLEL, position), parallel=group))
            group += 1
        elif kind in (WAIT, WAIT_ALL, CANCEL):
            if not _sync_step_supported(step, kind):
                supported = False
        else:
            supported = False
    return JobSteps(tuple(flat), supported)
