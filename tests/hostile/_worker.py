"""The sandbox worker: runs hostile-input jobs under an address-space limit.

Started by :class:`._sandbox.Sandbox` as ``python _worker.py LIMIT_MIB``.  It
sets ``RLIMIT_AS`` on itself first (the pytest process is never limited),
then reads one JSON job per line on stdin and answers one JSON line on stdout.
A job that blows the limit raises MemoryError inside the library (reported as a
contract failure) or kills the worker (reported by the parent); a job that runs
too long is interrupted by the interval timer in :mod:`._checks` (a Hang).
"""

from __future__ import annotations

import io
import json
import os
import resource
import sys
import time
import traceback
from contextlib import redirect_stderr, redirect_stdout


def _limit(mib: int) -> None:
    limit = mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _reset_peak() -> None:
    """Start this job's peak-RSS count afresh (``5`` > clear_refs resets VmHWM, Linux 4.0+).

    ``ru_maxrss`` is no use per job: it is the worker's lifetime peak, and it even
    survives exec, so it starts at the size of the pytest process that forked it."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def _peak() -> int | None:
    """VmHWM of this process in KiB (its peak RSS since :func:`_reset_peak`)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def job_read(path: str, label: str | None = None, clean_path: str | None = None,
             damage_at: int = 4, extras: bool = True) -> dict:
    """Every contract check on one file (hypothesis / atheris inputs)."""
    from ._checks import full_contract, read
    clean = read(clean_path, "clean").events if clean_path else None
    failures, _ = full_contract(path, label or path, clean=clean, damage_at=damage_at,
                                extras=extras, verify_modes=(True, False))
    return {"failures": failures}


def job_truncation(path: str, tmpdir: str, mode: str) -> dict:
    from ._sweeps import truncation
    return truncation(path, tmpdir, mode)


def job_mutation(path: str, tmpdir: str, mode: str) -> dict:
    from ._sweeps import mutation
    return mutation(path, tmpdir, mode)


#: documented exit statuses (README "Exit status")
EXIT_CODES = {0, 1, 2, 3, 4, 5, 6, 7}


def job_cli(argv: list[str], inputs: list[str], outputs: list[str] = (), cwd: str | None = None,
            seconds: float = 60.0) -> dict:
    """Run ``repltool ARGV`` in-process; check exit status, stderr form, inputs, outputs."""
    from repltool.cli import run

    from ._checks import Hang, MESSAGE, bounded, sha256
    before = {p: sha256(p) for p in inputs if os.path.isfile(p)}
    out, err = io.StringIO(), io.StringIO()
    failures: list[str] = []
    status = None
    old = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        with bounded(seconds), redirect_stdout(out), redirect_stderr(err):
            status = run(list(argv))
    except Hang as exc:
        failures.append(f"repltool {' '.join(argv)}: HANG ({exc})")
    except BaseException as exc:        # noqa: BLE001 - run() must return a status
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6))
        failures.append(f"repltool {' '.join(argv)}: {type(exc).__name__} escaped run(): "
                        f"{exc}\n{tb}")
    finally:
        os.chdir(old)
    stderr = err.getvalue()
    if status is not None:
        if status not in EXIT_CODES:
            failures.append(f"repltool {' '.join(argv)}: undocumented exit status {status}")
        errors = [line for line in stderr.splitlines() if line.startswith("repltool: error: ")]
        if status in (3, 4, 5, 6, 7) and "--keep-going" not in argv and argv[0] != "check":
            if len(errors) != 1:
                failures.append(f"repltool {' '.join(argv)}: exit {status} with "
                                f"{len(errors)} error lines: {stderr[-500:]!r}")
            elif not MESSAGE.match(errors[0][len("repltool: error: "):]):
                failures.append(f"repltool {' '.join(argv)}: error line not "
                                f"'FILE:OFFSET EVENT_TYPE: reason': {errors[0]!r}")
        if "Traceback" in stderr:
            failures.append(f"repltool {' '.join(argv)}: a traceback on stderr: {stderr[-800:]}")
    for p, h in before.items():
        if not os.path.isfile(p) or sha256(p) != h:
            failures.append(f"repltool {' '.join(argv)}: input {p} was modified")
    leftovers = []
    for p in outputs:
        d = os.path.dirname(os.path.abspath(p))
        base = os.path.basename(p)
        leftovers += [n for n in os.listdir(d) if n.startswith(f".{base}.")]
    if leftovers:
        failures.append(f"repltool {' '.join(argv)}: temporary files left: {leftovers}")
    return {"status": status, "stdout": out.getvalue()[-2000:], "stderr": stderr[-2000:],
            "failures": failures,
            "outputs": {p: os.path.exists(p) for p in outputs}}


def job_rewrite(src: str, dst: str, clocks: dict[str, list[int]]) -> dict:
    """rewrite_log on a (damaged) file: success, or a ReplToolError and no output at all."""
    from repltool.binlog.rewrite import rewrite_log
    from repltool.errors import ReplToolError

    from ._checks import Hang, bounded, message_ok, sha256
    before = sha256(src)
    failures: list[str] = []
    error = None
    try:
        with bounded():
            rewrite_log(src, dst, {int(k): tuple(v) for k, v in clocks.items()})
    except ReplToolError as exc:
        error = f"{type(exc).__name__}: {exc}"
        bad = message_ok(src, exc) if exc.pos is not None else None
        if bad:
            failures.append(f"rewrite_log {src}: {bad}")
        if os.path.exists(dst):
            failures.append(f"rewrite_log {src}: failed ({exc}) but {dst} exists")
    except Hang as exc:
        failures.append(f"rewrite_log {src}: HANG ({exc})")
    except BaseException as exc:        # noqa: BLE001
        failures.append(f"rewrite_log {src}: {type(exc).__name__} escaped: {exc}")
    d = os.path.dirname(os.path.abspath(dst))
    left = [n for n in os.listdir(d) if n.startswith(f".{os.path.basename(dst)}.")]
    if left:
        failures.append(f"rewrite_log {src}: temporary files left: {left}")
    if sha256(src) != before:
        failures.append(f"rewrite_log {src}: the input was modified")
    return {"failures": failures, "error": error, "written": os.path.exists(dst)}


def job_ping() -> dict:
    return {"pid": os.getpid()}


def job_allocate(mib: int) -> dict:
    """Self-test of the limit: allocating past it must fail."""
    try:
        block = bytearray(mib * 1024 * 1024)
        return {"allocated": len(block)}
    except MemoryError:
        return {"allocated": 0}


JOBS = {"read": job_read, "truncation": job_truncation, "mutation": job_mutation,
        "cli": job_cli, "rewrite": job_rewrite, "ping": job_ping, "allocate": job_allocate}


def main() -> None:
    _limit(int(sys.argv[1]))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import hostile._checks  # noqa: F401 - import (and its SIGALRM handler) before any job
    for line in sys.stdin:
        job = json.loads(line)
        _reset_peak()
        t0 = time.monotonic()
        try:
            result = JOBS[job["kind"]](**job.get("args", {}))
        except BaseException as exc:    # noqa: BLE001 - the harness itself failed
            result = {"failures": [f"worker: {type(exc).__name__}: {exc}\n"
                                   f"{traceback.format_exc(limit=-8)}"]}
        result["seconds"] = round(time.monotonic() - t0, 3)
        result["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result["peak_rss_kib"] = _peak()
        sys.stdout.write(json.dumps(result, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    __package__ = "hostile"
    main()
