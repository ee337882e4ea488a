"""Real MySQL 8.0 binlogs that encode the WL#8440 seed examples.

Every write-set item ``wsN`` of the seed is the row ``id = N`` of
``test.t1 (id INT PRIMARY KEY, v VARCHAR(32))`` (the PK comes from the
Table_map's SIMPLE_PRIMARY_KEY metadata, so no schema file is needed); a
transaction writing ``ws1, ws2`` is one Write_rows event with ids 1 and 2.
A transaction without write set is an ``ALTER TABLE`` (a DDL); a view change
is MySQL GR's ``Gtid(0, 0)``, ``BEGIN``, ``View_change_log_event``, ``COMMIT``.
The logged clocks are a serial commit order ``(i - 1, i)`` (view change
``(0, 0)``), so every certified clock differs from the logged one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from repltool.binlog import structs as S
from repltool.binlog.constants import EventType
from repltool.synth import BinlogBuilder, SampleTable, query_body

UUID1 = uuid.UUID("11111111-1111-1111-1111-111111111111")
TABLE = SampleTable(100, "test", "t1")
T0 = 1_760_000_000_000_000


@dataclass(frozen=True)
class Trx:
    """One seed transaction: rows (the ids it writes), a DDL or a view change.

    ``table`` names the table the rows go to (``test.t1`` by default; every
    table is ``(id INT PRIMARY KEY, v VARCHAR(32))``).  ``ctas`` writes MySQL
    8.0.21+'s ``CREATE TABLE ... SELECT``: ``BEGIN``, ``CREATE TABLE ...
    START TRANSACTION``, the selected rows, ``Xid``; ``empty`` an empty
    transaction: ``BEGIN``, ``COMMIT``.
    """

    ids: tuple[int, ...] = ()
    ddl: bool = False
    view_change: bool = False
    thread: int = 1
    compress: bool = False
    table: str = "t1"
    ctas: bool = False
    empty: bool = False


def ws(*ids: int, thread: int = 1, compress: bool = False, table: str = "t1") -> Trx:
    return Trx(ids=ids, thread=thread, compress=compress, table=table)


def ctas(table: str, *ids: int, thread: int = 1) -> Trx:
    """``CREATE TABLE table (...) AS SELECT`` that copies rows ``ids``."""
    return Trx(ids=ids, thread=thread, table=table, ctas=True)


def empty(thread: int = 1) -> Trx:
    return Trx(empty=True, thread=thread)


DDL = Trx(ddl=True)
VIEW_CHANGE = Trx(view_change=True)


def _table(name: str) -> SampleTable:
    return TABLE if name == "t1" else SampleTable(100 + int(name.lstrip("t") or 0), "test", name)


def _bodies(t: Trx, gno: int) -> list[tuple[int, bytes]]:
    if t.ddl:
        return [(EventType.QUERY_EVENT, query_body(t.thread, "test",
                                                   f"ALTER TABLE t1 COMMENT 'ddl {gno}'"))]
    if t.empty:
        return [(EventType.QUERY_EVENT, query_body(t.thread, "test", "BEGIN")),
                (EventType.QUERY_EVENT, query_body(t.thread, "test", "COMMIT"))]
    if t.view_change:
        body = S.view_change_body.build({"view_id": b"17600000000000001:3".ljust(40, b"\0"),
                                         "seq_number": 0, "cert_info_count": 0,
                                         "cert_info": []})
        return [(EventType.QUERY_EVENT, query_body(0, "", "BEGIN")),
                (EventType.VIEW_CHANGE_EVENT, body),
                (EventType.QUERY_EVENT, query_body(0, "", "COMMIT"))]
    rows = [(i, f"row {i}") for i in t.ids]
    table = _table(t.table)
    out = [(EventType.QUERY_EVENT, query_body(t.thread, "test", "BEGIN"))]
    if t.ctas:
        out.append((EventType.QUERY_EVENT, query_body(
            t.thread, "test", f"CREATE TABLE `{t.table}` (\n  `id` int NOT NULL,\n  `v` "
            "varchar(32) DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) START TRANSACTION")))
    if rows:
        out += [(EventType.TABLE_MAP_EVENT, table.table_map_body()),
                (EventType.WRITE_ROWS_EVENT, table.write_rows_body(rows))]
    return out + [(EventType.XID_EVENT, S.xid_body.build({"xid": gno}))]


def write_logs(directory: Path, files: list[list[Trx]], *, name: str = "binlog") -> list[Path]:
    """Write ``name.000001``... one per list of transactions; GTIDs UUID1:1.. across files."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.{i:06d}" for i in range(1, len(files) + 1)]
    gno = 0
    ts = T0
    for index, (path, trxs) in enumerate(zip(paths, files)):
        with open(path, "wb") as fh:
            b = BinlogBuilder(fh)
            b.start(ts // 1_000_000, (UUID1, gno))
            seq = 0
            for t in trxs:
                gno += 1
                ts += 1000
                if t.view_change:
                    clock = (0, 0)
                else:
                    seq += 1
                    clock = (seq - 1, seq)
                b.transaction(ts, UUID1, gno, *clock, _bodies(t, gno), compress=t.compress)
            b.close(ts // 1_000_000, paths[index + 1].name if index + 1 < len(paths) else None)
    return paths


def gtid(gno: int) -> str:
    return f"{UUID1}:{gno}"


#: Offset of the CRC32 of the first GTID event in a file :func:`write_logs`
#: writes: magic (4) + FDE + Previous_gtids end at 197, the GTID event is 79 bytes.
EX_GTID_CRC_OFFSET = 197 + 79 - 4


def write_replica_log(path: Path, trxs: list[Trx], *, delay_us: int = 250_000,
                      source_server_id: int = 1) -> Path:
    """One binlog as a MySQL 8.0 *replica* writes it: every GTID event carries an
    ``original_commit_timestamp`` (the source's commit, ``delay_us`` earlier) that
    differs from its ``immediate_commit_timestamp``; the events keep the source's
    ``server_id`` and the Query events the source session's thread id."""
    from repltool.binlog.events import GtidBody
    from repltool.binlog.writer import encode_gtid_body, frame_event, transaction_length_for

    path.parent.mkdir(parents=True, exist_ok=True)
    ts = T0
    with open(path, "wb") as fh:
        b = BinlogBuilder(fh, server_id=source_server_id)
        b.start(ts // 1_000_000, (UUID1, 0))
        for seq, t in enumerate(trxs, start=1):
            ts += 1000
            bodies = _bodies(t, seq)
            secs = ts // 1_000_000
            others = sum(19 + len(body) + 4 for _, body in bodies)

            def gtid_event(length: int, at: int) -> bytes:
                body = GtidBody(0, UUID1, seq, None, 2, seq - 1, seq, ts, ts - delay_us, length,
                                80040, 80040)
                raw = encode_gtid_body(body)
                return frame_event(secs, EventType.GTID_LOG_EVENT, source_server_id, 0, raw,
                                   crc=True, log_pos=at + 19 + len(raw) + 4)

            probe = gtid_event(0, b.pos)
            # the packed length field takes 1 byte for these small transactions
            event = gtid_event(transaction_length_for(others, len(probe) - 1), b.pos)
            fh.write(event)
            b.pos += len(event)
            for type_code, body in bodies:
                raw = frame_event(secs, type_code, source_server_id, 0, body, crc=True,
                                  log_pos=b.pos + 19 + len(body) + 4)
                fh.write(raw)
                b.pos += len(raw)
        b.close(ts // 1_000_000, None)
    return path
