"""Hand-written decoders for the hottest event types.

They return exactly what the construct-based decoders in
:mod:`repltool.binlog.decode` return (the test-suite compares both on every
event of the corpus), at a fraction of the cost: GTID, Query and Xid events
are decoded for every transaction of every scan.  On anything unusual they
defer to the construct path, which produces the precise error.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple
from uuid import UUID

from .bounded import BoundedCache
from .coltypes import TABLE_CACHE_PER_TABLE
from .constants import LOGICAL_TIMESTAMP_TYPECODE, MAX_COLUMNS, EventType
from ..positions import Position
from .decode import (
    DECODERS, DecodeContext, decode_gtid, decode_maria_gtid, decode_query, decode_rows,
    decode_table_map, decode_xid,
)
from .events import (
    Body, GtidBody, MariaGtidBody, QueryBody, RowsBody, TableMapBody, XidBody, slot_builder,
)
from .gtidtail import gtid_tail
from . import structs as S
from .structs import read_packed_int

# the layouts, derived from the construct declarations (structs.fixed_head)
_GTID_HEAD = S.GTID_HEAD.struct              # flags, sid, gno, lt_type, lc, sn
_GTID_LEN = S.GTID_HEAD.size                 # the 42-byte post-header of 5.7+
_LT_AT = S.GTID_HEAD.offsets["lt_type"]
_QUERY_HEAD = S.QUERY_HEAD.struct            # thread_id, exec_time, db_len, error_code, status_len
_QUERY_LEN = S.QUERY_HEAD.size
_XID_BODY = S.XID
_UUID_CACHE: dict[bytes, UUID] = {}
# the bodies built through their slots (events.slot_builder: the same records, in
# about half the time; these decoders run once per event)
_Gtid, _Query, _Xid, _TableMap, _Rows, _MariaGtid = map(slot_builder, (
    GtidBody, QueryBody, XidBody, TableMapBody, RowsBody, MariaGtidBody))


def fast_gtid(data: bytes, ctx: DecodeContext) -> GtidBody:
    """GTID / Anonymous GTID with lt_type 2 (5.7 and later); other layouts go to construct."""
    n = len(data)
    if n < _GTID_LEN or data[_LT_AT] != LOGICAL_TIMESTAMP_TYPECODE:
        return decode_gtid(data, ctx)
    flags, sid_raw, gno, _, lc, sn = _GTID_HEAD.unpack_from(data)
    sid = _UUID_CACHE.get(sid_raw)
    if sid is None:
        if len(_UUID_CACHE) > 4096:
            _UUID_CACHE.clear()
        sid = _UUID_CACHE[sid_raw] = UUID(bytes=sid_raw)
    if n == _GTID_LEN:
        return _Gtid(flags, sid, gno, None, 2, lc, sn)
    t = gtid_tail(data, _GTID_LEN, n)
    if t is None:
        return decode_gtid(data, ctx)
    return _Gtid(flags, sid, gno, None, 2, lc, sn, t[0], t[1], t[2], t[3], t[4], t[5])


_QUERY = int(EventType.QUERY_EVENT)      # (an enum member's lookup costs ~0.1 us a call)


def fast_query(data: bytes, ctx: DecodeContext) -> QueryBody:
    """QUERY_EVENT with the common 13-byte post-header."""
    if ctx.structs.post_header(_QUERY, _QUERY_LEN) != _QUERY_LEN or len(data) < _QUERY_LEN:
        return decode_query(data, ctx)
    thread_id, exec_time, db_len, error_code, status_len = _QUERY_HEAD.unpack_from(data)
    db_start = _QUERY_LEN + status_len
    db_end = db_start + db_len
    if db_end >= len(data) or data[db_end] != 0:
        return decode_query(data, ctx)
    return _Query(thread_id, exec_time, error_code,
                     data[db_start:db_end].decode("utf-8", "replace"),
                     bytes(data[_QUERY_LEN:db_start]), bytes(data[db_end + 1:]))


def fast_xid(data: bytes, ctx: DecodeContext) -> XidBody:
    if len(data) != _XID_BODY.size:
        return decode_xid(data, ctx)
    return _Xid(_XID_BODY.unpack_from(data)[0])


def _packed(data: bytes, p: int) -> tuple[int, int]:
    """(value, next offset) of a packed integer at ``p``; raises ValueError."""
    got = read_packed_int(data, p)
    if got is None:
        raise ValueError("bad packed integer")
    return got


#: decoded Table_map bodies by their bytes: at most 4096 of them and 16 MiB of keys
#: (and TABLE_CACHE_PER_TABLE of one table: coltypes.table_body_cache)
_TABLE_MAP_CACHE: BoundedCache[bytes, TableMapBody] = BoundedCache(
    4096, 16 << 20, lambda data, _b: 2 * len(data) + 200,
    lambda _data, body: (body.db, body.table), TABLE_CACHE_PER_TABLE)


_TM_HEAD = S.TABLE_MAP_HEAD.struct           # table id low 32, high 16, flags
_TM_LEN = S.TABLE_MAP_HEAD.size


def fast_table_map(data: bytes, ctx: DecodeContext) -> TableMapBody:
    """TABLE_MAP_EVENT with the 8-byte post-header; anything odd goes to construct.

    A server writes the same Table_map bytes for every statement on a table, so
    decoded bodies are cached by their bytes (bounded).
    """
    hit = _TABLE_MAP_CACHE.get(data)
    if hit is not None:
        return hit
    if ctx.structs.post_header(EventType.TABLE_MAP_EVENT, _TM_LEN) != _TM_LEN:
        return decode_table_map(data, ctx)
    body = _parse_table_map(data, ctx)
    _TABLE_MAP_CACHE[bytes(data)] = body
    return body


def _parse_table_map(data: bytes, ctx: DecodeContext) -> TableMapBody:
    try:
        n = len(data)
        lo, hi, flags = _TM_HEAD.unpack_from(data)
        dl = data[_TM_LEN]
        db_end = _TM_LEN + 1 + dl
        if data[db_end] != 0:
            raise ValueError
        tl = data[db_end + 1]
        t_start = db_end + 2
        t_end = t_start + tl
        if data[t_end] != 0:
            raise ValueError
        count, p = _packed(data, t_end + 1)
        if count > MAX_COLUMNS:
            raise ValueError        # decode_table_map says why
        types = data[p:p + count]
        p += count
        if p == n:
            metadata = null_bitmap = b""
        else:
            mlen, p = _packed(data, p)
            metadata = data[p:p + mlen]
            p += mlen
            nb = (count + 7) // 8
            null_bitmap = data[p:p + nb]
            p += nb
        if len(types) != count or p > n:
            raise ValueError
        opt = []
        while p < n:
            kind = data[p]
            vlen, q = _packed(data, p + 1)
            if q + vlen > n:
                raise ValueError
            opt.append((kind, bytes(data[q:q + vlen])))
            p = q + vlen
    except (IndexError, ValueError, struct.error):
        return decode_table_map(data, ctx)
    return _TableMap(lo | hi << 32, flags, data[_TM_LEN + 1:db_end].decode("utf-8", "replace"),
                        data[t_start:t_end].decode("utf-8", "replace"), count, bytes(types),
                        bytes(metadata), bytes(null_bitmap), tuple(opt))


_ROWS_V1 = frozenset({EventType.WRITE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT_V1,
                      EventType.DELETE_ROWS_EVENT_V1})
_ROWS_V2_ALL = frozenset({EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT,
                          EventType.DELETE_ROWS_EVENT, EventType.PARTIAL_UPDATE_ROWS_EVENT})
_ROWS_UPDATE = frozenset({EventType.UPDATE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT,
                          EventType.PARTIAL_UPDATE_ROWS_EVENT})
_ROWS_HEAD = S.ROWS_V2_HEAD.struct           # table id low 32, high 16, flags, var_header_len
_ROWS_V2_LEN = S.ROWS_V2_HEAD.size
_ROWS_V1_LEN = S.ROWS_V1_HEAD.size
_EXTRA_AT = S.ROWS_V2_HEAD.offsets["extra_info"]


def fast_rows(data: bytes, ctx: DecodeContext) -> RowsBody:
    """Rows events v1 / v2 / PARTIAL_UPDATE with the standard 6-byte table id.

    The row images stay encoded (as the construct decoder leaves them); a
    packed width >= 251, a bad extra-info length or a short body go to construct.
    """
    tc = ctx.type_code
    v2 = tc in _ROWS_V2_ALL
    ph = _ROWS_V2_LEN if v2 else _ROWS_V1_LEN
    if ctx.structs.post_header(tc, ph) != ph or len(data) < _ROWS_V2_LEN:
        return decode_rows(data, ctx)
    lo, hi, flags, var_len = _ROWS_HEAD.unpack_from(data)
    n = len(data)
    if v2:
        p = _EXTRA_AT + var_len
        if var_len < _ROWS_V2_LEN - _EXTRA_AT or p > n:
            return decode_rows(data, ctx)
        # as decode_rows: construct's Prefixed(includelength=True) already drops the
        # length field, and decode_rows then slices off two more bytes ([2:])
        extra = bytes(data[_ROWS_V2_LEN:p])
    else:
        p, extra = _ROWS_V1_LEN, b""
    if p >= n:
        return decode_rows(data, ctx)
    width = data[p]
    if width >= 251 or width == 0:
        return decode_rows(data, ctx)
    p += 1
    nb = (width + 7) // 8
    before = data[p:p + nb]
    p += nb
    after = None
    if tc in _ROWS_UPDATE:
        after = bytes(data[p:p + nb])
        p += nb
    if p > n:
        return decode_rows(data, ctx)
    return _Rows(lo | hi << 32, flags, extra, width, bytes(before), after, bytes(data[p:]))


_MARIA_HEAD = S.MARIA_GTID_HEAD.struct       # seq_no, domain_id, flags2
_MARIA_LEN = S.MARIA_GTID_HEAD.size
_MARIA_COMMIT = S.MARIA_GTID_COMMIT.struct   # ... then commit_id
_FLAGS2_AT = S.MARIA_GTID_HEAD.offsets["flags2"]


def fast_maria_gtid(data: bytes, ctx: DecodeContext) -> MariaGtidBody:
    """MariaDB GTID_EVENT without XA fields; XA GTIDs go to construct."""
    n = len(data)
    if n < _MARIA_LEN or data[_FLAGS2_AT] & 0xC0:
        return decode_maria_gtid(data, ctx)
    seq_no, domain_id, flags2 = _MARIA_HEAD.unpack_from(data)
    p = _MARIA_LEN
    commit_id = None
    if flags2 & 0x02:
        if n < _MARIA_COMMIT.size:
            return decode_maria_gtid(data, ctx)
        commit_id = _MARIA_COMMIT.unpack_from(data)[3]
        p = _MARIA_COMMIT.size
    flags_extra = data[p] if p < n else None
    if flags_extra:
        return decode_maria_gtid(data, ctx)
    return _MariaGtid(seq_no, domain_id, flags2, commit_id, None, None, None, flags_extra)


FAST_DECODERS: dict[int, object] = {
    **DECODERS,
    EventType.GTID_LOG_EVENT: fast_gtid,
    EventType.ANONYMOUS_GTID_LOG_EVENT: fast_gtid,
    EventType.QUERY_EVENT: fast_query,
    EventType.XID_EVENT: fast_xid,
    EventType.TABLE_MAP_EVENT: fast_table_map,
    EventType.MARIADB_GTID_EVENT: fast_maria_gtid,
    **{t: fast_rows for t in (*_ROWS_V1, *_ROWS_V2_ALL)},
}


def decoder_for(type_code: int):  # type: ignore[no-untyped-def]
    """The decoder the fast path uses for ``type_code`` (``None`` for types kept as raw
    bytes); the general reader's is ``repltool.binlog.decode.DECODERS[type_code]``."""
    return FAST_DECODERS.get(type_code)


__all__ = ["fast_gtid", "fast_query", "fast_xid", "fast_table_map", "fast_rows", "fast_maria_gtid",
           "FAST_DECODERS", "decoder_for", "Body"]
