"""WL#8440's examples explained: which edge, which reason, which key.

EX3 (two key conflicts in a window of independent writes), EX4 (transactions
without write set serialise everything) and EX6 (garbage collection opens a
new window), first on abstract certification input, then on real MySQL 8.0
binlogs (:mod:`certify_cli.seedlogs`: write-set item ``wsN`` is row ``id = N``
of ``test.t1``) read by :func:`repltool.explain.explain_log`.
"""

from __future__ import annotations

from pathlib import Path

from certify_cli.seedlogs import DDL as LOG_DDL
from certify_cli.seedlogs import VIEW_CHANGE as LOG_VIEW_CHANGE
from certify_cli.seedlogs import write_logs
from certify_cli.seedlogs import ws as log_ws
from repltool.certify import CertifyOptions, CertTransaction, GarbageCollect, GtidSet
from repltool.explain import EdgeKind, explain_log, explain_transaction, serialisers
from repltool.schedule import critical_path
from repltool.explain import to_sim

from .helpers import COST, UUID1, edges_by_dst, graph, key_edges, trx

EX3 = [("ws1",), ("ws2",), ("ws1", "ws3"), ("ws4",), ("ws5",), ("ws5", "ws6"), ("ws7",), ("ws8",)]


def test_ex3_key_edges_are_t3_on_t1_and_t6_on_t5() -> None:
    """EX3: "T3 does depend on T1; T6 does depend on T5; all others do not depend
    on any transaction" - and each dependency names the row: ws1, ws5.

    The clock cannot say only that: T6's last_committed 6 makes the applier wait
    for *every* transaction with sequence_number <= 6, so T6 also waits for T3
    (which waits for T1): the critical path is T1 -> T3 -> T6, and the prefix
    edge T3 -> T6 is charged to ws5, the row that set T6's last_committed."""
    g = graph([trx(*w, gno=i) for i, w in enumerate(EX3, 1)])
    assert [(n.last_committed, n.sequence_number) for n in g.nodes] == [
        (1, 2), (1, 3), (2, 4), (1, 5), (1, 6), (6, 7), (1, 8), (1, 9)]
    assert edges_by_dst(g) == {2: [(0, "parent", "key", ("1",))],
                               5: [(4, "parent", "key", ("5",)), (2, "prefix", "key", ())]}
    assert key_edges(g) == {(0, 2, ("1",)), (4, 5, ("5",))}
    assert g.critical_nodes == (0, 2, 5)
    assert g.critical_path == 3 * COST.seconds
    assert g.critical_path == critical_path([to_sim(n) for n in g.nodes])
    rows = {s.cause.name: (s.edges, s.critical_edges) for s in serialisers(g)["row"]}
    assert rows == {"test.t1 PRIMARY(1)": (1, 1), "test.t1 PRIMARY(5)": (1, 1)}
    t6 = explain_transaction(g, 5)
    assert (t6.ancestors, t6.overlap, t6.chain) == (5, 0, (0, 2, 5))


def test_ex3_with_the_boot_view_change() -> None:
    """With the group boot's (0, 0) row first, everything waits for the view change
    (a barrier); the two key edges are unchanged."""
    items = [CertTransaction(view_change=True)] + [trx(*w, gno=i) for i, w in enumerate(EX3, 1)]
    g = graph(items)
    assert g.nodes[0].reason == "view-change"
    assert key_edges(g) == {(1, 3, ("1",)), (5, 6, ("5",))}
    assert {e.src for e in g.edges if not e.key_hashes} == {0, 3}    # 3: T6's prefix
    assert g.incoming(1)[0].kind is EdgeKind.BARRIER     # follows a (0, 0) transaction


