"""Replay oracle (issue #17): `repltool dump LOGS | mariadb` rebuilds what the source had.

A fresh MariaDB (``tests/fixtures/mariadb.py``) runs :mod:`fixtures.replay_workload`
(rows of the corpus column types, DDL, XA, multi-statement transactions,
statement-based Intvar/Rand/User_var events) after loading its starting schema;
two more fresh servers without binlogs load the same starting schema, and the
logs are replayed into one with ``repltool dump`` and into the other with
``mariadb-binlog``, both piped into the ``mariadb`` client.  ``CHECKSUM TABLE``
of every table must equal the source's, for the whole logs and for a
position, datetime and GTID window (replayed on top of the prefix before it).
The flashback oracle applies ``repltool dump --flashback`` of a window to the
state after it: every checksum returns to its value before the window.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from fixtures import replay_workload as W
from fixtures.mariadb import Server, throwaway_server


class Live:
    def __init__(self, source_sums: dict[str, Any], marks: dict[str, W.Mark],
                 binlogs: list[Path], ours: Server, theirs: Server) -> None:
        self.source_sums = source_sums
        self.marks = marks
        self.binlogs = binlogs
        self.ours = ours
        self.theirs = theirs


def _setup_sql() -> bytes:
    return ("".join(sql + ";\n" for sql in W.SETUP)).encode()


def _reset(server: Server) -> None:
    server.client(f"DROP DATABASE IF EXISTS {W.DB};\n".encode() + _setup_sql())


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    base = tmp_path_factory.mktemp("replay")
    source = throwaway_server(base / "src")
    try:
        marks = W.run(source)
        sums = source.checksums(W.DB)
        binlogs = source.binlogs()
    finally:
        source.stop()
    ours = throwaway_server(base / "ours", log_bin=False, server_id=2)
    try:
        theirs = throwaway_server(base / "theirs", log_bin=False, server_id=3)
        try:
            for s in (ours, theirs):
                s.client(_setup_sql())
            yield Live(sums, marks, binlogs, ours, theirs)
        finally:
            theirs.stop()
    finally:
        ours.stop()


#: Both tools run in this zone (TZ): they read --start/--stop-datetime in local time.
ZONE = "Asia/Kolkata"


def _local(utc_text: str) -> str:
    """A mark's UTC_TIMESTAMP() as the wall time in ZONE."""
    from datetime import datetime, timezone
    from zoneinfo import ZoneInfo
    return datetime.fromisoformat(utc_text).replace(tzinfo=timezone.utc).astimezone(
        ZoneInfo(ZONE)).strftime("%Y-%m-%d %H:%M:%S")


def repltool_dump(*args: Any) -> bytes:
    r = subprocess.run([sys.executable, "-m", "repltool", "dump", *map(str, args)],
                       capture_output=True, timeout=300, env={**os.environ, "TZ": ZONE})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout


def mariadb_binlog(*args: Any) -> bytes:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    assert tool, "mariadb-binlog is not installed"
    r = subprocess.run([tool, *map(str, args)], capture_output=True, timeout=300,
                       env={**os.environ, "TZ": ZONE})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout


def test_full_replay_equals_source_and_mariadb_binlog(live: Live) -> None:
    ours = repltool_dump(*live.binlogs)
    assert b"BINLOG '" in ours and b"SET @@session.gtid_seq_no=" in ours
    # a statement with binary data is written as logged (ESC, 0xff and BEL raw) ...
    assert b"VALUES (_binary'\x1b[31m\xff\x07\xfe end')\n/*!*/;" in ours
    # ... and only --text-mode terminal shows it escaped, commented out
    shown = repltool_dump("--text-mode", "terminal", *live.binlogs)
    assert b"\x1b" not in shown
    assert b"# INSERT INTO rp.types (c_vbin) VALUES (_binary'\\x1b[31m" in shown
    live.ours.client(ours)
    live.theirs.client(mariadb_binlog(*live.binlogs))
    got, theirs = live.ours.checksums(W.DB), live.theirs.checksums(W.DB)
    assert set(got) == {"types", "acct", "nokey", "stmt"}
    assert all(v not in (None, 0) for k, v in got.items() if k != "nokey"), got
    assert got == live.source_sums
    assert theirs == live.source_sums


