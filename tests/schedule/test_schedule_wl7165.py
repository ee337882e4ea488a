"""Examples from WL#7165 (seeds/WL7165-mts-logical-clock-scheduling.txt)."""

from __future__ import annotations

import itertools

import pytest

from repltool.errors import SimulationError
from repltool.positions import Position
from repltool.schedule import Policy, SimConfig, SimTransaction, simulate

# The WL's picture, verbatim (only the transaction lines).  P: the commit
# parent / last_committed is read (binlog_prepare); C: the commit steps the
# clock.
DIAGRAM = """\
    Trx1 ------------P----------C-------------------------------->
    Trx2 ----------------P------+---C---------------------------->
    Trx3 -------------------P---+---+-----C---------------------->
    Trx4 -----------------------+-P-+-----+----C----------------->
    Trx5 -----------------------+---+-P---+----+---C------------->
    Trx6 -----------------------+---+---P-+----+---+---C---------->
    Trx7 -----------------------+---+-----+----+---+-P-+--C------->
"""


def diagram_points() -> list[tuple[int, int]]:
    """(P column, C column) of Trx1..Trx7."""
    return [(line.index("P"), line.index("C")) for line in DIAGRAM.splitlines()]


def timestamps() -> tuple[list[int], list[int], list[int]]:
    """Commit parents (old scheme), last_committed and sequence_number (new)."""
    points = diagram_points()
    commits = sorted(c for _, c in points)
    seq = [commits.index(c) + 1 for _, c in points]
    # old: the counter value at P = commits before P
    parent = [sum(c < p for c in commits) for p, _ in points]
    # new: the largest sequence_number committed before P
    last_committed = [max((s for s, (_, c) in zip(seq, points) if c < p), default=0)
                      for p, _ in points]
    return parent, last_committed, seq


def test_diagram_gives_the_timestamps() -> None:
    """The picture encodes commit parents 0,0,0,1,2,2,5 and (lc, seq) = those, 1..7.

    Commits happen in Trx order, so sequence_number is 1..7 and
    last_committed is the number of commits before P, as is the old
    commit-parent counter.
    """
    parent, lc, seq = timestamps()
    assert seq == [1, 2, 3, 4, 5, 6, 7]
    assert lc == [0, 0, 0, 1, 2, 2, 5]
    assert parent == lc


def old_parallel(i: int, j: int) -> bool:
    """Commit-parent scheme: parallel iff same commit parent."""
    parent, _, _ = timestamps()
    return parent[i] == parent[j]


def new_parallel(i: int, j: int) -> bool:
    """Lock-based scheme (C2/C3): Trx_j may run with earlier Trx_i iff lc_j < seq_i."""
    _, lc, seq = timestamps()
    return lc[j] < seq[i]


def pairs(rule: object) -> set[tuple[int, int]]:
    return {(i + 1, j + 1) for i, j in itertools.combinations(range(7), 2)
            if rule(i, j)}  # type: ignore[operator]


def test_commit_parent_versus_lock_based_pairs() -> None:
    """WL#7165: the lock-based rule admits every pair the old rule admits, and more.

    The WL states: Trx5 and Trx6 may run in parallel under the old scheme,
    Trx4/Trx5 and Trx6/Trx7 may not; with lock intervals Trx4 may run with
    Trx5 and Trx6, and Trx6 with Trx7.
    """
    old, new = pairs(old_parallel), pairs(new_parallel)
    assert old == {(1, 2), (1, 3), (2, 3), (5, 6)}
    assert new == {(1, 2), (1, 3), (2, 3), (2, 4), (3, 4), (3, 5), (3, 6),
                   (4, 5), (4, 6), (5, 6), (6, 7)}
    assert old < new
    assert {(4, 5), (4, 6), (6, 7)} <= new - old


