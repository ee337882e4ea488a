"""``rewrite_log`` alone: CPU seconds to write one re-tagged copy with the clocks of a
real certify run.

The clocks come from ``certify --mode writeset --pk-only`` of the file through the
library (``CertifyRun`` + ``ReportBuilder`` with a ``ClockMap`` sink) and are cached
in ``WORK/<name>.<size>.clocks`` (three int64 columns), so later runs time the rewrite only.
Each round writes ``WORK/<name>.out`` (deleted at the end unless ``--keep``) and prints
CPU s (user+sys of this process), wall s, the report's counts and the route counters of
:class:`repltool.binlog.rewrite.Rewriter` (``chunk_copies`` etc., where present).

Usage::

    python bench/bench_retag.py FILE --work DIR [--rounds 3] [--encoding mysql]
        [--reference] [--keep]
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from array import array
from pathlib import Path


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def clocks_for(path: str, work: Path) -> object:
    from repltool.certify.retag import ClockColumns
    cache = work / f"{Path(path).name}.{os.path.getsize(path)}.clocks"
    if not cache.exists():
        from repltool.certify import Mode
        from repltool.certify.report import CertifyRun, ReportBuilder
        from repltool.certify.retag import ClockMap
        from repltool.collector import few_collections
        clocks = ClockMap()
        c = _cpu()
        with few_collections():
            ReportBuilder(CertifyRun([path], Mode.WRITESET), [clocks]).build()
        cols = clocks.by_file[path]
        with open(cache, "wb") as fh:
            for a in (cols._offsets, cols._lc, cols._sn):
                fh.write(len(a).to_bytes(8, "little"))
                a.tofile(fh)
        print(f"certified {path}: {len(cols):,} clocks in {_cpu() - c:.1f} CPU s -> {cache}")
    columns = []
    with open(cache, "rb") as fh:
        for _ in range(3):
            n = int.from_bytes(fh.read(8), "little")
            a = array("q")
            a.fromfile(fh, n)
            columns.append(a)
    return ClockColumns.from_columns(*columns)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--work", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--encoding", default="mysql")
    ap.add_argument("--reference", action="store_true",
                    help="time rewrite_log_reference instead")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    from repltool.binlog import rewrite
    clocks = clocks_for(a.file, work)
    fn = rewrite.rewrite_log_reference if a.reference else rewrite.rewrite_log
    out = work / (Path(a.file).name + ".out")
    for _ in range(a.rounds):
        t, c = time.perf_counter(), _cpu()
        r = fn(a.file, out, clocks, encoding=a.encoding)
        cpu, wall = _cpu() - c, time.perf_counter() - t
        route = getattr(rewrite, "last_route", None)
        print(f"{fn.__name__} {a.encoding}: {cpu:.2f} CPU s, {wall:.2f} s wall; "
              f"events {r.events:,} rewritten {r.gtid_events_rewritten:,} "
              f"log_pos_updated {r.log_pos_updated:,} delta {r.bytes_delta:,}"
              + (f"; route {route}" if route else ""), flush=True)
    if not a.keep:
        os.unlink(out)


if __name__ == "__main__":
    main()
