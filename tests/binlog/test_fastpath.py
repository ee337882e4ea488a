"""The hand-written fast decoders (GTID, Query, Xid) agree with the construct decoders.

``repltool.binlog.fastdecode.FAST_DECODERS`` replaces a few entries of
``repltool.binlog.decode.DECODERS``.  For every such event of every decodable
corpus file (MySQL and MariaDB) both decoders run on the same body and must
return equal records.  Hypothesis then feeds both arbitrary bodies built around
the real layouts: results must be equal, or both must raise the same error.
"""

from __future__ import annotations

import struct
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog import EventType
from repltool.binlog.decode import DECODERS, DecodeContext
from repltool.binlog.events import FormatDescriptionBody
from repltool.binlog.fastdecode import FAST_DECODERS
from repltool.binlog.reader import ReadOptions, read_events, structs_for
from repltool.binlog.structs import BinlogStructs, encode_packed_int
from repltool.errors import ReplToolError
from repltool.positions import Position

from ._corpus import is_normal, read_all

#: the types whose fast decoder is not simply the construct one
FAST_TYPES = frozenset(t for t, f in FAST_DECODERS.items() if DECODERS.get(t) is not f)


def test_fast_types() -> None:
    assert FAST_TYPES >= {EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT,
                          EventType.QUERY_EVENT, EventType.XID_EVENT}


#: construct decoders the hand-written ones defer to (names in repltool.binlog.fastdecode)
_FALLBACKS = ("decode_gtid", "decode_query", "decode_xid", "decode_table_map", "decode_rows",
              "decode_maria_gtid")


@contextmanager
def _fallbacks() -> Iterator[list[str]]:
    """Record every call a fast decoder makes to its construct fallback (and clear the
    Table_map cache, whose hits would hide whether the fast parser ran)."""
    from repltool.binlog import fastdecode
    calls: list[str] = []

    def counting(name: str, real: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object, **kw: object) -> object:
            calls.append(name)
            return real(*args, **kw)
        return call

    patches = [mock.patch.object(fastdecode, n, counting(n, getattr(fastdecode, n)))
               for n in _FALLBACKS]
    for p in patches:
        p.start()
    fastdecode._TABLE_MAP_CACHE.clear()
    try:
        yield calls
    finally:
        for p in reversed(patches):
            p.stop()


def _fast_outcome(tc: int, data: bytes, ctx: DecodeContext):  # type: ignore[no-untyped-def]
    """(outcome of the fast decoder, whether it ran without deferring to construct)."""
    with _fallbacks() as calls:
        got = _outcome(FAST_DECODERS[tc], data, ctx)
    return got, not calls


def _documented_refusal(tc: int, data: bytes, structs: BinlogStructs, slow: tuple) -> bool:
    """The layouts the fast decoders' docstrings leave to construct."""
    if slow[0] == "error":
        return True                                  # construct words the precise error
    if tc in (EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT):
        return len(data) < 42 or data[25] != 2       # 5.6 GTIDs: no logical clock
    if tc == EventType.QUERY_EVENT:
        return structs.post_header(EventType.QUERY_EVENT, 13) != 13    # pre-5.0 layout
    if tc == EventType.MARIADB_GTID_EVENT:
        return bool(data[12] & 0xC0)                 # XA GTIDs
    return False


def _outcome(decoder, data: bytes, ctx: DecodeContext):  # type: ignore[no-untyped-def]
    try:
        return ("ok", decoder(data, ctx))
    except ReplToolError as exc:
        return ("error", type(exc).__name__, str(exc))


