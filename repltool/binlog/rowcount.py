"""Rows per table and kind: how many row images the Rows events of a log carry.

``stats`` reports rows (not Rows events) per table, split into inserted, updated
and deleted.  A Rows event says how many bytes its images take, not how many
rows: each image must be walked to its end, column by column, with the widths
the Table_map gives (format-spec §4.10).  :class:`RowCounter` does that with the
row walkers of :mod:`repltool.binlog.rowwalk` (compiled core: ``walk_rows`` over
an image program; pure Python: a generated walker); a PARTIAL_UPDATE_ROWS event
is counted by the general decoder (:func:`repltool.binlog.rows.iter_row_changes`),
whose after images carry JSON diffs.  An UPDATE row is one before/after pair.

A Rows event whose table is unknown (no Table_map of the read named its id) or
whose images the walk rejects is counted as *unwalked*, never guessed at.
"""

from __future__ import annotations

from typing import Any

from ..errors import ReplToolError
from ..positions import Position
from .coltypes import TableDef, decode_table_map
from .decode import DecodeContext
from .engine import compiled_core
from .events import FormatDescriptionBody, RowsBody, TableMapBody
from .fastdecode import decoder_for
from .rows import PARTIAL_UPDATE_ROWS, ROW_KINDS, iter_row_changes
from .rowwalk import column_layout, image_program, row_counter, walker
from . import structs as S
from .constants import EventType
from .structs import encode_packed_int
from .temporal import BadValue

__all__ = ["RowCounter", "KIND_INDEX", "ROW_COUNT_FIELDS"]

#: ROW_KINDS' names -> the index of their count in a table's counts
KIND_INDEX = {"insert": 0, "update": 1, "delete": 2}
#: the names of a table's counts, in order: rows by kind, then Rows events not walked
ROW_COUNT_FIELDS = ("inserted", "updated", "deleted", "unwalked_events")
_UNWALKED = 3


