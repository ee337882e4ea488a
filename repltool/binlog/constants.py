"""MySQL and MariaDB binlog numbering: event type codes, header flags, checksums.

Numbers follow ``libbinlogevents/include/binlog_event.h`` (MySQL 8.0),
``libs/mysql/binlog/event/binlog_event.h`` (MySQL 8.3+) and MariaDB's
``sql/log_event.h`` for codes 160 and above.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag

BINLOG_MAGIC = b"\xfebin"
ENCRYPTED_MAGIC = b"\xfdbin"
HEADER_LEN = 19          # LOG_EVENT_HEADER_LEN (v3 and v4)
OLD_HEADER_LEN = 13      # v1 (MySQL 3.23)
CHECKSUM_LEN = 4
ENCRYPTION_HEADER_LEN = 512


class EventType(IntEnum):
    """Log_event_type, MySQL numbering 0..42 plus MariaDB's 160..171."""

    UNKNOWN_EVENT = 0
    START_EVENT_V3 = 1
    QUERY_EVENT = 2
    STOP_EVENT = 3
    ROTATE_EVENT = 4
    INTVAR_EVENT = 5
    LOAD_EVENT = 6
    SLAVE_EVENT = 7
    CREATE_FILE_EVENT = 8
    APPEND_BLOCK_EVENT = 9
    EXEC_LOAD_EVENT = 10
    DELETE_FILE_EVENT = 11
    NEW_LOAD_EVENT = 12
    RAND_EVENT = 13
    USER_VAR_EVENT = 14
    FORMAT_DESCRIPTION_EVENT = 15
    XID_EVENT = 16
    BEGIN_LOAD_QUERY_EVENT = 17
    EXECUTE_LOAD_QUERY_EVENT = 18
    TABLE_MAP_EVENT = 19
    PRE_GA_WRITE_ROWS_EVENT = 20
    PRE_GA_UPDATE_ROWS_EVENT = 21
    PRE_GA_DELETE_ROWS_EVENT = 22
    WRITE_ROWS_EVENT_V1 = 23
    UPDATE_ROWS_EVENT_V1 = 24
    DELETE_ROWS_EVENT_V1 = 25
    INCIDENT_EVENT = 26
    HEARTBEAT_LOG_EVENT = 27
    IGNORABLE_LOG_EVENT = 28
    ROWS_QUERY_LOG_EVENT = 29
    WRITE_ROWS_EVENT = 30
    UPDATE_ROWS_EVENT = 31
    DELETE_ROWS_EVENT = 32
    GTID_LOG_EVENT = 33
    ANONYMOUS_GTID_LOG_EVENT = 34
    PREVIOUS_GTIDS_LOG_EVENT = 35
    TRANSACTION_CONTEXT_EVENT = 36
    VIEW_CHANGE_EVENT = 37
    XA_PREPARE_LOG_EVENT = 38
    PARTIAL_UPDATE_ROWS_EVENT = 39
    TRANSACTION_PAYLOAD_EVENT = 40
    HEARTBEAT_LOG_EVENT_V2 = 41
    GTID_TAGGED_LOG_EVENT = 42
    # MariaDB (sql/log_event.h, MARIA_EVENTS_BEGIN = 160)
    ANNOTATE_ROWS_EVENT = 160
    BINLOG_CHECKPOINT_EVENT = 161
    MARIADB_GTID_EVENT = 162
    GTID_LIST_EVENT = 163
    START_ENCRYPTION_EVENT = 164
    QUERY_COMPRESSED_EVENT = 165
    WRITE_ROWS_COMPRESSED_EVENT_V1 = 166
    UPDATE_ROWS_COMPRESSED_EVENT_V1 = 167
    DELETE_ROWS_COMPRESSED_EVENT_V1 = 168
    WRITE_ROWS_COMPRESSED_EVENT = 169
    UPDATE_ROWS_COMPRESSED_EVENT = 170
    DELETE_ROWS_COMPRESSED_EVENT = 171


_TYPE_NAMES = {int(t): t.name for t in EventType}


def type_name(type_code: int) -> str:
    """The MySQL name of a type code, or ``UNKNOWN_EVENT_<n>`` for codes nobody defines.

    Example::

        >>> type_name(33)
        'GTID_LOG_EVENT'
        >>> type_name(99)
        'UNKNOWN_EVENT_99'
    """
    name = _TYPE_NAMES.get(type_code)
    if name is not None:
        return name
    return "DAMAGED_REGION" if type_code == -1 else f"UNKNOWN_EVENT_{type_code}"


