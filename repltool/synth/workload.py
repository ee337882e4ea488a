"""What the synthetic sessions do: statements, the rows they touch, and the keys they write.

A transaction is *planned* when its session starts it (statements, tables,
primary-key ids, hence the row locks it will take) and *materialised* when the
binlog flush stage gives it its sequence number (the before images then come
from the table state at that moment, exactly as the log order dictates).
Locks make two transactions that touch the same row commit one after the
other, which is why the commit-order clock of the generated logs is always
safe with respect to writesets.

Table state is kept compact so that GB-sized logs fit in memory: a row's
values are a pure function of (table, id, version), and the version of every
id lives in a ``bytearray`` (0 = as initially loaded, 1..254 = updated,
255 = deleted).
"""

from __future__ import annotations

import json
import math
import random
from array import array
from dataclasses import dataclass, field
from typing import Any

from .tables import Table

DELETED = 255
_STATUSES = ("new", "paid", "packed", "shipped", "delivered", "returned")
_AUDIT_KINDS = ("login", "checkout", "refund", "search", "api")
_NAMES = ("Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances", "Edsger",
          "Hedy", "José", "Zoë", "Łukasz", "Søren", "Chloé", "Nguyễn")
_EPOCH_US = 1_704_067_200_000_000          # 2024-01-01 00:00:00 UTC
_NOTES = tuple(f"gift wrap {k}: " + "leave at the door, ring twice " * (k % 4) for k in range(64))
_DETAILS = tuple(json.dumps({"n": k, "ok": bool(k & 1), "path": "/api/v2/orders/" + "x" * (k % 50)})
                 for k in range(128))


@dataclass(frozen=True)
class KeyDistribution:
    """How sessions pick existing rows: ``uniform``, ``zipf`` (exponent ``s``) or ``hot``.

    ``hot``: with probability ``hot_share`` one of the first ``hot_keys`` ids,
    otherwise uniform.  ``zipf``: rank r of N with probability ~ 1/r^s (the
    continuous inverse CDF, so drawing costs O(1) whatever N is).
    """

    kind: str = "uniform"
    s: float = 1.1
    hot_keys: int = 8
    hot_share: float = 0.5

    def pick(self, rng: random.Random, n: int) -> int:
        """An id in 1..n."""
        if n <= 1:
            return 1
        kind = self.kind
        if kind == "uniform":
            return int(rng.random() * n) + 1
        if kind == "hot":
            if rng.random() < self.hot_share:
                return int(rng.random() * min(self.hot_keys, n)) + 1
            return int(rng.random() * n) + 1
        u = rng.random()
        s = self.s
        if abs(s - 1.0) < 1e-9:
            x = math.exp(u * math.log(n + 1))
        else:
            a = 1.0 - s
            x = ((math.pow(n + 1, a) - 1.0) * u + 1.0) ** (1.0 / a)
        return min(n, max(1, int(x)))


@dataclass(frozen=True)
class WorkloadConfig:
    rows_per_table: int = 10_000          # ids 1..N exist before the log starts
    statements: tuple[int, int] = (1, 4)
    rows: tuple[int, int] = (1, 3)
    mix: tuple[float, float, float] = (40.0, 45.0, 15.0)   # insert, update, delete
    bulk_share: float = 0.005             # statements with 50-200 rows
    ddl_rate: float = 0.0005
    empty_rate: float = 0.001
    keys: KeyDistribution = field(default_factory=KeyDistribution)


@dataclass(slots=True)
class Statement:
    table: int                      # index into the workload's tables
    op: str                         # insert | update | delete
    ids: list[int]
    parent: int = 0                 # order_items insert: the order id


@dataclass(slots=True)
class Plan:
    """One transaction as its session planned it."""

    thread_id: int
    kind: str                       # dml | ddl | empty
    statements: list[Statement]
    locks: list[tuple[int, int]]
    start_us: int
    ddl_table: int = -1
    # filled in by the clock
    ready_us: int = 0
    waits: int = 0
    waiters: list["Plan"] = field(default_factory=list)
    commit_us: int = -1
    lc_abs: int = 0
    seq_abs: int = 0
    flush_us: int = 0


