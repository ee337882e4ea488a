"""The fused read + group scan of the pure-Python engine (what ``repltool stats``
needs, without per-event objects); the hand-written decoders it uses live in
:mod:`repltool.binlog.fastdecode` (re-exported here).
"""

from __future__ import annotations

import struct
from typing import Any
from uuid import UUID

from ..positions import Position
from .bounded import BoundedCache
from .constants import LOGICAL_TIMESTAMP_TYPECODE, EventType
from .decode import DecodeContext
from .engine import Unsupported
from .events import Body, GtidBody, QueryBody, TableMapBody
from .fastdecode import (
    FAST_DECODERS, decoder_for, fast_gtid, fast_maria_gtid, fast_query, fast_rows,
    fast_table_map, fast_xid,
)
from .gtidtail import gtid_tail
from .reader import (
    CHUNK, HEADER, FileInfo, ReadOptions, check_magic, first_event, handle_fde, open_log,
    structs_for,
)
from .transactions import (
    Segments, TransactionSummary, classify_query, gtid_fields, is_atomic_ctas,
)
from .transactions import Transaction as _Transaction

_GTID_HEAD = struct.Struct("<B16sqBqq")      # flags, sid, gno, lt_type, lc, sn
_QUERY_HEAD = struct.Struct("<IIBHH")        # thread_id, exec_time, db_len, error_code, status_len
_U32 = struct.Struct("<I")

__all__ = ["FAST_DECODERS", "Body", "FastPathUnsupported", "LightTransaction", "SCAN_TYPES",
           "decoder_for", "fast_gtid", "fast_maria_gtid", "fast_query", "fast_rows",
           "fast_table_map", "fast_xid", "scan_transactions", "scan_light_transactions",
           "FusedScan", "LightScan"]


# ---- fused read + group scan (what `repltool stats` needs, without per-event objects) ----

#: the input needs the general reader (the caller starts over); one class for both engines
FastPathUnsupported = Unsupported


#: Event types :func:`scan_transactions` handles itself; any other type means "start over".
SCAN_TYPES = frozenset({
    EventType.FORMAT_DESCRIPTION_EVENT, EventType.PREVIOUS_GTIDS_LOG_EVENT,
    EventType.ROTATE_EVENT, EventType.STOP_EVENT, EventType.GTID_LOG_EVENT,
    EventType.ANONYMOUS_GTID_LOG_EVENT, EventType.GTID_TAGGED_LOG_EVENT,
    EventType.QUERY_EVENT, EventType.TABLE_MAP_EVENT, EventType.XID_EVENT,
    EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT, EventType.DELETE_ROWS_EVENT,
})


#: the summary tuples ``scan_light_transactions`` yields
LightTransaction = TransactionSummary


def scan_transactions(paths, *, verify_checksum: bool = True,  # type: ignore[no-untyped-def]
                      info=None, counts=None, count_rows: bool = False):
    """``group_transactions(read_events(paths, ReadOptions(types=GROUPING_TYPES)))``, fused.

    Yields the very :class:`~repltool.binlog.transactions.Transaction` objects the
    general path yields (``events`` empty), for the common shape of MySQL 5.7+
    binlogs and relay logs: v4 FDEs with a standard post-header table and only
    the event types of :data:`SCAN_TYPES` (no Transaction_payload), no damage.
    Events are not materialised: a Rows event costs a header unpack, a CRC32 and
    a few counter updates.  Whatever falls outside that subset - another event
    type, a CRC mismatch, a truncated or malformed event, a file that cannot be
    opened - raises :class:`FastPathUnsupported` at that point, and the caller
    must start over with the general path (which then gives the exact result or
    error).  Checked against the general path in ``tests/binlog/test_fastpath.py``.

    :param info: as ``read_events``: a :class:`~repltool.binlog.reader.FileInfo`
        is appended per file.
    :param counts: a dict filled with ``path -> (types Counter, bytes Counter)``:
        the events (and their bytes) by type code, in first-seen order, as
        ``stats`` counts them.
    :param count_rows: fill ``row_counts`` (every row image walked,
        :class:`repltool.binlog.rowcount.RowCounter`).
    """
    return _scan_transactions(paths, verify_checksum, info, counts, False, count_rows)


