"""GTID bodies: encode ∘ decode = identity on real events; writer rules; delta16; tagged."""

from __future__ import annotations

from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repltool.binlog import structs as S
from repltool.binlog.decode import DecodeContext, decode_gtid, decode_gtid_tagged
from repltool.binlog.events import GtidBody
from repltool.binlog.writer import (
    delta16_encodable, encode_gtid_body, encode_gtid_tagged_body, frame_event,
    tagged_transaction_length_for,
)
from repltool.errors import UsageError
from repltool.positions import Position

from writer_helpers import CorpusFile, corpus_params, gtid, has_gtids

CTX33 = DecodeContext(S.BinlogStructs(b""), Position("test", 0), 33)
CTX42 = DecodeContext(S.BinlogStructs(b""), Position("test", 0), 42)

# format-spec §8: 8.0.32 Anonymous GTID event, 77 bytes, CRC on.
ANON_8032 = bytes.fromhex(
    "45130a65" "22" "01000000" "4d000000" "12010000" "0000"
    "00" + "00" * 16 + "00" * 8 + "02" + "00" * 8 + "01" + "00" * 7
    + "69688efcbc0506" "ea" "a0380100" "b97fa651")
# format-spec §3.5: the 9.6.0 tagged event's data part.
TAGGED_960 = bytes.fromhex(
    "027800" "0000" "02aaee25020804650222c503c502e1029cc10311035502dead03" "040c"
    "060a6d7974616708000a040c7f1cf3b814244a0610a10412430f0b")


def body_of(raw: bytes, crc: bool = True) -> bytes:
    return raw[19:len(raw) - (4 if crc else 0)]


# ---- real events ----

@pytest.mark.parametrize("corpus_file", corpus_params(has_gtids, at_least=55), indirect=True)
def test_corpus_gtid_bodies_rebuild_byte_identical(corpus_file: CorpusFile) -> None:
    """Every GTID / Anonymous / tagged GTID event body of the corpus re-encodes to its bytes."""
    assert corpus_file.gtids
    for ev in corpus_file.gtids:
        data = body_of(ev.raw, ev.crc is not None)
        if ev.type_code == 42:
            assert encode_gtid_tagged_body(ev.body) == data, ev.pos
        else:
            assert encode_gtid_body(ev.body) == data, ev.pos
            # construct symmetry: the same struct parses what it built
            assert decode_gtid(encode_gtid_body(ev.body), CTX33) == ev.body


def test_spec_vector_8032_anonymous_gtid() -> None:
    body = decode_gtid(body_of(ANON_8032), CTX33)
    assert (body.last_committed, body.sequence_number, body.transaction_length) == (0, 1, 234)
    data = encode_gtid_body(body)
    assert data == body_of(ANON_8032)
    assert frame_event(0x650a1345, 34, 1, 0, data, crc=True, log_pos=0x112) == ANON_8032


def test_spec_vector_960_tagged_gtid() -> None:
    body = decode_gtid_tagged(TAGGED_960, CTX42)
    assert (body.tag, body.gno, body.transaction_length) == ("mytag", 3, 296)
    assert encode_gtid_tagged_body(body) == TAGGED_960
    # recomputing transaction_length from the other events' 213 bytes reaches 296 again
    assert encode_gtid_tagged_body(body, other_events_size=296 - 83, crc=True) == TAGGED_960
    assert tagged_transaction_length_for(body, 213, crc=True) == 296


# ---- MySQL's writer rules (log_event.cc Gtid_log_event::write_body_to_memory) ----

