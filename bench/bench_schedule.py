"""Benchmark repltool.schedule: 1,000,000 synthetic transactions on 16 workers.

The input imitates binlog group commit: groups of 1-8 transactions share
``last_committed`` (the last sequence_number of an earlier group), every
~2000 transactions a source Rotate restarts the numbering, and ~0.1% of the
transactions are (0,0) barriers.  Only the simulation is timed (trace off).

Usage::

    python bench/bench_schedule.py [--transactions N] [--workers W]
                                   [--policy at-most-one|first-available]
                                   [--seed S] [--record FILE]
"""

from __future__ import annotations

import argparse
import platform
import random
import resource
import sys
import time
from datetime import datetime, timezone

from repltool.schedule import Policy, SimConfig, SimTransaction, simulate


def synthetic(count: int, seed: int) -> list[SimTransaction]:
    """Build ``count`` transactions with a group-commit pattern."""
    rng = random.Random(seed)
    out: list[SimTransaction] = []
    seq = 0
    group_parent = 0
    while len(out) < count:
        if seq >= 2000 or not out:                 # source Rotate: (0,1) first
            out.append(SimTransaction(0, 1, cost=rng.expovariate(1000.0),
                                      new_source_file=bool(out)))
            seq, group_parent = 1, 1
            continue
        if rng.random() < 0.001:                   # a (0,0) transaction
            out.append(SimTransaction(0, 0, cost=rng.expovariate(500.0)))
            seq = 0
            continue
        size = rng.randint(1, 8)
        if seq == 0:                               # after (0,0): restart the clock
            group_parent = 0
        for _ in range(size):
            if len(out) >= count:
                break
            seq += 1
            lc = group_parent if group_parent else seq - 1
            out.append(SimTransaction(lc if lc < seq else seq - 1, seq,
                                      cost=rng.expovariate(1000.0)))
        group_parent = max(1, seq - rng.randint(0, size))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--policy", default="at-most-one",
                        choices=[p.value for p in Policy])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument("--record", metavar="FILE", help="append a result line to FILE")
    args = parser.parse_args(argv)

    built = time.perf_counter()
    trxs = synthetic(args.transactions, args.seed)
    built = time.perf_counter() - built
    config = SimConfig(workers=args.workers, policy=Policy(args.policy))
    best = float("inf")
    result = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = simulate(trxs, config)
        best = min(best, time.perf_counter() - start)
    assert result is not None
    rate = len(trxs) / best
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # KiB on Linux
    line = (f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} "
            f"python={platform.python_version()} transactions={len(trxs)} "
            f"workers={args.workers} policy={args.policy} seconds={best:.3f} "
            f"trx_per_s={rate:,.0f} peak_rss_mib={rss_kib / 1024:.0f} "
            f"makespan={result.makespan:.3f} barriers={result.barriers} "
            f"generate_s={built:.1f}")
    print(line)
    if args.record:
        with open(args.record, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
