"""Every column type decoded from hand-built row images (format-spec §4.9/§4.10)."""

from __future__ import annotations

import struct
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from repltool.binlog.coltypes import ColumnType as T
from repltool.binlog.jsonb import JsonDiff, JsonOpaque
from repltool.binlog.rows import Geometry, decode_decimal, decimal_size, is_json_diff
from repltool.binlog.structs import encode_packed_int as packed
from repltool.errors import MalformedEvent

from ._build import (
    changes, decode_one, encode_datetime2, encode_decimal, encode_time2, encode_timestamp2,
    image, jsonb, json_diff, rows_body, tdef,
)

SIGNED = [(1, b"\x00")]       # SIGNEDNESS: first numeric column signed
UNSIGNED = [(1, b"\x80")]     # SIGNEDNESS: first numeric column unsigned


# ---- integers ----

@pytest.mark.parametrize(("ctype", "raw", "signed", "unsigned"), [
    (T.TINY, b"\xff", -1, 255),
    (T.SHORT, b"\x00\x80", -32768, 32768),
    (T.INT24, b"\xfe\xff\xff", -2, 0xFFFFFE),
    (T.LONG, b"\xfd\xff\xff\xff", -3, 4294967293),
    (T.LONGLONG, b"\x01\x00\x00\x00\x00\x00\x00\x80", -(1 << 63) + 1, (1 << 63) + 1),
])
def test_integers_follow_signedness(ctype, raw, signed, unsigned) -> None:
    """SIGNEDNESS decides; without it the value is signed, as mysqlbinlog prints first."""
    assert decode_one([ctype], b"", raw, SIGNED) == signed
    assert decode_one([ctype], b"", raw, UNSIGNED) == unsigned
    assert decode_one([ctype], b"", raw) == signed


def test_signedness_bitmap_is_msb_first_over_numeric_columns_only() -> None:
    """Gotcha 26: bit 0x80 is the first *numeric* column; VARCHAR is skipped, YEAR counts."""
    types = [T.TINY, T.VARCHAR, T.YEAR, T.LONG, T.NEWDECIMAL]
    meta = b"\x10\x00" + b"\x05\x02"
    t = tdef(types, meta, optional=[(1, bytes([0b10010000]))])
    assert [c.unsigned for c in t.columns] == [True, None, False, False, True]
    img = image([b"\xff", b"\x01a", b"\x00", b"\xff\xff\xff\xff", encode_decimal("1.5", 5, 2)])
    (ch,) = changes(t, rows_body(5, img), 30)
    assert ch.after.values == (255, "a" if False else b"a", 0, -1, Decimal("1.50"))


def test_year_float_double_null() -> None:
    assert decode_one([T.YEAR], b"", b"\x7c") == 2024
    assert decode_one([T.YEAR], b"", b"\x00") == 0
    assert decode_one([T.FLOAT], b"\x04", struct.pack("<f", 1.5)) == 1.5
    assert decode_one([T.DOUBLE], b"\x08", struct.pack("<d", -2.5e-308)) == -2.5e-308
    t = tdef([T.NULL, T.LONG])
    (ch,) = changes(t, rows_body(2, image([None, b"\x07\x00\x00\x00"])), 30)
    assert ch.after.values == (None, 7) and ch.after.is_null(0)


# ---- DECIMAL ----

@pytest.mark.parametrize(("text", "p", "s"), [
    ("250.00", 5, 2), ("-250.00", 5, 2), ("0.00", 5, 2), ("-0.01", 5, 2),
    ("1234567890.1234", 14, 4), ("-53283702.9140", 12, 4), ("948029.63", 10, 2),
    ("0.5", 1, 1), ("-0.5", 1, 1), ("9", 1, 0), ("-9", 1, 0),
    ("123456789012345678901234567890.123456789012345678", 48, 18),
    ("-999999999999999999999999999999999999999999999999999999999999999.99", 65, 2),
    ("0.000000000000000000000000000001", 30, 30), ("-0.123456789", 10, 9),
    ("-12345678901234567890", 20, 0), ("42", 10, 0),
])
def test_decimal(text: str, p: int, s: int) -> None:
    raw = encode_decimal(text, p, s)
    assert len(raw) == decimal_size(p, s)
    got = decode_one([T.NEWDECIMAL], bytes([p, s]), raw)
    assert got == Decimal(text)
    assert got.as_tuple().exponent == -s          # scale digits kept, as MySQL prints
    assert decode_decimal(raw, p, s) == got


