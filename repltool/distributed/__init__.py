"""Parse and analyse many logs with PySpark (``--spark``): one file per task.

The only package that imports ``pyspark``, and only inside functions: without it
every entry point raises :class:`~repltool.errors.UsageError` ("install
repltool[spark]"); without Java, a :class:`SparkUnavailable` that says so.

Design
------

*Unit of distribution: one file.*  MySQL's logical clocks (and the writeset
history) restart at every binlog rotation, so a binlog file read alone gives
exactly what it gives inside an ordered read of many files.  An executor runs
the same library function the single-process command runs
(:func:`repltool.stats.accumulate_stats`, or the reader and
:func:`~repltool.binlog.group_transactions`) on its file(s); the construct
structs are rebuilt there from the FDE (nothing but path names and small
frozen option values is shipped to executors, and only picklable dataclasses
of plain values come back).

*What crosses the wire.*  To executors: a :class:`Task` (a few flags) and a
:class:`Unit` (the file names and their input indexes).  Back to the driver:
for ``stats`` one unfinished :class:`~repltool.stats.FilePart` per file (a few
counters and the top lists); for ``schedule`` the file's transactions (without
their events) and its FDE/Rotate headers; the transactions DataFrame's rows
never come to the driver.  Local paths are read on the executor where they
are: with ``local[*]`` or a shared file system no byte passes through the
driver.  Hadoop-compatible URIs (``hdfs://``, ``s3a://``, ``file://``) are
listed on the driver (Hadoop ``FileSystem.globStatus``) and read by Spark's
``binaryFiles``; the executor writes the bytes under a private temporary
directory *at the URI itself as a relative path* (``T/hdfs:/nn/dir/f``) and
reads it from there with that relative path, so every position and every
error message names the file by its URI without any renaming.

*Where one file is not independent.*  Relay logs continue a transaction in
the next relay file, and the reader carries the open group (and its
table-id map) across files.  Each file's result therefore says whether it
ends inside a group (its last transaction is truncated) and, for ``stats``,
whether a rows event named a table id that no Table_map of the same read
named (a map from an earlier file may apply).  Files so linked to their
neighbour are read again, together and in order, as one task (a further,
usually empty, Spark job; repeated until no result is linked).  The results are then
stitched in input order on the driver, exactly as one ordered read gives
them: ``stats`` JSON, ``schedule`` JSON and the transactions DataFrame equal
the single-process ones (tests/spark).  A relay-log set whose every file ends
inside a transaction is thus read as one task: correct, not parallel.
Group Replication applier relay logs have no source rotations at all: one
``schedule`` numbering runs across all their files, which the driver-side
replay of the rotation headers handles the same way.

*certify, explain, check.*  ``certify --mode writeset|commit-order`` on
binlogs (:func:`.pairs.certify_unit`): MySQL's trackers restart numbering and
history at every rotation, so each executor certifies its files and sends the
results without write sets, as columns (:mod:`.columns`).  Otherwise
``certify`` and ``explain`` in a certify mode
(:mod:`.pairs`): executors read, group and extract write sets per file and send
them as columns (:mod:`.wspack`: offsets and ``uint64`` hash arrays, key
descriptions in one block decoded only when a key is described); the
driver certifies the ``(transaction, write set)`` pairs in input order with
the single-process machinery (GR certification info, sessions and GTID
bookkeeping run across files there).  ``explain`` with the logged clocks
reads transactions like ``schedule``.  ``check`` (:mod:`.checkjob`):
on binlogs executors run the rules on their files and send findings and the
small state the cross-file rules need (GTID runs, open transactions, clock
totals); the driver merges them in input order.  On relay logs the driver
runs the rule engine over replayed per-file event digests.  Payloads are streamed to the driver one unit
at a time in input order (:func:`.driver.stream_results`).

*Large files.*  ``stats`` and ``schedule`` read a local MySQL binlog larger than
twice the part size (:data:`.driver.SPLIT_CONF`, ``--spark-split-size``, default
128 MiB) as parts cut at transaction boundaries (:mod:`repltool.binlog.split`),
one task each: with the part size set, every such file; without it, only the
files whose parts the executor cores need to finish together
(:func:`.driver.balance_splits`: none when the files are enough to keep every
core busy, as a part costs a task and saves nothing then); and join the parts' results into the file's
(:func:`repltool.stats.join_parts`; ``schedule``'s columns concatenated); a file
whose parts do not join exactly is read again whole.  ``certify --mode
writeset|commit-order`` (the report alone) splits in two stages: each part's task
extracts the certification input as columns (:class:`.pairs.CertPart`), and one task
per file of a second stage certifies its parts in order (MySQL's write-set history
runs through the whole binlog), as :data:`.units.Task.join` says.  ``check`` reads
each file in one task: its per-file rules compare neighbouring transactions.

*Ordering guarantees.*  Results are put in input order by the unit index,
never by arrival; ``seq`` in the DataFrame is the transaction's index in the
single ordered read.

*Environment.*  :func:`.session.spark_session` makes the executors run this
repltool: their Python is ``spark.pyspark.python`` (this interpreter for a
local master), a probe task per core checks what they import, and repltool
(with its missing pure-Python dependencies) is shipped as a zip when theirs
is missing or differs; Spark's own errors become one-line :class:`SparkFailed`
errors (exit status 8).  A session it starts is a :class:`.session.SparkHandle`:
the SparkContext at once, the SQL SparkSession on first use (only Parquet
output needs it).

*Failures.*  A file that fails to parse fails the job with the library's
message (``FILE:OFFSET EVENT: reason``) and its exit status, the first
failing file in input order winning, as in a sequential read.  With
``keep_going`` (``--keep-going``) such files are returned as
:class:`FileFailure` values and the result is that of the other files, read
as if the failing ones had not been given.
"""

from __future__ import annotations

from .driver import (DEFAULT_SPLIT_SIZE, SPLIT_CONF, parse_size, run_distributed,
                     split_size, stream_results)
from .frame import COLUMNS, SCHEMA_DDL, transaction_row, write_parquet
from .inputs import expand_inputs, expand_local, is_uri, natural_key
from .jobs import logged_transactions, spark_schedule_report, spark_stats, transactions_dataframe
from .session import (BREAK_EVEN, BREAK_EVEN_BYTES, INSTALL_HINT, SparkFailed, SparkOptions,
                      SparkUnavailable, spark_errors,
                      check_java, default_conf, warm_up, break_even_hint, parse_conf,  # noqa: F401
                      require_pyspark, spark_session, timed_session)
from .units import FileFailure
from .pairs import spark_pairs  # noqa: E402
from .checkjob import spark_check  # noqa: E402

__all__ = ["BREAK_EVEN", "BREAK_EVEN_BYTES", "COLUMNS", "DEFAULT_SPLIT_SIZE", "FileFailure", "INSTALL_HINT",
           "SCHEMA_DDL", "SPLIT_CONF", "parse_size", "split_size",
           "SparkFailed", "SparkOptions", "SparkUnavailable", "spark_errors", "break_even_hint", "expand_inputs",
           "expand_local", "is_uri", "logged_transactions", "natural_key", "parse_conf",
           "require_pyspark", "run_distributed", "spark_check", "spark_pairs",
           "spark_schedule_report", "spark_session", "spark_stats", "stream_results",
           "timed_session", "transaction_row", "transactions_dataframe", "write_parquet"]

