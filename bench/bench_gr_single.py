"""Single-process ``certify --mode group-replication`` CPU, Python certifier vs the core (issue 15).

Runs ``repltool certify --mode group-replication [ARGS] FILE`` in this process, either
as shipped (``core``: the certifier in the compiled core where the options allow,
:mod:`repltool.certify.grcore`) or with the Python certifier
(``python``: ``repltool.certify.report.core_group_certifier`` patched to None, i.e.
the code before the core certifier).  Prints user+sys CPU seconds of the run
(start-up included) to stderr; run it under ``/usr/bin/time`` for peak RSS.

Usage: ``python bench/bench_gr_single.py core|python FILE [certify options...]``
"""
import io
import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
which, path, *extra = sys.argv[1:]
from repltool.cli import run  # noqa: E402
if which == "python":
    import repltool.certify.report as report
    report.core_group_certifier = lambda *a: None
elif which != "core":
    raise SystemExit("core|python")
out = io.StringIO()
sys.stdout, real = out, sys.stdout
code = run(["certify", "--mode", "group-replication", *extra, path])
sys.stdout = real
r = resource.getrusage(resource.RUSAGE_SELF)
from repltool.certify.grcore import core_gr_transactions  # noqa: E402
print(f"{which}: exit {code}, {r.ru_utime + r.ru_stime:.2f} CPU s, "
      f"core transactions {core_gr_transactions()}, output {len(out.getvalue())} chars, "
      f"load {os.getloadavg()[0]:.2f}", file=sys.stderr)