def test_decimal_known_bytes() -> None:
    """250.00 as DECIMAL(10,2) (mysqlbinlog test file: meta=2562) and its negation."""
    assert decode_decimal(bytes.fromhex("800000fa00"), 10, 2) == Decimal("250.00")
    assert decode_decimal(bytes.fromhex("7fffff05ff"), 10, 2) == Decimal("-250.00")


def test_decimal_with_impossible_digits_is_malformed() -> None:
    with pytest.raises(MalformedEvent, match="DECIMAL group"):
        decode_one([T.NEWDECIMAL], bytes([5, 2]), b"\xff\xff\x63")


# ---- temporal ----

@pytest.mark.parametrize("fsp", range(7))
def test_datetime2_each_fsp(fsp: int) -> None:
    us = 123456 // 10 ** (6 - fsp) * 10 ** (6 - fsp) if fsp else 0
    raw = encode_datetime2(2024, 2, 29, 23, 59, 58, 123456, fsp)
    assert len(raw) == 5 + (fsp + 1) // 2
    assert decode_one([T.DATETIME2], bytes([fsp]), raw) == datetime(2024, 2, 29, 23, 59, 58, us)


def test_datetime2_zero_date_is_text() -> None:
    raw = encode_datetime2(0, 0, 0, 0, 0, 0, 0, 3)
    assert decode_one([T.DATETIME2], b"\x03", raw) == "0000-00-00 00:00:00.000"


