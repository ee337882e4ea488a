"""Row events -> writesets, the way MySQL 8.0's ``add_pke`` builds them.

Per row image (after image first, then before image; format-spec §6b,
``sql/rpl_write_set_handler.cc`` add_pke, ``sql/handler.cc`` binlog_log_row):

1. A table without a usable key (no PRIMARY KEY and no NOT NULL UNIQUE key,
   ``TABLE_SHARE::primary_key == MAX_KEY``) hashes nothing: the table goes to
   ``missing_key_tables``.
2. Otherwise every unique index (PRIMARY first) whose parts are all non-NULL
   gives ``index ½ db ½ len(db) table ½ len(table)`` followed by ``sortkey ½
   len(sortkey)`` per part, hashed with XXH64 (seed 0).  A key with a column
   *prefix* part also gets 8.0's second, full-column ("old format") hash.
3. Unless the Rows event has ``NO_FOREIGN_KEY_CHECKS_F``: for each foreign-key
   column of the table (column order, NULLs skipped) whose FK references a
   unique constraint of the parent: ``parent_constraint ½ parent_db ½ len
   parent_table ½ len sortkey ½ len`` - one hash per column, exactly as 8.0's
   ``check_foreign_key`` map does it.
4. A table referenced by a foreign key sets ``fk_parent_tables``.

Where the key definitions come from: the :class:`~repltool.writeset.schema.Schema`
when one is given and it knows the table; otherwise the Table_map's primary key
(optional metadata SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX, written with
``binlog_row_metadata=FULL``).  A table the schema does not know, or whose
columns do not match the Table_map, is reported once per table with a
:class:`~repltool.writeset.model.SchemaWarning` (``strict=True``: a
:class:`~repltool.writeset.model.SchemaMismatch` error) and falls back to the
Table_map.  UNIQUE keys over expressions (functional indexes) cannot be
evaluated from the log: such tables count as missing a key (safe: the tracker
then keeps the commit-order parent).
"""

from __future__ import annotations

import struct
import warnings
from typing import Any, Iterable, Iterator

import xxhash

from ..binlog import ReadOptions, Transaction
from ..binlog.coltypes import ColumnDef, TableDef, decode_table_map, table_def_cache
from ..binlog.constants import ROWS_TYPES, EventType
from ..binlog.events import RowsBody, TableMapBody
from ..binlog.rows import BadValue, iter_row_changes
from ..binlog.transactions import GROUPING_TYPES
from ..positions import Position
from .collation import Collation, collation_by_id, collation_by_name
from .model import (
    SchemaMismatch, SchemaWarning, TrxWriteset, WriteKey, WritesetError, WritesetWarning,
)
from .fastkeys import TableKeys
from .plan import Fk, Key, Part, Plan, add_image, key_string
from .schema import Schema, TableSchema
from .sortkey import sort_key_builder

__all__ = ["writeset_of", "iter_writesets", "WritesetExtractor", "READ_OPTIONS",
           "key_string", "xxh64", "writeset_record"]

NO_FOREIGN_KEY_CHECKS_F = 0x2

#: What the reader must decode for writesets (plus the grouping types).
READ_OPTIONS = ReadOptions(types=frozenset(
    {*GROUPING_TYPES, int(EventType.TABLE_MAP_EVENT), *(int(t) for t in ROWS_TYPES)}))


def xxh64(data: bytes) -> int:
    """XXH64 with seed 0, as ``MY_XXH64(data, len, 0)``."""
    return xxhash.xxh64_intdigest(data)


class Acc:
    """What one transaction's Rows events have added so far (see :meth:`WritesetExtractor.rows`)."""

    __slots__ = ("keys", "missing", "parents", "rows", "no_fk")

    def __init__(self) -> None:
        self.keys: list[WriteKey] = []
        self.missing: dict[str, None] = {}
        self.parents: dict[str, None] = {}
        self.rows = 0
        self.no_fk = False


