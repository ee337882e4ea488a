"""Real processes: SIGTERM/SIGKILL during a multi-file output, /dev/full, broken pipes,
pipes and FIFOs as inputs.  No wall-clock asserts: timeouts only guard against hangs."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repltool.outputs import STAGING_PREFIX
from repltool.synth import write_sample

REPLTOOL = [sys.executable, "-m", "repltool"]
HANG_GUARD = 600


def run(*args: object, **kw) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run([*REPLTOOL, *map(str, args)], capture_output=True, text=True,
                          timeout=HANG_GUARD, **kw)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Four 8 MiB binlogs: certify --output rewrites them one after the other."""
    d = tmp_path_factory.mktemp("big")
    done = run("synth", "-o", d, "--size", "32M", "--max-binlog-size", "8M",
               "--no-ground-truth")
    assert done.returncode == 0, done.stderr
    files = sorted(d.glob("binlog.0*"))
    assert len(files) >= 4
    return files


def _interruptible() -> None:
    """In the child before exec: SIGINT as a terminal's foreground job has it.  A suite
    started in the background by a shell without job control runs with SIGINT ignored,
    which its children inherit (POSIX), and Python then installs no KeyboardInterrupt
    handler: the child would rightly ignore the test's SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _staging(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)] \
        if out.is_dir() else []


def _stop_mid_run(proc: subprocess.Popen[str], out: Path, finals: list[str]) -> None:
    """Wait until the staging directory exists, then freeze the process (SIGSTOP) and
    check that it is really mid-run: staging there, no final file renamed yet."""
    while not _staging(out):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGSTOP)
    assert _staging(out), "the run finished before it could be stopped"
    assert not any((out / n).exists() for n in finals)


@pytest.mark.parametrize("signum, status, message", [
    (signal.SIGTERM, 143, "repltool: terminated (SIGTERM)"),
    (signal.SIGINT, 130, "repltool: interrupted")], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_certify_output_leaves_nothing(big: list[Path], tmp_path: Path,
                                                       signum: int, status: int,
                                                       message: str) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen([*REPLTOOL, "certify", "--pk-only", "--format", "jsonl",
                             "--output", str(out), *map(str, big)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_interruptible)
    _stop_mid_run(proc, out, [p.name for p in big])
    os.kill(proc.pid, signum)
    os.kill(proc.pid, signal.SIGCONT)
    _, err = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == status
    assert err.strip().splitlines()[-1] == message
    assert "Traceback" not in err
    assert not out.exists()                 # created by this run, empty: removed


def test_sigterm_during_synth_keeps_the_earlier_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_sample(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    proc = subprocess.Popen([*REPLTOOL, "synth", "-o", str(out), "--force", "--size", "2G",
                             "--no-ground-truth"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not _staging(out):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 143 and one_line(err) == "repltool: terminated (SIGTERM)"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_sigkill_leaves_a_staging_directory_the_next_run_removes(big: list[Path],
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen([*REPLTOOL, "certify", "--pk-only", "--format", "jsonl",
                             "--output", str(out), *map(str, big)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _stop_mid_run(proc, out, [p.name for p in big])  # type: ignore[arg-type]
    proc.kill()
    proc.wait(timeout=HANG_GUARD)
    left = _staging(out)
    assert len(left) == 1
    done = run("certify", "--pk-only", "--format", "jsonl", "--output", out, big[0])
    assert done.returncode == 0, done.stderr
    assert f"repltool: warning: removed {left[0]}: the staging directory of an interrupted " \
           "run" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == [big[0].name]


def test_disk_full_on_stdout(tmp_path: Path) -> None:
    log = write_sample(tmp_path / "d", transactions=20)[0]
    for command in (("stats",), ("dump",), ("dump", "--format", "jsonl"), ("check",),
                    ("schedule", "--format", "json")):
        with open("/dev/full", "w") as full:
            done = subprocess.run([*REPLTOOL, *command, str(log)], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=HANG_GUARD)
        assert done.returncode == 8, (command, done.stderr)
        assert one_line(done.stderr) == \
            "repltool: error: standard output: No space left on device"


def test_a_device_is_never_an_output(tmp_path: Path) -> None:
    """/dev/full or /dev/null as an output: an atomic write would rename a regular file over
    the device node; refused, also with --force."""
    log = write_sample(tmp_path / "d", transactions=20)[0]
    for device in ("/dev/full", "/dev/null"):
        for force in ((), ("--force",)):
            done = run("check", "--junit", device, *force, log)
            assert done.returncode == 2
            assert "is not a regular file" in one_line(done.stderr)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_broken_pipe_is_a_quiet_exit_0(tmp_path: Path) -> None:
    log = write_sample(tmp_path / "d", transactions=200)[0]
    script = f"{' '.join(REPLTOOL)} dump {log} | head -1; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          timeout=HANG_GUARD)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.count("\n") == 1


def test_pipes_and_fifos_are_refused_at_once(tmp_path: Path) -> None:
    log = write_sample(tmp_path / "d", transactions=20)[0]
    script = f"{' '.join(REPLTOOL)} dump <(cat {log})"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          timeout=HANG_GUARD)
    assert done.returncode == 2
    assert "is a pipe or FIFO, not a regular file" in one_line(done.stderr)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)                                    # no writer: open() would block
    for command in (("dump",), ("stats",), ("check",), ("schedule",), ("certify",),
                    ("explain",)):
        done = run(*command, fifo)
        assert done.returncode == 2, (command, done.stderr)
        assert "is a pipe or FIFO" in one_line(done.stderr)
    done = run("certify", "--schema", fifo, log)
    assert done.returncode == 2 and "schema file" in one_line(done.stderr)


def test_an_output_directory_the_user_cannot_write(tmp_path: Path) -> None:
    """A directory the user may not write, for real: the command runs as ``nobody``
    (uid/gid 65534, no groups, through ``setpriv``) when the tests run as root, whose
    permissions nothing stops; as itself otherwise.  Each output option gives exit 8
    and one line naming the option and the directory; nothing is created."""
    import shutil
    import tempfile
    as_nobody: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to drop root's privileges"
        as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    # pytest's tmp_path is private to root: a world-readable place for the inputs
    base = Path(tempfile.mkdtemp(prefix="repltool-ro-"))
    try:
        base.chmod(0o755)
        logs = write_sample(base / "in", transactions=40)
        for p in [base / "in", *logs]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        locked = base / "locked"
        locked.mkdir(mode=0o755)        # root's: nobody may not write it
        if not as_nobody:
            locked.chmod(0o555)
        before = sorted(os.listdir(locked))
        for argv, option in (
                (["check", "--junit", locked / "r.xml", *logs], "--junit"),
                (["certify", "--pk-only", "--output", locked / "out", *logs], "--output"),
                (["sample", "-o", locked / "s"], "-o")):
            r = subprocess.run([*as_nobody, *REPLTOOL, *map(str, argv)], capture_output=True,
                               text=True, timeout=HANG_GUARD, cwd=base)
            assert r.returncode == 8, (argv, r.returncode, r.stderr)
            line = one_line(r.stderr)
            assert line.startswith(f"repltool: error: {option} ") and str(locked) in line, line
            assert "Permission denied" in line, line
            assert sorted(os.listdir(locked)) == before
    finally:
        shutil.rmtree(base, ignore_errors=True)
