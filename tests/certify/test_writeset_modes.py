"""COMMIT_ORDER, WRITESET and WRITESET_SESSION rules (format spec 6a/6b,
``sql/rpl_trx_tracking.cc``). Each docstring states the rule under test."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from certify_helpers import DDL, UUID1, clocks, dml, serial_file, trx, ws

from repltool.certify import (
    Baseline,
    CertifyOptions,
    CertResult,
    CertTransaction,
    GarbageCollect,
    Mode,
    Reason,
    TransactionDependencyTracker,
    certify,
)
from repltool.errors import CertifyError
from repltool.positions import Position

WS = Mode.WRITESET


def run(items: list[CertTransaction], mode: Mode = WS, **options: object) -> list[CertResult]:
    return list(certify(items, mode, CertifyOptions(**options)))  # type: ignore[arg-type]


def test_commit_order_mode_keeps_the_logged_clock() -> None:
    """COMMIT_ORDER: the commit-order parent is the one recorded in the log."""
    items = serial_file([trx("a"), trx("b"), trx("c")], recorded=[0, 0, 2])
    results = run(items, Mode.COMMIT_ORDER)
    assert clocks(results) == [(0, 1), (0, 2), (2, 3)]
    assert not any(r.changed for r in results)
    assert [r.reason for r in results] == [Reason.FILE_START, Reason.COMMIT_ORDER,
                                           Reason.COMMIT_ORDER]


def test_independent_rows_get_history_start_and_first_trx_gets_0_1() -> None:
    """After rotate(), history_start = 1: independent transactions get
    last_committed 1, only the first of the file gets (0, 1) (gotcha 10)."""
    results = run(serial_file([trx("a"), trx("b"), trx("c"), trx("d")]))
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (1, 4)]
    assert [r.reason for r in results] == [Reason.FILE_START] * 4


def test_rotation_restarts_numbering_and_history() -> None:
    """Sequence numbers are positions in the file; a new file restarts at
    (0, 1) and forgets the history (a key of file 1 is not a parent in file 2)."""
    f1 = serial_file([trx("a"), trx("b"), trx("a")], file="binlog.000001")
    f2 = serial_file([trx("a"), trx("b"), trx("a")], file="binlog.000002")
    assert clocks(run(f1 + f2)) == [(0, 1), (1, 2), (1, 3), (0, 1), (1, 2), (1, 3)]


def test_new_file_flag_rotates_even_with_the_same_name() -> None:
    items = serial_file([trx("a"), trx("a")])
    again = [replace(t, new_file=i == 0) for i, t in enumerate(items)]
    assert clocks(run(items + again)) == [(0, 1), (1, 2), (0, 1), (1, 2)]


def test_shared_key_makes_the_writer_the_parent() -> None:
    """A known hash raises last_parent to the seq that last wrote it."""
    items = serial_file([dml("t1", 1), dml("t1", 2), dml("t1", 3), dml("t1", 1)])
    results = run(items)
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (1, 4)]
    items = serial_file([dml("t1", 1), dml("t1", 2), dml("t1", 2, 3), dml("t1", 9)])
    results = run(items)
    assert clocks(results) == [(0, 1), (1, 2), (2, 3), (1, 4)]
    assert results[2].reason is Reason.KEY
    assert results[2].depends_on == f"{UUID1}:2"
    assert results[2].key is not None and results[2].key.qualified_table == "test.t1"
    assert results[2].key_hash == items[2].writeset[0]


def test_ddl_resets_history() -> None:
    """No write set (DDL): the DDL keeps its commit-order parent, then
    history_start = its seq and the history is cleared, so every later
    transaction depends on it (gotcha 11)."""
    results = run(serial_file([trx("a"), trx("b"), DDL, trx("a"), trx("z")]))
    assert clocks(results) == [(0, 1), (1, 2), (2, 3), (3, 4), (3, 5)]
    assert results[2].reason is Reason.DDL
    assert results[3].reason is Reason.HISTORY_RESET
    assert results[3].depends_on == f"{UUID1}:3"


def test_missing_keys_keep_commit_order_parent_without_reset() -> None:
    """has_missing_keys: commit-order parent kept, history updated, not reset."""
    t2 = trx("k5", missing_keys=True)
    results = run(serial_file([trx("k1"), t2, trx("k1"), trx("k9"), trx("k5")]))
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (1, 4), (2, 5)]
    assert results[1].reason is Reason.NO_KEY


def test_missing_keys_without_hashes_do_not_reset_either() -> None:
    results = run(serial_file([trx("k1"), CertTransaction(missing_keys=True), trx("k2")]))
    assert clocks(results) == [(0, 1), (1, 2), (1, 3)]


def test_fk_parent_falls_back_and_resets() -> None:
    """has_related_foreign_keys: commit-order parent and history reset."""
    results = run(serial_file([trx("k1"), trx("k2", fk_parent=True), trx("k3"), trx("k1")]))
    assert clocks(results) == [(0, 1), (1, 2), (2, 3), (2, 4)]
    assert results[1].reason is Reason.FK_PARENT


def test_write_set_limit_reached_falls_back_and_resets() -> None:
    results = run(serial_file([trx("k1"), trx(write_set_limit_reached=True), trx("k3")]))
    assert clocks(results) == [(0, 1), (1, 2), (2, 3)]


def test_empty_transaction_uses_history_start_without_reset() -> None:
    """An empty transaction can use write sets: parent = history_start, no reset."""
    empty = CertTransaction(empty=True)
    results = run(serial_file([trx("k1"), empty, trx("k2"), trx("k1")]))
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (1, 4)]


def test_overflow_is_checked_before_insertion_and_resets_after() -> None:
    """exceeds = len(history) + len(writeset) > history_size, checked before
    inserting; the transaction still gets its parent, then the history is
    cleared and history_start = its seq (gotcha 12)."""
    items = serial_file([trx("a", "b"), trx("c", "d"), trx("a", "e"), trx("b")])
    results = run(items, history_size=4)
    # T2: 2 + 2 = 4, not > 4: inserted. T3: 4 + 2 > 4: exceeds; its parent
    # still comes from 'a' (seq 1); then reset: T4's 'b' is forgotten.
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (3, 4)]
    assert results[3].reason is Reason.HISTORY_FULL
    assert "history full" in results[2].detail


def test_overflow_still_uses_and_updates_existing_keys() -> None:
    tracker = TransactionDependencyTracker(WS, CertifyOptions(history_size=3))
    items = serial_file([trx("a", "b"), trx("x"), trx("b", "c", "d")])
    out = [tracker.get_dependency(t) for t in items]
    assert out[2].computed == (1, 3)        # 'b' was written by seq 1
    assert tracker.writeset is not None and tracker.writeset.history == {}
    assert tracker.writeset.history_start == 3


def test_writeset_never_raises_the_commit_order_parent() -> None:
    """commit_parent = min(writeset parent, commit-order parent): in the first
    group commit of a file every transaction is logged with last_committed 0,
    and writesets cannot raise that."""
    items = serial_file([trx("a"), trx("a"), trx("b")], recorded=[0, 0, 0])
    results = run(items)
    assert clocks(results) == [(0, 1), (0, 2), (0, 3)]
    assert results[1].reason is Reason.COMMIT_ORDER


def test_serial_baseline() -> None:
    """Baseline.SERIAL: commit-order parent = seq - 1, so DDL-like fallbacks
    depend on their predecessor whatever the log says."""
    items = serial_file([trx("a"), trx("b"), DDL, trx("c")], recorded=[0, 0, 0, 0])
    assert clocks(run(items, baseline=Baseline.SERIAL)) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert clocks(run(items)) == [(0, 1), (0, 2), (0, 3), (0, 4)]


def test_logged_numbers_are_mapped_onto_positions() -> None:
    """A relay log starting inside a source file: logged seqs 57.. become 1..;
    a logged parent before the segment becomes 0."""
    items = [trx("a", file="b.7", recorded=(56, 57)), trx("b", file="b.7", recorded=(57, 58)),
             trx("c", file="b.7", recorded=(56, 59)), trx("d", file="b.7", recorded=(58, 60))]
    assert clocks(run(items, Mode.COMMIT_ORDER)) == [(0, 1), (1, 2), (0, 3), (2, 4)]


def test_invalid_logged_parent_is_clamped() -> None:
    items = [trx("a", file="f", recorded=(0, 1)), trx("b", file="f", recorded=(5, 2))]
    results = run(items, Mode.COMMIT_ORDER)
    assert clocks(results) == [(0, 1), (1, 2)]
    assert "clamped" in results[1].detail


def test_unknown_logged_clock_means_predecessor() -> None:
    items = [trx("a", file="f"), trx("b", file="f")]     # recorded (0, 0): 5.6 source
    assert clocks(run(items, Mode.COMMIT_ORDER)) == [(0, 1), (1, 2)]


def test_writeset_session_chains_a_session() -> None:
    """WRITESET_SESSION: if s != 0 and s < seq: parent = max(parent, s)."""
    items = serial_file([trx("k1", session=(1, 1)), trx("k2", session=(1, 2)),
                         trx("k3", session=(1, 1)), trx("k4", session=(1, 2)),
                         trx("k5")], recorded=[0, 1, 1, 1, 1])
    assert clocks(run(items)) == [(0, 1), (1, 2), (1, 3), (1, 4), (1, 5)]
    results = run(items, Mode.WRITESET_SESSION)
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (2, 4), (1, 5)]
    assert results[3].reason is Reason.SESSION and results[3].session_order


def test_session_numbers_survive_rotation_like_mysql() -> None:
    """MySQL keeps the session's last seq across rotation (guard s < seq)."""
    f1 = serial_file([trx("x"), trx("y"), trx("a", session=(1, 1))], file="f1")
    f2 = serial_file([trx("p"), trx("q"), trx("r"), trx("b", session=(1, 1))], file="f2")
    assert clocks(run(f1 + f2, Mode.WRITESET_SESSION))[-1] == (3, 4)
    assert clocks(run(f1 + f2, Mode.WRITESET_SESSION,
                      reset_sessions_on_rotate=True))[-1] == (1, 4)


