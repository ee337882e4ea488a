"""Column types of row-based events: Table_map_event -> :class:`TableDef`.

Layouts follow MySQL 8.0 ``libbinlogevents/src/rows_event.cpp`` (Table_map_event,
Optional_metadata_fields), ``sql/log_event.cc`` (Table_map_log_event::save_field_metadata
callers, ``log_event_print_value``) and ``sql/rpl_utility.cc`` (read_field_metadata);
format-spec §4.9 and gotchas 25/26.  MariaDB writes the same layout (it ported
``binlog_row_metadata``), plus column-compressed types 140/141.

The per-column metadata block and the optional-metadata TLV values are
declared with construct (:data:`OPTIONAL_METADATA`); every construct error is
translated to :class:`~repltool.errors.MalformedEvent` in :func:`decode_table_map`.
The per-value decoders used by :mod:`repltool.binlog.rows` are attached to each
:class:`TableDef` once, so the row hot loop does no lookups by type.  The records
and type families themselves are in :mod:`repltool.binlog.columns` (re-exported
here).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

from construct import (
    Bytes, ConstructError, GreedyBytes, GreedyRange, Int8ul, Prefixed, PrefixedArray, Struct,
    Terminated,
)

from ..errors import MalformedEvent
from ..positions import Position
from .bounded import BoundedCache
from .columns import (
    BINARY_COLLATION, BLOB_TYPES, CHARACTER_TYPES, CHARSET_METADATA_TYPES, ENUM_SET_TYPES,
    NUMERIC_TYPES, ColumnDef, ColumnType, TableDef, collation_codec, type_label,
)
from .constants import MAX_COLUMNS
from .events import TableMapBody
from .rows import attach_decoders
from .structs import PackedInt

__all__ = ["ColumnType", "OptionalMetadata", "ColumnDef", "TableDef", "decode_table_map",
           "table_def_cache", "table_body_cache", "BINARY_COLLATION", "BLOB_TYPES", "CHARACTER_TYPES",
           "CHARSET_METADATA_TYPES", "ENUM_SET_TYPES", "NUMERIC_TYPES",
           "collation_codec", "type_label"]


T = ColumnType


class OptionalMetadata(IntEnum):
    """Optional_metadata_field_type (rows_event.h; 13 from MySQL 9.0)."""

    SIGNEDNESS = 1
    DEFAULT_CHARSET = 2
    COLUMN_CHARSET = 3
    COLUMN_NAME = 4
    SET_STR_VALUE = 5
    ENUM_STR_VALUE = 6
    GEOMETRY_TYPE = 7
    SIMPLE_PRIMARY_KEY = 8
    PRIMARY_KEY_WITH_PREFIX = 9
    ENUM_AND_SET_DEFAULT_CHARSET = 10
    ENUM_AND_SET_COLUMN_CHARSET = 11
    COLUMN_VISIBILITY = 12
    VECTOR_DIMENSIONALITY = 13


#: Bytes of per-column metadata in the Table_map metadata block, by column type
#: (``Table_map_log_event`` save_field_metadata; 0 for every type not listed).
METADATA_SIZE: dict[int, int] = {
    T.FLOAT: 1, T.DOUBLE: 1, T.BLOB: 1, T.TINY_BLOB: 1, T.MEDIUM_BLOB: 1, T.LONG_BLOB: 1,
    T.GEOMETRY: 1, T.JSON: 1, T.VECTOR: 1, T.BLOB_COMPRESSED: 1,
    T.TIMESTAMP2: 1, T.DATETIME2: 1, T.TIME2: 1,
    T.VARCHAR: 2, T.VARCHAR_COMPRESSED: 2, T.BIT: 2, T.NEWDECIMAL: 2,
    T.STRING: 2, T.VAR_STRING: 2, T.ENUM: 2, T.SET: 2,
}

# ---- optional metadata value layouts (rows_event.cpp Optional_metadata_fields ctor) ----

_packed_list = Struct("entries" / GreedyRange(PackedInt), Terminated)
_packed_pairs = Struct("entries" / GreedyRange(Struct("a" / PackedInt, "b" / PackedInt)),
                       Terminated)
_default_charset = Struct(
    "default" / PackedInt,
    "entries" / GreedyRange(Struct("a" / PackedInt, "b" / PackedInt)),
    Terminated)
_names = Struct("entries" / GreedyRange(Prefixed(PackedInt, GreedyBytes)), Terminated)
_str_values = Struct(
    "entries" / GreedyRange(PrefixedArray(PackedInt, Prefixed(PackedInt, GreedyBytes))),
    Terminated)

#: The per-column metadata block: a sequence of per-type fields (sizes above).
_u8 = Int8ul


def _parse(struct: Any, data: bytes, what: str, ctx: "_Ctx") -> Any:
    try:
        return struct.parse(data)
    except ConstructError as exc:
        detail = str(exc).split("\n")[-1].strip() or exc.__class__.__name__
        raise ctx.error(f"optional metadata {what}: {detail}") from exc


@dataclass(frozen=True, slots=True)
class _Ctx:
    pos: Position | None
    event_type: str | None

    def error(self, message: str) -> MalformedEvent:
        return MalformedEvent(message, pos=self.pos, event_type=self.event_type or "TABLE_MAP_EVENT")


# ---- decoding ----

def _metadata_field(ctype: int, block: bytes, p: int) -> tuple[dict[str, Any], int, int]:
    """Decode one column's metadata at ``block[p:]``: (fields, metadata int, size)."""
    size = METADATA_SIZE.get(ctype, 0)
    if ctype == T.TYPED_ARRAY:
        if p >= len(block):
            raise IndexError
        elem = block[p]
        inner, meta, isize = _metadata_field(elem, block, p + 1)
        if elem in (T.VARCHAR, T.VAR_STRING, T.STRING):
            isize = 3      # element length is stored in 3 bytes for typed arrays
            meta = int.from_bytes(block[p + 1:p + 4], "little")
        return {"element_type": elem, **inner}, meta, 1 + isize
    if p + size > len(block):
        raise IndexError
    b = block[p:p + size]
    out: dict[str, Any] = {}
    if size == 0:
        meta = 0
    elif ctype in (T.FLOAT, T.DOUBLE):
        meta = b[0]
        out["pack_length"] = meta
    elif ctype in (T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.GEOMETRY, T.JSON,
                   T.VECTOR, T.BLOB_COMPRESSED):
        meta = b[0]
        out["pack_length"] = meta
        if 1 <= meta <= 4:
            out["max_length"] = (1 << (8 * meta)) - 1
    elif ctype in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
        meta = b[0]
        out["fsp"] = meta
    elif ctype in (T.VARCHAR, T.VARCHAR_COMPRESSED):
        meta = b[0] | b[1] << 8
        out["max_length"] = meta
    elif ctype == T.BIT:
        meta = b[0] | b[1] << 8
        out["bits"] = b[1] * 8 + b[0]
    elif ctype == T.NEWDECIMAL:
        meta = b[0] << 8 | b[1]
        out["precision"], out["scale"] = b[0], b[1]
    else:   # STRING, VAR_STRING, ENUM, SET: big-endian (gotcha 25)
        meta = b[0] << 8 | b[1]
        real, length = b[0], b[1]
        if real & 0x30 != 0x30:
            # CHAR longer than 255 bytes: high length bits hidden in byte0.
            length |= ((real & 0x30) ^ 0x30) << 4
            real |= 0x30
        out["real_type"] = real if real in (T.ENUM, T.SET, T.STRING, T.VAR_STRING) else ctype
        if out["real_type"] in (T.ENUM, T.SET):
            out["pack_length"] = length
        else:
            out["max_length"] = length
    return out, meta, size


