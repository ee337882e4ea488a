"""``RecordWriter.line`` is ``json.dumps(writeset_record(...), ensure_ascii=False)``, exactly."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.positions import Position
from repltool.writeset import TrxWriteset, WriteKey, load_schema, read_writesets, writeset_record
from repltool.writeset.fused import read_writeset_summaries
from repltool.writeset.jsonl import RecordWriter

from .test_corpus import SETS


def _same_lines(pairs) -> int:  # type: ignore[no-untyped-def]
    writer = RecordWriter()
    n = 0
    for trx, ws in pairs:
        assert writer.line(trx, ws) == json.dumps(writeset_record(trx, ws), ensure_ascii=False)
        n += len(ws.keys)
    return n


def test_synthetic_logs(synth_logs: dict) -> None:
    keys = 0
    for name in ("hot", "relay", "mysql57"):
        files, schema = synth_logs[name]
        keys += _same_lines(read_writeset_summaries(files, load_schema(schema)))
    assert keys > 3000


@pytest.mark.filterwarnings("ignore::repltool.writeset.SchemaWarning")
def test_mariadb_set(corpus: Path) -> None:
    pattern, _, schema = SETS["small"]
    root = corpus / "mariadb"
    assert _same_lines(read_writesets(sorted(root.glob(pattern)),
                                      load_schema(root / schema / "schema.sql"))) > 1000


_values = st.one_of(
    st.integers(-2**70, 2**70), st.text(), st.binary(max_size=8), st.none(), st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.dates().map(lambda d: d), st.datetimes(),
    st.timedeltas(min_value=timedelta(hours=-838), max_value=timedelta(hours=838)))


class _Trx:
    def __init__(self, file: str, offset: int, gtid: str | None) -> None:
        self.start = Position(file, offset, None)
        self.gtid = gtid


@settings(max_examples=300, deadline=None)
@given(keys=st.lists(st.tuples(st.text(max_size=5), st.text(max_size=5), st.text(max_size=8),
                               st.lists(_values, max_size=3), st.integers(0, 2**64 - 1),
                               st.booleans()), max_size=6),
       file=st.text(max_size=10), offset=st.integers(0, 2**40),
       gtid=st.one_of(st.none(), st.text(max_size=12)),
       flags=st.tuples(st.booleans(), st.booleans(), st.lists(st.text(max_size=6), max_size=2),
                       st.booleans()))
def test_generated_records(keys, file, offset, gtid, flags) -> None:  # type: ignore[no-untyped-def]
    wks = tuple(WriteKey(db, t, ix, tuple(vals), b"", h, parent)
                for db, t, ix, vals, h, parent in keys)
    ws = TrxWriteset(keys=wks + wks[:2], ddl=flags[0], empty=flags[1],
                     missing_key_tables=tuple(flags[2]), limit_reached=flags[3])
    trx = _Trx(file, offset, gtid)
    writer = RecordWriter()
    for _ in range(2):          # the second time from the caches
        assert writer.line(trx, ws) == json.dumps(writeset_record(trx, ws),  # type: ignore[arg-type]
                                                  ensure_ascii=False)


def test_value_types_spelled_like_json_dumps() -> None:
    values = (7, -3, "a\"b\\c\n\u00e9\U0001f600", b"\x00\xff", Decimal("1.50"), 1.5,
              date(2024, 2, 29), datetime(2024, 1, 1, 12, 0, 0, 5), timedelta(seconds=-1), None)
    ws = TrxWriteset(keys=(WriteKey("d", "t", "PRIMARY", values, b"k", 1),))
    trx = _Trx("f", 4, None)
    line = RecordWriter().line(trx, ws)  # type: ignore[arg-type]
    assert line == json.dumps(writeset_record(trx, ws), ensure_ascii=False)  # type: ignore[arg-type]
    assert json.loads(line)["keys"][0]["values"][0:2] == [7, -3]