def test_gc_markers_are_ignored_outside_group_replication() -> None:
    items: list[CertTransaction | GarbageCollect] = [*serial_file([trx("a"), trx("a")])]
    items.insert(1, GarbageCollect())
    assert clocks(certify(items, "writeset")) == [(0, 1), (1, 2)]


def test_streaming_and_bounded_history() -> None:
    """certify() is lazy and its memory follows history_size, not the log."""
    tracker = TransactionDependencyTracker(WS, CertifyOptions(history_size=100))
    endless = (trx(f"k{i}", file="f", recorded=(i, i + 1)) for i in itertools.count())
    results = list(itertools.islice(certify(endless, WS), 5))
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (1, 4), (1, 5)]
    for i in range(20_000):
        tracker.get_dependency(trx(f"k{i}", file="f", recorded=(i, i + 1)))
    assert tracker.writeset is not None and len(tracker.writeset.history) <= 100
    assert len(tracker._names._names) < 5000


def test_errors_carry_the_position() -> None:
    bad = CertTransaction(writeset=(1 << 64,), pos=Position("binlog.000001", 4711))
    with pytest.raises(CertifyError, match="binlog.000001:4711"):
        list(certify([bad], WS))
    with pytest.raises(CertifyError, match="unknown certify mode"):
        certify([], "nonsense")
    with pytest.raises(CertifyError):
        CertifyOptions(history_size=0)
    with pytest.raises(CertifyError, match="key descriptions"):
        list(certify([CertTransaction(writeset=(1, 2), keys=(None,))], WS))