def _msb_bits(data: bytes, count: int) -> list[bool]:
    return [bool(data[i >> 3] & (0x80 >> (i & 7))) if (i >> 3) < len(data) else False
            for i in range(count)]


#: Servers repeat an identical Table_map before every statement: decoded
#: tables are kept by body, at most TABLE_CACHE_SIZE of them and
#: TABLE_CACHE_COLUMNS columns in all (a decoded column costs ~750 bytes: a
#: flood of distinct 4096-column Table_maps stays within ~25 MB).
TABLE_CACHE_SIZE = 4096
TABLE_CACHE_COLUMNS = 1 << 15
#: bodies kept per table (db, table) in the caches by body: a reopened table gets a new
#: table id (MySQL: after ALTER, FLUSH TABLES, an eviction from the table cache), the
#: old id's body is not seen again, and a long log's stream of them would fill the
#: caches up to their bounds (bench/results/rssws.md)
TABLE_CACHE_PER_TABLE = 4


def _table_group(_body: Any, table: Any) -> tuple[str, str]:
    return table.db, table.table


_TABLE_CACHE: BoundedCache[TableMapBody, TableDef] = BoundedCache(
    TABLE_CACHE_SIZE, TABLE_CACHE_COLUMNS, lambda body, _t: body.column_count + 1,
    _table_group, TABLE_CACHE_PER_TABLE)