def scan_light_transactions(paths, *, verify_checksum: bool = True,  # type: ignore[no-untyped-def]
                            info=None, counts=None, count_rows: bool = False):
    """:func:`scan_transactions` yielding :class:`LightTransaction` tuples (the fields
    ``stats`` reads, with the general path's values) instead of transactions."""
    return _scan_transactions(paths, verify_checksum, info, counts, True, count_rows)


def _scan_transactions(paths, verify_checksum, info, counts, light,  # type: ignore[no-untyped-def]
                       count_rows):
    import os

    from ..errors import ReplToolError

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    scan = LightScan(verify_checksum) if light else FusedScan(verify_checksum)
    if count_rows:
        from .rowcount import RowCounter
        scan.counter = RowCounter()
    try:
        for path in paths:
            yield from scan.file(os.fspath(path), info, counts)
        if scan.g is not None:
            yield scan.finish(True)
    except ReplToolError as exc:
        raise FastPathUnsupported(str(exc)) from exc


# group record indexes (a list, not an object: it is touched for every event)
(_FIRST, _FTS, _FSID, _LPATH, _LP, _LTS, _COUNT, _SIZE, _END, _GTID, _THREAD, _KIND, _TABLES,
 _ROWSD, _HASGTID, _SEG, _RELAY, _OPEN, _ROWK) = range(19)
_TID = struct.Struct("<IH")


