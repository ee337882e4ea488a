"""Runs over several worker counts, the dependency bound and the knee.

``critical_path`` is the ideal bound: infinite workers, no coordinator
overhead, no commit order, only the dependencies the logical timestamps
imply.  ``knee`` picks the worker count worth configuring.
"""

from __future__ import annotations

import dataclasses
import re
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence

from ..errors import UsageError
from .columns import SimColumns, clock_rows, transaction_at
from .fastpath import simulate_fast
from .logical_clock import check_cost, classify
from .model import MAX_WORKERS, SimConfig, SimResult, SimTransaction, SweepResult

_INF = float("inf")
_ITEM = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_workers(text: str) -> list[int]:
    """Parse a worker list such as ``"1,2,4,8,16"``, ``"1-32"`` or ``"1-4,8"``.

    :returns: the counts, ascending, without duplicates.
    :raises UsageError: on empty items, non-numbers, 0, counts above 1024 or
        a descending range.

    Example::

        >>> parse_workers("8,1-3, 2")
        [1, 2, 3, 8]
    """
    counts: set[int] = set()
    for item in text.split(","):
        match = _ITEM.match(item)
        if match is None:
            raise UsageError(f"bad worker list {text!r}: {item.strip()!r} is not "
                             "N or N-M")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) is not None else low
        if low > high:
            raise UsageError(f"bad worker list {text!r}: range {low}-{high} descends")
        if low < 1 or high > MAX_WORKERS:
            raise UsageError(f"bad worker list {text!r}: worker counts must be in "
                             f"1..{MAX_WORKERS}")
        counts.update(range(low, high + 1))
    return sorted(counts)


def critical_path(transactions: Iterable[SimTransaction], *, lenient: bool = False) -> float:
    """Longest cost-weighted path of the dependency DAG the timestamps imply.

    Transaction j depends on every earlier transaction i of the same *run*
    with ``sequence_number(i) <= last_committed(j)``; a barrier (as decided
    by :func:`~repltool.schedule.logical_clock.classify`) depends on every
    earlier transaction.  A run is a stretch of one source file in which
    ``sequence_number`` increases; it ends at a source Rotate and at a
    transaction whose ``sequence_number`` does not increase (``(0,0)``
    transactions, or inconsistencies tolerated in lenient mode), which are
    barriers, so no dependency is lost inside a source file except across a
    lenient barrier.  The result is the earliest possible finish with
    infinite workers, no coordinator overhead and no commit order, so every
    simulated makespan is at least this.

    :raises SimulationError: as :func:`classify`, unless ``lenient``.
    """
    run_seq = array("q")            # sequence numbers of the current run
    run_finish = array("d")         # running max of finish times in the run
    longest = 0.0
    last_seq = 0
    warnings: list[str] = []
    # columns (SimColumns) are read as such, as simulate_fast reads them; a
    # transaction object is rebuilt from them only for a message
    bad = _first_bad_cost(transactions.cost) if isinstance(transactions, SimColumns) else -1
    for index, (lc, sn, cost, new_file, trx) in enumerate(clock_rows(transactions)):
        if trx is not None:
            check_cost(trx, index)
        elif index == bad:
            check_cost(transaction_at(transactions, trx, index), index)
        # (classify's answer for a plain transaction, inline in this per-transaction
        # loop: tests/binlog/test_clock_rules.py holds it to classify)
        if 0 < lc < sn and sn == last_seq + 1 and not new_file and index:
            barrier = False             # classify's answer, without its checks' failures
            last_seq = sn
        else:
            barrier, last_seq = classify(transaction_at(transactions, trx, index), index,
                                         last_seq, lenient, warnings)
        if new_file or not run_seq or sn <= run_seq[-1]:
            run_seq, run_finish = array("q"), array("d")
        if barrier:
            finish = longest + cost
        else:
            k = bisect_right(run_seq, lc)
            finish = (run_finish[k - 1] if k else 0.0) + cost
        run_seq.append(sn)
        run_finish.append(max(finish, run_finish[-1]) if run_finish else finish)
        longest = max(longest, finish)
    return longest


def _first_bad_cost(costs: Iterable[float]) -> int:
    """The index of the first cost that is not a finite number >= 0; -1: none."""
    for index, cost in enumerate(costs):
        if not 0.0 <= cost < _INF:
            return index
    return -1


def knee(makespans: Sequence[tuple[int, float]], threshold: float = 0.05) -> int:
    """The smallest worker count K after which more workers hardly help.

    K is the smallest count in the list such that, for every larger count
    K' in the list, ``(makespan(K) - makespan(K')) / makespan(K) <
    threshold``.  The largest count always qualifies; a zero makespan
    counts as no improvement.

    :param makespans: ``(workers, makespan)`` pairs, any order.

    Example::

        >>> knee([(1, 100.0), (2, 50.0), (4, 30.0), (8, 29.0)])
        4
    """
    if not makespans:
        raise UsageError("no worker counts to choose from")
    pairs = sorted(makespans)
    best_after = float("inf")       # smallest makespan among larger counts
    choice = pairs[-1][0]
    for workers, makespan in reversed(pairs):
        if makespan <= 0.0 or (makespan - best_after) / makespan < threshold:
            choice = workers
        best_after = min(best_after, makespan)
    return choice


def sweep(transactions: Sequence[SimTransaction], workers: Iterable[int],
          config: SimConfig = SimConfig(), *, threshold: float = 0.05,
          cost_model: str = "") -> SweepResult:
    """Simulate each worker count and compare with one worker and the bound.

    ``config.workers`` is replaced by each count; one extra run with one
    worker gives the speedup baseline when 1 is not in the list.  Traces
    are not kept (``config.trace`` is ignored).

    :raises UsageError: on an empty or invalid worker list.
    :raises SimulationError: as :func:`~repltool.schedule.simulate`.
    """
    counts = sorted(set(workers))
    if not counts:
        raise UsageError("no worker counts to simulate")
    base = dataclasses.replace(config, trace=False)
    runs: dict[int, SimResult] = {}
    for count in ([1] if 1 not in counts else []) + counts:
        runs[count] = simulate_fast(transactions, dataclasses.replace(base, workers=count))
    baseline = runs[1].makespan
    results = tuple(
        dataclasses.replace(runs[c], speedup=(baseline / runs[c].makespan)
                            if runs[c].makespan > 0 else 1.0)
        for c in counts)
    bound = critical_path(transactions, lenient=config.lenient)
    total = runs[1].total_cost
    return SweepResult(
        results=results, baseline_makespan=baseline, critical_path=bound,
        ideal_speedup=(total / bound) if bound > 0 else 1.0,
        recommended=knee([(r.workers, r.makespan) for r in results], threshold),
        threshold=threshold, cost_model=cost_model)
