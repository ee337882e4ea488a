"""WL#5599 checkpoints and recovery (seeds/WL5599-mts-recovery.txt, spec §6e)."""

from __future__ import annotations

import pytest

from repltool.errors import SimulationError, UsageError
from repltool.positions import Position
from repltool.schedule import (Checkpoint, JobGroup, SimConfig, Span, WorkerInfo,
                               format_bitmap, recover, simulate)

from schedule_strategies import trx


def span(worker: int, n: int, dispatch: float, commit: float) -> Span:
    return Span(worker, n, f"E{n}", dispatch, dispatch, commit, commit,
                pos=Position("relay-bin.000001", 100 * n))


def wl5599_trace() -> list[Span]:
    """The WL's scenario, W01..W03 as workers 0..2.

    E1,E2 -> W01, E3,E4 -> W02, E5,E6 -> W03 (R1..R6, checkpoint_seqno 0..5);
    W01 commits E1 and W02 commits E3; the GAQ (size 6) is full, so a
    checkpoint purges R1 before E7 is assigned to W01 (R7, checkpoint_seqno
    5); W01 commits E2 and E7; crash.  E4, E5, E6 and E8 commit after it.
    """
    return [span(0, 1, 1, 7), span(0, 2, 2, 10), span(1, 3, 3, 8), span(1, 4, 4, 20),
            span(2, 5, 5, 21), span(2, 6, 6, 22), span(0, 7, 9, 11), span(1, 8, 13, 23)]


def test_wl5599_example() -> None:
    """The WL's bitmaps: W01 ``1 0 0 0 0 1``, W02 ``0 0 1 0 0 0``; W02 knows an
    older checkpoint, and its bitmap must be shifted by one before combining.

    The WL gives the per-worker bitmaps, the checkpoint knowledge (W01 at E2,
    W02 and W03 at E1) and the R1..R7 checkpoint_seqno values; the combined
    bitmap and the gap list follow from its rules: restart at E2, skip E2,
    E3 and E7, re-execute E4, E5 and E6.
    """
    report = recover(wl5599_trace(), workers=3, checkpoint_group=6,
                     checkpoint_period=None, crash_time=12)
    assert [g.checkpoint_seqno for g in report.groups] == [0, 1, 2, 3, 4, 5, 5]
    assert report.groups[6] == JobGroup(6, 0, 5, 1, 1, 9, 11)   # R7 carries shift 1
    assert report.checkpoints == (
        Checkpoint(9, 1, 1, "gaq-full", Position("relay-bin.000001", 100)),)
    w01, w02, w03 = report.workers
    assert format_bitmap(w01.group_executed, 6) == "1 0 0 0 0 1"
    assert format_bitmap(w02.group_executed, 6) == "0 0 1 0 0 0"
    assert w03 == WorkerInfo(2, 0, None, None, 0)
    assert (w01.checkpoint_index, w02.checkpoint_index) == (1, 0)
    assert report.checkpoint_index == 1               # restart at E2
    assert report.checkpoint_pos == Position("relay-bin.000001", 100)
    assert format_bitmap(report.recovery_bitmap, 6) == "1 1 0 0 0 1"
    assert report.recovery_group_cnt == 6
    assert report.skipped == (1, 2, 6)                # E2, E3, E7
    assert report.gaps == (3, 4, 5)                   # E4, E5, E6


def test_crash_by_gtid_and_index() -> None:
    """A crash can be named by the last committed GTID or relay index."""
    trace = wl5599_trace()
    by_gtid = recover(trace, checkpoint_group=6, checkpoint_period=None, gtid="E7")
    by_index = recover(trace, checkpoint_group=6, checkpoint_period=None, index=6)
    assert by_gtid == by_index
    assert by_gtid.crash_time == 11 and by_gtid.gaps == (3, 4, 5)


def test_period_checkpoints_purge_done_prefix() -> None:
    """A timed checkpoint purges the done groups at the GAQ head and shifts
    bitmaps; after a quiet crash nothing needs re-executing."""
    log = [trx(0, 1, 1)] + [trx(1, s, 1) for s in range(2, 9)]
    trace = simulate(log, SimConfig(workers=2, trace=True)).trace
    assert trace is not None
    report = recover(trace, workers=2, checkpoint_period=2.0, crash_time=100)
    assert [c.reason for c in report.checkpoints] == ["period"] * len(report.checkpoints)
    assert report.checkpoints[-1].index == 8
    assert report.checkpoint_index == 8 and report.gaps == () and report.skipped == ()


def test_barrier_checkpoint() -> None:
    """A barrier makes the coordinator checkpoint everything before it."""
    log = [trx(0, 1, 1), trx(1, 2, 1), trx(0, 1, 1, new_source_file=True)]
    trace = simulate(log, SimConfig(workers=2, trace=True)).trace
    assert trace is not None
    report = recover(trace, checkpoint_period=None, crash_time=trace[2].dispatch)
    assert report.checkpoints == (Checkpoint(2, 2, 2, "barrier"),)
    assert report.checkpoint_index == 2 and report.gaps == ()


@pytest.mark.parametrize("kwargs", [{}, {"crash_time": 1, "index": 0},
                                    {"gtid": "nope"}, {"index": 99}])
def test_bad_crash_specification(kwargs: dict[str, object]) -> None:
    """Exactly one existing crash point must be given."""
    with pytest.raises(UsageError):
        recover(wl5599_trace(), **kwargs)  # type: ignore[arg-type]


def test_inconsistent_trace() -> None:
    """A trace that violates the GAQ rules is reported, not silently replayed."""
    trace = wl5599_trace()
    with pytest.raises(SimulationError, match="GAQ full"):
        recover(trace, checkpoint_group=2, checkpoint_period=None, crash_time=12)
    with pytest.raises(SimulationError, match="relay order"):
        recover(trace[::-1], checkpoint_period=None, crash_time=12)
