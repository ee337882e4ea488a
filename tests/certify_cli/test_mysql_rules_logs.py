"""MySQL's tracker rules on real logs: CTAS, empty transactions, view changes.

Each log is written by :mod:`.seedlogs` with the project's encoder (MySQL
8.0 events, serial commit-order clocks ``(i - 1, i)``) and certified through
the command line.  The expected clocks are MySQL 8.0.43's:

* ``sql/rpl_trx_tracking.cc``: an empty transaction (``GTID``, ``BEGIN``,
  ``COMMIT``: ``is_empty_transaction_in_binlog_cache``) can use write sets, so
  it takes the history start as parent and does not reset the history; a
  ``CREATE TABLE ... SELECT`` cannot (8.4's ``is_create_table_as_query_block``;
  for 8.0 the barrier is the safe reading: it only lowers parallelism), so it
  keeps its commit-order parent and resets the history;
* ``plugin/group_replication/src/certifier.cc``: a CTAS (marked ``(0, 0)`` by
  the sender) is applied after everything before it and moves the window; an
  empty transaction takes the window start and does not move it; a logged
  View_change garbage-collects (``applier.cc``), which opens a window at the
  last sequence number.

Before this was fixed, repltool read the 8.0.21+ CTAS layout as a DML and the
empty transaction as a DDL barrier: the values marked "was" below.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .seedlogs import DDL, VIEW_CHANGE, ctas, empty, write_logs, write_replica_log, ws

CORPUS = Path(os.environ.get("REPLTOOL_CORPUS")
              or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")

#: CREATE TABLE, INSERT, empty, INSERT, CTAS with two rows, INSERT into the new
#: table, INSERT of row 1 again.  Threads: sessions 10, 20, 30 repeat.
SOURCE = [DDL, ws(1, thread=10), empty(thread=20), ws(2, thread=10),
          ctas("t2", 1, 2, thread=30), ws(3, table="t2", thread=30), ws(1, thread=20)]


def clocks(rows: list[dict]) -> list[tuple[int, int] | None]:
    return [tuple(r["computed"]) if r["computed"] is not None else None for r in rows]


def reasons(rows: list[dict]) -> list[str]:
    return [r["depends_on"]["reason"] for r in rows]


def test_commit_order_keeps_the_logged_clocks(certify_jsonl, tmp_path: Path) -> None:
    rows = certify_jsonl("--mode", "commit-order", *write_logs(tmp_path, [SOURCE]))
    assert clocks(rows) == [(i - 1, i) for i in range(1, 8)]


def test_writeset_empty_is_parallel_and_ctas_is_a_barrier(certify_jsonl,
                                                          tmp_path: Path) -> None:
    rows = certify_jsonl("--mode", "writeset", "--pk-only", *write_logs(tmp_path, [SOURCE]))
    # was: (0, 1) (1, 2) (2, 3) (3, 4) (3, 5) (3, 6) (3, 7): the empty one a barrier,
    # the CTAS read as a DML (parallel with what came before it)
    assert clocks(rows) == [(0, 1), (1, 2), (1, 3), (1, 4), (4, 5), (5, 6), (5, 7)]
    assert reasons(rows)[2] == "history-reset"  # the empty one: history start (1), no reset
    assert reasons(rows)[4] == "ddl"            # the CTAS: commit-order parent, history reset
    assert reasons(rows)[6] == "history-reset"  # row 1's writer (2) is before the reset


def test_writeset_session(certify_jsonl, tmp_path: Path) -> None:
    rows = certify_jsonl("--mode", "writeset-session", "--pk-only",
                         *write_logs(tmp_path, [SOURCE]))
    # session 10: 2 -> 4; session 20: 3 -> 7; session 30: 5 -> 6
    # was: (0, 1) (1, 2) (2, 3) (3, 4) (3, 5) (5, 6) (3, 7)
    assert clocks(rows) == [(0, 1), (1, 2), (1, 3), (2, 4), (4, 5), (5, 6), (5, 7)]
    assert reasons(rows)[3] == "session"


def test_group_replication(certify_jsonl, tmp_path: Path) -> None:
    rows = certify_jsonl("--mode", "group-replication", *write_logs(tmp_path, [SOURCE]))
    # was: (1, 2) (2, 3) (3, 4) (4, 5) (4, 6) (4, 7) (4, 8): the empty one moved the
    # window, the CTAS did not
    assert clocks(rows) == [(1, 2), (2, 3), (2, 4), (2, 5), (5, 6), (6, 7), (6, 8)]
    assert reasons(rows)[2] == "empty"
    assert reasons(rows)[4] == "ddl"


def test_gr_create_table_as_select_mtr_expectation(certify_jsonl, tmp_path: Path) -> None:
    """mysql-test ``group_replication`` CTAS case (see tests/certify/test_mysql_mtr_gr.py):
    ``0 0;1 2;2 3;3 4;4 5;5 6;6 7;7 8;8 9``, here from a real log with the
    8.0.21+ CTAS layout (was ``...;5 6;5 7;5 8;8 9``: the CTAS with rows read as DML)."""
    trxs = [VIEW_CHANGE,
            DDL,                        # CREATE TABLE t1
            ctas("t2"),                 # CREATE TABLE t2 ... AS SELECT * FROM t1 (no rows)
            ws(1, table="t2"),          # INSERT INTO t2 VALUES (1)
            DDL,                        # CREATE TABLE t3
            ws(1, table="t3"),          # INSERT INTO t3 VALUES (1)
            ctas("t4", 1),              # CREATE TABLE t4 ... AS SELECT * FROM t3
            ws(2, table="t4"),          # INSERT INTO t4 VALUES (2)
            ctas("t5")]                 # CREATE TABLE t5 AS SELECT * FROM t1 (no rows)
    rows = certify_jsonl("--mode", "group-replication", *write_logs(tmp_path, [trxs]))
    assert clocks(rows) == [(0, 0), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7),
                            (7, 8), (8, 9)]


def test_gr_empty_transactions_mtr_expectation(certify_jsonl, tmp_path: Path) -> None:
    """``gr_parallel_applier_indexes`` empty-transaction case on a real log:
    ``0 0;0 0;1 2;2 3;2 4;2 5;2 6;6 7;7 8;7 9`` (was ``...;2 3;3 4;4 5;5 6;6 7;7 8;8 9``:
    GTID, BEGIN, COMMIT read as a DDL)."""
    trxs = [VIEW_CHANGE, VIEW_CHANGE, DDL, empty(), empty(), ws(1), empty(), DDL, empty(),
            empty()]
    rows = certify_jsonl("--mode", "group-replication", *write_logs(tmp_path, [trxs]))
    assert clocks(rows) == [(0, 0), (0, 0), (1, 2), (2, 3), (2, 4), (2, 5), (2, 6), (6, 7),
                            (7, 8), (7, 9)]


def test_gr_view_change_opens_a_window(certify_jsonl, tmp_path: Path) -> None:
    """A view change mid-stream: the next independent transaction depends on the
    last sequence number (was ``1 2;1 3;0 0;1 4;2 5``: the old window start)."""
    trxs = [ws(1), ws(2), VIEW_CHANGE, ws(3), ws(1)]
    rows = certify_jsonl("--mode", "group-replication", *write_logs(tmp_path, [trxs]))
    assert clocks(rows) == [(1, 2), (1, 3), (0, 0), (3, 4), (3, 5)]
    assert reasons(rows)[3] == "gc-window"


def test_replica_binlog_session_order_is_explained(cli, certify_jsonl, tmp_path: Path) -> None:
    """On a replica's binlog MySQL's WRITESET_SESSION used the applier worker's
    session; the log keeps the source session's thread id. The report says which
    session repltool used, and how many transactions it concerns."""
    log = write_replica_log(tmp_path / "replica" / "binlog.000001",
                            [ws(1, thread=5), ws(2, thread=6), ws(3, thread=5)])
    rows = certify_jsonl("--mode", "writeset-session", "--pk-only", log)
    assert clocks(rows) == [(0, 1), (1, 2), (1, 3)]      # thread 5's 1 -> 3: parent 1
    out, _ = cli("certify", "--mode", "writeset-session", "--pk-only", log)
    flat = " ".join(out.split())
    assert "3 transactions were written by a replica's applier" in flat
    assert "applier worker's session" in flat
    assert "no session id" not in flat                  # every transaction has a thread id


def test_source_binlog_has_no_replica_note(cli, tmp_path: Path) -> None:
    from repltool.certify.report import CertifyRun, ReportBuilder
    logs = write_logs(tmp_path, [SOURCE])
    report = ReportBuilder(CertifyRun(logs, "writeset-session")).build()
    assert (report.session_order, report.no_session, report.replicated) == (True, 0, 0)
    out, _ = cli("certify", "--mode", "writeset-session", "--pk-only", *logs)
    flat = " ".join(out.split())
    assert "session order │ yes │" in flat
    assert "replica's applier" not in flat and "no session id" not in flat


def test_mariadb_rows_without_session_are_counted(cli) -> None:
    """MariaDB's row-based DML has no Query event, hence no thread id: the session
    rule cannot order it, and the report says how many transactions that is."""
    from repltool.certify.report import CertifyRun, ReportBuilder
    d = CORPUS / "mariadb" / "small"
    run = CertifyRun(sorted(d.glob("mysql-bin.0*")), "writeset-session",
                     schema_paths=[d / "schema.sql"])
    report = ReportBuilder(run).build()
    n = report.summary.before.transactions
    assert report.session_order and 0.9 * n < report.no_session < n
    out, _ = cli("certify", "--mode", "writeset-session", "--schema", d / "schema.sql",
                 d / "mysql-bin.000001")
    flat = " ".join(out.split())
    assert "transactions have no session id in the log" in flat
    assert "so the session rule could not order them" in flat


def test_missing_key_fallbacks_are_counted_by_reason(cli, certify_jsonl,
                                                    tmp_path: Path) -> None:
    """Rows whose Table_map carries no primary key, without --schema: the
    transaction keeps its commit-order parent, counted as ``no-schema``."""
    logs = write_logs(tmp_path, [[ws(1), ws(2, table="t7")]])
    _strip_primary_key(logs[0], table_id=107)
    rows = certify_jsonl("--mode", "writeset", "--pk-only", *logs)
    assert [r.get("missing_keys") for r in rows] == [None, ["no-schema"]]
    assert reasons(rows)[1] == "no-key"
    out, _ = cli("certify", "--mode", "writeset", *logs)
    flat = " ".join(out.split())
    assert "missing keys: 1 transaction(s) without a usable write set" in flat
    assert "no-schema" in flat and "no key in the Table_map, no --schema" in flat


def _strip_primary_key(path: Path, *, table_id: int) -> None:
    """Rewrite the Table_map of ``table_id`` without its SIMPLE_PRIMARY_KEY field
    (binlog_row_metadata=MINIMAL keeps none): same length, the field's type byte
    turned into an unknown one that readers skip, and the CRC fixed."""
    import zlib
    data = bytearray(path.read_bytes())
    pos = 4
    while pos < len(data):
        size = int.from_bytes(data[pos + 9:pos + 13], "little")
        if data[pos + 4] == 19 and int.from_bytes(data[pos + 19:pos + 25], "little") == table_id:
            body = data[pos + 19:pos + size - 4]
            # optional metadata ends with TLV (type 8 = SIMPLE_PRIMARY_KEY, len 1, col 0)
            assert body[-3:] == b"\x08\x01\x00"
            data[pos + size - 4 - 3] = 0x7F
            crc = zlib.crc32(bytes(data[pos:pos + size - 4]))
            data[pos + size - 4:pos + size] = crc.to_bytes(4, "little")
        pos += size
    path.write_bytes(bytes(data))


def test_grouper_kinds(tmp_path: Path) -> None:
    """The grouper marks GTID/BEGIN/COMMIT ``empty`` and the 8.0.21+ CTAS ``ddl``
    (with its rows); ``stats`` counts the same kinds with either engine."""
    from repltool.binlog import read_transactions
    from repltool.stats import compute_stats
    logs = write_logs(tmp_path, [SOURCE])
    general = list(read_transactions(logs))
    want = ["ddl", "dml", "empty", "dml", "ddl", "dml", "dml"]
    assert [t.kind for t in general] == want
    assert compute_stats(logs).total.transaction_kinds == {"dml": 4, "ddl": 2, "empty": 1}
    assert general[4].rows_events == (("test.t2", 1),)
    assert general[2].num_events == 3        # GTID, BEGIN, COMMIT (a lone COMMIT whose
    # BEGIN was cut away stays "dml": tests/binlog/test_transactions.py orphan_commit)
