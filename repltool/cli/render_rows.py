"""Decoded rows as text (``dump -v``: mysqlbinlog's ``###`` pseudo-SQL) and as JSON.

Value text follows mysqlbinlog's ``log_event_print_value`` (``sql/log_event.cc``;
MariaDB's variant for string escaping: bytes below 0x20 as ``\\xNN``), with
two deliberate differences: columns are named when the Table_map carries
COLUMN_NAME metadata (``###   id=5`` instead of ``###   @1=5``), and an
integer whose signedness the Table_map states is printed once, in that
signedness (mysqlbinlog prints ``-3 (4294967293)`` whatever the column is;
repltool does that too when SIGNEDNESS is absent).  DATE prints as
``'2001-02-03'`` (mysqlbinlog writes colons).
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Iterator

from ..binlog.coltypes import (
    ColumnDef, ColumnType as T, TableDef, decode_table_map, table_def_cache, type_label,
)
from ..binlog.events import Event, RowsBody, TableMapBody
from ..binlog.jsonb import JsonDiffList, JsonOpaque, json_to_text
from ..binlog.rows import Geometry, RowChange, RowImage, format_time, iter_row_changes
from ..escape import BIDI_CONTROLS, printable, sql_identifier

_INT_BITS: dict[int, int] = {T.TINY: 8, T.SHORT: 16, T.INT24: 24, T.LONG: 32, T.LONGLONG: 64}


class RowsRenderer:
    """Keeps the Table_maps seen so far and renders the rows of Rows events."""

    def __init__(self, verbosity: int = 1, *, numbered: bool = False) -> None:
        self.verbosity = verbosity
        self.numbered = numbered        # ``@1=`` column references even when names are known
        self.tables = table_def_cache()

    def observe(self, ev: Event) -> None:
        """Remember a Table_map (call for every event, in order)."""
        if isinstance(ev.body, TableMapBody):
            self.tables[ev.body.table_id] = decode_table_map(
                ev.body, pos=ev.pos, event_type=ev.type_name)

    def changes(self, ev: Event) -> tuple[TableDef | None, Iterator[RowChange]]:
        """The event's table and its row changes, decoded as they are iterated."""
        body = ev.body
        if not isinstance(body, RowsBody):
            return None, iter(())
        table = self.tables.get(body.table_id)
        if table is None:
            return None, iter(())
        return table, iter_row_changes(table, body, ev.type_code, pos=ev.pos)

    # ---- text ----

    def text_lines(self, ev: Event) -> Iterator[str]:
        """``###`` lines for a Rows event (none for other events), produced as the rows
        are decoded: an event's rows are never all held at once."""
        body = ev.body
        if not isinstance(body, RowsBody):
            return
        table, changes = self.changes(ev)
        if table is None:
            yield f"### (rows of table id {body.table_id} not shown: no Table_map seen)"
            return
        name = printable(f"{sql_identifier(table.db)}.{sql_identifier(table.table)}")
        for ch in changes:
            if ch.kind == "insert":
                yield f"### INSERT INTO {name}"
                yield "### SET"
                yield from self._image_lines(ch.after)
            elif ch.kind == "delete":
                yield f"### DELETE FROM {name}"
                yield "### WHERE"
                yield from self._image_lines(ch.before)
            else:
                yield f"### UPDATE {name}"
                yield "### WHERE"
                yield from self._image_lines(ch.before)
                yield "### SET"
                yield from self._image_lines(ch.after)

    def _image_lines(self, img: RowImage | None) -> list[str]:
        if img is None:
            return []
        lines = []
        cols = img.table.columns
        for i in range(len(img.values)):
            if not img.present >> i & 1:
                continue
            col = cols[i]
            is_null = bool(img.nulls >> i & 1)
            text = "NULL" if is_null else value_text(col, img.values[i], img.raw[i])
            line = f"###   {f'@{i + 1}' if self.numbered else printable(col.label)}={text}"
            if self.verbosity >= 2:
                line += (f" /* {type_label(col)} meta={col.metadata} "
                         f"nullable={int(col.nullable)} is_null={int(is_null)} */")
            lines.append(line)
        return lines

    # ---- JSON ----

    def json_rows(self, ev: Event) -> list[dict[str, Any]] | None:
        """``[{"kind", "before", "after"}]`` for a Rows event, None if not decodable."""
        table, changes = self.changes(ev)
        if table is None:
            return None
        return [{"kind": ch.kind, "before": image_json(ch.before),
                 "after": image_json(ch.after)} for ch in changes]


# ---- values as mysqlbinlog text ----

def quote_bytes(raw: bytes) -> str:
    """mariadb-binlog's my_b_write_quoted: bytes below 0x20 as ``\\xNN``.

    Also as ``\\xNN`` (their UTF-8 bytes): bytes that are not UTF-8, and
    characters a terminal acts on (DEL, C1 controls, bidi controls).
    """
    text = raw.decode("utf-8", "backslashreplace")
    return "'" + (text if text.isprintable() else text.translate(_QUOTED)) + "'"


_QUOTED = {cp: "".join(f"\\x{b:02x}" for b in chr(cp).encode())
           for cp in (*range(0x20), *range(0x7F, 0xA0), *BIDI_CONTROLS, 0x2028, 0x2029)}


