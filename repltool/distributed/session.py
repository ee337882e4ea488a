"""Reaching Spark: options, the session (embedded or ``spark-submit``'s), the break-even hint.

pyspark is imported only inside functions (``import repltool.distributed``
works without it).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from ..errors import UsageError

#: Below this much input, ``--spark`` (embedded ``local[2]`` on a 2-core
#: machine) is slower than the single-process command: what it spends besides
#: the job (JVM, session and Python workers' start-up, the session's stop:
#: 9-11 s measured) is not paid back by the job's ~1.8x.  Measured by
#: bench/bench_spark.py; see bench/RESULTS.md.
BREAK_EVEN_BYTES = 1_450_000_000

INSTALL_HINT = "--spark needs PySpark: install repltool[spark] (pip install 'repltool[spark]')"


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
    import repltool.distributed.units  # noqa: F401
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
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmp = tempfile.mkdtemp(prefix="repltool-spark-")
    archive = shutil.make_archive(os.path.join(tmp, "repltool"), "zip",
                                  os.path.dirname(pkg), os.path.basename(pkg))
    spark.sparkContext.addPyFile(archive)



def break_even_hint(total_bytes: int) -> str | None:
    """The hint to print when ``--spark`` gets less data than it needs to pay off."""
    if total_bytes >= BREAK_EVEN_BYTES:
        return None
    return (f"--spark on {total_bytes / 1e6:.1f} MB: below about "
            f"{BREAK_EVEN_BYTES / 1e6:.0f} MB Spark's start-up costs more than it saves "
            "(measured on 2 cores with local[2]); the command without --spark is faster")


@contextmanager
def timed_session(options: SparkOptions | None = None) -> Iterator[tuple[Any, float]]:
    """:func:`spark_session` plus the seconds it took to start (JVM, session, Python workers)."""
    t = time.perf_counter()
    with spark_session(options) as spark:
        yield spark, time.perf_counter() - t
