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
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

from ..binlog import Transaction
from .model import TrxWriteset, WriteKey, jsonable

__all__ = ["RecordWriter"]

CACHE_SIZE = 4096


class RecordWriter:
    """``line(trx, ws)`` -> the JSON text of :func:`~repltool.writeset.writeset_record`."""

    def __init__(self) -> None:
        # id(key) -> its JSON; ``_alive`` holds the keys, so no id is reused while cached
        self._keys: dict[int, str] = {}
        self._alive: list[WriteKey] = []
        self._heads: dict[tuple[str, str, str, bool], tuple[str, str]] = {}
        self._flags: dict[tuple[Any, ...], str] = {}
        self._files: dict[str, str] = {}

    def line(self, trx: Transaction, ws: TrxWriteset) -> str:
        get = self._keys.get
        frags = [get(id(k)) or self._key(k) for k in ws.keys]
        start = trx.start
        file = self._files.get(start.file)
        if file is None:
            file = self._files[start.file] = encode_basestring(start.file)
        gtid = "null" if trx.gtid is None else encode_basestring(trx.gtid)
        fk = (ws.ddl, ws.empty, ws.missing_key_tables, ws.fk_parent_tables, ws.limit_reached)
        flags = self._flags.get(fk)
        if flags is None:
            if len(self._flags) >= CACHE_SIZE:
                self._flags.clear()
            flags = self._flags[fk] = json.dumps(ws.flags(), ensure_ascii=False)
        return "".join(('{"file": ', file, ', "pos": ', int.__repr__(start.offset), ', "gtid": ',
                        gtid, ', "keys": [', ", ".join(frags), '], "flags": ', flags, "}"))

    def _key(self, k: WriteKey) -> str:
        """``json.dumps(k.to_dict(), ensure_ascii=False)``, remembered for ``k``."""
        if len(self._alive) >= CACHE_SIZE:
            self._keys.clear()
            self._alive.clear()
        self._alive.append(k)
        text = self._keys[id(k)] = self._encode(k)
        return text

    def _encode(self, k: WriteKey) -> str:
        hk = (k.db, k.table, k.index, k.parent)
        head = self._heads.get(hk)
        if head is None:
            d = json.dumps({"db": k.db, "table": k.table, "index": k.index, "values": 0},
                           ensure_ascii=False)
            head = self._heads[hk] = (d[:-2] + "[", ', "parent": true}' if k.parent else "}")
        values = k.values
        if len(values) == 1 and type(values[0]) is int:
            return f'{head[0]}{int.__repr__(values[0])}], "hash": {int.__repr__(k.hash)}{head[1]}'
        vals = []
        for v in values:
            t = type(v)
            if t is int:
                vals.append(int.__repr__(v))
            elif t is str:
                vals.append(encode_basestring(v))
            else:
                vals.append(json.dumps(jsonable(v), ensure_ascii=False))
        return "".join((head[0], ", ".join(vals), '], "hash": ', int.__repr__(k.hash), head[1]))
