"""``--spark``: distributed results equal the single-process ones exactly (issue 6).

Spark runs in local mode (one ``local[2]`` session for the whole test session,
see conftest.py).  Every comparison is exact: the same stats JSON, the same
schedule JSON, the same transactions (DataFrame ordered by ``seq`` against
:func:`repltool.binlog.read_transactions`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from repltool import distributed
from repltool.binlog import read_transactions
from repltool.distributed import (SparkUnavailable, expand_local, spark_stats,
                                  transaction_row, transactions_dataframe)
from repltool.errors import ReplToolError, UsageError
from repltool.stats import compute_stats, stats_to_dict
from tests.conftest import require_corpus

pytestmark = pytest.mark.spark

NOT_BINLOG = "mysql/canal/parse__src__test__resources__binlog__tsdb__mysql-bin.000001"
TRUNCATED = "mysql/mysql80/mysql-test__std_data__binlog_truncated_event.000001"


def mysql_corpus_files() -> list[Path]:
    """The MySQL corpus files that decode (stats reads them without an error)."""
    root = require_corpus()
    good = []
    for f in sorted(root.glob("mysql/*/*")):
        try:
            compute_stats([f])
        except ReplToolError:
            continue
        good.append(f)
    return good


def mariadb_set(name: str) -> list[Path]:
    root = require_corpus()
    return [Path(p) for p in expand_local([str(root / "mariadb" / name)])]


CORPUS_SETS = {
    "mysql": mysql_corpus_files,
    "mariadb-small": lambda: mariadb_set("small"),
    "mariadb-rotation": lambda: mariadb_set("rotation"),
    "mariadb-relay": lambda: mariadb_set("relay/replica-relay"),
}


def stats_json(paths: list[Path], **kw: object) -> dict:
    return json.loads(json.dumps(stats_to_dict(compute_stats(paths, **kw)), default=str))


def spark_stats_json(spark, paths: list[Path], **kw: object) -> dict:
    result, failures = spark_stats(spark, [str(p) for p in paths], **kw)
    assert failures == []
    return json.loads(json.dumps(stats_to_dict(result), default=str))


def rows_of(paths: list[Path]) -> list[tuple]:
    index = {str(p): i for i, p in enumerate(paths)}
    return [transaction_row(t, i, index[t.start.file])
            for i, t in enumerate(read_transactions([str(p) for p in paths]))]


def df_rows(df) -> list[tuple]:
    return [tuple(r) for r in df.orderBy("seq").collect()]


# ---- stats ----

@pytest.mark.parametrize("name", sorted(CORPUS_SETS))
def test_stats_equal_on_corpus_sets(spark, name: str) -> None:
    """Per-file accumulators merged on the driver = one ordered read (relay splits included)."""
    paths = CORPUS_SETS[name]()
    assert paths
    assert spark_stats_json(spark, paths, top=7) == stats_json(paths, top=7)


def test_stats_equal_on_generated_set(spark, rotated: list[Path]) -> None:
    assert len(rotated) >= 50
    assert spark_stats_json(spark, rotated) == stats_json(rotated)


def test_stats_equal_on_split_relay_logs(spark, split_relay: list[Path]) -> None:
    """Transactions continuing into the next relay file, and rows events whose Table_map
    is in the previous file: those files are read together, the figures are the same."""
    assert any(t.spans_files for t in read_transactions([str(p) for p in split_relay]))
    assert spark_stats_json(spark, split_relay, top=3) == stats_json(split_relay, top=3)


def test_stats_cli_json_identical(spark, cli, rotated: list[Path]) -> None:
    """`repltool stats --spark` prints byte-identical JSON; the hint goes to stderr."""
    files = rotated[:20]
    single, _ = cli("stats", "--format", "json", *files)
    out, err = cli("stats", "--spark", "--format", "json", *files)
    assert out == single
    assert "hint: --spark on" in err


def test_stats_cli_directory_and_glob(spark, cli, rotated: list[Path]) -> None:
    """A directory and a quoted glob expand to the files in natural order."""
    single, _ = cli("stats", "--format", "json", *rotated)
    by_dir, _ = cli("stats", "--spark", "--format", "json", rotated[0].parent)
    by_glob, _ = cli("stats", "--spark", "--format", "json", rotated[0].parent / "binlog.0*")
    assert by_dir == single and by_glob == single


def test_stats_cli_keep_going_damage_same(spark, cli) -> None:
    root = require_corpus()
    path = root / TRUNCATED
    single, serr = cli("stats", "--keep-going", "--format", "json", path, expect=4)
    out, err = cli("stats", "--spark", "--keep-going", "--format", "json", path, expect=4)
    assert out == single
    assert "damaged region" in err


# ---- failures ----

def test_failing_file_fails_the_job_with_its_message(spark, cli, rotated: list[Path]) -> None:
    root = require_corpus()
    files = [rotated[0], root / NOT_BINLOG, rotated[1]]
    _, single = cli("stats", *files, expect=3)
    _, err = cli("stats", "--spark", *files, expect=3)
    assert single.strip().splitlines()[-1] in err
    assert f"{root / NOT_BINLOG}:0: not a binlog" in err


def test_keep_going_lists_failing_files_and_processes_the_rest(spark, cli,
                                                               rotated: list[Path]) -> None:
    root = require_corpus()
    bad = root / NOT_BINLOG
    files = [rotated[0], bad, rotated[1], root / TRUNCATED]
    out, err = cli("stats", "--spark", "--keep-going", "--format", "json", *files, expect=3)
    assert f"skipped {bad}: {bad}:0: not a binlog" in err
    assert "1 file(s) skipped" in err
    rest = [rotated[0], rotated[1], root / TRUNCATED]
    assert json.loads(out) == stats_json(rest, keep_going=True)


def test_library_error_class_and_status_survive(spark) -> None:
    root = require_corpus()
    with pytest.raises(ReplToolError) as info:
        spark_stats(spark, [str(root / TRUNCATED)])
    assert type(info.value).__name__ == "TruncatedLog" and info.value.exit_code == 4


# ---- schedule ----

def test_schedule_equal_on_generated_set(spark, cli, rotated: list[Path]) -> None:
    args = ["schedule", "--format", "json", "--workers", "1,2,4", "--crash-at", "#30"]
    single, _ = cli(*args, *rotated)
    out, _ = cli(*args, "--spark", *rotated)
    assert out == single


@pytest.mark.parametrize("cost", ["constant", "linear", "commit-ts"])
def test_schedule_simulates_columns_built_on_executors(spark, cli, rotated: list[Path],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       cost: str) -> None:
    """Binlogs with a per-transaction cost model: executors send (last_committed,
    sequence_number, cost, ...) columns, the driver only simulates; commit-ts (a cost from
    the previous transaction) reads transactions instead.  Same JSON either way."""
    from repltool.distributed import jobs
    built: list[int | None] = []
    real = jobs._sims_on_executors

    def spy(*args, **kw):
        got = real(*args, **kw)
        built.append(None if got is None else len(got[0]))
        return got
    monkeypatch.setattr(jobs, "_sims_on_executors", spy)
    args = ["schedule", "--format", "json", "--workers", "1,4", "--crash-at", "#30",
            "--cost", cost]
    single, _ = cli(*args, *rotated)
    out, _ = cli(*args, "--spark", *rotated)
    assert out == single
    want = json.loads(single)["transactions"]
    assert built == ([None] if cost == "commit-ts" else [want]) and want > 100


def test_sim_columns_pickle_and_concatenate() -> None:
    import pickle
    from repltool.schedule.columns import SimColumns
    from repltool.schedule.cost import LinearCost
    from repltool.schedule.source import read_sim_transactions
    root = require_corpus()
    m80 = [p for p in sorted(root.glob("mysql/mysql80/*")) if p.is_file()]
    parts = []
    for f in m80:
        try:
            parts.append(list(read_sim_transactions([f], LinearCost(), lenient=True)))
        except ReplToolError:
            continue
    assert sum(map(len, parts)) > 100 and len({p[0].pos.file for p in parts if p}) > 5
    whole = SimColumns(t for p in parts for t in p)
    joined = SimColumns()
    for p in parts:
        joined.extend_columns(pickle.loads(pickle.dumps(SimColumns(p))))
    assert list(joined) == list(whole)


def test_schedule_equal_on_split_relay_logs(spark, cli, split_relay: list[Path]) -> None:
    """Relay files are stitched in order: source rotations, continuing transactions."""
    args = ["schedule", "--format", "json", "--cost", "commit-ts"]
    single, _ = cli(*args, *split_relay)
    out, _ = cli(*args, "--spark", *split_relay)
    assert out == single
    assert json.loads(out)["relay_log"] is True


def test_schedule_relay_fixture_of_schedule_tests(spark, cli, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "schedule_cli"))
    from schedule_cli_data import RELAY_1, RELAY_2, write_relay_file
    one, two = tmp_path / "relay-bin.000001", tmp_path / "relay-bin.000002"
    gno = write_relay_file(one, RELAY_1, first=True, next_relay="relay-bin.000002", gno=0)
    write_relay_file(two, RELAY_2, first=False, next_relay=None, gno=gno)
    single, _ = cli("schedule", "--format", "json", one, two)
    out, _ = cli("schedule", "--format", "json", "--spark", one, two)
    assert out == single


@pytest.mark.parametrize("name", ["mariadb-small", "mariadb-relay"])
def test_schedule_mariadb_logs_are_not_for_spark(spark, cli, name: str) -> None:
    """MariaDB logs are simulated with MariaDB's applier, here; --spark is refused."""
    paths = CORPUS_SETS[name]()
    out, _ = cli("schedule", "--format", "json", *paths)
    assert json.loads(out)["applier"] == "mariadb"
    _, err = cli("schedule", "--format", "json", "--spark", *paths, expect=2)
    assert len(err.strip().splitlines()) == 1 and "--spark" in err


