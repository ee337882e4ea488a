"""Group Replication certification and parallel applier indexes (WL#6833, WL#8440).

Mirrors ``Certifier::certify``, ``add_item``, ``update_parallel_applier_indexes``
and ``garbage_collect`` in ``plugin/group_replication/src/certifier.cc``
(MySQL 8.0.43, format spec 6c).

State at certifier construction: ``parallel_applier_last_committed_global = 1``,
``parallel_applier_last_sequence_number = 1``,
``parallel_applier_sequence_number = 2``. WL#8440 explains the 2: the
View_change transaction that starts the group is written with (0, 0), so the
first transaction gets (1, 2) and never intersects with it.

For each positively certified *remote* transaction, with ``seq`` the current
``parallel_applier_sequence_number``:

1. ``lc = last_committed_global``.
2. Every write-set item is stored with (snapshot version, ``seq``); the
   sequence number previously stored with an item raises ``lc`` when greater
   (and different from ``seq`` itself: duplicates in one write set).
3. No write set (DDL) or CTAS, unless the transaction is *empty*:
   ``lc = seq - 1`` and ``last_committed_global = seq`` (a new window).
   Empty transactions (GTID only, also those emptied by replication filters)
   get ``(last_committed_global, seq)`` without moving the window.
4. ``last_sequence_number = seq; seq += 1``.

Derivation for independent transactions (WL#8440 EX3, FR1): every remote
transaction that shares no key with a transaction still in the certification
info gets ``lc = last_committed_global``, which stays 1 until a DDL, CTAS or
garbage collection moves it. So 16 independent inserts from 4 sessions right
after the group started get (1, 2) .. (1, 17): all ``last_committed = 1``.
They get ``last_committed = 2`` only when a DDL came first (the table's
``CREATE TABLE`` got (1, 2) and moved the window to 2), which is the MySQL
test ``gr_parallel_applier_indexes_commit_order`` (``0 0;1 2;2 3;...;2 18``).

FR2 (same-session order): MySQL's certifier adds no session dependency; order
is kept by ``replica_preserve_commit_order``. ``CertifyOptions.session_order``
adds one (``lc >= previous seq of the session``); results carry
``session_order=True`` when it was in force.

Local transactions (from ``CertifyOptions.local_member``) store their items with
sequence number -1, consume no number and are not in the applier relay log:
their result has ``computed=None``. Negatively certified transactions change
nothing and also get ``computed=None`` with ``conflict`` set. View_change
transactions get (0, 0), consume no number and garbage-collect (MySQL's
applier passes the view's stable set to the certifier), which opens a new
window at the last sequence number. Garbage collection removes
items whose snapshot version is a strict subset of the stable set and then
sets ``last_committed_global = last_sequence_number``. Relay-log file
boundaries do not reset anything.

Memory: the certification info holds one entry per distinct write-set item
certified since the last garbage collection, as MySQL's does. MySQL collects
every ``group_replication_gtid_executed_broadcast_period`` (60 s by default),
so its info follows the write rate; repltool collects only when told to
(``gc_every``, ``gc_interval``, :class:`GarbageCollect` markers, i.e. the CLI's
``--gc-every``, ``--gc-interval``, ``--gc-stable-set``). Without any of them
nothing is ever collected: the info, and the GTID names of the sequence numbers
it refers to, grow with the number of distinct keys in the log. That is the
model's choice (no collection at all), not a leak; ``--gc-interval 60``
reproduces MySQL's default and bounds it.

With the compiled engine, :mod:`repltool.certify.grcore` runs these rules with the
certification info in C for the runs that never read a snapshot version (no member
simulation, local member or stable-set collection); this class stays the reference and
runs everything else.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence

from ._names import SeqNames
from ..binlog.gtid import MAX_GNO
from ..errors import CertifyError
from .gtidset import GtidSet, split_gtid
from .members import GroupSimulation
from .model import CertifyOptions, CertResult, CertTransaction, GarbageCollect, Reason


def check_gtid(gtid: str) -> None:
    """What the certifier checks of the GTID of a transaction whose items it stores (the
    snapshot version's GTID): ``uuid:gno`` (or ``uuid:tag:gno``) with MySQL's GNO range.

    :raises CertifyError: when it is not.
    """
    _sid, gno = split_gtid(gtid)
    if gno > MAX_GNO:
        raise CertifyError(f"a GNO beyond MySQL's largest, {MAX_GNO}")


class _SnapshotRef:
    """``Gtid_set_ref``: one per certified transaction, shared by its items.

    Its :attr:`version` (the snapshot plus the transaction's own GTID) is built
    when first read: by conflict detection or a garbage collection with a
    stable set.  Most items are overwritten or never collected before that,
    and building a set per transaction was the driver's largest cost.  The
    GTID is checked at once, as building the set would.
    """

    __slots__ = ("_snapshot", "_version", "sequence_number", "gtid")

    def __init__(self, snapshot: GtidSet | None, sequence_number: int, gtid: str) -> None:
        check_gtid(gtid)
        self._snapshot, self._version = snapshot, None
        self.sequence_number, self.gtid = sequence_number, gtid

    @property
    def version(self) -> GtidSet:
        version = self._version
        if version is None:
            version = self._version = (self._snapshot or GtidSet()).add(self.gtid)
            self._snapshot = None
        return version


class Certifier:
    """The certification info and the parallel applier indexes of one member."""

    def __init__(self, options: CertifyOptions) -> None:
        self.options = options
        self.certification_info: dict[int, _SnapshotRef] = {}
        self.parallel_applier_last_committed_global = 1
        self.parallel_applier_last_sequence_number = 1
        self.parallel_applier_sequence_number = 2
        self.stable_gtid_set: GtidSet | None = None
        self._window = (Reason.FILE_START, "certifier start: last_committed_global = 1")
        self._session_last: dict[tuple[int, int], int] = {}
        self._names = SeqNames(options.history_size, self._live)

    def _live(self) -> set[int]:
        return ({ref.sequence_number for ref in self.certification_info.values()}
                | set(self._session_last.values()))

    # ---- certify ----

    def certify(self, trx: CertTransaction, *, gtid: str, snapshot: GtidSet | None,
                local: bool, detect_conflicts: bool) -> CertResult:
        """Certify one transaction and, if remote, assign its parallel applier indexes.

        :param gtid: the transaction's GTID (generated by the caller if anonymous).
        :param snapshot: the originating member's ``gtid_executed`` at execution.
        :param local: the transaction originates on this member.
        :param detect_conflicts: run the first-committer-wins test (needs ``snapshot``).
        """
        ws = trx.writeset
        if detect_conflicts and snapshot is not None:
            conflict = self._find_conflict(ws, snapshot)
            if conflict is not None:
                index, ref = conflict
                key = trx.key_at(index)
                return CertResult(
                    trx=trx, computed=None, reason=Reason.CONFLICT, key=key, key_hash=ws[index],
                    conflict=(f"would be rolled back: {key or f'item {ws[index]:#x}'} was "
                              f"certified for {ref.gtid} ({ref.version}), which this "
                              f"transaction's snapshot {snapshot} does not include"))
        if local:
            self.assign(ws, gtid, snapshot=snapshot, local=True, empty=trx.empty,
                        ddl=trx.ddl, ctas=trx.ctas, missing_keys=trx.missing_keys,
                        session=trx.session)
            return CertResult(trx=trx, computed=None, reason=Reason.LOCAL,
                              detail="local transaction: items stored with sequence number -1")
        lc, seq, reason, detail, key_index = self.assign(
            ws, gtid, snapshot=snapshot, local=False, empty=trx.empty, ddl=trx.ddl,
            ctas=trx.ctas, missing_keys=trx.missing_keys, session=trx.session)
        self._names.record(seq, trx.gtid)
        return CertResult(
            trx=trx, computed=(lc, seq), reason=reason,
            depends_on=self._names.get(lc),
            key=None if key_index is None else trx.key_at(key_index),
            key_hash=None if key_index is None else ws[key_index],
            session_order=self.options.session_order, detail=detail)

    def assign(self, ws: Sequence[int], gtid: str, *, snapshot: GtidSet | None, local: bool,
               empty: bool, ddl: bool, ctas: bool, missing_keys: bool,
               session: tuple[int, int] | None
               ) -> tuple[int, int, Reason, str, int | None]:
        """Store a positively certified transaction's items and assign its indexes.

        What :meth:`certify` does after the conflict test, on the transaction's
        facts alone (its write-set hashes in order, its flags): ``(last_committed,
        sequence_number, reason, detail, index of the deciding item or None)``.
        A local transaction stores its items with sequence number -1 and consumes
        no number (the returned clock is then meaningless).
        """
        seq = self.parallel_applier_sequence_number
        lc = self.parallel_applier_last_committed_global
        reason, detail = self._window
        key_index: int | None = None
        if ws:
            ref = _SnapshotRef(snapshot, -1 if local else seq, gtid)
            info = self.certification_info
            for index, h in enumerate(ws):
                previous = info.get(h)
                info[h] = ref
                prev_seq = -1 if previous is None else previous.sequence_number
                if prev_seq > lc and prev_seq != seq:
                    lc, key_index = prev_seq, index
                    reason = Reason.KEY
                    detail = "a write-set item was last certified for the parent"
        if local:
            return lc, seq, Reason.LOCAL, detail, None
        empty = not ws and empty and not (ddl or ctas)
        sequential = not empty and (not ws or ctas or missing_keys)
        if sequential:
            lc = seq - 1
            key_index = None
            kind = "CTAS" if ctas else "DDL" if ddl or not ws else "missing keys"
            reason, detail = Reason.DDL, f"{kind}: applied after all previous transactions"
        elif empty:
            reason, detail = Reason.EMPTY, f"empty transaction: window start ({detail})"
        if self.options.session_order and session is not None:
            previous_seq = self._session_last.get(session, 0)
            if previous_seq > lc:
                lc, key_index = previous_seq, None
                reason, detail = Reason.SESSION, f"previous transaction of session {session}"
            self._session_last[session] = seq
        self._update_parallel_applier_indexes(update_global=sequential, increment=True)
        if sequential:
            self._window = (Reason.HISTORY_RESET, f"window opened by {kind} at {seq}")
        return lc, seq, reason, detail, key_index

    def _find_conflict(self, ws: tuple[int, ...],
                       snapshot: GtidSet) -> tuple[int, _SnapshotRef] | None:
        """First item whose certified version is not a subset of ``snapshot``."""
        for index, h in enumerate(ws):
            ref = self.certification_info.get(h)
            if ref is not None and not ref.version.is_subset(snapshot):
                return index, ref
        return None

    def _update_parallel_applier_indexes(self, *, update_global: bool, increment: bool) -> None:
        if update_global:
            self.parallel_applier_last_committed_global = (
                self.parallel_applier_sequence_number if increment
                else self.parallel_applier_last_sequence_number)
        if increment:
            self.parallel_applier_last_sequence_number = self.parallel_applier_sequence_number
            self.parallel_applier_sequence_number += 1

    # ---- view change, garbage collection ----

    def view_change(self, trx: CertTransaction, stable: GtidSet | None = None) -> CertResult:
        """A View_change transaction: (0, 0), consumes no number, opens a new window.

        MySQL's applier (``Applier_module::apply_view_change_packet``) hands the
        members' intersected ``gtid_executed`` to the certifier
        (``set_group_stable_transactions_set``), which garbage-collects: the
        indexes move with ``update_parallel_applier_indexes(true, false)``, so
        ``last_committed_global`` becomes the last sequence number.  The log does
        not carry that set, so only items stable in ``stable`` (the simulated
        group's, if any) are purged; with ``None`` nothing is purged, which only
        keeps more items for conflict detection (the window moves either way).
        """
        self.view_change_state(stable)
        return CertResult(trx=trx, computed=(0, 0), reason=Reason.VIEW_CHANGE,
                          detail="view change: (0, 0) barrier, no sequence number consumed; "
                                 "the certifier's garbage collection opens a new window")

    def view_change_state(self, stable: GtidSet | None = None) -> None:
        """What a View_change transaction does to the certifier (see :meth:`view_change`)."""
        if stable is not None:
            self.garbage_collect(stable)
        elif self.options.gc_opens_window:
            self._open_gc_window()

    def _open_gc_window(self) -> None:
        self._update_parallel_applier_indexes(update_global=True, increment=False)
        self._window = (Reason.GC_WINDOW, "window opened by garbage collection after "
                        f"{self.parallel_applier_last_sequence_number}")

    def garbage_collect(self, stable: GtidSet | None) -> int:
        """Purge stable items and open a new window; return how many items were purged.

        :param stable: newly received stable set (accumulated into
            ``stable_gtid_set``); ``None`` treats every item as stable.
        """
        if stable is not None:
            self.stable_gtid_set = (stable if self.stable_gtid_set is None
                                    else self.stable_gtid_set.union(stable))
        stable_set = None if stable is None else self.stable_gtid_set
        verdict: dict[int, bool] = {}
        purge: list[int] = []
        for h, ref in self.certification_info.items():
            gone = verdict.get(id(ref))
            if gone is None:
                gone = stable_set is None or ref.version.is_strict_subset(stable_set)
                verdict[id(ref)] = gone
            if gone:
                purge.append(h)
        for h in purge:
            del self.certification_info[h]
        if self.options.gc_opens_window:
            self._open_gc_window()
        return len(purge)


def iter_group_replication(items: Iterable[CertTransaction | GarbageCollect],
                           options: CertifyOptions) -> Iterator[CertResult]:
    """Stream :class:`CertResult` for :attr:`Mode.GROUP_REPLICATION`.

    Garbage collection runs at every :class:`GarbageCollect` item, after every
    ``gc_every`` positively certified transactions, and when ``commit_time``
    has advanced ``gc_interval`` seconds since the last time-driven run. The
    stable set is the marker's, else the simulated group's, else "everything"
    (which changes only conflict detection, never the indexes: after GC every
    stored sequence number is <= ``last_committed_global``).
    """
    certifier = Certifier(options)
    names = options.member_names
    sim = GroupSimulation(names, options.member_lag) if names else None
    since_gc = 0
    gc_clock: float | None = None
    auto_gno = 0
    for item in items:
        if isinstance(item, GarbageCollect):
            certifier.garbage_collect(item.stable)
            since_gc = 0
            continue
        trx = item
        trx.validate()
        stable = sim.stable() if sim is not None else None
        if options.gc_every is not None and since_gc >= options.gc_every:
            certifier.garbage_collect(stable)
            since_gc = 0
        if options.gc_interval is not None and trx.commit_time is not None:
            if gc_clock is None:
                gc_clock = trx.commit_time
            elif trx.commit_time - gc_clock >= options.gc_interval:
                certifier.garbage_collect(stable)
                gc_clock += options.gc_interval * math.floor(
                    (trx.commit_time - gc_clock) / options.gc_interval)
        if trx.view_change:
            yield certifier.view_change(trx, stable)
            continue
        member = sim.member_of(trx) if sim is not None else trx.member
        snapshot = sim.snapshot(member) if sim is not None and member is not None else trx.snapshot
        detect = (options.conflict_detection if options.conflict_detection is not None
                  else snapshot is not None)
        gtid = trx.gtid if trx.gtid is not None else f"{options.group_uuid}:{auto_gno + 1}"
        local = options.local_member is not None and member == options.local_member
        result = certifier.certify(trx, gtid=gtid, snapshot=snapshot, local=local,
                                   detect_conflicts=detect)
        if result.conflict is None:
            since_gc += 1
            auto_gno += trx.gtid is None
            if sim is not None and member is not None:
                sim.certified(gtid, member)
        yield result
