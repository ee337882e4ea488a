"""Per-table key plans and the key entries they build from row values.

A :class:`Plan` says which unique keys (PRIMARY first) and which foreign keys
of a table give writeset entries; :func:`key_entries` and :func:`fk_entry`
turn the decoded value and stored bytes of the key columns
into :class:`~repltool.writeset.model.WriteKey` records.  Both the general
extractor (every column decoded, :mod:`repltool.writeset.extract`) and the
key-only one (:mod:`repltool.writeset.fastkeys`) build their entries here, so
the key strings cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import xxhash

from .model import KEY_SEP, WriteKey, key_prefix, new_write_key
from .sortkey import SortKey

SEP = KEY_SEP                       # b"\xc2\xbd"
_xxh64 = xxhash.xxh64_intdigest


def key_string(index: str, db: str, table: str, sort_keys: Iterable[bytes]) -> bytes:
    """The writeset key string for one index entry.

    Example (format-spec §8, ``BINARY(1)`` key '1')::

        >>> key_string("PRIMARY", "test", "t1", [b"1"]).decode()
        'PRIMARY½test½4t1½21½1'
    """
    return join_key(key_prefix(index, db, table), sort_keys)


def join_key(prefix: bytes, sort_keys: Iterable[bytes]) -> bytes:
    """``prefix`` followed by ``sortkey½len`` per key part."""
    parts = [prefix]
    for sk in sort_keys:
        parts += [sk, SEP, str(len(sk)).encode()]
    return b"".join(parts)


@dataclass(frozen=True, slots=True)
class Part:
    column: int
    sort_key: SortKey
    #: the whole-column sort key of 8.0's second ("old format") entry, for parts whose
    #: sort-key length differs from the column's pack length: prefix parts and
    #: VARCHAR/VARBINARY columns (add_pke ``old_pke_needed``)
    full_key: SortKey | None


@dataclass(frozen=True, slots=True)
class Key:
    name: str
    parts: tuple[Part, ...]
    prefix: bytes                   # index½db½len table½len

    @property
    def has_prefix(self) -> bool:
        return any(p.full_key is not None for p in self.parts)


@dataclass(frozen=True, slots=True)
class Fk:
    """One foreign key: one entry per row image (8.0.43 add_pke), the sort keys of its
    non-NULL columns in the FK's column order after ``prefix`` - the key string of
    the parent's referenced unique key for the same values."""

    columns: tuple[int, ...]
    sort_keys: tuple[SortKey, ...]
    prefix: bytes                   # parent_constraint½parent_db½len parent_table½len
    db: str
    table: str
    index: str


@dataclass(frozen=True, slots=True)
class Plan:
    name: str                       # db.table
    keys: tuple[Key, ...]           # empty: no usable key
    fks: tuple[Fk, ...]
    fk_parent: bool
    usable: bool
    why: str = "no-usable-key"      # when not usable: a model.MissingKey reason

    @property
    def need(self) -> int:
        """Bitmask of the columns the entries are built from (key parts, FK columns)."""
        mask = 0
        for k in self.keys:
            for p in k.parts:
                mask |= 1 << p.column
        for f in self.fks:
            for c in f.columns:
                mask |= 1 << c
        return mask


def key_entries(key: Key, db: str, table: str, values: Sequence[Any],
                raws: Sequence[bytes]) -> tuple[WriteKey, ...]:
    """The entries of one unique key whose parts are all non-NULL.

    ``values``/``raws``: per key part, the decoded value and its stored bytes.
    A key with a prefix part also gets 8.0's full-column ("old format") entry.
    """
    parts = key.parts
    if len(parts) == 1:                                         # the common case, unrolled
        part, value, raw = parts[0], values[0], raws[0]
        sk, kv = part.sort_key(value, raw)
        data = b"".join((key.prefix, sk, SEP, str(len(sk)).encode()))
        first = new_write_key(db, table, key.name, (kv,), data, _xxh64(data))
        if part.full_key is None:
            return (first,)
        sk, kv = part.full_key(value, raw)
        data = b"".join((key.prefix, sk, SEP, str(len(sk)).encode()))
        return (first, new_write_key(db, table, key.name, (kv,), data, _xxh64(data)))
    sks: list[bytes] = []
    vals: list[Any] = []
    for part, v, r in zip(key.parts, values, raws):
        sk, kv = part.sort_key(v, r)
        sks.append(sk)
        vals.append(kv)
    data = join_key(key.prefix, sks)
    out = [WriteKey(db, table, key.name, tuple(vals), data, _xxh64(data))]
    if key.has_prefix:
        full = [(p.full_key or p.sort_key)(v, r) for p, v, r in zip(key.parts, values, raws)]
        data = join_key(key.prefix, [sk for sk, _ in full])
        out.append(WriteKey(db, table, key.name, tuple(v for _, v in full), data, _xxh64(data)))
    return tuple(out)


def fk_entry(fk: Fk, values: Sequence[Any], raws: Sequence[bytes | None]) -> WriteKey:
    """The parent-key entry of one foreign key: ``values``/``raws`` per FK column
    (``None`` raw: NULL, left out of the key string, as add_pke does; all NULL:
    the prefix alone)."""
    sks: list[bytes] = []
    vals: list[Any] = []
    for sort_key, v, r in zip(fk.sort_keys, values, raws):
        if r is None:
            vals.append(None)
            continue
        sk, kv = sort_key(v, r)
        sks.append(sk)
        vals.append(kv)
    data = join_key(fk.prefix, sks)
    return new_write_key(fk.db, fk.table, fk.index, tuple(vals), data, _xxh64(data), True)


def add_image(plan: Plan, values: Sequence[Any], raw: Sequence[bytes | None], db: str,
              table: str, fks: tuple[Fk, ...] | None, out: list[WriteKey]) -> None:
    """The entries of one fully decoded row image (the general path).

    ``raw`` has a slot per column of the Rows event's width; a column past it
    is absent from the image, like a NULL.
    """
    n = len(raw)
    for key in plan.keys:
        rs = [raw[p.column] if p.column < n else None for p in key.parts]
        if None in rs:              # NULL (or absent from the image): never conflicts
            continue
        out += key_entries(key, db, table, [values[p.column] for p in key.parts], rs)  # type: ignore[arg-type]
    if fks:
        for fk in fks:
            out.append(fk_entry(fk, [values[c] if c < n else None for c in fk.columns],
                                [raw[c] if c < n else None for c in fk.columns]))
