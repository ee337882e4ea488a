"""Lists of records as columns: how executors send transactions and results to the driver.

A list of same-class frozen dataclasses (or NamedTuples such as
:class:`~repltool.positions.Position`) is sent as one column per field
instead of one pickled object tree per item:

* integers (``None`` allowed) as ``array('q')`` bytes of their differences
  (offsets, clocks and timestamps grow slowly), zlib-compressed, and a null mask;
* booleans as bytes;
* nested records (``start``, ``end``, a result's ``trx``) as columns again;
* strings that end in a number (GTIDs ``uuid:123``, ``0-1-25``) as an interned
  prefix and an ``int64`` column;
* everything else (file names, kinds, table tuples, reasons) interned: a
  table of the distinct values and an ``array('I')`` of indexes (compressed).

Executors and the driver run the same repltool (checked at start-up), so the
field order is the same on both sides.  :func:`unpack` gives back equal
objects (``==``); the driver rebuilds them one list at a time.
"""

from __future__ import annotations

import dataclasses
import zlib
from array import array
from itertools import accumulate, repeat
from operator import sub as _sub
from typing import Any, Iterator, Sequence


class Columns:
    """``n`` records of class ``cls`` as columns (iterable; :func:`unpack` rebuilds them)."""

    __slots__ = ("cls", "n", "names", "cols")

    def __init__(self, cls: type, n: int, names: tuple[str, ...], cols: list[Any]) -> None:
        self.cls, self.n, self.names, self.cols = cls, n, names, cols

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[Any]:
        return iter(unpack(self))

    def __reduce__(self) -> Any:
        return (Columns, (self.cls, self.n, self.names, self.cols))


def _record_fields(cls: type, skip: Sequence[str]) -> tuple[str, ...] | None:
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls) if f.init and f.name not in skip)
    fields = getattr(cls, "_fields", None)
    return tuple(fields) if isinstance(fields, tuple) else None


def pack(items: Sequence[Any], skip: Sequence[str] = ()) -> Columns:
    """Items of one record class as :class:`Columns`.

    :param skip: fields left out (they must have defaults, and be empty in
        every item: the caller checks that, e.g. ``events=()``).
    :raises TypeError: when the items are not all of one record class.
    """
    if not items:
        return Columns(type(None), 0, (), [])
    cls = type(items[0])
    names = _record_fields(cls, skip)
    if names is None or any(type(x) is not cls for x in items):
        raise TypeError(f"pack: not a list of one record class ({cls.__name__})")
    return Columns(cls, len(items), names, [_column([getattr(x, n) for x in items])
                                            for n in names])


def from_lists(cls: type, values: Sequence[list[Any]]) -> Columns:
    """:func:`pack` of the records ``cls(*row)`` for the rows of ``values`` (one list per
    field of ``cls``, in its order), without making them."""
    names = _record_fields(cls, ())
    if names is None or len(names) != len(values):
        raise TypeError(f"from_lists: not one list per field of {cls.__name__}")
    n = len(values[0]) if values else 0
    if n == 0:
        return Columns(type(None), 0, (), [])
    return Columns(cls, n, names, [_column(list(v)) for v in values])


def _column(values: list[Any]) -> tuple[Any, ...]:
    kinds = {type(v) for v in values}
    if kinds == {bool}:
        return ("b", bytes(values))
    if kinds <= {int, type(None)} and kinds != {type(None)}:
        mask = bytes(v is None for v in values) if type(None) in kinds else None
        try:
            ints = array("q", [0 if v is None else v for v in values])
        except OverflowError:
            pass
        else:
            # deltas: offsets, sequence numbers and timestamps grow slowly
            deltas = array("q", [ints[0]]) + array("q", map(_sub, ints[1:], ints[:-1])) \
                if _fits_deltas(ints) else None
            if deltas is not None:
                return ("d", zlib.compress(deltas.tobytes(), 1), mask)
            return ("i", zlib.compress(ints.tobytes(), 1), mask)
    if len(kinds) == 1 and _record_fields(next(iter(kinds)), ()) is not None:
        return ("c", pack(values))
    if kinds <= {str, type(None)} and len(set(values)) > len(values) // 2:
        return _numbered(values)
    return _interned(values)


def _fits_deltas(ints: array) -> bool:
    return bool(ints) and max(ints) < 1 << 62 and min(ints) > -(1 << 62)


def _interned(values: list[Any]) -> tuple[Any, ...]:
    table: dict[Any, int] = {}
    try:
        refs = array("I", [table.setdefault(v, len(table)) for v in values])
    except TypeError:                       # unhashable: as they are
        return ("l", values)
    return ("r", list(table), zlib.compress(refs.tobytes(), 1))


