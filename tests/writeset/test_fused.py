"""The fast writeset paths give the general path's (transaction, writeset) sequence.

Key-only extraction (:mod:`repltool.writeset.fastkeys`) and the fused reader
(:func:`repltool.writeset.read_writesets`) against the general path, which
decodes every column of every row (``tests/writeset/_paths.py``, which also
spies on which path really ran): the MariaDB corpus sets (with their schemas), every
MySQL corpus file
(handled by the fused reader alone - with a floor on how many - or handed back for
a reason true of the file), and synthetic logs of every shape - transaction by
transaction, writeset by writeset, errors included.  Then the fallback in the
middle of a stream, damage with and without a valid checksum, and
``table_maps`` given by the caller.  The fused reader is the compiled core's grouper and
key dispatch: with the pure-Python engine every test asserts that the general path
(reader, the one grouper, extractor) read everything from the start instead.
"""

from __future__ import annotations

import random
import re
import shutil
import warnings
import zlib
from collections import Counter
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events
from repltool.binlog.coltypes import TableDef
from repltool.binlog import Transaction, read_transactions
from repltool.binlog.engine import Unsupported
from repltool.binlog.transactions import TransactionSummary
import repltool.errors
from repltool.errors import ReplToolError
from repltool.writeset import READ_OPTIONS, iter_writesets, load_schema, read_writesets
from repltool.writeset.fused import iter_fast_writesets, read_writeset_summaries

from repltool.binlog import engine
from tests.binlog._refusals import core_refusal_is_true
from ._paths import NOT_ACTIVE, Checked, FusedSpy, check_paths
from .test_corpus import SETS

FAST_SHAPES = ("uniform", "zipf", "hot", "relay", "tagged", "mysql57", "full-metadata",
               "anonymous")


def _is_binlog(path: Path) -> bool:
    """Collection-time selection: files that start with a binlog/relay-log magic."""
    with open(path, "rb") as f:
        return f.read(4) in (b"\xfebin", b"\xfdbin")


def _refusal_is_true(files: list[Path], verify: bool, got: Checked) -> None:
    """The fused reader handed the input to the general path for a reason true of it:
    the reader's own error, which the general path raises alike (``Type: message``), or
    one of the compiled core's hand-overs (``tests/binlog/_refusals.py``); with the
    pure-Python engine the fast path is not active."""
    reason = got.fast_reason
    assert reason is not None and not got.fast_complete
    if engine.compiled_core() is None:
        assert reason == NOT_ACTIVE and got.fast_pairs == 0
        return
    m = re.fullmatch(r"(\w+): .*", reason, re.S)
    if m and not reason.startswith("event type"):
        assert isinstance(getattr(repltool.errors, m.group(1), None), type), reason
        assert got.error == reason, (reason, got.error)
    else:
        core_refusal_is_true(files, verify, reason)


@pytest.mark.parametrize("name", list(SETS))
def test_mariadb_sets(corpus: Path, name: str) -> None:
    pattern, _, schema = SETS[name]
    root = corpus / "mariadb"
    files = sorted(root.glob(pattern))
    got = check_paths(files, load_schema(root / schema / "schema.sql"))
    assert got.error is None and got.transactions > 100 and got.keys > 100
    assert got.fallbacks == 0
    # the extractors keyed most Rows events by the walk cached for their header
    assert got.shaped * 2 > got.with_rows and got.text_shaped == got.shaped, got
    if engine.compiled_core() is not None:
        # the compiled core groups MariaDB logs too: the whole set on the fast path,
        # but for the compressed events (type 165), handed to the general path
        assert got.core_events > 0, got
        if name == "compressed":
            assert got.fast_reason is not None and got.fast_reason.endswith("event type 165")
            _refusal_is_true(files, True, got)
        else:
            assert got.fast_complete and got.fast_pairs == got.transactions, got
            assert got.core_events > got.transactions, got
        return
    _refusal_is_true(files, True, got)         # the pure-Python engine: the general path


