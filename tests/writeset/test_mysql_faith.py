"""Issue 14 (extraction): MySQL 8.0.43's add_pke rules on real logs.

Each case is a binlog written with the project's encoder (``repltool.synth``:
FDE, GTIDs, Table_map with FULL metadata, Rows v2 events) plus a schema file,
read by every path (general, key-only, fused: ``_paths.check_paths``), and -
where it matters for the clocks - certified.  Expected key strings and hashes
are MySQL's own debug vectors (``sql/rpl_write_set_handler.cc``
debug_check_for_write_sets: ``PKE_assert_*``); their key columns are one-byte
binary strings (sort key = the byte, e.g. ``PRIMARY½test½4t1½21½1``).
"""

from __future__ import annotations

from dataclasses import replace

import uuid
import warnings
from pathlib import Path
from typing import Any, Sequence

import pytest

from repltool.writeset.extract import GeneralWritesetExtractor
from repltool.binlog import read_transactions
from repltool.binlog import structs as S
from repltool.binlog.constants import EventType
from repltool.certify import Mode
from repltool.certify.report import CertifyRun
from repltool.synth import BinlogBuilder, query_body
from repltool.synth.builder import MYSQL80_POST_HEADER_LEN
from repltool.synth.tables import Column, Table, int_col, varchar_col
from repltool.writeset import READ_OPTIONS, WritesetExtractor, load_schema, read_writesets
from repltool.writeset.fused import iter_fast_writesets

from ._paths import check_paths

UUID1 = uuid.UUID("22222222-2222-2222-2222-222222222222")
ST = S.BinlogStructs(MYSQL80_POST_HEADER_LEN)
WRITE, UPDATE, DELETE = (int(EventType.WRITE_ROWS_EVENT), int(EventType.UPDATE_ROWS_EVENT),
                         int(EventType.DELETE_ROWS_EVENT))


def bin1(name: str, *, nullable: bool = False) -> Column:
    """BINARY(1): sort key = the byte (the columns of MySQL's PKE debug tests)."""
    return Column(name, "binary(1)", 254, bytes((254, 1)), nullable,
                  lambda v: bytes((1,)) + v.encode(), charset=63)


def rows_body(t: Table, kind: int, images: Sequence[Any], *, present: int | None = None,
              present_after: int | None = None, flags: int = 1) -> bytes:
    """Rows v2: ``images`` are full rows (``None`` = NULL); ``present`` masks columns
    out of the image (MINIMAL/NOBLOB), for an UPDATE the after image's own mask."""
    n = len(t.columns)
    full = (1 << n) - 1

    def image(row: Sequence[Any], mask: int) -> bytes:
        cols = [i for i in range(n) if mask >> i & 1]
        nulls = 0
        for k, i in enumerate(cols):
            if row[i] is None:
                nulls |= 1 << k
        return nulls.to_bytes((len(cols) + 7) // 8, "little") + b"".join(
            t.columns[i].encode(row[i]) for i in cols if row[i] is not None)

    before = full if present is None else present
    after = full if present_after is None else present_after
    data = b""
    for k, row in enumerate(images):
        data += image(row, after if kind == UPDATE and k % 2 else before)
    nb = (n + 7) // 8
    return ST.rows_v2_body.build({
        "table_id": t.table_id, "flags": flags, "extra_info": b"", "width": n,
        "columns_before": before.to_bytes(nb, "little"),
        "columns_after": after.to_bytes(nb, "little") if kind == UPDATE else None,
        "rows": data}, is_update=kind == UPDATE)


def write_log(path: Path, trxs: list[list[tuple[Table, int, bytes]]]) -> Path:
    """One binlog: per transaction BEGIN, (Table_map, Rows) per entry, XID; serial clocks."""
    with open(path, "wb") as fh:
        b = BinlogBuilder(fh)
        b.start(1_760_000_000, (UUID1, 0))
        for gno, entries in enumerate(trxs, 1):
            bodies: list[tuple[int, bytes]] = [(EventType.QUERY_EVENT, query_body(1, "test", "BEGIN"))]
            for t, kind, body in entries:
                bodies += [(EventType.TABLE_MAP_EVENT, t.table_map_body(full_metadata=True)),
                           (kind, body)]
            bodies.append((EventType.XID_EVENT, S.xid_body.build({"xid": gno})))
            b.transaction(1_760_000_000_000_000 + gno, UUID1, gno, gno - 1, gno, bodies)
        b.close(1_760_000_100, None)
    return path


