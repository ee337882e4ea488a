"""What a ``--spark`` task costs besides its own read (bench/results/statsspark.md).

Without ``--spark-split-size`` a large file is cut into parts only where the executor
cores would not finish together otherwise (``balance_splits``): the rule on sizes,
and on real binlogs with the parts' results equal to the single process's.  A reused Python worker runs a full ``gc.collect()`` after every task; the workers
freeze what is alive once they have imported repltool (``settle_worker``), so that
collection no longer walks PySpark's and repltool's long-lived objects.  The driver
is never frozen.  The executors read ``stats`` with the compiled core's
``scan_totals``, as the single process does.
"""

from __future__ import annotations

import gc
import os
import shutil
from pathlib import Path

import pytest

from repltool.binlog.split import Span, split_spans
from repltool.distributed import SPLIT_CONF, run_distributed
from repltool.distributed import driver
from repltool.distributed.driver import BALANCE_SLACK, balance_splits, busiest
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


# ---- which files are read in parts ----

GB = 1 << 30
PART = 128 << 20


def _eighths(sizes: list[int], uncuttable: frozenset[int] = frozenset()):
    """A ``spans_of`` cutting file ``i`` in parts of :data:`PART` (one span: it cannot
    be cut); records which files it was asked about."""
    asked: list[int] = []

    def spans_of(i: int) -> list[Span]:
        asked.append(i)
        if i in uncuttable:
            return [Span(4, None)]
        starts = list(range(4, sizes[i] - PART // 2, PART))
        return [Span(s, starts[k + 1] if k + 1 < len(starts) else None, None if k == 0 else k)
                for k, s in enumerate(starts)]
    return spans_of, asked


def _costs(sizes: list[int], plan: dict[int, list[Span]]) -> list[int]:
    return [c for i, n in enumerate(sizes) for c in
            ([(n if s.end is None else s.end) - s.start for s in plan[i]] if i in plan else [n])]


@pytest.mark.parametrize("files", [2, 4, 8, 40])
def test_even_files_enough_for_the_cores_are_never_cut(files: int) -> None:
    sizes = [GB] * files
    spans_of, asked = _eighths(sizes)
    assert balance_splits(sizes, 2, PART, spans_of) == {}
    assert asked == []                          # not even scanned for boundaries
    assert busiest(sizes, 2) == files // 2 * GB


def test_one_file_is_cut_for_two_cores() -> None:
    spans_of, _ = _eighths([GB])
    plan = balance_splits([GB], 2, PART, spans_of)
    assert list(plan) == [0] and len(plan[0]) == 8
    assert busiest(_costs([GB], plan), 2) <= (1 + BALANCE_SLACK) * GB / 2


@pytest.mark.parametrize("sizes", [[GB] * 3, [GB] * 9, [GB] * 41, [4 * GB] + [GB // 8] * 10,
                                   [GB // 8] * 10 + [4 * GB], [GB, 3 * GB, GB, 200 << 20]])
def test_cut_until_the_cores_finish_together(sizes: list[int]) -> None:
    spans_of, asked = _eighths(sizes)
    plan = balance_splits(sizes, 2, PART, spans_of)
    best = max(sum(sizes) / 2, max((n for n in sizes if n < 2 * PART), default=0))
    assert busiest(_costs(sizes, plan), 2) <= (1 + BALANCE_SLACK) * best
    # the largest files first, and one fewer would not do
    assert asked == sorted(plan, key=lambda i: (-sizes[i], i))
    if plan:
        last = asked[-1]
        fewer = {i: s for i, s in plan.items() if i != last}
        assert busiest(_costs(sizes, fewer), 2) > (1 + BALANCE_SLACK) * best
    assert len(plan) < len(sizes) or len(sizes) == 1


def test_a_file_that_cannot_be_cut_is_not_made_up_for() -> None:
    """A 10 GB MariaDB log (no clock: never cut) bounds the run alone: cutting the
    1 GB files beside it would only add tasks."""
    sizes = [10 * GB, GB, GB]
    spans_of, asked = _eighths(sizes, uncuttable=frozenset({0}))
    assert balance_splits(sizes, 2, PART, spans_of) == {}
    assert asked == [0]


def test_small_files_are_never_cut() -> None:
    sizes = [2 * PART - 1]
    spans_of, asked = _eighths(sizes)
    assert balance_splits(sizes, 2, PART, spans_of) == {} and asked == []


@pytest.fixture
def auto_parts(monkeypatch: pytest.MonkeyPatch) -> int:
    """The default part size made small enough for the generated logs (no
    ``--spark-split-size``: the balance rule decides)."""
    monkeypatch.setattr(driver, "DEFAULT_SPLIT_SIZE", 20_000)
    return 20_000


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from logsets import write_rotated_binlogs
    return write_rotated_binlogs(tmp_path_factory.mktemp("three"), files=3, per_file=2_000)


def test_without_a_split_size_some_of_three_files_are_cut(spark, auto_parts: int,
                                                        three: list[Path]) -> None:
    from test_spark import spark_stats_json, stats_json
    assert spark.conf.get(SPLIT_CONF, None) is None
    names = [str(p) for p in three]
    sizes = [os.path.getsize(n) for n in names]
    want = balance_splits(sizes, spark.sparkContext.defaultParallelism, auto_parts,
                          lambda i: split_spans(names[i], auto_parts))
    assert 0 < len(want) < len(names) and all(len(v) >= 10 for v in want.values())
    run = run_distributed(spark, names, Task("stats"))
    assert run.joined == {i: len(spans) for i, spans in want.items()} and run.reread == []
    assert spark_stats_json(spark, three) == stats_json(three)


def test_without_a_split_size_many_files_are_read_whole(spark, auto_parts: int,
                                                        three: list[Path],
                                                        tmp_path: Path) -> None:
    from test_spark import spark_stats_json, stats_json
    files = []
    for k in range(8):                          # 8 files of one size for 2 cores
        dest = tmp_path / f"binlog.{k + 1:06d}"
        shutil.copyfile(three[0], dest)
        files.append(dest)
    run = run_distributed(spark, [str(p) for p in files], Task("stats"))
    assert run.joined == {} and len(run.results) == 8
    assert all(len(split_spans(str(p), auto_parts)) >= 10 for p in files)   # could be cut
    assert spark_stats_json(spark, files) == stats_json(files)
    # the same files with the size given: every one is cut
    spark.conf.set(SPLIT_CONF, str(auto_parts))
    try:
        run = run_distributed(spark, [str(p) for p in files], Task("stats"))
    finally:
        spark.conf.unset(SPLIT_CONF)
    assert sorted(run.joined) == list(range(8))


def test_certify_without_a_split_size_cuts_what_the_rule_picks(spark, cli, auto_parts: int,
                                                               three: list[Path]) -> None:
    """certify's two-stage split (parts extracted, certified per file) takes the same rule."""
    from repltool.distributed.pairs import split_counts
    names = [str(p) for p in three]
    want = balance_splits([os.path.getsize(n) for n in names],
                          spark.sparkContext.defaultParallelism, auto_parts,
                          lambda i: split_spans(names[i], auto_parts))
    single, _ = cli("certify", "--mode", "writeset", *three)
    before = split_counts()
    out, _ = cli("certify", "--mode", "writeset", "--spark", *three)
    after = split_counts()
    assert out == single
    files, parts, reread = (a - b for a, b in zip(after, before))
    assert (files, parts, reread) == (len(want), sum(map(len, want.values())), 0)
    assert 0 < len(want) < len(names)