@pytest.mark.parametrize("fsp", range(7))
def test_timestamp2_each_fsp(fsp: int) -> None:
    us = 654321 // 10 ** (6 - fsp) * 10 ** (6 - fsp) if fsp else 0
    raw = encode_timestamp2(1650493084, 654321 // 10 ** (6 - fsp) * 10 ** (6 - fsp), fsp)
    want = datetime(2022, 4, 20, 22, 18, 4, us, tzinfo=timezone.utc)
    assert decode_one([T.TIMESTAMP2], bytes([fsp]), raw) == want
    assert decode_one([T.TIMESTAMP2], bytes([fsp]), encode_timestamp2(0, 0, fsp)).startswith(
        "0000-00-00")


@pytest.mark.parametrize("fsp", range(7))
@pytest.mark.parametrize("neg", [False, True])
@pytest.mark.parametrize(("h", "m", "s", "us"), [(838, 59, 59, 0), (12, 34, 56, 789012),
                                                  (0, 0, 0, 1), (0, 0, 1, 500000)])
def test_time2(fsp: int, neg: bool, h: int, m: int, s: int, us: int) -> None:
    """Negative TIME2 values store the fraction 'reversed' (intpart + 1, frac - 2^n)."""
    kept = us // 10 ** (6 - fsp) * 10 ** (6 - fsp) if fsp else 0
    want = timedelta(hours=h, minutes=m, seconds=s, microseconds=kept)
    raw = encode_time2(neg, h, m, s, us, fsp)
    assert decode_one([T.TIME2], bytes([fsp]), raw) == (-want if neg else want)


def test_time2_known_bytes() -> None:
    """-00:00:01.5 TIME(1): intpart -2 stored, frac byte 0xce (-50)."""
    assert decode_one([T.TIME2], b"\x01", bytes.fromhex("7ffffece")) == -timedelta(seconds=1.5)


def test_old_temporal_types() -> None:
    assert decode_one([T.DATE], b"", ((2001 << 9) | (2 << 5) | 3).to_bytes(3, "little")) == \
        date(2001, 2, 3)
    assert decode_one([T.DATE], b"", b"\x00\x00\x00") == "0000-00-00"
    assert decode_one([T.TIME], b"", (-123456).to_bytes(3, "little", signed=True)) == \
        -timedelta(hours=12, minutes=34, seconds=56)
    assert decode_one([T.DATETIME], b"", (20111215125253).to_bytes(8, "little")) == \
        datetime(2011, 12, 15, 12, 52, 53)
    assert decode_one([T.DATETIME], b"", bytes(8)) == "0000-00-00 00:00:00"
    assert decode_one([T.TIMESTAMP], b"", (1341813496).to_bytes(4, "little")) == \
        datetime(2012, 7, 9, 5, 58, 16, tzinfo=timezone.utc)


# ---- strings ----

def test_varchar_length_bytes_follow_max_length() -> None:
    utf8 = [(3, packed(45))]     # COLUMN_CHARSET: utf8mb4_general_ci
    assert decode_one([T.VARCHAR], (255).to_bytes(2, "little"), b"\x03abc", utf8) == "abc"
    assert decode_one([T.VARCHAR], (256).to_bytes(2, "little"), b"\x03\x00abc", utf8) == "abc"
    assert decode_one([T.VARCHAR], (256).to_bytes(2, "little"), b"\x03\x00abc") == b"abc"
    binary = [(3, packed(63))]
    assert decode_one([T.VARCHAR], b"\x10\x00", b"\x02\xff\x00", binary) == b"\xff\x00"
    # undecodable text stays bytes
    assert decode_one([T.VARCHAR], b"\x10\x00", b"\x01\xff", utf8) == b"\xff"


def test_char_metadata_is_big_endian_with_hidden_length_bits() -> None:
    """Gotcha 25: CHAR(100) utf8mb4 = 400 bytes: byte0 0xee (0xfe ^ 0x10), byte1 0x90."""
    t = tdef([T.STRING], bytes([0xEE, 0x90]))
    c = t.columns[0]
    assert (c.real_type, c.max_length, c.metadata) == (T.STRING, 400, 0xEE90)
    (ch,) = changes(t, rows_body(1, image([b"\x02\x00hi"])), 30)
    assert ch.after.values == (b"hi",)
    t = tdef([T.STRING], bytes([0xFE, 0x20]), optional=[(2, packed(8))])
    assert (t.columns[0].max_length, t.columns[0].collation) == (32, 8)
    (ch,) = changes(t, rows_body(1, image([b"\x02\xe9t"])), 30)
    assert ch.after.values == ("ét",)       # latin1 = cp1252


@pytest.mark.parametrize("pack", [1, 2, 3, 4])
def test_blob_pack_lengths(pack: int) -> None:
    data = b"x" * 300 if pack > 1 else b"x" * 200
    raw = len(data).to_bytes(pack, "little") + data
    assert decode_one([T.BLOB], bytes([pack]), raw) == data
    assert decode_one([T.BLOB], bytes([pack]), raw, [(3, packed(46))]) == data.decode()


def test_enum_set_bit() -> None:
    names = [(6, packed(3) + packed(1) + b"a" + packed(1) + b"b" + packed(1) + b"c")]
    assert decode_one([T.STRING], bytes([T.ENUM, 1]), b"\x02") == 2
    assert decode_one([T.STRING], bytes([T.ENUM, 1]), b"\x02", names) == "b"
    assert decode_one([T.STRING], bytes([T.ENUM, 1]), b"\x00", names) == ""
    assert decode_one([T.STRING], bytes([T.ENUM, 2]), b"\x01\x01") == 257
    sets = [(5, packed(3) + packed(1) + b"x" + packed(1) + b"y" + packed(1) + b"z")]
    assert decode_one([T.STRING], bytes([T.SET, 1]), b"\x05") == 5
    assert decode_one([T.STRING], bytes([T.SET, 1]), b"\x05", sets) == "x,z"
    t = tdef([T.BIT], bytes([4, 1]))          # BIT(12): 1 full byte + 4 bits
    assert t.columns[0].bits == 12
    (ch,) = changes(t, rows_body(1, image([b"\x0a\xbc"])), 30)
    assert ch.after.values == (0xABC,)


def test_geometry_and_vector() -> None:
    wkb = bytes.fromhex("0101000000000000000000f03f0000000000000040")
    raw = (4 + len(wkb)).to_bytes(4, "little") + (4326).to_bytes(4, "little") + wkb
    assert decode_one([T.GEOMETRY], b"\x04", raw, [(7, packed(1))]) == Geometry(4326, wkb)
    vec = struct.pack("<3f", 1.0, -2.5, 0.25)
    t = tdef([T.VECTOR], b"\x04", optional=[(13, packed(3))])
    assert t.columns[0].vector_dimensions == 3
    (ch,) = changes(t, rows_body(1, image([len(vec).to_bytes(4, "little") + vec])), 30)
    assert ch.after.values == ((1.0, -2.5, 0.25),)
    with pytest.raises(MalformedEvent, match="float32"):
        decode_one([T.VECTOR], b"\x04", b"\x03\x00\x00\x00abc")


# ---- JSON ----

NESTED = {"a": [1, -70000, 2 ** 40, 18446744073709551615, 1.25, "s", None, True, False],
          "b": {"c": {"d": ["x" * 200]}}, "ζ": "日本語", "e": []}


@pytest.mark.parametrize("large", [False, True])
def test_json_nested(large: bool) -> None:
    doc = jsonb(NESTED, large)
    raw = len(doc).to_bytes(4, "little") + doc
    assert decode_one([T.JSON], b"\x04", raw) == NESTED


def test_json_scalars_and_empty() -> None:
    for v in (None, True, 7, -7, 1 << 33, 1.5, "txt", [], {}):
        doc = jsonb(v)
        assert decode_one([T.JSON], b"\x04", len(doc).to_bytes(4, "little") + doc) == v
    assert decode_one([T.JSON], b"\x04", b"\x00\x00\x00\x00") is None   # empty = JSON null


def test_json_opaque_values() -> None:
    dec = bytes([10, 3]) + encode_decimal("123.456", 10, 3)
    packed_dt = (((2012 * 13 + 3) << 5 | 18) << 17 | (11 << 12) | (30 << 6) | 45) << 24
    packed_time = -((((87 << 12) | (31 << 6) | 46) << 24) + 654321)
    doc = jsonb({"d": ("opaque", 246, dec), "dt": ("opaque", 12, struct.pack("<q", packed_dt)),
                 "date": ("opaque", 10, struct.pack("<q", packed_dt)),
                 "t": ("opaque", 11, struct.pack("<q", packed_time)),
                 "blob": ("opaque", 15, b"U")})
    got = decode_one([T.JSON], b"\x04", len(doc).to_bytes(4, "little") + doc)
    assert got == {"d": Decimal("123.456"), "dt": datetime(2012, 3, 18, 11, 30, 45),
                   "date": date(2012, 3, 18),
                   "t": -timedelta(hours=87, minutes=31, seconds=46, microseconds=654321),
                   "blob": JsonOpaque(15, b"U")}


@pytest.mark.parametrize("bad", [
    b"\x02\x01\x00\x08\x00\x02\x02\x00",      # array whose element points at itself
    b"\x02\xff\xff\x06\x00",                   # count larger than the container
    b"\x0c\x05ab",                             # string longer than the value
    b"\x0c\xff\xff\xff\xff\xff\x01",           # 6-byte variable length
    b"\x04\x07",                               # unknown literal
    b"\x0e",                                   # unknown type
])
def test_json_bad_documents_are_malformed(bad: bytes) -> None:
    with pytest.raises(MalformedEvent):
        decode_one([T.JSON], b"\x04", len(bad).to_bytes(4, "little") + bad)


def test_json_shared_subtrees_cannot_blow_up() -> None:
    """Crafted offsets sharing one sub-array 2^k times hit the node budget, not the CPU."""
    # array of 2 entries both pointing at offset 10 (itself an array of 2 ...): a DAG
    level = b"\x02\x00" + (14).to_bytes(2, "little") + b"\x02\x0a\x00\x02\x0a\x00" + b"\x00" * 4
    bad = b"\x02" + level
    with pytest.raises(MalformedEvent):
        decode_one([T.JSON], b"\x04", len(bad).to_bytes(4, "little") + bad)


# ---- partial JSON (PARTIAL_UPDATE_ROWS_EVENT, 39) ----

def test_partial_json_update() -> None:
    """After-image: value_options=1, partial bits over the table's JSON columns, then a
    4-byte-length diff for partial columns; the before-image has no value_options."""
    t = tdef([T.LONG, T.JSON, T.JSON], b"\x04\x04")
    doc1, doc2 = jsonb({"a": 1, "b": [1, 2]}), jsonb([1])
    before = image([b"\x01\x00\x00\x00", len(doc1).to_bytes(4, "little") + doc1,
                    len(doc2).to_bytes(4, "little") + doc2])
    diff = json_diff([(0, "$.a", 5), (1, "$.b[2]", "x"), (2, "$.c", None)])
    after = (packed(1) + b"\x01"          # value_options PARTIAL_JSON, partial bit: JSON #0
             + image([b"\x01\x00\x00\x00", len(diff).to_bytes(4, "little") + diff,
                      len(doc2).to_bytes(4, "little") + doc2]))
    (ch,) = changes(t, rows_body(3, before + after, update=True), 39)
    assert ch.before.values == (1, {"a": 1, "b": [1, 2]}, [1])
    v = ch.after.values[1]
    assert is_json_diff(v) and list(v) == [JsonDiff("REPLACE", "$.a", 5),
                                           JsonDiff("INSERT", "$.b[2]", "x"),
                                           JsonDiff("REMOVE", "$.c", None)]
    assert ch.after.values[2] == [1] and not is_json_diff(ch.after.values[2])
    # value_options 0: a full after-image
    after0 = packed(0) + image([b"\x02\x00\x00\x00", None, None])
    (ch,) = changes(t, rows_body(3, before + after0, update=True), 39)
    assert ch.after.values == (2, None, None) and ch.after.nulls == 0b110
    with pytest.raises(MalformedEvent, match="value_options"):
        changes(t, rows_body(3, before + packed(2) + after0[1:], update=True), 39)


# ---- images ----

def test_update_minimal_images_and_raw_bytes() -> None:
    """Absent columns: present bit clear, value None; raw keeps prefix bytes as stored."""
    t = tdef([T.LONG, T.VARCHAR, T.LONG], b"\x20\x00", optional=[(3, packed(45))])
    before = image([b"\x05\x00\x00\x00"])                    # PK only
    after = image([b"\x02hi", None])                          # col 1 and 2 (NULL)
    body = rows_body(3, before + after, present=[True, False, False],
                     present_after=[False, True, True], update=True)
    (ch,) = changes(t, body, 31)
    assert ch.kind == "update"
    assert (ch.before.present, ch.before.values) == (0b001, (5, None, None))
    assert (ch.after.present, ch.after.nulls, ch.after.values) == (0b110, 0b100, (None, "hi", None))
    assert ch.after.raw == (None, b"\x02hi", None)
    assert ch.before.raw[0] == b"\x05\x00\x00\x00"
    assert ch.after.is_present(2) and ch.after.is_null(2) and not ch.after.is_present(0)
    assert ch.after.as_dict() == {"@2": "hi", "@3": None}


def test_several_rows_and_kinds() -> None:
    t = tdef([T.LONG])
    rows = image([b"\x01\x00\x00\x00"]) + image([None]) + image([b"\x03\x00\x00\x00"])
    assert [c.after.values[0] for c in changes(t, rows_body(1, rows), 23)] == [1, None, 3]
    assert [c.before.values[0] for c in changes(t, rows_body(1, rows), 168)] == [1, None, 3]
    assert [c.kind for c in changes(t, rows_body(1, rows), 32)] == ["delete"] * 3


@pytest.mark.parametrize(("rows", "match"), [
    (b"\x00\x01\x00", "runs past the end"),            # LONG cut short
    (b"", None),                                       # no rows at all: no changes
])
def test_truncated_rows(rows: bytes, match: str | None) -> None:
    t = tdef([T.LONG])
    if match is None:
        assert changes(t, rows_body(1, rows), 30) == []
        return
    with pytest.raises(MalformedEvent, match=match) as err:
        changes(t, rows_body(1, rows), 30)
    assert "`db`.`t` row 1" in str(err.value)


def test_width_beyond_table_is_malformed() -> None:
    with pytest.raises(MalformedEvent, match="2 columns"):
        changes(tdef([T.LONG]), rows_body(2, b""), 30)


def test_images_without_columns_cannot_loop_forever() -> None:
    t = tdef([T.LONG])
    with pytest.raises(MalformedEvent, match="no column is present"):
        changes(t, rows_body(1, b"\x00", present=[False]), 30)
    with pytest.raises(MalformedEvent, match="no column is present"):
        changes(t, rows_body(1, b"\x00", present=[False], present_after=[False], update=True), 31)
    assert changes(t, rows_body(1, b"", present=[False]), 30) == []
