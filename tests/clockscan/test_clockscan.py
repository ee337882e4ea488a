"""The transaction_length jump scan gives what the event reader gives."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from repltool.binlog import read_events, read_transactions
from repltool.binlog.clockscan import scan_clocks
from repltool.cli import run
from repltool.errors import ChecksumMismatch, ReplToolError
from repltool.synth import write_sample

# Hand-damaged MySQL test files whose bad CRC sits inside a transaction body:
# the jump scan does not read those bytes, so it cannot see the damage.
BAD_CRC_INSIDE_BODY = {
    "mysql-test__std_data__binlog_recovery__duplicate_xid.000001",
    "mysql-test__std_data__binlog_recovery__duplicate_xid_xa_prepare.000001",
    "mysql-test__std_data__binlog_recovery__malformed_xid_xa_commit.000001",
    "mysql-test__std_data__binlog_recovery__malformed_xid_xa_rollback.000001",
}


def _records(path: Path) -> object:
    try:
        return [(r.pos.offset, r.gtid, r.last_committed, r.sequence_number, r.size,
                 r.immediate_commit_timestamp) for r in scan_clocks(path)]
    except ReplToolError as exc:
        return type(exc).__name__


def _transactions(path: Path) -> object:
    try:
        return [(t.start.offset, t.gtid, t.last_committed, t.sequence_number, t.size,
                 t.immediate_commit_timestamp) for t in read_transactions(path)]
    except ReplToolError as exc:
        return type(exc).__name__


@pytest.mark.corpus_files("path", "mysql/*/*")
def test_same_as_the_event_reader_on_the_mysql_corpus(path: Path) -> None:
    """Every transaction's position, GTID, clock, size and commit timestamp agree."""
    if path.name in BAD_CRC_INSIDE_BODY:
        with pytest.raises(ChecksumMismatch):
            list(read_transactions(path))
        records = [r for r in scan_clocks(path)]
        assert records and all(r.skipped for r in records)
        return
    assert _records(path) == _transactions(path)


@pytest.mark.corpus_files("path", "mariadb/small/mysql-bin.0*", "mariadb/rotation/mysql-bin.0*")
def test_mariadb_logs_are_walked(path: Path) -> None:
    records = list(scan_clocks(path))
    assert not any(r.skipped for r in records)
    assert _records(path) == _transactions(path)


def test_sample_logs_are_jumped(tmp_path: Path) -> None:
    files = write_sample(tmp_path, transactions=300)
    for f in files:
        records = list(scan_clocks(f))
        assert len(records) == 150 and all(r.skipped for r in records)
        assert _records(f) == _transactions(f)


def _corrupt_first_transaction_length(src: Path, dst: Path) -> int:
    """Add 19 to the first GTID's transaction_length, with a valid CRC."""
    data = bytearray(src.read_bytes())
    for ev in read_events(src):
        if ev.type_code == 33:
            at = ev.pos.offset + 19 + 49
            if data[at] < 230:
                data[at] += 19
            else:
                assert data[at] == 252          # 2-byte packed length
                value = int.from_bytes(data[at + 1:at + 3], "little") + 19
                data[at + 1:at + 3] = value.to_bytes(2, "little")
            end = ev.pos.offset + ev.event_size
            data[end - 4:end] = zlib.crc32(bytes(data[ev.pos.offset:end - 4])).to_bytes(4, "little")
            dst.write_bytes(bytes(data))
            return ev.pos.offset
    raise AssertionError("no GTID event")


def test_a_length_that_misses_the_boundary_falls_back_to_walking(tmp_path: Path,
                                                                   corpus: Path) -> None:
    src = corpus / "mysql/mysql80/mysql-test__std_data__replicated-bin.000001"
    bad = tmp_path / "bad.000001"
    first = _corrupt_first_transaction_length(src, bad)
    records = list(scan_clocks(bad))
    assert records[0].pos.offset == first and not records[0].skipped
    assert _records(bad) == _transactions(bad)


def test_stats_clock_only_agrees_with_full_stats(tmp_path: Path, capsys) -> None:
    files = [str(f) for f in write_sample(tmp_path, transactions=400)]
    assert run(["stats", "--format", "json", *files]) == 0
    full = json.loads(capsys.readouterr().out)
    assert run(["stats", "--clock-only", "--format", "json", *files]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert fast["total"]["clock"] == full["total"]["clock"]
    assert fast["total"]["transactions"] == full["total"]["transactions"]
    assert [f["transaction_bytes"] for f in fast["files"]] == \
        [f["transaction_bytes"] for f in full["files"]]
