#!/usr/bin/env python3
"""Coverage-guided fuzz target for the binlog reader (atheris, i.e. libFuzzer for Python).

Each input is written to a real file and read the way the commands read it:
``read_events`` strict (with and without CRC verification) and with
``keep_going``, ``read_transactions`` and the clock scan.  The target fails
(libFuzzer saves a ``crash-*`` reproducer) when anything but a
:class:`~repltool.errors.ReplToolError` escapes, when an error message is not
``FILE:OFFSET EVENT_TYPE: reason``, or when keep-going events and damaged
regions do not tile the file.  Hangs and memory are bounded by libFuzzer's
``-timeout`` and ``-rss_limit_mb``.

Quick run (what the test-suite does)::

    python tests/hostile/fuzz_reader.py -atheris_runs=2000

Longer, seeded from the corpus, with the contract's bounds::

    mkdir -p fuzz-work && python tests/hostile/fuzz_reader.py fuzz-work \\
        ../shared/corpus/mysql/rmc -max_len=65536 -timeout=20 -rss_limit_mb=512 \\
        -max_total_time=3600 -jobs=2

Needs ``pip install '.[fuzz]'`` (atheris).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

import atheris

with atheris.instrument_imports(include=["repltool"]):
    from repltool.binlog import ReadOptions, read_events, read_transactions
    from repltool.stats import compute_clock_stats, compute_stats
    from repltool.errors import (
        EncryptedLog, NoFormatDescription, NotABinlog, ReplToolError, UnsupportedLog,
    )

MESSAGE = re.compile(r"^.+:\d+(\+\d+)?( [A-Z0-9_]+)?: \S")
FATAL = (NotABinlog, EncryptedLog, UnsupportedLog, NoFormatDescription)
_DIR = tempfile.mkdtemp(prefix="repltool-fuzz-")
PATH = os.path.join(_DIR, "input.bin")


def _message(exc: ReplToolError) -> None:
    text = str(exc)
    if exc.pos is None or not MESSAGE.match(text) or "\n" in text:
        raise AssertionError(f"bad error message: {text!r}")


def _drain(iterator) -> list:  # type: ignore[no-untyped-def]
    out = []
    try:
        for item in iterator:
            out.append(item)
    except ReplToolError as exc:
        _message(exc)
        return out + [exc]
    return out


def _lazy(fn):  # type: ignore[no-untyped-def]
    """``fn(PATH)`` as a one-item iterator (raising inside _drain)."""
    yield fn(PATH)


def TestOneInput(data: bytes) -> None:
    # First byte even: the data follows the binlog magic (most inputs get past it).
    body = b"\xfebin" + data[1:] if data[:1] and data[0] % 2 == 0 else data
    with open(PATH, "wb") as fh:
        fh.write(body)
    _drain(read_events(PATH))
    _drain(read_events(PATH, ReadOptions(verify_checksum=False)))
    kg = _drain(read_events(PATH, ReadOptions(keep_going=True)))
    if kg and isinstance(kg[-1], ReplToolError):
        err = kg[-1]
        if not isinstance(err, FATAL) and not (err.pos is not None and err.pos.offset == 0):
            raise AssertionError(f"keep-going raised {kg[-1]!r}")
    else:
        at = 4
        for ev in kg:
            if ev.pos.payload_offset is None:
                if ev.pos.offset != at or ev.event_size <= 0:
                    raise AssertionError(f"keep-going does not tile: {at} vs {ev.pos}")
                at += ev.event_size
        if len(body) >= 4 and at != len(body):
            raise AssertionError(f"keep-going stopped at {at} of {len(body)}")
    _drain(read_transactions(PATH))
    _drain(_lazy(compute_stats))
    _drain(_lazy(compute_clock_stats))


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