def test_ex4_without_write_set_everything_waits() -> None:
    """EX4: T1 and T4 have no write set (DDL): T2, T3 wait for T1 (history reset by
    the DDL), T4 waits for everything, T5 for T4: a chain of four."""
    items = [CertTransaction(ddl=True, gtid=f"{UUID1}:1"), trx("ws1", gno=2), trx("ws2", gno=3),
             CertTransaction(ddl=True, gtid=f"{UUID1}:4"), trx("ws1", gno=5)]
    g = graph(items)
    assert [(n.last_committed, n.sequence_number) for n in g.nodes] == [
        (1, 2), (2, 3), (2, 4), (4, 5), (5, 6)]
    primary = {d: [x for x in es if x[1] == "parent"] for d, es in edges_by_dst(g).items()}
    assert primary == {1: [(0, "parent", "history-reset", ())],
                       2: [(0, "parent", "history-reset", ())],
                       3: [(2, "parent", "ddl", ())],
                       4: [(3, "parent", "history-reset", ())]}
    assert len(g.critical_nodes) == 4
    ddl = {s.cause.name: (s.edges, s.critical_edges) for s in serialisers(g)["ddl"]}
    assert ddl == {f"{UUID1}:1": (2, 1), f"{UUID1}:4": (2, 2)}
    # T5 shares ws1 with T2: shown, but the DDL is why it waits.
    assert (1, 4, ("1",)) in key_edges(g)
    assert explain_transaction(g, 4).ancestors == 4


def test_ex6_gc_opens_a_window() -> None:
    """EX6: after garbage collection T3 and T4 wait for T2 (window), not for a key;
    T3's shared row with T1 is shown as a key edge implied by the window."""
    t = [trx("ws1", gno=1), trx("ws2", gno=2),
         GarbageCollect(stable=GtidSet.parse(f"{UUID1}:1-2")), trx("ws1", gno=3),
         trx("ws4", gno=4)]
    g = graph(t)
    assert [(n.last_committed, n.sequence_number) for n in g.nodes] == [
        (1, 2), (1, 3), (3, 4), (3, 5)]
    by = edges_by_dst(g)
    assert by[2] == [(1, "parent", "gc-window", ()), (0, "key", "key", ("1",))]
    assert by[3] == [(1, "parent", "gc-window", ())]
    rules = {s.cause.name: s.edges for s in serialisers(g)["rule"]}
    assert rules["gc-window"] == 2


# ---- the same on real binlogs ----

def test_ex3_on_a_real_binlog(tmp_path: Path) -> None:
    trxs = [LOG_VIEW_CHANGE] + [log_ws(*(int(w[2:]) for w in ws)) for ws in EX3]
    paths = write_logs(tmp_path, [trxs])
    g = explain_log(paths, "group-replication", cost_model=COST)
    assert key_edges(g) == {(1, 3, ("1",)), (5, 6, ("5",))}
    t3 = explain_transaction(g, 3)
    assert [(e.src, e.reason, str(e.keys[0])) for e in t3.waits_for] == [
        (1, "key", "test.t1 PRIMARY(1)")]
    assert g.critical_path == critical_path([to_sim(n) for n in g.nodes])


def test_ex4_on_a_real_binlog(tmp_path: Path) -> None:
    paths = write_logs(tmp_path, [[LOG_DDL, log_ws(1), log_ws(2), LOG_DDL, log_ws(1)]])
    g = explain_log(paths, "group-replication", cost_model=COST)
    assert [e.reason for e in g.edges if e.kind is EdgeKind.PARENT] == [
        "history-reset", "history-reset", "ddl", "history-reset"]
    assert len(g.critical_nodes) == 4
    names = [s.cause.name for s in serialisers(g)["ddl"]]
    assert all("ALTER TABLE t1" in n for n in names) and len(names) == 2


def test_ex6_on_a_real_binlog(tmp_path: Path) -> None:
    paths = write_logs(tmp_path, [[log_ws(1), log_ws(2), log_ws(1), log_ws(4)]])
    g = explain_log(paths, "group-replication", cost_model=COST,
                    options=CertifyOptions(gc_every=2))
    assert [(n.last_committed, n.sequence_number) for n in g.nodes] == [
        (1, 2), (1, 3), (3, 4), (3, 5)]
    assert [e.reason for e in g.incoming(2) if e.kind is EdgeKind.PARENT] == ["gc-window"]
