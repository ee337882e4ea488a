"""Driver CPU of ``certify --mode group-replication --spark``, without Spark (issue 15).

Two synth MySQL 8.0 binlogs of 8 MB (``bench_stats.build_mysql80_log``, seeds 100
and 101, cached in ``bench/out/grdriver``) are read in-process as an executor
reads them (:func:`repltool.distributed.pairs.pairs_unit`: ``PackedPairs``,
pickled as sent).  Then, 5 times each, the driver's work is timed (CPU seconds):
unpickle the units and build the report

* ``objects``: from the unpacked pairs (one ``CertTransaction`` and ``CertResult``
  per transaction, as before the array path);
* ``arrays``: :class:`repltool.distributed.grpacked.PackedGroupCertifier` (the
  certifier in the compiled core: one call per unit);
* ``arrays-python``: the same with its Python loop over ``Certifier.assign`` (the
  code before the core certifier);
* ``arrays-hashed``: ``arrays`` over the units the text report's run gets since
  the executors read key hashes (``PairsSpec(hashed=True)``: ``wspack.pack_hashed``,
  no key descriptions); the others' units are the general reader's, described.

``share`` = driver / (driver + the executor CPU measured here).

Usage: ``python bench/bench_gr_driver.py objects|arrays|arrays-python|arrays-hashed [MB]``: ``MB`` per file
(default 8; other sizes are cached in ``bench/out/grdriver<MB>``).
"""
import os
import pickle
import sys
import time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
MB = int(sys.argv[2]) if len(sys.argv) > 2 else 8
OUT = Path(__file__).resolve().parent / "out" / ("grdriver" if MB == 8 else f"grdriver{MB}")
OUT.mkdir(parents=True, exist_ok=True)
paths = []
for i, seed in enumerate((100, 101)):
    p = OUT / f"binlog.00000{i+1}"
    if not p.exists():
        from bench_stats import build_mysql80_log
        build_mysql80_log(p, MB, seed=seed)
    paths.append(str(p))
from repltool.distributed.units import Task, Unit
from repltool.distributed.pairs import pairs_unit, PairsSpec
from repltool.distributed.wspack import unpack_pairs
from repltool.certify.stitched import PairsRun
from repltool.certify.report import ReportBuilder
run = PairsRun(paths, "group-replication")
hashed = sys.argv[1] == "arrays-hashed"
spec = PairsSpec(run.schema, run.options.history_size, statements=not hashed, hashed=hashed)
t = time.process_time()
blobs = [pickle.dumps(pairs_unit(Task("pairs", extra=spec), Unit(i, (p,))).payload) for i, p in enumerate(paths)]
executor = time.process_time() - t
try:
    from repltool.distributed import grpacked
except ImportError:
    grpacked = None
FIRST = (pairs_unit(Task("pairs", extra=spec), Unit(0, (paths[0],))).first if hashed
         else unpack_pairs(pickle.loads(blobs[0]))[0][0])
def objects():
    units = [pickle.loads(b) for b in blobs]
    pairs = [x for u in units for x in unpack_pairs(u)]
    run = PairsRun(paths, "group-replication")
    run.attach(iter(pairs), pairs[0][0])
    return ReportBuilder(run).build()
def arrays():
    units = (pickle.loads(b) for b in blobs)
    run = PairsRun(paths, "group-replication")
    run.attach(iter(()), FIRST)
    c = grpacked.PackedGroupCertifier(run.options, run.schema, lambda: None)
    run.attach_packed_parts(lambda: c.parts(units))
    rep = ReportBuilder(run).build()
    assert c.certified > 0
    return rep
which = sys.argv[1]
if which == "arrays-python":
    grpacked.core_applies = lambda *a: False
fn = objects if which == "objects" else arrays
reps = []
for _ in range(5):
    t = time.process_time(); rep = fn(); reps.append(time.process_time() - t)
n = rep.summary.before.transactions
best = min(reps)
print(f"{which}: {len(paths)} files {sum(map(os.path.getsize, paths))/1e6:.1f} MB, {n} trx, "
      f"executor CPU (pairs_unit, in-process) {executor:.2f} s, driver CPU min {best:.3f} s "
      f"(runs {' '.join(f'{r:.3f}' for r in reps)}), {best/n*1e6:.1f} us/trx, "
      f"share {best/(best+executor):.1%}, load {os.getloadavg()[0]:.2f}")

