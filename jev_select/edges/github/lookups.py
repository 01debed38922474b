"""The lookups of the metadata phase: GitHub's (concurrent, bounded as a whole) and a snapshot's.

External actions and reusable workflows of other repositories are fetched through
``GitHubApi`` with at most ``METADATA_LOOKUP_IN_FLIGHT`` lookups in flight, all of them within
one overall bound of ``METADATA_LOOKUP_BOUND_S`` seconds that starts with the first lookup; each
request also keeps its own 10-second bound. A lookup not finished by the overall bound counts
as missing (its task gets the usual gap) and is not waited for: requests run in daemon threads
and end on their own at the bound.

The pure evidence builder asks for lookups one at a time through ``fetch_action`` and
``fetch_workflow``. ``MetadataLookups`` answers from what it has and records what it has not;
the metadata phase (``core.evidence.resolve.resolve_with_lookups``, the one entry point of every
command, re-exported here) then calls ``run_pending`` to fetch the recorded lookups together
and builds the evidence again, until nothing new is asked (a reusable workflow fetched in one
round can name further lookups). Each distinct lookup is made once. ``SnapshotLookups`` answers
from a replay case's recorded action files and never asks anything.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol, TypeAlias

from ... import contracts as c
from ...contracts import LookupFailure

if TYPE_CHECKING:
    from ...core.evidence.resolve import ActionFile, LookupOutcome

__all__ = ["LookupApi", "MetadataLookups", "SnapshotLookups"]

_ACTION = "action"
_WORKFLOW = "workflow"

_Key: TypeAlias = "tuple[str, str, str, str, str]"  # kind, owner, repo, path, ref
_Outcome: TypeAlias = "LookupOutcome"


class LookupApi(Protocol):
    """What the lookups need from ``GitHubApi``."""

    def set_deadline(self, deadline: float) -> None: ...

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> _Outcome: ...

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> _Outcome: ...


class MetadataLookups:
    """Answers the evidence builder's lookups from one run's bounded, concurrent fetches."""

    def __init__(
        self,
        api: LookupApi | None = None,
        *,
        api_factory: Callable[[], LookupApi | None] | None = None,
        bound_s: float = c.METADATA_LOOKUP_BOUND_S,
        in_flight: int = c.METADATA_LOOKUP_IN_FLIGHT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # ``api_factory`` is called on the first lookup only, so that runs without lookups never
        # load the HTTP client.
        self._api = api
        self._make_api = api_factory
        self._bound_s = bound_s
        self._in_flight = in_flight
        self._clock = clock
        self._deadline: float | None = None
        self._results: dict[_Key, _Outcome] = {}
        self._pending: list[_Key] = []

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> _Outcome:
        return self._answer((_ACTION, owner, repo, subpath, ref))

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> _Outcome:
        return self._answer((_WORKFLOW, owner, repo, path, ref))

    def _answer(self, key: _Key) -> _Outcome:
        if key in self._results:
            return self._results[key]
        if key not in self._pending:
            self._pending.append(key)
        return LookupFailure.MISSING  # for this round: the next one has the answer

    def run_pending(self) -> bool:
        """Fetch every lookup asked since the last call; False when there was none to make."""
        pending = [key for key in self._pending if key not in self._results]
        self._pending.clear()
        if not pending:
            return False
        if self._make_api is not None:
            self._api = self._make_api()
            self._make_api = None
        if self._api is None:
            self._results.update(dict.fromkeys(pending, LookupFailure.MISSING))
            return True
        if self._deadline is None:
            self._deadline = self._clock() + self._bound_s
            self._api.set_deadline(self._deadline)
        self._results.update(self._fetch_all(self._api, pending, self._deadline))
        return True

    def _fetch_all(self, api: LookupApi, keys: list[_Key], deadline: float) -> dict[_Key, _Outcome]:
        lock = threading.Condition()
        queue = list(keys)
        done: dict[_Key, _Outcome] = {}

        def work() -> None:
            while True:
                with lock:
                    if not queue:
                        return
                    key = queue.pop(0)
                kind, owner, repo, path, ref = key
                fetch = api.fetch_action if kind == _ACTION else api.fetch_workflow
                try:
                    outcome = fetch(owner, repo, path, ref)
                except Exception:  # a failing lookup is a missing one
                    outcome = LookupFailure.MISSING
                with lock:
                    done[key] = outcome
                    lock.notify_all()

        for _ in range(min(self._in_flight, len(keys))):
            # Daemon threads: a lookup still running at the bound never delays the process.
            threading.Thread(target=work, daemon=True, name="jev-select-lookup").start()
        with lock:
            while len(done) < len(keys):
                remaining = deadline - self._clock()
                if remaining <= 0:
                    break
                lock.wait(remaining)
            queue.clear()  # nothing more starts once the bound has passed
            finished = dict(done)
        return {key: finished.get(key, LookupFailure.MISSING) for key in keys}


class SnapshotLookups:
    """A replay case's recorded action files (``"owner/repo[/path]@ref"`` to the file); every
    other action and every reusable workflow of another repository is missing, as it was when
    the case was recorded."""

    def __init__(self, actions: Mapping[str, ActionFile]) -> None:
        self._actions = actions

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> LookupOutcome:
        name = "/".join(part for part in (owner, repo, subpath) if part)
        return self._actions.get(f"{name}@{ref}", LookupFailure.MISSING)

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> LookupOutcome:
        return LookupFailure.MISSING

    def run_pending(self) -> bool:
        return False
