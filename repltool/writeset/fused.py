"""(transaction, writeset) pairs straight from log files, without Event objects.

:func:`read_writesets` gives what ::

    iter_writesets(read_transactions(paths, READ_OPTIONS, keep_events=True), schema)

gives (checksums verified unless told otherwise), several times faster on the
common shape of MySQL 5.7+ and MariaDB binlogs and relay logs.

With the compiled engine the core groups the transactions (the one grouper of
``repltool stats``: :class:`repltool.binlog.corescan.WritesetGroups`) and keeps the
Table_map and Rows bodies of each; its ``KeyDispatch`` then keys a whole
transaction in one call (``_wsdispatch.pxi``): the TableDef a table id means, the
shape of each Rows header (v1 and v2), the walk of every row image to its key
columns, the entry caches of the key-only extractor
(:mod:`repltool.writeset.fastkeys`) and, for ``dump --writesets``, the JSON text of
keys of integer columns.  Python is entered per transaction, and per event only for
what the core does not know yet (a new Table_map body or header shape, a cache
miss, an event left to the general route).  With the pure-Python engine the pairs
are the general path's: the general reader, the one transaction grouper
(:func:`~repltool.binlog.transactions.group_transactions`) and the extractor
(``WritesetExtractor.pairs``, its key-only row walks generated Python:
:mod:`repltool.binlog.rowwalk`, each Rows header's walk cached;
``TextWritesetExtractor.lines`` for ``dump --writesets``: keys built as JSON text).

Where the core meets anything outside its subset
(Transaction_payload, an unknown event type, a CRC mismatch, a truncated or
malformed event, a file that cannot be opened ...) it raises
:class:`~repltool.binlog.engine.Unsupported` (an error of the log - a
:class:`~repltool.errors.ReplToolError` - is turned into one).  With the compiled
engine the general reader then continues from the start of the first transaction
not yielded, in the grouper's state there (:class:`~repltool.binlog.corescan.Handover`,
as ``stats`` and ``schedule`` do).  The sequence is the general path's, element by
element, including its errors and warnings.  The transactions of the fast path carry no
events (``Transaction.events == ()``); everything else about them, and every
writeset, equals the general path's (``tests/writeset/test_fused.py``,
``test_hand_over.py``, corpus and synthetic logs).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Sequence
from typing import Any, Callable, Iterable, Iterator

from dataclasses import replace

from ..binlog import Event, ReadOptions, Transaction, read_events
from ..binlog.coltypes import TableDef, decode_table_map, table_body_cache
from ..binlog.constants import EventType
from ..binlog.corescan import Handover, WritesetGroups
from ..binlog.decode import DecodeContext
from ..binlog.engine import compiled_core
from ..binlog.events import TableMapBody
from ..binlog.fastdecode import FAST_DECODERS
from ..binlog.fastdecode import fast_table_map
from ..binlog.engine import Unsupported
from ..errors import ReplToolError
from ..positions import Position
from .extract import (
    KEY_WALK_ERRORS, READ_OPTIONS, SHAPES, SHAPES_PRUNE_MIN, SPILL_AT, Acc, TextWritesetExtractor,
    WritesetExtractor, book,
)
from .fastkeys import TableKeys
from .jsonl import RecordWriter, encode_key
from .model import HashedWriteset, MissingKey, TrxWriteset, WritesetError
from .schema import Schema

__all__ = ["read_writesets", "read_writeset_summaries", "iter_fast_writesets",
           "read_writeset_lines", "read_writeset_hashes", "resume_general", "hash_counts"]

Pair = tuple[Transaction, TrxWriteset]
_TMAP = int(EventType.TABLE_MAP_EVENT)
_new = tuple.__new__
_ROWS_V2 = (int(EventType.WRITE_ROWS_EVENT), int(EventType.UPDATE_ROWS_EVENT),
            int(EventType.DELETE_ROWS_EVENT))
_ROWS_V1 = (int(EventType.WRITE_ROWS_EVENT_V1), int(EventType.UPDATE_ROWS_EVENT_V1),
            int(EventType.DELETE_ROWS_EVENT_V1))
#: the compiled dispatch's kinds (v1 and v2 Rows events: the same images after the width)
_CORE_KIND = {**dict(zip(_ROWS_V2, ("insert", "update", "delete"))),
              **dict(zip(_ROWS_V1, ("insert", "update", "delete")))}
#: the row-shape caches (one entry per table id, Rows type and column bitmaps; the
#: core's KeyDispatch.shapes; the general extractor's is pruned alike): once they hold
#: SHAPES_PRUNE_MIN entries, and then twice what the last prune kept, the shapes of
#: TableDefs their table no longer has (``_FastRun.live``) are dropped, and all of them
#: when SHAPES_MAX / 2 or more are left.  A reopened table's new table id (MySQL: after
#: ALTER, FLUSH TABLES or a table-cache eviction; synth every ~1.3 MB) made them grow
#: with the log until SHAPES_MAX (bench/results/rssws.md).
SHAPES_MAX = SHAPES


def read_writesets(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                   schema: Schema | None = None, *, verify_checksum: bool = True,
                   **kw: Any) -> Iterator[Pair]:
    """``(transaction, writeset)`` for every transaction of the logs, in order.

    :param schema: key definitions (:func:`~repltool.writeset.load_schema`).
    :param verify_checksum: verify every CRC32 (as ``ReadOptions``).
    :param kw: :class:`~repltool.writeset.WritesetExtractor` options
        (``history_size``, ``table_maps``, ``strict``).
    """
    return _read(paths, schema, replace(READ_OPTIONS, verify_checksum=verify_checksum), None,
                 False, kw, None)


def read_writeset_hashes(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                         schema: Schema | None = None, *, verify_checksum: bool = True,
                         span: Any = None, **kw: Any) -> Iterator[tuple[Transaction, Any]]:
    """:func:`read_writesets` for consumers of the keys' hashes (``repltool certify``):
    where the compiled core keys a transaction, its write set is a
    :class:`~repltool.writeset.model.HashedWriteset` - the XXH64 hashes the
    ``WriteKey`` records would carry, computed in the core for integer keys and the
    ASCII values of string keys, and ``keys`` that describe them only when read
    (that transaction's events keyed again by the ``WriteKey``-building path; its
    hashes must be the same).  Elsewhere (the pure-Python engine, the general
    reader) the pairs are :func:`read_writesets`' own.  The flags
    (``limit_reached``, missing keys, FK parents ...) are :func:`read_writesets`'.

    :param span: one part of a single binlog (:class:`repltool.binlog.split.Span`):
        only the transactions from its start to its end, read with the state the
        file's Format_description sets (the compiled engine only: otherwise
        ``RuntimeError``).  A read that crosses the part's end raises
        :class:`~repltool.binlog.split.SplitMismatch`.
    """
    if span is not None and compiled_core() is None:
        raise RuntimeError("read_writeset_hashes(span=...) needs the compiled engine")
    return _read(paths, schema, replace(READ_OPTIONS, verify_checksum=verify_checksum), None,
                 False, kw, None, True, span)


def read_writeset_summaries(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                            schema: Schema | None = None, *, verify_checksum: bool = True,
                            span: Any = None, **kw: Any) -> Iterator[tuple[Any, TrxWriteset]]:
    """:func:`read_writesets` with, where the fast path reads, a
    :class:`~repltool.binlog.transactions.TransactionSummary` (the fields ``stats`` reads
    - ``start``, ``gtid``, the clock, ``kind`` ... - with the general path's values)
    instead of the full transaction: a quarter of the scan's time.  Where the
    general reader reads, the transactions are full ones.

    :param span: as :func:`read_writeset_hashes`' (the compiled engine only)."""
    if span is not None and compiled_core() is None:
        raise RuntimeError("read_writeset_summaries(span=...) needs the compiled engine")
    return _read(paths, schema, replace(READ_OPTIONS, verify_checksum=verify_checksum), None,
                 True, kw, None, span=span)


def read_writeset_lines(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                        schema: Schema | None = None, *, verify_checksum: bool = True,
                        keep_going: bool = False,
                        watch: Callable[[Iterable[Event]], Iterable[Event]] | None = None,
                        writer: RecordWriter | None = None, **kw: Any) -> Iterator[str]:
    """``writer.line(trx, ws)`` for every ``(trx, ws)`` of :func:`read_writeset_summaries`:
    the lines of ``repltool dump --writesets``.

    The fast path builds the JSON text of each key where it would build the
    :class:`~repltool.writeset.model.WriteKey` (:class:`TableKeys` with
    ``text=True``), and no ``TrxWriteset``; the lines are the same
    (``tests/writeset/test_jsonl.py``).

    :param keep_going: the general reader's ``ReadOptions.keep_going`` (it reads
        whatever the fast path leaves to it).
    :param watch: sees the general reader's events (``watch(events)`` yields them):
        ``repltool dump`` counts damage there.
    """
    options = replace(READ_OPTIONS, verify_checksum=verify_checksum, keep_going=keep_going)
    return _read(paths, schema, options, watch, True, kw,
                 writer if writer is not None else RecordWriter())


def _read(paths: Any, schema: Schema | None, options: ReadOptions,
          watch: Callable[[Iterable[Event]], Iterable[Event]] | None, light: bool,
          kw: dict[str, Any], writer: RecordWriter | None,
          hashed: bool = False, span: Any = None) -> Iterator[Any]:
    files = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) \
        else [os.fspath(p) for p in paths]
    if compiled_core() is None:
        # the pure-Python engine: the general path from the start (dump --writesets:
        # the keys built as JSON text where the key-only walk keys the rows)
        events = read_events(files, options)
        if watch is not None:
            events = watch(events)
        if writer is not None:
            yield from TextWritesetExtractor(schema, **kw).lines(events, writer)
            return
        yield from WritesetExtractor(schema, **kw).pairs(events)
        return
    maps = kw.get("table_maps")
    maps_before = dict(maps) if maps is not None else None
    fast = _FastRun(files, schema, options.verify_checksum, kw, light, writer, hashed)
    fast.span = span
    done = 0
    try:
        for pair in fast:
            yield pair
            done += 1
        return
    except Unsupported:
        pass
    rest = fast.rest
    if rest is not None:
        # the compiled engine: the general reader continues from the transaction the
        # core could not finish, with the grouper's state there and the extractor's
        # table maps, plans and warnings (its maps hold what the transactions before
        # that point mapped: a transaction is keyed only once complete)
        events = resume_general(rest, options)
        if span is not None:
            from ..binlog.split import within
            events = within(events, files[0], span.end)
        ex = fast.extractor
        ex.begin()
        state = rest.state()
        done = 0
    else:
        # no hand-over point (the core stopped before it knew one): start over,
        # skipping the pairs already yielded
        if maps is not None:                # as the caller gave them
            maps.clear()
            maps.update(maps_before or {})
        events = read_events(files, options)
        ex = WritesetExtractor(schema, **kw)
        ex._warned = fast.extractor._warned     # warn once, whichever path saw it first
        state = None
    if watch is not None:
        events = watch(events)
    # folded as the events stream (WritesetExtractor.pairs): no transaction's events kept
    for i, (trx, ws) in enumerate(ex.pairs(events, state=state)):
        if i >= done:
            yield (trx, ws) if writer is None else writer.line(trx, ws)


