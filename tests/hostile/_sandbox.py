"""Parent side of the sandbox: a long-lived worker subprocess with resource limits.

The pytest process is never limited.  Each :class:`Sandbox` owns one worker
(``_worker.py``) whose address space is capped with ``RLIMIT_AS``; jobs go to
it as JSON lines, with a wall-clock timeout enforced here.  A worker that dies
(killed by the kernel, or an allocation that the limit turned into a crash) or
overruns its timeout is reported as a contract failure and restarted.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

WORKER = Path(__file__).with_name("_worker.py")
#: RLIMIT_AS of the worker: Python, construct, zstandard and one corpus file fit easily
MEMORY_LIMIT_MIB = 512


class SandboxFailure(AssertionError):
    """The worker died or did not answer in time."""


class Sandbox:
    def __init__(self, limit_mib: int = MEMORY_LIMIT_MIB) -> None:
        self.limit_mib = limit_mib
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None or self.proc.poll() is not None:
            env = dict(os.environ, PYTHONHASHSEED="0")
            self.proc = subprocess.Popen(
                [sys.executable, str(WORKER), str(self.limit_mib)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        return self.proc

    def run(self, kind: str, timeout: float = 120.0, **args: object) -> dict:
        """Run one job; raise :class:`SandboxFailure` on a dead or hung worker."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"kind": kind, "args": args}) + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close(kill=True)
                raise SandboxFailure(f"{kind} {args}: no answer within {timeout} s (hang)")
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if ready:
                line = proc.stdout.readline()
                if line:
                    return json.loads(line)
                err = proc.stderr.read() if proc.stderr else ""
                code = proc.wait()
                self.proc = None
                raise SandboxFailure(f"{kind} {args}: the worker died (exit {code}) under "
                                     f"RLIMIT_AS={self.limit_mib} MiB: {err[-2000:]}")

    def close(self, kill: bool = False) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if kill:
            proc.kill()
        else:
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