def replica_log(last_committed: list[int]) -> list[SimTransaction]:
    """Trx0 (0,1) then Trx1..Trx7 shifted by one, costs = C - P columns.

    A replica treats last_committed = 0 as a barrier, so Trx1..Trx3 (lc 0
    in the picture) would serialise; a first transaction that commits
    before all of them keeps the picture's dependencies intact.
    """
    out = [SimTransaction(0, 1, cost=0.0, gtid="trx0")]
    for n, ((p, c), lc) in enumerate(zip(diagram_points(), last_committed), start=1):
        out.append(SimTransaction(lc + 1, n + 1, cost=float(c - p), gtid=f"trx{n}"))
    return out


def overlapping(log: list[SimTransaction]) -> tuple[float, set[tuple[int, int]]]:
    result = simulate(log, SimConfig(workers=8, policy=Policy.FIRST_AVAILABLE,
                                     trace=True))
    assert result.trace is not None
    spans = result.trace[1:]
    return result.makespan, {
        (i + 1, j + 1) for i, j in itertools.combinations(range(7), 2)
        if spans[i].start < spans[j].end and spans[j].start < spans[i].end}


def test_simulated_overlaps_follow_the_rule() -> None:
    """On the replica only allowed pairs overlap, and lock-based wins.

    Commit-parent timestamps are encoded as last_committed = the last
    transaction of the previous commit-parent group (wait for everything
    older); lock-based ones are the picture's.  With enough workers the
    lock-based schedule runs Trx4 with Trx5 and Trx6, and Trx6 with Trx7,
    which the commit-parent schedule never does.
    """
    old_lc = [0, 0, 0, 3, 4, 4, 6]
    old_span, old_overlap = overlapping(replica_log(old_lc))
    new_span, new_overlap = overlapping(replica_log(timestamps()[1]))
    assert old_overlap <= pairs(old_parallel)
    assert new_overlap <= pairs(new_parallel)
    assert {(4, 5), (4, 6), (6, 7)} <= new_overlap
    assert not {(4, 5), (4, 6), (6, 7)} & old_overlap
    assert new_span < old_span


def gaq_example() -> list[SimTransaction]:
    """The WL's GAQ table: commit points 95..99 with last_committed 91,99,91,90,100.

    Preceded by transactions 1..94 so that numbering is contiguous; GAQ
    indexes 100..104 of the WL are relay indexes 94..98 here.
    """
    out = [SimTransaction(max(0, s - 1), s, cost=1.0) for s in range(1, 95)]
    for n, (lc, sn) in enumerate([(91, 95), (99, 96), (91, 97), (90, 98), (100, 99)]):
        out.append(SimTransaction(lc, sn, cost=1.0, gtid=f"gaq:{100 + n}",
                                  pos=Position("relay-bin.000002", 1000 + 100 * n)))
    return out


def test_gaq_waiting_list_example_is_rejected() -> None:
    """The WL's waiting-list table has last_committed >= sequence_number.

    GAQ index 101 (commit point 96, last_committed 99) and 104 (99, 100) are
    not consistent timestamps: MySQL stops the applier with "sequence_number
    (96) <= last_committed (99)" (schedule_next_event), and so does the
    simulator, naming the transaction's position.
    """
    with pytest.raises(SimulationError) as info:
        simulate(gaq_example())
    assert str(info.value) == (
        "relay-bin.000002:1100: transaction #95 (gaq:101): inconsistent logical "
        "timestamps: sequence_number (96) <= last_committed (99)")


def test_gaq_waiting_list_example_lenient() -> None:
    """Lenient mode turns the two inconsistent entries into barriers + warnings."""
    result = simulate(gaq_example(), SimConfig(workers=4, lenient=True, trace=True))
    assert [w.split(":", 2)[:2] for w in result.warnings] == [
        ["relay-bin.000002", "1100"], ["relay-bin.000002", "1400"]]
    assert result.trace is not None
    assert [s.barrier for s in result.trace[94:]] == [False, True, False, False, True]
