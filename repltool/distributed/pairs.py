"""``certify --spark`` and ``explain --spark`` (certify modes): write sets on executors.

Executors do the expensive part per file: reading (CRC32, decompression),
grouping, row decoding and write-set extraction (for ``certify`` on binlogs the
single process's fused reader, :func:`repltool.writeset.read_writesets`; for
``explain`` and relay logs :func:`repltool.writeset.iter_writesets` over the
unit's ordered read; the schema loaded on the driver and shipped as plain
dataclasses).  Each
transaction comes back next to its write set, its events reduced to the
View_change and Query events (certification reads the first, ``explain`` the
statement of the second; the bytes are dropped), as columns
(:mod:`.wspack`: write sets as offsets and ``uint64`` hash arrays, the keys'
descriptions in one block decoded only when a key is described; ``BEGIN`` and
``COMMIT`` Query events are not sent).

The driver certifies the pairs in input order with the single-process
machinery (:class:`repltool.certify.stitched.PairsRun`): the trackers of every
mode, the Group Replication certifier (whose certification info, numbering
and garbage collection run across files), the sessions of
``writeset-session`` (which survive rotations, as in MySQL) and the
``--gc-stable-set`` garbage collection all see one ordered stream, so the
results are those of one ordered read.  For the Group Replication report
(no sink printing transactions, none of the options that read objects) the
driver certifies the units' arrays themselves (:mod:`.grpacked`).  Certifying is cheap next to reading
and extraction; doing it per file on executors would be exact only for some
modes and inputs.

A unit's write sets equal those of one ordered read unless the unit needs a
Table_map of an earlier file: its last transaction continues into the next
relay file (``open_end``), or a rows event names a table id no Table_map of
the unit's read named (``unknown_tables``).  Such units are read again together
with their neighbour (:func:`~repltool.distributed.driver.run_distributed`).
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Iterable, Iterator, Sequence

from ..errors import ReplToolError
from .driver import (first_failure, replay_warnings, resegmented, run_distributed,
                     stream_results)
from .frame import row_sink, write_parquet
from .units import (unit_failure, UnitResult, Task, Unit, captured_warnings,
                    working_directory)

_VIEW_CHANGE_EVENT = 37
# the events whose body is a QueryBody (``explain`` names a DDL group by its first
# statement): QUERY_EVENT, EXECUTE_LOAD_QUERY_EVENT (LOAD DATA), MariaDB's QUERY_COMPRESSED_EVENT
_QUERY_EVENTS = (2, 18, 165)


@dataclass(frozen=True)
class PairsSpec:
    """What an executor needs to compute write sets like the driver's run would."""

    schema: Any                   # repltool.writeset.Schema or None
    history_size: int
    # the transactions keep their Query events (explain shows DDL statements); False:
    # only what certification reads (View_change events), so the fused reader may read
    statements: bool = True
    # the driver certifies Group Replication's report from the arrays alone
    # (grpacked.hashed_units): the keys' hashes, no descriptions; binlogs read with the
    # key-hash reader (read_writeset_hashes) and packed as wspack.pack_hashed
    hashed: bool = False


def slim(trx: Any) -> Any:
    """``trx`` with only the events certification and ``explain`` read, without bytes."""
    kept = tuple(ev._replace(raw=b"", body=None) if ev.type_code == _VIEW_CHANGE_EVENT
                 else ev._replace(raw=b"")
                 for ev in trx.events
                 if ev.type_code == _VIEW_CHANGE_EVENT or ev.type_code in _QUERY_EVENTS)
    return replace(trx, events=kept)


def has_unmapped(trx: Any, mapped: set[int], named: set[str] | None = None) -> bool:
    """Whether a rows event of ``trx`` names a table id no earlier Table_map of the read named.

    :param named: also add ``db.table`` of each Table_map that carries column names
        (``binlog_row_metadata=FULL``) to it (the same pass over the events).
    """
    from ..binlog import structs as S
    from ..binlog.constants import HEADER_LEN
    from ..binlog.events import TableMapBody
    rows = _rows_types()
    tid_span = S.ROWS_V2_HEAD.span("table_id", HEADER_LEN)
    unknown = False
    for ev in trx.events:
        body = ev.body
        if isinstance(body, TableMapBody):
            mapped.add(body.table_id)
            if named is not None:
                from ..binlog.coltypes import decode_table_map
                if decode_table_map(body).has_names:
                    named.add(f"{body.db}.{body.table}")
        elif ev.type_code in rows:
            table_id = getattr(ev.body, "table_id", None)
            if table_id is None and len(ev.raw) >= tid_span.stop:
                table_id = int.from_bytes(ev.raw[tid_span], "little")
            unknown = unknown or table_id not in mapped
    return unknown


_ROWS_TYPES: list[frozenset[int]] = []


def _rows_types() -> frozenset[int]:
    """The Rows event type codes (built once per process)."""
    if not _ROWS_TYPES:
        from ..binlog.constants import ROWS_TYPES
        _ROWS_TYPES.append(frozenset(int(t) for t in ROWS_TYPES))
    return _ROWS_TYPES[0]


