"""The writeset rules (format-spec §6b, gotchas 13-16), one row per rule."""

from __future__ import annotations

import warnings

import pytest

from repltool.writeset import (
    MissingKey,
    SchemaMismatch, SchemaWarning, WritesetWarning, parse_schema, writeset_of,
)

from ._helpers import CHAR, DELETE, INT, UPDATE, VARCHAR, WRITE, rows, table_map, transaction

SCHEMA = parse_schema("""
USE db;
CREATE TABLE pk (id INT NOT NULL PRIMARY KEY, v INT);
CREATE TABLE comp (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, PRIMARY KEY (b, a));
CREATE TABLE uk (id INT NOT NULL PRIMARY KEY, email VARCHAR(20) NOT NULL, code CHAR(4),
                 UNIQUE KEY uk_email (email), UNIQUE KEY uk_code (code));
CREATE TABLE uonly (u INT NOT NULL, w VARCHAR(10), UNIQUE KEY uk_u (u), UNIQUE KEY uk_w (w));
CREATE TABLE nullonly (u INT NULL, UNIQUE KEY uk_u (u));
CREATE TABLE pre (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), UNIQUE KEY uk_name (name(3)));
CREATE TABLE prebin (id INT NOT NULL PRIMARY KEY, name VARBINARY(20), UNIQUE KEY uk_name (name(3)));
CREATE TABLE nokey (a INT, b VARCHAR(10));
CREATE TABLE parent (id INT NOT NULL PRIMARY KEY);
CREATE TABLE child (id INT NOT NULL PRIMARY KEY, parent_id INT,
                    CONSTRAINT fk FOREIGN KEY (parent_id) REFERENCES parent (id));
CREATE TABLE func (id INT NOT NULL PRIMARY KEY, s VARCHAR(10), UNIQUE KEY fx ((lower(s))));
""")

C = {
    "pk": [INT("id", nullable=False), INT("v")],
    "comp": [INT("a", nullable=False), VARCHAR("b", 10, nullable=False), INT("v")],
    "uk": [INT("id", nullable=False), VARCHAR("email", 20, nullable=False), CHAR("code", 4)],
    "uonly": [INT("u", nullable=False), VARCHAR("w", 10)],
    "nullonly": [INT("u")],
    "pre": [INT("id", nullable=False), VARCHAR("name", 20)],
    "prebin": [INT("id", nullable=False), VARCHAR("name", 20, collation=63)],
    "nokey": [INT("a"), VARCHAR("b", 10)],
    "parent": [INT("id", nullable=False)],
    "child": [INT("id", nullable=False), INT("parent_id")],
    "func": [INT("id", nullable=False), VARCHAR("s", 10)],
}


def trx(table: str, kind: int, *images, flags: int = 1):
    cols = C[table]
    return transaction((19, table_map(5, "db", table, cols)), (kind, rows(5, cols, kind, images,
                                                                        flags=flags)))


def labels(ws, parent: bool | None = False) -> list[str]:
    return [k.label for k in ws.keys if parent is None or k.parent == parent]


