"""Group Replication's certifier on the compiled core against the Python one (the reference).

:class:`repltool.certify.grcore.CoreGroupCertifier` keeps the certification info
(hash -> sequence number) and the parallel applier indexes in C
(``repltool/binlog/_grcore.pxi``) for the runs whose snapshot versions are never
read (:func:`repltool.certify.grcore.core_applies`).  Here:

* generated transaction sequences (hypothesis) through both certifiers give equal
  :class:`CertResult` values (clock, reason, key, key hash, GTID named as parent,
  detail text): duplicates within a write set, empty transactions, DDL, CTAS, missing
  keys, View_change, ``gc_every``, ``session_order``, ``gc_opens_window=False``;
  a long sequence that grows the C table and compacts the GTID names;
* the GTID check (the core decides only what is certainly valid) raises exactly where
  the Python certifier raises, and invalid hashes give the Python error;
* whole ``repltool certify --mode group-replication`` outputs (text, JSON, JSONL, the
  ``--output`` re-tagged files) with the core certifier - on the hash reader's values,
  on ``WriteKey`` write sets, and through ``CertResult`` objects - and with the Python
  certifier, byte for byte, on every MySQL corpus file and synth logs;
* :class:`repltool.distributed.grpacked.PackedGroupCertifier` (the ``--spark`` driver)
  on the core against its Python loop and the object path: equal ``ReportColumns``;
* options the core does not take (member simulation, conflicts, stable sets,
  ``--gc-interval``, a local member) keep the Python certifier;
* each comparison asserts that the core path really ran (it counts its transactions),
  and the pure-Python engine keeps the Python certifier.
"""

from __future__ import annotations

import json
import random
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import repltool.certify.report as report_mod
from repltool.binlog.engine import compiled_core
from repltool.certify import CertifyOptions, CertTransaction, GtidSet, KeyRef
from repltool.certify.group_replication import check_gtid, iter_group_replication
from repltool.certify.grcore import CoreGroupCertifier, core_applies, core_gr_transactions
from repltool.certify.model import Fallback
from repltool.certify.report import CertifyRun
from repltool.certify.stitched import PairsRun
from repltool.distributed import grpacked
from repltool.distributed.wspack import unpack_pairs
from repltool.errors import CertifyError

from certify_helpers import packed_reports, packed_units

CORE = compiled_core()
BIG = st.integers(0, (1 << 64) - 1)
GR = ["--mode", "group-replication"]


def _core() -> Any:
    if CORE is None:
        pytest.fail("the compiled core is not built (REPLTOOL_ENGINE=python runs "
                    "test_python_engine_keeps_the_python_certifier only)")
    return CORE


# ---- generated sequences: CoreGroupCertifier.certify == iter_group_replication ----

@st.composite
def sequences(draw: st.DrawFn) -> list[CertTransaction]:
    out: list[CertTransaction] = []
    keyspace = draw(st.sampled_from([2, 6, 40]))
    clock = draw(st.sampled_from([0.0, 1.7e9]))
    for i in range(draw(st.integers(0, 40))):
        clock += draw(st.sampled_from([0.0, 0.25, 0.4, 1.0, 3.5, 0.1]))
        kind = draw(st.sampled_from(["dml"] * 8 + ["ddl", "ctas", "empty", "emptyrows",
                                                   "missing", "view"]))
        hashes = tuple(draw(st.lists(st.integers(0, keyspace) | BIG, max_size=6)))
        if kind in ("ddl", "empty", "view") and draw(st.booleans()):
            hashes = ()
        if draw(st.booleans()) and hashes:       # duplicates within one write set
            hashes = hashes + hashes[:draw(st.integers(1, len(hashes)))]
        keys = tuple(KeyRef("db", "t", "PRIMARY", (str(h),)) for h in hashes) \
            if draw(st.booleans()) else ()
        missing = kind == "missing"
        out.append(CertTransaction(
            gtid=draw(st.sampled_from([None, f"3E11FA47-71CA-11E1-9E33-C80AA9429562:{i + 1}",
                                       f"u:tag:{i + 1}"])),
            file="binlog.000001", recorded=(draw(st.integers(0, 5)), i + 1),
            writeset=hashes, keys=keys, ddl=kind == "ddl" and not hashes,
            ctas=kind == "ctas", empty=kind in ("empty", "emptyrows"), missing_keys=missing,
            fallback=(Fallback.NO_USABLE_KEY.value,) if missing else (),
            view_change=kind == "view",
            session=draw(st.sampled_from([None, (1, 7), (1, 8), (2, 7)])),
            commit_time=draw(st.sampled_from([clock, clock, clock, None]))))
    return out


