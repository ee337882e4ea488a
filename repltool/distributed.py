"""Parse and analyse many logs with PySpark (``--spark``): one file per task.

The only module that imports ``pyspark``, and only inside functions: without it
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

*What crosses the wire.*  To executors: a :class:`_Task` (a few flags) and a
:class:`_Unit` (the file names and their input indexes).  Back to the driver:
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

*Ordering guarantees.*  Results are put in input order by the unit index,
never by arrival; ``seq`` in the DataFrame is the transaction's index in the
single ordered read.

*Failures.*  A file that fails to parse fails the job with the library's
message (``FILE:OFFSET EVENT: reason``) and its exit status, the first
failing file in input order winning, as in a sequential read.  With
``keep_going`` (``--keep-going``) such files are returned as
:class:`FileFailure` values and the result is that of the other files, read
as if the failing ones had not been given.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from . import errors
from .errors import ReplToolError, UsageError

if TYPE_CHECKING:                     # pragma: no cover
    from .schedule import SimConfig
    from .schedule.cost import CostModel
    from .schedule.source import CrashSpec, ScheduleReport
    from .stats import FilePart, LogStats

#: Below this much input, ``--spark`` (embedded ``local[2]`` on a 2-core
#: machine) is slower than the single-process command: Spark's start-up
#: (JVM and session: 8-13 s measured) is not paid back.  Measured by
#: bench/bench_spark.py; see bench/RESULTS.md.
BREAK_EVEN_BYTES = 650_000_000

INSTALL_HINT = "--spark needs PySpark: install repltool[spark] (pip install 'repltool[spark]')"

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")    # hdfs://nn/x, and Hadoop's file:/x
_GLOB = re.compile(r"[*?\[]")
_SKIP_SUFFIXES = (".index", ".info", ".tmp", ".pid", ".err", ".cnf")


class SparkUnavailable(UsageError):
    """Spark cannot start here (no Java, or the JVM gateway failed)."""


# ---- options and session ----

@dataclass(frozen=True)
class SparkOptions:
    """How to reach Spark.

    :param master: a master URL; ``None``: the one ``spark-submit`` (or the
        ``MASTER`` environment variable) gives, else the embedded ``local[*]``.
    :param conf: ``spark.*`` settings, applied after repltool's defaults.
    """

    master: str | None = None
    conf: tuple[tuple[str, str], ...] = ()
    app_name: str = "repltool"


def parse_conf(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``KEY=VALUE`` strings as pairs.

    >>> parse_conf(["spark.executor.memory=2g"])
    (('spark.executor.memory', '2g'),)
    """
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--spark-conf {item!r}: expected KEY=VALUE")
        out.append((key.strip(), value))
    return tuple(out)


def require_pyspark() -> Any:
    """The pyspark module.

    :raises UsageError: when it is not installed.
    """
    try:
        import pyspark
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return pyspark


def _under_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java"):
        return
    raise SparkUnavailable("--spark needs Java 17 (a JDK or JRE): no `java` on PATH and "
                           "JAVA_HOME is not set")


def _default_conf(master: str) -> dict[str, str]:
    conf = {
        "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() else "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.python.worker.reuse": "true",
    }
    if master.startswith("local"):
        # the executors are this interpreter (repltool and its dependencies importable)
        conf["spark.pyspark.python"] = os.environ.get("PYSPARK_PYTHON", sys.executable)
        conf["spark.pyspark.driver.python"] = sys.executable
        conf["spark.driver.maxResultSize"] = "4g"
        conf["spark.ui.enabled"] = "false"
        # The embedded JVM only schedules tasks and moves small results: its
        # C1-only JIT and serial GC start about 1 s sooner (bench/RESULTS.md).
        conf["spark.driver.extraJavaOptions"] = _FAST_JVM
    return conf


_FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto"


def _warm_up(spark: Any) -> None:
    """Start the Python workers (and import repltool in them) before the first real job.

    Part of start-up, like the JVM: a worker is reused for every later task
    (``spark.python.worker.reuse``), and timing the first job without this
    would charge it ~1.5 s of interpreter start-up and imports.
    """
    sc = spark.sparkContext
    n = max(1, sc.defaultParallelism)
    sc.parallelize(range(n), n).map(_import_worker_modules).collect()