def _compare_file(path: Path, verify: bool) -> int:
    """Compare both decoders on every fast-decodable event; assert the fast one ran on each,
    but for the layouts it documents as construct's.  :returns: how many it decoded itself."""
    got = read_all(path, verify)
    assert got.error is None, got.error
    assert got.info is not None
    structs = structs_for(got.info.first_fde) if got.info.first_fde else None
    compared = ran = 0
    for ev in got.events:
        if isinstance(ev.body, FormatDescriptionBody):
            structs = structs_for(ev.body)
            continue
        tc = ev.type_code
        if tc not in FAST_TYPES or structs is None or tc in structs.opaque:
            continue
        end = ev.event_size - (4 if ev.crc is not None else 0)
        data = ev.raw[19:end]
        ctx = DecodeContext(structs, ev.pos, tc)
        fast, fast_ran = _fast_outcome(tc, data, ctx)
        slow = _outcome(DECODERS[tc], data, ctx)
        assert fast == slow, f"{ev.pos} {ev.type_name}"
        assert fast_ran or _documented_refusal(tc, data, structs, slow), \
            f"{ev.pos} {ev.type_name}: the fast decoder deferred to construct on {data[:48].hex()}"
        ran += fast_ran
        if structs.lenient and fast[0] == "error":
            # foreign (pre-GA) numbering: the reader keeps undecodable bodies as bytes
            assert type(ev.body).__name__ == "UnknownBody"
        else:
            assert fast == ("ok", ev.body)      # and it is what the reader yielded
        compared += 1
    assert ran <= compared
    return ran


def _only_refused(path: Path) -> bool:
    """The two pre-5.0 mysql56 files: 11-byte Query post-headers, all left to construct."""
    return path.name in ("mysql-test__std_data__trunc_binlog.000001",
                         "mysql-test__suite__binlog__std_data__binlog_old_version_4_1.000001")


@pytest.mark.corpus_files("path", "mysql/*/*", select=is_normal)
def test_fast_equals_construct_mysql(path: Path) -> None:
    ran = _compare_file(path, verify=False)
    assert (ran == 0) == _only_refused(path) or not _has_fast_types(path)


def _has_fast_types(path: Path) -> bool:
    got = read_all(path, False)
    return any(ev.type_code in FAST_TYPES for ev in got.events)


def _maria_log(p: Path) -> bool:
    return p.name.startswith(("mysql-bin.0", "relay-bin.0")) or p.suffix == ".inuse"


@pytest.mark.corpus_files("path", "mariadb/*/*", "mariadb/relay/*/*",
                          select=lambda p: _maria_log(p) and p.parent.name != "encrypted")
def test_fast_equals_construct_mariadb(path: Path) -> None:
    n = _compare_file(path, verify=True)
    # relay files 1, 4, 7, ... hold only FDE + Rotates
    assert n > 0 or (path.name.startswith("relay-bin.") and not _has_fast_types(path))


# ---- property tests around the real layouts ----

# MySQL 8.0 post-header table (format-spec §2.1), 41 types.
_PH80 = bytes([0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2,
               0, 0, 0, 10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0])
_CTX = {tc: DecodeContext(BinlogStructs(_PH80), Position("prop", 4), tc) for tc in FAST_TYPES}


def _same(tc: int, data: bytes) -> bool:
    """Both decoders agree; :returns: whether the fast one decoded ``data`` itself."""
    ctx = _CTX[tc]
    fast, ran = _fast_outcome(tc, data, ctx)
    assert fast == _outcome(DECODERS[tc], data, ctx)
    return ran


def _run_property(test: Callable[[Counter[bool]], None], floor: float) -> Counter[bool]:
    """Run a Hypothesis test that tallies whether the fast path ran on each example, and
    assert that at least ``floor`` of the examples really exercised the fast decoder (the
    rest, damaged or exotic layouts, exercise the agreement of the fallback)."""
    tally: Counter[bool] = Counter()
    test(tally)
    total = sum(tally.values())
    assert total and tally[True] >= floor * total, \
        f"the fast decoder ran on only {tally[True]} of {total} examples"
    return tally


