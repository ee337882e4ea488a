"""End to end: ``repltool CMD --spark`` against ``repltool CMD`` on >= 1 GB, CPU seconds too.

Input: ``--inputs`` (a glob), else ``--files`` MySQL 8.0 binlogs of ``--file-mb`` MB
built with ``bench_stats.build_mysql80_log`` (seeds 101, 102, ...) and cached in
``bench/out/split/`` (default 4 x 256 MB).  ``--split-size S`` passes
``--spark-split-size S`` (every file larger than 2 S read in parts); without it
``--spark`` cuts only the files the cores need to finish together.

Per command (``--commands``, default ``stats,schedule,certify``; ``certify`` is
``certify --mode writeset``, text report; ``certify-gr`` is ``certify --mode
group-replication``, text report; ``check`` is ``check --format json``;
``schedule`` is ``--workers 1,4``; ``certify-output`` is ``certify --mode writeset
--pk-only --output DIR``, DIR ``--output-dir``: both runs write to the same path, the
single process's copies are moved aside and compared byte for byte), one
single-process run and one ``--spark --spark-master local[N] --spark-quiet
[--spark-split-size S]`` run, each a fresh process (Spark start-up included), their
stdout compared (must be identical).  Figures:

* wall seconds, and the speed-up (single / spark);
* CPU seconds of every process of the run: single-process from ``wait4``; for
  ``--spark`` the process tree is sampled from ``/proc`` every 0.1 s and each
  process's last sample kept (so up to 0.1 s per process is missed), split into
  ``driver`` (the CLI's Python), ``jvm`` and ``workers`` (the Python workers under
  the JVM, i.e. the executors);
* peak RSS (``VmHWM``) of the largest Python worker (a worker runs one task at a time,
  so this bounds every task it ran) and of the driver;
* a ``--spark stats`` run on a 1 MB file gives the fixed cost (start-up, stop) in
  wall and CPU seconds.

On a loaded machine wall ratios say little: compare CPU seconds, and note the load
average printed at the start and end.

Usage::

    python bench/bench_spark_e2e.py [--inputs GLOB | --files 4 --file-mb 256]
        [--commands stats,schedule,certify] [--cores 2] [--split-size 128M]
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "split"
sys.path.insert(0, str(HERE))
TICKS = os.sysconf("SC_CLK_TCK")

COMMANDS = {
    "stats": ["stats", "--format", "json"],
    "schedule": ["schedule", "--format", "json", "--workers", "1,4"],
    "certify": ["certify", "--mode", "writeset"],
    "check": ["check", "--format", "json"],
    "certify-gr": ["certify", "--mode", "group-replication"],
    "certify-output": ["certify", "--mode", "writeset", "--pk-only", "--output"],
}


def inputs(files: int, file_mb: int) -> list[Path]:
    from bench_stats import build_mysql80_log
    OUT.mkdir(parents=True, exist_ok=True)
    paths = [OUT / f"binlog.{i + 1:06d}" for i in range(files)]
    for i, p in enumerate(paths):
        if not p.exists():
            print(f"building {p} ({file_mb} MB) ...", file=sys.stderr)
            build_mysql80_log(p, file_mb, seed=101 + i)
    return paths


def proc_stat(pid: int) -> tuple[str, int, float] | None:
    """(command name, parent pid, CPU seconds) of a process."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            text = fh.read()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text.rsplit(")", 1)[1].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS


def _peak_rss(pid: int) -> int:
    """A process's peak resident set (VmHWM) in KiB; 0 when gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Tree:
    """Samples the CPU of a process and all its descendants until it exits."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.cpu: dict[int, tuple[str, int, float]] = {}
        self.rss: dict[int, int] = {}
        self.done = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done:
            family = {self.root}
            stats = {}
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    s = proc_stat(int(entry))
                    if s is not None:
                        stats[int(entry)] = s
            grew = True
            while grew:
                grew = False
                for pid, (_, ppid, _) in stats.items():
                    if ppid in family and pid not in family:
                        family.add(pid)
                        grew = True
            for pid in family:
                if pid in stats:
                    self.cpu[pid] = stats[pid]
                    self.rss[pid] = max(self.rss.get(pid, 0), _peak_rss(pid))
            time.sleep(0.1)

    def stop(self) -> dict[str, float]:
        self.done = True
        self.thread.join()
        out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
        java = {pid for pid, (name, _, _) in self.cpu.items() if name == "java"}
        for pid, (name, ppid, cpu) in self.cpu.items():
            if pid == self.root:
                out["driver"] += cpu
            elif pid in java:
                out["jvm"] += cpu
            else:
                out["workers"] += cpu
        self.peaks = {
            "driver": self.rss.get(self.root, 0) / 1024,
            "worker": max((kib for pid, kib in self.rss.items()
                           if pid != self.root and pid not in java), default=0) / 1024}
        return out


