"""``repltool schedule`` on MariaDB logs: MariaDB's applier and its vocabulary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.cli.exitcodes import ExitStatus

SMALL = "mariadb/small/mysql-bin.000001"
RMC = "mysql/rmc/test-data__binlogs__mariadb-bin.000001"


def test_json_names_the_mode_and_mariadbs_variables(cli, corpus: Path) -> None:
    out, _ = cli("schedule", "--format", "json", "--workers", "1,2,4,8",
                 "--parallel-mode", "optimistic", "--schema", corpus / "mariadb/small/schema.sql",
                 corpus / SMALL)
    doc = json.loads(out)
    assert doc["applier"] == "mariadb" and doc["slave_parallel_mode"] == "optimistic"
    assert doc["variables"] == {"slave_parallel_mode": "optimistic",
                                "slave_domain_parallel_threads": 0,
                                "slave_parallel_max_queued": 131072,
                                "slave_parallel_threads": [1, 2, 4, 8]}
    assert doc["transactions"] == 1977 and doc["domains"] == 1
    # 1,977 GTIDs in 604 group commits (the ddl / XA / alone ones count one each)
    assert doc["commit_groups"] == 604 and doc["flags"]["waited"] > 0
    assert doc["recommended"]["slave_parallel_mode"] == "optimistic"
    assert "slave_parallel_threads =" in doc["recommendation"]
    speedups = [r["speedup"] for r in doc["runs"]]
    assert speedups[0] == pytest.approx(1.0) and speedups == sorted(speedups)
    assert all("replica_parallel_workers" not in json.dumps(r) for r in doc["runs"])


def test_all_modes_are_ordered_by_what_they_let_run_in_parallel(cli, corpus: Path) -> None:
    out, _ = cli("schedule", "--format", "json", "--workers", "8", "--cost", "constant",
                 "--parallel-mode", "all", corpus / SMALL)
    by = {r["slave_parallel_mode"]: r["runs"][0]["speedup"] for r in json.loads(out)["compare"]}
    assert by["none"] == pytest.approx(1.0) and by["minimal"] == pytest.approx(1.0)
    assert 1.0 < by["conservative"] < by["optimistic"] <= by["aggressive"]


def test_measured_file_prints_predicted_against_measured(cli, corpus: Path,
                                                         tmp_path: Path) -> None:
    measured = tmp_path / "replica.csv"
    measured.write_text("mode,threads,seconds\nconservative,0,20\nconservative,4,10\n"
                        "optimistic,4,8\n")
    out, _ = cli("schedule", "--format", "json", "--workers", "4", "--measured", measured,
                 corpus / SMALL)
    reports = json.loads(out)["compare"]
    assert [r["slave_parallel_mode"] for r in reports] == ["conservative", "optimistic"]
    rows = [m for r in reports for m in r["measured"]]
    assert [(m["slave_parallel_threads"], m["measured_speedup"]) for m in rows] == [
        (4, 2.0), (4, 2.5)]
    for m in rows:
        assert m["error"] == pytest.approx(m["predicted_speedup"] / m["measured_speedup"] - 1)
    text, _ = cli("schedule", "--workers", "4", "--measured", measured, corpus / SMALL)
    assert "Predicted vs measured speed-up" in text and "slave_parallel_mode" in text


@pytest.mark.parametrize("args", [
    ["--parallel-mode", "fast"], ["--crash-at", "0.1"], ["--plot", "x.png"],
])
def test_mariadb_usage_errors(cli, corpus: Path, args: list[str]) -> None:
    _, err = cli("schedule", corpus / RMC, *args, expect=ExitStatus.USAGE)
    assert len(err.strip().splitlines()) == 1


def test_parallel_mode_on_a_mysql_log_is_a_usage_error(cli, sample_logs: list[Path]) -> None:
    _, err = cli("schedule", "--parallel-mode", "optimistic", *sample_logs,
                 expect=ExitStatus.USAGE)
    assert "MariaDB" in err


def test_bad_measurement_rows_name_file_and_line(cli, corpus: Path, tmp_path: Path) -> None:
    bad = tmp_path / "m.csv"
    bad.write_text("conservative,0,10\noptimistic,four,3\n")
    _, err = cli("schedule", "--measured", bad, corpus / SMALL, expect=ExitStatus.USAGE)
    assert f"{bad}:2:" in err


def test_csv_costs_apply_to_mariadb_groups(cli, corpus: Path, tmp_path: Path) -> None:
    """--cost csv:FILE (a user's own per-GTID measurements) works on MariaDB logs."""
    from repltool.schedule.mariadb import maria_transactions
    gtids = [t.gtid for t in maria_transactions([corpus / RMC], conflicts=False)]
    costs = tmp_path / "costs.csv"
    costs.write_text("gtid,seconds\n" + "".join(f"{g},0.5\n" for g in gtids))
    out, _ = cli("schedule", "--format", "json", "--workers", "1", "--cost", f"csv:{costs}",
                 corpus / RMC)
    doc = json.loads(out)
    assert doc["cost_model"] == "csv" and doc["total_cost"] == pytest.approx(0.5 * len(gtids))
    assert doc["serial_makespan"] == pytest.approx(0.5 * len(gtids))


def test_serial_primary_gives_conservative_nothing(cli, corpus: Path) -> None:
    """corpus mariadb/serial: one session, no group commit, no commit_id at all:
    conservative cannot overlap anything; optimistic can (no row conflicts kept it)."""
    out, _ = cli("schedule", "--format", "json", "--workers", "1,4", "--cost", "constant",
                 "--parallel-mode", "conservative,optimistic",
                 "--schema", corpus / "mariadb/serial/schema.sql",
                 corpus / "mariadb/serial/mysql-bin.000001")
    cons, opt = json.loads(out)["compare"]
    assert cons["transactions"] == cons["commit_groups"] == 1000
    assert [r["speedup"] for r in cons["runs"]] == [pytest.approx(1.0), pytest.approx(1.0)]
    assert opt["runs"][1]["speedup"] > 1.5


def test_relay_logs_are_simulated_like_binlogs(cli, corpus: Path) -> None:
    """The replica's relay log carries the primary's GTIDs and flags: same groups."""
    relay = sorted((corpus / "mariadb/relay/replica-relay").glob("relay-bin.0*"))
    primary = sorted((corpus / "mariadb/relay/primary").glob("mysql-bin.0*"))
    docs = []
    for files in (relay, primary):
        out, _ = cli("schedule", "--format", "json", "--workers", "4", "--cost", "constant",
                     *files)
        docs.append(json.loads(out))
    assert docs[0]["transactions"] == docs[1]["transactions"] > 0
    assert docs[0]["commit_groups"] == docs[1]["commit_groups"]
    assert docs[0]["runs"][0]["speedup"] == pytest.approx(docs[1]["runs"][0]["speedup"])
