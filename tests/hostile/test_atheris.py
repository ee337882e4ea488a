"""Runs the coverage-guided target ``fuzz_reader.py`` briefly (atheris, the ``fuzz`` extra).

Seeded with the first KiB of a few corpus files; libFuzzer's own bounds
(``-malloc_limit_mb=512`` per allocation, ``-timeout=20``) are the contract's; the
process as a whole may reach ``-rss_limit_mb=1024`` (interpreter, instrumentation,
corpus).  A crash leaves
libFuzzer's reproducer in the test's tmp_path and fails with its output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ._build import FDE_SOURCE, FDE_SOURCE_MARIADB, FDE_SOURCE_NO_CRC
from .conftest import FULL

TARGET = Path(__file__).with_name("fuzz_reader.py")
RUNS = 200_000 if FULL else 2_000


def test_atheris_reader_target(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("atheris", reason="atheris is not installed (pip install '.[test]')")
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for name in (FDE_SOURCE, FDE_SOURCE_NO_CRC, FDE_SOURCE_MARIADB):
        (seeds / Path(name).name).write_bytes((corpus / name).read_bytes()[:1024])
    proc = subprocess.run(
        [sys.executable, str(TARGET), str(seeds), f"-atheris_runs={RUNS}", "-max_len=4096",
         # a single allocation over 512 MiB fails the run (the contract's bound); the
         # whole process - interpreter, instrumentation, libFuzzer's corpus - may use 1 GiB
         "-malloc_limit_mb=512", "-rss_limit_mb=1024", "-timeout=20", "-seed=1",
         f"-artifact_prefix={tmp_path}/"],
        capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    crashes = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "oom-",
                                                                               "timeout-")))
    assert proc.returncode == 0 and not crashes, (crashes, proc.stderr[-4000:])
    assert f"Done {RUNS} " in proc.stderr or "Done" in proc.stderr, proc.stderr[-2000:]
