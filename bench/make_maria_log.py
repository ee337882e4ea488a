"""Build (once) a real MariaDB binlog of >= ``--size-mb`` MB with the live-server fixture.

A throw-away ``mariadbd`` (``tests/fixtures/mariadb.py``'s :class:`Server`: ROW
format, FULL row image, FULL row metadata, CRC32 checksums, GTID strict mode,
group-commit wait) takes a write workload from ``--sessions`` sessions over six
tables until its binlog holds ``--size-mb`` MB:

* ``customers`` (INT primary key, UNIQUE ``email``), ``items`` (VARCHAR primary
  key), ``orders`` (BIGINT AUTO_INCREMENT key, FK to ``customers``),
  ``order_lines`` (composite key, FKs to ``orders`` and ``items``), ``tags``
  (no primary key, a NOT NULL UNIQUE key), ``audit`` (no key at all);
* multi-statement transactions: bulk multi-row INSERTs of orders and their
  lines, UPDATEs of balances / stock / order status (FULL images: before and
  after), DELETEs of old order lines and orders, UNIQUE-key changes, inserts
  into the keyless table.

The binlogs (``mysql-bin.0*``, the server's index order), ``schema.sql``
(``SHOW CREATE TABLE`` output) and the server's whole base directory
(``server/``: datadir and binlogs, so ``bench/bench_peers.py`` can restart the
server and stream the same binlog to a replication client) are kept in
``--out`` (default ``bench/out/maria-peers``, gitignored); a later run with a
``DONE`` stamp there reuses them.

Usage::

    python bench/make_maria_log.py [--size-mb 110] [--sessions 3] [--out DIR] [--force]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_OUT = HERE / "out" / "maria-peers"
DB = "shop"

SCHEMA_SQL = [
    f"CREATE DATABASE {DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
    f"""CREATE TABLE {DB}.customers (id INT NOT NULL PRIMARY KEY, email VARCHAR(80) NOT NULL,
        name VARCHAR(64) NOT NULL, balance BIGINT NOT NULL DEFAULT 0, city VARCHAR(40) NULL,
        UNIQUE KEY uk_email (email)) ENGINE=InnoDB""",
    f"""CREATE TABLE {DB}.items (sku VARCHAR(24) NOT NULL PRIMARY KEY, title VARCHAR(120) NOT NULL,
        price DECIMAL(10,2) NOT NULL, stock INT NOT NULL DEFAULT 0) ENGINE=InnoDB""",
    f"""CREATE TABLE {DB}.orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        customer_id INT NOT NULL, status VARCHAR(16) NOT NULL, total DECIMAL(12,2) NOT NULL,
        created DATETIME(6) NOT NULL, note VARCHAR(255) NULL, KEY ix_customer (customer_id),
        CONSTRAINT fk_order_customer FOREIGN KEY (customer_id) REFERENCES {DB}.customers (id))
        ENGINE=InnoDB""",
    f"""CREATE TABLE {DB}.order_lines (order_id BIGINT NOT NULL, line SMALLINT NOT NULL,
        sku VARCHAR(24) NOT NULL, qty INT NOT NULL, price DECIMAL(10,2) NOT NULL,
        PRIMARY KEY (order_id, line), KEY ix_sku (sku),
        CONSTRAINT fk_line_order FOREIGN KEY (order_id) REFERENCES {DB}.orders (id)
            ON DELETE CASCADE,
        CONSTRAINT fk_line_item FOREIGN KEY (sku) REFERENCES {DB}.items (sku)) ENGINE=InnoDB""",
    f"""CREATE TABLE {DB}.tags (code VARCHAR(32) NOT NULL, label VARCHAR(64) NULL,
        hits INT NOT NULL DEFAULT 0, UNIQUE KEY uk_code (code)) ENGINE=InnoDB""",
    f"""CREATE TABLE {DB}.audit (at DATETIME NOT NULL, who INT NULL, what VARCHAR(200) NULL)
        ENGINE=InnoDB""",
]
TABLES = ["customers", "items", "orders", "order_lines", "tags", "audit"]
CUSTOMERS = 5000
ITEMS = 2000
TAGS = 500


def _values(rows: list[tuple]) -> tuple[str, list]:
    one = "(" + ",".join(["%s"] * len(rows[0])) + ")"
    return ",".join([one] * len(rows)), [v for r in rows for v in r]


def setup(server) -> None:
    conn = server.connect()
    cur = conn.cursor()
    for sql in SCHEMA_SQL:
        cur.execute(sql)
    rng = random.Random(1)
    for lo in range(1, CUSTOMERS + 1, 500):
        rows = [(i, f"c{i}@example.org", f"Customer {i}", rng.randint(0, 10**6),
                 rng.choice(["Oslo", "Zürich", "Kraków", "東京", None]))
                for i in range(lo, min(lo + 500, CUSTOMERS + 1))]
        v, a = _values(rows)
        cur.execute(f"INSERT INTO {DB}.customers (id,email,name,balance,city) VALUES {v}", a)
    for lo in range(0, ITEMS, 500):
        rows = [(f"SKU-{i:06d}", f"Item number {i} " + "x" * rng.randint(10, 60),
                 rng.randint(100, 99999) / 100, 1000) for i in range(lo, min(lo + 500, ITEMS))]
        v, a = _values(rows)
        cur.execute(f"INSERT INTO {DB}.items (sku,title,price,stock) VALUES {v}", a)
    rows = [(f"tag-{i}", f"label {i}", 0) for i in range(TAGS)]
    v, a = _values(rows)
    cur.execute(f"INSERT INTO {DB}.tags (code,label,hits) VALUES {v}", a)
    conn.close()


def session(server, k: int, log: Path, target: int, seed: int, counts: dict[str, int],
            errors: list[BaseException], lock: threading.Lock) -> None:
    import pymysql
    rng = random.Random(seed * 100 + k)
    conn = server.connect(read_timeout=120, write_timeout=120)
    cur = conn.cursor()
    done = 0
    try:
        while log.stat().st_size < target:
            cur.execute("BEGIN")
            try:
                kind = rng.randrange(10)
                if kind < 5:                          # a batch of orders and their lines
                    n = rng.randint(5, 40)
                    cust = [rng.randint(1, CUSTOMERS) for _ in range(n)]
                    v, a = _values([(c, "new", rng.randint(100, 10**6) / 100,
                                     f"2026-11-25 {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
                                     f":{rng.randint(0, 59):02d}.{rng.randint(0, 999999):06d}",
                                     rng.choice([None, "gift wrap " * rng.randint(1, 20)]))
                                    for c in cust])
                    cur.execute(f"INSERT INTO {DB}.orders (customer_id,status,total,created,note)"
                                f" VALUES {v}", a)
                    first = conn.insert_id()
                    lines = [(first + i, ln, f"SKU-{rng.randrange(ITEMS):06d}", rng.randint(1, 9),
                              rng.randint(100, 99999) / 100)
                             for i in range(n) for ln in range(1, rng.randint(2, 8))]
                    v, a = _values(lines)
                    cur.execute(f"INSERT INTO {DB}.order_lines (order_id,line,sku,qty,price) "
                                f"VALUES {v}", a)
                    for c in set(cust[:8]):
                        cur.execute(f"UPDATE {DB}.customers SET balance=balance-%s WHERE id=%s",
                                    [rng.randint(1, 500), c])
                elif kind < 7:                        # stock and status updates (FULL images)
                    skus = [f"SKU-{rng.randrange(ITEMS):06d}" for _ in range(rng.randint(1, 6))]
                    cur.execute(f"UPDATE {DB}.items SET stock=stock-1 WHERE sku IN "
                                f"({','.join(['%s'] * len(skus))})", skus)
                    cur.execute(f"UPDATE {DB}.orders SET status=%s WHERE id BETWEEN %s AND %s",
                                [rng.choice(["paid", "shipped", "done"]), *_near(cur, rng, 20)])
                    cur.execute(f"UPDATE {DB}.tags SET hits=hits+1 WHERE code=%s",
                                [f"tag-{rng.randrange(TAGS)}"])
                elif kind == 7:                       # deletes: old lines, old orders (cascade)
                    lo, hi = _near(cur, rng, 6, old=True)
                    cur.execute(f"DELETE FROM {DB}.order_lines WHERE order_id BETWEEN %s AND %s "
                                f"AND line > 3", [lo, hi])
                    cur.execute(f"DELETE FROM {DB}.orders WHERE id BETWEEN %s AND %s", [lo, hi])
                elif kind == 8:                       # a UNIQUE key changes, and back
                    c = rng.randint(1, CUSTOMERS)
                    cur.execute(f"UPDATE {DB}.customers SET email=CONCAT('x', email), "
                                f"city=%s WHERE id=%s", [rng.choice(["Bergen", "Genève", None]), c])
                    cur.execute(f"UPDATE {DB}.customers SET email=SUBSTRING(email, 2) "
                                f"WHERE id=%s", [c])
                    t = rng.randrange(TAGS)
                    cur.execute(f"UPDATE {DB}.tags SET code=%s WHERE code=%s",
                                [f"tmp-{k}-{t}", f"tag-{t}"])
                    cur.execute(f"UPDATE {DB}.tags SET code=%s WHERE code=%s",
                                [f"tag-{t}", f"tmp-{k}-{t}"])
                else:                                 # the keyless table
                    rows = [("2026-11-25 12:00:00", rng.randint(1, CUSTOMERS),
                             "audit " + "y" * rng.randint(20, 180)) for _ in range(rng.randint(5, 30))]
                    v, a = _values(rows)
                    cur.execute(f"INSERT INTO {DB}.audit (at,who,what) VALUES {v}", a)
                cur.execute("COMMIT")
                done += 1
            except pymysql.err.MySQLError as exc:
                if (exc.args[0] if exc.args else None) not in (1205, 1213):
                    raise
                cur.execute("ROLLBACK")
                with lock:
                    counts["rolled_back"] += 1
    except BaseException as exc:    # reported by the caller
        errors.append(exc)
    finally:
        conn.close()
        with lock:
            counts["committed"] += done


def _near(cur, rng: random.Random, width: int, old: bool = False) -> tuple[int, int]:
    cur.execute(f"SELECT COALESCE(MIN(id),1), COALESCE(MAX(id),1) FROM {DB}.orders")
    lo, hi = cur.fetchone()
    if old:
        start = lo + rng.randint(0, 50)
    else:
        start = rng.randint(lo, max(lo, hi - width))
    return start, start + width


def schema_sql(server) -> str:
    conn = server.connect()
    cur = conn.cursor()
    out = [f"-- SHOW CREATE TABLE output (database {DB})", f"USE `{DB}`;"]
    for t in TABLES:
        cur.execute(f"SHOW CREATE TABLE {DB}.{t}")
        out.append(cur.fetchone()[1] + ";")
    conn.close()
    return "\n".join(out) + "\n"


def build(out: Path, size_mb: int, sessions: int, seed: int = 5) -> str:
    """Run the server and the workload; leave binlogs, schema.sql, server/ in ``out``."""
    sys.path.insert(0, str(ROOT))
    from tests.fixtures.mariadb import Server, server_binaries
    mariadbd, install_db = server_binaries()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    server = Server(out / "server")
    t0 = time.monotonic()
    server.install(install_db)
    server.start(mariadbd)
    try:
        conn = server.connect()
        cur = conn.cursor()
        cur.execute("SELECT VERSION()")
        version = cur.fetchone()[0]
        conn.close()
        setup(server)
        log = server.binlogs()[-1]
        counts = {"committed": 0, "rolled_back": 0}
        errors: list[BaseException] = []
        lock = threading.Lock()
        threads = [threading.Thread(target=session, args=(server, k, log, size_mb * 1_000_000,
                                                          seed, counts, errors, lock))
                   for k in range(sessions)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        schema = schema_sql(server)
    finally:
        server.stop()
    (out / "schema.sql").write_text(schema, encoding="utf-8")
    nbytes = 0
    for f in server.binlogs():
        shutil.copyfile(f, out / f.name)
        nbytes += f.stat().st_size
    secs = time.monotonic() - t0
    desc = (f"MariaDB {version}, live fixture server (bench/make_maria_log.py: {sessions} sessions, "
            f"6 tables, {counts['committed']:,} workload transactions, "
            f"{counts['rolled_back']} rolled back; {nbytes / 1e6:.1f} MB in "
            f"{len(server.binlogs())} file(s), built in {secs:.0f} s)")
    (out / "DONE").write_text(desc + "\n")
    return desc


def maria_log(out: Path = DEFAULT_OUT, size_mb: int = 110, sessions: int = 3,
              force: bool = False) -> tuple[list[Path], Path, Path, str]:
    """(binlog files, schema.sql, server base dir, description), built when not cached."""
    done = out / "DONE"
    if force or not done.exists():
        print(f"building a >= {size_mb} MB MariaDB binlog in {out} ...", file=sys.stderr)
        build(out, size_mb, sessions)
    files = sorted(out.glob("mysql-bin.0*"))
    return files, out / "schema.sql", out / "server", done.read_text().strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=110)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--force", action="store_true", help="rebuild even when cached")
    args = ap.parse_args(argv)
    files, schema, _, desc = maria_log(args.out, args.size_mb, args.sessions, args.force)
    print(desc)
    for f in files:
        print(f"{f}  {f.stat().st_size:,} bytes")
    print(schema)
    return 0


if __name__ == "__main__":
    sys.exit(main())
