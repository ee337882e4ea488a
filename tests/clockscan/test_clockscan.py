"""The transaction_length jump scan gives what the event reader gives."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events, read_transactions
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


#: the general reader: construct's decoders, no hand-written fast path
GENERAL = ReadOptions(fast=False)


def _transactions(path: Path) -> object:
    try:
        return [(t.start.offset, t.gtid, t.last_committed, t.sequence_number, t.size,
                 t.immediate_commit_timestamp) for t in read_transactions(path, GENERAL)]
    except ReplToolError as exc:
        return type(exc).__name__


def _expected_jumps(path: Path) -> list[bool]:
    """Which transactions the jump scan must jump, from the general reader's view.

    A transaction is jumped when its GTID (33/34, not the tagged 42) records a
    transaction_length equal to its real size; from the first one that is not,
    the rest of the file is walked event by event (clockscan's documented rule).
    5.7-and-older and MariaDB files record no transaction_length: all walked.
    """
    types = {e.pos.offset: e.type_code for e in read_events(
        path, ReadOptions(verify_checksum=False, payloads=False, fast=False))}
    out, walking = [], False
    for t in read_transactions(path, GENERAL):
        jump = (not walking and not t.truncated and types.get(t.start.offset) in (33, 34)
                and t.transaction_length is not None and t.transaction_length == t.size)
        walking = walking or not jump
        out.append(jump)
    return out


def _readable(path: Path) -> bool:
    try:
        for _ in read_transactions(path, GENERAL):
            pass
    except ReplToolError:
        return False
    return True


def _with_transactions(path: Path) -> bool:
    return _readable(path) and any(True for _ in read_transactions(path, GENERAL))


@pytest.mark.corpus_files("path", "mysql/*/*", select=_with_transactions)
def test_same_as_the_general_reader_on_the_mysql_corpus(path: Path) -> None:
    """Every transaction's position, GTID, clock, size and commit timestamp agree with
    construct's reader, and the jump ran exactly where transaction_length allows it."""
    assert _records(path) == _transactions(path)
    assert [r.skipped for r in scan_clocks(path)] == _expected_jumps(path)


def test_the_jump_runs_on_the_corpus(corpus: Path) -> None:
    """How much of the corpus the jump really covers (a floor, not a self-comparison)."""
    files = [p for p in sorted(corpus.glob("mysql/*/*")) if p.is_file() and _readable(p)]
    jumped = {p: sum(r.skipped for r in scan_clocks(p)) for p in files}
    assert sum(1 for n in jumped.values() if n) >= 35
    assert sum(jumped.values()) >= 274


@pytest.mark.corpus_files("path", "mysql/*/*",
                          select=lambda p: _readable(p) and not _with_transactions(p))
def test_files_without_transactions(path: Path) -> None:
    assert list(scan_clocks(path)) == [] and _transactions(path) == []


@pytest.mark.corpus_files("path", "mysql/*/*", select=lambda p: not _readable(p))
def test_unreadable_files_fail_alike(path: Path) -> None:
    """The general reader refuses these; the jump scan refuses them the same way, or (a
    bad CRC inside a jumped body: the scan does not read those bytes) jumps every one."""
    general = _transactions(path)
    assert isinstance(general, str)
    if path.name in BAD_CRC_INSIDE_BODY:
        assert general == ChecksumMismatch.__name__
        records = list(scan_clocks(path))
        assert records and all(r.skipped for r in records)
    else:
        assert _records(path) == general


@pytest.mark.corpus_files("path", "mariadb/small/mysql-bin.0*", "mariadb/rotation/mysql-bin.0*")
def test_mariadb_logs_are_walked(path: Path) -> None:
    records = list(scan_clocks(path))
    assert records and not any(r.skipped for r in records)     # MariaDB: no transaction_length
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
