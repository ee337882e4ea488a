"""The console command fixes glibc's mmap threshold (peak RSS flat with the input size).

glibc raises its mmap threshold to the size of every mapped block freed, so after
one big buffer is freed the next ones of that size come from the heap, whose free
holes stay resident: a long ``certify`` grew its peak RSS with the input
(bench/results/rssflat.md).  ``repltool.cli.tune_allocator`` fixes the threshold;
these tests run the allocation pattern in a child process and read glibc's own
figures (``mallinfo2``: bytes in mapped blocks).
"""

from __future__ import annotations

import os
import subprocess
import sys

from repltool.binlog.engine import engine_name
from repltool.cli import MMAP_THRESHOLD

# a 4 MiB block mapped and freed (glibc's default threshold rises to 4 MiB), then a
# block of twice the threshold: mapped only while the threshold stays fixed
_CHILD = """
import ctypes, sys
class MI(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MI
from repltool.cli import MMAP_THRESHOLD, tune_allocator
tuned = tune_allocator() if sys.argv[1] == "tune" else None
big = bytes(4 << 20)
del big
before = libc.mallinfo2().hblkhd
block = bytes(2 * MMAP_THRESHOLD)
mapped = libc.mallinfo2().hblkhd - before >= 2 * MMAP_THRESHOLD
print(tuned, mapped)
"""


def _child(mode: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def test_the_threshold_is_fixed_with_the_compiled_engine() -> None:
    assert os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")   # the platform tested
    if engine_name() == "compiled":
        # tuned: the block after the big one freed is still a mapping of its own
        assert _child("tune") == "True True"
    else:
        # the pure-Python engine leaves the allocator alone
        assert _child("tune") == "False False"
    # untuned: glibc's moving threshold puts the same block in the heap
    assert _child("none") == "None False"


def test_the_console_command_tunes_and_a_library_call_does_not(monkeypatch) -> None:
    import gc

    import pytest

    from repltool import cli
    calls: list[int] = []
    monkeypatch.setattr(cli, "tune_allocator", lambda: calls.append(1) or True)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert calls == []
    monkeypatch.setattr(sys, "argv", ["repltool", "--version"])
    try:
        with pytest.raises(SystemExit):
            cli.main()
    finally:
        gc.unfreeze()               # main() froze the collector's objects (exit path)
    assert calls == [1]
