"""Row events -> writesets, the way MySQL 8.0.43's ``add_pke`` builds them.

Per row image (after image first, then before image; format-spec §6b,
``sql/rpl_write_set_handler.cc`` add_pke, ``sql/handler.cc`` binlog_log_row):

1. A table without a usable key (no PRIMARY KEY and no promotable UNIQUE key,
   ``TABLE_SHARE::primary_key == MAX_KEY``, see :mod:`repltool.writeset.schema`)
   hashes nothing: the table goes to ``missing_key_tables`` (and, even when
   other tables reference it, not to ``fk_parent_tables``: add_pke sets
   ``has_related_foreign_keys`` only for tables with a primary key).
2. Otherwise every unique index (PRIMARY first) whose parts are all non-NULL
   gives ``index ½ db ½ len(db) table ½ len(table)`` followed by ``sortkey ½
   len(sortkey)`` per part, hashed with XXH64 (seed 0).  A key with a column
   *prefix* part or a VARCHAR/VARBINARY part (sort-key length unlike the pack
   length) also gets 8.0's second, full-column ("old format") entry; both
   count toward the write-set size.
3. Unless the Rows event has ``NO_FOREIGN_KEY_CHECKS_F``: one entry per
   foreign key that references a unique constraint of the parent:
   ``parent_constraint ½ parent_db ½ len parent_table ½ len`` followed by
   ``sortkey ½ len`` of each non-NULL FK column in the FK's column order (all
   NULL: the prefix alone) - the parent row's key string for a single- or
   multi-column key.  (MySQL 5.7 and 8.0 before the multi-column FK fix hashed
   one entry per FK column; repltool follows 8.0.43 for every server version.)
4. A table with a usable key that is referenced by a foreign key sets
   ``fk_parent_tables``.

MySQL hashes the full records; the log may carry partial images
(``binlog_row_image=MINIMAL`` or ``NOBLOB``).  A key column absent from an
UPDATE's after image was not written, so it is taken from the before image;
a key or FK column absent otherwise leaves the row's keys unknown: the table
counts as missing a key (safe: the commit-order parent is kept), with a
:class:`~repltool.writeset.model.WritesetWarning` once per table.

Where the key definitions come from: the :class:`~repltool.writeset.schema.Schema`
when one is given and it knows the table; otherwise the Table_map's primary key
(optional metadata SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX, written with
``binlog_row_metadata=FULL``).  A table the schema does not know is reported
once with a :class:`~repltool.writeset.model.SchemaWarning` and falls back to
the Table_map.  A table the schema knows but whose key columns the Table_map
does not match (a key column missing by name, or a column count that differs
without names to match by) counts as missing a key, with a SchemaWarning
(``strict=True``: a :class:`~repltool.writeset.model.SchemaMismatch` error):
its UNIQUE and FK keys cannot be evaluated.  UNIQUE keys over expressions
(functional indexes) cannot be evaluated from the log either: such tables
count as missing a key (safe: the tracker then keeps the commit-order parent).
A Table_map column ``my_row_id`` the schema lacks, on a table without a
declared PRIMARY KEY, is MySQL's generated invisible primary key (GIPK).
"""

from __future__ import annotations

import dataclasses
import struct
import warnings
from array import array
from typing import Any, Iterable, Iterator

import xxhash

from ..binlog import ReadOptions, Transaction
from ..binlog.coltypes import ColumnDef, ColumnType, TableDef, decode_table_map, table_def_cache
from ..binlog import structs as S
from ..binlog.constants import HEADER_LEN, ROWS_TYPES, EventType
from ..binlog.events import Event, RowsBody, TableMapBody
from ..binlog.rows import BadValue, iter_row_changes
from ..binlog.transactions import GROUPING_TYPES, GroupingState, group_transactions
from ..errors import ReplToolError
from ..positions import Position
from .collation import UNKNOWN, Collation, collation_by_id, collation_by_name
from .model import (
    KeyList, MissingKey, SchemaMismatch, SchemaWarning, TrxWriteset, WriteKey, WritesetError,
    WritesetWarning,
)
from .fastkeys import TableKeys
from .jsonl import RecordWriter, encode_key
from .plan import Fk, Key, Part, Plan, add_image, key_string
from .schema import IndexSchema, KeyPart, Schema, TableSchema
from .sortkey import sort_key_builder, string_key_problem

__all__ = ["writeset_of", "iter_writesets", "stream_writesets", "WritesetExtractor",
           "GeneralWritesetExtractor", "KEY_WALK_ERRORS", "READ_OPTIONS",
           "key_string", "xxh64", "writeset_record", "SPILL_AT"]

#: pending keys of a transaction move into its compact :class:`KeyList` in batches
#: of at least this many (:meth:`WritesetExtractor.spill`, after a Rows event): a
#: write set of fewer keys stays the tuple of its :class:`WriteKey` objects
SPILL_AT = 1024

NO_FOREIGN_KEY_CHECKS_F = 0x2

#: Rows headers whose keying :meth:`WritesetExtractor.rows` remembers before the
#: cache starts over; it is pruned of the headers of table ids that map another
#: table now first at SHAPES_PRUNE_MIN entries, then at twice what a prune kept (the
#: compiled dispatch's shape cache follows the same bounds:
#: :mod:`repltool.writeset.fused`)
SHAPES = 4096
SHAPES_PRUNE_MIN = 64
#: Table_map bodies :meth:`WritesetExtractor.table_map` looks up by identity before
#: it starts over (each one seen again is then decoded through the bounded cache of
#: :func:`~repltool.binlog.coltypes.decode_table_map`)
TABLE_MAP_BODIES = 256