def _import_worker_modules(_: int) -> int:
    import repltool.binlog.fastpath  # noqa: F401
    import repltool.stats  # noqa: F401
    return 0


@contextmanager
def spark_session(options: SparkOptions | None = None) -> Iterator[Any]:
    """A SparkSession for the duration of the block; stopped afterwards if created here.

    An active session (a notebook, a caller's, ``spark-submit``'s) is reused
    and left running.  Ctrl-C cancels the running jobs (PySpark's SIGINT
    handler), stops the session and re-raises ``KeyboardInterrupt``.

    :raises UsageError: when PySpark is not installed.
    :raises SparkUnavailable: when Java is missing or the JVM does not start.
    """
    options = options or SparkOptions()
    require_pyspark()
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    if active is not None:
        for key, value in options.conf:
            try:
                active.conf.set(key, value)
            except Exception:               # static settings cannot change: keep going
                pass
        yield active
        return
    submitted = _under_spark_submit()
    master = options.master or os.environ.get("MASTER") or (None if submitted else "local[*]")
    if not submitted:
        _check_java()
    builder = SparkSession.builder.appName(options.app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in {**_default_conf(master or ""), **dict(options.conf)}.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:                # PySparkRuntimeError JAVA_GATEWAY_EXITED, ...
        raise SparkUnavailable(f"Spark did not start ({type(exc).__name__}: "
                               f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}); "
                               "--spark needs Java 17 and a working pyspark") from exc
    try:
        spark.sparkContext.setLogLevel("WARN")
        if master is not None and not master.startswith("local"):
            _ship_package(spark)
        else:
            _warm_up(spark)
        yield spark
    finally:
        spark.stop()


def _ship_package(spark: Any) -> None:
    """Put repltool itself on the executors of a real cluster (its dependencies must be there)."""
    pkg = os.path.dirname(os.path.abspath(__file__))
    tmp = tempfile.mkdtemp(prefix="repltool-spark-")
    archive = shutil.make_archive(os.path.join(tmp, "repltool"), "zip",
                                  os.path.dirname(pkg), os.path.basename(pkg))
    spark.sparkContext.addPyFile(archive)


# ---- inputs ----

def is_uri(name: str) -> bool:
    """Whether ``name`` is a Hadoop-style URI (``hdfs://``, ``s3a://``, ``file://``)."""
    return bool(_URI.match(name))


def natural_key(name: str) -> tuple[Any, ...]:
    """Sort key that puts ``binlog.999999`` before ``binlog.1000000``.

    >>> sorted(["b.1000000", "b.999999", "b.000010"], key=natural_key)
    ['b.000010', 'b.999999', 'b.1000000']
    """
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in re.split(r"(\d+)", name))


def _dir_files(names: Iterable[str]) -> list[str]:
    return sorted((n for n in names
                   if not os.path.basename(n).startswith(".") and not n.endswith(_SKIP_SUFFIXES)),
                  key=natural_key)


def _is_log(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) in (b"\xfebin", b"\xfdbin")
    except OSError:
        return False


def expand_local(specs: Iterable[str]) -> list[str]:
    """Local inputs in order: a file as given, a directory's log files, a glob's matches.

    A directory contributes, in natural name order, its regular files that
    begin with the binlog magic (``\\xfebin``, or ``\\xfdbin`` for an encrypted
    one, which then fails as such): ``*.index``, ``*.info`` and other
    companions are left out.  A glob contributes its matching files in natural
    order, whatever they hold.  A path that does not exist is kept, so
    that reading it gives the reader's own error.

    :raises InputError: when a glob matches nothing.
    """
    out: list[str] = []
    for spec in specs:
        if os.path.isdir(spec):
            out.extend(_dir_files(os.path.join(spec, n) for n in os.listdir(spec)
                                  if _is_log(os.path.join(spec, n))))
        elif _GLOB.search(spec) and not os.path.exists(spec):
            found = [p for p in glob.glob(spec) if os.path.isfile(p)]
            if not found:
                raise errors.InputError(f"{spec}: no file matches")
            out.extend(sorted(found, key=natural_key))
        else:
            out.append(spec)
    return out