def writesets(path: Path, schema: Path) -> list[Any]:
    """The writesets of every path, checked equal; the general path's list."""
    sch = load_schema(schema)
    got = check_paths([path], sch)
    assert got.error is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = GeneralWritesetExtractor(sch)
        return [ex.writeset(t) for t in read_transactions([str(path)], READ_OPTIONS,
                                                          keep_events=True)]


def fast_ran(path: Path, schema: Path) -> bool:
    """The fused reader took the whole file (no Unsupported)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sum(1 for _ in iter_fast_writesets([path], load_schema(schema))) > 0


def strings(ws: Any) -> list[str]:
    return [k.key.decode("utf-8") for k in ws.keys]


# ---- MySQL's debug vectors (8.0.43 rpl_write_set_handler.cc) ----

PKE_SQL = """
USE test;
CREATE TABLE t1 (a BINARY(1) NOT NULL, b BINARY(1), c BINARY(1), PRIMARY KEY (a),
                 UNIQUE KEY key_b_c (b, c));
CREATE TABLE t2 (d BINARY(1) NOT NULL, e BINARY(1), f BINARY(1), PRIMARY KEY (d),
                 UNIQUE KEY key_e_f (e, f),
                 CONSTRAINT fk_ef FOREIGN KEY (e, f) REFERENCES t1 (b, c));
CREATE TABLE p3 (a BINARY(1) NOT NULL, b BINARY(1) NOT NULL, c BINARY(1) NOT NULL,
                 PRIMARY KEY (a, b, c));
CREATE TABLE c3 (a BINARY(1) NOT NULL, b BINARY(1) NOT NULL, c BINARY(1) NOT NULL,
                 PRIMARY KEY (a, b, c),
                 CONSTRAINT fk_abc FOREIGN KEY (a, b, c) REFERENCES p3 (a, b, c));
CREATE TABLE s1 (c1 BINARY(1) NOT NULL PRIMARY KEY, c2 BINARY(1) UNIQUE);
CREATE TABLE s2 (c1 BINARY(1) NOT NULL PRIMARY KEY, c2 BINARY(1),
                 FOREIGN KEY (c2) REFERENCES s1 (c2));
