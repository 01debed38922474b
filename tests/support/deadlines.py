"""What a deadline test may say about time, on a machine other test workers are loading.

A test that proves a bound is enforced asserts what the bound means first: the call failed as a
timeout, the server saw the client hang up (``FakeJev.wait_abandoned``), the bound handed down
is the one that was asked for. Time read off the wall clock is only supporting evidence, and
only in the two forms a loaded machine cannot break:

- a lower bound (``bound - EARLY_S``): the exchange lasted as long as the bound it was given, so
  no other, shorter limit ended it; scheduling delays only ever add time;
- an upper bound with ``LOAD_SLACK_S`` of slack: far more than any delay a busy runner adds, and
  far less than the servers of these tests take to answer when the bound is ignored (they answer
  after ``IGNORED_BOUND_S`` or never), so it fails only when the bound was not enforced.

A bound that is not enforced at all would often leave the test waiting on a server that drips
forever; :func:`no_hang` turns that into a failure.

Performance figures belong to the scripts under ``bench/``, never to a test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from support.hardstop import hard_stop

__all__ = ["EARLY_S", "IGNORED_BOUND_S", "LOAD_SLACK_S", "assert_ended_at_bound", "no_hang"]

LOAD_SLACK_S = 10.0
# How long a "slow" fake server of a deadline test waits before it answers: three times the
# slack, so a client that ignores its bound cannot pass for a slow one.
IGNORED_BOUND_S = 30.0
# Timer wake-ups may come a clock tick early; anything more means another limit applied.
EARLY_S = 0.05


def assert_ended_at_bound(elapsed: float, bound: float) -> None:
    """``elapsed`` seconds are what a call given ``bound`` seconds may take: at least the bound,
    and short of the slack past it."""
    assert elapsed >= bound - EARLY_S, f"ended after {elapsed:.3f} s, before its {bound} s bound"
    assert elapsed < bound + LOAD_SLACK_S, f"still running {elapsed:.3f} s into a {bound} s bound"


@contextmanager
def no_hang() -> Iterator[None]:
    """Fail the block (``HardStop``) once it has run for twice the slack: a bound that was not
    enforced, against a server that would never answer."""
    with hard_stop(2 * LOAD_SLACK_S):
        yield