class RowCounter:
    """Counts the rows of Rows events against the Table_maps seen before them.

    Feed every Format_description (:meth:`format_description`, needed for Rows
    bodies given as bytes), Table_map (:meth:`table_map`) and Rows event
    (:meth:`rows`) of a read in log order; :meth:`rows` returns ``(index, n)``:
    ``n`` rows of the kind :data:`KIND_INDEX` numbers, or ``(3, 1)``: one event
    that could not be walked.
    """

    __slots__ = ("_defs", "_core", "_structs", "_layouts", "_counted", "_maps", "_bodies",
                 "counted")

    def __init__(self, tables: dict[int, Any] | None = None) -> None:
        """``tables``: the :attr:`tables` of a read this one continues."""
        self._defs: dict[int, TableDef | None] = dict(tables) if tables else {}
        self._core = compiled_core()
        self._structs: Any = None
        #: pure Python: per Rows type, a v1/v2 Rows body's bytes up to its rows ->
        #: (table id, its TableDef, count index, row counter) (:meth:`rows_bytes`);
        #: Table_map bytes -> (table id, TableDef or None) (:meth:`table_map_data`)
        self._layouts: dict[int, dict[bytes, Any]] = {t: {} for t in _COUNTED_ROWS}
        #: the caches :meth:`rows_bytes` counts from (none with the compiled core)
        self._counted = self._layouts if self._core is None else {}
        self._maps: dict[bytes, Any] = {}
        #: id(Table_map body) -> (the body, its table id, its TableDef or None): the
        #: decoders hand out one body per distinct Table_map (fastdecode's cache), so
        #: a table's next statements cost a lookup, not a hash of the body's fields
        self._bodies: dict[int, tuple[TableMapBody, int, TableDef | None]] = {}
        #: Rows events counted by the layout cache (:meth:`rows_bytes`), not by the
        #: general decode and walk
        self.counted = 0

    @property
    def tables(self) -> dict[int, TableDef | None]:
        """The table definitions by table id so far (``None``: an undecodable Table_map)."""
        return dict(self._defs)

    def format_description(self, body: object) -> None:
        """The Format_description that governs the Rows bodies given as bytes."""
        if isinstance(body, FormatDescriptionBody):
            from .reader import structs_for
            self.set_structs(structs_for(body))

    def set_structs(self, structs: Any) -> None:
        """The :class:`~repltool.binlog.structs.BinlogStructs` of the current FDE."""
        if structs is not self._structs:
            for cache in self._layouts.values():
                cache.clear()
            self._maps.clear()
        self._structs = structs

    def table_map(self, body: object) -> None:
        """A Table_map body (anything else: nothing is learnt)."""
        hit = self._bodies.get(id(body))
        if hit is not None and hit[0] is body:
            self._defs[hit[1]] = hit[2]
            return
        if not isinstance(body, TableMapBody):
            return
        td: TableDef | None
        try:
            td = decode_table_map(body)
        except ReplToolError:
            td = None
        self._defs[body.table_id] = td
        if len(self._bodies) >= 4096:
            self._bodies.clear()
        self._bodies[id(body)] = (body, body.table_id, td)

    def table_map_bytes(self, data: bytes) -> None:
        """A Table_map body's bytes (after the common header, without the checksum)."""
        if self._structs is None:
            return
        try:
            body = decoder_for(_TABLE_MAP)(data, DecodeContext(self._structs, _NOWHERE,
                                                               _TABLE_MAP))
        except (ReplToolError, ValueError, IndexError):
            if len(data) >= 6:                  # that id's old Table_map no longer applies
                self._defs[int.from_bytes(data[:6], "little")] = None
            return
        self.table_map(body)

    def table_map_data(self, data: bytes, decode: Any) -> None:
        """:meth:`table_map` of ``decode(data)``, a Table_map body's bytes decoded under the
        current Format_description (:meth:`set_structs`); a body seen before is looked up,
        not decoded again."""
        hit = self._maps.get(data)
        if hit is None:
            body = decode(data)
            self.table_map(body)
            if not isinstance(body, TableMapBody):
                return
            if len(self._maps) >= 4096:
                self._maps.clear()
            hit = self._maps[data] = (body.table_id, self._defs[body.table_id])
        self._defs[hit[0]] = hit[1]

    def rows(self, type_code: int, body: object) -> tuple[int, int]:
        """The rows of one Rows event: its :class:`RowsBody` or its body's bytes (after
        the common header, without the checksum: :meth:`rows_bytes`)."""
        if type(body) is bytes:
            return self.rows_bytes(type_code, body)
        kind = ROW_KINDS.get(type_code)
        if kind is None:
            return _UNWALKED, 1
        return self._rows(type_code, kind, body)

    def _rows(self, type_code: int, kind: str, body: object) -> tuple[int, int]:
        if isinstance(body, (bytes, bytearray, memoryview)):
            body = self._decode(type_code, bytes(body))
        if not isinstance(body, RowsBody):
            return _UNWALKED, 1
        td = self._defs.get(body.table_id)
        if td is None:
            return _UNWALKED, 1
        n = self._count(td, body, type_code, kind)
        return (_UNWALKED, 1) if n is None else (KIND_INDEX[kind], n)

    def core_rows(self, type_code: int, data: bytes) -> tuple[int, int, Any]:
        """:meth:`rows` of a Rows body's bytes for the compiled core's ``row_hook``:
        ``(index, n, programs)``; ``programs`` (or ``None``): ``(length of the bytes
        from offset 8 to the rows, first, second image program, length of the v2
        extra row info block at offset 8 (its uint16 length included; 0: none))``
        with which the core may walk further Rows events of the same table id, type
        and those bytes after the extra row info itself (plain images only: no column
        decoded by a Python call).  The extra row info (NDB data, partition ids)
        does not change how the images are walked."""
        k, n = self.rows(type_code, data)
        if k == _UNWALKED or self._core is None or type_code == PARTIAL_UPDATE_ROWS \
                or type_code not in _PLAIN_ROWS:
            return k, n, None
        body = self._decode(type_code, data)
        td = self._defs.get(body.table_id) if body is not None else None
        if body is None or td is None:
            return k, n, None
        width = body.width
        bitmaps = (body.columns_before,) if body.columns_after is None else \
            (body.columns_before, body.columns_after)
        progs = [image_program(self._core, td, b, width, ()) for b in bitmaps]
        if any(p is None or not _plain(td, b, width) for p, b in zip(progs, bitmaps)):
            return k, n, None
        head = len(data) - len(body.rows) - _EXTRA_AT
        layout = encode_packed_int(width) + b"".join(bitmaps)
        extra = head - len(layout)
        if data[_EXTRA_AT + extra:_EXTRA_AT + head] != layout or (extra and (
                extra < _EXTRA_LEN_SIZE
                or int.from_bytes(data[_EXTRA_AT:_V2_LEN], "little") != extra)):
            return k, n, None           # not the plain form the core compares
        return k, n, (head, progs[0], progs[1] if len(progs) > 1 else None, extra)

    def rows_bytes(self, type_code: int, data: bytes) -> tuple[int, int]:
        """:meth:`rows` of a Rows body's bytes.  Without the compiled core, a
        WRITE/UPDATE/DELETE_ROWS v1/v2 body in the layout that ``fast_rows`` decodes in place
        is counted by its table's row counter (:func:`~repltool.binlog.rowwalk.row_counter`),
        found by the bytes before the rows (table id, flags, extra row info, width,
        bitmaps); anything else takes the general route (decode, then walk)."""
        cache = self._counted.get(type_code)
        if cache is None:               # not a v1/v2 Rows type, or the compiled core
            kind = ROW_KINDS.get(type_code)
            return (_UNWALKED, 1) if kind is None else self._rows(type_code, kind, data)
        try:
            p = _EXTRA_AT + (data[_EXTRA_AT] | data[_EXTRA_AT + 1] << 8) \
                if type_code in _V2_ROWS else _V1_LEN
            width = data[p]
        except IndexError:
            return self._rows(type_code, ROW_KINDS[type_code], data)
        head = p + 1 + ((width + 7) >> 3) * (2 if type_code in _UPDATES else 1)
        # (a hit is never cut short: head is read from the bytes the key holds)
        hit = cache.get(data[:head])
        if hit is None or self._defs.get(hit[0]) is not hit[1]:   # new, or mapped again
            hit = self._layout(type_code, data[:head], p, width) if head <= len(data) else None
            if hit is None:
                return self._rows(type_code, ROW_KINDS[type_code], data)
        count = hit[3]
        if count is None:
            return _UNWALKED, 1
        try:
            rows = count(data, head)
        except (ReplToolError, IndexError, BadValue, ValueError, OverflowError):
            return _UNWALKED, 1
        self.counted += 1
        return hit[2], rows

    def _layout(self, type_code: int, key: bytes, p: int, width: int) -> Any:
        """The :attr:`_layouts` entry of a Rows layout (``None``: not one for the cache)."""
        structs = self._structs
        v2 = type_code in _V2_ROWS
        ph = _V2_LEN if v2 else _V1_LEN
        if structs is None or structs.post_header(type_code, ph) != ph \
                or (v2 and p - _EXTRA_AT < _EXTRA_LEN_SIZE) or width == 0 or width >= 251:
            return None                 # what fast_rows leaves to construct
        table_id = int.from_bytes(key[:6], "little")
        td = self._defs.get(table_id)
        if td is None:
            return None
        nb = (width + 7) >> 3
        before = key[p + 1:p + 1 + nb]
        after = key[p + 1 + nb:] if type_code in _UPDATES else None
        count = None
        if width <= len(td.columns) and table_id == td.table_id:
            count = row_counter(td, before, after, width)
            if count is None:
                return None             # no present column: _no_columns decides
        cache = self._layouts[type_code]
        if len(cache) >= 4096:
            cache.clear()
        entry = cache[key] = (table_id, td, KIND_INDEX[ROW_KINDS[type_code]], count)
        return entry

    def _decode(self, type_code: int, data: bytes) -> RowsBody | None:
        dec = decoder_for(type_code)
        if self._structs is None or dec is None:
            return None
        try:
            body = dec(data, DecodeContext(self._structs, _NOWHERE, type_code))
        except (ReplToolError, ValueError, IndexError):
            return None
        return body if isinstance(body, RowsBody) else None

    def _count(self, td: TableDef, body: RowsBody, type_code: int, kind: str) -> int | None:
        width = body.width
        if width > len(td.columns) or body.table_id != td.table_id:
            return None
        update = kind == "update"
        if update and body.columns_after is None:
            return None
        try:
            if type_code == PARTIAL_UPDATE_ROWS:
                return sum(1 for _ in iter_row_changes(td, body, type_code))
            data = body.rows
            core = self._core
            if core is not None:
                first = image_program(core, td, body.columns_before, width, ())
                second = image_program(core, td, body.columns_after, width, ()) \
                    if update else None
                if first is None or (update and second is None):
                    return _no_columns(td, body, type_code)
                return len(core.walk_rows(data, 0, first, second)) // (2 if update else 1)
            w1 = walker(td, body.columns_before, width, ())
            w2 = walker(td, body.columns_after, width, ()) if update else None
            if w1 is None or (update and w2 is None):
                return _no_columns(td, body, type_code)
            return _walk(data, w1, w2)
        except (ReplToolError, IndexError, BadValue, ValueError, OverflowError):
            return None


