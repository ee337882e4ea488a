"""Key-only writeset entries: decode the key columns of a row image, skip the rest.

:class:`TableKeys` serves one (key :class:`~repltool.writeset.plan.Plan`,
:class:`~repltool.binlog.coltypes.TableDef`) pair.  Each image is walked by a
compiled :func:`repltool.binlog.rowwalk.walker` that returns the stored bytes
of the key and foreign-key columns only; those bytes are looked up in a
bounded per-key cache of finished :class:`~repltool.writeset.model.WriteKey`
entries (an UPDATE's before and after images usually share their key, and hot
rows come back), and only on a miss are the values decoded (by the column's
own decoder) and the entries built by :func:`~repltool.writeset.plan.key_entries`
- the function the general path uses.  An entry is a pure function of the
column definitions and the stored bytes, so a cached one is the one the
general path would build.

With ``text=True`` (``repltool dump --writesets``,
:func:`repltool.writeset.fused.read_writeset_lines`) the entries are the JSON
texts of those keys (:func:`repltool.writeset.jsonl.encode_key`), built
without the ``WriteKey`` where the key is one integer or one prefix-less column.

Anything this path does not take (partial JSON updates, images without a
present column or without a key column - ``binlog_row_image=MINIMAL`` or
``NOBLOB`` -, a Rows event wider than its Table_map, bytes the walker rejects)
raises; :meth:`repltool.writeset.extract.WritesetExtractor.rows` then
runs the general decoder on the event, which gives the exact result or error.
``tests/writeset/test_fastkeys.py`` compares both paths on the corpus and
synthetic logs.
"""

from __future__ import annotations

from typing import Any

import xxhash

from ..binlog.coltypes import ColumnType as T, TableDef
from ..binlog.events import RowsBody
from ..binlog.rows import PARTIAL_UPDATE_ROWS, ROW_KINDS
from ..binlog.engine import compiled_core
from ..binlog.rowwalk import image_program, image_source
from .jsonl import encode_key, key_head, value_json
from .model import BARE_NEW as _NEW, WRITE_KEY_SETTERS as _SET, WriteKey
from .plan import SEP, Key, Plan, fk_entry, key_entries as _key_entries

__all__ = ["TableKeys"]

CACHE_SIZE = 4096  # entries per key before the cache starts over (65,536: no faster, +45 MiB)
_INT_WIDTH = {T.TINY: 1, T.SHORT: 2, T.INT24: 3, T.LONG: 4, T.LONGLONG: 8}
_xxh64 = xxhash.xxh64_intdigest


class _Unsupported(ValueError):
    """An event shape the key-only path leaves to the general decoder."""


