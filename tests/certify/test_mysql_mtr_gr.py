"""Group Replication scenarios whose indexes MySQL's own test suite asserts.

Each test replays the transactions of one MySQL 8.0.43 mysql-test case
(``mysql-test/suite/group_replication/t/<name>.test``) and expects the
``$logical_timestamps`` that case asserts on the ``group_replication_applier``
relay log (``include/assert_logical_timestamps.inc``). Only the statements
and the expected pairs were transcribed; the statements become write sets
(PRIMARY key rows of ``test.t*``), DDL, CTAS and empty transactions.
"""

from __future__ import annotations

from certify_helpers import AAAA, DDL, EMPTY, VIEW_CHANGE, clocks, dml, gr

from repltool.certify import CertTransaction, GarbageCollect, Reason

CTAS = CertTransaction(ctas=True)


def test_gr_parallel_applier_indexes_step1_member4() -> None:
    """Three view changes, CREATE TABLE, two inserts, an UPDATE of row 1.

    Expected ``0 0;0 0;0 0;1 2;2 3;2 4;3 5``.
    """
    items = [
        VIEW_CHANGE, VIEW_CHANGE, VIEW_CHANGE,
        DDL,                                   # CREATE TABLE t1 (c1 INT PRIMARY KEY)
        dml("t1", 1, gtid=f"{AAAA}:1"),        # GTID_NEXT=...; INSERT (1)
        dml("t1", 3),                          # INSERT (3)
        dml("t1", 2, 1),                       # UPDATE SET c1=2 WHERE c1=1 (after, before)
    ]
    results = gr(items)
    assert clocks(results) == [(0, 0), (0, 0), (0, 0), (1, 2), (2, 3), (2, 4), (3, 5)]
    assert results[6].reason is Reason.KEY
    assert results[6].depends_on == f"{AAAA}:1"
    assert results[6].key is not None and results[6].key.values == ("1",)


def _step2_and_3() -> list[CertTransaction | GarbageCollect]:
    """Steps 2 and 3 as seen by a restarted member (fresh certifier)."""
    return [
        VIEW_CHANGE,
        dml("t1", 4, member="server3"),        # INSERT (4)
        dml("t1", 5, 4, member="server2"),     # UPDATE SET c1=5 WHERE c1=4
        dml("t1", 6, member="server1"),        # INSERT (6)
        dml("t1", 7, 6, member="server4"),     # UPDATE SET c1=7 WHERE c1=6
        GarbageCollect(),                      # stable set propagated, GC ran
        dml("t1", 8, member="server1"),        # INSERT (8)
        dml("t1", 9, member="server2"),        # INSERT (9)
    ]


def test_gr_parallel_applier_indexes_member2_local_transactions() -> None:
    """On server 2 its own UPDATE is local: stored with seq -1, no number.

    Expected ``0 0;1 2;1 3;3 4`` then, after GC, ``...;4 5``.
    """
    results = gr(_step2_and_3(), local_member="server2")
    assert clocks(results) == [(0, 0), (1, 2), None, (1, 3), (3, 4), (4, 5), None]
    assert results[2].reason is Reason.LOCAL
    assert results[5].reason is Reason.GC_WINDOW


def test_gr_parallel_applier_indexes_member1_local_items_hide_dependencies() -> None:
    """On server 1, server 4's UPDATE of row 6 finds row 6 stored with -1
    (server 1's local INSERT) and gets the window start.

    Expected ``0 0;1 2;2 3;1 4`` then, after GC, ``...;4 5``.
    """
    results = gr(_step2_and_3(), local_member="server1")
    assert clocks(results) == [(0, 0), (1, 2), (2, 3), None, (1, 4), None, (4, 5)]