def _stored_bytes(col: ColumnDef, raw: bytes) -> bytes:
    """The data part of a length-prefixed value's stored bytes."""
    t = col.real_type
    if t in (T.VARCHAR, T.VAR_STRING, T.STRING, T.VARCHAR_COMPRESSED):
        return raw[1:] if (col.max_length or 0) < 256 else raw[2:]
    return raw[col.pack_length or 0:]


def _int_text(col: ColumnDef, value: int) -> str:
    if col.unsigned is not None:
        return str(value)
    bits = _INT_BITS.get(col.real_type)
    if bits is not None and value < 0:
        return f"{value} ({value + (1 << bits)})"
    return str(value)


def value_text(col: ColumnDef, value: Any, raw: bytes | None) -> str:
    """One non-NULL value as ``mysqlbinlog -v`` writes it."""
    t = col.real_type
    if t in _INT_BITS:
        return _int_text(col, value)
    if t == T.YEAR:
        return str(value)
    if t == T.NEWDECIMAL:
        return format(value, "f")
    if t == T.FLOAT:
        return "%-20g" % value
    if t == T.DOUBLE:
        return "%-.20g" % value
    if t in (T.ENUM, T.SET, T.BIT):
        n = int.from_bytes(raw or b"", "big" if t == T.BIT else "little")
        if t == T.ENUM:
            return str(n)
        nbits = col.bits if t == T.BIT else (col.pack_length or 0) * 8
        return f"b'{n:0{nbits}b}'"
    if t in (T.TIMESTAMP, T.TIMESTAMP2):
        if isinstance(value, str):
            secs, us = 0, 0
        else:
            delta = value - datetime(1970, 1, 1, tzinfo=value.tzinfo)
            secs, us = delta.days * 86400 + delta.seconds, delta.microseconds
        fsp = col.fsp or 0
        return f"{secs}.{us:06d}"[:len(str(secs)) + 1 + fsp] if fsp else str(secs)
    if t in (T.DATETIME, T.DATETIME2):
        fsp = col.fsp or 0
        if isinstance(value, datetime):
            text = value.strftime("%Y-%m-%d %H:%M:%S") if value.year >= 1000 else (
                f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
                f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}")
            if fsp:
                text += f".{value.microsecond:06d}"[:fsp + 1]
            return f"'{text}'"
        return f"'{value}'"
    if t in (T.DATE, T.NEWDATE):
        if isinstance(value, date):
            return f"'{value.year:04d}-{value.month:02d}-{value.day:02d}'"
        return f"'{value}'"
    if t in (T.TIME, T.TIME2):
        return f"'{format_time(value, col.fsp or 0)}'"
    if t == T.JSON:
        if isinstance(value, JsonDiffList):
            return json_diff_text(col, value)
        return f"'{json_to_text(value)}'"
    if t == T.VECTOR:
        return "'[" + ",".join(f"{x:g}" for x in value) + "]'"
    if t == T.NULL:
        return "NULL"
    if raw is not None:       # strings, blobs, geometry: the stored bytes, quoted
        return quote_bytes(_stored_bytes(col, raw))
    return repr(value)


def json_diff_text(col: ColumnDef, diffs: JsonDiffList) -> str:
    """mysqlbinlog's rendering of a partial JSON update: nested JSON_* calls."""
    expr = col.label
    for d in diffs:
        fn = {"REPLACE": "JSON_REPLACE", "INSERT": "JSON_INSERT", "REMOVE": "JSON_REMOVE"}[d.op]
        if d.op == "REMOVE":
            expr = f"{fn}({expr}, '{d.path}')"
        else:
            expr = f"{fn}({expr}, '{d.path}', CAST('{json_to_text(d.value)}' AS JSON))"
    return expr


# ---- values as JSON ----

def image_json(img: RowImage | None) -> dict[str, Any] | None:
    """{column label: JSON-ready value} for the present columns of an image."""
    if img is None:
        return None
    cols = img.table.columns
    out: dict[str, Any] = {}
    for i in range(len(img.values)):
        if img.present >> i & 1:
            out[cols[i].label] = None if img.nulls >> i & 1 else json_value(cols[i], img.values[i])
    return out


def json_value(col: ColumnDef | None, v: Any) -> Any:
    """A decoded value -> JSON-serialisable: Decimal -> str, bytes -> text or hex,
    temporals -> ISO strings (TIME as ``[-]HH:MM:SS[.ffffff]``)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, bytes):
        if col is not None and not col.is_binary and col.collation is None:
            try:
                return v.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return v.hex()
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    if isinstance(v, timedelta):
        return format_time(v, 6 if v.microseconds else 0)
    if isinstance(v, Geometry):
        return {"srid": v.srid, "wkb": v.wkb.hex()}
    if isinstance(v, JsonOpaque):
        return {"opaque_type": v.field_type, "hex": v.data.hex()}
    if isinstance(v, JsonDiffList):
        return [{"op": d.op, "path": d.path, "value": json_value(None, d.value)} for d in v]
    if isinstance(v, dict):
        return {k: json_value(None, x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_value(None, x) for x in v]
    return str(v)
