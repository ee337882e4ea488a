"""``Transaction_dependency_tracker``: the three source-side trackers, layered.

Mirrors ``Transaction_dependency_tracker::get_dependency`` and ``rotate`` in
``sql/rpl_trx_tracking.cc`` (MySQL 8.0): COMMIT_ORDER runs the commit-order
tracker only; WRITESET adds the writeset tracker; WRITESET_SESSION adds the
session tracker after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import CertifyError
from ._names import SeqNames
from .model import CertifyOptions, CertResult, CertTransaction, Mode
from .trackers import CommitOrderTracker, WritesetSessionTracker, WritesetTracker


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
        self._names.record(seq, trx.gtid)
        key_hash = key = None
        if parent.key_index is not None:
            key_hash = trx.writeset[parent.key_index]
            key = trx.key_at(parent.key_index)
        return CertResult(
            trx=trx, computed=(parent.value, seq), reason=parent.reason,
            depends_on=self._names.get(parent.value) if parent.value else None,
            key=key, key_hash=key_hash, detail=parent.detail,
            session_order=self.session is not None)


def iter_source_dependencies(transactions: Iterable[CertTransaction], mode: Mode,
                             options: CertifyOptions) -> Iterator[CertResult]:
    """Stream :class:`CertResult` for the commit-order and writeset modes."""
    tracker = TransactionDependencyTracker(mode, options)
    for trx in transactions:
        yield tracker.get_dependency(trx)
