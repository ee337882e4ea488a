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

import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import xxhash

from ..binlog import ReadOptions, Transaction
from ..binlog.coltypes import ColumnDef, TableDef, decode_table_map
from ..binlog.constants import ROWS_TYPES, EventType
from ..binlog.events import RowsBody, TableMapBody
from ..binlog.rows import iter_row_changes
from ..binlog.transactions import GROUPING_TYPES
from ..positions import Position
from .collation import Collation, collation_by_id, collation_by_name
from .model import (
    SchemaMismatch, SchemaWarning, TrxWriteset, WriteKey, WritesetError, WritesetWarning,
)
from .schema import Schema, TableSchema
from .sortkey import SortKey, sort_key_builder

__all__ = ["writeset_of", "iter_writesets", "WritesetExtractor", "READ_OPTIONS",
           "key_string", "xxh64", "writeset_record"]

SEP = "½".encode("utf-8")           # b"\xc2\xbd"
NO_FOREIGN_KEY_CHECKS_F = 0x2

#: What the reader must decode for writesets (plus the grouping types).
READ_OPTIONS = ReadOptions(types=frozenset(
    {*GROUPING_TYPES, int(EventType.TABLE_MAP_EVENT), *(int(t) for t in ROWS_TYPES)}))

_xxh64 = xxhash.xxh64_intdigest


def xxh64(data: bytes) -> int:
    """XXH64 with seed 0, as ``MY_XXH64(data, len, 0)``."""
    return _xxh64(data)


def key_string(index: str, db: str, table: str, sort_keys: Iterable[bytes]) -> bytes:
    """The writeset key string for one index entry.

    Example (format-spec §8, ``BINARY(1)`` key '1')::

        >>> key_string("PRIMARY", "test", "t1", [b"1"]).decode()
        'PRIMARY½test½4t1½21½1'
    """
    d, t = db.encode("utf-8"), table.encode("utf-8")
    parts = [index.encode("utf-8"), SEP, d, SEP, str(len(d)).encode(), t, SEP, str(len(t)).encode()]
    for sk in sort_keys:
        parts += [sk, SEP, str(len(sk)).encode()]
    return b"".join(parts)


# ---- per-table plans ----

@dataclass(frozen=True, slots=True)
class _Part:
    column: int
    sort_key: SortKey
    full_key: SortKey | None        # prefix part: the whole-column sort key (old format hash)


@dataclass(frozen=True, slots=True)
class _Key:
    name: str
    parts: tuple[_Part, ...]
    prefix: bytes                   # index½db½len table½len

    @property
    def has_prefix(self) -> bool:
        return any(p.full_key is not None for p in self.parts)


@dataclass(frozen=True, slots=True)
class _Fk:
    column: int
    sort_key: SortKey
    prefix: bytes                   # parent_constraint½parent_db½len parent_table½len
    db: str
    table: str
    index: str


@dataclass(frozen=True, slots=True)
class _Plan:
    name: str                       # db.table
    keys: tuple[_Key, ...]          # empty: no usable key
    fks: tuple[_Fk, ...]
    fk_parent: bool
    usable: bool


