"""Event bodies -> frozen records: the explicit dispatch table ``DECODERS``.

Every decoder takes the body bytes (CRC footer already removed) and a
:class:`DecodeContext`, and returns one body record.  construct does the
parsing; :func:`parse_at` is the only place that catches ``ConstructError``
and turns it into :class:`~repltool.errors.MalformedEvent`.  The hottest
decoders (GTID, Query, Xid) have hand-written fast paths in
:mod:`repltool.binlog.fastdecode`, checked against these by the test-suite.
"""

from __future__ import annotations

import re
import struct
import sys
import zlib
from array import array
from typing import Any, Callable, NamedTuple
from uuid import UUID

from construct import ConstructError

from ..errors import MalformedEvent
from ..escape import printable
from ..positions import Position
from . import structs as S
from .constants import (
    COMMIT_TIMESTAMP_FLAG, DELTA16_SATURATED, LOGICAL_TIMESTAMP_DELTA16_TYPECODE,
    MAX_COLUMNS, ROWS_TYPES, SERVER_VERSION_FLAG, EventType, type_name,
)
from .events import (
    BinlogCheckpointBody, Body, FormatDescriptionBody, GtidBody, GtidListBody, HeartbeatBody,
    IncidentBody, IntvarBody, MariaGtidBody, PreviousGtidsBody, QueryBody, RandBody, RotateBody,
    RowsBody, RowsQueryBody, StartEncryptionBody, StartV3Body, StopBody, TableMapBody,
    TransactionContextBody, TransactionPayloadBody, UnknownBody, UserVarBody, ViewChangeBody,
    XaPrepareBody, XidBody,
)
from .gtid import GtidInterval, GtidSet


class DecodeContext(NamedTuple):
    """What a decoder needs besides the body: the governing FDE's structs and where we are.

    Immutable; a ``NamedTuple`` rather than a frozen dataclass because the reader makes
    one per decoded event (~0.4 us against ~1.4 us a frozen dataclass's ``__init__``)."""

    structs: S.BinlogStructs
    pos: Position
    type_code: int


def parse_at(struct: Any, data: bytes, ctx: DecodeContext, **params: Any) -> Any:
    """Parse ``data`` with ``struct``; the single ConstructError -> MalformedEvent translation."""
    try:
        return struct.parse(data, **params)
    except ConstructError as exc:
        field = getattr(exc, "path", None) or ""
        detail = str(exc).split("\n")[-1].strip() or exc.__class__.__name__
        raise MalformedEvent(f"{field}: {detail}" if field else detail,
                             pos=ctx.pos, event_type=type_name(ctx.type_code)) from exc


def malformed(ctx: DecodeContext, message: str) -> MalformedEvent:
    return MalformedEvent(message, pos=ctx.pos, event_type=type_name(ctx.type_code))


def _text(raw: bytes) -> str:
    return raw.split(b"\x00", 1)[0].decode("utf-8", "replace")


TAG_MAX_LENGTH = 32
_TAG = re.compile(rb"[ \t\n\v\f\r]*([A-Za-z_][A-Za-z0-9_]*)?[ \t\n\v\f\r]*")


def gtid_tag(raw: bytes, ctx: DecodeContext) -> str:
    """A GTID tag as MySQL decodes one (``libs/mysql/gtid/tag.cpp``, ``Tag::decode_tag``).

    At most 32 bytes; a letter or ``_``, then letters, digits or ``_``, with
    spaces around it ignored; stored lower-case.  Anything else (quotes,
    control characters, non-ASCII bytes, a NUL) makes the event malformed, as
    it makes MySQL's decoder fail.
    """
    m = _TAG.fullmatch(raw)
    if len(raw) > TAG_MAX_LENGTH or m is None:
        shown = printable(raw[:40].decode("latin-1")) + ("..." if len(raw) > 40 else "")
        raise malformed(ctx, f"GTID tag '{shown}' is not a valid tag (at most "
                             f"{TAG_MAX_LENGTH} characters [A-Za-z_][A-Za-z0-9_]*)")
    return (m.group(1) or b"").decode("ascii").lower()


# ---- control events ----

