"""Input checking, cost models, worker lists, sweeps and the critical path."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from repltool.errors import InputError, SimulationError, UsageError
from repltool.positions import Position
from repltool.schedule import (CommitTimestampCost, ConstantCost, CsvCost, LinearCost,
                               Policy, SimConfig, SimTransaction, assign_costs,
                               critical_path, knee, parse_workers, simulate, simulate_events,
                               sweep)

from schedule_strategies import trx

POS = Position("relay-bin.000003", 4711)


# ---- inconsistent timestamps (schedule_next_event's checks) ----

@pytest.mark.parametrize("bad, message", [
    (trx(5, 5, pos=POS), "sequence_number (5) <= last_committed (5)"),
    (trx(3, 2, pos=POS), "sequence_number (2) <= last_committed (3)"),
    (trx(1, 2, pos=POS), "sequence_number (2) <= previous sequence_number (2)"),
    (trx(-1, 3, pos=POS), "negative logical timestamp"),
])
@pytest.mark.parametrize("method", [simulate, simulate_events])
def test_inconsistent_timestamps_raise_with_position(bad: SimTransaction, message: str,
                                                     method: object) -> None:
    """Strict mode stops like the applier does, naming the Gtid event's position."""
    log = [trx(0, 1), trx(1, 2), bad]
    with pytest.raises(SimulationError) as info:
        method(log)  # type: ignore[operator]
    text = str(info.value)
    assert text.startswith("relay-bin.000003:4711: transaction #2: ")
    assert message in text
    assert info.value.pos == POS


def test_lenient_turns_errors_into_barriers() -> None:
    """Lenient mode schedules an inconsistent transaction as a barrier and warns."""
    log = [trx(0, 1), trx(1, 2), trx(3, 2, pos=POS), trx(2, 3)]
    result = simulate(log, SimConfig(lenient=True, trace=True))
    assert result.warnings == (
        "relay-bin.000003:4711: transaction #2: inconsistent logical timestamps: "
        "sequence_number (2) <= last_committed (3); scheduled as a barrier",)
    assert result.trace is not None
    assert [s.barrier for s in result.trace] == [True, False, True, False]


def test_first_transaction_of_a_file_is_not_checked() -> None:
    """As in MySQL the first transaction after a source Rotate skips the checks."""
    log = [trx(0, 1), trx(1, 2), trx(7, 3, new_source_file=True), trx(3, 4)]
    assert simulate(log).barriers == 2


@pytest.mark.parametrize("cost", [-1.0, math.nan, math.inf, "1"])
def test_bad_cost(cost: object) -> None:
    """A cost must be a finite number >= 0."""
    log = [trx(0, 1), SimTransaction(1, 2, cost=cost, pos=POS)]  # type: ignore[arg-type]
    for method in (simulate, simulate_events):
        with pytest.raises(SimulationError, match="relay-bin.000003:4711: .*cost"):
            method(log)  # type: ignore[operator]


@pytest.mark.parametrize("config", [
    SimConfig(workers=0), SimConfig(workers=1025), SimConfig(checkpoint_group=0),
    SimConfig(coordinator_overhead=-1), SimConfig(dequeue_at="later"),  # type: ignore[arg-type]
])
def test_bad_config(config: SimConfig) -> None:
    """Impossible parameters are usage errors."""
    with pytest.raises(UsageError):
        simulate([trx(0, 1)], config)


def test_empty_input() -> None:
    """No transactions: zero makespan, no division by zero."""
    result = simulate([], SimConfig(workers=2))
    assert (result.transactions, result.makespan, result.utilisation) == (0, 0.0, (0.0, 0.0))


def test_fast_path_accepts_an_iterator() -> None:
    """The fast path is one pass, so a generator works."""
    result = simulate(trx(max(0, s - 1), s) for s in range(1, 101))
    assert result.transactions == 100 and result.makespan == 100


# ---- worker lists, knee, sweep ----

@pytest.mark.parametrize("text, counts", [
    ("1,2,4,8,16", [1, 2, 4, 8, 16]), ("1-4", [1, 2, 3, 4]),
    (" 8 , 1-2,2", [1, 2, 8]), ("1024", [1024]),
])
def test_parse_workers(text: str, counts: list[int]) -> None:
    """Comma-separated counts and N-M ranges, sorted and deduplicated."""
    assert parse_workers(text) == counts


@pytest.mark.parametrize("text", ["", "a", "1,,2", "4-2", "0", "1-1025", "1.5", "-3"])
def test_parse_workers_rejects(text: str) -> None:
    """Anything else is a usage error."""
    with pytest.raises(UsageError):
        parse_workers(text)