#: What the reader must decode for writesets (plus the grouping types).
READ_OPTIONS = ReadOptions(types=frozenset(
    {*GROUPING_TYPES, int(EventType.TABLE_MAP_EVENT), *(int(t) for t in ROWS_TYPES)}))


def xxh64(data: bytes) -> int:
    """XXH64 with seed 0, as ``MY_XXH64(data, len, 0)``."""
    return xxhash.xxh64_intdigest(data)


class Acc:
    """What one transaction's Rows events have added so far (see :meth:`WritesetExtractor.rows`).

    ``keys``: the keys the walks appended since the last
    :meth:`~WritesetExtractor.spill`; ``store``: the earlier ones, compact;
    ``dropped``: the hashes of a write set dropped past the limit (then no key is kept);
    ``texts``/``spilled``: for ``dump --writesets``' JSON texts of keys, the earlier
    ones joined in chunks (``", "``-separated) and how many keys they hold.
    """

    __slots__ = ("keys", "missing", "parents", "rows", "no_fk", "store", "dropped", "texts",
                 "spilled")

    def __init__(self) -> None:
        self.keys: list[WriteKey] = []
        self.missing: dict[str, str] = {}       # db.table -> MissingKey reason
        self.parents: dict[str, None] = {}
        self.rows = 0
        self.no_fk = False
        self.store: KeyList | None = None
        self.dropped: array[int] | None = None
        self.texts: list[str] | None = None
        self.spilled = 0

    def spill_texts(self) -> None:
        """Join the pending JSON texts of keys into one chunk (``dump --writesets``:
        one ``str`` per :data:`SPILL_AT` keys instead of one per key)."""
        if self.texts is None:
            self.texts = []
        self.texts.append(", ".join(self.keys))     # type: ignore[arg-type]
        self.spilled += len(self.keys)
        self.keys.clear()


