"""Group Replication certification on the driver straight from :class:`~.wspack.PackedPairs`.

``certify --mode group-replication --spark`` certifies every file's pairs on
the driver, in order (the certifier's info and numbering run across files).
Rebuilding a transaction, a write set, a
:class:`~repltool.certify.model.CertTransaction` and a
:class:`~repltool.certify.model.CertResult` per transaction cost the driver
more than a fifth of the job's CPU.  :class:`PackedGroupCertifier` reads the
columns instead (flags, clocks, the write sets' ``uint64`` hash arrays),
feeds :meth:`repltool.certify.group_replication.Certifier.assign` (the rules
:meth:`~repltool.certify.group_replication.Certifier.certify` applies) and
gives :class:`~repltool.certify.report.ReportColumns`: what the report reads.

It maps each transaction as :func:`repltool.certify.source.to_cert_transaction`
does and follows :func:`repltool.certify.group_replication.iter_group_replication`
for the options it takes (:func:`applies`): no member simulation, no local
member, no time-driven or stable-set garbage collection (those read objects:
the run then certifies the unpacked pairs).  Sinks that print transactions
(``--format jsonl``, ``explain``) also take the object path.

For the runs it certifies (:func:`hashed_units`) the executors send no key
descriptions, and those reading binlogs with the key-hash reader send only the
columns read here (:func:`repltool.distributed.wspack.pack_hashed`); both counted by
:func:`unit_counts` (tests assert the path ran).
"""

from __future__ import annotations

from array import array
from types import SimpleNamespace
from typing import Any, Callable, Iterator

from ..binlog.engine import compiled_core
from ..certify.group_replication import Certifier
from ..certify.grcore import check_any_gtid, core_applies, count_core
from ..certify.model import CertifyOptions, Fallback, Mode, Reason
from ..certify.report import ColumnsBuilder, ReportColumns, add_values
from ..certify.source import cert_gtid, fallback_reasons, to_cert_transaction
from .columns import field_values
from .wspack import GrFields, PackedPairs, unpack_pairs

_VIEW_CHANGE_EVENT = 37
_UINT64_MAX = (1 << 64) - 1
_NOT_EXTRACTED = (Fallback.NOT_EXTRACTED.value,)
_REASONS = tuple(Reason)


#: units certified here: all, without key descriptions, of those from the key-hash reader
_UNITS = [0, 0, 0]


def unit_counts() -> tuple[int, int, int]:
    """``(units certified from arrays, of those sent without key descriptions, of those
    read with the key-hash reader and packed as GrFields)`` in this (driver) process."""
    return _UNITS[0], _UNITS[1], _UNITS[2]


def hashed_units(run: Any, report_only: bool) -> bool:
    """Whether the executors may send ``run``'s units without the keys' descriptions
    (``PairsSpec.hashed``): before the job, what :func:`applies` will say after
    ``attach`` for a run whose mode is asked (``--mode group-replication``), when only
    the report is built (``report_only``: no sink reads a transaction)."""
    options: CertifyOptions = run.options
    return (report_only and run.asked_mode is Mode.GROUP_REPLICATION and not run.reads_pairs
            and not run.stable_sets and not options.member_names
            and options.local_member is None and options.gc_interval is None)


def applies(run: Any) -> bool:
    """Whether ``run`` (a :class:`~repltool.certify.stitched.PairsRun` after ``attach``)
    can be certified by :class:`PackedGroupCertifier`."""
    options: CertifyOptions = run.options
    return (run.mode is Mode.GROUP_REPLICATION and not run.reads_pairs
            and not run.stable_sets and not options.member_names
            and options.local_member is None and options.gc_interval is None)


