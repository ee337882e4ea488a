"""Event framing, CRC32 and the self-inclusive transaction_length rule, checked on real files."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repltool.binlog import ReadOptions, read_transactions
from repltool.binlog.structs import encode_packed_int
from repltool.binlog.writer import (
    frame_event, recompute_crc, set_log_pos, transaction_length_for,
)

from writer_helpers import CorpusFile, corpus_params

# Hand-spliced MySQL test files (mysql-test/std_data/binlog_recovery/*): events
# were cut out to simulate crashes, so the GTID's transaction_length still
# describes the original, longer transaction.  Offsets of those GTID events.
SPLICED = {
    "mysql-test__std_data__binlog_recovery__ddl_in_transaction.000001": {157},
    "mysql-test__std_data__binlog_recovery__orphan_begin_start.000001": {157},
    "mysql-test__std_data__binlog_recovery__orphan_commit.000001": {352},
    "mysql-test__std_data__binlog_recovery__orphan_rollback.000001": {510},
    "mysql-test__std_data__binlog_recovery__orphan_xa_commit.000001": {430},
    "mysql-test__std_data__binlog_recovery__orphan_xa_prepare.000001": {157},
    "mysql-test__std_data__binlog_recovery__orphan_xa_rollback.000001": {430},
    "mysql-test__std_data__binlog_recovery__orphan_xid.000001": {430},
}


@pytest.mark.parametrize("corpus_file", corpus_params(), indirect=True)
def test_frame_event_rebuilds_every_event(corpus_file: CorpusFile) -> None:
    """header fields + body -> frame_event is the event's exact bytes (CRC, FDE IN_USE rule)."""
    for ev in corpus_file.events:
        crc = ev.crc is not None
        body = ev.raw[19:len(ev.raw) - (4 if crc else 0)]
        built = frame_event(ev.timestamp, ev.type_code, ev.server_id, ev.flags, body, crc=crc,
                            log_pos=ev.log_pos)
        fde = ev.type_code == 15
        if crc and recompute_crc(ev.raw, fde=fde) != ev.raw:
            # the damaged test files: the stored CRC is wrong, everything else rebuilds
            assert "binlog_recovery" in corpus_file.name, ev.pos
            assert built[:-4] == ev.raw[:-4]
            continue
        assert built == ev.raw, ev.pos
        assert set_log_pos(ev.raw, ev.log_pos, crc=crc) == ev.raw


def test_fde_crc_ignores_in_use_flag() -> None:
    body = bytes(100)
    closed = frame_event(1, 15, 1, 0x0000, body, crc=True, log_pos=123)
    in_use = frame_event(1, 15, 1, 0x0001, body, crc=True, log_pos=123)
    assert closed[-4:] == in_use[-4:] and closed[17] != in_use[17]
    assert recompute_crc(in_use, fde=True) == in_use
    assert recompute_crc(in_use) != in_use


def brute_force_length(t0: int) -> int:
    """The smallest T with T == t0 + len(packed(T)), by search."""
    for size in (1, 3, 4, 9):
        if len(encode_packed_int(t0 + size)) == size:
            return t0 + size
    raise AssertionError


@given(st.integers(0, 2**40))
def test_transaction_length_rule_is_the_packed_int_fixed_point(t0: int) -> None:
    assert transaction_length_for(t0, 0) == brute_force_length(t0)


@pytest.mark.parametrize("t0", [0, 249, 250, 251, 65531, 65532, 65533, 16777210, 16777211,
                                16777212, 16777213])
def test_transaction_length_boundaries(t0: int) -> None:
    t = transaction_length_for(t0 - 50, 50)
    assert t == brute_force_length(t0) and t - t0 == len(encode_packed_int(t))


def _untagged_with_length(cf: CorpusFile) -> list:
    """GTID events with a transaction_length (8.0.2+), tagged ones aside (their own test)."""
    return [e for e in cf.gtids if e.body.transaction_length is not None and e.type_code != 42]


@pytest.mark.parametrize("corpus_file", corpus_params(_untagged_with_length, at_least=40),
                         indirect=True)
def test_transaction_length_matches_corpus(corpus_file: CorpusFile) -> None:
    """transaction_length_for(other events, GTID without its field) == what MySQL wrote."""
    gtids = {e.pos.offset: e for e in _untagged_with_length(corpus_file)}
    assert gtids
    trxs = {t.start.offset: t for t in read_transactions(
        corpus_file.path, ReadOptions(verify_checksum=False))}
    spliced = SPLICED.get(corpus_file.name, set())
    for offset, ev in gtids.items():
        recorded = ev.body.transaction_length
        other = trxs[offset].size - ev.event_size
        own = ev.event_size - len(encode_packed_int(recorded))
        computed = transaction_length_for(other, own)
        if offset in spliced:
            assert computed != recorded
        else:
            assert computed == recorded, ev.pos


def test_transaction_length_corpus_count() -> None:
    """The corpus really exercises the rule: 8.0 GTID events in many files."""
    from writer_helpers import CORPUS, corpus_missing, load, mysql_files
    if not CORPUS.is_dir():
        corpus_missing()
    files = [cf for cf in map(load, mysql_files()) if cf is not None]
    with_length = [e for cf in files for e in cf.gtids if e.body.transaction_length is not None]
    assert len(with_length) >= 290
    assert len({e.pos.file for e in with_length}) >= 40


def test_writer_doctests() -> None:
    """The Example:: blocks of repltool.binlog.writer run as doctests."""
    import doctest

    from repltool.binlog import writer
    result = doctest.testmod(writer)
    assert result.attempted >= 8 and result.failed == 0
