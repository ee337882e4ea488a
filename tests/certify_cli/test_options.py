"""``repltool certify`` options: mode defaults, mode-specific options, usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from .seedlogs import DDL, gtid, write_logs, ws


@pytest.fixture
def log(tmp_path: Path) -> list[Path]:
    return write_logs(tmp_path / "in", [[ws(1), ws(2), DDL, ws(1)]])


def test_binlog_default_mode_is_writeset(cli, log: list[Path]) -> None:
    out, _ = cli("certify", *log)
    assert "writeset" in out and "binlog" in out and "baseline" in out


@pytest.mark.parametrize("args", [
    ("--session-order",), ("--gc-every", "3"), ("--gc-interval", "60"), ("--members", "3"),
    ("--gc-stable-set", f"{gtid(1)}"),
])
def test_group_replication_options_need_that_mode(cli, log: list[Path], args: tuple) -> None:
    _, err = cli("certify", *args, *log, expect=2)
    assert "only apply to --mode group-replication" in err


def test_usage_errors(cli, log: list[Path], tmp_path: Path) -> None:
    _, err = cli("certify", "--mode", "group-replication", "--baseline", "serial", *log,
                 expect=2)
    assert "--baseline applies to the writeset modes" in err
    cli("certify", "--timestamp-encoding", "delta16", *log, expect=2)
    cli("certify", "--members", "2", "--member-lag", "1", *log, expect=2)   # GR only
    cli("certify", "--mode", "group-replication", "--member-lag", "1", *log, expect=2)
    _, err = cli("certify", "--mode", "group-replication", "--gc-stable-set", "x:y", *log,
                 expect=2)
    assert "--gc-stable-set" in err
    cli("certify", "--history-size", "0", *log, expect=2)
    cli("certify", tmp_path / "missing", expect=2)


def test_baseline_serial_and_history_size(certify_jsonl, log: list[Path]) -> None:
    rows = certify_jsonl("--baseline", "serial", *log)
    assert [r["computed"] for r in rows] == [[0, 1], [1, 2], [2, 3], [3, 4]]
    rows = certify_jsonl("--history-size", "1", *log)       # ws(2) overflows the history
    assert rows[1]["depends_on"]["detail"].endswith("history full: cleared after this "
                                                    "transaction")


def test_members_simulation_runs(cli, log: list[Path]) -> None:
    out, _ = cli("certify", "--mode", "group-replication", "--members", "3", *log)
    assert "members" in out
