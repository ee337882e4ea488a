"""Issue 14 item 12: MySQL 9.x logs with VECTOR columns, read end to end.

The logs are written with the project's encoder (``repltool.synth``): an FDE
of server 9.1.0, GTIDs, ``binlog_row_metadata=FULL`` Table_maps and Rows v2
events.  What MySQL 9.x writes for a VECTOR column (``sql/log_event.cc``,
``sql/rpl_utility.cc``):

* type 242 with one metadata byte, the length-prefix size
  (``read_field_metadata`` lists VECTOR with the one-byte types); the row value
  is a 4-byte little-endian length then float32s (``log_event_print_value``:
  ``length = uint4korr(ptr)``, ``get_dimensions(length, sizeof(float))``);
* ``is_character_type`` counts VECTOR (binary collation 63), so the column takes
  a slot in DEFAULT_CHARSET / COLUMN_CHARSET between the string columns;
* ``init_vector_dimensionality_field``: VECTOR_DIMENSIONALITY (type 13), one
  packed integer per VECTOR column.

Before VECTOR counted among the charset columns, ``certify`` stopped with exit 3
(``DEFAULT_CHARSET names column #1 of 1``).
"""

from __future__ import annotations

import json
import struct
import uuid
from pathlib import Path
from typing import Any, Sequence

import pytest

from repltool.binlog import read_transactions
from repltool.binlog import structs as S
from repltool.binlog.coltypes import decode_table_map
from repltool.binlog.constants import EventType
from repltool.binlog.events import RowsBody, TableMapBody
from repltool.binlog.rows import decode_rows
from repltool.binlog.structs import encode_packed_int
from repltool.cli import run
from repltool.synth import BinlogBuilder, query_body
from repltool.synth.tables import Column, Table, int_col, varchar_col
from repltool.writeset import READ_OPTIONS, load_schema

from ._paths import check_paths
from .test_mysql_faith import DELETE, UPDATE, WRITE, fast_ran, rows_body, strings, writesets

UUID9 = uuid.UUID("99999999-9999-9999-9999-999999999999")


def _vector(v: Sequence[float]) -> bytes:
    return struct.pack(f"<I{len(v)}f", 4 * len(v), *v)


def vector_col(name: str, dims: int, *, nullable: bool = False) -> Column:
    """VECTOR(dims): type 242, metadata 4 (length bytes), binary collation."""
    return Column(name, f"vector({dims})", 242, b"\x04", nullable, _vector, charset=63)


def table_map(t: Table, dims: Sequence[int]) -> bytes:
    """FULL Table_map as 9.x writes it: 8.0's fields, then VECTOR_DIMENSIONALITY."""
    value = b"".join(encode_packed_int(d) for d in dims)
    return t.table_map_body(full_metadata=True) + bytes((13,)) + encode_packed_int(len(value)) \
        + value


def tables() -> dict[str, tuple[Table, tuple[int, ...]]]:
    # label utf8mb4, v VECTOR(3), note utf8mb4: DEFAULT_CHARSET 255 + (column #1 -> 63)
    emb = Table("test", "emb", (int_col("id"), varchar_col("label", 16), vector_col("v", 3),
                                varchar_col("note", 8, nullable=True)),
                primary=("id",), table_id=81)
    # one string, one VECTOR: the 8.0 reader saw "DEFAULT_CHARSET names column #1 of 1"
    pair = Table("test", "pair", (int_col("id"), varchar_col("s", 8), vector_col("w", 2)),
                 primary=("id",), table_id=82)
    # VECTOR first, then a string: COLUMN_CHARSET (63, 255) is the shorter form
    first = Table("test", "first", (int_col("id"), vector_col("w", 2, nullable=True),
                                    varchar_col("s", 8)), primary=("id",), table_id=83)
    # no primary key, a UNIQUE key on the string; the VECTOR only rides along
    nokey = Table("test", "nokey", (varchar_col("tag", 8), vector_col("w", 2)), table_id=84)
    return {"emb": (emb, (3,)), "pair": (pair, (2,)), "first": (first, (2,)),
            "nokey": (nokey, (2,))}


SCHEMA = """
USE test;
CREATE TABLE emb (id INT NOT NULL PRIMARY KEY, label VARCHAR(16) NOT NULL,
                  v VECTOR(3) NOT NULL, note VARCHAR(8));
CREATE TABLE pair (id INT NOT NULL PRIMARY KEY, s VARCHAR(8) NOT NULL, w VECTOR(2) NOT NULL);
CREATE TABLE `first` (id INT NOT NULL PRIMARY KEY, w VECTOR(2), s VARCHAR(8) NOT NULL);
CREATE TABLE nokey (tag VARCHAR(8) NOT NULL, w VECTOR(2) NOT NULL, UNIQUE KEY uk_tag (tag));
"""


