"""Peak RSS and wall time of every reading command against input size (issue 19).

Two parts, each a table appended to ``--record`` (default: print only):

* the crafted logs of the never-explode sweep (``tests/hostile/_crafted.py``:
  compressed bombs, tiny-event floods in a payload, wide tables, shared JSON
  sub-documents, Table_map and FDE floods, huge GTID sets, MariaDB compressed
  rows, one transaction of 200,000 keyed rows), at the sizes given, through dump, dump -v, dump --writesets, stats,
  check, schedule, certify and explain;
* ``--synth 100M,500M``: ``check`` and ``schedule`` on synthetic MySQL 8.0
  binlogs of those sizes (built by ``repltool synth``, cached in ``--out``).

Every run is a subprocess; peak RSS comes from ``/usr/bin/time -f %M`` through
``bench/run.py``'s ``timed`` (one run each: these are memory figures).  The
commands run in this checkout's root, so its ``repltool`` is the one measured:
for "before" figures, run an older checkout's copy of this script.

Usage::

    python bench/bench_bounds.py [--crafted flood:8,flood:32,gtidset:250000] \
        [--synth 100M,500M] [--out /tmp/bench] [--record bench/RESULTS.md] [--label after]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from run import CORPUS, MB, parse_size, repltool, synth_log, timed  # noqa: E402

from hostile._crafted import COMMANDS, CRAFTED  # noqa: E402

#: name -> the builder's size argument
SIZE_ARG = {"flood": "mib", "tablemaps": "n", "fdes": "n", "gtidset": "n", "maria": "mib",
            "keyed": "rows"}
DEFAULT_CRAFTED = ("bomb,wide,json,too_wide,nested,flood:8,flood:32,tablemaps:50,tablemaps:200,"
                   "fdes:5000,fdes:20000,gtidset:250000,gtidset:1000000,maria:1,maria:4,keyed:200000")


def crafted_rows(specs: list[str], out: Path) -> list[str]:
    lines = ["| input | size arg | bytes | command | exit (0/1/3 ok) | seconds | peak RSS MiB |",
             "|---|---|---|---|---|---|---|"]
    for spec in specs:
        name, _, arg = spec.partition(":")
        kw = {SIZE_ARG[name]: int(arg)} if arg else {}
        path = out / f"crafted-{name}-{arg or 'default'}.bin"
        path.write_bytes(CRAFTED[name](CORPUS, **kw))  # type: ignore[call-arg]
        size = path.stat().st_size
        for cmd, argv in COMMANDS.items():
            t = timed(repltool(*argv, str(path)), 1, env=dict(os.environ),
                      ok_codes=(0, 1, 3))
            row = (f"| {name} | {arg or '-'} | {size:,} | `{' '.join(argv)}` | "
                   f"{'ok' if t.ok else t.note[:40]} | {t.seconds:.1f} | {t.rss_kib / 1024:.0f} |")
            print(row, flush=True)
            lines.append(row)
        path.unlink()
    return lines


def synth_rows(sizes: list[str], out: Path) -> list[str]:
    lines = ["| input | bytes | command | seconds | peak RSS MiB |", "|---|---|---|---|---|"]
    for s in sizes:
        log, _schema = synth_log(out, parse_size(s))
        size = log.stat().st_size
        for argv in (["check", str(log)], ["schedule", str(log)]):
            t = timed(repltool(*argv), 1, env=dict(os.environ))
            row = (f"| synth {size / MB:.0f} MB | {size:,} | `{argv[0]}` | {t.seconds:.1f} | "
                   f"{t.rss_kib / 1024:.0f} |")
            print(row, flush=True)
            lines.append(row)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--crafted", default=DEFAULT_CRAFTED,
                    help="NAME[:SIZE],... (empty: none)")
    ap.add_argument("--synth", default="", help="synthetic log sizes, e.g. 100M,500M")
    ap.add_argument("--out", type=Path, default=Path("/tmp/repltool-bench"))
    ap.add_argument("--label", default="", help="a word for the section title (before/after)")
    ap.add_argument("--record", type=Path, help="append a Markdown section to this file")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [f"## bench_bounds {args.label} - {time.strftime('%Y-%m-%d %H:%M')}", "",
             f"PYTHONPATH={os.environ.get('PYTHONPATH', '')!r}; load "
             f"{Path('/proc/loadavg').read_text().split()[:3]}; one run each, "
             "peak RSS from /usr/bin/time.", ""]
    if args.crafted:
        lines += crafted_rows(args.crafted.split(","), args.out) + [""]
    if args.synth:
        lines += synth_rows(args.synth.split(","), args.out) + [""]
    text = "\n".join(lines) + "\n"
    if args.record:
        with args.record.open("a") as fh:
            fh.write("\n" + text)
    print(text)


if __name__ == "__main__":
    main()
