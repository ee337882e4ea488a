"""``repltool dump -v / -vv / --format jsonl -v``: rows as pseudo-SQL and as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.cli import run

BIT = "mysql/rmc/test-data__binlogs__mysql_type_bit.000001"
INVISIBLE = "mysql/rmc/test-data__binlogs__binlog-invisible-columns.000001"
JSON_OPAQUE = "mysql/rmc/test-data__binlogs__json-opaque.binlog"
SMALL = "mariadb/small/mysql-bin.000001"


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    def invoke(*args: object, expect: int = 0) -> str:
        code = run([str(a) for a in args])
        out, err = capsys.readouterr()
        assert code == expect, f"exit {code}\nstderr: {err}"
        return out
    return invoke


def test_dump_v_prints_rows_like_mysqlbinlog(cli, corpus: Path) -> None:
    out = cli("dump", "-v", corpus / BIT)
    assert "### INSERT INTO `mysql`.`foo`\n### SET\n###   a=b'100'\n###   b='foo'\n" \
           "###   c=b'00100000'\n" in out
    assert "/*" not in out.split("### INSERT", 1)[1].split("# at", 1)[0]
    assert "###" not in cli("dump", corpus / BIT)


def test_dump_vv_adds_type_comments_and_names_columns(cli, corpus: Path) -> None:
    out = cli("dump", "-vv", corpus / INVISIBLE)
    assert "### UPDATE `mysql`.`t1`\n### WHERE\n###   f1=NULL /* INT meta=0 nullable=1 " \
           "is_null=1 */" in out
    assert "###   f3=-333 /* INT meta=0 nullable=1 is_null=0 */" in out   # signed: one value
    assert "###   f5='\\x05' /* BLOB/TEXT meta=2 nullable=1 is_null=0 */" in out


def test_dump_v_without_signedness_prints_both_readings(cli, corpus: Path) -> None:
    out = cli("dump", "-v", corpus / "mysql/mysql80/mysql-test__std_data__replicated-bin.000001")
    assert "### INSERT INTO" in out and "###   @1=" in out


def test_dump_jsonl_v_adds_decoded_rows(cli, corpus: Path) -> None:
    objs = [json.loads(line) for line in cli("dump", "--format", "jsonl", "-v",
                                             corpus / SMALL).splitlines()[:60]]
    rows = [o for o in objs if "rows" in o]
    assert rows and all(o["type_code"] in (23, 24, 25) for o in rows)
    first = rows[0]["rows"][0]
    assert first["kind"] == "insert" and first["before"] is None
    after = first["after"]
    assert after["id"] == 1 and after["c_dec"] == "-53283702.9140"
    assert after["c_dt"] == "2002-08-15T03:15:09.383428"
    assert after["c_bigu"] == 10900412185307038641 and after["c_enum"] == "b"
    assert json.loads(after["c_json"])["n"] == -661
    assert all(c in "0123456789abcdef" for c in after["c_blob"])
    objs = [json.loads(line) for line in cli("dump", "--format", "jsonl", corpus / BIT).splitlines()]
    assert not any("rows" in o for o in objs)


def test_dump_jsonl_v_json_column(cli, corpus: Path) -> None:
    objs = [json.loads(line) for line in cli("dump", "--format", "jsonl", "-v",
                                             corpus / JSON_OPAQUE).splitlines()]
    values = [o["rows"][0]["after"]["a"] for o in objs if o.get("rows")]
    assert values[0] == {"a": {"opaque_type": 15, "hex": "55"}}
    assert {"b": "2012-03-18"} in values and {"d": "123.456"} in values
    out = cli("dump", "-v", corpus / JSON_OPAQUE)
    assert """###   a='{"c": "2012-03-18 11:30:45.000000"}'""" in out
    assert """###   a='{"a": "base64:type15:VQ=="}'""" in out