def pairs_unit(task: Task, unit: Unit) -> UnitResult:
    """Executor: the unit's ``(transaction, write set)`` pairs, in read order.

    Read as the single-process ``certify`` reads (the fused reader,
    :func:`_fused_pairs_unit`, with the collector's thresholds raised) when no
    DataFrame rows are made, the statements are not needed and the unit is
    binlogs, read without error, whose tables are all mapped in it; otherwise
    (and again, for the same error and warnings) with the general reader.  For
    Group Replication's text report (``spec.hashed``) such a unit is read with the
    key-hash reader and sent as hash arrays (:func:`_hashed_unit`), the others
    without the keys' descriptions.
    """
    spec: PairsSpec = task.extra
    headers = None
    if task.kind == "pairs" and not task.rows and not spec.statements:
        try:
            headers = _file_headers(unit.files, task.verify_checksum)
        except ReplToolError:
            headers = None              # the general reader says what is wrong
    from ..binlog.constants import EventFlag
    if headers is not None and not any(h.flags & EventFlag.RELAY_LOG for h in headers):
        from ..collector import few_collections
        with few_collections():
            if spec.hashed:
                hashed = _hashed_unit(task, unit, spec)
                if hashed is not None:
                    hashed.headers = headers
                    return hashed
            # every key kept, as the general path keeps them (GR needs the full write set)
            from ..certify import Mode
            result = _fused_pairs_unit(task, unit, spec, Mode.GROUP_REPLICATION)
            if result is not None and result.failure is None \
                    and not any(trx.relay_log for trx, _ in result.payload):
                from .wspack import pack_pairs
                result.headers = headers
                result.payload = pack_pairs([(slim(trx) if trx.events else trx, ws)
                                             for trx, ws in result.payload])
                return result
    return _general_pairs_unit(task, unit)


def _hashed_unit(task: Task, unit: Unit, spec: PairsSpec) -> UnitResult | None:
    """Executor, for Group Replication's text report (``spec.hashed``): the unit read
    with the key-hash reader (:func:`repltool.writeset.read_writeset_hashes`, every
    key kept) and streamed into :func:`.wspack.pack_hashed` (no pair list).  None
    where the described path reads (a read error, which it words; a rows event of a
    table no Table_map of the unit named; a relay log's transaction; a transaction
    whose error the driver words from its objects)."""
    from ..writeset import read_writeset_hashes
    from .wspack import pack_hashed
    result = UnitResult(unit)
    state: dict[str, Any] = {"last": None, "other": False}

    def pairs() -> Iterator[tuple[Any, Any]]:
        for trx, ws in read_writeset_hashes(list(unit.files), spec.schema,
                                            verify_checksum=task.verify_checksum,
                                            history_size=spec.history_size):
            if trx.relay_log or any(name == "?" for name, _ in trx.rows_events):
                state["other"] = True
                return
            if result.first is None:
                result.first = trx
            result.count += 1
            state["last"] = trx
            yield trx, ws

    with captured_warnings(result):
        try:
            packed = pack_hashed(pairs())
        except ReplToolError:
            return None
    if packed is None or state["other"]:
        return None
    last = state["last"]
    result.open_end = last is not None and last.truncated
    result.payload = packed
    return result


def _describe(spec: PairsSpec, pairs: Sequence[tuple[Any, Any]]) -> bool:
    """Whether a unit's keys' descriptions are sent: unless the driver certifies from
    the arrays alone, and then where a negative clock makes it rebuild the objects to
    word the error."""
    return not spec.hashed or any(
        not trx.truncated and ((trx.last_committed or 0) < 0 or (trx.sequence_number or 0) < 0)
        for trx, _ in pairs)


def _file_headers(files: Sequence[str], verify_checksum: bool) -> list[Any]:
    """The first event of each binlog (its FDE), as :func:`~.units.segment_tap` keeps it:
    in a binlog the only header that decides a transaction's clock segment."""
    from ..binlog import ReadOptions, read_events
    from ..binlog.constants import EventType
    fde = int(EventType.FORMAT_DESCRIPTION_EVENT)
    headers = []
    for name in files:
        events = read_events([name], ReadOptions(verify_checksum=verify_checksum,
                                                 types=frozenset({fde}), keep_raw=False))
        try:
            ev = next(events, None)
        finally:
            events.close()
        if ev is not None and ev.type_code == fde:
            headers.append(ev._replace(raw=b""))
    return headers


def _general_pairs_unit(task: Task, unit: Unit) -> UnitResult:
    from ..binlog import group_transactions, read_events
    from ..writeset import READ_OPTIONS, iter_writesets
    from .units import segment_tap
    spec: PairsSpec = task.extra
    pairs: list[tuple[Any, Any]] = []
    result = UnitResult(unit, payload=pairs)
    rows: list[tuple[Any, ...]] | None = [] if task.rows else None
    sink = row_sink(unit, rows) if rows is not None else None
    mapped: set[int] = set()
    last = None
    with captured_warnings(result):
        try:
            opts = replace(READ_OPTIONS, verify_checksum=task.verify_checksum)
            result.headers = []
            events = segment_tap(read_events(list(unit.files), opts), result.headers)
            trxs = group_transactions(events, keep_events=True)
            for trx, ws in iter_writesets(trxs, spec.schema, history_size=spec.history_size):
                result.unknown_tables = has_unmapped(trx, mapped) or result.unknown_tables
                light = slim(trx)
                pairs.append((light, ws))
                if last is None:
                    result.first = light
                if sink is not None:
                    sink(trx, ws)
                last = trx
        except ReplToolError as exc:
            result.failure = unit_failure(exc, unit)
    result.count = len(pairs)
    result.open_end = result.failure is None and last is not None and last.truncated
    result.rows = rows
    if task.kind == "pairs":            # to the driver: as columns (certify_unit reads the list)
        from .wspack import pack_pairs
        result.payload = pack_pairs(pairs, describe=_describe(spec, pairs))
    return result


