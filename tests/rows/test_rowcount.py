"""RowCounter: rows per Rows event by walking the images, in both engines; what it
cannot walk it says so (never a guess).  Corpus-wide agreement with the decoder and
``mariadb-binlog -v`` is in ``tests/stats/test_rows.py``."""

from __future__ import annotations

import pytest

from repltool.binlog import engine
from repltool.binlog.coltypes import ColumnType as T
from repltool.binlog.rowcount import KIND_INDEX, RowCounter

from ._build import TABLE_ID, image, json_diff, jsonb, rows_body, table_map
from repltool.binlog.structs import encode_packed_int as packed

ENGINES = ["compiled", "python"]
INT1 = b"\x01\x00\x00\x00"


def _counter(monkeypatch, which: str, types, metadata: bytes = b"") -> RowCounter:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(engine.ENV, which)
    c = RowCounter()
    c.table_map(table_map(types, metadata))
    return c


@pytest.mark.parametrize("which", ENGINES)
def test_insert_update_delete(monkeypatch, which: str) -> None:  # type: ignore[no-untyped-def]
    c = _counter(monkeypatch, which, [T.LONG, T.VARCHAR], b"\x20\x00")
    images = [image([i.to_bytes(4, "little"), bytes([i]) + b"x" * i]) for i in range(5)]
    rows = b"".join(images)
    assert c.rows(30, rows_body(2, rows)) == (KIND_INDEX["insert"], 5)
    assert c.rows(32, rows_body(2, rows)) == (KIND_INDEX["delete"], 5)
    # an UPDATE row is a before/after pair
    assert c.rows(31, rows_body(2, b"".join(images[:4]), update=True)) == (KIND_INDEX["update"], 2)
    assert c.rows(31, rows_body(2, rows, update=True)) == (3, 1)     # half a pair: not walked
    # v1 types, NULLs
    assert c.rows(23, rows_body(2, image([INT1, None]) * 3)) == (0, 3)


@pytest.mark.parametrize("which", ENGINES)
def test_partial_update(monkeypatch, which: str) -> None:  # type: ignore[no-untyped-def]
    c = _counter(monkeypatch, which, [T.LONG, T.JSON], b"\x04")
    doc = jsonb({"a": 1})
    before = image([INT1, len(doc).to_bytes(4, "little") + doc])
    diff = json_diff([(0, "$.a", 5)])
    after = packed(1) + b"\x01" + image([INT1, len(diff).to_bytes(4, "little") + diff])
    full = packed(0) + image([INT1, None])
    body = rows_body(2, before + after + before + full, update=True)
    assert c.rows(39, body) == (KIND_INDEX["update"], 2)


@pytest.mark.parametrize("which", ENGINES)
def test_what_cannot_be_walked_is_said(monkeypatch, which: str) -> None:  # type: ignore[no-untyped-def]
    c = _counter(monkeypatch, which, [T.LONG, T.VARCHAR], b"\x20\x00")
    good = image([INT1, b"\x03abc"]) * 2
    assert c.rows(30, rows_body(2, good[:-1])) == (3, 1)             # runs past the end
    assert c.rows(30, rows_body(3, good)) == (3, 1)                  # wider than its Table_map
    assert c.rows(31, rows_body(2, good[:len(good) // 2 + 3], update=True)) == (3, 1)
    other = rows_body(2, good)
    unknown = type(other)(TABLE_ID + 1, 1, b"", 2, other.columns_before, None, good)
    assert c.rows(30, unknown) == (3, 1)                             # no Table_map
    assert c.rows(30, b"\x00") == (3, 1)                             # bytes, no FDE known
    assert RowCounter().rows(30, other) == (3, 1)
    assert c.rows(30, other) == (0, 2)