#: decoded tables by definition (:func:`_definition`: the body without its table
#: id), the same bounds: a table that gets a new table id shares the decoded one
_DEFINITIONS: BoundedCache[tuple[Any, ...], TableDef] = BoundedCache(
    TABLE_CACHE_SIZE, TABLE_CACHE_COLUMNS, lambda _key, table: len(table.columns) + 1)


def table_body_cache() -> BoundedCache[Any, TableDef]:
    """:func:`table_def_cache` for Table_map bodies (bytes -> TableDef), at most
    :data:`TABLE_CACHE_PER_TABLE` bodies of one table."""
    return BoundedCache(TABLE_CACHE_SIZE, TABLE_CACHE_COLUMNS,
                        lambda _key, table: len(table.columns) + 1, _table_group,
                        TABLE_CACHE_PER_TABLE)


def table_def_cache() -> BoundedCache[Any, TableDef]:
    """A map to decoded tables (table id -> TableDef, Table_map bytes -> TableDef)
    with the bounds of the decoded-table cache: a log that maps thousands of
    distinct tables keeps only the latest (a table id's mapping lasts a
    statement in MySQL: Rows_log_event's STMT_END_F clears them)."""
    return BoundedCache(TABLE_CACHE_SIZE, TABLE_CACHE_COLUMNS,
                        lambda _key, table: len(table.columns) + 1)


def decode_table_map(body: TableMapBody, *, pos: Position | None = None,
                     event_type: str | None = None) -> TableDef:
    """Decode a Table_map body's column types, metadata and optional metadata.

    Identical bodies return the same (immutable) :class:`TableDef`, so
    per-table decoder plans are built once per table, not once per statement.

    :param pos: where the event is (for error messages).
    :raises MalformedEvent: when the metadata block or an optional-metadata
        field does not fit the column types.  Unknown optional-metadata types
        are skipped.
    """
    hit = _TABLE_CACHE.get(body)
    if hit is not None:
        return hit
    definition = _definition(body)
    twin = _DEFINITIONS.get(definition)
    if twin is not None:
        # the same table under a new table id (MySQL gives a reopened table - after
        # an ALTER, a FLUSH, an eviction from the table definition cache - a new id):
        # everything but the id is shared, so a long log's stream of ids costs one
        # small TableDef each, not its columns, decoders and row plans again
        table = replace(twin, table_id=body.table_id)
    else:
        table = _DEFINITIONS[definition] = _decode_table_map(body, _Ctx(pos, event_type))
    _TABLE_CACHE[body] = table
    return table


def _definition(body: TableMapBody) -> tuple[Any, ...]:
    """Everything of a Table_map body that its :class:`TableDef` depends on but the
    table id."""
    return (body.flags, body.db, body.table, body.column_count, body.column_types,
            body.metadata, body.null_bitmap, body.optional_metadata)


