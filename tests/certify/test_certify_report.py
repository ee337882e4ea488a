"""summarise(), check_safety() and GtidSet."""

from __future__ import annotations

import pytest
from certify_helpers import UUID1, VIEW_CHANGE, gr, gtids, serial_file, trx

from repltool.certify import (
    CertifyOptions,
    CertResult,
    CertTransaction,
    GarbageCollect,
    GtidSet,
    Mode,
    Reason,
    certify,
    check_safety,
    summarise,
)
from repltool.errors import CertifyError


def _result(lc: int, sn: int, *items: str) -> CertResult:
    return CertResult(trx=trx(*items), computed=(lc, sn), reason=Reason.KEY)


def test_summary_of_ex3() -> None:
    """EX3 after certification: one window (LC 1) holds all but T3 and T6."""
    items = [trx("ws1"), trx("ws2"), trx("ws1", "ws3"), trx("ws4"), trx("ws5"),
             trx("ws5", "ws6"), trx("ws7"), trx("ws8")]
    s = summarise(gr(items))
    after = s.after
    assert after.transactions == 8
    assert after.distance == {1: 2, 2: 2, 4: 1, 5: 1, 7: 1, 8: 1}
    assert after.windows == 5                    # LC runs: 1,1 | 2 | 1,1 | 6 | 1,1
    assert after.mean_window == pytest.approx(8 / 5)
    assert after.barriers == 0
    # The replica serialises the first transaction (last_seq == 0) and the
    # low-water mark restarts there, so everything waits for T1; then T3 and
    # T6 wait for T1 and T5: T1 -> {T2, T3, T4, T5, T7, T8} -> T6.
    assert after.span == 3
    assert after.parallelism == pytest.approx(8 / 3)
    assert s.before.barriers == 8                # logged (0, 0): unknown, all barriers
    assert s.before.span == 8
    assert s.changed == 8 and s.unassigned == 0
    assert s.reasons == {"file-start": 6, "key": 2}


def test_summary_serial_log_and_barriers() -> None:
    results = list(certify(serial_file([trx("a")] * 4), Mode.COMMIT_ORDER))
    s = summarise(results)
    assert s.after.span == 4 and s.after.parallelism == 1.0
    assert s.after.barriers == 1 and s.after.barrier_share == 0.25
    assert s.after.mean_distance == 1.0


def test_summary_view_change_and_next_are_barriers() -> None:
    """(0, 0) and the transaction after it wait for everything (MTS rule)."""
    s = summarise(gr([trx("a"), trx("b"), VIEW_CHANGE, trx("c"), trx("d")]))
    # a (first: barrier) | b | VC | c (after (0, 0): barrier) | d (waits for c: LWM restarted)
    assert s.after.span == 5


def test_summary_counts_unassigned() -> None:
    s = summarise(gr([trx("a", member="m1"), trx("b", member="m2")], local_member="m1"))
    assert s.unassigned == 1 and s.after.transactions == 1 and s.before.transactions == 2


def test_check_safety_finds_violations_once_per_pair() -> None:
    results = [_result(0, 1, "k", "j"), _result(1, 2, "x"), _result(0, 3, "k"),
               _result(1, 4, "k", "j")]
    violations = check_safety(results)
    # (1, 4) shares k with seq 3 (lc 0 is a barrier, so seq 3 itself is fine)
    # and j with seq 1 (1 >= 1: fine): one violation.
    assert [(v.earlier.sequence_number, v.later.sequence_number) for v in violations] == [(3, 4)]
    assert "last_committed=1 < sequence_number=3" in str(violations[0])


def test_check_safety_with_explicit_writesets_segments_and_barriers() -> None:
    results = [_result(0, 1), _result(1, 2), _result(1, 3)]
    assert len(check_safety(results, [(1,), (2,), (2,)])) == 1     # 3 may overtake 2
    assert check_safety(results, [(1,), (2,), (1,)]) == []
    restart = [_result(0, 1), _result(1, 2), _result(0, 1), _result(1, 2)]
    assert check_safety(restart, [(1,), (2,), (3,), (2,)]) == []   # new file forgets
    barrier = [_result(0, 1), _result(1, 2), _result(0, 3), _result(1, 4)]
    assert check_safety(barrier, [(1,), (2,), (3,), (2,)]) == []   # 4 waits for barrier 3


