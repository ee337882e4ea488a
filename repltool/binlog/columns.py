"""Column types and table definitions of row-based events: :class:`ColumnType`,
:class:`ColumnDef`, :class:`TableDef`, the type families, collation codecs and
mysqlbinlog's type labels.

The records :func:`repltool.binlog.coltypes.decode_table_map` builds from a
Table_map; :mod:`repltool.binlog.rows` decodes row images against them.  This
module imports neither, so both can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Callable

__all__ = ["ColumnType", "ColumnDef", "TableDef", "NUMERIC_TYPES", "CHARACTER_TYPES",
           "CHARSET_METADATA_TYPES", "ENUM_SET_TYPES", "BLOB_TYPES", "BINARY_COLLATION",
           "collation_codec", "type_label"]


class ColumnType(IntEnum):
    """enum_field_types (``include/field_types.h``) as written in Table_map events."""

    DECIMAL = 0
    TINY = 1
    SHORT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    NULL = 6
    TIMESTAMP = 7
    LONGLONG = 8
    INT24 = 9
    DATE = 10
    TIME = 11
    DATETIME = 12
    YEAR = 13
    NEWDATE = 14
    VARCHAR = 15
    BIT = 16
    TIMESTAMP2 = 17
    DATETIME2 = 18
    TIME2 = 19
    TYPED_ARRAY = 20
    VARCHAR_COMPRESSED = 140      # MariaDB 10.3+ column compression
    BLOB_COMPRESSED = 141         # MariaDB 10.3+ column compression
    VECTOR = 242
    INVALID = 243
    BOOL = 244
    JSON = 245
    NEWDECIMAL = 246
    ENUM = 247
    SET = 248
    TINY_BLOB = 249
    MEDIUM_BLOB = 250
    LONG_BLOB = 251
    BLOB = 252
    VAR_STRING = 253
    STRING = 254
    GEOMETRY = 255


T = ColumnType

#: Types covered by the SIGNEDNESS bitmap (``has_signedess_information_type``).
NUMERIC_TYPES = frozenset({T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.YEAR, T.FLOAT,
                           T.DOUBLE, T.DECIMAL, T.NEWDECIMAL})
#: Character columns for DEFAULT_CHARSET/COLUMN_CHARSET (by *real* type).
CHARACTER_TYPES = frozenset({T.STRING, T.VAR_STRING, T.VARCHAR, T.BLOB, T.TINY_BLOB,
                             T.MEDIUM_BLOB, T.LONG_BLOB, T.VARCHAR_COMPRESSED,
                             T.BLOB_COMPRESSED})
#: Columns DEFAULT_CHARSET/COLUMN_CHARSET count (log_event.cc ``is_character_type``
#: of the column's type): MySQL 9.x counts VECTOR (binary collation) among them.
CHARSET_METADATA_TYPES = CHARACTER_TYPES | {T.VECTOR}
ENUM_SET_TYPES = frozenset({T.ENUM, T.SET})
BLOB_TYPES = frozenset({T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB_COMPRESSED})

BINARY_COLLATION = 63


# ---- records ----

@dataclass(frozen=True, slots=True)
class ColumnDef:
    """One column of a Table_map, with its metadata decoded.

    ``type`` is the type code in the event; ``real_type`` resolves STRING (254)
    into ENUM/SET/STRING from its metadata (all other types: ``type``).
    Size fields that do not apply to the type are ``None``.  Optional-metadata
    fields are ``None`` when the event did not carry them (``binlog_row_metadata``
    MINIMAL, or servers before 8.0.1 / MariaDB 10.5).
    """

    index: int
    type: int
    real_type: int
    metadata: int                  # the metadata integer as mysqlbinlog prints ``meta=``
    nullable: bool
    max_length: int | None = None  # VARCHAR/STRING: max bytes; BLOB-likes: max per pack length
    pack_length: int | None = None  # BLOB/JSON/GEOMETRY/VECTOR length bytes; FLOAT/DOUBLE size;
                                    # ENUM/SET storage bytes
    precision: int | None = None   # NEWDECIMAL
    scale: int | None = None       # NEWDECIMAL
    fsp: int | None = None         # TIME2/DATETIME2/TIMESTAMP2
    bits: int | None = None        # BIT: total bits
    unsigned: bool | None = None   # numeric columns, from SIGNEDNESS
    collation: int | None = None   # character / ENUM / SET columns
    name: str | None = None
    enum_values: tuple[bytes, ...] | None = None
    set_values: tuple[bytes, ...] | None = None
    geometry_type: int | None = None
    visible: bool | None = None
    vector_dimensions: int | None = None
    element_type: int | None = None  # TYPED_ARRAY

    @property
    def is_numeric(self) -> bool:
        return self.type in NUMERIC_TYPES

    @property
    def is_character(self) -> bool:
        return self.real_type in CHARACTER_TYPES

    @property
    def is_binary(self) -> bool:
        """True when the column's collation is ``binary`` (63)."""
        return self.collation == BINARY_COLLATION

    @property
    def label(self) -> str:
        """``name`` when known, else mysqlbinlog's ``@N`` (1-based)."""
        return self.name if self.name is not None else f"@{self.index + 1}"


