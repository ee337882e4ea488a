"""Write MySQL 8.0-format binlogs with repltool's own encoder.

:class:`BinlogBuilder` appends events to a file the way a MySQL 8.0 server
lays them out (FDE, Previous_gtids, transactions, Rotate or Stop), with
end-of-event ``log_pos`` values, CRC32 footers and self-inclusive
``transaction_length``.  Every body is built with the construct declarations
of :mod:`repltool.binlog.structs`.  :func:`write_sample` uses it to write the
small sample logs of ``repltool sample``.
"""

from __future__ import annotations

import os
import random
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable

from ..binlog import structs as S
from ..binlog.constants import EventType
from ..binlog.events import GtidBody
from ..binlog.writer import (
    encode_gtid_body, encode_gtid_tagged_body, frame_event, transaction_length_for,
)
from ..outputs import OutputSet

# The post-header lengths MySQL 8.0.26+ writes in its FDE (control_events.cpp,
# server_event_header_length; 41 types; type 40 carries the enum value 40, sic).
MYSQL80_POST_HEADER_LEN = bytes([
    0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0,
    10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0])

# The status variables of a MySQL 8.0 Query event: Q_FLAGS2 0, Q_SQL_MODE (8.0
# default), Q_CATALOG_NZ "std", Q_CHARSET 255/255/255, Q_DEFAULT_COLLATION_FOR_UTF8MB4 255.
MYSQL80_STATUS_VARS = bytes.fromhex("0000000000012000a04500000000060373746404ff00ff00ff0012ff00")

_STRUCTS = S.BinlogStructs(MYSQL80_POST_HEADER_LEN)
_GTID_EVENT_WITHOUT_LENGTH = 19 + 42 + 7 + 4 + 4   # header, post-header, ict, version, CRC


def _raw(text: str | bytes) -> bytes:
    """Names and texts as bytes: a str is UTF-8, bytes (any bytes) are written as they are."""
    return text if isinstance(text, bytes) else text.encode()


def fde_body(server_version: str | bytes, create_timestamp: int) -> bytes:
    return S.fde_body.build(
        {"binlog_version": 4, "server_version": _raw(server_version)[:50].ljust(50, b"\0"),
         "create_timestamp": create_timestamp, "common_header_len": 19,
         "post_header_len": MYSQL80_POST_HEADER_LEN, "checksum_alg": 1},
        num_types=len(MYSQL80_POST_HEADER_LEN), has_checksum_alg=True)


def previous_gtids_body(sid: uuid.UUID | None, last_gno: int) -> bytes:
    if sid is None or last_gno == 0:
        return bytes(8)
    return S.gtid_set_encoding.build({"n_sids_raw": 1, "sids": [
        {"uuid": sid.bytes, "tag": None, "n_intervals": 1,
         "intervals": [{"start": 1, "end": last_gno + 1}]}]}, tagged=False)


def query_body(thread_id: int, db: str | bytes, query: str | bytes,
               exec_time: int = 0) -> bytes:
    raw_db = _raw(db)
    return _STRUCTS.query_body.build({
        "thread_id": thread_id, "exec_time": exec_time, "db_len": len(raw_db),
        "error_code": 0, "status_vars_len": len(MYSQL80_STATUS_VARS), "extra_post_header": b"",
        "status_vars": MYSQL80_STATUS_VARS, "db": raw_db, "query": _raw(query)})