OPTIONS = st.builds(
    CertifyOptions, history_size=st.sampled_from([1, 3, 25000]),
    gc_every=st.sampled_from([None, 1, 2, 5]), session_order=st.booleans(),
    gc_opens_window=st.booleans(), gc_interval=st.sampled_from([None, 0.3, 1.0, 2, 60.0]))


def _both(items: list[CertTransaction], options: CertifyOptions) -> tuple[list, list]:
    want = list(iter_group_replication(items, options))
    before = core_gr_transactions()
    certifier = CoreGroupCertifier(options, _core())
    got = [certifier.certify(t) for t in items]
    assert core_gr_transactions() - before == len(items)
    return want, got


@settings(max_examples=400, deadline=None)
@given(sequences(), OPTIONS)
def test_core_certifier_equals_the_python_certifier(items, options) -> None:
    want, got = _both(items, options)
    assert got == want


@pytest.mark.parametrize("options", [CertifyOptions(history_size=1),
                                     CertifyOptions(history_size=2, gc_every=700,
                                                    session_order=True),
                                     CertifyOptions(history_size=1, gc_opens_window=False,
                                                    gc_every=3000),
                                     CertifyOptions(history_size=1, gc_interval=9.5)])
def test_long_sequence_grows_the_table_and_compacts_the_names(options) -> None:
    """6,000 transactions over 20,000 keys: the C table grows past its first sizes, the
    GTID names are compacted (SeqNames keeps the live sequence numbers: the core's) and
    ``gc_every`` clears the table; every result equal, ``depends_on`` included."""
    rnd = random.Random(15)
    items = []
    for i in range(6000):
        r = rnd.random()
        ws = tuple(rnd.randrange(20000) for _ in range(rnd.randrange(5)))
        items.append(CertTransaction(
            gtid=f"u:{i + 1}", file="b", recorded=(0, i + 1), writeset=ws,
            ddl=r < 0.01 and not ws, empty=0.01 <= r < 0.03 and not ws, ctas=0.995 < r,
            view_change=0.03 <= r < 0.035, session=(1, rnd.randrange(9)),
            commit_time=1.7e9 + i * 0.013))
    want, got = _both(items, options)
    assert got == want
    assert sum(r.depends_on is not None for r in got) > 1000


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.text(max_size=12),
    st.builds(lambda sid, gno: f"{sid}:{gno}",
              st.sampled_from(["u", " u", "u ", "", "U:tag", "3e11fa47-71ca-11e1-9e33-c80aa9429562",
                               "é", "-"]),
              st.sampled_from(["0", "1", "01", "9223372036854775807", "9223372036854775808",
                               "09223372036854775807", "18446744073709551616", "x", "", "1 ",
                               "\u0661", "+1", "-1"])),
    st.sampled_from(["ANONYMOUS", "0-1-25", "0-1-0", "a-b-c", "1-2", None])))