class FusedScan:
    """State of :func:`scan_transactions` across files (segments, table names, open group)."""

    #: yield :class:`LightTransaction` tuples (:class:`LightScan`) instead of transactions
    light = False

    def __init__(self, verify: bool) -> None:
        self.verify = verify
        self.opts = ReadOptions(verify_checksum=verify)
        self.seg = Segments()
        self.table_names: dict[int, str] = {}
        #: Table_map bytes -> (table id, name): bounded in entries and key bytes
        self.tm_cache: BoundedCache[bytes, tuple[int, str] | None] = BoundedCache(
            4096, 16 << 20, lambda data, _hit: len(data) + 100)
        self.g: list | None = None  # type: ignore[type-arg]
        #: the current file's :class:`~repltool.binlog.structs.BinlogStructs`
        self.structs = None
        #: a :class:`~repltool.binlog.rowcount.RowCounter`: the rows of every Rows event
        #: are counted into the group's row counts
        self.counter: Any = None

    def new_group(self, pos, ts: int, sid: int, gb,  # type: ignore[no-untyped-def]
                  has_gtid: bool) -> list:  # type: ignore[type-arg]
        return [pos, ts, sid, pos.file, pos.offset, ts, 0, 0, None, gb, None, "dml", {}, {},
                has_gtid, self.seg.current, self.seg.relay, False, {}]

    def finish(self, truncated: bool):  # type: ignore[no-untyped-def]
        g = self.g
        assert g is not None
        self.g = None
        gb = g[_GTID]
        gtid = lc = sn = None
        extra = {}
        if type(gb) is tuple:           # light mode, _plain_gtid: (flags, sid, gno, 2, lc, sn)
            _, sid_raw, gno, _, lc, sn = gb
            return _new(LightTransaction, (
                g[_FIRST], _plain_text(sid_raw, gno), lc, sn, g[_SIZE], g[_COUNT],
                "empty" if g[_COUNT] == 1 else g[_KIND], truncated,
                max(0, g[_LTS] - g[_FTS]), tuple(g[_ROWSD].items()), False, None, None,
                g[_FTS], g[_LTS], _row_counts(g[_ROWK])))
        if gb is not None:
            gtid = _gtid_text(gb)
            lc, sn, extra = gtid_fields(gb)
        kind = g[_KIND]
        count = g[_COUNT]
        if count == 1 and g[_HASGTID]:
            kind = "empty"
        first = g[_FIRST]
        if self.light:
            return _new(LightTransaction, (
                first, gtid, lc, sn, g[_SIZE], count, kind, truncated,
                max(0, g[_LTS] - g[_FTS]), tuple(g[_ROWSD].items()),
                gb is not None and gb.delta16_saturated, None, None, g[_FTS], g[_LTS],
                _row_counts(g[_ROWK])))
        last = first if g[_LP] == first.offset and g[_LPATH] == first.file \
            else _new(Position, (g[_LPATH], g[_LP], None))
        return _Transaction(
            start=first, end=last, end_offset=g[_END], gtid=gtid, last_committed=lc,
            sequence_number=sn, server_id=g[_FSID], thread_id=g[_THREAD], size=g[_SIZE],
            num_events=count, timestamp=g[_FTS], end_timestamp=g[_LTS], kind=kind,
            truncated=truncated, compressed=False, tables=tuple(g[_TABLES]),
            segment=g[_SEG], relay_log=g[_RELAY], rows_events=tuple(g[_ROWSD].items()),
            events=(), row_counts=_row_counts(g[_ROWK]), **extra)

    def file(self, path: str, info, counts):  # type: ignore[no-untyped-def]
        import zlib
        from collections import Counter

        from ..positions import Position
        from .constants import ChecksumAlg
        from .events import Event

        fi = FileInfo(path, 0)
        if info is not None:
            info.append(fi)
        fh, fi.size = open_log(path)
        unpack = HEADER.unpack_from
        u32 = _U32.unpack_from
        tid_of = _TID.unpack_from
        crc32 = zlib.crc32
        new_pos = tuple.__new__
        verify = self.verify
        seg = self.seg
        table_names = self.table_names
        tm_cache = self.tm_cache
        decoders = FAST_DECODERS
        tcount = [0] * 256
        tbytes = [0] * 256
        light = self.light
        counter = self.counter
        count_rows = counter.rows_bytes if counter is not None else None
        tm_ctx = None
        tm_decode = None
        plain = _plain_gtid
        order: list[int] = []
        rows_types = _ROWS_V2
        gtid_types = _GTID_TYPES
        structs = None
        ctxs: dict[int, DecodeContext] = {}
        crc_on = False
        query13 = False
        minsize = 19
        first = True
        g = self.g
        r_cnt = r_sz = r_p = r_end = r_ts = 0    # Rows events not yet folded into g
        try:
            with fh:
                check_magic(fi, fh.read(4), fh)
                buf, off, base = b"", 0, 4
                blen = 0
                while True:
                    if off + 19 > blen:
                        buf = buf[off:] + fh.read(CHUNK)
                        base += off
                        off = 0
                        blen = len(buf)
                        if blen < 19:
                            if buf:
                                raise FastPathUnsupported("truncated tail")
                            fi.end_offset = base
                            if r_cnt:
                                g[_COUNT] += r_cnt
                                g[_SIZE] += r_sz
                                g[_LPATH], g[_LP], g[_LTS], g[_END] = path, r_p, r_ts, r_end
                                r_cnt = r_sz = 0
                            break
                    ts, tc, sid, size, log_pos, flags = unpack(buf, off)
                    end = off + size
                    if end > blen:
                        if size < 19 or base + off + size > fi.size:
                            raise FastPathUnsupported("bad event size")
                        buf = buf[off:] + fh.read(max(CHUNK, end - blen))
                        base += off
                        off, end = 0, size
                        blen = len(buf)
                        if blen < end:
                            raise FastPathUnsupported("file shrank while being read")
                    elif size < minsize:
                        raise FastPathUnsupported("event too small")
                    if not tcount[tc]:
                        if tc not in SCAN_TYPES:
                            raise FastPathUnsupported(f"event type {tc}")
                        order.append(tc)
                    tcount[tc] += 1
                    tbytes[tc] += size
                    if crc_on:
                        body_end = end - 4
                        if verify and crc32(buf[off:body_end]) != u32(buf, body_end)[0]:
                            raise FastPathUnsupported("CRC mismatch")
                    else:
                        body_end = end
                    if tc in rows_types and g is not None:
                        # the hot case: counted in locals, folded into g before anything
                        # else looks at the group (below, and at the end of the file)
                        r_cnt += 1
                        r_sz += size
                        r_p = base + off
                        r_end = base + end
                        r_ts = ts
                        lo, hi = tid_of(buf, off + 19)
                        name = table_names.get(lo | hi << 32, "?")
                        rows = g[_ROWSD]
                        rows[name] = rows.get(name, 0) + 1
                        if counter is not None:
                            k, n = count_rows(tc, buf[off + 19:body_end])
                            acc = g[_ROWK]
                            c = acc.get(name)
                            if c is None:
                                c = acc[name] = [0, 0, 0, 0]
                            c[k] += n
                        off = end
                        continue
                    if tc == _TMAP and g is not None:
                        data = buf[off + 19:body_end]
                        hit = tm_cache.get(data, _MISS)
                        if hit is not _MISS:      # a Table_map seen before: fold it like Rows
                            r_cnt += 1
                            r_sz += size
                            r_p = base + off
                            r_end = base + end
                            r_ts = ts
                            if hit is not None:
                                table_names[hit[0]] = hit[1]
                                g[_TABLES][hit[1]] = None
                            if counter is not None:
                                counter.table_map_data(data, tm_decode)
                            off = end
                            continue
                    if r_cnt:
                        g[_COUNT] += r_cnt
                        g[_SIZE] += r_sz
                        g[_LPATH], g[_LP], g[_LTS], g[_END] = path, r_p, r_ts, r_end
                        r_cnt = r_sz = 0
                    p = base + off
                    if tc == _FDE:
                        raw = buf[off:end]
                        pos = new_pos(Position, (path, p, None))
                        if first:
                            first_event(fi, raw, 0, tc, p, size)
                            first = False
                        fde, crc = handle_fde(fi, raw, pos, self.opts)
                        structs = self.structs = structs_for(fde)
                        if (fde.binlog_version != 4 or structs.lenient
                                or structs.opaque & SCAN_TYPES):
                            raise FastPathUnsupported("non-standard FDE")
                        crc_on = fde.checksum_alg == ChecksumAlg.CRC32
                        minsize = 23 if crc_on else 19
                        query13 = structs.post_header(EventType.QUERY_EVENT, 13) == 13
                        tm_ctx = DecodeContext(structs, pos, _TMAP)
                        tm_decode = _bind(decoders[_TMAP], tm_ctx)
                        if counter is not None:
                            counter.set_structs(structs)
                        # one context per type: a decoder's result does not depend on the
                        # position (only its errors would, and an error means starting over)
                        ctxs = {t: DecodeContext(structs, pos, t) for t in _GTID_TYPES}
                        seg.see(Event(pos, ts, tc, sid, size, log_pos, flags, fde, crc))
                        off = end
                        continue
                    if structs is None:
                        raise FastPathUnsupported("no FDE first")
                    if tc in _SKIPPED:
                        off = end
                        continue
                    data = buf[off + 19:body_end]
                    off = end
                    if tc == _TMAP:
                        hit = tm_cache.get(data, _MISS)
                        if hit is _MISS:
                            pos = new_pos(Position, (path, p, None))
                            tm = decoders[tc](data, DecodeContext(structs, pos, tc))
                            hit = (tm.table_id, f"{tm.db}.{tm.table}") \
                                if isinstance(tm, TableMapBody) else None
                            tm_cache[data] = hit
                        if g is None:
                            g = self.g = self.new_group(new_pos(Position, (path, p, None)), ts,
                                                        sid, None, False)
                        g[_LPATH], g[_LP], g[_LTS] = path, p, ts
                        g[_COUNT] += 1
                        g[_SIZE] += size
                        g[_END] = p + size
                        if hit is not None:
                            table_names[hit[0]] = hit[1]
                            g[_TABLES][hit[1]] = None
                        if counter is not None:
                            counter.table_map_data(data, tm_decode)
                        continue
                    pos = new_pos(Position, (path, p, None))
                    if tc in gtid_types:
                        body = plain(data) if light and tc != 42 else None
                        if body is None:
                            body = decoders[tc](data, ctxs[tc])
                        if g is not None:
                            yield self.finish(True)
                        g = self.g = self.new_group(
                            pos, ts, sid, body if type(body) is tuple or isinstance(
                                body, GtidBody) else None, True)
                        g[_COUNT], g[_SIZE], g[_END] = 1, size, p + size
                        continue
                    if tc == _ROTATE:
                        body = decoders[tc](data, DecodeContext(structs, pos, tc))
                        seg.see(Event(pos, ts, tc, sid, size, log_pos, flags, body))
                        continue
                    if g is None:
                        g = self.g = self.new_group(pos, ts, sid, None, False)
                    g[_LPATH], g[_LP], g[_LTS] = path, p, ts
                    g[_COUNT] += 1
                    g[_SIZE] += size
                    g[_END] = p + size
                    if tc in rows_types:
                        lo, hi = tid_of(buf, off - size + 19)
                        name = table_names.get(lo | hi << 32, "?")
                        g[_ROWSD][name] = g[_ROWSD].get(name, 0) + 1
                        if counter is not None:
                            _count(counter, tc, data, name, g[_ROWK])
                        continue
                    if tc == _XID:
                        yield self.finish(False)
                        g = None
                        continue
                    # QUERY_EVENT: what transactions._advance does with a Query.  Only
                    # thread_id and the query's first 24 bytes matter (classify_query):
                    # read them in place when fast_query would accept the event.
                    qs = off - size + 19
                    thread_id, _, db_len, _, status_len = _QUERY_HEAD.unpack_from(buf, qs)
                    db_end = qs + 13 + status_len + db_len
                    if query13 and db_end < body_end and buf[db_end] == 0:
                        head = buf[db_end + 1:min(db_end + 25, body_end)]
                    else:
                        q = decoders[tc](data, DecodeContext(structs, pos, tc))
                        if not isinstance(q, QueryBody):
                            raise FastPathUnsupported("undecodable query")
                        thread_id, head = q.thread_id, q.query
                    if g[_THREAD] is None:
                        g[_THREAD] = thread_id
                    what = classify_query(head)
                    if what == "begin":
                        g[_OPEN] = True
                    elif what == "commit" or what in ("rollback", "xa-rollback") \
                            or not g[_OPEN]:
                        if what in ("rollback", "xa-rollback"):
                            g[_KIND] = what
                        elif what != "commit":      # a statement right after the GTID
                            g[_KIND] = "xa-commit" if what == "xa-commit" else "ddl"
                        elif (g[_COUNT] == 3 and g[_OPEN] and g[_HASGTID] and not g[_ROWSD]
                              and not g[_TABLES]):
                            g[_KIND] = "empty"      # GTID, BEGIN, COMMIT: empty transaction
                        yield self.finish(False)
                        g = None
                    elif head.lstrip()[:6].upper() == b"CREATE":
                        # a CREATE inside BEGIN: 8.0.21+ CREATE TABLE ... SELECT (rare:
                        # the whole query is decoded only here)
                        q = decoders[tc](data, DecodeContext(structs, pos, tc))
                        if isinstance(q, QueryBody) and is_atomic_ctas(q.query):
                            g[_KIND] = "ddl"
        finally:
            self.g = g
        if counts is not None:
            types, nbytes = counts.setdefault(path, (Counter(), Counter()))
            for tc in order:
                types[tc] += tcount[tc]
                nbytes[tc] += tbytes[tc]


