"""The WL#8440 / WL#6833 seed examples, table for table (group-replication mode).

Every ``trx.LC`` / ``trx.SN`` column of WL#8440 is reproduced exactly with
MySQL 8.0's certifier rules (``plugin/group_replication/src/certifier.cc``);
no offset is needed: the seed tables already use MySQL's numbering
(``parallel_applier_sequence_number`` starts at 2, ``last_committed_global``
at 1, the boot View_change is ``(0, 0)``).

Two places where the seed's *prose* disagrees with its own tables are pinned
below (the tables agree with the MySQL code):

* AL1 says "trx.LC = last_committed_global" then, for a transaction without
  write set, "last_committed_global = sequence_number". Taken literally, EX4's
  T4 would be (2, 5); the table says (4, 5), which is 8.0's rule
  ``last_committed = sequence_number - 1`` for a no-write-set transaction.
* EX6's text opens the window with "last_committed_global = current
  parallel_applier_sequence_number" (4, which would give T3 an invalid (4, 4));
  the table shows 3, which is 8.0's ``last_committed_global =
  parallel_applier_last_sequence_number``.
"""

from __future__ import annotations

from certify_helpers import DDL, EMPTY, UUID1, VIEW_CHANGE, clocks, gr, gtids, trx

from repltool.certify import CertTransaction, GarbageCollect, Reason


def test_ex2_update_after_insert_of_same_row_is_not_parallel() -> None:
    """EX2: T2 (ws1, ws2) does not conflict with T1 (its snapshot includes
    T1), but shares ws1, so T2.LC = T1.SN."""
    t1 = trx("ws1", gtid=f"{UUID1}:1", snapshot=gtids(""))
    t2 = trx("ws1", "ws2", gtid=f"{UUID1}:2", snapshot=gtids(f"{UUID1}:1"))
    results = gr([t1, t2])
    assert clocks(results) == [(1, 2), (2, 3)]
    assert results[1].conflict is None
    assert results[1].reason is Reason.KEY
    assert results[1].depends_on == f"{UUID1}:1"


def test_ex2_without_t1_in_snapshot_is_a_conflict() -> None:
    """WL#6833: a transaction that did not see the certified writer of one of
    its items fails certification (first committer wins) and gets no number."""
    t1 = trx("ws1", gtid=f"{UUID1}:1", snapshot=gtids(""))
    t2 = trx("ws1", "ws2", gtid=f"{UUID1}:2", snapshot=gtids(""))
    t3 = trx("ws3", gtid=f"{UUID1}:3", snapshot=gtids(f"{UUID1}:1"))
    results = gr([t1, t2, t3])
    assert clocks(results) == [(1, 2), None, (1, 3)]
    assert results[1].reason is Reason.CONFLICT
    assert results[1].conflict is not None and "rolled back" in results[1].conflict


EX3 = [  # (write set, trx.LC, trx.SN) from WL#8440 EX3
    (("ws1",), 1, 2),
    (("ws2",), 1, 3),
    (("ws1", "ws3"), 2, 4),
    (("ws4",), 1, 5),
    (("ws5",), 1, 6),
    (("ws5", "ws6"), 6, 7),
    (("ws7",), 1, 8),
    (("ws8",), 1, 9),
]


def test_ex3_dependency_graph() -> None:
    """EX3: T3 depends on T1 (ws1), T6 on T5 (ws5), all others on nothing:
    their LC is the window start, 1. The group boot row is the (0, 0) view change."""
    items = [VIEW_CHANGE] + [trx(*w, gtid=f"{UUID1}:{i}") for i, (w, _, _) in enumerate(EX3, 1)]
    results = gr(items)
    assert clocks(results) == [(0, 0)] + [(lc, sn) for _, lc, sn in EX3]
    assert results[3].depends_on == f"{UUID1}:1"
    assert results[6].depends_on == f"{UUID1}:5"


def test_ex4_no_writeset_is_sequential() -> None:
    """EX4: a transaction without write set (a DDL) runs alone: LC = SN - 1,
    and later transactions depend at least on it."""
    items = [DDL, trx("ws1"), trx("ws2"), DDL, trx("ws1")]
    assert clocks(gr(items)) == [(1, 2), (2, 3), (2, 4), (4, 5), (5, 6)]


def test_ex4_al1_taken_literally_disagrees_with_the_table() -> None:
    """AL1 read literally (LC = global; no write set => global = SN) gives T4
    (2, 5); the seed table and MySQL 8.0 give (4, 5)."""
    glob, seq, out = 1, 2, []
    for has_ws in (False, True, True, False, True):
        lc = glob
        if not has_ws:
            glob = seq
        out.append((lc, seq))
        seq += 1
    assert out[3] == (2, 5)
    assert clocks(gr([DDL, trx("ws1"), trx("ws2"), DDL, trx("ws1")]))[3] == (4, 5)


def test_ex4_with_empty_transactions_instead_of_ddl() -> None:
    """MySQL 8.0 treats *empty* transactions (GTID_NEXT + empty COMMIT) apart
    from DDL: (window, SN) without moving the window. EX4 therefore describes
    DDL; with empty transactions the same rows give different values."""
    items = [EMPTY, trx("ws1"), trx("ws2"), EMPTY, trx("ws1")]
    assert clocks(gr(items)) == [(1, 2), (1, 3), (1, 4), (1, 5), (3, 6)]