def test_writer_rules_sizes() -> None:
    assert len(encode_gtid_body(gtid(lt_type=None, immediate_commit_timestamp=None,
                                     original_commit_timestamp=None, transaction_length=None,
                                     immediate_server_version=None,
                                     original_server_version=None))) == 25      # 5.6
    assert len(encode_gtid_body(gtid(immediate_commit_timestamp=None,
                                     original_commit_timestamp=None, transaction_length=None,
                                     immediate_server_version=None,
                                     original_server_version=None))) == 42      # 5.7
    origin = encode_gtid_body(gtid())
    assert len(origin) == 42 + 7 + 3 + 4
    replica = encode_gtid_body(gtid(original_commit_timestamp=5, original_server_version=50700))
    assert len(replica) == 42 + 14 + 3 + 8
    assert replica[42 + 6] & 0x80                                    # bit 55 flag
    assert int.from_bytes(replica[42 + 17:42 + 21], "little") >> 31   # bit 31 flag
    assert decode_gtid(replica, CTX33) == gtid(original_commit_timestamp=5,
                                               original_server_version=50700)
    ticket = encode_gtid_body(gtid(commit_group_ticket=9))
    assert len(ticket) == len(origin) + 8
    assert encode_gtid_body(gtid(commit_group_ticket=0)) == origin     # 0 = unset


def test_presence_order_is_enforced() -> None:
    with pytest.raises(UsageError):
        encode_gtid_body(gtid(immediate_commit_timestamp=None))      # length without timestamp
    with pytest.raises(UsageError):
        encode_gtid_body(gtid(tag="t"))
    with pytest.raises(UsageError):
        encode_gtid_tagged_body(gtid())
    with pytest.raises(UsageError):
        encode_gtid_body(gtid(), encoding="zip")
    with pytest.raises(UsageError):
        encode_gtid_body(gtid(lt_type=1))


# ---- delta16 (WL#7165 "Optimizations" §2) ----

def delta16_roundtrip(lc: int, sn: int) -> GtidBody:
    data = encode_gtid_body(gtid(last_committed=lc, sequence_number=sn), encoding="delta16")
    return decode_gtid(data, CTX33)


def test_delta16_is_six_bytes_shorter_and_exact_below_65535() -> None:
    mysql = encode_gtid_body(gtid())
    d16 = encode_gtid_body(gtid(), encoding="delta16")
    assert len(d16) == len(mysql) - 6 and d16[25] == 3
    for lc, sn in [(0, 0), (0, 1), (3, 4), (10, 65544), (0, 65534), (2**40, 2**40 + 65534)]:
        out = delta16_roundtrip(lc, sn)
        assert (out.last_committed, out.sequence_number, out.delta16_saturated) == (lc, sn, False)
        assert out.lt_type == 3


def test_delta16_saturates_conservatively() -> None:
    for lc, sn in [(1, 65536), (5, 65540), (7, 10**9), (2**40, 2**41)]:
        out = delta16_roundtrip(lc, sn)
        assert out.delta16_saturated and out.lt_type == 3
        assert out.sequence_number == sn
        assert out.last_committed == sn - 65535 >= lc


def test_delta16_keeps_the_lc0_barrier_exact() -> None:
    """lc = 0 is the replica's full barrier: never turned into a positive lc by saturation."""
    assert not delta16_encodable(0, 65535)
    for sn in (65535, 70000, 2**33):
        out = delta16_roundtrip(0, sn)
        assert (out.last_committed, out.sequence_number, out.lt_type) == (0, sn, 2)


def test_delta16_rejects_lc_above_sn() -> None:
    with pytest.raises(UsageError):
        encode_gtid_body(gtid(last_committed=5, sequence_number=4), encoding="delta16")


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**62 - 1), st.integers(1, 2**62 - 1))
def test_delta16_property(a: int, b: int) -> None:
    lc, sn = min(a, b - 1), b
    out = delta16_roundtrip(lc, sn)
    assert out.sequence_number == sn
    if sn - lc < 65535:
        assert out.last_committed == lc
    else:
        assert lc <= out.last_committed < sn
        assert (out.last_committed == 0) == (lc == 0)


@settings(max_examples=200, deadline=None)
@given(lc=st.integers(-2**63, 2**63 - 1), sn=st.integers(-2**63, 2**63 - 1),
       ict=st.integers(0, 2**55 - 1), oct_=st.integers(0, 2**55 - 1),
       length=st.integers(0, 2**64 - 1), isv=st.integers(0, 2**31 - 1),
       osv=st.integers(0, 2**31 - 1), ticket=st.integers(0, 2**64 - 1),
       flags=st.integers(0, 255), gno=st.integers(0, 2**63 - 1))
