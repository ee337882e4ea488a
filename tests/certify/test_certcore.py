"""The compiled core's source-side trackers against the Python ones (the reference).

:class:`repltool.certify.coretrack.CoreDependencyTracker` keeps the state of
MySQL's commit-order, writeset and writeset-session trackers and of the
recorded-clock guard in C (``repltool/binlog/_certcore.pxi``).  Here:

* generated transaction sequences (hypothesis) through both implementations give
  equal :class:`CertResult` values (clock, reason, key, key hash, GTID named as
  parent, detail text, raised flag): unsafe and arbitrary logged clocks, gaps and
  zeros, rotations, duplicate keys, every barrier flag, MySQL's write-set limit,
  missing keys with MySQL's and repltool's reasons, sessions, history sizes that
  overflow, and a guard small enough to forget keys;
* a long sequence that wraps the commit-order remap window, compacts the GTID
  names and trims the guard;
* whole ``repltool certify`` outputs (text, JSON, JSONL in the three modes, and
  the ``--output`` re-tagged files) with the core's trackers and with the Python
  ones, byte for byte, on every corpus file, the MariaDB sets and a synth log;
* each comparison asserts that the core path really ran (it counts its
  transactions), and the pure-Python engine still certifies.
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import repltool.certify as certify_pkg
from repltool.binlog.engine import compiled_core
from repltool.certify import (Baseline, CertifyOptions, CertTransaction, KeyRef, Mode,
                              certify, dependency)
from repltool.certify.coretrack import core_transactions, iter_core_dependencies
from repltool.certify.report import lane_direct_transactions
from repltool.certify.dependency import iter_source_dependencies
from repltool.certify.model import Fallback, Reason
from repltool.certify.trackers import Parent
from repltool.certify.report import CertifyRun
from repltool.writeset.fused import hash_counts

CORE = compiled_core()
SOURCE_MODES = [Mode.COMMIT_ORDER, Mode.WRITESET, Mode.WRITESET_SESSION]
FALLBACKS = [Fallback.NO_USABLE_KEY.value, Fallback.PARTIAL_IMAGE.value,
             Fallback.NO_SCHEMA.value, "extractor-own"]
BIG = st.integers(0, (1 << 64) - 1)


def _core():
    if CORE is None:
        pytest.fail("the compiled core is not built (REPLTOOL_ENGINE=python runs "
                    "test_python_engine_certifies only)")
    return CORE


@st.composite
def sequences(draw: st.DrawFn) -> list[CertTransaction]:
    out: list[CertTransaction] = []
    files = draw(st.integers(1, 3))
    keyspace = draw(st.sampled_from([3, 8, 40]))
    for f in range(files):
        seq = 0
        for _ in range(draw(st.integers(0, 30))):
            seq += draw(st.sampled_from([1, 1, 1, 1, 0, 2, 5]))     # gaps, repeats
            lc = draw(st.sampled_from([0, max(seq - 1, 0), max(seq - 2, 0), seq + 3])
                      | st.integers(0, seq + 2))
            rec = draw(st.sampled_from([(lc, seq), (lc, seq), (0, 0), (0, seq)]))
            hashes = tuple(draw(st.lists(st.integers(0, keyspace) | BIG, max_size=6)))
            with_keys = draw(st.booleans())
            keys = tuple(KeyRef("db", "t", "PRIMARY", (str(h),)) for h in hashes) \
                if with_keys else ()
            missing = draw(st.booleans()) and draw(st.booleans())
            fallback = tuple(draw(st.lists(st.sampled_from(FALLBACKS), min_size=1,
                                           max_size=3))) if missing else ()
            kind = draw(st.sampled_from(["dml"] * 6 + ["ddl", "ctas", "empty", "fk", "limit"]))
            out.append(CertTransaction(
                gtid=draw(st.sampled_from([None, f"u:{len(out) + 1}"])),
                file=f"binlog.{f:06d}", recorded=rec, writeset=hashes, keys=keys,
                ddl=kind == "ddl", ctas=kind == "ctas", empty=kind == "empty",
                fk_parent=kind == "fk", write_set_limit_reached=kind == "limit",
                missing_keys=missing, fallback=fallback,
                session=draw(st.none() | st.tuples(st.integers(1, 2), st.integers(0, 3))),
                new_file=draw(st.integers(0, 15)) == 0))
    return out


def both(items: list[CertTransaction], mode: Mode, options: CertifyOptions):
    python = list(iter_source_dependencies(iter(items), mode, options))
    before = core_transactions()
    core = list(iter_core_dependencies(iter(items), mode, options, _core()))
    assert core_transactions() - before == len(items)        # the core computed them
    return python, core


@settings(max_examples=400, deadline=None)
@given(sequences(), st.sampled_from(SOURCE_MODES), st.sampled_from([1, 2, 3, 5, 25000]),
       st.sampled_from(list(Baseline)), st.booleans(), st.sampled_from([1, 2, 5, 1 << 18]))
def test_core_trackers_equal_the_python_trackers(items, mode, size, baseline, reset, guard):
    options = CertifyOptions(history_size=size, baseline=baseline,
                             reset_sessions_on_rotate=reset)
    with mock.patch.object(dependency, "LAST_WRITERS_MIN", guard):
        python, core = both(items, mode, options)
    assert core == python


@pytest.mark.parametrize("mode", SOURCE_MODES)
def test_long_sequence_wraps_every_bounded_structure(mode: Mode) -> None:
    """6,000 transactions, logged numbers that are not positions (the 4,096-entry
    remap window wraps), history size 7 (overflows), GTID names compacted
    (past 2 * 7 + 2,048), a guard of 64 keys (trimmed, floor raised)."""
    rng = random.Random(20)
    items, seq = [], 0
    for i in range(6000):
        seq += rng.choice([1, 1, 2])
        lc = rng.choice([0, seq - 1, max(0, seq - rng.randint(1, 40))])
        hashes = tuple(rng.randrange(300) for _ in range(rng.randint(0, 5)))
        items.append(CertTransaction(
            gtid=f"u:{i + 1}", file="binlog.000001" if i < 5000 else "binlog.000002",
            recorded=(lc, seq), writeset=hashes, ddl=rng.random() < 0.01,
            session=(1, rng.randrange(5))))
    with mock.patch.object(dependency, "LAST_WRITERS_MIN", 64):
        python, core = both(items, mode, CertifyOptions(history_size=7))
    assert core == python
    assert any(r.raised for r in python) or mode is Mode.COMMIT_ORDER


def test_invalid_input_raises_the_python_error() -> None:
    from repltool.errors import CertifyError
    for bad in (CertTransaction(writeset=(-1,)), CertTransaction(writeset=(1 << 64,)),
                CertTransaction(recorded=(-1, 2)), CertTransaction(writeset=(1, 2), keys=(None,))):
        with pytest.raises(CertifyError) as py:
            list(iter_source_dependencies([bad], Mode.WRITESET, CertifyOptions()))
        with pytest.raises(CertifyError) as co:
            list(iter_core_dependencies([bad], Mode.WRITESET, CertifyOptions(), _core()))
        assert str(co.value) == str(py.value)


def test_certify_takes_the_core_with_the_compiled_engine() -> None:
    before = core_transactions()
    items = [CertTransaction(gtid=f"u:{i}", file="b.1", recorded=(i - 1, i), writeset=(i % 2,))
             for i in range(1, 5)]
    got = [r.computed for r in certify(items, Mode.WRITESET)]
    assert got == [(0, 1), (1, 2), (1, 3), (2, 4)]
    assert core_transactions() - before == (4 if CORE is not None else 0)


# ---- whole outputs, core trackers against Python trackers ----

def _run(cli_args: list[str], capsys, python: bool, objects: bool = False) -> tuple[int, str]:
    """``python``: the Python trackers; ``objects``: write sets of ``WriteKey`` records
    (``read_writesets``) where certify reads hashes (``read_writeset_hashes``)."""
    from repltool.cli import run
    import repltool.writeset as writeset_pkg
    capsys.readouterr()
    # (warnings.warn prints a place once per process: both runs print every one)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with mock.patch.object(writeset_pkg, "read_writeset_hashes",
                               writeset_pkg.read_writesets if objects
                               else writeset_pkg.read_writeset_hashes):
            if python:
                # the Python trackers: certify() without the core, and no compiled lane
                # (CertifyRun.lane_parts asks repltool.binlog.engine itself)
                with mock.patch.object(certify_pkg, "compiled_core", lambda: None), \
                        mock.patch.object(CertifyRun, "lane_parts",
                                          lambda self, writers=(): None):
                    code = run(cli_args)
            else:
                code = run(cli_args)
    out, err = capsys.readouterr()
    return code, out + "\n--stderr--\n" + err


def _tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def compare_outputs(files: list[Path], schema: Path | None, tmp_path: Path, capsys,
                    modes=(None, "writeset-session", "commit-order"),
                    formats=("text", "json", "jsonl"), options: tuple[str, ...] = ()) -> int:
    """Run each command with both trackers, and with the core's trackers on write sets of
    ``WriteKey`` records instead of hashes; equal bytes; return the core's transaction
    count (:data:`HASHED` counts the transactions read in hash mode)."""
    _core()
    extra = [*(["--schema", str(schema)] if schema is not None else []), *options]
    names = [str(f) for f in files]
    ran = 0
    for mode in modes:
        for fmt in formats:
            args = ["certify", "--format", fmt, *extra,
                    *(["--mode", mode] if mode else []), *names]
            before, hashed = core_transactions(), hash_counts()[0]
            direct = lane_direct_transactions()
            core = _run(args, capsys, python=False)
            count = core_transactions() - before
            HASHED[0] += hash_counts()[0] - hashed
            DIRECT[0] += lane_direct_transactions() - direct
            ran += count
            if fmt == "jsonl" and core[0] == 0:
                # every transaction went through the core (default mode: none on relay
                # logs, which default to group replication)
                lines = core[1].split("\n--stderr--\n")[0].count("\n")
                assert count == lines or (mode is None and count == 0), (mode, count, lines)
            assert _run(args, capsys, python=True) == core, (mode, fmt)
            assert _run(args, capsys, python=False, objects=True) == core, (mode, fmt)
    outs = []
    for python in (False, True):
        out = tmp_path / f"retag-{python}"
        outs.append((_run(["certify", "--format", "json", "--pk-only" if schema is None else
                           "--baseline=recorded", *extra, "--output", str(out), *names],
                          capsys, python), _tree(out) if out.exists() else {}))
    assert outs[0] == outs[1]
    return ran


def _is_binlog(p: Path) -> bool:
    return p.suffix not in (".json", ".md", ".sql", ".index", ".txt") and p.is_file()


@pytest.mark.corpus_files("path", "mysql/*/*", select=_is_binlog)
def test_certify_outputs_equal_on_every_mysql_corpus_file(path: Path, tmp_path, capsys) -> None:
    compare_outputs([path], None, tmp_path, capsys, formats=("jsonl", "text"))


MARIA_SETS = ["small", "rotation", "serial", "compressed"]
HASHED = [0]
DIRECT = [0]


def _hashed() -> int:
    """Transactions the comparisons since the last call read in hash mode."""
    n, HASHED[0] = HASHED[0], 0
    return n


def _direct() -> int:
    """Transactions the comparisons since the last call certified in the lane from the
    hash reader's values (no CertTransaction)."""
    n, DIRECT[0] = DIRECT[0], 0
    return n


