"""repltool against its peers, back to back on the same files (issue 20's "Must show").

Inputs (built once, cached under ``bench/out/``):

* a real MariaDB binlog of >= 100 MB written by the live-server fixture
  (``bench/make_maria_log.py``; its server directory is kept so the same binlog
  can be served again to a replication client);
* a MySQL 8.0 binlog of about the same size written by ``repltool synth``
  (``bench/run.py``'s :func:`synth_log`), and a ~1 GB one for peak RSS.

Pairs, each run back to back (ours, then the peer; ``--repeat`` alternates them):

=========================================================  ================================================
repltool (compiled engine, ``REPLTOOL_ENGINE=compiled``)   peer
=========================================================  ================================================
``stats``                                                  ``mariadb-binlog``
``dump --writesets --format jsonl --schema S``             ``mariadb-binlog -v``
``certify --format jsonl --schema S``                      ``mariadb-binlog -v``
``dump -v``                                                ``mariadb-binlog -v --base64-output=decode-rows``
``dump --writesets`` / ``stats``                           python-mysql-replication (see below)
=========================================================  ================================================

Every command is a child process with its output to /dev/null; per command: wall
seconds, CPU seconds (user+sys of the child and its children, ``wait4``), peak RSS
(``/usr/bin/time -f %M``: the command's own ``ru_maxrss``, not the copy of this
process it was forked from; ``wait4``'s when ``/usr/bin/time`` is missing).  A
ratio is peer time / repltool time (> 1: repltool is faster), in wall and in CPU.

python-mysql-replication (``pip install mysql-replication``) reads the same
MariaDB binlog from the fixture's server, restarted on the cached datadir, as a
replication client: ``BinLogStreamReader(is_mariadb=True, auto_position="",
blocking=False, resume_stream=True, only_events=[Write/Update/DeleteRowsEvent,
MariadbGtidEvent])``, touching every row (``event.rows``).  Its child's CPU is
reported, and the server's CPU for the same stream beside it.

Peak RSS against size: ``stats``, ``dump --writesets``, ``certify``, ``check`` on the
~100 MB and the ~1 GB synth log (compiled engine, one run each).

The load average is recorded before and after (the machine may be shared: the
ratios, measured back to back, are the figures that count).

Usage::

    python bench/bench_peers.py [--repeat 1] [--big-size 1G] [--no-pmr] [--no-big]
                                [--record bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
OUT = HERE / "out" / "peers"
MB = 1_000_000
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

# (key, our command, peer key, target ratio)
PAIRS = [
    ("stats", "mb", 3.0),
    ("writesets", "mbv", 1.5),
    ("certify", "mbv", 1.0),
    ("dumpv", "mbdecode", 1.0),
]
TARGET_PMR = 10.0


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mib: float
    code: int
    err: str = ""
    stdout: bytes = b""


def run(cmd: list[str], *, env: dict[str, str] | None = None, capture: bool = False) -> Run:
    """One child: wall, user+sys CPU (wait4), peak RSS; stdout to /dev/null unless ``capture``."""
    fd, rss_name = tempfile.mkstemp(prefix="rt-peers-rss-")
    os.close(fd)
    wrapped = [GNU_TIME, "-f", "%M", "-o", rss_name, *cmd] if GNU_TIME else cmd
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out if capture else subprocess.DEVNULL,
                                stderr=err, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()[-2000:]
    rss = usage.ru_maxrss
    if GNU_TIME:
        try:
            rss = int(Path(rss_name).read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
    Path(rss_name).unlink(missing_ok=True)
    return Run(wall, usage.ru_utime + usage.ru_stime, rss / 1024, code,
               stderr.decode(errors="replace").strip()[-300:], stdout)


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def engine_env() -> dict[str, str]:
    return {**os.environ, "REPLTOOL_ENGINE": "compiled",
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                          if p)}


def commands(files: list[Path], schema: Path) -> dict[str, tuple[str, list[str]]]:
    names = [str(f) for f in files]
    rt = [PY, "-m", "repltool"]
    mb = shutil.which("mariadb-binlog") or "mariadb-binlog"
    return {
        "stats": ("repltool stats", [*rt, "stats", *names]),
        "writesets": ("repltool dump --writesets --format jsonl --schema",
                      [*rt, "dump", "--writesets", "--format", "jsonl", "--schema", str(schema),
                       *names]),
        "certify": ("repltool certify --format jsonl --schema",
                    [*rt, "certify", "--format", "jsonl", "--schema", str(schema), *names]),
        "dumpv": ("repltool dump -v", [*rt, "dump", "-v", *names]),
        "check": ("repltool check", [*rt, "check", *names]),
        "mb": ("mariadb-binlog", [mb, *names]),
        "mbv": ("mariadb-binlog -v", [mb, "-v", *names]),
        "mbdecode": ("mariadb-binlog -v --base64-output=decode-rows",
                     [mb, "-v", "--base64-output=decode-rows", *names]),
    }


def measure_pairs(label: str, files: list[Path], schema: Path, repeat: int,
                  only: set[str]) -> dict[str, list[Run]]:
    """Each pair back to back, ``repeat`` times; a peer shared by two pairs runs once per round."""
    cmds = commands(files, schema)
    env = engine_env()
    got: dict[str, list[Run]] = {}
    for _ in range(repeat):
        ran_peer: set[str] = set()
        for ours, peer, _target in PAIRS:
            if ours not in only:
                continue
            for key in (ours, peer):
                if key in ran_peer:
                    continue
                name, cmd = cmds[key]
                r = run(cmd, env=env)
                got.setdefault(key, []).append(r)
                if key == peer:
                    ran_peer.add(key)
                print(f"{label:28} {name:50} {r.wall:8.2f} s wall {r.cpu:8.2f} s CPU "
                      f"{r.rss_mib:7.1f} MiB  exit {r.code}  load {load()}", flush=True)
    return got


def best(runs: list[Run]) -> Run:
    """The median run by wall time."""
    return sorted(runs, key=lambda r: r.wall)[len(runs) // 2]


def count_decoded_rows(files: list[Path]) -> int | None:
    """Rows ``mariadb-binlog -v --base64-output=decode-rows`` prints (``### INSERT/UPDATE/DELETE``)."""
    mb = shutil.which("mariadb-binlog")
    if mb is None:
        return None
    p1 = subprocess.Popen([mb, "-v", "--base64-output=decode-rows", *map(str, files)],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p2 = subprocess.run(["grep", "-c", "-E", "^### (INSERT INTO|UPDATE|DELETE FROM) "],
                        stdin=p1.stdout, capture_output=True, text=True)
    assert p1.stdout is not None
    p1.stdout.close()
    p1.wait()
    return int(p2.stdout.strip() or 0)


def stats_counts(files: list[Path]) -> dict[str, int]:
    """Rows events and transactions of ``repltool stats --format json``."""
    r = subprocess.run([PY, "-m", "repltool", "stats", "--format", "json", *map(str, files)],
                       capture_output=True, env=engine_env(), cwd=ROOT, check=True)
    total = json.loads(r.stdout)["total"]
    rows_events = sum(n for t, n in total["event_types"].items() if "_ROWS_EVENT" in t
                      and not t.startswith("ANNOTATE"))
    return {"rows_events": rows_events, "transactions": total["transactions"]}


# ---- python-mysql-replication ----

def pmr_child(socket: str) -> int:
    """Stream the server's binlogs from the start and touch every row; print counts (JSON)."""
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import MariadbGtidEvent
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
    stream = BinLogStreamReader(
        connection_settings={"unix_socket": socket, "user": "root", "passwd": ""},
        server_id=4242, is_mariadb=True, auto_position="", blocking=False, resume_stream=True,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, MariadbGtidEvent],
        enable_logging=False)
    counts = {"gtids": 0, "rows_events": 0, "rows": 0}
    try:
        for ev in stream:
            if isinstance(ev, MariadbGtidEvent):
                counts["gtids"] += 1
            else:
                counts["rows_events"] += 1
                counts["rows"] += len(ev.rows)
    finally:
        stream.close()
    print(json.dumps(counts))
    return 0


def server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_pmr(server_dir: Path, files: list[Path], schema: Path, repeat: int
                ) -> tuple[dict[str, list[Run]], dict, float, str]:
    """PMR streaming from the restarted fixture server, back to back with
    ``dump --writesets`` and ``stats`` on the copied file."""
    try:
        import pymysqlreplication  # noqa: F401
        version = subprocess.run([PY, "-m", "pip", "show", "mysql-replication"],
                                 capture_output=True, text=True).stdout
        version = next((ln.split(":", 1)[1].strip() for ln in version.splitlines()
                        if ln.startswith("Version:")), "?")
    except ImportError:
        raise SystemExit("python-mysql-replication is not installed "
                         "(pip install mysql-replication), or run with --no-pmr")
    sys.path.insert(0, str(ROOT))
    from tests.fixtures.mariadb import Server, server_binaries
    mariadbd, _ = server_binaries()
    server = Server(server_dir)
    server.start(mariadbd)
    got: dict[str, list[Run]] = {}
    counts: dict = {}
    server_secs = 0.0
    cmds = commands(files, schema)
    env = engine_env()
    try:
        assert server.proc is not None
        for _ in range(repeat):
            for key in ("writesets", "stats"):
                r = run(cmds[key][1], env=env)
                got.setdefault(key, []).append(r)
                print(f"{'pmr round':28} {cmds[key][0]:50} {r.wall:8.2f} s wall "
                      f"{r.cpu:8.2f} s CPU {r.rss_mib:7.1f} MiB  exit {r.code}", flush=True)
            c0 = server_cpu(server.proc.pid)
            r = run([PY, str(Path(__file__).resolve()), "--pmr-child", str(server.socket)],
                    capture=True)
            server_secs = server_cpu(server.proc.pid) - c0
            got.setdefault("pmr", []).append(r)
            if r.code == 0:
                counts = json.loads(r.stdout.decode().strip().splitlines()[-1])
            print(f"{'pmr round':28} {'python-mysql-replication (streaming)':50} {r.wall:8.2f} s "
                  f"wall {r.cpu:8.2f} s CPU {r.rss_mib:7.1f} MiB  exit {r.code}  server CPU "
                  f"{server_secs:.2f} s  {counts}  {r.err[-200:] if r.code else ''}", flush=True)
    finally:
        server.stop()
    return got, counts, server_secs, version


# ---- the record ----

def x(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="rounds per pair (median reported)")
    ap.add_argument("--maria-size-mb", type=int, default=110,
                    help="size of the MariaDB log to build when not cached")
    ap.add_argument("--big-size", default="1G", help="the large synth log for peak RSS")
    ap.add_argument("--pmr", action=argparse.BooleanOptionalAction, default=True,
                    help="measure python-mysql-replication (needs mysql-replication)")
    ap.add_argument("--big", action=argparse.BooleanOptionalAction, default=True,
                    help="measure peak RSS on the ~1 GB log")
    ap.add_argument("--only", default="stats,writesets,certify,dumpv",
                    help="which pairs to run (stats, writesets, certify, dumpv)")
    ap.add_argument("--record", type=Path, default=None,
                    help="append a Markdown section to this file (e.g. bench/RESULTS.md)")
    ap.add_argument("--pmr-child", metavar="SOCKET", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.pmr_child:
        return pmr_child(args.pmr_child)

    sys.path.insert(0, str(HERE))
    from make_maria_log import maria_log
    from run import parse_size, synth_log

    started = datetime.now(timezone.utc)
    maria_files, maria_schema, server_dir, maria_desc = maria_log(size_mb=args.maria_size_mb)
    maria_bytes = sum(f.stat().st_size for f in maria_files)
    synth_file, synth_schema = synth_log(OUT, parse_size(f"{maria_bytes / (1 << 20):.0f}M"))
    synth_bytes = synth_file.stat().st_size
    big = synth_log(OUT, parse_size(args.big_size)) if args.big else None

    load_before = load()
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    inputs = [(f"MariaDB live ({maria_bytes / MB:.0f} MB)", maria_files, maria_schema, maria_bytes),
              (f"MySQL 8.0 synth ({synth_bytes / MB:.0f} MB)", [synth_file], synth_schema,
               synth_bytes)]
    results = []
    for label, files, schema, nbytes in inputs:
        results.append((label, nbytes, measure_pairs(label, files, schema, args.repeat, only)))
    pmr = None
    if args.pmr:
        pmr = measure_pmr(server_dir, maria_files, maria_schema, args.repeat)
        pmr_counts_ref = {**stats_counts(maria_files),
                          "decoded_rows": count_decoded_rows(maria_files)}
    rss_rows = []
    if big is not None:
        for f, schema in ((synth_file, synth_schema), big):
            cmds = commands([f], schema)
            for key in ("stats", "writesets", "certify", "check"):
                r = run(cmds[key][1], env=engine_env())
                rss_rows.append((f.stat().st_size, cmds[key][0], r))
                print(f"{f.stat().st_size / MB:6.0f} MB {cmds[key][0]:50} {r.wall:8.2f} s wall "
                      f"{r.cpu:8.2f} s CPU {r.rss_mib:7.1f} MiB  exit {r.code}", flush=True)
    load_after = load()

    import repltool
    mbv = subprocess.run([shutil.which("mariadb-binlog") or "mariadb-binlog", "--version"],
                         capture_output=True, text=True).stdout.strip()
    cmdline = " ".join(argv if argv is not None else sys.argv[1:])
    lines = ["", f"## bench_peers.py: repltool against its peers, one run — "
                 f"{started:%Y-%m-%d %H:%M} UTC (issue 20)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared); Python "
             f"{platform.python_version()}; repltool {repltool.__version__} "
             f"(`REPLTOOL_ENGINE=compiled`, commit "
             f"{subprocess.run(['git', '-C', str(ROOT), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()}); "
             f"{mbv}.",
             f"Load average (1/5/15 min): before `{load_before}`, after `{load_after}`.",
             f"Command: `python bench/bench_peers.py {cmdline}`: each pair back to back, "
             f"{args.repeat} round(s) (median by wall), output to /dev/null; CPU = user+sys of "
             "the child (wait4); peak RSS = the command's own ru_maxrss (`/usr/bin/time -f %M`). "
             "Ratio = peer time ÷ repltool time (above 1: repltool is faster).",
             f"Inputs: {maria_desc}; MySQL 8.0 synth: `repltool synth --size "
             f"{synth_bytes}` ({synth_file.parent.name}, one file).", ""]
    for label, nbytes, got in results:
        lines += [f"**{label}**, {nbytes:,} bytes:", "",
                  "| repltool | wall s | CPU s | RSS MiB | peer | wall s | CPU s | RSS MiB "
                  "| ratio wall | ratio CPU | target |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        names = commands([], Path("S"))
        for ours, peer, target in PAIRS:
            if ours not in got or peer not in got:
                continue
            a, b = best(got[ours]), best(got[peer])
            flag = lambda r: "" if r.code == 0 else f" (exit {r.code})"  # noqa: E731
            rw, rc = b.wall / a.wall, b.cpu / a.cpu
            lines.append(f"| `{names[ours][0]}`{flag(a)} | {a.wall:.2f} | {a.cpu:.2f} | "
                         f"{a.rss_mib:.0f} | `{names[peer][0]}`{flag(b)} | {b.wall:.2f} | "
                         f"{b.cpu:.2f} | {b.rss_mib:.0f} | {rw:.2f}× | {rc:.2f}× | ≥ {target}× "
                         f"{'met' if min(rw, rc) >= target else '**not met**'} |")
        lines.append("")
    if pmr is not None:
        got, counts, server_secs, version = pmr
        p = best(got["pmr"])
        lines += [f"**python-mysql-replication {version}** streaming the same MariaDB binlog "
                  "from the restarted fixture server (Unix socket; `BinLogStreamReader("
                  "is_mariadb=True, auto_position=\"\", blocking=False, resume_stream=True, "
                  "only_events=[Write/Update/DeleteRowsEvent, MariadbGtidEvent])`, every "
                  "`event.rows` built):", "",
                  f"- PMR: {p.wall:.2f} s wall, {p.cpu:.2f} s CPU (client), {p.rss_mib:.0f} MiB; "
                  f"the server spent {server_secs:.2f} s CPU sending it; counted {counts}.",
                  f"- Same file: `repltool stats` counts {pmr_counts_ref['rows_events']:,} rows "
                  f"events and {pmr_counts_ref['transactions']:,} transactions; "
                  f"`mariadb-binlog -v --base64-output=decode-rows` prints "
                  f"{pmr_counts_ref['decoded_rows']} rows.", "",
                  "| repltool | wall s | CPU s | PMR ÷ repltool (wall) | (CPU) | target |",
                  "|---|---|---|---|---|---|"]
        names = commands([], Path("S"))
        for key in ("writesets", "stats"):
            a = best(got[key])
            rw, rc = p.wall / a.wall, p.cpu / a.cpu
            lines.append(f"| `{names[key][0]}` | {a.wall:.2f} | {a.cpu:.2f} | {rw:.1f}× | "
                         f"{rc:.1f}× | ≥ {TARGET_PMR:.0f}× "
                         f"{'met' if min(rw, rc) >= TARGET_PMR else '**not met**'} |")
        lines.append("")
    if rss_rows:
        lines += ["**Peak RSS against size** (MySQL 8.0 synth, compiled engine, one run each):", "",
                  "| command | " + " | ".join(f"{s / MB:.0f} MB: wall s / CPU s / MiB"
                                              for s in sorted({s for s, _, _ in rss_rows}))
                  + " | flat? |", "|---|---|---|---|"]
        by: dict[str, list[tuple[int, Run]]] = {}
        for size, name, r in rss_rows:
            by.setdefault(name, []).append((size, r))
        for name, pts in by.items():
            pts.sort(key=lambda t: t[0])
            lo, hi = pts[0][1].rss_mib, pts[-1][1].rss_mib
            cells = " | ".join(f"{r.wall:.1f} / {r.cpu:.1f} / {r.rss_mib:.0f}"
                               + ("" if r.code == 0 else f" (exit {r.code})") for _, r in pts)
            lines.append(f"| `{name}` | {cells} | "
                         f"{'flat' if hi <= lo * 1.25 + 8 else '**grows**'} "
                         f"({hi - lo:+.0f} MiB) |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        with open(args.record, "a", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
