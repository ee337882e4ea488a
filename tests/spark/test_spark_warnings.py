"""``--spark`` prints what the single process prints: stdout, every stderr line, exit status (issue 15).

The per-file warnings (rows that cannot be keyed, tables without a usable key,
...) are raised on the executors and replayed by the driver; a unit read in one
step and certified in the next once lost its read's warnings (the second
capture replaced the first), so ``certify --spark`` printed fewer lines than
the single process on old logs whose rows have no Table_map before them; and
``explain`` lost the statement of a LOAD DATA or MariaDB compressed Query group.

Each case runs the CLI in-process twice (the ``--spark`` run reuses the test
session's SparkSession) and compares everything but the lines only ``--spark``
prints: the break-even hint and the JVM's own notes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.cli import run
from tests.conftest import require_corpus
from test_spark import mariadb_set

pytestmark = pytest.mark.spark

# the file whose certify --spark lost warnings (rows before any Table_map, so the
# executor reads it with the general reader, then certifies it: two captures) and
# files that did not differ (5.1 pre-GA rows events that cannot be keyed either, a
# damaged MySQL 8.0 log, a MySQL 5.6 one, a MariaDB one)
FILES = [
    "mysql/mysql80/mysql-test__suite__binlog__std_data__ver_5_1-wl2325_s.001",
    "mysql/mysql56/mysql-test__suite__binlog__std_data__ver_5_1-telco.001",
    "mysql/mysql80/mysql-test__std_data__binlog_truncated_event.000001",
    "mysql/mysql56/mysql-test__std_data__master-bin.000001",
    "mariadb/small/mysql-bin.000001",
]
MODES = [[], ["--mode", "writeset"], ["--mode", "commit-order"],
         ["--mode", "writeset-session"], ["--mode", "group-replication"]]


def spark_only(line: str) -> bool:
    return line.startswith("repltool: hint:") or line.startswith("WARNING: Using incubator")


def outcome(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, list[str]]:
    code = run([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, [line for line in err.splitlines() if not spark_only(line)]


def same_as_single(capsys: pytest.CaptureFixture[str], command: str,
                   *args: object) -> tuple[int, str, list[str]]:
    single = outcome(capsys, command, *args)
    spark = outcome(capsys, command, "--spark", "--spark-quiet", "--spark-master", "local[2]",
                    *args)
    assert spark[0] == single[0], f"exit {spark[0]} != {single[0]}"
    assert spark[2] == single[2]
    assert spark[1] == single[1]
    return single


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m[-1] if m else "default")
@pytest.mark.parametrize("name", FILES, ids=lambda n: Path(n).name[-30:])
def test_certify_prints_what_one_process_prints(spark, capsys, name: str,
                                                mode: list[str]) -> None:
    path = require_corpus() / name
    code, _, err = same_as_single(capsys, "certify", *mode, path)
    if "ver_5_1" in name:
        assert code == 0 and sum("cannot be keyed" in line for line in err) >= 3


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m[-1] if m else "default")
@pytest.mark.parametrize("name", ["rotation", "relay/replica-relay"])
def test_certify_sets_print_what_one_process_prints(spark, capsys, name: str,
                                                    mode: list[str]) -> None:
    paths = mariadb_set(name)
    assert len(paths) > 1
    same_as_single(capsys, "certify", *mode, *paths)


# explain names a DDL group by its first statement: LOAD DATA's (an Execute_load_query
# event) and MariaDB's compressed Query events were not sent back by the executors, so
# --spark printed the transaction without its statement
EXPLAIN_FILES = [
    "mysql/mysql80/mysql-test__suite__binlog__std_data__ver_trunk_row_v2.001",
    "mariadb/compressed/mysql-bin.000001",
    "mysql/mysql80/mysql-test__suite__binlog__std_data__ver_5_1-wl2325_s.001",
]


@pytest.mark.parametrize("mode", ["writeset", "commit-order", "writeset-session",
                                  "group-replication"])
@pytest.mark.parametrize("name", EXPLAIN_FILES, ids=lambda n: Path(n).name[-30:])
def test_explain_prints_what_one_process_prints(spark, capsys, name: str, mode: str) -> None:
    _, out, _ = same_as_single(capsys, "explain", "--mode", mode, require_corpus() / name)
    if "trunk_row" in name and mode != "commit-order":   # commit order names no statement
        assert "LOAD DATA INFILE" in out


def write_unmapped_rows_binlog(path: Path) -> Path:
    """A MySQL 8.0 binlog whose rows of one table id come without a Table_map, once in
    a Write_rows event and once in a Delete_rows event (as a file read without the
    one before it): the extractor warns once per (table id, event type), in the same words."""
    import uuid
    from repltool.binlog import structs as S
    from repltool.binlog.constants import EventType
    from repltool.synth import BinlogBuilder, SampleTable, query_body
    sid = uuid.UUID(int=7, version=4)
    table = SampleTable(77, "shop", "orders")
    with open(path, "wb") as fh:
        b = BinlogBuilder(fh)
        b.start(1_760_000_000, (sid, 0))
        for gno, kind in enumerate((EventType.WRITE_ROWS_EVENT, EventType.DELETE_ROWS_EVENT,
                                    EventType.WRITE_ROWS_EVENT), start=1):
            b.transaction(1_760_000_000_000_000 + gno, sid, gno, gno - 1, gno, [
                (EventType.QUERY_EVENT, query_body(10, "shop", "BEGIN")),
                (kind, table.write_rows_body([(gno, f"v{gno}")])),
                (EventType.XID_EVENT, S.xid_body.build({"xid": gno}))])
        b.close(1_760_000_001, None)
    return path


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m[-1] if m else "default")
def test_warnings_once_per_subject_as_one_read(spark, capsys, tmp_path: Path,
                                               mode: list[str]) -> None:
    """The driver deduplicates the executors' warnings on the subject the extractor warns
    once about, not on the words: two subjects said alike are two lines, as in one read."""
    path = write_unmapped_rows_binlog(tmp_path / "binlog.000001")
    _, _, err = same_as_single(capsys, "certify", *mode, path)
    assert sum("table_id:77 cannot be keyed" in line for line in err) == 2
