"""``--spark`` on a real standalone cluster, started from elsewhere with a non-activated venv (issue 15).

A standalone master and two workers (1 core, 512 MB each), bound to 127.0.0.1,
are started from pyspark's own ``bin/spark-class`` with a clean environment
(no PYTHONPATH, ``PATH=/usr/bin:/bin``: the workers know nothing of this venv)
and stopped by the fixture.  The driver is a separate Python process run with
the venv's interpreter by its path (the venv not activated) in another
working directory; it gives the inputs as paths relative to that directory
and as ``file://`` URIs, and the master through ``spark.master`` of the
configuration.  The executors' Python (``spark.pyspark.python``) is a wrapper
of the venv's interpreter whose ``sys.path`` begins with a *stale* repltool:
the driver must notice the difference and ship its own repltool.  Every
command's output must equal the single-process run's.

The environment tests run the CLI as a fresh process: an executor Python
without repltool's compiled dependencies fails at start-up with one line and
exit status 8, and an unreachable master fails at once with the socket's
reason.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repltool.distributed import SparkOptions
from repltool.distributed.session import (SparkUnavailable, check_master_reachable,
                                          effective_master, executor_python)

pytestmark = pytest.mark.spark

TREE = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(__import__("pyspark").__file__).parent


def clean_env(**extra: str) -> dict[str, str]:
    env = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin",
           "SPARK_LOCAL_IP": "127.0.0.1", "LANG": "C.UTF-8"}
    if os.environ.get("JAVA_HOME"):
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """``spark://127.0.0.1:PORT`` of a master with two registered workers; stopped afterwards."""
    root = tmp_path_factory.mktemp("cluster")
    port = free_port()
    env = clean_env(SPARK_HOME=str(SPARK_HOME), SPARK_DAEMON_MEMORY="256m")
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    procs = []

    def start(name: str, *args: str) -> Path:
        log = root / f"{name}.log"
        with open(log, "wb") as fh:
            procs.append(subprocess.Popen([spark_class, *args], env=env, stdout=fh,
                                          stderr=subprocess.STDOUT, cwd=root,
                                          start_new_session=True))
        return log

    url = f"spark://127.0.0.1:{port}"
    try:
        master_log = start("master", "org.apache.spark.deploy.master.Master", "--host",
                           "127.0.0.1", "--port", str(port), "--webui-port", "0")
        for i in (1, 2):
            (root / f"work{i}").mkdir()
            start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                  "--cores", "1", "--memory", "512m", "--webui-port", "0",
                  "--work-dir", str(root / f"work{i}"), url)
        deadline = time.monotonic() + 240
        while master_log.read_text(errors="replace").count("Registering worker") < 2:
            assert all(p.poll() is None for p in procs), \
                "a Spark daemon exited: " + master_log.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "the workers did not register"
            time.sleep(0.5)
        yield url
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


DRIVER = r"""
import contextlib, io, json, os, sys
from repltool.cli import run
from repltool.distributed import SparkOptions, spark_session
spec = json.loads(sys.argv[1])
results = []
with spark_session(SparkOptions(conf=tuple(map(tuple, spec["conf"])))) as session:
    shipped = [os.path.basename(p) for p in session.sparkContext._python_includes]
    for args in spec["commands"]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(args)
        results.append({"code": code, "out": out.getvalue(), "err": err.getvalue()})
print(json.dumps({"master": session.sparkContext.master, "shipped": shipped,
                  "cwd": os.getcwd(), "results": results}))
"""


def commands(inputs: list[str]) -> list[list[str]]:
    return [["stats", "--format", "json", *inputs],
            ["schedule", "--format", "json", "--workers", "1,2,4", *inputs],
            ["certify", "--format", "jsonl", "--mode", "writeset", *inputs],
            ["certify", "--format", "jsonl", "--mode", "group-replication", *inputs],
            ["explain", "--format", "json", "--mode", "writeset-session", *inputs],
            ["check", "--format", "json", "--no-config", *inputs]]


