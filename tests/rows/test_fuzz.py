"""Property: arbitrary bytes as row images / metadata / JSON raise only ReplToolError."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings, strategies as st

from repltool.binlog.coltypes import METADATA_SIZE, ColumnType as T, decode_table_map
from repltool.binlog.jsonb import JsonError, decode_json, decode_json_diff
from repltool.binlog.rows import iter_row_changes
from repltool.errors import ReplToolError

from ._build import rows_body, table_map, tdef

# One table with every decodable type (metadata chosen to be valid).
ALL_TYPES = [T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.FLOAT, T.DOUBLE, T.YEAR,
             T.NEWDECIMAL, T.VARCHAR, T.STRING, T.STRING, T.STRING, T.BLOB, T.JSON, T.BIT,
             T.DATETIME2, T.TIMESTAMP2, T.TIME2, T.DATE, T.TIME, T.DATETIME, T.TIMESTAMP,
             T.GEOMETRY, T.VECTOR, T.NULL, T.JSON]
ALL_META = (b"\x04" + b"\x08" + bytes([20, 5]) + (300).to_bytes(2, "little")
            + bytes([T.STRING, 8]) + bytes([T.ENUM, 2]) + bytes([T.SET, 3]) + b"\x02" + b"\x04"
            + bytes([3, 2]) + b"\x06" + b"\x03" + b"\x05" + b"\x04" + b"\x04" + b"\x04")
TABLE = tdef(ALL_TYPES, ALL_META)
ROW_TYPES = [23, 24, 25, 30, 31, 32, 39, 166, 167, 168]


def _drain(data: bytes, type_code: int, present: list[bool], present_after: list[bool]) -> None:
    body = rows_body(len(ALL_TYPES), data, present=present, present_after=present_after,
                     update=type_code in (24, 31, 39, 167))
    try:
        for _ in iter_row_changes(TABLE, body, type_code):
            pass
    except ReplToolError:
        pass


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300), st.sampled_from(ROW_TYPES),
       st.lists(st.booleans(), min_size=len(ALL_TYPES), max_size=len(ALL_TYPES)),
       st.lists(st.booleans(), min_size=len(ALL_TYPES), max_size=len(ALL_TYPES)))
def test_random_row_images_raise_only_repltool_errors(data, type_code, present, after) -> None:
    _drain(data, type_code, present, after)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 0x0B, 0x0C, 0x0F, 0x10, 0xFF]),
                max_size=12).map(bytes), st.binary(max_size=200))
def test_random_json_like_rows(prefix: bytes, tail: bytes) -> None:
    """Byte soup biased towards JSON type bytes, fed through the JSON column."""
    doc = prefix + tail
    data = b"\x00\x00\x00\x00" + (len(doc)).to_bytes(4, "little") + doc
    present = [t == T.JSON for t in ALL_TYPES][:-1] + [False]
    _drain(data[:4] + data[4:], 30, present, present)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_json_documents_raise_only_json_errors(data: bytes) -> None:
    for fn in (decode_json, decode_json_diff):
        try:
            fn(data)
        except JsonError:
            pass


MAP_TYPES = sorted(set(ALL_TYPES) | {0, 14, 20, 140, 141, 247, 248})


@st.composite
def _map_meta(draw: st.DrawFn, types: list[int]) -> bytes:
    """Metadata of the Table_map: mostly one field of the right size per column (any
    bytes in it), now and then arbitrary bytes (mostly refused)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=40))
    return b"".join(draw(st.binary(min_size=METADATA_SIZE.get(t, 0),
                                   max_size=METADATA_SIZE.get(t, 0))) for t in types)


def test_random_table_maps_and_rows() -> None:
    """Arbitrary rows against arbitrary Table_maps raise only ReplToolError.  Most of the
    Table_maps are accepted (asserted: a floor on how many examples reached the rows
    decoder), the run derandomized so the floor cannot flake."""
    tally: Counter[str] = Counter()

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(st.lists(st.sampled_from(MAP_TYPES), min_size=1, max_size=10).flatmap(
               lambda types: st.tuples(st.just(types), _map_meta(types))),
           # optional metadata fields of random bytes are mostly refused: one example in four
           st.integers(0, 3).flatmap(lambda n: st.just([]) if n else st.lists(
               st.tuples(st.integers(0, 15), st.binary(max_size=30)), max_size=5)),
           st.binary(max_size=60))
    def run(types_meta: tuple[list[int], bytes], optional: list[tuple[int, bytes]],
            rows: bytes) -> None:
        types, meta = types_meta
        try:
            t = decode_table_map(table_map(types, meta, optional=optional))
        except ReplToolError:
            tally["refused"] += 1
            return
        tally["decoded"] += 1
        body = rows_body(len(types), rows, update=True)
        for tc in (30, 31, 39):
            try:
                for _ in iter_row_changes(t, body, tc):
                    pass
            except ReplToolError:
                pass

    run()
    assert tally["decoded"] + tally["refused"] >= 300 and \
        tally["decoded"] >= 0.6 * (tally["decoded"] + tally["refused"]), tally
