"""MySQL's binary JSON (``sql-common/json_binary.cc``) and partial-update diffs
(``sql/json_diff.cc``), decoded to Python values.

Binary layout (json_binary.h): one type byte, then the value.  Objects and
arrays come in a small (16-bit offsets) and a large (32-bit offsets) form::

    element-count  size  key-entry*  value-entry*  key*  value*

offsets are relative to the first byte after the type byte of the container;
a value entry holds small scalars (literal, int16, uint16, and int32/uint32 in
the large form) inline.  Strings and opaque values carry a variable-length
length: 7 bits per byte, low group first, high bit = more.

Python values: dict, list, str, int, float, bool, None (JSON null), and for
opaque values Decimal / date / datetime / timedelta when MySQL stored a SQL
temporal or DECIMAL, else :class:`JsonOpaque`.  Every offset is checked
against its container; nesting depth and the number of nodes are bounded so
that crafted offsets (a value pointing at its own container) cannot recurse
forever or blow up exponentially.  Errors raise :class:`JsonError`, which the
row decoder turns into :class:`~repltool.errors.MalformedEvent`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, NamedTuple

from .structs import read_packed_int
from .temporal import (
    BadValue, datetime_from_packed, decimal_size, decode_decimal, format_time, time_from_packed,
)

__all__ = ["JsonError", "JsonOpaque", "JsonDiff", "JsonDiffList", "decode_json", "decode_json_diff",
           "json_to_text"]

SMALL_OBJECT, LARGE_OBJECT, SMALL_ARRAY, LARGE_ARRAY = 0x00, 0x01, 0x02, 0x03
LITERAL, INT16, UINT16, INT32, UINT32, INT64, UINT64, DOUBLE, STRING = range(0x04, 0x0D)
OPAQUE = 0x0F

MAX_DEPTH = 150          # MySQL's JSON_DOCUMENT_MAX_DEPTH is 100

_I16 = struct.Struct("<h").unpack_from
_U16 = struct.Struct("<H").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from
_I64 = struct.Struct("<q").unpack_from
_U64 = struct.Struct("<Q").unpack_from
_DBL = struct.Struct("<d").unpack_from
# the scalar types: (width, unpacker)
_SCALARS = {INT16: (2, _I16), UINT16: (2, _U16), INT32: (4, _I32), UINT32: (4, _U32),
            INT64: (8, _I64), UINT64: (8, _U64), DOUBLE: (8, _DBL)}


class JsonError(ValueError):
    """The bytes are not valid MySQL binary JSON."""


@dataclass(frozen=True, slots=True)
class JsonOpaque:
    """An opaque JSON value: a SQL value of ``field_type`` kept as its bytes."""

    field_type: int
    data: bytes


class JsonDiff(NamedTuple):
    """One operation of a partial JSON update (``Json_diff``)."""

    op: str               # "REPLACE" | "INSERT" | "REMOVE"
    path: str             # JSON path text, e.g. ``$.a[1]``
    value: Any = None     # absent (None) for REMOVE


class JsonDiffList(list):  # type: ignore[type-arg]
    """The diff operations that replace a JSON column's value in a partial update."""

    __slots__ = ()


_DIFF_OPS = ("REPLACE", "INSERT", "REMOVE")