def write_log(path: Path, trxs: list[list[tuple[str, int, bytes]]]) -> Path:
    T = tables()
    with open(path, "wb") as fh:
        b = BinlogBuilder(fh, server_version="9.1.0", server_version_int=90100)
        b.start(1_760_000_000, (UUID9, 0))
        for gno, entries in enumerate(trxs, 1):
            bodies: list[tuple[int, bytes]] = [(EventType.QUERY_EVENT,
                                                query_body(1, "test", "BEGIN"))]
            for name, kind, body in entries:
                t, dims = T[name]
                bodies += [(EventType.TABLE_MAP_EVENT, table_map(t, dims)), (kind, body)]
            bodies.append((EventType.XID_EVENT, S.xid_body.build({"xid": gno})))
            b.transaction(1_760_000_000_000_000 + gno, UUID9, gno, gno - 1, gno, bodies)
        b.close(1_760_000_100, None)
    return path


@pytest.fixture()
def vector_log(tmp_path: Path) -> tuple[Path, Path]:
    T = {k: t for k, (t, _) in tables().items()}
    schema = tmp_path / "schema.sql"
    schema.write_text(SCHEMA)
    log = write_log(tmp_path / "binlog.000001", [
        [("emb", WRITE, rows_body(T["emb"], WRITE, [(1, "a", (1.5, -2.25, 0.0), "x"),
                                                     (2, "b", (0.5, 4.0, -1.0), None)]))],  # 1
        [("pair", WRITE, rows_body(T["pair"], WRITE, [(7, "s", (3.0, 0.125))]))],         # 2
        [("emb", UPDATE, rows_body(T["emb"], UPDATE, [(1, "a", (1.5, -2.25, 0.0), "x"),
                                                       (1, "a", (9.0, 9.0, 9.0), "y")]))],  # 3
        [("first", WRITE, rows_body(T["first"], WRITE, [(5, None, "n"),
                                                         (6, (1.0, 2.0), "m")]))],         # 4
        [("pair", DELETE, rows_body(T["pair"], DELETE, [(7, "s", (3.0, 0.125))]))],       # 5
        [("nokey", WRITE, rows_body(T["nokey"], WRITE, [("k1", (0.25, 0.75))]))],         # 6
        [("nokey", WRITE, rows_body(T["nokey"], WRITE, [("k2", (0.25, 0.75))]))],         # 7
        [("nokey", UPDATE, rows_body(T["nokey"], UPDATE, [("k1", (0.25, 0.75)),
                                                           ("k1", (-1.0, 1.0))]))],       # 8
    ])
    return log, schema


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    def invoke(*args: object, expect: int = 0) -> tuple[str, str]:
        code = run([str(a) for a in args])
        out, err = capsys.readouterr()
        assert code == expect, f"exit {code}\nstderr: {err}"
        return out, err
    return invoke


def _maps_and_rows(log: Path) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    maps: dict[str, Any] = {}
    rows: dict[str, list[Any]] = {}
    for trx in read_transactions([str(log)], READ_OPTIONS, keep_events=True):
        td = None
        for ev in trx.events:
            if isinstance(ev.body, TableMapBody):
                td = decode_table_map(ev.body)
                maps[td.table] = td
            elif isinstance(ev.body, RowsBody):
                assert td is not None
                rows.setdefault(td.table, []).extend(
                    decode_rows(td, ev.body, ev.type_code))
    return maps, rows


def test_table_maps_and_vector_values_decode(vector_log) -> None:  # type: ignore[no-untyped-def]
    log, _ = vector_log
    maps, rows = _maps_and_rows(log)
    # the VECTOR takes its slot among the charset columns (binary) and gets its dimensions
    assert [(c.name, c.collation, c.vector_dimensions) for c in maps["emb"].columns] == [
        ("id", None, None), ("label", 255, None), ("v", 63, 3), ("note", 255, None)]
    assert [(c.name, c.collation) for c in maps["pair"].columns] == [
        ("id", None), ("s", 255), ("w", 63)]
    assert [(c.name, c.collation) for c in maps["first"].columns] == [
        ("id", None), ("w", 63), ("s", 255)]
    emb = rows["emb"]
    assert emb[0].after.values == (1, "a", (1.5, -2.25, 0.0), "x")
    assert emb[1].after.values == (2, "b", (0.5, 4.0, -1.0), None)
    assert emb[2].before.values[2] == (1.5, -2.25, 0.0)
    assert emb[2].after.values == (1, "a", (9.0, 9.0, 9.0), "y")
    assert all(type(x) is float for x in emb[0].after.values[2])
    assert [r.after.values for r in rows["first"]] == [(5, None, "n"), (6, (1.0, 2.0), "m")]
    assert rows["pair"][1].before.values == (7, "s", (3.0, 0.125))