def resume_general(rest: Handover, options: ReadOptions) -> Iterator[Event]:
    """The general reader's events from a hand-over point of the compiled core on."""
    return rest.events(options)


def iter_fast_writesets(paths: Iterable[str | os.PathLike[str]], schema: Schema | None = None,
                        *, verify_checksum: bool = True, **kw: Any) -> Iterator[Pair]:
    """The fast path alone: raises :class:`~repltool.binlog.engine.Unsupported`
    where :func:`read_writesets` would switch to the general path."""
    return iter(_FastRun([os.fspath(p) for p in paths], schema, verify_checksum, kw))


#: transactions yielded in hash mode, described again, with table maps of earlier ones
_HASHED = [0, 0, 0]


def hash_counts() -> tuple[int, int, int]:
    """``(transactions keyed in hash mode, transactions whose keys were described
    again, hash-mode transactions with keys that used table maps of earlier
    transactions)`` in this process (:func:`read_writeset_hashes`; tests assert the
    hash mode and its paths ran)."""
    return _HASHED[0], _HASHED[1], _HASHED[2]


class _FastRun:
    """One pass of the compiled core's grouper with the core's key dispatch (the
    compiled engine only: with the pure-Python engine iterating raises
    :class:`~repltool.binlog.engine.Unsupported`)."""

    def __init__(self, files: list[str], schema: Schema | None, verify: bool,
                 kw: dict[str, Any], light: bool = False,
                 writer: RecordWriter | None = None, hashed: bool = False) -> None:
        self.files = files
        self.schema = schema
        self.kw = kw
        self.extractor = WritesetExtractor(schema, **kw)
        #: with a writer: yield its lines, the keys built as JSON text (``_text_keys``)
        self.writer = writer
        #: per table (db, table), of the TableDef it was last keyed under (as the
        #: extractor's own: a table's new id replaces its old one's)
        self._text_keys: dict[tuple[str, str], TableKeys] = {}
        self._text_shared: dict[Any, Any] = {}
        self.verify = verify
        self.light = light
        #: hash mode (:func:`read_writeset_hashes`): the core's entries are hashes
        self.hashed = hashed and writer is None
        self._describer: _FastRun | None = None
        #: the compiled core groups the transactions and hands back their Table_map
        #: and Rows events (:class:`~repltool.binlog.corescan.WritesetGroups`)
        self.scan: Any = _Structs()
        self.acc = Acc()
        self._structs: Any = None
        self._ctxs: dict[int, DecodeContext] = {}
        self._tds = table_body_cache()      # Table_map body bytes -> its TableDef (bounded)
        #: compiled engine: the core's KeyDispatch (a transaction's events keyed in one
        #: call), made per Format_description; Rows events it keyed / left to _general
        self.dispatch: Any = None
        self.fast_events = self.general_events = 0
        #: compiled engine: where the general reader continues once this run stopped
        self.rest: Handover | None = None
        #: one part of a single file (read_writeset_hashes(span=)); None: the files whole
        self.span: Any = None

    def _new_structs(self) -> None:
        structs = self._structs = self.scan.structs
        self._ctxs, self._tds = {}, table_body_cache()
        self._new_dispatch(structs)

    def _new_dispatch(self, structs: Any) -> None:
        core = compiled_core()
        self._count_dispatch()
        d = self.dispatch = core.KeyDispatch(
            _TMAP, self._tds.get, self._tm_miss, self.extractor.table_maps, self._shape_miss,
            self._general_at, self._spill_acc, KEY_WALK_ERRORS, MissingKey.NO_USABLE_KEY,
            SPILL_AT)
        layout = bytearray(256)
        for types, post, bit in ((_ROWS_V1, 8, 1), (_ROWS_V2, 10, 2)):
            for tc in types:
                if structs.post_header(tc, 0) == post:
                    layout[tc] = bit | (4 if _CORE_KIND[tc] == "update" else 0)
        d.set_layout(bytes(layout))
        d.prune_shapes(SHAPES_PRUNE_MIN, SHAPES_MAX, self.live)

    def _count_dispatch(self) -> None:
        """Add the current dispatch's counts to ``fast_events`` / ``general_events``."""
        d = self.dispatch
        if d is not None:
            self.fast_events += d.fast_events
            self.general_events += d.general_events
            d.fast_events = d.general_events = 0

    def _tm_miss(self, data: bytes, f: int, offset: int) -> TableDef:
        """A Table_map body the dispatch has not seen: its TableDef (cached)."""
        body = fast_table_map(data, self._ctx(_TMAP))
        if not isinstance(body, TableMapBody):
            raise Unsupported("Table_map not decoded")
        td = decode_table_map(body, pos=Position(self.files[f], offset, None))
        self._tds[data] = td
        return td

    def _general_at(self, tc: int, data: bytes, f: int, offset: int) -> None:
        self._general(tc, data, self.files[f], offset)

    def _spill_acc(self, acc: Acc) -> None:
        self._spill()

    def _shape_miss(self, tc: int, data: bytes, table_id: int, flags: int, p: int,
                    q: int, f: int, offset: int) -> Any:
        """The core's ``RowsShape`` of a Rows header (see :meth:`_shape`), or None.  The
        table's key plan is made here if it is not made yet (its warnings at this event,
        as the general route would give them), so the first Rows event of a table is
        keyed by the core too."""
        found = self._images(data, table_id, p, q, _CORE_KIND[tc] == "update",
                             _new(Position, (self.files[f], offset, None)))
        if found is None:
            return None
        td, fast, before, after, width = found
        core = compiled_core()
        try:
            first, second, specs = (fast.core_hash_keys if self.hashed else fast.core_keys)(
                core, before, after, width)
        except KEY_WALK_ERRORS:
            return None
        probe = Acc()
        skip_fk = book(fast.plan, flags, probe)
        return core.RowsShape(data[:q], tc, td, first, second, specs, not skip_fk,
                              probe.no_fk, next(iter(probe.parents), None),
                              next(iter(probe.missing.items()), None), self.hashed)

    def _images(self, data: bytes, table_id: int, p: int, q: int, update: bool,
                pos: Position | None = None
                ) -> tuple[TableDef, TableKeys, bytes, bytes | None, int] | None:
        """``(TableDef, its key extractor, before-image bitmap, after-image bitmap,
        width)`` of the Rows header whose column count ends at ``p`` (bitmaps up to
        ``q``), or None: the table is unknown or its keys are left to the general route."""
        width = data[p - 1]
        td = self.extractor.table_maps.get(table_id)
        if td is None:
            return None
        fast = self._table_keys(td, pos)
        if fast is None or width > len(td.columns) or td.table_id != table_id:
            return None
        nb = (width + 7) >> 3
        return td, fast, data[p:p + nb], data[p + nb:q] if update else None, width

    def _table_keys(self, td: TableDef, pos: Position | None = None) -> TableKeys | None:
        """The key-only extractor of ``td`` (text mode: its JSON twin): with ``pos`` (the
        compiled engine, a Rows event there) its plan made now if not made yet, else
        once the general route made it (else None)."""
        ex = self.extractor
        if not ex.key_only:
            return None
        if self.writer is None:
            return ex.plan_keys(td, pos) if pos is not None else ex.table_keys(td)
        fast = self._text_keys.get((td.db, td.table))
        if fast is None or fast.td is not td:
            base = ex.plan_keys(td, pos) if pos is not None else ex.table_keys(td)
            if base is None:
                return None
            fast = self._text_keys[td.db, td.table] = TableKeys(base.plan, td,
                                                                self._text_shared, text=True)
        return fast

    def _ctx(self, tc: int) -> DecodeContext:
        ctx = self._ctxs.get(tc)
        if ctx is None:
            # a decoder's result does not depend on the position (only its errors
            # would, and an error means starting over on the general path)
            ctx = self._ctxs[tc] = DecodeContext(self._structs, Position("", 0, None), tc)
        return ctx

    def _general(self, tc: int, data: bytes, path: str, offset: int) -> None:
        """A Rows event through :meth:`WritesetExtractor.rows` (the general route), its
        body decoded by the reader's decoder for the type (5.1 pre-GA Rows events stay
        undecoded, as :meth:`WritesetExtractor.event` receives them)."""
        decode = FAST_DECODERS.get(tc)
        body = decode(data, self._ctx(tc)) if decode is not None else None  # type: ignore[operator]
        table_id = getattr(body, "table_id", None)
        if table_id is None and len(data) >= 6:
            table_id = int.from_bytes(data[:6], "little")
        keys: list[Any] = self.acc.keys
        mark = len(keys)
        self.extractor.rows(tc, body, table_id, _new(Position, (path, offset, None)),
                            self.acc)
        if self.writer is not None:
            keys[mark:] = map(encode_key, keys[mark:])
        elif self.hashed:
            keys[mark:] = [k.hash for k in keys[mark:]]
        if len(keys) >= SPILL_AT:
            self._spill()

    def _spill(self) -> None:
        """Many keys pending: stored compactly (and MySQL's limit applied,
        ``WritesetExtractor.spill``), or their JSON texts joined in a chunk."""
        if self.hashed:
            acc = self.acc
            if acc.dropped is None:
                acc.dropped = array("Q")
            acc.dropped.extend(acc.keys)
            acc.keys.clear()
        elif self.writer is None:
            self.extractor.spill(self.acc)
        else:
            self.acc.spill_texts()

    def live(self, td: TableDef) -> bool:
        """False once ``td``'s table was keyed under a later TableDef (MySQL gives a
        reopened table a new table id): the row shapes of ``td`` go when the shape
        caches are pruned (a shape is only a cache: one of ``td`` needed again is
        built again, the same)."""
        return self.extractor.table_keys(td) is not None

    def _pair(self, trx: Transaction) -> Any:
        acc, self.acc = self.acc, Acc()
        if self.writer is None:
            return trx, self.extractor.result(acc, trx.kind)
        keys: list[Any] = acc.keys      # JSON texts; the flags as ``result`` sets them
        count = len(keys) + acc.spilled
        if acc.texts:
            keys = acc.texts + keys if keys else acc.texts
        return self.writer.record(trx, keys, (
            trx.kind == "ddl", acc.rows == 0, tuple(acc.missing), tuple(acc.parents),
            count > self.extractor.history_size))

    def _hash_pair(self, trx: Transaction, events: list[Any]) -> Pair:
        """Hash mode: ``(trx, HashedWriteset)`` of the transaction keyed into ``acc``
        (hashes, spilled ones in ``acc.dropped``) from ``events``."""
        acc, self.acc = self.acc, Acc()
        ex = self.extractor
        keys: list[int] = acc.keys      # type: ignore[assignment]
        spilled = acc.dropped
        if spilled is not None:
            spilled.extend(keys)
            hashes: Sequence[int] = spilled
        else:
            hashes = tuple(keys)
        size = len(hashes)
        limit = size > ex.history_size
        described: Sequence[Any] = ()
        if size and not (limit and ex.drop_past_limit and spilled is not None):
            # a dropped write set keeps no descriptions: WritesetExtractor.spill drops
            # it when the keys spilled (SPILL_AT pending, the same points here) are
            # past the limit; one that never spilled keeps its keys
            # the mappings of earlier transactions its Rows events used, as they were
            # then (the maps now also hold what this transaction mapped)
            borrowed = self.dispatch.borrowed
            maps = None
            if borrowed:
                maps = {tid: td for tid, td in borrowed if td is not None}
                _HASHED[2] += 1
            described = _Described(self, events, self._structs, maps, hashes)
        _HASHED[0] += 1
        missing = acc.missing
        return trx, _new(HashedWriteset, (
            hashes, described, trx.kind == "ddl", acc.rows == 0, tuple(missing),
            tuple(acc.parents), limit, acc.no_fk,
            tuple(missing.values()) if missing else ()))

    def describe(self, events: list[Any], structs: Any, maps: dict[int, Any] | None
                 ) -> list[Any]:
        """The ``WriteKey`` records of a transaction's ``events`` (hash mode's
        :class:`_Described`): keyed again, by a run of its own in object mode (its
        table maps: ``maps``, the ones the transaction borrowed from earlier ones, or
        none), every key kept."""
        d = self._describer
        if d is None:
            kw = dict(self.kw, table_maps={}, drop_past_limit=False)
            d = self._describer = _FastRun(self.files, self.schema, self.verify, kw)
            d.extractor._warned = self.extractor._warned    # warn once
        if d._structs is not structs:
            d.scan.structs = structs
            d._new_structs()
        tables = d.extractor.table_maps
        tables.clear()
        if maps:
            tables.update(maps)
        d.acc = Acc()
        d.dispatch.run(events, d.acc)
        _HASHED[1] += 1
        return list(d.extractor.result(d.acc, "dml").keys)

    def __iter__(self) -> Iterator[Pair]:
        return self._core_pairs()

    def _core_pairs(self) -> Iterator[Pair]:
        """The compiled engine: the core's groups, each transaction's events keyed by
        the core's dispatch in one call.  Where the core stops, or a transaction's
        events cannot be keyed (a damaged Table_map or row image: the general path
        words the error), :attr:`rest` is set to the hand-over at the start of the
        first transaction not yielded and :class:`Unsupported` raised."""
        files, pair, holder = self.files, self._pair, self.scan
        hashed = self.hashed
        groups = WritesetGroups(files, verify_checksum=self.verify, summaries=self.light,
                                starts_only=self.writer is not None)
        groups.scan.span = self.span
        try:
            for structs, batch in groups:
                holder.structs = structs
                if self._structs is not structs:
                    self._new_structs()
                run = self.dispatch.run
                for trx, events in batch:
                    try:
                        run(events, self.acc)
                    except (ReplToolError, Unsupported) as exc:
                        why = exc.reason if isinstance(exc, Unsupported) else \
                            f"{type(exc).__name__}: {exc}"
                        self.rest = groups.hand_over(trx, events[0][3], why)
                        raise Unsupported(why) from exc
                    yield self._hash_pair(trx, events) if hashed else pair(trx)
        finally:
            self._count_dispatch()
        if groups.error is not None:
            self.rest = groups.rest
            exc = groups.error
            if isinstance(exc, Unsupported):
                raise exc
            raise Unsupported(str(exc)) from exc

