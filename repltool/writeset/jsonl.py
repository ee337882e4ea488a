"""``repltool dump --writesets`` lines: one JSON object per transaction, fast.

:class:`RecordWriter` returns exactly ``json.dumps(writeset_record(trx, ws),
ensure_ascii=False)`` (``tests/writeset/test_jsonl.py`` compares them on the
corpus, synthetic logs and generated values), assembled from pieces that are
encoded once:

* each distinct :class:`~repltool.writeset.model.WriteKey` object - the
  key-only extractor hands out the same object for the same key bytes (an
  UPDATE's before and after images, hot rows), and a key's JSON never changes;
* the ``{"db": ..., "table": ..., "index": ..., "values": [`` head of each
  (db, table, index, parent) and the ``"flags"`` object of each flag
  combination;
* ``int`` and ``str`` values with the encoder's own rules (``int.__repr__``,
  ``json.encoder.encode_basestring``); any other value goes through
  ``json.dumps`` of its :func:`~repltool.writeset.model.jsonable` form.

:func:`repltool.writeset.fused.read_writeset_lines` builds the same lines
from keys encoded as they are found (:func:`key_head`, :func:`value_json`,
:meth:`RecordWriter.record`), without ``WriteKey`` or ``TrxWriteset`` objects.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

from ..binlog import Transaction
from .model import TrxWriteset, WriteKey, jsonable

__all__ = ["RecordWriter", "key_head", "encode_key", "value_json"]

CACHE_SIZE = 4096
_HEADS: dict[tuple[str, str, str, bool], tuple[str, str]] = {}


def key_head(db: str, table: str, index: str, parent: bool) -> tuple[str, str]:
    """The JSON of a key around its values: ``('{"db": ..., "values": [', tail)``
    where the tail follows the ``"hash"`` number (``}`` or ``, "parent": true}``)."""
    hk = (db, table, index, parent)
    head = _HEADS.get(hk)
    if head is None:
        d = json.dumps({"db": db, "table": table, "index": index, "values": 0},
                       ensure_ascii=False)
        if len(_HEADS) >= CACHE_SIZE:
            _HEADS.clear()
        head = _HEADS[hk] = (d[:-2] + "[", ', "parent": true}' if parent else "}")
    return head


def encode_key(k: WriteKey) -> str:
    """``json.dumps(k.to_dict(), ensure_ascii=False)``."""
    head = _HEADS.get((k.db, k.table, k.index, k.parent)) \
        or key_head(k.db, k.table, k.index, k.parent)
    values = k.values
    if len(values) == 1 and type(values[0]) is int:
        return f'{head[0]}{int.__repr__(values[0])}], "hash": {int.__repr__(k.hash)}{head[1]}'
    return "".join((head[0], ", ".join(map(value_json, values)), '], "hash": ',
                    int.__repr__(k.hash), head[1]))


def value_json(v: Any) -> str:
    """``json.dumps(jsonable(v), ensure_ascii=False)``."""
    t = type(v)
    if t is int:
        return int.__repr__(v)
    if t is str:
        return encode_basestring(v)
    return json.dumps(jsonable(v), ensure_ascii=False)


class RecordWriter:
    """``line(trx, ws)`` -> the JSON text of :func:`~repltool.writeset.writeset_record`."""

    def __init__(self) -> None:
        # id(key) -> its JSON; ``_alive`` holds the keys, so no id is reused while cached
        self._keys: dict[int, str] = {}
        self._alive: list[WriteKey] = []
        self._flags: dict[tuple[Any, ...], str] = {}
        self._files: dict[str, str] = {}

    def line(self, trx: Transaction, ws: TrxWriteset) -> str:
        get = self._keys.get
        frags = [get(id(k)) or self._key(k) for k in ws.keys]
        return self.record(trx, frags, (ws.ddl, ws.empty, ws.missing_key_tables,
                                        ws.fk_parent_tables, ws.limit_reached))

    def record(self, trx: Any, frags: list[str], flags_key: tuple[Any, ...]) -> str:
        """The line of ``trx`` whose keys encode to ``frags``; ``flags_key``: the
        writeset's ``(ddl, empty, missing_key_tables, fk_parent_tables, limit_reached)``."""
        start = trx.start
        file = self._files.get(start.file)
        if file is None:
            file = self._files[start.file] = encode_basestring(start.file)
        gtid = trx.gtid
        gtid = "null" if gtid is None else encode_basestring(gtid)
        flags = self._flags.get(flags_key)
        if flags is None:
            if len(self._flags) >= CACHE_SIZE:
                self._flags.clear()
            ddl, empty, missing, parents, limit = flags_key
            flags = self._flags[flags_key] = json.dumps(TrxWriteset(
                ddl=ddl, empty=empty, missing_key_tables=tuple(missing),
                fk_parent_tables=tuple(parents), limit_reached=limit).flags(),
                ensure_ascii=False)
        if len(frags) < 16:
            # one f-string (a single build of the line; most lines have few keys)
            return (f'{{"file": {file}, "pos": {int.__repr__(start.offset)}, "gtid": {gtid}, '
                    f'"keys": [{", ".join(frags)}], "flags": {flags}}}')
        head = ('{"file": ', file, ', "pos": ', int.__repr__(start.offset), ', "gtid": ', gtid,
                ', "keys": [')
        tail = ('], "flags": ', flags, "}")
        # many keys (or chunks of them, fused.py): one join, so the keys' text is not
        # built a second time inside the line
        parts = [", "] * (2 * len(frags) - 1)
        parts[::2] = frags
        return "".join((*head, *parts, *tail))

    def _key(self, k: WriteKey) -> str:
        """``json.dumps(k.to_dict(), ensure_ascii=False)``, remembered for ``k``."""
        if len(self._alive) >= CACHE_SIZE:
            self._keys.clear()
            self._alive.clear()
        self._alive.append(k)
        text = self._keys[id(k)] = encode_key(k)
        return text
