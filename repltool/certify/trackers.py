"""Source-side dependency trackers, mirroring MySQL's ``sql/rpl_trx_tracking.cc``.

MySQL 8.0 layers three trackers in
``Transaction_dependency_tracker::get_dependency``: COMMIT_ORDER computes
``commit_parent``; WRITESET narrows it with ``std::min``; WRITESET_SESSION
raises it again to the session's previous transaction. Each tracker here is
one small object with ``get_dependency(...)`` and ``rotate()``; the in/out
``int64 &commit_parent`` of the C++ becomes a :class:`Parent` value that is
passed in and returned, carrying the explanation with it.

Sequence numbers are recomputed as the 1-based position of the transaction in
its clock segment (format spec 6b: "rel_seq = position of the transaction in
the file"), so they are contiguous 1..n per file whatever the log recorded.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .model import Baseline, CertTransaction, Reason

REMAP_WINDOW = 4096
"""How many recent (logged, recomputed) sequence-number pairs are kept to map a
logged ``last_committed`` onto recomputed numbering when the two differ."""


@dataclass(frozen=True, slots=True)
class Parent:
    """A ``commit_parent`` value and why it has that value.

    :ivar value: the candidate ``last_committed``.
    :ivar reason: the explanation.
    :ivar key_index: for :attr:`Reason.KEY`, the index in the transaction's
        write set of the hash that produced ``value``.
    :ivar detail: one line for humans.
    """

    value: int
    reason: Reason
    key_index: int | None = None
    detail: str = ""


class CommitOrderTracker:
    """The commit-order parent (``Commit_order_trx_dependency_tracker``).

    MySQL derives it from ``max_committed_transaction`` at prepare time, which a
    log does not show. With :attr:`Baseline.RECORDED` the parent is the one
    recorded in the log, mapped onto recomputed numbering; with
    :attr:`Baseline.SERIAL` it is the predecessor (``sequence_number - 1``).
    A logged ``(0, 0)`` (5.6 source, unknown clock) also gives the predecessor.
    """

    __slots__ = ("_baseline", "_identity", "_seen")

    def __init__(self, baseline: Baseline = Baseline.RECORDED) -> None:
        self._baseline = baseline
        self._identity = True
        self._seen: deque[tuple[int, int]] = deque(maxlen=REMAP_WINDOW)

    def rotate(self) -> None:
        """Start a new file: numbering restarts."""
        self._identity = True
        self._seen.clear()

    def get_dependency(self, trx: CertTransaction, sequence_number: int) -> Parent:
        """Return the commit-order parent of the transaction numbered ``sequence_number``."""
        rec_lc, rec_seq = trx.recorded
        self._identity = self._identity and rec_seq == sequence_number
        detail = ""
        if self._baseline is Baseline.SERIAL:
            value, detail = sequence_number - 1, "serial baseline"
        elif rec_seq == 0:
            value, detail = sequence_number - 1, "no logged clock: predecessor"
        elif rec_lc == 0 or self._identity:
            value = rec_lc
        else:
            value = self._remap(rec_lc)
        self._seen.append((rec_seq, sequence_number))
        if value >= sequence_number:
            value, detail = sequence_number - 1, "logged last_committed >= sequence_number: clamped"
        reason = Reason.FILE_START if sequence_number == 1 else Reason.COMMIT_ORDER
        return Parent(value, reason, detail=detail)

    def _remap(self, rec_lc: int) -> int:
        """Recomputed number of the last transaction whose logged seq <= ``rec_lc``.

        When that transaction fell out of the window, the oldest remembered
        position minus one is returned: an upper bound, hence never unsafe.
        """
        for rec_seq, position in reversed(self._seen):
            if rec_seq <= rec_lc:
                return position
        if self._seen and len(self._seen) == self._seen.maxlen:
            return self._seen[0][1] - 1
        return 0


class WritesetTracker:
    """Narrow the commit parent with row-hash history (``Writeset_trx_dependency_tracker``).

    State: ``history`` (hash -> last ``sequence_number`` that wrote it) and
    ``history_start`` (the lower bound of any writeset parent). Per
    transaction (format spec 6b, gotchas 10-12):

    1. ``can_use`` = (write set non-empty or missing keys or empty
       transaction) and not FK-parent and not write-set-limit-reached; a DDL
       (or CTAS, treated as DDL here) cannot use write sets.
    2. If ``can_use``: ``exceeds = len(history) + len(writeset) > history_size``
       (size *before* insertion); ``last_parent = history_start``; for each
       hash, a known hash raises ``last_parent`` to its stored seq (if below
       the current one) and is updated to the current seq even when
       ``exceeds``; a new hash is inserted only if not ``exceeds``. Unless the
       transaction has missing keys, ``commit_parent = min(last_parent,
       commit_parent)``; with missing keys the commit-order parent is kept and
       the history is *not* reset.  Not MySQL's: missing keys for a reason other
       than "no usable key" (``CertTransaction.keys_unknown``: the server hashed
       keys the log does not tell) cannot use write sets either, so the history
       is reset and nothing later can overtake the transaction (safe).
    3. If ``exceeds`` or not ``can_use``: ``history_start = sequence_number``
       and the history is cleared, after this transaction's parent was computed.
    4. ``rotate()``: ``history_start = 1``, history cleared, so after a rotation
       independent transactions get ``last_committed = 1`` (the first gets 0).
    """

    __slots__ = ("history_size", "_history", "_history_start", "_start_reason")

    def __init__(self, history_size: int) -> None:
        self.history_size = history_size
        self._history: dict[int, int] = {}
        self._history_start = 1
        self._start_reason = Reason.FILE_START

    @property
    def history_start(self) -> int:
        """``m_writeset_history_start``: lower bound of writeset parents."""
        return self._history_start

    @property
    def history(self) -> dict[int, int]:
        """A copy of ``m_writeset_history`` (hash -> sequence_number)."""
        return dict(self._history)

    def live_sequence_numbers(self) -> set[int]:
        """Sequence numbers the history can still report as parents."""
        return {*self._history.values(), self._history_start}

    def rotate(self) -> None:
        """A new binlog file: ``history_start = 1``, history cleared."""
        self._history_start = 1
        self._history.clear()
        self._start_reason = Reason.FILE_START

    def get_dependency(self, trx: CertTransaction, sequence_number: int,
                       commit_parent: Parent) -> Parent:
        """Return ``commit_parent`` narrowed by the write set.

        :param commit_parent: [in] the commit-order parent.
        :returns: [out] ``min(writeset parent, commit_parent)``, or
            ``commit_parent`` when write sets cannot be used.
        """
        ws = trx.writeset
        barrier = (trx.ddl or trx.ctas or trx.fk_parent or trx.write_set_limit_reached
                   or trx.keys_unknown)
        can_use = (bool(ws) or trx.missing_keys or trx.empty) and not barrier
        exceeds = False
        result = commit_parent
        if can_use:
            exceeds = len(self._history) + len(ws) > self.history_size
            last_parent, key_index = self._history_start, None
            for index, h in enumerate(ws):
                seen = self._history.get(h)
                if seen is not None:
                    if last_parent < seen < sequence_number:
                        last_parent, key_index = seen, index
                    self._history[h] = sequence_number
                elif not exceeds:
                    self._history[h] = sequence_number
            if trx.missing_keys:
                result = Parent(commit_parent.value, Reason.NO_KEY, commit_parent.key_index,
                                "table without usable key: commit-order parent kept")
            elif last_parent <= commit_parent.value:
                result = self._explain(last_parent, key_index)
        else:
            # (Parent(...) rather than dataclasses.replace: the same value, once per
            # transaction, in a fifth of the time)
            detail = ("keys the log does not tell (" + ", ".join(sorted(set(trx.fallback)))
                      + "): commit-order parent, history reset" if trx.keys_unknown else
                      "no usable write set: commit-order parent, history reset")
            result = Parent(commit_parent.value, self._barrier_reason(trx),
                            commit_parent.key_index, detail)
        if exceeds:
            result = Parent(result.value, result.reason, result.key_index,
                            (result.detail + "; " if result.detail else "")
                            + "history full: cleared after this transaction")
        if exceeds or not can_use:
            self._history_start = sequence_number
            self._history.clear()
            self._start_reason = Reason.HISTORY_FULL if exceeds else Reason.HISTORY_RESET
        return result

    def _explain(self, last_parent: int, key_index: int | None) -> Parent:
        if key_index is not None:
            return Parent(last_parent, Reason.KEY, key_index=key_index,
                          detail="a write-set key was last written by the parent")
        if last_parent == 0 or self._start_reason is Reason.FILE_START:
            return Parent(last_parent, Reason.FILE_START, detail="history starts at file start")
        return Parent(last_parent, self._start_reason,
                      detail=f"history starts at {last_parent}")

    @staticmethod
    def _barrier_reason(trx: CertTransaction) -> Reason:
        if trx.keys_unknown:
            return Reason.NO_KEY
        if trx.fk_parent:
            return Reason.FK_PARENT
        if trx.write_set_limit_reached:
            return Reason.HISTORY_FULL
        return Reason.DDL


class WritesetSessionTracker:
    """Keep each session's transactions ordered (``Writeset_session_trx_dependency_tracker``).

    ``s`` = the session's previous sequence number (0 initially); if
    ``s != 0 and s < sequence_number``: ``commit_parent = max(commit_parent, s)``;
    then the session's number becomes ``sequence_number``. MySQL stores ``s``
    in the session, so it survives rotation; the ``s < sequence_number`` guard
    limits the damage. Transactions without a known session are left alone.
    """

    __slots__ = ("_last", "_reset_on_rotate")

    def __init__(self, reset_on_rotate: bool = False) -> None:
        self._last: dict[tuple[int, int], int] = {}
        self._reset_on_rotate = reset_on_rotate

    def live_sequence_numbers(self) -> set[int]:
        return set(self._last.values())

    def rotate(self) -> None:
        """MySQL keeps per-session numbers; forget them only if configured."""
        if self._reset_on_rotate:
            self._last.clear()

    def get_dependency(self, trx: CertTransaction, sequence_number: int,
                       commit_parent: Parent) -> Parent:
        """Return ``commit_parent`` raised to the session's previous transaction.

        :param commit_parent: [in] the parent after the writeset tracker.
        """
        if trx.session is None:
            return commit_parent
        result = commit_parent
        s = self._last.get(trx.session, 0)
        if s != 0 and s < sequence_number and s > commit_parent.value:
            result = Parent(s, Reason.SESSION,
                            detail=f"previous transaction of session {trx.session}")
        self._last[trx.session] = sequence_number
        return result
