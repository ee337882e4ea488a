"""What ``--spark`` costs the driver: bytes it receives and its share of the CPU, per command.

Input: ``--files`` MySQL 8.0 binlogs of ``--file-mb`` MB (the cached inputs of
``bench_spark.py``, built when missing).  One local session (``--master``,
default ``local[2]``) runs, per command, the library job the CLI runs with
``--spark``:

* ``stats``: :func:`repltool.distributed.spark_stats`;
* ``schedule``: :func:`repltool.distributed.spark_schedule_report` (simulation
  included: it runs on the driver);
* ``certify``: ``certify --mode writeset`` (:func:`repltool.distributed.spark_pairs`
  and the driver's report, :class:`repltool.certify.report.ReportBuilder`, as
  the text and JSON formats build it); ``certify-gr``: the same in
  ``--mode group-replication`` (executors send the pairs, :mod:`repltool.distributed.wspack`;
  the driver certifies them in order);
* ``check``: :func:`repltool.distributed.spark_check`.

Figures per command:

* ``driver MB``: the pickled size of every result the driver receives
  (``collect`` of the per-unit flags or results, and the payloads streamed by
  ``toLocalIterator``), measured by pickling them again on the driver (that
  time is not counted below);
* ``driver CPU s``: CPU seconds of this Python process during the job;
* ``executor CPU s``: CPU seconds of the Python workers (the descendants of
  the JVM, read from ``/proc``) during the job;
* ``driver share``: driver / (driver + executors).  The JVM's own CPU
  (scheduling, the local socket) is reported apart (``jvm CPU s``).

The driver's library modules are imported before the first measurement (the
CLI imports them before its job starts, with or without ``--spark``).

Usage::

    python bench/bench_spark_driver.py [--files 4] [--file-mb 16] [--master local[2]]
                                       [--commands stats,schedule,certify,check]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

TICKS = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS     # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
    except OSError:
        pass
    return out


def _descendants(pid: int) -> list[int]:
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        for c in _children(p):
            seen.append(c)
            todo.append(c)
    return seen


class Meter:
    """Counts the pickled bytes of what the driver receives (patched into the driver module)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.seconds = 0.0

    def add(self, obj: object) -> None:
        t = time.process_time()
        self.bytes += len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
        self.seconds += time.process_time() - t


def install(meter: Meter) -> None:
    from repltool.distributed import checkjob, driver, pairs
    phase, stream = driver._phase, driver.stream_results

    def counted_phase(spark, task, units):  # type: ignore[no-untyped-def]
        results, rdd = phase(spark, task, units)
        for r in results:
            meter.add(r)
        return results, rdd

    def counted_stream(run):  # type: ignore[no-untyped-def]
        for r in stream(run):
            if run.streamed:
                meter.add(r)
            yield r

    driver._phase = counted_phase
    for module in (driver, checkjob, pairs):
        module.stream_results = counted_stream


def job(command: str, spark: object, names: list[str]) -> object:
    if command == "stats":
        from repltool.distributed import spark_stats
        return spark_stats(spark, names)
    if command == "schedule":
        from repltool.distributed import spark_schedule_report
        from repltool.schedule import SimConfig
        from repltool.schedule.source import parse_cost
        return spark_schedule_report(spark, names, [1, 2, 4], SimConfig(),
                                     parse_cost("constant"))
    if command in ("certify", "certify-gr"):
        from repltool.certify.report import ReportBuilder
        from repltool.certify.stitched import PairsRun
        from repltool.distributed import spark_pairs
        run = PairsRun(names, "group-replication" if command == "certify-gr" else "writeset")
        spark_pairs(spark, names, run)
        return ReportBuilder(run).build()       # what certify's text and JSON formats read
    if command == "check":
        from repltool.check import CheckConfig
        from repltool.distributed import spark_check
        return spark_check(spark, names, CheckConfig())
    raise SystemExit(f"unknown command {command}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--file-mb", type=int, default=16)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--commands", default="stats,schedule,certify,check")
    args = ap.parse_args()
    from bench_spark import inputs
    from repltool.distributed import SparkOptions, spark_session
    paths = [str(p) for p in inputs(args.files, args.file_mb)]
    total_mb = sum(os.path.getsize(p) for p in paths) / 1e6
    meter = Meter()
    install(meter)
    # the driver's library modules, imported before anything is measured (the CLI
    # imports them before it starts the job, with or without --spark)
    import repltool.certify.stitched  # noqa: F401
    import repltool.check.engine  # noqa: F401
    import repltool.schedule.source  # noqa: F401
    import repltool.stats  # noqa: F401
    print(f"{len(paths)} files, {total_mb:.0f} MB, master {args.master}, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    print(f"{'command':<10} {'driver MB':>10} {'MB/GB in':>9} {'driver CPU s':>13} "
          f"{'executor CPU s':>15} {'driver share':>13} {'jvm CPU s':>10} {'wall s':>7}")
    with spark_session(SparkOptions(master=args.master, quiet=True)) as spark:
        jvm = spark.sparkContext._gateway.proc.pid
        for command in args.commands.split(","):
            meter.bytes, meter.seconds = 0, 0.0
            workers = _descendants(jvm)
            before = {p: _cpu(p) for p in workers}
            jvm0, cpu0, t0 = _cpu(jvm), time.process_time(), time.perf_counter()
            job(command, spark, paths)
            wall = time.perf_counter() - t0
            driver = time.process_time() - cpu0 - meter.seconds
            workers = _descendants(jvm)
            executors = sum(_cpu(p) - before.get(p, 0.0) for p in workers)
            jvm_cpu = _cpu(jvm) - jvm0
            share = driver / (driver + executors) if driver + executors else 0.0
            print(f"{command:<10} {meter.bytes / 1e6:>10.2f} "
                  f"{meter.bytes / 1e6 / (total_mb / 1000):>9.1f} {driver:>13.2f} "
                  f"{executors:>15.2f} {share:>12.1%} {jvm_cpu:>10.2f} {wall:>7.1f}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