def decode_fde(data: bytes, ctx: DecodeContext) -> FormatDescriptionBody:
    """FORMAT_DESCRIPTION_EVENT.  ``data`` includes the alg byte but not the CRC."""
    if len(data) < 57:
        raise malformed(ctx, f"body of {len(data)} bytes is shorter than the 57-byte minimum")
    version = parse_version_prefix(data[2:52])
    has_alg = version >= (5, 6, 1)
    num_types = len(data) - 57 - (1 if has_alg else 0)
    c = parse_at(S.fde_body, data, ctx, num_types=num_types, has_checksum_alg=has_alg)
    return FormatDescriptionBody(c.binlog_version, _text(c.server_version), c.create_timestamp,
                                 c.common_header_len, bytes(c.post_header_len), c.checksum_alg)


def parse_version_prefix(raw: bytes) -> tuple[int, int, int]:
    from .events import parse_version
    return parse_version(_text(raw))


def decode_start_v3(data: bytes, ctx: DecodeContext) -> StartV3Body:
    c = parse_at(S.start_v3_body, data, ctx)
    return StartV3Body(c.binlog_version, _text(c.server_version), c.create_timestamp)


def decode_rotate(data: bytes, ctx: DecodeContext) -> RotateBody:
    c = parse_at(ctx.structs.rotate_body, data, ctx)
    return RotateBody(c.position, c.new_log_ident[:511].decode("utf-8", "replace"))


def decode_stop(data: bytes, ctx: DecodeContext) -> StopBody:
    return StopBody()


def decode_xid(data: bytes, ctx: DecodeContext) -> XidBody:
    return XidBody(parse_at(S.xid_body, data, ctx).xid)


def decode_incident(data: bytes, ctx: DecodeContext) -> IncidentBody:
    c = parse_at(S.incident_body, data, ctx)
    return IncidentBody(c.incident, (c.message or b"").decode("utf-8", "replace"))


def decode_xa_prepare(data: bytes, ctx: DecodeContext) -> XaPrepareBody:
    c = parse_at(S.xa_prepare_body, data, ctx)
    if c.gtrid_length > 64 or c.bqual_length > 64:
        raise malformed(ctx, f"XID lengths {c.gtrid_length}/{c.bqual_length} exceed 64")
    return XaPrepareBody(bool(c.one_phase), c.format_id, bytes(c.gtrid), bytes(c.bqual))


def decode_heartbeat(data: bytes, ctx: DecodeContext) -> HeartbeatBody:
    if ctx.type_code == EventType.HEARTBEAT_LOG_EVENT:
        return HeartbeatBody(data.decode("utf-8", "replace"), None)
    fields = _tlv(S.heartbeat_v2_field, data, ctx)
    pos = fields.get(2)
    return HeartbeatBody(fields.get(1, b"").decode("utf-8", "replace"),
                         S.PackedInt.parse(pos) if pos else None)


def _tlv(field: Any, data: bytes, ctx: DecodeContext) -> dict[int, bytes]:
    """Read a packed-int TLV list ended by type 0 (or by the end of data)."""
    from io import BytesIO
    stream = BytesIO(data)
    out: dict[int, bytes] = {}
    while stream.tell() < len(data):
        try:
            item = field.parse_stream(stream)
        except ConstructError as exc:
            raise malformed(ctx, f"bad TLV header field: {str(exc).splitlines()[-1]}") from exc
        if item.type == 0:
            break
        out[item.type] = bytes(item.value)
    return out


# ---- statement events ----

def decode_query(data: bytes, ctx: DecodeContext) -> QueryBody:
    struct = (ctx.structs.execute_load_query_body
              if ctx.type_code == EventType.EXECUTE_LOAD_QUERY_EVENT else ctx.structs.query_body)
    c = parse_at(struct, data, ctx)
    query = bytes(c.query)
    if ctx.type_code == EventType.QUERY_COMPRESSED_EVENT:
        query = maria_uncompress(query, ctx)
    return QueryBody(c.thread_id, c.exec_time, c.error_code,
                     bytes(c.db).decode("utf-8", "replace"), bytes(c.status_vars), query)


def decode_intvar(data: bytes, ctx: DecodeContext) -> IntvarBody:
    c = parse_at(S.intvar_body, data, ctx)
    return IntvarBody(c.type, c.value)


def decode_rand(data: bytes, ctx: DecodeContext) -> RandBody:
    c = parse_at(S.rand_body, data, ctx)
    return RandBody(c.seed1, c.seed2)


def decode_user_var(data: bytes, ctx: DecodeContext) -> UserVarBody:
    c = parse_at(S.user_var_body, data, ctx)
    name = bytes(c.name).decode("utf-8", "replace")
    if c.value is None:
        return UserVarBody(name, True, None, None, None, None)
    v = c.value
    return UserVarBody(name, False, v.type, v.charset, bytes(v.value), v.flags)


