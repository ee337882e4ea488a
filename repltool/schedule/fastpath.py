"""The same simulation as :mod:`repltool.schedule.logical_clock`, without events.

Every condition the coordinator waits for becomes true at a time that is
already known when it starts waiting, because it only depends on
transactions dispatched earlier:

* GAQ slot for the k-th transaction: entry ``k - checkpoint_group`` and all
  entries before it have committed, i.e. at ``PM[k - G]`` where ``PM`` is
  the running maximum of commit times in relay order;
* barrier: every dispatched transaction committed, at ``PM[k - 1]``;
* LWM: inside a group (between barriers) sequence numbers are contiguous,
  so ``clock_leq(last_committed, LWM)`` holds once the entry whose
  ``sequence_number`` is ``max(last_committed, sequence_number of the
  barrier)`` and all before it committed (the LWM is reset to 0 at the
  barrier, so the barrier itself must be done first);
* a worker: first-available needs one whose last transaction committed,
  at-most-one one whose last transaction started (its queue is empty).

Worker choice is the lowest id among the eligible ones, else the one that
becomes eligible first.  Two heaps give that in O(log workers).  Only the
last ``checkpoint_group`` values of ``PM`` are needed (an older LWM target
was already reached when the GAQ had room), so memory is bounded and the
input may be a one-pass iterator.
"""

from __future__ import annotations

from collections.abc import Iterable
from heapq import heappop, heappush

from .columns import clock_rows, transaction_at
from .logical_clock import build_result, check_cost, classify
from .model import Policy, SimConfig, SimResult, SimTransaction, Span, WaitTimes

_INF = float("inf")


def simulate_fast(transactions: Iterable[SimTransaction],
                  config: SimConfig = SimConfig()) -> SimResult:
    """Simulate the LOGICAL_CLOCK applier in one pass.

    Gives the same :class:`SimResult` as
    :func:`~repltool.schedule.logical_clock.simulate_events`.  The loop is
    deliberately one long function with local variables only: it is the hot
    path (about 1 µs per transaction on CPython 3.11).

    :raises SimulationError: on inconsistent timestamps (unless
        ``config.lenient``) or an invalid cost.
    :raises UsageError: on an invalid ``config``.
    """
    config.check()
    gaq_size = config.checkpoint_group
    ring_size = gaq_size + 1
    ring = [0.0] * ring_size           # PM[i] lives at ring[i % ring_size]
    overhead = config.coordinator_overhead
    pco = config.preserve_commit_order
    at_most_one = config.policy is Policy.AT_MOST_ONE
    drain_at_start = config.dequeue_at == "start"
    lenient = config.lenient
    busy_time = [0.0] * config.workers
    release = [0.0] * config.workers   # commit time of each worker's last transaction
    eligible: list[int] = list(range(config.workers))   # heap of worker ids
    pending: list[tuple[float, int]] = []                # heap of (eligible at, id)
    trace: list[Span] | None = [] if config.trace else None
    warnings: list[str] = []
    w_gaq = w_barrier = w_lwm = w_worker = w_commit = 0.0
    total = clock = all_done = last_commit = 0.0
    last_seq = seg_start = seg_seq = 0
    barriers = index = 0
    # columns (SimColumns) are read as such; a transaction object is rebuilt
    # from them only for a message or a trace span
    for index, (lc, sn, cost, new_file, trx) in enumerate(clock_rows(transactions)):
        try:
            valid = 0.0 <= cost < _INF
        except TypeError:
            valid = False
        if not valid:
            check_cost(transaction_at(transactions, trx, index), index)
        t = clock
        if index >= gaq_size:
            ready = ring[(index - gaq_size) % ring_size]
            if ready > t:
                w_gaq += ready - t
                t = ready
        # classify's answer for a plain transaction, inline in this per-transaction
        # loop: tests/binlog/test_clock_rules.py holds it to classify
        if (0 < lc < sn and sn == last_seq + 1 and not new_file
                and index):
            barrier = False
            last_seq = sn
        else:
            barrier, last_seq = classify(transaction_at(transactions, trx, index), index,
                                         last_seq, lenient, warnings)
        if barrier:
            barriers += 1
            if all_done > t:
                w_barrier += all_done - t
                t = all_done
            seg_start, seg_seq = index, sn
        else:
            target = seg_start + (lc - seg_seq if lc > seg_seq else 0)
            if target > index - ring_size:     # older targets are already reached
                ready = ring[target % ring_size]
                if ready > t:
                    w_lwm += ready - t
                    t = ready
        while pending and pending[0][0] <= t:
            heappush(eligible, heappop(pending)[1])
        if eligible:
            worker = heappop(eligible)
        else:
            ready, worker = heappop(pending)
            w_worker += ready - t
            t = ready
        clock = dispatch = t + overhead
        start = release[worker]
        if start < dispatch:
            start = dispatch
        end = start + cost
        commit = end
        if pco and last_commit > end:
            commit = last_commit
            w_commit += commit - end
        last_commit = commit
        release[worker] = commit
        if at_most_one:
            heappush(pending, (start if drain_at_start else end, worker))
        else:
            heappush(pending, (commit, worker))
        busy_time[worker] += cost
        total += cost
        if commit > all_done:
            all_done = commit
        ring[index % ring_size] = all_done
        if trace is not None:
            trx = transaction_at(transactions, trx, index)
            trace.append(Span(worker, sn, trx.gtid, dispatch, start, end, commit,
                              barrier, trx.pos))
    count = index + 1 if barriers else 0     # the first transaction is always a barrier
    waits = WaitTimes(gaq_full=w_gaq, barrier=w_barrier, lwm=w_lwm,
                      no_free_worker=w_worker, commit_order=w_commit)
    return build_result(config, count, all_done, total, busy_time, waits, barriers,
                        warnings, trace)