def expand_inputs(specs: Sequence[str], spark: Any = None) -> list[tuple[str, int]]:
    """Every input file with its size, in input order (URIs are listed through Hadoop).

    :raises UsageError: on a file given twice (its figures would count twice).
    """
    out: list[tuple[str, int]] = []
    for spec in specs:
        if is_uri(spec):
            if spark is None:
                raise UsageError(f"{spec}: URIs are read only with --spark")
            out.extend(_list_uri(spark, spec))
        else:
            for name in expand_local([spec]):
                out.append((name, os.path.getsize(name) if os.path.isfile(name) else 0))
    seen: set[str] = set()
    for name, _ in out:
        if name in seen:
            raise UsageError(f"{name}: given twice (--spark reads every file once)")
        seen.add(name)
    return out


def _list_uri(spark: Any, uri: str) -> list[tuple[str, int]]:
    sc = spark.sparkContext
    jvm = sc._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fs = path.getFileSystem(sc._jsc.hadoopConfiguration())
    statuses = fs.globStatus(path)
    if statuses is None or len(statuses) == 0:
        raise errors.InputError(f"{uri}: no such file")
    found: list[tuple[str, int]] = []
    for st in statuses:
        if st.isDirectory():
            kids = {c.getPath().toString(): int(c.getLen()) for c in fs.listStatus(st.getPath())
                    if c.isFile()}
            found.extend((n, kids[n]) for n in _dir_files(kids))
        else:
            found.append((st.getPath().toString(), int(st.getLen())))
    if len(statuses) > 1:
        found.sort(key=lambda f: natural_key(f[0]))
    return found


def break_even_hint(total_bytes: int) -> str | None:
    """The hint to print when ``--spark`` gets less data than it needs to pay off."""
    if total_bytes >= BREAK_EVEN_BYTES:
        return None
    return (f"--spark on {total_bytes / 1e6:.1f} MB: below about "
            f"{BREAK_EVEN_BYTES / 1e6:.0f} MB Spark's start-up costs more than it saves "
            "(measured on 2 cores with local[2]); the command without --spark is faster")


# ---- units of work (executor side) ----

@dataclass(frozen=True)
class FileFailure:
    """A file that could not be read: the library error's class, message and exit status."""

    file: str
    error: str
    message: str
    exit_code: int

    def exception(self) -> ReplToolError:
        cls = getattr(errors, self.error, None)
        if not (isinstance(cls, type) and issubclass(cls, ReplToolError)):
            cls = ReplToolError
        exc = cls(self.message)
        return exc


@dataclass(frozen=True)
class _Task:
    kind: str                     # "stats" | "transactions"
    verify_checksum: bool = True
    keep_going: bool = False
    top: int = 5
    rows: bool = False            # also make DataFrame rows


@dataclass(frozen=True)
class _Unit:
    index: int                    # input index of the first file
    files: tuple[str, ...]


@dataclass
class _Result:
    unit: _Unit
    failure: FileFailure | None = None
    count: int = 0                # transactions read (truncated included)
    open_end: bool = False        # the last file ends inside a group
    unknown_tables: bool = False  # stats: a rows event whose table id no Table_map named
    parts: list[FilePart] | None = None                    # stats
    transactions: list[Any] | None = None                  # transactions
    headers: list[tuple[str, int, int, int, int]] | None = None   # file, offset, type, sid, flags
    rows: list[tuple[Any, ...]] | None = None


def _failure(exc: ReplToolError, unit: _Unit) -> FileFailure:
    where = exc.pos.file if exc.pos is not None else unit.files[-1]
    return FileFailure(where, type(exc).__name__, str(exc), exc.exit_code)