@pytest.mark.corpus_files("path", "mysql/*/*", select=_is_binlog)
@pytest.mark.parametrize("verify", [True, False], ids=["crc", "no-crc"])
def test_mysql_corpus_file(path: Path, verify: bool) -> None:
    """Every MySQL corpus file: the fused reader yields the general path's pairs; it either
    handled the whole file itself (the spy in ``check_paths`` saw no general path) or handed
    it back for a reason true of the file."""
    got = check_paths([path], None, verify_checksum=verify)
    if got.fast_complete:
        assert got.fast_reason is None and got.fast_pairs == got.transactions
    else:
        _refusal_is_true([path], verify, got)


#: floors on the MySQL corpus files the fused reader handles alone (measured: 49 with
#: transactions + 20 without, checksums verified; 50 + 20 unverified)
HANDLED_WITH_TRANSACTIONS = 45
HANDLED = 65


@pytest.mark.parametrize("verify", [True, False], ids=["crc", "no-crc"])
def test_fused_reader_handles_most_of_the_mysql_corpus(corpus: Path, verify: bool) -> None:
    """A floor on the files ``read_writesets`` really reads with the fused scan alone (the
    spy: no general path started), not just on equal results."""
    spy = FusedSpy()
    handled: Counter[bool] = Counter()
    reasons: Counter[str] = Counter()
    files = [p for p in sorted(corpus.glob("mysql/*/*")) if p.is_file() and _is_binlog(p)]
    assert len(files) >= 90
    python = engine.compiled_core() is None
    for path in files:
        with warnings.catch_warnings():     # keyless tables of files read alone
            warnings.simplefilter("ignore")
            run, (pairs, _) = spy.one(read_writesets([path], None, verify_checksum=verify))
        if python:          # no fused scan: the general path reads every file whole
            assert (run.fast_pairs, run.reason, run.general) == (0, None, 1)
            handled[False] += 1
            continue
        if run.reason is None:
            assert run.general == 0 and run.fast_pairs == len(pairs)
            handled[bool(pairs)] += 1
        else:
            assert run.general == 1
            reasons[run.reason.split(":")[0]] += 1
    if python:
        assert handled[False] == len(files)
        return
    assert handled[True] >= HANDLED_WITH_TRANSACTIONS and sum(handled.values()) >= HANDLED, \
        (handled, reasons)


@pytest.mark.parametrize("name", FAST_SHAPES)
def test_synthetic_logs_take_the_fast_path(synth_logs: dict, name: str) -> None:
    files, schema = synth_logs[name]
    for sch in (load_schema(schema), None):
        got = check_paths(files, sch)
        assert got.error is None and got.transactions > 250 and got.with_rows > 250
        assert got.fallbacks == 0
        assert got.shaped * 2 > got.with_rows and got.text_shaped == got.shaped, got
        if engine.compiled_core() is None:
            _refusal_is_true(files, True, got)      # the general path
        else:
            assert got.fast_complete and got.fast_pairs == got.transactions, name
            assert got.fast_reason is None                  # the spy: no general path
            assert got.core_events > got.transactions       # the core walked the events
        # keys: from the schema, or without it from FULL Table_map metadata only
        assert got.keys > 500 if sch is not None or name == "full-metadata" else got.keys == 0


def test_compressed_log_falls_back(synth_logs: dict) -> None:
    files, schema = synth_logs["zstd"]
    got = check_paths(files, load_schema(schema))
    assert got.error is None and got.transactions > 250 and got.keys > 500
    assert got.fast_pairs == 0 and not got.fast_complete
    assert got.fast_reason.endswith("event type 40") or \
        engine.compiled_core() is None                  # Transaction_payload
    _refusal_is_true(files, True, got)


