"""``Transaction_dependency_tracker``: the three source-side trackers, layered.

Mirrors ``Transaction_dependency_tracker::get_dependency`` and ``rotate`` in
``sql/rpl_trx_tracking.cc`` (MySQL 8.0): COMMIT_ORDER runs the commit-order
tracker only; WRITESET adds the writeset tracker; WRITESET_SESSION adds the
session tracker after it.

One addition, :class:`LastWriters` (writeset modes with the recorded
baseline): MySQL trusts its commit-order parent, which a server's row locks
make safe; a log's recorded clock need not be (a generated or re-tagged log).
Where it lets a transaction overlap an earlier writer of one of its keys (a
barrier keeps that parent, and ``min`` keeps it too), the parent is raised to
that writer and the result says so (``CertResult.raised``).  On a MySQL
server's own log it does not fire.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator

from ..errors import CertifyError
from ._names import SeqNames
from .model import Baseline, CertifyOptions, CertResult, CertTransaction, Mode, Reason
from .trackers import CommitOrderTracker, Parent, WritesetSessionTracker, WritesetTracker

LAST_WRITERS_MIN = 1 << 18
"""At least this many keys' last writers are remembered per clock segment."""


class LastWriters:
    """Key hash -> sequence number of its last writer in the segment, bounded.

    The oldest-written keys are forgotten past ``limit``; ``floor`` is the
    newest sequence number forgotten that way, so a parent at or above it is
    safe for every forgotten key, and one below it is raised to it (safe, and
    rare: writeset parents stay within the history, far above the floor).
    """

    __slots__ = ("_last", "_limit", "floor")

    def __init__(self, limit: int) -> None:
        # an OrderedDict, not a dict: forgetting the oldest key of a dict
        # (``next(iter(d))`` after many pops from its front) walks over every
        # deleted slot before it, which made certify quadratic past ``limit`` keys
        # (1 GB: 31x the CPU of 110 MB); the OrderedDict's list finds it at once
        self._last: OrderedDict[int, int] = OrderedDict()
        self._limit = limit
        self.floor = 0

    def clear(self) -> None:
        self._last.clear()
        self.floor = 0

    def _trim(self) -> None:
        last = self._last
        while len(last) > self._limit:
            self.floor = max(self.floor, last.popitem(last=False)[1])

    def check(self, writeset: tuple[int, ...], sequence_number: int,
              parent: Parent) -> Parent:
        """``parent``, raised to the last earlier writer of a key if that is above it.

        ``last_committed = 0`` is left alone: the replica applies such a
        transaction after everything before it (``rpl_mta_submode.cc``).
        """
        last = self._last
        if parent.value == 0:
            for h in writeset:
                last.pop(h, None)
                last[h] = sequence_number
            self._trim()
            return parent
        value, index = (self.floor if parent.value < self.floor else 0), None
        for i, h in enumerate(writeset):
            seen = last.pop(h, 0)
            if value < seen < sequence_number and seen > parent.value:
                value, index = seen, i
            last[h] = sequence_number
        self._trim()
        if value <= parent.value:
            return parent
        what = ("an earlier writer of a key" if index is not None
                else "writers no longer remembered")
        return Parent(value, Reason.KEY if index is not None else parent.reason,
                      key_index=index,
                      detail=f"logged last_committed {parent.value} lets it overlap {what}: "
                             f"raised to {value} (MySQL would keep the logged value)")


class TransactionDependencyTracker:
    """Number transactions per clock segment and compute their parents.

    A new segment starts at the first transaction, at every transaction with
    ``new_file`` set, and whenever ``file`` changes; :meth:`rotate` then resets
    every tracker the way ``MYSQL_BIN_LOG::open_binlog`` does.
    """

    def __init__(self, mode: Mode, options: CertifyOptions) -> None:
        if mode is Mode.GROUP_REPLICATION:
            raise CertifyError("group replication is computed by "
                               "repltool.certify.group_replication")
        self.mode = mode
        self.options = options
        self.commit_order = CommitOrderTracker(options.baseline)
        self.writeset = (WritesetTracker(options.history_size)
                         if mode is not Mode.COMMIT_ORDER else None)
        self.session = (WritesetSessionTracker(options.reset_sessions_on_rotate)
                        if mode is Mode.WRITESET_SESSION else None)
        self.last_writers = (LastWriters(max(LAST_WRITERS_MIN, 4 * options.history_size))
                             if self.writeset is not None
                             and options.baseline is Baseline.RECORDED else None)
        self._names = SeqNames(options.history_size, self._live)
        self._file: str | None = None
        self._seq = 0

    def _live(self) -> set[int]:
        live: set[int] = set()
        if self.writeset is not None:
            live |= self.writeset.live_sequence_numbers()
        if self.session is not None:
            live |= self.session.live_sequence_numbers()
        return live

    def rotate(self) -> None:
        """A new binlog file: numbering restarts at 1, every tracker resets."""
        self._seq = 0
        self._names.clear()
        self.commit_order.rotate()
        if self.writeset is not None:
            self.writeset.rotate()
        if self.session is not None:
            self.session.rotate()
        if self.last_writers is not None:
            self.last_writers.clear()

    def get_dependency(self, trx: CertTransaction) -> CertResult:
        """Compute ``(last_committed, sequence_number)`` for the next transaction."""
        trx.validate()
        if self._file is None or trx.new_file or trx.file != self._file:
            self.rotate()
            self._file = trx.file
        self._seq += 1
        seq = self._seq
        parent = self.commit_order.get_dependency(trx, seq)
        if self.writeset is not None:
            parent = self.writeset.get_dependency(trx, seq, parent)
        if self.session is not None:
            parent = self.session.get_dependency(trx, seq, parent)
        raised = False
        if self.last_writers is not None:
            checked = self.last_writers.check(trx.writeset, seq, parent)
            raised, parent = checked is not parent, checked
        self._names.record(seq, trx.gtid)
        key_hash = key = None
        if parent.key_index is not None:
            key_hash = trx.writeset[parent.key_index]
            key = trx.key_at(parent.key_index)
        return CertResult(
            trx=trx, computed=(parent.value, seq), reason=parent.reason,
            depends_on=self._names.get(parent.value) if parent.value else None,
            key=key, key_hash=key_hash, detail=parent.detail,
            session_order=self.session is not None, raised=raised)


def iter_source_dependencies(transactions: Iterable[CertTransaction], mode: Mode,
                             options: CertifyOptions) -> Iterator[CertResult]:
    """Stream :class:`CertResult` for the commit-order and writeset modes."""
    tracker = TransactionDependencyTracker(mode, options)
    for trx in transactions:
        yield tracker.get_dependency(trx)
