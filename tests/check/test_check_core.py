"""``check`` on the compiled core (:class:`repltool.binlog.corescan.CheckScan`) gives
the pure-Python engine's whole output: every format, the warnings, on every corpus
file, on file sets, and where the core hands over to the general reader mid-file.

``REPLTOOL_ENGINE=python`` is the reference (the general reader, events fed to the
write-set provider).  Each compiled run must have read transactions on the core
where the input has any (:class:`CheckScan` instances are counted).
"""

from __future__ import annotations

import json
import warnings
import zlib
from pathlib import Path

import pytest

from repltool.binlog import corescan, engine, read_events
from repltool.check import check_files
from repltool.check import engine as check_engine
from repltool.check import report as rep
from repltool.check.writesets import builtin_provider
from repltool.synth import SynthOptions, generate

from check_helpers import build_log


class _Counted(corescan.CheckScan):
    made: list[corescan.CheckScan] = []

    def __init__(self, *a, **kw) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*a, **kw)
        _Counted.made.append(self)


def _run(monkeypatch, which: str, paths: list[Path], schema=None, provider=None) -> tuple:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(engine.ENV, which)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = check_files(paths, writesets=provider or builtin_provider(schema))
    return (rep.render_text(report), rep.render_json(report), rep.render_github(report),
            rep.render_junit(report), [str(w.message) for w in caught])


class _Fed:
    """The row-decoding provider fed the events as they stream (not a
    :class:`RowWritesetProvider`, so check cannot read its write sets lazily): the
    general path, as with --keep-going and after a restart."""

    needs_events = True

    def __init__(self, schema=None) -> None:  # type: ignore[no-untyped-def]
        self.inner = builtin_provider(schema)
        self.feed = self.inner.feed                                 # type: ignore[attr-defined]
        self.unknown_key_tables = self.inner.unknown_key_tables     # type: ignore[attr-defined]

    def __call__(self, trx):  # type: ignore[no-untyped-def]
        return self.inner(trx)


def _fed(monkeypatch, which: str, paths: list[Path], schema=None) -> tuple:  # type: ignore[no-untyped-def]
    return _run(monkeypatch, which, paths, provider=_Fed(schema))


def _same(monkeypatch, paths: list[Path], schema=None) -> int:  # type: ignore[no-untyped-def]
    """Both engines' outputs are equal; how many transactions the core read."""
    monkeypatch.setattr(check_engine, "CheckScan", _Counted)
    _Counted.made = []
    compiled = _run(monkeypatch, "compiled", paths, schema)
    core = sum(s.transactions for s in _Counted.made)
    _Counted.made = []
    python = _run(monkeypatch, "python", paths, schema)
    assert _Counted.made == []
    assert compiled == python           # text, json, github, junit and the warnings
    return core


def _lazy_against_fed(monkeypatch, paths: list[Path]) -> bool:  # type: ignore[no-untyped-def]
    """The lazy write-set read (the pure-Python engine here; the compiled one gives the
    same, see :func:`_same`) against the provider fed as events stream: the same findings;
    where no transaction has a MySQL clock (MariaDB, MySQL 5.6 and older) no write
    set is read, so none of the warnings about keying rows that no rule uses; where
    one has, the same warnings.  Whether a write set was read."""
    from repltool.check import writesets as cw
    made: list[cw.LogPairs] = []
    reading = cw.RowWritesetProvider.reading

    def counted(self, paths):  # type: ignore[no-untyped-def]
        made.append(reading(self, paths))
        return made[-1]
    monkeypatch.setattr(cw.RowWritesetProvider, "reading", counted)
    lazy = _run(monkeypatch, "python", paths)
    monkeypatch.setattr(cw.RowWritesetProvider, "reading", reading)
    fed = _fed(monkeypatch, "python", paths)
    assert made                             # the lazy read was set up
    asked = any(p._pairs is not None for p in made)
    assert lazy[:4] == fed[:4]
    if json.loads(lazy[1])["totals"]["transactions_with_clock"] == 0:
        assert not asked and lazy[4] == []
    else:
        assert asked and lazy[4] == fed[4]
    return asked


def _transactions(paths: list[Path]) -> int:
    from repltool.binlog import read_transactions
    try:
        return sum(1 for _ in read_transactions(paths))
    except Exception:               # a damaged file: the equality above is the test
        return -1