def test_gtid_check_raises_where_the_python_certifier_raises(gtid) -> None:
    """A transaction storing items: the Python certifier maps the GTID (cert_gtid) and
    checks it (split_gtid, MySQL's GNO range); the core must accept and refuse the same."""
    trx = CertTransaction(gtid=gtid, file="b", recorded=(0, 1), writeset=(5,))
    options = CertifyOptions()
    try:
        want: Any = list(iter_group_replication([trx], options))
    except Exception as exc:       # noqa: BLE001 (the same exception type and text)
        want = (type(exc), str(exc))
    certifier = CoreGroupCertifier(options, _core())
    try:
        got: Any = [certifier.certify(trx)]
    except Exception as exc:       # noqa: BLE001
        got = (type(exc), str(exc))
    assert got == want
    empty = CertTransaction(gtid=gtid, file="b", recorded=(0, 1), empty=True)
    assert [CoreGroupCertifier(options, _core()).certify(empty)] == \
        list(iter_group_replication([empty], options))


def test_gtids_are_checked_in_the_core() -> None:
    """What the core accepts itself (no Python call) and what it leaves to Python."""
    calls: list[Any] = []
    core = _core().GroupCertifierCore(0, True, False, lambda g, w, m: calls.append((g, w)))
    for g in ("3e11fa47-71ca-11e1-9e33-c80aa9429562:9223372036854775807", "u:tag:1", None,
              "ANONYMOUS"):
        core.step((1,), 0, g, None)
    assert calls == []
    for g in ("u:0", "u:9223372036854775808", " u:1", "0-1-25"):
        core.step((1,), 0, g, None)
    assert [g for g, _ in calls] == ["u:0", "u:9223372036854775808", " u:1", "0-1-25"]
    with pytest.raises(CertifyError, match="beyond MySQL's largest"):
        check_gtid("u:9223372036854775808")


def test_invalid_hashes_raise_the_python_error() -> None:
    for ws in ((-1,), (1 << 64,), ("x",)):
        trx = CertTransaction(gtid="u:1", file="b", recorded=(0, 1), writeset=ws)
        with pytest.raises(CertifyError) as want:
            list(iter_group_replication([trx], CertifyOptions()))
        certifier = CoreGroupCertifier(CertifyOptions(), _core())
        with pytest.raises(CertifyError) as got:
            certifier.certify(trx)
        assert str(got.value) == str(want.value)
        assert certifier.steps == 0


def test_options_the_core_does_not_take_keep_the_python_certifier() -> None:
    assert core_applies(CertifyOptions())
    assert core_applies(CertifyOptions(gc_every=3, session_order=True, gc_opens_window=False,
                                       gc_interval=60.0))
    for options in (CertifyOptions(members=3), CertifyOptions(gc_interval=(1 << 60) + 1),
                    CertifyOptions(local_member="m"), CertifyOptions(group_uuid="")):
        assert not core_applies(options)
        assert report_mod.core_group_certifier(options) is None
    assert not core_applies(CertifyOptions(), [GtidSet.parse("u:1-5")])
    # a snapshot (conflict detection) is refused, never approximated
    with pytest.raises(CertifyError, match="Python certifier"):
        CoreGroupCertifier(CertifyOptions(), _core()).certify(CertTransaction(
            gtid="u:2", recorded=(0, 1), writeset=(1,), snapshot=GtidSet.parse("u:1")))


# ---- whole outputs ----

def _run(args: list[str], capsys, how: str) -> tuple[int, str]:
    """``how``: ``core`` (as shipped: the lane on the hash reader's values), ``keys``
    (the core on ``WriteKey`` write sets), ``objects`` (the core through ``CertResult``
    objects: no lane), ``python`` (the Python certifier)."""
    from repltool.cli import run
    import repltool.writeset as writeset_pkg
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        patches = []
        if how == "keys":
            patches.append(mock.patch.object(writeset_pkg, "read_writeset_hashes",
                                             writeset_pkg.read_writesets))
        if how == "objects":
            patches.append(mock.patch.object(CertifyRun, "lane_parts",
                                             lambda self, writers=(): None))
        if how == "python":
            patches.append(mock.patch.object(report_mod, "core_group_certifier",
                                             lambda *a: None))
        for p in patches:
            p.start()
        try:
            code = run(args)
        finally:
            for p in patches:
                p.stop()
    out, err = capsys.readouterr()
    return code, out + "\n--stderr--\n" + err