"""


def pke_tables() -> dict[str, Table]:
    def t(name: str, cols: list[str], tid: int, pk: tuple[str, ...],
          nullable: tuple[str, ...] = ()) -> Table:
        return Table("test", name, tuple(bin1(c, nullable=c in nullable) for c in cols),
                     primary=pk, table_id=tid)
    return {"t1": t("t1", ["a", "b", "c"], 71, ("a",), ("b", "c")),
            "t2": t("t2", ["d", "e", "f"], 72, ("d",), ("e", "f")),
            "p3": t("p3", ["a", "b", "c"], 73, ("a", "b", "c")),
            "c3": t("c3", ["a", "b", "c"], 74, ("a", "b", "c")),
            "s1": t("s1", ["c1", "c2"], 75, ("c1",), ("c2",)),
            "s2": t("s2", ["c1", "c2"], 76, ("c1",), ("c2",))}


@pytest.fixture()
def pke_log(tmp_path: Path) -> tuple[Path, Path, list[Any]]:
    T = pke_tables()
    schema = tmp_path / "schema.sql"
    schema.write_text(PKE_SQL)
    log = write_log(tmp_path / "binlog.000001", [
        [(T["t1"], WRITE, rows_body(T["t1"], WRITE, [("1", "2", "3")]))],          # 1
        [(T["t2"], WRITE, rows_body(T["t2"], WRITE, [("1", "2", "3")]))],          # 2
        [(T["t2"], UPDATE, rows_body(T["t2"], UPDATE, [("1", "2", "3"),
                                                       ("4", "5", "6")]))],        # 3
        [(T["p3"], WRITE, rows_body(T["p3"], WRITE, [("1", "2", "3")]))],          # 4
        [(T["c3"], WRITE, rows_body(T["c3"], WRITE, [("1", "2", "3")]))],          # 5
        [(T["c3"], UPDATE, rows_body(T["c3"], UPDATE, [("1", "2", "3"),
                                                       ("4", "2", "3")]))],        # 6
        [(T["s1"], WRITE, rows_body(T["s1"], WRITE, [("2", "2")]))],               # 7
        [(T["s2"], WRITE, rows_body(T["s2"], WRITE, [("1", "1")]))],               # 8
        [(T["t2"], WRITE, rows_body(T["t2"], WRITE, [("7", None, None)]))],        # 9
    ])
    return log, schema, writesets(log, schema)


def test_debug_vectors_multi_column_fk_on_unique_key(pke_log) -> None:  # type: ignore[no-untyped-def]
    log, schema, ws = pke_log
    assert fast_ran(log, schema)
    # PKE_assert_multiple_column_unique_key_insert
    assert strings(ws[0]) == ["PRIMARY½test½4t1½21½1", "key_b_c½test½4t1½22½13½1"]
    assert ws[0].hashes == (340395741608101502, 14341778092818779177)
    # PKE_assert_multi_column_foreign_key_on_multiple_column_unique_key_insert
    assert strings(ws[1]) == ["PRIMARY½test½4t2½21½1", "key_e_f½test½4t2½22½13½1",
                              "key_b_c½test½4t1½22½13½1"]
    assert ws[1].hashes == (10002085147685770725, 7781576503154198764, 14341778092818779177)
    assert ws[1].keys[2].parent and ws[1].keys[2].hash == ws[0].keys[1].hash
    # ..._update: after image (4,5,6), then before image (1,2,3)
    assert ws[2].hashes == (7572125940027161025, 12139583969308846244, 3682008013696622692,
                            10002085147685770725, 7781576503154198764, 14341778092818779177)
    # an all-NULL FK still adds its prefix-only entry (8.0.43)
    assert strings(ws[8])[-1] == "key_b_c½test½4t1½2"
    assert ws[8].keys[-1].parent and ws[8].keys[-1].values == (None, None)


def test_debug_vectors_multi_column_fk_on_primary_key(pke_log) -> None:  # type: ignore[no-untyped-def]
    _, _, ws = pke_log
    # PKE_assert_multi_column_foreign_key_on_multiple_column_primary_key_insert
    # (the parent's key string: PRIMARY½test½4p3½2...; MySQL's test names them t2/t1)
    assert strings(ws[4]) == ["PRIMARY½test½4c3½21½12½13½1", "PRIMARY½test½4p3½21½12½13½1"]
    assert ws[4].keys[1].hash == ws[3].keys[0].hash
    assert [k.key.replace(b"c3", b"t2").replace(b"p3", b"t1") for k in ws[4].keys] == \
        ["PRIMARY½test½4t2½21½12½13½1".encode(), "PRIMARY½test½4t1½21½12½13½1".encode()]
    from repltool.writeset import xxh64
    assert [xxh64(k.key.replace(b"c3", b"t2").replace(b"p3", b"t1")) for k in ws[4].keys] == \
        [15066957522449671266, 9647156720027801592]
    # ..._update: (4,2,3) after, (1,2,3) before
    assert [xxh64(k.key.replace(b"c3", b"t2").replace(b"p3", b"t1")) for k in ws[5].keys] == \
        [12726729333133305663, 17273381564889724595, 15066957522449671266, 9647156720027801592]


def test_debug_vectors_single_column_fk_on_unique_key(pke_log) -> None:  # type: ignore[no-untyped-def]
    _, _, ws = pke_log
    # PKE_assert_foreign_key_on_referenced_unique_key_parent_generated_insert (t1 -> s1)
    assert [xxh64_of(k.key, "s1", "t1") for k in ws[6].keys] == \
        [16097759999475440183, 12796928550717161120]
    # PKE_assert_foreign_key_on_referenced_unique_key_generated_insert (t2 -> s2, t1 -> s1)
    assert [xxh64_of(k.key.replace(b"s2", b"t2"), "s1", "t1") for k in ws[7].keys] == \
        [10002085147685770725, 8692935619695688993]
    assert ws[7].keys[1].parent and ws[7].keys[1].index == "c2"


def xxh64_of(key: bytes, old: str, new: str) -> int:
    from repltool.writeset import xxh64
    return xxh64(key.replace(old.encode(), new.encode()))


# ---- partial images, schema drift, VARCHAR old format, promotion, GIPK ----

EXTRA_SQL = """
USE test;
CREATE TABLE u (id INT NOT NULL, email VARCHAR(20), v INT, PRIMARY KEY (id),
                UNIQUE KEY uk_email (email)) PARTITION BY RANGE (id)
  (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE);
