"""format-spec §8 XXH64 vectors, reproduced through the public API.

The vectors come from MySQL's own debug assertions (``sql/rpl_write_set_handler.cc``,
``rpl_transaction_write_set_extraction``): tables whose key columns are
``BINARY(1)`` - binary collation, so the sort key of '1' is the byte '1'.
"""

from __future__ import annotations

import pytest

from repltool.writeset import key_string, parse_schema, writeset_of, xxh64

from ._helpers import CHAR, WRITE, rows, table_map, transaction

VECTORS = [
    ("PRIMARY½test½4t1½21½1", 340395741608101502),
    ("PRIMARY½test½4t1½23½1", 8563267070232261320),
    ("PRIMARY½test½4t1½21½12½1", 13655149628280894901),
    ("c2½test½4t1½22½1", 12796928550717161120),
    ("PRIMARY½test½4t1½22½1", 16097759999475440183),
    ("PRIMARY½test½4t3½21½15½1", 3283233640848908273),
]


@pytest.mark.parametrize("text,expected", VECTORS)
def test_xxh64_of_key_string(text: str, expected: int) -> None:
    assert "½".encode() == b"\xc2\xbd"
    assert xxh64(text.encode("utf-8")) == expected


def test_key_string_layout() -> None:
    assert key_string("PRIMARY", "test", "t1", [b"1", b"2"]) == "PRIMARY½test½4t1½21½12½1".encode()


def _bin1(name: str, nullable: bool = False):
    return CHAR(name, 1, collation=63, nullable=nullable)


@pytest.mark.parametrize("value,expected", [("1", 340395741608101502), ("3", 8563267070232261320),
                                            ("2", 16097759999475440183)])
def test_single_primary_key_table_map_only(value: str, expected: int) -> None:
    """CREATE TABLE t1 (a BINARY(1) PRIMARY KEY); INSERT VALUES (value) - no schema."""
    cols = [_bin1("a")]
    trx = transaction((19, table_map(7, "test", "t1", cols, pk=[0])),
                      (WRITE, rows(7, cols, WRITE, [[value]])))
    ws = writeset_of(trx)
    assert ws.hashes == (expected,)
    assert ws.keys[0].key.decode() == f"PRIMARY½test½4t1½2{value}½1"


def test_two_part_primary_key_from_schema() -> None:
    schema = parse_schema("CREATE TABLE test.t1 (a BINARY(1), b BINARY(1), PRIMARY KEY (a, b));")
    cols = [_bin1("a"), _bin1("b")]
    trx = transaction((19, table_map(7, "test", "t1", cols)),
                      (WRITE, rows(7, cols, WRITE, [["1", "2"]])))
    assert writeset_of(trx, schema).hashes == (13655149628280894901,)


def test_primary_and_unique_key_from_schema() -> None:
    """CREATE TABLE t1 (c1 BINARY(1) PRIMARY KEY, c2 BINARY(1) UNIQUE ...): PRIMARY then c2."""
    schema = parse_schema("CREATE TABLE test.t1 (c1 BINARY(1) NOT NULL PRIMARY KEY, "
                          "c2 BINARY(1) UNIQUE, c3 BINARY(1) UNIQUE);")
    cols = [_bin1("c1"), _bin1("c2", True), _bin1("c3", True)]
    trx = transaction((19, table_map(7, "test", "t1", cols)),
                      (WRITE, rows(7, cols, WRITE, [["1", "2", "3"]])))
    ws = writeset_of(trx, schema)
    assert [k.key.decode() for k in ws.keys] == [
        "PRIMARY½test½4t1½21½1", "c2½test½4t1½22½1", "c3½test½4t1½23½1"]
    assert ws.hashes[:2] == (340395741608101502, 12796928550717161120)
    assert ws.hashes[2] == 11199547876733116431       # rpl_write_set_handler.cc assertion


def test_foreign_key_vector() -> None:
    """t3 (PRIMARY (c1, c2)) with FKs to t1 and t2 - MySQL's multi_foreign_key assertion."""
    schema = parse_schema("""
        CREATE TABLE test.t1 (c1 BINARY(1) PRIMARY KEY);
        CREATE TABLE test.t2 (c1 BINARY(1) PRIMARY KEY);
        CREATE TABLE test.t3 (c1 BINARY(1) NOT NULL, c2 BINARY(1) NOT NULL, PRIMARY KEY (c1, c2),
            UNIQUE KEY c2 (c2),
            FOREIGN KEY (c1) REFERENCES t1 (c1), FOREIGN KEY (c2) REFERENCES t2 (c1));
    """)
    cols = [_bin1("c1"), _bin1("c2")]
    trx = transaction((19, table_map(9, "test", "t3", cols)),
                      (WRITE, rows(9, cols, WRITE, [["1", "5"]])))
    ws = writeset_of(trx, schema)
    assert [k.key.decode() for k in ws.keys] == [
        "PRIMARY½test½4t3½21½15½1", "c2½test½4t3½25½1",
        "PRIMARY½test½4t1½21½1", "PRIMARY½test½4t2½25½1"]
    assert ws.hashes == (3283233640848908273, 17221725733811443497, 340395741608101502,
                         14682037479339770823)
    assert [k.parent for k in ws.keys] == [False, False, True, True]
