"""Benchmark ``repltool stats`` single-process against ``repltool stats --spark``.

Input: ``--files`` MySQL 8.0 binlogs of ``--file-mb`` MB each (default 16 x 64 MB,
about 1 GB), written by repltool's own encoder with the generator of
``bench_stats.py`` (different seeds), cached in ``bench/out/spark/`` and
rebuilt when missing (two at a time).

Figures:

* ``single``: wall time of ``python -m repltool stats --format json FILES``;
* ``spark``: wall time of the same with ``--spark --spark-master local[N]``
  (Spark start-up included);
* ``startup`` and ``job``: in one process, the seconds to start the session
  (JVM, SparkSession, and the Python workers with repltool imported: the
  embedded session starts them before the first job) and the seconds
  :func:`repltool.distributed.spark_stats` then takes (median of ``--repeat`` jobs
  in that session);
* speed-ups with and without start-up, and the break-even size: the input
  size at which ``fixed + size / spark_rate == size / single_rate``, ``fixed``
  being what ``--spark`` spends besides the job (its wall time minus the job:
  start-up, stopping the session, the JVM's exit).

Each command runs ``--repeat`` times; the median is kept.  Both outputs are
compared (they must be identical).

Usage::

    python bench/bench_spark.py [--files 16] [--file-mb 64] [--cores 2] [--repeat 1]
                                [--record bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "spark"
sys.path.insert(0, str(HERE))


def _build(args: tuple[str, int, int]) -> str:
    from bench_stats import build_mysql80_log
    path, size_mb, seed = args
    # build_mysql80_log writes NAME.tmp next to NAME: one private directory per file
    work = OUT / f".build-{Path(path).name}"
    work.mkdir(exist_ok=True)
    build_mysql80_log(work / "log.000001", size_mb, seed=seed)
    os.replace(work / "log.000001", path)
    work.rmdir()
    return path


def inputs(files: int, file_mb: int) -> list[Path]:
    """The cached input files, built when missing."""
    OUT.mkdir(parents=True, exist_ok=True)
    paths = [OUT / f"binlog-{file_mb}mb.{i + 1:06d}" for i in range(files)]
    todo = [(str(p), file_mb, 100 + i) for i, p in enumerate(paths) if not p.exists()]
    if todo:
        print(f"building {len(todo)} file(s) of {file_mb} MB in {OUT} ...", file=sys.stderr)
        with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            list(pool.map(_build, todo))
    return paths


def wall(cmd: list[str], repeat: int) -> tuple[float, bytes]:
    times, out = [], b""
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              check=True)
        times.append(time.perf_counter() - t)
        out = proc.stdout
    return statistics.median(times), out


def in_process(paths: list[Path], master: str, repeat: int) -> tuple[float, float]:
    """(start-up seconds, median job seconds over ``repeat`` jobs) inside one process."""
    code = (
        "import statistics, sys, time\n"
        "from repltool.distributed import SparkOptions, spark_stats, timed_session\n"
        f"with timed_session(SparkOptions(master={master!r})) as (spark, startup):\n"
        "    jobs = []\n"
        f"    for _ in range({repeat}):\n"
        "        t = time.perf_counter()\n"
        "        spark_stats(spark, sys.argv[1:])\n"
        "        jobs.append(time.perf_counter() - t)\n"
        "    print(startup, statistics.median(jobs))\n")
    proc = subprocess.run([sys.executable, "-c", code, *map(str, paths)], check=True,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    startup, job = proc.stdout.split()[-2:]
    return float(startup), float(job)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--file-mb", type=int, default=64)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--record", type=Path, help="append the results to this Markdown file")
    args = ap.parse_args()
    paths = inputs(args.files, args.file_mb)
    size = sum(p.stat().st_size for p in paths)
    master = f"local[{args.cores}]"
    base = [sys.executable, "-m", "repltool", "stats", "--format", "json"]
    single, out1 = wall([*base, *map(str, paths)], args.repeat)
    spark, out2 = wall([*base, "--spark", "--spark-master", master, *map(str, paths)],
                       args.repeat)
    if out1 != out2:
        raise SystemExit("the --spark output differs from the single-process output")
    startup, job = in_process(paths, master, args.repeat)
    rate1, rate_s = size / single, size / job
    # what `--spark` costs besides the job: start-up, session stop, JVM exit
    fixed = max(spark - job, startup)
    break_even = fixed / (1 / rate1 - 1 / rate_s) if rate_s > rate1 else float("inf")
    lines = [
        f"### bench_spark.py — {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, pyspark {_pyspark_version()}, "
        f"`{_java_version()}`.",
        f"Input: {len(paths)} MySQL 8.0 binlogs of {args.file_mb} MB "
        f"({size / 1e6:.0f} MB in all, repltool.synth encoder), median of {args.repeat}.",
        f"Command: `python bench/bench_spark.py --files {args.files} --file-mb {args.file_mb} "
        f"--cores {args.cores} --repeat {args.repeat}`",
        "",
        "| run | wall s | MB/s | speed-up |",
        "|---|---|---|---|",
        f"| `repltool stats` (single process) | {single:.1f} | {size / 1e6 / single:.1f} | 1.00x |",
        f"| `repltool stats --spark` ({master}, start-up included) | {spark:.1f} | "
        f"{size / 1e6 / spark:.1f} | {single / spark:.2f}x |",
        f"| Spark job alone (start-up excluded) | {job:.1f} | {size / 1e6 / job:.1f} | "
        f"{single / job:.2f}x |",
        "",
        f"Spark start-up (JVM + SparkSession + Python workers, in-process): {startup:.1f} s.  "
        "Break-even: "
        f"about {break_even / 1e6:.0f} MB (fixed cost / (1/single rate - 1/Spark job rate), "
        f"the fixed cost being the `--spark` wall time minus the job: {fixed:.1f} s); "
        "`repltool.distributed.BREAK_EVEN_BYTES` holds the rounded figure.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.record:
        exists = args.record.exists()
        with open(args.record, "a", encoding="utf-8") as fh:
            if not exists:
                fh.write("# Benchmark results\n\n")
            fh.write("\n" + text)


def _pyspark_version() -> str:
    try:
        import pyspark
        return pyspark.__version__
    except ImportError:
        return "missing"


def _java_version() -> str:
    try:
        proc = subprocess.run(["java", "-version"], capture_output=True, text=True)
        return proc.stderr.splitlines()[0]
    except (OSError, IndexError):
        return "java missing"


if __name__ == "__main__":
    main()