# ---- the transactions DataFrame ----

@pytest.mark.parametrize("name", ["mariadb-rotation", "mariadb-relay"])
def test_dataframe_equals_read_transactions_on_corpus(spark, name: str) -> None:
    paths = CORPUS_SETS[name]()
    df, failures = transactions_dataframe(spark, [str(p) for p in paths])
    assert failures == []
    assert df_rows(df) == rows_of(paths)


def test_dataframe_equals_read_transactions_generated(spark, rotated: list[Path],
                                                      split_relay: list[Path]) -> None:
    for paths in (rotated, split_relay):
        df, _ = transactions_dataframe(spark, [str(p) for p in paths])
        assert df.columns == list(distributed.COLUMNS)
        assert df_rows(df) == rows_of(paths)
        assert df.filter("writeset IS NOT NULL").count() == 0


def test_output_parquet_is_written_atomically(spark, cli, tmp_path: Path,
                                              split_relay: list[Path]) -> None:
    target = tmp_path / "trx"
    cli("stats", "--spark", "--output-parquet", target, "--format", "json", *split_relay)
    assert sorted(os.listdir(tmp_path)) == ["trx"]          # no temporary directory left
    back = spark.read.parquet(str(target))
    assert df_rows(back) == rows_of(split_relay)
    _, err = cli("schedule", "--spark", "--output-parquet", target, *split_relay, expect=2)
    assert "already exists" in err
    _, err = cli("stats", "--output-parquet", target, *split_relay, expect=2)
    assert "need --spark" in err


