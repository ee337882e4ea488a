"""The row counters of :func:`repltool.binlog.rowwalk.row_counter` against the general
decoder.

A counter walks the images of one Rows layout in one of two ways, chosen per image by
its NULL bitmap: when no column the Table_map declares NOT NULL is NULL, the NOT NULL
columns are stepped over without a test, fixed widths added up and content checked by
offset (DECIMAL digit groups and temporal fractions compared as bytes); otherwise
:func:`~repltool.binlog.rowwalk.image_source`'s walk.  Both must accept exactly the
Rows bodies :func:`~repltool.binlog.rows.iter_row_changes` accepts and count the rows
it yields.  The line tracer below records which of the two ways each image took, so
every test asserts the way it means to test actually ran.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog.coltypes import ColumnType as T, TableDef, decode_table_map
from repltool.binlog.events import RowsBody
from repltool.binlog.rows import iter_row_changes
from repltool.binlog.rowwalk import column_layout, counter_source, row_counter
from repltool.binlog.temporal import BadValue
from repltool.errors import MalformedEvent

from ._build import bitmap, encode_decimal, rows_body, table_map
from .test_rowwalk import COLUMNS, _value

Cols = list[tuple[int, bytes]]


def _table(cols: Cols, nullable: list[bool]) -> TableDef:
    return decode_table_map(table_map([t for t, _ in cols], b"".join(m for _, m in cols),
                                      nullable=nullable))


def _general(td: TableDef, body: RowsBody, tc: int) -> int | None:
    """The general decoder's row count (``None``: it refuses the body)."""
    try:
        return sum(1 for _ in iter_row_changes(td, body, tc))
    except MalformedEvent:
        return None


def _branches(td: TableDef, body: RowsBody, tc: int) -> tuple[int, int] | None:
    """Line numbers (of the counter's code) of the first line of the first image's
    general and fast walks; ``None`` when the layout has no NOT NULL column (one walk)."""
    src = counter_source(td, body.columns_before, body.columns_after if tc == 31 else None,
                         body.width, {})
    assert src is not None
    if not src[5].startswith("        if n & "):
        return None
    return 7, src.index("        else:") + 2


def _count(td: TableDef, body: RowsBody, tc: int) -> tuple[int | None, set[int]]:
    """The counter's row count (``None``: refused) and the lines of its code that ran."""
    count = row_counter(td, body.columns_before, body.columns_after if tc == 31 else None,
                        body.width)
    assert count is not None
    ran: set[int] = set()

    def tracer(frame: Any, event: str, arg: Any) -> Callable[..., Any] | None:
        if frame.f_code is count.__code__:      # type: ignore[attr-defined]
            if event == "line":
                ran.add(frame.f_lineno)
            return tracer
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        n: int | None = count(body.rows, 0)
    except (IndexError, BadValue, ValueError, OverflowError):
        n = None
    finally:
        sys.settrace(old)
    return n, ran


@st.composite
def layouts(draw: st.DrawFn) -> tuple[Cols, list[bool], RowsBody, int, bool]:
    """Columns of every type (nullable or NOT NULL), images whose NULL bits mostly leave
    the NOT NULL columns alone, values shaped like their column or junk, sometimes cut.
    The last item: the first image's NULL bits spare the NOT NULL columns (where the
    next images start depends on junk and cuts)."""
    cols = draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=12))
    width = len(cols)
    nullable = draw(st.lists(st.booleans(), min_size=width, max_size=width))
    td = _table(cols, nullable)
    present = draw(st.lists(st.booleans(), min_size=width, max_size=width))
    if not any(present):
        present[draw(st.integers(0, width - 1))] = True
    idx = [i for i in range(width) if present[i]]
    tc = draw(st.sampled_from([30, 31, 32]))
    data = b""
    first_fast = True
    for r in range(draw(st.integers(1, 3)) * (2 if tc == 31 else 1)):
        strict = draw(st.integers(0, 4)) != 0           # the NULL bits servers write
        nulls = [draw(st.booleans()) and (nullable[i] or not strict) for i in idx]
        if r == 0:
            first_fast = not any(n and not nullable[i] for i, n in zip(idx, nulls))
        data += bitmap(nulls)
        for i, null in zip(idx, nulls):
            if not null:
                data += _value(draw, td, i)
    if draw(st.integers(0, 3)) == 0:
        data = data[:draw(st.integers(0, len(data)))]
    return cols, nullable, rows_body(width, data, present=present, present_after=present,
                                     update=tc == 31), tc, first_fast


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=layouts())
def test_counter_agrees_with_the_decoder(
        case: tuple[Cols, list[bool], RowsBody, int, bool]) -> None:
    """Same count, same refusals; the first image took the walk its NULL bits call for."""
    cols, nullable, body, tc, first_fast = case
    td = _table(cols, nullable)
    got, ran = _count(td, body, tc)
    assert got == _general(td, body, tc), (cols, nullable, body)
    lines = _branches(td, body, tc)
    if lines is not None and body.rows:
        general, fast = lines
        assert (fast if first_fast else general) in ran, (cols, body)


