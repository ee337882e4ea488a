"""Compiled row-image walkers (:mod:`repltool.binlog.rowwalk`) against the general decoder.

The walker must accept exactly the images :func:`iter_row_changes` accepts and,
where it accepts one, end where the decoder ends and return the same stored
bytes for every column:

* generated images over every column type (valid layouts, random bytes, cuts,
  NULL bits, absent columns): same outcome, same raw bytes;
* every Rows event of the corpus (MySQL files, MariaDB sets): every image's
  raw bytes equal the decoder's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog import read_events
from repltool.binlog.coltypes import ColumnType as T, TableDef, decode_table_map
from repltool.binlog.events import RowsBody, TableMapBody
from repltool.binlog.rows import BadValue, iter_row_changes
from repltool.binlog.rowwalk import column_layout, walker
from repltool.errors import MalformedEvent, ReplToolError

from ._build import bitmap, rows_body, table_map
from .test_corpus_rows import MARIADB_SETS, NO_CHECKSUM, _readable_events

#: (type code, metadata bytes): every layout family, valid and invalid metadata
COLUMNS: list[tuple[int, bytes]] = [
    (T.TINY, b""), (T.SHORT, b""), (T.INT24, b""), (T.LONG, b""), (T.LONGLONG, b""),
    (T.FLOAT, b"\x04"), (T.DOUBLE, b"\x08"), (T.YEAR, b""), (T.DATE, b""), (T.NEWDATE, b""),
    (T.TIME, b""), (T.TIMESTAMP, b""), (T.DATETIME, b""), (T.NULL, b""),
    (T.NEWDECIMAL, bytes([5, 2])), (T.NEWDECIMAL, bytes([12, 2])), (T.NEWDECIMAL, bytes([10, 0])),
    (T.NEWDECIMAL, bytes([1, 1])), (T.NEWDECIMAL, bytes([30, 12])), (T.NEWDECIMAL, bytes([65, 30])),
    (T.NEWDECIMAL, bytes([0, 0])), (T.NEWDECIMAL, bytes([5, 6])), (T.NEWDECIMAL, bytes([90, 2])),
    (T.VARCHAR, (20).to_bytes(2, "little")), (T.VARCHAR, (300).to_bytes(2, "little")),
    (T.VARCHAR_COMPRESSED, (20).to_bytes(2, "little")),
    (T.STRING, bytes([T.STRING, 10])), (T.STRING, bytes([T.ENUM, 1])),
    (T.STRING, bytes([T.ENUM, 2])), (T.STRING, bytes([T.ENUM, 3])),
    (T.STRING, bytes([T.SET, 1])), (T.STRING, bytes([T.SET, 8])), (T.STRING, bytes([T.SET, 9])),
    (T.VAR_STRING, (40).to_bytes(2, "little")),
    (T.BLOB, b"\x01"), (T.BLOB, b"\x02"), (T.BLOB, b"\x03"), (T.BLOB, b"\x04"), (T.BLOB, b"\x05"),
    (T.BLOB_COMPRESSED, b"\x02"), (T.JSON, b"\x04"), (T.GEOMETRY, b"\x04"), (T.VECTOR, b"\x04"),
    (T.BIT, bytes([3, 1])), (T.BIT, bytes([0, 2])),
    *[(t, bytes([fsp])) for t in (T.DATETIME2, T.TIMESTAMP2, T.TIME2) for fsp in range(8)],
    (T.DECIMAL, b""), (T.BOOL, b""), (T.TYPED_ARRAY, bytes([T.LONG])),
]


def _table(cols: list[tuple[int, bytes]]) -> TableDef:
    return decode_table_map(table_map([t for t, _ in cols], b"".join(m for _, m in cols)))


def _general(td: TableDef, body: RowsBody, tc: int) -> tuple[Any, ...]:
    """("ok", raws of each image, in walking order) or ("error",)."""
    try:
        changes = list(iter_row_changes(td, body, tc))
    except MalformedEvent:
        return ("error",)
    out = []
    for ch in changes:
        for img in (ch.before, ch.after):
            if img is not None:
                out.append(tuple(img.raw[c] for c in range(body.width)))
    return ("ok", out)


def _walked(td: TableDef, body: RowsBody, tc: int) -> tuple[Any, ...]:
    wanted = tuple(range(body.width))
    first = walker(td, body.columns_before, body.width, wanted)
    second = walker(td, body.columns_after, body.width, wanted) if tc == 31 else None
    if first is None or (tc == 31 and second is None):
        return ("unsupported",)
    data, p, out = body.rows, 0, []
    try:
        while p < len(data):
            for w in (first, second) if second is not None else (first,):
                p, *raws = w(data, p)
                out.append(tuple(raws))
    except (IndexError, BadValue, ValueError, OverflowError):
        return ("error",)
    return ("ok", out)


@st.composite
def images(draw: st.DrawFn) -> tuple[list[tuple[int, bytes]], RowsBody, int]:
    cols = draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=10))
    td = _table(cols)
    width = len(cols)
    present = draw(st.lists(st.booleans(), min_size=width, max_size=width))
    if not any(present):
        present[draw(st.integers(0, width - 1))] = True
    tc = draw(st.sampled_from([30, 31, 32]))
    data = b""
    for _ in range(draw(st.integers(1, 2)) * (2 if tc == 31 else 1)):
        idx = [i for i in range(width) if present[i]]
        nulls = draw(st.lists(st.booleans(), min_size=len(idx), max_size=len(idx)))
        data += bitmap(nulls)
        for i, null in zip(idx, nulls):
            if not null:
                data += _value(draw, td, i)
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return cols, rows_body(width, data, present=present, present_after=present,
                           update=tc == 31), tc


def _value(draw: st.DrawFn, td: TableDef, i: int) -> bytes:
    """Bytes shaped like column ``i`` (its size or its length prefix), or junk."""
    kind, arg = column_layout(td.columns[i], td.decoders[i])
    if draw(st.integers(0, 5)) == 0 or kind == "call" and draw(st.booleans()):
        return draw(st.binary(max_size=12))
    if kind == "fixed":
        return draw(st.binary(min_size=arg, max_size=arg))
    if kind == "decimal":
        return draw(st.binary(min_size=arg[0], max_size=arg[0]))
    if kind == "temporal":
        head = draw(st.sampled_from([b"\x80", b"\x99", b"\x10"]))
        return head + draw(st.binary(min_size=arg[0] - 1, max_size=arg[0] - 1))
    n = arg if kind == "len" else 4
    payload = draw(st.binary(max_size=12))
    return len(payload).to_bytes(n, "little") + payload


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=images())
def test_walker_agrees_with_the_decoder(case: tuple[Any, RowsBody, int]) -> None:
    cols, body, tc = case
    td = _table(cols)
    want = _general(td, body, tc)
    got = _walked(td, body, tc)
    assert got == want, (cols, body)


def step_cases(dec: Any) -> Any:
    """(bytes, where the column's decoder ends or "error") for many byte strings of
    one column: the cases a walker must step over exactly as ``dec`` does."""
    for n in range(0, 34):
        for data in [bytes([n % 5]) + bytes([fill]) * n for fill in (0x00, 0x01, 0x7F, 0x80, 0xFF)]\
                + [b"\x80" + bytes(n), b"\x80" + bytes(range(1, n + 1))]:
            try:
                want: Any = dec(data, 0)[1]
            except Exception:   # noqa: BLE001 - whatever the decoder raises, a walker must too
                want = "error"
            yield data, want


@pytest.mark.parametrize("col", COLUMNS, ids=[f"{t}-{m.hex()}" for t, m in COLUMNS])
def test_every_layout_steps_like_its_decoder(col: tuple[int, bytes]) -> None:
    """One column, many byte strings: the walker ends where the decoder ends."""
    td = _table([col])
    dec = td.decoders[0]
    walk = walker(td, b"\x01", 1, (0,))
    assert walk is not None
    accepted = 0
    for data, want in step_cases(dec):
            try:
                end, raw = walk(b"\x00" + data, 0)
                got: Any = end - 1
                assert raw == data[:got]
            except (IndexError, BadValue, ValueError, OverflowError):
                got = "error"
            assert got == want, (col, data)
            accepted += got != "error"
    unsupported = getattr(dec, "unsupported", False)
    assert (accepted == 0) == unsupported, accepted


# ---- the corpus ----

def _walk_events(events: list[Any], walk: Any = None) -> int:
    """Walk every Rows image of the events (``walk``: ``_walked``, or the compiled core's
    in ``test_corewalk``) and compare with the decoder; images compared."""
    walk = walk or _walked
    tables: dict[int, TableDef] = {}
    compared = 0
    for ev in events:
        body = ev.body
        if isinstance(body, TableMapBody):
            try:
                tables[body.table_id] = decode_table_map(body, pos=ev.pos)
            except ReplToolError:
                tables.pop(body.table_id, None)
        elif isinstance(body, RowsBody) and body.table_id in tables and ev.type_code != 39:
            td = tables[body.table_id]
            if body.width > len(td.columns):
                continue
            tc = {23: 30, 24: 31, 25: 32, 166: 30, 167: 31, 168: 32, 169: 30, 170: 31,
                  171: 32}.get(ev.type_code, ev.type_code)
            want = _general(td, body, tc)
            got = walk(td, body, tc)
            if got == ("unsupported",):
                assert want == ("error",) or not body.rows
                continue
            assert got == want, f"{ev.pos}: {td.qualified_name}"
            compared += len(want[1]) if want[0] == "ok" else 1
    return compared


def test_walkers_on_every_mysql_corpus_file(corpus: Path) -> None:
    files = sorted(p for p in (corpus / "mysql").glob("*/*") if p.is_file())
    assert len(files) >= 100
    assert sum(_walk_events(_readable_events(p)) for p in files) > 10_000


@pytest.mark.parametrize("name", list(MARIADB_SETS))
def test_walkers_on_every_mariadb_set(corpus: Path, name: str) -> None:
    base, pattern = MARIADB_SETS[name]
    files = sorted((corpus / base).glob(pattern))
    assert files
    assert _walk_events(list(read_events(files, NO_CHECKSUM))) > 1000