def test_untagged_build_parse_symmetry(lc: int, sn: int, ict: int, oct_: int, length: int,
                                       isv: int, osv: int, ticket: int, flags: int,
                                       gno: int) -> None:
    body = gtid(last_committed=lc, sequence_number=sn, immediate_commit_timestamp=ict,
                original_commit_timestamp=oct_, transaction_length=length,
                immediate_server_version=isv, original_server_version=osv,
                commit_group_ticket=ticket or None, gtid_flags=flags, gno=gno)
    data = encode_gtid_body(body)
    assert decode_gtid(data, CTX33) == body
    assert encode_gtid_body(decode_gtid(data, CTX33)) == data


# ---- tagged (serialization format, §3.5) ----

@settings(max_examples=200, deadline=None)
@given(lc=st.integers(-2**63, 2**63 - 1), sn=st.integers(-2**63, 2**63 - 1),
       ict=st.integers(0, 2**64 - 1), oct_=st.integers(0, 2**64 - 1),
       length=st.integers(0, 2**64 - 1), isv=st.integers(0, 2**32 - 1),
       osv=st.integers(0, 2**32 - 1), ticket=st.integers(0, 2**64 - 1),
       tag=st.from_regex(r"[a-z_][a-z0-9_]{0,31}", fullmatch=True),
       uuid=st.uuids(), gno=st.integers(1, 2**63 - 2))
def test_tagged_build_parse_symmetry(lc: int, sn: int, ict: int, oct_: int, length: int,
                                     isv: int, osv: int, ticket: int, tag: str, uuid: UUID,
                                     gno: int) -> None:
    body = gtid(last_committed=lc, sequence_number=sn, immediate_commit_timestamp=ict,
                original_commit_timestamp=oct_, transaction_length=length,
                immediate_server_version=isv, original_server_version=osv,
                commit_group_ticket=ticket or None, tag=tag, sid=uuid, gno=gno)
    data = encode_gtid_tagged_body(body)
    parsed = S.gtid_tagged_body.parse(data)
    assert parsed.total_size == len(data)
    ids = [f.field_id for f in parsed.fields]
    assert ids == sorted(ids)
    assert (7 in ids) == (oct_ != ict) and (10 in ids) == (osv != isv)
    assert (11 in ids) == (ticket != 0)
    assert decode_gtid_tagged(data, CTX42) == body


@settings(max_examples=200, deadline=None)
@given(other=st.integers(0, 2**40), sn=st.integers(1, 2**62), tag_len=st.integers(1, 32))
def test_tagged_transaction_length_is_a_fixed_point(other: int, sn: int, tag_len: int) -> None:
    body = gtid(tag="t" * tag_len, last_committed=sn - 1, sequence_number=sn)
    for crc in (True, False):
        length = tagged_transaction_length_for(body, other, crc=crc)
        data = encode_gtid_tagged_body(body, other_events_size=other, crc=crc)
        assert decode_gtid_tagged(data, CTX42).transaction_length == length
        assert length == other + 19 + len(data) + (4 if crc else 0)


def test_tagged_total_size_crosses_varint_width() -> None:
    """total_size counts its own varint: 127 bytes fit one byte, the next size is 129, not 128."""
    sizes = []
    for n in range(1, 33):
        data = encode_gtid_tagged_body(gtid(
            tag="x" * n, commit_group_ticket=2**60, original_commit_timestamp=2**63,
            last_committed=2**61, sequence_number=2**61 + 1, gno=2**62,
            original_server_version=2**31))
        assert S.gtid_tagged_body.parse(data).total_size == len(data)
        assert decode_gtid_tagged(data, CTX42).tag == "x" * n
        sizes.append(len(data))
    assert 127 in sizes and 129 in sizes and 128 not in sizes