class PackedGroupCertifier:
    """One ordered Group Replication certification over packed units (see the module doc).

    :param truncated: called once per truncated transaction skipped.
    """

    def __init__(self, options: CertifyOptions, schema: Any,
                 truncated: Callable[[], None]) -> None:
        self.options, self.schema, self._truncated = options, schema, truncated
        self.certifier = Certifier(options)
        self._since_gc = 0
        self._auto_gno = 0
        #: transactions certified from the arrays (tests check that this path ran)
        self.certified = 0
        #: of those, certified by the compiled core (a whole unit per call)
        self.in_core = 0
        core = compiled_core()
        self._core = (core.GroupCertifierCore(options.gc_every or 0, options.gc_opens_window,
                                              options.session_order, check_any_gtid)
                      if core is not None and core_applies(options)
                      and options.gc_interval is None else None)

    def part(self, packed: PackedPairs | list[Any]) -> ReportColumns:
        """Certify one unit's pairs, in order, after the units before it."""
        builder = ColumnsBuilder()
        if not isinstance(packed, PackedPairs):
            packed = _repacked(packed)
        _UNITS[0] += 1
        _UNITS[1] += packed.keys is None
        _UNITS[2] += packed.trxs.cls is GrFields
        n = packed.n
        if n == 0:
            return builder.columns()
        if self._core is not None:
            return self._core_part(packed, builder)
        trxs = packed.trxs
        col = lambda name: field_values(trxs, name)  # noqa: E731
        truncated, gtids, kinds = col("truncated"), col("gtid"), col("kind")
        rows, lcs, seqs = _rows(trxs), col("last_committed"), col("sequence_number")
        threads, servers = col("thread_id"), col("server_id")
        originals = col("original_commit_timestamp")
        immediates = col("immediate_commit_timestamp")
        commit_ids = col("commit_id")
        import zlib
        present = zlib.decompress(packed.present)
        offsets, hashes = array("q"), array("Q")
        offsets.frombytes(zlib.decompress(packed.offsets))
        hashes.frombytes(zlib.decompress(packed.hashes))
        ws_cols = packed.writesets
        if len(ws_cols):
            missing_tables = field_values(ws_cols, "missing_key_tables")
            limit = field_values(ws_cols, "limit_reached")
            reasons = field_values(ws_cols, "missing_key_reasons")
            only = field_values(ws_cols, "hashes_only")
        options, certifier, events = self.options, self.certifier, packed.events
        gc_every, group_uuid = options.gc_every, options.group_uuid
        w = -1
        for i in range(n):
            if present[i]:
                w += 1
            if truncated[i]:
                self._truncated()
                continue
            lc_log, seq_log = lcs[i], seqs[i]
            recorded = (lc_log or 0, seq_log or 0)
            if min(recorded) < 0:
                _raise_as_objects(packed, i, self.schema)
            thread = threads[i]
            session = (servers[i], thread) if thread is not None else None
            evs = events.get(i)
            view = bool(evs) and any(ev.type_code == _VIEW_CHANGE_EVENT for ev in evs)
            kind, has_rows = kinds[i], bool(rows[i])
            ctas = kind == "ddl" and has_rows
            fallback: tuple[str, ...] = ()
            if not view:
                if present[i]:
                    start, end = offsets[w], offsets[w + 1]
                    if end > start:
                        ws: Any = hashes[start:end]
                    else:
                        ws = only[w]
                        if isinstance(ws, list):
                            ws = ()     # to_cert_transaction: the keys' hashes, none
                        elif any(not isinstance(h, int) or not 0 <= h <= _UINT64_MAX
                                 for h in ws):
                            _raise_as_objects(packed, i, self.schema)
                    missing = missing_tables[w]
                    ddl = kind == "ddl" and end == start and not missing and not limit[w]
                    missing_keys = bool(missing)
                    if missing:
                        fallback = fallback_reasons(SimpleNamespace(
                            missing_key_tables=missing, missing_key_reasons=reasons[w]),
                            self.schema)
                else:
                    ws = ()
                    ddl, missing_keys = kind == "ddl" and not has_rows, has_rows
                    fallback = _NOT_EXTRACTED if has_rows else ()
            if gc_every is not None and self._since_gc >= gc_every:
                certifier.garbage_collect(None)
                self._since_gc = 0
            if view:
                certifier.view_change_state(None)
                computed, reason = (0, 0), Reason.VIEW_CHANGE
            else:
                gtid = cert_gtid(gtids[i])
                lc, seq, reason, _, _ = certifier.assign(
                    ws, gtid if gtid is not None else f"{group_uuid}:{self._auto_gno + 1}",
                    snapshot=None, local=False, empty=kind == "empty", ddl=ddl, ctas=ctas,
                    missing_keys=missing_keys, session=session)
                computed = (lc, seq)
                self._since_gc += 1
                self._auto_gno += gtid is None
            add_values(builder, recorded, computed, reason, fallback=fallback,
                       without_clock=lc_log is None or seq_log is None,
                       no_session=session is None and not view, original=originals[i],
                       immediate=immediates[i], commit_id=commit_ids[i])
            self.certified += 1
        return builder.columns()

    def _core_part(self, packed: PackedPairs, builder: ColumnsBuilder) -> ReportColumns:
        """:meth:`part` in one call of the compiled core (``GroupCertifierCore.certify_unit``:
        the same loop, the certification info in C)."""
        import zlib
        n, trxs, schema = packed.n, packed.trxs, self.schema
        col = lambda name: field_values(trxs, name)  # noqa: E731
        views = {i for i, evs in packed.events.items()
                 if evs and any(ev.type_code == _VIEW_CHANGE_EVENT for ev in evs)}
        offsets, hashes = array("q"), array("Q")
        offsets.frombytes(zlib.decompress(packed.offsets))
        hashes.frombytes(zlib.decompress(packed.hashes))
        ws_cols = packed.writesets
        missing_tables: list[Any] = []
        limit: list[Any] = []
        reasons: list[Any] = []
        only: list[Any] = []
        if len(ws_cols):
            missing_tables = field_values(ws_cols, "missing_key_tables")
            limit = field_values(ws_cols, "limit_reached")
            reasons = field_values(ws_cols, "missing_key_reasons")
            only = field_values(ws_cols, "hashes_only")

        def fallback_of(w: int) -> tuple[str, ...]:
            return fallback_reasons(SimpleNamespace(
                missing_key_tables=missing_tables[w], missing_key_reasons=reasons[w]), schema)

        def raise_at(i: int) -> None:
            _raise_as_objects(packed, i, schema)

        zeros = bytes(16 * n)
        recorded, computed = array("q", zeros), array("q", zeros)
        counts = array("q", bytes(8 * 16))
        m, changed, without_clock, no_session, replicated, fallbacks, commit_ids = \
            self._core.certify_unit(
                n, col("truncated"), col("gtid"), col("kind"), _rows(trxs),
                col("last_committed"), col("sequence_number"), col("thread_id"),
                col("server_id"), col("original_commit_timestamp"),
                col("immediate_commit_timestamp"), col("commit_id"), views,
                zlib.decompress(packed.present), offsets, hashes, missing_tables, limit, only,
                fallback_of, _NOT_EXTRACTED, self._truncated, raise_at, recorded, computed,
                counts)
        del recorded[2 * m:], computed[2 * m:]
        builder.recorded, builder.computed = recorded, computed
        for code, count in enumerate(counts):
            if count:
                builder.reasons[_REASONS[code]] += count
        builder.changed, builder.without_clock = changed, without_clock
        builder.no_session, builder.replicated = no_session, replicated
        builder.fallbacks = fallbacks
        builder.commit_ids = commit_ids
        self.certified += m
        self.in_core += m
        count_core(m)
        return builder.columns()

    def parts(self, units: Iterator[PackedPairs | list[Any]]) -> Iterator[ReportColumns]:
        for packed in units:
            yield self.part(packed)


def _rows(trxs: Any) -> list[Any]:
    """Per transaction: whether it has Rows events (true values), from either packing."""
    return field_values(trxs, "has_rows" if trxs.cls is GrFields else "rows_events")


def _repacked(pairs: list[Any]) -> PackedPairs:
    from .wspack import pack_pairs
    return pack_pairs(pairs)


def _raise_as_objects(packed: PackedPairs, i: int, schema: Any) -> None:
    """Raise the error the object path raises for the ``i``-th transaction."""
    trx, ws = unpack_pairs(packed)[i]
    to_cert_transaction(trx, ws, schema=schema).validate()
    raise AssertionError("a packed transaction failed a check its object passes")
