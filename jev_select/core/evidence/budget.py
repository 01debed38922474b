"""The budget of one resolution's reusable-workflow expansion (docs/reference.md, "Reusable
workflows and local actions"). Pure: time comes in through the ``clock`` the edge hands over.

One ``ExpansionBudget`` is shared by every task of one resolution (``resolve_metadata``): the
called-workflow jobs it expands (each distinct expansion counts once, however often it is
reused), the job and step entries it places in the evidence (every reuse counts in full, since
the evidence is a tree), the distinct called workflows it reads, and the time spent expanding,
on the injected clock. Only time inside expansions counts, so that a run with many tasks and
context files to read does not spend the bound on them; ``spent_s`` carries the time of
earlier resolutions of the same phase (the lookup rounds). A call the budget cannot pay for
stays ``reusable-workflow-unresolved:<uses>``.
"""

from __future__ import annotations

from collections.abc import Callable

from ... import contracts as c
from ...errors import JevSelectError

__all__ = ["ExpansionBudget", "OverBudget"]


class OverBudget(JevSelectError):
    """The budget cannot pay for the call being expanded."""


class ExpansionBudget:
    """Limits and counters of one resolution; create one per ``resolve_metadata`` call."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] | None = None,
        bound_s: float = c.REUSABLE_EXPANSION_BOUND_S,
        spent_s: float = 0.0,
        max_jobs: int = c.REUSABLE_EXPANSION_MAX_JOBS,
        max_nodes: int = c.REUSABLE_EXPANSION_MAX_NODES,
        max_workflows: int = c.REUSABLE_EXPANSION_MAX_WORKFLOWS,
    ) -> None:
        self.clock = clock  # None: no time limit
        self.bound_s = bound_s
        self.spent_s = spent_s
        self.max_jobs = max_jobs
        self.max_nodes = max_nodes
        self.max_workflows = max_workflows
        self.jobs = 0  # called-workflow jobs expanded
        self.nodes = 0  # job and step entries placed in the evidence by expansion
        self.workflows: set[str] = set()  # called workflows read, as their calls name them
        self._started: float | None = None

    def start(self) -> None:
        """An outermost call begins expanding."""
        if self.clock is not None:
            self._started = self.clock()

    def stop(self) -> None:
        """The outermost call is expanded; its time joins ``spent_s``."""
        if self.clock is not None and self._started is not None:
            self.spent_s += self.clock() - self._started
        self._started = None

    def expired(self) -> bool:
        if self.clock is None:
            return False
        running = 0.0 if self._started is None else self.clock() - self._started
        return self.spent_s + running >= self.bound_s

    def take_job(self) -> None:
        """Pay for expanding one job of a called workflow, or raise ``OverBudget``."""
        if self.jobs >= self.max_jobs or self.expired():
            raise OverBudget
        self.jobs += 1

    def take_workflow(self, target: str) -> None:
        """Pay for reading the called workflow ``target`` (free once read), or raise."""
        if target in self.workflows:
            return
        if len(self.workflows) >= self.max_workflows or self.expired():
            raise OverBudget
        self.workflows.add(target)

    def take_nodes(self, count: int) -> bool:
        """Pay for ``count`` evidence entries; False (and nothing paid) when they do not fit."""
        if self.nodes + count > self.max_nodes:
            return False
        self.nodes += count
        return True