def test_empty_transaction_is_parallel_and_keeps_the_history() -> None:
    """``is_empty_transaction_in_binlog_cache``: can use write sets (no reset)."""
    items = serial_file([trx("x"), trx("a"), CertTransaction(empty=True), trx("a"), trx("b")])
    results = run(items)
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (2, 4), (1, 5)]
    assert results[3].reason is Reason.KEY        # a's writer 2 is still in the history


def test_ctas_is_a_barrier() -> None:
    """A CREATE TABLE ... SELECT cannot use write sets (8.4's
    ``is_create_table_as_query_block``): commit-order parent, history reset."""
    items = serial_file([trx("a"), CertTransaction(ctas=True, writeset=ws("t2.1")),
                         trx("b"), trx("a")])
    results = run(items)
    assert clocks(results) == [(0, 1), (1, 2), (2, 3), (2, 4)]
    assert results[1].reason is Reason.DDL


def test_unsafe_logged_clock_is_raised_to_the_key_writer() -> None:
    """Transaction 4 writes ``a`` like 2 but is logged with last_committed 1:
    MySQL's min() keeps 1 (its own commit order never looks like this);
    repltool raises it to 2 and says so. Same for a barrier (FK parent)."""
    items = serial_file([trx("x"), trx("a"), trx("b"), trx("a")], recorded=[0, 1, 1, 1])
    results = run(items)
    assert clocks(results) == [(0, 1), (1, 2), (1, 3), (2, 4)]
    assert results[3].raised and results[3].reason is Reason.KEY
    assert "raised to 2" in results[3].detail and not any(r.raised for r in results[:3])
    fk = serial_file([trx("x"), trx("a"), trx("b"), trx("a", fk_parent=True)],
                     recorded=[0, 1, 1, 1])
    assert clocks(run(fk))[3] == (2, 4)
    # the serial baseline never needs it: its commit-order parent is the predecessor
    assert not any(r.raised for r in run(items, baseline=Baseline.SERIAL))