class WritesetExtractor:
    """Stateful writeset builder: Table_maps (carried across transactions and
    relay files) and per-table key plans.

    :param schema: key definitions (``None``: Table_map primary keys only).
    :param history_size: MySQL's ``binlog_transaction_dependency_history_size``.
    :param table_maps: ``table_id -> TableDef``, updated in place.
    :param strict: raise :class:`SchemaMismatch` instead of warning.
    :param default_collation: the collation of string key columns whose
        collation neither the log (``binlog_row_metadata=MINIMAL``, MySQL 5.7,
        MariaDB's default) nor the schema gives; ``None``: such columns have an
        unknown collation and their tables count as missing keys.
    :param drop_past_limit: MySQL's rule for a server where no component requires
        the full write set (the WRITESET trackers without Group Replication): a
        write set that grows past ``history_size`` keys is dropped
        (``limit_reached``, ``keys`` empty; see :meth:`spill`), so a transaction's
        keys cost memory up to the history size, not its row count.  ``False``
        (Group Replication's certification, ``dump --writesets``): every key is kept.
    :param warned: the warnings already given (their tags, updated in place), shared
        by the extractors of one run so that each is given once, whichever gave it
        first (default: the schema's, else a set of this extractor's own).
    """

    def __init__(self, schema: Schema | None = None, *, history_size: int = 25000,
                 table_maps: dict[int, TableDef] | None = None, strict: bool = False,
                 default_collation: str | None = None, drop_past_limit: bool = False,
                 warned: set[Any] | None = None) -> None:
        self.schema = schema
        self.drop_past_limit = drop_past_limit
        self.default_collation = default_collation
        #: decode only the key columns of each row image (:mod:`repltool.writeset.fastkeys`;
        #: same writesets and errors, several times faster); False in
        #: :class:`GeneralWritesetExtractor`
        self.key_only = True
        #: Rows events the key-only walk handed to the general decoder
        self.fallbacks = 0
        #: Rows events keyed by the walk cached for their header (:meth:`rows`)
        self.shaped = 0
        self._shapes: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._prune_at = SHAPES_PRUNE_MIN       # the shape cache's next prune (_live_shapes)
        self._tm_bodies: dict[int, tuple[TableMapBody, TableDef]] = {}
        # per table (db, table): the key extractor and plan of the TableDef it was last
        # keyed under.  Not per TableDef: a reopened table gets a new table id (and
        # TableDef) in MySQL, so a long log's old ids would pile up - here the next id
        # replaces them (memory follows the tables, not the log's length)
        self._fast_keys: dict[tuple[str, str], TableKeys] = {}
        self._entry_caches: dict[Any, Any] = {}
        self._parts: dict[tuple[ColumnDef, Any, int], Part] = {}
        self.history_size = history_size
        self.table_maps: dict[int, TableDef] = (table_maps if table_maps is not None
                                                else table_def_cache())  # type: ignore[assignment]
        self.strict = strict
        self._plans: dict[tuple[str, str], tuple[TableDef, Plan]] = {}
        self._warned: set[Any] = (warned if warned is not None else
                                  schema._warned if schema is not None else set())
        self.begin()

    @property
    def warned(self) -> set[Any]:
        """The warnings given so far (their tags): see ``warned`` above."""
        return self._warned

    def table_keys(self, td: TableDef) -> TableKeys | None:
        """The key-only extractor of ``td``, once a Rows event of it went through
        :meth:`rows` (which makes its plan); else None."""
        fast = self._fast_keys.get((td.db, td.table))
        return fast if fast is not None and fast.td is td else None

    def plan_keys(self, td: TableDef, pos: Position | None) -> TableKeys:
        """The key-only extractor of ``td``, its plan made now if it is not made yet
        (what :meth:`rows` does for a Rows event of ``td`` at ``pos``: the same
        warnings)."""
        fast = self._fast_keys.get((td.db, td.table))
        if fast is None or fast.td is not td:
            fast = self._fast_keys[td.db, td.table] = TableKeys(self._plan(td, pos), td,
                                                                self._entry_caches)
        return fast

    def _row_keys(self, td: TableDef, pos: Position | None) -> TableKeys:
        """The key-only extractor :meth:`rows` keys ``td``'s rows with."""
        return self.plan_keys(td, pos)

    # ---- transactions ----

    def writeset(self, trx: Transaction) -> TrxWriteset:
        """The writeset of one transaction (read with ``keep_events=True``)."""
        self.begin()
        for ev in trx.events:
            self.event(ev)
        return self.take(trx.kind)

    # ---- streaming: a transaction's events folded as they come ----

    def begin(self) -> None:
        """Start a transaction's write set (:meth:`event` then :meth:`take`)."""
        self._acc = Acc()
        self._error: ReplToolError | None = None

    def event(self, ev: Event, opens: bool = False) -> None:
        """Fold one event of the open transaction into its write set; ``opens``: the
        transaction's first event (the state starts over).  An error is kept for
        :meth:`take`, so this can be a :func:`~repltool.binlog.group_transactions`
        tap.  Holds the keys and flags the result needs, never the events."""
        if opens:
            self.begin()
        if self._error is not None:
            return
        body = ev.body
        try:
            if isinstance(body, TableMapBody):
                self.table_map(body, ev.pos)
            elif ev.type_code in _ROWS:
                if body is None:
                    raise WritesetError("rows event body not decoded: read the log with "
                                        "repltool.writeset.READ_OPTIONS", pos=ev.pos)
                table_id = getattr(body, "table_id", None)
                if table_id is None and len(ev.raw) >= _TABLE_ID.stop:
                    table_id = int.from_bytes(ev.raw[_TABLE_ID], "little")
                acc = self._acc
                self.rows(ev.type_code, body, table_id, ev.pos, acc)
                if len(acc.keys) >= SPILL_AT:
                    self.spill(acc)
        except ReplToolError as exc:
            self._error = exc

    def take(self, kind: str) -> TrxWriteset:
        """The write set of the transaction whose events went to :meth:`event`
        (``kind``: its :attr:`Transaction.kind`); the state starts over.

        :raises ReplToolError: what folding one of its events raised."""
        acc, error = self._acc, self._error
        self.begin()
        if error is not None:
            raise error
        return self.result(acc, kind)

    def pairs(self, events: Iterable[Event], state: GroupingState | None = None
              ) -> Iterator[tuple[Transaction, TrxWriteset]]:
        """``(transaction, writeset)`` of every group of ``events`` (read with
        :data:`READ_OPTIONS`), grouped by :func:`~repltool.binlog.group_transactions`
        with this extractor as its tap: no transaction's events are kept, so memory
        follows the write set (its keys), not the events (a payload of millions of
        tiny Rows events).  The transactions carry no events, except a GR
        View_change transaction: its View_change event
        (:func:`repltool.certify.source.is_view_change`).

        :param state: the grouper's state where ``events`` begin (a read the compiled
            core began: :class:`~repltool.binlog.corescan.Handover`)."""
        seen: list[Event] = []
        event, keyed = self.event, _KEYED

        def tap(ev: Event, opens: bool) -> None:
            if opens:
                seen.clear()
                self.begin()
            tc = ev.type_code
            if tc in keyed:             # only these change the write set (event())
                event(ev)
            elif tc == _VIEW_CHANGE and not seen:
                seen.append(ev)

        for trx in group_transactions(events, tap=tap, state=state):
            ws = self.take(trx.kind)
            if seen:
                trx = dataclasses.replace(trx, events=tuple(seen))
                seen.clear()
            yield trx, ws

    def table_map(self, body: TableMapBody, pos: Position | None) -> None:
        """Remember a Table_map (its table id now means this table)."""
        # the reader hands out one body object per Table_map bytes (fastdecode's cache):
        # a body seen before is looked up by identity, without hashing its fields again
        hit = self._tm_bodies.get(id(body))
        if hit is not None and hit[0] is body:
            td = hit[1]
        else:
            td = decode_table_map(body, pos=pos)
            if len(self._tm_bodies) >= TABLE_MAP_BODIES:
                self._tm_bodies.clear()
            self._tm_bodies[id(body)] = (body, td)
        self.table_maps[body.table_id] = td

    def result(self, acc: Acc, kind: str) -> TrxWriteset:
        """The writeset of a transaction of ``kind`` whose Rows events went to ``acc``."""
        hashes: array[int] | tuple[()] = ()
        if acc.store is None and acc.dropped is None:
            keys: tuple[WriteKey, ...] | KeyList = tuple(acc.keys)
            size = len(keys)
        else:
            self.spill(acc)
            if acc.dropped is not None:
                keys, hashes = (), acc.dropped
                size = len(hashes)
            else:
                keys = acc.store        # type: ignore[assignment]
                size = len(keys)
        return TrxWriteset(
            keys=keys, ddl=kind == "ddl", empty=acc.rows == 0,
            missing_key_tables=tuple(acc.missing), fk_parent_tables=tuple(acc.parents),
            limit_reached=size > self.history_size, no_fk_checks=acc.no_fk,
            missing_key_reasons=tuple(acc.missing.values()), hashes_only=hashes)

    def spill(self, acc: Acc) -> None:
        """Move the keys pending in ``acc.keys`` into its compact store (a
        :class:`KeyList`); with ``drop_past_limit``, drop the write set once it holds
        more than ``history_size`` keys, as MySQL 8.0 does:

        * ``Rpl_transaction_write_set_ctx::add_write_set``
          (``sql/rpl_transaction_write_set_ctx.cc``): unless
          ``is_full_writeset_required`` (``m_global_component_requires_write_sets
          && !m_local_allow_drop_write_set``: Group Replication), adding a hash to a
          write set that already holds ``binlog_transaction_dependency_history_size``
          entries sets ``m_local_has_reached_write_set_limit`` and clears the write
          set; no later hash of the transaction is added.  So a write set of exactly
          ``history_size`` entries is kept, one more is dropped (``limit_reached`` is
          ``size > history_size`` either way).
        * ``Writeset_trx_dependency_tracker::get_dependency``
          (``sql/rpl_trx_tracking.cc``): ``can_use_writesets`` is false when
          ``was_write_set_limit_reached()``, so the commit-order parent is kept and
          ``m_writeset_history`` is cleared with ``m_writeset_history_start =
          sequence_number`` (repltool's :class:`~repltool.certify.trackers.WritesetTracker`
          reads ``limit_reached`` as that barrier, whatever the keys).

        The descriptions are dropped; the hashes stay in ``acc.dropped`` (8 bytes a
        key) for repltool's own check of recorded clocks (certify's ``LastWriters``),
        which reads every key MySQL's rule leaves out.
        """
        keys = acc.keys
        if acc.dropped is not None:
            acc.dropped.extend([k.hash for k in keys])
            keys.clear()
            return
        store = acc.store
        if store is None:
            store = acc.store = KeyList()
        store.extend(keys)
        keys.clear()
        if self.drop_past_limit and len(store) > self.history_size:
            acc.dropped, acc.store = store.hashes, None

    def rows(self, type_code: int, body: Any, table_id: int | None, pos: Position | None,
             acc: Acc) -> None:
        """Add one Rows event's keys to ``acc.keys`` (the caller moves them to the
        compact store once :data:`SPILL_AT` are pending: :meth:`spill`).

        A Rows event whose header (type, table id, flags, width, column bitmaps) was
        keyed before, while its table id still maps the same Table_map, is keyed by
        the walk cached for that header (:attr:`shapes`: what :func:`book` adds and
        the key-only walk, decided once per header); anything else goes the route
        below, which caches the header's shape once its walk succeeded."""
        if type(body) is RowsBody:
            shape = self._shapes.get((type_code, table_id, body.flags, body.width,
                                      body.columns_before, body.columns_after))
            if shape is not None and self.table_maps.get(table_id) is shape[0]:
                self.shaped += 1
                td, run, fk, plan = shape
                if not fk:                  # book(plan, body.flags, acc), inlined
                    acc.no_fk = True
                if not plan.usable:
                    note_missing(acc, plan.name, plan.why)
                elif plan.fk_parent:
                    acc.parents[plan.name] = None
                keys = acc.keys
                n = len(keys)
                try:
                    acc.rows += run(body.rows, 0, keys, fk)
                    return
                except KEY_WALK_ERRORS:
                    self.fallbacks += 1
                    del keys[n:]        # the general decoder gives the exact outcome
                self._decoded(td, plan, body, type_code, not fk, pos, acc)
                return
        td = self.table_maps.get(table_id) if table_id is not None else None
        if td is None or not isinstance(body, RowsBody):
            # A relay file read alone that starts in the middle of a group, or
            # 5.1 pre-GA rows (20-22): the rows cannot be keyed.  Safe fallback:
            # the table counts as missing a key (commit-order parent kept).
            what = f"{td.db}.{td.table}" if td is not None else f"table_id:{table_id}"
            note_missing(acc, what, MissingKey.UNDECODABLE)
            acc.rows += 1
            self._mismatch(("undecodable", what, type_code), (
                f"rows of {what} cannot be keyed ("
                + ("no Table_map before them: read the logs that precede this one too"
                   if td is None else f"event type {type_code} is not decoded")
                + "); counted as a table without a usable key"), pos, error=False,
                category=WritesetWarning)
            return
        if self.key_only:
            fast = self._row_keys(td, pos)
            plan = fast.plan
        else:
            plan = self._plan(td, pos)
        skip_fk = book(plan, body.flags, acc)
        if self.key_only:
            n = len(acc.keys)
            try:
                run = fast.event_runner(body, type_code)
                acc.rows += run(body.rows, 0, acc.keys, not skip_fk)
            except KEY_WALK_ERRORS:
                self.fallbacks += 1
                del acc.keys[n:]        # the general decoder below gives the exact outcome
            else:
                shapes = self._shapes
                if len(shapes) >= self._prune_at:
                    shapes = self._shapes = self._live_shapes(shapes)
                shapes[(type_code, table_id, body.flags, body.width, body.columns_before,
                        body.columns_after)] = (td, run, not skip_fk, plan)
                return
        self._decoded(td, plan, body, type_code, skip_fk, pos, acc)

    def _live_shapes(self, shapes: dict[Any, tuple[Any, ...]]) -> dict[Any, tuple[Any, ...]]:
        """The entries of the Rows-header cache (:meth:`rows`) whose TableDef is still
        the one its table is keyed under (:meth:`table_keys`), or none when
        :data:`SHAPES` / 2 or more are; the next prune once twice as many.  A reopened
        table's new table id would otherwise leave its shapes behind until SHAPES
        (bench/results/rssws.md); a dropped shape is built again, the same."""
        keyed = self.table_keys
        live = {k: v for k, v in shapes.items() if keyed(v[0]) is not None}
        if 2 * len(live) >= SHAPES:
            live = {}
        self._prune_at = max(SHAPES_PRUNE_MIN, 2 * len(live))
        return live

    def _decoded(self, td: TableDef, plan: Plan, body: RowsBody, type_code: int,
                 skip_fk: bool, pos: Position | None, acc: Acc) -> None:
        """:meth:`rows` by the general decoder (every column of every image decoded)."""
        if not plan.usable:
            for _ in iter_row_changes(td, body, type_code, pos=pos):
                acc.rows += 1
            return
        db, table = td.db, td.table
        fks = None if skip_fk else plan.fks
        need = plan.need
        for change in iter_row_changes(td, body, type_code, pos=pos):
            acc.rows += 1
            after, before = change.after, change.before
            if after is not None and need & ~after.present:
                # MINIMAL/NOBLOB: an UPDATE logs the columns it wrote; the others
                # keep the before image's values
                if before is not None and not need & ~after.present & ~before.present:
                    values, raw = list(after.values), list(after.raw)
                    for i in _bits(need & ~after.present):
                        values[i], raw[i] = before.values[i], before.raw[i]
                    add_image(plan, values, raw, db, table, fks, acc.keys)
                else:
                    self._partial(plan, td, need & ~after.present, pos, acc)
                    add_image(plan, after.values, after.raw, db, table, fks, acc.keys)
            elif after is not None:
                add_image(plan, after.values, after.raw, db, table, fks, acc.keys)
            if before is not None:
                if need & ~before.present:
                    self._partial(plan, td, need & ~before.present, pos, acc)
                add_image(plan, before.values, before.raw, db, table, fks, acc.keys)

    def _partial(self, plan: Plan, td: TableDef, absent: int, pos: Position | None,
                 acc: Acc) -> None:
        """A row image without some key columns: its keys are unknown (safe: the
        table counts as missing a key; the keys of the columns present are kept)."""
        note_missing(acc, plan.name, MissingKey.PARTIAL_IMAGE)
        cols = ", ".join(td.columns[i].name or f"#{i + 1}" for i in _bits(absent))
        self._mismatch(("partial", plan.name), (
            f"rows of {plan.name} lack key column(s) {cols} in their row images "
            "(binlog_row_image=MINIMAL or NOBLOB): MySQL hashed the full rows, the log does "
            "not tell their keys; counted as a table without a usable key"), pos,
            error=False, category=WritesetWarning)

    # ---- plans ----

    def _plan(self, td: TableDef, pos: Position | None) -> Plan:
        hit = self._plans.get((td.db, td.table))
        if hit is not None and hit[0] is td:
            return hit[1]
        plan = self._build_plan(td, pos)
        self._plans[td.db, td.table] = (td, plan)
        return plan

    def _build_plan(self, td: TableDef, pos: Position | None) -> Plan:
        name = f"{td.db}.{td.table}"
        ts = self.schema.table(td.db, td.table) if self.schema is not None else None
        if self.schema is not None and ts is None:
            # its UNIQUE and FOREIGN keys are unknown: the Table_map's primary key alone
            # would be a guess, so the table counts as missing keys (safe)
            self._mismatch(("unknown", name), f"schema has no table {name}; the table is "
                           "treated as having no usable key (missing keys)", pos)
            return Plan(name, (), (), self.schema.is_fk_parent(td.db, td.table), False,
                        MissingKey.UNKNOWN_TABLE)
        if ts is not None:
            return self._schema_plan(td, ts, pos)
        return self._table_map_plan(td, False)

    def _table_map_plan(self, td: TableDef, fk_parent: bool) -> Plan:
        name = f"{td.db}.{td.table}"
        if not td.primary_key:
            # without the table's definition, "no key in the Table_map" is not "no key"
            why = MissingKey.NO_SCHEMA if self.schema is None else MissingKey.UNKNOWN_TABLE
            return Plan(name, (), (), fk_parent, False, why)
        if not self._exact(td, [(td.columns[i], None, p) for i, p in td.primary_key], None):
            return Plan(name, (), (), fk_parent, False, MissingKey.UNKNOWN_COLLATION)
        parts = tuple(self._part(td.columns[i], None, prefix) for i, prefix in td.primary_key)
        key = Key("PRIMARY", parts, key_string("PRIMARY", td.db, td.table, ()))
        return Plan(name, (key,), (), fk_parent, True)

    def _schema_plan(self, td: TableDef, ts: TableSchema, pos: Position | None) -> Plan:
        name = f"{td.db}.{td.table}"
        mapping = self._column_map(td, ts, pos)
        if mapping is None:
            # the schema's keys cannot be placed in the log's rows: unsafe to
            # fall back to the Table_map's primary key alone (UNIQUE/FK keys
            # would vanish), so the table counts as missing a key
            return Plan(name, (), (), False, False, MissingKey.DRIFT)
        fk_parent = self.schema is not None and self.schema.is_fk_parent(td.db, td.table)
        unique_keys = list(ts.unique_keys)
        gipk = _gipk(td, ts, mapping)
        if gipk is not None:
            # sql_gipk.cc: my_row_id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT INVISIBLE,
            # PRIMARY KEY (my_row_id), ahead of the declared keys
            mapping = {**mapping, "my_row_id": gipk}
            unique_keys.insert(0, IndexSchema("PRIMARY", (KeyPart("my_row_id"),), primary=True))
        elif ts.primary_key is None:
            return Plan(name, (), (), fk_parent, False)
        keys = []
        used = [(td.columns[mapping[p.column.lower()]], ts.column(p.column), p.prefix)
                for ix in unique_keys for p in ix.parts
                if p.column and p.column.lower() in mapping]
        used += [(td.columns[mapping[c.lower()]], ts.column(c), 0)
                 for fk in ts.foreign_keys if fk.ref_index is not None
                 for c in fk.columns if c.lower() in mapping]
        if not self._exact(td, used, pos):
            return Plan(name, (), (), fk_parent, False, MissingKey.UNKNOWN_COLLATION)
        for ix in unique_keys:
            if ix.functional or any(p.column is None or p.column.lower() not in mapping
                                    for p in ix.parts):
                # cannot evaluate from the row image: unsafe to leave out, so the
                # table counts as missing a key (commit-order parent kept).
                self._mismatch(("functional", name, ix.name),
                               f"{name}: unique key {ix.name} covers an expression or a "
                               "column the log does not carry; the table is treated as "
                               "having no usable key", pos, error=False)
                return Plan(name, (), (), fk_parent, False,
                            MissingKey.FUNCTIONAL_INDEX if ix.functional else MissingKey.DRIFT)
            parts = tuple(self._part(td.columns[mapping[p.column.lower()]],
                                     ts.column(p.column), p.prefix) for p in ix.parts if p.column)
            keys.append(Key(ix.name, parts, key_string(ix.name, td.db, td.table, ())))
        fks = []
        for fk in ts.foreign_keys:
            if fk.ref_index is None:
                continue        # references a non-unique parent index: MySQL skips it
            db = fk.ref_db or td.db
            cols = tuple(mapping[c.lower()] for c in fk.columns)
            # the FK columns' sort keys are whole-column ones (max length from
            # the pack length), whatever the parent key's prefixes
            sks = tuple(self._part(td.columns[i], ts.column(c), 0).sort_key
                        for i, c in zip(cols, fk.columns))
            fks.append(Fk(cols, sks, key_string(fk.ref_index, db, fk.ref_table, ()), db,
                          fk.ref_table, fk.ref_index))
        return Plan(name, tuple(keys), tuple(fks), fk_parent, True)

    def _column_map(self, td: TableDef, ts: TableSchema, pos: Position | None
                    ) -> dict[str, int] | None:
        """Schema column name (lower case) -> Table_map column index, or None on mismatch."""
        name = f"{td.db}.{td.table}"
        needed = {p.column.lower() for ix in ts.unique_keys for p in ix.parts if p.column}
        needed |= {c.lower() for fk in ts.foreign_keys for c in fk.columns}
        if td.has_names:
            mapping = {c.name.lower(): c.index for c in td.columns if c.name is not None}
            lost = sorted(needed - set(mapping))
            if lost:
                self._mismatch(("columns", name, td.column_count), (
                    f"{name}: key column(s) {', '.join(lost)} of the schema ({ts.source}) are "
                    f"not in the Table_map ({td.column_count} columns); the table is treated "
                    "as having no usable key"), pos)
                return None
            if len(ts.columns) != td.column_count and _gipk(td, ts, mapping) is None:
                self._mismatch(("count", name, td.column_count), (
                    f"{name}: the schema ({ts.source}) has {len(ts.columns)} columns, the "
                    f"Table_map {td.column_count}; key columns matched by name"), pos,
                    error=False)
            return mapping
        if len(ts.columns) != td.column_count:
            self._mismatch(("count", name, td.column_count), (
                f"{name}: the schema ({ts.source}) has {len(ts.columns)} columns, the "
                f"Table_map {td.column_count} (no column names in the log to match by); "
                "the table is treated as having no usable key"), pos)
            return None
        return {c.name.lower(): i for i, c in enumerate(ts.columns)}

    def _exact(self, td: TableDef, parts: list[tuple[ColumnDef, Any, int]],
               pos: Position | None) -> bool:
        """Whether every key part's sort key is MySQL's own; else warn once (the
        table then counts as having no usable key: safe, never approximate)."""
        for col, sc, prefix in parts:
            why = string_key_problem(col, _collation(col, sc, self.default_collation), prefix)
            if why is not None:
                name = f"{td.db}.{td.table}"
                column = col.name or (sc.name if sc is not None else None) or f"#{col.index}"
                self._mismatch(("collation", name, column, why), (
                    f"{name}: key column {column}: {why}; the table is treated as having "
                    "no usable key (missing keys)"), pos, error=False,
                    category=WritesetWarning)
                return False
        return True

    def _part(self, col: ColumnDef, sc: Any, prefix: int) -> Part:
        # one Part per definition: equal keys of successive Table_maps of a table
        # are then equal, and share their entry caches (TableKeys)
        hit = self._parts.get((col, sc, prefix))
        if hit is None:
            hit = self._parts[(col, sc, prefix)] = self._new_part(col, sc, prefix)
        return hit

    def _new_part(self, col: ColumnDef, sc: Any, prefix: int) -> Part:
        coll = _collation(col, sc, self.default_collation)
        unsigned = sc.unsigned if sc is not None else None
        # 8.0.43 sizes the first entry of a whole VARCHAR/VARBINARY part by the key-part
        # length (format-spec §6b); the "old format" entry below by the pack length
        key_length = col.max_length if not prefix and col.real_type in _VARLEN else None
        sk = sort_key_builder(col, unsigned=unsigned, collation=coll, prefix=prefix,
                              key_length=key_length)
        # add_pke's old_pke_needed: strnxfrmlen(key length) != strnxfrmlen(pack length),
        # i.e. a prefix part, or a VARCHAR/VARBINARY (its pack length counts the length bytes)
        old = prefix or col.real_type in _VARLEN
        full = sort_key_builder(col, unsigned=unsigned, collation=coll) if old else None
        return Part(col.index, sk, full)

    def _mismatch(self, tag: Any, message: str, pos: Position | None, *,
                  error: bool = True, category: type[Warning] = SchemaWarning) -> None:
        if self.strict and error:
            raise SchemaMismatch(message, pos=pos)
        if tag in self._warned:
            return
        where = f"{pos}: " if pos is not None else ""
        warning = category(where + message)
        # what "once" is about (one tag may read differently from read to read, two tags
        # alike): --spark's driver repeats its executors' warnings once per subject
        warning.subject = repr(tag)
        warnings.warn(warning, stacklevel=4)
        self._warned.add(tag)       # after: a warning turned into an error is not lost