def _run_unit(task: _Task, unit: _Unit) -> _Result:
    """Analyse one unit's files (read as one ordered sequence) where they are."""
    if task.kind == "stats":
        return _stats_unit(task, unit)
    return _transactions_unit(task, unit)


def _run_uri_records(task: _Task, units: dict[str, _Unit],
                     records: Iterable[tuple[str, bytes]]) -> Iterator[_Result]:
    """``binaryFiles`` records -> results: one unit per record."""
    for name, data in records:
        yield _in_private_dir(task, units[name], {name: data})


def _run_uri_unit(task: _Task, unit: _Unit,
                  records: Iterable[tuple[str, bytes]]) -> Iterator[_Result]:
    """All the files of one multi-file unit (one partition) -> its result."""
    yield _in_private_dir(task, unit, dict(records))


def _in_private_dir(task: _Task, unit: _Unit, contents: dict[str, bytes]) -> _Result:
    # The file is written at its URI taken as a relative path (POSIX folds the
    # '//'), and read with the URI as the path from that directory: positions
    # and messages then name it by its URI.  A Python worker runs one task at
    # a time, so changing its working directory is safe.
    with tempfile.TemporaryDirectory(prefix="repltool-") as root:
        for name in unit.files:
            dest = os.path.join(root, name)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as fh:
                fh.write(contents[name])
        old = os.getcwd()
        os.chdir(root)
        try:
            return _run_unit(task, unit)
        finally:
            os.chdir(old)


def _stats_unit(task: _Task, unit: _Unit) -> _Result:
    from .stats import accumulate_stats
    result = _Result(unit)
    rows: list[tuple[Any, ...]] | None = [] if task.rows else None
    sink = _row_sink(unit, rows) if rows is not None else None
    try:
        parts = accumulate_stats(unit.files, verify_checksum=task.verify_checksum,
                                 top=task.top, keep_going=task.keep_going, sink=sink)
    except ReplToolError as exc:
        result.failure = _failure(exc, unit)
        return result
    result.parts = parts
    result.count = sum(p.acc.trx for p in parts)
    result.open_end = parts[-1].open_end
    result.unknown_tables = any(p.unknown_tables for p in parts)
    result.rows = rows
    return result


def _transactions_unit(task: _Task, unit: _Unit) -> _Result:
    from .binlog import ReadOptions, read_events
    from .binlog.constants import EventType
    from .binlog.transactions import GROUPING_TYPES, group_transactions
    result = _Result(unit, transactions=[], headers=[])
    headers = result.headers
    assert headers is not None
    watched = (EventType.FORMAT_DESCRIPTION_EVENT, EventType.ROTATE_EVENT)

    def tap(events: Iterable[Any]) -> Iterator[Any]:
        for ev in events:
            if ev.type_code in watched and ev.pos.payload_offset is None:
                headers.append((ev.pos.file, ev.pos.offset, ev.type_code, ev.server_id,
                                ev.flags))
            yield ev

    opts = ReadOptions(verify_checksum=task.verify_checksum, types=GROUPING_TYPES,
                       keep_raw=False, keep_going=task.keep_going)
    rows: list[tuple[Any, ...]] | None = [] if task.rows else None
    sink = _row_sink(unit, rows) if rows is not None else None
    trxs = result.transactions
    assert trxs is not None
    try:
        for trx in group_transactions(tap(read_events(list(unit.files), opts))):
            trxs.append(trx)
            if sink is not None:
                sink(trx)
    except ReplToolError as exc:
        result.failure = _failure(exc, unit)
    result.count = len(trxs)
    result.open_end = result.failure is None and bool(trxs) and trxs[-1].truncated
    result.rows = rows
    return result


# ---- the transactions DataFrame ----