@pytest.mark.parametrize("name", MARIA_SETS)
def test_certify_outputs_equal_on_the_mariadb_sets(name: str, corpus: Path, tmp_path,
                                                   capsys) -> None:
    d = corpus / "mariadb" / name
    files = sorted(d.glob("mysql-bin.0*"))
    schema = d / "schema.sql"
    _hashed()
    _direct()
    ran = compare_outputs(files, schema if schema.exists() else None, tmp_path, capsys)
    assert ran > 0
    assert _hashed() > (0 if name == "compressed" else 1000)
    assert _direct() > (0 if name == "compressed" else 1000)


def test_certify_outputs_equal_on_a_synth_log(tmp_path: Path, capsys) -> None:
    from repltool.cli import run
    out = tmp_path / "synth"
    assert run(["synth", "-o", str(out), "--size", "1500000", "--seed", "20",
                "--no-ground-truth"]) == 0
    capsys.readouterr()
    files = sorted(out.glob("binlog.0*"))
    assert files
    _hashed()
    _direct()
    ran = compare_outputs(files, out / "schema.sql", tmp_path, capsys)
    assert ran > 1000 and _hashed() > 1000 and _direct() > 1000
    # a history of 4 hashes: write sets past it are dropped (MySQL's write-set limit,
    # write_set_limit_reached) and the history overflows and is cleared
    small = tmp_path / "small-history"
    small.mkdir()
    assert compare_outputs(files, out / "schema.sql", small, capsys,
                           options=("--history-size", "4")) > 1000
    _, lines = _run(["certify", "--format", "jsonl", "--history-size", "4", "--schema",
                     str(out / "schema.sql"), *map(str, files)], capsys, python=False)
    assert '"reason": "history-full"' in lines and "history full: cleared" in lines


