"""MariaDB's slave_parallel_mode simulated on hand-built groups and logs.

Every expected time below is worked out by hand from the rules of
``sql/rpl_parallel.cc`` the module docstring of
:mod:`repltool.schedule.mariadb` lists (GCO switches, mark_start_commit,
SPECULATE_WAIT, per-domain commit order, round-robin threads).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from repltool.binlog import read_events
from repltool.binlog import structs as S
from repltool.binlog.constants import (MARIA_FL_ALLOW_PARALLEL, MARIA_FL_DDL,
                                       MARIA_FL_GROUP_COMMIT_ID, MARIA_FL_STANDALONE,
                                       MARIA_FL_TRANSACTIONAL, MARIA_FL_WAITED)
from repltool.binlog.writer import frame_event
from repltool.errors import SimulationError, UsageError
from repltool.schedule import ConstantCost
from repltool.schedule.mariadb import (MariaConfig, MariaTransaction, ParallelMode,
                                       is_mariadb_log, maria_transactions, simulate_mariadb,
                                       sweep_mariadb)

TA = MARIA_FL_TRANSACTIONAL | MARIA_FL_ALLOW_PARALLEL
DDL = MARIA_FL_STANDALONE | MARIA_FL_ALLOW_PARALLEL | MARIA_FL_DDL
CON, OPT, AGG = ParallelMode.CONSERVATIVE, ParallelMode.OPTIMISTIC, ParallelMode.AGGRESSIVE


def trx(cost: float, commit_id: int | None = None, flags: int = TA, *, domain: int = 0,
        conflicts: tuple[int, ...] = (), size: int = 0) -> MariaTransaction:
    if commit_id is not None:
        flags |= MARIA_FL_GROUP_COMMIT_ID
    return MariaTransaction(cost=cost, domain_id=domain, flags2=flags, commit_id=commit_id,
                            conflicts=conflicts, size=size)


def run(trxs: list[MariaTransaction], mode: ParallelMode, threads: int = 4, **kw):
    return simulate_mariadb(trxs, MariaConfig(mode=mode, threads=threads, trace=True, **kw))


def commits(result) -> list[float]:
    return [s.commit for s in result.trace]


# ---- group boundaries ----

def test_conservative_runs_one_commit_id_together_and_the_next_after_its_commit_starts() -> None:
    # batch 10 = T0 (1 s), T1 (3 s); batch 20 = T2 (1 s): T2 waits until both
    # of batch 10 started their commit (t = 3), then commits at 4.
    trxs = [trx(1, 10), trx(3, 10), trx(1, 20)]
    r = run(trxs, CON)
    assert [s.start for s in r.trace] == [0, 0, 3]
    assert commits(r) == [1, 3, 4] and r.makespan == 4 and r.gcos == 2
    assert r.waits.gco == 3
    # optimistic: one GCO; T2 runs at once and only waits for commit order
    r = run(trxs, OPT)
    assert [s.start for s in r.trace] == [0, 0, 0] and commits(r) == [1, 3, 3]
    assert r.gcos == 1 and r.trace[2].speculation == "optimistic"


def test_groups_without_commit_id_are_a_batch_each_in_conservative() -> None:
    r = run([trx(2), trx(2), trx(2)], CON)
    assert commits(r) == [2, 4, 6] and r.gcos == 3


def test_minimal_only_overlaps_commits() -> None:
    # same commit_id, but minimal switches GCO at every group: T1 starts when
    # T0 started committing (its XID), T2 likewise
    r = run([trx(1, 7), trx(1, 7), trx(1, 7)], ParallelMode.MINIMAL)
    assert [s.start for s in r.trace] == [0, 1, 2] and r.makespan == 3 and r.gcos == 3


def test_none_and_zero_threads_are_the_sql_thread() -> None:
    trxs = [trx(1, 5), trx(2, 5), trx(3)]
    for cfg in (MariaConfig(mode=ParallelMode.NONE, threads=8), MariaConfig(mode=OPT, threads=0)):
        r = simulate_mariadb(trxs, dataclasses.replace(cfg, trace=True))
        assert r.makespan == 6 and {s.thread for s in r.trace} == {-1}


# ---- FL_WAITED, FL_ALLOW_PARALLEL, FL_TRANSACTIONAL ----

def test_waited_serialises_in_optimistic_only() -> None:
    trxs = [trx(1, 10), trx(3, 10), trx(1, 20, TA | MARIA_FL_WAITED)]
    r = run(trxs, OPT)
    assert r.trace[2].speculation == "wait" and r.trace[2].start == 3 and r.makespan == 4
    assert r.waits.prior_commit == 3
    r = run(trxs, AGG)
    assert r.trace[2].speculation == "optimistic" and r.makespan == 3
    # conservative does not look at FL_WAITED: the GCO switch is what delays T2
    assert run(trxs, CON).trace[2].start == 3


def test_skip_parallel_replication_waits_in_optimistic_not_in_aggressive() -> None:
    trxs = [trx(2, 10), trx(1, 20, MARIA_FL_TRANSACTIONAL)]     # no FL_ALLOW_PARALLEL
    assert run(trxs, OPT).trace[1].start == 2
    assert run(trxs, AGG).trace[1].start == 0


def test_non_transactional_groups_wait_even_in_aggressive() -> None:
    myisam = MARIA_FL_ALLOW_PARALLEL                              # no FL_TRANSACTIONAL
    trxs = [trx(2, 10), trx(1, 20, myisam), trx(1, 30)]
    for mode in (OPT, AGG):
        r = run(trxs, mode)
        assert r.trace[1].speculation == "wait" and r.trace[1].start == 2
        # the group after it still runs in parallel with what came before
        assert r.trace[2].start == 0 and r.makespan == 3


# ---- DDL ----

def test_ddl_is_a_switch_point_before_and_after() -> None:
    trxs = [trx(1, 10), trx(1, None, DDL), trx(1, 30)]
    r = run(trxs, OPT)
    # the DDL waits until T0 started committing; T2 waits until the DDL
    # finished (a standalone group marks its commit start when it ends)
    assert [s.start for s in r.trace] == [0, 1, 2] and r.makespan == 3 and r.gcos == 3
    plain = run([trx(1, 10), trx(1, None), trx(1, 30)], OPT)
    assert plain.makespan == 1 and plain.gcos == 1


# ---- replication domains, threads, queues ----

def test_domains_run_out_of_order_except_in_minimal() -> None:
    trxs = [trx(3, domain=0), trx(1, domain=1)]
    r = run(trxs, CON, threads=2)
    assert commits(r) == [3, 1] and r.domains == 2      # domain 1 commits first
    r = run(trxs, ParallelMode.MINIMAL, threads=2)
    assert commits(r) == [3, 4] and r.domains == 1      # minimal: every group in domain 0


def test_domain_parallel_threads_limits_one_domain() -> None:
    trxs = [trx(1, 9), trx(1, 9), trx(1, 9), trx(1, 9)]
    assert run(trxs, CON, threads=4).makespan == 1
    r = run(trxs, CON, threads=4, domain_threads=2)
    assert r.makespan == 2 and {s.thread for s in r.trace} == {0, 1}


def test_a_domain_waits_for_a_pool_thread_and_holds_back_the_driver() -> None:
    trxs = [trx(2, domain=0), trx(1, domain=1)]
    r = run(trxs, CON, threads=1)
    assert r.waits.no_thread == 2 and commits(r) == [2, 3]
    assert run(trxs, CON, threads=2).makespan == 2


def test_max_queued_makes_the_driver_wait() -> None:
    trxs = [trx(2, 5, size=500), trx(1, 5, size=500), trx(1, 5, size=500)]
    r = run(trxs, CON, threads=1, max_queued=400)
    assert r.waits.queue_full > 0 and r.makespan == 4
    assert run(trxs, CON, threads=1).waits.queue_full == 0


# ---- conflicts ----

def test_a_later_group_waits_for_an_earlier_ones_row_lock() -> None:
    r = run([trx(2, 10), trx(1, 20, conflicts=(0,))], OPT)
    assert r.trace[1].exec_start == 2 and r.makespan == 3 and r.retries == 0
    assert r.waits.lock == 2


def test_a_later_group_holding_the_lock_is_killed_and_retried() -> None:
    # T1 waited on the primary: in optimistic it starts after T0's commit
    # (t = 2); T2 started at 0 and holds the row T1 needs: killed, retried
    # after its prior commit (T1's, t = 3).
    trxs = [trx(2, 10), trx(1, 20, TA | MARIA_FL_WAITED), trx(1, 30, conflicts=(1,))]
    r = run(trxs, OPT)
    assert r.retries == 1 and r.trace[2].retried and r.trace[2].exec_start == 3
    assert r.makespan == 4
    # aggressive starts T1 at once: T2 simply waits for T1's lock
    r = run(trxs, AGG)
    assert r.retries == 0 and r.trace[2].exec_start == 2 and r.makespan == 3


def test_sweep_speedups_are_against_the_serial_sql_thread() -> None:
    trxs = [trx(1, i // 4) for i in range(16)]              # batches of 4
    sw = sweep_mariadb(trxs, [1, 2, 4, 8], MariaConfig(mode=CON))
    assert sw.serial_makespan == 16
    assert [r.speedup for r in sw.results] == [1.0, 2.0, 4.0, 4.0]
    assert sw.recommended == 4 and sw.ideal_speedup == 4.0


# ---- a MariaDB binlog written here, read back ----

CORPUS_SMALL = Path("mariadb/small/mysql-bin.000001")


def _write_maria_log(corpus: Path, out: Path, groups: list[tuple[int, int, int, int | None]]) -> None:
    """The corpus file's header and first DDL group, then ``(seq, domain, flags2,
    commit_id)`` groups: XID-terminated, or the corpus DDL's Query when FL_DDL."""
    src = corpus / CORPUS_SMALL
    data = src.read_bytes()
    events = list(read_events([str(src)]))
    first_gtid = next(e for e in events if e.type_code == 162)
    ddl_query = next(e for e in events if e.type_code == 2 and e.pos.offset > first_gtid.pos.offset)
    raw = bytearray(data[:ddl_query.end_pos])
    query_body = data[ddl_query.pos.offset + 19:ddl_query.end_pos - 4]

    def add(type_code: int, body: bytes, flags: int = 0) -> None:
        raw.extend(frame_event(1700000000, type_code, 1, flags, body, crc=True,
                               log_pos=len(raw) + 19 + len(body) + 4))

    for seq, domain, flags2, commit_id in groups:
        body = S.maria_gtid_body.build({"seq_no": seq, "domain_id": domain, "flags2": flags2,
                                        "commit_id": commit_id, "xid": None,
                                        "flags_extra": None, "extra_engines": None,
                                        "sa_seq_no": None, "padding": b""})
        add(162, body.ljust(19, b"\0"), 0x08)
        if flags2 & MARIA_FL_DDL:
            add(2, query_body, 0x08)
        else:
            add(16, seq.to_bytes(8, "little"))
    add(3, b"")
    out.write_bytes(bytes(raw))