#: The transactions DataFrame: one row per transaction (event group), as
#: :func:`repltool.binlog.read_transactions` yields them.  ``writeset`` is
#: always null: row images are not decoded yet (it will hold the transaction's
#: writeset hashes once they are).
SCHEMA_DDL = (
    "seq BIGINT, file_index INT, file STRING, pos BIGINT, end_file STRING, end_pos BIGINT, "
    "gtid STRING, server_id BIGINT, thread_id BIGINT, last_committed BIGINT, "
    "sequence_number BIGINT, size BIGINT, events INT, timestamp BIGINT, end_timestamp BIGINT, "
    "kind STRING, truncated BOOLEAN, commit_id BIGINT, immediate_commit_timestamp BIGINT, "
    "original_commit_timestamp BIGINT, transaction_length BIGINT, compressed BOOLEAN, "
    "tables ARRAY<STRING>, rows_events INT, writeset ARRAY<BIGINT>")

#: The column names, in order.
COLUMNS = tuple(column.split()[0] for column in SCHEMA_DDL.split(", "))


def transaction_row(trx: Any, seq: int, file_index: int) -> tuple[Any, ...]:
    """A :class:`~repltool.binlog.Transaction` as a row of :data:`SCHEMA_DDL`."""
    return (seq, file_index, trx.start.file, trx.start.offset, trx.end.file, trx.end_offset,
            trx.gtid, trx.server_id, trx.thread_id, trx.last_committed, trx.sequence_number,
            trx.size, trx.num_events, trx.timestamp, trx.end_timestamp, trx.kind,
            trx.truncated, trx.commit_id, trx.immediate_commit_timestamp,
            trx.original_commit_timestamp, trx.transaction_length, trx.compressed,
            list(trx.tables), sum(n for _, n in trx.rows_events), None)


def _row_sink(unit: _Unit, rows: list[tuple[Any, ...]]) -> Callable[[Any], None]:
    index = {name: unit.index + i for i, name in enumerate(unit.files)}
    counter = itertools.count()

    def sink(trx: Any) -> None:
        rows.append(transaction_row(trx, next(counter), index.get(trx.start.file, -1)))
    return sink


# ---- the driver: phases, links, stitching ----

@dataclass
class _Run:
    """The stitched outcome of a distributed job, in input order."""

    results: list[_Result]
    failures: list[FileFailure] = field(default_factory=list)
    row_rdds: list[Any] = field(default_factory=list)
    offsets: dict[int, int] = field(default_factory=dict)   # unit index -> first seq


def _light(result: _Result) -> _Result:
    return replace(result, rows=None)


def _units_rdd(spark: Any, task: _Task, units: list[_Unit]) -> Any:
    sc = spark.sparkContext
    local = [u for u in units if not any(is_uri(f) for f in u.files)]
    remote = [u for u in units if any(is_uri(f) for f in u.files)]
    rdds = []
    if local:
        rdds.append(sc.parallelize(local, len(local)).map(lambda u: _run_unit(task, u)))
    singles = {u.files[0]: u for u in remote if len(u.files) == 1}
    if singles:
        data = sc.binaryFiles(",".join(singles), minPartitions=len(singles))
        rdds.append(data.mapPartitions(lambda recs: _run_uri_records(task, singles, recs)))
    for u in remote:
        if len(u.files) > 1:
            data = sc.binaryFiles(",".join(u.files)).coalesce(1)
            rdds.append(data.mapPartitions(lambda recs, u=u: _run_uri_unit(task, u, recs)))
    return rdds[0] if len(rdds) == 1 else sc.union(rdds)


def _phase(spark: Any, task: _Task, units: list[_Unit]) -> tuple[list[_Result], Any]:
    if not units:
        return [], None
    rdd = _units_rdd(spark, task, units)
    if task.rows:
        from pyspark import StorageLevel
        rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
        results = rdd.map(_light).collect()
    else:
        results = rdd.collect()
    results.sort(key=lambda r: r.unit.index)
    return results, rdd


def _linked(prev: _Result, nxt: _Result, task: _Task) -> bool:
    """Whether ``nxt`` must be read in one sequence with ``prev`` to give one read's figures."""
    if prev.failure is not None:
        return False
    return prev.open_end or (task.kind == "stats" and nxt.unknown_tables)


