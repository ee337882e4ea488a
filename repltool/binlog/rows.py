"""Row images of Rows events -> :class:`RowChange` records with decoded values.

Layout: format-spec §4.10 (MySQL ``sql/rpl_record.cc`` pack_row/unpack_row,
``sql/log_event.cc`` log_event_print_value for the value encodings,
``strings/decimal.cc`` bin2decimal, ``mysys/my_time.cc`` for the packed
temporal formats, ``sql/json_diff.cc`` for partial JSON).  Works for rows v1
(23-25), v2 (30-32), PARTIAL_UPDATE_ROWS (39) and MariaDB's compressed rows
(166-171, already inflated by :func:`repltool.binlog.decode.decode_rows`).

Usage::

    tables = {}
    for ev in read_events(path):
        if isinstance(ev.body, TableMapBody):
            tables[ev.body.table_id] = decode_table_map(ev.body, pos=ev.pos)
        elif isinstance(ev.body, RowsBody):
            for change in iter_row_changes(tables[ev.body.table_id], ev.body,
                                           ev.type_code, pos=ev.pos):
                print(change.kind, change.after and change.after.as_dict())

Speed: every column gets one small closure when its Table_map is decoded
(:func:`attach_decoders`), and the (column index, decoder) plan of each
distinct columns-present bitmap is cached on the :class:`TableDef`, so the
per-value loop is one call and one slice.  Decoders signal short or impossible
data with ``IndexError``/``struct.error``/:class:`BadValue`; those are turned
into :class:`~repltool.errors.MalformedEvent` in exactly one place,
:func:`_malformed`.

Decoded values by column type:

* integers, YEAR, BIT, ENUM/SET without names -> ``int``; ENUM with names ->
  ``str`` label ('' for index 0); SET with names -> ``str`` ``'a,c'``;
* NEWDECIMAL -> ``decimal.Decimal``; FLOAT/DOUBLE -> ``float``;
* character columns (VARCHAR/CHAR/TEXT) whose collation is known and not
  binary -> ``str`` (bytes kept when they do not decode); binary or unknown
  collation -> ``bytes``;
* JSON -> Python value (:mod:`repltool.binlog.jsonb`); a partially updated
  JSON column (PARTIAL_UPDATE_ROWS after-image) -> ``list[JsonDiff]``;
* DATE -> ``date``, DATETIME/DATETIME2 -> naive ``datetime``, TIMESTAMP(2) ->
  UTC ``datetime``, TIME/TIME2 -> ``timedelta``; zero or otherwise invalid
  dates (which Python cannot hold) -> MySQL text such as ``'0000-00-00'``;
* GEOMETRY -> :class:`Geometry` (SRID, WKB); VECTOR -> ``tuple[float, ...]``;
* NULL type -> ``None``.

``RowImage.raw`` keeps each value's bytes exactly as stored in the image
(length prefix included) for writeset hashing.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Callable, Iterator, NamedTuple

from ..errors import MalformedEvent
from ..positions import Position
from .columns import BLOB_TYPES, ColumnDef, ColumnType as T, TableDef, collation_codec
from .constants import type_name
from .events import RowsBody
from .jsonb import JsonDiffList, JsonError, decode_json, decode_json_diff
from .temporal import (
    EPOCH, BadValue, date_fields, datetime2_fields, decimal_from_groups, decimal_plan,
    decimal_size, decode_decimal, format_time, frac_text, make_date, make_datetime,
    time_from_packed, timestamp2_fields,
)

__all__ = ["RowChange", "RowImage", "Geometry", "BadValue", "iter_row_changes", "format_time",
           "decode_decimal", "decimal_size", "ROW_KINDS", "INT_FORMATS", "PARTIAL_UPDATE_ROWS",
           "frac_layout", "prefixed_span"]

Decoder = Callable[[bytes, int], "tuple[Any, int]"]


class Geometry(NamedTuple):
    """A GEOMETRY value: SRID (4 bytes LE) then standard WKB."""

    srid: int
    wkb: bytes


#: Rows event type code -> "insert" | "update" | "delete".
ROW_KINDS: dict[int, str] = {
    23: "insert", 30: "insert", 166: "insert", 169: "insert",
    24: "update", 31: "update", 39: "update", 167: "update", 170: "update",
    25: "delete", 32: "delete", 168: "delete", 171: "delete",
}
PARTIAL_UPDATE_ROWS = 39


# ---- records ----

@dataclass(frozen=True, slots=True)
class RowImage:
    """One before- or after-image, with a slot for every column the Rows event covers.

    ``present`` and ``nulls`` are bitmasks over column indexes (bit i = column
    i).  ``values`` and ``raw`` have one slot per column of the event's width
    (the Table_map's leading columns; the whole table when, as usual, the
    widths agree), so a row costs what its event says, not what its table
    holds.  ``values[i]``/``raw[i]`` are ``None`` for columns that are absent
    or NULL; ``raw[i]`` is the value's bytes as stored in the row image (length
    prefix included).  ``image[i]`` is ``None`` for columns past the width too.
    """

    table: TableDef = field(repr=False, compare=False)
    present: int
    nulls: int
    values: tuple[Any, ...]
    raw: tuple[bytes | None, ...] = field(repr=False)

    def is_present(self, i: int) -> bool:
        return bool(self.present >> i & 1)

    def is_null(self, i: int) -> bool:
        """True if column ``i`` is in the image and SQL NULL."""
        return bool(self.nulls >> i & 1)

    def __getitem__(self, key: int | str) -> Any:
        i = key if isinstance(key, int) else self.table.index_of(key)
        return self.values[i] if 0 <= i < len(self.values) else None

    def columns(self) -> Iterator[tuple[ColumnDef, Any]]:
        """(column, value) for the present columns, in column order."""
        cols = self.table.columns
        for i in range(len(self.values)):
            if self.present >> i & 1:
                yield cols[i], self.values[i]

    def as_dict(self) -> dict[str, Any]:
        """{column name or ``@N``: value} for the present columns."""
        return {c.label: v for c, v in self.columns()}


@dataclass(frozen=True, slots=True)
class RowChange:
    """One row of a Rows event: an insert (after), delete (before) or update (both)."""

    kind: str
    before: RowImage | None
    after: RowImage | None


# ---- per-type value decoders ----
# Each: (data, pos) -> (value, next pos).  Short reads raise IndexError or
# struct.error, impossible values BadValue; iter_row_changes translates both.

@lru_cache(maxsize=64)
def _fixed(fmt: str) -> Decoder:
    s = struct.Struct(fmt)
    unpack, n = s.unpack_from, s.size

    def dec(d: bytes, p: int) -> tuple[Any, int]:
        return unpack(d, p)[0], p + n
    return dec


@lru_cache(maxsize=2)
def _int24(signed: bool) -> Decoder:
    def dec(d: bytes, p: int) -> tuple[Any, int]:
        q = p + 3
        if q > len(d):
            raise IndexError
        return int.from_bytes(d[p:q], "little", signed=signed), q
    return dec


def _year(d: bytes, p: int) -> tuple[Any, int]:
    v = d[p]
    return (1900 + v if v else 0), p + 1


def _null(d: bytes, p: int) -> tuple[Any, int]:
    return None, p


def _text(codec: str | None) -> Callable[[bytes], Any]:
    if codec is None:
        return lambda b: b

    def conv(b: bytes) -> Any:
        try:
            return b.decode(codec)
        except UnicodeDecodeError:
            return b
    return conv


def _varlen(lenbytes: int, conv: Callable[[bytes], Any]) -> Decoder:
    """A value with a ``lenbytes`` little-endian length prefix (VARCHAR, CHAR, BLOB...)."""
    if lenbytes == 1:
        def dec1(d: bytes, p: int) -> tuple[Any, int]:
            q = p + 1 + d[p]
            if q > len(d):
                raise IndexError
            return conv(d[p + 1:q]), q
        return dec1
    if lenbytes == 2:
        u16 = struct.Struct("<H").unpack_from

        def dec2(d: bytes, p: int) -> tuple[Any, int]:
            q = p + 2 + u16(d, p)[0]
            if q > len(d):
                raise IndexError
            return conv(d[p + 2:q]), q
        return dec2

    def decn(d: bytes, p: int) -> tuple[Any, int]:
        s, q = prefixed_span(d, p, lenbytes)
        return conv(d[s:q]), q
    return decn


def prefixed_span(d: bytes, p: int, lenbytes: int) -> tuple[int, int]:
    """(start, end) of the data of a value at ``p`` with a ``lenbytes``-byte
    little-endian length prefix; IndexError when it does not fit in ``d``."""
    s = p + lenbytes
    if s > len(d):
        raise IndexError
    q = s + int.from_bytes(d[p:s], "little")
    if q > len(d):
        raise IndexError
    return s, q


def _bytes_of(n: int, conv: Callable[[bytes], Any]) -> Decoder:
    def dec(d: bytes, p: int) -> tuple[Any, int]:
        q = p + n
        if q > len(d):
            raise IndexError
        return conv(d[p:q]), q
    return dec


def _json_conv(b: bytes) -> Any:
    try:
        return decode_json(b)
    except JsonError as exc:
        raise BadValue(str(exc)) from exc


def _diff_conv(b: bytes) -> Any:
    try:
        return decode_json_diff(b)
    except JsonError as exc:
        raise BadValue(str(exc)) from exc


def _geometry(b: bytes) -> Geometry:
    if len(b) < 4:
        raise BadValue(f"GEOMETRY value of {len(b)} bytes has no SRID")
    return Geometry(int.from_bytes(b[:4], "little"), b[4:])


def _vector(b: bytes) -> tuple[float, ...]:
    if len(b) % 4:
        raise BadValue(f"VECTOR value of {len(b)} bytes is not a float32 array")
    return struct.unpack(f"<{len(b) // 4}f", b)


def _unsupported(why: str) -> Decoder:
    def dec(d: bytes, p: int) -> tuple[Any, int]:
        raise BadValue(why)
    dec.unsupported = True  # type: ignore[attr-defined]  # row walkers call it (rowwalk)
    return dec


# ---- DECIMAL (strings/decimal.cc bin2decimal; the helpers are in temporal.py) ----

def _decimal(precision: int, scale: int) -> Decoder:
    if precision == 0 or scale > precision or precision > 81:
        return _unsupported(f"DECIMAL({precision},{scale}) is not a valid type")
    size = decimal_size(precision, scale)
    groups, n_int = decimal_plan(precision, scale)

    def dec(d: bytes, p: int) -> tuple[Any, int]:
        q = p + size
        if q > len(d):
            raise IndexError
        return decimal_from_groups(d[p:q], size, groups, n_int), q
    return dec


# ---- temporal (mysys/my_time.cc; the packed formats are in temporal.py) ----

def frac_layout(fsp: int) -> tuple[int, int]:
    """(bytes, multiplier to microseconds) of a temporal fraction for ``fsp``."""
    if fsp <= 0:
        return 0, 0
    if fsp <= 2:
        return 1, 10000
    if fsp <= 4:
        return 2, 100
    return 3, 1


def _datetime2(fsp: int) -> Decoder:
    fb, mul = frac_layout(fsp)
    n = 5 + fb

    def dec(d: bytes, p: int) -> tuple[Any, int]:
        q = p + n
        if q > len(d):
            raise IndexError
        return make_datetime(*datetime2_fields(d, p, fb, mul), fsp), q
    return dec


def _timestamp2(fsp: int) -> Decoder:
    fb, mul = frac_layout(fsp)
    n = 4 + fb

    def dec(d: bytes, p: int) -> tuple[Any, int]:
        q = p + n
        if q > len(d):
            raise IndexError
        secs, us = timestamp2_fields(d, p, fb, mul)
        if secs == 0 and us == 0:
            return "0000-00-00 00:00:00" + frac_text(0, fsp), q
        return EPOCH + timedelta(seconds=secs, microseconds=us), q
    return dec


def _timestamp(d: bytes, p: int) -> tuple[Any, int]:
    q = p + 4
    if q > len(d):
        raise IndexError
    secs = int.from_bytes(d[p:q], "little")
    if secs == 0:
        return "0000-00-00 00:00:00", q
    return EPOCH + timedelta(seconds=secs), q


def _time2(fsp: int) -> Decoder:
    fb, mul = frac_layout(fsp)
    n = 3 + fb if fb < 3 else 6

    def dec(d: bytes, p: int) -> tuple[Any, int]:
        q = p + n
        if q > len(d):
            raise IndexError
        if fb == 3:
            packed = int.from_bytes(d[p:q], "big") - 0x800000000000
        else:
            intpart = int.from_bytes(d[p:p + 3], "big") - 0x800000
            frac = int.from_bytes(d[p + 3:q], "big") if fb else 0
            if intpart < 0 and frac:
                intpart += 1
                frac -= 1 << (8 * fb)
            packed = (intpart << 24) + frac * mul
        return time_from_packed(packed), q
    return dec


def _time(d: bytes, p: int) -> tuple[Any, int]:
    q = p + 3
    if q > len(d):
        raise IndexError
    v = int.from_bytes(d[p:q], "little", signed=True)
    neg = v < 0
    v = abs(v)
    td = timedelta(hours=v // 10000, minutes=v // 100 % 100, seconds=v % 100)
    return (-td if neg else td), q


def _date(d: bytes, p: int) -> tuple[Any, int]:
    q = p + 3
    if q > len(d):
        raise IndexError
    return make_date(*date_fields(d, p)), q


def _datetime(d: bytes, p: int) -> tuple[Any, int]:
    q = p + 8
    if q > len(d):
        raise IndexError
    v = int.from_bytes(d[p:q], "little")
    ymd, hms = divmod(v, 1000000)
    return make_datetime(ymd // 10000, ymd // 100 % 100, ymd % 100, hms // 10000,
                         hms // 100 % 100, hms % 100, 0, 0), q


def _enum(col: ColumnDef) -> Decoder:
    n = col.pack_length or 0
    if n not in (1, 2):
        return _unsupported(f"ENUM stored in {n} bytes")
    labels = col.enum_values

    def conv(b: bytes) -> Any:
        i = int.from_bytes(b, "little")
        if labels is None:
            return i
        if i == 0:
            return ""
        if i <= len(labels):
            return _label(labels[i - 1], col.collation)
        return i
    return _bytes_of(n, conv)


def _set(col: ColumnDef) -> Decoder:
    n = col.pack_length or 0
    if not 1 <= n <= 8:
        return _unsupported(f"SET stored in {n} bytes")
    labels = col.set_values

    def conv(b: bytes) -> Any:
        bits = int.from_bytes(b, "little")
        if labels is None or bits >> len(labels):
            return bits
        return ",".join(_label(labels[i], col.collation) for i in range(len(labels))
                        if bits >> i & 1)
    return _bytes_of(n, conv)


def _label(raw: bytes, collation: int | None) -> str:
    return raw.decode(collation_codec(collation) or "utf-8", "replace")


def _bit(col: ColumnDef) -> Decoder:
    meta = col.metadata
    n = (meta >> 8) + (1 if meta & 0xFF else 0)
    return _bytes_of(n, lambda b: int.from_bytes(b, "big"))


INT_FORMATS: dict[int, tuple[str, str]] = {T.TINY: ("<b", "<B"), T.SHORT: ("<h", "<H"), T.LONG: ("<i", "<I"),
                T.LONGLONG: ("<q", "<Q")}


def column_decoder(col: ColumnDef, *, missing_metadata: bool = False) -> Decoder:
    """The value decoder for one column (chosen once per Table_map)."""
    t = col.real_type
    if missing_metadata:
        return _unsupported(f"column type {t} needs metadata the Table_map lacks")
    if t in INT_FORMATS:
        return _fixed(INT_FORMATS[t][1 if col.unsigned else 0])
    if t == T.INT24:
        return _int24(not col.unsigned)
    if t == T.FLOAT:
        return _fixed("<f")
    if t == T.DOUBLE:
        return _fixed("<d")
    if t == T.YEAR:
        return _year
    if t == T.NEWDECIMAL:
        return _decimal(col.precision or 0, col.scale or 0)
    if t in (T.VARCHAR, T.VAR_STRING, T.STRING):
        conv = _text(collation_codec(col.collation))
        return _varlen(1 if (col.max_length or 0) < 256 else 2, conv)
    if t == T.VARCHAR_COMPRESSED:      # MariaDB compressed column: kept compressed
        return _varlen(1 if (col.max_length or 0) < 256 else 2, bytes)
    if t in BLOB_TYPES or t in (T.JSON, T.GEOMETRY, T.VECTOR):
        n = col.pack_length or 0
        if not 1 <= n <= 4:
            return _unsupported(f"{T(t).name} with pack length {n}")
        if t == T.JSON:
            return _varlen(n, _json_conv)
        if t == T.GEOMETRY:
            return _varlen(n, _geometry)
        if t == T.VECTOR:
            return _varlen(n, _vector)
        if t == T.BLOB_COMPRESSED:
            return _varlen(n, bytes)
        return _varlen(n, _text(collation_codec(col.collation)))
    if t == T.ENUM:
        return _enum(col)
    if t == T.SET:
        return _set(col)
    if t == T.BIT:
        return _bit(col)
    if t == T.DATETIME2:
        return _datetime2(col.fsp or 0)
    if t == T.TIMESTAMP2:
        return _timestamp2(col.fsp or 0)
    if t == T.TIME2:
        return _time2(col.fsp or 0)
    if t == T.TIMESTAMP:
        return _timestamp
    if t == T.DATETIME:
        return _datetime
    if t in (T.DATE, T.NEWDATE):
        return _date
    if t == T.TIME:
        return _time
    if t == T.NULL:
        return _null
    return _unsupported(f"column type {t} cannot be decoded from row images")


def attach_decoders(table: TableDef, missing: set[int] | frozenset[int] = frozenset()) -> None:
    """Fill ``table.decoders`` (called by :func:`~repltool.binlog.coltypes.decode_table_map`)."""
    decs = tuple(column_decoder(c, missing_metadata=c.index in missing) for c in table.columns)
    object.__setattr__(table, "decoders", decs)


# ---- images ----

_DIFF_DECODER = _varlen(4, _diff_conv)


def _plan(table: TableDef, bitmap: bytes, width: int) -> tuple[int, tuple[tuple[int, Decoder], ...]]:
    """(present mask, ((column, decoder), ...)) for a columns-present bitmap, cached."""
    key = (bitmap, width)
    hit = table.plans.get(key)
    if hit is None:
        table.trim_cache()
        mask = int.from_bytes(bitmap, "little") & ((1 << width) - 1)
        decs = table.decoders
        plan = tuple((i, decs[i]) for i in range(width) if mask >> i & 1)
        hit = table.plans[key] = (mask, plan)
    return hit


def _image(table: TableDef, data: bytes, p: int, mask: int,
           plan: tuple[tuple[int, Decoder], ...], n: int) -> tuple[RowImage, int]:
    q = p + ((len(plan) + 7) >> 3)
    if q > len(data):
        raise IndexError
    nullbits = int.from_bytes(data[p:q], "little")
    p = q
    values: list[Any] = [None] * n
    raw: list[bytes | None] = [None] * n
    nulls = 0
    if nullbits:
        for i, dec in plan:
            if nullbits & 1:
                nulls |= 1 << i
            else:
                values[i], q = dec(data, p)
                raw[i] = data[p:q]
                p = q
            nullbits >>= 1
    else:
        for i, dec in plan:
            values[i], q = dec(data, p)
            raw[i] = data[p:q]
            p = q
    return RowImage(table, mask, nulls, tuple(values), tuple(raw)), p


def _partial_plan(table: TableDef, data: bytes, p: int,
                  plan: tuple[tuple[int, Decoder], ...]) -> tuple[tuple[tuple[int, Decoder], ...], int]:
    """Read value_options (+ partial bits) of a PARTIAL_UPDATE after-image."""
    first = data[p]
    if first >= 251:
        raise BadValue(f"value_options packed integer prefix 0x{first:02x} is not a small value")
    p += 1
    if first > 1:
        raise BadValue(f"value_options {first} (only PARTIAL_JSON = 1 is defined)")
    if not first:
        return plan, p
    jcols = table.json_columns
    q = p + ((len(jcols) + 7) >> 3)
    if q > len(data):
        raise IndexError
    bits = int.from_bytes(data[p:q], "little")
    partial = {c for k, c in enumerate(jcols) if bits >> k & 1}
    if not partial:
        return plan, q
    return tuple((i, _DIFF_DECODER if i in partial else dec) for i, dec in plan), q


def iter_row_changes(table: TableDef, rows: RowsBody, type_code: int, *,
                     pos: Position | None = None) -> Iterator[RowChange]:
    """Decode the row images of one Rows event against its Table_map.

    :param table: the :func:`~repltool.binlog.coltypes.decode_table_map` result
        for ``rows.table_id``.
    :param type_code: the Rows event's type code (decides insert/update/delete
        and whether after-images carry partial-JSON options).
    :param pos: the event's position, for error messages.
    :raises MalformedEvent: when the images do not match the table or run past
        the event (raised when the bad row is reached).
    """
    kind = ROW_KINDS.get(type_code)
    ename = type_name(type_code)
    if kind is None:
        raise MalformedEvent(f"type {type_code} is not a rows event", pos=pos, event_type=ename)
    width = rows.width
    if width > len(table.columns):
        raise MalformedEvent(f"rows event has {width} columns, its Table_map "
                             f"{table.qualified_name} has {len(table.columns)}",
                             pos=pos, event_type=ename)
    if rows.table_id != table.table_id:
        raise MalformedEvent(f"rows event for table id {rows.table_id} decoded with the "
                             f"Table_map of id {table.table_id}", pos=pos, event_type=ename)
    data = rows.rows
    end = len(data)
    p = 0
    row = 0
    bmask, bplan = _plan(table, rows.columns_before, width)
    try:
        if kind == "update":
            if rows.columns_after is None:
                raise BadValue("update event without an after-image bitmap")
            amask, aplan = _plan(table, rows.columns_after, width)
            partial = type_code == PARTIAL_UPDATE_ROWS
            if not (bplan or aplan or partial):
                _no_columns(end)
                return
            while p < end:
                before, p = _image(table, data, p, bmask, bplan, width)
                plan = aplan
                if partial:
                    plan, p = _partial_plan(table, data, p, aplan)
                after, p = _image(table, data, p, amask, plan, width)
                yield RowChange("update", before, after)
                row += 1
        elif not bplan:
            _no_columns(end)
            return
        elif kind == "insert":
            while p < end:
                img, p = _image(table, data, p, bmask, bplan, width)
                yield RowChange("insert", None, img)
                row += 1
        else:
            while p < end:
                img, p = _image(table, data, p, bmask, bplan, width)
                yield RowChange("delete", img, None)
                row += 1
    except (IndexError, struct.error, BadValue, ValueError, OverflowError) as exc:
        raise _malformed(exc, table, row, pos, ename) from exc


def _no_columns(end: int) -> None:
    """Images without any present column take no bytes: rows could never end."""
    if end:
        raise BadValue(f"{end} bytes of rows but no column is present in the images")


def _malformed(exc: Exception, table: TableDef, row: int, pos: Position | None,
               ename: str) -> MalformedEvent:
    if isinstance(exc, (IndexError, struct.error)):
        why = "row image runs past the end of the event"
    else:
        why = str(exc) or exc.__class__.__name__
    return MalformedEvent(f"{table.qualified_name} row {row + 1}: {why}", pos=pos,
                          event_type=ename)


def decode_rows(table: TableDef, rows: RowsBody, type_code: int, *,
                pos: Position | None = None) -> list[RowChange]:
    """All row changes of an event as a list (see :func:`iter_row_changes`)."""
    return list(iter_row_changes(table, rows, type_code, pos=pos))


def is_json_diff(value: Any) -> bool:
    """True for the after-value of a partially updated JSON column."""
    return isinstance(value, JsonDiffList)