class WritesetExtractor:
    """Stateful writeset builder: Table_maps (carried across transactions and
    relay files) and per-table key plans.

    :param schema: key definitions (``None``: Table_map primary keys only).
    :param history_size: MySQL's ``binlog_transaction_dependency_history_size``.
    :param table_maps: ``table_id -> TableDef``, updated in place.
    :param strict: raise :class:`SchemaMismatch` instead of warning.
    :param key_only: decode only the key columns of each row image
        (:mod:`repltool.writeset.fastkeys`; same writesets and errors, several
        times faster); ``False``: decode every column (the general path).
    """

    def __init__(self, schema: Schema | None = None, *, history_size: int = 25000,
                 table_maps: dict[int, TableDef] | None = None, strict: bool = False,
                 key_only: bool = True) -> None:
        self.schema = schema
        self.key_only = key_only
        #: Rows events the key-only walk handed to the general decoder
        self.fallbacks = 0
        self._fast_keys: dict[int, TableKeys] = {}
        self._entry_caches: dict[Any, Any] = {}
        self._parts: dict[tuple[ColumnDef, Any, int], Part] = {}
        self.history_size = history_size
        self.table_maps: dict[int, TableDef] = (table_maps if table_maps is not None
                                                else table_def_cache())  # type: ignore[assignment]
        self.strict = strict
        self._plans: dict[int, tuple[TableDef, Plan]] = {}
        self._warned: set[Any] = schema._warned if schema is not None else set()

    # ---- transactions ----

    def writeset(self, trx: Transaction) -> TrxWriteset:
        """The writeset of one transaction (read with ``keep_events=True``)."""
        acc = Acc()
        for ev in trx.events:
            body = ev.body
            if isinstance(body, TableMapBody):
                self.table_map(body, ev.pos)
            elif ev.type_code in _ROWS:
                if body is None:
                    raise WritesetError("rows event body not decoded: read the log with "
                                        "repltool.writeset.READ_OPTIONS", pos=ev.pos)
                table_id = getattr(body, "table_id", None)
                if table_id is None and len(ev.raw) >= 25:
                    table_id = int.from_bytes(ev.raw[19:25], "little")
                self.rows(ev.type_code, body, table_id, ev.pos, acc)
        return self.result(acc, trx.kind)

    def table_map(self, body: TableMapBody, pos: Position | None) -> None:
        """Remember a Table_map (its table id now means this table)."""
        self.table_maps[body.table_id] = decode_table_map(body, pos=pos)

    def result(self, acc: Acc, kind: str) -> TrxWriteset:
        """The writeset of a transaction of ``kind`` whose Rows events went to ``acc``."""
        return TrxWriteset(
            keys=tuple(acc.keys), ddl=kind == "ddl", empty=acc.rows == 0,
            missing_key_tables=tuple(acc.missing), fk_parent_tables=tuple(acc.parents),
            limit_reached=len(acc.keys) > self.history_size, no_fk_checks=acc.no_fk)

    def rows(self, type_code: int, body: Any, table_id: int | None, pos: Position | None,
             acc: Acc) -> None:
        """Add one Rows event's keys to ``acc``."""
        td = self.table_maps.get(table_id) if table_id is not None else None
        if td is None or not isinstance(body, RowsBody):
            # A relay file read alone that starts in the middle of a group, or
            # 5.1 pre-GA rows (20-22): the rows cannot be keyed.  Safe fallback:
            # the table counts as missing a key (commit-order parent kept).
            what = f"{td.db}.{td.table}" if td is not None else f"table_id:{table_id}"
            acc.missing[what] = None
            acc.rows += 1
            self._mismatch(("undecodable", what, type_code), (
                f"rows of {what} cannot be keyed ("
                + ("no Table_map before them: read the logs that precede this one too"
                   if td is None else f"event type {type_code} is not decoded")
                + "); counted as a table without a usable key"), pos, error=False,
                category=WritesetWarning)
            return
        if self.key_only:
            fast = self._fast_keys.get(id(td))
            if fast is None or fast.td is not td:
                fast = self._fast_keys[id(td)] = TableKeys(self._plan(td, pos), td,
                                                                 self._entry_caches)
            plan = fast.plan
        else:
            plan = self._plan(td, pos)
        skip_fk = book(plan, body.flags, acc)
        if self.key_only:
            n = len(acc.keys)
            try:
                acc.rows += fast.event(body, type_code, skip_fk, acc.keys)
                return
            except _FAST_ERRORS:
                self.fallbacks += 1
                del acc.keys[n:]        # the general decoder below gives the exact outcome
        if not plan.usable:
            for _ in iter_row_changes(td, body, type_code, pos=pos):
                acc.rows += 1
            return
        db, table = td.db, td.table
        fks = None if skip_fk else plan.fks
        for change in iter_row_changes(td, body, type_code, pos=pos):
            acc.rows += 1
            for img in (change.after, change.before):
                if img is not None:
                    add_image(plan, img.values, img.raw, db, table, fks, acc.keys)

    # ---- plans ----

    def _plan(self, td: TableDef, pos: Position | None) -> Plan:
        hit = self._plans.get(id(td))
        if hit is not None and hit[0] is td:
            return hit[1]
        plan = self._build_plan(td, pos)
        self._plans[id(td)] = (td, plan)
        return plan

    def _build_plan(self, td: TableDef, pos: Position | None) -> Plan:
        name = f"{td.db}.{td.table}"
        ts = self.schema.table(td.db, td.table) if self.schema is not None else None
        if self.schema is not None and ts is None:
            self._mismatch(("unknown", name), f"schema has no table {name}; using the "
                           "Table_map's primary key", pos)
        if ts is not None:
            plan = self._schema_plan(td, ts, pos)
            if plan is not None:
                return plan
        fk_parent = self.schema is not None and self.schema.is_fk_parent(td.db, td.table)
        return self._table_map_plan(td, fk_parent)

    def _table_map_plan(self, td: TableDef, fk_parent: bool) -> Plan:
        name = f"{td.db}.{td.table}"
        if not td.primary_key:
            return Plan(name, (), (), fk_parent, False)
        parts = tuple(self._part(td.columns[i], None, prefix) for i, prefix in td.primary_key)
        key = Key("PRIMARY", parts, key_string("PRIMARY", td.db, td.table, ()))
        return Plan(name, (key,), (), fk_parent, True)

    def _schema_plan(self, td: TableDef, ts: TableSchema, pos: Position | None) -> Plan | None:
        name = f"{td.db}.{td.table}"
        mapping = self._column_map(td, ts, pos)
        if mapping is None:
            return None
        fk_parent = self.schema is not None and self.schema.is_fk_parent(td.db, td.table)
        if ts.primary_key is None:
            return Plan(name, (), (), fk_parent, False)
        keys = []
        for ix in ts.unique_keys:
            if ix.functional or any(p.column is None or p.column.lower() not in mapping
                                    for p in ix.parts):
                # cannot evaluate from the row image: unsafe to leave out, so the
                # table counts as missing a key (commit-order parent kept).
                self._mismatch(("functional", name, ix.name),
                               f"{name}: unique key {ix.name} covers an expression or a "
                               "column the log does not carry; the table is treated as "
                               "having no usable key", pos, error=False)
                return Plan(name, (), (), fk_parent, False)
            parts = tuple(self._part(td.columns[mapping[p.column.lower()]],
                                     ts.column(p.column), p.prefix) for p in ix.parts if p.column)
            keys.append(Key(ix.name, parts, key_string(ix.name, td.db, td.table, ())))
        fks = []
        fk_cols: dict[int, tuple[Any, ...]] = {}
        for fk in ts.foreign_keys:
            if fk.ref_index is None:
                continue        # references a non-unique parent index: MySQL skips it
            db = fk.ref_db or td.db
            prefix = key_string(fk.ref_index, db, fk.ref_table, ())
            for c in fk.columns:
                i = mapping.get(c.lower())
                if i is not None:   # a later FK on the same column wins (std::map)
                    fk_cols[i] = (prefix, db, fk.ref_table, fk.ref_index, ts.column(c))
        for i in sorted(fk_cols):
            prefix, db, rt, ri, sc = fk_cols[i]
            fks.append(Fk(i, self._part(td.columns[i], sc, 0).sort_key, prefix, db, rt, ri))
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
                    f"not in the Table_map ({td.column_count} columns); using the Table_map's "
                    "primary key"), pos)
                return None
            if len(ts.columns) != td.column_count:
                self._mismatch(("count", name, td.column_count), (
                    f"{name}: the schema ({ts.source}) has {len(ts.columns)} columns, the "
                    f"Table_map {td.column_count}; key columns matched by name"), pos,
                    error=False)
            return mapping
        if len(ts.columns) != td.column_count:
            self._mismatch(("count", name, td.column_count), (
                f"{name}: the schema ({ts.source}) has {len(ts.columns)} columns, the "
                f"Table_map {td.column_count} (no column names in the log to match by); "
                "using the Table_map's primary key"), pos)
            return None
        return {c.name.lower(): i for i, c in enumerate(ts.columns)}

    def _part(self, col: ColumnDef, sc: Any, prefix: int) -> Part:
        # one Part per definition: equal keys of successive Table_maps of a table
        # are then equal, and share their entry caches (TableKeys)
        hit = self._parts.get((col, sc, prefix))
        if hit is None:
            hit = self._parts[(col, sc, prefix)] = self._new_part(col, sc, prefix)
        return hit

    def _new_part(self, col: ColumnDef, sc: Any, prefix: int) -> Part:
        coll = _collation(col, sc)
        unsigned = sc.unsigned if sc is not None else None
        sk = sort_key_builder(col, unsigned=unsigned, collation=coll, prefix=prefix)
        full = sort_key_builder(col, unsigned=unsigned, collation=coll) if prefix else None
        return Part(col.index, sk, full)

    def _mismatch(self, tag: Any, message: str, pos: Position | None, *,
                  error: bool = True, category: type[Warning] = SchemaWarning) -> None:
        if self.strict and error:
            raise SchemaMismatch(message, pos=pos)
        if tag in self._warned:
            return
        where = f"{pos}: " if pos is not None else ""
        warnings.warn(category(where + message), stacklevel=4)
        self._warned.add(tag)       # after: a warning turned into an error is not lost


