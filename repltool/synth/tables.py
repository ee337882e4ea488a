"""The synthetic schema: tables, their Table_map bodies, row-image encoders and DDL.

Four InnoDB tables in one database, chosen so every writeset rule is exercised
(format-spec §6b):

``customers``   PRIMARY KEY (id) and UNIQUE KEY uk_email (email)
``orders``      PRIMARY KEY (id BIGINT UNSIGNED)
``order_items`` PRIMARY KEY (id), FOREIGN KEY (order_id) REFERENCES orders (id)
``audit_log``   no key at all

Column types are the everyday ones (INT, BIGINT UNSIGNED, VARCHAR, DECIMAL,
DATETIME(6)), encoded as MySQL's row format stores them (format-spec §4.9,
§4.10; ``sql/field.cc``).  Table_map optional metadata is what 8.0 writes with
``binlog_row_metadata=MINIMAL`` (SIGNEDNESS, then DEFAULT_CHARSET or
COLUMN_CHARSET, whichever is shorter) or ``FULL`` (plus COLUMN_NAME,
SIMPLE_PRIMARY_KEY and, 8.0.23+, COLUMN_VISIBILITY).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Callable

from ..binlog.structs import encode_packed_int

UTF8MB4_0900 = 255
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


# ---- value encoders (row image bytes of one non-NULL value) ----

def _int32(v: int) -> bytes:
    return struct.pack("<i", v)


def _uint64(v: int) -> bytes:
    return struct.pack("<Q", v)


def _varchar(max_bytes: int) -> Callable[[str], bytes]:
    if max_bytes <= 255:
        def enc(v: str) -> bytes:
            raw = v.encode()
            return bytes((len(raw),)) + raw
    else:
        def enc(v: str) -> bytes:
            raw = v.encode()
            return struct.pack("<H", len(raw)) + raw
    return enc


def decimal_bytes(value: Decimal | str | int, precision: int, scale: int) -> bytes:
    """MySQL's binary DECIMAL(precision, scale) (``decimal2bin``; format-spec §4.10).

    Example::

        >>> decimal_bytes(Decimal("1234.50"), 10, 2).hex()
        '80000004d232'
        >>> decimal_bytes(Decimal("-1.00"), 10, 2).hex()
        '7ffffffeff9b'
    """
    d = Decimal(value).quantize(Decimal(1).scaleb(-scale))
    neg = d < 0
    digits = format(abs(d), "f")
    ip, _, fp = digits.partition(".")
    fp = fp.ljust(scale, "0")[:scale]
    intg = precision - scale
    ip = ip.lstrip("0").rjust(intg, "0")[-intg:] if intg else ""
    out = bytearray()
    lead = intg % 9
    if lead:
        out += int(ip[:lead]).to_bytes(_DIG2BYTES[lead], "big")
    for i in range(lead, intg, 9):
        out += int(ip[i:i + 9]).to_bytes(4, "big")
    for i in range(0, scale - scale % 9, 9):
        out += int(fp[i:i + 9]).to_bytes(4, "big")
    tail = scale % 9
    if tail:
        out += int(fp[scale - tail:]).to_bytes(_DIG2BYTES[tail], "big")
    if neg:
        out = bytearray(b ^ 0xFF for b in out)
    out[0] ^= 0x80
    return bytes(out)


def decimal_scaled_encoder(precision: int, scale: int) -> Callable[[int], bytes]:
    """Encoder of DECIMAL(precision, scale) from the value times 10**scale (an int).

    The same bytes as :func:`decimal_bytes`, with integer arithmetic only.

    Example::

        >>> decimal_scaled_encoder(10, 2)(123450).hex()
        '80000004d232'
    """
    intg = precision - scale
    int_groups = ([_DIG2BYTES[intg % 9]] if intg % 9 else []) + [4] * (intg // 9)
    frac_groups = [4] * (scale // 9) + ([_DIG2BYTES[scale % 9]] if scale % 9 else [])
    frac_digits = [9] * (scale // 9) + ([scale % 9] if scale % 9 else [])
    size = sum(int_groups) + sum(frac_groups)
    unit = 10 ** scale
    fast = len(int_groups) <= 2 and len(frac_groups) == 1 and size <= 8

    def enc(v: int) -> bytes:
        neg = v < 0
        ip, fp = divmod(-v if neg else v, unit)
        if fast and len(int_groups) == 2:
            hi, lo = divmod(ip, 10 ** 9)
            n = (((hi << 32) | lo) << (8 * frac_groups[0])) | fp
        elif fast and len(int_groups) == 1:
            n = (ip << (8 * frac_groups[0])) | fp
        else:
            n = 0
            parts = []
            for nb in reversed(int_groups):
                ip, g = divmod(ip, 10 ** 9)
                parts.append((g, nb))
            for g, nb in reversed(parts):
                n = (n << (8 * nb)) | g
            digits = str(fp).rjust(scale, "0")
            at = 0
            for nd, nb in zip(frac_digits, frac_groups):
                n = (n << (8 * nb)) | int(digits[at:at + nd])
                at += nd
        if neg:
            n = ~n & ((1 << (8 * size)) - 1)
        return (n ^ (0x80 << (8 * size - 8))).to_bytes(size, "big")
    return enc


def datetime6_bytes(dt: datetime) -> bytes:
    """DATETIME(6): 5 bytes BE ``intpart + 0x8000000000`` then 3 bytes BE µs."""
    ym = dt.year * 13 + dt.month
    packed = (ym << 22) | (dt.day << 17) | (dt.hour << 12) | (dt.minute << 6) | dt.second
    return ((packed + 0x8000000000) << 24 | dt.microsecond).to_bytes(8, "big")


_UNIX = datetime(1970, 1, 1)


def datetime_from_us(us: int) -> datetime:
    """The naive UTC datetime ``us`` microseconds after 1970-01-01."""
    return _UNIX + timedelta(microseconds=us)


def datetime6_from_us(us: int) -> bytes:
    """DATETIME(6) bytes of the value ``us`` microseconds after 1970-01-01."""
    return datetime6_bytes(_UNIX + timedelta(microseconds=us))


# ---- columns and tables ----

@dataclass(frozen=True)
class Column:
    name: str
    sql: str                       # the column's SQL type
    type_code: int                 # enum_field_types in the Table_map
    meta: bytes                    # per-column Table_map metadata
    nullable: bool
    encode: Callable[[Any], bytes] = field(repr=False, compare=False)
    to_python: Callable[[Any], Any] | None = field(default=None, repr=False, compare=False)
    numeric: bool = False
    unsigned: bool = False
    charset: int | None = None     # character columns: collation id


def int_col(name: str, *, nullable: bool = False) -> Column:
    return Column(name, "int", 3, b"", nullable, _int32, numeric=True)


def bigint_unsigned_col(name: str, *, nullable: bool = False) -> Column:
    return Column(name, "bigint unsigned", 8, b"", nullable, _uint64, numeric=True,
                  unsigned=True)


def varchar_col(name: str, chars: int, *, nullable: bool = False) -> Column:
    max_bytes = chars * 4                                    # utf8mb4
    return Column(name, f"varchar({chars})", 15, struct.pack("<H", max_bytes), nullable,
                  _varchar(max_bytes), charset=UTF8MB4_0900)


def decimal_col(name: str, precision: int, scale: int, *, nullable: bool = False) -> Column:
    """Values are the decimal times 10**scale, as an int (Decimal only for the ground truth)."""
    unit = Decimal(1).scaleb(-scale)
    return Column(name, f"decimal({precision},{scale})", 246, bytes((precision, scale)),
                  nullable, decimal_scaled_encoder(precision, scale),
                  lambda v: Decimal(v) * unit, numeric=True)


def datetime6_col(name: str, *, nullable: bool = False) -> Column:
    """Values are microseconds since 1970-01-01 (a datetime only for the ground truth)."""
    return Column(name, "datetime(6)", 18, b"\x06", nullable, datetime6_from_us,
                  datetime_from_us)


@dataclass(frozen=True)
class ForeignKey:
    name: str
    column: str
    parent: str
    parent_column: str


@dataclass
class Table:
    """One table: columns, keys, and the bytes MySQL logs for it."""

    db: str
    name: str
    columns: tuple[Column, ...]
    primary: tuple[str, ...] = ()
    uniques: tuple[tuple[str, tuple[str, ...]], ...] = ()
    indexes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    table_id: int = 0

    def __post_init__(self) -> None:
        self.index = {c.name: i for i, c in enumerate(self.columns)}
        n = len(self.columns)
        self.bitmap_len = (n + 7) // 8
        # MySQL copies the table's full column bitmap: the padding bits are set too
        # (8.0.32 file rpl_binlog_with_gipk_info_no_gipk: 2 columns -> 0xff).
        self.all_columns = b"\xff" * self.bitmap_len
        self._encoders = tuple(c.encode for c in self.columns)
        self._nullable = tuple(i for i, c in enumerate(self.columns) if c.nullable)
        self._converters = tuple(c.to_python for c in self.columns)
        self._image = self._compile_image()

    def to_python(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """A stored row as the decoder returns it (Decimal, datetime)."""
        return tuple(v if conv is None or v is None else conv(v)
                     for conv, v in zip(self._converters, row))

    @property
    def qualified(self) -> str:
        return f"{self.db}.{self.name}"

    # ---- Table_map (format-spec §4.9) ----

    def table_map_body(self, *, full_metadata: bool = False) -> bytes:
        cols = self.columns
        meta = b"".join(c.meta for c in cols)
        nulls = 0
        for i, c in enumerate(cols):
            if c.nullable:
                nulls |= 1 << i
        body = bytearray(self.table_id.to_bytes(6, "little") + b"\x01\x00")
        for name in (self.db, self.name):
            raw = name.encode()
            body += bytes((len(raw),)) + raw + b"\x00"
        body += encode_packed_int(len(cols)) + bytes(c.type_code for c in cols)
        body += encode_packed_int(len(meta)) + meta
        body += nulls.to_bytes(self.bitmap_len, "little")
        body += self._optional_metadata(full_metadata)
        return bytes(body)

    def _optional_metadata(self, full: bool) -> bytes:
        out = bytearray()
        numeric = [c for c in self.columns if c.numeric]
        if numeric:
            out += _tlv(1, _msb_bitmap([c.unsigned for c in numeric]))
        chars = [c.charset for c in self.columns if c.charset is not None]
        if chars:
            default = max(set(chars), key=chars.count)
            dflt = encode_packed_int(default) + b"".join(
                encode_packed_int(i) + encode_packed_int(cs)
                for i, cs in enumerate(chars) if cs != default)
            per_col = b"".join(encode_packed_int(cs) for cs in chars)
            # log_event.cc init_charset_field: the shorter form; on a tie DEFAULT_CHARSET
            # (8.0.32 file: one TEXT column, 3 bytes either way, DEFAULT_CHARSET written).
            out += _tlv(2, dflt) if len(dflt) <= len(per_col) else _tlv(3, per_col)
        if full:
            out += _tlv(4, b"".join(encode_packed_int(len(c.name.encode())) + c.name.encode()
                                    for c in self.columns))
            if self.primary:
                out += _tlv(8, b"".join(encode_packed_int(self.index[n]) for n in self.primary))
            out += _tlv(12, _msb_bitmap([True] * len(self.columns)))
        return bytes(out)

    # ---- row images (format-spec §4.10) ----

    def image(self, row: tuple[Any, ...]) -> bytes:
        """A full row image: NULL bitmap over all columns, then the non-NULL values."""
        return self._image(row)

    def _compile_image(self) -> Callable[[tuple[Any, ...]], bytes]:
        """A straight-line encoder for this table's rows (no per-column dispatch).

        Equivalent to :meth:`image_slow`; fixed-width integers are packed with
        one ``struct`` call per run of adjacent non-nullable integer columns.
        """
        env: dict[str, Any] = {"pack": struct.pack}
        names = [f"c{i}" for i in range(len(self.columns))]
        lines = ["def image(row):", f"    {', '.join(names)}, = row"]
        if self._nullable:
            lines.append("    n = 0")
            for i in self._nullable:
                lines.append(f"    if c{i} is None: n |= {1 << i}")
            lines.append(f"    out = [n.to_bytes({self.bitmap_len}, 'little')]")
        else:
            lines.append(f"    out = [{bytes(self.bitmap_len)!r}]")
        i = 0
        cols = self.columns
        while i < len(cols):
            c = cols[i]
            fmt = {3: "i", 8: "Q"}.get(c.type_code) if not c.unsigned or c.type_code == 8 \
                else None
            if c.type_code == 3 and c.unsigned:
                fmt = "I"
            if fmt and not c.nullable:
                run, j = [fmt], i + 1
                while j < len(cols) and not cols[j].nullable and cols[j].type_code in (3, 8):
                    run.append("Q" if cols[j].type_code == 8 else
                               ("I" if cols[j].unsigned else "i"))
                    j += 1
                args = ", ".join(names[i:j])
                lines.append(f"    out.append(pack('<{''.join(run)}', {args}))")
                i = j
                continue
            env[f"e{i}"] = c.encode
            stmt = f"out.append(e{i}(c{i}))"
            lines.append(f"    if c{i} is not None: {stmt}" if c.nullable else f"    {stmt}")
            i += 1
        lines.append("    return b''.join(out)")
        exec("\n".join(lines), env)  # noqa: S102 - generated from the column list above
        return env["image"]  # type: ignore[no-any-return]

    def image_slow(self, row: tuple[Any, ...]) -> bytes:
        """Reference encoder of :meth:`image` (per-column encoders, column order)."""
        nulls = 0
        for i in self._nullable:
            if row[i] is None:
                nulls |= 1 << i
        return nulls.to_bytes(self.bitmap_len, "little") + b"".join(
            [enc(v) for enc, v in zip(self._encoders, row) if v is not None])

    # ---- DDL ----

    def create_sql(self) -> str:
        lines = []
        for c in self.columns:
            lines.append(f"  `{c.name}` {c.sql}{'' if c.nullable else ' NOT NULL'}"
                         + (" DEFAULT NULL" if c.nullable else ""))
        if self.primary:
            lines.append("  PRIMARY KEY (" + ",".join(f"`{n}`" for n in self.primary) + ")")
        for name, cols in self.uniques:
            lines.append(f"  UNIQUE KEY `{name}` (" + ",".join(f"`{n}`" for n in cols) + ")")
        for name, cols in self.indexes:
            lines.append(f"  KEY `{name}` (" + ",".join(f"`{n}`" for n in cols) + ")")
        for fk in self.foreign_keys:
            lines.append(f"  CONSTRAINT `{fk.name}` FOREIGN KEY (`{fk.column}`) REFERENCES "
                         f"`{fk.parent}` (`{fk.parent_column}`)")
        return (f"CREATE TABLE `{self.name}` (\n" + ",\n".join(lines) + "\n) ENGINE=InnoDB "
                "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")


def _tlv(kind: int, value: bytes) -> bytes:
    return bytes((kind,)) + encode_packed_int(len(value)) + value


def _msb_bitmap(bits: list[bool]) -> bytes:
    out = bytearray((len(bits) + 7) // 8)
    for i, b in enumerate(bits):
        if b:
            out[i // 8] |= 0x80 >> (i % 8)
    return bytes(out)


def make_tables(db: str, first_table_id: int = 90) -> list[Table]:
    """The four synthetic tables (table ids from ``first_table_id``)."""
    tables = [
        Table(db, "customers", (
            int_col("id"), varchar_col("email", 64), varchar_col("name", 48, nullable=True),
            decimal_col("balance", 12, 2), datetime6_col("updated_at", nullable=True)),
            primary=("id",), uniques=(("uk_email", ("email",)),)),
        Table(db, "orders", (
            bigint_unsigned_col("id"), int_col("customer_id"), varchar_col("status", 16),
            decimal_col("amount", 10, 2), datetime6_col("created_at"),
            varchar_col("note", 120, nullable=True)),
            primary=("id",), indexes=(("ix_customer", ("customer_id",)),)),
        Table(db, "order_items", (
            bigint_unsigned_col("id"), bigint_unsigned_col("order_id"), varchar_col("sku", 24),
            int_col("qty"), decimal_col("price", 10, 2)),
            primary=("id",), indexes=(("ix_order", ("order_id",)),),
            foreign_keys=(ForeignKey("fk_items_order", "order_id", "orders", "id"),)),
        Table(db, "audit_log", (
            datetime6_col("at"), varchar_col("kind", 16), bigint_unsigned_col("ref", nullable=True),
            varchar_col("detail", 200, nullable=True))),
    ]
    for i, t in enumerate(tables):
        t.table_id = first_table_id + i
    return tables


def schema_sql(tables: list[Table]) -> str:
    """``SHOW CREATE TABLE`` style DDL of the tables (parents before children)."""
    db = tables[0].db
    out = [f"-- repltool synth schema (database {db})",
           f"CREATE DATABASE IF NOT EXISTS `{db}`;", f"USE `{db}`;"]
    for t in tables:
        out.append(t.create_sql() + ";")
    return "\n".join(out) + "\n"