def _window_replay(live: Live, prefix: list[str], window: list[str],
                   theirs_prefix: list[str], theirs_window: list[str]) -> None:
    for s in (live.ours, live.theirs):
        _reset(s)
    live.ours.client(repltool_dump(*prefix, *live.binlogs))
    live.ours.client(repltool_dump(*window, *live.binlogs))
    live.theirs.client(mariadb_binlog(*theirs_prefix, *live.binlogs))
    live.theirs.client(mariadb_binlog(*theirs_window, *live.binlogs))
    end = live.marks["window_end"].checksums
    assert end != live.marks["window_start"].checksums      # the window changes something
    assert live.ours.checksums(W.DB) == end
    assert live.theirs.checksums(W.DB) == end


def test_position_window(live: Live) -> None:
    ws, we = live.marks["window_start"], live.marks["window_end"]
    assert ws.file == we.file == live.binlogs[0].name
    logs = live.binlogs[:1]
    live_first = Live(live.source_sums, live.marks, logs, live.ours, live.theirs)
    prefix = [f"--stop-position={ws.pos}"]
    window = [f"--start-position={ws.pos}", f"--stop-position={we.pos}"]
    _window_replay(live_first, prefix, window, prefix, window)


def test_datetime_window(live: Live) -> None:
    ws, we = live.marks["window_start"], live.marks["window_end"]
    prefix = [f"--stop-datetime={_local(ws.when)}"]
    window = [f"--start-datetime={_local(ws.when)}", f"--stop-datetime={_local(we.when)}"]
    _window_replay(live, prefix, window, prefix, window)


def test_gtid_window(live: Live) -> None:
    ws, we = live.marks["window_start"], live.marks["window_end"]
    first = int(ws.gtid_pos.rsplit("-", 1)[1]) + 1
    last = int(we.gtid_pos.rsplit("-", 1)[1])
    ours_prefix = ["--include-gtids=" + ",".join(f"0-1-{n}" for n in range(1, first))]
    ours_window = ["--include-gtids=" + ",".join(f"0-1-{n}" for n in range(first, last + 1))]
    # mariadb-binlog selects by GTID positions: after ws up to we
    theirs_prefix = [f"--stop-position={ws.gtid_pos}"]
    theirs_window = [f"--start-position={ws.gtid_pos}", f"--stop-position={we.gtid_pos}"]
    _window_replay(live, ours_prefix, ours_window, theirs_prefix, theirs_window)


def test_flashback_returns_every_table_to_before_the_window(live: Live) -> None:
    """Apply the logs up to the window's end, then `dump --flashback` of the window:
    every checksum is back to its value at the window's start (as with
    `mariadb-binlog --flashback` on the other server)."""
    ws, we = live.marks["window_start"], live.marks["window_end"]
    first = live.binlogs[0]
    for s in (live.ours, live.theirs):
        _reset(s)
        s.client(repltool_dump(f"--stop-position={we.pos}", first))
        assert s.checksums(W.DB) == we.checksums
    back = repltool_dump("--flashback", f"--start-position={ws.pos}",
                         f"--stop-position={we.pos}", first)
    assert back.count(b"# repltool flashback: undoes the transaction of 0-1-") == 4
    assert b"gtid_seq_no" not in back           # the undoing transactions get new GTIDs
    live.ours.client(back)
    assert live.ours.checksums(W.DB) == ws.checksums
    live.theirs.client(mariadb_binlog("--flashback", f"--start-position={ws.pos}",
                                      f"--stop-position={we.pos}", first))
    assert live.theirs.checksums(W.DB) == ws.checksums


