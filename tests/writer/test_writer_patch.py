"""patch_clock: one GTID event, new logical timestamps."""

from __future__ import annotations

import zlib
from dataclasses import replace

import pytest

from repltool.binlog import structs as S
from repltool.binlog.decode import DecodeContext, decode_gtid, decode_gtid_tagged
from repltool.binlog.events import GtidBody
from repltool.binlog.writer import (
    encode_gtid_body, frame_event, patch_clock, recompute_crc,
)
from repltool.errors import ChecksumMismatch, UnsupportedLog, UsageError
from repltool.positions import Position

from writer_helpers import CorpusFile, corpus_params, gtid

CTX = DecodeContext(S.BinlogStructs(b""), Position("test", 0), 33)
CLOCK = slice(19 + 26, 19 + 42)


def decoded(raw: bytes, crc: bool = True) -> GtidBody:
    data = raw[19:len(raw) - (4 if crc else 0)]
    return decode_gtid_tagged(data, CTX) if raw[4] == 42 else decode_gtid(data, CTX)


def crc_ok(raw: bytes) -> bool:
    return zlib.crc32(raw[:-4]) == int.from_bytes(raw[-4:], "little")


def patchable(cf: CorpusFile) -> list:
    return [e for e in cf.gtids if e.body.lt_type is not None
            and (e.crc is None or recompute_crc(e.raw) == e.raw)]


def untagged_patchable(cf: CorpusFile) -> list:
    return [e for e in patchable(cf) if e.type_code != 42]


@pytest.mark.parametrize("corpus_file", corpus_params(untagged_patchable, at_least=53),
                         indirect=True)
def test_mysql_patch_touches_only_clock_and_crc(corpus_file: CorpusFile) -> None:
    events = untagged_patchable(corpus_file)
    assert events
    for ev in events:
        lc, sn = ev.body.last_committed + 7, ev.body.sequence_number + 1000
        crc = ev.crc is not None
        new, delta = patch_clock(ev.raw, lc, sn, crc=crc)
        assert delta == 0 and len(new) == len(ev.raw)
        changed = {i for i, (a, b) in enumerate(zip(ev.raw, new)) if a != b}
        allowed = set(range(CLOCK.start, CLOCK.stop)) | (
            set(range(len(new) - 4, len(new))) if crc else set())
        assert changed and changed <= allowed, ev.pos
        assert decoded(new, crc) == replace(ev.body, last_committed=lc, sequence_number=sn)
        assert not crc or crc_ok(new)
        # unchanged clock: the very same bytes
        same, d0 = patch_clock(ev.raw, ev.body.last_committed, ev.body.sequence_number, crc=crc)
        assert same == ev.raw and d0 == 0


@pytest.mark.parametrize("corpus_file", corpus_params(patchable, at_least=54), indirect=True)
def test_delta16_round_trip_restores_every_event(corpus_file: CorpusFile) -> None:
    """mysql -> delta16 -> mysql restores the event (transaction_length, log_pos included)."""
    assert patchable(corpus_file)
    for ev in patchable(corpus_file):
        crc = ev.crc is not None
        lc, sn = ev.body.last_committed, ev.body.sequence_number
        small, delta = patch_clock(ev.raw, lc, sn, encoding="delta16", crc=crc)
        body = decoded(small, crc)
        assert (body.last_committed, body.sequence_number) == (lc, sn)
        if ev.type_code == 42:                           # tagged: no typecode, unchanged
            assert small == ev.raw and delta == 0
            continue
        assert body.lt_type == 3 and delta == len(small) - len(ev.raw) <= -6
        assert int.from_bytes(small[9:13], "little") == len(small)
        if ev.log_pos:
            assert int.from_bytes(small[13:17], "little") == ev.log_pos + delta
        if ev.body.transaction_length is not None:
            assert body.transaction_length == ev.body.transaction_length + delta
        assert not crc or crc_ok(small)
        back, delta_back = patch_clock(small, lc, sn, encoding="mysql", crc=crc)
        assert back == ev.raw and delta_back == -delta


def test_delta16_transaction_length_crossing_packed_width() -> None:
    """253 (3-byte packed) shrinks past 251: the length field itself shrinks too (-8, not -6)."""
    body = gtid(transaction_length=253)
    raw = frame_event(1, 33, 1, 0, encode_gtid_body(body), crc=True, log_pos=1000)
    assert len(raw) == 79
    new, delta = patch_clock(raw, 3, 4, encoding="delta16", crc=True)
    assert delta == -8 and len(new) == 71
    assert decoded(new).transaction_length == 245 == 253 - 79 + 71
    assert int.from_bytes(new[13:17], "little") == 992


def test_relay_log_keeps_own_log_pos() -> None:
    raw = frame_event(1, 33, 1, 0, encode_gtid_body(gtid()), crc=True, log_pos=5000)
    new, delta = patch_clock(raw, 3, 4, encoding="delta16", crc=True, relay_log=True)
    assert delta == -6 and int.from_bytes(new[13:17], "little") == 5000 and crc_ok(new)
    zero = frame_event(1, 33, 1, 0, encode_gtid_body(gtid()), crc=False, log_pos=0)
    new, delta = patch_clock(zero, 3, 4, encoding="delta16", crc=False)
    assert delta == -6 and new[13:17] == bytes(4)


def test_tagged_patch_grows_and_recomputes_length() -> None:
    body = gtid(tag="mytag", transaction_length=296, lt_type=2, last_committed=0,
                sequence_number=1)
    from repltool.binlog.writer import encode_gtid_tagged_body
    raw = frame_event(1, 42, 1, 0, encode_gtid_tagged_body(body), crc=True, log_pos=328)
    new, delta = patch_clock(raw, 2**40, 2**40 + 1, crc=True)
    assert delta > 0
    out = decoded(new)
    assert (out.last_committed, out.sequence_number) == (2**40, 2**40 + 1)
    assert out.transaction_length == 296 + delta
    assert int.from_bytes(new[13:17], "little") == 328 + delta and crc_ok(new)
    assert S.gtid_tagged_body.parse(new[19:-4]).total_size == len(new) - 23
    back, d = patch_clock(new, 0, 1, crc=True)
    assert back == raw and d == -delta


def test_patch_refusals() -> None:
    good = frame_event(1, 33, 1, 0, encode_gtid_body(gtid()), crc=True, log_pos=100)
    with pytest.raises(UsageError):
        patch_clock(frame_event(1, 16, 1, 0, bytes(8), crc=True, log_pos=31), 1, 2, crc=True)
    with pytest.raises(UsageError):
        patch_clock(good, 5, 5, crc=True)
    with pytest.raises(UsageError):
        patch_clock(good, -1, 5, crc=True)
    with pytest.raises(UsageError):
        patch_clock(good, 1, 2, encoding="lz4", crc=True)
    with pytest.raises(ChecksumMismatch):
        patch_clock(good[:-1] + bytes([good[-1] ^ 1]), 1, 2, crc=True)
    v56 = gtid(lt_type=None, immediate_commit_timestamp=None, original_commit_timestamp=None,
               transaction_length=None, immediate_server_version=None,
               original_server_version=None)
    with pytest.raises(UnsupportedLog):
        patch_clock(frame_event(1, 33, 1, 0, encode_gtid_body(v56), crc=False, log_pos=9),
                    1, 2, crc=False)
    # a clean (0, 0) stays allowed, as GR view changes use it
    assert decoded(patch_clock(good, 0, 0, crc=True)[0]).sequence_number == 0