@dataclass(slots=True)
class RowOp:
    """A materialised row change (what the ground truth records)."""

    table: Table
    op: str
    before: tuple[Any, ...] | None
    after: tuple[Any, ...] | None


# ---- table state ----

class _State:
    """Version bytes per id, and the order of every order_items row inserted in the log."""

    __slots__ = ("versions", "count")

    def __init__(self, initial: int) -> None:
        self.versions = bytearray(initial + 1)       # index 0 unused
        self.count = initial                          # highest id allocated

    def new_id(self) -> int:
        self.count += 1
        self.versions.append(0)
        return self.count

    def exists(self, i: int) -> bool:
        return i <= self.count and self.versions[i] != DELETED


class Workload:
    """Plans and materialises transactions over :func:`~repltool.synth.tables.make_tables`."""

    CUSTOMERS, ORDERS, ITEMS, AUDIT = range(4)

    def __init__(self, tables: list[Table], config: WorkloadConfig, rng: random.Random,
                 salt: int) -> None:
        self.tables = tables
        self.cfg = config
        self.rng = rng
        self.salt = salt & 0xFFFF
        n = config.rows_per_table
        self.state = [_State(n), _State(n), _State(n), _State(0)]
        self.item_parent = array("Q")     # order id of items inserted in the log
        self.item_base = n                # ids above this are in item_parent
        self.audit_seq = 0
        self.ddl_count = 0
        m = config.mix
        total = sum(m) or 1.0
        self._p_insert = m[0] / total
        self._p_update = (m[0] + m[1]) / total

    # ---- rows as pure functions of (id, version) ----

    def _h(self, i: int, v: int, k: int) -> int:
        return ((i * 2654435761 + v * 40503 + k * 97 + self.salt) * 2246822519) & 0xFFFFFFFF

    def row(self, t: int, i: int) -> tuple[Any, ...]:
        """The row's stored values (DECIMAL as scaled int, DATETIME(6) as µs since 1970)."""
        v = self.state[t].versions[i]
        h = self._h(i, v, t)
        if t == self.CUSTOMERS:
            name = None if h % 17 == 0 else f"{_NAMES[h % len(_NAMES)]} {i}"
            return (i, f"c{i}.{v // 8}@example.com", name, h % 10_000_000,
                    None if v == 0 else _EPOCH_US + i * 1_000_000 + v * 1117)
        if t == self.ORDERS:
            note = None if h % 3 == 0 else _NOTES[h % len(_NOTES)]
            return (i, (h >> 8) % self.state[0].count + 1, _STATUSES[v % len(_STATUSES)],
                    h % 1_000_000, _EPOCH_US + i * 7_000_000 + (h & 0xFFFFF), note)
        if t == self.ITEMS:
            return (i, self.parent_of(i), f"SKU-{h % 100000:05d}", 1 + v % 9 + h % 3,
                    h % 100_000)
        raise ValueError(t)

    def parent_of(self, item: int) -> int:
        if item > self.item_base:
            return self.item_parent[item - self.item_base - 1]
        return (item - 1) % self.cfg.rows_per_table + 1

    def audit_row(self, ts_us: int) -> tuple[Any, ...]:
        self.audit_seq += 1
        h = self._h(self.audit_seq, 0, 9)
        return (ts_us, _AUDIT_KINDS[h % len(_AUDIT_KINDS)],
                None if h % 5 == 0 else h % 100_000 + 1,
                None if h % 4 == 0 else _DETAILS[h % len(_DETAILS)])

    # ---- planning (session start) ----

    def plan(self, thread_id: int, start_us: int) -> Plan:
        rng, cfg = self.rng, self.cfg
        r = rng.random()
        if r < cfg.ddl_rate:
            self.ddl_count += 1
            t = self.ORDERS if self.ddl_count % 2 else self.ITEMS
            return Plan(thread_id, "ddl", [], [(t, -1)], start_us, ddl_table=t)
        if r < cfg.ddl_rate + cfg.empty_rate:
            return Plan(thread_id, "empty", [], [], start_us)
        stmts: list[Statement] = []
        n_stmts = rng.randint(*cfg.statements)
        new_order = 0
        for _ in range(n_stmts):
            stmts.append(self._statement(new_order))
            if stmts[-1].table == self.ORDERS and stmts[-1].op == "insert":
                new_order = stmts[-1].ids[0]
        locks: list[tuple[int, int]] = []
        for s in stmts:
            if s.table != self.AUDIT:
                locks.extend((s.table, i) for i in s.ids)
            if s.parent:
                locks.append((self.ORDERS, s.parent))
        return Plan(thread_id, "dml", stmts, locks, start_us)

    def _n_rows(self) -> int:
        if self.rng.random() < self.cfg.bulk_share:
            return self.rng.randint(50, 200)
        return self.rng.randint(*self.cfg.rows)

    def _statement(self, new_order: int) -> Statement:
        rng = self.rng
        r = rng.random()
        pick = self.cfg.keys.pick
        if r < self._p_insert:
            t = rng.choice((self.ORDERS, self.ITEMS, self.ITEMS, self.CUSTOMERS, self.AUDIT))
            n = self._n_rows()
            if t == self.AUDIT:
                return Statement(t, "insert", [0] * n)
            if t == self.ITEMS:
                parent = new_order or pick(rng, self.state[self.ORDERS].count)
                ids = [self.state[t].new_id() for _ in range(n)]
                self.item_parent.extend([parent] * n)
                return Statement(t, "insert", ids, parent)
            n = 1 if t == self.ORDERS else n
            return Statement(t, "insert", [self.state[t].new_id() for _ in range(n)])
        if r < self._p_update:
            t = rng.choice((self.ORDERS, self.ORDERS, self.CUSTOMERS, self.ITEMS))
            op = "update"
        else:
            t = rng.choice((self.ITEMS, self.ITEMS, self.CUSTOMERS))
            op = "delete"
        count = self.state[t].count
        ids = sorted({pick(rng, count) for _ in range(self._n_rows())})
        return Statement(t, op, ids)

    # ---- materialisation (flush order) ----

    def materialise(self, plan: Plan, ts_us: int) -> list[tuple[Statement, list[RowOp]]]:
        """The row changes of each statement, applied to the table state."""
        out = []
        for s in plan.statements:
            ops = self._apply(s, ts_us)
            if ops:
                out.append((s, ops))
        if not out:
            # every row it meant to delete was gone: MySQL would log nothing; keep the
            # transaction (its GTID is already numbered) with one audit row.
            s = Statement(self.AUDIT, "insert", [0])
            out.append((s, self._apply(s, ts_us)))
        return out

    def _apply(self, s: Statement, ts_us: int) -> list[RowOp]:
        t = s.table
        table = self.tables[t]
        if t == self.AUDIT:
            return [RowOp(table, "insert", None, self.audit_row(ts_us)) for _ in s.ids]
        st = self.state[t]
        vers = st.versions
        ops = []
        for i in s.ids:
            alive = vers[i] != DELETED
            if s.op == "delete" and alive:
                before = self.row(t, i)
                vers[i] = DELETED
                ops.append(RowOp(table, "delete", before, None))
            elif s.op == "update" and alive:
                before = self.row(t, i)
                vers[i] = vers[i] % 254 + 1
                ops.append(RowOp(table, "update", before, self.row(t, i)))
            elif s.op != "delete":
                # an update that finds the row gone re-inserts it (an upsert); a
                # DELETE that matches nothing logs nothing.
                if not alive:
                    vers[i] = 1
                ops.append(RowOp(table, "insert", None, self.row(t, i)))
        return ops
