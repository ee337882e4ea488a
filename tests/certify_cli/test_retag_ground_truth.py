"""``certify --output`` never writes a log that ``check`` W001 flags, given the ground truth.

The logs are MySQL 8.0 binlogs written by ``repltool synth`` (a concurrent
workload with DDL, empty transactions, tables without a primary key and
foreign keys) with its ``ground-truth.json``: per GTID the PRIMARY/UNIQUE
keys of both row images and the referenced parent keys, recorded when the
rows were generated, not read back from the log.  Every mode's re-tagged copy
is checked by ``repltool check``'s W001 rule (transactions sharing a key must
not overlap) with those keys as the write sets: no finding.

MariaDB logs (the corpus sets, the live server) carry no logical clock, so
``--output`` refuses them (exit 2, tested in test_retag.py); their computed
clocks are checked against their ground truth in test_safety.py.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from repltool.binlog import read_transactions
from repltool.check import check_files
from repltool.check.writesets import load_writesets

MODES = ["commit-order", "writeset", "writeset-session", "group-replication"]


@pytest.fixture(scope="module")
def synth_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from repltool.synth.generate import SynthOptions, generate
    from repltool.synth.workload import WorkloadConfig
    out = tmp_path_factory.mktemp("synth")
    generate(SynthOptions(out=out, transactions=4000, max_binlog_size=256 * 1024, seed=14,
                          workload=WorkloadConfig(ddl_rate=0.01, empty_rate=0.03)))
    return out


def _truth_writesets(d: Path, dst: Path) -> Path:
    """ground-truth.json as ``check --writesets``: keys + fk_keys, no-PK tables."""
    doc = json.loads((d / "ground-truth.json").read_text())
    items = [{"gtid": t["gtid"], "keys": t["keys"] + t["fk_keys"],
              "missing_key_tables": t["no_pk_tables"]} for t in doc["transactions"]]
    dst.write_text(json.dumps({"transactions": items}))
    return dst


@pytest.mark.parametrize("mode", MODES)
def test_retagged_logs_pass_w001_with_the_ground_truth(cli, certify_jsonl, synth_set: Path,
                                                       tmp_path: Path, mode: str) -> None:
    files = sorted(synth_set.glob("binlog.0*"))
    kinds = Counter(t.kind for t in read_transactions(files))
    assert kinds["empty"] > 50 and kinds["ddl"] > 10          # the cases that were wrong
    out = tmp_path / "out"
    cli("certify", "--mode", mode, "--schema", synth_set / "schema.sql", "--output", out,
        *files)
    retagged = [out / f.name for f in files]
    truth = load_writesets(_truth_writesets(synth_set, tmp_path / "truth.json"))
    report = check_files(retagged, writesets=truth)
    assert "W001" in report.rules and "W001" not in report.skipped
    w001 = [(Path(f.file).name, f.offset) for f in report.findings if f.rule == "W001"]
    before = [(t.last_committed, t.sequence_number) for t in read_transactions(files)]
    after = [(t.last_committed, t.sequence_number) for t in read_transactions(retagged)]
    assert len(before) == len(after)
    if mode == "commit-order":
        # the logged clocks, unchanged: whatever the generator's own group commits got
        # wrong (a few FK-parent overlaps its lock model lets through) stays, nothing more
        assert before == after
        logged = check_files(files, writesets=truth).findings
        assert w001 == [(Path(f.file).name, f.offset) for f in logged if f.rule == "W001"]
    else:
        assert before != after and w001 == []
    if mode.startswith("writeset"):
        # the generator's few unsafe FK-parent overlaps were raised, and said so
        rows = certify_jsonl("--mode", mode, "--schema", synth_set / "schema.sql", *files)
        raised = [r for r in rows if r.get("raised")]
        assert raised and all("raised to" in r["depends_on"]["detail"] for r in raised)
