"""SimColumns: the column-wise simulator input ``schedule`` keeps for a whole log."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from hypothesis import given, settings, strategies as st

from repltool.positions import Position
from repltool.schedule import SimConfig, SimTransaction, simulate_fast
from repltool.schedule.columns import SimColumns
from repltool.schedule.sweep import critical_path

from schedule_strategies import configs, relay_logs

gtids = st.one_of(st.none(), st.sampled_from(["3e11fa47-71ca-11e1-9e33-c80aa9429562:17",
                                             "3e11fa47-71ca-11e1-9e33-c80aa9429562:tag:0",
                                             "0-1-42", "x:007", "ANONYMOUS", "12"]))


@given(st.lists(st.builds(
    SimTransaction, last_committed=st.integers(0, 1 << 40), sequence_number=st.integers(0, 1 << 40),
    cost=st.floats(0, 1e6), pos=st.one_of(st.none(), st.builds(
        Position, st.sampled_from(["a.000001", "b.000002"]), st.integers(4, 1 << 40),
        st.one_of(st.none(), st.integers(0, 1000)))),
    gtid=gtids, new_source_file=st.booleans(), size=st.integers(0, 1 << 40),
    rows=st.integers(0, 1000), events=st.integers(0, 1000),
    commit_ts=st.one_of(st.none(), st.integers(0, 1 << 62))), max_size=20))
def test_columns_give_back_equal_transactions(sims: list[SimTransaction]) -> None:
    cols = SimColumns(sims)
    assert len(cols) == len(sims)
    assert list(cols) == sims
    assert [cols[i] for i in range(-len(sims), 0)] == sims
    assert cols[1:3] == sims[1:3]


@settings(max_examples=60)
@given(relay_logs(), configs)
def test_simulation_on_columns_is_the_same(log: list[SimTransaction], config: SimConfig) -> None:
    """simulate_fast reads SimColumns' clock columns directly: same result, same trace."""
    cols = SimColumns(log)
    assert simulate_fast(cols, config) == simulate_fast(log, config)
    assert critical_path(cols) == critical_path(log)


def test_columns_are_small() -> None:
    """~100 bytes per transaction where the objects cost ~5x that."""
    n = 20_000
    sims = [SimTransaction(i, i + 1, 1e-4, Position("binlog.000001", 4 + 300 * i),
                           f"3e11fa47-71ca-11e1-9e33-c80aa9429562:{i + 1}", size=300,
                           rows=2, events=5, commit_ts=1_700_000_000_000_000 + i)
            for i in range(n)]
    tracemalloc.start()
    try:
        cols = SimColumns(iter(sims))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(cols) == n and cols[n - 1] == sims[-1]
    assert held < 120 * n, f"{held / n:.0f} bytes per transaction"


def test_schedule_report_keeps_columns(tmp_path: Path) -> None:
    """schedule_report builds SimColumns (the fast path of this module ran)."""
    import repltool.schedule.source as source
    from repltool.synth import SynthOptions, generate
    generate(SynthOptions(out=tmp_path, transactions=300))
    seen = []
    real = source.report_from_sims

    def spy(paths, sims, *a, **kw):  # type: ignore[no-untyped-def]
        seen.append(sims)
        return real(paths, sims, *a, **kw)

    source.report_from_sims = spy  # type: ignore[assignment]
    try:
        report = source.schedule_report(sorted(str(p) for p in tmp_path.glob("binlog.0*")),
                                         [1, 4], SimConfig(), source.LinearCost())
    finally:
        source.report_from_sims = real  # type: ignore[assignment]
    assert isinstance(seen[0], SimColumns) and len(seen[0]) == 300
    assert report.sweep.results[0].transactions == 300


class _Counting(SimColumns):
    """SimColumns that count the transaction objects rebuilt from them."""

    rebuilt = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        if isinstance(index, int):
            type(self).rebuilt += 1
        return super().__getitem__(index)


def _outcome(fn, *args, **kw):  # type: ignore[no-untyped-def]
    from repltool.errors import SimulationError
    try:
        return fn(*args, **kw)
    except SimulationError as exc:
        return ("error", str(exc), exc.pos)


@settings(max_examples=80, deadline=None)
@given(relay_logs(), st.booleans(),
       st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=5))
def test_critical_path_on_columns_is_the_same(log: list[SimTransaction], lenient: bool,
                                              broken: list[tuple[int, int]]) -> None:
    """Equal bound, equal errors (inconsistent clocks, strict and lenient) from columns."""
    import dataclasses
    log = list(log)
    for i, (lc, sn) in enumerate(broken):
        if i < len(log):
            log[i * 3 % len(log)] = dataclasses.replace(log[i * 3 % len(log)],
                                                         last_committed=lc, sequence_number=sn)
    assert _outcome(critical_path, SimColumns(log), lenient=lenient) == \
        _outcome(critical_path, log, lenient=lenient)


def test_critical_path_reads_the_clock_columns() -> None:
    """The columns' fast path ran: only the first transaction (a barrier) is rebuilt."""
    sims = [SimTransaction(i // 4 * 4 + 1 if i >= 4 else 1, i + 2, 1.0 + i % 3)
            for i in range(2000)]
    _Counting.rebuilt = 0
    got = critical_path(_Counting(sims))
    assert got == critical_path(sims) and got > 3.0
    assert _Counting.rebuilt == 1
    for bad in (float("nan"), -1.0, float("inf")):
        broken = sims[:7] + [SimTransaction(5, 9, bad)] + sims[8:]
        want = _outcome(critical_path, broken)
        assert want[0] == "error" and "cost must be a finite number" in want[1]
        assert _outcome(critical_path, SimColumns(broken)) == want