def _tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def compare_outputs(files: list[Path], schema: Path | None, tmp_path: Path, capsys,
                    options: tuple[str, ...] = (), formats=("text", "json", "jsonl"),
                    retag: bool = True) -> int:
    """Every format with the core certifier (three ways) and the Python one: equal
    bytes; return how many transactions the core certified in the shipped runs."""
    _core()
    extra = [*(["--schema", str(schema)] if schema is not None else []), *GR, *options]
    names = [str(f) for f in files]
    ran = 0
    for fmt in formats:
        args = ["certify", "--format", fmt, *extra, *names]
        before = core_gr_transactions()
        core = _run(args, capsys, "core")
        count = core_gr_transactions() - before
        ran += count
        if fmt == "jsonl" and core[0] == 0:
            lines = core[1].split("\n--stderr--\n")[0].count("\n")
            assert count == lines, (count, lines)
        assert _run(args, capsys, "python") == core, fmt
        assert _run(args, capsys, "keys") == core, fmt
        before = core_gr_transactions()
        assert _run(args, capsys, "objects") == core, fmt
        assert core_gr_transactions() - before == count
    if retag:
        outs = []
        for how in ("core", "python"):
            out = tmp_path / f"retag-{how}"
            outs.append((_run(["certify", "--format", "json", "--pk-only" if schema is None
                               else "--schema=" + str(schema), *GR, *options,
                               "--output", str(out), *names], capsys, how),
                         _tree(out) if out.exists() else {}))
        assert outs[0] == outs[1]
    return ran


def _is_binlog(p: Path) -> bool:
    return p.suffix not in (".json", ".md", ".sql", ".index", ".txt") and p.is_file()


@pytest.mark.corpus_files("path", "mysql/*/*", select=_is_binlog)
def test_gr_outputs_equal_on_every_mysql_corpus_file(path: Path, tmp_path, capsys) -> None:
    compare_outputs([path], None, tmp_path, capsys, formats=("jsonl", "text"), retag=False)
    compare_outputs([path], None, tmp_path, capsys, options=("--gc-every", "2",
                                                             "--session-order"),
                    formats=("jsonl",), retag=False)


@pytest.fixture(scope="module")
def synth_files(tmp_path_factory) -> tuple[list[Path], Path]:
    from repltool.cli import run
    out = tmp_path_factory.mktemp("grcore") / "synth"
    assert run(["synth", "-o", str(out), "--size", "1500000", "--seed", "22",
                "--max-binlog-size", "500000", "--no-ground-truth"]) == 0
    files = sorted(out.glob("binlog.0*"))
    assert len(files) > 1
    return files, out / "schema.sql"


@pytest.mark.parametrize("options", [(), ("--gc-every", "40"), ("--session-order",),
                                     ("--history-size", "4"), ("--gc-every", "1"),
                                     ("--gc-interval", "0.002"), ("--gc-interval", "60")])
def test_gr_outputs_equal_on_synth_logs(synth_files, options, tmp_path, capsys) -> None:
    files, schema = synth_files
    ran = compare_outputs(files, schema, tmp_path, capsys, options=options)
    assert ran > 3000


