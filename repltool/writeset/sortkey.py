"""Key-part sort keys: ``Field::make_sort_key`` images built from row-image values.

MySQL appends ``make_sort_key`` of each key part to the writeset key string
(``sql/rpl_write_set_handler.cc`` add_pke; images from ``sql/field.cc``,
format-spec §6b):

* signed integers: big-endian with the sign bit flipped; unsigned and YEAR:
  big-endian (the column type's width);
* DECIMAL, DATETIME2, TIMESTAMP2, TIME2, BIT: the stored (binlog) bytes;
* DATE: its 3 bytes big-endian; old TIMESTAMP and DATETIME: big-endian; old
  TIME: big-endian with the sign bit flipped;
* ENUM / SET: the pack-length integer big-endian;
* FLOAT / DOUBLE: ``change_double_for_sort`` (IEEE big-endian; negatives
  inverted; positives get the sign bit set and the exponent moved up one; 0
  and -0 both ``80 00 ...``);
* strings: the collation's weight string (``strnxfrm`` with MySQL's lengths
  and padding, :mod:`repltool.writeset.collation`); a collation or part shape
  that is not reproduced exactly is reported by :func:`string_key_problem`
  and its table counts as having no usable key.

Each builder takes ``(value, raw)`` - the decoded value and the value's bytes
as stored in the row image (:class:`repltool.binlog.rows.RowImage`) - and
returns ``(sort key bytes, key value)``; the key value is the decoded value,
truncated for a prefix key part.
"""

from __future__ import annotations

import struct
from typing import Any, Callable

from ..binlog.coltypes import BLOB_TYPES, ColumnDef, ColumnType as T
from .collation import Collation, sort_key_function

__all__ = ["SortKey", "sort_key_builder", "string_key_problem", "double_sort_key", "float_sort_key"]

#: (value, raw stored bytes) -> (sort key, value as keyed)
SortKey = Callable[[Any, bytes], "tuple[bytes, Any]"]

_INTS = frozenset({T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG})
_STRINGS = frozenset({T.VARCHAR, T.VAR_STRING, T.STRING, *BLOB_TYPES})
_RAW = frozenset({T.NEWDECIMAL, T.DATETIME2, T.TIMESTAMP2, T.TIME2, T.BIT, T.YEAR,
                  T.DECIMAL})
_REVERSED = frozenset({T.DATE, T.NEWDATE, T.DATETIME, T.TIMESTAMP, T.ENUM, T.SET})

_D = struct.Struct(">d")
_F = struct.Struct(">f")


def double_sort_key(value: float) -> bytes:
    """``change_double_for_sort`` (sql/field.cc) of a DOUBLE.

    Example::

        >>> double_sort_key(0.0) == double_sort_key(-0.0) == bytes.fromhex("8000000000000000")
        True
        >>> double_sort_key(-1.0) < double_sort_key(1.0) < double_sort_key(2.0)
        True
    """
    return _ieee_sort_key(value, _D, 4)


def float_sort_key(value: float) -> bytes:
    """``Field_float::make_sort_key`` of a FLOAT (same transform, 8-bit exponent)."""
    return _ieee_sort_key(value, _F, 7)


def _ieee_sort_key(value: float, s: struct.Struct, shift: int) -> bytes:
    if value == 0.0:
        return b"\x80" + bytes(s.size - 1)
    b = bytearray(s.pack(value))
    if b[0] & 0x80:
        return bytes(x ^ 0xFF for x in b)
    exp = (((b[0] << 8) | b[1] | 0x8000) + (1 << shift)) & 0xFFFF
    b[0], b[1] = exp >> 8, exp & 0xFF
    return bytes(b)


def _int_key(signed: bool) -> SortKey:
    if signed:
        def key(value: Any, raw: bytes) -> tuple[bytes, Any]:
            b = bytearray(raw[::-1])
            b[0] ^= 0x80
            return bytes(b), value
    else:
        def key(value: Any, raw: bytes) -> tuple[bytes, Any]:
            return raw[::-1], value
    key.int_signed = signed  # type: ignore[attr-defined]  # read by writeset.fastkeys
    return key