def test_last_writers_forget_the_oldest_keys_safely() -> None:
    from repltool.certify.dependency import LastWriters
    from repltool.certify.trackers import Parent
    lw = LastWriters(2)
    for seq, key in enumerate((1, 2, 3, 4), start=1):
        assert lw.check((key,), seq, Parent(seq - 1, Reason.COMMIT_ORDER)).value == seq - 1
    assert lw.floor == 2                           # keys 1 and 2 forgotten
    raised = lw.check((1,), 5, Parent(1, Reason.COMMIT_ORDER))
    assert raised.value == 2 and raised.key_index is None   # key 1 unknown: the floor
    assert lw.check((3,), 6, Parent(0, Reason.FILE_START)).value == 0   # lc 0: a barrier


def test_fallback_reasons() -> None:
    from repltool.certify.model import Fallback
    from repltool.certify.source import fallback_reasons
    from repltool.writeset import TrxWriteset
    from repltool.writeset.schema import parse_schema
    ws_ = TrxWriteset(missing_key_tables=("test.t", "table_id:5", "x.y"))
    assert fallback_reasons(ws_, None) == ("no-schema", "undecodable", "no-schema")
    schema = parse_schema("CREATE TABLE test.t (a INT);")
    assert fallback_reasons(ws_, schema) == ("no-usable-key", "undecodable", "unknown-table")
    own = TrxWriteset(missing_key_tables=("test.t",), missing_key_reasons=("a-new-reason",))
    assert fallback_reasons(own, schema) == ("a-new-reason",)
    assert Fallback.describe("a-new-reason") == "a-new-reason"
    assert Fallback.describe("partial-image") == "row image lacks a key column"
