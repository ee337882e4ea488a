"""The logical-clock rules of :mod:`repltool.binlog.clock` against the copies kept
in hot loops and in the compiled core.

* ``schedule``'s simulators (``schedule/fastpath.py`` and ``schedule/sweep.py``)
  skip :func:`~repltool.schedule.logical_clock.classify` for a plain transaction;
  whenever that shortcut is taken, ``classify`` (which states the barrier rule
  through :func:`~repltool.binlog.clock.is_barrier`) gives the same answer;
* check's depth (``_Span.add``, twice per transaction) keeps the barrier rule
  inline; it restarts exactly where ``is_barrier`` says;
* ``classify`` (once per transaction and simulated configuration) keeps the
  barrier and inconsistency rules inline; it answers as they say;
* the compiled core's stats accumulator (``_core.pyx``) counts a log's impossible
  clocks as :func:`~repltool.binlog.clock.inconsistent` says, over generated logs;
* the compiled depth summary (``_certcore.pxi``) is held to the Python
  accumulator, which states its rule through ``is_barrier``/``restarts``, by
  ``tests/certify/test_certcore.py::test_parallelism_core_equals_the_python_accumulator``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog import structs as S
from repltool.binlog.clock import inconsistent, is_barrier
from repltool.binlog.constants import EventType
from repltool.check.engine import _Span
from repltool.schedule.logical_clock import classify
from repltool.schedule.model import SimTransaction
from repltool.stats import compute_clock_stats
from repltool.synth.builder import BinlogBuilder, query_body

@st.composite
def shortcut_cases(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """Every input the shortcut takes: ``0 < lc < sn and sn == last_seq + 1 and not
    new_file and index`` (fastpath.py, sweep.py)."""
    last_seq = draw(st.integers(1, (1 << 62)))
    sn = last_seq + 1
    lc = draw(st.integers(1, sn - 1))
    return lc, sn, last_seq, draw(st.integers(1, 1 << 30))


@settings(max_examples=1000, deadline=None)
@given(shortcut_cases())
def test_the_simulators_shortcut_is_classify(case: tuple[int, int, int, int]) -> None:
    """Where the simulators skip ``classify``, it answers what they assume: no
    barrier, no warning, ``sn`` the next ``last_seq``."""
    lc, sn, last_seq, index = case
    warnings: list[str] = []
    trx = SimTransaction(last_committed=lc, sequence_number=sn)
    assert classify(trx, index, last_seq, False, warnings) == (False, sn)
    assert not warnings
    assert not is_barrier(lc, sn, last_seq)


@settings(max_examples=2000, deadline=None)
@given(st.integers(0, 9), st.integers(0, 9), st.none() | st.integers(0, 9))
def test_checks_depth_barrier_is_the_rule(lc: int, sn: int, prev: int | None) -> None:
    """check's ``_Span.add`` (inline, twice per transaction): a transaction after
    ``prev`` (None: the first of its segment) restarts the prefix maxima exactly when
    ``prev is None or is_barrier(lc, sn, prev)``."""
    span = _Span()
    if prev is not None:
        span.add(max(prev - 1, 0), prev)
    span.add(lc, sn)
    assert (span._n == 1) == (prev is None or is_barrier(lc, sn, prev))


@settings(max_examples=3000, deadline=None)
@given(st.integers(0, 9), st.integers(0, 9), st.integers(0, 9), st.booleans(),
       st.integers(0, 2))
def test_classify_is_the_rules(lc: int, sn: int, last_seq: int, new_file: bool,
                               index: int) -> None:
    """``classify`` (inline, once per transaction and configuration): a barrier where
    ``is_barrier`` says or the first of a source file is; an ``inconsistent`` clock or
    a sequence_number that does not increase is refused (lenient: a barrier with a
    warning) except on the first of a source file."""
    first = index == 0 or new_file
    warnings: list[str] = []
    trx = SimTransaction(last_committed=lc, sequence_number=sn, new_source_file=new_file)
    barrier, nxt = classify(trx, index, last_seq, True, warnings)
    refused = not first and (inconsistent(lc, sn) or 0 < sn <= last_seq)
    assert bool(warnings) == refused
    assert barrier == (first or refused or is_barrier(lc, sn, last_seq))
    assert nxt == sn


def _log(path: Path, clocks: list[tuple[int, int]]) -> None:
    with open(path, "wb") as fh:
        b = BinlogBuilder(fh)
        b.start(1_760_000_000, (None, 0))
        for i, (lc, sn) in enumerate(clocks, 1):
            bodies = [(EventType.QUERY_EVENT, query_body(10, "d", "BEGIN")),
                      (EventType.XID_EVENT, S.xid_body.build({"xid": i}))]
            b.transaction(1_760_000_000_000_000 + i, None, 0, lc, sn, bodies)
        b.close(1_760_000_001, None)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(clocks=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1,
                       max_size=30))
def test_the_core_counts_inconsistent_clocks_by_the_rule(core: Any,
                                                         clocks: list[tuple[int, int]]) -> None:
    """(the ``core`` fixture sets the compiled engine for every example)"""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "binlog.000001"
        _log(path, clocks)
        before = core.events_walked()
        [f] = compute_clock_stats([os.fspath(path)]).files
        assert core.events_walked() > before        # the core read it
    assert f.clock.transactions == len(clocks)
    assert f.clock.inconsistent == sum(inconsistent(lc, sn) for lc, sn in clocks)
