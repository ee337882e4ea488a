"""schedule --retag / --compare: simulating clocks re-computed by certify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.cli import run
from repltool.synth import write_sample


def _json(capsys: pytest.CaptureFixture[str], *args: object, expect: int = 0) -> dict:
    code = run([str(a) for a in args])
    out, err = capsys.readouterr()
    assert code == expect, err
    return json.loads(out) if expect == 0 else {"stderr": err}


def test_retag_writeset_never_lengthens_the_critical_path(tmp_path: Path, capsys) -> None:
    """WRITESET only lowers last_committed (min with the commit-order parent)."""
    logs = write_sample(tmp_path, transactions=300)
    recorded = _json(capsys, "schedule", "--format", "json", "--cost", "constant", *logs)
    retagged = _json(capsys, "schedule", "--format", "json", "--cost", "constant",
                     "--retag", "writeset", *logs)
    assert recorded["clocks"] == "recorded" and retagged["clocks"] == "writeset"
    assert retagged["transactions"] == recorded["transactions"] == 300
    assert retagged["critical_path"] <= recorded["critical_path"] + 1e-12
    assert retagged["total_cost"] == pytest.approx(recorded["total_cost"])
    assert retagged["source_files"] == 2          # numbering restarts in each binlog


def test_compare_runs_every_source_side_by_side(tmp_path: Path, capsys) -> None:
    logs = write_sample(tmp_path, transactions=200)
    doc = _json(capsys, "schedule", "--format", "json", "--workers", "1,4",
                "--compare", "writeset,group-replication", *logs)
    reports = doc["compare"]
    assert [r["clocks"] for r in reports] == ["recorded", "writeset", "group-replication"]
    for r in reports:
        assert [x["workers"] for x in r["runs"]] == [1, 4]
        assert r["runs"][0]["speedup"] == pytest.approx(1.0)
        assert r["critical_path"] <= r["runs"][-1]["makespan"] + 1e-12
    assert reports[2]["source_files"] == 1        # GR numbering runs across files


def test_mariadb_logs_compare_without_a_logged_column(corpus: Path, capsys) -> None:
    """MariaDB logs carry no MySQL clock: only re-computed ones are simulated."""
    small = corpus / "mariadb/small"
    doc = _json(capsys, "schedule", "--format", "json", "--workers", "1,2,4,8",
                "--schema", small / "schema.sql", "--compare", "all",
                small / "mysql-bin.000001")
    assert [r["clocks"] for r in doc["compare"]] == [
        "writeset", "writeset-session", "group-replication", "commit-order"]
    by = {r["clocks"]: r for r in doc["compare"]}
    assert by["commit-order"]["ideal_speedup"] == pytest.approx(1.0)   # serial baseline
    assert by["group-replication"]["ideal_speedup"] > by["writeset"]["ideal_speedup"] > 1.0
    assert all(r["transactions"] == 1977 for r in doc["compare"])


def test_recorded_mariadb_log_is_simulated_with_mariadbs_applier(corpus: Path, capsys) -> None:
    """Without --retag a MariaDB log gets MariaDB's applier (slave_parallel_mode)."""
    doc = _json(capsys, "schedule", "--format", "json", "--workers", "1,4",
                corpus / "mariadb/small/mysql-bin.000001")
    assert doc["applier"] == "mariadb" and doc["slave_parallel_mode"] == "conservative"
    assert [r["slave_parallel_threads"] for r in doc["runs"]] == [1, 4]


def test_retag_usage_errors(tmp_path: Path, capsys) -> None:
    logs = write_sample(tmp_path, transactions=10)
    _json(capsys, "schedule", "--compare", "bogus", *logs, expect=2)
    _json(capsys, "schedule", "--compare", "all", "--retag", "writeset", *logs, expect=2)
