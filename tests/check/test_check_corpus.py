"""`repltool check` on the real corpus: damaged files give the right rules, clean ones no errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repltool.binlog import read_transactions, ReadOptions
from repltool.check import Severity, check_files

#: expected/*.json flag -> the rule that file must produce.
FLAG_RULES = {"crc_bad": "S003", "truncated": "S004", "no_fde": "S002",
              "encrypted": "S007", "not_binlog": "S001"}

#: Clean (unflagged) corpus files that really violate an error-level rule when
#: checked alone, with the rule: MySQL's crash-recovery fixtures were cut by hand
#: (binlog_recovery/duplicate_xid_xa_*: the transaction with GTID :4 /
#: sequence_number 4 was removed), which `test_exceptions_really_violate` proves.
EXCEPTIONS = {
    "mysql/mysql80/mysql-test__std_data__binlog_recovery__duplicate_xid_xa_commit.000001":
        {"C002"},
    "mysql/mysql80/mysql-test__std_data__binlog_recovery__duplicate_xid_xa_rollback.000001":
        {"C002"},
}

MARIADB_SETS = ("small", "serial", "compressed", "rotation", "relay/primary",
                "relay/replica-binlog", "relay/replica-relay")


def _expected(path: Path) -> dict:
    ref = path.parents[2] / "expected" / path.parent.name / f"{path.name}.json"
    return json.loads(ref.read_text())


def _flags(path: Path) -> set[str]:
    exp = _expected(path)
    return {k for k in FLAG_RULES if exp.get(k)}


def _damaged(path: Path) -> bool:
    return bool(_flags(path))


def _clean(path: Path) -> bool:
    return not _flags(path)


def _rel(path: Path, corpus: Path) -> str:
    return str(path.relative_to(corpus))


@pytest.mark.corpus_files("path", "mysql/*/*", select=_damaged)
def test_damaged_file_yields_its_rule(path: Path) -> None:
    report = check_files([path])
    rules = {f.rule for f in report.findings}
    for flag in _flags(path):
        assert FLAG_RULES[flag] in rules, (flag, [str(f) for f in report.findings])
    assert report.exit_status == 1
    exp = _expected(path)
    if exp.get("crc_bad"):
        # the reference lists the damaged offsets: "CRC mismatch type XID at 672"
        offsets = {int(a.rsplit(" ", 1)[1]) for a in exp["anomalies"] if "CRC" in a}
        assert {f.offset for f in report.findings if f.rule == "S003"} == offsets


def test_mariadb_encrypted_set(corpus: Path) -> None:
    path = corpus / "mariadb/encrypted/mysql-bin.000001"
    report = check_files([path])
    s007 = [f for f in report.findings if f.rule == "S007"]
    assert len(s007) == 1 and s007[0].event_type == "START_ENCRYPTION_EVENT"
    assert report.files[0].unreadable and report.files[0].stopped == "S007"
    assert report.exit_status == 1


@pytest.mark.corpus_files("path", "mysql/*/*", select=_clean)
def test_clean_mysql_file_has_no_error(path: Path, corpus: Path) -> None:
    report = check_files([path])
    errors = {f.rule for f in report.findings if f.severity is Severity.ERROR}
    assert errors == EXCEPTIONS.get(_rel(path, corpus), set()), \
        [str(f) for f in report.findings if f.severity is Severity.ERROR]


@pytest.mark.parametrize("name", MARIADB_SETS)
def test_clean_mariadb_set_has_no_error(name: str, corpus: Path) -> None:
    files = sorted(p for p in (corpus / "mariadb" / name).iterdir()
                   if ".0" in p.name and not p.name.endswith(".index"))
    report = check_files(files)
    assert [str(f) for f in report.findings if f.severity is Severity.ERROR] == []
    assert report.exit_status == 0
    if name == "relay/replica-relay":
        # 9 relay files end mid-transaction and the group continues in the next file
        assert report.by_rule() == {"R001": 9}
    else:
        assert report.findings == ()


def test_exceptions_really_violate(corpus: Path) -> None:
    """The clean-looking recovery fixtures miss sequence_number 4 (and GTID :4)."""
    for name in EXCEPTIONS:
        trxs = list(read_transactions(corpus / name, ReadOptions(verify_checksum=False)))
        assert [t.sequence_number for t in trxs] == [1, 2, 3, 5]
        assert [t.gtid.rsplit(":", 1)[1] for t in trxs] == ["1", "2", "3", "5"]
        report = check_files([corpus / name])
        c002 = [f for f in report.findings if f.rule == "C002"]
        assert len(c002) == 1 and "sequence_number=5 after 3" in c002[0].message


def test_damage_does_not_stop_the_other_files(corpus: Path) -> None:
    files = [corpus / "mysql/canal/parse__src__test__resources__binlog__tsdb__mysql-bin.000001",
             corpus / "mysql/mysql80/mysql-test__std_data__binlog_recovery__duplicate_xid.000001",
             corpus / "mysql/mysql80/mysql-test__std_data__binlog_truncated_event.000001",
             corpus / "mysql/rmc/test-data__binlogs__transaction_compression.000001"]
    report = check_files(files)
    per_file = {str(p): {f.rule for f in report.findings if f.file == str(p)} for p in files}
    assert per_file[str(files[0])] == {"S001"}
    assert "S003" in per_file[str(files[1])] and "S005" in per_file[str(files[1])]
    assert per_file[str(files[2])] == {"S004"}
    assert per_file[str(files[3])] == {"C008"}        # read to the end after the damage
    assert [f.events for f in report.files] == [0, 12, 0, 9]
    assert report.files[0].unreadable and not report.files[3].unreadable
    s003 = next(f for f in report.findings if f.rule == "S003")
    assert str(s003).startswith(f"{files[1]}:672 S003 error: XID_EVENT: CRC32 mismatch")
