"""Table_map -> TableDef: per-column metadata and every optional-metadata field."""

from __future__ import annotations

import pytest

from repltool.binlog.coltypes import ColumnType as T, decode_table_map, type_label
from repltool.binlog.structs import encode_packed_int as packed
from repltool.errors import MalformedEvent
from repltool.positions import Position

from ._build import table_map, tdef

# id INT UNSIGNED, name VARCHAR(64) utf8mb4, price DECIMAL(10,2), e ENUM, s SET,
# g GEOMETRY, c CHAR(4) latin1, dt DATETIME(3), b BIT(12), j JSON, v VECTOR, y YEAR
TYPES = [T.LONG, T.VARCHAR, T.NEWDECIMAL, T.STRING, T.STRING, T.GEOMETRY, T.STRING,
         T.DATETIME2, T.BIT, T.JSON, T.VECTOR, T.YEAR]
META = (b"" + (256).to_bytes(2, "little") + bytes([10, 2]) + bytes([T.ENUM, 1])
        + bytes([T.SET, 1]) + b"\x04" + bytes([T.STRING, 4]) + b"\x03" + bytes([4, 1])
        + b"\x04" + b"\x04")
NAMES = ["id", "name", "price", "e", "s", "g", "c", "dt", "b", "j", "v", "y"]


def _strs(*groups: list[str]) -> bytes:
    out = b""
    for g in groups:
        out += packed(len(g)) + b"".join(packed(len(x)) + x.encode() for x in g)
    return out


FULL = [
    (1, bytes([0b11000000])),                  # numeric columns id, price, y: MSB-first
    (2, packed(45) + packed(1) + packed(8)),   # default utf8mb4; char column #1 (c) latin1
    (4, b"".join(packed(len(n)) + n.encode() for n in NAMES)),
    (5, _strs(["x", "y"])),
    (6, _strs(["a", "b", "c"])),
    (7, packed(1)),                            # POINT
    (8, packed(0) + packed(1)),
    (10, packed(33)),                          # ENUM/SET default utf8mb3
    (12, bytes([0b11111111, 0b01110000])),     # MSB-first: every column visible but b
    (13, packed(3)),
    (200, b"future field"),                    # unknown: skipped
]


def test_full_metadata() -> None:
    t = tdef(TYPES, META, optional=FULL, nullable=[False] + [True] * 11)
    c = {col.name: col for col in t.columns}
    assert t.has_names and t.has_signedness
    assert [col.name for col in t.columns] == NAMES
    assert (c["id"].unsigned, c["price"].unsigned, c["y"].unsigned) == (True, True, False)
    assert c["id"].nullable is False and c["name"].nullable is True
    assert (c["name"].max_length, c["name"].collation) == (256, 45)
    assert (c["price"].precision, c["price"].scale, c["price"].metadata) == (10, 2, 0x0A02)
    assert (c["e"].real_type, c["e"].pack_length, c["e"].enum_values) == (T.ENUM, 1, (b"a", b"b", b"c"))
    assert (c["s"].real_type, c["s"].set_values, c["s"].collation) == (T.SET, (b"x", b"y"), 33)
    assert c["e"].collation == 33
    assert (c["c"].real_type, c["c"].max_length, c["c"].collation) == (T.STRING, 4, 8)
    assert (c["g"].geometry_type, c["g"].pack_length) == (1, 4)
    assert c["dt"].fsp == 3 and c["b"].bits == 12 and c["j"].pack_length == 4
    assert c["v"].vector_dimensions == 3
    assert [col.visible for col in t.columns] == [True] * 8 + [False, True, True, True]
    assert t.primary_key == ((0, 0), (1, 0))
    assert [type_label(col) for col in t.columns] == [
        "INT", "VARSTRING(256)", "DECIMAL(10,2)", "ENUM(1 byte)", "SET(1 bytes)", "GEOMETRY",
        "STRING(4)", "DATETIME(3)", "BIT(12)", "JSON", "VECTOR", "YEAR"]


def test_minimal_metadata_leaves_optional_fields_unknown() -> None:
    t = tdef(TYPES, META)
    assert not t.has_names and t.primary_key is None
    assert all(c.name is None and c.unsigned is None and c.collation is None for c in t.columns)
    assert t.columns[0].label == "@1"


def test_column_charset_and_pk_with_prefix() -> None:
    t = tdef([T.VARCHAR, T.BLOB, T.LONG], b"\x40\x00\x02",
             optional=[(3, packed(45) + packed(63)), (9, packed(1) + packed(10) + packed(2) + packed(0))])
    assert [c.collation for c in t.columns] == [45, 63, None]
    assert t.columns[1].is_binary
    assert t.primary_key == ((1, 10), (2, 0))


