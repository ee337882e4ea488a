"""Row counting's own CPU: the RowCounter calls of pure-Python ``stats``' general route,
recorded once and replayed.

    PYTHONPATH=TREE python bench/bench_rowcount.py LOG [ROUNDS]

Reads LOG as ``stats`` does (``group_transactions(read_events(...), count_rows=True)``,
REPLTOOL_ENGINE=python), records every call the grouper makes on its
:class:`~repltool.binlog.rowcount.RowCounter` (Format_description, Table_map, Rows bytes)
with its arguments, then replays them on a fresh counter ROUNDS times and prints the CPU
seconds of each replay, how many Rows events the layout counters counted and a hash of
the results (equal hashes: equal counts).  Run it with two trees' PYTHONPATH to compare.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from typing import Any

os.environ.setdefault("REPLTOOL_ENGINE", "python")

import repltool.binlog.rowcount as rowcount  # noqa: E402
from repltool.binlog.reader import ReadOptions, read_events  # noqa: E402
from repltool.binlog.transactions import GROUPING_TYPES, group_transactions  # noqa: E402


def record(path: str) -> list[tuple[Any, ...]]:
    ops: list[tuple[Any, ...]] = []
    base = rowcount.RowCounter

    class Recorder(base):  # type: ignore[misc, valid-type]
        __slots__ = ()

        def format_description(self, body: Any) -> None:
            ops.append((0, body))
            base.format_description(self, body)

        def table_map(self, body: Any) -> None:
            ops.append((1, body))
            base.table_map(self, body)

        def rows_bytes(self, type_code: int, data: bytes) -> tuple[int, int]:
            ops.append((2, type_code, data))
            return base.rows_bytes(self, type_code, data)

    rowcount.RowCounter = Recorder
    try:
        for _ in group_transactions(read_events([path], ReadOptions(types=GROUPING_TYPES)),
                                    count_rows=True):
            pass
    finally:
        rowcount.RowCounter = base
    return ops


def replay(ops: list[tuple[Any, ...]]) -> tuple[float, list[tuple[int, int]], int]:
    c = rowcount.RowCounter()
    fd, tm, rb = c.format_description, c.table_map, c.rows_bytes
    out = []
    t = time.process_time()
    for o in ops:
        if o[0] == 2:
            out.append(rb(o[1], o[2]))
        elif o[0] == 1:
            tm(o[1])
        else:
            fd(o[1])
    return time.process_time() - t, out, c.counted


def main() -> None:
    path = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    ops = record(path)
    times = []
    for _ in range(rounds):
        dt, out, counted = replay(ops)
        times.append(round(dt, 3))
    digest = hashlib.sha1(repr(out).encode()).hexdigest()[:12]
    print(f"rows events {len(out)} counted {counted} cpu {times} "
          f"rows {sum(n for k, n in out if k < 3)} hash {digest}")


if __name__ == "__main__":
    main()
