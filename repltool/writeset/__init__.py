"""Writesets the way MySQL 8.0 computes them: the keys each transaction wrote.

Public API::

    from repltool.binlog import read_transactions
    from repltool.writeset import READ_OPTIONS, iter_writesets, load_schema

    schema = load_schema("schema.sql")            # SHOW CREATE TABLE / mysqldump --no-data
    trxs = read_transactions(paths, READ_OPTIONS, keep_events=True)
    for trx, ws in iter_writesets(trxs, schema):
        print(trx.gtid, ws.hashes, ws.missing_key_tables, ws.fk_parent_tables)

    # the same pairs, several times faster (transactions without their events):
    for trx, ws in read_writesets(paths, schema):
        ...

Rules: format-spec §6b and gotchas 13-16 (see :mod:`repltool.writeset.extract`);
string keys are MySQL's collation weight strings where repltool reproduces
the collation exactly (:mod:`repltool.writeset.collation`; other collations
make their tables "missing keys"), the other types use MySQL's sort-key
images (:mod:`repltool.writeset.sortkey`).
"""

from __future__ import annotations

from .collation import Collation, collation_by_id, collation_by_name, field_sort_key
from .extract import (
    READ_OPTIONS, WritesetExtractor, iter_writesets, key_string, stream_writesets, writeset_of,
    writeset_record, xxh64,
)
from .fused import read_writeset_hashes, read_writesets
from .model import (
    HashedWriteset, MissingKey, SchemaError, SchemaMismatch, SchemaWarning, TrxWriteset, WriteKey,
    WritesetError, WritesetWarning, jsonable,
)
from .schema import (
    ColumnSchema, ForeignKeySchema, IndexSchema, KeyPart, Schema, TableSchema, load_schema,
    parse_schema,
)

__all__ = [
    "WriteKey", "TrxWriteset", "writeset_of", "iter_writesets", "stream_writesets", "WritesetExtractor", "writeset_record",
    "READ_OPTIONS", "read_writesets", "read_writeset_hashes", "HashedWriteset", "load_schema", "parse_schema", "Schema", "TableSchema", "ColumnSchema",
    "IndexSchema", "KeyPart", "ForeignKeySchema", "key_string", "xxh64", "jsonable",
    "Collation", "field_sort_key", "collation_by_id", "collation_by_name",
    "MissingKey", "WritesetError", "WritesetWarning", "SchemaError", "SchemaMismatch", "SchemaWarning",
]