CASES = [
    # id, table, kind, images, keys (in MySQL's order), fk parent keys, missing, fk-parent tables
    ("pk insert", "pk", WRITE, [[1, 0]], ["db.pk.PRIMARY=[1]"], [], [], []),
    ("pk delete", "pk", DELETE, [[1, 0]], ["db.pk.PRIMARY=[1]"], [], [], []),
    ("update keeps key: after then before", "pk", UPDATE, [[1, 0], [1, 5]],
     ["db.pk.PRIMARY=[1]", "db.pk.PRIMARY=[1]"], [], [], []),
    ("update changes key: both", "pk", UPDATE, [[1, 0], [2, 0]],
     ["db.pk.PRIMARY=[2]", "db.pk.PRIMARY=[1]"], [], [], []),
    # a VARCHAR part: 8.0.43's second ("old format") entry, same values
    ("composite pk in key order", "comp", WRITE, [[3, "x", 0]],
     ['db.comp.PRIMARY=["x", 3]', 'db.comp.PRIMARY=["x", 3]'], [], [], []),
    ("unique keys after primary", "uk", WRITE, [[1, "a@x", "c1"]],
     ["db.uk.PRIMARY=[1]", 'db.uk.uk_email=["a@x"]', 'db.uk.uk_email=["a@x"]',
      'db.uk.uk_code=["c1"]'], [], [], []),
    ("NULL unique part skipped", "uk", WRITE, [[1, "a@x", None]],
     ["db.uk.PRIMARY=[1]", 'db.uk.uk_email=["a@x"]', 'db.uk.uk_email=["a@x"]'], [], [], []),
    ("NOT NULL unique promoted", "uonly", WRITE, [[7, "w"]],
     ["db.uonly.uk_u=[7]", 'db.uonly.uk_w=["w"]', 'db.uonly.uk_w=["w"]'], [], [], []),
    ("only a nullable unique: no usable key", "nullonly", WRITE, [[7]], [], [], ["db.nullonly"], []),
    ("prefix key + 8.0 full-column hash", "prebin", WRITE, [[1, "abcdef"]],
     ["db.prebin.PRIMARY=[1]", 'db.prebin.uk_name=["base64:YWJj"]',
      'db.prebin.uk_name=["base64:YWJjZGVm"]'], [], [], []),
    # a column prefix under a non-binary collation is not reproduced: missing keys (safe)
    ("non-binary prefix key: no usable key", "pre", WRITE, [[1, "abcdef"]], [], [], ["db.pre"],
     []),
    ("no key", "nokey", WRITE, [[1, "x"]], [], [], ["db.nokey"], []),
    ("fk child adds parent key", "child", WRITE, [[10, 3]], ["db.child.PRIMARY=[10]"],
     ["db.parent.PRIMARY=[3]"], [], []),
    # 8.0.43: an all-NULL FK still gives its prefix-only entry
    ("fk child NULL reference", "child", WRITE, [[10, None]], ["db.child.PRIMARY=[10]"],
     ["db.parent.PRIMARY=[null]"], [], []),
    ("fk parent table flagged", "parent", WRITE, [[3]], ["db.parent.PRIMARY=[3]"], [], [],
     ["db.parent"]),
    ("functional unique: treated as keyless", "func", WRITE, [[1, "A"]], [], [], ["db.func"], []),
]


@pytest.mark.parametrize("table,kind,images,keys,fks,missing,parents",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(table, kind, images, keys, fks, missing, parents) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        warnings.simplefilter("ignore", WritesetWarning)
        ws = writeset_of(trx(table, kind, *images), SCHEMA)
    assert labels(ws) == keys
    assert labels(ws, True) == fks
    assert list(ws.missing_key_tables) == missing
    assert list(ws.fk_parent_tables) == parents
    assert not ws.ddl and not ws.empty and not ws.limit_reached


def test_update_changing_unique_key_hashes_differ() -> None:
    ws = writeset_of(trx("uk", UPDATE, [1, "a@x", None], [1, "b@x", None]), SCHEMA)
    assert labels(ws) == ["db.uk.PRIMARY=[1]", 'db.uk.uk_email=["b@x"]', 'db.uk.uk_email=["b@x"]',
                          "db.uk.PRIMARY=[1]", 'db.uk.uk_email=["a@x"]', 'db.uk.uk_email=["a@x"]']
    h = ws.hashes
    assert h[0] == h[3] and h[1] != h[4]


def test_no_foreign_key_checks_flag_drops_parent_keys() -> None:
    ws = writeset_of(trx("child", WRITE, [10, 3], flags=1 | 2), SCHEMA)
    assert labels(ws, True) == [] and ws.no_fk_checks


def test_case_insensitive_collation_shares_hash() -> None:
    a = writeset_of(trx("uk", WRITE, [1, "Ábc@X", None]), SCHEMA)
    b = writeset_of(trx("uk", WRITE, [2, "abc@x  ", None]), SCHEMA)
    assert a.keys[1].hash == b.keys[1].hash         # utf8mb4_general_ci (id 45)


def test_without_schema_only_table_map_primary_key() -> None:
    cols = C["uk"]
    t = transaction((19, table_map(5, "db", "uk", cols, pk=[0])),
                    (WRITE, rows(5, cols, WRITE, [[1, "a@x", "c"]])))
    assert labels(writeset_of(t)) == ["db.uk.PRIMARY=[1]"]
    t = transaction((19, table_map(5, "db", "uk", cols, pk=None)),
                    (WRITE, rows(5, cols, WRITE, [[1, "a@x", "c"]])))
    assert writeset_of(t).missing_key_tables == ("db.uk",)


def test_ddl_and_empty() -> None:
    ws = writeset_of(transaction(ddl="CREATE TABLE x (a int)"), SCHEMA)
    assert ws.ddl and ws.empty and ws.keys == () and not ws.missing_key_tables
    ws = writeset_of(transaction(), SCHEMA)
    assert not ws.ddl and ws.empty and ws.keys == ()


def test_history_limit() -> None:
    ws = writeset_of(trx("pk", WRITE, *[[i, 0] for i in range(5)]), SCHEMA, history_size=4)
    assert ws.limit_reached and len(ws.keys) == 5
    assert not writeset_of(trx("pk", WRITE, *[[i, 0] for i in range(4)]), SCHEMA,
                           history_size=4).limit_reached


def test_table_maps_carried_across_calls() -> None:
    cols = C["pk"]
    maps: dict = {}
    writeset_of(transaction((19, table_map(5, "db", "pk", cols, pk=[0]))), table_maps=maps)
    ws = writeset_of(transaction((WRITE, rows(5, cols, WRITE, [[4, 0]]))), table_maps=maps)
    assert labels(ws) == ["db.pk.PRIMARY=[4]"]


def test_rows_without_table_map_are_keyless_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="no Table_map"):
        ws = writeset_of(transaction((WRITE, rows(5, C["pk"], WRITE, [[4, 0]]))))
    assert ws.missing_key_tables == ("table_id:5",)


