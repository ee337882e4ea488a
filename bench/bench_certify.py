"""Benchmark ``repltool certify``: transactions/s, MB/s and peak memory.

Inputs: the real MariaDB 10.11 logs of ``../shared/corpus/mariadb`` - the 18
files of ``rotation`` (the largest set) and ``small`` (the largest single
file) - with each set's ``schema.sql``.  Each run is a subprocess
(``python -m repltool certify ...``, output to /dev/null); the figure is the
median wall time of ``--repeat`` runs, MB/s is input bytes / median,
transactions/s is the number of transactions / median, peak RSS the child's
``ru_maxrss``.  The ``--output`` run also writes re-tagged copies: MariaDB
logs carry no logical clock, so it runs on a MySQL 8.0 log built by the
project's encoder (``--size-mb``).

Usage::

    python bench/bench_certify.py [--repeat 3] [--size-mb 50] [--record bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
CORPUS = HERE.parent.parent / "shared" / "corpus"
sys.path.insert(0, str(HERE))


def _run(args: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one ``python -m repltool`` child."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-W", "ignore", "-m", "repltool", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"repltool {' '.join(args)} failed ({proc.returncode}): "
                         f"{err.decode()[-500:]}")
    return wall, usage.ru_maxrss / 1024


def _measure(args: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and peak RSS; each run in its own grandchild so ru_maxrss is per run."""
    walls, peaks = [], []
    for _ in range(repeat):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            wall, peak = _run(args)
            os.write(w, json.dumps([wall, peak]).encode())
            os._exit(0)
        os.close(w)
        data = b""
        while chunk := os.read(r, 4096):
            data += chunk
        os.close(r)
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            raise SystemExit(f"benchmark child failed for {args}")
        wall, peak = json.loads(data)
        walls.append(wall)
        peaks.append(peak)
    return statistics.median(walls), max(peaks)


def _transactions(files: list[Path]) -> int:
    from repltool.binlog import read_transactions
    return sum(not t.truncated for t in read_transactions([str(f) for f in files]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size-mb", type=int, default=50)
    ap.add_argument("--record", type=Path, help="append the results table to this file")
    opts = ap.parse_args()

    cases: list[tuple[str, list[Path], list[str]]] = []
    for name, label in (("rotation", "rotation (18 files)"), ("small", "small (1 file)")):
        d = CORPUS / "mariadb" / name
        if not d.is_dir():
            print(f"corpus set {d} missing: skipped", file=sys.stderr)
            continue
        files = sorted(d.glob("mysql-bin.0*"))
        schema = ["--schema", str(d / "schema.sql")]
        cases.append((f"MariaDB 10.11 real: {label}", files, ["--mode", "writeset", *schema]))
        cases.append((f"MariaDB 10.11 real: {label}", files,
                      ["--mode", "group-replication", *schema]))
    from bench_stats import build_mysql80_log
    OUT.mkdir(exist_ok=True)
    synth = OUT / f"mysql80-{opts.size_mb}mb.000001"
    if not synth.exists():
        build_mysql80_log(synth, opts.size_mb)
    retag_dir = Path(tempfile.mkdtemp(prefix="bench-certify-"))
    # the log comes without a schema.sql: --pk-only, so that --output is accepted
    cases.append((f"MySQL 8.0 synthetic ({synth.name})", [synth],
                  ["--mode", "writeset", "--pk-only"]))
    cases.append((f"MySQL 8.0 synthetic ({synth.name})", [synth],
                  ["--mode", "writeset", "--pk-only", "--output", str(retag_dir)]))

    rows = []
    for label, files, args in cases:
        size = sum(f.stat().st_size for f in files)
        n = _transactions(files)
        wall, peak = _measure(["certify", *args, *map(str, files)], opts.repeat)
        shown = " ".join("DIR" if a == str(retag_dir) else a if not a.startswith("/") else Path(a).name
                         for a in args)
        rows.append(f"| {label} | {size:,} | {n:,} | `certify {shown}` | {wall:.2f} | "
                    f"{n / wall:,.0f} | {size / wall / 1e6:.1f} | {peak:.0f} |")
        print(rows[-1], flush=True)
    for f in retag_dir.iterdir():
        f.unlink()
    retag_dir.rmdir()

    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join([
        f"\n### bench_certify.py — {when}\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; median of {opts.repeat} runs, peak RSS of the child.",
        f"Command: `python bench/bench_certify.py --repeat {opts.repeat} --size-mb {opts.size_mb}`"
        "\n",
        "| input | bytes | transactions | command | wall s | trx/s | MB/s | peak RSS MiB |",
        "|---|---|---|---|---|---|---|---|", *rows, ""])
    print(text)
    if opts.record:
        with open(opts.record, "a") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