@dataclass(frozen=True)
class CertifySpec:
    """What an executor needs to certify its unit like the driver's run would."""

    pairs: PairsSpec
    mode: Any                     # repltool.certify.Mode: WRITESET or COMMIT_ORDER
    options: Any                  # repltool.certify.CertifyOptions
    output: tuple[str, str] | None = None   # certify --output: (staging directory, encoding)
    # the driver reads only the report (ReportColumns), no certified transaction
    report_only: bool = False


def certify_unit(task: Task, unit: Unit) -> UnitResult:
    """Executor: the unit certified alone (``writeset``, ``commit-order``).

    Exact when the unit begins a clock segment (a source binlog): those
    trackers restart at every rotation (``Transaction_dependency_tracker::rotate``),
    so nothing crosses from the unit before.  The payload is the
    :class:`~repltool.certify.report.Certified` list without write sets (the
    report and the JSON rows do not read them), as columns, next to its
    :class:`~repltool.certify.report.ReportColumns` (what the report reads,
    when nothing needs the transactions), and ``headers`` the unit's
    facts the driver checks: ``(first segment, last segment, relay log,
    truncated skipped)``.  With ``report_only`` the payload's list is empty and no
    object is built per transaction (:func:`_report_unit`).  The write-set reader
    runs with the collector's thresholds raised, as in the single process.
    """
    from ..collector import few_collections
    spec: CertifySpec = task.extra
    with few_collections():
        if unit.span is not None:
            return _part_unit(task, unit, spec)
        if spec.report_only:
            result = _report_unit(task, unit, spec)
            if result is not None:
                return result
        return _certified_unit(task, unit, spec)


def _certified_unit(task: Task, unit: Unit, spec: CertifySpec) -> UnitResult:
    from ..certify import certify
    from ..certify.report import Certified
    from ..certify.source import iter_cert_pairs
    result = _fused_pairs_unit(task, unit, spec.pairs, spec.mode)
    if result is None:
        result = _general_pairs_unit(replace(task, extra=spec.pairs), unit)
    pairs = result.payload or []
    certified: list[Any] = []
    segments = [trx.segment or trx.start.file for trx, _ in pairs if not trx.truncated]
    relay = any(trx.relay_log for trx, _ in pairs)
    try:
        with captured_warnings(result):
            kept = iter_cert_pairs(pairs)
            order: deque[Any] = deque()

            def feed() -> Iterator[Any]:
                for trx, cert in kept:
                    order.append(trx)
                    yield cert
            for cr in certify(feed(), spec.mode, spec.options):
                trx = order.popleft()
                certified.append(Certified(trx, replace(
                    cr, trx=replace(cr.trx, writeset=(), keys=()))))
    except ReplToolError as exc:
        if result.failure is None:
            result.failure = unit_failure(exc, unit)
    if spec.output is not None and result.failure is None:
        result.written = _retag_unit(unit, certified, spec.output)
    from ..certify.report import report_columns
    result.payload = ([] if spec.report_only else _packed_certified(certified),
                      [report_columns(certified)])
    result.headers = [(segments[0] if segments else None, segments[-1] if segments else None,
                       relay, sum(trx.truncated for trx, _ in pairs))]
    return result