def test_gr_outputs_equal_on_a_bench_builder_log(tmp_path: Path, capsys) -> None:
    """The bench's MySQL 8.0 builder (``bench_stats.build_mysql80_log``): another mix of
    statements and tables (no schema: Table_map keys only)."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from bench_stats import build_mysql80_log
    finally:
        sys.path.pop(0)
    path = tmp_path / "binlog.000001"
    build_mysql80_log(path, 1, seed=5)
    assert compare_outputs([path], None, tmp_path, capsys, formats=("jsonl", "text")) > 1000


@st.composite
def seed_logs(draw: st.DrawFn) -> list[list[Any]]:
    """Real MySQL 8.0 logs (``tests/certify_cli/seedlogs``): write sets of rows ``id = N``
    (duplicates within one transaction), ALTER TABLE, CTAS, empty transactions,
    View_change, a compressed transaction, several sessions, one to three files."""
    from tests.certify_cli.seedlogs import DDL, VIEW_CHANGE, ctas, empty, ws
    files = []
    for _ in range(draw(st.integers(1, 3))):
        trxs = []
        for _ in range(draw(st.integers(1, 12))):
            what = draw(st.sampled_from(["ws"] * 6 + ["ddl", "view", "ctas", "empty", "zip"]))
            thread = draw(st.integers(1, 3))
            ids = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
            if what == "ws":
                trxs.append(ws(*ids, thread=thread))
            elif what == "zip":
                trxs.append(ws(*ids, thread=thread, compress=True))
            elif what == "ctas":
                trxs.append(ctas(f"t{draw(st.integers(2, 3))}", *ids, thread=thread))
            elif what == "empty":
                trxs.append(empty(thread=thread))
            else:
                trxs.append(DDL if what == "ddl" else VIEW_CHANGE)
        files.append(trxs)
    return files


@settings(max_examples=25, deadline=None)
@given(files=seed_logs(), options=st.sampled_from([(), ("--gc-every", "2"),
                                                   ("--session-order",),
                                                   ("--history-size", "1")]))
def test_gr_outputs_equal_on_generated_real_logs(files, options, tmp_path_factory) -> None:
    """Whole outputs (text, JSONL) and the packed driver's report on generated real logs:
    the View_change events, DDL, CTAS and empty transactions as the readers group them."""
    import io
    from contextlib import redirect_stdout
    from repltool.cli import run
    from tests.certify_cli.seedlogs import write_logs
    paths = write_logs(tmp_path_factory.mktemp("seed"), files)
    names = [str(p) for p in paths]
    for fmt in ("jsonl", "text"):
        outs = []
        for how in ("core", "python", "objects"):
            buf = io.StringIO()
            patch = (mock.patch.object(report_mod, "core_group_certifier", lambda *a: None)
                     if how == "python" else
                     mock.patch.object(CertifyRun, "lane_parts", lambda self, writers=(): None)
                     if how == "objects" else mock.patch.object(report_mod, "LANE_PART", 3))
            before = core_gr_transactions()
            with patch, redirect_stdout(buf):
                code = run(["certify", "--format", fmt, *GR, *options, *names])
            outs.append((code, buf.getvalue()))
            ran = core_gr_transactions() - before
            assert (ran == 0) == (how == "python")
        assert outs[0] == outs[1] == outs[2]
    cert = replace(CertifyOptions(), **_options_of(options))
    want, got, in_core = _packed(paths, cert, [], True)
    assert got == want and in_core == want.summary.before.transactions


def _options_of(args: tuple[str, ...]) -> dict[str, Any]:
    if args == ("--gc-every", "2"):
        return {"gc_every": 2}
    if args == ("--session-order",):
        return {"session_order": True}
    if args == ("--history-size", "1"):
        return {"history_size": 1}
    return {}


def test_generated_real_logs_hold_view_changes(tmp_path: Path, capsys) -> None:
    """The generated logs' View_change transactions reach the core as such: (0, 0),
    reason view-change, the window opened after it."""
    from repltool.cli import run
    from tests.certify_cli.seedlogs import DDL, VIEW_CHANGE, empty, write_logs, ws
    paths = write_logs(tmp_path / "seed", [[ws(1, 1, 2), VIEW_CHANGE, ws(3), DDL, empty(),
                                            ws(1)], [ws(2, thread=2), VIEW_CHANGE, ws(2)]])
    capsys.readouterr()
    before = core_gr_transactions()
    assert run(["certify", "--format", "jsonl", *GR, *map(str, paths)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert core_gr_transactions() - before == len(rows) == 9
    assert [r["computed"] for r in rows] == [[1, 2], [0, 0], [2, 3], [3, 4], [4, 5], [4, 6],
                                             [4, 7], [0, 0], [7, 8]]
    assert [r["depends_on"]["reason"] for r in rows] == [
        "file-start", "view-change", "gc-window", "ddl", "empty", "history-reset",
        "history-reset", "view-change", "gc-window"]


def test_python_engine_keeps_the_python_certifier(synth_files, capsys, monkeypatch) -> None:
    """``REPLTOOL_ENGINE=python``: no core certifier, the same JSONL as the core's."""
    from repltool.cli import run
    files, schema = synth_files
    args = ["certify", "--format", "jsonl", *GR, "--schema", str(schema), *map(str, files)]
    capsys.readouterr()
    monkeypatch.setenv("REPLTOOL_ENGINE", "python")
    before = core_gr_transactions()
    assert run(args) == 0
    python_out = capsys.readouterr().out
    assert core_gr_transactions() == before
    assert len(python_out.splitlines()) > 1000
    if CORE is not None:
        monkeypatch.setenv("REPLTOOL_ENGINE", "compiled")
        assert run(args) == 0
        assert capsys.readouterr().out == python_out
        assert core_gr_transactions() > before