class _Described(Sequence[Any]):
    """The ``keys`` of a :class:`~repltool.writeset.model.HashedWriteset`: as many as
    its hashes; the first read keys the transaction's events again by the
    ``WriteKey``-building path (:meth:`_FastRun.describe`), whose hashes must be the
    hash mode's."""

    __slots__ = ("_run", "_events", "_structs", "_maps", "_hashes", "_keys")

    def __init__(self, run: _FastRun, events: list[Any], structs: Any,
                 maps: dict[int, Any] | None, hashes: Sequence[int]) -> None:
        self._run, self._events, self._structs, self._maps = run, events, structs, maps
        self._hashes = hashes
        self._keys: list[Any] | None = None

    def __len__(self) -> int:
        return len(self._hashes)

    def _all(self) -> list[Any]:
        keys = self._keys
        if keys is None:
            keys = self._run.describe(self._events, self._structs, self._maps)
            if [k.hash for k in keys] != list(self._hashes):
                raise WritesetError("the keys described again do not hash to the write "
                                    "set's hashes (a bug of repltool)")
            self._keys = keys
            self._run = self._events = self._maps = None     # type: ignore[assignment]
        return keys

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]


class _Structs:
    """The ``structs`` of the batch being keyed (compiled engine; see ``_FastRun``)."""

    structs: Any = None