class GeneralWritesetExtractor(WritesetExtractor):
    """A :class:`WritesetExtractor` that decodes every column of every row image (the
    general path: the reference the key-only extraction is tested against)."""

    def __init__(self, schema: Schema | None = None, **kw: Any) -> None:
        super().__init__(schema, **kw)
        self.key_only = False


class TextWritesetExtractor(WritesetExtractor):
    """A :class:`WritesetExtractor` whose keys are the JSON texts of its
    :class:`~repltool.writeset.model.WriteKey` records
    (:func:`~repltool.writeset.jsonl.encode_key`): :meth:`lines` gives the lines of
    ``repltool dump --writesets`` - ``RecordWriter().line(trx, ws)`` of every pair of
    :meth:`~WritesetExtractor.pairs` - without ``WriteKey`` objects where the
    key-only walk keys the rows (:class:`TableKeys` with ``text=True``: a cached key's
    text is not built again)."""

    def __init__(self, schema: Schema | None = None, **kw: Any) -> None:
        super().__init__(schema, **kw)
        # per table, as WritesetExtractor._fast_keys (its latest TableDef only)
        self._texts: dict[tuple[str, str], TableKeys] = {}
        self._text_shared: dict[Any, Any] = {}

    def _row_keys(self, td: TableDef, pos: Position | None) -> TableKeys:
        fast = self._texts.get((td.db, td.table))
        if fast is None or fast.td is not td:
            base = self.plan_keys(td, pos)
            fast = self._texts[td.db, td.table] = TableKeys(base.plan, td, self._text_shared,
                                                            text=True)
        return fast

    def _decoded(self, td: TableDef, plan: Plan, body: RowsBody, type_code: int,
                 skip_fk: bool, pos: Position | None, acc: Acc) -> None:
        keys = acc.keys
        mark = len(keys)
        super()._decoded(td, plan, body, type_code, skip_fk, pos, acc)
        keys[mark:] = map(encode_key, keys[mark:])     # type: ignore[arg-type]

    def spill(self, acc: Acc) -> None:
        """The pending texts joined into one chunk (:meth:`Acc.spill_texts`)."""
        acc.spill_texts()

    def lines(self, events: Iterable[Event], writer: RecordWriter | None = None,
              state: GroupingState | None = None) -> Iterator[str]:
        """``writer.line(trx, ws)`` of every ``(trx, ws)`` that
        :meth:`WritesetExtractor.pairs` gives for ``events`` (``state``: as there)."""
        writer = writer if writer is not None else RecordWriter()
        event, keyed, begin = self.event, _KEYED, self.begin

        def tap(ev: Event, opens: bool) -> None:
            # (no begin() when a group opens: each yield below began the next one)
            if ev.type_code in keyed:
                event(ev)

        begin()
        history = self.history_size
        for trx in group_transactions(events, tap=tap, state=state):
            acc, error = self._acc, self._error
            begin()
            if error is not None:
                raise error
            keys: list[Any] = acc.keys
            count = len(keys) + acc.spilled
            if acc.texts:
                keys = acc.texts + keys if keys else acc.texts
            yield writer.record(trx, keys, (
                trx.kind == "ddl", acc.rows == 0, tuple(acc.missing), tuple(acc.parents),
                count > history))


