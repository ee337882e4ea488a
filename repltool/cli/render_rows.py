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
import re
import struct
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Callable, Iterator

from ..binlog.coltypes import (
    ColumnDef, ColumnType as T, TableDef, decode_table_map, table_def_cache, type_label,
)
from ..binlog.columns import BLOB_TYPES
from ..binlog.events import Event, RowsBody, TableMapBody
from ..binlog.jsonb import JsonDiffList, JsonOpaque, json_to_text
from ..binlog.rows import (
    INT_FORMATS, PARTIAL_UPDATE_ROWS, ROW_KINDS, BadValue, Geometry, RowChange, RowImage,
    format_time, frac_layout, iter_row_changes, prefixed_span,
)
from ..binlog.temporal import (
    date_fields, datetime2_fields, decimal_digits, decimal_plan, decimal_size, timestamp2_fields,
)
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

    def text_block(self, ev: Event) -> tuple[list[str], int | None]:
        """The ``###`` text of a Rows event and its number of rows (None when the
        event's Table_map was not seen): :meth:`text_lines`' lines, joined into a
        few strings, written straight from the row images by per-layout text
        programs (:func:`text_program`).  An image the programs refuse goes to
        :meth:`text_lines`, which raises the decoder's error for it."""
        body = ev.body
        if not isinstance(body, RowsBody):
            return [], None
        table = self.tables.get(body.table_id)
        tc = ev.type_code
        kind = ROW_KINDS.get(tc)
        if (table is None or kind is None or tc == PARTIAL_UPDATE_ROWS
                or body.width > len(table.columns) or body.table_id != table.table_id):
            lines = list(self.text_lines(ev))
            return lines, None if table is None else _count_changes(lines)
        data = body.rows
        end = len(data)
        width = body.width
        first = text_program(table, body.columns_before, width, self.verbosity, self.numbered)
        second = None
        if kind == "update":
            if body.columns_after is None:      # the decoder raises its error
                lines = list(self.text_lines(ev))
                return lines, _count_changes(lines)
            second = text_program(table, body.columns_after, width, self.verbosity,
                                  self.numbered)
        if first is None and (kind != "update" or second is None) or not end:
            lines = list(self.text_lines(ev))     # no present column: rows cannot end
            return lines, _count_changes(lines)
        name = printable(f"{sql_identifier(table.db)}.{sql_identifier(table.table)}")
        out: list[str] = []
        p = 0
        n = 0
        try:
            if kind == "update":
                head, mid = f"### UPDATE {name}\n### WHERE", "### SET"
                while p < end:
                    out.append(head)
                    p = _image_text(first, data, p, out)
                    out.append(mid)
                    p = _image_text(second, data, p, out)
                    n += 1
            else:
                head = (f"### INSERT INTO {name}\n### SET" if kind == "insert"
                        else f"### DELETE FROM {name}\n### WHERE")
                while p < end:
                    out.append(head)
                    p = _image_text(first, data, p, out)
                    n += 1
        except (IndexError, struct.error, BadValue, ValueError, OverflowError):
            lines = list(self.text_lines(ev))   # raises the decoder's MalformedEvent
            return lines, _count_changes(lines)
        return ["\n".join(out)], n

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


# ---- text programs: row images straight to ``###`` lines ----

#: One column of a text program: (line prefix ``###   name=``, the value's text maker,
#: what follows a value, the whole line when the value is NULL).
_Step = tuple[str, "Callable[[bytes, int], tuple[str, int]]", str, str]


def _count_changes(lines: list[str]) -> int:
    return sum(1 for line in lines if line.startswith(("### INSERT", "### UPDATE", "### DELETE")))