def _decimal_groups(precision: int, scale: int) -> list[tuple[int, int, int]]:
    """(first byte, bytes, limit) of each digit group of a binary DECIMAL."""
    td = _table([(T.NEWDECIMAL, bytes([precision, scale]))], [False])
    kind, (size, checks) = column_layout(td.columns[0], td.decoders[0])
    assert kind == "decimal"
    out = []
    for shift, mask, limit in checks:
        k = mask.bit_length() // 8
        out.append((size - shift // 8 - k, k, limit))
    return out


DECIMALS = [(1, 0), (1, 1), (2, 0), (4, 4), (5, 2), (9, 0), (10, 0), (10, 2), (12, 2),
            (18, 9), (19, 0), (30, 12), (38, 10), (65, 30), (65, 0), (81, 0)]


def test_decimal_digit_groups_at_their_limits() -> None:
    """Every digit group of many DECIMAL types set to each stored value next to where a
    positive or a negative value's group reaches its limit (and to its extremes): the
    fast walk refuses exactly the values the decoder refuses (and did the work)."""
    checked = refused = 0
    for precision, scale in DECIMALS:
        td = _table([(T.NEWDECIMAL, bytes([precision, scale])), (T.LONG, b"")], [False, False])
        size = len(encode_decimal("0", precision, scale))
        groups = _decimal_groups(precision, scale)
        for negative in (False, True):
            one = "1" if precision > scale else "0." + "0" * (scale - 1) + "1"
            base = bytearray(encode_decimal("-" + one if negative else one, precision, scale))
            for start, k, limit in groups:
                ceiling = 1 << 8 * k
                top = 0x80 << 8 * (k - 1) if start == 0 else 0
                if negative:
                    edge = ceiling - 1 - top - limit
                    values = {edge - 1, edge, edge + 1, 0, ceiling - 1 - top}
                else:
                    edge = limit + top
                    values = {edge - 1, edge, edge + 1, top, ceiling - 1}
                for v in sorted(x for x in values if 0 <= x < ceiling):
                    if start == 0 and bool(v & top) == negative:
                        continue            # the sign bit belongs to the other branch
                    raw = bytearray(base)
                    raw[start:start + k] = v.to_bytes(k, "big")
                    body = rows_body(2, (bitmap([False, False]) + bytes(raw) + b"\x01\x00\x00\x00") * 2)
                    want = _general(td, body, 30)
                    got, ran = _count(td, body, 30)
                    assert got == want, (precision, scale, negative, start, v)
                    general, fast = _branches(td, body, 30) or (0, 0)
                    assert fast in ran and general not in ran
                    checked += 1
                    refused += want is None
            assert len(base) == size
    assert checked > 300 and 0 < refused < checked


def test_fractions_at_their_limits() -> None:
    """DATETIME2 / TIMESTAMP2 of every precision: fractions at and past the largest one,
    a DATETIME2 with the sign bit clear, by the fast walk."""
    checked = 0
    for t in (T.DATETIME2, T.TIMESTAMP2):
        for fsp in range(7):
            td = _table([(t, bytes([fsp])), (T.TINY, b"")], [False, False])
            kind, (size, head, fb, _) = column_layout(td.columns[0], td.decoders[0])
            assert kind == "temporal"
            limit = {0: 0, 1: 99, 2: 9999, 3: 999999}[fb]
            for first in (0x80, 0x99, 0x10):
                for frac in {0, limit, limit + 1, (1 << 8 * fb) - 1}:
                    if frac >= 1 << 8 * fb:
                        continue
                    value = bytes([first]) + bytes(head - 1) + frac.to_bytes(fb, "big")
                    body = rows_body(2, bitmap([False, False]) + value + b"\x07")
                    got, ran = _count(td, body, 30)
                    assert got == _general(td, body, 30), (t, fsp, first, frac)
                    general, fast = _branches(td, body, 30) or (0, 0)
                    assert fast in ran and general not in ran
                    checked += 1
    assert checked > 80


def test_a_null_not_null_column_takes_the_general_walk() -> None:
    """A NULL bit on a NOT NULL column (no server writes one; the decoder takes it as
    NULL): the image is walked the general way, and counted like the decoder."""
    td = _table([(T.LONG, b""), (T.VARCHAR, (20).to_bytes(2, "little")), (T.LONG, b"")],
                [False, True, False])
    good = bitmap([False, False, False]) + b"\x01\x00\x00\x00" + b"\x02ab" + b"\x02\x00\x00\x00"
    odd = bitmap([True, False, False]) + b"\x02ab" + b"\x02\x00\x00\x00"
    body = rows_body(3, odd + good + odd)
    got, ran = _count(td, body, 30)
    assert got == _general(td, body, 30) == 3
    general, fast = _branches(td, body, 30) or (0, 0)
    assert general in ran and fast in ran
