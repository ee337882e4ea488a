"""Whole-trace assertions on small hand-made relay logs.

Each test states the scheduling rule it demonstrates; costs are integers so
times are exact.  Every example is run through both simulators.
"""

from __future__ import annotations

import pytest

from repltool.schedule import (Policy, SimConfig, SimResult, SimTransaction, Span, WaitTimes,
                               simulate, simulate_events)

from schedule_strategies import trx

FA, AMO = Policy.FIRST_AVAILABLE, Policy.AT_MOST_ONE


def run(log: list[SimTransaction], **config: object) -> SimResult:
    """Simulate with both models, check they agree, return the result."""
    cfg = SimConfig(trace=True, **config)  # type: ignore[arg-type]
    fast = simulate(log, cfg)
    assert simulate_events(log, cfg) == fast
    return fast


def test_commit_group_and_lwm() -> None:
    """A group sharing last_committed runs in parallel; the next waits for LWM.

    (1,2) and (1,3) start together once the barrier (0,1) committed; (3,4)
    waits until sequence_number 3 is done, which with commit order is when
    (1,2) committed, so (1,3) waited 2 to commit.
    """
    log = [trx(0, 1, 2), trx(1, 2, 3), trx(1, 3, 1), trx(3, 4, 1)]
    result = run(log, workers=2, policy=FA)
    assert result.trace == (
        Span(0, 1, None, 0, 0, 2, 2, True),
        Span(0, 2, None, 2, 2, 5, 5),
        Span(1, 3, None, 2, 2, 3, 5),
        Span(0, 4, None, 5, 5, 6, 6),
    )
    assert result.makespan == 6
    assert result.waits == WaitTimes(lwm=2 + 3, commit_order=2)
    assert result.utilisation == (6 / 6, 1 / 6)


def test_without_commit_order_commit_is_end() -> None:
    """Without commit order (1,3) commits at its end, but the LWM is a prefix.

    (1,3) is done at 3, yet the LWM reaches 3 only when (1,2) is done too,
    at 5; (3,4) then goes to the lowest-id idle worker.
    """
    log = [trx(0, 1, 2), trx(1, 2, 3), trx(1, 3, 1), trx(3, 4, 1)]
    result = run(log, workers=2, policy=FA, preserve_commit_order=False)
    assert result.trace == (
        Span(0, 1, None, 0, 0, 2, 2, True),
        Span(0, 2, None, 2, 2, 5, 5),
        Span(1, 3, None, 2, 2, 3, 3),
        Span(0, 4, None, 5, 5, 6, 6),
    )
    assert result.makespan == 6
    assert result.waits.commit_order == 0


def test_head_of_line_blocking() -> None:
    """The coordinator never looks ahead (gotcha 21).

    (1,4) could run at time 1, beside (1,2), but the coordinator is stuck
    on (2,3), which waits for (1,2); so (1,4) starts only at 11.
    """
    log = [trx(0, 1, 1), trx(1, 2, 10), trx(2, 3, 1), trx(1, 4, 1)]
    result = run(log, workers=2, policy=FA)
    assert result.trace == (
        Span(0, 1, None, 0, 0, 1, 1, True),
        Span(0, 2, None, 1, 1, 11, 11),
        Span(0, 3, None, 11, 11, 12, 12),
        Span(1, 4, None, 11, 11, 12, 12),
    )
    assert result.waits.lwm == 1 + 10


def test_at_most_one_queues_behind_a_busy_worker() -> None:
    """At-most-one picks the lowest-id worker whose queue is empty.

    Worker 0 is running (1,2) but its queue is empty, so (1,3) is queued
    behind it although worker 1 is idle; first-available waits for an idle
    worker and uses worker 1.  With ``dequeue_at="end"`` worker 0's queue
    holds (1,2)'s events until it ends, so worker 1 is chosen.
    """
    log = [trx(0, 1, 1), trx(1, 2, 10), trx(1, 3, 1)]
    amo = run(log, workers=2, policy=AMO, preserve_commit_order=False)
    assert amo.trace == (
        Span(0, 1, None, 0, 0, 1, 1, True),
        Span(0, 2, None, 1, 1, 11, 11),
        Span(0, 3, None, 1, 11, 12, 12),
    )
    fa = run(log, workers=2, policy=FA, preserve_commit_order=False)
    assert fa.trace is not None and fa.trace[2] == Span(1, 3, None, 1, 1, 2, 2)
    end = run(log, workers=2, policy=AMO, preserve_commit_order=False, dequeue_at="end")
    assert end.trace == fa.trace