def test_flashback_refuses_ddl_and_statement_based_events(live: Live) -> None:
    we = live.marks["window_end"]
    r = subprocess.run([sys.executable, "-m", "repltool", "dump", "--flashback",
                        f"--start-position={we.pos}", str(live.binlogs[0])],
                       capture_output=True, timeout=120)
    assert r.returncode == 1 and r.stdout == b""
    err = r.stderr.decode()
    assert "QUERY_EVENT: the window holds a statement (DDL or statement-based DML)" in err
    assert "ALTER TABLE rp.acct ADD COLUMN" in err and len(err.strip().splitlines()) == 1


def test_rewrite_db_replays_into_another_database(live: Live) -> None:
    """--rewrite-db rp->rq: the rows land in rq (the window has no DDL, whose text
    names rp itself: names inside statements stay as logged, as with mysqlbinlog)."""
    we = live.marks["window_end"]
    s = live.ours
    s.client(b"DROP DATABASE IF EXISTS rq;\n" + _setup_sql().replace(b" rp.", b" rq.")
             .replace(b"DATABASE rp ", b"DATABASE rq "))
    text = repltool_dump("--rewrite-db", "rp->rq", f"--stop-position={we.pos}",
                         live.binlogs[0])
    assert b"Table_map: `rq`." in text and b"Table_map: `rp`." not in text
    s.client(text)
    assert s.checksums("rq") == we.checksums


_GTID_LINE = re.compile(rb"\tGTID (\d+-\d+-\d+)")


def _gtids(text: bytes) -> list[bytes]:
    return _GTID_LINE.findall(text)


@pytest.mark.parametrize("args", [
    ["--do-domain-ids=5"], ["--ignore-domain-ids=5"], ["--ignore-server-ids=9"],
    ["--start-position=0-1-12"], ["--stop-position=0-1-12"],
    ["--start-position=0-1-5", "--stop-position=0-1-17"],
    ["--start-position=0-1-12,5-1-1"]])
def test_mariadb_gtid_selection_as_mariadb_binlog(live: Live, args: list[str]) -> None:
    """MariaDB GTID positions and domain/server filters select the transactions
    mariadb-binlog selects (the GTIDs printed, in order)."""
    ours = _gtids(repltool_dump(*args, *live.binlogs))
    theirs = _gtids(mariadb_binlog(*args, *live.binlogs))
    assert ours and ours == theirs
    assert len(ours) < len(_gtids(repltool_dump(*live.binlogs)))


def test_flashback_of_xa_transactions(live: Live) -> None:
    """A window of XA transactions: the one committed in two phases and the one
    committed in one phase are undone; the one rolled back changed nothing."""
    xs, xe = live.marks["xa_start"], live.marks["xa_end"]
    first = live.binlogs[0]
    s = live.ours
    _reset(s)
    s.client(repltool_dump(f"--stop-position={xe.pos}", first))
    assert s.checksums(W.DB) == xe.checksums != xs.checksums
    back = repltool_dump("--flashback", f"--start-position={xs.pos}",
                         f"--stop-position={xe.pos}", first)
    assert back.count(b"# repltool flashback: undoes the transaction") == 2
    s.client(back)
    assert s.checksums(W.DB) == xs.checksums
    # an XA transaction prepared but not committed in the window is refused
    r = subprocess.run([sys.executable, "-m", "repltool", "dump", "--flashback",
                        f"--start-position={xs.pos}", "--stop-position=" + str(
                            _xa_prepare_end(first, xs.pos)), str(first)],
                       capture_output=True, timeout=120)
    assert r.returncode == 1
    assert "XA transaction prepared but not committed in the window" in r.stderr.decode()


def _xa_prepare_end(path: Path, start: int) -> int:
    from repltool.binlog import read_events
    from repltool.binlog.events import XaPrepareBody
    for ev in read_events(path):
        if ev.pos.offset >= start and isinstance(ev.body, XaPrepareBody):
            return ev.end_pos
    raise AssertionError("no XA_PREPARE event after the mark")


def test_table_filter_keeps_the_output_replayable(live: Live) -> None:
    """--table acct: the replayed acct equals the source's."""
    s = live.ours
    _reset(s)
    s.client(repltool_dump("--table=acct", *live.binlogs))
    assert s.checksums(W.DB)["acct"] == live.source_sums["acct"]