_NOWHERE = Position("", 0, None)
#: Rows types whose images follow the header as stored (not MariaDB's compressed ones)
_V1_ROWS = frozenset(int(t) for t in (
    EventType.WRITE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT_V1, EventType.DELETE_ROWS_EVENT_V1))
_V2_ROWS = frozenset(int(t) for t in (
    EventType.WRITE_ROWS_EVENT, EventType.UPDATE_ROWS_EVENT, EventType.DELETE_ROWS_EVENT))
_PLAIN_ROWS = _V1_ROWS | _V2_ROWS
#: WRITE, UPDATE, DELETE_ROWS v1 and v2 (counted by :meth:`RowCounter.rows_bytes`)
_COUNTED_ROWS = _PLAIN_ROWS
_UPDATES = frozenset({int(EventType.UPDATE_ROWS_EVENT_V1), int(EventType.UPDATE_ROWS_EVENT)})
#: the Rows post-headers (structs.fixed_head of the declarations): v1's length, v2's, and
#: where v2's extra row info (its uint16 length included) starts
_V1_LEN, _V2_LEN = S.ROWS_V1_HEAD.size, S.ROWS_V2_HEAD.size
_EXTRA_AT = S.ROWS_V2_HEAD.offsets["extra_info"]
_EXTRA_LEN_SIZE = _V2_LEN - _EXTRA_AT


def _plain(td: TableDef, bitmap: bytes, width: int) -> bool:
    """No column present in the layout is stepped over by a Python call."""
    key = ("plain", bitmap, width)
    hit = td.plans.get(key)
    if hit is None:
        td.trim_cache()
        mask = int.from_bytes(bitmap, "little") & ((1 << width) - 1)
        hit = td.plans[key] = all(
            column_layout(td.columns[i], td.decoders[i])[0] != "call"
            for i in range(width) if mask >> i & 1)
    return bool(hit)
_TABLE_MAP = 19


def _walk(data: bytes, w1: Any, w2: Any) -> int:
    p, end, n = 0, len(data), 0
    if w2 is None:
        while p < end:
            p = w1(data, p)[0]
            n += 1
    else:
        while p < end:
            p = w2(data, w1(data, p)[0])[0]
            n += 1
    if p > end:
        raise IndexError("row image past the end")
    return n


def _no_columns(td: TableDef, body: RowsBody, type_code: int) -> int:
    """An image without a present column: the general decoder decides (0 rows or an error)."""
    return sum(1 for _ in iter_row_changes(td, body, type_code))
