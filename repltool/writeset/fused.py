"""(transaction, writeset) pairs straight from log files, without Event objects.

:func:`read_writesets` gives what ::

    iter_writesets(read_transactions(paths, READ_OPTIONS, keep_events=True), schema)

gives (checksums verified unless told otherwise), several times faster on the
common shape of MySQL 5.7+ binlogs and relay logs.  It rides on the fused
scanner of ``repltool stats`` (:func:`repltool.binlog.fastpath.scan_transactions`):
the scanner groups transactions without building events and hands every
Table_map and Rows body to a hook, which feeds the key-only extractor
(:mod:`repltool.writeset.fastkeys`).

Where the scanner meets anything outside its subset (Transaction_payload,
MariaDB events, v1 or partial-JSON rows, a CRC mismatch, a truncated or
malformed event, a file that cannot be opened ...) or the extractor raises, it
stops, and :func:`read_writesets` starts over on the general path, skipping
the pairs already yielded: the sequence is the general path's, element by
element, including its errors and warnings.  The transactions of the fast
path carry no events (``Transaction.events == ()``); everything else about
them, and every writeset, equals the general path's
(``tests/writeset/test_fused.py``, corpus and synthetic logs).
"""

from __future__ import annotations

import os
import struct
from typing import Any, Callable, Iterable, Iterator

from ..binlog import Transaction, read_transactions
from ..binlog.coltypes import TableDef, decode_table_map
from ..binlog.constants import EventType
from ..binlog.decode import DecodeContext
from ..binlog.events import TableMapBody
from ..binlog.fastpath import FastPathUnsupported, _Scan, fast_rows, fast_table_map
from ..positions import Position
from .extract import _FAST_ERRORS, READ_OPTIONS, Acc, WritesetExtractor, book
from .model import TrxWriteset
from .schema import Schema

__all__ = ["read_writesets", "iter_fast_writesets"]

Pair = tuple[Transaction, TrxWriteset]
_TMAP = int(EventType.TABLE_MAP_EVENT)
_new = tuple.__new__
_ROWS_HEAD = struct.Struct("<IHHH")          # table id low 32, high 16, flags, var_header_len
_ROWS_V2 = (int(EventType.WRITE_ROWS_EVENT), int(EventType.UPDATE_ROWS_EVENT),
            int(EventType.DELETE_ROWS_EVENT))
_UPDATE = int(EventType.UPDATE_ROWS_EVENT)
_KIND = dict(zip(_ROWS_V2, ("insert", "update", "delete")))


def read_writesets(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                   schema: Schema | None = None, *, verify_checksum: bool = True,
                   general: Callable[[], Iterable[Transaction]] | None = None,
                   light: bool = False, **kw: Any) -> Iterator[Pair]:
    """``(transaction, writeset)`` for every transaction of the logs, in order.

    :param schema: key definitions (:func:`~repltool.writeset.load_schema`).
    :param verify_checksum: verify every CRC32 (as ``ReadOptions``).
    :param general: the general path's transactions, if the caller reads
        them differently (``repltool dump`` counts damage on the way): a
        callable returning ``group_transactions(..., keep_events=True)`` of
        the same files and checksum setting.  Default:
        ``read_transactions(paths, READ_OPTIONS, keep_events=True)``.
    :param light: the fast path yields
        :class:`~repltool.binlog.fastpath.LightTransaction` tuples (the fields
        ``stats`` reads - ``start``, ``gtid``, the clock, ``kind`` ... - with the
        general path's values) instead of full transactions; a quarter of the
        scan's time.  After a fallback the transactions are full ones.
    :param kw: :class:`~repltool.writeset.WritesetExtractor` options
        (``history_size``, ``table_maps``, ``strict``).
    """
    files = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) \
        else [os.fspath(p) for p in paths]
    maps = kw.get("table_maps")
    maps_before = dict(maps) if maps is not None else None
    fast = _FastRun(files, schema, verify_checksum, kw, light)
    done = 0
    try:
        for pair in fast:
            yield pair
            done += 1
        return
    except FastPathUnsupported:
        pass
    if maps is not None:                # as the caller gave them
        maps.clear()
        maps.update(maps_before or {})
    if general is None:
        from dataclasses import replace
        opts = replace(READ_OPTIONS, verify_checksum=verify_checksum)
        transactions: Iterable[Transaction] = read_transactions(files, opts, keep_events=True)
    else:
        transactions = general()
    ex = WritesetExtractor(schema, **kw)
    ex._warned = fast.extractor._warned         # warn once, whichever path saw it first
    for i, trx in enumerate(transactions):
        ws = ex.writeset(trx)
        if i >= done:
            yield trx, ws


