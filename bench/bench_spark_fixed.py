"""The fixed cost of ``repltool CMD --spark``: where a small run's wall and CPU time go.

Two modes:

``breakdown FILE``
    Runs ``repltool stats --spark --spark-master local[2] FILE`` in this process with
    PySpark's and repltool's session steps timed (the gateway's launch, the
    SparkContext, the SparkSession, the executors' probe and warm-up, the job, the
    stop), and prints per step the wall seconds and the CPU seconds of the driver,
    the processes the driver JVM reaped (``cutime``: the Python daemon and workers
    once stopped; ``spark-class``'s launcher JVM, ``org.apache.spark.launcher.Main``,
    is not seen: it is reaped by a subshell), the driver JVM and the Python workers.

``rounds FILE TREE...``
    Interleaved rounds of the CLI run as a subprocess for each TREE (a directory
    holding a ``repltool`` package, run from there and put on ``PYTHONPATH``: e.g. a
    copy of main's and this checkout): wall seconds and the CPU seconds of the
    driver, the JVM and the Python workers (sampled from /proc every 0.1 s, as
    bench_spark_e2e.py does; the JVM outlives the driver by a moment, so ``wait4``
    would miss it).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_spark_e2e import TICKS, Tree, proc_stat  # noqa: E402


def _family(root: int) -> dict[int, tuple[str, int, float, float]]:
    """pid -> (name, ppid, own CPU s, reaped children's CPU s) of root's descendants."""
    stats = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                text = fh.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        f = text.rsplit(")", 1)[1].split()
        stats[int(entry)] = (name, int(f[1]), (int(f[11]) + int(f[12])) / TICKS,
                             (int(f[13]) + int(f[14])) / TICKS)
    family, grew = {root}, True
    while grew:
        grew = False
        for pid, s in stats.items():
            if s[1] in family and pid not in family:
                family.add(pid)
                grew = True
    return {pid: stats[pid] for pid in family if pid != root and pid in stats}


class Clock:
    """Samples at each step's end: wall, driver CPU, launcher JVM, JVM, workers."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, float, float, float]] = []
        self.t0 = time.perf_counter()
        self.last = self.sample()
        self.seen: dict[int, float] = {}

    def sample(self) -> tuple[float, float, float, float, float]:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        launcher = jvm = workers = 0.0
        for _, (name, ppid, cpu, reaped) in _family(os.getpid()).items():
            if name == "java" and ppid == os.getpid():
                jvm += cpu
                launcher += reaped          # spark-class's launcher JVM, reaped before exec
            else:
                workers += cpu
        return (time.perf_counter(), ru.ru_utime + ru.ru_stime, launcher, jvm, workers)

    def mark(self, step: str) -> None:
        now = self.sample()
        # the JVM and workers are gone after the stop: keep their last figures
        now = (now[0], now[1], max(now[2], self.last[2]), max(now[3], self.last[3]),
               max(now[4], self.last[4]))
        self.rows.append((step,) + tuple(b - a for a, b in zip(self.last, now)))  # type: ignore
        self.last = now

    def table(self) -> str:
        out = ["| step | wall s | driver CPU s | JVM's reaped children CPU s | JVM CPU s | workers CPU s |",
               "|---|---|---|---|---|---|"]
        tot = [0.0] * 5
        for step, *vals in self.rows:
            out.append(f"| {step} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
            tot = [a + b for a, b in zip(tot, vals)]
        out.append("| **total** | " + " | ".join(f"**{v:.2f}**" for v in tot) + " |")
        return "\n".join(out)


def breakdown(path: str, extra: list[str]) -> None:
    clock = Clock()
    import pyspark  # noqa: F401
    from pyspark.core import context
    from pyspark.sql import SparkSession

    import repltool.distributed.session as session
    import repltool.cli as cli
    clock.mark("imports (pyspark, repltool CLI)")

    def timed(owner, attr, step, before=None):  # type: ignore[no-untyped-def]
        real = getattr(owner, attr)

        def wrapper(*a, **k):  # type: ignore[no-untyped-def]
            if before:
                clock.mark(before)
            try:
                return real(*a, **k)
            finally:
                clock.mark(step)
        setattr(owner, attr, wrapper)

    timed(context, "launch_gateway", "gateway: spark-submit, launcher JVM, driver JVM",
          before="CLI, inputs, session options")
    timed(context.SparkContext, "_initialize_context", "SparkContext (JVM)",
          before="SparkContext (Python)")
    real_init = SparkSession.__init__

    def session_init(self, *a, **k):  # type: ignore[no-untyped-def]
        clock.mark("between")
        real_init(self, *a, **k)
        clock.mark("SparkSession")
    SparkSession.__init__ = session_init  # type: ignore[method-assign]
    timed(session, "repltool_fingerprint", "driver's repltool fingerprint")
    timed(session, "_probe", "probe job (first Python workers)")
    timed(session, "warm_up", "warm-up job")
    timed(context.SparkContext, "stop", "stop", before="the job")
    status = 0
    try:
        cli.main(["stats", "--spark", "--spark-master", "local[2]", *extra, path])
    except SystemExit as exc:
        status = exc.code or 0
    clock.mark("after stop (output)")
    print(clock.table(), file=sys.stderr)
    print(f"status {status}", file=sys.stderr)


def rounds(path: str, trees: list[str], n: int, extra: list[str]) -> None:
    cmd = [sys.executable, "-m", "repltool", "stats", "--spark", "--spark-master",
           "local[2]", *extra, path]
    rows: dict[str, list[tuple[float, float, dict[str, float]]]] = {t: [] for t in trees}
    for i in range(n):
        for tree in trees:
            env = dict(os.environ, PYTHONPATH=tree)
            load = os.getloadavg()[0]
            t = time.perf_counter()
            # run from the tree: ``-m`` puts the working directory first on sys.path
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=env, cwd=tree)
            sampler = Tree(proc.pid)
            status = proc.wait()
            wall = time.perf_counter() - t
            split = sampler.stop()
            if status != 0:
                raise SystemExit(f"{tree}: exit status {status}")
            total = sum(split.values())
            rows[tree].append((wall, total, split))
            print(f"round {i + 1} {tree}: load {load:.2f} wall {wall:.2f} s, CPU {total:.2f} s "
                  f"(driver {split['driver']:.2f}, JVM {split['jvm']:.2f}, "
                  f"workers {split['workers']:.2f})", flush=True)
    for tree, got in rows.items():
        walls = sorted(w for w, _, _ in got)
        cpus = sorted(c for _, c, _ in got)
        jvms = sorted(s["jvm"] for _, _, s in got)
        print(f"{tree}: wall {walls[0]:.2f}-{walls[-1]:.2f} (median {walls[len(walls) // 2]:.2f})"
              f" s, CPU {cpus[0]:.2f}-{cpus[-1]:.2f} (median {cpus[len(cpus) // 2]:.2f}) s, "
              f"JVM {jvms[0]:.2f}-{jvms[-1]:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("mode", choices=["breakdown", "rounds"])
    ap.add_argument("file", help="a small binlog")
    ap.add_argument("trees", nargs="*", help="rounds: directories to put on PYTHONPATH")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--spark-conf", action="append", default=[],
                    help="KEY=VALUE passed on as --spark-conf (repeatable)")
    args = ap.parse_args()
    extra = [x for kv in args.spark_conf for x in ("--spark-conf", kv)]
    if args.mode == "breakdown":
        breakdown(args.file, extra)
    else:
        rounds(args.file, args.trees or [os.getcwd()], args.rounds, extra)


if __name__ == "__main__":
    main()
