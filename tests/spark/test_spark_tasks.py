"""What a ``--spark`` task costs besides its own read (bench/results/statsspark.md).

A reused Python worker runs a full ``gc.collect()`` after every task; the workers
freeze what is alive once they have imported repltool (``settle_worker``), so that
collection no longer walks PySpark's and repltool's long-lived objects.  The driver
is never frozen.  The executors read ``stats`` with the compiled core's
``scan_totals``, as the single process does.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from repltool.distributed import run_distributed
from repltool.distributed.session import settle_worker
from repltool.distributed.units import Task, Unit, run_local_unit

pytestmark = pytest.mark.spark


def _run_and_freeze_count(task: Task, unit: Unit) -> tuple[int, int, int]:
    from repltool.distributed import session
    result = run_local_unit(task, unit)
    return result.count, gc.get_freeze_count(), int(session._settled)


def test_workers_freeze_their_long_lived_objects(spark, rotated: list[Path]) -> None:
    task = Task("stats")
    units = [Unit(i, (str(p),)) for i, p in enumerate(rotated[:4])]
    out = (spark.sparkContext.parallelize(units, len(units))
           .map(lambda u: _run_and_freeze_count(task, u)).collect())
    single = [run_local_unit(task, u).count for u in units]
    assert [count for count, _, _ in out] == single and all(single)
    # every worker that ran a unit froze at least the modules it imported
    assert all(frozen > 10_000 and settled == 1 for _, frozen, settled in out)


def test_the_driver_is_never_frozen(rotated: list[Path]) -> None:
    before = gc.get_freeze_count()
    assert settle_worker() is False
    result = run_local_unit(Task("stats"), Unit(0, (str(rotated[0]),)))
    assert result.count > 0 and result.failure is None
    assert gc.get_freeze_count() == before


def _engine_of_stats(task: Task, unit: Unit) -> tuple[int, list[str]]:
    """Run a stats unit and say which readers it went through (the core's
    ``scan_totals``, or the general reader's fallback)."""
    from repltool import stats
    from repltool.binlog import corescan
    calls: list[str] = []
    scan, general = stats.scan_totals, stats._accumulate_general

    def counted_scan(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append("core" if corescan.compiled_core() is not None else "python")
        return scan(*args, **kwargs)

    def counted_general(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append("general")
        return general(*args, **kwargs)
    stats.scan_totals, stats._accumulate_general = counted_scan, counted_general
    try:
        return run_local_unit(task, unit).count, calls
    finally:
        stats.scan_totals, stats._accumulate_general = scan, general


def test_executors_read_stats_with_the_compiled_core(spark, core, rotated: list[Path]) -> None:
    task = Task("stats")
    units = [Unit(i, (str(p),)) for i, p in enumerate(rotated[:3])]
    out = (spark.sparkContext.parallelize(units, len(units))
           .map(lambda u: _engine_of_stats(task, u)).collect())
    # the route one process takes for the same file (the core; where it hands over,
    # the general reader goes on, as in the first of these files)
    here = [_engine_of_stats(task, u) for u in units]
    assert out == here, (out, here)
    assert all(count > 0 and calls[0] == "core" for count, calls in out)
    assert ["core"] in [calls for _, calls in out]
    run = run_distributed(spark, [str(p) for p in rotated[:3]], task)
    assert [r.count for r in run.results] == [count for count, _ in out]
