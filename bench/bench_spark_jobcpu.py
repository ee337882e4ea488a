"""CPU per GB of one ``--spark`` job, start-up excluded: workers, JVM and driver.

In one ``local[N]`` session, :func:`repltool.distributed.run_distributed` runs the
``stats`` task over the inputs once per MODE, between two samples of the process
tree's CPU (``/proc``: the Python workers, the JVM, this driver):

* ``auto``: no ``spark.repltool.splitSize`` (the balance rule decides the parts);
* a size (``128M``, ``0``): that part size, forced;
* ``single``: ``repltool.stats.compute_stats`` of all the inputs in this process;
* ``nofreeze``: the workers' frozen objects are unfrozen and never frozen again
  (the cost of the per-task ``gc.collect()`` before ``settle_worker``).

Usage::

    python bench/bench_spark_jobcpu.py GLOB single,auto,128M [REPEATS] [--cores 2]
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import time

from bench_spark_e2e import proc_stat  # noqa: E402 - bench/ is the script's path


def tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds of ``root``'s descendants: ``jvm`` (java) and ``workers`` (the rest)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := proc_stat(int(entry))) is not None:
            stats[int(entry)] = found
    family, grew = {root}, True
    while grew:
        grew = False
        for pid, (_, ppid, _) in stats.items():
            if ppid in family and pid not in family:
                family.add(pid)
                grew = True
    out = {"jvm": 0.0, "workers": 0.0}
    for pid in family - {root}:
        name, _, cpu = stats[pid]
        out["jvm" if name == "java" else "workers"] += cpu
    return out


def _unfreeze(_: int) -> int:
    import gc
    from repltool.distributed import session
    session._settled = True
    gc.unfreeze()
    return gc.get_freeze_count()


def _freeze_count(_: int) -> int:
    import gc
    return gc.get_freeze_count()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("inputs", help="a glob of input files")
    ap.add_argument("modes", help="comma-separated: auto, single, nofreeze or a part size")
    ap.add_argument("repeats", nargs="?", type=int, default=1)
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    from repltool.distributed import SPLIT_CONF, SparkOptions, run_distributed, spark_session
    from repltool.distributed.units import Task
    from repltool.stats import compute_stats
    files = sorted(glob.glob(args.inputs))
    gb = sum(os.path.getsize(f) for f in files) / 1e9
    print(f"{len(files)} files, {gb:.1f} GB; load average {os.getloadavg()}", flush=True)
    with spark_session(SparkOptions(master=f"local[{args.cores}]", quiet=True)) as spark:
        sc = spark.sparkContext
        for _ in range(args.repeats):
            for mode in args.modes.split(","):
                if mode == "single":
                    r0 = resource.getrusage(resource.RUSAGE_SELF)
                    compute_stats(files)
                    r1 = resource.getrusage(resource.RUSAGE_SELF)
                    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
                    print(f"single: {cpu / gb:.3f} CPU s/GB", flush=True)
                    continue
                if mode == "nofreeze":
                    sc.parallelize(range(40), 40).map(_unfreeze).collect()
                    continue
                if mode == "auto":
                    spark.conf.unset(SPLIT_CONF)
                else:
                    spark.conf.set(SPLIT_CONF, mode)
                a, c0, w = tree_cpu(os.getpid()), time.process_time(), time.time()
                run = run_distributed(spark, files, Task("stats"))
                b = tree_cpu(os.getpid())
                units = sum(run.joined.values()) + len(files) - len(run.joined)
                frozen = sc.parallelize(range(4), 4).map(_freeze_count).collect()
                print(f"{mode}: {units} units; CPU s/GB workers "
                      f"{(b['workers'] - a['workers']) / gb:.3f} jvm {(b['jvm'] - a['jvm']) / gb:.3f} "
                      f"driver {(time.process_time() - c0) / gb:.3f}; wall {time.time() - w:.1f} s; "
                      f"workers' frozen objects {frozen}", flush=True)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
