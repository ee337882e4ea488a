"""``repltool schedule`` in-process: JSON schema, text, plots, --crash-at, exit statuses."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from repltool.cli.exitcodes import ExitStatus

WL13352 = ("mysql/mysql80/mysql-test__std_data__upgrade__data_wl13352_8015.zip__"
           "data_upgrade__binlog.000002")
SHYIKO = "mysql/shyiko/src__test__resources__mysql-bin.checksum-none"
APECLOUD_57 = "mysql/apecloud/tests__parse_file_tests__mysql-bin.000080"
CANAL_57 = "mysql/canal/parse__src__test__resources__binlog__tsdb__mysql-bin.000002"
MARIADB = "mysql/rmc/test-data__binlogs__mariadb-bin.000001"
MYSQL56_GTID = "mysql/mysql80/mysql-test__std_data__binlog_transaction_with_GTID.000001"
BAD_CRC = "mysql/mysql80/mysql-test__std_data__binlog_recovery__duplicate_xid.000001"
NOT_BINLOG = "mysql/canal/parse__src__test__resources__binlog__tsdb__mysql-bin.000001"
WAITS = {"lwm", "barrier", "no_free_worker", "gaq_full", "commit_order"}
EPS = 1e-12


def schedule_json(cli, *args: object) -> dict:
    out, _ = cli("schedule", "--format", "json", *args)
    return json.loads(out)


def check_report(report: dict, workers: list[int], transactions: int) -> None:
    """The documented fields, and the invariants that tie them together."""
    assert {"total_cost", "critical_path", "ideal_speedup", "recommended_workers",
            "knee_threshold", "cost_model", "cost_description", "runs", "transactions",
            "truncated_skipped", "warnings", "config"} <= report.keys()
    assert report["transactions"] == transactions
    runs = report["runs"]
    assert [r["workers"] for r in runs] == workers
    assert report["recommended_workers"] in workers
    assert report["knee_threshold"] == 0.05
    by_count = {r["workers"]: r for r in runs}
    if 1 in by_count:
        assert by_count[1]["speedup"] == 1.0
        assert by_count[1]["makespan"] == pytest.approx(report["total_cost"])
    for r in runs:
        assert {"workers", "policy", "makespan", "speedup", "utilisation", "waits"} <= r.keys()
        assert set(r["waits"]) == WAITS and all(v >= 0 for v in r["waits"].values())
        assert report["critical_path"] <= r["makespan"] + EPS
        assert 0.0 <= r["utilisation"] <= 1.0 + EPS
        assert len(r["worker_utilisation"]) == r["workers"]
        assert r["speedup"] == pytest.approx(report["baseline_makespan"] / r["makespan"])
        assert r["speedup"] <= report["ideal_speedup"] + 1e-9
    assert report["critical_path"] <= report["total_cost"] + EPS
    assert report["ideal_speedup"] == pytest.approx(
        report["total_cost"] / report["critical_path"])


@pytest.mark.parametrize("name, count", [(WL13352, 58), (SHYIKO, 40), (APECLOUD_57, 10),
                                         (CANAL_57, 16)])
def test_json_on_corpus(cli, corpus: Path, name: str, count: int) -> None:
    """Real 8.0 and 5.7 logs (written serially: lc = sn - 1), so no worker count helps."""
    report = schedule_json(cli, corpus / name)
    check_report(report, [1, 2, 4, 8, 16], count)
    assert report["cost_model"] == "linear"
    assert "rows events" in report["cost_description"]
    assert report["recommended_workers"] == 1
    assert report["critical_path"] == pytest.approx(report["total_cost"])
    assert all(r["speedup"] == pytest.approx(1.0) for r in report["runs"])


def test_json_on_sample_logs(cli, sample_logs: list[Path]) -> None:
    report = schedule_json(cli, *sample_logs, "--workers", "1-8")
    check_report(report, list(range(1, 9)), 200)
    assert report["source_files"] == 2 and report["relay_log"] is False
    assert report["ideal_speedup"] > 2
    assert max(r["speedup"] for r in report["runs"]) > 1.2
    assert report["config"] == {"policy": "at-most-one", "preserve_commit_order": True,
                                "coordinator_overhead": 0.0, "checkpoint_group": 512,
                                "lenient": False}


def test_first_available_makespan_never_increases(cli, sample_logs: list[Path]) -> None:
    for pco in ("--preserve-commit-order", "--no-preserve-commit-order"):
        report = schedule_json(cli, *sample_logs, "--workers", "1-12",
                               "--policy", "first-available", pco)
        check_report(report, list(range(1, 13)), 200)
        spans = [r["makespan"] for r in report["runs"]]
        assert all(b <= a + EPS for a, b in zip(spans, spans[1:])), spans
        assert {r["policy"] for r in report["runs"]} == {"first-available"}


def test_options_reach_the_simulator(cli, sample_logs: list[Path]) -> None:
    base = schedule_json(cli, *sample_logs, "--workers", "4", "--cost", "constant:0.001")
    slow = schedule_json(cli, *sample_logs, "--workers", "4", "--cost", "constant:0.001",
                         "--coordinator-overhead", "0.0005", "--checkpoint-group", "2")
    assert base["cost_model"] == "constant" and base["total_cost"] == pytest.approx(0.2)
    assert slow["config"]["checkpoint_group"] == 2
    assert slow["config"]["coordinator_overhead"] == 0.0005
    assert slow["runs"][0]["makespan"] > base["runs"][0]["makespan"]
    assert slow["runs"][0]["waits"]["gaq_full"] > 0
    # the speed-up baseline is a one-worker run even when 1 is not in the list
    assert base["runs"][0]["speedup"] == pytest.approx(
        base["baseline_makespan"] / base["runs"][0]["makespan"])


def test_cost_models_on_commit_timestamps_and_csv(cli, sample_logs: list[Path],
                                                  tmp_path: Path) -> None:
    ts = schedule_json(cli, *sample_logs, "--cost", "commit-ts")
    assert ts["cost_model"] == "commit-timestamps" and ts["total_cost"] > 0
    csv = tmp_path / "costs.csv"
    csv.write_text("gtid,seconds\n")
    _, err = cli("schedule", *sample_logs, "--cost", f"csv:{csv}", expect=1)
    assert "not in cost file" in err


def test_relay_logs(cli, relay_logs: list[Path]) -> None:
    report = schedule_json(cli, *relay_logs, "--workers", "1,2")
    check_report(report, [1, 2], 8)
    assert report["relay_log"] is True and report["source_files"] == 2
    assert report["runs"][0]["barriers"] == 2


def test_text_output(cli, sample_logs: list[Path]) -> None:
    out, _ = cli("schedule", *sample_logs, "--workers", "1,2,4")
    report = schedule_json(cli, *sample_logs, "--workers", "1,2,4")
    k = report["recommended_workers"]
    assert "Speed-up curve (cost model: linear)" in out
    assert "Waiting time by cause" in out
    assert f"replica_parallel_workers = {k}" in out
    if k != 4:
        assert f"more than {k} workers gains < 5%: replica_parallel_workers = {k}" in out
    assert "critical path" in out and "rows events" in out
    assert re.search(r"^│\s+1 │\s+[\d.]+ms │\s+1\.00x │ █+", out, re.M)
    for count in ("2", "4"):
        assert re.search(rf"^│\s+{count} │\s+[\d.]+ms │\s+[\d.]+x │ █+", out, re.M)


def test_text_says_when_the_largest_count_still_helps(cli, sample_logs: list[Path]) -> None:
    out, _ = cli("schedule", *sample_logs, "--workers", "1,2", "--policy", "first-available",
                 "--no-preserve-commit-order")
    assert "still grows up to 2 workers" in out


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG\r\n\x1a\n"), (".svg", b"<?xml")])
def test_plot(cli, sample_logs: list[Path], tmp_path: Path, suffix: str, magic: bytes) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / f"schedule{suffix}"
    cli("schedule", *sample_logs, "--plot", path, "--timeline-window", "90:30")
    data = path.read_bytes()
    assert data.startswith(magic) and len(data) > 10_000
    if suffix == ".svg":
        assert b"<svg" in data[:2000] and b"Worker timeline" in data


def test_plot_errors(cli, sample_logs: list[Path], tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    _, err = cli("schedule", *sample_logs, "--plot", tmp_path / "x.pdf", expect=2)
    assert "must end in .png or .svg" in err
    _, err = cli("schedule", *sample_logs, "--plot", tmp_path / "x.png",
                 "--timeline-window", "500:10", expect=2)
    assert "only 200 transactions" in err
    for window in ("10", "a:b", "3:0", "-1:4"):
        _, err = cli("schedule", *sample_logs, "--timeline-window", window, expect=2)
        assert "--timeline-window" in err
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    _, err = cli("schedule", *sample_logs, "--plot", tmp_path / "y.png", expect=2)
    assert "--plot needs matplotlib: pip install 'repltool[plot]'" in err
    assert not (tmp_path / "y.png").exists()


def test_crash_at_text(cli, sample_logs: list[Path]) -> None:
    """A crash without commit order: one group still running while later ones
    committed is a gap a restart re-executes; the committed ones are skipped."""
    out, _ = cli("schedule", *sample_logs, "--workers", "4", "--no-preserve-commit-order",
                 "--crash-at", "0.0007")
    assert "Crash at 700µs with 4 workers (WL#5599 recovery)" in out
    assert "coordinator checkpoint" in out and "relay index 5" in out
    assert "recovery bitmap" in out and "1 1 1 1 1 1 1 0 1" in out
    assert "Workers (mysql.slave_worker_info)" in out
    assert "Gaps: groups a restart re-executes" in out
    assert "skipped (already applied)" in out and "5-11, 13" in out
    assert "restart at relay index 5: 1 gap(s) to re-execute, 8 group(s) skipped" in out


def test_crash_at_json(cli, sample_logs: list[Path]) -> None:
    report = schedule_json(cli, *sample_logs, "--workers", "4", "--no-preserve-commit-order",
                           "--crash-at", "0.0007")
    rec = report["recovery"]
    assert rec["workers"] == report["recommended_workers"] == 4
    assert rec["checkpoint"]["index"] == 5 and rec["checkpoint"]["reason"] == "barrier"
    assert [g["index"] for g in rec["gaps"]] == [12]
    assert [g["index"] for g in rec["skipped"]] == [5, 6, 7, 8, 9, 10, 11, 13]
    assert rec["recovery_bitmap"] == 0b101111111 and rec["recovery_group_cnt"] == 9
    assert rec["gaps"][0]["pos"].startswith(str(sample_logs[0]))
    assert len(rec["worker_info"]) == 4


def test_crash_at_index_and_gtid(cli, corpus: Path) -> None:
    """Commit order preserved: everything up to the crash is skipped, nothing is a gap."""
    by_index = schedule_json(cli, corpus / WL13352, "--workers", "4", "--crash-at", "#20")
    rec = by_index["recovery"]
    assert rec["gaps"] == [] and rec["checkpoint"]["index"] + len(rec["skipped"]) == 21
    gtid = rec["skipped"][-1]["gtid"]
    assert gtid == "ANONYMOUS"
    by_gtid = schedule_json(cli, corpus / WL13352, "--workers", "4", "--crash-at", gtid)
    assert by_gtid["recovery"]["crash_time"] <= rec["crash_time"]


@pytest.mark.parametrize("crash, message", [
    ("#58", "transaction index 58 is not in the trace"),
    ("nope:1", "GTID nope:1 is not in the trace"),
    ("#x", "--crash-at '#x'"),
])
def test_crash_at_errors(cli, corpus: Path, crash: str, message: str) -> None:
    _, err = cli("schedule", corpus / WL13352, "--crash-at", crash, expect=2)
    assert message in err


@pytest.mark.parametrize("workers", ["0", "1-2000", "4-2", "x", "1,,2", ""])
def test_bad_workers_exit_2(cli, corpus: Path, workers: str) -> None:
    _, err = cli("schedule", corpus / SHYIKO, "--workers", workers, expect=ExitStatus.USAGE)
    assert err.startswith("repltool: error: bad worker list")


@pytest.mark.parametrize("args", [
    ["--cost", "quadratic"], ["--policy", "random"], ["--checkpoint-group", "0"],
    ["--coordinator-overhead", "-1"], ["--format", "yaml"],
])
def test_bad_options_exit_2(cli, corpus: Path, args: list[str]) -> None:
    cli("schedule", corpus / SHYIKO, *args, expect=ExitStatus.USAGE)


@pytest.mark.parametrize("name", [MYSQL56_GTID])
def test_log_without_logical_clock_exits_1(cli, corpus: Path, name: str) -> None:
    for extra in ([], ["--lenient"]):
        out, err = cli("schedule", corpus / name, *extra, expect=ExitStatus.FINDINGS)
        assert out == ""
        assert "carries no logical clock (last_committed/sequence_number)" in err
        assert "--retag" in err and f"{corpus / name}:" in err


def test_commit_ts_cost_on_57_exits_1(cli, corpus: Path) -> None:
    _, err = cli("schedule", corpus / CANAL_57, "--cost", "commit-ts", expect=1)
    assert "no immediate_commit_timestamp" in err


def test_reader_errors_keep_their_status(cli, corpus: Path, tmp_path: Path) -> None:
    cli("schedule", corpus / NOT_BINLOG, expect=ExitStatus.FORMAT_ERROR)
    cli("schedule", tmp_path / "missing", expect=ExitStatus.USAGE)
    cli("schedule", corpus / BAD_CRC, expect=ExitStatus.CHECKSUM)
    report = schedule_json(cli, corpus / BAD_CRC, "--no-verify-binlog-checksum")
    assert report["transactions"] == 2


def test_listed_in_help(cli) -> None:
    out, _ = cli("--help")
    assert "schedule" in out
    out, _ = cli("schedule", "--help")
    for option in ("--workers", "--policy", "--preserve-commit-order", "--coordinator-overhead",
                   "--checkpoint-group", "--checkpoint-period", "--cost", "--lenient",
                   "--format", "--plot", "--timeline-window", "--crash-at",
                   "--verify-binlog-checksum"):
        assert option in out