def test_uri_inputs_are_read_through_binary_files(spark, rotated: list[Path]) -> None:
    """file:// URIs go through Spark's binaryFiles; results name the files by their URI."""
    names = [n for n, _ in distributed.expand_inputs([f"file://{rotated[0].parent}/binlog.00000*"],
                                                     spark)]
    assert [n.rsplit("/", 1)[1] for n in names] == [f.name for f in rotated[:9]]
    assert all(n.startswith("file:/") for n in names)
    result, _ = spark_stats(spark, names)
    got = json.loads(json.dumps(stats_to_dict(result), default=str))
    want = stats_json([Path(n.split(":", 1)[1]) for n in names])
    text = json.dumps(want)
    for n in names:
        text = text.replace(f'"{n.split(":", 1)[1]}"', f'"{n}"')
    assert got == json.loads(text)


# ---- environment ----

def test_missing_pyspark_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(UsageError, match=r"install repltool\[spark\]"):
        with distributed.spark_session():
            pass


def test_missing_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SparkUnavailable, match="Java 17"):
        distributed.check_java()


def test_expand_local_orders_naturally(tmp_path: Path) -> None:
    for name in ("b.999999", "b.1000000", "b.000010"):
        (tmp_path / name).write_bytes(b"\xfebin")
    (tmp_path / "b.index").write_text("./b.000010\n")
    assert [Path(p).name for p in expand_local([str(tmp_path)])] == [
        "b.000010", "b.999999", "b.1000000"]
    with pytest.raises(UsageError, match="given twice"):
        distributed.expand_inputs([str(tmp_path / "b.000010")] * 2)