_ROWS = frozenset(int(t) for t in ROWS_TYPES)
#: a Rows event's table id (from the declaration's post-header)
_TABLE_ID = S.ROWS_V2_HEAD.span("table_id", HEADER_LEN)
_KEYED = frozenset({*_ROWS, int(EventType.TABLE_MAP_EVENT)})
_VIEW_CHANGE = int(EventType.VIEW_CHANGE_EVENT)


def note_missing(acc: Acc, table: str, why: str) -> None:
    """Book ``table`` as missing keys for ``why`` (a reason that keys are unknown wins
    over MySQL's own "no usable key")."""
    if acc.missing.get(table, MissingKey.NO_USABLE_KEY) == MissingKey.NO_USABLE_KEY:
        acc.missing[table] = why


def book(plan: Plan, flags: int, acc: Acc) -> bool:
    """The table-level flags a Rows event adds to ``acc``; whether it skips FK checks."""
    skip_fk = bool(flags & NO_FOREIGN_KEY_CHECKS_F)
    acc.no_fk = acc.no_fk or skip_fk
    if not plan.usable:
        note_missing(acc, plan.name, plan.why)
    elif plan.fk_parent:        # add_pke: only inside ``primary_key < MAX_KEY``
        acc.parents[plan.name] = None
    return skip_fk