def test_at_most_one_can_slow_down_with_more_workers() -> None:
    """WL#7165's caveat for policy A: more workers is not always faster.

    Found by search and shrunk: with 3 workers at-most-one queues (1,16)
    behind the long (1,11) on worker 1, because worker 1's queue is empty
    and workers 0 and 2 still have queued jobs; with 2 workers it lands on
    worker 0.  First-available is monotone on the same log.
    """
    costs = {8: 2, 10: 1, 11: 3, 14: 1, 16: 1}
    log = [trx(0, 1, 0)] + [trx(1, s, costs.get(s, 0)) for s in range(2, 17)]
    amo = [run(log, workers=w, policy=AMO, preserve_commit_order=False).makespan
           for w in (1, 2, 3)]
    assert amo == [8, 4, 5]
    fa = [run(log, workers=w, policy=FA, preserve_commit_order=False).makespan
          for w in (1, 2, 3)]
    assert fa == sorted(fa, reverse=True)


@pytest.mark.parametrize("log, why", [
    ([trx(0, 1, 3), trx(1, 2, 1), trx(0, 3, 1)], "last_committed == 0"),
    ([trx(0, 1, 3), trx(1, 2, 1), trx(1, 4, 1)], "sequence gap 2 -> 4"),
    ([trx(0, 1, 3), trx(1, 2, 1), trx(0, 1, 1, new_source_file=True)], "source Rotate"),
    ([trx(0, 1, 3), trx(1, 2, 1), trx(0, 0, 1)], "(0,0) transaction"),
])
def test_barrier_waits_for_everything(log: list[SimTransaction], why: str) -> None:
    """A new group (gotcha 22) starts only when all dispatched work committed.

    The third transaction would otherwise start at 3 beside (1,2), which
    waited for (0,1); as a barrier it waits until (1,2) is done at 4.
    """
    result = run(log, workers=3, policy=FA, preserve_commit_order=False)
    assert result.trace is not None
    assert [s.barrier for s in result.trace] == [True, False, True], why
    assert [s.start for s in result.trace] == [0, 3, 4], why
    assert result.waits == WaitTimes(lwm=3, barrier=1), why


def test_after_a_zero_transaction_comes_a_barrier() -> None:
    """The transaction after a (0,0) one is a new group too (last_seq == 0)."""
    log = [trx(0, 1, 1), trx(0, 0, 2), trx(1, 2, 1), trx(2, 3, 1)]
    result = run(log, workers=2, policy=FA)
    assert result.trace is not None
    assert [s.barrier for s in result.trace] == [True, True, True, False]
    assert [s.start for s in result.trace] == [0, 1, 3, 4]


def test_lwm_resets_at_a_barrier() -> None:
    """After a barrier the LWM is 0 until the barrier itself is done.

    (2,6) follows the gap barrier (1,5); its last_committed 2 was reached
    long ago, yet it waits for (1,5) because the GAQ's LWM was reset.
    """
    log = [trx(0, 1, 1), trx(1, 2, 1), trx(1, 3, 1), trx(1, 5, 4), trx(2, 6, 1)]
    result = run(log, workers=4, policy=FA)
    assert result.trace is not None
    assert result.trace[3] == Span(0, 5, None, 2, 2, 6, 6, True)
    assert result.trace[4] == Span(0, 6, None, 6, 6, 7, 7)
    assert result.waits.lwm == 1 + 4


def test_gaq_full_blocks_the_coordinator() -> None:
    """With checkpoint_group=2 the GAQ holds two entries; a third waits.

    All three (1,s) could run at once, but the third needs the head (0,1)
    purged... which happens at 1; the fourth needs (1,2) done at 5.
    """
    log = [trx(0, 1, 1), trx(1, 2, 4), trx(1, 3, 1), trx(1, 4, 1)]
    result = run(log, workers=4, policy=FA, checkpoint_group=2,
                 preserve_commit_order=False)
    assert result.trace is not None
    assert [s.start for s in result.trace] == [0, 1, 1, 5]
    assert result.waits.gaq_full == 4
    assert result.waits.lwm == 1


def test_coordinator_overhead_is_serial() -> None:
    """The coordinator spends its overhead after choosing a worker, per transaction.

    Three independent transactions on three workers start 1 apart; with one
    worker the makespan is the sum of costs plus overheads.
    """
    log = [trx(0, 1, 0), trx(1, 2, 5), trx(1, 3, 5), trx(1, 4, 5)]
    result = run(log, workers=3, policy=FA, coordinator_overhead=1)
    assert result.trace is not None
    assert [(s.worker, s.dispatch, s.start) for s in result.trace] == [
        (0, 1, 1), (0, 2, 2), (1, 3, 3), (2, 4, 4)]
    one = run(log, workers=1, policy=FA, coordinator_overhead=1)
    assert one.makespan == 15 + 4


def test_no_free_worker_wait() -> None:
    """With one worker busy, first-available makes the coordinator wait for it."""
    log = [trx(0, 1, 0), trx(1, 2, 5), trx(1, 3, 5)]
    result = run(log, workers=1, policy=FA)
    assert result.waits == WaitTimes(no_free_worker=5)
    assert result.makespan == 10
