"""``repltool certify --output DIR``: re-tagged copies of real logs.

* read back by repltool, every GTID event carries exactly the computed clock;
* byte for byte, only the 16 timestamp bytes and the CRC of GTID events changed
  (untagged events, ``mysql`` encoding);
* Debian's ``mariadb-binlog --verify-binlog-checksum`` reads every re-tagged
  MySQL 5.7/8.0 file of the corpus (it cannot read Transaction_payload even in
  the original: then the copy must fail the same way at the same offset);
* ``delta16`` copies read back with the same clocks;
* all-or-nothing: a failure on the second file leaves nothing in DIR;
* inputs are never modified, and DIR may not be an input's directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events, read_transactions
from repltool.errors import ReplToolError

from .seedlogs import EX_GTID_CRC_OFFSET, ws, write_logs

CORPUS = Path(os.environ.get("REPLTOOL_CORPUS")
              or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")
MARIADB_BINLOG = shutil.which("mariadb-binlog")
UNTAGGED = (33, 34)


def _certifiable() -> list[Path]:
    """MySQL 5.7/8.0/9.x corpus files with logical clocks that read cleanly (CRCs verified)."""
    out = []
    for p in sorted(CORPUS.glob("mysql/*/*")):
        try:
            trxs = [t for t in read_transactions(p) if not t.truncated]
        except ReplToolError:
            continue
        if trxs and all(t.sequence_number is not None for t in trxs):
            out.append(p)
    return out


FILES = _certifiable()
IDS = [f"{p.parent.name}/{p.name[-60:]}" for p in FILES]


def _need_corpus() -> None:
    if not FILES:
        if os.environ.get("REPLTOOL_REQUIRE_CORPUS", "") not in ("", "0"):
            pytest.fail(f"no certifiable corpus file under {CORPUS}")
        pytest.skip(f"corpus not found at {CORPUS}")


def clocks_by_offset(path: Path) -> dict[int, tuple[int, int]]:
    return {t.start.offset: (t.last_committed, t.sequence_number)
            for t in read_transactions(path) if not t.truncated}


def computed_by_offset(rows: list[dict]) -> dict[int, tuple[int, int]]:
    return {r["pos"]: tuple(r["computed"]) for r in rows}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("mode", ["writeset", "group-replication"])
@pytest.mark.parametrize("path", FILES or [None], ids=IDS or ["corpus-missing"])
def test_retag_reads_back_and_changes_only_clocks(certify_jsonl, tmp_path: Path,
                                                  path: Path | None, mode: str) -> None:
    _need_corpus()
    assert path is not None
    before = sha(path)
    out = tmp_path / "out"
    rows = certify_jsonl("--mode", mode, "--pk-only", "--output", out, path)
    copy = out / path.name
    assert sha(path) == before                                  # input untouched
    assert clocks_by_offset(copy) == computed_by_offset(rows)   # exactly the computed values
    old, new = path.read_bytes(), copy.read_bytes()
    events = list(read_events(path, ReadOptions(verify_checksum=False, payloads=False)))
    if any(e.type_code == 42 for e in events):                  # tagged GTIDs resize
        return
    assert len(old) == len(new)
    allowed: set[int] = set()
    for e in events:
        if e.type_code in UNTAGGED:
            start = e.pos.offset
            allowed.update(range(start + 19 + 26, start + 19 + 42))        # lc, seq
            allowed.update(range(start + e.event_size - 4, start + e.event_size))  # CRC
    changed = {i for i, (a, b) in enumerate(zip(old, new)) if a != b}
    assert changed <= allowed, sorted(changed - allowed)[:10]


@pytest.mark.parametrize("path", FILES or [None], ids=IDS or ["corpus-missing"])
def test_delta16_reads_back_with_the_same_clocks(certify_jsonl, tmp_path: Path,
                                                 path: Path | None) -> None:
    _need_corpus()
    assert path is not None
    out = tmp_path / "out"
    rows = certify_jsonl("--mode", "group-replication", "--pk-only", "--output", out,
                         "--timestamp-encoding", "delta16", path)
    # typecode 3 is 6 bytes shorter: offsets move, so compare in order
    assert list(clocks_by_offset(out / path.name).values()) == [tuple(r["computed"]) for r in rows]


def _mariadb_binlog(path: Path) -> subprocess.CompletedProcess[str]:
    assert MARIADB_BINLOG is not None
    return subprocess.run([MARIADB_BINLOG, "--verify-binlog-checksum", str(path)],
                          capture_output=True, text=True, timeout=60)


def _positions(out: str) -> list[tuple[int, int]]:
    starts = [int(x) for x in re.findall(r"^# at (\d+)$", out, re.M)]
    ends = [int(x) for x in re.findall(r"end_log_pos (\d+)", out)]
    return list(zip(starts, ends))


@pytest.mark.parametrize("path", FILES or [None], ids=IDS or ["corpus-missing"])
def test_mariadb_binlog_reads_retagged_files(cli, tmp_path: Path, path: Path | None) -> None:
    _need_corpus()
    assert path is not None
    # 9.x files too: where mariadb-binlog cannot read the original (tagged GTIDs),
    # the copy must fail the same way.
    if MARIADB_BINLOG is None:
        if os.environ.get("REPLTOOL_REQUIRE_CORPUS", "") not in ("", "0"):
            pytest.fail("mariadb-binlog not installed")
        pytest.skip("mariadb-binlog not installed (apt-get install mariadb-client)")
    out = tmp_path / "out"
    cli("certify", "--mode", "group-replication", "--pk-only", "--output", out, path)
    original, copy = _mariadb_binlog(path), _mariadb_binlog(out / path.name)
    if original.returncode != 0:
        # mariadb-binlog cannot read Transaction_payload (type 40), even unmodified:
        # the copy fails the same way, at the same offset, and nowhere earlier.
        assert copy.returncode == original.returncode
        assert copy.stderr.strip().splitlines()[-1:] == original.stderr.strip().splitlines()[-1:]
        assert _positions(copy.stdout) == _positions(original.stdout)
        return
    assert copy.returncode == 0, copy.stderr[-500:]
    assert _positions(copy.stdout) == _positions(original.stdout)


def test_tagged_gtid_resizes_and_log_pos_follows(certify_jsonl, tmp_path: Path) -> None:
    """A GTID_TAGGED event grows with its varints; every later log_pos is its end offset."""
    _need_corpus()
    path = CORPUS / "mysql/rmc/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001"
    out = tmp_path / "out"
    rows = certify_jsonl("--mode", "group-replication", "--history-size", "100",
                         "--pk-only", "--output", out, path)
    copy = out / path.name
    assert [tuple(r["computed"]) for r in rows] == list(clocks_by_offset(copy).values())
    events = list(read_events(copy, ReadOptions(payloads=False)))
    assert all(e.log_pos == e.pos.offset + e.event_size for e in events if e.log_pos)


def test_relay_log_defaults_to_group_replication_and_keeps_log_pos(cli, tmp_path: Path) -> None:
    _need_corpus()
    path = CORPUS / "mysql/mysql80/mysql-test__std_data__rpl_no_gipk_low_column_number.000001"
    out = tmp_path / "out"
    text, _ = cli("certify", "--pk-only", "--output", out, path)
    assert "relay log" in text and "group-replication" in text
    old = [e.log_pos for e in read_events(path, ReadOptions(payloads=False))]
    new = [e.log_pos for e in read_events(out / path.name, ReadOptions(payloads=False))]
    assert old == new                                 # source coordinates are never changed
    assert list(clocks_by_offset(out / path.name).values()) == [(1, 2)]


def test_retagged_output_passes_check(cli, tmp_path: Path) -> None:
    """--check fails on the serial seed log (logged != computed) and passes on its copy."""
    paths = write_logs(tmp_path / "in", [[ws(1), ws(2), ws(1, 3)], [ws(4), ws(4)]])
    _, err = cli("certify", "--check", *paths, expect=1)
    assert "--check: 1 transaction(s)" in err and "logged (2,3), computed (1,3)" in err
    out = tmp_path / "out"
    cli("certify", "--pk-only", "--output", out, *paths)
    cli("certify", "--check", *(out / p.name for p in paths))


def test_failure_on_the_second_file_leaves_nothing(cli, tmp_path: Path) -> None:
    """The second file has a GTID event with a wrong CRC: read with
    --no-verify-binlog-checksum it certifies, but the writer refuses to re-tag
    that event (exit 5). DIR then holds no file of this run: not the complete
    first copy, not a temporary file."""
    paths = write_logs(tmp_path / "in", [[ws(1), ws(2)], [ws(3), ws(3)]])
    data = bytearray(paths[1].read_bytes())
    data[EX_GTID_CRC_OFFSET] ^= 0xFF               # CRC of the first GTID event of file 2
    paths[1].write_bytes(bytes(data))
    before = [sha(p) for p in paths]
    out = tmp_path / "out"
    out.mkdir()
    (out / "unrelated.txt").write_text("kept")
    _, err = cli("certify", "--mode", "group-replication", "--no-verify-binlog-checksum",
                 "--pk-only", "--output", out, *paths, expect=5)
    assert "CRC32" in err
    assert sorted(p.name for p in out.iterdir()) == ["unrelated.txt"]
    assert [sha(p) for p in paths] == before


def test_refuses_an_input_directory(cli, tmp_path: Path) -> None:
    paths = write_logs(tmp_path, [[ws(1)]])
    _, err = cli("certify", "--pk-only", "--output", tmp_path, *paths, expect=2)
    assert "is the directory of input" in err
    _, err = cli("certify", "--pk-only", "--output", str(tmp_path) + "/.", *paths, expect=2)


def test_refuses_two_inputs_with_one_name(cli, tmp_path: Path) -> None:
    a = write_logs(tmp_path / "a", [[ws(1)]])
    b = write_logs(tmp_path / "b", [[ws(2)]])
    _, err = cli("certify", "--pk-only", "--output", tmp_path / "out", *a, *b, expect=2)
    assert "same file name" in err


def test_mariadb_logs_cannot_be_retagged(cli, tmp_path: Path) -> None:
    _need_corpus()
    out = tmp_path / "out"
    _, err = cli("certify", "--pk-only", "--output", out, CORPUS / "mariadb/serial/mysql-bin.000001",
                 expect=1)
    assert "no logical clock to re-tag" in err
    assert not out.exists()            # created only when the copies are written


def test_jsonl_fields(certify_jsonl, tmp_path: Path) -> None:
    paths = write_logs(tmp_path, [[ws(1), ws(2), ws(3), ws(2, 4)]])
    rows = certify_jsonl(*paths)
    assert [set(r) for r in rows] == [{"file", "pos", "gtid", "segment", "recorded", "computed",
                                       "changed", "depends_on"}] * 4
    assert rows[3]["recorded"] == [3, 4] and rows[3]["computed"] == [2, 4]
    assert rows[3]["changed"] is True and rows[0]["changed"] is False
    assert rows[3]["depends_on"]["gtid"] == rows[1]["gtid"]
    assert rows[3]["depends_on"]["key"] == {"db": "test", "table": "t1", "index": "PRIMARY",
                                            "values": ["2"]}
    json.dumps(rows)


def test_output_without_schema_is_refused(cli, tmp_path: Path) -> None:
    """Re-tagging needs every unique key: without --schema (or --pk-only) it is refused."""
    from repltool.synth import write_sample
    logs = write_sample(tmp_path / "in", transactions=20)
    _, err = cli("certify", "--output", tmp_path / "out", *logs, expect=2)
    assert "--output without --schema" in err and "--pk-only" in err
    assert not (tmp_path / "out").exists()
    cli("certify", "--pk-only", "--output", tmp_path / "out", *logs)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [p.name for p in logs]


def test_clock_columns_given_whole_equal_added_ones() -> None:
    """``ClockColumns.from_columns`` (the split ``certify --spark --output`` task's) holds
    what ``add`` of each clock makes; offsets out of log order or columns of unequal
    length are refused."""
    from array import array
    from repltool.certify.retag import ClockColumns
    from repltool.errors import CertifyError
    clocks = [(120, (0, 1)), (400, (1, 2)), (777, (1, 3))]
    added = ClockColumns()
    for offset, clock in clocks:
        added.add(offset, clock)
    whole = ClockColumns.from_columns(array("q", [120, 400, 777]), array("q", [0, 1, 1]),
                                      array("q", [1, 2, 3]))
    assert list(whole.items()) == list(added.items()) == clocks
    assert whole[400] == (1, 2) and whole.sorted_by_offset
    with pytest.raises(CertifyError, match="log order"):
        ClockColumns.from_columns([120, 120], [0, 1], [1, 2])
    with pytest.raises(CertifyError, match="offsets for"):
        ClockColumns.from_columns([120, 400], [0], [1, 2])
