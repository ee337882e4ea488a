"""The window options on the analysis commands (stats, check, schedule, certify, explain).

Each window is compared with the same command run without a window on the
equivalent subset: a copy of the log that holds only the transactions the test
selects itself (the file's header events, then those transactions' bytes), or,
for positions across files, the files cut at the positions.  Check reads the
whole logs and reports only the findings inside the window: it is compared with
the un-windowed findings that lie in the selected transactions.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pytest

from repltool.binlog import read_transactions
from repltool.binlog.transactions import Transaction
from repltool.binlog.window import Window

APE = "mysql/apecloud/tests__parse_file_tests__mysql-bin.000080"
UUID = "58cf6502-63db-11ed-8079-0242ac110002"


def _utc(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _windows(trxs: list[Transaction]) -> dict[str, tuple[list[str], Callable[[Transaction], bool]]]:
    """Window options, and the test's own predicate for the transactions they select."""
    p0, p1 = trxs[2].start.offset, trxs[8].end_offset
    t0, t1 = trxs[2].timestamp, trxs[8].timestamp
    gno = lambda t: int(t.gtid.rsplit(":", 1)[1])  # noqa: E731
    return {
        "position": (["--start-position", str(p0), "--stop-position", str(p1)],
                     lambda t: p0 <= t.start.offset and t.end_offset <= p1),
        # a stop position inside a transaction: that transaction is left out
        "position-inside": (["--start-position", str(trxs[1].start.offset + 1),
                             "--stop-position", str(trxs[7].end_offset - 1)],
                            lambda t: trxs[1].start.offset < t.start.offset
                            and t.end_offset < trxs[7].end_offset),
        "datetime": (["--timezone", "UTC", "--start-datetime", _utc(t0), "--stop-datetime",
                      _utc(t1)],
                     lambda t: t0 <= t.timestamp < t1),
        "gtids": (["--include-gtids", f"{UUID}:54-61", "--exclude-gtids", f"{UUID}:57"],
                  lambda t: 54 <= gno(t) <= 61 and gno(t) != 57),
        "table": (["--table", "b"], lambda t: "a.b" in t.tables),
        "database": (["--database", "a", "--start-position", str(p0)],
                     lambda t: t.start.offset >= p0),
    }


def _splice(src: Path, keep: list[Transaction], dst: Path, first: int) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[:first] + b"".join(data[t.start.offset:t.end_offset] for t in keep))
    return dst


def _stats_view(out: str) -> dict[str, Any]:
    total = json.loads(out)["total"]
    view = {k: total[k] for k in ("transactions", "transaction_kinds", "transaction_bytes",
                                  "clock", "tables", "truncated_transactions")}
    control = {"FORMAT_DESCRIPTION_EVENT", "PREVIOUS_GTIDS_LOG_EVENT", "ROTATE_EVENT",
               "STOP_EVENT", "GTID_LIST_EVENT", "BINLOG_CHECKPOINT_EVENT"}
    view["event_types"] = {k: v for k, v in total["event_types"].items() if k not in control}
    view["biggest"] = [(b["gtid"], b["size"], b["num_events"]) for b in total["biggest"]]
    return view


def _schedule_view(out: str) -> dict[str, Any]:
    d = json.loads(out)
    d.pop("files")
    return json.loads(json.dumps(d).replace("\"pos\"", "\"_\""))  # positions differ


def _certify_view(out: str) -> list[tuple[Any, ...]]:
    rows = [json.loads(line) for line in out.splitlines()]
    return [(r["gtid"], r["recorded"], r["computed"], r["depends_on"]["gtid"],
             r["depends_on"]["reason"]) for r in rows]


def _explain_view(out: str) -> dict[str, Any]:
    d = json.loads(out)
    return {k: d[k] for k in ("transactions", "total_cost", "critical_path",
                              "critical_path_transactions", "parallelism", "edges", "reasons")}


COMMANDS: dict[str, tuple[list[str], Callable[[str], Any]]] = {
    "stats": (["stats", "--format", "json"], _stats_view),
    "schedule": (["schedule", "--format", "json", "--workers", "1,2,4"], _schedule_view),
    "certify": (["certify", "--format", "jsonl", "--mode", "writeset"], _certify_view),
    "explain": (["explain", "--format", "json", "--mode", "writeset"], _explain_view),
    "explain-recorded": (["explain", "--format", "json"], _explain_view),
    "schedule-retag": (["schedule", "--format", "json", "--workers", "1,2",
                        "--retag", "writeset"], _schedule_view),
}


