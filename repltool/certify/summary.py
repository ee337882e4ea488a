"""Parallelism before and after certification, computed in one streaming pass.

The replica-side rules used for the critical path are those of
``Mts_submode_logical_clock::schedule_next_event`` (``sql/rpl_mta_submode.cc``,
format spec 6d): a transaction with ``last_committed == 0`` or
``sequence_number == 0``, the one after a ``(0, 0)``, the first of a clock
segment and the one after a sequence gap wait for *everything* before them;
any other transaction waits for the last barrier (the low-water mark restarts
there) and for every transaction whose ``sequence_number`` is at most its
``last_committed``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .model import CertResult, Reason


@dataclass(frozen=True, slots=True)
class Parallelism:
    """How parallel one sequence of ``(last_committed, sequence_number)`` pairs is.

    :ivar transactions: number of transactions (the *work*, unit cost each).
    :ivar distance: histogram of ``sequence_number - last_committed``.
    :ivar windows: runs of consecutive transactions sharing ``last_committed``.
    :ivar mean_window: transactions per commit-parent window.
    :ivar barriers: transactions with ``last_committed == 0`` (incl. ``(0, 0)``).
    :ivar barrier_share: ``barriers / transactions``.
    :ivar span: critical path length with unit costs.
    :ivar parallelism: average parallelism, ``transactions / span``.
    """

    transactions: int
    distance: dict[int, int]
    windows: int
    mean_window: float
    barriers: int
    barrier_share: float
    span: int
    parallelism: float

    @property
    def mean_distance(self) -> float:
        """Mean ``sequence_number - last_committed``."""
        total = sum(self.distance.values())
        return sum(d * n for d, n in self.distance.items()) / total if total else 0.0


class _Accumulator:
    """Streaming state for :class:`Parallelism` (memory: the span, not the log)."""

    def __init__(self) -> None:
        self.n = 0
        self.distance: Counter[int] = Counter()
        self.windows = 0
        self.barriers = 0
        self.span = 0
        self._prev: tuple[int, int] | None = None
        self._floor = 0                 # depth of the last barrier
        self._seqs: list[int] = []      # segment breakpoints: sequence numbers ...
        self._depths: list[int] = []    # ... where the prefix-maximum depth grows

    def add(self, lc: int, seq: int) -> None:
        self.n += 1
        self.distance[seq - lc] += 1
        prev = self._prev
        new_segment = prev is None or (seq != 0 and prev[1] != 0 and seq <= prev[1])
        if new_segment:
            self._seqs.clear()
            self._depths.clear()
        if new_segment or prev is None or lc != prev[0]:
            self.windows += 1
        self.barriers += lc == 0
        barrier = (new_segment or lc == 0 or seq == 0 or prev is None or prev[1] == 0
                   or seq > prev[1] + 1)
        if barrier:
            depth = self.span + 1
            self._floor = depth
        else:
            i = bisect.bisect_right(self._seqs, lc)
            depth = max(self._depths[i - 1] if i else 0, self._floor) + 1
        if seq != 0 and (not self._depths or depth > self._depths[-1]):
            self._seqs.append(seq)
            self._depths.append(depth)
        self.span = max(self.span, depth)
        self._prev = (lc, seq)

    def result(self) -> Parallelism:
        n = self.n
        return Parallelism(
            transactions=n, distance=dict(sorted(self.distance.items())),
            windows=self.windows, mean_window=n / self.windows if self.windows else 0.0,
            barriers=self.barriers, barrier_share=self.barriers / n if n else 0.0,
            span=self.span, parallelism=n / self.span if self.span else 0.0)


@dataclass(frozen=True, slots=True)
class Summary:
    """Parallelism of the logged clocks (``before``) and the computed ones (``after``).

    :ivar changed: results whose computed clock differs from the logged one.
    :ivar reasons: how many results had each :class:`Reason` value.
    :ivar unassigned: results without a computed clock (GR local / conflict).
    """

    before: Parallelism
    after: Parallelism
    changed: int
    reasons: dict[str, int]
    unassigned: int


def summarise(results: Iterable[CertResult]) -> Summary:
    """Consume results and compare parallelism before and after.

    ``before`` covers every transaction's recorded clock; ``after`` only the
    transactions that got a computed clock.
    """
    before, after = _Accumulator(), _Accumulator()
    reasons: Counter[str] = Counter()
    changed = unassigned = 0
    for r in results:
        before.add(*r.trx.recorded)
        reasons[Reason(r.reason).value] += 1
        if r.computed is None:
            unassigned += 1
            continue
        after.add(*r.computed)
        changed += r.changed
    return Summary(before=before.result(), after=after.result(), changed=changed,
                   reasons=dict(sorted(reasons.items())), unassigned=unassigned)
