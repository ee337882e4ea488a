"""Benchmark ``repltool stats`` (full and ``--clock-only``) against ``mariadb-binlog``.

Inputs, built or found by the script:

* a MySQL 8.0 binlog of about ``--size-mb`` MB written by repltool's own encoder
  (:class:`repltool.synth.BinlogBuilder`): transactions of GTID, BEGIN,
  Table_map, Write_rows (2-12 rows of ~120 bytes), Xid, commit groups of 1-6;
  cached in ``bench/out/`` and rebuilt when missing;
* a MariaDB binlog of about ``--size-mb`` MB written by a throw-away ``mariadbd``
  (``tests/fixtures/mariadb.py``'s server; ROW format, CRC32, annotated rows):
  transactions of 1-4 multi-row INSERTs of ~1 KB rows from 4 sessions; cached in
  ``bench/out/`` (skipped when mariadbd or PyMySQL is missing);
* the real MariaDB 10.11 logs of ``../shared/corpus/mariadb`` (``small`` and the 18
  files of ``rotation``), when the corpus is there.

``repltool stats`` runs once per engine (``REPLTOOL_ENGINE=compiled`` and ``=python``).

Every command runs as a subprocess (``python -m repltool ...`` output to
/dev/null); the figure is the median wall time of ``--repeat`` runs, MB/s is
file bytes / median, and peak RSS is the child's ``ru_maxrss``.

Usage::

    python bench/bench_stats.py [--size-mb 200] [--repeat 3] [--record bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
CORPUS = HERE.parent.parent / "shared" / "corpus"


def build_mysql80_log(path: Path, size_mb: int, seed: int = 11) -> None:
    """Write a MySQL 8.0 binlog of about ``size_mb`` MB (atomically)."""
    from repltool.binlog import structs as S
    from repltool.binlog.constants import EventType
    from repltool.synth import BinlogBuilder, SampleTable, query_body

    rng = random.Random(seed)
    sid = uuid.UUID(int=rng.getrandbits(128), version=4)
    table = SampleTable(201, "bench", "orders")
    tmp = path.with_suffix(".tmp")
    ts_us = 1_760_000_000_000_000
    begin = {t: query_body(t, "bench", "BEGIN") for t in range(100, 132)}
    table_map = table.table_map_body()
    with open(tmp, "wb") as fh:
        b = BinlogBuilder(fh)
        b.start(ts_us // 1_000_000, (sid, 0))
        seq = gno = last_group_end = 0
        while b.pos < size_mb * 1_000_000:
            for _ in range(rng.randint(1, 6)):
                seq += 1
                gno += 1
                ts_us += rng.randint(20, 400)
                rows = [(rng.randint(1, 10**9), "x" * rng.randint(60, 120))
                        for _ in range(rng.randint(2, 12))]
                bodies = [(EventType.QUERY_EVENT, begin[rng.randint(100, 131)]),
                          (EventType.TABLE_MAP_EVENT, table_map),
                          (EventType.WRITE_ROWS_EVENT, table.write_rows_body(rows)),
                          (EventType.XID_EVENT, S.xid_body.build({"xid": gno}))]
                b.transaction(ts_us, sid, gno, last_group_end, seq, bodies)
            last_group_end = seq
        b.stop(ts_us // 1_000_000)
    os.replace(tmp, path)


def build_mariadb_log(path: Path, size_mb: int, seed: int = 7) -> bool:
    """Write a MariaDB binlog of about ``size_mb`` MB to ``path`` with a live server;
    False when mariadbd / PyMySQL are not installed."""
    import tempfile
    import threading
    sys.path.insert(0, str(HERE.parent))
    from tests.fixtures.mariadb import Server, _binary
    mariadbd, install_db = _binary("mariadbd"), _binary("mariadb-install-db")
    try:
        import pymysql  # noqa: F401
    except ImportError:
        return False
    if mariadbd is None or install_db is None:
        return False
    with tempfile.TemporaryDirectory(prefix="rtb", dir="/tmp") as tmp:
        server = Server(Path(tmp))
        try:
            server.install(install_db)
            server.start(mariadbd)
            conn = server.connect()
            cur = conn.cursor()
            cur.execute("SET GLOBAL binlog_commit_wait_count=0")
            cur.execute("CREATE DATABASE bench")
            cur.execute("CREATE TABLE bench.orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
                        "customer INT NOT NULL, amount DECIMAL(12,2), note VARCHAR(1000))")
            conn.close()
            target = size_mb * 1_000_000
            log = server.binlogs()[-1]

            def session(k: int) -> None:
                rng = random.Random(seed * 10 + k)
                c = server.connect()
                cu = c.cursor()
                while log.stat().st_size < target:
                    cu.execute("BEGIN")
                    for _ in range(rng.randint(1, 4)):
                        n = rng.randint(1, 3)
                        cu.execute("INSERT INTO bench.orders (customer, amount, note) VALUES "
                                   + ",".join(["(%s,%s,%s)"] * n),
                                   [v for _ in range(n) for v in (
                                       rng.randint(1, 10**6), rng.randint(1, 10**7) / 100,
                                       "x" * rng.randint(600, 1000))])
                    cu.execute("COMMIT")
                c.close()

            threads = [threading.Thread(target=session, args=(k,)) for k in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            server.stop()
        tmp_out = path.with_suffix(".tmp")
        shutil.copyfile(server.binlogs()[0], tmp_out)
        os.replace(tmp_out, path)
    return True


def timed(cmd: list[str], repeat: int, env: dict[str, str] | None = None
          ) -> tuple[float, int]:
    """Median wall seconds of ``repeat`` runs, and the child's peak RSS (KiB, ``wait4``)."""
    times, rss = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=None if env is None else {**os.environ, **env})
        _, status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - t)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed with exit status {proc.returncode}")
        rss = max(rss, usage.ru_maxrss)
    return statistics.median(times), rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--record", type=Path, help="append a Markdown section to this file")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    log80 = OUT / f"mysql80-{args.size_mb}mb.000001"
    if not log80.exists():
        t = time.perf_counter()
        build_mysql80_log(log80, args.size_mb)
        print(f"built {log80} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    inputs: list[tuple[str, list[Path]]] = [(f"MySQL 8.0 synthetic ({log80.name})", [log80])]
    logmaria = OUT / f"mariadb-{args.size_mb}mb.000001"
    if not logmaria.exists():
        t = time.perf_counter()
        if build_mariadb_log(logmaria, args.size_mb):
            print(f"built {logmaria} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    if logmaria.exists():
        inputs.append((f"MariaDB 10.11 live server ({logmaria.name})", [logmaria]))
    if (CORPUS / "mariadb").is_dir():
        inputs.append(("MariaDB 10.11 real: small", [CORPUS / "mariadb/small/mysql-bin.000001"]))
        inputs.append(("MariaDB 10.11 real: rotation (18 files)",
                       sorted((CORPUS / "mariadb/rotation").glob("mysql-bin.0*"))))
    repl = [sys.executable, "-m", "repltool"]
    mdb = shutil.which("mariadb-binlog")
    rows = []
    for label, files in inputs:
        size = sum(f.stat().st_size for f in files)
        names = [str(f) for f in files]
        stats = repl + ["stats", "--format", "json", *names]
        cmds = [(f"REPLTOOL_ENGINE={e} repltool stats --format json", stats, e)
                for e in ("compiled", "python")]
        cmds.append(("repltool stats --clock-only --format json",
                     repl + ["stats", "--clock-only", "--format", "json", *names], None))
        if mdb:
            cmds.append(("mariadb-binlog (default)", [mdb, *names], None))
            cmds.append(("mariadb-binlog --verify-binlog-checksum",
                         [mdb, "--verify-binlog-checksum", *names], None))
        for name, cmd, engine in cmds:
            secs, rss = timed(cmd, args.repeat, {"REPLTOOL_ENGINE": engine} if engine else None)
            rows.append((label, size, name, secs, size / secs / 1e6, rss / 1024))
            print(f"{label:45} {name:45} {secs:7.3f} s {size / secs / 1e6:8.1f} MB/s "
                  f"{rss / 1024:7.1f} MiB", flush=True)
    if args.record:
        write_record(args.record, rows, args.repeat)


def write_record(path: Path, rows: list[tuple[str, int, str, float, float, float]],
                 repeat: int) -> None:
    mdb = shutil.which("mariadb-binlog")
    version = subprocess.run([mdb, "--version"], capture_output=True, text=True).stdout.strip() \
        if mdb else "not installed"
    lines = [
        f"\n## repltool stats — {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.platform()}; mariadb-binlog: {version}. "
        f"Median of {repeat} runs, wall time, output to /dev/null. "
        "Command: `python bench/bench_stats.py --record bench/RESULTS.md`.\n",
        "| input | bytes | command | seconds | MB/s | peak RSS MiB |",
        "|---|---|---|---|---|---|",
    ]
    for label, size, name, secs, mbs, rss in rows:
        lines.append(f"| {label} | {size:,} | `{name}` | {secs:.3f} | {mbs:.1f} | {rss:.1f} |")
    with open(path, "a") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
