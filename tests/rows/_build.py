"""Hand-built Table_map / Rows bodies and independent value encoders for the row tests.

The encoders follow the server's writers (strings/decimal.cc decimal2bin,
mysys/my_time.cc my_*_packed_to_binary, json_binary.cc serialize) written from
format-spec §4.9/§4.10, so the decoders are checked against a second,
separately written implementation rather than against themselves.
"""

from __future__ import annotations

import struct
from decimal import Decimal
from typing import Any, Sequence

from repltool.binlog.coltypes import TableDef, decode_table_map
from repltool.binlog.events import RowsBody, TableMapBody
from repltool.binlog.rows import RowChange, iter_row_changes
from repltool.binlog.structs import encode_packed_int as packed

TABLE_ID = 42


def table_map(types: Sequence[int], metadata: bytes = b"", *, nullable: Sequence[bool] | None = None,
              optional: Sequence[tuple[int, bytes]] = (), db: str = "db",
              table: str = "t") -> TableMapBody:
    n = len(types)
    nulls = bytearray((n + 7) // 8)
    for i, isnull in enumerate(nullable if nullable is not None else [True] * n):
        if isnull:
            nulls[i // 8] |= 1 << (i % 8)
    return TableMapBody(TABLE_ID, 1, db, table, n, bytes(types), metadata, bytes(nulls),
                        tuple(optional))


def tdef(types: Sequence[int], metadata: bytes = b"", **kw: Any) -> TableDef:
    return decode_table_map(table_map(types, metadata, **kw))


def bitmap(bits: Sequence[bool]) -> bytes:
    out = bytearray((len(bits) + 7) // 8)
    for i, b in enumerate(bits):
        if b:
            out[i // 8] |= 1 << (i % 8)
    return bytes(out)


def image(values: Sequence[bytes | None]) -> bytes:
    """A row image over the present columns: null bitmap then the non-NULL values."""
    return bitmap([v is None for v in values]) + b"".join(v for v in values if v is not None)


def rows_body(width: int, rows: bytes, *, present: Sequence[bool] | None = None,
              present_after: Sequence[bool] | None = None, update: bool = False) -> RowsBody:
    before = bitmap(present if present is not None else [True] * width)
    after = None
    if update:
        after = bitmap(present_after if present_after is not None else [True] * width)
    return RowsBody(TABLE_ID, 1, b"", width, before, after, rows)


def decode_one(types: Sequence[int], metadata: bytes, value: bytes | None,
               optional: Sequence[tuple[int, bytes]] = ()) -> Any:
    """Decode a single-column insert of ``value``; returns the decoded value."""
    t = tdef(types, metadata, optional=optional)
    (ch,) = iter_row_changes(t, rows_body(len(types), image([value])), 30)
    return ch.after.values[0]


def changes(t: TableDef, body: RowsBody, type_code: int) -> list[RowChange]:
    return list(iter_row_changes(t, body, type_code))


# ---- value encoders ----

_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def encode_decimal(value: str, precision: int, scale: int) -> bytes:
    """decimal2bin: 9-digit groups big-endian, leading/trailing partial groups, sign flip."""
    d = Decimal(value)
    neg = d.is_signed()
    text = format(d.copy_abs(), "f")
    ip, _, fp = text.partition(".")
    fp = (fp + "0" * scale)[:scale]
    intg = precision - scale
    ip = ip.lstrip("0").rjust(intg, "0")
    assert len(ip) == intg, "value too large for the precision"
    out = bytearray()
    lead = intg % 9
    if lead:
        out += int(ip[:lead]).to_bytes(_DIG2BYTES[lead], "big")
    for k in range(lead, intg, 9):
        out += int(ip[k:k + 9]).to_bytes(4, "big")
    for k in range(0, scale - scale % 9, 9):
        out += int(fp[k:k + 9]).to_bytes(4, "big")
    if scale % 9:
        out += int(fp[scale - scale % 9:]).to_bytes(_DIG2BYTES[scale % 9], "big")
    if neg:
        out = bytearray(b ^ 0xFF for b in out)
    out[0] ^= 0x80
    return bytes(out)


def _frac_bytes(us: int, fsp: int) -> bytes:
    if fsp == 0:
        return b""
    if fsp <= 2:
        return (us // 10000).to_bytes(1, "big")
    if fsp <= 4:
        return (us // 100).to_bytes(2, "big")
    return us.to_bytes(3, "big")


def encode_datetime2(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int, fsp: int) -> bytes:
    us = us // 10 ** (6 - fsp) * 10 ** (6 - fsp) if fsp else 0
    intpart = ((y * 13 + mo) << 22) | (d << 17) | (h << 12) | (mi << 6) | s
    return (intpart + 0x8000000000).to_bytes(5, "big") + _frac_bytes(us, fsp)


def encode_timestamp2(secs: int, us: int, fsp: int) -> bytes:
    return secs.to_bytes(4, "big") + _frac_bytes(us, fsp)


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


def encode_time2(neg: bool, h: int, mi: int, s: int, us: int, fsp: int) -> bytes:
    """my_time_packed_to_binary, with C's truncating / and % on negative values."""
    us = us // 10 ** (6 - fsp) * 10 ** (6 - fsp) if fsp else 0
    nr = (((h << 12) | (mi << 6) | s) << 24) + us
    if neg:
        nr = -nr
    intpart = nr >> 24                      # arithmetic shift, like C on signed
    frac = _c_mod(nr, 1 << 24)
    if fsp == 0:
        return (intpart + 0x800000).to_bytes(3, "big")
    if fsp <= 2:
        return (intpart + 0x800000).to_bytes(3, "big") + struct.pack(">b", _c_div(frac, 10000))
    if fsp <= 4:
        return (intpart + 0x800000).to_bytes(3, "big") + struct.pack(">h", _c_div(frac, 100))
    return (nr + 0x800000000000).to_bytes(6, "big")


# ---- binary JSON encoder (json_binary.cc serialize_*) ----

def _varlen(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def jsonb(value: Any, large: bool = False) -> bytes:
    t, payload = _jvalue(value, large)
    return bytes([t]) + payload


def _jvalue(v: Any, large: bool) -> tuple[int, bytes]:
    if v is None:
        return 0x04, b"\x00"
    if v is True:
        return 0x04, b"\x01"
    if v is False:
        return 0x04, b"\x02"
    if isinstance(v, int):
        if -(1 << 15) <= v < 1 << 15:
            return 0x05, struct.pack("<h", v)
        if -(1 << 31) <= v < 1 << 31:
            return 0x07, struct.pack("<i", v)
        if v < 0 or v < 1 << 63:
            return 0x09, struct.pack("<q", v)
        return 0x0A, struct.pack("<Q", v)
    if isinstance(v, float):
        return 0x0B, struct.pack("<d", v)
    if isinstance(v, str):
        b = v.encode()
        return 0x0C, _varlen(len(b)) + b
    if isinstance(v, tuple) and v and v[0] == "opaque":
        _, ftype, data = v
        return 0x0F, bytes([ftype]) + _varlen(len(data)) + data
    if isinstance(v, dict):
        return (0x01 if large else 0x00), _container(list(v.items()), True, large)
    if isinstance(v, list):
        return (0x03 if large else 0x02), _container([(None, x) for x in v], False, large)
    raise TypeError(v)


def _container(items: list[tuple[str | None, Any]], is_object: bool, large: bool) -> bytes:
    osz = 4 if large else 2
    fmt = "<I" if large else "<H"
    n = len(items)
    header = 2 * osz + n * ((osz + 2) if is_object else 0) + n * (1 + osz)
    keys = b""
    key_entries = b""
    if is_object:
        off = header
        for k, _ in items:
            kb = k.encode()  # type: ignore[union-attr]
            key_entries += struct.pack(fmt, off) + struct.pack("<H", len(kb))
            keys += kb
            off += len(kb)
    values = b""
    value_entries = b""
    base = header + len(keys)
    for _, v in items:
        t, payload = _jvalue(v, large)
        inline = t in (0x04, 0x05, 0x06) or (large and t in (0x07, 0x08))
        if inline:
            value_entries += bytes([t]) + payload.ljust(osz, b"\x00")
        else:
            value_entries += bytes([t]) + struct.pack(fmt, base + len(values))
            values += payload
    size = header + len(keys) + len(values)
    return struct.pack(fmt, n) + struct.pack(fmt, size) + key_entries + value_entries + keys + values


def json_diff(ops: Sequence[tuple[int, str, Any]]) -> bytes:
    """Json_diff_vector::write_binary body (without the 4-byte length)."""
    out = b""
    for op, path, value in ops:
        out += bytes([op]) + packed(len(path)) + path.encode()
        if op != 2:
            v = jsonb(value)
            out += packed(len(v)) + v
    return out
