"""Benchmark ``dump --writesets`` and ``certify`` against ``mariadb-binlog -v``, both engines.

Every command runs as a subprocess with its output to /dev/null, back to back in one
run on the same files; the figures are the medians of ``--repeat`` runs of wall time
and of CPU time (user + system of the child, from ``wait4``).  On a shared machine
the CPU figures are the comparable ones.

Usage::

    python bench/bench_writesets.py --label "synth 8.0" --schema DIR/schema.sql FILE...
        [--repeat 3] [--record bench/RESULTS.md]
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


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, child CPU s) of one run; the command must exit 0 (certify: 0 or 1)."""
    t = time.perf_counter()
    with open(os.devnull, "wb") as null:
        # run in the tree: ``python -m`` puts the working directory first on sys.path,
        # before PYTHONPATH, so another checkout's directory would be measured instead
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.DEVNULL, env=env,
                                cwd=HERE.parent)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {code}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--schema")
    ap.add_argument("--label", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--record")
    args = ap.parse_args()
    args.files = [os.path.abspath(f) for f in args.files]
    if args.schema:
        args.schema = os.path.abspath(args.schema)
    size = sum(os.path.getsize(f) for f in args.files)
    schema = ["--schema", args.schema] if args.schema else []
    mdb = shutil.which("mariadb-binlog")
    if mdb is None:
        raise SystemExit("mariadb-binlog is not installed")
    base = dict(os.environ, PYTHONPATH=str(HERE.parent))
    cmds = [("`mariadb-binlog -v`", [mdb, "-v", *args.files], "compiled")]
    for engine in ("compiled", "python"):
        cmds += [
            (f"`dump --writesets --format jsonl` ({engine})",
             [PY, "-m", "repltool", "dump", "--writesets", "--format", "jsonl", *schema,
              *args.files], engine),
            (f"`certify --format jsonl` ({engine})",
             [PY, "-m", "repltool", "certify", "--format", "jsonl", *schema, *args.files],
             engine),
        ]
    load = os.getloadavg()
    results = []
    for label, cmd, engine in cmds:
        env = dict(base, REPLTOOL_ENGINE=engine)
        runs = [run(cmd, env) for _ in range(args.repeat)]
        results.append((label, statistics.median(w for w, _ in runs),
                        statistics.median(c for _, c in runs)))
        print(f"{label}: wall {results[-1][1]:.2f} s, cpu {results[-1][2]:.2f} s",
              file=sys.stderr)
    load_after = os.getloadavg()
    ref_wall, ref_cpu = results[0][1], results[0][2]
    lines = [f"\n### bench_writesets.py — {args.label}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n",
             f"Input: {args.label}, {len(args.files)} file(s), {size / 1e6:.1f} MB"
             f"{' with --schema' if schema else ''}. Median of {args.repeat} runs; load "
             f"average {load[0]:.1f} before, {load_after[0]:.1f} after (2 cores).\n",
             "| command | wall s | CPU s | × mariadb-binlog -v (wall) | × (CPU) |",
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