def test_lane_values_path_equals_the_cert_transaction_path(tmp_path: Path, capsys) -> None:
    """The lane's step on the hash reader's values (``CoreDependencyTracker.step_values``,
    no ``CertTransaction``) against the same lane building a ``CertTransaction`` per
    transaction (``HashedWriteset`` not recognised): equal bytes in both formats, mode
    and history size; the first path ran, and not at all in the second run."""
    import repltool.writeset.model as ws_model
    _core()
    out = tmp_path / "synth"
    from repltool.cli import run
    assert run(["synth", "-o", str(out), "--size", "1000000", "--seed", "7",
                "--no-ground-truth"]) == 0
    files = [str(f) for f in sorted(out.glob("binlog.0*"))]
    for mode in ("writeset", "writeset-session"):
        for fmt in ("jsonl", "text"):
            for history in ("25000", "4"):
                args = ["certify", "--format", fmt, "--mode", mode, "--history-size", history,
                        "--schema", str(out / "schema.sql"), *files]
                before, steps = lane_direct_transactions(), core_transactions()
                direct = _run(args, capsys, python=False)
                n = lane_direct_transactions() - before
                # (a write set spilled past SPILL_AT pending keys takes the second path)
                assert 1000 < n <= core_transactions() - steps and direct[1].count("\n") > 10, direct
                with mock.patch.object(ws_model, "HashedWriteset", type("Other", (), {})):
                    before = lane_direct_transactions()
                    assert _run(args, capsys, python=False) == direct, (mode, fmt, history)
                    assert lane_direct_transactions() == before