_ROWS = frozenset(int(t) for t in ROWS_TYPES)


def book(plan: Plan, flags: int, acc: Acc) -> bool:
    """The table-level flags a Rows event adds to ``acc``; whether it skips FK checks."""
    skip_fk = bool(flags & NO_FOREIGN_KEY_CHECKS_F)
    acc.no_fk = acc.no_fk or skip_fk
    if plan.fk_parent:
        acc.parents[plan.name] = None
    if not plan.usable:
        acc.missing[plan.name] = None
    return skip_fk


_FAST_ERRORS = (IndexError, struct.error, BadValue, ValueError, OverflowError, KeyError,
                TypeError)


def _collation(col: ColumnDef, sc: Any) -> Collation:
    if col.collation is not None:
        return collation_by_id(col.collation)
    if sc is not None and (sc.collation or sc.charset):
        return collation_by_name(sc.collation)      # charset alone -> conservative
    return collation_by_id(None)


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


def writeset_record(trx: Transaction, ws: TrxWriteset) -> dict[str, Any]:
    """One JSON-ready object per transaction (``repltool dump --writesets``)."""
    return {"file": trx.start.file, "pos": trx.start.offset, "gtid": trx.gtid,
            "keys": [k.to_dict() for k in ws.keys], "flags": ws.flags()}