def test_decode_table_map_is_cached_per_body() -> None:
    body = table_map([T.LONG, T.LONG])
    assert decode_table_map(body) is decode_table_map(table_map([T.LONG, T.LONG]))


def test_a_new_table_id_shares_the_decoded_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reopened table (new table id, same definition: MySQL after an ALTER or a
    FLUSH) gets its own TableDef, equal to a fresh decode but for the id, sharing the
    columns, decoders and row-plan cache of the first: a long log's stream of table
    ids does not grow the decoded columns (bench/results/rssflat.md)."""
    from dataclasses import replace
    from repltool.binlog.bounded import BoundedCache
    body = table_map(TYPES, META, optional=FULL, table="twin")
    first = decode_table_map(body)
    moved = replace(body, table_id=body.table_id + 7)
    second = decode_table_map(moved)
    assert second is not first and second.table_id == body.table_id + 7
    assert second.columns is first.columns and second.decoders is first.decoders
    assert second.plans is first.plans
    assert decode_table_map(moved) is second          # the body's own cache still hits
    other = decode_table_map(replace(moved, db="elsewhere"))
    assert other.columns is not first.columns         # another table: decoded anew
    # what a decode without the twin gives (the definitions forgotten)
    monkeypatch.setattr("repltool.binlog.coltypes._DEFINITIONS", BoundedCache(8))
    fresh = decode_table_map(replace(moved, table_id=moved.table_id + 1))
    assert fresh.columns is not first.columns
    assert replace(fresh, table_id=second.table_id) == second
    assert fresh.json_columns == second.json_columns
    assert [type(d) for d in fresh.decoders] == [type(d) for d in second.decoders]


def test_the_body_caches_keep_a_few_table_ids_per_table() -> None:
    """A stream of table ids for one table (a long MySQL log reopening it) keeps only
    the latest TABLE_CACHE_PER_TABLE bodies of that table in the caches by body
    (the others' bodies decode again, to an equal table); other tables' entries stay
    (bench/results/rssws.md)."""
    from dataclasses import replace
    from repltool.binlog import coltypes
    from repltool.binlog.bounded import BoundedCache
    per = coltypes.TABLE_CACHE_PER_TABLE
    cache = coltypes.table_body_cache()
    other = decode_table_map(table_map(TYPES, META, optional=FULL, table="other"))
    cache[b"other"] = other
    base = table_map(TYPES, META, optional=FULL, table="reopened")
    tables = [decode_table_map(replace(base, table_id=base.table_id + i)) for i in range(40)]
    for i, td in enumerate(tables):
        cache[b"%d" % i] = td
        assert len(cache) == 1 + min(i + 1, per)
    assert [cache.get(b"%d" % i) for i in range(40)] == [None] * (40 - per) + tables[-per:]
    assert cache.get(b"other") is other
    cache[b"39"] = tables[39]                  # the same entry again: nothing dropped
    assert len(cache) == 1 + per
    # the global cache by body holds no more than that of the table either
    held = [td for td in coltypes._TABLE_CACHE.values() if td.table == "reopened"]
    assert 1 <= len(held) <= per
    again = decode_table_map(replace(base, table_id=base.table_id))
    assert again is not tables[0] and again == tables[0]
    plain = BoundedCache(8)                     # without a group: the entries bound alone
    for i in range(8):
        plain[i] = tables[i]
    assert len(plain) == 8


@pytest.mark.parametrize(("types", "meta", "optional", "match"), [
    ([T.VARCHAR], b"\x10", (), "metadata block"),
    ([T.LONG], b"\x01", (), "after the last column"),
    ([T.LONG, T.LONG], b"", [(4, packed(1) + b"a")], "COLUMN_NAME has 1 entries for 2"),
    ([T.LONG], b"", [(3, packed(300) + b"\xfc")], "COLUMN_CHARSET"),
    ([T.LONG], b"", [(8, packed(5))], "primary key names column #5"),
    ([T.LONG] * 9, b"", [(1, b"\x00")], "SIGNEDNESS has 8 bits for 9"),
    ([T.VARCHAR], b"\x10\x00", [(2, packed(45) + packed(3) + packed(8))], "DEFAULT_CHARSET names"),
])
def test_bad_metadata_is_malformed(types, meta, optional, match) -> None:
    with pytest.raises(MalformedEvent, match=match) as err:
        decode_table_map(table_map(types, meta, optional=optional), pos=Position("f", 99))
    assert "f:99" in str(err.value)