def test_fallback_in_the_middle_of_the_stream(synth_logs: dict) -> None:
    """Plain files, then a compressed one: the fused reader yields the plain part,
    gives up at the first Transaction_payload, and the general path takes over
    without repeating or losing a transaction."""
    plain, schema = synth_logs["tagged"]
    packed, _ = synth_logs["zstd"]
    files = [*plain, *packed]
    fast = []
    with pytest.raises(Unsupported):
        for pair in iter_fast_writesets(files, load_schema(schema)):
            fast.append(pair)
    got = check_paths(files, load_schema(schema))
    assert got.error is None
    if engine.compiled_core() is None:          # the general path from the start
        assert fast == [] and got.fast_pairs == 0 and got.transactions > 250
        return
    assert 0 < len(fast) == got.fast_pairs < got.transactions


def _events(path: Path) -> list[tuple[int, int, int]]:
    """(offset, size, type code) of every event of a file."""
    return [(ev.pos.offset, ev.event_size, ev.type_code)
            for ev in read_events([path], ReadOptions(types=frozenset()))]


@pytest.mark.parametrize("fix_crc", [False, True], ids=["crc-mismatch", "crc-fixed"])
def test_damaged_rows_give_the_general_outcome(synth_logs: dict, tmp_path: Path,
                                               fix_crc: bool) -> None:
    """A byte changed inside Rows events (checksum left wrong, or recomputed so the
    damage reaches the row decoder): same pairs, same error, verified or not."""
    src = synth_logs["uniform"][0][0]
    schema = load_schema(synth_logs["uniform"][1])
    rows = [e for e in _events(src) if e[2] in (30, 31, 32)]
    rng = random.Random(5)
    errors = fast_then_fallback = 0
    for n, (off, size, _) in enumerate(rng.sample(rows, 24)):
        data = bytearray(src.read_bytes())
        at = off + 19 + rng.randrange(10, size - 23)        # inside the body, not the CRC
        data[at] ^= rng.choice([0x01, 0x80, 0xFF, 0x10])
        if fix_crc:
            end = off + size - 4
            data[end:end + 4] = zlib.crc32(data[off:end]).to_bytes(4, "little")
        path = tmp_path / f"damaged-{n}.000001"
        path.write_bytes(data)
        for verify in (True, False):
            got = check_paths([path], schema, verify_checksum=verify)
            errors += got.error is not None
            fast_then_fallback += got.fast_pairs > 0 and not got.fast_complete
    assert errors > 0 and (fast_then_fallback > 0) == (engine.compiled_core() is not None)


def test_table_maps_of_the_caller(synth_logs: dict, tmp_path: Path) -> None:
    """``table_maps=`` is updated in place; after a fallback it holds what the general
    path put there, not the fast path's leftovers."""
    files, schema = synth_logs["relay"]
    maps: dict[int, TableDef] = {}
    pairs = list(read_writesets(files, load_schema(schema), table_maps=maps))
    assert len(pairs) > 250 and maps
    broken = tmp_path / files[-1].name
    shutil.copy(files[-1], broken)
    with open(broken, "r+b") as f:          # the last event's checksum
        f.seek(-2, 2)
        f.write(b"\x00\x00" if f.read(2) != b"\x00\x00" else b"\x01\x01")
    damaged = [*files[:-1], broken]

    def consume(pairs_iter) -> tuple[int, str]:  # type: ignore[no-untyped-def]
        n = 0
        with pytest.raises(ReplToolError) as info:
            for _ in pairs_iter:
                n += 1
        return n, str(info.value)

    general_maps: dict[int, TableDef] = {}
    want = consume(iter_writesets(read_transactions([str(f) for f in damaged], READ_OPTIONS,
                                                    keep_events=True),
                                  load_schema(schema), table_maps=general_maps))
    fast_maps: dict[int, TableDef] = {}
    assert consume(read_writesets(damaged, load_schema(schema), table_maps=fast_maps)) == want
    assert want[0] > 200
    assert fast_maps == general_maps and fast_maps