def decode_rows_query(data: bytes, ctx: DecodeContext) -> RowsQueryBody:
    if ctx.type_code == EventType.ANNOTATE_ROWS_EVENT:
        return RowsQueryBody(bytes(data))
    return RowsQueryBody(bytes(parse_at(S.rows_query_body, data, ctx).query))


def parse_status_vars(raw: bytes) -> dict[str, Any]:
    """Decode Query status variables, stopping at the first unknown code as MySQL does.

    Example::

        >>> parse_status_vars(bytes.fromhex('0000000000'))
        {'flags2': 0}
    """
    out: dict[str, Any] = {}
    i = 0
    while i < len(raw):
        entry = S.STATUS_VARS.get(raw[i])
        if entry is None:
            break
        name, struct = entry
        try:
            value = struct.parse(raw[i + 1:])
            size = len(struct.build(value)) if not isinstance(value, int) else struct.sizeof()
        except ConstructError:
            break
        out[name] = value
        i += 1 + size
    return out


# ---- GTID events ----

def decode_gtid(data: bytes, ctx: DecodeContext) -> GtidBody:
    """GTID_LOG_EVENT / ANONYMOUS_GTID_LOG_EVENT, every version (presence-detected)."""
    c = parse_at(S.gtid_body, data, ctx)
    lc = sn = 0
    saturated = False
    if c.clock is not None:
        sn = c.clock.sequence_number
        if c.lt_type == LOGICAL_TIMESTAMP_DELTA16_TYPECODE:
            saturated = c.clock.delta == DELTA16_SATURATED
            lc = max(0, sn - c.clock.delta)
        else:
            lc = c.clock.last_committed
    ict = c.immediate_commit_timestamp
    oct_ = c.original_commit_timestamp
    if ict is not None:
        ict &= ~COMMIT_TIMESTAMP_FLAG
        oct_ = ict if oct_ is None else oct_
    isv = c.immediate_server_version
    osv = c.original_server_version
    if isv is not None:
        isv &= ~SERVER_VERSION_FLAG
        osv = isv if osv is None else osv
    return GtidBody(c.gtid_flags, UUID(bytes=bytes(c.sid)), c.gno, None, c.lt_type, lc, sn,
                    ict, oct_, c.transaction_length, isv, osv, c.commit_group_ticket, saturated)


_TAGGED_NAMES = ("gtid_flags", "uuid", "gno", "tag", "last_committed", "sequence_number",
                 "immediate_commit_timestamp", "original_commit_timestamp",
                 "transaction_length", "immediate_server_version", "original_server_version",
                 "commit_group_ticket")


def decode_gtid_tagged(data: bytes, ctx: DecodeContext) -> GtidBody:
    """GTID_TAGGED_LOG_EVENT (42): one serialization-framework message."""
    c = parse_at(S.gtid_tagged_body, data, ctx)
    if c.format_version != 1:
        raise malformed(ctx, f"serialization format version {c.format_version}, expected 1")
    if c.total_size != len(data):
        raise malformed(ctx, f"total_size {c.total_size} but the event data has {len(data)} bytes")
    if c.last_non_ignorable_field_id > S.TAGGED_MAX_FIELD_ID + 1:
        raise malformed(ctx, f"unknown non-ignorable field {c.last_non_ignorable_field_id - 1}")
    f: dict[str, Any] = {}
    for x in c.fields:
        if x.field_id > S.TAGGED_MAX_FIELD_ID:
            # An unknown field (ignorable, checked above) of unknown type: MySQL's
            # decoder cannot skip it either, so stop here (format-spec §3.5).
            break
        f[_TAGGED_NAMES[x.field_id]] = x.value
    missing = {"uuid", "gno", "tag", "last_committed", "sequence_number"} - f.keys()
    if missing:
        raise malformed(ctx, f"missing field(s) {', '.join(sorted(missing))}")
    if any(b > 255 for b in f["uuid"]):
        raise malformed(ctx, "uuid byte out of range")
    ict = f.get("immediate_commit_timestamp")
    isv = f.get("immediate_server_version")
    return GtidBody(
        f.get("gtid_flags", 0), UUID(bytes=bytes(f["uuid"])), f["gno"],
        gtid_tag(bytes(f["tag"]), ctx) or None, 2,
        f["last_committed"], f["sequence_number"], ict,
        f.get("original_commit_timestamp", ict), f.get("transaction_length"), isv,
        f.get("original_server_version", isv), f.get("commit_group_ticket"))


