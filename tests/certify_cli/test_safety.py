"""Safety of the computed clocks on real MariaDB logs, against their ground truth.

For every pair ``i < j`` of one clock segment whose ground-truth write sets
(``keys`` + ``fk_keys`` of ground-truth.json: PRIMARY/UNIQUE keys of both
images, FK parent keys) intersect, the computed ``last_committed(j) >=
sequence_number(i)``: checking ``j`` against the *last* earlier writer of
each key is enough (the chain of writers is ordered transitively). Segments:
every binlog file in the writeset modes; the whole stream in
group-replication mode (numbers continue across files).

The write sets come from the rows through ``repltool.writeset`` with the
set's ``schema.sql``; the ground truth was recorded by the workload driver
from the server side. The computed parallelism is shown next to MariaDB's own
group commits (runs of equal ``commit_id``) in the text report.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repltool.certify import Mode
from repltool.certify.report import CertifyRun, ReportBuilder

CORPUS = Path(os.environ.get("REPLTOOL_CORPUS")
              or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")
SETS = ["small", "serial", "rotation", "compressed"]
MODES = [Mode.WRITESET, Mode.WRITESET_SESSION, Mode.GROUP_REPLICATION]


def ground_truth(transactions: list[dict]) -> dict[str, set[str]]:
    return {t["gtid"]: set(t["keys"]) | set(t["fk_keys"]) for t in transactions}


def violations(run: CertifyRun, truth: dict[str, set[str]]) -> tuple[int, int, int]:
    """(violations, key pairs checked, transactions without ground truth)."""
    last: dict[str, int] = {}
    segment = None
    bad = checked = unknown = 0
    for trx, r in run:
        if run.mode is not Mode.GROUP_REPLICATION and trx.segment != segment:
            last.clear()
            segment = trx.segment
        keys = truth.get(trx.gtid or "")
        if keys is None:
            unknown += 1
            continue
        assert r.computed is not None
        lc, seq = r.computed
        for k in keys:
            if k in last:
                checked += 1
                bad += lc < last[k]
            last[k] = seq
    return bad, checked, unknown


def _set(name: str) -> Path:
    d = CORPUS / "mariadb" / name
    if not d.is_dir():
        if os.environ.get("REPLTOOL_REQUIRE_CORPUS", "") not in ("", "0"):
            pytest.fail(f"MariaDB corpus set {d} missing")
        pytest.skip(f"MariaDB corpus set {d} missing")
    return d


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
@pytest.mark.parametrize("name", SETS)
def test_mariadb_sets_are_safe(name: str, mode: Mode) -> None:
    d = _set(name)
    truth = ground_truth(json.loads((d / "ground-truth.json").read_text())["transactions"])
    files = sorted(d.glob("mysql-bin.0*"))
    run = CertifyRun(files, mode, schema_paths=[d / "schema.sql"])
    bad, checked, unknown = violations(run, truth)
    print(f"\nsafety {name} {mode.value}: {checked} key pairs, {bad} violations")
    assert (bad, unknown) == (0, 0)
    assert checked > 1000


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_report_shows_mariadb_group_commits(cli) -> None:
    d = _set("small")
    out, _ = cli("certify", "--schema", d / "schema.sql", d / "mysql-bin.000001")
    assert "MariaDB commit_id" in out and "no logged clock" in out
    run = CertifyRun([d / "mysql-bin.000001"], schema_paths=[d / "schema.sql"])
    report = ReportBuilder(run).build()
    assert report.commit_id is not None and report.commit_id.groups > 100
    assert report.summary.after.parallelism > 1.5       # the write sets find parallelism
    assert report.summary.after.barriers == 1            # only the file's first transaction


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
def test_live_mariadb_workload_is_safe(mariadb_workload, mode: Mode) -> None:
    """The same rule on binlogs a fresh MariaDB server wrote during this test session."""
    run = CertifyRun(mariadb_workload.binlogs, mode,
                     schema_paths=[mariadb_workload.schema_path])
    bad, checked, unknown = violations(run, ground_truth(mariadb_workload.transactions))
    print(f"\nsafety live {mode.value}: {len(mariadb_workload.transactions)} ground-truth "
          f"transactions, {checked} key pairs, {bad} violations, {unknown} without truth")
    assert bad == 0
    assert checked > 0