class TableKeys:
    """Key-only extraction for the rows of one Table_map under one key plan."""

    __slots__ = ("plan", "td", "wanted", "text", "_events", "_names")

    def __init__(self, plan: Plan, td: TableDef, shared: dict[Any, Any] | None = None,
                 text: bool = False) -> None:
        """``text``: the entries are the JSON texts of the keys
        (:func:`repltool.writeset.jsonl.encode_key` of each ``WriteKey``) instead
        (``repltool dump --writesets``); keep such instances apart, with their own
        ``shared``."""
        self.plan = plan
        self.td = td
        self.text = text
        self.wanted = tuple(sorted({p.column for k in plan.keys for p in k.parts}
                                   | {c for f in plan.fks for c in f.columns})) \
            if plan.usable else ()
        # the compiled event shapes, shared like the caches below (the code depends
        # on the columns, the plan and the caches only)
        shared = {} if shared is None else shared
        self._events: dict[tuple[str, bytes, bytes | None, int], Any] = shared.setdefault(
            ("events", td.db, td.table, td.columns,
             tuple(getattr(d, "unsupported", False) for d in td.decoders), plan), {})
        # caches of finished entries (C: per unique key, F: per FK column) and the
        # functions that fill them (M, G), shared by every compiled event shape, and
        # through ``shared`` with the TableKeys of other Table_maps whose key is the
        # same definition over equal columns (an entry depends on nothing else)
        names: dict[str, Any] = {}
        cols, decs = td.columns, td.decoders
        for n, key in enumerate(plan.keys):
            sig = ("key", td.db, td.table, key,
                   tuple((cols[p.column], getattr(decs[p.column], "unsupported", False))
                         for p in key.parts))
            if sig not in shared:
                cache: dict[Any, Any] = {}
                shared[sig] = (cache, self._key_miss(key, cache))
            names[f"C{n}"], names[f"M{n}"] = shared[sig]
        for n, fk in enumerate(plan.fks):
            sig = ("fk", td.db, td.table, fk,
                   tuple((cols[c], getattr(decs[c], "unsupported", False)) for c in fk.columns))
            if sig not in shared:
                cache = {}
                shared[sig] = (cache, self._fk_miss(fk, cache))
            names[f"F{n}"], names[f"G{n}"] = shared[sig]
        self._names = names

    def event(self, body: RowsBody, type_code: int, skip_fk: bool, out: list[WriteKey]) -> int:
        """Append the entries of every row of ``body`` to ``out``; the number of rows."""
        run = self.event_runner(body, type_code)
        return run(body.rows, 0, out, not skip_fk)  # type: ignore[no-any-return]

    def event_runner(self, body: RowsBody, type_code: int) -> Any:
        """:meth:`runner` of the shape of ``body`` (a Rows event of ``type_code``):
        ``run(body.rows, 0, out, fk on) -> rows`` is :meth:`event`.  Its result depends
        on the type, table id, width and bitmaps only.

        :raises ValueError: (``_Unsupported``) a shape left to the general decoder."""
        td = self.td
        kind = ROW_KINDS.get(type_code)
        if (kind is None or type_code == PARTIAL_UPDATE_ROWS or body.width > len(td.columns)
                or body.table_id != td.table_id):
            raise _Unsupported("left to the general decoder")
        after = body.columns_after if kind == "update" else None
        if kind == "update" and after is None:
            raise _Unsupported("update without an after-image bitmap")
        return self.runner(kind, body.columns_before, after, body.width)

    def runner(self, kind: str, before: bytes, after: bytes | None, width: int) -> Any:
        """``run(data, start, out, fk on) -> rows`` for one event shape (compiled once):
        the images from ``data[start:]`` to its end, keyed into ``out``."""
        ek = (kind, before, after, width)
        run = self._events.get(ek)
        if run is None:
            run = self._events[ek] = self._compile(kind, before, after, width)
        return run

    def core_hash_keys(self, core: Any, before: bytes, after: bytes | None, width: int
                       ) -> tuple[Any, Any, list[tuple[Any, ...]]]:
        """:meth:`core_keys` for the core's hash mode (``RowsShape(..., hashed=True)``:
        ``repltool certify``): the same programs, caches and misses (of ``WriteKey``
        records), with the integer and ASCII-string layouts the core hashes itself
        (:meth:`_int_text`, :meth:`_str_text`) whatever ``text`` says.

        :raises ValueError: (``_Unsupported``) a shape left to the general decoder."""
        return self._core_specs(core, before, after, width, True)

    def core_keys(self, core: Any, before: bytes, after: bytes | None, width: int
                  ) -> tuple[Any, Any, list[tuple[bool, tuple[int, ...], dict[Any, Any], Any]]]:
        """What the compiled core's ``RowsShape`` needs to key one event shape itself:
        the image programs (before; after for an UPDATE: ``after`` given) and, per key
        (unique keys, then foreign keys), ``(is foreign key, slots of its parts, entry
        cache, miss)`` - the caches and misses :meth:`runner`'s code uses.

        :raises ValueError: (``_Unsupported``) a shape left to the general decoder."""
        return self._core_specs(core, before, after, width, False)

    def _core_specs(self, core: Any, before: bytes, after: bytes | None, width: int,
                    hashed: bool) -> Any:
        ek = ("core", before, after, width, hashed)
        hit = self._events.get(ek)
        if hit is None:
            self._check_present(before, after, width)
            wanted = self.wanted
            first, second = self._programs(core, before, after, width)
            slot = {c: k for k, c in enumerate(wanted)}
            names = self._names
            specs = [(False, tuple(slot[p.column] for p in key.parts), names[f"C{n}"],
                      names[f"M{n}"], self._int_text(
                          [(p.column, p.sort_key) for p in key.parts], key.prefix, key.name,
                          False, self.td.db, self.td.table, hashed)
                      if not key.has_prefix else None,
                      self._str_text(key, hashed))
                     for n, key in enumerate(self.plan.keys)]
            specs += [(True, tuple(slot[c] for c in fk.columns), names[f"F{n}"], names[f"G{n}"],
                       self._int_text(list(zip(fk.columns, fk.sort_keys)), fk.prefix, fk.index,
                                      True, fk.db, fk.table, hashed), None)
                      for n, fk in enumerate(self.plan.fks)]
            if hashed:          # one-part string foreign keys: hashed by the core too
                specs = [spec if not spec[0] or spec[4] is not None
                         else (*spec[:5], self._fk_str_hash(fk))
                         for spec, fk in zip(specs, (*[None] * len(self.plan.keys),
                                                     *self.plan.fks))]
            hit = self._events[ek] = (first, second, specs)
        return hit  # type: ignore[no-any-return]

    def _int_text(self, parts: list[tuple[int, Any]], prefix: bytes, index: str, parent: bool,
                  db: str, table: str, hashed: bool = False) -> tuple[Any, ...] | None:
        """Text mode, a key (or FK) of whole integer columns (``parts``: column, sort
        key): what the core's ``RowsShape`` needs to build the JSON of its entry -
        ``encode_key`` of :func:`~repltool.writeset.plan.key_entries`' (or ``fk_entry``'s)
        entry, :func:`_int_text_miss`'s for one part - itself; else None.  ``hashed``:
        also without ``text`` (the core then hashes the key string only)."""
        if not (self.text or hashed):
            return None
        layouts = []
        for column, sort_key in parts:
            layout = self._int_layout(column, sort_key)
            if layout is None:
                return None
            width, signed, tail, _ = _int_parts(layout)
            layouts.append((width, signed, layout[2] >> (8 * width - 8), tail))
        head, end = key_head(db, table, index, parent)
        return (prefix, head, end, tuple(layouts))

    def _str_text(self, key: Key, hashed: bool = False) -> tuple[Any, ...] | None:
        """Text mode, a one-part unique key over a VARCHAR column whose sort keys take
        a rule the core knows for ASCII values (``ascii_plan`` of
        :func:`repltool.writeset.collation.sort_key_function`: the 0900 collations'
        ASCII weight tables, the ``_unicode`` collations' 2-byte weights): what the
        core's ``RowsShape`` needs to build the JSON of :func:`_text_miss1`'s entries
        itself for ASCII values (``(prefix, head, end, length bytes, weight levels,
        rule per entry, separator)``), else None.  ``hashed``: also without ``text``
        (the core then hashes the key strings only)."""
        if not (self.text or hashed) or len(key.parts) != 1:
            return None
        part = key.parts[0]
        head, end = key_head(self.td.db, self.td.table, key.name, False)
        return self._str_layout(part.column, part.sort_key, part.full_key, key.prefix, head,
                                end)

    def _fk_str_hash(self, fk: Any) -> tuple[Any, ...] | None:
        """Hash mode, a one-part foreign key over a VARCHAR column: the layout of
        :meth:`_str_text` for its one entry (:func:`~repltool.writeset.plan.fk_entry`:
        ``prefix + sort key + ½len``), else None."""
        if len(fk.columns) != 1:
            return None
        return self._str_layout(fk.columns[0], fk.sort_keys[0], None, fk.prefix, "", "")

    def _str_layout(self, column: int, sort_key: Any, full_key: Any, prefix: bytes,
                    head: str, end: str) -> tuple[Any, ...] | None:
        plan = getattr(sort_key, "ascii_plan", None)
        if plan is None or plan[1][2]:               # CHAR (spaces stripped): not here
            return None
        lb, (levels, entry, _) = plan
        cuts = [entry]
        if full_key is not None:
            full = getattr(full_key, "ascii_plan", None)
            if full is None or full[0] != lb or full[1][0] != levels or full[1][2]:
                return None
            cuts.append(full[1][1])
        dec = self.td.decoders[column]
        if getattr(dec, "unsupported", False) or lb not in (1, 2):
            return None
        probe = bytes([1] + [0] * (lb - 1)) + b"a"     # an ASCII value decodes to itself
        if dec(probe, 0) != ("a", len(probe)):
            return None
        return (prefix, head, end, lb, levels, tuple(cuts), SEP)

    # ---- code generation ----

    def _check_present(self, before: bytes, after: bytes | None, width: int) -> None:
        need = sum(1 << c for c in self.wanted)
        for bitmap in (before, after):
            if bitmap is not None and need & ~int.from_bytes(bitmap, "little") & ((1 << width) - 1) \
                    or any(c >= width for c in self.wanted):
                raise _Unsupported("a key column absent from the image (left to the general "
                                   "path, which fills an UPDATE's after image or books the "
                                   "table as missing keys)")

    def _compile(self, kind: str, before: bytes, after: bytes | None, width: int) -> Any:
        """See :meth:`runner`: every image walked and keyed inline."""
        self._check_present(before, after, width)
        env: dict[str, Any] = dict(self._names)
        core = compiled_core()
        if core is not None:
            return self._compile_core(core, env, before, after, width)
        first = image_source(self.td, before, width, self.wanted, "b", env)
        second = image_source(self.td, after, width, self.wanted, "a", env) \
            if after is not None else []
        if first is None or second is None:
            raise _Unsupported("an image without any present column")
        emit = self._emit_source()
        loop = [*first, *second]
        if after is not None:
            loop += [line.replace("{v}", "a") for line in emit]
        loop += [line.replace("{v}", "b") for line in emit]
        src = ["def run(d, p, out, fk):", "    rows = 0", "    end = len(d)",
               "    while p < end:", *("        " + line for line in loop),
               "        rows += 1", "    return rows"]
        exec(compile("\n".join(src), f"<fastkeys {self.td.db}.{self.td.table}>", "exec"), env)
        return env["run"]

    def _programs(self, core: Any, before: bytes, after: bytes | None,
                  width: int) -> tuple[Any, Any]:
        """The core's image programs of the before image and (an UPDATE's) after image.

        :raises ValueError: (``_Unsupported``) an image without any present column."""
        wanted = self.wanted
        first = image_program(core, self.td, before, width, wanted)
        second = image_program(core, self.td, after, width, wanted) \
            if after is not None else None
        if first is None or (after is not None and second is None):
            raise _Unsupported("an image without any present column")
        return first, second

    def _compile_core(self, core: Any, env: dict[str, Any], before: bytes,
                      after: bytes | None, width: int) -> Any:
        """:meth:`_compile` with the compiled engine: the images walked by the core
        (``walk_rows`` over :func:`~repltool.binlog.rowwalk.image_program`), only the
        keying done here."""
        wanted = self.wanted
        first, second = self._programs(core, before, after, width)
        env.update(_walk=core.walk_rows, PB=first, PA=second)
        emit = self._emit_source()

        def target(v: str) -> str:
            return "(" + "".join(f"{v}{c}, " for c in wanted) + ")" if wanted else "_"

        if after is None:
            loop = [f"for {target('b')} in _walk(d, p, PB):"]
        else:
            loop = ["it = iter(_walk(d, p, PB, PA))",
                    f"for {target('b')}, {target('a')} in zip(it, it):"]
            loop += ["    " + line.replace("{v}", "a") for line in emit]
        loop += ["    " + line.replace("{v}", "b") for line in emit]
        src = ["def run(d, p, out, fk):", "    rows = 0", *("    " + line for line in loop),
               "        rows += 1", "    return rows"]
        exec(compile("\n".join(src), f"<corekeys {self.td.db}.{self.td.table}>", "exec"), env)
        return env["run"]

    def _emit_source(self) -> list[str]:
        """Lines appending the entries of one image whose raws are ``{v}<column>``."""
        lines: list[str] = []
        for n, key in enumerate(self.plan.keys):
            cols = [p.column for p in key.parts]
            if len(cols) == 1:
                x = f"{{v}}{cols[0]}"
                lines.append(f"if {x} is not None:")
            else:
                x = "x"
                lines += ["if " + " and ".join(f"{{v}}{c} is not None" for c in cols) + ":",
                          "    x = (" + "".join(f"{{v}}{c}, " for c in cols) + ")"]
            lines.append(f"    out += C{n}.get({x}) or M{n}({x})")     # entries: a non-empty tuple
        for n, fk in enumerate(self.plan.fks):
            # one entry per FK, NULL columns included (left out of its key string)
            x = f"{{v}}{fk.columns[0]}" if len(fk.columns) == 1 else \
                "(" + "".join(f"{{v}}{c}, " for c in fk.columns) + ")"
            lines += ["if fk:", f"    out.append(F{n}.get({x}) or G{n}({x}))"]
        return lines

    def _key_miss(self, key: Any, cache: dict[Any, Any]) -> Any:
        decs = [self.td.decoders[p.column] for p in key.parts]
        single = len(decs) == 1
        db, table = self.td.db, self.td.table
        if self.text:
            def key_entries(*args: Any) -> Any:
                return tuple(map(encode_key, _key_entries(*args)))
        else:
            key_entries = _key_entries  # type: ignore[assignment]

        if single:
            dec = decs[0]
            int_miss = self._int_miss(key, cache)
            if int_miss is not None:
                return int_miss
            if self.text:
                return _text_miss1(key, dec, db, table, cache)

            def miss1(raw: bytes) -> tuple[Any, ...]:
                if len(cache) >= CACHE_SIZE:
                    cache.clear()
                value, end = dec(raw, 0)
                if end != len(raw):
                    raise _Unsupported("value does not fill its bytes")
                hit = cache[raw] = key_entries(key, db, table, (value,), (raw,))
                return hit
            return miss1

        def miss(raws: tuple[bytes, ...]) -> tuple[Any, ...]:
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            hit = cache[raws] = key_entries(key, db, table,
                                            [_value(dec, r) for dec, r in zip(decs, raws)], raws)
            return hit
        return miss

    def _int_layout(self, column: int, sort_key: Any) -> tuple[int, bool, int] | None:
        """(width, value signed, sort-key flip bit) of a whole integer column, else None.

        Such entries are built without the generic decoder and sort-key calls,
        to the same bytes: ``_int_key`` of :mod:`repltool.writeset.sortkey`, the
        ``<b``/``<B``... decoders of :mod:`repltool.binlog.rows`.
        """
        col = self.td.columns[column]
        width = _INT_WIDTH.get(col.real_type)
        sk_signed = getattr(sort_key, "int_signed", None)
        if width is None or sk_signed is None \
                or getattr(self.td.decoders[column], "unsupported", False):
            return None
        return width, not col.unsigned, 1 << (8 * width - 1) if sk_signed else 0

    def _int_miss(self, key: Key, cache: dict[Any, Any]) -> Any:
        part = key.parts[0]
        layout = self._int_layout(part.column, part.sort_key) \
            if part.full_key is None else None
        if layout is None:
            return None
        if self.text:
            return _int_text_miss(layout, key.prefix, self.td.db, self.td.table, key.name,
                                  False, cache)
        build = _int_entry(layout, key.prefix, self.td.db, self.td.table, key.name, False)

        def miss(raw: bytes) -> tuple[WriteKey, ...]:
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            hit = cache[raw] = (build(raw),)
            return hit
        return miss

    def _fk_miss(self, fk: Any, cache: dict[Any, Any]) -> Any:
        text = self.text
        decs = [self.td.decoders[c] for c in fk.columns]

        def general(raws: Any) -> Any:
            entry = fk_entry(fk, [None if r is None else _value(d, r)
                                  for d, r in zip(decs, raws)], raws)
            return encode_key(entry) if text else entry

        build: Any
        if len(fk.columns) == 1:
            layout = self._int_layout(fk.columns[0], fk.sort_keys[0])
            if layout is not None and text:
                int_text = _int_text_miss(layout, fk.prefix, fk.db, fk.table, fk.index, True,
                                          cache)

                def miss1t(raw: bytes | None) -> Any:
                    if raw is None:
                        entry = cache[raw] = general((None,))
                        return entry
                    return int_text(raw)
                return miss1t
            int_build = _int_entry(layout, fk.prefix, fk.db, fk.table, fk.index, True) \
                if layout is not None else None

            def build(raw: bytes | None) -> Any:
                if raw is None or int_build is None:
                    return general((raw,))
                return int_build(raw)
        else:
            build = general

        def miss(raw: Any) -> WriteKey:
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            entry = cache[raw] = build(raw)
            return entry
        return miss


