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
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..binlog.clock import is_barrier, restarts
from ..binlog.engine import compiled_core
from .model import CertResult, Reason

SPAN_WINDOW = 1 << 16
"""How many steps of the prefix-maximum depth are kept at least (see :class:`_Accumulator`)."""


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
    :ivar approximate: transactions whose ``last_committed`` pointed before the
        last :data:`SPAN_WINDOW` steps of the critical path kept in memory; their
        depth is an upper bound (so ``span`` can only be overstated, and
        ``parallelism`` understated). 0 means the figures are exact.
    """

    transactions: int
    distance: dict[int, int]
    windows: int
    mean_window: float
    barriers: int
    barrier_share: float
    span: int
    parallelism: float
    approximate: int = 0

    @property
    def mean_distance(self) -> float:
        """Mean ``sequence_number - last_committed``."""
        total = sum(self.distance.values())
        return sum(d * n for d, n in self.distance.items()) / total if total else 0.0


class _Accumulator:
    """Streaming state for :class:`Parallelism`; memory is bounded, whatever the log.

    The depth of a transaction is one more than the deepest transaction it
    waits for: ``max(prefix_max_depth(last_committed), floor) + 1``. The
    prefix maximum is kept as its steps (``_seqs``/``_depths``, ascending), one
    per transaction that deepened the critical path, so it grows with the span.
    Two rules bound it: a barrier waits for everything, so every step is then
    below the new floor and dropped (exact); and past ``2 * window`` steps the
    oldest are dropped but the last of them, which keeps every lookup with
    ``last_committed`` at or after it exact, and makes older ones (counted in
    ``approximate``) an upper bound. MySQL bounds how far back a writeset
    ``last_committed`` reaches by its history, which the default window covers.
    """

    def __init__(self, window: int = SPAN_WINDOW) -> None:
        self.n = 0
        self.distance: Counter[int] = Counter()
        self.windows = 0
        self.barriers = 0
        self.span = 0
        self.approximate = 0
        self._window = max(1, window)
        self._prev: tuple[int, int] | None = None
        self._floor = 0                  # depth of the last barrier
        self._seqs = array("q")          # steps of the prefix-maximum depth: sequence numbers
        self._depths = array("q")        # ... and the depth reached there
        self._trimmed = False            # steps before _seqs[0] were dropped

    def _reset(self) -> None:
        del self._seqs[:]
        del self._depths[:]
        self._trimmed = False

    def add(self, lc: int, seq: int) -> None:
        self.n += 1
        self.distance[seq - lc] += 1
        prev = self._prev
        prev_seq = prev[1] if prev is not None else None
        new_segment = restarts(seq, prev_seq)
        if new_segment:
            self._reset()
        if new_segment or prev is None or lc != prev[0]:
            self.windows += 1
        self.barriers += lc == 0
        barrier = new_segment or is_barrier(lc, seq, prev_seq)
        if barrier:
            depth = self.span + 1
            self._floor = depth
            self._reset()                # every step is below the new floor
        else:
            i = bisect.bisect_right(self._seqs, lc)
            if i:
                prior = self._depths[i - 1]
            elif self._trimmed:
                prior = self._depths[0]  # upper bound of a dropped step
                self.approximate += 1
            else:
                prior = 0
            depth = max(prior, self._floor) + 1
        if seq != 0 and (not self._depths or depth > self._depths[-1]):
            self._seqs.append(seq)
            self._depths.append(depth)
            if len(self._seqs) > 2 * self._window:
                drop = len(self._seqs) - self._window - 1
                del self._seqs[:drop]
                del self._depths[:drop]
                self._trimmed = True
        self.span = max(self.span, depth)
        self._prev = (lc, seq)

    @property
    def steps(self) -> int:
        """Steps of the prefix maximum held now (at most ``2 * window``)."""
        return len(self._seqs)

    def result(self) -> Parallelism:
        return parallelism_of(self)


def parallelism_of(acc: Any) -> Parallelism:
    """The :class:`Parallelism` of an accumulator (:class:`_Accumulator`, or the compiled
    core's ``ParallelismCore``: the same fields)."""
    n = acc.n
    return Parallelism(
        transactions=n, distance=dict(sorted(acc.distance.items())),
        windows=acc.windows, mean_window=n / acc.windows if acc.windows else 0.0,
        barriers=acc.barriers, barrier_share=acc.barriers / n if n else 0.0,
        span=acc.span, parallelism=n / acc.span if acc.span else 0.0,
        approximate=acc.approximate)


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


def summarise(results: Iterable[CertResult], *, window: int = SPAN_WINDOW) -> Summary:
    """Consume results and compare parallelism before and after.

    ``before`` covers every transaction's recorded clock; ``after`` only the
    transactions that got a computed clock. ``window``: see :class:`_Accumulator`.
    """
    before, after = _Accumulator(window), _Accumulator(window)
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


class Summariser:
    """:func:`summarise` fed a unit's columns at a time (:meth:`add_columns`): the same
    :class:`Summary` from int64 clocks, without a :class:`CertResult` per transaction."""

    def __init__(self, *, window: int = SPAN_WINDOW) -> None:
        core = compiled_core()
        # the compiled core's ParallelismCore: _Accumulator's rules over int64 clocks
        self._before: Any = core.ParallelismCore(window) if core else _Accumulator(window)
        self._after: Any = core.ParallelismCore(window) if core else _Accumulator(window)
        self._flat = core is not None
        self._reasons: Counter[str] = Counter()
        self._changed = self._unassigned = 0

    def add_columns(self, recorded: Sequence[int], computed: Sequence[int],
                    reasons: Mapping[str, int], changed: int) -> None:
        """The next results, in order.

        :param recorded: ``CertTransaction.recorded`` of each, flat: ``lc0, seq0, lc1, ...``.
        :param computed: ``CertResult.computed`` of each, flat; ``-1, -1`` for ``None``.
        :param reasons: how many had each :class:`Reason` value.
        :param changed: how many had ``CertResult.changed``.
        """
        if self._flat and _int64s(recorded) and _int64s(computed):
            self._before.add_flat(recorded, False)
            self._unassigned += self._after.add_flat(computed, True)
        else:
            add = self._before.add if not self._flat else self._before.add_pair
            for lc, seq in zip(recorded[0::2], recorded[1::2]):
                add(lc, seq)
            add = self._after.add if not self._flat else self._after.add_pair
            for lc, seq in zip(computed[0::2], computed[1::2]):
                if lc < 0:
                    self._unassigned += 1
                else:
                    add(lc, seq)
        self._reasons.update(reasons)
        self._changed += changed

    def result(self) -> Summary:
        return Summary(before=parallelism_of(self._before), after=parallelism_of(self._after),
                       changed=self._changed, reasons=dict(sorted(self._reasons.items())),
                       unassigned=self._unassigned)


def _int64s(values: Sequence[int]) -> bool:
    return isinstance(values, array) and values.typecode == "q"
