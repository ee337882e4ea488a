"""Which collation a string key column gets, and what happens without one (issue 14 item 2).

The log's collation id (``binlog_row_metadata=FULL``), else the schema's
collation, else ``default_collation`` / ``--default-collation``; with none of
them the column's collation is unknown and its table counts as missing keys.
Values are weighed from their stored bytes in the column's own charset, so
under ``latin1_swedish_ci`` 'CAFÉ' and 'café' share a hash.
"""

from __future__ import annotations

import warnings

import pytest
import xxhash

from repltool.cli import run
from repltool.writeset import (
    WritesetWarning, collation_by_name, field_sort_key, parse_schema, writeset_of,
)

from ._helpers import INT, VARCHAR, WRITE, rows, table_map, transaction

COLS = [VARCHAR("k", 10, collation=None, nullable=False), INT("v")]
NO_COLLATION = parse_schema("CREATE TABLE db.t (k VARCHAR(10) NOT NULL PRIMARY KEY, v INT);")
LATIN1 = parse_schema("CREATE TABLE db.t (k VARCHAR(10) COLLATE latin1_swedish_ci NOT NULL "
                      "PRIMARY KEY, v INT) DEFAULT CHARSET=latin1;")


def trx(*values: bytes):  # type: ignore[no-untyped-def]
    return transaction((19, table_map(5, "db", "t", COLS, pk=[0])),
                       (WRITE, rows(5, COLS, WRITE, [[v, 1] for v in values])))


def test_no_collation_anywhere_is_missing_keys() -> None:
    with pytest.warns(WritesetWarning, match="--default-collation"):
        ws = writeset_of(trx(b"CAF\xc9", b"caf\xe9"))
    assert ws.keys == () and ws.missing_key_tables == ("db.t",)
    with pytest.warns(WritesetWarning, match="missing keys"):
        ws = writeset_of(trx(b"x"), NO_COLLATION)        # a schema without a collation
    assert ws.keys == () and ws.missing_key_tables == ("db.t",)


def test_default_collation_weighs_the_stored_bytes() -> None:
    from repltool.writeset import WritesetExtractor
    ex = WritesetExtractor(NO_COLLATION, default_collation="latin1_swedish_ci")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ws = ex.writeset(trx(b"CAF\xc9", b"caf\xe9", b"cafe", b"caf"))
    # per row: the entry sized by the key-part length (10), then the VARCHAR's
    # "old format" entry sized by the pack length (11)
    a, a_old, b, b_old, c, c_old, d, d_old = ws.keys
    assert a.hash == b.hash == c.hash != d.hash and ws.missing_key_tables == ()
    assert a_old.hash == b_old.hash == c_old.hash != d_old.hash != a.hash
    sk = field_sort_key(collation_by_name("latin1_swedish_ci"), b"CAF\xc9", fixed=False,
                        max_length=10)
    assert sk == b"CAFE" + b" " * 7                       # 10 weights + 1 (pack length 11)
    assert a_old.key.endswith(sk + "½11".encode())
    assert a_old.hash == xxhash.xxh64_intdigest(a_old.key)
    assert a.key.endswith(b"CAFE" + b" " * 6 + "½10".encode())
    assert a.hash == xxhash.xxh64_intdigest(a.key)


def test_the_schema_collation_applies() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ws = writeset_of(trx(b"CAF\xc9", b"caf\xe9"), LATIN1)
    assert [k.hash for k in ws.keys[:2]] == [k.hash for k in ws.keys[2:]]   # both entries


def test_the_log_collation_wins() -> None:
    cols = [VARCHAR("k", 10, collation=47, nullable=False), INT("v")]      # latin1_bin
    t = transaction((19, table_map(5, "db", "t", cols, pk=[0])),
                    (WRITE, rows(5, cols, WRITE, [[b"CAF\xc9", 1], [b"caf\xe9", 1]])))
    ws = writeset_of(t, LATIN1)
    assert ws.keys[0].hash != ws.keys[2].hash and ws.keys[1].hash != ws.keys[3].hash


# ---- the CLI ----

def _run(capsys: pytest.CaptureFixture[str], *args: object, expect: int = 0) -> tuple[str, str]:
    code = run([str(a) for a in args])
    out, err = capsys.readouterr()
    assert code == expect, f"exit {code} != {expect}\nstderr: {err}"
    return out, err


def test_unknown_default_collation_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                                    synth_logs: dict) -> None:
    files, _ = synth_logs["mysql57"]
    _, err = _run(capsys, "dump", "--writesets", "--default-collation", "klingon_ci", *files,
                  expect=2)
    assert "--default-collation klingon_ci: unknown collation name" in err
    assert len(err.strip().splitlines()) == 1
    _, err = _run(capsys, "dump", "--default-collation", "latin1_bin", *files, expect=2)
    assert "--default-collation needs --writesets" in err
    _, err = _run(capsys, "certify", "--default-collation", "klingon_ci", *files, expect=2)
    assert "unknown collation name" in err