def _decode_table_map(body: TableMapBody, ctx: _Ctx) -> TableDef:
    n = body.column_count
    types = body.column_types
    if n > MAX_COLUMNS:
        raise ctx.error(f"{n} columns: more than MySQL's {MAX_COLUMNS} (MAX_FIELDS)")
    if len(types) != n:
        raise ctx.error(f"{len(types)} column types for {n} columns")
    block = body.metadata
    nulls = body.null_bitmap
    cols: list[dict[str, Any]] = []
    p = 0
    for i, ctype in enumerate(types):
        try:
            extra, meta, size = _metadata_field(ctype, block, p)
        except IndexError:
            if not block:
                # 5.1 pre-GA servers wrote no metadata block: types are kept,
                # row decoding refuses types whose size depends on metadata.
                extra, meta, size = {"missing_metadata": True}, 0, 0
            else:
                raise ctx.error(f"metadata block of {len(block)} bytes ends at column {i + 1} "
                                f"(type {ctype})") from None
        p += size
        nullable = bool(nulls[i >> 3] & (1 << (i & 7))) if (i >> 3) < len(nulls) else True
        d = {"index": i, "type": ctype, "real_type": ctype, "metadata": meta,
             "nullable": nullable, **extra}
        cols.append(d)
    if p != len(block) and block:
        raise ctx.error(f"metadata block has {len(block) - p} bytes after the last column")
    table_flags: dict[str, Any] = {}
    _apply_optional(cols, body.optional_metadata, ctx, table_flags)
    missing = {i for i, c in enumerate(cols) if c.pop("missing_metadata", False)}
    columns = tuple(ColumnDef(**c) for c in cols)
    json_cols = tuple(c.index for c in columns if c.type == T.JSON)
    table = TableDef(body.table_id, body.flags, body.db, body.table, columns,
                     table_flags.get("primary_key"), table_flags.get("signedness", False),
                     table_flags.get("names", False), json_columns=json_cols)
    attach_decoders(table, missing)
    return table


