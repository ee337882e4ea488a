"""--keep-going: damaged ranges are reported, the reader resynchronises, nothing is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events, read_transactions
from repltool.binlog.events import DAMAGED_TYPE
from repltool.cli import run
from repltool.cli.exitcodes import ExitStatus

SMALL = "mariadb/small/mysql-bin.000001"


def _damage(src: Path, dst: Path, offsets: list[int]) -> None:
    data = bytearray(src.read_bytes())
    for off in offsets:
        data[off] ^= 0xFF
    dst.write_bytes(bytes(data))


def test_every_byte_is_accounted_for(corpus: Path, tmp_path: Path) -> None:
    """Events plus damaged ranges tile the file from offset 4 to its end."""
    bad = tmp_path / "bad.bin"
    _damage(corpus / SMALL, bad, [50_000, 1_000_000, 1_000_009, 3_000_000])
    events = list(read_events(bad, ReadOptions(keep_going=True)))
    damaged = [e for e in events if e.type_code == DAMAGED_TYPE]
    assert len(damaged) >= 3
    p = 4
    for ev in events:
        if ev.pos.payload_offset is not None:
            continue
        assert ev.pos.offset == p, f"gap or overlap at {p}"
        p += ev.event_size
    assert p == bad.stat().st_size
    good = {e.pos.offset for e in read_events(corpus / SMALL)}
    kept = {e.pos.offset for e in events if e.type_code != DAMAGED_TYPE}
    assert kept <= good and len(good - kept) == len(damaged)


def test_damaged_header_resynchronises_on_a_verified_crc(corpus: Path, tmp_path: Path) -> None:
    """A destroyed event_size is skipped by searching for the next CRC-valid event."""
    src = corpus / SMALL
    target = [e for e in read_events(src)][500]
    bad = tmp_path / "bad.bin"
    data = bytearray(src.read_bytes())
    data[target.pos.offset + 9:target.pos.offset + 13] = (0xFFFFFFF0).to_bytes(4, "little")
    bad.write_bytes(bytes(data))
    events = list(read_events(bad, ReadOptions(keep_going=True)))
    damaged = [e for e in events if e.type_code == DAMAGED_TYPE]
    assert [d.pos.offset for d in damaged] == [target.pos.offset]
    assert damaged[0].event_size == target.event_size
    assert damaged[0].body.error == "TruncatedLog"


def test_damage_inside_a_transaction_truncates_that_group(corpus: Path, tmp_path: Path) -> None:
    src = corpus / SMALL
    trx = list(read_transactions(src))
    victim = trx[100]
    bad = tmp_path / "bad.bin"
    _damage(src, bad, [victim.end.offset + 20])
    got = list(read_transactions(bad, ReadOptions(keep_going=True, types=None)))
    assert len(got) == len(trx)
    assert [t.truncated for t in got].count(True) == 1
    assert got[100].truncated and got[100].gtid == victim.gtid


def test_cli_dump_and_stats(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.bin"
    _damage(corpus / SMALL, bad, [3_000_000])
    assert run(["dump", str(bad)]) == ExitStatus.CHECKSUM          # strict: stops
    capsys.readouterr()
    assert run(["dump", "--keep-going", str(bad)]) == ExitStatus.CHECKSUM
    out, err = capsys.readouterr()
    assert "# DAMAGED REGION: bytes" in out and "# at " in out.split("DAMAGED")[1]
    assert "1 damaged region(s) skipped" in err
    assert run(["stats", "--keep-going", "--format", "json", str(bad)]) == ExitStatus.CHECKSUM
    data = json.loads(capsys.readouterr().out)["total"]
    assert data["damaged_regions"] == 1 and data["damaged_bytes"] > 0
    assert data["damage"][0]["error"] == "ChecksumMismatch"


def test_clean_file_keep_going_is_identical(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["dump", "--format", "jsonl", str(corpus / SMALL)]) == 0
    plain = capsys.readouterr().out
    assert run(["dump", "--keep-going", "--format", "jsonl", str(corpus / SMALL)]) == 0
    assert capsys.readouterr().out == plain


APE = "mysql/apecloud/tests__parse_file_tests__mysql-bin.000080"


def _views():  # type: ignore[no-untyped-def]
    def certify(out: str):  # type: ignore[no-untyped-def]
        return [(r["gtid"], r["computed"], r["depends_on"]["reason"])
                for r in map(json.loads, out.splitlines())]

    def explain(out: str):  # type: ignore[no-untyped-def]
        d = json.loads(out)
        return d["transactions"], d["critical_path"], d["edges"], d["reasons"]

    def schedule(out: str):  # type: ignore[no-untyped-def]
        d = json.loads(out)
        return d["transactions"], d["critical_path"], [r["makespan"] for r in d["runs"]]

    return {
        "certify": (["certify", "--format", "jsonl", "--mode", "writeset"], certify),
        "explain": (["explain", "--format", "json", "--mode", "writeset"], explain),
        "explain-recorded": (["explain", "--format", "json"], explain),
        "schedule": (["schedule", "--format", "json", "--workers", "1,2"], schedule),
        "schedule-retag": (["schedule", "--format", "json", "--workers", "1,2", "--retag",
                            "writeset"], schedule),
        "schedule-compare": (["schedule", "--format", "json", "--workers", "1,2", "--compare",
                              "writeset"],
                             lambda out: [schedule(json.dumps(r))
                                          for r in json.loads(out)["compare"]]),
    }


@pytest.mark.parametrize("where", ["xid", "middle"])
@pytest.mark.parametrize("command", list(_views()))
def test_keep_going_skips_the_damaged_transaction(corpus: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  command: str, where: str) -> None:
    """A CRC32 damaged inside transaction 3's Xid event, or in its middle (its events
    after the region come without their GTID event: the same transaction's tail): with
    --keep-going the command goes on, and its result is the same command's on the log
    without that transaction (the applier discards a transaction without its end); the
    exit status is the damage's, and stderr names the damaged region."""
    src = corpus / APE
    trxs = list(read_transactions(src))
    victim = trxs[3]
    bad = tmp_path / "bad.bin"
    _damage(src, bad, [victim.end_offset - 6 if where == "xid"
                       else victim.start.offset + victim.size // 2])
    data = src.read_bytes()
    without = tmp_path / "without.bin"
    without.write_bytes(data[:trxs[0].start.offset] + b"".join(
        data[t.start.offset:t.end_offset] for t in trxs if t is not victim))
    base, view = _views()[command]
    assert run([*base, str(bad)]) == ExitStatus.CHECKSUM              # strict: stops
    capsys.readouterr()
    assert run([*base, "--keep-going", str(bad)]) == ExitStatus.CHECKSUM
    kept, err = capsys.readouterr()
    assert "repltool: damaged region: " in err and "ChecksumMismatch" not in err.split(
        "damaged region: ")[0]
    assert run([*base, str(without)]) == 0
    expected = capsys.readouterr().out
    assert view(kept) == view(expected)
    assert run([*base, str(src)]) == 0
    assert view(capsys.readouterr().out) != view(kept)      # the victim counted there


def test_keep_going_refused_where_it_cannot_apply(corpus: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    assert run(["certify", "--keep-going", "--pk-only", "--mode", "writeset", "--output",
                str(out_dir), str(corpus / APE)]) == ExitStatus.USAGE
    assert "--keep-going is not available with --output" in capsys.readouterr().err
    assert run(["explain", "--keep-going", "--spark", str(corpus / APE)]) == ExitStatus.USAGE
    assert "--keep-going is not available with --spark" in capsys.readouterr().err


@pytest.mark.parametrize("mode,where", [("optimistic", "middle"), ("conservative", "end")])
def test_schedule_keep_going_on_mariadb_applier(corpus: Path, tmp_path: Path, cli,
                                                mode: str, where: str) -> None:
    """MariaDB's applier with --keep-going: the group a damaged region cuts is left out
    (the applier discards a group without its end; with damage in its middle, its events
    after the region too), the region is reported, the exit status is the first
    damage's; the simulation equals the one of a copy of the log without that group."""
    src = corpus / SMALL
    trxs = list(read_transactions(src))
    victim = trxs[100]
    bad = tmp_path / "bad.bin"
    _damage(src, bad, [victim.start.offset + victim.size // 2 if where == "middle"
                       else victim.end_offset - 6])
    args = ["schedule", "--format", "json", "--parallel-mode", mode, "--workers", "1,4,16",
            "--schema", src.parent / "schema.sql"]
    _, err = cli(*args, bad, expect=ExitStatus.CHECKSUM)            # strict: stops
    assert len(err.strip().splitlines()) == 1
    out, err = cli(*args, "--keep-going", bad, expect=ExitStatus.CHECKSUM)
    assert "repltool: damaged region: " in err
    got = json.loads(out)
    data = src.read_bytes()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:victim.start.offset] + data[victim.end_offset:])
    want = json.loads(cli(*args, cut)[0])
    assert got["transactions"] == len(trxs) - 1 == want["transactions"]
    for key in ("runs", "serial_makespan", "conflicting_transactions", "commit_groups",
                "flags", "recommended"):
        assert got[key] == want[key], key