@dataclass(frozen=True, slots=True)
class TableDef:
    """A decoded Table_map: what :func:`repltool.binlog.rows.iter_row_changes` needs.

    ``primary_key`` holds ``(column index, prefix length)`` pairs in key order
    (prefix 0 = whole column) and is ``None`` when the map says nothing about a
    key (no FULL metadata).  ``decoders`` (one value decoder per column) is filled by
    :mod:`repltool.binlog.rows` when :func:`~repltool.binlog.coltypes.decode_table_map`
    builds the table; ``plans`` caches what row decoders derive per
    columns-present bitmap (see :meth:`trim_cache`).
    """

    table_id: int
    flags: int
    db: str
    table: str
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[tuple[int, int], ...] | None = None
    has_signedness: bool = False
    has_names: bool = False
    decoders: tuple[Callable[..., Any], ...] = field(default=(), repr=False, compare=False)
    json_columns: tuple[int, ...] = field(default=(), repr=False)
    plans: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def column_count(self) -> int:
        return len(self.columns)

    def trim_cache(self) -> None:
        """Empty the per-layout cache of row plans and walks (call before adding to it)
        when it holds ~2^18 column slots: one plan per distinct columns-present
        bitmap, and a log can give every Rows event its own bitmap."""
        if len(self.plans) * (len(self.columns) + 1) >= 1 << 18:
            self.plans.clear()

    @property
    def qualified_name(self) -> str:
        return f"`{self.db}`.`{self.table}`"

    def column(self, key: int | str) -> ColumnDef:
        """A column by index or by name (names only with COLUMN_NAME metadata)."""
        if isinstance(key, int):
            return self.columns[key]
        for c in self.columns:
            if c.name == key:
                return c
        raise KeyError(key)

    def index_of(self, name: str) -> int:
        return self.column(name).index


# ---- collations -> Python codecs (for turning character columns into str) ----

_CHARSET_CODECS: dict[str, str | None] = {
    "big5": "big5", "latin1": "cp1252", "latin2": "iso8859-2", "ascii": "ascii",
    "ujis": "euc_jp", "sjis": "shift_jis", "hebrew": "iso8859-8", "tis620": "tis-620",
    "euckr": "euc_kr", "koi8r": "koi8_r", "koi8u": "koi8_u", "gb2312": "gb2312",
    "greek": "iso8859-7", "cp1250": "cp1250", "gbk": "gbk", "latin5": "iso8859-9",
    "utf8mb3": "utf-8", "utf8mb4": "utf-8", "ucs2": "utf-16-be", "cp866": "cp866",
    "macce": "mac_latin2", "macroman": "mac_roman", "cp852": "cp852", "latin7": "iso8859-13",
    "cp1251": "cp1251", "utf16": "utf-16-be", "utf16le": "utf-16-le", "cp1256": "cp1256",
    "cp1257": "cp1257", "utf32": "utf-32-be", "binary": None, "cp932": "cp932",
    "eucjpms": "euc_jp", "gb18030": "gb18030", "cp850": "cp850",
}

