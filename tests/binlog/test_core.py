"""The compiled engine (``repltool.binlog._core`` driven by ``corescan``) against the
general reader, and the stats output of both engines against each other.

* its layout constants are the construct declarations' (structs.py), its type table
  is the grouper's ``event_roles``, its CRC32 is zlib's;
* on every corpus file (MySQL and MariaDB), on multi-file reads (rotation sets,
  relay logs) and on synthetic logs of random shape, the summaries it yields equal
  ``group_transactions(read_events(...))``'s, and the core really walked the events;
  where it stops (``Unsupported``) the stop is at an event outside its subset;
* ``repltool stats --format json`` prints the same bytes, message and exit status
  under ``REPLTOOL_ENGINE=compiled`` and ``=python`` on every corpus file, damaged
  ones included.

The compiled core must be built (``pip install .``, or
``python setup.py build_ext --inplace``): these tests fail, not skip, without it.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog import engine
from repltool.binlog import structs as S
from repltool.binlog.constants import (
    CHECKSUM_LEN, HEADER_LEN, LOGICAL_TIMESTAMP_TYPECODE, MAX_COLUMNS, EventType,
)
from repltool.binlog.corescan import core_roles, scan_summaries
from repltool.binlog.engine import Unsupported
from repltool.binlog.reader import ReadOptions, read_events
from repltool.binlog.transactions import (
    GROUPING_TYPES, TransactionSummary, classify_query, event_roles, group_transactions,
)
from repltool.errors import ReplToolError, UsageError

FIELDS = TransactionSummary._fields


def test_layout_is_the_construct_declarations(core) -> None:  # type: ignore[no-untyped-def]
    """The core's layout constants are the layouts ``structs.fixed_head`` derives from the
    declarations (the ones the Python fast decoders unpack with)."""
    lay = core.layout()
    head = S.HEADER.offsets
    assert lay["HEADER_LEN"] == S.common_header.sizeof() == S.HEADER.size == HEADER_LEN
    assert (lay["H_TIMESTAMP"], lay["H_TYPE"], lay["H_SERVER_ID"], lay["H_EVENT_SIZE"],
            lay["H_LOG_POS"], lay["H_FLAGS"]) == (
        head["timestamp"], head["type_code"], head["server_id"], head["event_size"],
        head["log_pos"], head["flags"])
    assert lay["CHECKSUM_LEN"] == CHECKSUM_LEN
    assert lay["MAX_COLUMNS"] == MAX_COLUMNS
    gtid = S.GTID_HEAD.offsets
    assert (lay["G_SID"], lay["G_GNO"], lay["G_LT_TYPE"]) == (gtid["sid"], gtid["gno"],
                                                              gtid["lt_type"])
    assert lay["G_NO_CLOCK_LEN"] == gtid["lt_type"]          # flags, sid, gno only (5.6)
    assert lay["G_LC"] == gtid["clock.last_committed"]
    assert lay["G_SN"] == gtid["clock.sequence_number"]
    assert lay["G_ICT"] == S.GTID_HEAD.size == gtid["clock"] + S.GTID_CLOCKS[
        LOGICAL_TIMESTAMP_TYPECODE].size                      # the 42-byte post-header
    assert lay["LT_TYPECODE"] == LOGICAL_TIMESTAMP_TYPECODE
    maria = S.MARIA_GTID_COMMIT
    assert (lay["M_SEQ_NO"], lay["M_DOMAIN"], lay["M_FLAGS2"], lay["M_COMMIT_ID"],
            lay["M_COMMIT_END"]) == (
        maria.offsets["seq_no"], maria.offsets["domain_id"], maria.offsets["flags2"],
        maria.offsets["commit_id"], maria.size)
    assert lay["M_COMMIT_ID"] == S.MARIA_GTID_HEAD.size
    query = S.QUERY_HEAD.offsets
    assert (lay["Q_THREAD_ID"], lay["Q_EXEC_TIME"], lay["Q_DB_LEN"], lay["Q_ERROR_CODE"],
            lay["Q_STATUS_LEN"], lay["Q_POST_HEADER"]) == (
        query["thread_id"], query["exec_time"], query["db_len"], query["error_code"],
        query["status_vars_len"], S.QUERY_HEAD.size)
    assert lay["TM_DB_LEN"] == S.TABLE_MAP_HEAD.size
    rows = S.ROWS_V2_HEAD
    assert (lay["ROWS_TABLE_ID"], lay["ROWS_FLAGS"], lay["ROWS_EXTRA"], lay["ROWS_V2_HEAD"]) \
        == (rows.offsets["table_id"], rows.offsets["flags"], rows.offsets["extra_info"],
            rows.size)
    assert lay["ROWS_EXTRA"] == S.ROWS_V1_HEAD.size          # v1: the width follows the flags


def test_type_table_is_the_groupers(core) -> None:  # type: ignore[no-untyped-def]
    roles = core_roles(core)
    names = {v: k for k, v in core.ROLES.items()}
    grouper = event_roles()
    for tc in range(256):
        mine = names[roles[tc]]
        theirs = grouper.get(tc)
        if theirs is None:
            assert mine == "UNSUPPORTED", tc
        elif theirs == "payload" or tc in (EventType.START_EVENT_V3,
                                           EventType.START_ENCRYPTION_EVENT):
            assert mine == "UNSUPPORTED", tc
        elif theirs == "segment":
            assert mine in ("FDE", "PYTHON"), tc
    assert names[roles[EventType.XID_EVENT]] == "END"
    assert names[roles[EventType.MARIADB_GTID_EVENT]] == "MARIA_GTID"
    # the query classes the core maps cover every answer of classify_query
    from repltool.binlog.corescan import _CLASSES
    for q in (b"BEGIN", b"COMMIT", b"ROLLBACK", b"ROLLBACK TO x", b"XA ROLLBACK 'a'",
              b"XA COMMIT 'a'", b"XA END 'a'", b"XA START 'a'", b"insert"):
        assert classify_query(q) in _CLASSES


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_crc32_is_zlibs(data: bytes) -> None:
    from repltool.binlog import _core
    assert _core.crc32(data) == zlib.crc32(data)
    assert _core.crc32(data, True) == zlib.crc32(data)     # the no-zlib build's table


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_xxh64_is_xxhash(data: bytes) -> None:
    import xxhash

    from repltool.binlog import _core
    assert _core.xxh64(data) == xxhash.xxh64_intdigest(data)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2, 3, 4, 8]), st.booleans(), st.booleans(), st.data(),
       st.binary(max_size=80))
def test_int_key_is_the_writeset_entry(width: int, signed: bool, signed_key: bool,  # type: ignore[no-untyped-def]
                                       data, prefix: bytes) -> None:
    """The core's integer key entry: the value the row decoder reads, the key string
    :func:`~repltool.writeset.plan.join_key` builds from sortkey's integer sort key, and
    its XXH64, as the write-set path builds them in Python."""
    import xxhash

    from repltool.binlog import _core
    from repltool.binlog.coltypes import ColumnType as T
    from repltool.binlog.columns import ColumnDef
    from repltool.writeset.collation import collation_by_name
    from repltool.writeset.plan import SEP, join_key
    from repltool.writeset.sortkey import sort_key_builder

    raw = data.draw(st.binary(min_size=width, max_size=width))
    value = int.from_bytes(raw, "little", signed=signed)
    kind = {1: T.TINY, 2: T.SHORT, 3: T.INT24, 4: T.LONG, 8: T.LONGLONG}[width]
    col = ColumnDef(0, kind, kind, 0, False, unsigned=not signed_key)
    sk, _ = sort_key_builder(col, unsigned=None,
                             collation=collation_by_name("binary"))(value, raw)
    key = join_key(prefix, [sk])
    top = 0x80 if signed_key else 0
    tail = SEP + str(width).encode()
    assert _core.int_key(raw, width, signed, top, prefix, tail) == \
        (value, key, xxhash.xxh64_intdigest(key))
    assert _core.int_key_text(raw, width, signed, top, prefix, tail, "H[", "}") == \
        f'H[{value}], "hash": {xxhash.xxh64_intdigest(key)}}}'
    with pytest.raises(ValueError):
        _core.int_key(raw[:-1], width, signed, top, prefix, tail)


def _general(paths: list[Path]):  # type: ignore[no-untyped-def]
    try:
        trx = group_transactions(read_events(paths, ReadOptions(types=GROUPING_TYPES)))
        return [tuple(getattr(t, f) for f in FIELDS) for t in trx]
    except ReplToolError as exc:
        return ("error", type(exc).__name__, str(exc))


def _compiled(core, paths: list[Path]):  # type: ignore[no-untyped-def]
    """Summaries from the core; ``None`` where it stopped.  Asserts it walked events."""
    before = core.events_walked()
    try:
        got = [tuple(t) for t in scan_summaries(paths)]
    except Unsupported as exc:
        assert exc.pos is not None or "magic" in exc.reason or exc.__cause__ is not None
        return None
    assert core.events_walked() > before, "the compiled core did not run"
    return got


def _check_stop(paths: list[Path]) -> None:
    """Where the core stops, the input holds something outside its subset."""
    want = _general(paths)
    if want and want[0] == "error":
        return
    types = {ev.type_code for ev in read_events(paths, ReadOptions(types=frozenset()))}
    handled = {tc for tc, r in enumerate(core_roles(engine.compiled_core())) if r}
    outside = types - handled
    assert outside or _nonstandard_fde(paths), (paths, types)


def _nonstandard_fde(paths: list[Path]) -> bool:
    from repltool.binlog import FileInfo
    infos: list[FileInfo] = []
    for _ in read_events(paths, ReadOptions(types=frozenset()), infos):
        pass
    return any(i.fde is not None and (i.fde.binlog_version != 4 or i.fde.post_header_len[1] != 13)
               or (i.fde and len(i.fde.post_header_len) > 18
                   and i.fde.post_header_len[18] != 8) for i in infos)


_SUPPORTED: list[str] = []


@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/*/*", "mariadb/*/*/*")
def test_corpus_file_equals_general(core, path: Path) -> None:  # type: ignore[no-untyped-def]
    got = _compiled(core, [path])
    if got is None:
        _check_stop([path])
        return
    assert got == _general([path])
    _SUPPORTED.append(str(path))


def test_corpus_sets_supported(core, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """The core covers the real MySQL 8.0 and MariaDB logs (no silent hand-over)."""
    for d in ("mariadb/small", "mariadb/rotation", "mariadb/serial"):
        files = sorted(p for p in (corpus / d).glob("mysql-bin.0*"))
        assert files, d
        got = _compiled(core, files)
        assert got is not None, d
        assert got == _general(files)
    relay = sorted((corpus / "mariadb/relay").rglob("*relay-bin.0*"))
    assert relay
    got = _compiled(core, relay)
    assert got is not None and got == _general(relay)


SYNTH_SHAPES = {
    "80": {}, "anon": {"gtids": False}, "57": {"server_format": "5.7"},
    "tag": {"tagged_gtids": True}, "d16": {"timestamp_encoding": "delta16"},
    "relay": {"relay_log": True, "max_relay_log_size": 30_000},
}


@pytest.mark.parametrize("shape", sorted(SYNTH_SHAPES))
def test_synth_equals_general(core, tmp_path: Path, shape: str) -> None:  # type: ignore[no-untyped-def]
    from repltool.synth import SynthOptions, generate
    r = generate(SynthOptions(out=tmp_path / shape, transactions=300, ground_truth=False,
                              max_binlog_size=50_000, **SYNTH_SHAPES[shape]))
    got = _compiled(core, r.files)
    assert got is not None, shape
    assert got == _general(r.files)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), transactions=st.integers(1, 400),
       fmt=st.sampled_from(["5.7", "8.0", "9.x"]), gtids=st.booleans(),
       relay=st.booleans(), max_size=st.integers(4_000, 60_000))
def test_synth_property(core, tmp_path_factory, seed: int, transactions: int, fmt: str,  # type: ignore[no-untyped-def]
                        gtids: bool, relay: bool, max_size: int) -> None:
    from repltool.synth import SynthOptions, generate
    out = tmp_path_factory.mktemp("synth")
    r = generate(SynthOptions(out=out, transactions=transactions, ground_truth=False,
                              server_format=fmt, gtids=gtids, seed=seed, relay_log=relay,
                              max_binlog_size=max_size,
                              max_relay_log_size=max_size if relay else None))
    got = _compiled(core, r.files)
    assert got is not None
    assert got == _general(r.files)


# ---- the CLI: both engines print the same ----

def _stats_run(monkeypatch: pytest.MonkeyPatch, capsys, which: str, args: list[str]):  # type: ignore[no-untyped-def]
    from repltool.cli import run
    monkeypatch.setenv(engine.ENV, which)
    code = run(["stats", "--format", "json", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("clock_only", [[], ["--clock-only"]], ids=["full", "clock-only"])
@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/*/*")
def test_stats_output_same_both_engines(monkeypatch, capsys, path: Path,  # type: ignore[no-untyped-def]
                                        clock_only: list[str]) -> None:
    from repltool.binlog import _core
    before = _core.events_walked()
    compiled = _stats_run(monkeypatch, capsys, "compiled", [*clock_only, str(path)])
    walked = _core.events_walked() - before
    python = _stats_run(monkeypatch, capsys, "python", [*clock_only, str(path)])
    assert compiled == python
    if path.name.startswith("mysql-bin.0") and "mariadb" in path.parts \
            and path.parent.name in ("small", "rotation", "serial"):
        assert walked > 0                       # the real MariaDB logs take the core


def test_stats_output_same_multi_file(monkeypatch, capsys, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    files = [str(p) for p in sorted((corpus / "mariadb/rotation").glob("mysql-bin.0*"))]
    assert _stats_run(monkeypatch, capsys, "compiled", files) == \
        _stats_run(monkeypatch, capsys, "python", files)


# ---- engine selection ----

def test_engine_choice(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(engine.ENV, "python")
    assert engine.compiled_core() is None
    assert engine.engine_name() == "python"
    monkeypatch.setenv(engine.ENV, "compiled")
    assert engine.compiled_core() is not None
    assert engine.engine_name() == "compiled"
    monkeypatch.setenv(engine.ENV, "turbo")
    with pytest.raises(UsageError):
        engine.compiled_core()
    from repltool.cli import run
    assert run(["stats", __file__]) == UsageError.exit_code
    assert "REPLTOOL_ENGINE" in capsys.readouterr().err


def test_engine_missing(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Without a built core: ``auto`` says so once on stderr and runs pure Python;
    ``compiled`` is a usage error."""
    monkeypatch.setattr(engine, "_state", {"core": None, "why": "no module"})
    monkeypatch.setenv(engine.ENV, "auto")
    assert engine.compiled_core() is None
    assert engine.compiled_core() is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pure-Python" in err
    assert engine.engine_name().startswith("python")
    monkeypatch.setenv(engine.ENV, "compiled")
    with pytest.raises(UsageError):
        engine.compiled_core()


