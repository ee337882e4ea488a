"""The command line, run in-process: outputs, filters and every documented exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.cli import run
from repltool.cli.exitcodes import ExitStatus

COMPRESSED = "mysql/rmc/test-data__binlogs__transaction_compression.000001"
TAGGED = "mysql/rmc/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001"
XA = "mysql/mysql80/mysql-test__std_data__binlog_recovery__duplicate_xid_xa_commit.000001"
BAD_CRC = "mysql/mysql80/mysql-test__std_data__binlog_recovery__duplicate_xid.000001"
TRUNCATED = "mysql/mysql80/mysql-test__std_data__binlog_truncated_event.000001"
NOT_BINLOG = "mysql/canal/parse__src__test__resources__binlog__tsdb__mysql-bin.000001"
ENCRYPTED = "mysql/mysql80/mysql-test__std_data__rpl_nogtid_encryption_master-bin.000002"
NO_FDE = "mysql/mysql80/mysql-test__std_data__binlog_no_fd_event.000001"
ROTATION = "mariadb/rotation"


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_dump_jsonl_has_the_documented_fields(cli, corpus: Path) -> None:
    """Every object has file/pos/end_log_pos/type_code/type/server_id/size/flags; inner
    events of a Transaction_payload carry payload_pos and log_pos 0."""
    out, _ = cli("dump", "--format", "jsonl", corpus / COMPRESSED)
    rows = jsonl(out)
    assert [r["type"] for r in rows] == [
        "FORMAT_DESCRIPTION_EVENT", "PREVIOUS_GTIDS_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT",
        "TRANSACTION_PAYLOAD_EVENT", "QUERY_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT",
        "XID_EVENT", "ROTATE_EVENT"]
    for r in rows:
        assert {"file", "pos", "end_log_pos", "type_code", "type", "server_id", "size",
                "flags"} <= r.keys()
    gtid = rows[2]
    assert (gtid["gtid"], gtid["last_committed"], gtid["sequence_number"]) == ("ANONYMOUS", 0, 1)
    assert gtid["transaction_length"] == 234
    assert gtid["immediate_server_version"] == 80032
    assert gtid["immediate_commit_timestamp"] == 1695159109445737
    inner = rows[4:8]
    assert [r["pos"] for r in inner] == [274] * 4
    assert [r["payload_pos"] for r in inner] == [0, 71, 116, 152]
    assert all(r["end_log_pos"] == 0 for r in inner)
    assert rows[-1]["next_file"] == "binlog.000043"


def test_dump_tagged_gtid_text(cli, corpus: Path) -> None:
    out, _ = cli("dump", "--format", "jsonl", corpus / TAGGED)
    gtids = [r for r in jsonl(out) if r["type"] == "GTID_TAGGED_LOG_EVENT"]
    assert [g["gtid"] for g in gtids] == ["55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3"]
    assert (gtids[0]["last_committed"], gtids[0]["sequence_number"]) == (0, 1)


def test_dump_text_is_mysqlbinlog_like(cli, corpus: Path) -> None:
    out, _ = cli("dump", corpus / COMPRESSED)
    assert "# at 4\n" in out
    assert "end_log_pos 126 CRC32 0xf4a6d89d" in out
    assert "Anonymous_GTID\tlast_committed=0\tsequence_number=1" in out
    assert "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'/*!*/;" in out
    assert "Rotate to binlog.000043  pos: 4" in out


def test_dump_positions_select_a_range(cli, corpus: Path) -> None:
    out, _ = cli("dump", "--format", "jsonl", "--start-position", "197",
                 "--stop-position", "431", corpus / COMPRESSED)
    pos = [r["pos"] for r in jsonl(out)]
    assert pos[0] == 4            # the FDE always passes, like mysqlbinlog
    assert 126 not in pos and 431 not in pos
    assert 197 in pos and 274 in pos


def test_dump_gtid_filters(cli, corpus: Path) -> None:
    all_rows = jsonl(cli("dump", "--format", "jsonl", corpus / XA)[0])
    gtids = [r["gtid"] for r in all_rows if "gtid" in r]
    assert len(gtids) >= 2
    keep = gtids[1]
    rows = jsonl(cli("dump", "--format", "jsonl", "--include-gtids", keep, corpus / XA)[0])
    assert [r["gtid"] for r in rows if "gtid" in r] == [keep]
    assert any(r["type"] == "QUERY_EVENT" for r in rows)
    rows = jsonl(cli("dump", "--format", "jsonl", "--exclude-gtids", keep, corpus / XA)[0])
    assert keep not in [r.get("gtid") for r in rows]
    assert len([r for r in rows if "gtid" in r]) == len(gtids) - 1


def test_dump_database_filter(cli, corpus: Path) -> None:
    rows = jsonl(cli("dump", "--format", "jsonl", "--database", "nosuchdb",
                     corpus / COMPRESSED)[0])
    assert not [r for r in rows if r["type"] in ("TABLE_MAP_EVENT", "WRITE_ROWS_EVENT")]
    rows = jsonl(cli("dump", "--format", "jsonl", "--database", "test", corpus / COMPRESSED)[0])
    assert [r for r in rows if r["type"] == "WRITE_ROWS_EVENT"]


def test_dump_many_files_as_one_sequence(cli, corpus: Path) -> None:
    files = sorted((corpus / ROTATION).glob("mysql-bin.0*"))[:3]
    rows = jsonl(cli("dump", "--format", "jsonl", *files)[0])
    assert [r["file"] for r in rows if r["type"] == "FORMAT_DESCRIPTION_EVENT"] == \
        [str(f) for f in files]


def test_stats_json(cli, corpus: Path) -> None:
    out, _ = cli("stats", "--format", "json", corpus / XA)
    data = json.loads(out)
    t = data["total"]
    assert t["server_version"] == "8.0.30-tr-debug"
    assert t["transactions"] == 4
    assert t["clock"]["transactions"] == 4
    assert sum(t["clock"]["distance"].values()) == 4
    assert t["event_types"]["GTID_LOG_EVENT"] == 4
    assert t["in_use"] is True


def test_stats_mariadb_group_commits(cli, corpus: Path) -> None:
    files = sorted((corpus / ROTATION).glob("mysql-bin.0*"))
    out, _ = cli("stats", "--format", "json", *files)
    data = json.loads(out)
    assert len(data["files"]) == len(files)
    assert data["total"]["transactions"] == sum(f["transactions"] for f in data["files"])
    groups = data["total"]["commit_id_groups"]
    assert groups and sum(int(k) * v for k, v in groups.items()) == data["total"]["transactions"]


def test_stats_text(cli, corpus: Path) -> None:
    out, _ = cli("--no-color", "stats", corpus / COMPRESSED)
    assert "Events by type" in out and "TRANSACTION_PAYLOAD_EVENT" in out


@pytest.mark.parametrize(("name", "status", "fragment"), [
    (NOT_BINLOG, ExitStatus.FORMAT_ERROR, ":0: not a binlog"),
    (NO_FDE, ExitStatus.FORMAT_ERROR, ":4 UNKNOWN_EVENT_48: the first event"),
    (TRUNCATED, ExitStatus.TRUNCATED, ":4: log ends mid-event"),
    (BAD_CRC, ExitStatus.CHECKSUM, ":672 XID_EVENT: CRC32 mismatch"),
    (ENCRYPTED, ExitStatus.ENCRYPTED, ":0: encrypted MySQL binlog"),
])
def test_exit_status_of_damaged_logs(cli, corpus: Path, name: str, status: int,
                                     fragment: str) -> None:
    for command in ("dump", "stats"):
        _, err = cli(command, corpus / name, expect=status)
        assert err.startswith("repltool: error: ")
        assert fragment in err
        assert "Traceback" not in err


def test_bad_crc_is_readable_without_verification(cli, corpus: Path) -> None:
    cli("dump", "--no-verify-binlog-checksum", corpus / BAD_CRC)


def test_unsupported_binlog_v1(cli, tmp_path: Path) -> None:
    """A MySQL 3.23 file (13-byte headers) is refused with its own status."""
    body = (1).to_bytes(2, "little") + b"3.23.58-log".ljust(50, b"\0") + bytes(4)
    header = bytes(4) + b"\x01" + (1).to_bytes(4, "little") + (13 + len(body)).to_bytes(4, "little")
    f = tmp_path / "old.000001"
    f.write_bytes(b"\xfebin" + header + body)
    _, err = cli("dump", f, expect=ExitStatus.UNSUPPORTED)
    assert "binlog format version 1" in err


def test_missing_file_and_usage_errors(cli, tmp_path: Path) -> None:
    _, err = cli("stats", tmp_path / "nope", expect=ExitStatus.USAGE)
    assert "cannot open" in err
    cli("dump", "--format", "xml", tmp_path / "nope", expect=ExitStatus.USAGE)
    cli("dump", "--include-gtids", "not-a-gtid", tmp_path / "nope", expect=ExitStatus.USAGE)
    cli("nosuchcommand", expect=ExitStatus.USAGE)


def test_traceback_option_reraises(corpus: Path) -> None:
    from repltool.errors import NotABinlog
    with pytest.raises(NotABinlog):
        run(["--traceback", "dump", str(corpus / NOT_BINLOG)])


def test_help_lists_exit_statuses(cli) -> None:
    out, _ = cli("--help")
    assert "Exit status:" in out and "130" in out
