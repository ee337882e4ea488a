"""Units of work on the executors: one file (or linked files) in, a picklable result out.

Nothing but path names and small frozen option values goes to an executor; the
construct structs are rebuilt there from each file's FDE by the reader, and
only dataclasses of plain values come back.  The per-command work lives in
:mod:`.pairs` (certify, explain) and :mod:`.checkjob` (check), named by the task
(``Task.run``) so that this module imports neither; this module
holds the common frame: tasks, units, results, URI records, stats and
transactions.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from .. import errors
from ..errors import ReplToolError
from .frame import row_sink
from .session import settle_worker

if TYPE_CHECKING:                     # pragma: no cover
    from ..stats import FilePart

@dataclass(frozen=True)
class FileFailure:
    """A file that could not be read: the library error's class, message and exit status."""

    file: str
    error: str
    message: str
    exit_code: int

    def exception(self) -> ReplToolError:
        cls = getattr(errors, self.error, None)
        if not (isinstance(cls, type) and issubclass(cls, ReplToolError)):
            cls = ReplToolError
        exc = cls(self.message)
        return exc




@dataclass(frozen=True)
class Task:
    kind: str                     # "stats" | "transactions" | "sims" | "pairs" | "certify" | "check[part]"
    verify_checksum: bool = True
    keep_going: bool = False
    top: int = 5
    rows: bool = False            # also make DataFrame rows
    stream: bool = False          # results come to the driver one by one (toLocalIterator)
    extra: Any = None             # the command's own frozen settings (pairs, check)
    cwd: str | None = None        # the driver's working directory (relative local names)
    # the command's own unit (pairs, certify, check: a module-level function of the
    # module that made the task, pickled by name); None: stats or transactions here
    run: Callable[[Task, Unit], UnitResult] | None = None
    # a large file read in parts whose results are joined on the executors: a second
    # stage, one task per file, gets its parts' results in any order (``join(task,
    # (file index, part result) records)`` yields one result per file; a module-level
    # function, pickled by name); None: the parts are joined on the driver
    # (repltool.distributed.driver.SPLIT_KINDS) or the task is not split
    join: Callable[[Task, Iterable[tuple[int, UnitResult]]], Iterator[UnitResult]] | None = None


@dataclass(frozen=True)
class Unit:
    index: int                    # input index of the first file
    files: tuple[str, ...]
    # one part of a single large file (repltool.binlog.split); None: the whole files
    span: Any = None
    part: int = 0                 # the span's place among the file's parts


@dataclass
class UnitResult:
    unit: Unit
    failure: FileFailure | None = None
    count: int = 0                # transactions read (truncated included)
    open_end: bool = False        # the last file ends inside a group
    unknown_tables: bool = False  # a rows event (or key lookup) needs a Table_map of an earlier file
    parts: list[FilePart] | None = None                    # stats
    transactions: Any = None      # transactions: a list or their Columns (iterable)
    headers: list[Any] | None = None  # the FDE and Rotate events (no bytes), in read order
    rows: list[tuple[Any, ...]] | None = None
    payload: Any = None           # pairs, check: the command's per-unit results
    # (category, message, subject or None) raised here
    warnings: list[tuple[str, str, str | None]] | None = None
    first: Any = None             # pairs: the first transaction read (slim)
    names_needed: frozenset[str] = frozenset()   # check: tables whose keys were unknown here
    names_seen: frozenset[str] = frozenset()     # check: tables a FULL-metadata Table_map named
    w001: Any = None              # check parts: W001's first clock and last sequence_number
    written: Any = None           # certify --output: ("written", reports) | ("unseen", host) | ...
    # a part of a task with ``join``: -1 when it cannot be joined (read the file whole);
    # a result joined from parts: how many
    joined: int = 0


def unit_failure(exc: ReplToolError, unit: Unit) -> FileFailure:
    where = exc.pos.file if exc.pos is not None else unit.files[-1]
    return FileFailure(where, type(exc).__name__, str(exc), exc.exit_code)