def test_member_simulation_keeps_the_python_certifier(synth_files, capsys) -> None:
    from repltool.cli import run
    files, schema = synth_files
    before = core_gr_transactions()
    assert run(["certify", "--format", "jsonl", *GR, "--members", "3", "--member-lag", "5",
                "--schema", str(schema), *map(str, files)]) == 0
    out = capsys.readouterr().out
    assert core_gr_transactions() == before
    assert '"conflict"' in out      # conflicts detected (only the Python certifier does)


# ---- the --spark driver: PackedGroupCertifier ----

def _packed(paths: list[Path], options: CertifyOptions | None, schema_paths: list[Path],
            core: bool) -> tuple[Any, Any, int]:
    """(the object path's report with the Python certifier, the packed path's report,
    transactions the packed path certified in the core)."""
    want, got, certifier = packed_reports(paths, options, schema_paths,
                                          python_reference=True, core=core)
    return want, got, certifier.in_core


@pytest.mark.corpus_files("path", "mysql/*/*", select=_is_binlog)
def test_packed_core_equals_python_on_every_mysql_corpus_file(path: Path) -> None:
    _core()
    want, got, in_core = _packed([path], None, [], True)
    assert got == want
    assert in_core == want.summary.before.transactions
    assert _packed([path], None, [], False)[1:] == (got, 0)


@pytest.mark.parametrize("options", [None, CertifyOptions(gc_every=50),
                                     CertifyOptions(session_order=True),
                                     CertifyOptions(history_size=4, gc_every=1)])
def test_packed_core_equals_python_on_synth_units(synth_files, options) -> None:
    _core()
    files, schema = synth_files
    want, got, in_core = _packed(files, options, [schema], True)
    assert got == want
    assert in_core > 1000 and want.summary.changed > 0
    _, python, none = _packed(files, options, [schema], False)
    assert python == got and none == 0


def test_packed_core_columns_equal_the_python_loop(synth_files) -> None:
    """Unit by unit, the ReportColumns themselves (fallback order, commit ids ...)."""
    _core()
    files, schema = synth_files
    units = packed_units(files, None, [schema])
    options = PairsRun([str(f) for f in files], "group-replication",
                       schema_paths=[str(schema)])
    with mock.patch.object(grpacked, "core_applies", lambda *a: False):
        python = grpacked.PackedGroupCertifier(options.options, options.schema, lambda: None)
    core = grpacked.PackedGroupCertifier(options.options, options.schema, lambda: None)
    for unit in units:
        assert core.part(unit) == python.part(unit)
    assert core.in_core == python.certified > 1000 and python.in_core == 0


