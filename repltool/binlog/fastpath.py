"""Hand-written decoders for the hottest event types.

They return exactly what the construct-based decoders in
:mod:`repltool.binlog.decode` return (the test-suite compares both on every
event of the corpus), at a fraction of the cost: GTID, Query and Xid events
are decoded for every transaction of every scan.  On anything unusual they
defer to the construct path, which produces the precise error.
"""

from __future__ import annotations

import struct
from uuid import UUID

from .constants import (
    COMMIT_TIMESTAMP_FLAG, LOGICAL_TIMESTAMP_TYPECODE, SERVER_VERSION_FLAG, EventType,
)
from .decode import DECODERS, DecodeContext, decode_gtid, decode_query, decode_xid
from .events import Body, GtidBody, QueryBody, XidBody

_GTID_HEAD = struct.Struct("<B16sqBqq")      # flags, sid, gno, lt_type, lc, sn
_QUERY_HEAD = struct.Struct("<IIBHH")        # thread_id, exec_time, db_len, error_code, status_len
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_UUID_CACHE: dict[bytes, UUID] = {}


def fast_gtid(data: bytes, ctx: DecodeContext) -> GtidBody:
    """GTID / Anonymous GTID with lt_type 2 (5.7 and later); other layouts go to construct."""
    n = len(data)
    if n < 42 or data[25] != LOGICAL_TIMESTAMP_TYPECODE:
        return decode_gtid(data, ctx)
    flags, sid_raw, gno, _, lc, sn = _GTID_HEAD.unpack_from(data)
    sid = _UUID_CACHE.get(sid_raw)
    if sid is None:
        if len(_UUID_CACHE) > 4096:
            _UUID_CACHE.clear()
        sid = _UUID_CACHE[sid_raw] = UUID(bytes=sid_raw)
    if n == 42:
        return GtidBody(flags, sid, gno, None, 2, lc, sn)
    p = 42
    if n < p + 7:
        return decode_gtid(data, ctx)
    ict = int.from_bytes(data[p:p + 7], "little")
    p += 7
    if ict & COMMIT_TIMESTAMP_FLAG:
        if n < p + 7:
            return decode_gtid(data, ctx)
        ict &= ~COMMIT_TIMESTAMP_FLAG
        oct_ = int.from_bytes(data[p:p + 7], "little")
        p += 7
    else:
        oct_ = ict
    if p >= n:
        return GtidBody(flags, sid, gno, None, 2, lc, sn, ict, oct_)
    first = data[p]
    if first < 251:
        trx_len = first
        p += 1
    else:
        width = {252: 2, 253: 3, 254: 8}.get(first)
        if width is None or n < p + 1 + width:
            return decode_gtid(data, ctx)
        trx_len = int.from_bytes(data[p + 1:p + 1 + width], "little")
        p += 1 + width
    if n < p + 4:
        if p != n:
            return decode_gtid(data, ctx)
        return GtidBody(flags, sid, gno, None, 2, lc, sn, ict, oct_, trx_len)
    isv = _U32.unpack_from(data, p)[0]
    p += 4
    if isv & SERVER_VERSION_FLAG:
        if n < p + 4:
            return decode_gtid(data, ctx)
        isv &= ~SERVER_VERSION_FLAG
        osv = _U32.unpack_from(data, p)[0]
        p += 4
    else:
        osv = isv
    ticket = None
    if n >= p + 8:
        ticket = _U64.unpack_from(data, p)[0]
    return GtidBody(flags, sid, gno, None, 2, lc, sn, ict, oct_, trx_len, isv, osv, ticket)


def fast_query(data: bytes, ctx: DecodeContext) -> QueryBody:
    """QUERY_EVENT with the common 13-byte post-header."""
    if ctx.structs.post_header(EventType.QUERY_EVENT, 13) != 13 or len(data) < 13:
        return decode_query(data, ctx)
    thread_id, exec_time, db_len, error_code, status_len = _QUERY_HEAD.unpack_from(data)
    db_start = 13 + status_len
    db_end = db_start + db_len
    if db_end >= len(data) or data[db_end] != 0:
        return decode_query(data, ctx)
    return QueryBody(thread_id, exec_time, error_code,
                     data[db_start:db_end].decode("utf-8", "replace"),
                     bytes(data[13:db_start]), bytes(data[db_end + 1:]))


def fast_xid(data: bytes, ctx: DecodeContext) -> XidBody:
    if len(data) != 8:
        return decode_xid(data, ctx)
    return XidBody(_U64.unpack_from(data)[0])


FAST_DECODERS: dict[int, object] = {
    **DECODERS,
    EventType.GTID_LOG_EVENT: fast_gtid,
    EventType.ANONYMOUS_GTID_LOG_EVENT: fast_gtid,
    EventType.QUERY_EVENT: fast_query,
    EventType.XID_EVENT: fast_xid,
}


def decoder_for(type_code: int, *, fast: bool = True):  # type: ignore[no-untyped-def]
    """The decoder used for ``type_code`` (``None`` for types kept as raw bytes)."""
    table = FAST_DECODERS if fast else DECODERS
    return table.get(type_code)


__all__ = ["fast_gtid", "fast_query", "fast_xid", "FAST_DECODERS", "decoder_for", "Body"]