CREATE TABLE drift (id INT NOT NULL PRIMARY KEY, gone INT, UNIQUE KEY ug (gone));
CREATE TABLE promo (a INT, b VARBINARY(20) NOT NULL, c INT NOT NULL,
                    UNIQUE KEY ub (b(4)), UNIQUE KEY ua (a), UNIQUE KEY uc (c));
CREATE TABLE nopk (a INT, v INT, UNIQUE KEY ua (a));
CREATE TABLE kid (id INT NOT NULL PRIMARY KEY, a INT,
                  FOREIGN KEY (a) REFERENCES nopk (a));
CREATE TABLE g (v INT, w INT NOT NULL, UNIQUE KEY uw (w));
"""


def extra_tables() -> dict[str, Table]:
    return {
        "u": Table("test", "u", (int_col("id"), varchar_col("email", 5, nullable=True),
                                 int_col("v", nullable=True)), primary=("id",), table_id=81),
        "drift": Table("test", "drift", (int_col("id"),), primary=("id",), table_id=82),
        "promo": Table("test", "promo", (int_col("a", nullable=True),
                                         # binary (63): a prefix part of a non-binary
                                         # collation would be missing keys (not reproduced)
                                         replace(varchar_col("b", 20), charset=63),
                                         int_col("c")), primary=("c",), table_id=83),
        "nopk": Table("test", "nopk", (int_col("a", nullable=True), int_col("v", nullable=True)),
                      table_id=84),
        "kid": Table("test", "kid", (int_col("id"), int_col("a", nullable=True)),
                     primary=("id",), table_id=85),
        "g": Table("test", "g", (Column("my_row_id", "bigint unsigned", 8, b"", False,
                                        lambda v: int(v).to_bytes(8, "little"), numeric=True,
                                        unsigned=True),
                                 int_col("v", nullable=True), int_col("w")),
                   primary=("my_row_id",), table_id=86),
    }


@pytest.fixture()
def extra_log(tmp_path: Path) -> tuple[Path, Path, list[Any]]:
    T = extra_tables()
    schema = tmp_path / "schema.sql"
    schema.write_text(EXTRA_SQL)
    u = T["u"]
    log = write_log(tmp_path / "binlog.000001", [
        [(u, WRITE, rows_body(u, WRITE, [(1, "a@x", 0)]))],                         # 1
        # MINIMAL delete: before image has the PK only -> uk_email unknown
        [(u, DELETE, rows_body(u, DELETE, [(1, None, None)], present=0b001))],       # 2
        [(u, WRITE, rows_body(u, WRITE, [(2, "a@x", 0)]))],                          # 3
        # MINIMAL update: before = PK, after = the written column only
        [(u, UPDATE, rows_body(u, UPDATE, [(2, None, None), (None, None, 9)],
                               present=0b001, present_after=0b100))],                # 4
        # full before image, MINIMAL after: the key columns come from the before image
        [(u, UPDATE, rows_body(u, UPDATE, [(2, "a@x", 0), (None, None, 5)],
                               present_after=0b100))],                                # 5
        [(T["drift"], WRITE, rows_body(T["drift"], WRITE, [(1,)]))],                 # 6
        [(T["promo"], WRITE, rows_body(T["promo"], WRITE, [(1, "abcdef", 3)]))],      # 7
        [(T["nopk"], WRITE, rows_body(T["nopk"], WRITE, [(1, 1)]))],                 # 8
        [(T["g"], WRITE, rows_body(T["g"], WRITE, [(1, 5, 6)]))],                    # 9
    ])
    return log, schema, writesets(log, schema)


def labels(ws: Any) -> list[str]:
    return [k.label for k in ws.keys]


def test_partial_images_are_missing_keys(extra_log) -> None:  # type: ignore[no-untyped-def]
    _, _, ws = extra_log
    # full image: PRIMARY, uk_email and its VARCHAR "old format" second entry
    assert labels(ws[0]) == ["test.u.PRIMARY=[1]", 'test.u.uk_email=["a@x"]',
                             'test.u.uk_email=["a@x"]']
    assert ws[0].keys[1].hash == ws[0].keys[2].hash       # utf8mb4 VARCHAR: same canonical key
    assert ws[1].missing_key_tables == ("test.u",)         # uk_email absent: unknown
    assert labels(ws[1]) == ["test.u.PRIMARY=[1]"]
    assert ws[3].missing_key_tables == ("test.u",)
    # after image filled from the full before image: exact, not missing keys
    assert ws[4].missing_key_tables == ()
    assert labels(ws[4]) == ["test.u.PRIMARY=[2]", 'test.u.uk_email=["a@x"]',
                             'test.u.uk_email=["a@x"]'] * 2


def test_partial_images_certify_keeps_commit_order(extra_log) -> None:  # type: ignore[no-untyped-def]
    log, schema, _ = extra_log
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = CertifyRun([log], Mode.WRITESET, schema_paths=[schema])
        got = {trx.gtid: r.computed for trx, r in run}
    g = f"{UUID1}:"
    # a partial image: the transaction keeps its commit-order parent, and its keys are
    # unknown (MySQL hashed the full row), so the history is reset there: trx 3, which
    # re-inserts the uk_email trx 2 deleted, cannot be given a parent before 2
    assert got[g + "2"][0] == 1
    assert got[g + "3"][0] >= 2
    assert got[g + "4"][0] == 3


def test_schema_drift_promotion_fk_parent_gipk(extra_log) -> None:  # type: ignore[no-untyped-def]
    _, _, ws = extra_log
    # the schema's UNIQUE ug column is not in the Table_map: missing keys
    assert ws[5].missing_key_tables == ("test.drift",) and ws[5].keys == ()
    # promotion: ub has a prefix, ua is nullable -> uc is the primary key; every unique
    # key hashed in sort_keys order (NOT NULL first, whole columns before prefixes)
    assert labels(ws[6]) == ["test.promo.uc=[3]", 'test.promo.ub=["base64:YWJjZA=="]',
                             'test.promo.ub=["base64:YWJjZGVm"]', "test.promo.ua=[1]"]
    assert ws[6].missing_key_tables == ()
    # an FK parent without a primary key: missing keys, not fk_parent_tables
    assert ws[7].missing_key_tables == ("test.nopk",) and ws[7].fk_parent_tables == ()
    # GIPK my_row_id in the log, not in the schema: PRIMARY first
    assert labels(ws[8]) == ["test.g.PRIMARY=[1]", "test.g.uw=[6]"]


def test_partitioned_table_keeps_its_unique_keys(tmp_path: Path) -> None:
    schema = tmp_path / "s.sql"
    schema.write_text(EXTRA_SQL + "CREATE TABLE q (id INT NOT NULL PRIMARY KEY, k INT, "
                      "UNIQUE KEY uk (id, k)) /*!50100 PARTITION BY HASH (id) PARTITIONS 4 */;")
    s = load_schema(schema)
    assert [ix.name for ix in s.table("test", "u").unique_keys] == ["PRIMARY", "uk_email"]
    assert [ix.name for ix in s.table("test", "q").unique_keys] == ["PRIMARY", "uk"]


def test_history_counts_the_old_format_entries(tmp_path: Path) -> None:
    """A VARCHAR unique key doubles the entries: 5 rows of ``u`` = 15 entries, past a
    history of 12 (MySQL's write-set vector size)."""
    u = extra_tables()["u"]
    schema = tmp_path / "s.sql"
    schema.write_text(EXTRA_SQL)
    log = write_log(tmp_path / "binlog.000001", [
        [(u, WRITE, rows_body(u, WRITE, [(i, f"e{i}", 0) for i in range(5)]))]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (pair,) = list(read_writesets([log], load_schema(schema), history_size=12))
    assert len(pair[1].keys) == 15 and pair[1].limit_reached
