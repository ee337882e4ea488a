"""The transactions DataFrame: its schema, its rows, and writing it as Parquet atomically."""

from __future__ import annotations

import itertools
import os
import shutil
import uuid
from typing import Any, Callable, Iterator

from .. import errors
from ..errors import UsageError
from .inputs import is_uri

#: The transactions DataFrame: one row per transaction (event group), as
#: :func:`repltool.binlog.read_transactions` yields them.  ``writeset`` holds
#: the transaction's write-set hashes (XXH64 of MySQL's key strings, in the
#: order MySQL adds them) when the job computed them (``certify --spark``,
#: ``explain --spark`` in a certify mode), else null; a uint64 hash ``h`` is
#: stored as the BIGINT of the same 64 bits (``h - 2**64`` when ``h >= 2**63``).
SCHEMA_DDL = (
    "seq BIGINT, file_index INT, file STRING, pos BIGINT, end_file STRING, end_pos BIGINT, "
    "gtid STRING, server_id BIGINT, thread_id BIGINT, last_committed BIGINT, "
    "sequence_number BIGINT, size BIGINT, events INT, timestamp BIGINT, end_timestamp BIGINT, "
    "kind STRING, truncated BOOLEAN, commit_id BIGINT, immediate_commit_timestamp BIGINT, "
    "original_commit_timestamp BIGINT, transaction_length BIGINT, compressed BOOLEAN, "
    "tables ARRAY<STRING>, rows_events INT, writeset ARRAY<BIGINT>")

#: The column names, in order.
COLUMNS = tuple(column.split()[0] for column in SCHEMA_DDL.split(", "))


def transaction_row(trx: Any, seq: int, file_index: int,
                    writeset: Any = None) -> tuple[Any, ...]:
    """A :class:`~repltool.binlog.Transaction` as a row of :data:`SCHEMA_DDL`.

    :param writeset: its :class:`repltool.writeset.TrxWriteset`, if computed.
    """
    return (seq, file_index, trx.start.file, trx.start.offset, trx.end.file, trx.end_offset,
            trx.gtid, trx.server_id, trx.thread_id, trx.last_committed, trx.sequence_number,
            trx.size, trx.num_events, trx.timestamp, trx.end_timestamp, trx.kind,
            trx.truncated, trx.commit_id, trx.immediate_commit_timestamp,
            trx.original_commit_timestamp, trx.transaction_length, trx.compressed,
            list(trx.tables), sum(n for _, n in trx.rows_events),
            _signed(writeset.hashes) if writeset is not None else None)


def _signed(hashes: Any) -> list[int]:
    """uint64 hashes as the signed 64-bit values Spark's BIGINT holds (same bits)."""
    return [h - (1 << 64) if h >= 1 << 63 else h for h in hashes]


def row_sink(unit: Any, rows: list[tuple[Any, ...]]) -> Callable[..., None]:
    index = {name: unit.index + i for i, name in enumerate(unit.files)}
    counter = itertools.count()

    def sink(trx: Any, writeset: Any = None) -> None:
        rows.append(transaction_row(trx, next(counter), index.get(trx.start.file, -1),
                                    writeset))
    return sink


def to_dataframe(spark: Any, run: Any) -> Any:
    offsets = dict(run.offsets)

    def rows(result: Any) -> Iterator[tuple[Any, ...]]:
        base = offsets[result.unit.index]
        for row in result.rows or ():
            yield (row[0] + base, *row[1:])

    sc = spark.sparkContext
    rdds = [r.flatMap(rows) for r in run.row_rdds]
    rdd = rdds[0] if len(rdds) == 1 else sc.union(rdds) if rdds else sc.emptyRDD()
    return spark.createDataFrame(rdd, SCHEMA_DDL)


def write_parquet(spark: Any, run: Any, target: str) -> None:
    """Write the run's transactions DataFrame to ``target`` atomically (temp dir + rename)."""
    df = to_dataframe(spark, run)
    _write_atomically(spark, df, target)


def _write_atomically(spark: Any, df: Any, target: str) -> None:
    if is_uri(target):
        sc = spark.sparkContext
        jvm = sc._jvm
        dest = jvm.org.apache.hadoop.fs.Path(target)
        fs = dest.getFileSystem(sc._jsc.hadoopConfiguration())
        if fs.exists(dest):
            raise UsageError(f"--output-parquet {target}: already exists")
        tmp = jvm.org.apache.hadoop.fs.Path(dest.getParent(),
                                             f".{dest.getName()}.tmp-{uuid.uuid4().hex}")
        expected = df.count()
        df.write.parquet(tmp.toString())
        _verify_written(spark, tmp.toString(), expected, target,
                        lambda: fs.delete(tmp, True))
        if not fs.rename(tmp, dest):
            raise errors.InputError(f"--output-parquet {target}: rename failed")
        return
    target = os.path.abspath(target)
    if os.path.exists(target):
        raise UsageError(f"--output-parquet {target}: already exists")
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{os.path.basename(target)}.tmp-{uuid.uuid4().hex}")
    try:
        expected = df.count()
        df.write.parquet(tmp)
        _verify_written(spark, tmp, expected, target, lambda: None)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _verify_written(spark: Any, path: str, expected: int, target: str,
                    clean: Callable[[], Any]) -> None:
    """Read the written Parquet back: every row must be there.

    An executor that writes to a path only it can see (a local directory on
    a cluster) commits its part where the driver never finds it; Spark reports
    success.  Counted here, that is an error, and nothing is left behind.
    """
    written = spark.read.parquet(path).count()
    if written != expected:
        clean()
        from .session import SparkFailed
        raise SparkFailed(
            f"--output-parquet {target}: {written} of {expected} rows written (an executor "
            "wrote where the driver cannot see it: use a path every node shares, or a "
            "Hadoop URI such as hdfs:// or s3a://)")