def text_program(table: TableDef, bitmap: bytes, width: int, verbosity: int,
                 numbered: bool) -> tuple[_Step, ...] | None:
    """The text program of one image layout: a step per present column (see
    :data:`_Step`), cached on ``table``; None when no column is present."""
    key = ("text", bitmap, width, verbosity, numbered)
    hit = table.plans.get(key, _MISS)
    if hit is _MISS:
        table.trim_cache()
        mask = int.from_bytes(bitmap, "little") & ((1 << width) - 1)
        steps = []
        for i in range(width):
            if not mask >> i & 1:
                continue
            col = table.columns[i]
            pre = f"###   {f'@{i + 1}' if numbered else printable(col.label)}="
            post = null_post = ""
            if verbosity >= 2:
                note = f" /* {type_label(col)} meta={col.metadata} nullable={int(col.nullable)}"
                post, null_post = note + " is_null=0 */", note + " is_null=1 */"
            steps.append((pre, value_text_maker(col, table.decoders[i]), post,
                          pre + "NULL" + null_post))
        hit = table.plans[key] = tuple(steps) if steps else None
    return hit  # type: ignore[no-any-return]


_MISS = object()


def core_text_program(table: TableDef, bitmap: bytes, width: int, verbosity: int,
                      numbered: bool, row_text: Callable[..., Any]) -> Any:
    """:func:`text_program` for the compiled printer (``row_text``: the core's
    ``RowText``): per present column the kind of writer the core runs for it
    (:func:`core_step_kind`; ``X_CALL`` runs the Python maker) with the same line
    prefix, suffix and NULL line, cached on ``table``; None when no column is present."""
    key = ("core-text", bitmap, width, verbosity, numbered)
    hit = table.plans.get(key, _MISS)
    if hit is _MISS:
        steps = text_program(table, bitmap, width, verbosity, numbered)
        if steps is None:
            hit = None
        else:
            mask = int.from_bytes(bitmap, "little") & ((1 << width) - 1)
            present = [i for i in range(width) if mask >> i & 1]
            name = printable(f"{sql_identifier(table.db)}.{sql_identifier(table.table)}")
            hit = row_text(
                [(*core_step_kind(table.columns[i], table.decoders[i]),
                  _utf8(pre), _utf8(post), _utf8(null_line), make)
                 for i, (pre, make, post, null_line) in zip(present, steps)],
                _utf8(f"### INSERT INTO {name}\n### SET\n"),
                _utf8(f"### DELETE FROM {name}\n### WHERE\n"),
                _utf8(f"### UPDATE {name}\n### WHERE\n"), b"### SET\n")
        table.plans[key] = hit
    return hit


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


#: writer kinds of the compiled text programs (``_textcore.pxi``'s X_* codes)
(X_INT, X_STR, X_DECIMAL, X_DATETIME2, X_TIMESTAMP2, X_DATE, X_DOUBLE, X_ENUM, X_CALL,
 X_BITS) = range(10)


def core_step_kind(col: ColumnDef, dec: Callable[[bytes, int], tuple[Any, int]]
                   ) -> tuple[int, Any]:
    """(kind, arguments) of the compiled writer of a column: the same choice
    :func:`value_text_maker` makes, the same text."""
    t = col.real_type
    if getattr(dec, "unsupported", False):
        return X_CALL, None
    if t in INT_FORMATS or t == T.INT24:
        size = 3 if t == T.INT24 else struct.calcsize(INT_FORMATS[t][0])
        return X_INT, (size, 0 if col.unsigned else 1, 1 if col.unsigned is None else 0)
    if t in (T.VARCHAR, T.VAR_STRING, T.STRING, T.VARCHAR_COMPRESSED):
        return X_STR, 1 if (col.max_length or 0) < 256 else 2
    if t in BLOB_TYPES:
        return X_STR, col.pack_length or 0
    if t == T.NEWDECIMAL:
        groups, n_int = decimal_plan(col.precision or 0, col.scale or 0)
        return X_DECIMAL, (decimal_size(col.precision or 0, col.scale or 0), groups, n_int)
    if t == T.DATETIME2:
        return X_DATETIME2, col.fsp or 0
    if t == T.TIMESTAMP2:
        return X_TIMESTAMP2, col.fsp or 0
    if t in (T.DATE, T.NEWDATE):
        return X_DATE, None
    if t == T.ENUM:
        return X_ENUM, col.pack_length or 0
    if t in (T.SET, T.BIT):                 # as _bits_text
        size = ((col.metadata >> 8) + (1 if col.metadata & 0xFF else 0) if t == T.BIT
                else col.pack_length or 0)
        if size <= 8 and (t == T.SET or col.bits is not None):
            return X_BITS, (size, 1 if t == T.BIT else 0, col.bits if t == T.BIT else size * 8)
        return X_CALL, None
    if t == T.DOUBLE:
        return X_DOUBLE, None
    return X_CALL, None


