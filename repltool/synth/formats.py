"""What each server generation writes, byte for byte, where the synthetic logs need it.

Every constant here was read off real server-written files of
``../shared/corpus/mysql`` (the file is named next to it), not taken from
memory: the FDE post-header tables, the Query status variables of ``BEGIN``
and of DDL, and the GTID event layout.

* ``8.0`` (default, 8.0.29+ layout, server version 8.0.40): FDE of 122 bytes
  (41 types; ``pbs/...data_80045...binlog.000001``,
  ``rmc/...minimal_row_metadata.000001``), GTID events with commit timestamps,
  ``transaction_length`` and server versions (77-79 bytes).
* ``5.7`` (5.7.40-log): FDE of 119 bytes (38 types;
  ``apecloud/tests__parse_file_tests__mysql-bin.000080``), GTID events with the
  logical clock only (65 bytes), no atomic-DDL status variables.
* ``9.x`` (9.6.0): FDE of 123 bytes (42 types; ``rmc/...with_GTID_TAG.000001``);
  needed for ``GTID_TAGGED_LOG_EVENT`` (42), which MySQL writes from 8.3 on.
"""

from __future__ import annotations

from dataclasses import dataclass

# control_events.cpp server_event_header_length, as the files show them.
POST_HEADER_80 = bytes([
    0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0,
    10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0])
POST_HEADER_57 = bytes([
    56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0, 95, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0,
    10, 10, 10, 42, 42, 0, 18, 52, 0])
POST_HEADER_9X = bytes([
    0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 99, 0, 4, 26, 8, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
    10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0, 0])

# Query status variables (format-spec §4.3).  8.0 BEGIN: Q_FLAGS2 0, Q_SQL_MODE
# 0x45a00020 (8.0 default), Q_CATALOG_NZ "std", Q_CHARSET 255/255/255,
# Q_DEFAULT_COLLATION_FOR_UTF8MB4 255.
_SV80_HEAD = bytes.fromhex("0000000000012000a04500000000060373746404ff00ff00ff00")
# 5.7 BEGIN: sql_mode 0x55a00020 (5.7 default), client utf8mb4_general_ci (45),
# server latin1_swedish_ci (8).
_SV57_HEAD = bytes.fromhex("0000000000012000a05500000000060373746404" "2d002d000800")


@dataclass(frozen=True)
class ServerFormat:
    """One server generation's layouts."""

    name: str
    server_version: str
    server_version_int: int
    post_header_len: bytes
    begin_status: bytes              # status vars of BEGIN / COMMIT
    has_commit_ts: bool              # GTID: timestamps, transaction_length, versions
    atomic_ddl: bool                 # DDL carries Q_DDL_LOGGED_WITH_XID (8.0)
    tagged: bool = False             # may write GTID_TAGGED_LOG_EVENT

    @property
    def fde_size(self) -> int:
        return 19 + 57 + len(self.post_header_len) + 1 + 4

    def ddl_status(self, db: bytes, xid: int) -> bytes:
        """Status vars of a DDL Query, as 8.0.3x/5.7 write them for CREATE/ALTER TABLE."""
        updated = b"\x0c\x01" + db + b"\x00"             # Q_UPDATED_DB_NAMES, one name
        if not self.atomic_ddl:
            return self.begin_status + updated
        head = self.begin_status[:-3] if self.begin_status.endswith(b"\x12\xff\x00") \
            else self.begin_status
        # ... Q_UPDATED_DB_NAMES, Q_DDL_LOGGED_WITH_XID, Q_DEFAULT_COLLATION_FOR_UTF8MB4 255,
        # Q_SQL_REQUIRE_PRIMARY_KEY 0 (8.0.36 / 8.0.32 files).
        return (head.split(b"\x0c\xfe")[0] + updated + b"\x11" + xid.to_bytes(8, "little")
                + b"\x12\xff\x00\x13\x00")


FORMATS: dict[str, ServerFormat] = {
    "8.0": ServerFormat("8.0", "8.0.40", 80040, POST_HEADER_80, _SV80_HEAD + b"\x12\xff\x00",
                        has_commit_ts=True, atomic_ddl=True),
    "5.7": ServerFormat("5.7", "5.7.40-log", 50740, POST_HEADER_57, _SV57_HEAD,
                        has_commit_ts=False, atomic_ddl=False),
    # 9.6.0 BEGIN carries Q_UPDATED_DB_NAMES 254 (OVER_MAX_DBS) before the utf8mb4 default.
    "9.x": ServerFormat("9.x", "9.6.0", 90600, POST_HEADER_9X,
                        _SV80_HEAD + b"\x0c\xfe\x12\xff\x00", has_commit_ts=True,
                        atomic_ddl=True, tagged=True),
}


def version_int(version: str) -> int:
    """X*10000 + Y*100 + Z of ``X.Y.Z...`` (do_server_version_int)."""
    parts = []
    for piece in version.split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        parts.append(int(digits or 0))
    while len(parts) < 3:
        parts.append(0)
    return parts[0] * 10000 + parts[1] * 100 + parts[2]