def run_distributed(spark: Any, names: Sequence[str], task: _Task) -> _Run:
    """Run ``task`` over the files: one unit per file, then linked units read together.

    Rounds: each round reads the units whose results differ from what one
    ordered read would give (see :func:`_linked`) merged with their neighbour;
    every round has fewer units, so it ends, usually after the first.
    """
    units = [_Unit(i, (n,)) for i, n in enumerate(names)]
    results, rdd = _phase(spark, task, units)
    sources: list[tuple[Any, set[int]]] = []        # (rdd, units of it still current)
    if rdd is not None:
        sources.append((rdd, {u.index for u in units}))
    failures: list[FileFailure] = []
    while True:
        if task.keep_going:
            failures.extend(r.failure for r in results if r.failure is not None)
            results = [r for r in results if r.failure is None]
        segments: list[list[_Result]] = []
        for r in results:
            if segments and _linked(segments[-1][-1], r, task):
                segments[-1].append(r)
            else:
                segments.append([r])
        merged = [_Unit(seg[0].unit.index, tuple(f for r in seg for f in r.unit.files))
                  for seg in segments if len(seg) > 1]
        if not merged:
            break
        again, rdd = _phase(spark, task, merged)
        redone = {r.unit.index: r for r in again}
        gone = {r.unit.index for seg in segments if len(seg) > 1 for r in seg}
        for _, current in sources:
            current -= gone
        sources.append((rdd, set(redone)))
        results = [redone[seg[0].unit.index] if len(seg) > 1 else seg[0] for seg in segments]
    run = _Run(results, failures)
    seq = 0
    for r in results:
        run.offsets[r.unit.index] = seq
        seq += r.count
    if task.rows:
        ok = {r.unit.index for r in results}
        for source, current in sources:
            keep = current & ok
            if keep:
                run.row_rdds.append(source.filter(lambda r, keep=keep: r.unit.index in keep))
    return run


def _first_failure(run: _Run) -> FileFailure | None:
    for r in run.results:
        if r.failure is not None:
            return r.failure
    return None


# ---- stats ----

def spark_stats(spark: Any, names: Sequence[str], *, verify_checksum: bool = True,
                top: int = 5, keep_going: bool = False,
                output_parquet: str | None = None) -> tuple[LogStats, list[FileFailure]]:
    """:func:`repltool.stats.compute_stats` with one Spark task per file.

    Per-file accumulators are computed on executors and merged on the driver
    in input order, which gives exactly the single-process figures.

    :raises ReplToolError: the first failing file's error (unless ``keep_going``).
    """
    from .stats import finish_stats
    task = _Task("stats", verify_checksum, keep_going, top, rows=output_parquet is not None)
    run = run_distributed(spark, names, task)
    failure = _first_failure(run)
    if failure is not None:
        raise failure.exception()
    parts: list[FilePart] = []
    offset = 0
    for r in run.results:
        assert r.parts is not None
        for p in r.parts:
            p.acc.shift(offset)
        offset += r.count
        parts.extend(r.parts)
    if output_parquet is not None:
        write_parquet(spark, run, output_parquet)
    return finish_stats(parts, top), run.failures


# ---- transactions ----

def _transactions_run(spark: Any, names: Sequence[str], *, verify_checksum: bool,
                      keep_going: bool, rows: bool) -> _Run:
    return run_distributed(spark, names, _Task("transactions", verify_checksum, keep_going,
                                               rows=rows))


def _stitched(run: _Run) -> Iterator[Any]:
    """The transactions in input order; raises the first failure where a read would."""
    for r in run.results:
        yield from r.transactions or ()
        if r.failure is not None:
            raise r.failure.exception()


def transactions_dataframe(spark: Any, names: Sequence[str], *, verify_checksum: bool = True,
                           keep_going: bool = False) -> tuple[Any, list[FileFailure]]:
    """The transactions of the files as a DataFrame of :data:`SCHEMA_DDL`.

    ``seq`` orders the rows as :func:`repltool.binlog.read_transactions`
    yields them over ``names``; ``df.orderBy("seq")`` gives that order.

    :raises ReplToolError: the first failing file's error (unless ``keep_going``).
    """
    run = _transactions_run(spark, names, verify_checksum=verify_checksum,
                            keep_going=keep_going, rows=True)
    failure = _first_failure(run)
    if failure is not None:
        raise failure.exception()
    return _dataframe(spark, run), run.failures