def decode_gtid_set(data: bytes, ctx: DecodeContext) -> GtidSet:
    """An encoded GTID set (Previous_gtids body, Transaction_context snapshot)."""
    if len(data) >= _SET_HEAD.size:
        raw = _SET_HEAD.unpack_from(data)[0]
        tagged = raw >> 56 == 1 and raw & 0xFF == 1
        count = (raw >> 8) & 0xFFFFFFFFFFFF if tagged else raw
        if count * _SID_HEAD.size > len(data):
            raise malformed(ctx, f"GTID set claims {count} UUIDs but has {len(data)} bytes")
        if not tagged:
            fast = _untagged_gtid_set(data, count, ctx)
            if fast is not None:
                return fast
    c = parse_at(S.gtid_set_encoding, data, ctx)
    sids = []
    for sid in c.sids:
        intervals = []
        for iv in sid.intervals:
            if iv.end <= iv.start:
                raise malformed(ctx, f"GTID interval [{iv.start}, {iv.end}) is empty")
            intervals.append(GtidInterval(iv.start, iv.end - 1))
        tag = (gtid_tag(bytes(sid.tag), ctx) or None) if sid.tag else None
        sids.append((UUID(bytes=bytes(sid.uuid)), tag, tuple(intervals)))
    return GtidSet.from_sids(sids)




def _untagged_gtid_set(data: bytes, count: int, ctx: DecodeContext) -> GtidSet | None:
    """The untagged encoding read in place into flat ``array('q')`` intervals (16
    bytes each: construct builds a Container per interval, ~400 bytes, 430 MB for a
    Previous_gtids of a million intervals).  ``None`` when the bytes run out:
    construct then says where."""
    p, n_data = _SET_HEAD.size, len(data)
    sid_len, iv_len = _SID_HEAD.size, S.GTID_INTERVAL.size
    sids = []
    for _ in range(count):
        if p + sid_len > n_data:
            return None
        uuid, n = _SID_HEAD.unpack_from(data, p)
        sid = UUID(bytes=uuid)
        p += sid_len
        if n * iv_len > n_data - p:
            return None
        flat = array("q")       # GTID_INTERVAL: two int64 a interval
        flat.frombytes(data[p:p + iv_len * n])
        if _BIG_ENDIAN:
            flat.byteswap()
        for k in range(1, len(flat), 2):
            start, end = flat[k - 1], flat[k]
            if end <= start:
                raise malformed(ctx, f"GTID interval [{start}, {end}) is empty")
            flat[k] = end - 1           # [start, end) -> closed
        p += iv_len * n
        sids.append((sid, None, flat))
    return GtidSet.from_flat(sids)


_BIG_ENDIAN = sys.byteorder == "big"
_SET_HEAD = S.GTID_SET_HEAD.struct      # n_sids_raw
_SID_HEAD = S.GTID_SET_SID.struct       # an untagged UUID: uuid, n_intervals
_LIST_HEAD = S.GTID_LIST_HEAD.struct    # count_flags


def decode_previous_gtids(data: bytes, ctx: DecodeContext) -> PreviousGtidsBody:
    return PreviousGtidsBody(decode_gtid_set(data, ctx))


# ---- row-based replication events ----

def decode_table_map(data: bytes, ctx: DecodeContext) -> TableMapBody:
    c = parse_at(ctx.structs.table_map_body, data, ctx)
    if c.column_count > MAX_COLUMNS:
        raise malformed(ctx, f"{c.column_count} columns: more than MySQL's {MAX_COLUMNS} "
                             "(MAX_FIELDS)")
    return TableMapBody(
        c.table_id, c.flags, bytes(c.db).decode("utf-8", "replace"),
        bytes(c.table).decode("utf-8", "replace"), c.column_count, bytes(c.column_types),
        bytes(c.metadata or b""), bytes(c.null_bitmap or b""),
        tuple((m.type, bytes(m.value)) for m in c.optional_metadata))


