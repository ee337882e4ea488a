"""Invariants of the simulator, checked on generated relay logs (hypothesis)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.schedule import (Policy, SimConfig, SimTransaction, critical_path, recover,
                               simulate, simulate_events)
from repltool.schedule.logical_clock import classify

from schedule_strategies import configs, relay_logs

SETTINGS = settings(max_examples=150, deadline=None)


@SETTINGS
@given(relay_logs(), configs)
def test_fast_path_equals_event_model(log: list[SimTransaction], config: SimConfig) -> None:
    """The one-pass recurrence and the discrete-event model give identical results."""
    assert simulate(log, config) == simulate_events(log, config)


@SETTINGS
@given(relay_logs(), configs)
def test_deterministic(log: list[SimTransaction], config: SimConfig) -> None:
    """Two runs on the same input give the same result, trace included."""
    assert simulate(log, config) == simulate(log, config)
    assert simulate_events(log, config) == simulate_events(log, config)


@SETTINGS
@given(relay_logs(), st.booleans(), st.sampled_from([0.0, 1.0]))
def test_first_available_is_monotone(log: list[SimTransaction], pco: bool,
                                     overhead: float) -> None:
    """Under first-available, more workers never increase the makespan."""
    spans = [simulate(log, SimConfig(workers=w, policy=Policy.FIRST_AVAILABLE,
                                     preserve_commit_order=pco,
                                     coordinator_overhead=overhead)).makespan
             for w in range(1, 7)]
    assert spans == sorted(spans, reverse=True)


@SETTINGS
@given(relay_logs(), configs)
def test_makespan_at_least_critical_path(log: list[SimTransaction],
                                         config: SimConfig) -> None:
    """No schedule beats the longest dependency chain of the timestamps."""
    assert simulate(log, config).makespan >= critical_path(log)


@SETTINGS
@given(relay_logs(), configs)
def test_one_worker_is_serial(log: list[SimTransaction], config: SimConfig) -> None:
    """With one worker the makespan is the sum of costs plus overheads.

    Exactly so for first-available (the worker is busy until the commit, so
    the coordinator's overhead never overlaps execution) and for
    at-most-one without overhead; at-most-one may hide some overhead behind
    execution, but never the first one.
    """
    one = dataclasses.replace(config, workers=1)
    result = simulate(log, one)
    total = sum(t.cost for t in log)
    overheads = len(log) * one.coordinator_overhead
    if one.policy is Policy.FIRST_AVAILABLE or one.coordinator_overhead == 0:
        assert result.makespan == total + overheads
    else:
        assert total + one.coordinator_overhead <= result.makespan <= total + overheads
    assert result.waits.commit_order == 0


@SETTINGS
@given(relay_logs(), configs)
def test_trace_respects_the_lwm_and_barriers(log: list[SimTransaction],
                                             config: SimConfig) -> None:
    """No transaction starts before the LWM reached its last_committed.

    In the group since the last barrier, every transaction with
    sequence_number <= last_committed, and the barrier itself (the LWM was
    reset there), committed before it starts.  A barrier starts only after
    every earlier transaction committed.
    """
    trace = simulate(log, config).trace
    assert trace is not None
    last_seq, group_start = 0, 0
    for j, (trx, span) in enumerate(zip(log, trace)):
        barrier, last_seq = classify(trx, j, last_seq, False, [])
        assert span.barrier == barrier
        if barrier:
            group_start = j
            assert all(s.commit <= span.start for s in trace[:j])
            continue
        needed = [s for s in trace[group_start:j]
                  if s.sequence_number <= trx.last_committed]
        assert all(s.commit <= span.start for s in needed + [trace[group_start]])


@SETTINGS
@given(relay_logs(), configs)
def test_commit_order_and_workers(log: list[SimTransaction], config: SimConfig) -> None:
    """Commit order holds when on; dispatch is in relay order; a worker runs one
    transaction at a time; utilisation accounts for every cost."""
    result = simulate(log, config)
    trace = result.trace
    assert trace is not None
    commits = [s.commit for s in trace]
    if config.preserve_commit_order:
        assert commits == sorted(commits)
    else:
        assert all(s.commit == s.end for s in trace)
    assert [s.dispatch for s in trace] == sorted(s.dispatch for s in trace)
    for span in trace:
        assert span.dispatch <= span.start <= span.end <= span.commit
    for worker in range(config.workers):
        mine = [s for s in trace if s.worker == worker]
        assert all(a.commit <= b.start for a, b in zip(mine, mine[1:]))
    busy = sum(u * result.makespan for u in result.utilisation)
    assert abs(busy - result.total_cost) < 1e-9


@settings(max_examples=200, deadline=None)
@given(relay_logs(40), configs, st.data())
def test_recovery_matches_what_committed(log: list[SimTransaction], config: SimConfig,
                                         data: st.DataObject) -> None:
    """WL#5599 recovery skips exactly the groups that committed after the checkpoint.

    For a random crash instant: every group before the coordinator
    checkpoint committed; among the next ``recovery_group_cnt`` groups the
    recovery bitmap marks exactly the committed ones; nothing after them
    committed.
    """
    trace = simulate(log, config).trace
    assert trace is not None
    crash = data.draw(st.floats(0, max(s.commit for s in trace) + 1))
    period = data.draw(st.sampled_from([None, 0.5, 2.0, 7.0]))
    report = recover(trace, workers=config.workers, crash_time=crash,
                     checkpoint_group=config.checkpoint_group, checkpoint_period=period)
    committed = {i for i, s in enumerate(trace) if s.commit <= crash and s.dispatch <= crash}
    cp, cnt = report.checkpoint_index, report.recovery_group_cnt
    assert set(range(cp)) <= committed
    assert set(report.skipped) == {i for i in committed if cp <= i < cp + cnt}
    assert set(report.gaps) == set(range(cp, cp + cnt)) - committed
    assert not {i for i in committed if i >= cp + cnt}
