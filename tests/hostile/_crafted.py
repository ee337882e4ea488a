"""The crafted logs of the "never explode" sweep (tests/hostile/test_explode.py, bench/bench_bounds.py).

Each builder returns the bytes of a small log whose claims, shared offsets or
repetitions would cost far more than its size without the reader's bounds; the
sweep runs every reading command on each under an address-space and a time
limit.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Callable

from ._build import (
    FDE_SOURCE, FDE_SOURCE_MARIADB, SID, fde_of, inner, json_dag, log, payload_body, query,
    table_map, transaction, write_rows, xid, zstd_zeros,
)

TID = 77


def bomb(corpus: Path) -> bytes:
    """A ~33 KB zstd payload inflating to 1 GiB of zeros, claiming 1 GiB (MySQL's cap)."""
    body = payload_body(zstd_zeros(1024), uncompressed=1 << 30)
    return log(fde_of(corpus, FDE_SOURCE), transaction(None, 1, [(40, body)])[:1] + [(40, body)])


def flood(corpus: Path, mib: int = 8) -> bytes:
    """A payload of ``mib`` MiB of tiny Rows events (one 1-byte row each) after one
    Table_map: a few KB compressed, ~300k inner events per 8 MiB."""
    import zstandard
    tm = inner(19, table_map(TID, b"\x01"))
    ev = inner(30, write_rows(TID, 1, b"\x00\x07"))
    n = (mib << 20) // len(ev)
    plain = inner(2, query("BEGIN")) + tm + ev * n + inner(16, xid(1))
    comp = zstandard.ZstdCompressor(level=19).compress(plain)
    body = payload_body(comp, uncompressed=len(plain))
    return log(fde_of(corpus, FDE_SOURCE), transaction(None, 1, [])[:1] + [(40, body)])


def wide(corpus: Path) -> bytes:
    """A legal 4096-column table and one Rows event of 50,000 one-column rows (~105 KB)."""
    tm = table_map(TID, b"\x01" * 4096)
    rows = write_rows(TID, 1, b"\x00\x07" * 50_000)
    return log(fde_of(corpus, FDE_SOURCE), transaction(None, 1, [(19, tm), (30, rows)]))


def too_wide(corpus: Path) -> bytes:
    """A Table_map of 4097 columns: more than MySQL's MAX_FIELDS."""
    tm = table_map(TID, b"\x01" * 4097)
    return log(fde_of(corpus, FDE_SOURCE), transaction(None, 1, [(19, tm)]))


def json_shared(corpus: Path) -> bytes:
    """A JSON column whose 6 KB document points 1000 entries at one 1000-entry array
    (a million values without a bound)."""
    doc = json_dag(2, 1000)
    tm = table_map(TID, b"\xf5", b"\x04")              # JSON, 4 length bytes
    rows = write_rows(TID, 1, b"\x00" + struct.pack("<I", len(doc)) + doc)
    return log(fde_of(corpus, FDE_SOURCE), transaction(None, 1, [(19, tm), (30, rows)]))


def tablemap_flood(corpus: Path, n: int = 200) -> bytes:
    """``n`` distinct 4096-column Table_maps (ids and names differ), ~8 KB each."""
    events = [(19, table_map(1000 + i, b"\x01" * 4096, table=f"t{i}")) for i in range(n)]
    return log(fde_of(corpus, FDE_SOURCE), transaction(None, 1, events))


def fde_flood(corpus: Path, n: int = 20_000) -> bytes:
    """``n`` FDEs with distinct post-header tables (two trailing entries for types no
    server writes), ~130 bytes each."""
    from repltool.binlog.writer import frame_event
    fde = fde_of(corpus, FDE_SOURCE)
    body = fde[19:-4]
    table, alg = body[57:-1], body[-1:]
    out = bytearray(b"\xfebin" + fde)
    for i in range(n):
        b = body[:57] + table + bytes([i & 0xFF, i >> 8 & 0xFF]) + alg
        out += frame_event(0, 15, 1, 0, b, crc=True, log_pos=len(out) + 19 + len(b) + 4)
    return bytes(out)


def gtid_set(corpus: Path, n: int = 1_000_000) -> bytes:
    """A Previous_gtids of one UUID and ``n`` intervals (16 MB)."""
    ivs = b"".join(struct.pack("<qq", 2 * i + 1, 2 * i + 2) for i in range(n))
    body = (1).to_bytes(8, "little") + SID + n.to_bytes(8, "little") + ivs
    return log(fde_of(corpus, FDE_SOURCE), [(35, body)])


def maria_rows(corpus: Path, mib: int = 1) -> bytes:
    """A MariaDB WRITE_ROWS_COMPRESSED_EVENT_V1 whose zlib data inflates to ``mib`` MiB
    of one-column rows (~1 KB compressed per MiB)."""
    plain = b"\x00\x07" * ((mib << 20) // 2)
    comp = b"\x84" + len(plain).to_bytes(4, "big") + zlib.compress(plain, 9)
    tm = table_map(TID, b"\x01")
    rows = TID.to_bytes(6, "little") + b"\x01\x00" + b"\x01\x01" + comp
    fde = fde_of(corpus, FDE_SOURCE_MARIADB)
    return log(fde, [(2, query("BEGIN")), (19, tm), (166, rows), (16, xid(1))])


def keyed_log(corpus: Path, transactions: list[range], per_event: int = 1600) -> bytes:
    """One transaction per range of one-INT-column rows (the ids of its rows), in a
    table whose PRIMARY KEY the Table_map names (SIGNEDNESS, COLUMN_NAME,
    SIMPLE_PRIMARY_KEY: no --schema needed), each row a write-set key; rows split as
    MySQL splits them (``per_event`` rows per Rows event, ~8 KiB: the default
    binlog_row_event_max_size).  Transaction ``i`` (from 1) logs ``(i - 1, i)``."""
    opt = b"\x01\x01\x00" + b"\x04\x03\x02id" + b"\x08\x01\x00"
    tm = (TID.to_bytes(6, "little") + b"\x01\x00\x02db\x00\x01t\x00\x01\x03\x00"
          + b"\x00" + opt)
    bodies: list[tuple[int, bytes]] = []
    for gno, ids in enumerate(transactions, 1):
        events: list[tuple[int, bytes]] = [(19, tm)]
        for lo in range(0, len(ids), per_event):
            rows = b"".join(b"\x00" + struct.pack("<i", i) for i in ids[lo:lo + per_event])
            events.append((30, write_rows(TID, 1, rows)))
        bodies += transaction(None, gno, events)
    return log(fde_of(corpus, FDE_SOURCE), bodies)


def keyed_rows(corpus: Path, rows: int = 200_000) -> bytes:
    """One transaction of ``rows`` keyed rows (:func:`keyed_log`, ~1 MB)."""
    return keyed_log(corpus, [range(rows)])


def nested(corpus: Path) -> bytes:
    """A Transaction_payload inside a Transaction_payload (its rows would be hidden)."""
    import zstandard
    c = zstandard.ZstdCompressor()
    tm = inner(19, table_map(TID, b"\x01"))
    ev = inner(30, write_rows(TID, 1, b"\x00\x07"))
    plain_in = inner(2, query("BEGIN")) + tm + ev + inner(16, xid(1))
    body_in = payload_body(c.compress(plain_in), uncompressed=len(plain_in))
    plain = inner(40, body_in)
    body = payload_body(c.compress(plain), uncompressed=len(plain))
    return log(fde_of(corpus, FDE_SOURCE), transaction(None, 1, [])[:1] + [(40, body)])


CRAFTED: dict[str, Callable[[Path], bytes]] = {
    "bomb": bomb, "flood": flood, "wide": wide, "too_wide": too_wide, "json": json_shared,
    "tablemaps": tablemap_flood, "fdes": fde_flood, "gtidset": gtid_set, "maria": maria_rows,
    "nested": nested, "keyed": keyed_rows,
}

#: every reading command (the sweep runs each on every crafted log)
COMMANDS: dict[str, list[str]] = {
    "dump": ["dump"], "dump-v": ["dump", "-v"], "writesets": ["dump", "--writesets"],
    "stats": ["stats"], "check": ["check"], "schedule": ["schedule"], "certify": ["certify"],
    "explain": ["explain"],
}