def _ex5_ex6_items() -> list[CertTransaction | GarbageCollect]:
    t1 = trx("ws1", gtid=f"{UUID1}:1", snapshot=gtids(""))
    t2 = trx("ws2", gtid=f"{UUID1}:2", snapshot=gtids(f"{UUID1}:1"))
    gc = GarbageCollect(stable=gtids(f"{UUID1}:1-2"))   # T1's version {1} is a strict subset
    t3 = trx("ws1", gtid=f"{UUID1}:3", snapshot=gtids(f"{UUID1}:1-2"))
    t4 = trx("ws4", gtid=f"{UUID1}:4", snapshot=gtids(f"{UUID1}:1-3"))
    return [t1, t2, gc, t3, t4]


def test_ex5_gc_without_a_new_window_loses_the_dependency() -> None:
    """EX5 (the *incorrect* output WL#8440 warns about): once T1 is purged,
    T3 on ws1 would get LC 1 and run in parallel with T1."""
    assert clocks(gr(_ex5_ex6_items(), gc_opens_window=False)) == [(1, 2), (1, 3), (1, 4), (1, 5)]


def test_ex6_gc_opens_a_new_window() -> None:
    """EX6: garbage collection sets last_committed_global to the last assigned
    SN (3), so T3 and T4 both wait for T1 and T2."""
    results = gr(_ex5_ex6_items())
    assert clocks(results) == [(1, 2), (1, 3), (3, 4), (3, 5)]
    assert results[2].reason is Reason.GC_WINDOW


def test_ex7_view_change_is_0_0_and_consumes_no_number() -> None:
    """EX7: the view change is (0, 0) and consumes no number.

    WL#8440's table keeps the indexes across it (T3 gets (1, 4)); MySQL 8.0's
    applier garbage-collects at every logged view change
    (``Applier_module::apply_view_change_packet`` ->
    ``Certifier::set_group_stable_transactions_set`` -> ``garbage_collect``),
    which opens a window at the last sequence number: T3 gets (3, 4).
    """
    items = [trx("ws1"), trx("ws2"), VIEW_CHANGE, trx("ws3")]
    results = gr(items)
    assert clocks(results) == [(1, 2), (1, 3), (0, 0), (3, 4)]
    assert results[2].reason is Reason.VIEW_CHANGE
    assert results[3].reason is Reason.GC_WINDOW
    # the WL's table is the certifier without the window update (gc_opens_window=False)
    assert clocks(gr(items, gc_opens_window=False)) == [(1, 2), (1, 3), (0, 0), (1, 4)]


def _sessions(n_sessions: int, per_session: int) -> list[CertTransaction]:
    """Independent inserts, sessions interleaved round-robin (4 clients)."""
    return [trx(f"row{k}", session=(1, k % n_sessions), gtid=f"{UUID1}:{k + 1}")
            for k in range(n_sessions * per_session)]


def test_fr1_disjoint_rows_from_different_sessions_are_parallel() -> None:
    """FR1: disjoint rows from different server:client tuples all get the
    window start: 16 inserts from 4 sessions right after the group started
    get LC 1 (not 2: LC 2 needs a DDL first, see test_mysql_mtr_gr)."""
    results = gr(_sessions(4, 4))
    assert clocks(results) == [(1, sn) for sn in range(2, 18)]
    assert all(not r.session_order for r in results)


def test_fr2_mysql_certifier_adds_no_session_dependency() -> None:
    """FR2 is met by replica_preserve_commit_order, not by the indexes: the
    default output equals MySQL's certifier even within one session."""
    results = gr([trx("a", session=(1, 7)), trx("b", session=(1, 7))])
    assert clocks(results) == [(1, 2), (1, 3)]


def test_fr2_with_session_order_chains_each_session() -> None:
    """session_order=True: a transaction waits for its session's previous one."""
    results = gr(_sessions(4, 4), session_order=True)
    expected = [(1, sn) if sn < 6 else (sn - 4, sn) for sn in range(2, 18)]
    assert clocks(results) == expected
    assert all(r.session_order for r in results)
    assert results[4].reason is Reason.SESSION and results[4].depends_on == f"{UUID1}:1"


def test_wl6833_stable_set_gc_and_conflict() -> None:
    """WL#6833 example: Ti (#2, snapshot UUID1:1-3) passes and gets GNO 4;
    after GC with stable set UUID1:1-3, Tj (#2, snapshot UUID1:1-3) did not
    see Ti and is rejected."""
    boot = [
        trx("#2", gtid=f"{UUID1}:2", snapshot=gtids(f"{UUID1}:1")),
        trx("#3", gtid=f"{UUID1}:3", snapshot=gtids(f"{UUID1}:1-2")),
    ]
    ti = trx("#2", gtid=f"{UUID1}:4", snapshot=gtids(f"{UUID1}:1-3"))
    tj = trx("#2", gtid=f"{UUID1}:5", snapshot=gtids(f"{UUID1}:1-3"))
    results = gr([*boot, ti, GarbageCollect(stable=gtids(f"{UUID1}:1-3")), tj])
    assert results[2].conflict is None
    assert results[3].computed is None and results[3].reason is Reason.CONFLICT
    assert f"{UUID1}:4" in (results[3].conflict or "")


def test_gr_relay_log_file_boundaries_do_not_reset_numbers() -> None:
    """The group_replication_applier relay log is rotated at view changes,
    but sequence numbers keep increasing across relay files."""
    items = [trx("a", file="relay.000002"), VIEW_CHANGE,
             trx("b", file="relay.000003", new_file=True), trx("a", file="relay.000003")]
    # the view change's garbage collection opens the window at 2
    assert clocks(gr(items)) == [(1, 2), (0, 0), (2, 3), (2, 4)]
    assert clocks(gr(items, gc_opens_window=False)) == [(1, 2), (0, 0), (1, 3), (2, 4)]