def string_key_problem(col: ColumnDef, coll: Collation, prefix: int = 0) -> str | None:
    """Why the sort key of a string key part cannot be MySQL's own bytes (``None``: it can).

    Exact: a whole ``CHAR``/``VARCHAR``/``BINARY``/``VARBINARY`` column under a
    collation :mod:`repltool.writeset.collation` implements, and ``binary``
    prefix and BLOB parts (their bytes, as before).  Not exact: any other
    collation, or ``TEXT`` / column-prefix parts under a non-binary collation.
    The extractor then counts the table as having no usable key (safe).
    """
    if col.real_type not in _STRINGS:
        return None
    if not coll.exact:
        return coll.reason
    if coll.binary:
        return None
    if col.real_type in BLOB_TYPES:
        return f"collation {coll.name}: TEXT key parts are not reproduced"
    if prefix:
        return f"collation {coll.name}: column-prefix key parts are not reproduced"
    if col.max_length is None:
        return "the column's length is not in the log"
    return None


def _string_key(col: ColumnDef, coll: Collation, prefix: int, key_length: int | None = None
                ) -> SortKey:
    fixed = col.real_type == T.STRING
    if string_key_problem(col, coll, prefix) is None and not prefix and col.max_length \
            and col.real_type not in BLOB_TYPES:
        lb = 1 if col.max_length < 256 else 2       # the row image's length prefix
        weights = sort_key_function(coll, fixed=fixed, max_length=col.max_length,
                                    key_length=key_length)

        def key(value: Any, raw: bytes) -> tuple[bytes, Any]:
            return weights(raw[lb:]), value
        plan = getattr(weights, "ascii_plan", None)
        if plan is not None:    # read by repltool.writeset.fastkeys (the compiled core)
            key.ascii_plan = (lb, plan)  # type: ignore[attr-defined]
        return key
    if not coll.binary:
        def unkeyable(value: Any, raw: bytes) -> tuple[bytes, Any]:
            raise ValueError(string_key_problem(col, coll, prefix) or "not exact")
        return unkeyable

    # binary prefix and BLOB parts: the (truncated) bytes
    def key(value: Any, raw: bytes) -> tuple[bytes, Any]:
        data = bytes(value) if isinstance(value, (bytes, bytearray)) else \
            str(value).encode("utf-8")
        if prefix:
            data = data[:prefix]
        return data, data
    return key


def sort_key_builder(col: ColumnDef, *, unsigned: bool | None, collation: Collation,
                     prefix: int = 0, key_length: int | None = None) -> SortKey:
    """The sort-key function of one key part.

    :param unsigned: signedness when the Table_map has none (schema), else ignored.
    :param collation: the column's collation (strings only).
    :param prefix: key-part prefix length in characters (0: the whole column).
    :param key_length: a whole string column's key-part length in bytes: its weight
        string fills ``strnxfrmlen(key_length)`` (8.0.43's first entry) instead of
        ``strnxfrmlen(pack length)`` (the "old format" entry; see
        :func:`repltool.writeset.collation.field_sort_key`).
    """
    t = col.real_type
    if t in _INTS:
        u = col.unsigned if col.unsigned is not None else bool(unsigned)
        return _int_key(not u)
    if t in _STRINGS:
        return _string_key(col, collation, prefix, key_length)
    if t == T.DOUBLE:
        return lambda value, raw: (double_sort_key(value), value)
    if t == T.FLOAT:
        return lambda value, raw: (float_sort_key(value), value)
    if t == T.TIME:
        return lambda value, raw: (bytes((raw[2] ^ 0x80, raw[1], raw[0])), value)
    if t in _REVERSED:
        return lambda value, raw: (raw[::-1], value)
    # _RAW and anything exotic (JSON, GEOMETRY ... cannot be unique key parts).
    return lambda value, raw: (raw, value)
