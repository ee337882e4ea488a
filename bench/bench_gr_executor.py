"""Executor CPU of ``certify --mode group-replication --spark`` per unit, in-process (issue 15).

Runs :func:`repltool.distributed.pairs.pairs_unit` on each FILE as an executor does
for the text report, the result pickled as Spark sends it, and prints CPU seconds
(``time.process_time``), CPU seconds per GB and the pickled size:

* ``described``: the units with the keys' descriptions (``PairsSpec(hashed=False)``:
  the WriteKey reader, :func:`~repltool.distributed.wspack.pack_pairs`; the path
  before issue 15's hash units, and still the JSON lines' path);
* ``hashed``: ``PairsSpec(hashed=True)`` (what ``spark_pairs`` asks for the text
  report: the key-hash reader, :func:`~repltool.distributed.wspack.pack_hashed`).

For reference, ``single`` runs ``repltool certify --mode group-replication FILE...``
in-process (CPU of the run, the CLI's imports excluded).

Usage: ``python bench/bench_gr_executor.py described|hashed|single FILE...``
"""
import io
import os
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
which, *paths = sys.argv[1:]
from repltool.certify.stitched import PairsRun  # noqa: E402
from repltool.cli import run as cli_run  # noqa: E402
from repltool.distributed.pairs import PairsSpec, pairs_unit  # noqa: E402
from repltool.distributed.units import Task, Unit  # noqa: E402

size = sum(os.path.getsize(p) for p in paths)
if which == "single":
    out = io.StringIO()
    sys.stdout, real = out, sys.stdout
    t = time.process_time()
    code = cli_run(["certify", "--mode", "group-replication", *paths])
    cpu = time.process_time() - t
    sys.stdout = real
    print(f"single: exit {code}, {cpu:.2f} CPU s, {cpu / size * 2**30:.1f} CPU s/GB, "
          f"load {os.getloadavg()[0]:.2f}")
    raise SystemExit(0)
if which not in ("described", "hashed"):
    raise SystemExit("described|hashed|single FILE...")
run = PairsRun(paths, "group-replication")
spec = PairsSpec(run.schema, run.options.history_size, statements=False,
                 hashed=which == "hashed")
cpu, sent = 0.0, 0
for i, p in enumerate(paths):
    t = time.process_time()
    blob = pickle.dumps(pairs_unit(Task("pairs", extra=spec), Unit(i, (p,))),
                        protocol=pickle.HIGHEST_PROTOCOL)
    cpu += time.process_time() - t
    sent += len(blob)
    del blob
print(f"{which}: {len(paths)} file(s) {size / 2**20:.0f} MiB, {cpu:.2f} CPU s, "
      f"{cpu / size * 2**30:.1f} CPU s/GB, sent {sent / 2**20:.1f} MiB, "
      f"load {os.getloadavg()[0]:.2f}")