def test_version_names_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys
    for which in ("compiled", "python"):
        out = subprocess.run([sys.executable, "-m", "repltool", "--version"], check=True,
                             capture_output=True, text=True,
                             env={**__import__("os").environ, engine.ENV: which}).stdout
        assert f"(engine: {which})" in out


# ---- stats' figures added up in the core (accumulate mode) ----

@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-3, 70)),
       st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-3, 70)))
def test_bucket_of_any_clock_pair(lc: int, sn: int) -> None:
    from repltool.binlog import _core
    from repltool.stats import distance_bucket
    assert distance_bucket(_core.bucket_distance(lc, sn)) == distance_bucket(sn - lc)


def _stats_args_run(monkeypatch, capsys, which: str, args: list[str]):  # type: ignore[no-untyped-def]
    from repltool.cli import run
    monkeypatch.setenv(engine.ENV, which)
    code = run(["stats", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("extra", [["--top", "0"], ["--top", "1"], ["--top", "40"],
                                   ["--format", "json", "--top", "3"], ["--format", "json"]])
@pytest.mark.parametrize("which", ["mariadb/rotation", "mariadb/relay", "mariadb/small+dup",
                                   "mysql/mysql80"])
def test_totals_same_as_per_transaction(monkeypatch, capsys, corpus: Path,  # type: ignore[no-untyped-def]
                                        which: str, extra: list[str]) -> None:
    """Top lists of every size (ties: equal sizes, durations of 0), kinds and tables in
    first-seen order, commit-id groups, a path named twice: the core's totals print what
    the per-transaction accumulation prints, and the core added them up."""
    from repltool.binlog import _core
    from repltool.binlog.corescan import scan_totals
    if which == "mariadb/small+dup":
        f = str(corpus / "mariadb/small/mysql-bin.000001")
        files = [f, str(corpus / "mariadb/serial/mysql-bin.000001"), f]
    elif which == "mariadb/relay":
        files = [str(p) for p in sorted((corpus / which).rglob("*relay-bin.0*"))]
    elif which == "mysql/mysql80":
        files = [str(p) for p in sorted((corpus / which).glob("*")) if p.is_file()][:25]
    else:
        files = [str(p) for p in sorted((corpus / which).glob("mysql-bin.0*"))]
    assert files
    python = _stats_args_run(monkeypatch, capsys, "python", [*extra, *files])
    monkeypatch.setenv(engine.ENV, "compiled")
    try:
        totals = scan_totals(files, top=5)
    except Unsupported:
        totals = None
    if which.startswith("mariadb"):
        assert totals is not None and totals.rest is None
        assert sum(t.transactions for t in totals.totals.values()) == totals.transactions > 0
    before = _core.events_walked()
    compiled = _stats_args_run(monkeypatch, capsys, "compiled", [*extra, *files])
    assert compiled == python
    if totals is not None and totals.transactions:
        assert _core.events_walked() > before


def test_totals_of_the_synthetic_shapes(monkeypatch, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """MySQL 5.7 / 8.0 / 9.x (delta16, tagged) logs: both engines print the same."""
    from repltool.binlog.corescan import scan_totals
    from repltool.synth import SynthOptions, generate
    for shape, kw in sorted(SYNTH_SHAPES.items()):
        r = generate(SynthOptions(out=tmp_path / shape, transactions=400, ground_truth=False,
                                  max_binlog_size=60_000, **kw))
        files = [str(f) for f in r.files]
        monkeypatch.setenv(engine.ENV, "compiled")
        totals = scan_totals(files, top=5)
        assert totals is not None and totals.rest is None and totals.transactions >= 300
        for extra in (["--top", "7"], ["--format", "json"]):
            assert _stats_args_run(monkeypatch, capsys, "compiled", [*extra, *files]) == \
                _stats_args_run(monkeypatch, capsys, "python", [*extra, *files]), shape


def test_unrolled_transaction_builder_equals_the_constructor() -> None:
    """``corescan._transaction`` (the slots set by generated, unrolled code: one per
    transaction of ``certify`` and ``dump --writesets``) builds what ``Transaction(...)``
    builds, field by field, for values differing in every field."""
    import dataclasses
    from repltool.binlog.corescan import _TRX_FIELDS, _transaction
    from repltool.binlog.transactions import Transaction
    values = tuple(f"value-{i}" for i in range(len(_TRX_FIELDS)))
    built = _transaction(values)
    expected = Transaction(**dict(zip(_TRX_FIELDS, values)))
    assert type(built) is Transaction and built == expected
    assert [getattr(built, f.name) for f in dataclasses.fields(Transaction)] == \
        [getattr(expected, f.name) for f in dataclasses.fields(Transaction)]
    with pytest.raises(ValueError):
        _transaction(values[:-1])       # every field or none