# ---- storage (issue 15) ----

def test_directory_uri_takes_only_log_names_and_index_files_list(spark, tmp_path: Path,
                                                                 rotated: list[Path]) -> None:
    """A directory URI skips MANIFEST.json and the index; an index file gives its list."""
    import shutil
    d = tmp_path / "logs"
    d.mkdir()
    for f in rotated[:3]:
        shutil.copy(f, d / f.name)
    (d / "MANIFEST.json").write_text("{}")
    (d / "binlog.index").write_text("".join(f"./{f.name}\n" for f in rotated[1:3]))
    names = [n for n, _ in distributed.expand_inputs([f"file://{d}"], spark)]
    assert [n.rsplit("/", 1)[1] for n in names] == [f.name for f in rotated[:3]]
    listed = [n for n, _ in distributed.expand_inputs([f"file://{d}/binlog.index"], spark)]
    assert [n.rsplit("/", 1)[1] for n in listed] == [f.name for f in rotated[1:3]]
    local = [n for n, _ in distributed.expand_inputs([str(d / "binlog.index")])]
    assert local == [f"{d}/{f.name}" for f in rotated[1:3]]
    result, _ = spark_stats(spark, names)
    assert [f["file"] for f in stats_to_dict(result)["files"]] == names


def test_parquet_output_that_lost_rows_is_an_error(spark, tmp_path: Path) -> None:
    """The read-back count is what decides: fewer rows than the job made fails, nothing kept."""
    from repltool.distributed.frame import _verify_written
    from repltool.distributed.session import SparkFailed
    path = str(tmp_path / "part")
    spark.range(5).write.parquet(path)
    _verify_written(spark, path, 5, "DIR", lambda: None)
    removed = []
    with pytest.raises(SparkFailed, match=r"--output-parquet DIR: 5 of 7 rows written"):
        _verify_written(spark, path, 7, "DIR", lambda: removed.append(True))
    assert removed == [True]
    assert SparkFailed.exit_code == 9


def test_columns_round_trip_every_corpus_file() -> None:
    """What executors send as columns (issue 15) unpacks to equal transactions, and is smaller."""
    import pickle
    from repltool.distributed.columns import Columns, pack, unpack
    root = require_corpus()
    total = packed = plain = 0
    for f in sorted(root.glob("mysql/*/*")) + sorted(root.glob("mariadb/*/*")):
        try:
            trxs = list(read_transactions([f]))
        except ReplToolError:
            continue
        if not trxs:
            continue
        cols = pack(trxs, skip=("events",))
        data = pickle.dumps(cols)
        back = pickle.loads(data)
        assert isinstance(back, Columns) and unpack(back) == trxs, f
        total += len(trxs)
        packed += len(data)
        plain += len(pickle.dumps(trxs))
    assert total > 5_000
    assert packed * 2 < plain          # 2.3x on these small files, 7.5x on a 16 MB one


def test_a_failing_spark_job_is_one_line_with_its_own_status(spark) -> None:
    """A Python error on an executor reaches the driver as a Py4J error: one line, exit 9."""
    from repltool.distributed.session import SparkFailed, spark_errors
    with pytest.raises(SparkFailed) as info:
        with spark_errors():
            spark.sparkContext.parallelize([1], 1).map(lambda x: x // 0).collect()
    message = str(info.value)
    assert "\n" not in message and len(message) < 500
    assert message.startswith("Spark failed: ")
    assert message.endswith("ZeroDivisionError: integer division or modulo by zero")
    assert info.value.exit_code == 9