def iter_fast_writesets(paths: Iterable[str | os.PathLike[str]], schema: Schema | None = None,
                        *, verify_checksum: bool = True, **kw: Any) -> Iterator[Pair]:
    """The fast path alone: raises :class:`~repltool.binlog.fastpath.FastPathUnsupported`
    where :func:`read_writesets` would switch to the general path."""
    return iter(_FastRun([os.fspath(p) for p in paths], schema, verify_checksum, kw))


class _FastRun:
    """One pass of the fused scanner with the writeset hook attached."""

    def __init__(self, files: list[str], schema: Schema | None, verify: bool,
                 kw: dict[str, Any], light: bool = False) -> None:
        self.files = files
        self.extractor = WritesetExtractor(schema, **kw)
        self.scan = _Scan(verify, light)
        self.scan.hook = self._hook
        self.acc = Acc()
        self._structs: Any = None
        self._ctxs: dict[int, DecodeContext] = {}
        self._tds: dict[bytes, TableDef] = {}      # Table_map body bytes -> its TableDef
        self._v2 = False                           # the FDE gives Rows v2 the 10-byte post-header

    def _hook(self, tc: int, data: bytes, path: str, offset: int) -> None:
        if self._structs is not self.scan.structs:
            structs = self._structs = self.scan.structs
            self._ctxs, self._tds = {}, {}
            self._v2 = all(structs.post_header(t, 10) == 10 for t in _ROWS_V2)
        if tc != _TMAP:
            if self._v2 and self._rows(tc, data):
                return
            body = fast_rows(data, self._ctx(tc))
            self.extractor.rows(tc, body, body.table_id, _new(Position, (path, offset, None)),
                                self.acc)
            return
        td = self._tds.get(data)
        if td is None:
            body = fast_table_map(data, self._ctx(tc))
            if not isinstance(body, TableMapBody):
                raise FastPathUnsupported("Table_map not decoded")
            td = decode_table_map(body, pos=Position(path, offset, None))
            if len(self._tds) >= 4096:
                self._tds.clear()
            self._tds[data] = td
        self.extractor.table_maps[td.table_id] = td

    def _ctx(self, tc: int) -> DecodeContext:
        ctx = self._ctxs.get(tc)
        if ctx is None:
            # a decoder's result does not depend on the position (only its errors
            # would, and an error means starting over on the general path)
            ctx = self._ctxs[tc] = DecodeContext(self._structs, Position("", 0, None), tc)
        return ctx

    def _rows(self, tc: int, data: bytes) -> bool:
        """A Rows v2 event of a table whose key plan is known, keyed straight from its
        bytes (the header read as :func:`~repltool.binlog.fastpath.fast_rows` reads
        it); False when it must take the general route (first event of a table,
        an odd header, anything the compiled walk rejects)."""
        n = len(data)
        if n < 10:
            return False
        lo, hi, flags, var_len = _ROWS_HEAD.unpack_from(data)
        p = 8 + var_len
        if var_len < 2 or p >= n:
            return False
        width = data[p]
        if width >= 251 or width == 0:
            return False
        p += 1
        q = p + ((width + 7) >> 3)
        before = data[p:q]
        after = None
        if tc == _UPDATE:
            after = data[q:q + q - p]
            q += q - p
        if q > n:
            return False
        ex = self.extractor
        td = ex.table_maps.get(lo | hi << 32)
        fast = ex._fast_keys.get(id(td)) if td is not None else None
        if fast is None or fast.td is not td or width > len(td.columns) \
                or td.table_id != lo | hi << 32:
            return False
        acc = self.acc
        keys = acc.keys
        mark = len(keys)
        try:
            acc.rows += fast.runner(_KIND[tc], before, after, width)(
                data, q, keys, not book(fast.plan, flags, acc))
        except _FAST_ERRORS:
            del keys[mark:]
            return False
        return True

    def _pair(self, trx: Transaction) -> Pair:
        acc, self.acc = self.acc, Acc()
        return trx, self.extractor.result(acc, trx.kind)

    def __iter__(self) -> Iterator[Pair]:
        scan = self.scan
        try:
            for path in self.files:
                for trx in scan.file(path, None, None):
                    yield self._pair(trx)
            if scan.g is not None:
                yield self._pair(scan.finish(True))
        except FastPathUnsupported:
            raise
        except Exception as exc:        # noqa: BLE001 - whatever it is, the general path decides
            raise FastPathUnsupported(f"{type(exc).__name__}: {exc}") from exc
