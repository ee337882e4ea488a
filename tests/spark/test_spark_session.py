"""The session ``--spark`` starts (bench/results/sparkfixed.md): what it sets, what wins over it,
and the start-up steps it no longer pays.

Each case starts its own local[2] driver JVM in a fresh Python process (the test
session's shared one could not show what a fresh start sets), with its own
``SPARK_CONF_DIR``.  A session started by ``spark_session`` is a ``SparkHandle``:
the SparkContext at once, the SQL SparkSession only when first used, so an
RDD-only command (``stats``) never creates one; the executors' probe also imports
repltool in the workers (no second warm-up job); the accumulator server is shut
down in the background; ``$SPARK_HOME`` is given to spark-submit's scripts while the
gateway starts.  repltool's defaults (no Spark UI, a C1-only JIT and the
serial collector for the embedded driver JVM) lose to ``spark-defaults.conf``, and
both lose to the caller's settings (``--spark-conf``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repltool.stats import compute_stats, stats_to_dict

pytestmark = pytest.mark.spark

TREE = Path(__file__).resolve().parents[2]

DRIVER = r"""
import contextlib, io, json, os, sys, threading
import pyspark
from pyspark.sql import SparkSession
from repltool.cli import run
from repltool.distributed import SPLIT_CONF, SparkOptions, session
from repltool.distributed.session import SparkHandle, setting, spark_session

spec = json.loads(sys.argv[1])
warm_ups = []
real_warm_up = session.warm_up
session.warm_up = lambda spark: (warm_ups.append(1), real_warm_up(spark))[1]
out = {}
with spark_session(SparkOptions(master="local[2]", conf=tuple(map(tuple, spec["conf"])))) as s:
    sc = s.sparkContext
    args = sc._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    out["handle"] = isinstance(s, SparkHandle)
    out["jvm_args"] = [str(a) for a in args]
    out["ui"] = sc.uiWebUrl
    out["jvm_spark_home"] = sc._jvm.java.lang.System.getenv("SPARK_HOME")
    out["warm_ups"] = len(warm_ups)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        out["code"] = run(["stats", "--format", "json", "--spark", *spec["files"]])
    out["stats"] = json.loads(text.getvalue())
    out["split_conf"] = setting(s, SPLIT_CONF)
    with spark_session(SparkOptions(conf=((SPLIT_CONF, "64M"),))) as inner:
        out["inner_split_conf"] = setting(inner, SPLIT_CONF)
        out["inner_context_same"] = inner.sparkContext is sc
    out["outer_split_conf_after"] = setting(s, SPLIT_CONF)
    out["sql_before"] = SparkSession.getActiveSession() is not None or \
        sc._jvm.org.apache.spark.sql.SparkSession.getDefaultSession().isDefined()
    # the SQL session, made on first use, has the caller's settings
    out["rows"] = s.createDataFrame([(1,), (2,)], "a int").count()
    out["sql_after"] = SparkSession.getActiveSession() is not None
    out["sql_partitions"] = s.conf.get("spark.sql.shuffle.partitions")
    server = sc._accumulatorServer
stoppers = [t for t in threading.enumerate() if t.name == "repltool-accumulator-stop"]
for t in stoppers:
    t.join(10)
out["accumulator_stopped"] = bool(stoppers) and server.server_shutdown and \
    not any(t.is_alive() for t in stoppers)
out["stopped"] = sc._jsc is None
out["spark_home_after"] = os.environ.get("SPARK_HOME")
out["pyspark_home"] = os.path.dirname(os.path.abspath(pyspark.__file__))
print(json.dumps(out))
"""


def fresh_driver(tmp_path: Path, files: list[Path], conf: list[tuple[str, str]],
                 defaults_file: str | None) -> dict:
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    if defaults_file is not None:
        (conf_dir / "spark-defaults.conf").write_text(defaults_file)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.update(PYTHONPATH=str(TREE), SPARK_CONF_DIR=str(conf_dir), SPARK_LOCAL_IP="127.0.0.1")
    env.pop("MASTER", None)
    spec = {"conf": conf, "files": [str(f) for f in files]}
    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(spec)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def single_stats(files: list[Path]) -> dict:
    return json.loads(json.dumps(stats_to_dict(compute_stats(files)), default=str))


def test_fresh_session_has_no_sql_session_until_used_and_equals_single_process(
        rotated: list[Path], tmp_path: Path) -> None:
    files = rotated[:6]
    got = fresh_driver(tmp_path, files, [("spark.sql.shuffle.partitions", "3")], None)
    assert got["handle"] is True
    assert got["code"] == 0 and got["stats"] == single_stats(files)
    # stats ran on the context alone: no SQL session was created for it
    assert got["sql_before"] is False
    assert got["rows"] == 2 and got["sql_after"] is True
    assert got["sql_partitions"] == "3"                 # the caller's over repltool's 8
    # the probe imported repltool in the workers: no separate warm-up job
    assert got["warm_ups"] == 0
    # repltool's defaults for the embedded JVM
    assert "-XX:TieredStopAtLevel=1" in got["jvm_args"]
    assert "-XX:+UseSerialGC" in got["jvm_args"]
    assert got["ui"] is None
    # a nested use gets the running context with its own settings, not the outer's
    assert got["split_conf"] is None and got["outer_split_conf_after"] is None
    assert got["inner_split_conf"] == "64M" and got["inner_context_same"] is True
    assert got["accumulator_stopped"] is True and got["stopped"] is True
    # $SPARK_HOME, unset here, was given to spark-submit's scripts (they would run
    # python3 to find it) and unset again
    assert os.path.realpath(got["jvm_spark_home"]) == os.path.realpath(got["pyspark_home"])
    assert got["spark_home_after"] is None


def test_spark_defaults_file_wins_over_repltool_defaults(rotated: list[Path],
                                                        tmp_path: Path) -> None:
    got = fresh_driver(tmp_path, rotated[:2], [],
                       "spark.ui.enabled true\nspark.ui.port 0\n"
                       "spark.driver.extraJavaOptions -XX:+UseParallelGC -XX:ParallelGCThreads=1\n")
    assert got["ui"] is not None
    assert "-XX:+UseParallelGC" in got["jvm_args"]
    assert "-XX:TieredStopAtLevel=1" not in got["jvm_args"]
    assert "-XX:+UseSerialGC" not in got["jvm_args"]
    assert got["code"] == 0 and got["stats"] == single_stats(rotated[:2])


def test_callers_conf_wins_over_defaults_file_and_repltool(rotated: list[Path],
                                                          tmp_path: Path) -> None:
    got = fresh_driver(tmp_path, rotated[:2],
                       [("spark.ui.enabled", "false"),
                        ("spark.driver.extraJavaOptions", "-Xss2m")],
                       "spark.ui.enabled true\nspark.ui.port 0\n"
                       "spark.driver.extraJavaOptions -XX:+UseParallelGC\n")
    assert got["ui"] is None
    assert "-Xss2m" in got["jvm_args"]
    assert "-XX:+UseParallelGC" not in got["jvm_args"]
    assert "-XX:TieredStopAtLevel=1" not in got["jvm_args"]
    assert got["code"] == 0 and got["stats"] == single_stats(rotated[:2])