def _bits(mask: int) -> Iterator[int]:
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


_VARLEN = frozenset({ColumnType.VARCHAR, ColumnType.VARCHAR_COMPRESSED})


def _gipk(td: TableDef, ts: TableSchema, mapping: dict[str, int]) -> int | None:
    """The Table_map index of a generated invisible primary key the schema lacks
    (``my_row_id`` named in the log, the schema with no declared PRIMARY KEY)."""
    if ts.primary_key is not None and ts.primary_key.primary:
        return None
    if ts.column("my_row_id") is not None or not td.has_names:
        return None
    for c in td.columns:
        if c.name is not None and c.name.lower() == "my_row_id" \
                and c.real_type == ColumnType.LONGLONG:
            return c.index
    return None


#: what the key-only walks raise for an event shape or bytes they leave to the
#: general decoder (which then gives the exact result or error)
KEY_WALK_ERRORS = (IndexError, struct.error, BadValue, ValueError, OverflowError, KeyError,
                   TypeError)


def _collation(col: ColumnDef, sc: Any, default: str | None = None) -> Collation:
    """The log's collation id, else the schema's collation, else ``default``
    (a charset alone does not name a collation: MySQL's and MariaDB's defaults
    differ), else unknown."""
    if col.collation is not None:
        return collation_by_id(col.collation)
    if sc is not None and sc.collation:
        return collation_by_name(sc.collation)
    return collation_by_name(default) if default else UNKNOWN


