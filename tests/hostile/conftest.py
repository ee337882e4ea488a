"""Fixtures of the hostile-input suite: sandboxed workers and the corpus file lists.

``REPLTOOL_SWEEP=full`` selects the extended sweeps (every 97th event of the
big MariaDB files plus their first/last 20, more cut offsets, every type-code
swap, more byte values and more hypothesis examples); the default run still
covers every corpus file.
"""

from __future__ import annotations

import os
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest

import conftest as root_conftest  # tests/conftest.py: the corpus location and globbing

from ._sandbox import Sandbox

SWEEP = os.environ.get("REPLTOOL_SWEEP", "default")
FULL = SWEEP == "full"


def is_log(p: Path) -> bool:
    """Corpus files the sweeps read: every mysql/*/* file, the MariaDB sets' logs."""
    if p.parent.parts[-1] in ("mysql56", "mysql80", "rmc", "apecloud", "canal", "pbs", "shyiko"):
        return True
    return p.name.startswith(("mysql-bin.0", "relay-bin.0")) or p.suffix == ".inuse"


#: the globs of every sweep (``corpus_files`` marker arguments)
CORPUS_GLOBS = ("mysql/*/*", "mariadb/**/*")


def corpus_logs() -> list[Path]:
    return root_conftest._glob(CORPUS_GLOBS, is_log)


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    """One limited worker for the per-example tests (hypothesis, CLI, outputs)."""
    sb = Sandbox()
    yield sb
    sb.close()


class SweepPool:
    """Runs every file's sweep in two limited workers ahead of the tests that assert on it.

    The first sweep test submits all files' jobs; each parametrized test then
    waits for its own file, so the 2-core machine is used while pytest stays
    one test per file.
    """

    def __init__(self, workers: int = 2) -> None:
        self._local = threading.local()
        self._sandboxes: list[Sandbox] = []
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(workers)
        self._futures: dict[tuple[str, str], Future] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="repltool-sweep-")

    def _sandbox(self) -> Sandbox:
        sb = getattr(self._local, "sb", None)
        if sb is None:
            sb = self._local.sb = Sandbox()
            with self._lock:
                self._sandboxes.append(sb)
        return sb

    def _job(self, kind: str, path: str) -> dict:
        d = tempfile.mkdtemp(dir=self._tmp.name)
        return self._sandbox().run(kind, timeout=900, path=path, tmpdir=d,
                                   mode="full" if FULL else "default")

    def submit_all(self, kind: str, paths: list[Path]) -> None:
        for p in paths:
            k = (kind, str(p))
            if k not in self._futures:
                self._futures[k] = self._pool.submit(self._job, kind, str(p))

    def result(self, kind: str, path: Path) -> dict:
        k = (kind, str(path))
        if k not in self._futures:
            self.submit_all(kind, [path])
        return self._futures[k].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        for sb in self._sandboxes:
            sb.close()
        self._tmp.cleanup()


@pytest.fixture(scope="session")
def sweep_pool() -> Iterator[SweepPool]:
    pool = SweepPool()
    yield pool
    pool.close()
