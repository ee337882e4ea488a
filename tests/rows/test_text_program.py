"""``dump -v``'s text programs (:func:`repltool.cli.render_rows.text_program`) against the
reference rendering: the column's decoder (:func:`repltool.binlog.rows.column_decoder`)
then :func:`~repltool.cli.render_rows.value_text`, row by row
(:meth:`RowsRenderer.text_lines` over :func:`~repltool.binlog.rows.iter_row_changes`).

* one column, many byte strings, every layout family and every signedness: the text
  maker accepts exactly the bytes the decoder accepts, writes the same text and ends at
  the same offset; the common types are written without the decoder (asserted);
* generated Rows events over every column type (valid layouts, junk, cuts, NULL bits,
  absent columns, verbosity 1 and 2, numbered columns): :meth:`RowsRenderer.text_block`
  gives the reference lines and row count, or the same error;
* every Rows event of the MariaDB sets and the MySQL corpus files.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog.coltypes import ColumnType as T, TableDef, decode_table_map
from repltool.binlog.events import Event, RowsBody, TableMapBody
from repltool.positions import Position
from repltool.cli.render_rows import RowsRenderer, value_text, value_text_maker
from repltool.errors import MalformedEvent, ReplToolError

from ._build import rows_body, table_map
from .test_corpus_rows import MARIADB_SETS, NO_CHECKSUM, _readable_events
from .test_rowwalk import COLUMNS, images

#: SIGNEDNESS optional metadata (type 1): one bit per numeric column, MSB first
SIGNEDNESS = 1
NUMERIC = {T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.FLOAT, T.DOUBLE, T.NEWDECIMAL,
           T.YEAR, T.DECIMAL}
#: types whose text is written from the bytes, without the decoder's value
DIRECT = {T.TINY, T.SHORT, T.LONG, T.LONGLONG, T.VARCHAR, T.VAR_STRING, T.STRING,
          T.VARCHAR_COMPRESSED, T.BLOB, T.BLOB_COMPRESSED, T.NEWDECIMAL, T.DATETIME2,
          T.TIMESTAMP2, T.DATE, T.NEWDATE, T.DOUBLE, T.ENUM, T.SET, T.BIT}


def _table(col: tuple[int, bytes], unsigned: bool | None) -> TableDef:
    t, meta = col
    optional = [] if unsigned is None else [(SIGNEDNESS, bytes([0x80 if unsigned else 0]))]
    if unsigned is not None and t not in NUMERIC:
        optional = []
    return decode_table_map(table_map([t], meta, optional=optional))


def _reference(col: Any, dec: Any, data: bytes) -> tuple[str, int] | str:
    try:
        v, q = dec(data, 0)
        return value_text(col, v, data[:q]), q
    except Exception:       # noqa: BLE001 - whatever the decoder refuses, the maker must too
        return "error"


@pytest.mark.parametrize("unsigned", [None, False, True], ids=["no-signedness", "signed",
                                                               "unsigned"])
@pytest.mark.parametrize("col", COLUMNS, ids=[f"{t}-{m.hex()}" for t, m in COLUMNS])
def test_every_layout_writes_like_its_decoder(col: tuple[int, bytes],
                                              unsigned: bool | None) -> None:
    td = _table(col, unsigned)
    column, dec = td.columns[0], td.decoders[0]
    make = value_text_maker(column, dec)
    direct = column.real_type in DIRECT and not getattr(dec, "unsupported", False)
    assert (make.__name__ != "via_value") == direct, make.__name__
    accepted = 0
    for n in range(0, 40):
        for data in [bytes([n % 5]) + bytes([fill]) * n for fill in (0x00, 0x01, 0x7F, 0x80, 0xFF)]\
                + [b"\x80" + bytes(n), b"\x80" + bytes(range(1, n + 1)),
                   bytes([n]) + b"a\x00\x1b\xc3\xa9\xff\x7f \xe2\x80\xae" * 4,
                   bytes([n, 0]) + "Søren ’x’ \u202e".encode() * 3]:
            want = _reference(column, dec, data)
            try:
                got: Any = make(data, 0)
            except (IndexError, ValueError, OverflowError, struct.error):   # BadValue too
                got = "error"
            assert got == want, (col, data)
            accepted += got != "error"
    assert (accepted == 0) == getattr(dec, "unsupported", False), accepted


def _event(tc: int, body: Any, offset: int = 4) -> Event:
    return Event(pos=Position("f", offset), timestamp=0, type_code=tc, server_id=1,
                 event_size=0, log_pos=0, flags=0, body=body, raw=b"")


#: how many text_block calls went to the reference rendering (text_lines)
FALLBACKS = [0]


def _both(renderer: RowsRenderer, ev: Event) -> tuple[Any, Any]:
    try:
        want: Any = list(renderer.text_lines(ev))
    except MalformedEvent as exc:
        want = ("error", str(exc))
    reference = renderer.text_lines

    def counted(e: Event) -> Any:
        FALLBACKS[0] += 1
        return reference(e)
    renderer.text_lines = counted  # type: ignore[method-assign]
    try:
        block, n = renderer.text_block(ev)
        got: Any = ("\n".join(block).split("\n") if block else [])
        if n is not None:
            assert n == sum(line.startswith(("### INSERT", "### UPDATE", "### DELETE"))
                            for line in got)
    except MalformedEvent as exc:
        got = ("error", str(exc))
    finally:
        del renderer.text_lines
    return got, want


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=images(), verbosity=st.sampled_from([1, 2]), numbered=st.booleans())
def test_text_block_agrees_with_the_reference(case: tuple[Any, RowsBody, int], verbosity: int,
                                              numbered: bool) -> None:
    cols, body, tc = case
    renderer = RowsRenderer(verbosity, numbered=numbered)
    tm = table_map([t for t, _ in cols], b"".join(m for _, m in cols))
    renderer.observe(_event(19, tm))
    got, want = _both(renderer, _event(tc, body))
    assert got == want, (cols, body)


def test_a_rows_event_without_its_table_map() -> None:
    renderer = RowsRenderer(1)
    block, n = renderer.text_block(_event(30, rows_body(1, b"\x00\x01")))
    assert n is None and block == ["### (rows of table id 42 not shown: no Table_map seen)"]


# ---- the corpus ----

def _render_all(events: list[Any]) -> int:
    """Render every Rows event both ways; returns the number of rows compared."""
    renderer = RowsRenderer(2)
    rows = 0
    fast = 0
    for ev in events:
        if isinstance(ev.body, TableMapBody):
            try:
                renderer.observe(ev)
            except ReplToolError:
                renderer.tables.pop(ev.body.table_id, None)
        elif isinstance(ev.body, RowsBody):
            fell_back = FALLBACKS[0]
            got, want = _both(renderer, ev)
            assert got == want, ev.pos
            if FALLBACKS[0] == fell_back:
                fast += 1
            else:       # only what the programs leave to the reference: partial JSON
                assert ev.type_code == 39 or isinstance(want, tuple) or not ev.body.rows \
                    or ev.body.table_id not in renderer.tables, ev.pos
            rows += sum(line.startswith(("### INSERT", "### UPDATE", "### DELETE"))
                        for line in want) if isinstance(want, list) else 0
    assert fast > 0 or rows == 0
    return rows


@pytest.mark.parametrize("name", list(MARIADB_SETS))
def test_text_blocks_on_every_mariadb_set(corpus: Path, name: str) -> None:
    base, pattern = MARIADB_SETS[name]
    files = sorted((corpus / base).glob(pattern))
    events: list[Any] = []
    for f in files:
        events += _readable_events(f)
    assert _render_all(events) > 0


def test_text_blocks_on_every_mysql_corpus_file(corpus: Path) -> None:
    files = sorted(p for p in (corpus / "mysql").glob("*/*") if p.is_file())
    assert len(files) >= 100
    assert sum(_render_all(_readable_events(p)) for p in files) > 10_000