GTID_TYPES = frozenset({EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT,
                        EventType.GTID_TAGGED_LOG_EVENT})
ROWS_TYPES = frozenset({
    EventType.WRITE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT_V1, EventType.DELETE_ROWS_EVENT_V1,
    EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT, EventType.DELETE_ROWS_EVENT,
    EventType.PARTIAL_UPDATE_ROWS_EVENT,
    EventType.WRITE_ROWS_COMPRESSED_EVENT_V1, EventType.UPDATE_ROWS_COMPRESSED_EVENT_V1,
    EventType.DELETE_ROWS_COMPRESSED_EVENT_V1, EventType.WRITE_ROWS_COMPRESSED_EVENT,
    EventType.UPDATE_ROWS_COMPRESSED_EVENT, EventType.DELETE_ROWS_COMPRESSED_EVENT,
    EventType.PRE_GA_WRITE_ROWS_EVENT, EventType.PRE_GA_UPDATE_ROWS_EVENT,
    EventType.PRE_GA_DELETE_ROWS_EVENT,
})
# Rows events that carry the 2-byte var-header of the v2 format.
ROWS_V2_TYPES = frozenset({
    EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT, EventType.DELETE_ROWS_EVENT,
    EventType.PARTIAL_UPDATE_ROWS_EVENT, EventType.WRITE_ROWS_COMPRESSED_EVENT,
    EventType.UPDATE_ROWS_COMPRESSED_EVENT, EventType.DELETE_ROWS_COMPRESSED_EVENT,
})


class EventFlag(IntFlag):
    """Common-header flags (binlog_event.h / log_event.h)."""

    BINLOG_IN_USE = 0x0001
    FORCED_ROTATE = 0x0002
    THREAD_SPECIFIC = 0x0004
    SUPPRESS_USE = 0x0008
    UPDATE_TABLE_MAP_VERSION = 0x0010
    ARTIFICIAL = 0x0020
    RELAY_LOG = 0x0040
    IGNORABLE = 0x0080
    NO_FILTER = 0x0100
    MTS_ISOLATE = 0x0200


class ChecksumAlg(IntEnum):
    """enum_binlog_checksum_alg."""

    OFF = 0
    CRC32 = 1
    UNDEF = 255


# Logical-timestamp typecodes of the Gtid_log_event.  2 is MySQL's
# (last_committed int64 + sequence_number int64, 16 bytes).  3 is repltool's
# own WL#7165 "Optimizations" §2 layout: sequence_number int64 followed by a
# uint16 delta = sequence_number - last_committed, saturated at 65535.
LOGICAL_TIMESTAMP_TYPECODE = 2
LOGICAL_TIMESTAMP_DELTA16_TYPECODE = 3
DELTA16_SATURATED = 0xFFFF

# Bits of the 8.0 Gtid_log_event body.
ENCODED_COMMIT_TIMESTAMP_LENGTH = 7
COMMIT_TIMESTAMP_FLAG = 1 << 55
SERVER_VERSION_FLAG = 1 << 31
UNDEFINED_SERVER_VERSION = 999999

# MariaDB GTID_EVENT flags2 (sql/log_event.h Gtid_log_event).
MARIA_FL_STANDALONE = 0x01
MARIA_FL_GROUP_COMMIT_ID = 0x02
MARIA_FL_TRANSACTIONAL = 0x04
MARIA_FL_ALLOW_PARALLEL = 0x08
MARIA_FL_WAITED = 0x10
MARIA_FL_DDL = 0x20
MARIA_FL_PREPARED_XA = 0x40
MARIA_FL_COMPLETED_XA = 0x80
MARIA_FL_EXTRA_MULTI_ENGINE = 0x01
MARIA_FL_COMMIT_ALTER = 0x04
MARIA_FL_ROLLBACK_ALTER = 0x08

# Post-header lengths MySQL assumes for binlog versions 1 and 3 (pre-v4 files
# have no Format_description_event).  Index i holds type i+1
# (sql/log_event.cc Format_description_log_event ctor, binlog_ver 3).
V3_POST_HEADER_LEN = (56, 11, 0, 8, 0, 18, 0, 22, 4, 4, 4, 18, 0, 0)


#: MySQL's MAX_FIELDS (sql/sql_const.h, "Maximum number of columns"; MariaDB's
#: is the same): no server writes a Table_map with more columns.
MAX_COLUMNS = 4096