def _apply_optional(cols: list[dict[str, Any]], fields: tuple[tuple[int, bytes], ...],
                    ctx: _Ctx, table: dict[str, Any]) -> None:
    numeric = [c for c in cols if c["type"] in NUMERIC_TYPES]
    character = [c for c in cols if c["real_type"] in CHARSET_METADATA_TYPES]
    enum_set = [c for c in cols if c["real_type"] in ENUM_SET_TYPES]
    enums = [c for c in cols if c["real_type"] == T.ENUM]
    sets = [c for c in cols if c["real_type"] == T.SET]
    geoms = [c for c in cols if c["type"] == T.GEOMETRY]
    vectors = [c for c in cols if c["type"] == T.VECTOR]
    M = OptionalMetadata
    for ftype, value in fields:
        if ftype == M.SIGNEDNESS:
            _set_bits(numeric, "unsigned", value, "SIGNEDNESS", "numeric columns", ctx)
            table["signedness"] = True
        elif ftype in (M.DEFAULT_CHARSET, M.ENUM_AND_SET_DEFAULT_CHARSET):
            targets = character if ftype == M.DEFAULT_CHARSET else enum_set
            r = _parse(_default_charset, value, M(ftype).name, ctx)
            if ftype == M.DEFAULT_CHARSET and geoms:
                # MariaDB counts GEOMETRY (a BLOB with the binary collation) among the
                # character columns; MySQL does not.  MariaDB lists every geometry
                # column as an exception with collation 63: that tells them apart.
                with_geo = [c for c in cols if c["real_type"] in CHARSET_METADATA_TYPES
                            or c["type"] == T.GEOMETRY]
                binary_at = {item.a for item in r.entries if item.b == BINARY_COLLATION}
                if all(i in binary_at for i, c in enumerate(with_geo)
                       if c["type"] == T.GEOMETRY):
                    targets = with_geo
            for c in targets:
                c["collation"] = r.default
            for item in r.entries:
                if item.a >= len(targets):
                    raise ctx.error(f"{M(ftype).name} names column #{item.a} of "
                                    f"{len(targets)}")
                targets[item.a]["collation"] = item.b
        elif ftype in (M.COLUMN_CHARSET, M.ENUM_AND_SET_COLUMN_CHARSET):
            targets = character if ftype == M.COLUMN_CHARSET else enum_set
            items = _parse(_packed_list, value, M(ftype).name, ctx).entries
            if ftype == M.COLUMN_CHARSET and geoms and len(items) == len(character) + len(geoms):
                # MariaDB: GEOMETRY columns have a COLUMN_CHARSET entry too (see above)
                targets = [c for c in cols if c["real_type"] in CHARSET_METADATA_TYPES
                           or c["type"] == T.GEOMETRY]
            _check_count(items, targets, M(ftype).name, ctx)
            for c, coll in zip(targets, items):
                c["collation"] = coll
        elif ftype == M.COLUMN_NAME:
            items = _parse(_names, value, "COLUMN_NAME", ctx).entries
            _check_count(items, cols, "COLUMN_NAME", ctx)
            for c, name in zip(cols, items):
                c["name"] = bytes(name).decode("utf-8", "replace")
            table["names"] = True
        elif ftype in (M.SET_STR_VALUE, M.ENUM_STR_VALUE):
            targets = sets if ftype == M.SET_STR_VALUE else enums
            key = "set_values" if ftype == M.SET_STR_VALUE else "enum_values"
            items = _parse(_str_values, value, M(ftype).name, ctx).entries
            _check_count(items, targets, M(ftype).name, ctx)
            for c, vals in zip(targets, items):
                c[key] = tuple(bytes(v) for v in vals)
        elif ftype == M.GEOMETRY_TYPE:
            items = _parse(_packed_list, value, "GEOMETRY_TYPE", ctx).entries
            _check_count(items, geoms, "GEOMETRY_TYPE", ctx)
            for c, g in zip(geoms, items):
                c["geometry_type"] = g
        elif ftype == M.SIMPLE_PRIMARY_KEY:
            items = _parse(_packed_list, value, "SIMPLE_PRIMARY_KEY", ctx).entries
            table["primary_key"] = tuple((_col_index(i, cols, ctx), 0) for i in items)
        elif ftype == M.PRIMARY_KEY_WITH_PREFIX:
            items = _parse(_packed_pairs, value, "PRIMARY_KEY_WITH_PREFIX", ctx).entries
            table["primary_key"] = tuple((_col_index(x.a, cols, ctx), x.b) for x in items)
        elif ftype == M.COLUMN_VISIBILITY:
            _set_bits(cols, "visible", value, "COLUMN_VISIBILITY", "columns", ctx)
        elif ftype == M.VECTOR_DIMENSIONALITY:
            items = _parse(_packed_list, value, "VECTOR_DIMENSIONALITY", ctx).entries
            _check_count(items, vectors, "VECTOR_DIMENSIONALITY", ctx)
            for c, dim in zip(vectors, items):
                c["vector_dimensions"] = dim
        # any other type: skipped by its length (already framed by the TLV)


def _set_bits(targets: list[dict[str, Any]], attr: str, value: bytes, what: str, noun: str,
              ctx: _Ctx) -> None:
    """A bitmap field (most significant bit first): one bit of ``attr`` per target column."""
    if len(value) * 8 < len(targets):
        raise ctx.error(f"{what} has {len(value) * 8} bits for {len(targets)} {noun}")
    for c, bit in zip(targets, _msb_bits(value, len(targets))):
        c[attr] = bit


def _check_count(items: Any, targets: list[Any], what: str, ctx: _Ctx) -> None:
    if len(items) != len(targets):
        raise ctx.error(f"{what} has {len(items)} entries for {len(targets)} columns")


def _col_index(i: int, cols: list[Any], ctx: _Ctx) -> int:
    if i >= len(cols):
        raise ctx.error(f"primary key names column #{i} of {len(cols)}")
    return i