def _int_parts(layout: tuple[int, bool, int]) -> tuple[int, bool, bytes, bytes | None]:
    """(width, value signed, ``½width`` tail, translation table of the sort key's first
    byte or None) of an integer layout (:meth:`TableKeys._int_layout`)."""
    width, signed, flip = layout
    top = flip >> (8 * width - 8)            # 0 or 0x80
    return (width, signed, SEP + str(width).encode(),
            bytes(b ^ top for b in range(256)) if top else None)


def _int_entry(layout: tuple[int, bool, int], prefix: bytes, db: str, table: str, index: str,
               parent: bool) -> Any:
    """``raw -> WriteKey`` for an integer column (see :meth:`TableKeys._int_layout`).

    The sort key is the big-endian value with the sign bit flipped (``flip``):
    the stored little-endian bytes reversed, the top one XOR ``flip``'s.
    """
    width, signed, tail, flips = _int_parts(layout)
    from_bytes = int.from_bytes
    new, s0, s1, s2, s3, s4, s5, s6 = _NEW, *_SET
    core = compiled_core()
    if core is not None:        # the same (value, key string, hash), in one call
        int_key, top = core.int_key, layout[2] >> (8 * width - 8)

        def build_core(raw: bytes) -> WriteKey:
            value, data, h = int_key(raw, width, signed, top, prefix, tail)
            k = new(WriteKey)
            s0(k, db)
            s1(k, table)
            s2(k, index)
            s3(k, (value,))
            s4(k, data)
            s5(k, h)
            s6(k, parent)
            return k
        return build_core

    def build(raw: bytes) -> WriteKey:
        if len(raw) != width:
            raise _Unsupported("short integer")
        sk = raw[::-1]
        if flips is not None:
            sk = sk[:1].translate(flips) + sk[1:]
        data = b"".join((prefix, sk, tail))
        k = new(WriteKey)       # new_write_key, inlined
        s0(k, db)
        s1(k, table)
        s2(k, index)
        s3(k, (from_bytes(raw, "little", signed=signed),))
        s4(k, data)
        s5(k, _xxh64(data))
        s6(k, parent)
        return k
    return build