def absolute_import_paths() -> None:
    """Make this worker's import paths absolute, so that changing directory keeps them valid.

    PySpark puts the files of ``addPyFile``/``--py-files`` on ``sys.path`` as
    paths relative to the executor's working directory (``./repltool-….zip``);
    after a ``chdir`` the lazy imports of the library would not find them.
    """
    import sys
    sys.path[:] = [os.path.abspath(p) if p and not os.path.isabs(p) else p for p in sys.path]
    for module in list(sys.modules.values()):
        path = getattr(module, "__path__", None)
        if isinstance(path, list) and any(p and not os.path.isabs(p) for p in path):
            path[:] = [os.path.abspath(p) if p and not os.path.isabs(p) else p for p in path]


@contextmanager
def working_directory(path: str | None) -> Iterator[None]:
    """Run the block in ``path`` (import paths made absolute first); ``None``: stay."""
    if path is None:
        yield
        return
    absolute_import_paths()
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_local_unit(task: Task, unit: Unit) -> UnitResult:
    """A unit of local paths: relative ones are taken from the driver's working directory.

    That directory must exist on the executor (``local[*]``, or a file system
    every node mounts at the same place); a Python worker runs one task at a
    time, so changing its working directory is safe.
    """
    settle_worker()
    relative = any(not os.path.isabs(f) for f in unit.files)
    cwd = task.cwd if relative and task.cwd and os.path.isdir(task.cwd) else None
    with working_directory(cwd if cwd != os.getcwd() else None):
        return _run_unit(task, unit)


def _run_unit(task: Task, unit: Unit) -> UnitResult:
    """Analyse one unit's files (read as one ordered sequence) where they are."""
    if task.kind == "stats":
        return _stats_unit(task, unit)
    if task.kind == "sims":
        return _sims_unit(task, unit)
    if task.run is not None:
        return task.run(task, unit)
    return _transactions_unit(task, unit)


