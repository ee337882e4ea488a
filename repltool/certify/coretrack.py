"""The source-side trackers on the compiled core: the same results, state in C.

:class:`CoreDependencyTracker` is :class:`~repltool.certify.dependency.TransactionDependencyTracker`
(commit-order, writeset and writeset-session modes: MySQL's
``Commit_order_trx_dependency_tracker``, ``Writeset_trx_dependency_tracker`` and
``Writeset_session_trx_dependency_tracker`` of ``sql/rpl_trx_tracking.cc``, plus
repltool's recorded-clock guard ``LastWriters``) with the per-transaction work
done by the compiled core's ``SourceTracker`` (``repltool/binlog/_certcore.pxi``):
the write-set history, the commit-order remap window, the session map and the
guard's bounded last-writer map live in C; this driver numbers the transactions
per clock segment, remembers the GTID names of sequence numbers
(``depends_on``) and turns the core's codes into the :class:`CertResult` the
Python trackers build (reason, shared key, the same detail texts).  The Python
trackers stay the reference: ``tests/certify/test_certcore.py`` requires equal
results on generated sequences and equal ``certify`` outputs on the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import index
from typing import Any

from ..errors import CertifyError
from ._names import SeqNames
from . import dependency
from .model import (Baseline, CertifyOptions, CertResult, CertTransaction, Fallback, Mode,
                    Reason)

_MODES = {Mode.COMMIT_ORDER: 0, Mode.WRITESET: 1, Mode.WRITESET_SESSION: 2}

# detail codes of SourceTracker.step (CD_* in _certcore.pxi)
_TEXTS = ("", "serial baseline", "no logged clock: predecessor",
          "logged last_committed >= sequence_number: clamped",
          "table without usable key: commit-order parent kept",
          "a write-set key was last written by the parent",
          "history starts at file start")
_HISTORY_START, _KEYS_UNKNOWN, _NO_WRITESET, _SESSION, _RAISED = 7, 8, 9, 10, 11
_FULL = "history full: cleared after this transaction"

_RAN = [0]


def core_transactions() -> int:
    """How many transactions this process has certified through the core (tests
    assert the core path ran)."""
    return _RAN[0]


class CoreDependencyTracker:
    """:class:`~repltool.certify.dependency.TransactionDependencyTracker` on the core.

    :param core: the compiled core module (:func:`repltool.binlog.engine.compiled_core`).
    """

    def __init__(self, mode: Mode, options: CertifyOptions, core: Any) -> None:
        if mode not in _MODES:
            raise CertifyError("group replication is computed by "
                               "repltool.certify.group_replication")
        names = tuple(core.cert_reason_names())
        if names != tuple(r.value for r in Reason)[:len(names)]:
            raise CertifyError("the compiled core's reasons do not match repltool.certify.Reason")
        self.mode = mode
        self.options = options
        self._reasons = tuple(Reason)
        guard = (max(dependency.LAST_WRITERS_MIN, 4 * options.history_size)
                 if mode is not Mode.COMMIT_ORDER and options.baseline is Baseline.RECORDED
                 else 0)
        self._core = core.SourceTracker(_MODES[mode], options.baseline is Baseline.SERIAL,
                                        options.history_size, options.reset_sessions_on_rotate,
                                        guard)
        self._names = SeqNames(options.history_size, self._core.live_sequence_numbers)
        self._session_order = mode is Mode.WRITESET_SESSION
        self._file: str | None = None
        self._seq = 0

    @property
    def steps(self) -> int:
        """Transactions computed by the core so far."""
        return self._core.steps  # type: ignore[no-any-return]

    def rotate(self) -> None:
        """A new binlog file: numbering restarts at 1, every tracker resets."""
        self._seq = 0
        self._names.clear()
        self._core.rotate()

    def get_dependency(self, trx: CertTransaction) -> CertResult:
        """Compute ``(last_committed, sequence_number)`` for the next transaction."""
        value, seq, reason, key_index, text, raised = self.step(trx)
        key_hash = key = None
        if key_index >= 0:
            key_hash = trx.writeset[key_index]
            key = trx.key_at(key_index)
        return CertResult(
            trx=trx, computed=(value, seq), reason=reason,
            depends_on=self._names.get(value) if value else None,
            key=key, key_hash=key_hash, detail=text,
            session_order=self._session_order, raised=raised)

    def name(self, seq: int) -> str | None:
        """The GTID of the transaction numbered ``seq`` in this segment, if remembered
        (``CertResult.depends_on``)."""
        return self._names.get(seq) if seq else None

    def step(self, trx: CertTransaction, explain: bool = True
             ) -> tuple[int, int, Reason, int, str, bool]:
        """:meth:`get_dependency` without the :class:`CertResult`: ``(last_committed,
        sequence_number, reason, index of the shared key in the write set or -1,
        detail, raised)``.  ``explain=False`` (a whole run's choice): no detail text
        (``""``) and no GTID names kept (:meth:`name` then knows none)."""
        recorded, ws, keys = trx.recorded, trx.writeset, trx.keys
        if type(recorded) is not tuple or len(recorded) != 2:
            trx.validate()
        rec_lc, rec_seq = recorded
        nk = len(keys)      # (once: a lazily described sequence's len is Python code)
        if type(rec_lc) is not int or type(rec_seq) is not int or rec_lc < 0 or rec_seq < 0 \
                or (nk and nk != len(ws)):
            trx.validate()
            rec_lc, rec_seq = index(rec_lc), index(rec_seq)
        flags = cert_flags(trx)
        try:
            return self.step_values(ws, flags, rec_lc, rec_seq, trx.session, trx.file,
                                    trx.new_file, trx.gtid, trx.fallback, explain)
        except (TypeError, OverflowError, ValueError):
            trx.validate()          # the Python tracker's error, if it has one
            return self.step_values(tuple(index(h) for h in ws), flags, rec_lc, rec_seq,
                                    trx.session, trx.file, trx.new_file, trx.gtid,
                                    trx.fallback, explain)

    def step_values(self, ws: Any, flags: int, rec_lc: int, rec_seq: int,
                    session: tuple[int, int] | None, file: str, new_file: bool,
                    gtid: str | None, fallback: tuple[str, ...], explain: bool
                    ) -> tuple[int, int, Reason, int, str, bool]:
        """:meth:`step` from a transaction's values (``repltool certify``'s lane: no
        :class:`CertTransaction`): ``ws`` its write-set hashes (uint64 ints), ``flags``
        the core's (1 DDL or CTAS, 2 FK parent, 4 write-set limit reached, 16 missing
        keys, 8 with 16 keys the log does not tell, 32 empty), ``rec_lc``/``rec_seq`` the
        recorded clock (ints >= 0), ``session``, ``file`` (the clock segment),
        ``new_file``, ``gtid`` (as certification spells it) and ``fallback`` as the
        :class:`CertTransaction` fields.  Raises ``TypeError``, ``OverflowError`` or
        ``ValueError`` (nothing done) where a hash is not a uint64."""
        if self._file is None or new_file or file != self._file:
            self.rotate()
            self._file = file
        seq = self._seq + 1
        out = self._core.step(ws, flags, rec_lc, rec_seq, session, seq)
        self._seq = seq
        _RAN[0] += 1
        value, reason, key_index, detail, arg, note, raised, raised_from = out
        if not explain:
            return value, seq, self._reasons[reason], key_index, "", raised
        self._names.record(seq, gtid)
        if detail < _HISTORY_START:
            text = _TEXTS[detail]
        elif detail == _HISTORY_START:
            text = f"history starts at {arg}"
        elif detail == _KEYS_UNKNOWN:
            text = ("keys the log does not tell (" + ", ".join(sorted(set(fallback)))
                    + "): commit-order parent, history reset")
        elif detail == _NO_WRITESET:
            text = "no usable write set: commit-order parent, history reset"
        elif detail == _SESSION:
            text = f"previous transaction of session {session}"
        else:
            what = ("an earlier writer of a key" if key_index >= 0
                    else "writers no longer remembered")
            text = (f"logged last_committed {raised_from} lets it overlap {what}: "
                    f"raised to {value} (MySQL would keep the logged value)")
        if note:
            text = (text + "; " if text else "") + _FULL
        return value, seq, self._reasons[reason], key_index, text, raised


def iter_core_dependencies(transactions: Iterable[CertTransaction], mode: Mode,
                           options: CertifyOptions, core: Any) -> Iterator[CertResult]:
    """:func:`~repltool.certify.dependency.iter_source_dependencies` on the core."""
    tracker = CoreDependencyTracker(mode, options, core)
    get = tracker.get_dependency
    for trx in transactions:
        yield get(trx)


_NO_USABLE_KEY = Fallback.NO_USABLE_KEY.value


def cert_flags(trx: CertTransaction) -> int:
    """The tracker's flags of ``trx`` (:meth:`CoreDependencyTracker.step_values`): 1 DDL
    or CTAS, 2 a foreign key's parent, 4 the write-set limit reached, 16 keys missing
    (24: and unknown), 32 empty."""
    flags = 1 if trx.ddl or trx.ctas else 0
    if trx.fk_parent:
        flags |= 2
    if trx.write_set_limit_reached:
        flags |= 4
    if trx.missing_keys:
        flags |= 24 if trx.keys_unknown else 16
    if trx.empty:
        flags |= 32
    return flags


def hashed_flags(trx: Any, ws: Any, fallback: tuple[str, ...]) -> int:
    """:func:`cert_flags` of the :class:`~repltool.certify.model.CertTransaction` that
    :func:`repltool.certify.source.to_cert_transaction` would make of a transaction
    without events and its :class:`~repltool.writeset.HashedWriteset` (``fallback``: its
    :func:`~repltool.certify.source.fallback_reasons`), without making it."""
    missing, limit = ws.missing_key_tables, ws.limit_reached
    kind = trx.kind
    flags = 0
    if kind == "ddl" and (trx.rows_events or not (ws.keys or missing or limit)):
        flags = 1                                   # ddl or ctas
    if ws.fk_parent_tables:
        flags |= 2
    if limit:
        flags |= 4
    if missing:
        flags |= 24 if any(f != _NO_USABLE_KEY for f in fallback) else 16
    if kind == "empty":
        flags |= 32
    return flags
