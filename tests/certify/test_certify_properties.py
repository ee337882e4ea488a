"""Invariants of certification over generated logs (hypothesis).

* ``last_committed < sequence_number``; sequence numbers are 1..n per file.
* WRITESET never raises a parent above the commit-order one (``std::min``),
  and WRITESET_SESSION never lowers the WRITESET one (``std::max``).
* Safety: ``i < j`` sharing a key in one file => ``lc(j) >= sn(i)``, given
  commit-order parents that are themselves safe (as MySQL's are).
* Files are independent after ``rotate()``.
* Group Replication: safety, contiguous numbers from 2, determinism.
"""

from __future__ import annotations

from itertools import groupby

from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.certify import (
    Baseline,
    CertifyOptions,
    CertResult,
    CertTransaction,
    Mode,
    certify,
    check_safety,
    summarise,
)

KINDS = ["dml"] * 8 + ["ddl", "empty", "missing", "fk", "limit"]


@st.composite
def logs(draw: st.DrawFn, max_files: int = 3) -> list[CertTransaction]:
    """Files of transactions with safe commit-order clocks.

    A logged parent is at least the last earlier writer of each of its keys
    (what lock-based commit order guarantees), and at most ``seq - 1``.
    """
    out: list[CertTransaction] = []
    for f in range(draw(st.integers(1, max_files))):
        last_writer: dict[int, int] = {}
        for seq in range(1, draw(st.integers(1, 14)) + 1):
            kind = draw(st.sampled_from(KINDS))
            keys = tuple(draw(st.lists(st.integers(0, 7), max_size=3))) \
                if kind in ("dml", "missing", "fk") else ()
            floor = max((last_writer.get(k, 0) for k in keys), default=0)
            lc = draw(st.integers(floor, seq - 1))
            session = draw(st.none() | st.tuples(st.just(1), st.integers(0, 3)))
            for k in keys:
                last_writer[k] = seq
            out.append(CertTransaction(
                gtid=f"u:{len(out) + 1}", file=f"binlog.{f:06d}", recorded=(lc, seq),
                writeset=keys, ddl=kind == "ddl", empty=kind == "empty",
                missing_keys=kind == "missing", fk_parent=kind == "fk",
                write_set_limit_reached=kind == "limit", session=session))
    return out


SOURCE_MODES = [Mode.COMMIT_ORDER, Mode.WRITESET, Mode.WRITESET_SESSION]
history_sizes = st.sampled_from([1, 2, 3, 5, 25000])


def run(items: list[CertTransaction], mode: Mode, **options: object) -> list[CertResult]:
    return list(certify(items, mode, CertifyOptions(**options)))  # type: ignore[arg-type]


def lcs(results: list[CertResult]) -> list[int]:
    return [r.computed[0] for r in results if r.computed is not None]


@given(logs(), st.sampled_from(SOURCE_MODES), history_sizes, st.sampled_from(list(Baseline)))
def test_clock_is_well_formed(items: list[CertTransaction], mode: Mode, size: int,
                              baseline: Baseline) -> None:
    results = run(items, mode, history_size=size, baseline=baseline)
    assert all(r.computed is not None for r in results)
    for _, group in groupby(results, key=lambda r: r.trx.file):
        clocks = [r.computed for r in group if r.computed is not None]
        assert [sn for _, sn in clocks] == list(range(1, len(clocks) + 1))
        assert all(0 <= lc < sn for lc, sn in clocks)
        assert clocks[0] == (0, 1)


@given(logs(), history_sizes, st.sampled_from(list(Baseline)))
def test_writeset_never_raises_commit_order_and_session_never_lowers(
        items: list[CertTransaction], size: int, baseline: Baseline) -> None:
    co = lcs(run(items, Mode.COMMIT_ORDER, baseline=baseline))
    ws = lcs(run(items, Mode.WRITESET, history_size=size, baseline=baseline))
    wss = lcs(run(items, Mode.WRITESET_SESSION, history_size=size, baseline=baseline))
    assert all(w <= c for w, c in zip(ws, co))
    assert all(s >= w for s, w in zip(wss, ws))


@given(logs(), st.sampled_from(SOURCE_MODES), history_sizes)
def test_safety(items: list[CertTransaction], mode: Mode, size: int) -> None:
    assert check_safety(run(items, mode, history_size=size)) == []


@given(logs(), history_sizes)
def test_writeset_shortens_the_critical_path(items: list[CertTransaction], size: int) -> None:
    """Only WRITESET: the session rule may raise a parent above commit order."""
    after = summarise(run(items, Mode.WRITESET, history_size=size)).after
    co = summarise(run(items, Mode.COMMIT_ORDER)).after
    assert after.span <= co.span
    assert 1 <= after.parallelism <= after.transactions


@given(logs(max_files=4), st.sampled_from(SOURCE_MODES), history_sizes)
def test_files_are_independent_after_rotate(items: list[CertTransaction], mode: Mode,
                                            size: int) -> None:
    opts = {"history_size": size, "reset_sessions_on_rotate": True}

    def view(results: list[CertResult]) -> list[object]:
        return [(r.computed, r.reason, r.depends_on, r.key_hash) for r in results]

    whole = view(run(items, mode, **opts))
    per_file = []
    for _, group in groupby(items, key=lambda t: t.file):
        per_file += view(run(list(group), mode, **opts))
    assert whole == per_file


@given(logs(), st.sampled_from(SOURCE_MODES + [Mode.GROUP_REPLICATION]))
def test_deterministic(items: list[CertTransaction], mode: Mode) -> None:
    assert run(items, mode) == run(items, mode)


group_options = st.fixed_dictionaries({
    "session_order": st.booleans(),
    "gc_every": st.none() | st.integers(1, 5),
    "members": st.sampled_from([(), 2, 3]),
    "member_lag": st.integers(0, 4),
    "local_member": st.sampled_from([None, "member-1"]),
})


@settings(max_examples=150)
@given(logs(max_files=2), group_options)
def test_group_replication_invariants(items: list[CertTransaction], options: dict[str, object]) -> None:
    results = run(items, Mode.GROUP_REPLICATION, **options)
    assigned = [r.computed for r in results if r.computed is not None]
    assert [sn for _, sn in assigned] == list(range(2, len(assigned) + 2))
    assert all(1 <= lc < sn for lc, sn in assigned)
    assert check_safety(results) == []
    if not options["members"] and options["local_member"] is None:
        assert len(assigned) == len(items)
    if options["member_lag"] == 0:
        assert all(r.conflict is None for r in results)