def _report_unit(task: Task, unit: Unit, spec: CertifySpec) -> UnitResult | None:
    """Executor: the unit certified as :func:`certify_unit` does, streamed from the fused
    reader into the report's columns (:func:`repltool.certify.report.certified_columns`):
    no pair list, no :class:`~repltool.certify.report.Certified` and nothing packed per
    transaction.  ``None`` where :func:`_fused_pairs_unit` gives up (a rows event names a
    table no Table_map of the unit named).

    With ``certify --output`` the copies are then written from the columns' computed
    clocks at each certified transaction's GTID offset (24 bytes a transaction held, the
    files streamed by :func:`repltool.binlog.rewrite.rewrite_log`); ``None`` too (the
    objects' path, :func:`_certified_unit`, which says what is wrong) where a
    transaction has no logged clock to re-tag or no computed clock."""
    from array import array
    from ..certify.report import certified_columns, drops_past_limit
    from ..writeset import read_writeset_hashes, read_writesets
    retag = spec.output is not None
    starts: dict[str, Any] = {}         # file -> GTID offsets of the certified transactions
    result = UnitResult(unit)
    drop = drops_past_limit(spec.mode, unit.files)
    # the writeset modes certify the keys' hashes (as the single process does); the
    # report names no key, so none is ever described
    read = read_writeset_hashes if drop else read_writesets
    segments: list[str] = []            # the first clock segment, and the last
    seen: dict[str, Any] = {"relay": False, "truncated": 0, "last": None, "unknown": False}

    def pairs() -> Iterator[tuple[Any, Any]]:
        for trx, ws in read(list(unit.files), spec.pairs.schema,
                            verify_checksum=task.verify_checksum,
                            history_size=spec.pairs.history_size, drop_past_limit=drop):
            if any(name == "?" for name, _ in trx.rows_events):
                seen["unknown"] = True
                return
            if result.first is None:
                result.first = trx
            result.count += 1
            seen["last"] = trx
            seen["relay"] = seen["relay"] or trx.relay_log
            if trx.truncated:
                seen["truncated"] += 1
            else:
                segments[len(segments) > 0:] = [trx.segment or trx.start.file]
                if retag:
                    if trx.last_committed is None or trx.sequence_number is None:
                        seen["unknown"] = True      # no clock to re-tag: the objects' path
                        return
                    start = trx.start
                    offsets = starts.get(start.file)
                    if offsets is None:
                        offsets = starts[start.file] = array("q")
                    offsets.append(start.offset)
            yield trx, ws

    parts: list[Any] = []
    with captured_warnings(result):
        try:
            parts.extend(certified_columns(pairs(), spec.mode, spec.options,
                                           schema=spec.pairs.schema))
        except ReplToolError as exc:
            result.failure = unit_failure(exc, unit)
    if seen["unknown"]:
        return None
    if retag and result.failure is None:
        by_file = _clock_columns(parts, starts, unit.files)
        if by_file is None:
            return None
        result.written = _write_copies(unit, by_file, spec.output)
    last = seen["last"]
    result.open_end = result.failure is None and last is not None and last.truncated
    result.payload = ([], parts)
    result.headers = [(segments[0] if segments else None, segments[-1] if segments else None,
                       seen["relay"], seen["truncated"])]
    return result


def _clock_columns(parts: list[Any], starts: dict[str, Any], files: Sequence[str]
                   ) -> dict[str, Any] | None:
    """Per file, its :class:`~repltool.certify.retag.ClockColumns`: the ReportColumns'
    computed clocks, in order, at ``starts``' offsets (the files' certified transactions,
    in read order); None where they do not line up or a clock was not computed."""
    from array import array
    from ..certify.retag import ClockColumns
    computed = array("q")
    for part in parts:
        computed.extend(part.clocks()[1])
    total = sum(len(offsets) for offsets in starts.values())
    if len(computed) != 2 * total or min(computed, default=0) < 0:
        return None
    by_file: dict[str, Any] = {}
    k = 0
    try:
        for name in files:
            offsets = starts.get(name)
            if offsets is None:
                continue
            n = len(offsets)
            lc = computed[2 * k:2 * (k + n):2]
            sn = computed[2 * k + 1:2 * (k + n):2]
            by_file[name] = ClockColumns.from_columns(offsets, lc, sn)
            k += n
    except ReplToolError:
        return None
    return by_file if k == total else None


# ---- a large file in parts: executors extract, one task per file certifies ----

@dataclass
class CertPart:
    """One part's certified transactions (truncated ones left out) as certification
    input, in columns: what :meth:`repltool.certify.coretrack.CoreDependencyTracker.step_values`
    takes and what :class:`~repltool.certify.report.ReportColumns` counts, no object per
    transaction.  ``offsets[i]:offsets[i + 1]`` are transaction ``i``'s hashes; ``flags``
    the core's flags; ``recorded`` flat ``(last_committed, sequence_number)`` as
    certification reads them; ``sessions`` flat ``(server_id, thread)``, thread ``-1``
    without a session; ``marks`` bit 1 no logged clock, 2 no session (not a view change),
    4 written by a replica; ``fallbacks`` transaction index -> its fallback reasons;
    ``commit_ids`` each one's ``commit_id``; ``starts`` (``certify --output`` only, else
    empty) each one's GTID event offset, where the re-tagged copy gets its new clock."""

    segment: str | None
    offsets: Any
    hashes: Any
    flags: bytearray
    recorded: Any
    sessions: Any
    marks: bytearray
    fallbacks: dict[int, tuple[str, ...]]
    commit_ids: list[int | None]
    starts: Any = None


