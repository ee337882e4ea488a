"""Group Replication certification on the compiled core: the same results, state in C.

:class:`CoreGroupCertifier` is :class:`~repltool.certify.group_replication.Certifier`
(``Certifier::certify``'s item loop, ``update_parallel_applier_indexes``, the
View_change and ``garbage_collect`` of ``plugin/group_replication/src/certifier.cc``)
plus the ``gc_every`` collection of
:func:`~repltool.certify.group_replication.iter_group_replication`, with the
certification info in the compiled core's ``GroupCertifierCore``
(``repltool/binlog/_grcore.pxi``): hash -> sequence number.  That is all the
certifier reads of an item when no snapshot version is ever read, i.e. for the
runs :func:`core_applies` accepts: no member simulation (no snapshots, so no
conflict detection), no local member, no stable-set garbage collection (a
collection without a stable set, after ``gc_every`` transactions or ``gc_interval``
seconds, purges every item).  Other runs
keep the Python certifier; so does the pure-Python engine.

This driver remembers the GTID names of sequence numbers (``depends_on``, the
same :class:`~repltool.certify._names.SeqNames` rule over the same live set) and
turns the core's codes into the Python certifier's reasons and texts.  The Python
certifier stays the reference: ``tests/certify/test_grcore.py`` requires equal
results on generated sequences and equal ``certify`` outputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import CertifyError
from ._names import SeqNames
from .group_replication import check_gtid
from .model import CertifyOptions, CertResult, CertTransaction, Reason
from .source import cert_gtid

_RAN = [0]

#: CertResult.detail of a View_change transaction (Certifier.view_change's)
VIEW_CHANGE_DETAIL = ("view change: (0, 0) barrier, no sequence number consumed; "
                      "the certifier's garbage collection opens a new window")
_KINDS = ("", "CTAS", "DDL", "missing keys")
_START = "certifier start: last_committed_global = 1"
_KEY = "a write-set item was last certified for the parent"
# detail and kind codes of GroupCertifierCore.step (GD_*, GK_* in _grcore.pxi)
_WINDOW, _KEYED, _SEQUENTIAL, _EMPTY, _SESSION = range(5)
_GK_START, _GK_GC = 0, 4


def core_gr_transactions() -> int:
    """How many Group Replication transactions this process has certified through the
    core (tests assert the core path ran)."""
    return _RAN[0]


def count_core(n: int) -> None:
    """Count ``n`` transactions certified through the core by another driver
    (:mod:`repltool.distributed.grpacked`)."""
    _RAN[0] += n


def core_applies(options: CertifyOptions, stable_sets: Sequence[Any] = ()) -> bool:
    """Whether a run over transactions read from logs (no snapshot, no member) with
    ``options`` and these ``--gc-stable-set`` sets can be certified by the core: no
    member simulation, no local member, no stable-set collection (a time-driven one
    purges every item, as ``gc_every``), and a ``group_uuid`` that makes valid GTIDs
    (else the Python certifier raises its error)."""
    interval = options.gc_interval
    if stable_sets or options.member_names or options.local_member is not None \
            or (interval is not None and float(interval) != interval):
        return False
    try:
        check_gtid(f"{options.group_uuid}:1")
    except CertifyError:
        return False
    return True


def check_any_gtid(gtid: Any, has_writeset: bool, logged: bool = True) -> None:
    """What the certifier does with a GTID the core does not know for certain to be
    valid: map a ``logged`` one (:func:`~repltool.certify.source.cert_gtid`; else it is
    spelt as certification spells it) and, when the transaction stores items, check it
    (:func:`~repltool.certify.group_replication.check_gtid`)."""
    g = cert_gtid(gtid) if logged else gtid
    if has_writeset and g is not None:
        check_gtid(g)


def _next_clock(interval: float) -> Any:
    """``iter_group_replication``'s move of the time-driven collection's clock."""
    def next_clock(clock: float, commit_time: float) -> float:
        return clock + interval * math.floor((commit_time - clock) / interval)
    return next_clock


def window_text(kind: int, number: int) -> str:
    """The detail of the window a transaction's ``last_committed_global`` belongs to."""
    if kind == _GK_START:
        return _START
    if kind == _GK_GC:
        return f"window opened by garbage collection after {number}"
    return f"window opened by {_KINDS[kind]} at {number}"