@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/*/*")
def test_every_corpus_file(monkeypatch, path: Path) -> None:  # type: ignore[no-untyped-def]
    core = _same(monkeypatch, [path])
    if path.name.startswith("mysql-bin.0") and path.parent.name in ("small", "rotation"):
        assert core > 0
    _lazy_against_fed(monkeypatch, [path])


@pytest.mark.parametrize("name", ["small", "rotation", "compressed", "relay/replica-relay"])
def test_mariadb_sets(monkeypatch, corpus: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    files = sorted(p for p in (corpus / "mariadb" / name).iterdir()
                   if ".0" in p.name and not p.name.endswith(".index"))
    assert files
    core = _same(monkeypatch, files)
    assert core > 0
    assert not _lazy_against_fed(monkeypatch, files)


@pytest.fixture(scope="module")
def synth_logs(tmp_path_factory) -> dict[str, list[Path]]:  # type: ignore[no-untyped-def]
    base = tmp_path_factory.mktemp("synth")
    out = {}
    for name, kw in (("bin", dict(max_binlog_size=60_000)),
                     ("relay", dict(relay_log=True, max_relay_log_size=20_000,
                                    max_binlog_size=60_000))):
        out[name] = list(generate(SynthOptions(out=base / name, transactions=400,
                                               ground_truth=False, **kw)).files)
    return out


@pytest.mark.parametrize("name", ["bin", "relay"])
def test_synth_file_sets(monkeypatch, synth_logs, name: str) -> None:  # type: ignore[no-untyped-def]
    paths = synth_logs[name]
    core = _same(monkeypatch, paths)
    assert core == _transactions(paths) and core >= 400


def _event_offsets(path: Path) -> list[tuple[int, int, int]]:
    return [(ev.pos.offset, ev.type_code, ev.event_size) for ev in read_events(path)]


def _damage(src: Path, dst: Path, how: str) -> Path:
    data = bytearray(src.read_bytes())
    events = _event_offsets(src)
    mid = events[len(events) // 2]
    off, tc, size = mid
    if how == "crc":                        # a CRC32 mismatch mid-file: S003, read on
        data[off + size - 1] ^= 0xFF
    elif how == "unknown-type":             # an unknown type mid-file (CRC fixed): S006
        data[off + 4] = 0xC8
        data[off + size - 4:off + size] = zlib.crc32(bytes(data[off:off + size - 4])
                                                     ).to_bytes(4, "little")
    elif how == "truncated":                # the file ends mid-event: S004
        del data[off + size // 2:]
    elif how == "bad-size":                 # an event size past the end of the file
        data[off + 9:off + 13] = (len(data) * 2).to_bytes(4, "little")
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("how", ["crc", "unknown-type", "truncated", "bad-size"])
def test_hand_over_mid_file(monkeypatch, synth_logs, tmp_path: Path, how: str) -> None:  # type: ignore[no-untyped-def]
    """The core stops mid-file (an event outside its subset, damage); the general
    reader takes over there: the same findings, and the core read the part before."""
    paths = list(synth_logs["bin"])
    paths[1] = _damage(paths[1], tmp_path / paths[1].name, how)
    core = _same(monkeypatch, paths)
    assert core > 0
    # the core read the damaged file's first half too (not only the files around it)
    first = _transactions(paths[:1])
    assert core > first


def test_view_change_and_findings(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A GR View_change (the general reader takes it: C006 looks at it), clock
    findings C001-C006 and a Previous_gtids G002 in the core's part."""
    a = build_log(tmp_path / "binlog.000001", [(0, 1), (1, 2), (0, 0), (2, 4), (5, 3)],
                  view_changes=(2,), previous=3)
    b = build_log(tmp_path / "binlog.000002", [(0, 1), (0, 0), (1, 3), (3, 3)], previous=20)
    core = _same(monkeypatch, [a, b])
    assert core > 0


class _ListSpan:
    """The span as it was kept before: every prefix maximum of the depths in a list
    (8 bytes a transaction); the bit-packed :class:`_Span` must give the same."""

    def __init__(self) -> None:
        self.work = self.depth = 0
        self.first_sn, self.pref, self.base, self.prev = 0, [], 0, None

    def new_segment(self) -> None:
        self.prev = None

    def add(self, lc: int, sn: int) -> None:
        self.work += 1
        prev, pref = self.prev, self.pref
        if lc == 0 or sn == 0 or not prev or sn > prev + 1 or sn <= prev:
            depth = self.depth + 1
            pref.clear()
            self.first_sn, self.base = sn, depth
        else:
            i = min(lc - self.first_sn, len(pref) - 1)
            depth = (pref[i] if i >= 0 else self.base) + 1
        pref.append(max(depth, pref[-1]) if pref else depth)
        self.depth = max(self.depth, depth)
        self.prev = sn


def test_span_bits_equal_the_prefix_list() -> None:
    """Clock streams with barriers, gaps, restarts and long barrier-free stretches
    (past several 64-bit words): the same work and span after every transaction."""
    import random
    from repltool.check.engine import _Span
    for seed in range(400):
        r = random.Random(seed)
        ref, bits = _ListSpan(), _Span()
        sn = 0
        for _ in range(r.randint(1, 700)):
            c = r.random()
            if c < 0.01:
                ref.new_segment()
                bits.new_segment()
            if c < 0.03:
                sn = r.randint(0, 5)
            else:
                sn += 1 if r.random() < 0.98 else r.randint(-3, 3)
            lc = r.randint(0, max(sn, 0)) if r.random() < 0.3 else max(0, sn - r.randint(1, 6))
            ref.add(lc, sn)
            bits.add(lc, sn)
            assert (bits.work, bits.depth) == (ref.work, ref.depth), seed


def test_committed_offsets_round_trip() -> None:
    """The packed offsets of a GTID run: every offset back, at random access and in
    order, across checkpoints, with large and (merged parts) backward steps."""
    import random
    from repltool.check.engine import _Offsets
    r = random.Random(7)
    for n in (0, 1, 63, 64, 65, 200, 1000):
        values, at = [], 4
        for _ in range(n):
            at += r.choice((r.randint(1, 300), r.randint(1, 1 << 40), -r.randint(1, 500)))
            values.append(at)
        packed = _Offsets(values)
        assert len(packed) == n and list(packed) == values
        assert [packed[k] for k in range(n)] == values
        if n:
            assert packed[-1] == values[-1]
        with pytest.raises(IndexError):
            packed[n]


UNMAPPED = 0xABCDEF          # a table id no Table_map of the synth logs has


def _bad_column_count(data: bytearray, off: int) -> None:
    """The column count of the Rows v2 event at ``off`` no longer its Table_map's."""
    body = off + 19
    extra = int.from_bytes(data[body + 8:body + 10], "little")
    data[body + 10 + extra - 2] += 3


def _unmapped_table(data: bytearray, off: int) -> None:
    """The Rows event at ``off`` refers to a table id no Table_map gave."""
    data[off + 19:off + 25] = UNMAPPED.to_bytes(6, "little")


def _patched_rows(paths: list[Path], tmp_path: Path, edits) -> list[Path]:  # type: ignore[no-untyped-def]
    """``paths`` with the second file copied to ``tmp_path`` and edited: ``edits`` maps a
    share of its Write_rows v2 events (0.5: the middle one) to an edit of that event;
    each edited event's CRC32 recomputed (valid)."""
    src = paths[1]
    data = bytearray(src.read_bytes())
    rows = [(o, s) for o, tc, s in _event_offsets(src) if tc == 30]      # Write_rows v2
    for share, edit in edits.items():
        off, size = rows[int(len(rows) * share)]
        edit(data, off)
        data[off + size - 4:off + size] = zlib.crc32(bytes(data[off:off + size - 4])
                                                     ).to_bytes(4, "little")
    out = list(paths)
    out[1] = tmp_path / src.name
    out[1].write_bytes(bytes(data))
    return out


def _count_restarts(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    """One item per whole-check restart (a fresh provider made for it)."""
    from repltool.check import writesets as cw
    fresh = cw.RowWritesetProvider.fresh
    calls: list[int] = []

    def counted(self):  # type: ignore[no-untyped-def]
        calls.append(1)
        return fresh(self)
    monkeypatch.setattr(cw.RowWritesetProvider, "fresh", counted)
    return calls


def test_write_set_read_stops_check_starts_over(monkeypatch, synth_logs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A Rows event whose column count does not match its Table_map (CRC32 valid): the
    event-fed provider counts a failure and reads on, the fused write-set read stops
    there; check then starts over on the general reader, with the event-fed provider
    (once in each engine: both read write sets lazily), with the same output."""
    paths = _patched_rows(list(synth_logs["bin"]), tmp_path, {0.5: _bad_column_count})
    calls = _count_restarts(monkeypatch)
    assert _same(monkeypatch, paths) > 0
    assert calls == [1, 1]


def test_synth_with_schema(monkeypatch, synth_logs) -> None:  # type: ignore[no-untyped-def]
    """--schema: UNIQUE and FOREIGN keys in the write sets (W001 findings on synth's hot
    keys), the same with both engines."""
    from repltool.writeset import load_schema
    paths = synth_logs["bin"]
    schema = load_schema([str(paths[0].parent / "schema.sql")])
    assert _same(monkeypatch, paths, schema) >= 400


def test_restart_gives_each_warning_once(monkeypatch, synth_logs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The whole check starts over after the lazy write-set read stopped (a bad row
    image, CRC32 valid, late in the input); a warning the first attempt gave (rows of
    an unmapped table id, early) is not given again by the second: each warning once,
    as the event-fed provider gives them in its single pass."""
    paths = _patched_rows(list(synth_logs["bin"]), tmp_path,
                          {1 / 8: _unmapped_table, 7 / 8: _bad_column_count})
    calls = _count_restarts(monkeypatch)
    for which in ("compiled", "python"):
        calls.clear()
        out = _run(monkeypatch, which, paths)
        assert calls == [1], which                      # it did start over
        unmapped = [w for w in out[4] if f"table_id:{UNMAPPED} cannot be keyed" in w]
        assert len(unmapped) == 1, (which, out[4])
        assert len(set(out[4])) == len(out[4]), which
        assert out == _fed(monkeypatch, which, paths)


def _kept_going(monkeypatch, which: str, paths: list[Path]) -> tuple:  # type: ignore[no-untyped-def]
    from repltool.binlog.damage import DamageLog
    monkeypatch.setenv(engine.ENV, which)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = check_files(paths, writesets=builtin_provider(None), damage=DamageLog())
    return rep.render_json(report), [str(w.message) for w in caught]


@pytest.mark.parametrize("name", ["mariadb/small", "mariadb/relay/replica-relay",
                                  "mysql/mysql56"])
def test_keep_going_keys_only_clocked_transactions(monkeypatch, corpus: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """--keep-going feeds the provider as the events stream (no lazy read): still only
    the transactions with a MySQL clock, the only ones W001/W002 ask about, so logs
    without clocks give no warning about keying their rows (the 5.1 files of mysql56
    have rows of event types 20-22 and of unmapped tables), in both engines."""
    files = sorted(p for p in (corpus / name).iterdir()
                   if p.is_file() and ".0" in p.name and not p.name.endswith(".index"))
    assert files
    for path in files:
        out = _kept_going(monkeypatch, "compiled", [path])
        assert out == _kept_going(monkeypatch, "python", [path])
        assert json.loads(out[0])["totals"]["transactions_with_clock"] == 0
        assert out[1] == []


def test_keep_going_keys_clocked_transactions(monkeypatch, synth_logs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--keep-going on a MySQL 8.0 log: the transactions with a clock are fed to the
    provider (rows of an unmapped table id warned about, once), as the lazy read gives."""
    paths = _patched_rows(list(synth_logs["bin"]), tmp_path, {1 / 3: _unmapped_table})
    lazy = _run(monkeypatch, "python", paths)
    for which in ("compiled", "python"):
        out = _kept_going(monkeypatch, which, paths)
        assert [w for w in out[1] if f"table_id:{UNMAPPED} cannot be keyed" in w] == out[1]
        assert len(out[1]) == 1 and out[1] == lazy[4]


def test_mixed_stream(monkeypatch, corpus: Path, synth_logs) -> None:  # type: ignore[no-untyped-def]
    """A MySQL 5.1 log (no clocks; Rows events of types 20-22) checked in one stream
    with MySQL 8.0 logs: the lazy read starts at the stream's first file once an 8.0
    transaction asks, so the 5.1 rows are keyed and warned about too - the same in
    both engines (the whole output and the warnings)."""
    old = corpus / "mysql" / "mysql56" / "mysql-test__suite__binlog__std_data__ver_5_1-telco.001"
    paths = [old, *synth_logs["bin"]]
    assert _same(monkeypatch, paths) > 0
    out = _run(monkeypatch, "python", paths)
    assert any("event type 20 is not decoded" in w for w in out[4])