def test_python_engine_certifies(tmp_path: Path, capsys, monkeypatch) -> None:
    """``REPLTOOL_ENGINE=python``: the Python trackers, no core step, the same JSONL."""
    from repltool.cli import run
    out = tmp_path / "synth"
    assert run(["synth", "-o", str(out), "--size", "300000", "--seed", "3",
                "--no-ground-truth"]) == 0
    files = [str(f) for f in sorted(out.glob("binlog.0*"))]
    args = ["certify", "--format", "jsonl", "--schema", str(out / "schema.sql"), *files]
    capsys.readouterr()
    monkeypatch.setenv("REPLTOOL_ENGINE", "python")
    before = core_transactions()
    assert run(args) == 0
    python_out = capsys.readouterr().out
    assert core_transactions() == before
    assert len(python_out.splitlines()) > 100
    if CORE is not None:
        monkeypatch.setenv("REPLTOOL_ENGINE", "compiled")
        assert run(args) == 0
        assert capsys.readouterr().out == python_out
        assert core_transactions() > before


# ---- the summary's accumulator ----

@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 12), st.integers(0, 14)), max_size=80),
       st.sampled_from([1, 2, 3, 1 << 16]))
def test_parallelism_core_equals_the_python_accumulator(pairs, window) -> None:
    """``ParallelismCore`` (Summariser with the compiled engine) against ``_Accumulator``:
    barriers, gaps, repeats, new segments, the trimmed prefix maximum (small windows)."""
    from array import array
    from repltool.certify.summary import _Accumulator, parallelism_of
    python = _Accumulator(window)
    skipped = 0
    for lc, seq in pairs:
        if lc < 0:
            skipped += 1
        else:
            python.add(lc, seq)
    core = _core().ParallelismCore(window)
    assert core.add_flat(array("q", [v for p in pairs for v in p]), True) == skipped
    assert parallelism_of(core) == parallelism_of(python)
    assert core.steps == python.steps


def test_the_full_guard_keeps_its_bound_and_the_python_guards_answers() -> None:
    """The recorded-clock guard past its limit (2^18 keys, what a long log reaches):
    it holds exactly ``limit`` keys in a table of 4 x ``limit`` slots (24 bytes a key,
    4 a slot: 10 MiB, its memory bound), and the raised parents equal the Python
    ``LastWriters``' on the same stream."""
    core = _core()
    limit = dependency.LAST_WRITERS_MIN
    tracker = core.SourceTracker(0, False, 25_000, False, limit)
    guard = dependency.LastWriters(limit)
    seq, key = 0, 0
    for _ in range((limit + limit // 2) // 100):
        seq += 1
        ws = tuple(range(key, key + 100))
        key += 100
        out = tracker.step(ws, 0, seq - 1, seq, None, seq)
        want = guard.check(ws, seq, Parent(seq - 1, Reason.NO_KEY))
        assert (out[0], out[6]) == (want.value, want.value != seq - 1)
    assert tracker.guard_table == (limit, 4 * limit)
    # a forgotten key (the floor raises it) and a remembered one (its writer raises it)
    for ws, lc in (((0, 5), 1), ((key - 1,), 2)):
        seq += 1
        out = tracker.step(ws, 0, lc, seq, None, seq)
        want = guard.check(ws, seq, Parent(lc, Reason.NO_KEY))
        assert out[6] and out[0] == want.value > lc
    assert tracker.guard_table[0] == limit