class _Parser:
    __slots__ = ("buf", "budget")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        # What a document decodes to is bounded by its bytes: MySQL's serializer
        # (json_binary.cc serialize) writes every value once, so the values and
        # the key and string bytes decoded from a well-formed document add up to
        # less than its size.  Crafted offsets that point several entries at one
        # sub-document would otherwise decode it again and again (quadratic, or
        # exponential when nested): every value costs 1, every key or string
        # byte 1, and the budget is twice the document's size.
        self.budget = 2 * len(buf) + 16

    def _spend(self, n: int) -> None:
        self.budget -= n
        if self.budget < 0:
            raise JsonError(f"JSON document of {len(self.buf)} bytes decodes to more than "
                            "twice its size (entries sharing sub-documents)")

    def value(self, t: int, pos: int, end: int, depth: int) -> Any:
        self.budget -= 1
        if self.budget < 0:
            self._spend(0)
        if depth > MAX_DEPTH:
            raise JsonError(f"JSON nesting deeper than {MAX_DEPTH}")
        buf = self.buf
        if t <= LARGE_ARRAY:
            return self.container(pos, end, t & 1 == 1, t <= LARGE_OBJECT, depth)
        if t == LITERAL:
            self._need(pos, 1, end)
            return _literal(buf[pos])
        scalar = _SCALARS.get(t)
        if scalar is not None:
            width, unpack = scalar
            self._need(pos, width, end)
            return unpack(buf, pos)[0]
        if t == STRING:
            n, pos = self._varlen(pos, end)
            self._need(pos, n, end)
            self._spend(n)
            return buf[pos:pos + n].decode("utf-8", "replace")
        if t == OPAQUE:
            self._need(pos, 1, end)
            ftype = buf[pos]
            n, pos = self._varlen(pos + 1, end)
            self._need(pos, n, end)
            self._spend(n)
            return opaque_value(ftype, buf[pos:pos + n])
        raise JsonError(f"unknown JSON value type 0x{t:02x}")

    def container(self, base: int, end: int, large: bool, is_object: bool, depth: int) -> Any:
        buf = self.buf
        osz = 4 if large else 2
        rd = _U32 if large else _U16
        self._need(base, 2 * osz, end)
        count = rd(buf, base)[0]
        size = rd(buf, base + osz)[0]
        if size > end - base:
            raise JsonError(f"JSON container size {size} exceeds the {end - base} bytes left")
        cend = base + size
        key_entry = osz + 2 if is_object else 0
        value_entry = 1 + osz
        header = 2 * osz + count * (key_entry + value_entry)
        if header > size:
            raise JsonError(f"JSON container of {size} bytes cannot hold {count} entries")
        self._spend(count)
        values_at = base + 2 * osz + count * key_entry
        out_values = []
        for i in range(count):
            ve = values_at + i * value_entry
            t = buf[ve]
            scalar = _SCALARS.get(t)
            if t == LITERAL:
                v = _literal(buf[ve + 1])
            elif scalar is not None and scalar[0] <= osz:
                # inlined in the value entry (json_binary.cc inlined_type): 16-bit
                # integers always, 32-bit ones in the large form
                v = scalar[1](buf, ve + 1)[0]
            else:
                off = rd(buf, ve + 1)[0]
                if off < header or off >= size:
                    raise JsonError(f"JSON value offset {off} outside its container "
                                    f"({header}..{size})")
                v = self.value(t, base + off, cend, depth + 1)
            out_values.append(v)
        if not is_object:
            return out_values
        out: dict[str, Any] = {}
        for i in range(count):
            ke = base + 2 * osz + i * key_entry
            koff = rd(buf, ke)[0]
            klen = _U16(buf, ke + osz)[0]
            if koff < header or koff + klen > size:
                raise JsonError(f"JSON key at {koff}+{klen} outside its container")
            self._spend(klen)
            key = buf[base + koff:base + koff + klen].decode("utf-8", "replace")
            out[key] = out_values[i]
        return out

    def _varlen(self, pos: int, end: int) -> tuple[int, int]:
        n = 0
        buf = self.buf
        for i in range(5):
            if pos >= end:
                raise JsonError("JSON length runs past the end of the value")
            b = buf[pos]
            pos += 1
            n |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return n, pos
        raise JsonError("JSON variable-length length longer than 5 bytes")

    @staticmethod
    def _need(pos: int, n: int, end: int) -> None:
        if pos + n > end:
            raise JsonError(f"JSON value needs {n} bytes at {pos}, only {max(0, end - pos)} left")


def _literal(b: int) -> Any:
    if b == 0:
        return None
    if b == 1:
        return True
    if b == 2:
        return False
    raise JsonError(f"unknown JSON literal 0x{b:02x}")


