"""Generated log sets for the --spark tests, written with repltool's own encoder.

* :func:`write_rotated_binlogs`: a MySQL 8.0 binlog set rotated into many small
  files (commit-order clocks restarting per file, a DDL, compressed
  transactions, a rotation at the end of each file).
* :func:`write_split_relay_logs`: relay logs in which transactions continue
  into the next relay file, split at chosen events (after a GTID, between a
  Table_map and its rows event, before the Xid), as a receiver writes them
  when max_relay_log_size rotates the relay log inside a transaction.
"""

from __future__ import annotations

import io
import itertools
import random
import uuid
from pathlib import Path

from repltool.binlog import structs as S
from repltool.binlog.constants import EventType
from repltool.binlog.writer import frame_event
from repltool.synth import (MYSQL80_POST_HEADER_LEN, BinlogBuilder, SampleTable, fde_body,
                            query_body)

RELAY_F, ARTIFICIAL_F = 0x40, 0x20
SOURCE_ID, REPLICA_ID = 1, 2


def _bodies(rng: random.Random, table: SampleTable, gno: int, ddl: bool) -> list:
    thread = rng.randint(10, 17)
    if ddl:
        return [(EventType.QUERY_EVENT, query_body(thread, table.db, "ALTER TABLE t ADD c INT"))]
    rows = [(rng.randint(1, 10_000), f"v{rng.randint(0, 999)}") for _ in range(rng.randint(1, 3))]
    return [(EventType.QUERY_EVENT, query_body(thread, table.db, "BEGIN")),
            (EventType.TABLE_MAP_EVENT, table.table_map_body()),
            (EventType.WRITE_ROWS_EVENT, table.write_rows_body(rows)),
            (EventType.XID_EVENT, S.xid_body.build({"xid": gno}))]


def write_rotated_binlogs(directory: Path, files: int = 60, per_file: int = 12,
                          seed: int = 5) -> list[Path]:
    """``binlog.000001`` ... : ``files`` small files of ``per_file`` transactions each."""
    rng = random.Random(seed)
    sid = uuid.UUID(int=rng.getrandbits(128), version=4)
    directory.mkdir(parents=True, exist_ok=True)
    ts_us, gno, paths = 1_760_000_000_000_000, 0, []
    for i in range(files):
        table = SampleTable(100 + i % 3, "db", f"t{i % 4}")
        path = directory / f"binlog.{i + 1:06d}"
        with open(path, "wb") as fh:
            b = BinlogBuilder(fh)
            b.start(ts_us // 1_000_000, (sid, gno))
            seq = last = 0
            while seq < per_file:
                for _ in range(rng.randint(1, 4)):
                    seq += 1
                    gno += 1
                    ts_us += rng.randint(10, 3_000_000)
                    b.transaction(ts_us, sid, gno, last, seq,
                                  _bodies(rng, table, gno, ddl=(seq == 5 and i % 7 == 0)),
                                  compress=(seq == 3 and i % 5 == 0))
                last = seq
            b.close(ts_us // 1_000_000, f"binlog.{i + 2:06d}" if i + 1 < files else None)
        paths.append(path)
    return paths


def _source_events(transactions: int, seed: int) -> tuple[bytes, list[list[bytes]]]:
    """A source binlog's FDE and its transactions as lists of raw events."""
    rng = random.Random(seed)
    sid = uuid.UUID(int=rng.getrandbits(128), version=4)
    table = SampleTable(77, "shop", "orders")
    buf = io.BytesIO()
    b = BinlogBuilder(buf, server_id=SOURCE_ID)
    b.start(1_760_000_000, (sid, 0))
    marks = []
    ts_us, seq, last = 1_760_000_000_000_000, 0, 0
    while seq < transactions:
        for _ in range(rng.randint(1, 3)):
            seq += 1
            ts_us += rng.randint(10, 900)
            marks.append(b.pos)
            b.transaction(ts_us, sid, seq, last, seq, _bodies(rng, table, seq, ddl=False))
        last = seq
    data = buf.getvalue()
    events = _split(data[4:])
    fde = events[0]
    trxs, cur, starts = [], None, set(marks)
    pos = 4
    for raw in events:
        if pos in starts:
            cur = []
            trxs.append(cur)
        if cur is not None:
            cur.append(raw)
        pos += len(raw)
    return fde, trxs


def _split(data: bytes) -> list[bytes]:
    out, p = [], 0
    while p < len(data):
        size = int.from_bytes(data[p + 9:p + 13], "little")
        out.append(data[p:p + size])
        p += size
    return out


def _replica(type_code: int, body: bytes, flags: int, pos: int) -> bytes:
    size = 19 + len(body) + 4
    return frame_event(1_760_000_000, type_code, REPLICA_ID, flags, body, crc=True,
                       log_pos=pos + size)


def _rotate_body(name: str) -> bytes:
    return S.BinlogStructs(MYSQL80_POST_HEADER_LEN).rotate_body.build(
        {"position": 4, "skip": b"", "new_log_ident": name.encode()})


def write_split_relay_logs(directory: Path, *, files: int = 6, transactions: int = 40,
                           seed: int = 9) -> list[Path]:
    """Relay files ``relay-bin.000001`` ...; most boundaries fall inside a transaction."""
    rng = random.Random(seed)
    source_fde, trxs = _source_events(transactions, seed)
    stream = [raw for t in trxs for raw in t]
    # boundaries inside transactions: after the GTID, after BEGIN, after the
    # Table_map (its rows event then names a table id mapped in the previous file);
    # one at a transaction boundary
    starts = list(itertools.accumulate([0, *(len(t) for t in trxs)]))[:-1]
    picks = sorted(rng.sample(range(1, len(trxs) - 1), files - 1))
    cuts = [starts[k] + (1 + n % 3 if n else 0) for n, k in enumerate(picks)]
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, piece in enumerate(pieces):
        path = directory / f"relay-bin.{i + 1:06d}"
        out = bytearray(b"\xfebin")
        out += _replica(EventType.FORMAT_DESCRIPTION_EVENT, fde_body("8.0.40", 0), RELAY_F,
                        len(out))
        if i == 0:      # the source's fake Rotate: a new source binlog begins
            out += frame_event(0, EventType.ROTATE_EVENT, SOURCE_ID, ARTIFICIAL_F,
                               _rotate_body("binlog.000001"), crc=True, log_pos=0)
        out += source_fde           # the source's FDE, copied into every relay file
        for raw in piece:
            out += raw
        if i + 1 < len(pieces):
            out += _replica(EventType.ROTATE_EVENT, _rotate_body(f"relay-bin.{i + 2:06d}"),
                            RELAY_F, len(out))
        path.write_bytes(bytes(out))
        paths.append(path)
    return paths