def _dataframe(spark: Any, run: _Run) -> Any:
    offsets = dict(run.offsets)

    def rows(result: _Result) -> Iterator[tuple[Any, ...]]:
        base = offsets[result.unit.index]
        for row in result.rows or ():
            yield (row[0] + base, *row[1:])

    sc = spark.sparkContext
    rdds = [r.flatMap(rows) for r in run.row_rdds]
    rdd = rdds[0] if len(rdds) == 1 else sc.union(rdds) if rdds else sc.emptyRDD()
    return spark.createDataFrame(rdd, SCHEMA_DDL)


def write_parquet(spark: Any, run: _Run, target: str) -> None:
    """Write the run's transactions DataFrame to ``target`` atomically (temp dir + rename)."""
    df = _dataframe(spark, run)
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
        df.write.parquet(tmp.toString())
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
        df.write.parquet(tmp)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# ---- schedule ----

def spark_schedule_report(spark: Any, names: Sequence[str], workers: Sequence[int],
                          config: SimConfig, cost_model: CostModel, *,
                          verify_checksum: bool = True, trace: bool = False,
                          crash: CrashSpec | None = None,
                          checkpoint_period: float | None = 0.3, threshold: float = 0.05,
                          output_parquet: str | None = None) -> ScheduleReport:
    """:func:`repltool.schedule.source.schedule_report` with per-file parsing on executors.

    The transactions come back per file, are stitched in input order (relay
    files whose transactions continue across a boundary having been read
    together), and the source rotations are found by replaying the files'
    FDE/Rotate headers through :class:`~repltool.schedule.source.SourceRotations`;
    the mapping, the cost model and the simulation run on the driver.
    """
    from .binlog.events import Event
    from .positions import Position
    from .schedule.source import SourceRotations, SourceStats, transactions_to_sim
    run = _transactions_run(spark, names, verify_checksum=verify_checksum, keep_going=False,
                            rows=output_parquet is not None)
    rotations = SourceRotations()
    headers = (Event(Position(f, off, None), 0, tc, sid, 0, 0, flags, None)
               for r in run.results for f, off, tc, sid, flags in r.headers or ())
    for _ in rotations.watch(headers):
        pass
    stats = SourceStats()
    sims = list(transactions_to_sim(_stitched(run), cost_model, relay=rotations,
                                    lenient=config.lenient, stats=stats))
    if output_parquet is not None:
        write_parquet(spark, run, output_parquet)
    return _report(names, sims, stats, workers, config, cost_model, trace, crash,
                   checkpoint_period, threshold)


def _report(names: Sequence[str], sims: list[Any], stats: Any, workers: Sequence[int],
            config: SimConfig, cost_model: CostModel, trace: bool, crash: CrashSpec | None,
            checkpoint_period: float | None, threshold: float) -> ScheduleReport:
    from .schedule.source import report_from_sims
    return report_from_sims(names, sims, stats, workers, config, cost_model, trace=trace,
                            crash=crash, checkpoint_period=checkpoint_period,
                            threshold=threshold)


# ---- timing helper for the CLI and the benchmark ----

@contextmanager
def timed_session(options: SparkOptions | None = None) -> Iterator[tuple[Any, float]]:
    """:func:`spark_session` plus the seconds it took to start (JVM, session, Python workers)."""
    t = time.perf_counter()
    with spark_session(options) as spark:
        yield spark, time.perf_counter() - t


__all__ = ["BREAK_EVEN_BYTES", "COLUMNS", "FileFailure", "SCHEMA_DDL", "SparkOptions",
           "SparkUnavailable", "break_even_hint", "expand_inputs", "expand_local", "is_uri",
           "natural_key", "parse_conf", "require_pyspark", "run_distributed",
           "spark_schedule_report", "spark_session", "spark_stats", "timed_session",
           "transaction_row", "transactions_dataframe", "write_parquet"]