def _part_unit(task: Task, unit: Unit, spec: CertifySpec) -> UnitResult:
    """Executor: one part of a large binlog (``unit.span``) read with the hash reader as
    the whole file's read reads it, each transaction mapped as certification maps it
    (:func:`repltool.certify.source.to_cert_transaction`) into a :class:`CertPart`.
    ``joined`` is -1 (the file is then read whole) where the part is not what the
    whole read gives or cannot be certified from values: a rows event of a table no
    Table_map of the part named, a second clock segment, a clock or hash outside
    certification's values, the pure-Python engine (no span reader)."""
    from array import array
    from ..certify.coretrack import cert_flags, hashed_flags
    from ..certify.report import drops_past_limit
    from ..certify.source import fallback_reasons, to_cert_transaction
    from ..writeset import read_writeset_hashes
    from ..writeset.model import HashedWriteset
    result = UnitResult(unit)
    offsets, hashes, recorded, sessions = array("q", [0]), array("Q"), array("q"), array("q")
    starts = array("q")
    retag = spec.output is not None
    flags, marks = bytearray(), bytearray()
    fallbacks: dict[int, tuple[str, ...]] = {}
    commit_ids: list[int | None] = []
    schema = spec.pairs.schema
    segment: str | None = None
    truncated, relay, last, ok = 0, False, None, True
    with captured_warnings(result):
        try:
            for trx, ws in read_writeset_hashes(
                    list(unit.files), schema, verify_checksum=task.verify_checksum,
                    history_size=spec.pairs.history_size, span=unit.span,
                    drop_past_limit=drops_past_limit(spec.mode, unit.files)):
                if any(name == "?" for name, _ in trx.rows_events):
                    ok = False
                    break
                if result.count == 0 and unit.part == 0:
                    result.first = trx
                result.count += 1
                last = trx
                relay = relay or trx.relay_log
                if trx.truncated:
                    truncated += 1
                    continue
                seg = trx.segment or trx.start.file
                if segment is None:
                    segment = seg
                lc, sn = trx.last_committed, trx.sequence_number
                rec_lc, rec_seq = lc or 0, sn or 0
                ws_hashes = ws.hashes if type(ws) is HashedWriteset else None
                if type(ws_hashes) is tuple and not trx.events and type(rec_lc) is int \
                        and type(rec_seq) is int:
                    # the hash reader's values as to_cert_transaction maps them (no
                    # events: no View_change), as CertifyRun's lane reads them
                    fallback = fallback_reasons(ws, schema) if ws.missing_key_tables else ()
                    thread = trx.thread_id
                    session = (trx.server_id, thread) if thread is not None else None
                    f = hashed_flags(trx, ws, fallback)
                    no_session = session is None
                else:
                    cert = to_cert_transaction(trx, ws, schema=schema)
                    rec_lc, rec_seq = cert.recorded
                    ws_hashes, nk = cert.writeset, len(cert.keys)
                    if nk and nk != len(ws_hashes):
                        ok = False
                        break
                    session, fallback = cert.session, cert.fallback
                    f = cert_flags(cert)
                    no_session = session is None and not cert.view_change
                if seg != segment or type(rec_lc) is not int or type(rec_seq) is not int \
                        or rec_lc < 0 or rec_seq < 0:
                    ok = False
                    break
                try:
                    hashes.extend(ws_hashes)
                    recorded.extend((rec_lc, rec_seq))
                    sessions.extend(session if session is not None else (0, -1))
                except (TypeError, OverflowError, ValueError):
                    ok = False
                    break
                offsets.append(len(hashes))
                flags.append(f)
                original, immediate = trx.original_commit_timestamp, \
                    trx.immediate_commit_timestamp
                marks.append((lc is None or sn is None) | no_session << 1
                             | bool(original and immediate and original != immediate) << 2)
                if fallback:
                    fallbacks[len(flags) - 1] = fallback
                commit_ids.append(trx.commit_id)
                if retag:
                    starts.append(trx.start.offset)
        except ReplToolError as exc:
            result.failure = unit_failure(exc, unit)
        except RuntimeError:            # no span reader (the pure-Python engine)
            ok = False
    result.open_end = result.failure is None and last is not None and last.truncated
    result.joined = 0 if ok else -1
    if ok and result.failure is None:
        result.payload = CertPart(segment, offsets, hashes, flags, recorded, sessions, marks,
                                  fallbacks, commit_ids, starts)
    result.headers = [(segment, segment, relay, truncated)]
    return result


def join_certified_parts(task: Task, records: Iterable[tuple[int, UnitResult]]
                         ) -> Iterator[UnitResult]:
    """Executor, the second stage: each file's parts (``(file index, part result)``
    records, in any order) certified in order, once per file, on the compiled core's
    tracker (:func:`_certified_parts`)."""
    by_file: dict[int, list[UnitResult]] = {}
    for index, r in records:
        by_file.setdefault(index, []).append(r)
    from ..collector import few_collections
    with few_collections():
        for index in sorted(by_file):
            parts = sorted(by_file[index], key=lambda r: r.unit.part)
            yield _certified_parts(task, parts)


