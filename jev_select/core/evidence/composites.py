"""Composite actions in the evidence: the steps of an action that runs steps (docs/reference.md,
"Composite actions"). Pure.

A step that uses a composite action, local or another repository's, carries the action's steps,
expanded like a job's own steps: their commands are read for package scripts, nested ``uses:``
join the task's actions and expand in turn, up to ``COMPOSITE_ACTION_MAX_DEPTH`` actions in one
chain. Another repository's action shows only short commands (``COMPOSITE_REMOTE_*``); every
command is still read in full.
"""

from __future__ import annotations

from collections.abc import Mapping

from ... import contracts as c
from .budget import ExpansionBudget
from .effects import Effect, Frame, Use, Warn
from .expressions import Values, inputs_of_call, substitute
from .files import JsonValue, MetadataFiles, ResolvedAction, is_dynamic
from .steps import (
    SELF_PREFIX,
    EvidenceStep,
    commands_of,
    directory_text,
    is_cut,
    local_action,
    shown_run,
    site_of,
    step_entry,
    step_label,
    step_run,
)
from .workflow_shapes import NAME, RUN, SHELL, STEPS, USES, WITH, WORKING_DIRECTORY

__all__ = ["CompositeSteps"]

_DOCKER_PREFIX = "docker://"
_CURRENT_DIRECTORY = "."
_INPUTS = "inputs"
_RUNS = "runs"
_USING = "using"
_COMPOSITE = "composite"


class CompositeSteps:
    """The composite-action part of the jobs phase (``jobs.JobsPhase`` derives from it)."""

    files: MetadataFiles
    budget: ExpansionBudget
    _frames: list[Frame]

    def _emit(self, effect: Effect) -> None:
        raise NotImplementedError

    def _composite(
        self,
        uses: str,
        options: Mapping[str, JsonValue] | None,
        chain: tuple[str, ...],
        workflow: str,
        job: str,
    ) -> list[EvidenceStep] | None:
        """The steps of the composite action ``uses`` names, or None when it is none (or cannot
        be read yet: phase 2 reports that gap)."""
        if uses.startswith(_DOCKER_PREFIX) or is_dynamic(uses):
            return None
        outcome = self.files.action(uses)
        if not isinstance(outcome, ResolvedAction):
            return None
        data = outcome.document.data
        runs = data.get(_RUNS)
        if not isinstance(runs, Mapping) or runs.get(_USING) != _COMPOSITE:
            return None
        identity = f"{outcome.repository}@{outcome.commit}:{outcome.file}"
        if identity in chain:
            self._emit(Warn(c.GAP_COMPOSITE_ACTION_CYCLE.warning(uses)))
            return None
        if len(chain) >= c.COMPOSITE_ACTION_MAX_DEPTH:
            self._emit(Warn(c.GAP_COMPOSITE_ACTION_DEPTH_LIMIT.warning(uses)))
            return None
        raw_steps = runs.get(STEPS)
        if not isinstance(raw_steps, list):
            self._emit(Warn(c.GAP_ACTION_METADATA_INVALID.warning(uses)))
            return None
        if not self._pay_composite(len(raw_steps)):
            self._emit(Warn(c.GAP_COMPOSITE_ACTION_DEPTH_LIMIT.warning(uses)))
            return None
        values: Values = {_INPUTS: inputs_of_call(data.get(_INPUTS), options)}
        remote = outcome.resolved_sha is not None
        shown = c.COMPOSITE_REMOTE_RUN_BYTES if remote else None
        steps: list[EvidenceStep] = []
        for position, step in enumerate(raw_steps):
            if not isinstance(step, Mapping):
                self._emit(Warn(c.GAP_ACTION_METADATA_INVALID.warning(uses)))
                continue
            # A composite step starts in the workspace, whatever the job's defaults say.
            raw_directory = step.get(WORKING_DIRECTORY)
            directory = (
                directory_text(substitute(raw_directory, values))
                if isinstance(raw_directory, str)
                else _CURRENT_DIRECTORY
            )
            entry = step_entry(step, directory, values)
            shell = step.get(SHELL)
            shell_name = shell if isinstance(shell, str) else None
            if shell_name is not None:
                entry[SHELL] = shell_name
            steps.append(entry)
            step_uses = step.get(USES)
            if isinstance(step_uses, str):
                if step_uses.startswith(SELF_PREFIX):
                    step_uses = local_action(step_uses, [])
                nested_with = entry.get(WITH)
                passed = nested_with if isinstance(nested_with, dict) else None
                self._emit(Use(step_uses, passed))
                nested = self._composite(step_uses, passed, (*chain, identity), workflow, job)
                if nested is not None:
                    entry[STEPS] = nested
            run = entry.get(RUN)
            if isinstance(run, str):
                site = site_of(
                    outcome.document,
                    [_RUNS, STEPS, position, RUN],
                    workflow=workflow,
                    job=job,
                    step=step_label(step, position),
                    file=outcome.file,
                    action=uses,
                )
                # The whole command is scanned; only the text shown is bounded.
                for command, where in commands_of(run, directory, {}, ({},)):
                    self._emit(step_run(command, where, site, shell=shell_name))
                if shown is not None:
                    entry[RUN], shown = shown_run(run, shown)
        if remote:
            # A script the evidence does not show, in a step without a name, says nothing.
            steps = [
                entry
                for entry in steps
                if NAME in entry or USES in entry or not is_cut(entry.get(RUN))
            ]
        return steps

    def _pay_composite(self, count: int) -> bool:
        """Composite steps join the evidence tree: inside an expansion its size pays for them."""
        if self._frames:
            self._frames[-1].size += count
            return True
        return self.budget.take_nodes(count)
