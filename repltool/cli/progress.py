"""A rich progress bar on stderr for long reads - only when stderr is a terminal.

Piped or redirected output stays exactly as it was: no bar, no escape codes.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

#: Inputs smaller than this (in all) finish too soon for a bar to help.
MIN_BYTES = 32 << 20
MIN_FILES = 8


def _total(files: Sequence[str]) -> int:
    total = 0
    for f in files:
        try:
            total += os.path.getsize(f)
        except OSError:
            pass
    return total


@contextmanager
def byte_progress(files: Sequence[str], label: str) -> Iterator[Callable[[int], None] | None]:
    """Yield ``update(bytes_done)`` for a bar over the files' total size, or ``None``.

    ``None`` (no bar) unless stderr is a TTY and the input is large (``MIN_BYTES``)
    or many files (``MIN_FILES``).
    """
    total = _total(files)
    if not sys.stderr.isatty() or (total < MIN_BYTES and len(files) < MIN_FILES):
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn,
    )
    bar = Progress(TextColumn(label), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                   TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task(label, total=total)
    with bar:
        yield lambda done: bar.update(task, completed=min(done, total))