def test_a_written_mariadb_log_is_simulated_with_its_flags(corpus: Path, tmp_path: Path) -> None:
    log = tmp_path / "maria-bin.000001"
    G = MARIA_FL_GROUP_COMMIT_ID
    _write_maria_log(corpus, log, [
        (2, 0, TA | G, 100), (3, 0, TA | G, 100),          # one primary group commit
        (4, 0, TA | G | MARIA_FL_WAITED, 200), (5, 0, TA | G, 200),
        (6, 0, DDL, None),
        (7, 1, TA, None), (8, 1, TA, None),                 # another domain
    ])
    assert is_mariadb_log([log])
    trxs = list(ConstantCost(1.0).apply(maria_transactions([log], conflicts=False)))
    assert [t.gtid for t in trxs] == ["0-1-1", "0-1-2", "0-1-3", "0-1-4", "0-1-5", "0-1-6",
                                      "1-1-7", "1-1-8"]
    assert [t.commit_id for t in trxs] == [None, 100, 100, 200, 200, None, None, None]
    assert [t.domain_id for t in trxs] == [0] * 6 + [1, 1]
    assert trxs[3].flags2 & MARIA_FL_WAITED and trxs[5].flags2 & MARIA_FL_DDL
    # conservative, 8 threads (a thread per group): DDL 0-1-1 [0,1]; batch 100 [1,2]; batch 200 [2,3];
    # DDL 0-1-6 [3,4]; domain 1 runs beside domain 0 from t = 0: 1-1-7 [0,1],
    # 1-1-8 (no commit id: its own batch) [1,2]
    r = simulate_mariadb(trxs, MariaConfig(mode=CON, threads=8, trace=True))
    assert [s.commit for s in r.trace] == [1, 2, 2, 3, 3, 4, 1, 2]
    assert r.makespan == 4 and r.domains == 2
    # optimistic: 0-1-3 WAITED waits for 0-1-2's commit (t = 2): [2,3]
    r = simulate_mariadb(trxs, MariaConfig(mode=OPT, threads=8, trace=True))
    assert r.trace[3].speculation == "wait" and r.trace[3].start == 2
    assert [s.commit for s in r.trace] == [1, 2, 2, 3, 3, 4, 1, 1]
    # with 4 threads domain 0 holds all of them (queued work): 1-1-7 waits for a pool thread
    r = simulate_mariadb(trxs, MariaConfig(mode=CON, threads=4, trace=True))
    assert r.waits.no_thread > 0 and r.trace[6].dispatch > 0


def test_bad_costs_and_configs_are_refused() -> None:
    with pytest.raises(SimulationError, match="cost must be"):
        simulate_mariadb([trx(-1)], MariaConfig(mode=CON))
    with pytest.raises(UsageError, match="slave_parallel_threads"):
        simulate_mariadb([trx(1)], MariaConfig(mode=CON, threads=-1))