def _certified_parts(task: Task, parts: list[UnitResult]) -> UnitResult:
    """One file certified from its parts' :class:`CertPart` as :func:`_report_unit`
    certifies the whole file (the same :class:`~repltool.certify.report.ReportColumns`,
    ``LANE_PART`` transactions each); ``joined`` -1 (read the file whole) when a part
    failed or cannot be joined, the parts do not cover the file end to end, a part
    ends inside a transaction, or the compiled core is not active.

    With ``certify --output`` the task then writes the file's re-tagged copy into the
    staging directory (``written``, as :func:`_retag_unit` does for a whole file): each
    transaction's new clock at its GTID event's offset, the file streamed by
    :func:`repltool.binlog.rewrite.rewrite_log`.  A transaction without a logged clock
    (nothing to re-tag) makes the file be read whole (whose path words that error)."""
    from array import array
    from ..binlog.engine import compiled_core
    from ..certify.coretrack import CoreDependencyTracker
    from ..certify.report import LANE_PART, ColumnsBuilder
    spec: CertifySpec = task.extra
    first_unit = parts[0].unit
    out = UnitResult(Unit(first_unit.index, first_unit.files), joined=-1)
    out.warnings = [w for p in parts for w in (p.warnings or ())]
    spans = [p.unit.span for p in parts]
    segments = {p.payload.segment for p in parts
                if p.payload is not None and p.payload.segment is not None}
    core = compiled_core()
    if (core is None or any(p.failure is not None or p.joined < 0 or p.payload is None
                            for p in parts)
            or spans[0].start > 4 or spans[-1].end is not None
            or any(a.end != b.start for a, b in zip(spans, spans[1:]))
            or any(p.open_end for p in parts[:-1]) or len(segments) > 1):
        return out
    retag = spec.output is not None
    if retag and any(len(p.payload.starts) != len(p.payload.flags)
                     or any(m & 1 for m in p.payload.marks) for p in parts):
        return out
    segment = next(iter(segments), None)
    step = CoreDependencyTracker(spec.mode, spec.options, core).step_values
    builder = ColumnsBuilder()
    columns: list[Any] = []
    # --output: the new clocks (flat last_committed, sequence_number) and GTID offsets
    new_clocks, starts = array("q"), array("q")
    try:
        for p in parts:
            cp: CertPart = p.payload
            p.payload = None                # the part's arrays go once certified
            off, fl, rec, ses, marks, fbs, cids = (cp.offsets, cp.flags, cp.recorded,
                                                   cp.sessions, cp.marks, cp.fallbacks,
                                                   cp.commit_ids)
            hs = memoryview(cp.hashes)      # slices without copies (the core reads ints)
            n, i = len(fl), 0
            while i < n:
                # up to the builder's part size: ColumnsBuilder.add, the per-transaction
                # counts here, the columns taken in bulk below
                j = min(n, i + LANE_PART - len(builder))
                computed, reasons, fallbacks = builder.computed, builder.reasons, \
                    builder.fallbacks
                changed = raised_n = 0
                for k in range(i, j):
                    lc, sn = rec[2 * k], rec[2 * k + 1]
                    thread = ses[2 * k + 1]
                    session = (ses[2 * k], thread) if thread >= 0 else None
                    fallback = fbs.get(k, ()) if fbs else ()
                    value, seq, reason, _, _, raised = step(
                        hs[off[k]:off[k + 1]], fl[k], lc, sn, session, segment, False, None,
                        fallback, False)
                    computed.append(value)
                    computed.append(seq)
                    reasons[reason] += 1
                    changed += value != lc or seq != sn
                    raised_n += raised
                    if fallback:
                        fallbacks[fallback] = fallbacks.get(fallback, 0) + 1
                builder.recorded.extend(rec[2 * i:2 * j])
                builder.changed += changed
                builder.raised += raised_n
                span_marks = marks[i:j]
                builder.without_clock += sum(m & 1 for m in span_marks) if any(
                    span_marks) else 0
                builder.no_session += sum((m >> 1) & 1 for m in span_marks) if any(
                    span_marks) else 0
                builder.replicated += sum((m >> 2) & 1 for m in span_marks) if any(
                    span_marks) else 0
                builder.commit_ids.extend(cids[i:j])
                if retag:
                    new_clocks.extend(computed[len(computed) - 2 * (j - i):])
                i = j
                if len(builder) >= LANE_PART:
                    columns.append(builder.columns())
                    builder = ColumnsBuilder()
            if retag:
                starts.extend(cp.starts)
        if retag:
            from ..certify.retag import ClockColumns
            clocks = ClockColumns.from_columns(starts, new_clocks[0::2], new_clocks[1::2])
            del new_clocks, starts
    except (ReplToolError, TypeError, OverflowError, ValueError):
        return out                      # read whole: the whole read words any error
    if len(builder):
        columns.append(builder.columns())
    if retag:
        relative = any(not os.path.isabs(f) for f in out.unit.files) \
            or not os.path.isabs(spec.output[0])
        cwd = task.cwd if relative and task.cwd and os.path.isdir(task.cwd) else None
        with working_directory(cwd if cwd != os.getcwd() else None):
            out.written = _write_copies(out.unit, {out.unit.files[0]: clocks}, spec.output)
    heads = [p.headers[0] for p in parts]
    out.count = sum(p.count for p in parts)
    out.first = parts[0].first
    out.open_end = parts[-1].open_end
    out.payload = ([], columns)
    out.headers = [(segment, segment, any(h[2] for h in heads), sum(h[3] for h in heads))]
    out.joined = len(parts)
    return out


def _fused_pairs_unit(task: Task, unit: Unit, spec: PairsSpec,
                      mode: Any) -> UnitResult | None:
    """Executor: the unit's pairs from the fused reader, as the single-process ``certify``
    reads them (:func:`repltool.writeset.read_writesets`: the compiled core where it
    applies; transactions without events, which ``writeset`` and ``commit-order``
    certification do not read).  ``None`` (read the general way, :func:`pairs_unit`)
    when a rows event names a table no Table_map of the unit named, so that the driver
    can read the unit with the one before it."""
    from ..certify.report import drops_past_limit
    from ..writeset import read_writesets
    pairs: list[tuple[Any, Any]] = []
    result = UnitResult(unit, payload=pairs)
    last = None
    with captured_warnings(result):
        try:
            for trx, ws in read_writesets(list(unit.files), spec.schema,
                                          verify_checksum=task.verify_checksum,
                                          history_size=spec.history_size,
                                          drop_past_limit=drops_past_limit(mode, unit.files)):
                if any(name == "?" for name, _ in trx.rows_events):
                    return None
                pairs.append((trx, ws))
                if last is None:
                    result.first = trx
                last = trx
        except ReplToolError as exc:
            result.failure = unit_failure(exc, unit)
    result.count = len(pairs)
    result.open_end = result.failure is None and last is not None and last.truncated
    return result