def test_packed_core_view_change_and_bad_clock(synth_files) -> None:
    """A View_change in a unit, and a negative logged clock raising the object path's error."""
    _core()
    files, schema = synth_files
    unit = packed_units(files[:1], None, [schema])[0]
    pairs = unpack_pairs(unit)
    from repltool.distributed.wspack import pack_pairs
    view = _view_change_transaction(pairs[3][0])
    mixed = pack_pairs([*pairs[:10], (view, None), *pairs[10:40]])
    run = PairsRun([str(files[0])], "group-replication", schema_paths=[str(schema)])
    with mock.patch.object(grpacked, "core_applies", lambda *a: False):
        python = grpacked.PackedGroupCertifier(replace(run.options, gc_every=7), run.schema,
                                               lambda: None)
    core = grpacked.PackedGroupCertifier(replace(run.options, gc_every=7), run.schema,
                                         lambda: None)
    got = core.part(mixed)
    assert got == python.part(mixed) and got.reasons.get("view-change") == 1
    assert core.in_core == 41
    bad = pack_pairs([(replace(pairs[0][0], last_committed=-3), pairs[0][1])])
    with pytest.raises(CertifyError) as want:
        python.part(bad)
    with pytest.raises(CertifyError) as raised:
        core.part(bad)
    assert str(raised.value) == str(want.value)


def _view_change_transaction(like: Any) -> Any:
    """A GR View_change transaction shaped as the reader groups it (its events kept)."""
    from types import SimpleNamespace
    event = SimpleNamespace(type_code=37, body=None)
    return replace(like, gtid=None, last_committed=0, sequence_number=0, kind="dml",
                   rows_events=(), events=(event,))


def test_certify_unit_refuses_inconsistent_columns() -> None:
    """The unit's loop reads the columns unchecked: their shapes are checked first."""
    from array import array
    core = _core().GroupCertifierCore(0, True, False, lambda *a: None)
    recorded, computed = array("q", bytes(16 * 2)), array("q", bytes(16 * 2))
    counts = array("q", bytes(8 * 16))

    def call(offsets: list[int], hashes: list[int], n: int = 2) -> Any:
        cols = [[False, False], ["u:1", "u:2"], ["dml", "dml"], [(), ()], [0, 1], [1, 2],
                [1, 1], [1, 1], [None, None], [None, None], [None, None]]
        return core.certify_unit(n, *cols, set(), b"\x01\x01", array("q", offsets),
                                 array("Q", hashes), [(), ()], [False, False], [(), ()],
                                 lambda w: (), ("x",), lambda: None, lambda i: None,
                                 recorded, computed, counts)
    with pytest.raises(ValueError, match="offsets outside"):
        call([0, 1, 5], [7, 8])
    with pytest.raises(ValueError, match="write-set columns shorter"):
        call([0, 1], [7, 8])
    with pytest.raises(ValueError, match="columns shorter"):
        call([0, 1, 2], [7, 8], n=3)
    assert core.steps == 0
    assert call([0, 1, 2], [7, 7])[:2] == (2, 2)
    # the second writes the first's item: last_committed raised to its number
    assert (list(recorded), list(computed)) == ([0, 1, 1, 2], [1, 2, 2, 3])
    assert core.steps == 2 and counts[0] == 1       # one by key


def test_gc_interval_collects_as_the_python_certifier(synth_files, capsys) -> None:
    """``--gc-interval`` on the core: the collections happen (windows opened by garbage
    collection) where the Python certifier's happen, and an interval so small that the
    clock's move overflows raises the Python certifier's error."""
    files, schema = synth_files
    args = ["certify", "--format", "jsonl", *GR, "--gc-interval", "0.002", "--schema",
            str(schema), *map(str, files)]
    before = core_gr_transactions()
    core = _run(args, capsys, "core")
    assert core_gr_transactions() > before
    assert core[1].count('"reason": "gc-window"') > 100
    assert _run(args, capsys, "python") == core
    items = [CertTransaction(gtid=f"u:{i}", recorded=(0, i), writeset=(i,),
                             commit_time=1.0 + i) for i in range(1, 4)]
    options = CertifyOptions(gc_interval=5e-324)
    with pytest.raises(OverflowError) as want:
        list(iter_group_replication(items, options))
    certifier = CoreGroupCertifier(options, _core())
    with pytest.raises(OverflowError) as got:
        [certifier.certify(t) for t in items]
    assert str(got.value) == str(want.value)
