"""The robustness contract as executable checks (README "Robustness contract").

This module runs *inside* the sandbox worker (:mod:`._worker`), a subprocess
with an address-space limit and an interval timer, never in the pytest process.
Every check returns a list of failure strings (empty: the contract held), so a
sweep can try thousands of inputs and report all violations at once.

What is checked on every read of a damaged file:

* only :class:`~repltool.errors.ReplToolError` subclasses escape (a
  ``MemoryError`` under the address-space limit, a ``RecursionError``, a
  ``ValueError``... is a failure, and so is a :class:`Hang`);
* the error says ``FILE:OFFSET[+INNER] [EVENT_TYPE]: reason`` with this file;
* the events before the damage are exactly those of the undamaged bytes;
* the damage is reported at the damaged event or later, never before;
* ``keep_going=True``: events and DAMAGED_REGION pseudo-events tile the file
  from offset 4 to its end, nothing silently lost (only the documented fatal
  errors - not a binlog, encrypted, no FDE, unsupported - may still raise);
* the input file's bytes are the same afterwards.
"""

from __future__ import annotations

import hashlib
import re
import signal
import traceback
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from repltool.binlog import ReadOptions, read_events, read_transactions
from repltool.stats import compute_clock_stats, compute_stats
from repltool.binlog.events import DAMAGED_TYPE, Event
from repltool.errors import (
    EncryptedLog, NoFormatDescription, NotABinlog, ReplToolError, TruncatedLog, UnsupportedLog,
)

#: FILE:OFFSET[+INNER][ EVENT_TYPE]: reason
MESSAGE = re.compile(r"^(?P<file>.+):(?P<off>\d+)(\+\d+)?( [A-Z0-9_]+)?: \S.*", re.S)
FATAL = (NotABinlog, EncryptedLog, UnsupportedLog, NoFormatDescription)

#: seconds one operation (one read of one file) may take before it counts as a hang
OP_SECONDS = 20.0


class Hang(BaseException):
    """Raised by the interval timer: an operation exceeded :data:`OP_SECONDS`."""


def _alarm(signum, frame):  # type: ignore[no-untyped-def]
    raise Hang(f"operation exceeded {OP_SECONDS} s")


signal.signal(signal.SIGALRM, _alarm)


class bounded:
    """``with bounded(): ...``: a wall-clock bound on one operation (SIGALRM)."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds or OP_SECONDS

    def __enter__(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def key(e: Event) -> tuple:
    """What must be identical between two reads of the same bytes."""
    return (e.pos.offset, e.pos.payload_offset, e.type_code, e.event_size, e.log_pos, e.flags,
            e.body, e.crc, e.raw)


@dataclass
class Outcome:
    """One read: the events yielded, then the library error that stopped it (or None)."""

    events: list[Event]
    error: ReplToolError | None
    failures: list[str]

    @property
    def outer(self) -> list[Event]:
        return [e for e in self.events if e.pos.payload_offset is None]


def _unexpected(label: str, exc: BaseException) -> str:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6))
    return f"{label}: {type(exc).__name__} escaped: {exc}\n{tb}"


def message_ok(path: str, exc: ReplToolError) -> str | None:
    """None when ``exc`` is positioned in ``path`` and its text has the contract's form."""
    text = str(exc)
    if exc.pos is None:
        return f"error without a position: {text!r}"
    m = MESSAGE.match(text)
    if m is None or "\n" in text:
        return f"message not 'FILE:OFFSET EVENT_TYPE: reason' on one line: {text!r}"
    if exc.pos.file != path or not text.startswith(f"{path}:{exc.pos.offset}"):
        return f"message does not name {path}:{exc.pos.offset}: {text!r}"
    return None


def read(path: str, label: str, *, verify: bool = True, keep_going: bool = False,
         fast: bool = True) -> Outcome:
    """Read ``path`` completely under the time bound; never raises (except Hang/worker death)."""
    events: list[Event] = []
    failures: list[str] = []
    error = None
    opts = ReadOptions(verify_checksum=verify, keep_going=keep_going, fast=fast)
    try:
        with bounded():
            for ev in read_events(path, opts):
                events.append(ev)
    except ReplToolError as exc:
        error = exc
        bad = message_ok(path, exc)
        if bad:
            failures.append(f"{label}: {bad}")
    except Hang as exc:
        failures.append(f"{label}: HANG ({exc}) after {len(events)} events")
    except BaseException as exc:    # noqa: BLE001 - this is what the contract forbids
        failures.append(_unexpected(label, exc))
    return Outcome(events, error, failures)


def drain(label: str, fn: Callable[[], Iterable[object]]) -> list[str]:
    """Consume an iterator under the time bound; only ReplToolError may escape."""
    try:
        with bounded():
            for _ in fn():
                pass
    except ReplToolError:
        return []
    except Hang as exc:
        return [f"{label}: HANG ({exc})"]
    except BaseException as exc:    # noqa: BLE001
        return [_unexpected(label, exc)]
    return []