def _int_text_miss(layout: tuple[int, bool, int], prefix: bytes, db: str, table: str,
                   index: str, parent: bool, cache: dict[Any, Any]) -> Any:
    """The ``miss`` of an integer column in text mode: ``raw ->`` the JSON
    (:func:`~repltool.writeset.jsonl.encode_key`) of :func:`_int_entry`'s key,
    cached (as a 1-tuple for a unique key, alone for a foreign key)."""
    width, signed, tail, flips = _int_parts(layout)
    from_bytes = int.from_bytes
    head, end = key_head(db, table, index, parent)
    wrap = not parent
    core = compiled_core()
    if core is not None:        # the same text, built in one call
        text_of, top = core.int_key_text, layout[2] >> (8 * width - 8)

        def miss_core(raw: bytes) -> Any:
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            text = text_of(raw, width, signed, top, prefix, tail, head, end)
            hit = cache[raw] = (text,) if wrap else text
            return hit
        return miss_core

    def miss(raw: bytes) -> Any:
        if len(raw) != width:
            raise _Unsupported("short integer")
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        sk = raw[::-1]
        if flips is not None:
            sk = sk[:1].translate(flips) + sk[1:]
        text = f'{head}{from_bytes(raw, "little", signed=signed)}], "hash": ' \
               f'{_xxh64(b"".join((prefix, sk, tail)))}{end}'
        hit = cache[raw] = (text,) if wrap else text
        return hit
    return miss


