"""Reaching Spark: options, the session (embedded or ``spark-submit``'s), the break-even hint.

pyspark is imported only inside functions (``import repltool.distributed``
works without it).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from ..errors import ReplToolError, UsageError

#: Below this much input, ``--spark`` (embedded ``local[2]`` on a 2-core
#: machine) is slower than the single-process command: what it spends besides
#: the job (JVM, session and Python workers' start-up, the session's stop:
#: 9-11 s measured) is not paid back by the job's ~1.8x.  Measured by
#: bench/bench_spark.py; see bench/RESULTS.md.  The figure of a command not in
#: :data:`BREAK_EVEN`.
BREAK_EVEN_BYTES = 1_450_000_000

#: Per command, the input size below which ``--spark`` on ``local[2]`` (2 cores) is
#: slower end to end than the single process: the session's fixed cost F (about 9 s
#: of wall time before and after the job on an idle machine) over what each byte
#: saves, the single process's CPU per byte less the executors' (shared by 2 cores)
#: and the driver's: F / (single - executors / 2 - driver), from CPU seconds per GB
#: measured on 1 GB by bench/bench_spark_e2e.py (bench/results/spark15.md; schedule:
#: split15.md; certify after the core hashes its keys: final20.md).  ``stats`` saves
#: little per byte: the executors spend what the compiled single process spends (1.03
#: CPU s per GB, bench/results/statsspark.md), half of it on each of 2 cores, against
#: a session's ~7.7 s: 7.7 / (1.03 - 0.52) = 15 GB.  Group Replication certifies on the driver, in order, with
#: its certifier in the compiled core (the single process: 17-18 CPU s per GB); for the
#: text report its executors read key hashes and send hash arrays (18-19 CPU s per GB,
#: was 65), the driver 3.8-6.3 s per GB: 9 / (17.2 - 17.9 / 2 - 3.8..6.3) = 2-5 GB
#: (bench/results/grexec.md), about 3 GB.  ``check``, its executors reading as the single
#: process does (bench/results/checkexec.md: single 48.2, executors 55.2, driver 0.9 CPU s
#: per GB): 9 / (48.2 - 55.2 / 2 - 0.9) = 0.46 GB.
BREAK_EVEN: dict[str, int] = {
    "stats": 15_000_000_000,
    "schedule": 250_000_000,
    "certify": 1_230_000_000,
    "certify --mode group-replication": 3_000_000_000,
    "check": 460_000_000,
}

INSTALL_HINT = "--spark needs PySpark: install repltool[spark] (pip install 'repltool[spark]')"


class SparkFailed(ReplToolError):
    """Spark itself failed (the cluster, an executor, a job): one line, exit status 9."""

    exit_code = 9


class SparkUnavailable(SparkFailed):
    """Spark cannot start here: no Java, the JVM gateway failed, the master is unreachable,
    or the executors cannot run repltool (their Python lacks it or its dependencies)."""


# ---- options and session ----

@dataclass(frozen=True)
class SparkOptions:
    """How to reach Spark.

    :param master: a master URL; ``None``: ``spark.master`` of ``conf``, else the
        one ``spark-submit`` gives, else ``$MASTER``, else ``spark.master`` of
        ``spark-defaults.conf``, else the embedded ``local[*]``.
    :param conf: ``spark.*`` settings, applied after repltool's defaults
        (:func:`default_conf`) and ``spark-defaults.conf``.
    :param quiet: the JVM logs errors only (``spark.log.level=ERROR``, no
        progress bar) unless ``conf`` sets ``spark.log.level``.
    """

    master: str | None = None
    conf: tuple[tuple[str, str], ...] = ()
    app_name: str = "repltool"
    quiet: bool = False


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


def check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java"):
        return
    raise SparkUnavailable("--spark needs Java 17 (a JDK or JRE): no `java` on PATH and "
                           "JAVA_HOME is not set")


def defaults_file_conf() -> dict[str, str]:
    """The settings of ``spark-defaults.conf`` (``$SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``,
    else pyspark's own ``conf``), as ``spark-submit`` reads them."""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if not conf_dir:
        home = os.environ.get("SPARK_HOME")
        if not home:
            import pyspark
            home = os.path.dirname(os.path.abspath(pyspark.__file__))
        conf_dir = os.path.join(home, "conf")
    out: dict[str, str] = {}
    try:
        with open(os.path.join(conf_dir, "spark-defaults.conf"), encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                match = re.match(r"(\S+?)\s*(?:[=:]|\s)\s*(.*)$", line)
                if match:
                    out[match.group(1)] = match.group(2).strip()
    except OSError:
        pass
    return out


def effective_master(options: SparkOptions) -> str | None:
    """The master the session will run on (``None``: ``spark-submit``'s, decided by the JVM)."""
    conf = dict(options.conf)
    if options.master:
        return options.master
    if conf.get("spark.master"):
        return conf["spark.master"]
    if _under_spark_submit():
        return None
    return (os.environ.get("MASTER") or defaults_file_conf().get("spark.master")
            or "local[*]")


def is_local(master: str) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local-cluster[...]``: executors on this machine."""
    return master.startswith("local")


def check_master_reachable(master: str, timeout: float = 5.0) -> None:
    """Fail at once, with the socket's reason, when no ``spark://`` master answers.

    (Spark's own client retries for over a minute and then reports a lost
    gateway.)  Other masters (``yarn``, ``k8s://``) are left to Spark.
    """
    if not master.startswith("spark://"):
        return
    reasons = []
    for hostport in master[len("spark://"):].split(","):
        host, _, port = hostport.rpartition(":")
        if not host:
            host, port = hostport, "7077"
        try:
            socket.create_connection((host, int(port)), timeout=timeout).close()
            return
        except (OSError, ValueError) as exc:
            reasons.append(f"{hostport}: {getattr(exc, 'strerror', None) or exc}")
    raise SparkUnavailable(f"Spark master {master} is unreachable ({'; '.join(reasons)})")


def default_conf(master: str, quiet: bool = False) -> dict[str, str]:
    conf = {
        "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() and not quiet else "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.python.worker.reuse": "true",
        "spark.log.level": "ERROR" if quiet else "WARN",
    }
    if is_local(master):
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
#: what ``quiet`` sets (over spark-defaults.conf; the caller's ``conf`` still wins)
_QUIET_KEYS = ("spark.log.level", "spark.ui.showConsoleProgress")


def executor_python(conf: dict[str, str], local: bool) -> str:
    """The Python the executors run: ``spark.pyspark.python``, else
    ``spark.executorEnv.PYSPARK_PYTHON``, else ``$PYSPARK_PYTHON``, else this
    interpreter for a local master and PySpark's ``python3`` for a cluster.

    (PySpark reads only ``$PYSPARK_PYTHON`` when the session is created in
    process, not under ``spark-submit``; these settings are honoured here.)
    """
    for key in ("spark.pyspark.python", "spark.executorEnv.PYSPARK_PYTHON"):
        if conf.get(key):
            return conf[key]
    return os.environ.get("PYSPARK_PYTHON") or (sys.executable if local else "python3")


def warm_up(spark: Any) -> None:
    """Start the Python workers (and import repltool in them) before the first real job.

    Part of start-up, like the JVM: a worker is reused for every later task
    (``spark.python.worker.reuse``), and timing the first job without this
    would charge it ~1.5 s of interpreter start-up and imports.
    """
    sc = spark.sparkContext
    n = max(1, sc.defaultParallelism)
    sc.parallelize(range(n), n).map(_import_worker_modules).collect()


def _import_worker_modules(_: int) -> int:
    # repltool.distributed.units comes with this function: unpickling it imports
    # this module's package, whose __init__ imports the driver and the units
    settle_worker()
    return 0


#: whether this process's objects were frozen (:func:`settle_worker`)
_settled = False


def settle_worker() -> bool:
    """In a Python worker of Spark, once: import what every unit needs and move every
    object alive then (modules, classes, PySpark's own) out of the collector's reach
    (``gc.freeze``); elsewhere (the driver, a plain call) nothing.  Whether this
    process is settled.

    A reused worker (``spark.python.worker.reuse``) runs ``gc.collect()`` after every
    task; with PySpark and repltool imported that full collection walks ~40,000
    long-lived objects, 7-14 ms of CPU a task, more than all else a task costs
    PySpark (bench/results/statsspark.md).  Frozen objects are not walked; they
    are still freed by reference counting, only a cycle among them never is, and
    what is alive at a task's start lives as long as the worker anyway.  A driver
    is never frozen: a notebook's objects must stay collectable.
    """
    global _settled
    if _settled:
        return True
    from pyspark import TaskContext
    if TaskContext.get() is None:
        return False
    import gc

    from .. import stats  # noqa: F401 - the modules every task imports
    from ..binlog import corescan, fastdecode  # noqa: F401
    gc.collect()
    gc.freeze()
    _settled = True
    return True


class SparkHandle:
    """The session :func:`spark_session` yields when it starts Spark itself.

    Its ``sparkContext`` (the RDDs every command runs on) exists at once; the SQL
    :class:`~pyspark.sql.SparkSession` (``createDataFrame``, ``read``, ``conf``,
    ``sql``, ...: any other attribute) is created on first use.  Creating it costs
    the driver JVM ~2 CPU s and ~3 s of start-up (bench/results/sparkfixed.md),
    which only ``--output-parquet`` needs.

    :param settings: ``spark.*`` settings of this use that the running context
        did not start with (a reused context): read by :func:`setting`, and set
        on the SQL session when it is created.
    """

    def __init__(self, context: Any, settings: dict[str, str] | None = None) -> None:
        self.sparkContext = context
        self.settings = dict(settings or {})
        self.sql_session: Any = None

    @property
    def session(self) -> Any:
        """The SQL session (created on first use, the active one when there is one)."""
        if self.sql_session is None:
            from pyspark.errors import PySparkException
            from pyspark.sql import SparkSession
            self.sql_session = SparkSession.builder.getOrCreate()
            for key, value in self.settings.items():
                try:
                    self.sql_session.conf.set(key, value)
                except PySparkException:    # a static setting cannot change: keep going
                    pass
        return self.sql_session

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.session, name)

    def stop(self) -> None:
        """Stop the SQL session if it was created, else the context.

        PySpark's stop then shuts its accumulator server down, which waits for the
        server's connection handler to end its 1 s poll: up to 1 s of wall time at
        the end of every run, nothing to wait for.  That server is shut down in a
        daemon thread instead (a process that exits first loses nothing).
        """
        context = self.sparkContext
        server = getattr(context, "_accumulatorServer", None)
        if server is not None:
            context._accumulatorServer = None
        if self.sql_session is not None:
            self.sql_session.stop()
        else:
            context.stop()
        if server is not None:
            import threading
            threading.Thread(target=server.shutdown, name="repltool-accumulator-stop",
                             daemon=True).start()


def setting(spark: Any, key: str) -> str | None:
    """A ``spark.*`` setting of the session (``None`` when unset): without creating the
    SQL session of a :class:`SparkHandle` that has none yet."""
    if isinstance(spark, SparkHandle):
        if key in spark.settings:
            return spark.settings[key]
        if spark.sql_session is None:
            value = spark.sparkContext.getConf().get(key)
            return None if value is None else str(value)
    value = spark.conf.get(key, None)
    return None if value is None else str(value)


#: the handle of the context :func:`spark_session` started and has not stopped yet
_running: list[SparkHandle] = []


@contextmanager
def spark_session(options: SparkOptions | None = None) -> Iterator[Any]:
    """A Spark session for the duration of the block; stopped afterwards if created here.

    An active session (a notebook's, a caller's, an enclosing ``spark_session``'s) is
    reused and left running.  A session started here is a :class:`SparkHandle`: the
    SparkContext at once, the SQL ``SparkSession`` when first used.
    Before the block, the executors are checked (:func:`prepare_executors`):
    they run the right Python and import this repltool and its dependencies,
    repltool being shipped to them when they do not.  Errors of Spark (a failed
    job, a lost executor) raised in the block become one-line
    :class:`SparkFailed` errors.  Ctrl-C cancels the running jobs (PySpark's
    SIGINT handler), stops the session and re-raises ``KeyboardInterrupt``.

    :raises UsageError: when PySpark is not installed.
    :raises SparkUnavailable: when Java is missing, the JVM does not start,
        the master does not answer or the executors cannot run repltool.
    """
    options = options or SparkOptions()
    require_pyspark()
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    if active is not None:
        for key, value in options.conf:
            try:
                active.conf.set(key, value)
            except Exception:               # static settings cannot change: keep going
                pass
        with spark_errors():
            yield active
        return
    if _running:
        with spark_errors():
            yield SparkHandle(_running[-1].sparkContext,
                              {**_running[-1].settings, **dict(options.conf)})
        return
    master = effective_master(options)
    if not _under_spark_submit():
        check_java()
    if master is not None:
        check_master_reachable(master)
    # repltool's defaults, then spark-defaults.conf (spark-submit would read it after
    # the --conf settings given to it: they would win), then the caller's settings
    from_file = {} if _under_spark_submit() else defaults_file_conf()
    if options.quiet:                           # asked for on this run: over the file
        from_file = {k: v for k, v in from_file.items() if k not in _QUIET_KEYS}
    conf = {"spark.app.name": options.app_name, **default_conf(master or "", options.quiet),
            **from_file, **dict(options.conf)}
    if master is not None and "spark.master" not in dict(options.conf):
        conf["spark.master"] = master
    tmp = tempfile.mkdtemp(prefix="repltool-spark-")
    try:
        if not _under_spark_submit():
            _quiet_log4j(conf, tmp)
        spark_conf = SparkConf()
        for key, value in conf.items():
            spark_conf.set(key, value)
        try:
            with _jvm_notice_dropped(not _under_spark_submit()), _spark_home_given():
                context = SparkContext.getOrCreate(spark_conf)
        except Exception as exc:                # PySparkRuntimeError JAVA_GATEWAY_EXITED, ...
            raise SparkUnavailable(f"Spark did not start: {spark_error_line(exc)}") from exc
        from pyspark.errors.exceptions.captured import install_exception_handler
        install_exception_handler()             # as a SparkSession would: Java errors as PySpark's
        spark = SparkHandle(context)
        _running.append(spark)
        try:
            with spark_errors():
                prepare_executors(spark, tmp)
                yield spark
        finally:
            _running.remove(spark)
            spark.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def _spark_home_given() -> Iterator[None]:
    """``$SPARK_HOME`` set while the embedded gateway starts, when it is not set already.

    Without it ``bin/spark-submit`` finds it by running ``python3 find_spark_home.py``
    (the ``python3`` of ``PATH``: 0.4 s of wall time when that is a pyenv shim) to
    get what PySpark found the same way a moment before to run that script; it is
    that value.
    """
    if "SPARK_HOME" in os.environ or _under_spark_submit():
        yield
        return
    try:
        from pyspark.find_spark_home import _find_spark_home
        home = _find_spark_home()
    except (ImportError, SystemExit):   # another PySpark: its scripts find it themselves
        yield
        return
    os.environ["SPARK_HOME"] = home
    try:
        yield
    finally:
        os.environ.pop("SPARK_HOME", None)


#: What the driver JVM prints first on Java 17+: Spark's launcher always adds
#: ``--add-modules=jdk.incubator.vector`` (``org.apache.spark.launcher.JavaModuleOptions``)
#: and the JVM announces it on stderr; no log level reaches it.
JVM_NOTICE = b"WARNING: Using incubator modules: "
#: lines of the JVM's stderr searched for :data:`JVM_NOTICE`; then copied as they come
_NOTICE_LINES = 8


@contextmanager
def _jvm_notice_dropped(enabled: bool) -> Iterator[None]:
    """While the embedded driver JVM starts, fd 2 is a pipe: the JVM (and the Python
    workers it forks) keep it as their stderr, and a thread copies what they write to
    the real stderr, without :data:`JVM_NOTICE`'s line.  Nothing else is held back:
    after the first lines (or the notice) the bytes are copied as read."""
    if not enabled:
        yield
        return
    import threading
    try:
        sys.stderr.flush()
        saved = os.dup(2)               # fd 2 again afterwards
        real = os.dup(saved)            # the copying thread's (closed by it)
    except (OSError, ValueError):
        yield
        return
    read_end, write_end = os.pipe()
    done = threading.Event()

    def copy() -> None:
        pending, lines = b"", 0
        try:
            while True:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    break
                if lines >= _NOTICE_LINES:
                    os.write(real, chunk)
                    continue
                pending += chunk
                while lines < _NOTICE_LINES and b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    lines += 1
                    if line.startswith(JVM_NOTICE):
                        lines = _NOTICE_LINES
                    else:
                        os.write(real, line + b"\n")
                if lines >= _NOTICE_LINES and pending:
                    os.write(real, pending)
                    pending = b""
            if pending:
                os.write(real, pending)
        except OSError:
            pass
        finally:
            os.close(read_end)
            os.close(real)
            done.set()

    threading.Thread(target=copy, name="repltool-jvm-stderr", daemon=True).start()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    except BaseException:
        # the JVM did not start: let its last words reach the terminal before ours
        os.dup2(saved, 2)
        os.close(saved)
        done.wait(2.0)
        raise
    sys.stderr.flush()
    os.dup2(saved, 2)
    os.close(saved)


_LOG4J = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = {level}
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = {level}
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = {level}
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
"""


def _quiet_log4j(conf: dict[str, str], tmp: str) -> None:
    """The embedded driver JVM logs at ``spark.log.level`` from its first line on.

    (Spark's default profile logs its start-up at INFO/WARN before any level
    applies.)  Left alone when the caller configures log4j itself.
    """
    options = conf.get("spark.driver.extraJavaOptions", "")
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if "log4j" in options or (conf_dir and os.path.exists(os.path.join(conf_dir,
                                                                       "log4j2.properties"))):
        return
    path = os.path.join(tmp, "log4j2.properties")
    with open(path, "w", encoding="utf-8") as fh:
        # the level is the configuration's from the first line on (Spark would
        # otherwise announce its own change of level on stderr)
        fh.write(_LOG4J.format(level=conf.pop("spark.log.level", "WARN").upper()))
    conf["spark.driver.extraJavaOptions"] = \
        f"{options} -Dlog4j2.configurationFile=file:{path}".strip()


# ---- the executors' environment ----

#: What executors import besides repltool (click, rich and sqlglot are the driver's).
EXECUTOR_DEPENDENCIES = ("construct", "xxhash", "zstandard")

# Run on the executors.  Defined from source in a module Python cannot import,
# so that cloudpickle ships it by value: an executor that lacks repltool can
# still run it, and it does not import repltool (a reused worker would keep
# that copy), it only finds it.
_PROBE_SOURCE = r"""
def fingerprint(origin):
    import hashlib, os, zipfile
    digest = hashlib.sha1()
    marker = os.sep + "repltool" + os.sep + "__init__.py"
    root = origin[:-len("__init__.py")]
    archive = root[:root.rfind(".zip" + os.sep) + 4] if ".zip" + os.sep in root else None
    if archive:
        prefix = root[len(archive) + 1:].replace(os.sep, "/")
        with zipfile.ZipFile(archive) as zf:
            for name in sorted(n for n in zf.namelist()
                               if n.startswith(prefix) and n.endswith(".py")):
                digest.update(name[len(prefix):].encode() + b"\0" + zf.read(name))
        return digest.hexdigest()
    names = []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        names.extend(os.path.relpath(os.path.join(top, f), root) for f in files
                     if f.endswith(".py"))
    for name in sorted(n.replace(os.sep, "/") for n in names):
        with open(os.path.join(root, name), "rb") as fh:
            digest.update(name.encode() + b"\0" + fh.read())
    return digest.hexdigest()


def probe(_):
    import importlib, importlib.util, socket, sys
    missing = []
    for name in DEPENDENCIES:
        try:
            importlib.import_module(name)
        except Exception as exc:
            missing.append(name + " (" + type(exc).__name__ + ": " + str(exc) + ")")
    try:
        spec = importlib.util.find_spec("repltool")
    except Exception:
        spec = None
    origin = spec.origin if spec is not None else None
    digest = fingerprint(origin) if origin else None
    settled = False
    if not missing and digest == WANT:
        # the right repltool: this task is the warm-up too
        from repltool.distributed.session import settle_worker
        settled = settle_worker()
    return (socket.gethostname(), sys.executable, sys.version.split()[0], missing,
            origin, digest, settled)
"""


def _probe_functions(want: str | None = None) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "repltool_spark_probe",
                                 "DEPENDENCIES": EXECUTOR_DEPENDENCIES, "WANT": want}
    exec(compile(_PROBE_SOURCE, "<repltool executor probe>", "exec"), namespace)
    return namespace


def repltool_fingerprint() -> str:
    """A digest of this repltool's ``*.py`` files (executors must run the same code)."""
    import repltool
    return str(_probe_functions()["fingerprint"](os.path.abspath(repltool.__file__)))


def _probe(spark: Any, want: str) -> list[tuple[Any, ...]]:
    sc = spark.sparkContext
    probe = _probe_functions(want)["probe"]
    n = max(1, sc.defaultParallelism)
    try:
        return sc.parallelize(range(n), n).map(probe).collect()
    except Exception as exc:
        if not _is_spark_error(exc):
            raise
        raise SparkUnavailable(
            f"Spark executors cannot run Python {sc.pythonExec!r}: {spark_error_line(exc)}; "
            + _ENV_ADVICE) from exc


_ENV_ADVICE = ("give the executors a Python with repltool's dependencies: "
               "spark.archives=ENV.tar.gz#env with spark.pyspark.python=./env/bin/python "
               "(a venv packed with venv-pack), or spark.pyspark.python=PATH of an "
               "installed one (see the README, --spark)")


def prepare_executors(spark: Any, tmp: str | None = None) -> None:
    """Make the executors run this repltool, or fail with one line saying why they cannot.

    The executors' Python is :func:`executor_python`; for a local master
    running this interpreter it also gets this interpreter's ``sys.path``.  A probe (one task per core)
    finds what they import: when repltool is missing there or differs from
    this one (another version, another checkout), this repltool is shipped
    (``addPyFile`` of a zip, an absolute path) together with the pure-Python
    dependencies they lack; compiled ones (``xxhash``, ``zstandard``) cannot
    be shipped that way and must be in their environment.  Then the workers
    import repltool (start-up, not the first job's time): the probe's own tasks
    do, when they find this repltool (one job, not two), else :func:`warm_up`.

    :param tmp: where to write the zip (the caller removes it after the session).
    :raises SparkUnavailable: the executors still cannot import what they need.
    """
    sc = spark.sparkContext
    conf = dict(sc.getConf().getAll())
    local = is_local(sc.master)
    sc.pythonExec = executor_python(conf, local)
    if local and os.path.realpath(shutil.which(sc.pythonExec) or sc.pythonExec) == \
            os.path.realpath(sys.executable):
        paths = [os.path.abspath(p) for p in sys.path if p and os.path.isdir(p)]
        given = conf.get("spark.executorEnv.PYTHONPATH")
        sc.environment["PYTHONPATH"] = os.pathsep.join(([given] if given else []) + paths)
    want = repltool_fingerprint()
    found = _probe(spark, want)
    if not all(_ready(f, want) for f in found):
        missing = sorted({m.split(" ", 1)[0] for f in found for m in f[3]})
        _ship_package(spark, want, missing, tmp or tempfile.mkdtemp(prefix="repltool-spark-"))
        found = _probe(spark, want)
    for host, exe, version, missing, origin, fp, _ in found:
        if missing:
            raise SparkUnavailable(f"Spark executor {host} ({exe}, Python {version}) cannot "
                                   f"import {', '.join(missing)}; {_ENV_ADVICE}")
        if fp != want:
            raise SparkUnavailable(f"Spark executor {host} ({exe}) imports another repltool "
                                   f"({origin}) than this one, even with it shipped")
    if not all(f[6] for f in found):
        warm_up(spark)


def _ready(found: tuple[Any, ...], want: str) -> bool:
    return not found[3] and found[5] == want


def _ship_package(spark: Any, fingerprint: str, missing: list[str], tmp: str) -> str:
    """Zip repltool (and the missing pure-Python dependencies) and add it to the executors' path.

    The zip's absolute path is given to ``addPyFile``; the executors put it on
    their ``sys.path`` (as a relative path: see
    :func:`repltool.distributed.units.absolute_import_paths`).
    """
    import importlib.util
    import zipfile
    import repltool
    archive = os.path.join(tmp, f"repltool-{fingerprint[:12]}.zip")
    trees = [os.path.dirname(os.path.abspath(repltool.__file__))]
    for name in missing:
        spec = importlib.util.find_spec(name) if name != "repltool" else None
        if spec is None or spec.origin is None:
            continue
        if spec.submodule_search_locations:
            tree = os.path.dirname(spec.origin)
            if not any(f.endswith((".so", ".pyd")) for _, _, fs in os.walk(tree) for f in fs):
                trees.append(tree)          # compiled packages cannot load from a zip
        elif spec.origin.endswith(".py"):
            trees.append(spec.origin)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for tree in trees:
            base = os.path.dirname(tree)
            if os.path.isfile(tree):
                zf.write(tree, os.path.relpath(tree, base))
                continue
            for top, dirs, files in os.walk(tree):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                for f in files:
                    if not f.endswith((".pyc", ".so", ".pyd", ".c")):
                        path = os.path.join(top, f)
                        zf.write(path, os.path.relpath(path, base))
    spark.sparkContext.addPyFile(archive)
    return archive


# ---- Spark's errors as one line ----

def _is_spark_error(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return module.startswith(("py4j", "pyspark"))


_PY_ERROR = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit)(?::\s|$)")


def spark_error_line(exc: BaseException) -> str:
    """One line for a Spark/Py4J exception: what failed and, for a task, the executor's error.

    >>> spark_error_line(Exception("org.apache.spark.SparkException: Job aborted due to "
    ...     "stage failure: Task 0 failed\\nTraceback (most recent call last):\\n  File x\\n"
    ...     "ModuleNotFoundError: No module named 'construct'\\n\\tat org.apache.Foo"))
    "SparkException: Job aborted due to stage failure: Task 0 failed: ModuleNotFoundError: No module named 'construct'"
    """
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    head = lines[0]
    for prefix in ("An error occurred while calling ",):
        if head.startswith(prefix) and len(lines) > 1:
            head = lines[1]
    head = re.sub(r"^(?:[a-z_]\w*\.)+(?=[A-Z])", "", head)      # org.apache.x.SparkException
    head = re.sub(r"\s*(?:most recent failure:.*|Traceback \(most recent call last\):)$", "",
                  head)
    root = None
    in_traceback = False
    for line in lines[1:]:
        if line.startswith("Traceback (most recent call last)") or "Traceback (most recent" in line:
            in_traceback = True
        elif in_traceback and _PY_ERROR.match(line):
            root = line
            in_traceback = False
    if root is None:
        for line in lines[1:]:
            if line.startswith("Caused by: "):
                root = re.sub(r"^(?:[a-z_]\w*\.)+(?=[A-Z])", "", line[len("Caused by: "):])
    out = head if root is None or root in head else f"{head.rstrip(':')}: {root}"
    out = " ".join(out.split())
    return out if len(out) <= 400 else out[:397] + "..."


@contextmanager
def spark_errors() -> Iterator[None]:
    """Turn Spark's and Py4J's exceptions raised in the block into :class:`SparkFailed`."""
    try:
        yield
    except ReplToolError:
        raise
    except Exception as exc:
        if not _is_spark_error(exc):
            raise
        raise SparkFailed(f"Spark failed: {spark_error_line(exc)}") from exc


def break_even_hint(total_bytes: int, command: str | None = None) -> str | None:
    """The hint to print when ``--spark`` gets less data than it needs to pay off.

    :param command: the CLI command (``stats``, ``certify`` ...): its own figure in
        :data:`BREAK_EVEN`; others (and ``None``) use :data:`BREAK_EVEN_BYTES`.
    """
    size = f"--spark on {total_bytes / 1e6:.1f} MB"
    if command is not None:
        size = f"{size} ({command})"
    threshold = BREAK_EVEN.get(command, BREAK_EVEN_BYTES) if command else BREAK_EVEN_BYTES
    if total_bytes >= threshold:
        return None
    return (f"{size}: below about {threshold / 1e6:.0f} MB Spark's start-up costs more "
            "than it saves (measured on 2 cores with local[2]); the command without "
            "--spark is faster")


@contextmanager
def timed_session(options: SparkOptions | None = None) -> Iterator[tuple[Any, float]]:
    """:func:`spark_session` plus the seconds it took to start (JVM, session, Python workers)."""
    t = time.perf_counter()
    with spark_session(options) as spark:
        yield spark, time.perf_counter() - t