def _image_text(program: tuple[_Step, ...] | None, data: bytes, p: int, out: list[str]) -> int:
    """Append the lines of the image at ``p`` to ``out``; returns where it ends."""
    if program is None:                # no column present: only the NULL bitmap (0 bytes)
        return p
    q = p + ((len(program) + 7) >> 3)
    if q > len(data):
        raise IndexError
    nulls = int.from_bytes(data[p:q], "little")
    p = q
    append = out.append
    if nulls:
        for pre, make, post, null_line in program:
            if nulls & 1:
                append(null_line)
            else:
                text, p = make(data, p)
                append(pre + text + post)
            nulls >>= 1
    else:
        for pre, make, post, _ in program:
            text, p = make(data, p)
            append(pre + text + post)
    return p


def value_text_maker(col: ColumnDef, dec: Callable[[bytes, int], tuple[Any, int]]
                     ) -> Callable[[bytes, int], tuple[str, int]]:
    """``(data, pos) -> (text, next pos)``: :func:`value_text` of the value that
    ``dec`` (the column's decoder, :func:`repltool.binlog.rows.column_decoder`) reads
    at ``pos``, written from the bytes without the value object for the common
    types; the same errors as ``dec`` for bytes ``dec`` refuses."""
    t = col.real_type
    if getattr(dec, "unsupported", False):
        return _via_value(col, dec)
    if t in INT_FORMATS:
        unpack = struct.Struct(INT_FORMATS[t][1 if col.unsigned else 0]).unpack_from
        size = struct.calcsize(INT_FORMATS[t][0])
        if col.unsigned is not None:
            def int_text(d: bytes, p: int) -> tuple[str, int]:
                return str(unpack(d, p)[0]), p + size
            return int_text
        wrap = 1 << (8 * size)

        def signed_text(d: bytes, p: int) -> tuple[str, int]:
            v = unpack(d, p)[0]
            return (f"{v} ({v + wrap})" if v < 0 else str(v)), p + size
        return signed_text
    if t in (T.VARCHAR, T.VAR_STRING, T.STRING, T.VARCHAR_COMPRESSED):
        return _quoted(1 if (col.max_length or 0) < 256 else 2)
    if t in BLOB_TYPES:
        return _quoted(col.pack_length or 0)
    if t == T.NEWDECIMAL:
        return _decimal_text(col.precision or 0, col.scale or 0)
    if t == T.DATETIME2:
        return _datetime2_text(col.fsp or 0)
    if t == T.TIMESTAMP2:
        return _timestamp2_text(col.fsp or 0)
    if t in (T.DATE, T.NEWDATE):
        return _date_text
    if t in (T.ENUM, T.SET, T.BIT):
        return _bits_text(col)
    if t == T.DOUBLE:
        unpack_d = struct.Struct("<d").unpack_from

        def double_text(d: bytes, p: int) -> tuple[str, int]:
            return "%-.20g" % unpack_d(d, p)[0], p + 8
        return double_text
    return _via_value(col, dec)


def _via_value(col: ColumnDef, dec: Callable[[bytes, int], tuple[Any, int]]
               ) -> Callable[[bytes, int], tuple[str, int]]:
    def via_value(d: bytes, p: int) -> tuple[str, int]:
        v, q = dec(d, p)
        return value_text(col, v, d[p:q]), q
    return via_value


def _bits_text(col: ColumnDef) -> Callable[[bytes, int], tuple[str, int]]:
    """ENUM (its index), SET and BIT (``b'0101'``) from their stored bytes."""
    t = col.real_type
    if t == T.BIT:
        size = (col.metadata >> 8) + (1 if col.metadata & 0xFF else 0)
    else:
        size = col.pack_length or 0
    order = "big" if t == T.BIT else "little"
    nbits = col.bits if t == T.BIT else size * 8

    def enum_text(d: bytes, p: int) -> tuple[str, int]:
        q = p + size
        if q > len(d):
            raise IndexError
        return str(int.from_bytes(d[p:q], "little")), q

    def bits_text(d: bytes, p: int) -> tuple[str, int]:
        q = p + size
        if q > len(d):
            raise IndexError
        return f"b'{int.from_bytes(d[p:q], order):0{nbits}b}'", q
    return enum_text if t == T.ENUM else bits_text