@dataclass(frozen=True, slots=True)
class SampleTable:
    """A table ``(id INT PRIMARY KEY, v VARCHAR(32))`` as a Table_map describes it.

    Names may be bytes (written as they are: tests of hostile names).
    """

    table_id: int
    db: str | bytes
    name: str | bytes
    columns: tuple[str | bytes, str | bytes] = ("id", "v")

    def table_map_body(self) -> bytes:
        # column types LONG (3), VARCHAR (15); VARCHAR metadata = max bytes (128, LE);
        # optional metadata: SIGNEDNESS (1 numeric column, signed), DEFAULT_CHARSET 255,
        # COLUMN_NAME, SIMPLE_PRIMARY_KEY (column 0).
        names = b"".join(S.encode_packed_int(len(_raw(n))) + _raw(n) for n in self.columns)
        return _STRUCTS.table_map_body.build({
            "table_id": self.table_id, "flags": 1, "skip": b"", "db": _raw(self.db),
            "table": _raw(self.name), "column_count": 2, "column_types": bytes([3, 15]),
            "metadata": (128).to_bytes(2, "little"), "null_bitmap": b"\x02",
            "optional_metadata": [
                {"type": 1, "value": b"\x00"}, {"type": 2, "value": S.encode_packed_int(255)},
                {"type": 4, "value": names}, {"type": 8, "value": b"\x00"}]})

    def write_rows_body(self, rows: Iterable[tuple[int, str | bytes]]) -> bytes:
        images = b""
        for key, value in rows:
            raw = _raw(value)[:128]
            images += b"\x00" + key.to_bytes(4, "little", signed=True) + bytes([len(raw)]) + raw
        return _STRUCTS.rows_v2_body.build({
            "table_id": self.table_id, "flags": 1, "extra_info": b"", "width": 2,
            "columns_before": b"\x03", "columns_after": None, "rows": images}, is_update=False)


class BinlogBuilder:
    """Appends MySQL 8.0 events to a binary stream, tracking positions.

    :param out: the stream, positioned at its start.
    """

    def __init__(self, out: BinaryIO, *, server_id: int = 1,
                 server_version: str | bytes = "8.0.40",
                 server_version_int: int = 80040) -> None:
        self.out = out
        self.server_id = server_id
        self.server_version = server_version
        self.server_version_int = server_version_int
        self.pos = 0

    def _write(self, raw: bytes) -> None:
        self.out.write(raw)
        self.pos += len(raw)

    def _event(self, ts: int, type_code: int, body: bytes, flags: int = 0) -> bytes:
        size = 19 + len(body) + 4
        return frame_event(ts, type_code, self.server_id, flags, body, crc=True,
                           log_pos=self.pos + size)

    def start(self, ts: int, previous: tuple[uuid.UUID | None, int]) -> None:
        """Magic, FDE and Previous_gtids."""
        self._write(b"\xfebin")
        self._write(self._event(ts, EventType.FORMAT_DESCRIPTION_EVENT,
                                fde_body(self.server_version, 0)))
        self._write(self._event(ts, EventType.PREVIOUS_GTIDS_LOG_EVENT,
                                previous_gtids_body(*previous), flags=0x80))

    def transaction(self, ts_us: int, sid: uuid.UUID | None, gno: int, last_committed: int,
                    sequence_number: int, bodies: list[tuple[int, bytes]],
                    compress: bool = False, tag: str | None = None) -> None:
        """A GTID event followed by ``bodies`` (type code, body) or one payload holding them.

        ``tag``: a tagged GTID (GTID_TAGGED_LOG_EVENT, MySQL 8.3+); written as given,
        ``surrogateescape`` characters as their bytes (tests of invalid tags).
        """
        ts = ts_us // 1_000_000
        gtid_size = _GTID_EVENT_WITHOUT_LENGTH
        if compress:
            inner = b"".join(frame_event(ts, tc, self.server_id, 0, b, crc=False, log_pos=0)
                             for tc, b in bodies)
            bodies = [(EventType.TRANSACTION_PAYLOAD_EVENT, payload_body(inner))]
        others = sum(19 + len(b) + 4 for _, b in bodies)
        body = GtidBody(
            0, sid or uuid.UUID(int=0), gno if sid else 0, tag if sid else None, 2,
            last_committed, sequence_number, ts_us, ts_us,
            transaction_length_for(others, gtid_size), self.server_version_int,
            self.server_version_int)
        if body.tag:
            self._write(self._event(ts, EventType.GTID_TAGGED_LOG_EVENT,
                                    encode_gtid_tagged_body(body, other_events_size=others)))
        else:
            kind = EventType.GTID_LOG_EVENT if sid else EventType.ANONYMOUS_GTID_LOG_EVENT
            self._write(self._event(ts, kind, encode_gtid_body(body)))
        for type_code, b in bodies:
            self._write(self._event(ts, type_code, b))

    def rotate(self, ts: int, next_file: str | bytes) -> None:
        self._write(self._event(ts, EventType.ROTATE_EVENT, _STRUCTS.rotate_body.build(
            {"position": 4, "skip": b"", "new_log_ident": _raw(next_file)})))

    def stop(self, ts: int) -> None:
        self._write(self._event(ts, EventType.STOP_EVENT, b""))

    def close(self, ts: int, next_file: str | None) -> None:
        """End the file as a server does: a Rotate to ``next_file``, or a Stop when it is the last."""
        if next_file is not None:
            self.rotate(ts, next_file)
        else:
            self.stop(ts)


