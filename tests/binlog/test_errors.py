"""Damaged copies of real logs (style §4.9 "Corrupt input"), written to tmp_path only.

For each damage we check three things: the events before the damage are still
yielded, only ReplToolError subclasses escape (never ValueError, struct.error,
IndexError, construct errors...), and the error carries the right position in
the ``FILE:OFFSET EVENT_TYPE: reason`` form.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog import ReadOptions, read_events, read_transactions
from repltool.binlog.events import Event
from repltool.errors import (
    ChecksumMismatch, MalformedEvent, ReplToolError, TruncatedLog,
)

from ._corpus import read_all

MESSAGE = re.compile(r"^.+:\d+( \S+)?: .+")
#: an event inside a Transaction_payload is positioned FILE:OFFSET+INNER_OFFSET
MESSAGE_INNER = re.compile(r"^.+:\d+(\+\d+)?( \S+)?: .+")

SMALL_FILES = [
    "mysql/rmc/test-data__binlogs__transaction_compression.000001",       # 8.0.32, CRC, payload
    "mysql/rmc/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001",  # 9.6.0 tagged
    "mysql/mysql80/mysql-test__std_data__binlog_transaction.000001",       # 5.0, no CRC
    "mysql/rmc/test-data__binlogs__mariadb-bin.000001",                    # MariaDB 10.5, in use
]
CRC_FILES = [SMALL_FILES[0], SMALL_FILES[1], SMALL_FILES[3]]


def read(path: Path, verify: bool = True) -> tuple[list[Event], ReplToolError | None]:
    """Events yielded before the reader stopped, and what stopped it.

    Any exception that is not a ReplToolError propagates and fails the test.
    """
    events: list[Event] = []
    try:
        for ev in read_events(path, ReadOptions(verify_checksum=verify)):
            events.append(ev)
    except ReplToolError as exc:
        assert MESSAGE_INNER.match(str(exc)), str(exc)
        if exc.pos is not None and exc.pos.payload_offset is None:
            assert MESSAGE.match(str(exc)), str(exc)
        return events, exc
    return events, None


def same(a: list[Event], b: list[Event] | tuple[Event, ...]) -> bool:
    """Equal apart from the file name in the positions."""
    def key(e: Event) -> tuple:
        return (e.pos.offset, e.pos.payload_offset, e.type_code, e.event_size, e.log_pos,
                e.flags, e.body, e.crc, e.raw)
    return [key(e) for e in a] == [key(e) for e in b]


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    out = tmp_path / name
    out.write_bytes(data)
    return out


@pytest.fixture(params=SMALL_FILES, ids=lambda n: n.rsplit("/", 1)[1])
def small(request: pytest.FixtureRequest, corpus: Path) -> Path:
    return corpus / request.param


@pytest.fixture(params=CRC_FILES, ids=lambda n: n.rsplit("/", 1)[1])
def crc_file(request: pytest.FixtureRequest, corpus: Path) -> Path:
    return corpus / request.param


# ---- truncation ----

def test_truncate_at_every_boundary(small: Path, tmp_path: Path) -> None:
    """Cut exactly between events: every earlier event, then a clean end."""
    data = small.read_bytes()
    full = read_all(small, verify=True)
    assert full.error is None
    boundaries = sorted({e.pos.offset for e in full.events} | {len(data)})
    for cut in boundaries:
        events, err = read(write(tmp_path, f"cut{cut}", data[:cut]))
        assert err is None, (cut, err)
        assert same(events, [e for e in full.events if e.pos.offset < cut]), cut


def test_truncate_inside_events(small: Path, tmp_path: Path) -> None:
    """Cut inside an event (its header or its body): earlier events, then TruncatedLog there."""
    data = small.read_bytes()
    full = read_all(small, verify=True)
    outer = full.outer
    for ev in outer:
        for delta in sorted({1, 10, 18, 19, ev.event_size // 2, ev.event_size - 1}):
            if not 0 < delta < ev.event_size:
                continue
            cut = ev.pos.offset + delta
            path = write(tmp_path, f"cut{cut}", data[:cut])
            events, err = read(path)
            assert isinstance(err, TruncatedLog), (cut, err)
            assert err.pos is not None and err.pos.offset == ev.pos.offset, (cut, err)
            assert str(err).startswith(f"{path}:{ev.pos.offset}")
            assert same(events, [e for e in full.events if e.pos.offset < ev.pos.offset])
            if full.info is not None and full.info.in_use and ev.pos.offset > 4:
                assert "in-use flag is set" in str(err)


@pytest.mark.parametrize("size", [0, 1, 3])
def test_shorter_than_magic(tmp_path: Path, size: int) -> None:
    events, err = read(write(tmp_path, "tiny", b"\xfebin"[:size]))
    assert events == [] and isinstance(err, TruncatedLog)
    assert err.pos is not None and err.pos.offset == 0


def test_truncation_through_read_transactions(corpus: Path, tmp_path: Path) -> None:
    """read_transactions yields the complete groups, then the same TruncatedLog."""
    src = corpus / SMALL_FILES[2]
    data = src.read_bytes()
    full = list(read_transactions(src))
    last = full[-1]
    path = write(tmp_path, "cut", data[:last.start.offset + 30])
    got = []
    with pytest.raises(TruncatedLog) as info:
        for t in read_transactions(path):
            got.append(t)
    assert [(t.start.offset, t.size) for t in got] == [(t.start.offset, t.size) for t in full[:-1]]
    assert info.value.pos is not None and info.value.pos.offset >= last.start.offset


# ---- CRC ----

def _body_byte(ev: Event) -> int:
    """A body byte whose change leaves the event parseable up to its CRC check."""
    if ev.type_code == 15:
        return 19 + 2 + 49          # last byte of the NUL-padded server_version field
    return 19 + (ev.event_size - 19 - 4) // 2


def test_flipped_body_byte(crc_file: Path, tmp_path: Path) -> None:
    """One flipped body byte: ChecksumMismatch at that event, everything before it yielded."""
    data = crc_file.read_bytes()
    full = read_all(crc_file, verify=True)
    for ev in full.outer:
        if ev.event_size <= 19 + 4:
            continue
        at = ev.pos.offset + _body_byte(ev)
        damaged = bytearray(data)
        damaged[at] ^= 0x40
        path = write(tmp_path, f"flip{at}", bytes(damaged))
        events, err = read(path)
        assert isinstance(err, ChecksumMismatch), (ev, err)
        assert err.pos is not None and err.pos.offset == ev.pos.offset
        assert err.event_type == ev.type_name
        assert str(err).startswith(f"{path}:{ev.pos.offset} {ev.type_name}: CRC32 mismatch")
        assert same(events, [e for e in full.events if e.pos.offset < ev.pos.offset])
        # without verification the damage is either decoded or reported, never a crash
        read(path, verify=False)


def test_flipped_crc_footer(crc_file: Path, tmp_path: Path) -> None:
    data = crc_file.read_bytes()
    full = read_all(crc_file, verify=True)
    ev = full.outer[-1]
    damaged = bytearray(data)
    damaged[ev.end_pos - 1] ^= 0xFF
    events, err = read(write(tmp_path, "crc", bytes(damaged)))
    assert isinstance(err, ChecksumMismatch) and err.pos is not None
    assert err.pos.offset == ev.pos.offset
    events, err = read(write(tmp_path, "crc2", bytes(damaged)), verify=False)
    assert err is None and len(events) == len(full.events)


def test_in_use_flag_does_not_break_the_fde_crc(corpus: Path, tmp_path: Path) -> None:
    """The FDE CRC is computed with LOG_EVENT_BINLOG_IN_USE_F clear: toggling it is not damage."""
    src = corpus / SMALL_FILES[0]
    data = bytearray(src.read_bytes())
    data[4 + 17] ^= 0x01
    events, err = read(write(tmp_path, "inuse", bytes(data)))
    assert err is None and events[0].flags & 0x1
    data[4 + 17] ^= 0x02             # any other flag bit is covered by the CRC
    events, err = read(write(tmp_path, "other", bytes(data)))
    assert isinstance(err, ChecksumMismatch) and err.pos is not None and err.pos.offset == 4


# ---- impossible sizes ----

@pytest.mark.parametrize("size", [0, 18, 19, 22, 2**32 - 1])
def test_bad_event_size(small: Path, tmp_path: Path, size: int) -> None:
    """event_size too small or beyond the file: MalformedEvent or TruncatedLog, at that event."""
    data = small.read_bytes()
    full = read_all(small, verify=True)
    for ev in full.outer[:4]:
        damaged = bytearray(data)
        damaged[ev.pos.offset + 9:ev.pos.offset + 13] = size.to_bytes(4, "little")
        for verify in (True, False):
            events, err = read(write(tmp_path, f"size{ev.pos.offset}", bytes(damaged)), verify)
            if size in (0, 18):
                assert isinstance(err, MalformedEvent), (ev, err)
            elif size == 2**32 - 1:
                assert isinstance(err, TruncatedLog), (ev, err)
            else:                  # 19 / 22: a short event, then whatever the bytes say
                assert err is None or isinstance(err, ReplToolError)
                if err is None:
                    continue
            if size in (0, 18, 2**32 - 1):
                assert err.pos is not None and err.pos.offset == ev.pos.offset
                assert same(events, [e for e in full.events if e.pos.offset < ev.pos.offset])


def test_event_size_19_with_crc(corpus: Path, tmp_path: Path) -> None:
    """In a CRC32 file a 19-byte event has no room for its checksum: MalformedEvent."""
    src = corpus / SMALL_FILES[0]
    data = bytearray(src.read_bytes())
    ev = read_all(src).outer[1]
    data[ev.pos.offset + 9:ev.pos.offset + 13] = (19).to_bytes(4, "little")
    events, err = read(write(tmp_path, "s19", bytes(data)))
    assert isinstance(err, MalformedEvent) and err.pos is not None
    assert err.pos.offset == ev.pos.offset and len(events) == 1


# ---- header fields, any byte: only ReplToolError escapes ----

@pytest.mark.parametrize("field, width", [("timestamp", 4), ("type_code", 1), ("server_id", 4),
                                          ("event_size", 4), ("log_pos", 4), ("flags", 2)])
def test_flip_each_header_field(small: Path, tmp_path: Path, field: str, width: int) -> None:
    offset = {"timestamp": 0, "type_code": 4, "server_id": 5, "event_size": 9, "log_pos": 13,
              "flags": 17}[field]
    data = small.read_bytes()
    full = read_all(small, verify=True)
    for ev in full.outer:
        damaged = bytearray(data)
        damaged[ev.pos.offset + offset + width - 1] ^= 0x5A
        for verify in (True, False):
            events, err = read(write(tmp_path, "hdr", bytes(damaged)), verify)
            # nothing before the damaged event is lost
            assert same(events[:len([e for e in full.events if e.pos.offset < ev.pos.offset])],
                        [e for e in full.events if e.pos.offset < ev.pos.offset])
            if err is not None:     # reported at the damaged event or later, never before
                assert err.pos is not None and err.pos.offset >= ev.pos.offset, (ev, err)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(tail=st.binary(max_size=400))
def test_random_bytes_after_magic(tmp_path: Path, tail: bytes) -> None:
    """``\\xfebin`` + anything: events or a ReplToolError, nothing else."""
    read(write(tmp_path, "rand", b"\xfebin" + tail), verify=True)
    read(write(tmp_path, "rand", b"\xfebin" + tail), verify=False)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_damage_to_real_files(corpus: Path, tmp_path: Path, data: st.DataObject) -> None:
    """Random byte changes anywhere in real files, read with and without CRC checks."""
    src = corpus / data.draw(st.sampled_from(SMALL_FILES))
    raw = bytearray(src.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    path = write(tmp_path, "dmg", bytes(raw[:cut]))
    read(path, verify=True)
    read(path, verify=False)
    try:
        list(read_transactions(path))
    except ReplToolError:
        pass


# ---- a damaged Transaction_payload ----

def _rebuild_payload(corpus: Path, tmp_path: Path,
                     mutate: Callable[[bytearray], bytearray]) -> tuple[Path, Event]:
    """The 8.0.32 payload file with its plaintext changed by ``mutate``, re-compressed, re-CRCed."""
    import zstandard

    from repltool.binlog.structs import encode_packed_int
    src = corpus / SMALL_FILES[0]
    data = src.read_bytes()
    full = read_all(src)
    pev = next(e for e in full.outer if e.type_code == 40)
    inner = b"".join(e.raw for e in full.events if e.pos.payload_offset is not None)
    plain = mutate(bytearray(inner))
    comp = zstandard.ZstdCompressor().compress(bytes(plain))
    body = (b"\x02\x01\x00" + b"\x03" + encode_packed_int(len(encode_packed_int(len(plain))))
            + encode_packed_int(len(plain)) + b"\x01"
            + encode_packed_int(len(encode_packed_int(len(comp)))) + encode_packed_int(len(comp))
            + b"\x00" + comp)
    size = 19 + len(body) + 4
    header = bytearray(pev.raw[:19])
    header[9:13] = size.to_bytes(4, "little")
    header[13:17] = (pev.pos.offset + size).to_bytes(4, "little")
    event = bytes(header) + body
    event += zlib.crc32(event).to_bytes(4, "little")
    # the payload is the last event before the Rotate: keep the Rotate as it is
    out = data[:pev.pos.offset] + event + data[pev.end_pos:]
    return write(tmp_path, "payload", out), pev


def test_payload_rebuilt_unchanged_reads_the_same(corpus: Path, tmp_path: Path) -> None:
    path, pev = _rebuild_payload(corpus, tmp_path, lambda b: b)
    events, err = read(path)
    assert err is None
    inner = [e for e in events if e.pos.payload_offset is not None]
    assert same(inner, [e for e in read_all(corpus / SMALL_FILES[0]).events
                        if e.pos.payload_offset is not None])


@pytest.mark.parametrize("damage", ["inner_size_huge", "inner_size_small", "stray_bytes",
                                    "inner_body"])
def test_damaged_payload_contents(corpus: Path, tmp_path: Path, damage: str) -> None:
    """Damage inside the compressed transaction: MalformedEvent positioned FILE:OFFSET+INNER."""
    def mutate(b: bytearray) -> bytearray:
        second = int.from_bytes(b[9:13], "little")          # first inner event's size
        if damage == "inner_size_huge":
            b[second + 9:second + 13] = (10**6).to_bytes(4, "little")
        elif damage == "inner_size_small":
            b[second + 9:second + 13] = (5).to_bytes(4, "little")
        elif damage == "stray_bytes":
            b += b"\x00" * 7
        else:       # the Table_map's db-name NUL becomes 'x'
            db_len = b[second + 19 + 8]
            b[second + 19 + 8 + 1 + db_len] = ord("x")
        return b
    path, pev = _rebuild_payload(corpus, tmp_path, mutate)
    events, err = read(path)
    assert isinstance(err, MalformedEvent), err
    assert err.pos is not None and err.pos.offset == pev.pos.offset
    assert err.pos.payload_offset is not None
    assert str(err).startswith(f"{path}:{pev.pos.offset}+{err.pos.payload_offset} ")
    assert events[-1].pos.offset == pev.pos.offset      # the payload event itself was yielded


# ---- regressions found by the property tests above ----

def test_tagged_gtid_unknown_trailing_field() -> None:
    """An unknown (ignorable) field id in a tagged GTID stops decoding; it used to raise IndexError.

    Found by test_random_damage_to_real_files (a damaged field id byte of the 9.6.0 fixture).
    """
    from repltool.binlog.decode import DECODERS, DecodeContext
    from repltool.binlog.structs import BinlogStructs
    from repltool.positions import Position

    from .test_structs_roundtrip import TAGGED_960
    ctx = DecodeContext(BinlogStructs(b""), Position("v", 245), 42)
    base = DECODERS[42](TAGGED_960, ctx)
    extended = b"\x02\x7c" + TAGGED_960[2:] + b"\x1a\x02"      # + field 13 = 1; total 62
    assert DECODERS[42](extended, ctx) == base
    # a field id beyond the known ones, followed by bytes of unknown meaning
    garbled = b"\x02\x7c" + TAGGED_960[2:-4] + b"\x18\x00" + TAGGED_960[-4:]
    assert DECODERS[42](garbled, ctx).transaction_length == base.transaction_length
