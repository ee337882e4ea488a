"""Certify real logs: reader -> write sets -> certification, and JSON-ready report rows.

:class:`CertifyRun` is the library side of ``repltool certify``: it reads the
logs in order, extracts each transaction's write set with
:mod:`repltool.writeset` (its fused reader, ``read_writesets``),
maps it through :mod:`.source`, certifies the stream and yields
:class:`Certified` pairs: the reader's :class:`~repltool.binlog.transactions.Transaction`
next to its :class:`~repltool.certify.model.CertResult`. Everything streams;
memory follows the largest transaction and the certification history.

:class:`ReportBuilder` consumes those pairs once and returns a
:class:`CertifyReport`: parallelism of the logged and of the computed clocks
(:func:`~repltool.certify.summary.summarise`), the longest window, reason
counts and, for MariaDB logs, the group commits (runs of equal ``commit_id``)
the server itself recorded. :func:`result_row` is the ``--format jsonl`` row.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
from json.encoder import encode_basestring as _str   # what json.dumps(ensure_ascii=False) writes
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ..binlog import ReadOptions, group_transactions, read_events, read_transactions
from ..binlog import structs as S
from ..binlog.constants import BINLOG_MAGIC, EventFlag, EventType
from ..paths import Paths, path_list
from .gtidset import GtidSet
from .model import (CertifyOptions, CertResult, CertTransaction, GarbageCollect, KeyRef, Mode,
                    Reason, key_ref)
from .coretrack import CoreDependencyTracker, hashed_flags
from .grcore import CoreGroupCertifier, core_applies
from .source import (WritesetLike, cert_gtid, fallback_reasons, iter_cert_pairs, log_gtid,
                     segmented_pairs, to_cert_transaction)
from .summary import SPAN_WINDOW, Summary, summarise

if TYPE_CHECKING:
    from ..binlog.transactions import Transaction
    from ..binlog.damage import DamageLog
    from ..binlog.window import Window


LANE_PART = 1 << 16
"""Transactions per :class:`ReportColumns` part of :meth:`CertifyRun.lane_parts`."""


class Certified(NamedTuple):
    """One certified transaction: what the reader saw and what certification computed."""

    transaction: Transaction
    result: CertResult


def default_mode(first: Transaction | None) -> Mode:
    """``group-replication`` for relay logs, ``writeset`` for binlogs (and empty input)."""
    return Mode.GROUP_REPLICATION if first is not None and first.relay_log else Mode.WRITESET


#: the modes whose trackers drop a write set past the history size (MySQL's
#: ``add_write_set`` unless Group Replication requires the full write set)
_DROPPING = frozenset({Mode.WRITESET, Mode.WRITESET_SESSION})
#: the first event's type code and flags, after the 4-byte magic
_FDE_TYPE = len(BINLOG_MAGIC) + S.HEADER.offsets["type_code"]
_FDE_FLAGS = S.HEADER.span("flags", len(BINLOG_MAGIC))


def drops_past_limit(mode: Mode | str | None, paths: Sequence[str]) -> bool:
    """Whether certification in ``mode`` may drop a write set past the history size
    (``WritesetExtractor(drop_past_limit=True)``): in the WRITESET modes.  With no
    mode (:func:`default_mode` reads the first transaction, after its write set),
    when every file starts with a Format_description_event not flagged
    ``LOG_EVENT_RELAY_LOG_F`` (binlogs: writeset); otherwise, or when a file cannot
    be read so, every key is kept (the results are the same, only memory differs)."""
    if mode is not None:
        return Mode(mode) in _DROPPING
    try:
        for path in paths:
            # only regular files are peeked at (a FIFO would block here before the
            # reader refuses it; stdin is spooled to a regular file first)
            if not stat.S_ISREG(os.stat(path).st_mode):
                return False
            with open(path, "rb") as fh:
                head = fh.read(_FDE_FLAGS.stop)         # magic + the first header
            if len(head) < _FDE_FLAGS.stop or head[:len(BINLOG_MAGIC)] != BINLOG_MAGIC \
                    or head[_FDE_TYPE] != EventType.FORMAT_DESCRIPTION_EVENT \
                    or int.from_bytes(head[_FDE_FLAGS], "little") & EventFlag.RELAY_LOG:
                return False
    except OSError:
        return False
    return bool(paths)


def writeset_extractor() -> Callable[..., Iterator[tuple[Any, Any]]]:
    """``repltool.writeset.iter_writesets``: (transaction, write set) pairs of transactions."""
    from ..writeset import iter_writesets
    return iter_writesets


class CertifyRun:
    """Certify logs as one ordered stream of :class:`Certified` pairs (iterate once).

    :param paths: binlogs or relay logs, in order.
    :param mode: ``None``: :func:`default_mode` of the first transaction.
    :param options: certification knobs (history size, baseline, GR options).
    :param verify_checksum: verify every CRC32.
    :param schema_paths: ``CREATE TABLE`` files for :func:`repltool.writeset.load_schema`.
    :param schema_db: the database of their unqualified tables (``--schema-db``).
    :param damage: read with ``keep_going`` (``--keep-going``): damaged regions are
        skipped, recorded in it, and end the transaction they cut (truncated: not
        certified).
    :param stable_sets: GR garbage collection with a given stable set: one run
        right after the last GTID of each set has been certified.
    :param use_writesets: extract write sets (False: every transaction with
        rows counts as having missing keys, as without a usable key).
    :param default_collation: the collation of string key columns neither the
        log nor the schema names (:class:`repltool.writeset.WritesetExtractor`).
    :param window: certify only the transactions in this window
        (:meth:`repltool.binlog.window.Window.select`), as if the logs held only
        them: the write-set history starts empty at the window's first one.
    """

    def __init__(self, paths: Paths, mode: Mode | str | None = None,
                 options: CertifyOptions | None = None, *, verify_checksum: bool = True,
                 schema_paths: Sequence[str | os.PathLike[str]] = (),
                 stable_sets: Sequence[GtidSet] = (), use_writesets: bool = True,
                 default_collation: str | None = None, window: Window | None = None,
                 schema_db: str | None = None, damage: DamageLog | None = None) -> None:
        self.paths = path_list(paths)
        windowed = window is not None and window.active
        self.default_collation = default_collation
        self.options = options or CertifyOptions()
        self.stable_sets = tuple(stable_sets)
        self.truncated_skipped = 0
        self.warnings: list[str] = []
        self.extractor = writeset_extractor() if use_writesets else None
        self.schema = None
        if not schema_paths and self.extractor is not None:
            self.warnings.append("no --schema: only primary keys from the Table_maps are known; "
                                 "UNIQUE and FOREIGN keys are missed, which is unsafe where "
                                 "the tables have them")
        if schema_paths and self.extractor is not None:
            from ..writeset import load_schema
            self.schema = load_schema([os.fspath(p) for p in schema_paths], default_db=schema_db)
        # The fused reader (repltool.writeset.read_writesets: the same pairs, its
        # transactions without events) unless a subclass reads the pairs itself
        # (explain's runs look at the events of DDL transactions).
        self._fused: Iterator[tuple[Transaction, Any]] | None = None
        if self.extractor is not None and type(self)._pairs is CertifyRun._pairs \
                and not windowed and damage is None:
            from ..writeset import read_writeset_hashes, read_writesets
            drop = drops_past_limit(mode, self.paths)
            # the WRITESET modes, and group replication on the core, read the keys' hashes
            # and describe only the shared key of a line (read_writeset_hashes); other runs
            # keep the WriteKey records
            hashed = type(self) is CertifyRun and (drop or (
                mode is not None and Mode(mode) is Mode.GROUP_REPLICATION
                and core_group_certifier(self.options, self.stable_sets) is not None))
            read = read_writeset_hashes if hashed else read_writesets
            self._fused = read(self.paths, self.schema, verify_checksum=verify_checksum,
                               history_size=self.options.history_size,
                               default_collation=default_collation, drop_past_limit=drop)
            self._first_pair = next(self._fused, None)
            self._first = self._first_pair[0] if self._first_pair is not None else None
        else:
            opts = _read_options(verify_checksum, self.extractor is not None)
            if damage is None:
                self._transactions = read_transactions(self.paths, opts, keep_events=True)
            else:
                from dataclasses import replace
                from ..binlog.damage import cut_tails
                self._transactions = cut_tails(group_transactions(
                    damage.count(read_events(self.paths, replace(opts, keep_going=True))),
                    keep_events=True))
            if windowed:
                assert window is not None
                self._transactions = window.select(self._transactions, self.paths)
            self._first = next(self._transactions, None)
        self.relay_log = self._first is not None and self._first.relay_log
        self.mode = Mode(mode) if mode is not None else default_mode(self._first)

    # ---- the stream ----

    def _all_transactions(self) -> Iterator[Transaction]:
        if self._first is not None:
            yield self._first
            yield from self._transactions

    def _pairs(self) -> Iterator[tuple[Transaction, WritesetLike | None]]:
        if self._fused is not None:
            return self._fused_pairs(self._fused)
        transactions = self._counting(self._all_transactions())
        if self.extractor is None:
            return ((t, None) for t in transactions)
        return self.extractor(transactions, self.schema, history_size=self.options.history_size,
                              default_collation=self.default_collation,
                              drop_past_limit=self.mode in _DROPPING)

    def _fused_pairs(self, rest: Iterator[tuple[Transaction, Any]]
                     ) -> Iterator[tuple[Transaction, WritesetLike | None]]:
        if self._first_pair is None:
            return
        for trx, ws in itertools.chain((self._first_pair,), rest):
            self.truncated_skipped += trx.truncated
            yield trx, ws

    def _counting(self, transactions: Iterable[Transaction]) -> Iterator[Transaction]:
        for t in transactions:
            self.truncated_skipped += t.truncated
            yield t

    def __iter__(self) -> Iterator[Certified]:
        from . import certify
        grc = self._gr_core()
        if grc is not None:     # the same results, the certification info in C (.grcore)
            for trx, cert in iter_cert_pairs(self._pairs(), schema=self.schema):
                yield Certified(trx, grc.certify(cert))
            return
        pending: deque[Transaction] = deque()

        def feed() -> Iterator[CertTransaction | GarbageCollect]:
            gc = _StableSetGC(self.stable_sets) if self.mode is Mode.GROUP_REPLICATION else None
            for trx, cert in iter_cert_pairs(self._pairs(), schema=self.schema):
                pending.append(trx)
                yield cert
                if gc is not None:
                    yield from gc.after(cert.gtid)

        for result in certify(feed(), self.mode, self.options):
            yield Certified(pending.popleft(), result)

    def _gr_core(self) -> CoreGroupCertifier | None:
        """The Group Replication certifier on the compiled core, where this run's
        options let it certify (:func:`.grcore.core_applies`); else None."""
        if self.mode is not Mode.GROUP_REPLICATION:
            return None
        return core_group_certifier(self.options, self.stable_sets)

    def lane_parts(self, writers: Sequence[Callable[[str], Any]] = ()
                   ) -> Iterator[ReportColumns] | None:
        """The run's :class:`ReportColumns`, certified on the compiled core without a
        :class:`CertResult` per transaction, each transaction's ``--format jsonl`` line
        (:func:`result_line`) handed to every writer; None where this does not apply
        (the pure-Python engine, group replication with options the core does not
        take, a subclass's own stream): iterate the run instead."""
        from ..binlog.engine import compiled_core
        if type(self) is not CertifyRun:
            return None
        if self.mode is Mode.GROUP_REPLICATION:
            grc = self._gr_core()
            return None if grc is None else self._gr_lane(grc, writers)
        core = compiled_core()
        if core is None:
            return None
        return self._lane(CoreDependencyTracker(self.mode, self.options, core), writers)

    def _lane(self, tracker: CoreDependencyTracker, writers: Sequence[Callable[[str], Any]]
              ) -> Iterator[ReportColumns]:
        name = tracker.name
        if not writers:
            yield from core_lane(self._pairs(), tracker, self.schema)
            return

        def emit(trx: Transaction, ws: Any, cert: CertTransaction | None,
                 out: tuple[int, int, Reason, int, str, bool], fallback: tuple[str, ...],
                 new_file: bool) -> None:
            if cert is None:
                line = self._values_line(trx, ws, out, fallback, new_file, name)
            else:
                value, seq, reason, key_index, detail, raised = out
                key = cert.key_at(key_index) if key_index >= 0 else None
                line = line_of(trx, (value, seq), reason, name(value), key, detail, None,
                               cert.fallback, raised, None)
                if line is None:        # an unusual field type: json.dumps of the row
                    line = self._object_line(trx, cert, out, name)
            for write in writers:
                write(line)
        yield from core_lane(self._pairs(), tracker, self.schema, emit)

    def _gr_lane(self, certifier: CoreGroupCertifier, writers: Sequence[Callable[[str], Any]]
                 ) -> Iterator[ReportColumns]:
        """:meth:`_lane` for Group Replication: each transaction's values stepped on
        the core (no :class:`CertTransaction`) where the reader gave a write set and
        no events (so no View_change); otherwise :meth:`CoreGroupCertifier.certify`
        of its :class:`CertTransaction` (the same certifier)."""
        schema, step_values, name = self.schema, certifier.step_values, certifier.name
        certify_object, timed = certifier.certify, certifier.timed
        explain = bool(writers)     # the lines name parents and say why; the columns do not
        builder = ColumnsBuilder()
        for trx, ws, _, new_file in segmented_pairs(self._pairs()):
            lc, sn = trx.last_committed, trx.sequence_number
            rec_lc, rec_seq = lc or 0, sn or 0
            out: tuple[int, int, Reason, int, str] | None = None
            if ws is not None and not trx.events and type(rec_lc) is int \
                    and type(rec_seq) is int and rec_lc >= 0 and rec_seq >= 0:
                # to_cert_transaction's values, without the CertTransaction
                keys = ws.keys
                hashes = getattr(ws, "hashes", None)
                if hashes is None or isinstance(hashes, list):
                    hashes = tuple([int(k.hash) for k in keys])
                nk = len(keys)
                missing, limit, kind = ws.missing_key_tables, ws.limit_reached, trx.kind
                if not nk or nk == len(hashes):
                    fallback = fallback_reasons(ws, schema) if missing else ()
                    thread = trx.thread_id
                    session = (trx.server_id, thread) if thread is not None else None
                    flags = 0
                    if kind == "ddl":
                        if not keys and not missing and not limit:
                            flags = 1                               # ddl
                        if trx.rows_events:
                            flags |= 2                              # ctas
                    if missing:
                        flags |= 4
                    if kind == "empty":
                        flags |= 8
                    gtid = trx.gtid
                    commit_time = None
                    if timed:       # to_cert_transaction's commit_time
                        immediate = trx.immediate_commit_timestamp
                        commit_time = (immediate / 1e6 if immediate
                                       else float(trx.end_timestamp or trx.timestamp))
                    try:
                        out = step_values(hashes, flags, gtid, session,
                                          cert_gtid(gtid) if explain else None, explain,
                                          True, commit_time)
                    except (TypeError, OverflowError, ValueError):
                        if certifier.core.stage:
                            raise       # not the write set's: the run's error
                        out = None      # certify() words the error (CertTransaction.validate)
                    else:
                        value, seq, reason, key_index, detail = out
                        computed = (value, seq)
                        add_values(builder, (rec_lc, rec_seq), computed, reason,
                                   fallback=fallback, without_clock=lc is None or sn is None,
                                   no_session=session is None,
                                   original=trx.original_commit_timestamp,
                                   immediate=trx.immediate_commit_timestamp,
                                   commit_id=trx.commit_id)
                        if explain:
                            line = self._values_line(trx, ws, (*out, False), fallback,
                                                     new_file, name)
                            for write in writers:
                                write(line)
            if out is None:
                cert = to_cert_transaction(trx, ws, schema=schema, new_file=new_file)
                result = certify_object(cert)
                builder.add(trx, cert, result.computed, result.reason, False)
                if explain:
                    line = result_line(Certified(trx, result))
                    for write in writers:
                        write(line)
            if len(builder) >= LANE_PART:
                yield builder.columns()
                builder = ColumnsBuilder()
        if len(builder):
            yield builder.columns()

    def _values_line(self, trx: Transaction, ws: Any,
                     out: tuple[int, int, Reason, int, str, bool], fallback: tuple[str, ...],
                     new_file: bool, name: Callable[[int], str | None]) -> str:
        """:func:`result_line` of a transaction stepped on its write set's values (no
        :class:`CertTransaction`, made here only for an unusual field type)."""
        value, seq, reason, key_index, detail, raised = out
        keys = ws.keys
        key = key_ref(keys[key_index]) if 0 <= key_index < len(keys) else None  # cert.key_at
        line = line_of(trx, (value, seq), reason, name(value), key, detail, None, fallback,
                       raised, None)
        if line is None:
            cert = to_cert_transaction(trx, ws, schema=self.schema, new_file=new_file)
            line = self._object_line(trx, cert, out, name)
        return line

    def _object_line(self, trx: Transaction, cert: CertTransaction,
                     out: tuple[int, int, Reason, int, str, bool],
                     name: Callable[[int], str | None]) -> str:
        """:func:`result_line` of a :class:`CertResult` made of a step's values."""
        value, seq, reason, key_index, detail, raised = out
        mode = self.mode
        return result_line(Certified(trx, CertResult(
            trx=cert, computed=(value, seq), reason=reason, depends_on=name(value),
            key=cert.key_at(key_index) if key_index >= 0 else None,
            key_hash=cert.writeset[key_index] if key_index >= 0 else None,
            detail=detail, raised=raised,
            session_order=mode is Mode.WRITESET_SESSION or (
                mode is Mode.GROUP_REPLICATION and self.options.session_order))))


def core_group_certifier(options: CertifyOptions, stable_sets: Sequence[GtidSet] = ()
                         ) -> CoreGroupCertifier | None:
    """A :class:`~repltool.certify.grcore.CoreGroupCertifier` for a run over logs with
    ``options`` and ``--gc-stable-set`` sets; None with the pure-Python engine or where
    the Python certifier must run (:func:`~repltool.certify.grcore.core_applies`)."""
    from ..binlog.engine import compiled_core
    core = compiled_core()
    if core is None or not core_applies(options, stable_sets):
        return None
    return CoreGroupCertifier(options, core)


#: transactions of CertifyRun's lane stepped on their values (no CertTransaction)
_DIRECT = [0]


def lane_direct_transactions() -> int:
    """How many transactions this process's ``certify`` lane certified from the hash
    reader's values, without a :class:`CertTransaction` (tests assert that path ran)."""
    return _DIRECT[0]


def _read_options(verify_checksum: bool, writesets: bool) -> ReadOptions:
    """Decode what grouping needs, plus Table_map and rows bodies for write sets."""
    from dataclasses import replace
    if writesets:
        from ..writeset import READ_OPTIONS  # type: ignore[attr-defined]
        return replace(READ_OPTIONS, verify_checksum=verify_checksum)
    from ..binlog.transactions import GROUPING_TYPES
    return ReadOptions(verify_checksum=verify_checksum, types=GROUPING_TYPES)


class _StableSetGC:
    """Emit a :class:`GarbageCollect` once every GTID of a given stable set was certified."""

    def __init__(self, sets: Sequence[GtidSet]) -> None:
        self._left = [[s, len(s)] for s in sets]

    def after(self, gtid: str | None) -> Iterator[GarbageCollect]:
        if gtid is None or ":" not in gtid or not self._left:
            return                  # anonymous, or MariaDB "d-s-n": never in a MySQL set
        for entry in list(self._left):
            stable, _ = entry
            if gtid in stable:
                entry[1] -= 1
                if entry[1] <= 0:
                    self._left.remove(entry)
                    yield GarbageCollect(stable=stable)


# ---- JSON rows ----

def key_dict(key: KeyRef | None) -> dict[str, Any] | None:
    if key is None:
        return None
    return {"db": key.db, "table": key.table, "index": key.index, "values": list(key.values)}


def _key_json(key: KeyRef) -> str:
    """``json.dumps(key_dict(key), ensure_ascii=False)``, built without the dict."""
    db, table, index, values = key.db, key.table, key.index, key.values
    if type(db) is str and type(table) is str and type(index) is str \
            and all(type(v) is str for v in values):
        return "".join(('{"db": ', _str(db), ', "table": ', _str(table), ', "index": ',
                        _str(index), ', "values": [', ", ".join(map(_str, values)), "]}"))
    return json.dumps(key_dict(key), ensure_ascii=False)


def recorded_clock(trx: Transaction) -> tuple[int, int] | None:
    """The logged ``(last_committed, sequence_number)``, None without a clock (MariaDB, 5.6)."""
    if trx.last_committed is None or trx.sequence_number is None:
        return None
    return trx.last_committed, trx.sequence_number


def result_row(c: Certified) -> dict[str, Any]:
    """The ``--format jsonl`` object of one transaction.

    ``file``/``pos`` locate its first event (the GTID event); ``recorded`` is
    the logged clock or null; ``computed`` null for a GR transaction without
    a number (local, or negatively certified: then ``conflict`` says why);
    ``depends_on`` explains ``computed[0]``: the GTID whose sequence number
    it is (null when anonymous or before the history), the reason, the shared
    key for reason ``key``, and a sentence.  ``missing_keys`` (only when the
    write set could not be used) lists why, one reason per such table;
    ``raised`` (only when true) marks a logged parent raised to an earlier
    writer of a shared key (``CertResult.raised``).
    """
    trx, r = c
    recorded = recorded_clock(trx)
    row: dict[str, Any] = {
        "file": trx.start.file, "pos": trx.start.offset, "gtid": trx.gtid,
        "segment": trx.segment or trx.start.file,
        "recorded": list(recorded) if recorded is not None else None,
        "computed": list(r.computed) if r.computed is not None else None,
        "changed": r.computed != recorded,
        "depends_on": {"gtid": log_gtid(r.depends_on), "reason": r.reason.value,
                       "key": key_dict(r.key), "detail": r.detail},
    }
    if r.conflict is not None:
        row["conflict"] = r.conflict
    if r.trx.fallback:
        row["missing_keys"] = list(r.trx.fallback)
    if r.raised:
        row["raised"] = True
    return row


def _clock_json(clock: Any) -> str | None:
    """``json.dumps(list(clock))`` of a two-int clock; None: not that shape."""
    if clock is None:
        return "null"
    a, b = clock
    if type(a) is not int or type(b) is not int:
        return None
    return "[%d, %d]" % (a, b)


_REASON_JSON = {r: _str(r.value) for r in Reason}


def result_line(c: Certified) -> str:
    """``json.dumps(result_row(c), ensure_ascii=False)``, built without the dict (the
    ``--format jsonl`` line of every transaction); any unusual field type takes
    ``json.dumps``."""
    trx, r = c
    return line_of(trx, r.computed, r.reason, r.depends_on, r.key, r.detail, r.conflict,
                   r.trx.fallback, r.raised, c)  # type: ignore[return-value]


def line_of(trx: Transaction, computed: Any, reason: Reason, depends_on: str | None,
            key: KeyRef | None, detail: Any, conflict: Any, fallback: tuple[str, ...],
            raised: bool, certified: Certified | None) -> str | None:
    """:func:`result_line` from the values of a :class:`CertResult`; for an unusual
    field type ``json.dumps(result_row(certified))``, or None without ``certified``."""
    start = trx.start
    lc, sn = trx.last_committed, trx.sequence_number
    if lc is None or sn is None:
        recorded, rec = None, "null"                # recorded_clock(trx), _clock_json
    else:
        recorded = (lc, sn)
        rec = "[%d, %d]" % recorded if type(lc) is int and type(sn) is int else None
    comp = _clock_json(computed)
    file, offset, gtid, segment = start.file, start.offset, trx.gtid, trx.segment or start.file
    depends = log_gtid(depends_on)
    if rec is None or comp is None or type(offset) is not int or type(file) is not str \
            or type(segment) is not str or not (gtid is None or type(gtid) is str) \
            or not (depends is None or type(depends) is str) \
            or not (detail is None or type(detail) is str):
        return None if certified is None else json.dumps(result_row(certified),
                                                          ensure_ascii=False)
    parts = ['{"file": ', _str(file), ', "pos": ', int.__repr__(offset), ', "gtid": ',
             "null" if gtid is None else _str(gtid), ', "segment": ', _str(segment),
             ', "recorded": ', rec, ', "computed": ', comp, ', "changed": ',
             "true" if computed != recorded else "false",
             ', "depends_on": {"gtid": ', "null" if depends is None else _str(depends),
             ', "reason": ', _REASON_JSON.get(reason) or _str(reason.value), ', "key": ',
             "null" if key is None else _key_json(key),
             ', "detail": ', "null" if detail is None else _str(detail), "}"]
    if conflict is not None:
        parts += [', "conflict": ', json.dumps(conflict, ensure_ascii=False)]
    if fallback:
        parts += [', "missing_keys": ',
                  "[" + ", ".join(map(_str, fallback)) + "]"
                  if all(type(f) is str for f in fallback)
                  else json.dumps(list(fallback), ensure_ascii=False)]
    if raised:
        parts.append(', "raised": true')
    parts.append("}")
    return "".join(parts)


class LineSink:
    """A ``--format jsonl`` sink: ``write(result_line(c))`` for each pair.  A run on the
    compiled core writes the same lines without a :class:`CertResult` per transaction
    (:meth:`CertifyRun.lane_parts`) when its sinks are all of this kind."""

    __slots__ = ("write",)

    def __init__(self, write: Callable[[str], Any]) -> None:
        self.write = write

    def __call__(self, c: Certified) -> None:
        self.write(result_line(c))


# ---- the summary ----

@dataclass(frozen=True, slots=True)
class CommitIdGroups:
    """MariaDB's own parallelism: runs of consecutive transactions sharing ``commit_id``.

    A MariaDB replica (``slave_parallel_mode=conservative``) applies one group
    commit in parallel and the groups one after another, so its work/span is
    ``transactions / (groups + singletons)``.
    """

    transactions: int
    with_commit_id: int
    groups: int
    in_groups: int
    singletons: int
    max_group: int

    @property
    def mean_group(self) -> float:
        """Transactions per group commit of two or more."""
        return self.in_groups / self.groups if self.groups else 0.0

    @property
    def parallelism(self) -> float:
        span = self.groups + self.singletons
        return self.transactions / span if span else 0.0


@dataclass(frozen=True, slots=True)
class CertifyReport:
    """What ``repltool certify`` prints as text.

    :ivar fallback_transactions: transactions with rows whose write set could
        not be used ("missing keys": commit-order parent kept, or applied after
        everything before them in group-replication mode).
    :ivar fallbacks: those transactions by reason (:class:`~repltool.certify.model.Fallback`
        values or an extractor's own); one with two reasons counts in both.
    :ivar no_session: transactions (view changes aside) whose session is not in
        the log (no Query event with a thread id: MariaDB's row-based DML), so
        the session rule could not order them.
    :ivar replicated: transactions a replica wrote (``original_commit_timestamp``
        differs from ``immediate_commit_timestamp``): MySQL's WRITESET_SESSION
        there used the applier worker's session, which the log does not record.
    :ivar raised: writeset modes: transactions whose logged clock let them
        overlap an earlier writer of one of their keys; their parent was raised
        to that writer (MySQL keeps the smaller value; see ``CertResult.raised``).
    """

    files: tuple[str, ...]
    mode: Mode
    relay_log: bool
    session_order: bool
    options: dict[str, Any]
    writesets: bool
    summary: Summary
    max_window_before: int
    max_window_after: int
    without_clock: int
    truncated_skipped: int
    commit_id: CommitIdGroups | None
    warnings: tuple[str, ...] = ()
    retag: tuple[Any, ...] = field(default=())
    fallback_transactions: int = 0
    fallbacks: dict[str, int] = field(default_factory=dict)
    no_session: int = 0
    replicated: int = 0
    raised: int = 0


class _Runs:
    """Longest run of consecutive values (windows: equal last_committed)."""

    __slots__ = ("value", "length", "longest")

    def __init__(self) -> None:
        self.value: object = None
        self.length = self.longest = 0

    def add(self, value: object) -> None:
        self.length = self.length + 1 if self.length and value == self.value else 1
        self.value = value
        self.longest = max(self.longest, self.length)

    def add_all(self, values: Iterable[object]) -> None:
        """:meth:`add` of each value, a run at a time."""
        for value, run in itertools.groupby(values):
            k = sum(1 for _ in run)
            self.length = self.length + k if self.length and value == self.value else k
            self.value = value
            self.longest = max(self.longest, self.length)


class ReportBuilder:
    """Consume a :class:`CertifyRun` once; each pair also goes to every ``sink``."""

    def __init__(self, run: CertifyRun, sinks: Iterable[Callable[[Certified], None]] = ()) -> None:
        self.run = run
        self.sinks = list(sinks)
        self.without_clock = 0
        self._before, self._after = _Runs(), _Runs()
        self._ids = _Runs()
        self._commit = Counter[str]()
        self._fallbacks = Counter[str]()
        self.fallback_transactions = self.no_session = self.replicated = self.raised = 0

    def _add(self, c: Certified) -> None:
        trx, r = c
        if recorded_clock(trx) is None:
            self.without_clock += 1
        self._before.add(trx.last_committed or 0)
        if r.computed is not None:
            self._after.add(r.computed[0])
        cert = r.trx
        self.raised += r.raised
        if cert.fallback:
            self.fallback_transactions += 1
            self._fallbacks.update(set(cert.fallback))
        if cert.session is None and not cert.view_change:
            self.no_session += 1
        original, immediate = trx.original_commit_timestamp, trx.immediate_commit_timestamp
        if original and immediate and original != immediate:
            self.replicated += 1
        self._commit_id(trx.commit_id)
        for sink in self.sinks:
            sink(c)

    def _commit_id(self, commit_id: int | None) -> None:
        self._commit["transactions"] += 1
        if commit_id is not None:
            self._commit["with_commit_id"] += 1
            self._ids.add(commit_id)
            if self._ids.length == 2:
                self._commit["groups"] += 1
                self._commit["singletons"] -= 1
                self._commit["in_groups"] += 2
            elif self._ids.length > 2:
                self._commit["in_groups"] += 1
            else:
                self._commit["singletons"] += 1
            self._commit["max"] = max(self._commit["max"], self._ids.length)
        else:
            self._ids = _Runs()
            self._commit["singletons"] += 1

    def build(self) -> CertifyReport:
        lane = getattr(self.run, "lane_parts", None)
        if lane is not None and all(type(s) is LineSink for s in self.sinks):
            columns = lane([s.write for s in self.sinks])
            if columns is not None:
                return self._build_from(columns)

        def results() -> Iterator[CertResult]:
            for c in self.run:
                self._add(c)
                yield c.result

        parts = getattr(self.run, "report_parts", None)
        parts = parts() if parts is not None and not self.sinks else None
        if parts is not None:
            return self._build_from(parts)
        summary = summarise(results(), window=max(SPAN_WINDOW, self.run.options.history_size))
        return self._report(summary)

    def _build_from(self, parts: Iterable[ReportColumns]) -> CertifyReport:
        """The report from the run's :class:`ReportColumns` (no object per transaction)."""
        from .summary import Summariser
        summariser = Summariser(window=max(SPAN_WINDOW, self.run.options.history_size))
        for part in parts:
            recorded, computed = part.clocks()
            summariser.add_columns(recorded, computed, part.reasons, part.changed)
            self.without_clock += part.without_clock
            self._before.add_all(recorded[0::2])
            self._after.add_all(lc for lc in computed[0::2] if lc >= 0)
            self.raised += part.raised
            self.fallback_transactions += part.fallback_transactions
            for reasons, count in part.fallbacks:
                for reason in set(reasons):
                    self._fallbacks[reason] += count
            self.no_session += part.no_session
            self.replicated += part.replicated
            if part.commit_ids is None:
                if part.n:
                    self._ids = _Runs()
                    self._commit["transactions"] += part.n
                    self._commit["singletons"] += part.n
            else:
                for commit_id in part.commit_ids:
                    self._commit_id(commit_id)
        return self._report(summariser.result())

    def _report(self, summary: Summary) -> CertifyReport:
        run, k = self.run, self._commit
        commit = None
        if k["with_commit_id"]:
            commit = CommitIdGroups(transactions=k["transactions"],
                                    with_commit_id=k["with_commit_id"], groups=k["groups"],
                                    in_groups=k["in_groups"],
                                    singletons=k["singletons"], max_group=k["max"])
        o = run.options
        options: dict[str, Any] = {"history_size": o.history_size}
        if run.mode is Mode.GROUP_REPLICATION:
            options.update(gc_every=o.gc_every, gc_interval=o.gc_interval,
                           gc_stable_sets=[str(s) for s in run.stable_sets],
                           members=len(o.member_names), member_lag=o.member_lag)
        else:
            options["baseline"] = o.baseline.value
        if self.raised:
            run.warnings.append(
                f"{self.raised} transaction(s) carry a logged last_committed below the last "
                "earlier writer of one of their keys (the log's clock lets them overlap); "
                "their parent was raised to that writer instead of MySQL's min()")
        session = (run.mode is Mode.WRITESET_SESSION
                   or (run.mode is Mode.GROUP_REPLICATION and o.session_order))
        return CertifyReport(
            files=tuple(run.paths), mode=run.mode, relay_log=run.relay_log,
            session_order=session, options=options, writesets=run.extractor is not None,
            summary=summary, max_window_before=self._before.longest,
            max_window_after=self._after.longest, without_clock=self.without_clock,
            truncated_skipped=run.truncated_skipped, commit_id=commit,
            warnings=tuple(run.warnings), fallback_transactions=self.fallback_transactions,
            fallbacks=dict(self._fallbacks.most_common()), no_session=self.no_session,
            replicated=self.replicated, raised=self.raised)


@dataclass(frozen=True, slots=True)
class ReportColumns:
    """What :class:`ReportBuilder` reads of a run of certified transactions, as columns.

    Made where the transactions were certified (:func:`report_columns`, e.g. on a
    Spark executor); a run that offers them (``report_parts()``) gets its report
    built from them when no sink needs the transactions themselves: the same
    :class:`CertifyReport`, without an object per transaction.

    :ivar recorded: ``CertTransaction.recorded`` of each, flat (``lc0, seq0, ...``),
        zlib-compressed ``array('q')`` bytes.
    :ivar computed: ``CertResult.computed`` of each, flat, ``-1, -1`` for ``None``.
    :ivar fallbacks: the distinct ``fallback`` tuples in the order they first
        occur, each with how many transactions carry it.
    :ivar commit_ids: each transaction's ``commit_id``; ``None`` when none has one.
    """

    n: int
    recorded: bytes
    computed: bytes
    reasons: dict[str, int]
    changed: int
    without_clock: int
    raised: int
    fallback_transactions: int
    fallbacks: tuple[tuple[tuple[str, ...], int], ...]
    no_session: int
    replicated: int
    commit_ids: tuple[int | None, ...] | None

    def clocks(self) -> tuple[Any, Any]:
        """``(recorded, computed)`` as ``array('q')``."""
        import zlib
        from array import array
        recorded, computed = array("q"), array("q")
        recorded.frombytes(zlib.decompress(self.recorded))
        computed.frombytes(zlib.decompress(self.computed))
        return recorded, computed


class ColumnsBuilder:
    """Accumulates :class:`ReportColumns` one certified transaction at a time."""

    def __init__(self) -> None:
        from array import array
        self.recorded, self.computed = array("q"), array("q")
        self.reasons = Counter[Any]()
        self.fallbacks: dict[tuple[str, ...], int] = {}
        self.changed = self.without_clock = self.raised = self.no_session = 0
        self.replicated = 0
        self.commit_ids: list[int | None] = []

    def add(self, trx: Transaction, cert: CertTransaction, computed: tuple[int, int] | None,
            reason: Reason, raised: bool) -> None:
        add_values(self, cert.recorded, computed if computed is not None else (-1, -1),
                   reason, fallback=cert.fallback,
                   without_clock=trx.last_committed is None or trx.sequence_number is None,
                   no_session=cert.session is None and not cert.view_change,
                   original=trx.original_commit_timestamp,
                   immediate=trx.immediate_commit_timestamp, commit_id=trx.commit_id,
                   raised=raised, changed=computed is not None and computed != cert.recorded)

    def __len__(self) -> int:
        return len(self.commit_ids)

    def columns(self) -> ReportColumns:
        import zlib
        commit_ids = self.commit_ids
        reasons: dict[str, int] = {}
        for reason, count in self.reasons.items():
            value = Reason(reason).value
            reasons[value] = reasons.get(value, 0) + count
        return ReportColumns(
            n=len(commit_ids), recorded=zlib.compress(self.recorded.tobytes(), 1),
            computed=zlib.compress(self.computed.tobytes(), 1), reasons=reasons,
            changed=self.changed, without_clock=self.without_clock, raised=self.raised,
            fallback_transactions=sum(self.fallbacks.values()),
            fallbacks=tuple(self.fallbacks.items()), no_session=self.no_session,
            replicated=self.replicated,
            commit_ids=tuple(commit_ids) if any(c is not None for c in commit_ids) else None)


def report_columns(certified: Sequence[Certified]) -> ReportColumns:
    """The :class:`ReportColumns` of ``certified`` (in order)."""
    builder = ColumnsBuilder()
    for trx, r in certified:
        builder.add(trx, r.trx, r.computed, r.reason, r.raised)
    return builder.columns()


def add_values(builder: ColumnsBuilder, recorded: tuple[int, int], computed: tuple[int, int],
               reason: Reason, *, fallback: tuple[str, ...], without_clock: bool,
               no_session: bool, original: int | None, immediate: int | None,
               commit_id: int | None, raised: bool = False, changed: bool | None = None
               ) -> None:
    """:meth:`ColumnsBuilder.add` from a transaction's values (no object per transaction):
    ``original``/``immediate`` its commit timestamps (replicated where both are set and
    differ); ``changed`` defaults to ``computed != recorded``."""
    builder.recorded.extend(recorded)
    builder.computed.extend(computed)
    builder.reasons[reason] += 1               # (made Reason values in columns())
    builder.changed += computed != recorded if changed is None else changed
    builder.without_clock += without_clock
    builder.raised += raised
    if fallback:
        builder.fallbacks[fallback] = builder.fallbacks.get(fallback, 0) + 1
    builder.no_session += no_session
    builder.replicated += bool(original and immediate and original != immediate)
    builder.commit_ids.append(commit_id)


def certified_columns(pairs: Iterable[tuple[Transaction, WritesetLike | None]], mode: Mode,
                      options: CertifyOptions, *, schema: Any = None
                      ) -> Iterator[ReportColumns]:
    """Certify ``pairs`` (one ordered read: :func:`repltool.writeset.read_writesets`) in
    ``mode`` (``writeset``, ``writeset-session``, ``commit-order``) and yield only what
    the report reads: :class:`ReportColumns` of up to :data:`LANE_PART` transactions,
    no :class:`CertResult` or :class:`Certified` per transaction (on the compiled core,
    as :meth:`CertifyRun.lane_parts` without lines; with the pure-Python engine through
    :func:`repltool.certify.certify`).  A Spark executor certifying its file sends these.

    :param schema: the schema the write sets were extracted with (the fallback reasons).
    """
    from ..binlog.engine import compiled_core
    core = compiled_core()
    if core is not None:
        # CertifyRun's lane: the hash reader's transactions stepped on their values
        yield from core_lane(pairs, CoreDependencyTracker(mode, options, core), schema)
        return
    builder = ColumnsBuilder()
    cert_pairs = iter_cert_pairs(pairs, schema=schema)
    from . import certify
    pending: deque[Transaction] = deque()

    def feed() -> Iterator[CertTransaction]:
        for trx, cert in cert_pairs:
            pending.append(trx)
            yield cert
    steps = ((pending.popleft(), r.trx, r.computed, r.reason, r.raised)
             for r in certify(feed(), mode, options))
    for trx, cert, computed, reason, raised in steps:
        builder.add(trx, cert, computed, reason, raised)
        if len(builder) >= LANE_PART:
            yield builder.columns()
            builder = ColumnsBuilder()
    if len(builder):
        yield builder.columns()


def core_lane(pairs: Iterable[tuple[Transaction, WritesetLike | None]],
              tracker: CoreDependencyTracker, schema: Any = None,
              emit: Callable[..., None] | None = None) -> Iterator[ReportColumns]:
    """``pairs`` (one ordered read) certified on the compiled core's ``tracker`` into
    :class:`ReportColumns` of up to :data:`LANE_PART` transactions: a transaction of the
    hash reader (its keys' hashes, no events) stepped on the values
    :func:`~.source.to_cert_transaction` would map it to, no :class:`CertTransaction`
    built; any other through its :class:`CertTransaction`.  ``emit(trx, ws, cert, out,
    fallback, new_file)`` (``certify --format jsonl``'s lines; ``cert`` None on the
    values' path) is called after each step and makes the core explain its answers."""
    from ..writeset.model import HashedWriteset
    step, step_values = tracker.step, tracker.step_values
    explain = emit is not None      # the lines name parents and say why; the columns do not
    builder = ColumnsBuilder()
    for trx, ws, segment, new_file in segmented_pairs(pairs):
        lc, sn = trx.last_committed, trx.sequence_number
        rec_lc, rec_seq = lc or 0, sn or 0
        out: tuple[int, int, Reason, int, str, bool] | None = None
        hashes = ws.hashes if type(ws) is HashedWriteset else None
        if type(hashes) is tuple and not trx.events and type(rec_lc) is int \
                and type(rec_seq) is int and rec_lc >= 0 and rec_seq >= 0:
            # the core's hash mode (no events: no View_change): step on the values
            # to_cert_transaction would put into the CertTransaction, built only
            # where a line needs it
            assert ws is not None
            fallback = fallback_reasons(ws, schema) if ws.missing_key_tables else ()
            thread = trx.thread_id
            session = (trx.server_id, thread) if thread is not None else None
            flags = hashed_flags(trx, ws, fallback)
            try:
                out = step_values(hashes, flags, rec_lc, rec_seq, session, segment,
                                  new_file, cert_gtid(trx.gtid) if explain else None,
                                  fallback, explain)
            except (TypeError, OverflowError, ValueError):
                out = None          # step() words the error (CertTransaction.validate)
            else:
                _DIRECT[0] += 1
                value, seq, reason, key_index, detail, raised = out
                add_values(builder, (rec_lc, rec_seq), (value, seq), reason,
                           fallback=fallback, without_clock=lc is None or sn is None,
                           no_session=session is None,
                           original=trx.original_commit_timestamp,
                           immediate=trx.immediate_commit_timestamp,
                           commit_id=trx.commit_id, raised=raised)
                if emit is not None:
                    emit(trx, ws, None, out, fallback, new_file)
        if out is None:
            cert = to_cert_transaction(trx, ws, schema=schema, new_file=new_file)
            out = step(cert, explain)
            value, seq, reason, key_index, detail, raised = out
            builder.add(trx, cert, (value, seq), reason, raised)
            if emit is not None:
                emit(trx, ws, cert, out, cert.fallback, new_file)
        if len(builder) >= LANE_PART:
            yield builder.columns()
            builder = ColumnsBuilder()
    if len(builder):
        yield builder.columns()