_UPDATE_TYPES = frozenset({
    EventType.UPDATE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT,
    EventType.PARTIAL_UPDATE_ROWS_EVENT, EventType.UPDATE_ROWS_COMPRESSED_EVENT_V1,
    EventType.UPDATE_ROWS_COMPRESSED_EVENT, EventType.PRE_GA_UPDATE_ROWS_EVENT,
})
_COMPRESSED_ROWS = frozenset(range(166, 172))
_V2_ROWS = frozenset({30, 31, 32, 39, 169, 170, 171})


def decode_rows(data: bytes, ctx: DecodeContext) -> RowsBody:
    struct = ctx.structs.rows_v2_body if ctx.type_code in _V2_ROWS else ctx.structs.rows_v1_body
    c = parse_at(struct, data, ctx, is_update=ctx.type_code in _UPDATE_TYPES)
    if c.width == 0:
        raise malformed(ctx, "rows event with zero columns")
    rows = bytes(c.rows)
    if ctx.type_code in _COMPRESSED_ROWS:
        rows = maria_uncompress(rows, ctx)
    extra = bytes(c.extra_info) if c.extra_info is not None else b""  # length prefix already stripped
    return RowsBody(c.table_id, c.flags, extra, c.width, bytes(c.columns_before),
                    None if c.columns_after is None else bytes(c.columns_after), rows)


# ---- transaction payload, group replication ----

def decode_payload(data: bytes, ctx: DecodeContext) -> TransactionPayloadBody:
    """TRANSACTION_PAYLOAD_EVENT header; the compressed bytes are kept for the reader."""
    from io import BytesIO
    stream = BytesIO(data)
    fields: dict[int, int] = {}
    while True:
        try:
            item = S.payload_field.parse_stream(stream)
        except ConstructError as exc:
            raise malformed(ctx, f"payload header: {str(exc).splitlines()[-1]}") from exc
        if item.type == 0:
            break
        if item.type in (1, 2, 3):
            try:
                fields[item.type] = S.PackedInt.parse(item.value)
            except ConstructError as exc:
                raise malformed(ctx, f"payload header field {item.type} is not a packed integer") from exc
    if 1 not in fields or 2 not in fields:
        raise malformed(ctx, "payload header lacks payload_size or compression_type")
    start = stream.tell()
    size = fields[1]
    if size > len(data) - start:
        raise malformed(ctx, f"payload_size {size} exceeds the {len(data) - start} bytes left")
    return TransactionPayloadBody(fields[2], size, fields.get(3), bytes(data[start:start + size]))


def decode_transaction_context(data: bytes, ctx: DecodeContext) -> TransactionContextBody:
    c = parse_at(S.transaction_context_body, data, ctx)
    return TransactionContextBody(
        bytes(c.server_uuid).decode("ascii", "replace"), c.thread_id, bool(c.gtid_specified),
        decode_gtid_set(bytes(c.snapshot_version), ctx),
        tuple(bytes(x) for x in c.write_set), tuple(bytes(x) for x in c.read_set))


def decode_view_change(data: bytes, ctx: DecodeContext) -> ViewChangeBody:
    c = parse_at(S.view_change_body, data, ctx)
    return ViewChangeBody(_text(c.view_id), c.seq_number,
                          tuple((bytes(i.key), bytes(i.value)) for i in c.cert_info))


# ---- MariaDB ----

def decode_maria_gtid(data: bytes, ctx: DecodeContext) -> MariaGtidBody:
    c = parse_at(S.maria_gtid_body, data, ctx)
    xa = c.xid
    return MariaGtidBody(
        c.seq_no, c.domain_id, c.flags2, c.commit_id,
        None if xa is None else xa.format_id,
        None if xa is None else bytes(xa.data[:xa.gtrid_length]),
        None if xa is None else bytes(xa.data[xa.gtrid_length:]),
        c.flags_extra, c.extra_engines, c.sa_seq_no)


def decode_gtid_list(data: bytes, ctx: DecodeContext) -> GtidListBody:
    if len(data) >= _LIST_HEAD.size \
            and (_LIST_HEAD.unpack_from(data)[0] & 0x0FFFFFFF) * S.GTID_LIST_ENTRY.size > len(data):
        raise malformed(ctx, "GTID list count exceeds the event size")
    c = parse_at(S.gtid_list_body, data, ctx)
    return GtidListBody(c.count_flags >> 28,
                        tuple((g.domain_id, g.server_id, g.seq_no) for g in c.gtids))


def decode_binlog_checkpoint(data: bytes, ctx: DecodeContext) -> BinlogCheckpointBody:
    return BinlogCheckpointBody(bytes(parse_at(S.binlog_checkpoint_body, data, ctx).file)
                                .decode("utf-8", "replace"))