def _text_miss1(key: Key, dec: Any, db: str, table: str, cache: dict[Any, Any]) -> Any:
    """The ``miss`` of a one-part key in text mode: the JSON of
    :func:`~repltool.writeset.plan.key_entries`' entries (its unrolled case, and
    with a second, "old format" entry for a part that has a ``full_key``)."""
    part = key.parts[0]
    sort_key, full_key = part.sort_key, part.full_key
    prefix = key.prefix
    head, end = key_head(db, table, key.name, False)

    def miss(raw: bytes) -> tuple[str, ...]:
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        value, stop = dec(raw, 0)
        if stop != len(raw):
            raise _Unsupported("value does not fill its bytes")
        sk, kv = sort_key(value, raw)
        text = value_json(kv)
        h = _xxh64(b"".join((prefix, sk, SEP, str(len(sk)).encode())))
        if full_key is None:
            hit: tuple[str, ...] = (f'{head}{text}], "hash": {h}{end}',)
        else:
            fsk, fkv = full_key(value, raw)
            ftext = text if fkv is kv else value_json(fkv)
            fh = _xxh64(b"".join((prefix, fsk, SEP, str(len(fsk)).encode())))
            hit = (f'{head}{text}], "hash": {h}{end}', f'{head}{ftext}], "hash": {fh}{end}')
        cache[raw] = hit
        return hit
    return miss


def _value(dec: Any, raw: bytes) -> Any:
    """A column's value from its stored bytes, by the general path's decoder."""
    value, end = dec(raw, 0)
    if end != len(raw):
        raise _Unsupported("value does not fill its bytes")
    return value
