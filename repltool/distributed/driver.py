"""The driver: run units on Spark, re-read linked units together, stitch results in input order.

Results are put in input order by the unit index, never by arrival.  Tasks
with ``stream`` set return only their flags with ``collect``; their payload
(transactions, write sets, event digests) stays cached on the executors and
comes to the driver one unit at a time, in input order, through
``toLocalIterator`` (:func:`stream_results`): the driver holds one unit's
payload at a time (plus units that arrive before their turn, which happens
only after linked units were re-read).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Sequence

from .inputs import is_uri
from .session import setting
from .units import (FileFailure, UnitResult, run_uri_records, run_uri_unit, Task, Unit,
                    run_local_unit)


@dataclass
class SparkRun:
    """The stitched outcome of a distributed job, in input order."""

    results: list[UnitResult]
    failures: list[FileFailure] = field(default_factory=list)
    row_rdds: list[Any] = field(default_factory=list)
    offsets: dict[int, int] = field(default_factory=dict)   # unit index -> first seq
    streamed: list[Any] = field(default_factory=list)       # RDDs holding the payloads
    #: large files read in parts: file index -> parts joined (files read again whole
    #: because their parts did not join are in ``reread``)
    joined: dict[int, int] = field(default_factory=dict)
    reread: list[int] = field(default_factory=list)


def _light(result: UnitResult) -> UnitResult:
    return replace(result, rows=None)


def _flags(result: UnitResult) -> UnitResult:
    return replace(result, rows=None, transactions=None, payload=None, parts=None)


def _units_rdd(spark: Any, task: Task, units: list[Unit]) -> Any:
    sc = spark.sparkContext
    if task.cwd is None:
        task = replace(task, cwd=os.getcwd())
    local = [u for u in units if not any(is_uri(f) for f in u.files)]
    remote = [u for u in units if any(is_uri(f) for f in u.files)]
    rdds = []
    if task.join is not None and any(u.span is not None for u in local):
        # the parts read in one stage, each file's parts joined by one task of a second
        parts = [u for u in local if u.span is not None]
        local = [u for u in local if u.span is None]
        place = {i: k for k, i in enumerate(sorted({u.index for u in parts}))}
        join = task.join
        rdds.append(sc.parallelize(parts, len(parts))
                    .map(lambda u: (u.index, run_local_unit(task, u)))
                    .partitionBy(len(place), lambda index: place[index])
                    .mapPartitions(lambda records: join(task, records)))
    if local:
        rdds.append(sc.parallelize(local, len(local)).map(lambda u: run_local_unit(task, u)))
    singles = {u.files[0]: u for u in remote if len(u.files) == 1}
    if singles:
        data = sc.binaryFiles(",".join(singles), minPartitions=len(singles))
        rdds.append(data.mapPartitions(lambda recs: run_uri_records(task, singles, recs)))
    for u in remote:
        if len(u.files) > 1:
            data = sc.binaryFiles(",".join(u.files)).coalesce(1)
            rdds.append(data.mapPartitions(lambda recs, u=u: run_uri_unit(task, u, recs)))
    return rdds[0] if len(rdds) == 1 else sc.union(rdds)


def _phase(spark: Any, task: Task, units: list[Unit]) -> tuple[list[UnitResult], Any]:
    if not units:
        return [], None
    rdd = _units_rdd(spark, task, units)
    if task.rows or task.stream:
        from pyspark import StorageLevel
        rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
        results = rdd.map(_flags if task.stream else _light).collect()
    else:
        results = rdd.collect()
    results.sort(key=lambda r: (r.unit.index, r.unit.part))
    return results, rdd


# ---- large files in parts ----

#: the Spark setting that holds the part size (``--spark-split-size``)
SPLIT_CONF = "spark.repltool.splitSize"
#: the part size without it: 128 MiB, Spark's own default input split
DEFAULT_SPLIT_SIZE = 128 << 20
#: without :data:`SPLIT_CONF`, files are cut only while the busiest core would finish
#: more than this fraction of its work after the best a split can give
#: (:func:`balance_splits`)
BALANCE_SLACK = 0.05
#: the tasks whose per-file results join exactly from parts
SPLIT_KINDS = frozenset({"stats", "sims"})


def parse_size(text: str) -> int:
    """``128M``, ``1g``, ``65536``, ``64MiB`` -> bytes (binary units); ``0``: never split.

    >>> parse_size("64M"), parse_size("1G"), parse_size("0")
    (67108864, 1073741824, 0)
    """
    import re
    m = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*", text, re.IGNORECASE)
    if m is None:
        from ..errors import UsageError
        raise UsageError(f"split size {text!r}: expected a number of bytes with an optional "
                         "K, M, G or T suffix (e.g. 128M); 0 never splits")
    return int(m.group(1)) << (10 * " kmgt".index(m.group(2).lower() or " "))


def split_size(spark: Any) -> int:
    """The part size the session asks for (:data:`SPLIT_CONF`, else :data:`DEFAULT_SPLIT_SIZE`)."""
    value = setting(spark, SPLIT_CONF)
    return DEFAULT_SPLIT_SIZE if value is None else parse_size(str(value))


def busiest(costs: Iterable[int], cores: int) -> int:
    """The busiest core's work when ``cores`` cores take the ``costs`` in order, each
    task going to the first core free: how Spark runs one stage's tasks (in partition
    order, none preferring a place).

    >>> busiest([3, 1, 1, 1], 2), busiest([1, 1, 1, 3], 2)
    (3, 4)
    """
    import heapq
    load = [0] * max(1, cores)
    for cost in costs:
        heapq.heapreplace(load, load[0] + cost)
    return max(load)


def balance_splits(sizes: Sequence[int], cores: int, part_size: int,
                   spans_of: Callable[[int], Sequence[Any]]) -> dict[int, list[Any]]:
    """Which files to read in parts, without ``--spark-split-size``: only those that keep
    the cores from finishing together.

    Every part costs a task (its start, its result, the join) and saves nothing
    when there are files enough to keep every core busy.  So, with the files in
    input order, each taking its bytes (``sizes``) of a core's time
    (:func:`busiest`): while the busiest core would finish more than
    :data:`BALANCE_SLACK` after the best any split can give (an even share of the
    bytes, or the largest file or part that cannot be cut further), the largest
    file not tried yet of at least twice ``part_size`` is cut
    (``spans_of(index)``: its spans, :func:`repltool.binlog.split.split_spans`;
    one span: it cannot be split, and counts as a file that cannot be cut).

    >>> from repltool.binlog.split import Span
    >>> cut = lambda i: [Span(4, 512), Span(512, None, 7)]
    >>> balance_splits([1024] * 8, 2, 256, cut)           # 8 even files, 2 cores
    {}
    >>> sorted(balance_splits([1024] * 3, 2, 256, cut))   # 3 files: one is cut
    [0]
    >>> sorted(balance_splits([1024], 2, 256, cut))       # 1 file: cut
    [0]

    :returns: file index -> its spans, for the files to read in parts.
    """
    def cost(i: int, span: Any) -> int:
        return (sizes[i] if span.end is None else span.end) - span.start

    plan: dict[int, list[Any]] = {}
    tried: set[int] = set()
    total = sum(sizes)
    while True:
        costs = [c for i, n in enumerate(sizes)
                 for c in ([cost(i, s) for s in plan[i]] if i in plan else [n])]
        fixed = [c for i, n in enumerate(sizes)
                 for c in ([cost(i, s) for s in plan[i]] if i in plan
                           else [n] if i in tried or n < 2 * part_size else [])]
        best = max(total / max(1, cores), max(fixed, default=0))
        if busiest(costs, cores) <= (1 + BALANCE_SLACK) * best:
            return plan
        left = [i for i, n in enumerate(sizes) if i not in tried and n >= 2 * part_size]
        if not left:
            return plan
        i = max(left, key=lambda k: (sizes[k], -k))
        tried.add(i)
        spans = list(spans_of(i))
        if len(spans) > 1:
            plan[i] = spans


def _plan(spark: Any, names: Sequence[str], task: Task) -> list[Unit]:
    """One unit per file; a large local binlog, for a task whose parts join exactly
    (:data:`SPLIT_KINDS`, or a task with ``join``), one unit per part
    (:func:`repltool.binlog.split.split_spans`): every file of at least twice the
    part size when :data:`SPLIT_CONF` is set (``--spark-split-size``), else the
    files :func:`balance_splits` picks for the executor cores (Spark's default
    parallelism) in parts of :data:`DEFAULT_SPLIT_SIZE`."""
    units = [Unit(i, (n,)) for i, n in enumerate(names)]
    joins = task.kind in SPLIT_KINDS and not task.stream
    if (not (joins or task.join is not None) or task.rows or task.keep_going
            or len(set(names)) != len(names)):
        return units
    size = split_size(spark)
    if size <= 0:
        return units
    from ..binlog.split import WHOLE, split_spans
    from ..errors import ReplToolError

    def spans_of(i: int) -> list[Any]:
        if is_uri(names[i]):
            return [WHOLE]
        try:
            return split_spans(names[i], size)
        except (ReplToolError, OSError):
            return [WHOLE]                  # the task reports it, reading the whole file
    if setting(spark, SPLIT_CONF) is not None:
        plan = {i: spans for i in range(len(names)) if len(spans := spans_of(i)) > 1}
    else:
        plan = balance_splits([_local_size(n) for n in names],
                              spark.sparkContext.defaultParallelism, size, spans_of)
    out: list[Unit] = []
    for u in units:
        if u.index in plan:
            out.extend(Unit(u.index, u.files, span, k) for k, span in enumerate(plan[u.index]))
        else:
            out.append(u)
    return out


def _local_size(name: str) -> int:
    """A local file's size; 0 for a URI (never split; its size is not known here) or a
    file that cannot be read (its task reports it)."""
    if is_uri(name):
        return 0
    try:
        return os.path.getsize(name)
    except OSError:
        return 0


def _join_split(spark: Any, task: Task, results: list[UnitResult], joined_parts: dict[int, int],
                reread: list[int]) -> list[UnitResult]:
    """Each split file's parts joined into its result; a file whose parts do not join
    exactly (or one of which failed) is read again whole (``joined_parts`` and
    ``reread`` get the file indexes)."""
    out: list[UnitResult] = []
    redo: list[Unit] = []
    i = 0
    while i < len(results):
        r = results[i]
        if r.unit.span is None:
            out.append(r)
            i += 1
            continue
        j = i
        while j < len(results) and results[j].unit.index == r.unit.index:
            j += 1
        parts = results[i:j]
        i = j
        joined: UnitResult | None = None
        if all(p.failure is None for p in parts):
            joined = (_join_stats if task.kind == "stats" else _join_sims)(parts)
        if joined is None:
            redo.append(Unit(r.unit.index, r.unit.files))
            reread.append(r.unit.index)
        else:
            out.append(joined)
            joined_parts[r.unit.index] = len(parts)
    if redo:
        again, _ = _phase(spark, task, redo)
        out.extend(again)
        out.sort(key=lambda r: r.unit.index)
    return out


def _joined_unit(parts: list[UnitResult]) -> Unit:
    return Unit(parts[0].unit.index, parts[0].unit.files)


def _join_stats(parts: list[UnitResult]) -> UnitResult | None:
    from ..stats import join_parts
    assert all(p.parts is not None and len(p.parts) == 1 for p in parts)
    fp = join_parts([p.parts[0] for p in parts],   # type: ignore[index]
                    [p.unit.span for p in parts])
    if fp is None:
        return None
    return UnitResult(_joined_unit(parts), count=fp.acc.trx, open_end=fp.open_end,
                      unknown_tables=fp.unknown_tables, parts=[fp])


def _join_sims(parts: list[UnitResult]) -> UnitResult | None:
    """``schedule``'s columns in file order: a later part's first transaction does not
    begin a source file (one read of the binlog marks only the file's first)."""
    from ..schedule.columns import SimColumns
    from ..schedule.source import SourceStats
    sims, stats = SimColumns(), SourceStats()
    for k, r in enumerate(parts):
        if k and parts[k - 1].open_end:
            return None
        part, st = r.payload
        if st.relay_log:
            return None
        if len(sims) and len(part):
            part.new_source_file[0] = 0
            st.source_files -= 1
        sims.extend_columns(part)
        stats.transactions += st.transactions
        stats.truncated_skipped += st.truncated_skipped
        stats.without_clock += st.without_clock
        stats.source_files += st.source_files
        stats.warnings.extend(st.warnings)
    return UnitResult(_joined_unit(parts), count=sum(p.count for p in parts),
                      open_end=parts[-1].open_end, payload=(sims, stats))


def _linked(prev: UnitResult, nxt: UnitResult, task: Task) -> bool:
    """Whether ``nxt`` must be read in one sequence with ``prev`` to give one read's figures."""
    if prev.failure is not None:
        return False
    return prev.open_end or (task.kind != "transactions" and nxt.unknown_tables)


def _mark_named(results: list[UnitResult]) -> None:
    """check: a unit whose tables' keys were unknown needs an earlier file that named them;
    a unit whose first clock W001 saw is no barrier after the units before needs them."""
    seen: set[str] = set()
    previous = None
    for r in results:
        if r.names_needed & seen:
            r.unknown_tables = True
        seen |= r.names_seen
        if r.w001 is not None:
            from ..check.engine import w001_continues
            if w001_continues(previous, r.w001[0]):
                r.unknown_tables = True
            previous = r.w001[1] if r.w001[1] is not None else previous


def run_distributed(spark: Any, names: Sequence[str], task: Task) -> SparkRun:
    """Run ``task`` over the files: one unit per file (per part of a large file, for the
    tasks of :data:`SPLIT_KINDS`: the parts' results are joined into the file's), then
    linked units read together.

    Rounds: each round reads the units whose results differ from what one
    ordered read would give (see :func:`_linked`) merged with their neighbour;
    every round has fewer units, so it ends, usually after the first.
    """
    units = _plan(spark, names, task)
    results, rdd = _phase(spark, task, units)
    joined: dict[int, int] = {}
    reread: list[int] = []
    sources: list[tuple[Any, set[int]]] = []        # (rdd, units of it still current)
    if rdd is not None:
        sources.append((rdd, {u.index for u in units}))
    if len(units) != len(names) and task.join is not None:
        # joined on the executors: the files whose parts did not join are read whole
        redo = [Unit(r.unit.index, r.unit.files) for r in results if r.joined < 0]
        joined.update((r.unit.index, r.joined) for r in results if r.joined > 0)
        if redo:
            reread.extend(u.index for u in redo)
            again, rdd = _phase(spark, task, redo)
            sources[0][1].difference_update(reread)
            sources.append((rdd, set(reread)))
            results = sorted([r for r in results if r.joined >= 0] + again,
                             key=lambda r: r.unit.index)
    elif len(units) != len(names):
        results = _join_split(spark, task, results, joined, reread)
    failures: list[FileFailure] = []
    while True:
        if task.keep_going:
            failures.extend(r.failure for r in results if r.failure is not None)
            results = [r for r in results if r.failure is None]
        _mark_named(results)
        segments: list[list[UnitResult]] = []
        for r in results:
            if segments and _linked(segments[-1][-1], r, task):
                segments[-1].append(r)
            else:
                segments.append([r])
        merged = [Unit(seg[0].unit.index, tuple(f for r in seg for f in r.unit.files))
                  for seg in segments if len(seg) > 1]
        if not merged:
            break
        again, rdd = _phase(spark, task, merged)
        redone = {r.unit.index: r for r in again}
        gone = {r.unit.index for seg in segments if len(seg) > 1 for r in seg}
        for _, current in sources:
            current -= gone
        sources.append((rdd, set(redone)))
        results = [redone[seg[0].unit.index] if len(seg) > 1 else seg[0] for seg in segments]
    run = SparkRun(results, failures, joined=joined, reread=reread)
    seq = 0
    for r in results:
        run.offsets[r.unit.index] = seq
        seq += r.count
    ok = {r.unit.index for r in results}
    for source, current in sources:
        keep = current & ok
        if keep and task.rows:
            run.row_rdds.append(source.filter(lambda r, keep=keep: r.unit.index in keep))
        if keep and task.stream:
            run.streamed.append(source.filter(lambda r, keep=keep: r.unit.index in keep))
    return run


def stream_results(run: SparkRun) -> Iterator[UnitResult]:
    """The run's full results (payload included), one at a time, in input order."""
    if not run.streamed:
        yield from run.results
        return
    rdd = run.streamed[0] if len(run.streamed) == 1 else run.streamed[0].context.union(
        run.streamed)
    arrived: dict[int, UnitResult] = {}
    incoming = rdd.toLocalIterator()
    for index in (r.unit.index for r in run.results):
        while index not in arrived:
            r = next(incoming)
            arrived[r.unit.index] = r
        yield arrived.pop(index)


def first_failure(run: SparkRun) -> FileFailure | None:
    for r in run.results:
        if r.failure is not None:
            return r.failure
    return None


def stitched(run: SparkRun) -> Iterator[Any]:
    """The transactions in input order; raises the first failure where a read would."""
    segments = resegmented()
    for r in stream_results(run):
        yield from segments(r, r.transactions or (), lambda trx: trx)
        if r.failure is not None:
            raise r.failure.exception()


def resegmented() -> Callable[[UnitResult, Iterable[Any], Callable[[Any], Any]], Iterator[Any]]:
    """Give each transaction the clock segment one ordered read gives it.

    A relay file read alone begins its own segment; in one ordered read it
    continues the source binlog of the relay file before it.  The returned
    function is called with the units' results in input order: it replays
    their FDE/Rotate headers through the reader's own segment tracker and
    corrects the ``segment`` of the items' transactions (``trx_of(item)``).
    """
    from ..binlog.transactions import Segments
    seg = Segments()

    def fix(result: UnitResult, items: Iterable[Any], trx_of: Callable[[Any], Any]
            ) -> Iterator[Any]:
        order = {f: i for i, f in enumerate(result.unit.files)}
        headers = iter(result.headers or ())
        pending = next(headers, None)
        for item in items:
            trx = trx_of(item)
            at = (order.get(trx.start.file, -1), trx.start.offset)
            while pending is not None and (order.get(pending.pos.file, -1),
                                           pending.pos.offset) < at:
                seg.see(pending)
                pending = next(headers, None)
            if trx.segment != seg.current and seg.current:
                fixed = replace(trx, segment=seg.current)
                item = fixed if item is trx else (fixed, *item[1:])
            yield item
        while pending is not None:
            seg.see(pending)
            pending = next(headers, None)
    return fix


def replay_warnings(result: UnitResult, seen: set[tuple[str, str]]) -> None:
    """Raise a unit's warnings again on the driver, once each as one ordered read would.

    The library warns once per subject (a table, an index) over a whole read
    and prefixes the first place it met it (``FILE:OFFSET: ``); every unit
    warns on its own, so the subject is what deduplicates: the one the
    library names (the write-set extractor's, whose message may differ from
    unit to unit for one subject, or be alike for two), else the message
    without that prefix.
    """
    from .. import writeset
    for category, message, subject in result.warnings or ():
        key = (category, subject if subject is not None else _without_place(message))
        if key in seen:
            continue
        seen.add(key)
        cls = getattr(writeset, category, None)
        if not (isinstance(cls, type) and issubclass(cls, Warning)):
            cls = UserWarning
        warnings.warn(cls(message), stacklevel=2)


def _without_place(message: str) -> str:
    import re
    return re.sub(r"^[^ ]*?:\d+(?:\+\d+)?: ", "", message, count=1)
