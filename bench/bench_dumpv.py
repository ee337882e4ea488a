"""Benchmark ``dump -v`` (rows as ``###`` pseudo-SQL) against ``mariadb-binlog -v
--base64-output=decode-rows``, both engines.

Every command runs as a subprocess with its output to /dev/null, back to back in one
run on the same files; the figures are the medians of ``--repeat`` runs of wall time
and of CPU time (user + system of the child, from ``wait4``).  On a shared machine
the CPU figures are the comparable ones.  ``--tree DIR`` adds the same ``dump``
commands run from another checkout (a before/after comparison in one run).

Usage::

    python bench/bench_dumpv.py --label "synth 8.0" FILE... [--repeat 3]
        [--tree /path/to/old/checkout] [--record bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall s, child CPU s) of one run in ``cwd`` (``python -m`` puts it first on the
    path, so a tree's own ``repltool`` runs); the command must exit 0."""
    t = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {code}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--label", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tree", help="another checkout whose dump -v is timed too")
    ap.add_argument("--record")
    args = ap.parse_args()
    args.files = [os.path.abspath(f) for f in args.files]
    size = sum(os.path.getsize(f) for f in args.files)
    mdb = shutil.which("mariadb-binlog")
    if mdb is None:
        raise SystemExit("mariadb-binlog is not installed")
    cmds = [("`mariadb-binlog -v --base64-output=decode-rows`",
             [mdb, "-v", "--base64-output=decode-rows", *args.files], "compiled", HERE.parent)]
    trees = [("", HERE.parent)] + ([(" [--tree]", Path(args.tree))] if args.tree else [])
    for suffix, tree in trees:
        for engine in ("compiled", "python"):
            cmds += [
                (f"`dump -v --base64-output=decode-rows` ({engine}){suffix}",
                 [PY, "-m", "repltool", "dump", "-v", "--base64-output=decode-rows",
                  *args.files], engine, tree),
                (f"`dump -v` ({engine}){suffix}",
                 [PY, "-m", "repltool", "dump", "-v", *args.files], engine, tree),
            ]
            if suffix:
                break               # the other tree: the compiled engine only
    load = os.getloadavg()
    results = []
    for label, cmd, engine, tree in cmds:
        env = dict(os.environ, PYTHONPATH=str(tree), REPLTOOL_ENGINE=engine)
        runs = [run(cmd, env, tree) for _ in range(args.repeat)]
        results.append((label, statistics.median(w for w, _ in runs),
                        statistics.median(c for _, c in runs)))
        print(f"{label}: wall {results[-1][1]:.2f} s, cpu {results[-1][2]:.2f} s",
              file=sys.stderr)
    load_after = os.getloadavg()
    ref_wall, ref_cpu = results[0][1], results[0][2]
    lines = [f"\n### bench_dumpv.py — {args.label}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n",
             f"Input: {args.label}, {len(args.files)} file(s), {size / 1e6:.1f} MB. Median of "
             f"{args.repeat} runs; load average {load[0]:.1f} before, {load_after[0]:.1f} "
             "after (2 cores).\n",
             "| command | wall s | CPU s | × mariadb-binlog (wall) | × (CPU) |",
             "|---|---|---|---|---|"]
    for label, wall, cpu in results:
        lines.append(f"| {label} | {wall:.2f} | {cpu:.2f} | {ref_wall / wall:.2f}× | "
                     f"{ref_cpu / cpu:.2f}× |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        with open(args.record, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