def test_light_transactions(synth_logs: dict) -> None:
    files, schema = synth_logs["relay"]
    full = list(read_writesets(files, load_schema(schema)))
    light = list(read_writeset_summaries(files, load_schema(schema)))
    assert len(light) == len(full) > 250
    python = engine.compiled_core() is None     # the general path's full transactions
    for (lt, lw), (ft, fw) in zip(light, full):
        assert type(lt) is (Transaction if python else TransactionSummary)
        assert lw == fw
        assert {f: getattr(lt, f) for f in TransactionSummary._fields} == \
            {f: getattr(ft, f) for f in TransactionSummary._fields}


def test_warnings_as_errors_reach_the_caller(synth_logs: dict, tmp_path: Path) -> None:
    """A schema that lacks a table warns; under ``-W error`` the fused reader's fallback
    must raise that warning as the general path does, not swallow it."""
    from repltool.writeset import SchemaWarning, iter_writesets

    files, schema = synth_logs["uniform"]
    partial = tmp_path / "schema.sql"
    text = schema.read_text()
    partial.write_text(text[:text.index("CREATE TABLE `orders`")])     # customers only

    def first_error(pairs) -> tuple[int, str]:  # type: ignore[no-untyped-def]
        n = 0
        with warnings.catch_warnings():
            warnings.simplefilter("error", SchemaWarning)
            with pytest.raises(SchemaWarning) as info:
                for _ in pairs:
                    n += 1
        return n, str(info.value)

    want = first_error(iter_writesets(read_transactions([str(f) for f in files], READ_OPTIONS,
                                                        keep_events=True), load_schema(partial)))
    assert first_error(read_writesets(files, load_schema(partial))) == want
    assert "schema has no table shop." in want[1]


@pytest.mark.parametrize("name", ["uniform", "hot", "relay", "mysql57", "full-metadata"])
@pytest.mark.parametrize("text", [False, True], ids=["pairs", "lines"])
def test_rows_events_take_the_compiled_walk(synth_logs: dict, name: str, text: bool) -> None:
    """Only the first Rows events of a table (its plan not made yet) take the general
    route; the others are keyed by the compiled walk of their cached header shape
    (a wrong shape would only show as a slowdown: the general route gives the same
    result).  With the compiled engine the core's ``KeyDispatch`` counts both (a
    transaction's events are keyed in one call, no Python per event)."""
    from repltool.writeset.fused import _FastRun
    from repltool.writeset.jsonl import RecordWriter

    files, schema = synth_logs[name]
    run = _FastRun([str(f) for f in files], load_schema(schema), True, {}, True,
                   RecordWriter() if text else None)
    if engine.compiled_core() is None:      # the fused run is the core's
        with pytest.raises(Unsupported, match=NOT_ACTIVE):
            next(iter(run))
        return
    assert sum(1 for _ in run) > 250
    fast, general = run.fast_events, run.general_events
    assert fast > 500 and general * 20 < fast + general, (fast, general)


@pytest.mark.parametrize("name", [n for n in SETS if n != "compressed"])
@pytest.mark.parametrize("text", [False, True], ids=["pairs", "lines"])
def test_mariadb_rows_events_take_the_compiled_walk(corpus: Path, name: str,
                                                    text: bool) -> None:
    """MariaDB's Rows v1 events (8-byte post-header) are keyed by the core's dispatch
    too, not sent one by one to the general route (they were, before)."""
    from repltool.writeset.fused import _FastRun
    from repltool.writeset.jsonl import RecordWriter

    pattern, _, schema = SETS[name]
    root = corpus / "mariadb"
    files = sorted(root.glob(pattern))
    run = _FastRun([str(f) for f in files], load_schema(root / schema / "schema.sql"), True,
                   {}, True, RecordWriter() if text else None)
    if engine.compiled_core() is None:      # the fused run is the core's
        with pytest.raises(Unsupported, match=NOT_ACTIVE):
            next(iter(run))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert sum(1 for _ in run) > 100
    fast, general = run.fast_events, run.general_events
    assert fast > 100 and general * 5 < fast + general, (fast, general)