def test_gr_parallel_applier_indexes_empty_transactions() -> None:
    """Empty transactions take the window start and never move it.

    Expected ``0 0;0 0;1 2;2 3;2 4;2 5;2 6;6 7;7 8;7 9``.
    """
    items = [VIEW_CHANGE, VIEW_CHANGE, DDL, EMPTY, EMPTY, dml("t1", 1), EMPTY, DDL, EMPTY, EMPTY]
    results = gr(items)
    assert clocks(results) == [(0, 0), (0, 0), (1, 2), (2, 3), (2, 4), (2, 5), (2, 6),
                               (6, 7), (7, 8), (7, 9)]
    assert results[3].reason is Reason.EMPTY


def test_gr_parallel_applier_sequential_indexes() -> None:
    """CREATE TABLE, CREATE USER, empty, DROP TABLE, CREATE TABLE, CREATE DATABASE.

    Expected ``0 0;0 0;0 0;1 2;2 3;3 4;4 5;5 6;6 7``.
    """
    items = [VIEW_CHANGE] * 3 + [DDL, DDL, EMPTY, DDL, DDL, DDL]
    assert clocks(gr(items)) == [(0, 0)] * 3 + [(1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7)]


def test_gr_create_table_as_select() -> None:
    """CTAS is marked (0, 0) by the sender and certified like a DDL even with rows.

    Expected ``0 0;1 2;2 3;3 4;4 5;5 6;6 7;7 8;8 9``.
    """
    items = [
        VIEW_CHANGE,
        DDL,                                   # CREATE TABLE t1
        CTAS,                                  # CREATE TABLE t2 ... AS SELECT * FROM t1 (no rows)
        dml("t2", 1),                          # INSERT INTO t2 VALUES (1)
        DDL,                                   # CREATE TABLE t3
        dml("t3", 1),                          # INSERT INTO t3 VALUES (1)
        CertTransaction(ctas=True, writeset=dml("t4", 1).writeset),  # CTAS t4 from t3
        dml("t4", 2),                          # INSERT INTO t4 VALUES (2)
        CTAS,                                  # CREATE TABLE t5 (no PK) AS SELECT * FROM t1
    ]
    assert clocks(gr(items)) == [(0, 0), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7),
                                 (7, 8), (8, 9)]


def test_gr_parallel_applier_indexes_filtered_transactions() -> None:
    """Transactions emptied by a replication filter are empty transactions.

    Expected ``0 0;1 2;2 3;3 4;3 5;3 6;3 7;3 8;3 9;9 10;10 11;10 12;10 13;13 14``.
    """
    items = [
        VIEW_CHANGE,
        DDL, DDL,                              # CREATE TABLE t0, t1
        EMPTY,                                 # CREATE TABLE t2 (filtered)
        dml("t1", 1), EMPTY, EMPTY,            # INSERT t1; INSERT t2 (filtered); GTID_NEXT empty
        dml("t1", 2), EMPTY,                   # INSERT t1; INSERT t2 (filtered)
        DDL,                                   # DROP TABLE t1
        EMPTY, EMPTY, EMPTY,                   # INSERT t2 x2, DROP TABLE t2 (filtered)
        DDL,                                   # DROP TABLE t0
    ]
    assert clocks(gr(items)) == [(0, 0), (1, 2), (2, 3), (3, 4), (3, 5), (3, 6), (3, 7), (3, 8),
                                 (3, 9), (9, 10), (10, 11), (10, 12), (10, 13), (13, 14)]


def test_gr_parallel_applier_indexes_commit_order() -> None:
    """CREATE TABLE, then 4 rounds of 4 inserts from 4 client sessions.

    The 16 independent inserts all get last_committed 2 because the CREATE
    TABLE moved the window to 2. Expected on server 2
    ``0 0;1 2;2 3;2 4;...;2 18`` (server 3 has one more view change).
    """
    inserts = [dml("t1", v, session=(1, 100 + (v - 1) % 4)) for v in range(1, 17)]
    results = gr([VIEW_CHANGE, DDL, *inserts])
    assert clocks(results) == [(0, 0), (1, 2)] + [(2, sn) for sn in range(3, 19)]
    results3 = gr([VIEW_CHANGE, VIEW_CHANGE, DDL, *inserts])
    assert clocks(results3)[2:] == clocks(results)[1:]