class LightScan(FusedScan):
    """A :class:`FusedScan` that yields :class:`LightTransaction` tuples."""

    light = True


def _count(counter, tc: int, data: bytes, name: str,  # type: ignore[no-untyped-def]
           acc: dict[str, list[int]]) -> None:
    k, n = counter.rows(tc, data)
    counts = acc.get(name)
    if counts is None:
        counts = acc[name] = [0, 0, 0, 0]
    counts[k] += n


def _bind(decode, ctx):  # type: ignore[no-untyped-def]
    """``decode`` of a body's bytes under ``ctx``."""
    return lambda data: decode(data, ctx)


def _row_counts(acc: dict[str, list[int]]) -> tuple[tuple[str, int, int, int, int], ...]:
    return tuple([(t, c[0], c[1], c[2], c[3]) for t, c in acc.items()]) if acc else ()


_MISS = object()
_new = tuple.__new__
_FDE = int(EventType.FORMAT_DESCRIPTION_EVENT)
_ROTATE = int(EventType.ROTATE_EVENT)
_TMAP = int(EventType.TABLE_MAP_EVENT)
_XID = int(EventType.XID_EVENT)
_SKIPPED = frozenset({int(EventType.PREVIOUS_GTIDS_LOG_EVENT), int(EventType.STOP_EVENT)})
_ROWS_V2 = frozenset({int(EventType.WRITE_ROWS_EVENT), int(EventType.UPDATE_ROWS_EVENT),
                      int(EventType.DELETE_ROWS_EVENT)})