def detail_text(detail: int, kind: int, window_kind: int, window_number: int,
                session: Any) -> str:
    """``Certifier.assign``'s detail from the core's codes."""
    if detail == _WINDOW:
        return window_text(window_kind, window_number)
    if detail == _KEYED:
        return _KEY
    if detail == _SEQUENTIAL:
        return f"{_KINDS[kind]}: applied after all previous transactions"
    if detail == _EMPTY:
        return f"empty transaction: window start ({window_text(window_kind, window_number)})"
    return f"previous transaction of session {session}"


def flags_of(trx: CertTransaction) -> int:
    """The core's flags of a transaction (1 DDL, 2 CTAS, 4 missing keys, 8 empty)."""
    return ((1 if trx.ddl else 0) | (2 if trx.ctas else 0) | (4 if trx.missing_keys else 0)
            | (8 if trx.empty else 0))


class CoreGroupCertifier:
    """One ordered Group Replication run on the core (see the module doc).

    :param core: the compiled core module (:func:`repltool.binlog.engine.compiled_core`).
    """

    def __init__(self, options: CertifyOptions, core: Any) -> None:
        if not core_applies(options):
            raise CertifyError("these certify options need the Python certifier")
        names = tuple(core.cert_reason_names())
        if names != tuple(r.value for r in Reason)[:len(names)]:
            raise CertifyError("the compiled core's reasons do not match repltool.certify.Reason")
        self.options = options
        interval = options.gc_interval
        self.core = core.GroupCertifierCore(
            options.gc_every or 0, options.gc_opens_window, options.session_order,
            check_any_gtid, 0.0 if interval is None else float(interval),
            None if interval is None else _next_clock(interval))
        #: whether step_values needs the transactions' commit times (``gc_interval``)
        self.timed = interval is not None
        self._names = SeqNames(options.history_size, self.core.live_sequence_numbers)
        self._reasons = tuple(Reason)

    @property
    def steps(self) -> int:
        """Transactions (View_change aside) certified by the core so far."""
        return self.core.steps  # type: ignore[no-any-return]

    def name(self, seq: int) -> str | None:
        """``CertResult.depends_on`` of a ``last_committed`` (if remembered)."""
        return self._names.get(seq)

    def step_values(self, ws: Any, flags: int, gtid: str | None, session: Any,
                    names_gtid: str | None, explain: bool, logged: bool = True,
                    commit_time: float | None = None
                    ) -> tuple[int, int, Reason, int, str]:
        """A remote transaction from its values: ``(last_committed, sequence_number,
        reason, index of the deciding item or -1, detail)``; ``ws`` its write-set hashes
        (uint64 ints; otherwise TypeError/OverflowError/ValueError and nothing changed),
        ``gtid`` as logged (``logged=False``: as certification spells it),
        ``names_gtid`` the name its sequence number gets (as certification spells it).  ``explain=False`` (a whole run's choice): no detail
        (``""``) and no names kept."""
        lc, seq, reason, key_index, detail, kind, _wr, wkind, warg = self.core.step(
            ws, flags, gtid, session, logged, commit_time)
        _RAN[0] += 1
        if not explain:
            return lc, seq, self._reasons[reason], key_index, ""
        self._names.record(seq, names_gtid)
        return (lc, seq, self._reasons[reason], key_index,
                detail_text(detail, kind, wkind, warg, session))

    def view_change(self, commit_time: float | None = None) -> None:
        """A View_change transaction (its result is (0, 0), :data:`VIEW_CHANGE_DETAIL`)."""
        self.core.view_change(commit_time)
        _RAN[0] += 1

    def certify(self, trx: CertTransaction) -> CertResult:
        """:func:`~repltool.certify.group_replication.iter_group_replication`'s result
        for the next transaction."""
        trx.validate()
        if trx.snapshot is not None or trx.member is not None:
            raise CertifyError("a transaction with a snapshot or a member needs the "
                               "Python certifier", pos=trx.pos)
        commit_time = trx.commit_time
        if self.timed and commit_time is not None and type(commit_time) is not float:
            raise CertifyError("--gc-interval on the core needs float commit times",
                               pos=trx.pos)
        if trx.view_change:
            self.view_change(commit_time)
            return CertResult(trx=trx, computed=(0, 0), reason=Reason.VIEW_CHANGE,
                              detail=VIEW_CHANGE_DETAIL)
        ws = trx.writeset
        lc, seq, reason, key_index, detail = self.step_values(
            ws, flags_of(trx), trx.gtid, trx.session, trx.gtid, True, False, commit_time)
        return CertResult(
            trx=trx, computed=(lc, seq), reason=reason, depends_on=self._names.get(lc),
            key=None if key_index < 0 else trx.key_at(key_index),
            key_hash=None if key_index < 0 else ws[key_index],
            session_order=self.options.session_order, detail=detail)
