"""Certification state stays bounded as the log grows (issue #8), checked on structures, not RSS.

What is held per transaction is measured directly: the critical-path steps
of the parallelism summary, the write-set history, the GTID name memory, the
commit-order remap window and, for Group Replication, the certification info
(bounded by garbage collection, as in MySQL; without any GC it holds every
distinct key, which is what MySQL's would hold if GC never ran).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from repltool.certify import CertifyOptions, Mode
from repltool.certify.dependency import TransactionDependencyTracker
from repltool.certify.group_replication import Certifier
from repltool.certify.report import CertifyRun
from repltool.certify.source import iter_cert_pairs
from repltool.certify.summary import _Accumulator
from repltool.certify.trackers import REMAP_WINDOW
from repltool.certify._names import RECENT
from repltool.synth.generate import SynthOptions, generate


# ---- the parallelism summary ----

def _chain(n: int, rng: random.Random, reach: int) -> list[tuple[int, int]]:
    """One file of ``n`` transactions; each waits for one of the last ``reach`` before it."""
    return [(max(1, seq - rng.randint(1, reach)) if seq > 1 else 0, seq)
            for seq in range(1, n + 1)]


def test_steps_are_bounded_and_exact_within_the_window() -> None:
    pairs = _chain(40_000, random.Random(5), reach=3)
    bounded, exact = _Accumulator(window=500), _Accumulator(window=10**9)
    most = 0
    for lc, seq in pairs:
        bounded.add(lc, seq)
        exact.add(lc, seq)
        most = max(most, bounded.steps)
    assert exact.steps > 10_000                  # what used to be kept: grows with the span
    assert most <= 2 * 500
    assert bounded.approximate == 0
    assert bounded.result() == exact.result()


def test_a_parent_before_the_window_is_an_upper_bound_and_counted() -> None:
    pairs = [(seq - 1 if seq > 1 else 0, seq) for seq in range(1, 5001)]   # one long chain
    pairs += [(3, 5001), (5001, 5002)]            # 5001 waits for T3 only
    bounded, exact = _Accumulator(window=100), _Accumulator(window=10**9)
    for lc, seq in pairs:
        bounded.add(lc, seq)
        exact.add(lc, seq)
    assert bounded.approximate == 1 and exact.approximate == 0
    assert bounded.result().span >= exact.result().span == 5001
    assert bounded.steps <= 200


def test_barriers_drop_every_step() -> None:
    acc = _Accumulator(window=10**9)
    for seq in range(1, 3001):
        acc.add(0 if seq % 1000 == 0 else seq - 1, seq)
    assert acc.steps == 1                         # only the last barrier's own step
    assert acc.result().span == 3000 and acc.result().barriers == 4   # T1 and every 1000th


# ---- whole runs on a generated log ----

@pytest.fixture(scope="module")
def synth_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("synth")
    generate(SynthOptions(out=out, transactions=6000, ground_truth=False, seed=3))
    logs = sorted(out.glob("binlog.0*"))
    assert len(logs) == 1
    return logs[0], out / "schema.sql"


def test_writeset_tracker_state_is_bounded(synth_log: tuple[Path, Path]) -> None:
    log, schema = synth_log
    history = 300
    options = CertifyOptions(history_size=history)
    run = CertifyRun([log], Mode.WRITESET, options, schema_paths=[schema])
    tracker = TransactionDependencyTracker(Mode.WRITESET, options)
    summary = _Accumulator(window=64)
    reference = _Accumulator(window=10**9)
    n = largest = 0
    sizes: dict[str, int] = {"history": 0, "names": 0, "remap": 0, "steps": 0}
    for _, cert in iter_cert_pairs(run._pairs()):
        result = tracker.get_dependency(cert)
        assert result.computed is not None
        summary.add(*result.computed)
        reference.add(*result.computed)
        n += 1
        largest = max(largest, len(cert.writeset))
        sizes["history"] = max(sizes["history"], len(tracker.writeset._history))  # type: ignore[union-attr]
        sizes["names"] = max(sizes["names"], len(tracker._names._names))
        sizes["remap"] = max(sizes["remap"], len(tracker.commit_order._seen))
        sizes["steps"] = max(sizes["steps"], summary.steps)
    assert n == 6000
    assert sizes["history"] <= history + largest
    assert sizes["names"] <= 2 * history + 2 * RECENT + 1
    assert sizes["remap"] <= REMAP_WINDOW
    assert sizes["steps"] <= 2 * 64
    assert reference.steps > 2 * 64               # the log is long enough to need the bound
    assert summary.approximate == 0               # writeset parents stay within the window
    assert summary.result() == reference.result()


def test_group_replication_certification_info_is_bounded_by_gc(
        synth_log: tuple[Path, Path]) -> None:
    """Every 100 transactions a GC run (stable set: everything) empties the info."""
    log, schema = synth_log
    certs = [cert for _, cert in iter_cert_pairs(
        CertifyRun([log], Mode.GROUP_REPLICATION, CertifyOptions(),
                   schema_paths=[schema])._pairs())]
    bounded, unbounded = Certifier(CertifyOptions()), Certifier(CertifyOptions())
    window = most = 0
    for i, cert in enumerate(certs):
        if i % 100 == 0:
            bounded.garbage_collect(None)
            window = 0
        window += len(cert.writeset)
        for c in (bounded, unbounded):
            c.certify(cert, gtid=cert.gtid or f"x:{i + 1}", snapshot=None, local=False,
                      detect_conflicts=False)
        most = max(most, len(bounded.certification_info))
        assert len(bounded.certification_info) <= window
    distinct = len({h for cert in certs for h in cert.writeset})
    assert len(unbounded.certification_info) == distinct > 5 * most
