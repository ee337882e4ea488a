"""Predicted against measured: MariaDB's parallel replica on a real primary and replica.

A primary and a replica MariaDB on loopback (``tests/fixtures/mariadb.py``
``ReplicaPair``): the replica sleeps ``--sleep`` seconds per updated row in a
replica-side trigger (``slave_run_triggers_for_rbr=YES``), so its apply cost
is known and made of waits, which a 2-core machine runs in parallel; the
primary runs each workload with ``--sessions`` concurrent sessions while the
replica's SQL thread is stopped (``binlog_commit_wait_count = sessions``, so
concurrent commits share a commit_id):

* ``low``: every session updates its own rows (1 or 2 per transaction): no
  conflicts;
* ``high``: half of the transactions first update one hot row: they
  serialise on the primary (FL_WAITED) and conflict on the replica.

For each workload the replica is reset and timed catching up serially
(``slave_parallel_threads = 0``, twice) and with N = 1, 2, 4, 8 threads in
each ``slave_parallel_mode``; ``--repeat`` rounds, the median kept.  The cost
model is fitted to the serial measurements of both workloads
(:func:`repltool.schedule.calibrate.fit_linear_cost`: seconds per transaction
and per row), then ``repltool``'s simulation of MariaDB's applier predicts
every speed-up from the primary's binlog; the table says predicted, measured
and the error.  The load average before and after is recorded.

Usage::

    python bench/bench_mariadb_replica.py [--transactions 80] [--sleep 0.02]
        [--repeat 3] [--record bench/RESULTS.md] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

from fixtures.mariadb import ReplicaPair  # noqa: E402

from repltool.schedule.calibrate import Sample, cost_spec, fit_linear_cost  # noqa: E402
from repltool.schedule.mariadb import (MariaConfig, ParallelMode,  # noqa: E402
                                       maria_transactions, simulate_mariadb)

MODES = ("conservative", "optimistic", "aggressive", "minimal")
THREADS = (1, 2, 4, 8)
WORKLOADS = (("low", 0.0), ("high", 0.5))


def measure(pair: ReplicaPair, repeat: int,
            retries: dict[tuple[str, int], list[int]]) -> dict[tuple[str, int], list[float]]:
    """Seconds per (mode, threads); threads 0 is the serial SQL thread.

    ``retries`` gets the replica's Slave_retried_transactions growth per run.
    """
    out: dict[tuple[str, int], list[float]] = {}
    for _ in range(repeat):
        configs = [("none", 0)] + [(m, n) for m in MODES for n in THREADS] + [("none", 0)]
        for mode, n in configs:
            run = pair.measure("conservative" if n == 0 else mode, n)
            out.setdefault((mode, n), []).append(run.seconds)
            retries.setdefault((mode, n), []).append(run.retries)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--transactions", type=int, default=80)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--sleep", type=float, default=0.02)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--record", type=Path)
    ap.add_argument("--keep", type=Path, help="directory for the servers (default: a temp dir)")
    args = ap.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="rt-bench-pair-"))
    load_before = os.getloadavg()
    started = time.monotonic()
    measured: dict[str, dict[tuple[str, int], list[float]]] = {}
    retried: dict[str, dict[tuple[str, int], list[int]]] = {}
    logs: dict[str, list[Path]] = {}
    with ReplicaPair(base, sessions=args.sessions, sleep=args.sleep) as pair:
        for name, hot in WORKLOADS:
            logs[name] = pair.workload(args.transactions, hot=hot)
            retried[name] = {}
            measured[name] = measure(pair, args.repeat, retried[name])
    load_after = os.getloadavg()
    for name, runs in measured.items():       # for `repltool schedule --measured FILE`
        rows = ["mode,threads,seconds"] + [
            f"{'conservative' if n == 0 else mode},{n},{statistics.median(secs):.6f}"
            for (mode, n), secs in runs.items()]
        (base / f"{name}-measured.csv").write_text("\n".join(dict.fromkeys(rows)) + "\n")
    trxs = {name: list(maria_transactions(paths)) for name, paths in logs.items()}
    samples = [Sample.of(trxs[name], s) for name in trxs for s in measured[name][("none", 0)]]
    cost = fit_linear_cost(samples)
    lines = [
        f"## MariaDB parallel replication: predicted vs measured — "
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, MariaDB {pair.version}. Command: `python "
        f"bench/bench_mariadb_replica.py --transactions {args.transactions} --sleep "
        f"{args.sleep} --repeat {args.repeat}`. Load average (1/5/15 min) before "
        f"{load_before[0]:.1f}/{load_before[1]:.1f}/{load_before[2]:.1f}, after "
        f"{load_after[0]:.1f}/{load_after[1]:.1f}/{load_after[2]:.1f} (other test suites were "
        f"running); {time.monotonic() - started:.0f} s in all.",
        "",
        f"Replica apply cost: a `BEFORE UPDATE` trigger sleeping {args.sleep} s per row "
        "(`slave_run_triggers_for_rbr=YES`); primary: "
        f"{args.sessions} concurrent sessions, `binlog_commit_wait_count={args.sessions}`, "
        "`binlog_commit_wait_usec=20000`. Measured: from `START SLAVE SQL_THREAD` until "
        "`MASTER_GTID_WAIT` sees the primary's last GTID (relay log fetched beforehand), "
        f"median of {args.repeat}. Speed-up = serial (`slave_parallel_threads=0`) / "
        "parallel time. Cost model fitted to the serial runs of both workloads: "
        f"`--cost {cost_spec(cost)}`.",
        "",
    ]
    worst: list[tuple[float, str]] = []
    for name, _ in WORKLOADS:
        sims = list(cost.apply(trxs[name]))
        serial_pred = simulate_mariadb(sims, MariaConfig(threads=0)).makespan
        serial = statistics.median(measured[name][("none", 0)])
        groups = len({(t.commit_id, i if t.commit_id is None else -1)
                      for i, t in enumerate(trxs[name])})
        waited = sum(1 for t in trxs[name] if t.flags2 & 0x10)
        lines += [f"### workload `{name}`: {len(sims)} transactions, {groups} primary "
                  f"group commits, {waited} FL_WAITED, "
                  f"{sum(1 for t in sims if t.conflicts)} with a conflict",
                  "",
                  f"Serial: measured {serial:.3f} s (runs: "
                  f"{', '.join(f'{s:.3f}' for s in measured[name][('none', 0)])}), "
                  f"predicted {serial_pred:.3f} s.",
                  "",
                  "| slave_parallel_mode | threads | measured s (min-max) | measured speed-up | "
                  "predicted speed-up | error | retries measured (per run) | "
                  "retries predicted |",
                  "|---|---|---|---|---|---|---|---|"]
        for mode in MODES:
            for n in THREADS:
                secs = measured[name][(mode, n)]
                m = statistics.median(secs)
                run = simulate_mariadb(sims, MariaConfig(mode=ParallelMode(mode), threads=n))
                pred = serial_pred / run.makespan
                meas = serial / m
                err = pred / meas - 1
                worst.append((abs(err), f"{name} {mode} {n}"))
                tries = "/".join(str(r) for r in retried[name][(mode, n)])
                lines.append(f"| {mode} | {n} | {m:.3f} ({min(secs):.3f}-{max(secs):.3f}) | "
                             f"{meas:.2f}x | {pred:.2f}x | {err:+.1%} | {tries} | "
                             f"{run.retries} |")
        lines.append("")
    lines += [f"The same comparison for your own replica: `repltool schedule "
              f"--cost {cost_spec(cost)} --measured FILE LOG` (this run's files: "
              f"`{base}/<workload>-measured.csv` and the primary's binlogs).", ""]
    within = sum(1 for e, _ in worst if e <= 0.15)
    lines += [f"Within 15%: {within} of {len(worst)} predictions; largest error "
              f"{max(worst)[0]:.1%} ({max(worst)[1]}).", ""]
    text = "\n".join(lines)
    print(text)
    if args.record:
        with open(args.record, "a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
