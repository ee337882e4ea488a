"""The records the writeset extractor returns: :class:`WriteKey` and :class:`TrxWriteset`."""

from __future__ import annotations

import base64
import marshal
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from operator import attrgetter
from typing import Any, NamedTuple

from ..errors import ReplToolError

__all__ = ["WriteKey", "KeyList", "TrxWriteset", "WritesetError", "SchemaError", "SchemaMismatch",
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


KEY_SEP = "½".encode("utf-8")        # b"\xc2\xbd", MySQL's HASH_STRING_SEPARATOR


def key_prefix(index: str, db: str, table: str) -> bytes:
    """``index½db½len(db)table½len(table)``: how every key string of an index begins
    (:func:`repltool.writeset.key_string` adds ``sortkey½len`` per key part)."""
    d, t = db.encode("utf-8"), table.encode("utf-8")
    return b"".join([index.encode("utf-8"), KEY_SEP, d, KEY_SEP, str(len(d)).encode(), t,
                     KEY_SEP, str(len(t)).encode()])


#: the value types :class:`KeyList` stores with ``marshal`` (exact types: marshal
#: would turn a ``bytearray`` into ``bytes``); a key with any other value is kept whole
_MARSHALLED = frozenset({int, str, bytes, float, bool, type(None)})


class KeyList(Sequence[WriteKey]):
    """A transaction's keys, stored compactly: what :attr:`TrxWriteset.keys` is for a
    transaction with many keys (the extractor moves its keys here in batches,
    ``repltool.writeset.extract.SPILL_AT``; a smaller write set stays a tuple).

    Per key: the hash in ``hashes`` (``array('Q')``, what the trackers and checks
    read), the number of its ``(db, table, index, parent)`` (shared), the offset of
    its record and the record itself in one ``bytearray`` - the key string without
    the :func:`key_prefix` of its index (its length, and whether the prefix was
    left out) and the values, ``marshal``-ed.  About 40 bytes per key (one-INT
    primary key) instead of ~270 for the :class:`WriteKey` objects; ``keys[i]`` builds the :class:`WriteKey`
    again (equal to the one stored).  A key whose values ``marshal`` cannot carry
    exactly (DECIMAL, temporal types) is kept as its object.

    Example::

        >>> kl = KeyList()
        >>> kl.extend([WriteKey("db", "t", "PRIMARY", (7,), b"k", 42)])
        >>> len(kl), kl.hashes[0], kl[0] == WriteKey("db", "t", "PRIMARY", (7,), b"k", 42)
        (1, 42, True)
    """

    __slots__ = ("hashes", "_heads", "_head_of", "_head", "_start", "_blob", "_whole")

    def __init__(self, keys: Iterable[WriteKey] = ()) -> None:
        #: the keys' XXH64 hashes, in order
        self.hashes = array("Q")
        self._heads: list[tuple[str, str, str, bool, bytes]] = []
        self._head_of: dict[tuple[str, str, str, bool], int] = {}
        self._head = array("I")
        self._start = array("Q")
        self._blob = bytearray()
        self._whole: dict[int, WriteKey] = {}
        self.extend(keys)

    def extend(self, keys: Iterable[WriteKey]) -> None:
        """Append ``keys`` (stored, not referenced)."""
        hashes, heads, head_of, head, start, blob = (
            self.hashes, self._heads, self._head_of, self._head, self._start, self._blob)
        dumps, kinds = marshal.dumps, _MARSHALLED
        for k in keys:
            hk = (k.db, k.table, k.index, k.parent)
            n = head_of.get(hk)
            if n is None:
                n = head_of[hk] = len(heads)
                heads.append((*hk, key_prefix(k.index, k.db, k.table)))
            values, key = k.values, k.key
            if not all(type(v) in kinds for v in values) or type(key) is not bytes:
                self._whole[len(hashes)] = k
                values, key = (), b""
            prefix = heads[n][4]
            cut = key.startswith(prefix)
            if cut:
                key = key[len(prefix):]
            hashes.append(k.hash)
            head.append(n)
            start.append(len(blob))
            size = len(key) << 1 | cut          # the rest's length, 7 bits a byte
            while size >= 0x80:
                blob.append(size & 0x7F | 0x80)
                size >>= 7
            blob.append(size)
            blob += key
            blob += dumps(values)

    def __len__(self) -> int:
        return len(self.hashes)

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        if isinstance(index, slice):
            return tuple(self._key(i) for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("KeyList index out of range")
        return self._key(index)

    def __iter__(self) -> Iterator[WriteKey]:
        return map(self._key, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (KeyList, tuple, list)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"KeyList({len(self)} keys)"

    def _key(self, i: int) -> WriteKey:
        whole = self._whole.get(i) if self._whole else None
        if whole is not None:
            return whole
        blob, p = self._blob, self._start[i]
        size = shift = 0
        while True:
            b = blob[p]
            p += 1
            size |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        cut, size = size & 1, size >> 1
        db, table, index, parent, prefix = self._heads[self._head[i]]
        key = (prefix if cut else b"") + blob[p:p + size]
        values = marshal.loads(memoryview(blob)[p + size:])    # reads one object
        return new_write_key(db, table, index, values, bytes(key), self.hashes[i], parent)


_HASH_OF = attrgetter("hash")


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
    :ivar hashes_only: the hashes of a write set the extractor dropped past the
        limit (``WritesetExtractor(drop_past_limit=True)``, MySQL's rule when no
        component requires the full write set): ``keys`` is then empty and
        ``limit_reached`` set; the hashes stay for checks of repltool's own that
        read them (8 bytes a key).

    ``keys`` is a tuple, or a :class:`KeyList` (the same keys, compact) for a
    transaction with many keys.
    """

    keys: Sequence[WriteKey] = ()
    ddl: bool = False
    empty: bool = True
    missing_key_tables: tuple[str, ...] = ()
    fk_parent_tables: tuple[str, ...] = ()
    limit_reached: bool = False
    no_fk_checks: bool = False
    missing_key_reasons: tuple[str, ...] = ()
    hashes_only: Sequence[int] = ()

    @property
    def hashes(self) -> Sequence[int]:
        """The keys' hashes: a tuple, or the ``array('Q')`` of a :class:`KeyList` or
        of ``hashes_only``."""
        keys = self.keys
        if type(keys) is KeyList:
            return keys.hashes
        if not keys and self.hashes_only:
            return self.hashes_only
        return tuple(map(_HASH_OF, keys))

    @property
    def has_missing_keys(self) -> bool:
        return bool(self.missing_key_tables)

    def flags(self) -> dict[str, Any]:
        return {"ddl": self.ddl, "empty": self.empty,
                "missing_key_tables": list(self.missing_key_tables),
                "fk_parent_tables": list(self.fk_parent_tables),
                "limit_reached": self.limit_reached}


class HashedWriteset(NamedTuple):
    """A transaction's write set as its key hashes (:func:`repltool.writeset.read_writeset_hashes`,
    ``repltool certify``): what :class:`TrxWriteset` says, with ``hashes`` given (a tuple,
    or an ``array('Q')``) and ``keys`` a sequence parallel to them whose entries (the
    :class:`WriteKey` records) are built only when one is read - or empty when the
    write set was dropped past the limit (:meth:`TrxWriteset.hashes_only`'s case).  A
    tuple (immutable, built in a fifth of a frozen dataclass's time: one per
    transaction)."""

    hashes: Sequence[int] = ()
    keys: Sequence[WriteKey] = ()
    ddl: bool = False
    empty: bool = True
    missing_key_tables: tuple[str, ...] = ()
    fk_parent_tables: tuple[str, ...] = ()
    limit_reached: bool = False
    no_fk_checks: bool = False
    missing_key_reasons: tuple[str, ...] = ()

    @property
    def has_missing_keys(self) -> bool:
        return bool(self.missing_key_tables)


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