@pytest.mark.parametrize("kind", ["position", "position-inside", "datetime", "gtids", "table",
                                  "database"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_window_is_the_subset(corpus: Path, tmp_path: Path, cli, command: str,
                              kind: str) -> None:
    log = corpus / APE
    trxs = list(read_transactions(log))
    args, predicate = _windows(trxs)[kind]
    keep = [t for t in trxs if predicate(t)]
    assert 0 < len(keep) < len(trxs)
    subset = _splice(log, keep, tmp_path / "subset.bin", trxs[0].start.offset)
    base, view = COMMANDS[command]
    windowed, _ = cli(*base, *args, log)
    expected, _ = cli(*base, subset)
    assert view(windowed) == view(expected)
    if command == "certify":
        assert [r[0] for r in view(windowed)] == [t.gtid for t in keep]


def test_check_reports_findings_inside_the_window(corpus: Path, tmp_path: Path, cli) -> None:
    """A log with GTID gaps and clock jumps (every other transaction of a real log):
    the windowed findings are the un-windowed ones inside the selected transactions."""
    log = corpus / APE
    trxs = list(read_transactions(log))
    gappy = _splice(log, trxs[::2], tmp_path / "gappy.bin", trxs[0].start.offset)
    spliced = list(read_transactions(gappy))
    out, _ = cli("check", "--format", "json", gappy, expect=1)
    everything = json.loads(out)["findings"]
    assert len([f for f in everything if f["offset"] is not None]) >= 4
    for args, chosen in (
            (["--start-position", str(spliced[2].start.offset)], spliced[2:]),
            (["--include-gtids", f"{UUID}:57-61"], [t for t in spliced if t.gtid.endswith(
                (":57", ":59", ":61"))]),
            (["--stop-position", str(spliced[3].end_offset)], spliced[:4])):
        inside = [f for f in everything if f["offset"] is not None and any(
            t.start.offset <= f["offset"] < t.end_offset for t in chosen)]
        assert inside and len(inside) < len(everything)
        out, _ = cli("check", "--format", "json", *args, gappy, expect=1)
        assert json.loads(out)["findings"] == inside


ROTATION = "mariadb/rotation"


def test_positions_across_files(corpus: Path, tmp_path: Path, cli) -> None:
    """--start-position applies to the first file, --stop-position to the last
    (MariaDB, 3 files): the same as the first file cut at the start and the last
    one cut at the stop."""
    files = [corpus / ROTATION / f"mysql-bin.00000{i}" for i in (2, 3, 4)]
    first = list(read_transactions(files[0]))
    last = list(read_transactions(files[2]))
    start, stop = first[len(first) // 2].start.offset, last[len(last) // 3].end_offset
    cut = [tmp_path / f.name for f in files]
    data = files[0].read_bytes()
    cut[0].write_bytes(data[:first[0].start.offset] + data[start:])
    cut[1].write_bytes(files[1].read_bytes())
    cut[2].write_bytes(files[2].read_bytes()[:stop])
    window = ["--start-position", str(start), "--stop-position", str(stop)]
    for base, view in (COMMANDS["stats"], COMMANDS["certify"], COMMANDS["explain"]):
        windowed, _ = cli(*base, *window, *files)
        expected, _ = cli(*base, *cut)
        assert view(windowed) == view(expected)
    out, _ = cli("stats", "--format", "json", *window, *files)
    n = json.loads(out)["total"]["transactions"]
    assert n == len([t for t in first if t.start.offset >= start]) + len(
        list(read_transactions(files[1]))) + len([t for t in last if t.end_offset <= stop])


def test_table_window_on_a_real_workload(corpus: Path, cli) -> None:
    """--table db.table keeps exactly the transactions with rows of that table."""
    log = corpus / "mariadb/small/mysql-bin.000001"
    gtids = [t.gtid for t in read_transactions(log) if "wl.parent" in t.tables]
    assert 0 < len(gtids)
    out, _ = cli("certify", "--format", "jsonl", "--mode", "writeset", "--table", "wl.parent",
                 "--schema", corpus / "mariadb/small/schema.sql", log)
    assert [json.loads(line)["gtid"] for line in out.splitlines()] == gtids


def test_window_library_select(corpus: Path) -> None:
    """The library's Window: an inactive window passes everything; MariaDB GTID positions."""
    log = corpus / "mariadb/small/mysql-bin.000001"
    trxs = list(read_transactions(log))
    assert list(Window().select(iter(trxs), [str(log)])) == trxs
    mid = trxs[100].gtid
    d, _s, n = map(int, mid.split("-"))
    w = Window.from_text(start_position=f"{d}-1-{n}")
    got = list(w.select(iter(trxs), [str(log)]))
    assert got == [t for t in trxs if int(t.gtid.split("-")[2]) > n]


@pytest.mark.parametrize("args, message", [
    (["certify", "--mode", "writeset", "--pk-only", "--output", "OUT", "--include-gtids",
      f"{UUID}:55"], "--output"),
    (["stats", "--clock-only", "--start-position", "696"], "--clock-only"),
])
def test_window_refused_where_it_cannot_apply(corpus: Path, tmp_path: Path, cli,
                                              args: list[str], message: str) -> None:
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    _, err = cli(*args, corpus / APE, expect=2)
    assert "window options" in err and message in err


# ---- --timezone ----

def _at_lines(text: str, after: int) -> list[str]:
    """``# at N`` and the date of the header that follows, for events at or after ``after``."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines[:-1]):
        if line.startswith("# at ") and int(line[5:]) >= after:
            out.append(f"{line} {lines[i + 1][:16]}")
    return out


def _run(args: list[str], tz: str) -> str:
    import os
    import subprocess
    import sys
    env = dict(os.environ, TZ=tz)
    return subprocess.run(args, capture_output=True, text=True, check=True, env=env).stdout


@pytest.mark.parametrize("zone", ["Asia/Shanghai", "America/New_York"])
def test_timezone_follows_mariadb_binlog(corpus: Path, cli, zone: str) -> None:
    """mariadb-binlog prints and reads datetimes in local time (TZ): dump --timezone local
    under the same TZ, and dump --timezone ZONE, print the same header dates and select
    the same events (the header's control events, which dump always prints, aside)."""
    import shutil
    import sys
    binlog = shutil.which("mariadb-binlog")
    assert binlog is not None
    log = corpus / APE
    first = next(iter(read_transactions(log))).start.offset
    window = ["--start-datetime", "2022-11-24 14:07:30", "--stop-datetime",
              "2022-11-24 17:37:40"]
    for extra in ([], window):
        peer = _at_lines(_run([binlog, *extra, str(log)], zone), first)
        local = _at_lines(_run([sys.executable, "-m", "repltool", "dump", "--timezone", "local",
                                *extra, str(log)], zone), first)
        named, _ = cli("dump", "--timezone", zone, *extra, log)
        assert peer == local == _at_lines(named, first)
    # the window holds events in Shanghai, none in New York (the times are ~13 h earlier there)
    assert bool(_at_lines(named, first)) == (zone == "Asia/Shanghai")


def test_timezone_moves_the_datetime_window(corpus: Path, cli) -> None:
    """The same instant written in two zones selects the same transactions (stats)."""
    log = corpus / APE
    trxs = list(read_transactions(log))
    t0, t1 = trxs[3].timestamp, trxs[7].timestamp
    shanghai = lambda ts: datetime.fromtimestamp(ts + 8 * 3600, timezone.utc).strftime(  # noqa: E731
        "%Y-%m-%d %H:%M:%S")
    utc, _ = cli("stats", "--format", "json", "--timezone", "UTC", "--start-datetime", _utc(t0),
                 "--stop-datetime", _utc(t1), log)
    there, _ = cli("stats", "--format", "json", "--timezone", "Asia/Shanghai",
                   "--start-datetime", shanghai(t0), "--stop-datetime", shanghai(t1), log)
    assert _stats_view(utc) == _stats_view(there)
    assert json.loads(utc)["total"]["transactions"] == len(
        [t for t in trxs if t0 <= t.timestamp < t1])


def test_timezone_unknown_name_is_one_line(corpus: Path, cli) -> None:
    _, err = cli("stats", "--timezone", "Mars/Olympus", corpus / APE, expect=2)
    assert err.strip().splitlines() == [
        "repltool: error: --timezone Mars/Olympus: not a time zone (local, UTC or an IANA "
        "name such as Europe/Paris)"]


@pytest.mark.parametrize("command", ["stats", "check", "schedule", "certify", "explain"])
def test_window_with_spark_is_refused_in_one_line(corpus: Path, cli, command: str) -> None:
    _, err = cli(command, "--spark", "--include-gtids", f"{UUID}:55", corpus / APE, expect=2)
    assert err.strip().splitlines() == [
        "repltool: error: the window options (--start-position, --include-gtids, --database, "
        "...) are not available with --spark"]


@pytest.mark.parametrize("args, keep", [
    (["--table", "wl.parent"], lambda i, t: "wl.parent" in t.tables),
    (["--include-gtids", ",".join(f"0-1-{n}" for n in range(60, 140))],
     lambda i, t: 60 <= int(t.gtid.split("-")[2]) < 140),
    (["--start-position", "0-1-100", "--stop-position", "0-1-180"],
     lambda i, t: 100 < int(t.gtid.split("-")[2]) <= 180),
])
def test_mariadb_applier_window_is_the_subset(corpus: Path, tmp_path: Path, cli,
                                              args: list[str], keep) -> None:  # type: ignore[no-untyped-def]
    """schedule on MariaDB logs (MariaDB's applier) over a window = over a copy of the log
    holding only the window's event groups."""
    log = corpus / ROTATION / "mysql-bin.000001"
    schema = corpus / ROTATION / "schema.sql"
    trxs = list(read_transactions(log))
    chosen = [t for i, t in enumerate(trxs) if keep(i, t)]
    assert 0 < len(chosen) < len(trxs)
    subset = _splice(log, chosen, tmp_path / "subset.bin", trxs[0].start.offset)
    base = ["schedule", "--format", "json", "--workers", "1,2,4", "--parallel-mode", "all",
            "--schema", schema]
    windowed, _ = cli(*base, *args, log)
    expected, _ = cli(*base, subset)
    a, b = json.loads(windowed), json.loads(expected)
    for doc in (a, b):
        for report in doc["compare"]:
            report.pop("files")
            # (warnings name the file and offset: the copy's differ)
            report["warnings"] = [w.split(": ", 1)[1] for w in report["warnings"]]
    assert a == b
    assert a["compare"][0]["transactions"] == len(chosen)