def payload_body(plaintext: bytes) -> bytes:
    """A Transaction_payload body: TLV header (compression 0 = ZSTD, sizes) + zstd data."""
    import zstandard
    data = zstandard.ZstdCompressor(level=3).compress(plaintext)
    header = b"".join(S.payload_field.build({"type": t, "value": S.encode_packed_int(v)})
                      for t, v in ((2, 0), (3, len(plaintext)), (1, len(data))))
    return header + S.payload_field.build({"type": 0, "value": None}) + data


def write_sample(directory: str | os.PathLike[str], *, transactions: int = 200,
                 seed: int = 7, force: bool = False) -> list[Path]:
    """Write ``binlog.000001`` and ``binlog.000002`` (and ``binlog.index``) into ``directory``.

    A commit-order clock as a MySQL 8.0 source produces it: commit groups of 1-6
    transactions share their ``last_committed`` (the last sequence number of the
    previous group) and take consecutive ``sequence_number``s; the first
    transaction of each file is (0, 1).  One DDL, one compressed transaction.
    The three files are written all-or-nothing (:class:`repltool.outputs.OutputSet`).

    :param force: replace files of these names already in ``directory``.
    :raises UsageError: one of them exists and ``force`` is off.
    :raises IOFailure: a file cannot be written.
    """
    rng = random.Random(seed)
    out_dir = Path(directory)
    sid = uuid.UUID(int=rng.getrandbits(128), version=4)
    table = SampleTable(110, "shop", "orders")
    ts_us = 1_760_000_000_000_000
    names = ["binlog.000001", "binlog.000002"]
    gno = 0
    with OutputSet(out_dir, [*names, "binlog.index"], force=force, option="-o") as outputs:
        for index, name in enumerate(names):
            with open(outputs.stage(name), "wb") as fh:
                b = BinlogBuilder(fh)
                b.start(ts_us // 1_000_000, (sid, gno))
                seq = 0
                last_group_end = 0
                while seq < transactions // 2:
                    group = rng.randint(1, 6)
                    for _ in range(group):
                        seq += 1
                        gno += 1
                        ts_us += rng.randint(50, 900)
                        thread = rng.randint(10, 17)
                        if seq == 25 and index == 0:
                            bodies = [(EventType.QUERY_EVENT, query_body(
                                thread, table.db, "ALTER TABLE orders ADD INDEX v (v)"))]
                        else:
                            rows = [(rng.randint(1, 10_000), f"item-{rng.randint(0, 999)}")
                                    for _ in range(rng.randint(1, 4))]
                            bodies = [(EventType.QUERY_EVENT, query_body(thread, table.db, "BEGIN")),
                                      (EventType.TABLE_MAP_EVENT, table.table_map_body()),
                                      (EventType.WRITE_ROWS_EVENT, table.write_rows_body(rows)),
                                      (EventType.XID_EVENT, S.xid_body.build({"xid": gno * 7}))]
                        b.transaction(ts_us, sid, gno, last_group_end, seq, bodies,
                                      compress=(seq == 40))
                    last_group_end = seq
                b.close(ts_us // 1_000_000, names[index + 1] if index + 1 < len(names) else None)
        outputs.stage("binlog.index").write_text("".join(f"./{n}\n" for n in names))
        outputs.commit()
    return [out_dir / n for n in names]