def _retag_unit(unit: Unit, certified: list[Any], output: tuple[str, str]) -> tuple[str, Any]:
    """Executor: write the unit's re-tagged copies into the driver's staging directory.

    :returns: ``("written", [RewriteReport, ...])``; ``("unseen", host)`` when
        this executor cannot see the staging directory; ``("failed", (index,
        FileFailure))`` when a copy could not be written; ``("skipped", None)``
        when a transaction has no clock to re-tag (the driver's own clock map
        raises that error where one ordered run would).
    """
    from ..certify.retag import ClockMap
    clocks = ClockMap()
    try:
        for c in certified:
            clocks(c)
    except ReplToolError:
        return ("skipped", None)
    return _write_copies(unit, clocks.by_file, output)


def _write_copies(unit: Unit, by_file: dict[str, Any], output: tuple[str, str]
                  ) -> tuple[str, Any]:
    """Executor: the unit's files re-tagged with ``by_file`` (name ->
    :class:`~repltool.certify.retag.ClockColumns`) into the staging directory
    ``output[0]``; what :func:`_retag_unit` returns."""
    import socket
    from ..binlog.rewrite import rewrite_log
    from ..certify.retag import ClockColumns
    staging, encoding = output
    if not os.path.isdir(staging):
        return ("unseen", socket.gethostname())
    reports: list[Any] = []
    for name in unit.files:
        try:
            reports.append(rewrite_log(name, os.path.join(staging, os.path.basename(name)),
                                       by_file.get(name, ClockColumns()),
                                       encoding=encoding))
        except ReplToolError as exc:
            return ("failed", (reports, unit_failure(exc, unit)))
    return ("written", reports)


def _packed_certified(certified: list[Any]) -> Any:
    """The certified transactions as two column sets (transactions, results): see :mod:`.columns`.

    The transactions go without their events (certification read them already).
    """
    from .columns import pack
    if not certified:
        return certified
    trxs = pack([replace(c.transaction, events=()) if c.transaction.events else c.transaction
                 for c in certified], skip=("events",))
    return (trxs, pack([c.result for c in certified]))


def _unpacked_certified(payload: Any) -> list[Any]:
    from ..certify.report import Certified
    if not isinstance(payload, tuple):
        return list(payload or ())
    trxs, results = payload
    return [Certified(t, r) for t, r in zip(trxs, results)]


def spark_pairs(spark: Any, names: Sequence[str], run: Any, *, verify_checksum: bool = True,
                output_parquet: str | None = None,
                output: tuple[str, str] | None = None,
                report_only: bool = False) -> list[Any] | None:
    """Compute the pairs of ``names`` on executors and :meth:`~PairsRun.attach` them to ``run``.

    :param run: a :class:`repltool.certify.stitched.PairsRun` (its schema and
        history size are used).  Iterating it then streams the pairs unit by
        unit in input order, raises the first failing file's error where one
        ordered read would, re-raises the executors' warnings once each, and
        at the end writes ``output_parquet`` (with the ``writeset`` column).
    :param output: ``certify --output``: (the staging directory of the
        driver's :class:`~repltool.outputs.OutputSet`, timestamp encoding).
        Where the executors certify their files they also write the
        re-tagged copies there.
    :param report_only: the caller only builds the report from ``run``
        (:class:`~repltool.certify.report.ReportBuilder` without sinks): where the
        executors certify their files they send only the report's columns (with
        ``output`` they re-tag the copies from their own clocks, a large file's in its
        second stage: :func:`join_certified_parts`; the caller then needs no clock
        map), and iterating ``run``'s certified transactions raises ``RuntimeError``; for
        Group Replication certified from arrays (:func:`.grpacked.hashed_units`) the
        executors send the keys' hashes without descriptions, and iterating ``run``'s
        pairs raises ``RuntimeError``.
    :returns: with ``output``, when the executors wrote the copies: per name,
        its :class:`~repltool.binlog.rewrite.RewriteReport` or the error that
        stopped it (:func:`repltool.certify.retag.retag_staged` takes them);
        otherwise None (the caller writes the copies).
    :raises UsageError: the executors cannot see the staging directory.
    """
    from . import grpacked
    # (with output the driver's clock map reads the pairs Group Replication certifies)
    spec = PairsSpec(run.schema, run.options.history_size, statements=run.reads_pairs,
                     hashed=output_parquet is None and output is None
                     and grpacked.hashed_units(run, report_only))
    if output_parquet is None:
        written = _certify_on_executors(spark, names, run, spec, verify_checksum, output,
                                        report_only)
        if written is not False:
            return written  # type: ignore[return-value]
    task = Task("pairs", verify_checksum, rows=output_parquet is not None, stream=True,
                 extra=spec, run=pairs_unit)
    job = run_distributed(spark, names, task)
    first = None
    for r in job.results:
        if r.first is not None or r.failure is not None:
            first = r.first
            break

    def pairs() -> Iterator[tuple[Any, Any]]:
        seen: set[tuple[str, str]] = set()
        segments = resegmented()
        for r in stream_results(job):
            replay_warnings(r, seen)
            for trx, ws in segments(r, r.payload or (), lambda pair: pair[0]):
                yield trx, ws
            if r.failure is not None:
                raise r.failure.exception()
        if output_parquet is not None and first_failure(job) is None:
            write_parquet(spark, job, output_parquet)

    run.attach(pairs(), first)
    if output_parquet is None and grpacked.applies(run):

        def parts() -> Iterator[Any]:
            def count() -> None:
                run.truncated_skipped += 1
            certifier = grpacked.PackedGroupCertifier(run.options, run.schema, count)
            seen: set[tuple[str, str]] = set()
            for r in stream_results(job):
                replay_warnings(r, seen)
                if r.payload:
                    yield certifier.part(r.payload)
                if r.failure is not None:
                    raise r.failure.exception()
        run.attach_packed_parts(parts)
    return None


