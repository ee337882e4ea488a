"""Jobs whose executors read transactions or stats parts: ``stats``, ``schedule``, the DataFrame."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from .driver import SparkRun, first_failure, run_distributed, stitched
from .frame import to_dataframe, write_parquet
from .units import FileFailure, Task

if TYPE_CHECKING:                     # pragma: no cover
    from ..schedule import SimConfig
    from ..schedule.cost import CostModel
    from ..schedule.source import CrashSpec, ScheduleReport
    from ..stats import FilePart, LogStats

# ---- stats ----

def spark_stats(spark: Any, names: Sequence[str], *, verify_checksum: bool = True,
                top: int = 5, keep_going: bool = False,
                output_parquet: str | None = None) -> tuple[LogStats, list[FileFailure]]:
    """:func:`repltool.stats.compute_stats` with one Spark task per file (per part of a
    large binlog: :data:`~repltool.distributed.driver.SPLIT_CONF`).

    Per-file accumulators are computed on executors (a split file's parts joined,
    :func:`repltool.stats.join_parts`) and merged on the driver in input order, which
    gives exactly the single-process figures.

    :raises ReplToolError: the first failing file's error (unless ``keep_going``).
    """
    from ..stats import finish_stats
    task = Task("stats", verify_checksum, keep_going, top, rows=output_parquet is not None)
    run = run_distributed(spark, names, task)
    failure = first_failure(run)
    if failure is not None:
        raise failure.exception()
    parts: list[FilePart] = []
    offset = 0
    for r in run.results:
        assert r.parts is not None
        for p in r.parts:
            p.acc.shift(offset)
        offset += r.count
        parts.extend(r.parts)
    if output_parquet is not None:
        write_parquet(spark, run, output_parquet)
    return finish_stats(parts, top), run.failures


# ---- transactions ----

def _transactions_run(spark: Any, names: Sequence[str], *, verify_checksum: bool,
                      keep_going: bool, rows: bool, stream: bool = False) -> SparkRun:
    return run_distributed(spark, names, Task("transactions", verify_checksum, keep_going,
                                               rows=rows, stream=stream))

def transactions_dataframe(spark: Any, names: Sequence[str], *, verify_checksum: bool = True,
                           keep_going: bool = False) -> tuple[Any, list[FileFailure]]:
    """The transactions of the files as a DataFrame of :data:`SCHEMA_DDL`.

    ``seq`` orders the rows as :func:`repltool.binlog.read_transactions`
    yields them over ``names``; ``df.orderBy("seq")`` gives that order.

    :raises ReplToolError: the first failing file's error (unless ``keep_going``).
    """
    run = _transactions_run(spark, names, verify_checksum=verify_checksum,
                            keep_going=keep_going, rows=True)
    failure = first_failure(run)
    if failure is not None:
        raise failure.exception()
    return to_dataframe(spark, run), run.failures



# ---- schedule ----

def spark_schedule_report(spark: Any, names: Sequence[str], workers: Sequence[int],
                          config: SimConfig, cost_model: CostModel, *,
                          verify_checksum: bool = True, trace: bool = False,
                          crash: CrashSpec | None = None,
                          checkpoint_period: float | None = 0.3, threshold: float = 0.05,
                          output_parquet: str | None = None) -> ScheduleReport:
    """:func:`repltool.schedule.source.schedule_report` with per-file parsing on executors.

    The transactions come back per file, are stitched in input order (relay
    files whose transactions continue across a boundary having been read
    together), and the source rotations are found by replaying the files'
    FDE/Rotate headers through :class:`~repltool.schedule.source.SourceRotations`;
    the mapping, the cost model and the simulation run on the driver.
    """
    from ..schedule.source import SourceStats, transactions_to_sim
    if output_parquet is None:
        fast = _sims_on_executors(spark, names, cost_model, verify_checksum)
        if fast is not None:
            return _report(names, fast[0], fast[1], workers, config, cost_model, trace,
                           crash, checkpoint_period, threshold)
    run, rotations = logged_transactions(spark, names, verify_checksum=verify_checksum,
                                         rows=output_parquet is not None)
    stats = SourceStats()
    sims = list(transactions_to_sim(stitched(run), cost_model, relay=rotations,
                                    lenient=config.lenient, stats=stats))
    if output_parquet is not None:
        write_parquet(spark, run, output_parquet)
    return _report(names, sims, stats, workers, config, cost_model, trace, crash,
                   checkpoint_period, threshold)


def _sims_on_executors(spark: Any, names: Sequence[str], cost_model: CostModel,
                       verify_checksum: bool) -> tuple[Any, Any] | None:
    """Executors build the simulator input of binlogs as columns (costs applied); the driver
    concatenates them.  None (the caller reads transactions instead) for relay logs (source
    rotations cross files), transactions without a clock, a failing file, a name given
    twice, or a cost model whose cost depends on other transactions."""
    from ..schedule.columns import SimColumns
    from ..schedule.cost import ConstantCost, LinearCost
    from ..schedule.source import SourceStats
    if type(cost_model) not in (ConstantCost, LinearCost) or len(set(names)) != len(names):
        return None
    run = run_distributed(spark, names, Task("sims", verify_checksum, extra=cost_model))
    if first_failure(run) is not None or any(
            r.payload[1].relay_log or r.payload[1].without_clock for r in run.results):
        return None
    sims, stats = SimColumns(), SourceStats()
    for r in run.results:
        part, st = r.payload
        sims.extend_columns(part)
        stats.transactions += st.transactions
        stats.truncated_skipped += st.truncated_skipped
        stats.source_files += st.source_files
    return sims, stats


def logged_transactions(spark: Any, names: Sequence[str], *, verify_checksum: bool = True,
                        rows: bool = False) -> tuple[SparkRun, Any]:
    """The files' transactions read on executors, and their source rotations.

    :returns: the run (:func:`~repltool.distributed.driver.stitched` gives the
        transactions in input order, one file's at a time from the executors
        (``toLocalIterator``, never all at once), raising the first failure
        where a read would) and a :class:`~repltool.schedule.source.SourceRotations` that
        has seen the files' FDE/Rotate headers in input order.
    """
    from ..schedule.source import SourceRotations
    run = _transactions_run(spark, names, verify_checksum=verify_checksum, keep_going=False,
                            rows=rows, stream=True)
    rotations = SourceRotations()
    headers = (ev for r in run.results for ev in r.headers or ())
    for _ in rotations.watch(headers):
        pass
    return run, rotations


def _report(names: Sequence[str], sims: list[Any], stats: Any, workers: Sequence[int],
            config: SimConfig, cost_model: CostModel, trace: bool, crash: CrashSpec | None,
            checkpoint_period: float | None, threshold: float) -> ScheduleReport:
    from ..schedule.source import report_from_sims
    return report_from_sims(names, sims, stats, workers, config, cost_model, trace=trace,
                            crash=crash, checkpoint_period=checkpoint_period,
                            threshold=threshold)