class WritesetExtractor:
    """Stateful writeset builder: Table_maps (carried across transactions and
    relay files) and per-table key plans.

    :param schema: key definitions (``None``: Table_map primary keys only).
    :param history_size: MySQL's ``binlog_transaction_dependency_history_size``.
    :param table_maps: ``table_id -> TableDef``, updated in place.
    :param strict: raise :class:`SchemaMismatch` instead of warning.
    """

    def __init__(self, schema: Schema | None = None, *, history_size: int = 25000,
                 table_maps: dict[int, TableDef] | None = None, strict: bool = False) -> None:
        self.schema = schema
        self.history_size = history_size
        self.table_maps: dict[int, TableDef] = table_maps if table_maps is not None else {}
        self.strict = strict
        self._plans: dict[int, tuple[TableDef, _Plan]] = {}
        self._warned: set[Any] = schema._warned if schema is not None else set()

    # ---- transactions ----

    def writeset(self, trx: Transaction) -> TrxWriteset:
        """The writeset of one transaction (read with ``keep_events=True``)."""
        keys: list[WriteKey] = []
        missing: dict[str, None] = {}
        parents: dict[str, None] = {}
        rows = 0
        no_fk = False
        for ev in trx.events:
            body = ev.body
            if isinstance(body, TableMapBody):
                self.table_maps[body.table_id] = decode_table_map(body, pos=ev.pos)
                continue
            if ev.type_code not in _ROWS:
                continue
            if body is None:
                raise WritesetError("rows event body not decoded: read the log with "
                                    "repltool.writeset.READ_OPTIONS", pos=ev.pos)
            table_id = getattr(body, "table_id", None)
            if table_id is None and len(ev.raw) >= 25:
                table_id = int.from_bytes(ev.raw[19:25], "little")
            td = self.table_maps.get(table_id) if table_id is not None else None
            if td is None or not isinstance(body, RowsBody):
                # A relay file read alone that starts in the middle of a group, or
                # 5.1 pre-GA rows (20-22): the rows cannot be keyed.  Safe fallback:
                # the table counts as missing a key (commit-order parent kept).
                what = f"{td.db}.{td.table}" if td is not None else f"table_id:{table_id}"
                missing[what] = None
                rows += 1
                self._mismatch(("undecodable", what, ev.type_code), (
                    f"rows of {what} cannot be keyed ("
                    + ("no Table_map before them: read the logs that precede this one too"
                       if td is None else f"event type {ev.type_code} is not decoded")
                    + "); counted as a table without a usable key"), ev.pos, error=False,
                    category=WritesetWarning)
                continue
            plan = self._plan(td, ev.pos)
            skip_fk = bool(body.flags & NO_FOREIGN_KEY_CHECKS_F)
            no_fk = no_fk or skip_fk
            if plan.fk_parent:
                parents[plan.name] = None
            if not plan.usable:
                missing[plan.name] = None
                for _ in iter_row_changes(td, body, ev.type_code, pos=ev.pos):
                    rows += 1
                continue
            db, table = td.db, td.table
            for change in iter_row_changes(td, body, ev.type_code, pos=ev.pos):
                rows += 1
                for img in (change.after, change.before):
                    if img is not None:
                        _add_image(plan, img.values, img.raw, img.nulls, db, table,
                                   None if skip_fk else plan.fks, keys)
        return TrxWriteset(
            keys=tuple(keys), ddl=trx.kind == "ddl", empty=rows == 0,
            missing_key_tables=tuple(missing), fk_parent_tables=tuple(parents),
            limit_reached=len(keys) > self.history_size, no_fk_checks=no_fk)

    # ---- plans ----

    def _plan(self, td: TableDef, pos: Position | None) -> _Plan:
        hit = self._plans.get(id(td))
        if hit is not None and hit[0] is td:
            return hit[1]
        plan = self._build_plan(td, pos)
        self._plans[id(td)] = (td, plan)
        return plan

    def _build_plan(self, td: TableDef, pos: Position | None) -> _Plan:
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

    def _table_map_plan(self, td: TableDef, fk_parent: bool) -> _Plan:
        name = f"{td.db}.{td.table}"
        if not td.primary_key:
            return _Plan(name, (), (), fk_parent, False)
        parts = tuple(self._part(td.columns[i], None, prefix) for i, prefix in td.primary_key)
        key = _Key("PRIMARY", parts, key_string("PRIMARY", td.db, td.table, ()))
        return _Plan(name, (key,), (), fk_parent, True)

    def _schema_plan(self, td: TableDef, ts: TableSchema, pos: Position | None) -> _Plan | None:
        name = f"{td.db}.{td.table}"
        mapping = self._column_map(td, ts, pos)
        if mapping is None:
            return None
        fk_parent = self.schema is not None and self.schema.is_fk_parent(td.db, td.table)
        if ts.primary_key is None:
            return _Plan(name, (), (), fk_parent, False)
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
                return _Plan(name, (), (), fk_parent, False)
            parts = tuple(self._part(td.columns[mapping[p.column.lower()]],
                                     ts.column(p.column), p.prefix) for p in ix.parts if p.column)
            keys.append(_Key(ix.name, parts, key_string(ix.name, td.db, td.table, ())))
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
            fks.append(_Fk(i, self._part(td.columns[i], sc, 0).sort_key, prefix, db, rt, ri))
        return _Plan(name, tuple(keys), tuple(fks), fk_parent, True)

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

    def _part(self, col: ColumnDef, sc: Any, prefix: int) -> _Part:
        coll = _collation(col, sc)
        unsigned = sc.unsigned if sc is not None else None
        sk = sort_key_builder(col, unsigned=unsigned, collation=coll, prefix=prefix)
        full = sort_key_builder(col, unsigned=unsigned, collation=coll) if prefix else None
        return _Part(col.index, sk, full)

    def _mismatch(self, tag: Any, message: str, pos: Position | None, *,
                  error: bool = True, category: type[Warning] = SchemaWarning) -> None:
        if self.strict and error:
            raise SchemaMismatch(message, pos=pos)
        if tag in self._warned:
            return
        self._warned.add(tag)
        where = f"{pos}: " if pos is not None else ""
        warnings.warn(category(where + message), stacklevel=4)


_ROWS = frozenset(int(t) for t in ROWS_TYPES)


def _collation(col: ColumnDef, sc: Any) -> Collation:
    if col.collation is not None:
        return collation_by_id(col.collation)
    if sc is not None and (sc.collation or sc.charset):
        return collation_by_name(sc.collation)      # charset alone -> conservative
    return collation_by_id(None)


def _add_image(plan: _Plan, values: tuple[Any, ...], raw: tuple[bytes | None, ...], nulls: int,
               db: str, table: str, fks: tuple[_Fk, ...] | None, out: list[WriteKey]) -> None:
    for key in plan.keys:
        sks: list[bytes] = []
        vals: list[Any] = []
        for part in key.parts:
            r = raw[part.column]
            if r is None:           # NULL (or absent from the image): never conflicts
                break
            sk, v = part.sort_key(values[part.column], r)
            sks.append(sk)
            vals.append(v)
        else:
            data = _join(key.prefix, sks)
            out.append(WriteKey(db, table, key.name, tuple(vals), data, _xxh64(data)))
            if key.has_prefix:
                full = [(p.full_key or p.sort_key)(values[p.column], raw[p.column])
                        for p in key.parts]
                data = _join(key.prefix, [sk for sk, _ in full])
                out.append(WriteKey(db, table, key.name, tuple(v for _, v in full), data,
                                    _xxh64(data)))
    if fks:
        for fk in fks:
            r = raw[fk.column]
            if r is None:
                continue
            sk, v = fk.sort_key(values[fk.column], r)
            data = _join(fk.prefix, (sk,))
            out.append(WriteKey(fk.db, fk.table, fk.index, (v,), data, _xxh64(data), True))


def _join(prefix: bytes, sort_keys: Iterable[bytes]) -> bytes:
    parts = [prefix]
    for sk in sort_keys:
        parts += [sk, SEP, str(len(sk)).encode()]
    return b"".join(parts)


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
