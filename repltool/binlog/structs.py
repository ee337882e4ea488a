"""construct declarations of every binlog event body repltool reads or writes.

One banner per event, naming the MySQL class and source file the layout
follows (paths of MySQL 8.0: ``libbinlogevents/src/*.cpp``; MariaDB:
``sql/log_event.cc``).  Bodies whose layout depends on the governing
Format_description_event are built by :class:`BinlogStructs`, a factory
parameterised by the FDE's post-header lengths, so a reader can be shipped to
another process (Spark executors) as its parameters and rebuilt there.

Offsets here are relative to the end of the 19-byte common header; the CRC32
footer, when present, has already been cut off.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from construct import (
    Array, Bytes, BytesInteger, Computed, Construct, Const, CString, FormatField, GreedyBytes,
    GreedyRange, If, IfThenElse, Int8ul, Int16ul, Int32sl, Int32ul, Int64sl, Int64ul, Optional,
    Pass, Prefixed, Renamed, Select, Struct, Switch, this,
)
from construct.core import SizeofError, stream_read, stream_write

from .constants import (
    COMMIT_TIMESTAMP_FLAG, LOGICAL_TIMESTAMP_DELTA16_TYPECODE, LOGICAL_TIMESTAMP_TYPECODE,
    SERVER_VERSION_FLAG, EventType,
)

__all__ = ["PackedInt", "SerialVarint", "SignedSerialVarint", "common_header", "BinlogStructs",
           "FixedLayout", "fixed_head"]


# ---- primitive codecs ----

#: bytes after a packed integer's first byte when it is >= 251 (251, SQL NULL, and 255
#: are not lengths): net_field_length's layout, for every reader of packed integers
PACKED_INT_WIDTHS = {252: 2, 253: 3, 254: 8}


class _PackedInt(Construct):
    """MySQL's length-encoded integer (``net_field_length``, mysys/pack.cc).

    First byte < 251: the value; 252: 2 more bytes; 253: 3 more; 254: 8 more.
    251 (SQL NULL) and 255 are not valid in binlog lengths.

    Example::

        >>> PackedInt.build(300)
        b'\\xfc,\\x01'
        >>> PackedInt.parse(b'\\xfd\\x01\\x00\\x01')
        65537
    """

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        first = stream_read(stream, 1, path)[0]
        if first < 251:
            return first
        width = PACKED_INT_WIDTHS.get(first)
        if width is None:
            from construct import ExplicitError
            raise ExplicitError(f"invalid packed integer prefix 0x{first:02x}", path=path)
        return int.from_bytes(stream_read(stream, width, path), "little")

    def _build(self, obj: int, stream: Any, context: Any, path: str) -> int:
        data = encode_packed_int(obj)
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("packed integers have a variable size", path=path)


def read_packed_int(data: bytes, p: int) -> tuple[int, int] | None:
    """``(value, next offset)`` of the packed integer at ``data[p]`` (:data:`PackedInt`'s
    layout, on bytes); None when it runs past the end or its first byte is 251 or 255."""
    if p >= len(data):
        return None
    first = data[p]
    if first < 251:
        return first, p + 1
    width = PACKED_INT_WIDTHS.get(first)
    if width is None or p + 1 + width > len(data):
        return None
    return int.from_bytes(data[p + 1:p + 1 + width], "little"), p + 1 + width


def encode_packed_int(value: int) -> bytes:
    """Shortest ``net_store_length`` encoding of a non-negative integer."""
    if value < 251:
        return bytes((value,))
    if value < 1 << 16:
        return b"\xfc" + value.to_bytes(2, "little")
    if value < 1 << 24:
        return b"\xfd" + value.to_bytes(3, "little")
    return b"\xfe" + value.to_bytes(8, "little")


class _SerialVarint(Construct):
    """Unsigned varint of MySQL 8.3+'s serialization framework.

    The count of trailing one-bits of the first byte, plus one, is the length
    (``libs/mysql/serialization/variable_length_integers.h``).  Not to be
    confused with :data:`PackedInt`.

    Example::

        >>> SerialVarint.build(296).hex()
        'a104'
        >>> SerialVarint.parse(bytes.fromhex('fbff07'))
        65535
    """

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        first = stream_read(stream, 1, path)[0]
        n = 1
        while n < 9 and first & (1 << (n - 1)):
            n += 1
        if n == 1:
            return first >> 1
        rest = int.from_bytes(stream_read(stream, n - 1, path), "little")
        if n == 9:
            return rest
        return (first >> n) | (rest << (8 - n))

    def _build(self, obj: int, stream: Any, context: Any, path: str) -> int:
        data = encode_serial_varint(obj)
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("serialization varints have a variable size", path=path)


def encode_serial_varint(value: int) -> bytes:
    """Encode an unsigned serialization-framework varint (value < 2**64)."""
    n = ((value.bit_length() * 575) >> 12) + 1
    if n >= 9:
        return b"\xff" + value.to_bytes(8, "little")
    shifted = (value << n) | ((1 << (n - 1)) - 1)
    return shifted.to_bytes(n, "little")


class _SignedSerialVarint(_SerialVarint):
    """Zig-zag signed serialization varint: x >= 0 -> 2x, x < 0 -> -2x - 1."""

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        raw = super()._parse(stream, context, path)
        return (raw >> 1) ^ -(raw & 1)

    def _build(self, obj: int, stream: Any, context: Any, path: str) -> int:
        zigzag = obj * 2 if obj >= 0 else -obj * 2 - 1
        data = encode_serial_varint(zigzag)
        stream_write(stream, data, len(data), path)
        return obj


PackedInt = _PackedInt()
SerialVarint = _SerialVarint()
SignedSerialVarint = _SignedSerialVarint()
Int56ul = BytesInteger(7, swapped=True)
Int48ul = BytesInteger(6, swapped=True)
Int24ul = BytesInteger(3, swapped=True)


# ---- common header (binlog_event.h Log_event_header) ----

common_header = Struct(
    "timestamp" / Int32ul,
    "type_code" / Int8ul,
    "server_id" / Int32ul,
    "event_size" / Int32ul,
    "log_pos" / Int32ul,
    "flags" / Int16ul,
)

# ---- START_EVENT_V3 (1): Start_event_v3, pre-v4 files ----

start_v3_body = Struct(
    "binlog_version" / Int16ul,
    "server_version" / Bytes(50),
    "create_timestamp" / Int32ul,
    "rest" / GreedyBytes,
)

# ---- FORMAT_DESCRIPTION_EVENT (15): control_events.cpp Format_description_event ----
# The number of post-header lengths is not stored: it is derived from the event
# size (format-spec §2.1), so the decoder passes it in as ``num_types``.

fde_body = Struct(
    "binlog_version" / Int16ul,
    "server_version" / Bytes(50),
    "create_timestamp" / Int32ul,
    "common_header_len" / Int8ul,
    "post_header_len" / Bytes(this._.num_types),
    "checksum_alg" / If(this._.has_checksum_alg, Int8ul),
)

# ---- STOP_EVENT (3), XID_EVENT (16), INTVAR (5), RAND (13): statement/control events ----

stop_body = Struct()
xid_body = Struct("xid" / Int64ul)
intvar_body = Struct("type" / Int8ul, "value" / Int64ul)
rand_body = Struct("seed1" / Int64ul, "seed2" / Int64ul)

# ---- USER_VAR_EVENT (14): statement_events.cpp User_var_event ----

user_var_body = Struct(
    "name" / Prefixed(Int32ul, GreedyBytes),
    "is_null" / Int8ul,
    "value" / If(this.is_null == 0, Struct(
        "type" / Int8ul,
        "charset" / Int32ul,
        "value" / Prefixed(Int32ul, GreedyBytes),
        "flags" / Optional(Int8ul),
    )),
)

# ---- INCIDENT_EVENT (26): control_events.cpp Incident_event ----

incident_body = Struct(
    "incident" / Int16ul,
    "message" / Optional(Prefixed(Int8ul, GreedyBytes)),
)

# ---- ROWS_QUERY_LOG_EVENT (29) / MariaDB ANNOTATE_ROWS_EVENT (160) ----

rows_query_body = Struct("length" / Int8ul, "query" / GreedyBytes)
annotate_rows_body = Struct("query" / GreedyBytes)

# ---- GTID_LOG_EVENT (33) / ANONYMOUS_GTID_LOG_EVENT (34): control_events.cpp Gtid_event ----
# Everything after the GNO is presence-detected, in this order (format-spec §3.1).
# Logical-timestamp typecode 2 is MySQL's; 3 is repltool's 16-bit delta layout.

gtid_timestamps = Switch(this.lt_type, {
    LOGICAL_TIMESTAMP_TYPECODE: Struct(
        "last_committed" / Int64sl,
        "sequence_number" / Int64sl,
    ),
    LOGICAL_TIMESTAMP_DELTA16_TYPECODE: Struct(
        "sequence_number" / Int64sl,
        "delta" / Int16ul,
    ),
})

gtid_body = Struct(
    "gtid_flags" / Int8ul,
    "sid" / Bytes(16),
    "gno" / Int64sl,
    "lt_type" / Optional(Int8ul),
    "clock" / If(lambda c: c.lt_type in (LOGICAL_TIMESTAMP_TYPECODE,
                                         LOGICAL_TIMESTAMP_DELTA16_TYPECODE), gtid_timestamps),
    "immediate_commit_timestamp" / If(lambda c: c.clock is not None, Optional(Int56ul)),
    "original_commit_timestamp" / If(
        lambda c: c.immediate_commit_timestamp is not None
        and c.immediate_commit_timestamp & COMMIT_TIMESTAMP_FLAG, Int56ul),
    "transaction_length" / If(lambda c: c.immediate_commit_timestamp is not None,
                              Optional(PackedInt)),
    "immediate_server_version" / If(lambda c: c.transaction_length is not None,
                                    Optional(Int32ul)),
    "original_server_version" / If(
        lambda c: c.immediate_server_version is not None
        and c.immediate_server_version & SERVER_VERSION_FLAG, Int32ul),
    "commit_group_ticket" / If(lambda c: c.immediate_server_version is not None,
                               Optional(Int64ul)),
    "rest" / GreedyBytes,
)

# ---- GTID_TAGGED_LOG_EVENT (42): MySQL 8.3+ serialization framework message ----
# libs/mysql/binlog/event/control_events.h Gtid_event::define_fields

tagged_field = Struct(
    "field_id" / SerialVarint,
    "value" / Switch(this.field_id, {
        0: SerialVarint,                       # gtid_flags
        1: Array(16, SerialVarint),            # uuid, one varint per byte
        2: SignedSerialVarint,                 # gno
        3: Prefixed(SerialVarint, GreedyBytes),  # tag
        4: SignedSerialVarint,                 # last_committed
        5: SignedSerialVarint,                 # sequence_number
        6: SerialVarint,                       # immediate_commit_timestamp
        7: SerialVarint,                       # original_commit_timestamp
        8: SerialVarint,                       # transaction_length
        9: SerialVarint,                       # immediate_server_version
        10: SerialVarint,                      # original_server_version
        11: SerialVarint,                      # commit_group_ticket
    }),
)
TAGGED_MAX_FIELD_ID = 11

gtid_tagged_body = Struct(
    "format_version" / SerialVarint,
    "total_size" / SerialVarint,
    "last_non_ignorable_field_id" / SerialVarint,
    "fields" / GreedyRange(tagged_field),
)

# ---- PREVIOUS_GTIDS_LOG_EVENT (35): rpl_gtid_set.cc Gtid_set::encode ----
# n_sids: untagged format = plain count; tagged format = bytes 01 nn nn nn nn nn nn 01.

gtid_interval = Struct("start" / Int64sl, "end" / Int64sl)     # [start, end)
gtid_set_sid = Struct(
    "uuid" / Bytes(16),
    "tag" / If(this._.tagged, Prefixed(SerialVarint, GreedyBytes)),
    "n_intervals" / Int64ul,
    "intervals" / Array(this.n_intervals, gtid_interval),
)

gtid_set_encoding = Struct(
    "n_sids_raw" / Int64ul,
    "tagged" / Computed(lambda c: (c.n_sids_raw >> 56) == 1 and (c.n_sids_raw & 0xFF) == 1),
    "n_sids" / Computed(lambda c: (c.n_sids_raw >> 8) & 0xFFFFFFFFFFFF if c.tagged
                        else c.n_sids_raw),
    "sids" / Array(this.n_sids, gtid_set_sid),
)

# ---- XA_PREPARE_LOG_EVENT (38): control_events.cpp XA_prepare_event ----

xa_prepare_body = Struct(
    "one_phase" / Int8ul,
    "format_id" / Int32sl,
    "gtrid_length" / Int32ul,
    "bqual_length" / Int32ul,
    "gtrid" / Bytes(this.gtrid_length),
    "bqual" / Bytes(this.bqual_length),
)

# ---- TRANSACTION_CONTEXT_EVENT (36): control_events.cpp Transaction_context_event ----

_set_item = Prefixed(Int16ul, GreedyBytes)
transaction_context_body = Struct(
    "server_uuid_len" / Int8ul,
    "thread_id" / Int32ul,
    "gtid_specified" / Int8ul,
    "snapshot_version_len" / Int32ul,
    "write_set_count" / Int32ul,
    "read_set_count" / Int32ul,
    "server_uuid" / Bytes(this.server_uuid_len),
    "snapshot_version" / Bytes(this.snapshot_version_len),
    "write_set" / Array(this.write_set_count, _set_item),
    "read_set" / Array(this.read_set_count, _set_item),
)

# ---- VIEW_CHANGE_EVENT (37): control_events.cpp View_change_event ----

view_change_body = Struct(
    "view_id" / Bytes(40),
    "seq_number" / Int64ul,
    "cert_info_count" / Int32ul,
    "cert_info" / Array(this.cert_info_count, Struct(
        "key" / Prefixed(Int16ul, GreedyBytes),
        "value" / Prefixed(Int32ul, GreedyBytes),
    )),
)

# ---- TRANSACTION_PAYLOAD_EVENT (40): codecs/binary.cpp Transaction_payload ----
# A TLV header of packed integers ended by type 0, then the compressed payload.
# The FDE's post-header length for type 40 is wrong (40) and is ignored.

payload_field = Struct(
    "type" / PackedInt,
    "value" / If(this.type != 0, Prefixed(PackedInt, GreedyBytes)),
)

# ---- HEARTBEAT_LOG_EVENT_V2 (41): TLV of packed integers ----

heartbeat_v2_field = payload_field

# ---- MariaDB GTID_EVENT (162): sql/log_event.cc Gtid_log_event ----

maria_gtid_body = Struct(
    "seq_no" / Int64ul,
    "domain_id" / Int32ul,
    "flags2" / Int8ul,
    "commit_id" / If(this.flags2 & 0x02, Int64ul),
    "xid" / If(this.flags2 & 0xC0, Struct(
        "format_id" / Int32ul,
        "gtrid_length" / Int8ul,
        "bqual_length" / Int8ul,
        "data" / Bytes(this.gtrid_length + this.bqual_length),
    )),
    "flags_extra" / Optional(Int8ul),
    "extra_engines" / If(lambda c: c.flags_extra is not None and c.flags_extra & 0x01, Int8ul),
    "sa_seq_no" / If(lambda c: c.flags_extra is not None and c.flags_extra & 0x0C, Int64ul),
    "padding" / GreedyBytes,
)

# ---- MariaDB GTID_LIST_EVENT (163), BINLOG_CHECKPOINT_EVENT (161), START_ENCRYPTION (164) ----

gtid_list_entry = Struct("domain_id" / Int32ul, "server_id" / Int32ul, "seq_no" / Int64ul)
gtid_list_body = Struct(
    "count_flags" / Int32ul,
    "gtids" / Array(this.count_flags & 0x0FFFFFFF, gtid_list_entry),
    "padding" / GreedyBytes,
)
binlog_checkpoint_body = Struct("file" / Prefixed(Int32ul, GreedyBytes))
start_encryption_body = Struct("scheme" / Int8ul, "key_version" / Int32ul, "nonce" / Bytes(12))

# ---- Query status variables (statement_events.cpp Query_event ctor) ----
# MySQL's parser stops at the first unknown code; so does ours.

_len_string = Prefixed(Int8ul, GreedyBytes)
STATUS_VARS: dict[int, tuple[str, Construct]] = {
    0: ("flags2", Int32ul),
    1: ("sql_mode", Int64ul),
    2: ("catalog", Struct("name" / _len_string, Const(b"\x00"))),
    3: ("auto_increment", Struct("increment" / Int16ul, "offset" / Int16ul)),
    4: ("charset", Struct("client" / Int16ul, "connection" / Int16ul, "server" / Int16ul)),
    5: ("time_zone", _len_string),
    6: ("catalog_nz", _len_string),
    7: ("lc_time_names", Int16ul),
    8: ("charset_database", Int16ul),
    9: ("table_map_for_update", Int64ul),
    11: ("invoker", Struct("user" / _len_string, "host" / _len_string)),
    12: ("updated_db_names", Struct(
        "count" / Int8ul,
        "names" / If(this.count <= 16, Array(this.count, CString("utf8"))),
    )),
    13: ("microseconds", Int24ul),
    16: ("explicit_defaults_for_timestamp", Int8ul),
    17: ("ddl_logged_with_xid", Int64ul),
    18: ("default_collation_for_utf8mb4", Int16ul),
    19: ("sql_require_primary_key", Int8ul),
    20: ("default_table_encryption", Int8ul),
    # MariaDB (sql/log_event.h): Q_HRNOW, Q_XID
    128: ("hrnow", Int24ul),
    129: ("xid", Int64ul),
}


# ---- the FDE-parameterised factory ----

# Post-header lengths each decoder understands.  An FDE that declares another
# length for a type (pre-GA 5.1 trees such as WL#2325's renumbered events)
# describes a different layout: such events are kept as raw bytes.
EXPECTED_POST_HEADER: dict[int, tuple[int, ...]] = {
    EventType.QUERY_EVENT: (11, 13), EventType.ROTATE_EVENT: (0, 8),
    EventType.INTVAR_EVENT: (0,), EventType.RAND_EVENT: (0,), EventType.USER_VAR_EVENT: (0,),
    EventType.XID_EVENT: (0,), EventType.EXECUTE_LOAD_QUERY_EVENT: (26,),
    EventType.TABLE_MAP_EVENT: (6, 8), EventType.WRITE_ROWS_EVENT_V1: (6, 8),
    EventType.UPDATE_ROWS_EVENT_V1: (6, 8), EventType.DELETE_ROWS_EVENT_V1: (6, 8),
    EventType.INCIDENT_EVENT: (2,), EventType.WRITE_ROWS_EVENT: (10,),
    EventType.UPDATE_ROWS_EVENT: (10,), EventType.DELETE_ROWS_EVENT: (10,),
    EventType.GTID_LOG_EVENT: (25, 42), EventType.ANONYMOUS_GTID_LOG_EVENT: (25, 42),
    EventType.TRANSACTION_CONTEXT_EVENT: (18,), EventType.VIEW_CHANGE_EVENT: (52,),
    EventType.XA_PREPARE_LOG_EVENT: (0,), EventType.PARTIAL_UPDATE_ROWS_EVENT: (10,),
}

class BinlogStructs:
    """Body structs whose layout depends on the governing FDE's post-header lengths.

    Built once per distinct FDE; pickles as its parameters (pyelftools'
    ``ELFStructs`` idea), so it can be rebuilt in another process.

    :param post_header_len: the FDE's table, index i = type code i+1.
    """

    def __init__(self, post_header_len: bytes) -> None:
        self.post_header_len = bytes(post_header_len)
        self._build()

    def __getstate__(self) -> bytes:
        return self.post_header_len

    def __setstate__(self, state: bytes) -> None:
        self.post_header_len = state
        self._build()

    def post_header(self, type_code: int, default: int = 0) -> int:
        """The post-header length the FDE declares for ``type_code``."""
        if 1 <= type_code <= len(self.post_header_len):
            return self.post_header_len[type_code - 1]
        return default

    def _build(self) -> None:
        ph = self.post_header
        self.opaque = frozenset(
            t for t, sizes in EXPECTED_POST_HEADER.items()
            if 1 <= t <= len(self.post_header_len) and ph(t) not in sizes)
        # A zero length only says "this server never writes that type" (MariaDB and
        # MySQL's GTID types); another length means a foreign numbering: decode leniently.
        self.lenient = any(ph(t) != 0 for t in self.opaque)
        # The construct structs depend on one post-header length each (0..255):
        # shared between FDEs (lru_cache), so a flood of distinct FDEs costs a
        # table lookup each, not a construct build (format-spec §2.5).
        self.query_body = _query_struct(ph(EventType.QUERY_EVENT, 13))
        self.execute_load_query_body = _query_struct(ph(EventType.EXECUTE_LOAD_QUERY_EVENT, 26))
        self.rotate_body = _rotate_struct(ph(EventType.ROTATE_EVENT, 8))
        self.table_map_body = _table_map_struct(ph(EventType.TABLE_MAP_EVENT, 8))
        self.rows_v1_body = _rows_struct(ph(EventType.WRITE_ROWS_EVENT_V1, 8), False)
        self.rows_v2_body = _rows_struct(ph(EventType.WRITE_ROWS_EVENT, 10), True)

    @staticmethod
    def _query(post_header: int) -> Struct:
        """The Query body struct for a post-header length (uncached)."""
        # QUERY_HEADER_MINIMAL_LEN = 11 (binlog v3: no status variables).
        return Struct(
            "thread_id" / Int32ul,
            "exec_time" / Int32ul,
            "db_len" / Int8ul,
            "error_code" / Int16ul,
            "status_vars_len" / IfThenElse(post_header >= 13, Int16ul, Computed(0)),
            "extra_post_header" / Bytes(max(0, post_header - 13)),
            "status_vars" / Bytes(this.status_vars_len),
            "db" / Bytes(this.db_len), Const(b"\x00"),
            "query" / GreedyBytes,
        )

    @staticmethod
    def _rows(post_header: int, *, v2: bool) -> Struct:
        """The Rows body struct for a post-header length (uncached)."""
        # rows_event.cpp Rows_event ctor: 6-byte table id unless post-header is 6.
        return Struct(
            "table_id" / (Int32ul if post_header == 6 else Int48ul),
            "flags" / Int16ul,
            "extra_info" / If(v2 and post_header >= 10, Prefixed(
                Int16ul, GreedyBytes, includelength=True)),
            "width" / PackedInt,
            "columns_before" / Bytes((this.width + 7) // 8),
            "columns_after" / If(this._.is_update, Bytes((this.width + 7) // 8)),
            "rows" / GreedyBytes,
        )


@lru_cache(maxsize=512)
def _query_struct(post_header: int) -> Struct:
    return BinlogStructs._query(post_header)


@lru_cache(maxsize=512)
def _rows_struct(post_header: int, v2: bool) -> Struct:
    return BinlogStructs._rows(post_header, v2=v2)


@lru_cache(maxsize=256)
def _rotate_struct(rotate_ph: int) -> Struct:
    return Struct(
        "position" / IfThenElse(rotate_ph >= 8, Int64ul, Computed(4)),
        "skip" / Bytes(max(0, rotate_ph - 8)),
        "new_log_ident" / GreedyBytes,
    )


@lru_cache(maxsize=256)
def _table_map_struct(tm_ph: int) -> Struct:
    return Struct(
        "table_id" / (Int32ul if tm_ph == 6 else Int48ul),
        "flags" / Int16ul,
        "skip" / Bytes(max(0, tm_ph - 8)),
        "db" / _len_string, Const(b"\x00"),
        "table" / _len_string, Const(b"\x00"),
        "column_count" / PackedInt,
        "column_types" / Bytes(this.column_count),
        # 5.1 pre-GA servers wrote neither metadata nor null bitmap: both
        # are read only if bytes remain, as Table_map_event's ctor does.
        "metadata" / Optional(Prefixed(PackedInt, GreedyBytes)),
        "null_bitmap" / Optional(Bytes((this.column_count + 7) // 8)),
        "optional_metadata" / GreedyRange(Struct(
            "type" / Int8ul, "value" / Prefixed(PackedInt, GreedyBytes))),
    )


# ---- struct.Struct layouts derived from the declarations ----

@dataclass(frozen=True, eq=False)
class FixedLayout:
    """The leading fixed-width fields of a declaration as a ``struct.Struct``.

    ``struct`` unpacks one item per field, in declaration order, except a
    little-endian unsigned :class:`~construct.BytesInteger` (``Int48ul``...), which
    unpacks as its little-endian pieces of 4, 2 and 1 bytes, low first (a 6-byte
    table id: ``lo | hi << 32``), and a zero-length ``Bytes``, which unpacks as
    nothing.  ``items`` names the field of each unpacked item; ``offsets`` and ``ends``
    map every field walked (nested ones as ``outer.inner``) to where it starts and ends;
    ``size`` is where the last one ends.
    """

    struct: struct.Struct
    items: tuple[str, ...]
    offsets: dict[str, int]
    ends: dict[str, int]

    @property
    def size(self) -> int:
        return self.struct.size

    def span(self, name: str, at: int = 0) -> slice:
        """The field's bytes in a buffer where the layout starts at ``at``: ``raw[span]``."""
        return slice(at + self.offsets[name], at + self.ends[name])


