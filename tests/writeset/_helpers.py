"""Hand-built transactions (GTID, Table_map, Rows events) for the writeset rule tests."""

from __future__ import annotations

from typing import Any, Sequence

from repltool.binlog.coltypes import ColumnType as T, OptionalMetadata as M
from repltool.binlog.events import Event, MariaGtidBody, QueryBody, RowsBody, TableMapBody, XidBody
from repltool.binlog.structs import encode_packed_int as packed
from repltool.binlog.transactions import Transaction, group_transactions
from repltool.positions import Position

WRITE, UPDATE, DELETE = 30, 31, 32
FILE = "test-bin.000001"


class Col:
    """One column: type code, metadata bytes, row-value encoder, nullability."""

    def __init__(self, name: str, ctype: int, meta: bytes = b"", *, nullable: bool = True,
                 collation: int | None = None, unsigned: bool = False) -> None:
        self.name, self.ctype, self.meta = name, ctype, meta
        self.nullable, self.collation, self.unsigned = nullable, collation, unsigned


def INT(name: str, **kw: Any) -> Col:
    return Col(name, T.LONG, **kw)


def CHAR(name: str, n: int, collation: int = 45, **kw: Any) -> Col:
    return Col(name, T.STRING, bytes([T.STRING, n]), collation=collation, **kw)


def VARCHAR(name: str, n: int, collation: int = 45, **kw: Any) -> Col:
    return Col(name, T.VARCHAR, n.to_bytes(2, "little"), collation=collation, **kw)


def encode(col: Col, value: Any) -> bytes:
    if col.ctype == T.LONG:
        return int(value).to_bytes(4, "little", signed=not col.unsigned)
    if col.ctype in (T.STRING, T.VARCHAR):
        b = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        return bytes([len(b)]) + b
    raise TypeError(col.ctype)


def table_map(table_id: int, db: str, table: str, cols: Sequence[Col], *,
              pk: Sequence[int] | None = None, names: bool = True) -> TableMapBody:
    n = len(cols)
    nulls = bytearray((n + 7) // 8)
    for i, c in enumerate(cols):
        if c.nullable:
            nulls[i // 8] |= 1 << (i % 8)
    opt: list[tuple[int, bytes]] = []
    numeric = [c for c in cols if c.ctype == T.LONG]
    if numeric:
        bits = 0
        for k, c in enumerate(numeric):
            if c.unsigned:
                bits |= 0x80 >> (k % 8) << (8 * (k // 8))
        opt.append((M.SIGNEDNESS, bits.to_bytes((len(numeric) + 7) // 8, "little")))
    chars = [c for c in cols if c.collation is not None]
    if chars:
        opt.append((M.COLUMN_CHARSET, b"".join(packed(c.collation) for c in chars)))
    if names:
        opt.append((M.COLUMN_NAME, b"".join(packed(len(c.name)) + c.name.encode() for c in cols)))
    if pk is not None:
        opt.append((M.SIMPLE_PRIMARY_KEY, b"".join(packed(i) for i in pk)))
    return TableMapBody(table_id, 1, db, table, n, bytes(c.ctype for c in cols),
                        b"".join(c.meta for c in cols), bytes(nulls), tuple(opt))


def image(cols: Sequence[Col], row: Sequence[Any]) -> bytes:
    nulls = bytearray((len(cols) + 7) // 8)
    for i, v in enumerate(row):
        if v is None:
            nulls[i // 8] |= 1 << (i % 8)
    return bytes(nulls) + b"".join(encode(c, v) for c, v in zip(cols, row) if v is not None)


def rows(table_id: int, cols: Sequence[Col], kind: int, images: Sequence[Any], *,
         flags: int = 1) -> RowsBody:
    n = len(cols)
    allbits = bytes([0xFF] * ((n + 7) // 8))
    data = b"".join(image(cols, r) for r in images)
    return RowsBody(table_id, flags, b"", n, allbits, allbits if kind == UPDATE else None, data)


def transaction(*bodies: tuple[int, Any], ddl: str | None = None) -> Transaction:
    """One MariaDB-style group: GTID, the (type code, body) pairs, XID (or one DDL Query)."""
    evs: list[tuple[int, Any]] = [(162, MariaGtidBody(1, 0, 0x29 if ddl else 0x0C, None))]
    if ddl is not None:
        evs.append((2, QueryBody(1, 0, 0, "test", b"", ddl.encode())))
    else:
        evs += list(bodies) + [(16, XidBody(1))]
    events = [Event(Position(FILE, 4 + 100 * i), 0, tc, 1, 100, 104 + 100 * i, 0, body)
              for i, (tc, body) in enumerate(evs)]
    (trx,) = group_transactions(events, keep_events=True)
    return trx