def single(cmd: list[str]) -> tuple[float, float, bytes]:
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()  # type: ignore[union-attr]
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"{cmd} failed ({status})")
    PEAKS["single"] = ru.ru_maxrss / 1024
    return wall, ru.ru_utime + ru.ru_stime, out


def spark(cmd: list[str]) -> tuple[float, dict[str, float], bytes]:
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    tree = Tree(proc.pid)
    out = proc.stdout.read()  # type: ignore[union-attr]
    proc.wait()
    wall = time.perf_counter() - t
    cpu = tree.stop()
    PEAKS.update(tree.peaks)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed ({proc.returncode})")
    return wall, cpu, out


#: peak RSS in MiB of the last runs: "single" (the single process), and of --spark's
#: "driver" and "worker" (the largest Python worker)
PEAKS: dict[str, float] = {}


def same_files(one: Path, two: Path) -> int:
    """Assert the two directories hold the same files, byte for byte; how many."""
    import filecmp
    names = sorted(p.name for p in one.iterdir())
    if names != sorted(p.name for p in two.iterdir()):
        raise SystemExit(f"{one} and {two} hold different files")
    for name in names:
        if not filecmp.cmp(one / name, two / name, shallow=False):
            raise SystemExit(f"{name}: the --spark copy differs from the single-process one")
    return len(names)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--inputs", help="a glob of input files (else --files x --file-mb)")
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--file-mb", type=int, default=256)
    ap.add_argument("--commands", default="stats,schedule,certify")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--split-size", default=None,
                    help="--spark-split-size to pass (default: none, the balance rule)")
    ap.add_argument("--output-dir", default="/tmp/bench-certify-output",
                    help="certify-output: where the copies go (removed at the end)")
    args = ap.parse_args()
    paths = ([Path(p) for p in sorted(glob.glob(args.inputs))] if args.inputs
             else inputs(args.files, args.file_mb))
    size = sum(p.stat().st_size for p in paths)
    gb = size / 1e9
    py = [sys.executable, "-m", "repltool"]
    opts = ["--spark", "--spark-master", f"local[{args.cores}]", "--spark-quiet",
            *(["--spark-split-size", args.split_size] if args.split_size else [])]
    print(f"{len(paths)} files, {size / 1e6:.0f} MB, local[{args.cores}], split size "
          f"{args.split_size or 'not given'}; load average {os.getloadavg()} at start", flush=True)
    tiny = OUT / "tiny.000001"
    if not tiny.exists():
        from bench_stats import build_mysql80_log
        OUT.mkdir(parents=True, exist_ok=True)
        build_mysql80_log(tiny, 1, seed=1)
    w, cpu, _ = spark([*py, "stats", *opts, str(tiny)])
    print(f"fixed cost (--spark stats on 1 MB): wall {w:.1f} s, CPU driver "
          f"{cpu['driver']:.1f} jvm {cpu['jvm']:.1f} workers {cpu['workers']:.1f} s",
          flush=True)
    print("| command | load avg | single wall s | single CPU s | --spark wall s | driver CPU s | "
          "JVM CPU s | workers CPU s | --spark CPU s | wall speed-up | "
          "workers CPU s/GB | driver CPU s/GB | driver share | peak RSS single / worker / driver MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.commands.split(","):
        base = [*py, *COMMANDS[name]]
        out_dir = Path(args.output_dir)
        aside = out_dir.with_name(out_dir.name + ".single")
        if name == "certify-output":
            import shutil
            for d in (out_dir, aside):
                shutil.rmtree(d, ignore_errors=True)
            base.append(str(out_dir))
        load = os.getloadavg()[0]
        sw, scpu, out1 = single([*base, *map(str, paths)])
        if name == "certify-output":
            out_dir.rename(aside)
        pw, pcpu, out2 = spark([*base[:4], *opts, *base[4:], *map(str, paths)])
        if out1 != out2:
            raise SystemExit(f"{name}: the --spark output differs from the single-process one")
        if name == "certify-output":
            same_files(aside, out_dir)
            for d in (out_dir, aside):
                shutil.rmtree(d)
        total = sum(pcpu.values())
        share = pcpu["driver"] / (pcpu["driver"] + pcpu["workers"])
        print(f"| `{name}` | {load:.1f} → {os.getloadavg()[0]:.1f} | {sw:.1f} | {scpu:.1f} | "
              f"{pw:.1f} | {pcpu['driver']:.1f} | "
              f"{pcpu['jvm']:.1f} | {pcpu['workers']:.1f} | {total:.1f} | {sw / pw:.2f}x | "
              f"{pcpu['workers'] / gb:.1f} | {pcpu['driver'] / gb:.2f} | {share:.1%} | "
              f"{PEAKS['single']:.0f} / {PEAKS['worker']:.0f} / {PEAKS['driver']:.0f} |", flush=True)
    print(f"load average {os.getloadavg()} at the end")


if __name__ == "__main__":
    main()