def decode_json(data: bytes) -> Any:
    """A MySQL binary JSON document -> Python value (empty bytes = JSON null).

    Example::

        >>> decode_json(bytes.fromhex('0c0161'))
        'a'
        >>> decode_json(bytes.fromhex('0201000700050700'))
        [7]
    """
    if not data:
        return None
    try:
        return _Parser(data).value(data[0], 1, len(data), 0)
    except (IndexError, struct.error) as exc:
        raise JsonError(f"JSON value truncated: {exc}") from exc


def decode_json_diff(data: bytes) -> JsonDiffList:
    """The operations of a partial JSON update (``Json_diff_vector::read_binary``).

    Each: op byte (0 REPLACE, 1 INSERT, 2 REMOVE), packed path length, path,
    and unless REMOVE, packed value length and a binary JSON value.
    """
    out = JsonDiffList()
    p, end = 0, len(data)
    while p < end:
        op = data[p]
        if op > 2:
            raise JsonError(f"unknown JSON diff operation {op}")
        n, p = _packed(data, p + 1)
        if p + n > end:
            raise JsonError("JSON diff path runs past the end of the diff")
        path = data[p:p + n].decode("utf-8", "replace")
        p += n
        value = None
        if op != 2:
            n, p = _packed(data, p)
            if p + n > end:
                raise JsonError("JSON diff value runs past the end of the diff")
            value = decode_json(data[p:p + n])
            p += n
        out.append(JsonDiff(_DIFF_OPS[op], path, value))
    return out


def _packed(data: bytes, p: int) -> tuple[int, int]:
    """net_field_length: a packed integer at ``data[p]`` -> (value, next position)."""
    if p >= len(data):
        raise JsonError("packed integer runs past the end")
    got = read_packed_int(data, p)
    if got is None:
        raise JsonError(f"bad packed integer prefix 0x{data[p]:02x}")
    return got


def opaque_value(ftype: int, data: bytes) -> Any:
    """An opaque JSON scalar: SQL DECIMAL/temporal values decoded, others kept as bytes."""
    if ftype == 246 and len(data) >= 2:          # NEWDECIMAL: precision, scale, binary
        prec, scale = data[0], data[1]
        if 0 < prec and scale <= prec:
            size = decimal_size(prec, scale)
            if len(data) - 2 >= size:
                try:
                    return decode_decimal(data[2:2 + size], prec, scale)
                except BadValue as exc:
                    raise JsonError(str(exc)) from exc
        raise JsonError("opaque DECIMAL with a bad precision/scale/length")
    if ftype in (7, 10, 12, 14, 11) and len(data) >= 8:
        packed = _I64(data, 0)[0]
        if ftype == 11:
            return time_from_packed(packed)
        dt = datetime_from_packed(packed)
        if ftype in (10, 14):
            return dt[:10] if isinstance(dt, str) else dt.date()
        return dt
    return JsonOpaque(ftype, bytes(data))


def json_to_text(value: Any) -> str:
    """MySQL-style JSON text for a decoded value (``{"a": 1, "b": [true, null]}``).

    DECIMAL opaques print as numbers, temporals as quoted strings, other
    opaques as ``"base64:typeN:..."`` like MySQL's JSON_QUOTE of an opaque.
    """
    import base64
    import json
    from datetime import date, datetime, timedelta
    from decimal import Decimal

    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {json_to_text(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(json_to_text(v) for v in value) + "]"
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):      # MySQL prints JSON datetimes with 6 decimals
        return json.dumps(f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
                          f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}."
                          f"{value.microsecond:06d}")
    if isinstance(value, date):
        return json.dumps(f"{value.year:04d}-{value.month:02d}-{value.day:02d}")
    if isinstance(value, timedelta):
        return json.dumps(format_time(value, 6))
    if isinstance(value, JsonOpaque):
        return json.dumps(f"base64:type{value.field_type}:"
                          f"{base64.b64encode(value.data).decode()}")
    return json.dumps(str(value))
