"""A rich progress bar on stderr for long reads - only when stderr is a terminal.

Piped or redirected output stays exactly as it was: no bar, no escape codes.

Two sources of progress: a command that counts its own bytes (``stats``) passes
:func:`byte_progress`'s callback to the library; every other command that reads
logs runs under :func:`watch_inputs`, which follows the read offsets of the input
files from outside the reader (``/proc/self/fdinfo``, Linux; elsewhere no bar), so
no reader needs a progress parameter.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

#: Inputs smaller than this (in all) finish too soon for a bar to help
#: (``REPLTOOL_PROGRESS_MIN_BYTES`` overrides it, e.g. 0 to always show one).
MIN_BYTES = 32 << 20
MIN_FILES = 8


def _min_bytes() -> int:
    try:
        return int(os.environ.get("REPLTOOL_PROGRESS_MIN_BYTES", MIN_BYTES))
    except ValueError:
        return MIN_BYTES


def _sizes(files: Sequence[str]) -> list[int]:
    sizes = []
    for f in files:
        try:
            sizes.append(os.path.getsize(f))
        except OSError:
            sizes.append(0)
    return sizes


def _wanted(total: int, count: int) -> bool:
    if not sys.stderr.isatty():
        return False
    return total >= _min_bytes() or count >= MIN_FILES


@contextmanager
def _bar(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A transient bar on stderr.  When stdout is a terminal too, the bar is erased
    before the first byte of output (it would otherwise be left half-drawn on the
    line the output starts on); output to a pipe or a file leaves it running."""
    from rich.console import Console
    from rich.progress import (
        BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn,
    )
    bar = Progress(TextColumn(label), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                   TimeRemainingColumn(), console=Console(stderr=True), transient=True,
                   redirect_stdout=False)
    task = bar.add_task(label, total=total)
    stdout = sys.stdout
    with bar:
        if stdout is not None and stdout.isatty():
            sys.stdout = _StopOnWrite(stdout, bar.stop)  # type: ignore[assignment]
        try:
            yield lambda done: bar.update(task, completed=min(done, total))
        finally:
            if isinstance(sys.stdout, _StopOnWrite):
                sys.stdout = stdout


class _StopOnWrite:
    """``sys.stdout`` that calls ``stop()`` before the first write."""

    def __init__(self, stream, stop: Callable[[], None]) -> None:  # type: ignore[no-untyped-def]
        self._stream = stream
        self._stop: Callable[[], None] | None = stop

    def _first(self) -> None:
        if self._stop is not None:
            stop, self._stop = self._stop, None
            stop()

    def write(self, text: str) -> int:
        self._first()
        return self._stream.write(text)

    def writelines(self, lines) -> None:  # type: ignore[no-untyped-def]
        self._first()
        self._stream.writelines(lines)

    @property
    def buffer(self):  # type: ignore[no-untyped-def]
        self._first()
        return self._stream.buffer

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._stream, name)


@contextmanager
def byte_progress(files: Sequence[str], label: str) -> Iterator[Callable[[int], None] | None]:
    """Yield ``update(bytes_done)`` for a bar over the files' total size, or ``None``.

    ``None`` (no bar) unless stderr is a TTY and the input is large (``MIN_BYTES``)
    or many files (``MIN_FILES``).
    """
    total = sum(_sizes(files))
    if not _wanted(total, len(files)):
        yield None
        return
    with _bar(total, label) as update:
        yield update


#: How often :func:`watch_inputs` looks at the read offsets (seconds).
POLL = 0.2


@contextmanager
def watch_inputs(files: Sequence[str], label: str) -> Iterator[None]:
    """A bar over ``files`` (bytes, MB/s, ETA) while the body runs, when stderr is a
    terminal and the input is large: the progress is the offset of the input file
    open furthest down the list (files are read in order), plus the sizes of the
    files before it; it never goes back.
    """
    names = [f for f in files if f != "-" and os.path.isfile(f)]
    sizes = _sizes(names)
    total = sum(sizes)
    if not names or not os.path.isdir("/proc/self/fdinfo") or not _wanted(total, len(names)):
        yield
        return
    index: dict[str, int] = {}
    for i, f in enumerate(names):
        index.setdefault(os.path.realpath(f), i)
    before = [sum(sizes[:i]) for i in range(len(sizes))]
    stop = threading.Event()

    def done_bytes() -> int:
        best = -1
        try:
            fds = os.listdir("/proc/self/fd")
        except OSError:
            return best
        for fd in fds:
            try:
                i = index.get(os.readlink(f"/proc/self/fd/{fd}"))
                if i is None:
                    continue
                with open(f"/proc/self/fdinfo/{fd}") as info:
                    pos = int(info.readline().split()[1])       # "pos:\t<offset>"
            except (OSError, ValueError, IndexError):
                continue
            best = max(best, before[i] + min(pos, sizes[i]))
        return best

    with _bar(total, label) as update:
        def follow() -> None:
            done = 0
            while not stop.wait(POLL):
                done = max(done, done_bytes())
                update(done)

        thread = threading.Thread(target=follow, name="repltool-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
