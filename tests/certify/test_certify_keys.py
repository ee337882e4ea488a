"""certify's lazy key descriptions and its JSONL rows.

The key descriptions (``KeyRef``) are made only for the keys that explain a
dependency: the transactions keep the extractor's own key records.  Checked on real
MariaDB logs (key, commit-order and group-replication results, missing keys), with
the JSONL row of every transaction, and on a hand-made result with hostile text.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from repltool.certify import CertResult, CertTransaction, KeyRef, Mode, Reason, key_ref
from repltool.certify.report import Certified, CertifyRun, result_line, result_row
from repltool.positions import Position
from repltool.writeset import WriteKey


def _lines_equal(run: CertifyRun) -> Counter[str]:
    seen: Counter[str] = Counter()
    for c in run:
        row = result_row(c)
        assert json.loads(json.dumps(row, ensure_ascii=False)) == row
        assert result_line(c) == json.dumps(row, ensure_ascii=False)     # the jsonl line
        seen[row["depends_on"]["reason"]] += 1
        seen["key-described"] += row["depends_on"]["key"] is not None
        seen["missing_keys"] += "missing_keys" in row
        seen["conflict"] += "conflict" in row
        # lazy: the transaction holds the extractor's keys, not descriptions
        assert not any(isinstance(k, KeyRef) for k in c.result.trx.keys)
        assert c.result.key is None or isinstance(c.result.key, KeyRef)
    return seen


def test_keys_are_described_lazily_on_the_rotation_set(corpus: Path) -> None:
    d = corpus / "mariadb" / "rotation"
    files = sorted(d.glob("mysql-bin.0*"))
    seen = _lines_equal(CertifyRun(files, schema_paths=[d / "schema.sql"]))
    assert seen["key"] > 100 and seen["key-described"] == seen["key"]
    assert seen["missing_keys"] > 0          # tables schema.sql lacks
    seen = _lines_equal(CertifyRun(files, Mode.GROUP_REPLICATION,
                                   schema_paths=[d / "schema.sql"]))
    assert seen["key-described"] > 100


def test_keys_are_described_lazily_without_a_schema(corpus: Path) -> None:
    d = corpus / "mariadb" / "small"
    seen = _lines_equal(CertifyRun(sorted(d.glob("mysql-bin.0*"))))
    assert seen["missing_keys"] > 0 and sum(seen.values()) > 100


def test_key_ref_and_the_row_of_a_hostile_result() -> None:
    hostile = 'a"b\\c\n\x1b[31m\u202e\ud800é\x00'
    start = Position(hostile, 4711)
    # what the row reads of a reader Transaction
    trx = SimpleNamespace(start=start, gtid=hostile, segment=None, last_committed=3,
                          sequence_number=9)
    key = WriteKey(hostile, "t", "PRIMARY", (1, b"\x00\xff", hostile, None), b"k", 7)
    cert = CertTransaction(gtid=hostile, pos=start, writeset=(7,), keys=(key,),
                           missing_keys=True, fallback=("no-usable-key", hostile))
    for computed in (None, (3, 9), (1, 2)):
        r = CertResult(trx=cert, computed=computed, reason=Reason.KEY, depends_on=hostile,
                       key=cert.key_at(0), key_hash=7, conflict=hostile, detail=hostile,
                       raised=True)
        row = result_row(Certified(trx, r))  # type: ignore[arg-type]
        assert result_line(Certified(trx, r)) == json.dumps(row, ensure_ascii=False)  # type: ignore[arg-type]
        assert row["depends_on"]["key"] == {"db": hostile, "table": "t", "index": "PRIMARY",
                                            "values": ["1", "0x00ff", hostile, "None"]}
        assert row["missing_keys"] == ["no-usable-key", hostile] and row["raised"] is True
        assert json.loads(json.dumps(row, ensure_ascii=False)) == row
    assert key_ref(key) == KeyRef(hostile, "t", "PRIMARY", ("1", "0x00ff", hostile, "None"))
    assert cert.key_at(1) is None and key_ref(None) is None
    assert key_ref(KeyRef("d", "t")) == KeyRef("d", "t")