def stale_python(root: Path) -> Path:
    """The venv's Python, with an old repltool first on its path (as a stale install would be)."""
    stale = root / "stale"
    (stale / "repltool").mkdir(parents=True)
    (stale / "repltool" / "__init__.py").write_text('__version__ = "0.0.0-stale"\n')
    wrapper = root / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={stale} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def test_every_command_on_a_standalone_cluster_equals_single_process(
        cluster: str, capsys: pytest.CaptureFixture[str], rotated: list[Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from repltool.cli import run
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    files = rotated[:6]
    relative = [os.path.relpath(f, elsewhere) for f in files]
    uris = [f"file://{f}" for f in files]
    cmds = commands(relative) + [c[:-len(files)] + uris for c in commands(relative)[::2]]
    conf = [["spark.master", cluster], ["spark.executor.memory", "512m"],
            ["spark.driver.memory", "512m"], ["spark.executor.cores", "1"],
            ["spark.pyspark.python", str(stale_python(tmp_path))]]
    proc = subprocess.run([sys.executable, "-c", DRIVER,
                           json.dumps({"conf": conf, "commands": [[*c[:1], "--spark", *c[1:]]
                                                                  for c in cmds]})],
                          cwd=elsewhere, env=clean_env(PYTHONPATH=str(TREE)),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["master"] == cluster and got["cwd"] == str(elsewhere)
    assert any(n.startswith("repltool-") and n.endswith(".zip") for n in got["shipped"])
    assert len(got["results"]) == len(cmds) == 9
    monkeypatch.chdir(elsewhere)
    for args, result in zip(cmds, got["results"]):
        uri = args[-1].startswith("file://")
        # single process: the same files by their path (relative, or absolute for the URIs)
        code = run([*args[:-len(files)], *(map(str, files) if uri else relative)])
        out, _ = capsys.readouterr()
        if uri:
            for f in files:
                out = out.replace(str(f), "file:" + str(f))
        assert result["code"] == code, (args, result["err"][-2000:])
        assert result["out"] == out, args
        assert len(out) > 200


def test_executor_python_without_dependencies_is_one_line(rotated: list[Path],
                                                           tmp_path: Path) -> None:
    """/usr/bin/python3 lacks xxhash and zstandard: construct is shipped, those cannot be."""
    proc = subprocess.run([sys.executable, "-m", "repltool", "stats", "--spark",
                           "--spark-quiet", "--spark-master", "local[1]", "--spark-conf",
                           "spark.pyspark.python=/usr/bin/python3", str(rotated[0])],
                          cwd=tmp_path, env=clean_env(PYTHONPATH=str(TREE)),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 9, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("repltool: error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "cannot import xxhash" in errors[0] and "zstandard" in errors[0]
    assert "construct" not in errors[0]               # pure Python: shipped with repltool
    assert "spark.archives" in errors[0]
    assert proc.stdout == ""


def test_quiet_run_prints_nothing_from_the_jvm(rotated: list[Path], tmp_path: Path) -> None:
    """--spark-quiet: no Spark log line and not the JVM's incubator-module notice (which
    Spark's launcher causes on Java 17+ and no log level reaches); only repltool's hint."""
    from repltool.distributed.session import JVM_NOTICE
    proc = subprocess.run([sys.executable, "-m", "repltool", "stats", "--spark",
                           "--spark-quiet", "--spark-master", "local[1]", str(rotated[0])],
                          cwd=tmp_path, env=clean_env(PYTHONPATH=str(TREE)),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("repltool: hint: --spark on "), lines
    assert JVM_NOTICE.decode() not in proc.stderr
    assert "Files" in proc.stdout


def test_jvm_that_cannot_start_says_why_before_the_one_line(rotated: list[Path],
                                                            tmp_path: Path) -> None:
    """The JVM's stderr goes through the notice filter: its own reason still shows, first."""
    proc = subprocess.run([sys.executable, "-m", "repltool", "stats", "--spark",
                           "--spark-quiet", "--spark-conf", "spark.driver.memory=3x",
                           str(rotated[0])],
                          cwd=tmp_path, env=clean_env(PYTHONPATH=str(TREE)),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 9
    lines = proc.stderr.splitlines()
    assert lines[-1].startswith("repltool: error: Spark did not start: "), lines
    assert any("Invalid maximum heap size: -Xmx3x" in line for line in lines[:-1]), lines
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_unreachable_master_fails_at_once_with_the_reason(rotated: list[Path],
                                                          tmp_path: Path) -> None:
    port = free_port()                                  # nothing listens there
    proc = subprocess.run([sys.executable, "-m", "repltool", "stats", "--spark",
                           "--spark-master", f"spark://127.0.0.1:{port}", str(rotated[0])],
                          cwd=tmp_path, env=clean_env(PYTHONPATH=str(TREE)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9
    assert proc.stderr.splitlines()[-1] == (
        f"repltool: error: Spark master spark://127.0.0.1:{port} is unreachable "
        f"(127.0.0.1:{port}: Connection refused)")
    with pytest.raises(SparkUnavailable, match="unreachable"):
        check_master_reachable(f"spark://127.0.0.1:{port}")


def test_master_comes_from_options_conf_environment_or_defaults_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.delenv("MASTER", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert effective_master(SparkOptions()) == "local[*]"
    (tmp_path / "spark-defaults.conf").write_text(
        "# comment\nspark.master   spark://file:7077\nspark.executor.memory 1g\n")
    assert effective_master(SparkOptions()) == "spark://file:7077"
    monkeypatch.setenv("MASTER", "spark://env:7077")
    assert effective_master(SparkOptions()) == "spark://env:7077"
    conf = (("spark.master", "spark://conf:7077"),)
    assert effective_master(SparkOptions(conf=conf)) == "spark://conf:7077"
    assert effective_master(SparkOptions(master="local[2]", conf=conf)) == "local[2]"


def test_executor_python_settings_are_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert executor_python({}, local=True) == sys.executable
    assert executor_python({}, local=False) == "python3"
    assert executor_python({"spark.executorEnv.PYSPARK_PYTHON": "/e/py"}, local=True) == "/e/py"
    assert executor_python({"spark.pyspark.python": "./env/bin/python",
                            "spark.executorEnv.PYSPARK_PYTHON": "/e/py"},
                           local=False) == "./env/bin/python"


def test_spark_submit_entry_point_keeps_stdout_clean(rotated: list[Path], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """spark-submit merges the application's stderr into stdout: the entry point undoes it."""
    from repltool.cli import run
    from repltool.distributed import submit
    entry = subprocess.run([sys.executable, "-m", "repltool.distributed.submit", "--path"],
                           env=clean_env(PYTHONPATH=str(TREE)), capture_output=True, text=True,
                           check=True).stdout.strip()
    assert entry == submit.__file__
    files = [str(f) for f in rotated[:3]]
    proc = subprocess.run([str(SPARK_HOME / "bin" / "spark-submit"), "--master", "local[1]",
                           "--driver-memory", "512m", entry, "stats", "--format", "json",
                           *files],
                          cwd=tmp_path, env=clean_env(SPARK_HOME=str(SPARK_HOME),
                                                      PYSPARK_PYTHON=sys.executable),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert run(["stats", "--format", "json", *files]) == 0
    assert proc.stdout == capsys.readouterr().out          # JSON only: no hint, no log lines
    assert "repltool: hint: --spark on" in proc.stderr


def packed_env(root: Path, *, with_repltool: bool) -> Path:
    """What ``venv-pack`` makes, as a tar of a venv: a venv of this base Python holding
    repltool's executor dependencies (copied from this venv) and, ``with_repltool``, this
    tree's repltool (its compiled core included); the tar's top level is the venv's."""
    import importlib.util
    import shutil
    import tarfile
    from repltool.distributed.session import EXECUTOR_DEPENDENCIES
    env = root / ("env-full" if with_repltool else "env-deps")
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv",
                    "--without-pip", str(env)], check=True, env=clean_env())
    site = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    assert site.is_dir()
    skip = shutil.ignore_patterns("__pycache__")
    for name in EXECUTOR_DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        if spec.submodule_search_locations:
            shutil.copytree(os.path.dirname(spec.origin), site / name, ignore=skip)
        else:
            shutil.copy2(spec.origin, site)
    if with_repltool:
        shutil.copytree(TREE / "repltool", site / "repltool", ignore=skip)
    packed = root / f"{env.name}.tar.gz"
    with tarfile.open(packed, "w:gz") as tf:
        for entry in sorted(env.iterdir()):
            tf.add(entry, arcname=entry.name)
    return packed


def pyfiles_zip(root: Path) -> Path:
    """This tree's repltool (its ``.py`` files) as a zip for ``--py-files``."""
    import zipfile
    path = root / "pyfiles-repltool.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted((TREE / "repltool").rglob("*.py")):
            zf.write(f, f.relative_to(TREE).as_posix())
    return path


@pytest.mark.parametrize("how", ["archives", "py-files"])
def test_executors_get_their_environment_from_a_packed_venv(
        cluster: str, capsys: pytest.CaptureFixture[str], rotated: list[Path], tmp_path: Path,
        how: str) -> None:
    """``spark.archives=env.tar.gz#env`` with ``spark.pyspark.python=./env/bin/python``: the
    executors unpack a packed venv and import repltool and its dependencies from it, so the
    driver ships nothing; with ``--py-files`` (``spark.submit.pyFiles``) repltool comes from
    the given zip and its dependencies from the packed venv.  Outputs equal single-process."""
    from repltool.cli import run
    packed = packed_env(tmp_path, with_repltool=how == "archives")
    conf = [["spark.master", cluster], ["spark.executor.memory", "512m"],
            ["spark.driver.memory", "512m"], ["spark.executor.cores", "1"],
            ["spark.archives", f"{packed}#env"], ["spark.pyspark.python", "./env/bin/python"]]
    if how == "py-files":
        conf.append(["spark.submit.pyFiles", str(pyfiles_zip(tmp_path))])
    files = [str(f) for f in rotated[:4]]
    cmds = [["stats", "--format", "json", *files],
            ["certify", "--format", "jsonl", "--mode", "writeset", *files],
            ["check", "--format", "json", "--no-config", *files]]
    proc = subprocess.run([sys.executable, "-c", DRIVER,
                           json.dumps({"conf": conf, "commands": [[*c[:1], "--spark", *c[1:]]
                                                                  for c in cmds]})],
                          cwd=tmp_path, env=clean_env(PYTHONPATH=str(TREE)),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["master"] == cluster
    # nothing shipped by the driver: the executors' own environment had this repltool
    assert not any(n.startswith("repltool-") for n in got["shipped"]), got["shipped"]
    assert got["shipped"] == ([] if how == "archives" else ["pyfiles-repltool.zip"])
    for args, result in zip(cmds, got["results"]):
        code = run(args)
        out, _ = capsys.readouterr()
        assert (result["code"], result["out"]) == (code, out), result["err"][-2000:]
        assert len(out) > 200