# ---- schema vs log disagreements ----

def test_unknown_table_warns_with_name_and_position() -> None:
    schema = parse_schema("CREATE TABLE db.other (id INT PRIMARY KEY);")
    cols = C["pk"]
    t = transaction((19, table_map(5, "db", "pk", cols, pk=[0])),
                    (WRITE, rows(5, cols, WRITE, [[1, 0]])))
    with pytest.warns(SchemaWarning, match=r"test-bin\.000001:\d+: schema has no table db\.pk"):
        ws = writeset_of(t, schema)
    # its UNIQUE/FOREIGN keys are unknown: missing keys (safe), not the Table_map's key alone
    assert labels(ws) == [] and ws.missing_key_tables == ("db.pk",)
    assert ws.missing_key_reasons == (MissingKey.UNKNOWN_TABLE,)


def test_column_count_mismatch_without_names() -> None:
    schema = parse_schema("CREATE TABLE db.pk (id INT PRIMARY KEY, v INT, extra INT);",
                          source="s.sql")
    cols = C["pk"]
    t = transaction((19, table_map(5, "db", "pk", cols, pk=[0], names=False)),
                    (WRITE, rows(5, cols, WRITE, [[1, 0]])))
    with pytest.warns(SchemaWarning, match=r"db\.pk: the schema \(s\.sql:1\) has 3 columns, "
                                           r"the Table_map 2.*no usable key"):
        ws = writeset_of(t, schema)
    # the schema's keys cannot be placed: missing keys, not the Table_map's PK alone
    assert labels(ws) == [] and ws.missing_key_tables == ("db.pk",)
    with pytest.raises(SchemaMismatch, match=r"test-bin\.000001:\d+.*db\.pk"):
        writeset_of(t, schema, strict=True)


def test_key_column_missing_from_log() -> None:
    schema = parse_schema("CREATE TABLE db.pk (id INT PRIMARY KEY, v INT, "
                          "gone INT, UNIQUE KEY ug (gone));")
    cols = C["pk"]
    t = transaction((19, table_map(5, "db", "pk", cols, pk=[0])),
                    (WRITE, rows(5, cols, WRITE, [[1, 0]])))
    with pytest.warns(SchemaWarning, match=r"key column\(s\) gone.*no usable key"):
        ws = writeset_of(t, schema)
    # issue 14 item 5: UNIQUE ug cannot be evaluated, so the table is missing keys
    assert labels(ws) == [] and ws.missing_key_tables == ("db.pk",)