def _whole(draw: st.DrawFn, body: bytes) -> bytes:
    """Most examples whole (the layouts servers write); one in six cut anywhere."""
    if draw(st.integers(0, 5)) == 5:                # (Hypothesis favours small draws)
        return body[:draw(st.integers(0, len(body)))]
    return body


@st.composite
def gtid_bodies(draw: st.DrawFn) -> bytes:
    """GTID bodies of every era, with every optional part present or cut anywhere."""
    head = struct.pack("<B16sqB", draw(st.integers(0, 255)), draw(st.binary(min_size=16,
                       max_size=16)), draw(st.integers(-2**63, 2**63 - 1)),
                       draw(st.sampled_from([2] * 12 + [3, 0, 1])))
    clock = struct.pack("<qq", draw(st.integers(-2**63, 2**63 - 1)),
                        draw(st.integers(-2**63, 2**63 - 1)))
    ict = draw(st.integers(0, 2**56 - 1))
    ts = ict.to_bytes(7, "little")
    if ict & (1 << 55):
        ts += draw(st.integers(0, 2**56 - 1)).to_bytes(7, "little")
    trx_len = draw(st.one_of(
        st.integers(0, 2**64 - 1).map(encode_packed_int),
        st.integers(0, 2**64 - 1).map(encode_packed_int),
        st.integers(0, 2**64 - 1).map(encode_packed_int),
        st.sampled_from([b"\xfb", b"\xff", b"\xfc\x01", b"\xfd\x01\x02", b"\xfe\x01"])))
    isv = draw(st.integers(0, 2**32 - 1))
    versions = isv.to_bytes(4, "little")
    if isv & (1 << 31):
        versions += draw(st.integers(0, 2**32 - 1)).to_bytes(4, "little")
    ticket = draw(st.sampled_from([b"", b"\x01" * 8, b"\x00" * 8]))
    # the eras' whole shapes: 42 bytes (5.7.?), + timestamps, + length, + versions, + ticket
    eras = [head + clock, head + clock + ts, head + clock + ts + trx_len,
            head + clock + ts + trx_len + versions, head + clock + ts + trx_len + versions
            + ticket + draw(st.binary(max_size=3))]
    return _whole(draw, draw(st.sampled_from(eras)))


