"""The records the writeset extractor returns: :class:`WriteKey` and :class:`TrxWriteset`."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from ..errors import ReplToolError

__all__ = ["WriteKey", "TrxWriteset", "WritesetError", "SchemaError", "SchemaMismatch",
           "SchemaWarning", "WritesetWarning", "jsonable", "MissingKey"]


class MissingKey:
    """Why a table written by a transaction has no usable key (``missing_key_reasons``).

    Only :attr:`NO_USABLE_KEY` is MySQL's own ``has_missing_keys`` (the server had no
    key either).  Every other reason means the server *did* hash keys that repltool
    cannot know from the log: a later transaction may conflict with this one on a
    key that is not in its write set, so certify must not let anything overtake it
    (the write-set history is reset there, as for a foreign-key parent).
    """

    NO_USABLE_KEY = "no-usable-key"          # no PRIMARY / NOT NULL UNIQUE key (MySQL's case)
    NO_SCHEMA = "no-schema"                  # no key in the Table_map and no --schema
    UNKNOWN_TABLE = "unknown-table"          # --schema given, the table not in it
    PARTIAL_IMAGE = "partial-image"          # a row image lacks a key column
    UNKNOWN_COLLATION = "unknown-collation"  # a key column's sort key is not reproduced
    DRIFT = "drift"                          # the schema's keys do not fit the Table_map
    FUNCTIONAL_INDEX = "functional-index"    # a unique key on an expression
    UNDECODABLE = "undecodable"              # rows without Table_map / of an undecoded type

    @classmethod
    def keys_unknown(cls, reasons: tuple[str, ...]) -> bool:
        """Whether any reason means keys the server hashed are unknown here."""
        return any(r != cls.NO_USABLE_KEY for r in reasons)


class WritesetError(ReplToolError):
    """A transaction's writeset cannot be computed (rows without a Table_map ...)."""


class SchemaError(ReplToolError):
    """A schema file cannot be read or parsed (message names the file and line)."""

    exit_code = 2


class SchemaMismatch(WritesetError):
    """The schema disagrees with the log (strict mode; otherwise a :class:`SchemaWarning`)."""


class WritesetWarning(UserWarning):
    """Rows that cannot be keyed (no Table_map, undecodable event): treated as keyless."""


class SchemaWarning(WritesetWarning):
    """The schema disagrees with the log; the Table_map's own key information is used."""


@dataclass(frozen=True, slots=True)
class WriteKey:
    """One key a transaction wrote, as MySQL's ``add_pke`` builds it.

    :ivar index: ``PRIMARY``, a UNIQUE index name, or - for a foreign-key parent
        key (``parent=True``) - the name of the parent's referenced unique
        constraint; ``db``/``table`` then name the *parent* table.
    :ivar values: the decoded column values of the key parts (prefix parts
        truncated), in key order.
    :ivar key: the key string that was hashed (``index½db½len table½len
        sortkey½len ...``).
    :ivar hash: ``XXH64(key, seed=0)`` as an unsigned 64-bit integer.
    """

    db: str
    table: str
    index: str
    values: tuple[Any, ...]
    key: bytes
    hash: int
    parent: bool = False

    @property
    def label(self) -> str:
        """``db.table.INDEX=[v1, v2]`` (the corpus ground-truth spelling)."""
        import json
        return (f"{self.db}.{self.table}.{self.index}="
                + json.dumps([jsonable(v) for v in self.values], ensure_ascii=False))

    def to_dict(self) -> dict[str, Any]:
        return {"db": self.db, "table": self.table, "index": self.index,
                "values": [jsonable(v) for v in self.values], "hash": self.hash,
                **({"parent": True} if self.parent else {})}


#: ``object.__new__`` and the slot setters of :class:`WriteKey`'s fields in field
#: order (db, table, index, values, key, hash, parent): what :func:`new_write_key`
#: builds a key with; a builder on a hot path may bind them once itself.
BARE_NEW = object.__new__
WRITE_KEY_SETTERS = tuple(WriteKey.__dict__[f].__set__ for f in
                          ("db", "table", "index", "values", "key", "hash", "parent"))


def new_write_key(db: str, table: str, index: str, values: tuple[Any, ...], key: bytes,
                  hash: int, parent: bool = False) -> WriteKey:
    """``WriteKey(db, table, index, values, key, hash, parent)``, built in half the time.

    A frozen dataclass's ``__init__`` stores each field through
    ``object.__setattr__``; this stores them through the slot descriptors
    directly (the extractor builds one per key it has not seen yet).
    """
    k = BARE_NEW(WriteKey)
    s0, s1, s2, s3, s4, s5, s6 = WRITE_KEY_SETTERS
    s0(k, db)
    s1(k, table)
    s2(k, index)
    s3(k, values)
    s4(k, key)
    s5(k, hash)
    s6(k, parent)
    return k


@dataclass(frozen=True, slots=True)
class TrxWriteset:
    """The writeset of one transaction and the flags MySQL's WRITESET tracker reads.

    :ivar keys: in the order MySQL adds them (per row: after image, then before
        image; per image: PRIMARY and UNIQUE keys in key order, then FK parent
        keys); duplicates kept, as 8.0's vector keeps them.  Kept even when
        ``limit_reached`` (MySQL then drops the writeset: consumers must not use it).
    :ivar ddl: the transaction is a DDL statement.
    :ivar empty: no row changes at all (DDL, XA COMMIT, or nothing logged).
    :ivar missing_key_tables: ``db.table`` written without a usable key (no PK
        and no NOT NULL UNIQUE key; or keys repltool cannot evaluate): nothing
        was hashed for them (MySQL: ``has_missing_keys``).
    :ivar missing_key_reasons: parallel to ``missing_key_tables`` (or empty:
        not said): why each has no usable key, a
        :class:`repltool.certify.model.Fallback` value or a reason of the
        extractor's own (counted by ``repltool certify`` as given).
    :ivar fk_parent_tables: tables written that other tables reference by a
        foreign key (MySQL: ``has_related_foreign_keys``).
    :ivar limit_reached: more than ``history_size`` keys.
    :ivar no_fk_checks: a Rows event carried ``NO_FOREIGN_KEY_CHECKS_F``.
    """

    keys: tuple[WriteKey, ...] = ()
    ddl: bool = False
    empty: bool = True
    missing_key_tables: tuple[str, ...] = ()
    fk_parent_tables: tuple[str, ...] = ()
    limit_reached: bool = False
    no_fk_checks: bool = False
    missing_key_reasons: tuple[str, ...] = ()

    @property
    def hashes(self) -> tuple[int, ...]:
        return tuple(k.hash for k in self.keys)

    @property
    def has_missing_keys(self) -> bool:
        return bool(self.missing_key_tables)

    def flags(self) -> dict[str, Any]:
        return {"ddl": self.ddl, "empty": self.empty,
                "missing_key_tables": list(self.missing_key_tables),
                "fk_parent_tables": list(self.fk_parent_tables),
                "limit_reached": self.limit_reached}


def jsonable(value: Any) -> Any:
    """A decoded column value as JSON can carry it.

    Integers, floats and strings stay; ``Decimal`` -> its text; dates and times
    -> ISO text (TIME as ``[-]hh:mm:ss[.ffffff]``); bytes -> ``"base64:..."``.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, timedelta):
        neg = value < timedelta(0)
        td = -value if neg else value
        secs = td.days * 86400 + td.seconds
        text = f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
        if td.microseconds:
            text += f".{td.microseconds:06d}"
        return ("-" if neg else "") + text
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "base64:" + base64.b64encode(bytes(value)).decode("ascii")
    return str(value)