def _certify_on_executors(spark: Any, names: Sequence[str], run: Any, spec: PairsSpec,
                          verify_checksum: bool, output: tuple[str, str] | None = None,
                          report_only: bool = False) -> list[Any] | None | bool:
    """``writeset`` and ``commit-order`` on binlogs: every unit certified where it is read.

    The driver receives the certified transactions without their write sets,
    one unit at a time.  Relay logs (a source binlog spans relay files) and
    units that do not begin a new segment fall back to certifying the pairs
    on the driver (returns False; the job is then run again as pairs).
    """
    from ..certify import Mode
    from ..certify.report import drops_past_limit
    mode = run.asked_mode
    if mode is None and drops_past_limit(None, names):
        # no --mode and every input a local binlog (Format_description_event not flagged
        # as a relay log's): the default of the first transaction is writeset
        # (repltool.certify.report.default_mode), so its files certify where they are read
        mode = Mode.WRITESET
    if mode not in (Mode.WRITESET, Mode.COMMIT_ORDER) or run.reads_pairs:
        return False
    from ..binlog.engine import compiled_core
    # the report (no line) of a large binlog: its parts read in parallel, certified in
    # order by one task per file (join_certified_parts), which writes the copy of --output
    join = join_certified_parts if report_only and compiled_core() is not None else None
    task = Task("certify", verify_checksum, stream=True,
                 extra=CertifySpec(spec, mode, run.options, output, report_only),
                 run=certify_unit, join=join)
    job = run_distributed(spark, names, task)
    _SPLIT[0] += len(job.joined)
    _SPLIT[1] += sum(job.joined.values())
    _SPLIT[2] += len(job.reread)
    previous = None
    for r in job.results:
        if r.failure is not None:
            break
        if report_only and r.written == ("skipped", None):
            # a transaction without a clock to re-tag: the driver's clock map words the
            # error where one ordered run would, from the pairs (the report's columns
            # alone do not say which transaction it is)
            return False
        first, last, relay, _ = r.headers[0]
        if relay or (first is not None and first == previous):
            return False
        previous = last if last is not None else previous
    first_trx = None
    truncated = 0

    def units() -> Iterator[UnitResult]:
        nonlocal truncated
        seen: set[tuple[str, str]] = set()
        for r in stream_results(job):
            replay_warnings(r, seen)
            truncated += r.headers[0][3]
            yield r
            if r.failure is not None:
                raise r.failure.exception()

    def certified() -> Iterator[Any]:
        if report_only:
            raise RuntimeError("certify --spark: the executors sent only the report's "
                               "columns (report_only), not the certified transactions")
        begun = False
        for r in units():
            for i, c in enumerate(_unpacked_certified(r.payload[0] if r.payload else ())):
                if i == 0 and begun:            # a rotation, as one ordered read marks it
                    c = c._replace(result=replace(c.result,
                                                  trx=replace(c.result.trx, new_file=True)))
                begun = True
                yield c

    def parts() -> Iterator[Any]:
        for r in units():
            if r.payload:
                yield from r.payload[1]

    for r in job.results:
        if r.failure is not None or r.first is not None:
            first_trx = r.first
            break
    run.attach_certified(certified(), first_trx, lambda: truncated)
    run.attach_report_parts(parts())
    return _written(job.results, names) if output is not None else None


#: files certified from parts, their parts, files read whole after their parts failed
_SPLIT = [0, 0, 0]


def split_counts() -> tuple[int, int, int]:
    """``(files certify --spark certified from parts, those parts, files read again
    whole because their parts could not be joined)`` in this (driver) process (tests
    assert the split path ran)."""
    return _SPLIT[0], _SPLIT[1], _SPLIT[2]


def _written(results: list[UnitResult], names: Sequence[str]) -> list[Any]:
    """Per name: the executors' RewriteReport, the error that stopped the copy, or None."""
    out: list[Any] = [None] * len(names)
    for r in results:
        if r.written is None:
            continue
        what, detail = r.written
        if what == "unseen":
            from ..errors import UsageError
            raise UsageError(f"--output with --spark: the executors cannot see the output "
                             f"directory (not there on {detail}); give a directory every node "
                             "mounts at the same path, or run certify --output without --spark")
        if what == "written":
            reports, failure = detail, None
        elif what == "failed":
            reports, failure = detail
        else:
            continue
        for i, report in enumerate(reports):
            out[r.unit.index + i] = report
        if failure is not None:
            out[r.unit.index + len(reports)] = failure.exception()
    return out
