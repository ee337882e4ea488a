"""The cyclic garbage collector's thresholds while write sets are read (any command that reads them).

The write-set extractor keeps large caches of key entries (``WriteKey``
objects, key texts) and creates no reference cycles per transaction, so the
default thresholds only make the collector walk the caches again and again
(about a tenth of ``dump --writesets``' time, a third of the write-set
reader's in ``certify``: bench/results/certkeys.md; the same share on a Spark
executor that certifies its file: bench/results/spark15.md).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


@contextmanager
def few_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less often (restored afterwards)."""
    import gc
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], 100_000), 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)