def _little_pieces(n: int) -> str:
    """struct codes of the 4-, 2- and 1-byte pieces of an n-byte little-endian integer."""
    return "I" * (n // 4) + "H" * (n % 4 // 2) + "B" * (n % 2)


def fixed_head(decl: Struct, through: str | None = None, *,
               cases: dict[str, int] | None = None) -> FixedLayout:
    """The layout of ``decl``'s fields up to and including ``through`` (all of them when
    None), for the byte-level decoders and writers that mirror the declaration.

    Walked: ``FormatField`` (``Int8ul``... ``Int64sl``), ``Bytes`` of a fixed length,
    unsigned little-endian ``BytesInteger``, nested ``Struct``; an ``If`` / ``IfThenElse``
    whose condition is a constant takes its branch (``Pass`` and ``Computed`` take no
    bytes); an ``If`` with a run-time condition and an ``Optional`` are taken as present
    (the caller checks presence -- body length, typecode, flag -- before it unpacks),
    unless ``cases[name]`` says (True: present, False: absent); a ``Switch`` takes the
    case ``cases[name]``; a ``Prefixed`` field, only as ``through``,
    contributes its length field.  Anything else (packed integers, a length read from
    the body, greedy fields, a ``Switch`` without a case) raises ``TypeError``.
    Meant for import time: the result is what the per-event code unpacks with.

    Example::

        >>> fixed_head(gtid_body, "clock", cases={"clock": 2}).struct.format
        '<B16sqBqq'
        >>> fixed_head(gtid_body, "clock", cases={"clock": 2}).offsets["lt_type"]
        25
    """
    codes: list[str] = []
    items: list[str] = []
    offsets: dict[str, int] = {}
    ends: dict[str, int] = {}
    pos = 0
    if not isinstance(decl, Struct):
        raise TypeError(f"{decl!r} is not a Struct")
    subcons = decl.subcons
    if through is not None and through not in [sc.name for sc in subcons]:
        raise ValueError(f"{through!r} is not a field of the declaration")

    def walk(con: Construct, name: str, last: bool) -> None:
        nonlocal pos
        while isinstance(con, Renamed):
            con = con.subcon
        offsets.setdefault(name, pos)
        if isinstance(con, FormatField):
            if con.fmtstr[0] != "<":
                raise TypeError(f"{name}: {con.fmtstr!r} is not little-endian")
            codes.append(con.fmtstr[1:])
            items.append(name)
            pos += con.length
        elif isinstance(con, Bytes) and isinstance(con.length, int):
            if con.length:
                codes.append(f"{con.length}s")
                items.append(name)
                pos += con.length
        elif (isinstance(con, BytesInteger) and isinstance(con.length, int)
              and con.swapped is True and not con.signed):
            codes.append(_little_pieces(con.length))
            items.extend([name] * len(codes[-1]))
            pos += con.length
        elif isinstance(con, Struct):
            for sc in con.subcons:
                walk(sc, f"{name}.{sc.name}", False)
        elif isinstance(con, IfThenElse):
            if callable(con.condfunc):
                present = cases[name] if cases and name in cases else True
                walk(con.thensubcon if present else con.elsesubcon, name, last)
            else:
                walk(con.thensubcon if con.condfunc else con.elsesubcon, name, last)
        elif isinstance(con, Select) and len(con.subcons) == 2 and con.subcons[1] is Pass:
            walk(con.subcons[0], name, last)                 # Optional(x)
        elif isinstance(con, Switch) and cases and name in cases:
            walk(con.cases[cases[name]], name, last)
        elif isinstance(con, Prefixed) and last:
            walk(con.lengthfield, name, last)
        elif con is Pass or isinstance(con, Computed):
            pass
        else:
            raise TypeError(f"{name}: {con!r} has no fixed width")
        ends[name] = pos

    for sc in subcons:
        walk(sc, sc.name, sc.name == through)
        if sc.name == through:
            break
    return FixedLayout(struct.Struct("<" + "".join(codes)), tuple(items), offsets, ends)


#: ``common_header`` as a ``struct.Struct``, for the readers' and writers' per-event paths
HEADER = fixed_head(common_header)
COMMON_HEADER = HEADER.struct
#: an untagged GTID body through its typecode-2 clock (the 42-byte post-header of 5.7+):
#: gtid_flags, sid, gno, lt_type, last_committed, sequence_number
GTID_HEAD = fixed_head(gtid_body, "clock", cases={"clock": LOGICAL_TIMESTAMP_TYPECODE})
#: ``gtid_timestamps`` per typecode: (last_committed, sequence_number) and (sequence_number,
#: delta)
GTID_CLOCKS = {tc: fixed_head(gtid_timestamps.cases[tc]).struct
               for tc in (LOGICAL_TIMESTAMP_TYPECODE, LOGICAL_TIMESTAMP_DELTA16_TYPECODE)}
#: the Query post-header of 13 bytes: thread_id, exec_time, db_len, error_code, status_vars_len
QUERY_HEAD = fixed_head(_query_struct(13), "extra_post_header")
#: the Rows v2 post-header (10 bytes): table id (low 32, high 16 bits), flags, extra-info length
ROWS_V2_HEAD = fixed_head(_rows_struct(10, True), "extra_info")
#: the Rows v1 post-header (8 bytes): table id (low 32, high 16 bits), flags
ROWS_V1_HEAD = fixed_head(_rows_struct(8, False), "flags")
#: a Rows body's table id alone (low 32, high 16 bits), for the grouper
ROWS_TABLE_ID = fixed_head(_rows_struct(8, False), "table_id").struct
#: the Table_map post-header (8 bytes): table id (low 32, high 16 bits), flags
TABLE_MAP_HEAD = fixed_head(_table_map_struct(8), "skip")
#: MariaDB's GTID body: seq_no, domain_id, flags2 (then, with FL_GROUP_COMMIT_ID, commit_id)
MARIA_GTID_HEAD = fixed_head(maria_gtid_body, "flags2")
MARIA_GTID_COMMIT = fixed_head(maria_gtid_body, "commit_id")
#: the Xid body
XID = fixed_head(xid_body).struct
#: a Format_description body's fixed part: binlog_version, server_version, create_timestamp,
#: common_header_len (the post-header lengths follow)
FDE_HEAD = fixed_head(fde_body, "common_header_len")
#: a Rotate body's position (the 8-byte post-header); the new file's name follows
ROTATE_HEAD = fixed_head(_rotate_struct(8), "position")
#: an encoded GTID set: its count, each untagged UUID's head (uuid, n_intervals), an interval
GTID_SET_HEAD = fixed_head(gtid_set_encoding, "n_sids_raw")
GTID_SET_SID = fixed_head(gtid_set_sid, "n_intervals", cases={"tag": False})
GTID_INTERVAL = fixed_head(gtid_interval)
#: MariaDB's GTID list: its count and flags, then each entry
GTID_LIST_HEAD = fixed_head(gtid_list_body, "count_flags")
GTID_LIST_ENTRY = fixed_head(gtid_list_entry)
