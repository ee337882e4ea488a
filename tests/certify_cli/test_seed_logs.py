"""WL#8440's examples as real binlogs, certified by ``repltool certify``.

Each seed table (EX2-EX7, FR1, FR2) is written as a MySQL 8.0 binlog by
:mod:`.seedlogs` (write-set item ``wsN`` = row ``id = N`` of ``test.t1``),
certified through the command line in group-replication mode, and the
computed ``(last_committed, sequence_number)`` are compared with the seed's
``trx.LC`` / ``trx.SN`` columns - the same expectations as
``tests/certify/test_wl8440_seed.py`` has on abstract inputs.  Then the
re-tagged copy (``--output``) is read back: it carries exactly those values.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.binlog import read_transactions
from repltool.certify import CertifyOptions, Mode
from repltool.certify.report import CertifyRun

from .seedlogs import DDL, VIEW_CHANGE, Trx, gtid, write_logs, ws

GR = ("--mode", "group-replication")

EX2 = ([ws(1), ws(1, 2)], [(1, 2), (2, 3)])
EX3 = ([VIEW_CHANGE, ws(1), ws(2), ws(1, 3), ws(4), ws(5), ws(5, 6), ws(7), ws(8)],
       [(0, 0), (1, 2), (1, 3), (2, 4), (1, 5), (1, 6), (6, 7), (1, 8), (1, 9)])
EX4 = ([DDL, ws(1), ws(2), DDL, ws(1)], [(1, 2), (2, 3), (2, 4), (4, 5), (5, 6)])
EX5_6 = [ws(1), ws(2), ws(1), ws(4)]
EX5 = [(1, 2), (1, 3), (1, 4), (1, 5)]          # the incorrect output WL#8440 warns about
EX6 = [(1, 2), (1, 3), (3, 4), (3, 5)]
# EX7 as MySQL 8.0 computes it: the view change garbage-collects, so T3 gets (3, 4)
# (WL#8440's table, (1, 4), predates that; see tests/certify/test_wl8440_seed.py)
EX7 = ([ws(1), ws(2), VIEW_CHANGE, ws(3)], [(1, 2), (1, 3), (0, 0), (3, 4)])
SESSIONS = [ws(100 + k, thread=10 + k % 4) for k in range(16)]   # 4 clients, disjoint rows
FR1 = [(1, sn) for sn in range(2, 18)]
FR2 = [(1, sn) if sn < 6 else (sn - 4, sn) for sn in range(2, 18)]


def clocks(rows: list[dict]) -> list[tuple[int, int] | None]:
    return [tuple(r["computed"]) if r["computed"] is not None else None for r in rows]


def logged(paths: list[Path]) -> list[tuple[int, int]]:
    return [(t.last_committed, t.sequence_number) for t in read_transactions(paths)]


def certify_and_retag(certify_jsonl, tmp_path: Path, trxs: list[Trx], *args: str,
                      files: list[list[Trx]] | None = None) -> list[tuple[int, int] | None]:
    """Certify the seed log(s); check the re-tagged copy carries the computed clocks."""
    paths = write_logs(tmp_path / "in", files or [trxs])
    out = tmp_path / "out"
    rows = certify_jsonl(*GR, *args, "--pk-only", "--output", out, *paths)
    computed = clocks(rows)
    assert logged([out / p.name for p in paths]) == computed
    assert [p.read_bytes() for p in paths] != [(out / p.name).read_bytes() for p in paths]
    return computed


def test_ex2_update_of_the_inserted_row_waits(certify_jsonl, tmp_path: Path) -> None:
    trxs, expected = EX2
    paths = write_logs(tmp_path, [trxs])
    rows = certify_jsonl(*GR, *paths)
    assert clocks(rows) == expected
    assert rows[1]["depends_on"] == {
        "gtid": gtid(1), "reason": "key",
        "key": {"db": "test", "table": "t1", "index": "PRIMARY", "values": ["1"]},
        "detail": "a write-set item was last certified for the parent"}
    assert certify_and_retag(certify_jsonl, tmp_path, trxs) == expected


def test_ex3_dependency_graph(certify_jsonl, tmp_path: Path) -> None:
    trxs, expected = EX3
    rows = certify_jsonl(*GR, *write_logs(tmp_path, [trxs]))
    assert clocks(rows) == expected
    assert rows[0]["depends_on"]["reason"] == "view-change"
    assert rows[3]["depends_on"]["gtid"] == gtid(2)       # gno 1 is the view change
    assert rows[6]["depends_on"]["gtid"] == gtid(6)
    assert certify_and_retag(certify_jsonl, tmp_path, trxs) == expected


def test_ex4_ddl_without_writeset_is_sequential(certify_jsonl, tmp_path: Path) -> None:
    trxs, expected = EX4
    rows = certify_jsonl(*GR, *write_logs(tmp_path, [trxs]))
    assert clocks(rows) == expected
    assert [r["depends_on"]["reason"] for r in rows][0::3] == ["ddl", "ddl"]
    assert certify_and_retag(certify_jsonl, tmp_path, trxs) == expected


def test_ex5_gc_without_a_window_is_the_bug(tmp_path: Path) -> None:
    """EX5 is the output WL#8440 calls incorrect: only reachable through the library
    (``gc_opens_window=False``), never through the command line."""
    paths = write_logs(tmp_path, [EX5_6])
    from repltool.certify.gtidset import GtidSet
    run = CertifyRun(paths, Mode.GROUP_REPLICATION, CertifyOptions(gc_opens_window=False),
                     stable_sets=[GtidSet.parse(f"{gtid(1)},{gtid(2)}")])
    assert [c.result.computed for c in run] == EX5


@pytest.mark.parametrize("gc", [("--gc-stable-set", f"{gtid(1)[:-2]}:1-2"), ("--gc-every", "2")],
                         ids=["stable-set", "gc-every"])
def test_ex6_gc_opens_a_window(certify_jsonl, tmp_path: Path, gc: tuple[str, str]) -> None:
    rows = certify_jsonl(*GR, *gc, *write_logs(tmp_path, [EX5_6]))
    assert clocks(rows) == EX6
    assert rows[2]["depends_on"]["reason"] == "gc-window"
    assert certify_and_retag(certify_jsonl, tmp_path, EX5_6, *gc) == EX6


def test_ex7_view_change(certify_jsonl, tmp_path: Path) -> None:
    trxs, expected = EX7
    assert certify_and_retag(certify_jsonl, tmp_path, trxs) == expected


def test_ex7_across_files_gr_numbering_continues(certify_jsonl, tmp_path: Path) -> None:
    """The GR applier relay log rotates at a view change; numbers keep increasing.
    In writeset mode each binlog file restarts at (0, 1)."""
    files = [[ws(1), ws(2), VIEW_CHANGE], [ws(3), ws(1)]]
    assert certify_and_retag(certify_jsonl, tmp_path, [], files=files) == [
        (1, 2), (1, 3), (0, 0), (3, 4), (3, 5)]
    rows = certify_jsonl("--mode", "writeset", *write_logs(tmp_path / "ws", files))
    assert [c[1] for c in clocks(rows)] == [1, 2, 3, 1, 2]
    assert clocks(rows)[3] == (0, 1)


def test_fr1_disjoint_rows_of_different_sessions_are_parallel(certify_jsonl,
                                                              tmp_path: Path) -> None:
    assert certify_and_retag(certify_jsonl, tmp_path, SESSIONS) == FR1


def test_fr2_without_session_order_is_mysql(certify_jsonl, tmp_path: Path) -> None:
    """FR2 is met by replica_preserve_commit_order: MySQL's indexes are FR1's."""
    rows = certify_jsonl(*GR, *write_logs(tmp_path, [SESSIONS]))
    assert clocks(rows) == FR1


def test_fr2_with_session_order(certify_jsonl, tmp_path: Path) -> None:
    assert certify_and_retag(certify_jsonl, tmp_path, SESSIONS, "--session-order") == FR2
    rows = certify_jsonl(*GR, "--session-order", *write_logs(tmp_path / "again", [SESSIONS]))
    assert rows[4]["depends_on"]["reason"] == "session"
    assert rows[4]["depends_on"]["gtid"] == gtid(1)


def test_compressed_seed_log(certify_jsonl, tmp_path: Path) -> None:
    """Transaction_payload groups: the write set is read inside the payload, the GTID
    event (outside it) is re-tagged."""
    trxs = [ws(1, compress=True), ws(2), ws(1, 3, compress=True)]
    assert certify_and_retag(certify_jsonl, tmp_path, trxs) == [(1, 2), (1, 3), (2, 4)]


def test_seed_text_report(cli, tmp_path: Path) -> None:
    out, _ = cli(*("certify", *GR, "--session-order"), *write_logs(tmp_path, [SESSIONS]))
    assert "group-replication" in out
    assert "session order" in out and "yes" in out
    assert "parallelism: logged -> computed" in out
    assert "work / span" in out
    assert "session" in out and "file-start" in out
