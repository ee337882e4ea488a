"""Table definitions from ``CREATE TABLE`` text: the keys a writeset needs.

The binlog carries the primary key only (Table_map optional metadata, with
``binlog_row_metadata=FULL``) and never UNIQUE keys or foreign keys
(format-spec §4.9, gotcha 14), so exact writesets need the schema from
elsewhere: ``SHOW CREATE TABLE`` output or ``mysqldump --no-data``, in MySQL's
or MariaDB's dialect.  The text is parsed with sqlglot (MySQL dialect);
statements other than ``CREATE TABLE`` / ``USE`` / ``CREATE DATABASE`` are
ignored, ``DELIMITER`` blocks (triggers, routines) are skipped.

Which database a table belongs to, in order: the name in ``CREATE TABLE
db.t``; the last ``USE db`` before it; the ``default_db`` argument; a hint in
a comment (``-- ... (database X)``, mysqldump's ``-- Host: ... Database: X``).
Tables whose database stays unknown match any database.

Key rules follow MySQL 8.0 (``sql/sql_table.cc`` mysql_prepare_create_table
and sort_keys, ``sql/table.cc`` where ``TABLE_SHARE::primary_key`` is chosen):
columns of a PRIMARY KEY are NOT NULL; an unnamed UNIQUE key is named after
its first column (``c``, ``c_2`` ...); unique keys are ordered PRIMARY, keys
whose columns are all NOT NULL, then the others, keys without a column prefix
before keys with one, otherwise as declared.  Without a PRIMARY KEY the first
unique key in that order whose parts are all NOT NULL, whole columns (no
prefix) and not virtual generated columns (functional key parts are hidden
virtual columns) becomes the primary key (it keeps its name); a candidate that
fails is skipped for the next.  A foreign key's parent constraint is the
parent's PRIMARY or UNIQUE key whose columns are the referenced columns in
their order (InnoDB's parent index: the referenced columns as its leading
columns), else one over the same columns in another order; none: the FK is
skipped, as MySQL does.  ``PARTITION BY`` clauses are dropped before parsing
(they do not change keys).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .model import SchemaError

__all__ = ["Schema", "TableSchema", "ColumnSchema", "KeyPart", "IndexSchema",
           "ForeignKeySchema", "load_schema", "parse_schema"]


@dataclass(frozen=True, slots=True)
class ColumnSchema:
    name: str
    type: str                       # lower-case SQL type name: int, varchar, decimal ...
    params: tuple[Any, ...] = ()    # (11,) / (12, 4) / enum labels
    unsigned: bool = False
    nullable: bool = True
    charset: str | None = None
    collation: str | None = None    # explicit or inherited from the table
    generated: bool = False
    virtual: bool = False           # a VIRTUAL generated column (never a primary key part)


@dataclass(frozen=True, slots=True)
class KeyPart:
    column: str | None              # None: a functional (expression) key part
    prefix: int = 0                 # characters; 0 = whole column


@dataclass(frozen=True, slots=True)
class IndexSchema:
    name: str
    parts: tuple[KeyPart, ...]
    primary: bool = False

    @property
    def columns(self) -> tuple[str | None, ...]:
        return tuple(p.column for p in self.parts)

    @property
    def functional(self) -> bool:
        return any(p.column is None for p in self.parts)


@dataclass(frozen=True, slots=True)
class ForeignKeySchema:
    name: str
    columns: tuple[str, ...]
    ref_db: str | None
    ref_table: str
    ref_columns: tuple[str, ...]
    ref_index: str | None = None    # the parent's PRIMARY/UNIQUE key name; None: not unique

    @property
    def ref_name(self) -> str:
        return f"{self.ref_db}.{self.ref_table}" if self.ref_db else self.ref_table


@dataclass(frozen=True, slots=True)
class TableSchema:
    """One table: columns, unique keys (MySQL order) and foreign keys.

    ``primary_key`` is the declared PRIMARY KEY, or the promoted first NOT NULL
    UNIQUE key (MySQL's ``TABLE_SHARE::primary_key``); ``unique_keys`` lists
    every unique index *including* the primary key, in the order MySQL hashes
    them.  ``referenced_by`` names the ``db.table`` of children.
    """

    db: str | None
    name: str
    columns: tuple[ColumnSchema, ...]
    primary_key: IndexSchema | None
    unique_keys: tuple[IndexSchema, ...]
    foreign_keys: tuple[ForeignKeySchema, ...] = ()
    referenced_by: tuple[str, ...] = ()
    source: str = ""                # FILE:LINE of the CREATE TABLE

    @property
    def qualified_name(self) -> str:
        return f"{self.db}.{self.name}" if self.db else self.name

    def column(self, name: str) -> ColumnSchema | None:
        low = name.lower()
        for c in self.columns:
            if c.name.lower() == low:
                return c
        return None

    def column_index(self, name: str) -> int | None:
        low = name.lower()
        for i, c in enumerate(self.columns):
            if c.name.lower() == low:
                return i
        return None


@dataclass(slots=True)
class Schema:
    """Tables by ``(db, name)``; a table with an unknown database is stored under ``None``."""

    tables: dict[tuple[str | None, str], TableSchema] = field(default_factory=dict)
    #: ``db.table`` (or bare table) names referenced by some foreign key
    fk_parents: set[str] = field(default_factory=set)
    _warned: set[Any] = field(default_factory=set, repr=False)

    def table(self, db: str | None, name: str) -> TableSchema | None:
        """The table ``db.name``: exact match, then case-insensitive, then database-less."""
        t = self.tables.get((db, name)) or self.tables.get((None, name))
        if t is not None:
            return t
        low = (db.lower() if db else None, name.lower())
        for (d, n), t in self.tables.items():
            if n.lower() == low[1] and (d is None or d.lower() == low[0]):
                return t
        return None

    def is_fk_parent(self, db: str, name: str) -> bool:
        t = self.table(db, name)
        if t is not None and t.referenced_by:
            return True
        return f"{db}.{name}" in self.fk_parents or name in self.fk_parents

    def __len__(self) -> int:
        return len(self.tables)

    def __iter__(self) -> Iterator[TableSchema]:
        return iter(self.tables.values())


# ---- loading ----

_DB_HINTS = (re.compile(r"^--.*\(database\s+`?([\w$]+)`?\)", re.I | re.M),
             re.compile(r"^--\s*Host:.*Database:\s*`?([\w$]+)`?", re.I | re.M))
_DELIMITER = re.compile(r"^\s*DELIMITER\s+(\S+)\s*$", re.I | re.M)


#: The largest schema file read (``mysqldump --no-data`` of ~100k tables).
SCHEMA_LIMIT = 64 << 20


def load_schema(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                default_db: str | None = None) -> Schema:
    """Read ``CREATE TABLE`` statements from one or more files into a :class:`Schema`.

    :param default_db: database for tables that are not qualified and follow no
        ``USE`` (before a header-comment hint).
    :raises SchemaError: a file cannot be read, or a ``CREATE TABLE`` cannot be
        parsed (the message names the file and line).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    schema = Schema()
    from ..errors import ReplToolError
    from ..outputs import read_bytes_bounded
    for path in paths:
        try:
            # a regular file of at most SCHEMA_LIMIT bytes (not a FIFO, not /dev/zero)
            text = read_bytes_bounded(path, SCHEMA_LIMIT, "schema file").decode(
                "utf-8", errors="replace")
        except ReplToolError as exc:
            raise SchemaError(f"cannot read {exc.reason}") from None
        try:
            parse_schema(text, default_db=default_db, source=os.fspath(path), into=schema)
        except RecursionError:
            raise SchemaError(f"schema file {os.fspath(path)}: nested too deeply to "
                              "parse") from None
    _link(schema)
    return schema


def parse_schema(text: str, *, default_db: str | None = None, source: str = "<schema>",
                 into: Schema | None = None) -> Schema:
    """Parse schema text (see :func:`load_schema`); ``into`` accumulates several files."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    schema = into if into is not None else Schema()
    hint = None
    for rx in _DB_HINTS:
        m = rx.search(text)
        if m:
            hint = m.group(1)
            break
    current = default_db or hint
    for stmt_text, line in _statements(_strip_delimiter_blocks(text)):
        head = stmt_text.lstrip().upper()
        if head.startswith("USE"):
            m = re.match(r"\s*USE\s+`?([^`;\s]+)`?", stmt_text, re.I)
            if m:
                current = m.group(1)
            continue
        if not re.match(r"CREATE\s+(TEMPORARY\s+)?TABLE", head):
            continue
        where = f"{source}:{line}"
        try:
            tree = sqlglot.parse_one(_drop_partitioning(stmt_text), read="mysql")
        except SqlglotError as exc:
            msg = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            raise SchemaError(f"{where}: cannot parse CREATE TABLE: {msg}") from exc
        if not isinstance(tree, exp.Create) or not isinstance(tree.this, exp.Schema):
            continue        # CREATE TABLE ... LIKE / AS SELECT: no column list
        table = _table(tree, current, where)
        schema.tables[(table.db, table.name)] = table
    if into is None:
        _link(schema)
    return schema


_PARTITION = re.compile(r"PARTITION\s+BY\b", re.I)


def _drop_partitioning(stmt: str) -> str:
    """``stmt`` up to its top-level ``PARTITION BY`` clause (outside brackets,
    quotes and comments); partitioning does not change the keys, and the
    parser rejects some of its forms (``VALUES LESS THAN MAXVALUE``)."""
    depth, i, n = 0, 0, len(stmt)
    while i < n:
        c = stmt[i]
        if c in "'\"`":
            i = _quoted_end(stmt, i)
            continue
        if c == "/" and stmt.startswith("/*", i) and not stmt.startswith("/*!", i):
            i = _comment_end(stmt, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and c in "Pp" and _PARTITION.match(stmt, i) \
                and (i == 0 or not (stmt[i - 1].isalnum() or stmt[i - 1] == "_")):
            head = stmt[:i].rstrip()
            if head.endswith("/*!50100") or head.endswith("/*!50500"):    # mysqldump's wrapper
                head = head[:-8]
            return head
        i += 1
    return stmt


def _quoted_end(text: str, i: int) -> int:
    """Where the string or quoted identifier that opens at ``text[i]`` (``'``, ``"`` or
    a backtick) ends: the index after its closing quote (past ``len(text)`` when it is
    not closed).  A backslash escapes the next character, except between backticks."""
    c, j, n = text[i], i + 1, len(text)
    while j < n and text[j] != c:
        j += 2 if text[j] == "\\" and c != "`" else 1
    return j + 1


def _comment_end(text: str, i: int) -> int:
    """The index after the ``/* ... */`` comment that opens at ``text[i]`` (``len(text)``
    when it is not closed)."""
    j = text.find("*/", i + 2)
    return len(text) if j < 0 else j + 2


def _strip_delimiter_blocks(text: str) -> str:
    """Blank out ``DELIMITER x ... DELIMITER ;`` sections (routines, triggers)."""
    out = []
    pos = 0
    for m in _DELIMITER.finditer(text):
        if m.group(1) == ";":
            continue
        end = re.compile(r"^\s*DELIMITER\s+;\s*$", re.I | re.M).search(text, m.end())
        stop = end.end() if end else len(text)
        out.append(text[pos:m.start()])
        out.append("\n" * text.count("\n", m.start(), stop))     # keep line numbers
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def _statements(text: str) -> Iterator[tuple[str, int]]:
    """Split on top-level semicolons (outside quotes and comments): (text, first line)."""
    i, n, start = 0, len(text), 0
    while i < n:
        c = text[i]
        if c in "'\"`":
            i = _quoted_end(text, i)
            continue
        if c == "-" and text.startswith("--", i) or c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if c == "/" and text.startswith("/*", i):
            i = _comment_end(text, i)
            continue
        if c == ";":
            yield from _chunk(text, start, i)
            start = i + 1
        i += 1
    yield from _chunk(text, start, n)


def _chunk(text: str, start: int, end: int) -> Iterator[tuple[str, int]]:
    chunk = text[start:end]
    body = re.sub(r"(--[^\n]*|#[^\n]*|/\*.*?\*/)", lambda m: " " * len(m.group(0)), chunk,
                  flags=re.S)
    stripped = body.lstrip()
    if not stripped:
        return
    offset = start + (len(body) - len(stripped))
    yield text[offset:end], text.count("\n", 0, offset) + 1


def _name(node: Any) -> str | None:
    if node is None:
        return None
    if hasattr(node, "name") and node.name:
        return str(node.name)
    if hasattr(node, "this") and isinstance(node.this, str):
        return node.this
    return str(node) or None


def _table(tree: Any, current_db: str | None, where: str) -> TableSchema:
    from sqlglot import exp

    tbl = tree.this.this
    db = tbl.db or current_db or None
    name = tbl.name
    props = tree.args.get("properties")
    t_charset = t_collation = None
    if props is not None:
        for p in props.expressions:
            if isinstance(p, exp.CharacterSetProperty):
                t_charset = _name(p.this)
            elif isinstance(p, exp.CollateProperty):
                t_collation = _name(p.this)
    columns: list[ColumnSchema] = []
    pk: IndexSchema | None = None
    uniques: list[tuple[str | None, tuple[KeyPart, ...]]] = []
    fks: list[tuple[str | None, Any]] = []
    pk_cols: set[str] = set()
    for e in tree.this.expressions:
        if isinstance(e, exp.ColumnDef):
            col, col_pk, col_uk = _column(e, t_charset, t_collation)
            columns.append(col)
            if col_pk:
                pk = IndexSchema("PRIMARY", (KeyPart(col.name),), primary=True)
            if col_uk:
                uniques.append((None, (KeyPart(col.name),)))
            continue
        # a table-level key: unnamed, or the keys of a CONSTRAINT name ...
        named: list[tuple[str | None, Any]] = (
            [(_name(e.this), inner) for inner in e.expressions]
            if isinstance(e, exp.Constraint) else [(None, e)])
        for cname, key in named:
            if isinstance(key, exp.PrimaryKey):
                pk = IndexSchema("PRIMARY", _parts(key.expressions), primary=True)
            elif isinstance(key, exp.UniqueColumnConstraint):
                uniques.append(_unique(key, cname))
            elif isinstance(key, exp.ForeignKey):
                fks.append((cname, key))
    if pk is not None:
        pk_cols = {p.column.lower() for p in pk.parts if p.column}
        columns = [_replace(c, nullable=False) if c.name.lower() in pk_cols else c
                   for c in columns]
    named = _name_uniques(uniques, pk)
    by_name = {c.name.lower(): c for c in columns}

    def not_null(ix: IndexSchema) -> bool:
        # a functional key part is a hidden nullable column (HA_NULL_PART_KEY)
        return not ix.functional and all(
            (by_name.get(p.column.lower()) is not None
             and not by_name[p.column.lower()].nullable) for p in ix.parts if p.column)

    def has_prefix(ix: IndexSchema) -> bool:
        return any(_is_prefix(p, by_name.get((p.column or "").lower())) for p in ix.parts)

    # sort_keys: NOT NULL keys first, then keys without prefix parts, else as declared
    ordered = sorted(named, key=lambda ix: (not not_null(ix), has_prefix(ix)))
    primary = pk
    if primary is None:
        primary = next((ix for ix in ordered if not_null(ix) and not has_prefix(ix)
                        and not any(by_name[p.column.lower()].virtual
                                    for p in ix.parts if p.column)), None)
    keys = ([pk] if pk is not None else []) + ordered
    foreign = tuple(_foreign(cname, f, db, name, i) for i, (cname, f) in enumerate(fks, 1))
    return TableSchema(db, name, tuple(columns), primary, tuple(keys), foreign, (), where)


def _is_prefix(part: KeyPart, col: ColumnSchema | None) -> bool:
    """A key part over only the first characters of its column (``KEY_PART_INFO``
    length below the column's key length)."""
    if not part.prefix:
        return False
    if col is not None and col.type in ("char", "varchar", "binary", "varbinary") \
            and col.params and isinstance(col.params[0], int):
        return part.prefix < col.params[0]
    return True


def _replace(c: ColumnSchema, **kw: Any) -> ColumnSchema:
    from dataclasses import replace
    return replace(c, **kw)


def _column(e: Any, t_charset: str | None, t_collation: str | None
            ) -> tuple[ColumnSchema, bool, bool]:
    from sqlglot import exp

    kind = e.args.get("kind")
    tname, params, unsigned = "unknown", (), False
    if isinstance(kind, exp.DataType):
        tname = kind.this.name.lower() if hasattr(kind.this, "name") else str(kind.this).lower()
        if tname.startswith("u") and tname[1:] in ("tinyint", "smallint", "mediumint", "int",
                                                    "bigint", "double", "float", "decimal"):
            tname, unsigned = tname[1:], True
        vals = []
        for p in kind.expressions:
            v = p.this if isinstance(p, exp.DataTypeParam) else p
            if isinstance(v, exp.Literal):
                vals.append(v.this if v.is_string else int(str(v.this)))
            else:
                vals.append(str(v))
        params = tuple(vals)
    nullable, pk, uk, generated, virtual = True, False, False, False, False
    charset = collation = None
    for c in e.args.get("constraints") or ():
        k = c.args.get("kind") if isinstance(c, exp.ColumnConstraint) else c
        if isinstance(k, exp.NotNullColumnConstraint):
            nullable = bool(k.args.get("allow_null"))
        elif isinstance(k, exp.PrimaryKeyColumnConstraint):
            pk = True
        elif isinstance(k, exp.UniqueColumnConstraint):
            uk = True
        elif isinstance(k, exp.CharacterSetColumnConstraint):
            charset = _name(k.this)
        elif isinstance(k, exp.CollateColumnConstraint):
            collation = _name(k.this)
        elif isinstance(k, exp.ComputedColumnConstraint):
            generated, virtual = True, not k.args.get("persisted")
        elif isinstance(k, exp.GeneratedAsIdentityColumnConstraint) \
                and k.args.get("expression") is not None:
            generated, virtual = True, True     # GENERATED ALWAYS AS (expr): VIRTUAL
    if tname in ("char", "varchar", "text", "tinytext", "mediumtext", "longtext", "enum", "set",
                 "json", "nchar", "nvarchar"):
        if collation is None:
            # a column charset without a collation means that charset's default
            collation = t_collation if charset is None or charset == t_charset else None
        if charset is None:
            charset = t_charset
    elif tname in ("binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob"):
        charset, collation = "binary", "binary"
    return (ColumnSchema(e.name, tname, params, unsigned, nullable and not pk, charset, collation,
                         generated, virtual), pk, uk)


def _parts(exprs: Iterable[Any]) -> tuple[KeyPart, ...]:
    from sqlglot import exp

    out = []
    for x in exprs:
        if isinstance(x, exp.Ordered):
            x = x.this
        if isinstance(x, exp.ColumnPrefix):
            out.append(KeyPart(_name(x.this) or "", int(str(x.expression.this))))
        elif isinstance(x, (exp.Identifier, exp.Column)):
            out.append(KeyPart(x.name))
        else:
            out.append(KeyPart(None))            # (expression): functional key part
    return tuple(out)


def _unique(e: Any, constraint_name: str | None) -> tuple[str | None, tuple[KeyPart, ...]]:
    from sqlglot import exp

    s = e.this
    if isinstance(s, exp.Schema):
        return (_name(s.this) or constraint_name, _parts(s.expressions))
    return (constraint_name, ())


def _name_uniques(uniques: list[tuple[str | None, tuple[KeyPart, ...]]],
                  pk: IndexSchema | None) -> list[IndexSchema]:
    taken = {"primary"} if pk is not None else set()
    taken |= {n.lower() for n, _ in uniques if n}
    out = []
    for n, parts in uniques:
        if not parts:
            continue
        if not n:
            base = parts[0].column or "functional_index"
            n, k = base, 2
            while n.lower() in taken:
                n, k = f"{base}_{k}", k + 1
            taken.add(n.lower())
        out.append(IndexSchema(n, parts))
    return out


def _foreign(cname: str | None, f: Any, db: str | None, table: str, number: int
             ) -> ForeignKeySchema:
    ref = f.args.get("reference")
    target = ref.this if ref is not None else None
    ref_tbl = target.this if target is not None else None
    ref_cols = tuple(_name(x) or "" for x in (target.expressions if target is not None else ()))
    cols = tuple(_name(x) or "" for x in f.expressions)
    return ForeignKeySchema(cname or f"{table}_ibfk_{number}", cols,
                            (ref_tbl.db or db) if ref_tbl is not None else db,
                            ref_tbl.name if ref_tbl is not None else "", ref_cols or cols)


def _link(schema: Schema) -> None:
    """Resolve each FK's parent unique constraint and fill ``referenced_by``."""
    from dataclasses import replace

    children: dict[tuple[str | None, str], list[str]] = {}
    for key, t in list(schema.tables.items()):
        fks = []
        for fk in t.foreign_keys:
            parent = schema.table(fk.ref_db, fk.ref_table)
            ref_index: str | None = "PRIMARY"     # unknown parent: assume its PRIMARY KEY
            if parent is not None:
                want = [c.lower() for c in fk.ref_columns]
                whole = [ix for ix in parent.unique_keys if not any(p.prefix for p in ix.parts)]
                ref_index = next((ix.name for ix in whole
                                  if [(c or "").lower() for c in ix.columns] == want), None)
                if ref_index is None:
                    ref_index = next((ix.name for ix in whole if sorted(
                        (c or "").lower() for c in ix.columns) == sorted(want)), None)
                children.setdefault((parent.db, parent.name), []).append(t.qualified_name)
            schema.fk_parents.add(fk.ref_name)
            fks.append(replace(fk, ref_index=ref_index))
        schema.tables[key] = replace(t, foreign_keys=tuple(fks))
    for key, names in children.items():
        t = schema.tables.get(key)
        if t is not None:
            schema.tables[key] = replace(t, referenced_by=tuple(dict.fromkeys(names)))