def test_knee_rule() -> None:
    """The smallest K from which no larger count improves the makespan by 5%."""
    assert knee([(1, 100.0), (2, 50.0), (4, 30.0), (8, 29.0)]) == 4
    assert knee([(1, 100.0), (2, 96.0)]) == 1
    assert knee([(1, 10.0), (2, 5.0), (4, 6.0), (8, 5.5)]) == 2   # not monotone
    assert knee([(1, 0.0), (2, 0.0)]) == 1
    assert knee([(1, 100.0), (2, 94.0)], threshold=0.1) == 1


def test_critical_path() -> None:
    """Longest chain: lc edges inside a file, barriers after everything before."""
    log = [trx(0, 1, 2), trx(1, 2, 5), trx(1, 3, 1), trx(3, 4, 1),
           trx(0, 1, 4, new_source_file=True), trx(1, 2, 1)]
    # (3,4) depends on seq 1..3: 2 + 5 + 1 = 8; the rotate barrier: 8 + 4; then + 1
    assert critical_path(log) == 13
    # a gap barrier waits for all, but a later lc only points at its parents
    assert critical_path([trx(0, 1, 1), trx(1, 2, 9), trx(1, 4, 1), trx(1, 5, 1)]) == 11


def test_sweep() -> None:
    """Speedups are relative to one worker even when 1 is not requested."""
    log = [trx(0, 1, 0)] + [trx(1, s, 1) for s in range(2, 34)]
    result = sweep(log, [2, 4, 8, 16, 32], SimConfig(policy=Policy.FIRST_AVAILABLE),
                   cost_model="constant")
    assert result.baseline_makespan == 32
    assert [r.workers for r in result.results] == [2, 4, 8, 16, 32]
    assert [r.speedup for r in result.results] == [2, 4, 8, 16, 32]
    assert result.critical_path == 1 and result.ideal_speedup == 32
    assert result.recommended == 32
    assert all(r.trace is None for r in result.results)


# ---- cost models ----

def test_constant_and_linear_costs() -> None:
    """Constant is flat; linear adds per-trx, per-row, per-byte and per-event parts."""
    log = [SimTransaction(0, 1, size=1000, rows=10, events=5)]
    assert [t.cost for t in assign_costs(log, ConstantCost(0.5))] == [0.5]
    linear = LinearCost()
    assert [t.cost for t in linear.apply(log)] == [
        pytest.approx(50e-6 + 10 * 10e-6 + 1000 * 5e-9 + 5 * 2e-6)]
    assert linear.name == "linear" and "s/row" in linear.description


def test_commit_timestamp_cost() -> None:
    """Differences of immediate_commit_timestamp, clamped at the floor."""
    log = [SimTransaction(0, s, commit_ts=ts) for s, ts in
           enumerate([1_000_000, 1_000_500, 1_000_400, 1_003_000], start=1)]
    costs = [t.cost for t in CommitTimestampCost(floor=1e-5).apply(log)]
    assert costs == [1e-5, 500e-6, 1e-5, pytest.approx(2600e-6)]
    with pytest.raises(SimulationError, match="relay-bin.000003:4711"):
        list(CommitTimestampCost().apply([SimTransaction(0, 1, pos=POS)]))


def test_csv_cost(tmp_path: Path) -> None:
    """gtid,seconds rows; a header and comments are skipped; missing GTIDs."""
    path = tmp_path / "costs.csv"
    path.write_text("gtid,seconds\n# comment\nu:1,0.25\n\nu:2, 1e-3\n")
    model = CsvCost.from_file(path)
    log = [SimTransaction(0, 1, gtid="u:1"), SimTransaction(1, 2, gtid="u:2")]
    assert [t.cost for t in model.apply(log)] == [0.25, 1e-3]
    with pytest.raises(SimulationError, match="not in cost file"):
        list(model.apply([SimTransaction(0, 1, gtid="u:3", pos=POS)]))
    assert [t.cost for t in CsvCost.from_file(path, default=2.0).apply(
        [SimTransaction(0, 1, gtid="u:3")])] == [2.0]


@pytest.mark.parametrize("text, message", [
    ("u:1,0.5\nu:2,abc\n", ":2: 'abc' is not a number"),
    ("u:1,0.5,7\n", ":1: expected 'gtid,seconds'"),
    ("u:1,-2\n", ":1: cost must be >= 0"),
])
def test_csv_cost_errors(tmp_path: Path, text: str, message: str) -> None:
    """Malformed rows name FILE:LINE."""
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        CsvCost.from_file(path)
    with pytest.raises(InputError):
        CsvCost.from_file(tmp_path / "missing.csv")
