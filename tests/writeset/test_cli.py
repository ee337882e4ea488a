"""``repltool dump --writesets [--schema FILE]``: one JSON object per transaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.cli import run


def _run(capsys: pytest.CaptureFixture[str], *args: object, expect: int = 0) -> tuple[str, str]:
    code = run([str(a) for a in args])
    out, err = capsys.readouterr()
    assert code == expect, f"exit {code} != {expect}\nstderr: {err}"
    return out, err


def test_dump_writesets_jsonl(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    root = corpus / "mariadb" / "small"
    out, err = _run(capsys, "dump", "--writesets", "--format", "jsonl", "--schema",
                    root / "schema.sql", root / "mysql-bin.000001")
    lines = [json.loads(x) for x in out.splitlines()]
    gt = json.loads((root / "ground-truth.json").read_text())["transactions"]
    assert len(lines) == len(gt)
    first = lines[0]
    assert set(first) == {"file", "pos", "gtid", "keys", "flags"}
    assert first["flags"] == {"ddl": True, "empty": True, "missing_key_tables": [],
                              "fk_parent_tables": [], "limit_reached": False}
    by = {t["gtid"]: t for t in gt}
    for rec in lines:
        want = by[rec["gtid"]]
        got = {f"{k['db']}.{k['table']}.{k['index']}=" + json.dumps(k["values"], ensure_ascii=False)
               for k in rec["keys"] if not k.get("parent")}
        assert sorted(got) == want["keys"], rec["gtid"]
        assert all(isinstance(k["hash"], int) and 0 <= k["hash"] < 1 << 64 for k in rec["keys"])
    assert "schema has no table wl.side_3_1" in err          # one line per problem


def test_schema_needs_writesets(capsys: pytest.CaptureFixture[str], corpus: Path) -> None:
    _, err = _run(capsys, "dump", "--schema", "x.sql",
                  corpus / "mariadb" / "small" / "mysql-bin.000001", expect=2)
    assert "--schema needs --writesets" in err
