"""``certify --spark --output``'s split, in-process: the stage-1 part tasks and the
per-file stage-2 task (certify the parts in order, write the re-tagged copy) timed
apart, and the stage-2 task's peak RSS in a fresh process (``VmHWM``: ``ru_maxrss`` of a child forked from
a large parent counts the parent's pages).

Stage 1 (``repltool.distributed.pairs._part_unit`` per span of
``repltool.binlog.split.split_spans``) runs here and its results are pickled to a
temporary file, as Spark's shuffle would carry them; stage 2
(``join_certified_parts``) then runs in a child process that unpickles them and
writes the copy into a staging directory: its CPU seconds and peak RSS
(``VmHWM``; also before the parts were loaded) are that of one stage-2 task.  The copy is compared with one written by ``certify --output`` in a single
process (``--compare``).

Usage::

    python bench/bench_split_output.py FILE [--split-size 128M] [--work DIR] [--compare]
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _hwm() -> int:
    """This process's peak resident set (VmHWM) in KiB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _spec(output: tuple[str, str] | None) -> object:
    from repltool.certify import CertifyOptions, Mode
    from repltool.distributed.pairs import CertifySpec, PairsSpec
    options = CertifyOptions()
    return CertifySpec(PairsSpec(None, options.history_size, statements=False), Mode.WRITESET,
                       options, output, report_only=True)


def stage1(path: str, size: int, dump: str) -> None:
    from repltool.binlog.split import split_spans
    from repltool.collector import few_collections
    from repltool.distributed.pairs import _part_unit
    from repltool.distributed.units import Task, Unit
    task = Task("certify", extra=_spec(("unused", "mysql")))
    spans = split_spans(path, size)
    t, c = time.perf_counter(), _cpu()
    parts = []
    with few_collections():
        for k, span in enumerate(spans):
            parts.append(_part_unit(task, Unit(0, (path,), span, k), task.extra))
    cpu = _cpu() - c
    with open(dump, "wb") as fh:
        pickle.dump(parts, fh, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"stage 1: {len(spans)} parts, {cpu:.2f} CPU s ({time.perf_counter() - t:.1f} s "
          f"wall), {sum(p.count for p in parts):,} transactions, "
          f"{os.path.getsize(dump) / 2**20:.0f} MiB pickled", flush=True)


def stage2(dump: str, staging: str) -> None:
    from repltool.distributed.pairs import join_certified_parts
    from repltool.distributed.units import Task
    import repltool.binlog.rewrite  # noqa: F401 - imported before the baseline
    import repltool.certify.retag  # noqa: F401
    base = _hwm()
    t, c = time.perf_counter(), _cpu()
    with open(dump, "rb") as fh:
        parts = pickle.load(fh)
    loaded = _hwm()
    task = Task("certify", extra=_spec((staging, "mysql")))
    out = list(join_certified_parts(task, ((p.unit.index, p) for p in parts)))
    del parts
    cpu = _cpu() - c
    peak = _hwm()
    (r,) = out
    if r.joined <= 0 or r.written is None or r.written[0] != "written":
        raise SystemExit(f"stage 2 did not join or write: joined {r.joined}, {r.written}")
    print(f"stage 2: {cpu:.2f} CPU s ({time.perf_counter() - t:.1f} s wall) for "
          f"{r.joined} parts; RSS after imports {base / 1024:.0f} MiB, after unpickling the "
          f"parts {loaded / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("file", nargs="?")
    ap.add_argument("--split-size", default="128M")
    ap.add_argument("--work", default=None, help="a directory for the copies (temporary)")
    ap.add_argument("--compare", action="store_true",
                    help="also certify --output in one process and compare the copies")
    ap.add_argument("--stage2", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stage2:
        stage2(*args.stage2)
        return
    if args.file is None:
        ap.error("FILE is required")
    from repltool.distributed.driver import parse_size
    print(f"{args.file}: {os.path.getsize(args.file) / 2**20:.0f} MiB, split size "
          f"{args.split_size}; load average {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(dir=args.work) as work:
        dump = os.path.join(work, "parts.pickle")
        staging = os.path.join(work, "staging")
        os.mkdir(staging)
        stage1(args.file, parse_size(args.split_size), dump)
        subprocess.run([sys.executable, __file__, "--stage2", dump, staging], check=True)
        os.unlink(dump)
        if args.compare:
            import filecmp
            single = os.path.join(work, "single")
            t = time.perf_counter()
            # (GNU time forks the command from a small process: its own peak RSS)
            proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", sys.executable, "-m",
                                   "repltool", "certify", "--mode", "writeset", "--pk-only",
                                   "--output", single, args.file],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"certify --output failed ({proc.returncode})")
            user, sys_s, kib = proc.stderr.split()[-3:]
            name = Path(args.file).name
            same = filecmp.cmp(os.path.join(single, name), os.path.join(staging, name),
                               shallow=False)
            print(f"single process certify --output: "
                  f"{float(user) + float(sys_s):.2f} CPU s "
                  f"({time.perf_counter() - t:.1f} s wall), peak RSS "
                  f"{int(kib) / 1024:.0f} MiB; copies identical: {same}", flush=True)
            if not same:
                raise SystemExit("the copies differ")
    print(f"load average {os.getloadavg()} at the end")


if __name__ == "__main__":
    main()