def test_fast_gtid_property() -> None:
    @settings(max_examples=600, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(data=gtid_bodies(), anonymous=st.booleans())
    def run(tally: Counter[bool], data: bytes, anonymous: bool) -> None:
        tally[_same(EventType.ANONYMOUS_GTID_LOG_EVENT if anonymous
                    else EventType.GTID_LOG_EVENT, data)] += 1
    _run_property(run, 0.3)


@st.composite
def query_bodies(draw: st.DrawFn) -> bytes:
    db = draw(st.binary(max_size=12))
    status = draw(st.binary(max_size=20))
    exact = draw(st.integers(0, 4)) < 4             # most: the lengths a server writes
    db_len = len(db) if exact else draw(st.integers(0, 255))
    status_len = len(status) if exact else draw(st.integers(0, 0xFFFF))
    nul = b"\x00" if exact else draw(st.sampled_from([b"\x00", b"x"]))
    body = (struct.pack("<IIBHH", draw(st.integers(0, 2**32 - 1)),
                        draw(st.integers(0, 2**32 - 1)), db_len,
                        draw(st.integers(0, 0xFFFF)), status_len)
            + status + db + nul + draw(st.binary(max_size=30)))
    return _whole(draw, body)


def test_fast_query_property() -> None:
    @settings(max_examples=600, derandomize=True, deadline=None)
    @given(data=query_bodies())
    def run(tally: Counter[bool], data: bytes) -> None:
        tally[_same(EventType.QUERY_EVENT, data)] += 1
    _run_property(run, 0.4)


def test_fast_xid_property() -> None:
    @settings(max_examples=200, derandomize=True, deadline=None)
    @given(data=st.one_of(st.binary(min_size=8, max_size=8), st.binary(min_size=8, max_size=8),
                          st.binary(max_size=12)))
    def run(tally: Counter[bool], data: bytes) -> None:
        tally[_same(EventType.XID_EVENT, data)] += 1
    _run_property(run, 0.3)


@st.composite
def maria_gtid_bodies(draw: st.DrawFn) -> bytes:
    """MariaDB GTID (162) bodies: commit id, XA xid, flags_extra parts, padding, cut anywhere."""
    flags2 = draw(st.integers(0, 255)) & draw(st.sampled_from([0x3F, 0x3F, 0x3F, 0xFF]))
    body = struct.pack("<QIB", draw(st.integers(0, 2**64 - 1)), draw(st.integers(0, 2**32 - 1)),
                       flags2)
    if flags2 & 0x02:
        body += struct.pack("<Q", draw(st.integers(0, 2**64 - 1)))
    if flags2 & 0xC0:
        gtrid, bqual = draw(st.binary(max_size=8)), draw(st.binary(max_size=4))
        body += struct.pack("<IBB", draw(st.integers(0, 2**32 - 1)), len(gtrid), len(bqual))
        body += gtrid + bqual
    extra = draw(st.sampled_from([b"", b"\x00", b"\x00" * 6, b"", b"\x00" * 6, b"\x01\xff",
                                  b"\x04" + b"\x07" * 8, b"\x0d\x02" + b"\x01" * 8]))
    body += extra + (b"" if draw(st.booleans()) else draw(st.binary(max_size=3)))
    return _whole(draw, body)


def test_fast_maria_gtid_property() -> None:
    assert EventType.MARIADB_GTID_EVENT in FAST_TYPES

    @settings(max_examples=500, derandomize=True, deadline=None)
    @given(data=maria_gtid_bodies())
    def run(tally: Counter[bool], data: bytes) -> None:
        tally[_same(EventType.MARIADB_GTID_EVENT, data)] += 1
    _run_property(run, 0.3)


_packed = st.integers(0, 2**64 - 1).map(encode_packed_int)


@st.composite
def table_map_bodies(draw: st.DrawFn) -> bytes:
    """Table_map bodies (8-byte post-header) with optional metadata, cut or damaged anywhere."""
    db, table = draw(st.binary(max_size=6)), draw(st.binary(max_size=6))
    count = draw(st.integers(0, 12))
    body = draw(st.binary(min_size=6, max_size=6)) + struct.pack("<H", draw(st.integers(0, 7)))
    body += bytes([len(db)]) + db + draw(st.sampled_from([b"\x00", b"\x00", b"\x01"]))
    body += bytes([len(table)]) + table + b"\x00"
    exact = draw(st.integers(0, 4)) < 4             # most: the lengths a server writes
    body += encode_packed_int(count) if exact else draw(_packed)
    body += draw(st.binary(min_size=count, max_size=count))
    if draw(st.booleans()):
        meta = draw(st.binary(max_size=2 * count))
        body += encode_packed_int(len(meta)) + meta + draw(st.binary(
            min_size=(count + 7) // 8, max_size=(count + 7) // 8))
        for _ in range(draw(st.integers(0, 3))):
            value = draw(st.binary(max_size=6))
            body += bytes([draw(st.integers(1, 13))]) + (
                encode_packed_int(len(value)) if exact else draw(_packed)) + value
    body = _whole(draw, body)
    if body and draw(st.integers(0, 3)) == 3:
        i = draw(st.integers(0, len(body) - 1))
        body = body[:i] + bytes([draw(st.integers(0, 255))]) + body[i + 1:]
    return body


def test_fast_table_map_property() -> None:
    assert EventType.TABLE_MAP_EVENT in FAST_TYPES

    @settings(max_examples=600, derandomize=True, deadline=None)
    @given(data=table_map_bodies())
    def run(tally: Counter[bool], data: bytes) -> None:
        tally[_same(EventType.TABLE_MAP_EVENT, data)] += 1
    _run_property(run, 0.25)



@st.composite
def rows_bodies(draw: st.DrawFn) -> tuple[int, bytes]:
    """Rows bodies of every kind, with odd extra-info lengths, widths and cuts."""
    tc = draw(st.sampled_from([23, 24, 25, 30, 31, 32, 39]))
    body = struct.pack("<IHH", draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 65535)),
                       draw(st.integers(0, 65535)))
    exact = draw(st.integers(0, 4)) < 4             # most: the lengths a server writes
    if tc >= 30:
        extra = draw(st.binary(max_size=6))
        body += struct.pack("<H", 2 + len(extra) if exact
                            else draw(st.sampled_from([0, 1, 2, 300])))
        body += extra
    width = (draw(st.sampled_from([1, 7, 8, 9, 64, 250])) if exact
             else draw(st.sampled_from([0, 251, 300])))
    body += encode_packed_int(width)
    body += draw(st.binary(max_size=40))
    return tc, _whole(draw, body)


def test_fast_rows_property() -> None:
    @settings(max_examples=400, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(case=rows_bodies())
    def run(tally: Counter[bool], case: tuple[int, bytes]) -> None:
        tally[_same(*case)] += 1
    _run_property(run, 0.25)

# ---- `stats` with either engine against the one grouper (read_events + group_transactions) ----

def _synth_shapes(tmp_path: Path) -> dict[str, list[Path]]:
    from repltool.synth import SynthOptions, generate, write_sample
    shapes = {}
    for name, kw in {"80": {}, "57": {"server_format": "5.7"}, "relay": {"relay_log": True,
                     "max_relay_log_size": 40_000}, "tagged": {"tagged_gtids": True},
                     "anon": {"gtids": False}, "d16": {"timestamp_encoding": "delta16"},
                     "zstd": {"compression": "zstd"}}.items():
        r = generate(SynthOptions(out=tmp_path / name, transactions=400, seed=5,
                                  max_binlog_size=70_000, ground_truth=False, **kw))
        shapes[name] = list(r.files)
    shapes["sample"] = list(write_sample(tmp_path / "sample"))
    return shapes


def test_stats_counts_the_grouper_transactions(tmp_path: Path) -> None:
    """On every synthetic shape (relay logs, tagged and anonymous GTIDs, 5.7, delta16,
    compressed transactions), ``stats`` (the active engine) counts exactly the
    transactions and events of ``read_transactions``/``read_events``."""
    from repltool.binlog import read_transactions
    from repltool.binlog.constants import type_name
    from repltool.stats import compute_stats
    for name, files in _synth_shapes(tmp_path).items():
        trxs = list(read_transactions(files))
        events = list(read_events(files, ReadOptions(types=frozenset())))
        assert trxs and events, name
        total = compute_stats(files).total
        assert total.transactions == len(trxs), name
        assert total.transaction_bytes == sum(t.size for t in trxs), name
        assert total.transaction_kinds == dict(Counter(t.kind for t in trxs)), name
        assert total.truncated_transactions == sum(t.truncated for t in trxs), name
        assert total.events == len(events), name
        assert total.event_types == dict(Counter(type_name(e.type_code) for e in events)), name
        tables = Counter()
        for t in trxs:
            for table, n in t.rows_events:
                tables[table] += n
        assert total.tables == dict(tables), name
        clocked = [t for t in trxs if t.last_committed is not None]
        assert total.clock.transactions == len(clocked), name
        assert (total.first_gtid, total.last_gtid) == (
            next((t.gtid for t in trxs if t.gtid), None),
            next((t.gtid for t in reversed(trxs) if t.gtid), None)), name


def test_stats_damage_is_the_readers_error(tmp_path: Path) -> None:
    """A CRC mismatch, a damaged row image (verified or not) and a cut file: ``stats``
    raises what the general reader raises, or counts what it reads."""
    from repltool.binlog import read_transactions
    from repltool.errors import ChecksumMismatch, TruncatedLog
    from repltool.stats import compute_stats
    from repltool.synth import SynthOptions, generate
    r = generate(SynthOptions(out=tmp_path / "d", transactions=100, ground_truth=False))
    data = bytearray(r.files[0].read_bytes())
    bad = tmp_path / "crc.bin"
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatch) as general:
        list(read_transactions([bad]))
    with pytest.raises(ChecksumMismatch) as got:
        compute_stats([bad])
    assert str(got.value) == str(general.value)
    # unverified, a flipped byte inside a row image is data: the same transactions
    rows = next(ev for ev in read_events(r.files[0], ReadOptions(types=frozenset()))
                if ev.type_code in (30, 31, 32) and ev.pos.offset > len(data) // 2)
    in_row = bytearray(r.files[0].read_bytes())
    in_row[rows.pos.offset + rows.event_size - 6] ^= 0xFF
    bad.write_bytes(bytes(in_row))
    with pytest.raises(ChecksumMismatch):
        compute_stats([bad])
    stats = compute_stats([bad], verify_checksum=False).total
    assert stats.transactions == len(list(read_transactions(
        [bad], ReadOptions(verify_checksum=False)))) == 100
    cut = tmp_path / "cut.bin"
    cut.write_bytes(r.files[0].read_bytes()[:-7])
    with pytest.raises(TruncatedLog) as general:
        list(read_transactions([cut]))
    with pytest.raises(TruncatedLog) as got:
        compute_stats([cut])
    assert str(got.value) == str(general.value)


def test_stats_engine_and_general_route_agree(tmp_path: Path) -> None:
    """The active engine's figures are the general route's; the pure-Python engine has
    no route of its own (``_accumulate_fast`` refuses), and a sink gets the general
    reader's transactions with either engine."""
    from repltool import stats as S
    from repltool.binlog import engine, read_transactions
    from repltool.binlog.engine import Unsupported
    from repltool.synth import SynthOptions, generate
    r = generate(SynthOptions(out=tmp_path / "s", transactions=600, max_binlog_size=60_000,
                              ground_truth=False))
    paths = [str(f) for f in r.files]
    active = S.finish_stats(S.accumulate_stats(paths), 5)
    slow = S.finish_stats(S._accumulate_general(paths, True, 5, False, None, None), 5)
    assert S.stats_to_dict(active) == S.stats_to_dict(slow)
    clock = S.compute_clock_stats(paths)
    assert (clock.total.transactions, clock.total.clock, clock.total.biggest) == \
        (slow.total.transactions, slow.total.clock, slow.total.biggest)
    if engine.compiled_core() is None:
        with pytest.raises(Unsupported):
            S._accumulate_fast(paths, True, 5, None, None)
    else:
        fast = S.finish_stats(S._accumulate_fast(paths, True, 5, None, None), 5)
        assert S.stats_to_dict(fast) == S.stats_to_dict(slow)
    with pytest.raises(Unsupported):
        S._accumulate_fast(paths, True, 5, lambda t: None, None)
    got: list = []
    S.accumulate_stats(paths, sink=got.append)
    assert got == list(read_transactions(paths))


def test_stats_progress_callbacks(tmp_path: Path) -> None:
    from repltool import stats as S
    from repltool.synth import SynthOptions, generate
    r = generate(SynthOptions(out=tmp_path / "p", transactions=3000, ground_truth=False))
    paths = [str(f) for f in r.files]
    for fn in (lambda p: S.accumulate_stats(paths, progress=p),
               lambda p: S._accumulate_general(paths, True, 5, False, None, p)):
        seen: list[int] = []
        fn(seen.append)
        assert seen and seen == sorted(seen) and seen[-1] <= r.files[0].stat().st_size
