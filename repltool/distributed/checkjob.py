"""``check --spark``: the rules run on the executors, the driver merges their parts.

Binlogs (:func:`repltool.check.engine.check_part` per unit,
:func:`~repltool.check.engine.merge_parts` on the driver): each executor
checks its unit's files with the single-process engine, reading them as it does (the
compiled core's check scan and the lazy write-set read, which keys only the
transactions with a MySQL clock), and sends its findings
and the small state the rules across files need: the GTIDs committed as runs
of numbers (with the offsets, for G001's "already committed at"), its own
G001s, the transactions without an end event (R002), the clock totals (T001,
T002), the unknown write sets (W003) and the first and last clocks W001 saw.
Units are linked to the one before (read again together) when their last
transaction is open (R001) or W001's first clock is no barrier after it.

A local MySQL binlog larger than twice ``--spark-split-size`` is checked in
spans cut at transaction boundaries (:mod:`repltool.binlog.split`): one task
per span (:func:`repltool.check.engine.check_span`: its findings and its edge
state, :class:`repltool.check.model.SpanEdge`), then one task per file joins
its spans (:func:`join_check_spans`, :func:`repltool.check.engine.join_spans`)
into the file's :func:`~repltool.check.engine.check_part`; a file whose spans
cannot be proved to join (a span failed, stopped at a format error or ended
inside a transaction, W001's writers reach past what a span hands on) is
checked again whole.  Relay logs, MariaDB logs and URIs are not split.

Relay logs (their clock segments and Group Replication detection cross
files) and inputs that name a file twice take the older path: the rule
engine (:func:`repltool.check.check_files`) runs once on the driver over
replayed digests.  Each executor runs the engine on its unit with a tee on
the reader and keeps, per
file, a digest of what ``read_events`` gave (the events without their bytes,
except the 25 header bytes grouping reads and the whole event where the
CRC32 does not match; the bodies of the types the engine decodes; the
:class:`~repltool.binlog.FileInfo`; the error that ended the file) and the
write set of every transaction the engine asked for.  The driver's engine
reads those digests instead of the files, and gets those write sets: the
findings are the single-process ones.

A unit's write sets are those of one ordered read unless the unit needs a
Table_map of an earlier file (a transaction continuing from the previous
relay file, a rows event naming a table id no Table_map of the unit named, a
table whose keys are unknown here but that an earlier file's Table_map named
with ``binlog_row_metadata=FULL``): such units are read again together with
their neighbour.
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from .. import errors
from ..errors import ReplToolError
from .driver import first_failure, replay_warnings, run_distributed, stream_results
from .pairs import has_unmapped
from .units import unit_failure, UnitResult, Task, Unit, captured_warnings

ROWS = "rows"           # CheckSpec.provider: the engine's row-decoding provider


@dataclass(frozen=True)
class CheckSpec:
    config: Any                   # repltool.check.CheckConfig
    provider: Any = ROWS          # ROWS, None, or a picklable provider (MappingProvider)
    schema: Any = None            # with ROWS: repltool.writeset.Schema or None


@dataclass
class _Digest:
    info: Any = None
    events: Any = field(default_factory=list)      # a list, or its Columns (iterable)
    error: tuple[str, str, Any, str | None] | None = None   # class, reason, pos, event type

    def raise_error(self) -> None:
        if self.error is None:
            return
        name, reason, pos, event_type = self.error
        cls = getattr(errors, name, None)
        if not (isinstance(cls, type) and issubclass(cls, ReplToolError)):
            cls = errors.LogFormatError
        raise cls(reason, pos=pos, event_type=event_type)


def _light_event(ev: Any, keep_body: frozenset[int]) -> Any:
    raw = ev.raw
    if ev.crc is None or zlib.crc32(raw[:-4]) == ev.crc:
        raw = raw[:25]
        ev = ev._replace(crc=None)
    return ev._replace(raw=raw, body=ev.body if ev.type_code in keep_body else None)


class _Recorder:
    """Wraps the row-decoding provider: records each write set it gives, by position."""

    needs_events = True

    def __init__(self, inner: Any, keep: bool = True) -> None:
        self.inner = inner
        self.keep = keep
        self.results: dict[Any, Any] = {}
        self.mapped: set[int] = set()
        self.unmapped = False
        self.named: set[str] = set()

    def __call__(self, trx: Any) -> Any:
        self.unmapped = has_unmapped(trx, self.mapped, self.named) or self.unmapped
        ws = self.inner(trx)
        if self.keep:
            self.results[trx.start] = ws
        return ws

    @property
    def unknown_key_tables(self) -> Any:
        return getattr(self.inner, "unknown_key_tables", {})


def check_unit(task: Task, unit: Unit) -> UnitResult:
    """Executor: per-file digests and the write sets the engine asked for."""
    from ..binlog import read_events
    from ..binlog.transactions import group_transactions
    from ..check.engine import CHECK_READ_TYPES, check_files, require_readable
    from ..check.writesets import builtin_provider
    spec: CheckSpec = task.extra
    result = UnitResult(unit)
    digests: dict[str, _Digest] = {}
    provider = _Recorder(builtin_provider(spec.schema)) if spec.provider == ROWS else spec.provider
    keep = frozenset(int(t) for t in CHECK_READ_TYPES)

    def reader(path: str, opts: Any, info: list[Any]) -> Iterator[Any]:
        d = digests[path] = _Digest()
        try:
            for ev in read_events(path, opts, info):
                d.events.append(_light_event(ev, keep))
                yield ev
        except ReplToolError as exc:
            d.error = (type(exc).__name__, exc.reason, exc.pos, exc.event_type)
            raise
        finally:
            d.info = info[0] if info else None

    with captured_warnings(result):
        try:
            for name in unit.files:
                require_readable(name)
            check_files(list(unit.files), spec.config, writesets=provider, reader=reader)
        except ReplToolError as exc:
            result.failure = unit_failure(exc, unit)
            return result
    files = [digests.get(f, _Digest()) for f in unit.files]
    tail = list(itertools.takewhile(lambda d: d.error is None, reversed(files)))[::-1]
    if tail:                    # the files after the last one that ended in an error
        last = None
        for last in group_transactions(ev for d in tail for ev in d.events):
            pass
        result.open_end = last is not None and last.truncated
    for d in files:                     # to the driver as columns (see .columns): half the bytes
        d.events = _packed(d.events)
    recorded = provider.results if isinstance(provider, _Recorder) else {}
    unknown = dict(getattr(provider, "inner", provider).unknown_key_tables) \
        if isinstance(provider, _Recorder) else {}
    result.payload = (files, recorded, unknown)
    if isinstance(provider, _Recorder):
        result.unknown_tables = provider.unmapped
        result.names_needed = frozenset(unknown)
        result.names_seen = frozenset(provider.named)
    return result


def check_part_unit(task: Task, unit: Unit) -> UnitResult:
    """Executor: the rules run here on the unit's files; the driver gets findings and the
    small state the cross-file rules need (:func:`repltool.check.engine.check_part`)."""
    from ..check.engine import check_part, check_span
    from ..check.writesets import RowWritesetProvider
    spec: CheckSpec = task.extra
    result = UnitResult(unit)
    # the row-decoding provider as the single process's (read lazily by the compiled
    # core's fused read where it applies), keeping what the units' links need
    provider = RowWritesetProvider(spec.schema) if spec.provider == ROWS else spec.provider
    tables = provider.track_tables() if isinstance(provider, RowWritesetProvider) else None
    from ..collector import few_collections
    with captured_warnings(result), few_collections():
        try:
            if unit.span is not None:
                part = check_span(unit.files[0], unit.span, spec.config, writesets=provider)
            else:
                part = check_part(list(unit.files), spec.config, writesets=provider)
        except ReplToolError as exc:
            result.failure = unit_failure(exc, unit)
            return result
    result.payload = part
    result.open_end = part.open_end
    result.w001 = part.w001
    result.count = sum(f.transactions for f in part.report.files)
    if tables is not None:
        result.unknown_tables = tables.unmapped
        result.names_needed = frozenset(part.unknown_tables)
        result.names_seen = frozenset(tables.named)
    return result


def join_check_spans(task: Task, records: Iterable[tuple[int, UnitResult]]
                     ) -> Iterator[UnitResult]:
    """Executor, the second stage: each split file's spans (``(file index, span result)``
    records, in any order) joined in order into the file's result
    (:func:`repltool.check.engine.join_spans`); ``joined`` -1: check the file whole."""
    from ..check.engine import join_spans
    spec: CheckSpec = task.extra
    by_file: dict[int, list[UnitResult]] = {}
    for index, r in records:
        by_file.setdefault(index, []).append(r)
    for index in sorted(by_file):
        parts = sorted(by_file[index], key=lambda r: r.unit.part)
        first = parts[0].unit
        out = UnitResult(Unit(first.index, first.files), joined=-1)
        out.warnings = [w for p in parts for w in (p.warnings or ())]
        spans = [p.unit.span for p in parts]
        seen: set[str] = set()
        joinable = (all(p.failure is None and p.payload is not None for p in parts)
                    and spans[0].start <= 4 and spans[-1].end is None
                    and all(a.end == b.start for a, b in zip(spans, spans[1:]))
                    and not any(p.unknown_tables for p in parts))
        for p in parts:                 # a span needing a table another span named
            joinable = joinable and not (p.names_needed & seen)
            seen |= p.names_seen
        joined = (join_spans(first.files[0], spec.config, [p.payload for p in parts],
                             writesets=spec.provider is not None) if joinable else None)
        if joined is not None:
            out.payload = joined
            out.open_end = joined.open_end
            out.w001 = joined.w001
            out.count = sum(p.count for p in parts)
            out.names_needed = frozenset(joined.unknown_tables)
            out.names_seen = frozenset(seen)
            out.joined = len(parts)
        yield out


#: files check --spark joined from spans, their spans, files checked again whole
_SPLIT = [0, 0, 0]


def split_counts() -> tuple[int, int, int]:
    """``(files check --spark joined from spans, those spans, files checked again whole
    because their spans did not join)`` in this (driver) process (tests assert the split
    path ran)."""
    return _SPLIT[0], _SPLIT[1], _SPLIT[2]


def _packed(events: list[Any]) -> Any:
    from .columns import pack
    try:
        return pack(events) if events else events
    except TypeError:                   # not one record class: as they are
        return events


class _Replay:
    """The driver's reader and provider: the units' digests and write sets, in input order."""

    needs_events = False

    def __init__(self, job: Any) -> None:
        self._units = stream_results(job)
        self._digests: dict[str, _Digest] = {}
        self._writesets: dict[Any, Any] = {}
        self.unknown_key_tables: dict[str, None] = {}
        self._warned: set[tuple[str, str]] = set()

    def read(self, path: str, opts: Any, info: list[Any]) -> Iterator[Any]:
        while path not in self._digests:
            r = next(self._units)
            replay_warnings(r, self._warned)
            files, recorded, unknown = r.payload
            self._digests.update(zip(r.unit.files, files))
            self._writesets.update(recorded)
            self.unknown_key_tables.update(unknown)
        d = self._digests.pop(path)
        if d.info is not None:
            info.append(d.info)
        yield from d.events
        d.raise_error()

    def __call__(self, trx: Any) -> Any:
        return self._writesets.pop(trx.start, None)


def spark_check(spark: Any, names: Sequence[str], config: Any, *, provider: Any = ROWS,
                schema: Any = None) -> Any:
    """:func:`repltool.check.check_files` with reading and write sets on executors.

    :param provider: :data:`ROWS` (the write sets of the row events, with
        ``schema``), ``None`` (W-rules skipped) or a picklable provider such
        as :class:`~repltool.check.MappingProvider`.
    :raises InputError: a file cannot be opened (the first in input order).
    """
    from ..check.engine import check_files, merge_parts
    spec = CheckSpec(config, provider, schema)
    if len(set(names)) == len(names):
        parts = run_distributed(spark, names, Task("checkpart", extra=spec, run=check_part_unit,
                                                   join=join_check_spans))
        _SPLIT[0] += len(parts.joined)
        _SPLIT[1] += sum(parts.joined.values())
        _SPLIT[2] += len(parts.reread)
        failure = first_failure(parts)
        if failure is not None:
            raise failure.exception()
        if not any(f.relay_log for r in parts.results for f in r.payload.report.files):
            warned: set[tuple[str, str]] = set()
            for r in parts.results:
                replay_warnings(r, warned)
            return merge_parts(list(names), config,
                               ((r.unit.index, r.payload) for r in parts.results),
                               writesets=provider is not None)
    # relay logs (their clock segments cross files) or a name given twice: the
    # engine runs on the driver over the replayed event digests
    task = Task("check", stream=True, extra=CheckSpec(config, provider, schema), run=check_unit)
    job = run_distributed(spark, names, task)
    failure = first_failure(job)
    if failure is not None:
        raise failure.exception()
    replay = _Replay(job)
    return check_files(list(names), config, writesets=replay if provider == ROWS else provider,
                       reader=replay.read)