# Default and common collation ids (mysql/share/charsets, ``SHOW COLLATION``).
_COLLATION_CHARSET: dict[int, str] = {
    1: "big5", 84: "big5", 5: "latin1", 8: "latin1", 15: "latin1", 31: "latin1", 47: "latin1",
    48: "latin1", 49: "latin1", 94: "latin1", 2: "latin2", 9: "latin2", 21: "latin2",
    27: "latin2", 77: "latin2", 11: "ascii", 65: "ascii", 12: "ujis", 91: "ujis",
    13: "sjis", 88: "sjis", 16: "hebrew", 71: "hebrew", 18: "tis620", 89: "tis620",
    19: "euckr", 85: "euckr", 7: "koi8r", 74: "koi8r", 22: "koi8u", 75: "koi8u",
    24: "gb2312", 86: "gb2312", 25: "greek", 70: "greek", 26: "cp1250", 34: "cp1250",
    44: "cp1250", 66: "cp1250", 99: "cp1250", 28: "gbk", 87: "gbk", 30: "latin5",
    78: "latin5", 33: "utf8mb3", 76: "utf8mb3", 83: "utf8mb3", 35: "ucs2", 90: "ucs2",
    36: "cp866", 68: "cp866", 38: "macce", 43: "macce", 39: "macroman", 53: "macroman",
    40: "cp852", 81: "cp852", 20: "latin7", 41: "latin7", 42: "latin7", 79: "latin7",
    14: "cp1251", 23: "cp1251", 50: "cp1251", 51: "cp1251", 52: "cp1251",
    45: "utf8mb4", 46: "utf8mb4", 54: "utf16", 55: "utf16", 56: "utf16le", 62: "utf16le",
    57: "cp1256", 67: "cp1256", 29: "cp1257", 58: "cp1257", 59: "cp1257",
    60: "utf32", 61: "utf32", 63: "binary", 95: "cp932", 96: "cp932", 97: "eucjpms",
    98: "eucjpms", 4: "cp850", 80: "cp850", 248: "gb18030", 249: "gb18030", 250: "gb18030",
}


def _charset_of(collation: int) -> str | None:
    name = _COLLATION_CHARSET.get(collation)
    if name is not None:
        return name
    if 101 <= collation <= 124:
        return "utf16"
    if 128 <= collation <= 159:
        return "ucs2"
    if 160 <= collation <= 183:
        return "utf32"
    if 192 <= collation <= 215 or collation == 223:
        return "utf8mb3"
    if 224 <= collation <= 247 or 255 <= collation <= 323:
        return "utf8mb4"     # utf8mb4 UCA / _0900 collations (MySQL 8.0)
    if 576 <= collation <= 671:
        return "utf8mb3" if collation < 608 else "utf8mb4"   # MariaDB 10.x extra collations
    if 2048 <= collation < 4096:
        return "utf8mb3" if collation < 2304 else "utf8mb4"  # MariaDB 10.10+ uca1400 ids
    return None


def collation_codec(collation: int | None) -> str | None:
    """Python codec for a collation id; ``None`` for binary or unknown collations."""
    if collation is None:
        return None
    cs = _charset_of(collation)
    return None if cs is None else _CHARSET_CODECS.get(cs)


# ---- type labels (mysqlbinlog -vv comments) ----

_BLOB_LABELS = {1: "TINYBLOB/TINYTEXT", 2: "BLOB/TEXT", 3: "MEDIUMBLOB/MEDIUMTEXT",
                4: "LONGBLOB/LONGTEXT"}
_INT_LABELS: dict[int, str] = {T.TINY: "TINYINT", T.SHORT: "SHORTINT", T.INT24: "MEDIUMINT", T.LONG: "INT",
               T.LONGLONG: "LONGINT"}


def type_label(col: ColumnDef) -> str:
    """The type name mysqlbinlog prints in ``-vv`` comments (``INT``, ``VARSTRING(64)``...)."""
    t = col.real_type
    if t in _INT_LABELS:
        return _INT_LABELS[t]
    if t == T.NEWDECIMAL:
        return f"DECIMAL({col.precision},{col.scale})"
    if t in (T.VARCHAR, T.VAR_STRING, T.VARCHAR_COMPRESSED):
        return f"VARSTRING({col.max_length})"
    if t == T.STRING:
        return f"STRING({col.max_length})"
    if t == T.ENUM:
        return f"ENUM({col.pack_length} byte{'s' if col.pack_length != 1 else ''})"
    if t == T.SET:
        return f"SET({col.pack_length} bytes)"
    if t in BLOB_TYPES:
        return _BLOB_LABELS.get(col.pack_length or 0, "BLOB/TEXT")
    if t == T.BIT:
        return f"BIT({col.bits})"
    if t in (T.DATETIME2, T.TIMESTAMP2, T.TIME2):
        return f"{T(t).name[:-1]}({col.fsp})"
    if t == T.FLOAT:
        return "FLOAT"
    if t == T.DOUBLE:
        return "DOUBLE"
    try:
        return T(t).name
    except ValueError:
        return f"TYPE{t}"