# ---- public functions ----

def writeset_of(trx: Transaction, schema: Schema | None = None, *, history_size: int = 25000,
                table_maps: dict[int, TableDef] | None = None, strict: bool = False
                ) -> TrxWriteset:
    """The writeset of one transaction.

    :param trx: read with ``keep_events=True`` and :data:`READ_OPTIONS` (or all
        bodies decoded).
    :param schema: key definitions; ``None``: Table_map primary keys only.
    :param table_maps: ``table_id -> TableDef`` carried across calls (relay
        logs whose groups continue into the next file); updated in place.
    :param strict: raise :class:`SchemaMismatch` when the schema disagrees with
        the log instead of warning.
    :raises WritesetError: rows without a Table_map, undecoded bodies.
    :raises MalformedEvent: row images that do not match their Table_map.
    """
    return WritesetExtractor(schema, history_size=history_size, table_maps=table_maps,
                             strict=strict).writeset(trx)


def iter_writesets(transactions: Iterable[Transaction], schema: Schema | None = None,
                   **kw: Any) -> Iterator[tuple[Transaction, TrxWriteset]]:
    """``(transaction, writeset)`` for each transaction, sharing Table_maps and plans."""
    ex = WritesetExtractor(schema, **kw)
    for trx in transactions:
        yield trx, ex.writeset(trx)


def stream_writesets(events: Iterable[Event], schema: Schema | None = None, **kw: Any
                     ) -> Iterator[tuple[Transaction, TrxWriteset]]:
    """``(transaction, writeset)`` for each group of ``events`` (read with
    :data:`READ_OPTIONS`), folded as the events stream: what :func:`iter_writesets`
    gives over ``group_transactions(events, keep_events=True)`` without keeping any
    transaction's events (:meth:`WritesetExtractor.pairs`)."""
    return WritesetExtractor(schema, **kw).pairs(events)


def writeset_record(trx: Transaction, ws: TrxWriteset) -> dict[str, Any]:
    """One JSON-ready object per transaction (``repltool dump --writesets``)."""
    return {"file": trx.start.file, "pos": trx.start.offset, "gtid": trx.gtid,
            "keys": [k.to_dict() for k in ws.keys], "flags": ws.flags()}