_GTID_TYPES = frozenset({int(EventType.GTID_LOG_EVENT), int(EventType.ANONYMOUS_GTID_LOG_EVENT),
                         int(EventType.GTID_TAGGED_LOG_EVENT)})
_GTID_PREFIX: dict[tuple[object, object], str] = {}
_ZERO_SID = bytes(16)


def _plain_gtid(data: bytes) -> tuple | None:  # type: ignore[type-arg]
    """(flags, sid, gno, 2, last_committed, sequence_number) of an untagged GTID body
    that :func:`fast_gtid` decodes without deferring to construct, else ``None``.

    The same acceptance rule as :func:`fast_gtid` (the tail walked by the same
    :func:`~repltool.binlog.gtidtail.gtid_tail`; the property test in
    ``tests/binlog/test_fastpath.py`` holds them together), without building a
    :class:`GtidBody`: ``stats`` needs only the clock and the GTID's text.
    """
    n = len(data)
    if n < 42 or data[25] != LOGICAL_TIMESTAMP_TYPECODE or (
            n > 42 and gtid_tail(data, 42, n) is None):
        return None
    return _GTID_HEAD.unpack_from(data)




def _plain_text(sid_raw: bytes, gno: int) -> str:
    """``GtidBody.gtid_text`` of an untagged GTID from its raw SID."""
    if gno == 0 and sid_raw == _ZERO_SID:
        return "ANONYMOUS"
    prefix = _GTID_PREFIX.get(sid_raw)  # type: ignore[call-overload]
    if prefix is None:
        prefix = f"{UUID(bytes=sid_raw)}:"
        if len(_GTID_PREFIX) > 4096:
            _GTID_PREFIX.clear()
        _GTID_PREFIX[sid_raw] = prefix  # type: ignore[index]
    return f"{prefix}{gno}"


def _gtid_text(gb: GtidBody) -> str:
    """``gb.gtid_text``, with the ``uuid:`` / ``uuid:tag:`` prefix cached (the
    ``str(UUID)`` of every transaction was a tenth of a scan)."""
    if gb.anonymous or gb.tag is not None or type(gb.gno) is not int:
        return gb.gtid_text
    key = (gb.sid, gb.tag)
    prefix = _GTID_PREFIX.get(key)
    if prefix is None:
        text = gb.gtid_text
        prefix = text[:text.rindex(":") + 1]
        if len(_GTID_PREFIX) > 4096:
            _GTID_PREFIX.clear()
        _GTID_PREFIX[key] = prefix
    return f"{prefix}{gb.gno}"