def tiling(path: str, size: int, out: Outcome, label: str) -> list[str]:
    """keep-going: events + damaged regions cover [4, size) exactly, in order."""
    if out.error is not None:
        if isinstance(out.error, FATAL) or (out.error.pos and out.error.pos.offset == 0):
            return []           # files that cannot be read at all (magic, FDE) still raise
        return [f"{label}: keep-going raised {type(out.error).__name__}: {out.error}"]
    at = 4
    for e in out.outer:
        if e.pos.offset != at:
            kind = "gap" if e.pos.offset > at else "overlap"
            return [f"{label}: keep-going {kind}: expected an event at {at}, got "
                    f"{e.type_name if e.type_code != DAMAGED_TYPE else 'DAMAGED'} at "
                    f"{e.pos.offset} (bytes {min(at, e.pos.offset)}..{max(at, e.pos.offset)} "
                    "unaccounted for)"]
        if e.event_size <= 0:
            return [f"{label}: keep-going event of size {e.event_size} at {at}"]
        at += e.event_size
    if at != size and size >= 4:
        return [f"{label}: keep-going stopped at {at}, the file has {size} bytes"]
    return []


def prefix_ok(got: Outcome, clean: list[Event], damage_at: int, label: str) -> list[str]:
    """Every clean event before ``damage_at`` is yielded unchanged, first, in order."""
    want = [key(e) for e in clean if e.pos.offset < damage_at]
    have = [key(e) for e in got.events[:len(want)]]
    if have != want:
        i = next((i for i, (a, b) in enumerate(zip(have, want)) if a != b), min(len(have),
                                                                                len(want)))
        return [f"{label}: events before the damage at {damage_at} differ from the clean read "
                f"(first difference at event #{i}; {len(have)} of {len(want)} yielded)"]
    return []


def error_not_before(got: Outcome, damage_at: int, label: str) -> list[str]:
    err = got.error
    if err is not None and err.pos is not None and err.pos.offset < damage_at:
        return [f"{label}: error reported before the damage ({damage_at}): {err}"]
    return []


def full_contract(path: str, label: str, *, clean: list[Event] | None = None,
                  damage_at: int = 4, extras: bool = True, verify_modes=(True,),
                  keep_going: bool = True) -> tuple[list[str], Outcome | None]:
    """Every check on one file: strict read(s), keep-going, transactions, clock scan.

    :param clean: the events of the undamaged bytes (for the prefix check).
    :param damage_at: offset of the first damaged byte's event in ``path``.
    """
    size = Path(path).stat().st_size
    before = sha256(path)
    failures: list[str] = []
    first = None
    for verify in verify_modes:
        out = read(path, f"{label} read(verify={verify})", verify=verify)
        first = first or out
        failures += out.failures
        if clean is not None and verify:
            failures += prefix_ok(out, clean, damage_at, f"{label} read")
            failures += error_not_before(out, damage_at, f"{label} read")
    if keep_going:
        kg = read(path, f"{label} keep-going", keep_going=True)
        failures += kg.failures
        if not kg.failures:
            failures += tiling(path, size, kg, f"{label}")
            if clean is not None:
                failures += prefix_ok(kg, clean, damage_at, f"{label} keep-going")
    if extras:
        failures += drain(f"{label} read_transactions", lambda: read_transactions(path))
        # the compiled core's read, handing over to the general reader where it stops
        failures += drain(f"{label} compute_stats", lambda: iter([compute_stats(path)]))
        failures += drain(f"{label} compute_clock_stats",
                          lambda: iter([compute_clock_stats(path)]))
    if sha256(path) != before:
        failures.append(f"{label}: the input file was modified")
    return failures, first


# ---- building damaged bytes ----

HEADER = 19


def fix_crc(data: bytearray, off: int, size: int) -> None:
    """Recompute the CRC32 footer of the event at ``off`` (after a body/header change)."""
    crc = zlib.crc32(bytes(data[off:off + size - 4]))
    data[off + size - 4:off + size] = crc.to_bytes(4, "little")


def splice(data: bytes, outer: list[Event], lo: int, hi: int) -> tuple[bytes, int]:
    """magic + every FDE / Start_v3 before event ``lo`` + events ``lo..hi-1``.

    Returns the bytes and the offset of event ``lo`` in them.  Used to mutate one
    event of a multi-MB file without re-reading megabytes per mutation: the
    reader's only cross-event state is the governing FDE.
    """
    head = [bytes(data[e.pos.offset:e.pos.offset + e.event_size]) for e in outer[:lo]
            if e.type_code in (1, 15)]
    start = outer[lo].pos.offset
    end = outer[hi - 1].pos.offset + outer[hi - 1].event_size if hi > lo else start
    body = b"\xfebin" + b"".join(head)
    return body + data[start:end], len(body)


def sample(n: int, every: int, edge: int) -> list[int]:
    """Indices 0..n-1: the first and last ``edge`` and every ``every``-th in between."""
    picked = set(range(min(edge, n))) | set(range(max(0, n - edge), n)) | set(range(0, n, every))
    return sorted(picked)


def deterministic(*parts: object) -> int:
    """A stable pseudo-random number from ``parts`` (no global RNG state)."""
    return zlib.crc32(repr(parts).encode())


def iter_events(events: Iterable[Event]) -> Iterator[Event]:
    return iter(events)