def test_dump_vv_and_jsonl_print_the_vectors(cli, vector_log) -> None:  # type: ignore[no-untyped-def]
    log, _ = vector_log
    out, _ = cli("dump", "-vv", log)
    assert "server v 9.1.0" in out
    assert "###   v='[1.5,-2.25,0]' /* VECTOR meta=4 nullable=0 is_null=0 */" in out
    assert "###   w=NULL /* VECTOR meta=4 nullable=1 is_null=1 */" in out
    assert "###   w='[3,0.125]' /* VECTOR meta=4 nullable=0 is_null=0 */" in out
    out, _ = cli("dump", "--format", "jsonl", "-v", log)
    rows = [r for line in out.splitlines() for r in json.loads(line).get("rows", ())]
    assert rows[0]["after"] == {"id": 1, "label": "a", "v": [1.5, -2.25, 0.0], "note": "x"}
    assert rows[-1]["after"] == {"tag": "k1", "w": [-1.0, 1.0]}


def _jsonl(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_certify_exits_0_with_the_primary_keys(cli, vector_log) -> None:  # type: ignore[no-untyped-def]
    log, schema = vector_log
    # Table_map keys only (SIMPLE_PRIMARY_KEY): nokey has none -> missing keys
    out, _ = cli("certify", "--format", "jsonl", log)
    recs = _jsonl(out)
    assert [r["computed"] for r in recs[:5]] == [[0, 1], [1, 2], [1, 3], [1, 4], [2, 5]]
    # 5 rewrites pair.id=7 of 2 (3's own parent, emb.id=1 of 1, is the history's start)
    assert recs[4]["depends_on"]["reason"] == "key" and recs[4]["depends_on"]["key"] == {
        "db": "test", "table": "pair", "index": "PRIMARY", "values": ["7"]}
    assert [r["depends_on"]["reason"] for r in recs[5:]] == ["no-key"] * 3
    text, _ = cli("certify", log)
    assert "no-schema" in text
    # with the schema the key-less table's UNIQUE key counts; the VECTOR rides along
    out, _ = cli("certify", "--format", "jsonl", "--schema", schema, log)
    recs = _jsonl(out)
    assert [r["computed"] for r in recs] == [[0, 1], [1, 2], [1, 3], [1, 4], [2, 5], [1, 6],
                                             [1, 7], [6, 8]]
    assert recs[7]["depends_on"]["key"] == {"db": "test", "table": "nokey", "index": "uk_tag",
                                            "values": ["k1"]}


def test_dump_writesets_and_every_path(cli, vector_log) -> None:  # type: ignore[no-untyped-def]
    log, schema = vector_log
    out, _ = cli("dump", "--writesets", "--schema", schema, log)
    recs = _jsonl(out)
    assert [[(k["table"], k["index"], k["values"]) for k in r["keys"]][:2] for r in recs] == [
        [("emb", "PRIMARY", [1]), ("emb", "PRIMARY", [2])],
        [("pair", "PRIMARY", [7])],
        [("emb", "PRIMARY", [1]), ("emb", "PRIMARY", [1])],
        [("first", "PRIMARY", [5]), ("first", "PRIMARY", [6])],
        [("pair", "PRIMARY", [7])],
        [("nokey", "uk_tag", ["k1"])] * 2,
        [("nokey", "uk_tag", ["k2"])] * 2,
        [("nokey", "uk_tag", ["k1"])] * 2]
    assert all(not r["flags"]["missing_key_tables"] for r in recs)
    out, _ = cli("dump", "--writesets", log)
    assert [r["flags"]["missing_key_tables"] for r in _jsonl(out)][5:] == [["test.nokey"]] * 3
    # general, key-only, fused and text paths agree; the fused reader takes the whole log
    got = check_paths([log], load_schema(schema))
    assert got.error is None and got.transactions == 8 and got.fast_complete
    assert fast_ran(log, schema)
    ws = writesets(log, schema)
    assert ws[0].keys[0].key == "PRIMARY½test½4emb½3".encode() + b"\x80\x00\x00\x01" + "½4".encode()
    # the UNIQUE key is the tag's utf8mb4_0900_ai_ci sort key; the VECTOR is in no key
    assert {k.key for k in ws[5].keys} == {"uk_tag½test½4nokey½5".encode() + b"\x1de\x1c>"
                                           + "½4".encode()}


def test_stats(cli, vector_log) -> None:  # type: ignore[no-untyped-def]
    log, _ = vector_log
    out, _ = cli("stats", log)
    assert "9.1.0" in out
    assert "│ TABLE_MAP_EVENT          │     8 │" in out
    assert "│ WRITE_ROWS_EVENT         │     5 │" in out
