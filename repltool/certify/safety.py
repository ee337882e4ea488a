"""Check computed clocks against the write-set safety rule.

The rule MySQL's trackers guarantee (``sql/rpl_trx_tracking.cc``,
``plugin/group_replication/src/certifier.cc``): if transactions ``i < j`` of
one clock segment share a write-set key, then
``last_committed(j) >= sequence_number(i)``, so the replica's logical-clock
scheduler never runs ``j`` before ``i`` has committed.

Replica-side barriers make some pairs safe regardless
(``sql/rpl_mta_submode.cc``, format spec 6d): a transaction with
``last_committed == 0`` or ``sequence_number == 0``, the first of a new clock
segment (sequence numbers restart), the one after a ``(0, 0)`` and the one
after a sequence gap wait for everything before them, and every later
transaction waits for them (the scheduler's low-water mark restarts at a
barrier), so no pair across a barrier can overlap. A GR *local*
transaction (``computed is None``, :attr:`Reason.LOCAL`) was committed on
the member only after the remote transactions it depends on were applied, so
it absorbs its keys' earlier dependencies. Negatively certified transactions are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..binlog.clock import is_barrier
from .model import CertResult, Reason


@dataclass(frozen=True, slots=True)
class Violation:
    """``later`` may run before ``earlier`` although both write ``key_hash``."""

    earlier: CertResult
    later: CertResult
    key_hash: int

    def __str__(self) -> str:
        def name(r: CertResult) -> str:
            return r.trx.gtid or (str(r.trx.pos) if r.trx.pos else f"#{r.sequence_number}")
        return (f"{name(self.later)} last_committed={self.later.last_committed} < "
                f"sequence_number={self.earlier.sequence_number} of {name(self.earlier)}; "
                f"both write key {self.key_hash:#x}")


class SafetyChecker:
    """:func:`check_safety` one result at a time: ``add`` each result in log order and
    get the violations it completes, so a caller keeps no list of results (memory
    follows the number of distinct keys in a segment, as for the whole-list form)."""

    __slots__ = ("_last", "_prev_seq")

    def __init__(self) -> None:
        self._last: dict[int, CertResult] = {}
        self._prev_seq: int | None = None

    def add(self, r: CertResult, ws: Sequence[int] | None = None) -> list[Violation]:
        """The violations between ``r`` and the results before it.

        :param ws: ``r``'s write set; default ``r.trx.writeset``.
        """
        if ws is None:
            ws = r.trx.writeset
        last = self._last
        if r.computed is None:
            if r.reason is Reason.LOCAL:
                for h in ws:
                    last.pop(h, None)
            return []
        violations: list[Violation] = []
        lc, seq = r.computed
        if is_barrier(lc, seq, self._prev_seq):
            # a barrier: it waits for everything before, and every later
            # transaction waits for it (the MTS low-water mark restarts there)
            last.clear()
        else:
            seen: set[int] = set()
            for h in ws:
                earlier = last.get(h)
                if (earlier is not None and earlier.computed is not None
                        and lc < earlier.computed[1] and id(earlier) not in seen):
                    seen.add(id(earlier))
                    violations.append(Violation(earlier, r, h))
        for h in ws:
            last[h] = r
        self._prev_seq = seq
        return violations


    def writers_above(self, seq: int) -> Iterator[tuple[int, CertResult]]:
        """(key hash, last writer) of every key whose last writer's sequence_number is
        above ``seq`` (a split log's span hands them to the next span's check)."""
        for h, r in self._last.items():
            if r.computed is not None and r.computed[1] > seq:
                yield h, r

    def resume(self, writers: Iterable[tuple[int, CertResult]], prev_seq: int | None) -> None:
        """Continue after an earlier span: its last writers and last sequence_number."""
        self._last.update(writers)
        self._prev_seq = prev_seq


def check_safety(results: Iterable[CertResult],
                 writesets: Iterable[Sequence[int]] | None = None) -> list[Violation]:
    """Return every pair that breaks the safety rule (one entry per pair).

    Runs in one pass with a map key -> last writer, so memory follows the
    number of distinct keys in a segment (:class:`SafetyChecker`).

    :param results: certification results in log order.
    :param writesets: write sets parallel to ``results``; default: each
        result's ``trx.writeset``.
    """
    checker = SafetyChecker()
    violations: list[Violation] = []
    sets = iter(writesets) if writesets is not None else None
    for r in results:
        violations += checker.add(r, next(sets) if sets is not None else None)
    return violations