@contextmanager
def captured_warnings(result: UnitResult) -> Iterator[None]:
    """Record the warnings the library raises here as ``(category, message, subject)`` on
    ``result`` (``subject``: what the library warns once about, when it says),
    after those recorded on it before (a unit read in one step and certified in the next
    keeps both steps' warnings, in the order they were raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            result.warnings = [*(result.warnings or ()),
                               *((type(w.message).__name__, str(w.message),
                                  getattr(w.message, "subject", None)) for w in caught)]

def run_uri_records(task: Task, units: dict[str, Unit],
                     records: Iterable[tuple[str, bytes]]) -> Iterator[UnitResult]:
    """``binaryFiles`` records -> results: one unit per record."""
    settle_worker()
    for name, data in records:
        yield _in_private_dir(task, units[name], {name: data})


def run_uri_unit(task: Task, unit: Unit,
                  records: Iterable[tuple[str, bytes]]) -> Iterator[UnitResult]:
    """All the files of one multi-file unit (one partition) -> its result."""
    settle_worker()
    yield _in_private_dir(task, unit, dict(records))


def _in_private_dir(task: Task, unit: Unit, contents: dict[str, bytes]) -> UnitResult:
    # The file is written at its URI taken as a relative path (POSIX folds the
    # '//'), and read with the URI as the path from that directory: positions
    # and messages then name it by its URI.  A Python worker runs one task at
    # a time, so changing its working directory is safe.
    with tempfile.TemporaryDirectory(prefix="repltool-") as root:
        for name in unit.files:
            dest = os.path.join(root, name)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as fh:
                fh.write(contents[name])
        with working_directory(root):
            return _run_unit(task, unit)


def _stats_unit(task: Task, unit: Unit) -> UnitResult:
    from ..stats import accumulate_stats
    result = UnitResult(unit)
    rows: list[tuple[Any, ...]] | None = [] if task.rows else None
    sink = row_sink(unit, rows) if rows is not None else None
    try:
        parts = accumulate_stats(unit.files, verify_checksum=task.verify_checksum,
                                 top=task.top, keep_going=task.keep_going, sink=sink,
                                 span=unit.span)
    except ReplToolError as exc:
        result.failure = unit_failure(exc, unit)
        return result
    result.parts = parts
    result.count = sum(p.acc.trx for p in parts)
    result.open_end = parts[-1].open_end
    result.unknown_tables = any(p.unknown_tables for p in parts)
    result.rows = rows
    return result


def segment_tap(events: Iterable[Any], headers: list[Any]) -> Iterator[Any]:
    """Pass ``events`` on; keep their FDE and Rotate events (bytes dropped) in ``headers``.

    They are what decides a transaction's clock segment (the source binlog of
    a relay log, which continues from the previous relay file) and the
    source rotations ``schedule`` replays.
    """
    from ..binlog.constants import EventType
    watched = (EventType.FORMAT_DESCRIPTION_EVENT, EventType.ROTATE_EVENT)
    for ev in events:
        if ev.type_code in watched and ev.pos.payload_offset is None:
            headers.append(ev._replace(raw=b""))
        yield ev


def _transactions_unit(task: Task, unit: Unit) -> UnitResult:
    from ..binlog import ReadOptions, read_events
    from ..binlog.transactions import GROUPING_TYPES, group_transactions
    result = UnitResult(unit, transactions=[], headers=[])
    opts = ReadOptions(verify_checksum=task.verify_checksum, types=GROUPING_TYPES,
                       keep_raw=False, keep_going=task.keep_going)
    rows: list[tuple[Any, ...]] | None = [] if task.rows else None
    sink = row_sink(unit, rows) if rows is not None else None
    trxs = result.transactions
    assert trxs is not None
    try:
        events = segment_tap(read_events(list(unit.files), opts), result.headers)
        for trx in group_transactions(events):
            trxs.append(trx)
            if sink is not None:
                sink(trx)
    except ReplToolError as exc:
        result.failure = unit_failure(exc, unit)
    result.count = len(trxs)
    result.open_end = result.failure is None and bool(trxs) and trxs[-1].truncated
    result.rows = rows
    if trxs and not any(trx.events for trx in trxs):
        from .columns import pack
        result.transactions = pack(trxs, skip=("events",))     # columns, not object trees
    return result




def _sims_unit(task: Task, unit: Unit) -> UnitResult:
    """``schedule``: the unit's simulator input as int64/float64 columns, costs applied
    (``task.extra``: a per-transaction cost model), and its :class:`SourceStats`."""
    from ..binlog import ReadOptions, read_events
    from ..binlog.corescan import scan_clock_transactions
    from ..binlog.transactions import GROUPING_TYPES, group_transactions
    from ..schedule.columns import SimColumns
    from ..schedule.source import SourceRotations, SourceStats, transactions_to_sim
    result = UnitResult(unit)
    stats = SourceStats()
    rotations = SourceRotations()
    opts = ReadOptions(verify_checksum=task.verify_checksum, types=GROUPING_TYPES,
                       keep_raw=False)
    last: list[Any] = [None]

    def tap(trxs: Iterable[Any]) -> Iterator[Any]:
        for trx in trxs:
            last[0] = trx
            yield trx
    try:
        # the compiled core's clock records, as the single-process schedule reads them
        trxs = scan_clock_transactions(list(unit.files), opts, watch=rotations.watch,
                                       span=unit.span)
        if trxs is None:                # the pure-Python engine: the general reader
            state = None
            if unit.span is None:
                events = read_events(list(unit.files), opts)
            else:
                from ..binlog.split import span_read
                events, state = span_read(unit.files[0], unit.span, opts)
            trxs = group_transactions(rotations.watch(events), state=state)
        sims = SimColumns(transactions_to_sim(tap(trxs), task.extra, relay=rotations,
                                              lenient=True, stats=stats))
    except ReplToolError as exc:
        result.failure = unit_failure(exc, unit)
        return result
    result.count = stats.transactions + stats.truncated_skipped
    result.open_end = last[0] is not None and last[0].truncated
    result.payload = (sims, stats)
    return result