def decode_start_encryption(data: bytes, ctx: DecodeContext) -> StartEncryptionBody:
    c = parse_at(S.start_encryption_body, data, ctx)
    return StartEncryptionBody(c.scheme, c.key_version, bytes(c.nonce))


MAX_MARIA_UNCOMPRESSED = 1 << 30


def maria_uncompress(data: bytes, ctx: DecodeContext) -> bytes:
    """MariaDB's per-event compression (log_event.cc binlog_buf_uncompress).

    One header byte ``0x80 | n`` (n = 1..4 length bytes), the uncompressed
    length big-endian in n bytes, then a zlib stream.
    """
    if not data:
        raise malformed(ctx, "compressed event with an empty body")
    n = data[0] & 0x07
    if data[0] & 0x80 == 0 or not 1 <= n <= 4 or len(data) < 1 + n:
        raise malformed(ctx, f"bad compression header byte 0x{data[0]:02x}")
    size = int.from_bytes(data[1:1 + n], "big")
    if size > MAX_MARIA_UNCOMPRESSED:
        raise malformed(ctx, f"declared uncompressed size {size} exceeds 1 GiB")
    d = zlib.decompressobj()
    try:
        out = d.decompress(data[1 + n:], size + 1)
    except zlib.error as exc:
        raise malformed(ctx, f"zlib: {exc}") from exc
    if len(out) != size:
        raise malformed(ctx, f"decompressed to {len(out)} bytes, header says {size}")
    return out


def decode_unknown(data: bytes, ctx: DecodeContext) -> UnknownBody:
    return UnknownBody(bytes(data))


Decoder = Callable[[bytes, DecodeContext], Body]

DECODERS: dict[int, Decoder] = {
    EventType.START_EVENT_V3: decode_start_v3,
    EventType.QUERY_EVENT: decode_query,
    EventType.STOP_EVENT: decode_stop,
    EventType.ROTATE_EVENT: decode_rotate,
    EventType.INTVAR_EVENT: decode_intvar,
    EventType.RAND_EVENT: decode_rand,
    EventType.USER_VAR_EVENT: decode_user_var,
    EventType.FORMAT_DESCRIPTION_EVENT: decode_fde,
    EventType.XID_EVENT: decode_xid,
    EventType.EXECUTE_LOAD_QUERY_EVENT: decode_query,
    EventType.TABLE_MAP_EVENT: decode_table_map,
    EventType.INCIDENT_EVENT: decode_incident,
    EventType.HEARTBEAT_LOG_EVENT: decode_heartbeat,
    EventType.IGNORABLE_LOG_EVENT: decode_unknown,
    EventType.ROWS_QUERY_LOG_EVENT: decode_rows_query,
    EventType.GTID_LOG_EVENT: decode_gtid,
    EventType.ANONYMOUS_GTID_LOG_EVENT: decode_gtid,
    EventType.PREVIOUS_GTIDS_LOG_EVENT: decode_previous_gtids,
    EventType.TRANSACTION_CONTEXT_EVENT: decode_transaction_context,
    EventType.VIEW_CHANGE_EVENT: decode_view_change,
    EventType.XA_PREPARE_LOG_EVENT: decode_xa_prepare,
    EventType.TRANSACTION_PAYLOAD_EVENT: decode_payload,
    EventType.HEARTBEAT_LOG_EVENT_V2: decode_heartbeat,
    EventType.GTID_TAGGED_LOG_EVENT: decode_gtid_tagged,
    EventType.ANNOTATE_ROWS_EVENT: decode_rows_query,
    EventType.BINLOG_CHECKPOINT_EVENT: decode_binlog_checkpoint,
    EventType.MARIADB_GTID_EVENT: decode_maria_gtid,
    EventType.GTID_LIST_EVENT: decode_gtid_list,
    EventType.START_ENCRYPTION_EVENT: decode_start_encryption,
    EventType.QUERY_COMPRESSED_EVENT: decode_query,
    **{t: decode_rows for t in ROWS_TYPES},
    # 5.1 pre-GA row events have an obsolete image format: kept as bytes.
    EventType.PRE_GA_WRITE_ROWS_EVENT: decode_unknown,
    EventType.PRE_GA_UPDATE_ROWS_EVENT: decode_unknown,
    EventType.PRE_GA_DELETE_ROWS_EVENT: decode_unknown,
}
