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

A lookup that fails for a cause other than "not found" (docs/reference.md, "Lookup failures and
the local cache") is kept as one record, the most severe seen: ``MetadataLookups.cause`` (the
API's causes and the overall bound's). When the phase ends (``run_pending`` finds nothing to
fetch) ``on_cause`` gets it once; local runs print it with ``announce_cause``. A ``LookupStore``
(local runs only: ``edges.github.cache``) answers commit-pinned lookups from disk before anything
is fetched and keeps what was fetched for them.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol, TextIO, TypeAlias, runtime_checkable

from ... import contracts as c
from ...contracts import LookupFailure
from ...core.lookup_causes import LookupCause, lookup_cause_line

if TYPE_CHECKING:
    from ...core.evidence.resolve import ActionFile, LookupOutcome

__all__ = [
    "ACTION",
    "WORKFLOW",
    "CauseRecorder",
    "LookupApi",
    "LookupStore",
    "MetadataLookups",
    "NoUsableApi",
    "SnapshotLookups",
    "announce_cause",
    "lookup_cause_of",
]

# The two kinds of lookup, as the lookup keys and the cache name them.
ACTION = "action"
WORKFLOW = "workflow"

_Key: TypeAlias = "tuple[str, str, str, str, str]"  # kind, owner, repo, path, ref
_Outcome: TypeAlias = "LookupOutcome"


class LookupApi(Protocol):
    """What the lookups need from ``GitHubApi``."""

    def set_deadline(self, deadline: float) -> None: ...

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> _Outcome: ...

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> _Outcome: ...


@runtime_checkable
class CauseRecorder(Protocol):
    """What ``GitHubApi`` adds for the causes of failed lookups (other ``LookupApi``s may lack
    it)."""

    def lookup_cause(self) -> LookupCause | None: ...

    def note_cause(self, kind: c.LookupCauseKind, reset_at: int | None = None) -> None: ...


class LookupStore(Protocol):
    """Lookups kept between runs (``edges.github.cache.LookupCache``); it decides what it keeps."""

    def get(self, kind: str, owner: str, repo: str, path: str, ref: str) -> ActionFile | None: ...

    def put(
        self, kind: str, owner: str, repo: str, path: str, ref: str, found: ActionFile
    ) -> None: ...


class NoUsableApi:
    """The ``LookupApi`` of a run whose ``GITHUB_API_URL`` is not usable: nothing is sent (the
    token must not go to another host), every lookup is missing, and the cause says why."""

    def __init__(self) -> None:
        self._cause: LookupCause | None = None

    def set_deadline(self, deadline: float) -> None:
        return None

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> _Outcome:
        self._cause = LookupCause(c.LookupCauseKind.UNREACHABLE, None, False)
        return LookupFailure.MISSING

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> _Outcome:
        return self.fetch_action(owner, repo, path, ref)

    def lookup_cause(self) -> LookupCause | None:
        return self._cause

    def note_cause(self, kind: c.LookupCauseKind, reset_at: int | None = None) -> None:
        return None


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
        cache: LookupStore | None = None,
        on_cause: Callable[[LookupCause], None] | None = None,
    ) -> None:
        # ``api_factory`` is called on the first lookup the cache cannot answer only, so that
        # runs without lookups never load the HTTP client.
        self._api = api
        self._make_api = api_factory
        self._bound_s = bound_s
        self._in_flight = in_flight
        self._clock = clock
        self._deadline: float | None = None
        self._results: dict[_Key, _Outcome] = {}
        self._pending: list[_Key] = []
        self._cache = cache
        self._on_cause = on_cause
        self._announced = False

    @property
    def cause(self) -> LookupCause | None:
        """The most severe cause of this run's failed lookups so far (None: every failure was
        "not found", or nothing failed)."""
        if isinstance(self._api, CauseRecorder):
            return self._api.lookup_cause()
        return None

    def fetch_action(self, owner: str, repo: str, subpath: str, ref: str) -> _Outcome:
        return self._answer((ACTION, owner, repo, subpath, ref))

    def fetch_workflow(self, owner: str, repo: str, path: str, ref: str) -> _Outcome:
        return self._answer((WORKFLOW, owner, repo, path, ref))

    def _answer(self, key: _Key) -> _Outcome:
        if key in self._results:
            return self._results[key]
        if self._cache is not None:
            kind, owner, repo, path, ref = key
            kept = self._cache.get(kind, owner, repo, path, ref)
            if kept is not None:
                self._results[key] = kept
                return kept
        if key not in self._pending:
            self._pending.append(key)
        return LookupFailure.MISSING  # for this round: the next one has the answer

    def run_pending(self) -> bool:
        """Fetch every lookup asked since the last call; False when there was none to make."""
        pending = [key for key in self._pending if key not in self._results]
        self._pending.clear()
        if not pending:
            self._announce()
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
        fetched = self._fetch_all(self._api, pending, self._deadline)
        self._results.update(fetched)
        if self._cache is not None:
            from ...core.evidence.files import ActionFile

            for (kind, owner, repo, path, ref), outcome in fetched.items():
                if isinstance(outcome, ActionFile):
                    self._cache.put(kind, owner, repo, path, ref, outcome)
        return True

    def _announce(self) -> None:
        """Hand the cause to ``on_cause`` once, when the phase ends."""
        if self._announced or self._on_cause is None:
            return
        cause = self.cause
        if cause is not None:
            self._announced = True
            self._on_cause(cause)

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
                fetch = api.fetch_action if kind == ACTION else api.fetch_workflow
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
        if len(finished) < len(keys) and isinstance(api, CauseRecorder):
            api.note_cause(c.LookupCauseKind.TIMED_OUT)
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


def lookup_cause_of(lookups: object) -> LookupCause | None:
    """The cause record of a run's lookups (``RunContext.lookups``), None for lookups that keep
    none (a replay snapshot, no lookups) or when nothing failed for a cause."""
    return lookups.cause if isinstance(lookups, MetadataLookups) else None


# The streams that were told already: one line per process (a real run's stderr), and one per
# captured stream when the command runs inside another program.
_TOLD: weakref.WeakSet[TextIO] = weakref.WeakSet()
_TOLD_LOCK = threading.Lock()
# On a terminal, the line starts by erasing the progress line it may be written over.
_ERASE_LINE = "\r\x1b[K"


def announce_cause(cause: LookupCause, stream: TextIO | None = None) -> None:
    """Print the cause line of ``cause`` on ``stream`` (default: stderr), once per stream.

    Every local command that looks things up (``plan``, ``check``, ``history``, whose dry run
    makes one set of lookups per change) says it once. A stream that cannot be written is left
    alone: the line is advice, never a reason to fail.
    """
    target = sys.stderr if stream is None else stream
    if target is None:
        return
    with _TOLD_LOCK:
        if target in _TOLD:
            return
        _TOLD.add(target)
    try:
        erase = _ERASE_LINE if target.isatty() else ""
        target.write(erase + lookup_cause_line(cause) + "\n")
        target.flush()
    except (AttributeError, OSError, ValueError):
        return