def test_ex5_bug_is_caught_by_the_safety_checker() -> None:
    """Without the GC window, T3 may run before T1 though both write ws1."""
    items: list[CertTransaction | GarbageCollect] = [trx("ws1"), trx("ws2"), GarbageCollect(),
                                                      trx("ws1")]
    assert check_safety(gr(items, gc_opens_window=False)) != []
    assert check_safety(gr(items)) == []


def test_simulated_group_conflicts_and_garbage_collection() -> None:
    """Two members writing the same row within the lag window: the second is
    rolled back (first committer wins); with lag 0 nothing conflicts."""
    items = [trx("row1", member="m1"), trx("row1", member="m2"), trx("row2", member="m2")]
    lagging = gr(items, members=("m1", "m2"), member_lag=1)
    assert [r.reason for r in lagging] == [Reason.FILE_START, Reason.CONFLICT, Reason.FILE_START]
    assert [r.computed for r in lagging] == [(1, 2), None, (1, 3)]
    in_sync = gr(items, members=("m1", "m2"), member_lag=0)
    assert [r.computed for r in in_sync] == [(1, 2), (2, 3), (1, 4)]


def test_round_robin_members_by_session() -> None:
    items = [trx("r", session=(1, 1)), trx("r", session=(1, 2)), trx("r", session=(1, 1))]
    results = gr(items, members=2, member_lag=5)
    assert [r.computed for r in results] == [(1, 2), None, (2, 3)]


def test_gc_every_and_gc_interval_open_windows() -> None:
    items = [trx(f"k{i}", commit_time=float(10 * i)) for i in range(6)]
    assert [r.computed for r in gr(items, gc_every=2)] == [
        (1, 2), (1, 3), (3, 4), (3, 5), (5, 6), (5, 7)]
    assert [r.computed for r in gr(items, gc_interval=25.0)] == [
        (1, 2), (1, 3), (1, 4), (4, 5), (4, 6), (6, 7)]   # GC before t=30 and t=50


def test_gc_purges_strict_subsets_only() -> None:
    from repltool.certify import Certifier
    c = Certifier(CertifyOptions())
    for gno, item in ((1, "a"), (2, "b")):
        c.certify(trx(item), gtid=f"{UUID1}:{gno}", snapshot=gtids(f"{UUID1}:1-{gno - 1}")
                  if gno > 1 else GtidSet(), local=False, detect_conflicts=True)
    assert c.garbage_collect(gtids(f"{UUID1}:1-2")) == 1   # a ({1}) purged, b ({1-2}) kept
    assert len(c.certification_info) == 1
    assert c.parallel_applier_last_committed_global == 3


def test_anonymous_group_transactions_get_generated_gtids_for_snapshots() -> None:
    items = [CertTransaction(writeset=(1,), member="m1"),
             CertTransaction(writeset=(1,), member="m2")]
    results = list(certify(items, Mode.GROUP_REPLICATION,
                           CertifyOptions(members=("m1", "m2"), member_lag=3)))
    assert results[1].conflict is not None and ":1 " in results[1].conflict


def test_gtidset() -> None:
    s = GtidSet.parse("B0000000-0000-0000-0000-000000000000:1-3:5, a:x:2")
    assert str(s) == "a:x:2,b0000000-0000-0000-0000-000000000000:1-3:5"
    assert len(s) == 5 and "a:x:2" in s and "a:2" not in s
    assert GtidSet.parse("a:1-3").is_subset(GtidSet.parse("a:1-5,b:1"))
    assert not GtidSet.parse("a:1-3").is_subset(GtidSet.parse("a:1-2:4-9"))
    assert GtidSet.parse("a:1-3").is_strict_subset(GtidSet.parse("a:1-4"))
    assert not GtidSet.parse("a:1-3").is_strict_subset(GtidSet.parse("a:1-3"))
    assert GtidSet.parse("a:1-5").intersection(GtidSet.parse("a:3-9,b:1")) == GtidSet.parse("a:3-5")
    assert GtidSet.of(["a:1", "a:2", "a:4"]).add("a:3") == GtidSet.parse("a:1-4")
    assert GtidSet() == GtidSet.parse("") and not GtidSet()
    assert sorted(GtidSet.parse("a:1-2")) == ["a:1", "a:2"]
    for bad in ("a", "a:0", "a:3-1", "a:-"):
        with pytest.raises(CertifyError):
            GtidSet.parse(bad)
    with pytest.raises(CertifyError):
        GtidSet().add("no-gno")