def _numbered(values: list[str | None]) -> tuple[Any, ...]:
    prefixes, numbers = [], array("q")
    for v in values:
        if v is None:
            prefixes.append(None)
            numbers.append(-1)
            continue
        head = v.rstrip("0123456789")
        tail = v[len(head):]
        if tail and (tail == "0" or tail[0] != "0") and len(tail) < 19:
            prefixes.append(head)
            numbers.append(int(tail))
        else:
            prefixes.append(v)
            numbers.append(-1)
    return ("n", _interned(prefixes), zlib.compress(numbers.tobytes(), 1))


def unpack(columns: Columns) -> list[Any]:
    """The records, equal to the packed ones."""
    if columns.n == 0:
        return []
    cols = [_values(c, columns.n) for c in columns.cols]
    cls = columns.cls
    build = _builder(cls, columns.names)
    if build is not None:
        return list(map(build, *cols))
    if dataclasses.is_dataclass(cls):
        init = [f.name for f in dataclasses.fields(cls) if f.init]
        if list(columns.names) != init[:len(columns.names)] or any(
                getattr(f, "kw_only", False) for f in dataclasses.fields(cls)):
            names = columns.names
            return [cls(**dict(zip(names, row))) for row in zip(*cols)]
    fields = getattr(cls, "_fields", None)
    if issubclass(cls, tuple) and fields is not None and tuple(fields) == columns.names:
        return list(map(tuple.__new__, repeat(cls), zip(*cols)))    # NamedTuple: no frames
    return [cls(*row) for row in zip(*cols)]


def _values(col: tuple[Any, ...], n: int) -> list[Any]:
    kind = col[0]
    if kind == "b":
        return list(map(bool, col[1]))
    if kind in ("i", "d"):
        ints = array("q")
        ints.frombytes(zlib.decompress(col[1]))
        values = list(accumulate(ints)) if kind == "d" else ints.tolist()
        if col[2] is not None:
            values = [None if null else v for v, null in zip(values, col[2])]
        return values
    if kind == "c":
        return unpack(col[1])
    if kind == "r":
        refs = array("I")
        refs.frombytes(zlib.decompress(col[2]))
        table = col[1]
        return list(map(table.__getitem__, refs))
    if kind == "n":
        prefixes = _values(col[1], n)
        numbers = array("q")
        numbers.frombytes(zlib.decompress(col[2]))
        return [p if p is None or k < 0 else f"{p}{k}" for p, k in zip(prefixes, numbers)]
    return list(col[1])


_BUILDERS: dict[tuple[type, tuple[str, ...]], Any] = {}


def _builder(cls: type, names: tuple[str, ...]) -> Any:
    """A constructor of ``cls`` from the ``names`` fields' values, or None.

    For frozen slotted dataclasses without ``__post_init__`` whose other fields
    have plain defaults: the object is made with ``object.__new__`` and each
    slot set through its descriptor (generated code, no per-field keyword
    dictionary, no ``object.__setattr__`` call): equal objects in a third of
    the time of ``cls(**fields)``.  The values were made by the same class on
    an executor, so ``__init__`` has nothing to check.
    """
    key = (cls, names)
    if key in _BUILDERS:
        return _BUILDERS[key]
    build = None
    if (dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__
            and not hasattr(cls, "__post_init__")):
        fields = dataclasses.fields(cls)
        rest = [f for f in fields if f.name not in names]
        if all(f.init for f in fields) and all(f.default is not dataclasses.MISSING
                                               for f in rest):
            ns: dict[str, Any] = {"new": object.__new__, "cls": cls}
            args = [f"a{i}" for i in range(len(names))]
            body = ["    o = new(cls)"]
            for i, name in enumerate(names):
                ns[f"s{i}"] = _slot(cls, name)
                body.append(f"    s{i}(o, a{i})")
            for j, f in enumerate(rest):
                ns[f"d{j}"], ns[f"v{j}"] = _slot(cls, f.name), f.default
                body.append(f"    d{j}(o, v{j})")
            exec("\n".join([f"def build({', '.join(args)}):", *body, "    return o"]), ns)
            build = ns["build"]
    _BUILDERS[key] = build
    return build


def _slot(cls: type, name: str) -> Any:
    for k in cls.__mro__:
        if name in k.__dict__:
            return k.__dict__[name].__set__
    raise AttributeError(name)


def field_values(columns: Columns, name: str) -> list[Any]:
    """One field of every record, in order, without building the records."""
    return _values(columns.cols[columns.names.index(name)], columns.n) if columns.n else []