def _quoted(lenbytes: int) -> Callable[[bytes, int], tuple[str, int]]:
    """A length-prefixed string's stored bytes, quoted (:func:`quote_bytes`)."""
    if lenbytes == 1:
        def text1(d: bytes, p: int) -> tuple[str, int]:
            q = p + 1 + d[p]
            if q > len(d):
                raise IndexError
            raw = d[p + 1:q]
            if raw.isascii():
                text = raw.decode("ascii")
                if text.isprintable():
                    return "'" + text + "'", q
            return quote_bytes(raw), q
        return text1

    def textn(d: bytes, p: int) -> tuple[str, int]:
        s, q = prefixed_span(d, p, lenbytes)
        return quote_bytes(d[s:q]), q
    return textn


def _decimal_text(precision: int, scale: int) -> Callable[[bytes, int], tuple[str, int]]:
    """bin2decimal's digits (:func:`~repltool.binlog.temporal.decimal_digits`) as
    ``format(Decimal, 'f')`` writes them."""
    size = decimal_size(precision, scale)
    groups, n_int = decimal_plan(precision, scale)

    def text(d: bytes, p: int) -> tuple[str, int]:
        q = p + size
        if q > len(d):
            raise IndexError
        negative, ip, fp = decimal_digits(d[p:q], size, groups, n_int)
        return ("-" if negative else "") + (ip.lstrip("0") or "0") + ("." + fp if fp else ""), q
    return text


def _datetime2_text(fsp: int) -> Callable[[bytes, int], tuple[str, int]]:
    fb, mul = frac_layout(fsp)
    n = 5 + fb

    def text(d: bytes, p: int) -> tuple[str, int]:
        q = p + n
        if q > len(d):
            raise IndexError
        y, mo, day, h, mi, sec, us = datetime2_fields(d, p, fb, mul)
        s = f"'{y:04d}-{mo:02d}-{day:02d} {h:02d}:{mi:02d}:{sec:02d}"
        return (s + f".{us:06d}"[:fsp + 1] + "'" if fsp else s + "'"), q
    return text


def _timestamp2_text(fsp: int) -> Callable[[bytes, int], tuple[str, int]]:
    fb, mul = frac_layout(fsp)
    n = 4 + fb

    def text(d: bytes, p: int) -> tuple[str, int]:
        q = p + n
        if q > len(d):
            raise IndexError
        secs, us = timestamp2_fields(d, p, fb, mul)
        return (str(secs) + f".{us:06d}"[:fsp + 1] if fb else str(secs)), q
    return text


def _date_text(d: bytes, p: int) -> tuple[str, int]:
    q = p + 3
    if q > len(d):
        raise IndexError
    y, mo, day = date_fields(d, p)
    return f"'{y:04d}-{mo:02d}-{day:02d}'", q


# ---- values as mysqlbinlog text ----

def quote_bytes(raw: bytes) -> str:
    """mariadb-binlog's my_b_write_quoted: bytes below 0x20 as ``\\xNN``.

    Also as ``\\xNN`` (their UTF-8 bytes): bytes that are not UTF-8, and
    characters a terminal acts on (DEL, C1 controls, bidi controls).
    """
    text = raw.decode("utf-8", "backslashreplace")
    if text.isprintable():
        return "'" + text + "'"
    return "'" + _QUOTED_RE.sub(_quoted_char, text) + "'"


_QUOTED = {cp: "".join(f"\\x{b:02x}" for b in chr(cp).encode())
           for cp in (*range(0x20), *range(0x7F, 0xA0), *BIDI_CONTROLS, 0x2028, 0x2029)}
#: the characters of _QUOTED (a search finds the few in a long text faster than a
#: translate table walks every character)
_QUOTED_RE = re.compile("[" + "".join(sorted(re.escape(chr(cp)) for cp in _QUOTED)) + "]")


def _quoted_char(m: re.Match[str]) -> str:
    return _QUOTED[ord(m.group())]


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
