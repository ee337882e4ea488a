"""Compiled row-image walkers: take the bytes of a few columns, step over the rest.

A writeset needs only the key columns of a row image, but the images are
packed (format-spec §4.10, ``sql/rpl_record.cc`` pack_row): to find column 5
the four before it must be measured.  :func:`walker` builds, once per
(Table_map, columns-present bitmap, wanted columns), a Python function from
generated source that walks one image and returns the stored bytes of the
wanted columns, measuring the others by their layout:

* fixed widths - integers, FLOAT/DOUBLE, YEAR, ENUM/SET, BIT, DATE, TIME,
  TIMESTAMP, and (with a content check) NEWDECIMAL, DATETIME2, TIMESTAMP2;
* a little-endian length prefix - VARCHAR/CHAR (1 or 2 bytes), BLOB/TEXT
  (pack length 1-4);
* everything whose decoder can reject the bytes in other ways (JSON,
  GEOMETRY, VECTOR, TIME2, old DATETIME, unsupported types): the column's own
  decoder from :mod:`repltool.binlog.rows` is called.

The walk accepts exactly the images :func:`repltool.binlog.rows.iter_row_changes`
accepts: a DECIMAL digit group out of range, a negative DATETIME2 or a
fraction over 999999 raise :class:`~repltool.binlog.rows.BadValue` here too,
and a short image raises ``IndexError``; the caller then runs the general
decoder, which gives the precise :class:`~repltool.errors.MalformedEvent`.
``tests/rows/test_rowwalk.py`` holds every layout to its decoder (random
bytes, every column type) and every walker to the general decoder (corpus).

:func:`row_counter` (``stats``' rows per table, pure Python) walks whole Rows
bodies the same way but keeps no bytes; where an image's NULL bits leave the
columns the Table_map declares NOT NULL alone, it steps over those without a
test and checks content by offset (``tests/rows/test_rowcounter.py``).
"""

from __future__ import annotations

from typing import Any, Callable

from .coltypes import BLOB_TYPES, ColumnDef, ColumnType as T, TableDef
from .temporal import BadValue, decimal_size, decimal_plan as _decimal_plan

__all__ = ["walker", "column_layout", "Walker", "image_program", "row_counter",
           "counter_source"]

#: (row data, offset of the image) -> (offset after it, raw bytes of each wanted column)
Walker = Callable[[bytes, int], "tuple[Any, ...]"]

_FIXED = {T.TINY: 1, T.SHORT: 2, T.INT24: 3, T.LONG: 4, T.LONGLONG: 8, T.FLOAT: 4,
          T.DOUBLE: 8, T.YEAR: 1, T.DATE: 3, T.NEWDATE: 3, T.TIME: 3, T.TIMESTAMP: 4,
          T.NULL: 0}
_FRAC_BYTES = (0, 1, 1, 2, 2, 3, 3)
_FRAC_LIMIT = {1: 99, 2: 9999, 3: 999999}       # stored fraction * multiplier <= 999999


def column_layout(col: ColumnDef, decoder: Callable[..., Any]) -> tuple[str, Any]:
    """How a walker steps over one column.

    ``("fixed", n)``, ``("len", prefix bytes)``, ``("decimal", (size, checks))``,
    ``("temporal", (size, first fraction byte, fraction bytes, check sign))`` or
    ``("call", decoder)``.  Mirrors :func:`repltool.binlog.rows.column_decoder`.
    """
    t = col.real_type
    if getattr(decoder, "unsupported", False):
        return ("call", decoder)
    if t in _FIXED:
        return ("fixed", _FIXED[t])
    if t == T.NEWDECIMAL:
        p, s = col.precision or 0, col.scale or 0
        if p == 0 or s > p or p > 81:
            return ("call", decoder)
        return ("decimal", _decimal_checks(p, s))
    if t in (T.VARCHAR, T.VAR_STRING, T.STRING, T.VARCHAR_COMPRESSED):
        return ("len", 1 if (col.max_length or 0) < 256 else 2)
    if t in BLOB_TYPES:
        n = col.pack_length or 0
        return ("len", n) if 1 <= n <= 4 else ("call", decoder)
    if t in (T.ENUM, T.SET):
        n = col.pack_length or 0
        ok = n in (1, 2) if t == T.ENUM else 1 <= n <= 8
        return ("fixed", n) if ok else ("call", decoder)
    if t == T.BIT:
        meta = col.metadata
        return ("fixed", (meta >> 8) + (1 if meta & 0xFF else 0))
    if t in (T.DATETIME2, T.TIMESTAMP2):
        fsp = col.fsp or 0
        fb = _FRAC_BYTES[fsp] if 0 <= fsp <= 6 else 3
        head = 5 if t == T.DATETIME2 else 4
        return ("temporal", (head + fb, head, fb, t == T.DATETIME2))
    return ("call", decoder)        # JSON, GEOMETRY, VECTOR, TIME2, DATETIME, the unknown


_KINDS = {"fixed": 0, "len": 1, "decimal": 2, "temporal": 3, "call": 4}


def image_program(core: Any, table: TableDef, bitmap: bytes, width: int,
                  wanted: tuple[int, ...]) -> Any:
    """The compiled core's program (``core.ImageProgram``) for one image layout: the
    columns present in ``bitmap`` stepped over by their :func:`column_layout`, the
    ``wanted`` ones' stored bytes in that order (``core.walk_rows``); ``None`` when no
    column is present.  Cached on ``table``."""
    key = ("program", bitmap, width, wanted)
    hit = table.plans.get(key, _MISS)
    if hit is _MISS:
        table.trim_cache()
        mask = int.from_bytes(bitmap, "little") & ((1 << width) - 1)
        present = [i for i in range(width) if mask >> i & 1]
        slot = {c: k for k, c in enumerate(wanted)}
        cols = []
        for i in present:
            kind, arg = column_layout(table.columns[i], table.decoders[i])
            if kind == "decimal":
                size, _ = arg
                col = table.columns[i]
                groups, _ = _decimal_plan(col.precision or 0, col.scale or 0)
                arg = (size, tuple((nbytes, 10 ** digits) for nbytes, digits in groups))
            cols.append((_KINDS[kind], slot.get(i, -1), arg if kind != "call" else None,
                         arg if kind == "call" else None))
        hit = table.plans[key] = core.ImageProgram(cols, len(wanted)) if present else None
    return hit


def _decimal_checks(precision: int, scale: int) -> tuple[int, tuple[tuple[int, int, int], ...]]:
    """(size, ((shift, mask, limit) per digit group)) of a binary DECIMAL."""
    size = decimal_size(precision, scale)
    groups, _ = _decimal_plan(precision, scale)
    checks = []
    at = 0
    for nbytes, ndigits in groups:
        at += nbytes
        checks.append((8 * (size - at), (1 << 8 * nbytes) - 1, 10 ** ndigits))
    return size, tuple(checks)


def walker(table: TableDef, bitmap: bytes, width: int, wanted: tuple[int, ...]) -> Walker | None:
    """The walker of one image layout, cached on ``table``; ``None`` when no column
    is present (such images are left to the general decoder).

    ``wanted``: column indexes whose raw bytes are returned (in this order; an
    absent or NULL column gives ``None``).
    """
    return _planned(table, ("walk", bitmap, width, wanted),
                    lambda: _compile(table, bitmap, width, wanted))


_MISS = object()


def _planned(table: TableDef, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """``table``'s cached plan under ``key``, made (and the cache trimmed) on a miss."""
    hit = table.plans.get(key, _MISS)
    if hit is _MISS:
        table.trim_cache()
        hit = table.plans[key] = make()
    return hit


def row_counter(table: TableDef, before: bytes, after: bytes | None,
                width: int) -> Callable[[bytes, int], int] | None:
    """The row counter of one Rows layout, cached on ``table``: ``count(data, p)`` walks
    the images from ``p`` to the end of ``data`` (one per row; two, ``before`` then
    ``after``, per UPDATE row) and returns how many rows they hold.  It is the loop of
    :func:`walker` with no wanted column, generated as one function (its source:
    :func:`counter_source`) and laid out for speed where an image's NULL bits spare
    the NOT NULL columns: it accepts and rejects (``IndexError``,
    :class:`~repltool.binlog.rows.BadValue`, a column decoder's error) exactly the
    images the walkers do (``tests/rows/test_rowcounter.py``).  ``None`` when an
    image has no present column (the general decoder decides those)."""
    return _planned(table, ("count", before, after, width),  # type: ignore[no-any-return]
                    lambda: _compile_counter(table, before, after, width))


def _compile_counter(table: TableDef, before: bytes, after: bytes | None,
                     width: int) -> Callable[[bytes, int], int] | None:
    env: dict[str, Any] = {}
    src = counter_source(table, before, after, width, env)
    if src is None:
        return None
    exec(compile("\n".join(src), f"<rowcount {table.db}.{table.table}>", "exec"), env)
    return env["count"]  # type: ignore[no-any-return]


def counter_source(table: TableDef, before: bytes, after: bytes | None, width: int,
                   env: dict[str, Any]) -> list[str] | None:
    """The source lines of :func:`row_counter`'s function ``count`` (the names they use
    put in ``env``); ``None`` when an image has no present column.  Line ``k`` of the
    list is line ``k + 1`` of the compiled function's code."""
    images = [_count_source(table, b, width, env)
              for b in ((before,) if after is None else (before, after))]
    if any(body is None for body in images):
        return None
    return ["def count(d, p, _fb=_fb, BadValue=BadValue):", "    c = 0", "    end = len(d)",
            "    while p < end:",
            *("        " + line for body in images for line in body),   # type: ignore[union-attr]
            "        c += 1", "    if p > end:", "        raise IndexError", "    return c"]


def _count_source(table: TableDef, bitmap: bytes, width: int,
                  env: dict[str, Any]) -> list[str] | None:
    """Source lines that step ``p`` over one image of ``d`` for a row counter (no
    column's bytes kept; whether the image ends past ``d`` is checked by the caller
    after the last image: ``p`` only grows, and every image starts by reading
    ``d[p]``).  ``None`` when no column is present.

    The walk is :func:`image_source`'s, laid out for speed: when no column the
    Table_map declares NOT NULL has its NULL bit set (what servers write), the
    NOT NULL columns are stepped over without a test, runs of fixed widths add up
    to one constant, a column's content is checked at its offset from ``p`` (a
    DECIMAL's digit groups and a temporal fraction compared as big-endian bytes,
    not converted to integers), and ``p`` moves only where a length is read, a
    column may be NULL or a decoder is called.  Any other NULL bitmap takes
    :func:`image_source`'s walk, line for line."""
    present, nb = _image_head(bitmap, width, env)
    if not present:
        return None
    strict = sum(1 << k for k, i in enumerate(present) if not table.columns[i].nullable)
    layouts = [column_layout(table.columns[i], table.decoders[i]) for i in present]
    lines = [_null_bits(nb)]
    fast: list[str] = []
    o = nb                                  # bytes after p that are stepped over
    for k, i in enumerate(present):
        if strict >> k & 1:
            step, o = _count_step(layouts[k], i, env, o)
            fast += step
            continue
        _advance(fast, o)
        step, o = _count_step(layouts[k], i, env, 0)
        _advance(step, o)
        if step:                            # (a NULL-type column has no bytes)
            fast += [f"if not n & {1 << k}:", *("    " + s for s in step)]
        o = 0
    _advance(fast, o)
    if not strict:
        return lines + fast
    general = [f"p += {nb}", *_column_lines(table, present, (), "r", env)]
    return lines + [f"if n & {strict}:", *("    " + s for s in general),
                    "else:", *("    " + s for s in fast)]


def _advance(lines: list[str], o: int) -> None:
    """Add ``p += o`` to ``lines``: to the last line's constant when it is a length
    step (``p += c + ...``, nothing read after it)."""
    if not o:
        return
    last = lines[-1] if lines else ""
    head, _, rest = last.partition(" + ")
    if head.startswith("p += ") and head[5:].isdigit() and rest:
        lines[-1] = f"p += {int(head[5:]) + o} + {rest}"
    else:
        lines.append(f"p += {o}")


def _count_step(layout: tuple[str, Any], i: int, env: dict[str, Any],
                o: int) -> tuple[list[str], int]:
    """Source lines that step over column ``i`` starting at ``p + o`` (checking its
    content where the decoder would) and the offset from ``p`` after it: the lines
    move ``p`` only where the column's width is read from the data."""
    kind, arg = layout
    at = f"p + {o}" if o else "p"
    if kind == "fixed":
        return [], o + arg
    if kind == "len":
        if arg == 1:
            return [f"p += {o + 1} + d[{at}]"], 0
        if arg == 2:
            return [f"p += {o + 2} + (d[{at}] | d[p + {o + 1}] << 8)"], 0
        return [f"p += {o + arg} + _fb(d[{at}:p + {o + arg}], 'little')"], 0
    if kind == "decimal":
        return _decimal_test(arg, o), o + arg[0]
    if kind == "temporal":
        size, head, fb, signed = arg
        conds = [f"d[{at}] < 128"] if signed else []
        if fb == 1:
            conds.append(f"d[p + {o + head}] > {_FRAC_LIMIT[fb]}")
        elif fb:
            conds.append(_compare(f"d[p + {o + head}]", f"d[p + {o + head}:p + {o + size}]",
                                  ">", _FRAC_LIMIT[fb], fb))
        return ([f"if {' or '.join(conds)}: raise BadValue"] if conds else []), o + size
    name = f"dec{i}"
    env[name] = arg
    return [f"p = {name}(d, {at})[1]"], 0


def _compare(first: str, raw: str, op: str, value: int, k: int) -> str:
    """The test ``stored op value`` of a ``k``-byte big-endian number whose first byte is
    ``first`` and bytes ``raw`` (expressions): a single byte compared as it is; more
    bytes compared as a byte string only when the first byte allows the test to hold."""
    if k == 1:
        return f"{first} {op} {value}"
    head = value >> 8 * (k - 1)
    near = f"{first} {'<=' if op == '<=' else '>='} {head}"
    return f"({near} and {raw} {op} {value.to_bytes(k, 'big')!r})"


def _decimal_test(arg: tuple[int, tuple[tuple[int, int, int], ...]], o: int) -> list[str]:
    """:func:`_step`'s DECIMAL check of the ``size`` bytes at ``p + o`` as comparisons
    of each digit group's stored bytes: a group of ``k`` bytes holds ``v = stored ^
    x`` (``x``: the top bit of the first byte for a positive value, every other bit
    for a negative one), and ``v >= limit`` is ``stored >= limit + top`` (positive;
    ``top``: the sign bit if the group is the first) or ``stored <= 2**(8k) - 1 - top
    - limit`` (negative); equal-length byte strings compare as big-endian numbers.
    Where the bytes run past ``d`` the image is refused anyway (it ends past ``d``)."""
    size, checks = arg
    pos: list[str] = []
    neg: list[str] = []
    for shift, m, limit in checks:
        k = m.bit_length() // 8
        start = size - shift // 8 - k
        top = 0x80 << 8 * (k - 1) if start == 0 else 0
        ceiling = 1 << 8 * k
        at = f"p + {o + start}" if o + start else "p"
        first = "b" if start == 0 else f"d[{at}]"
        raw = f"d[{at}:p + {o + start + k}]"
        hi = limit + top                    # positive: refused from this stored value up
        lo = ceiling - 1 - top - limit      # negative: refused up to this one
        if hi < ceiling:
            pos.append(_compare(first, raw, ">=", hi, k))
        if lo >= 0:
            neg.append(_compare(first, raw, "<=", lo, k))
    lines = [f"b = d[p + {o}]" if o else "b = d[p]"]
    if pos:
        lines += ["if b & 128:", f"    if {' or '.join(pos)}: raise BadValue"]
        if neg:
            lines.append(f"elif {' or '.join(neg)}: raise BadValue")
    elif neg:
        lines.append(f"if not b & 128 and ({' or '.join(neg)}): raise BadValue")
    return lines


def _compile(table: TableDef, bitmap: bytes, width: int, wanted: tuple[int, ...]) -> Walker | None:
    env: dict[str, Any] = {}
    body = image_source(table, bitmap, width, wanted, "r", env)
    if body is None:
        return None
    src = ["def walk(d, p):", *("    " + line for line in body),
           "    return (p, " + "".join(f"r{c}, " for c in wanted) + ")"]
    exec(compile("\n".join(src), f"<rowwalk {table.db}.{table.table}>", "exec"), env)
    return env["walk"]  # type: ignore[no-any-return]


def image_source(table: TableDef, bitmap: bytes, width: int, wanted: tuple[int, ...],
                 var: str, env: dict[str, Any]) -> list[str] | None:
    """Source lines (no indentation) that walk one image of data ``d`` at ``p``:
    afterwards ``p`` is past the image and ``{var}{column}`` holds the stored
    bytes of each wanted column (``None``: absent or NULL).  Names the lines
    use are put in ``env``.  ``None`` when no column is present.
    """
    present, nb = _image_head(bitmap, width, env)
    if not present:
        return None
    lines = [_null_bits(nb), f"p += {nb}"]
    lines += [f"{var}{c} = None" for c in wanted]
    lines += _column_lines(table, present, wanted, var, env)
    lines += ["if p > len(d):", "    raise IndexError"]
    return lines


def _image_head(bitmap: bytes, width: int, env: dict[str, Any]) -> tuple[list[int], int]:
    """The columns present in an image layout and the bytes of its NULL bitmap (the
    names the walks use put in ``env``)."""
    mask = int.from_bytes(bitmap, "little") & ((1 << width) - 1)
    present = [i for i in range(width) if mask >> i & 1]
    env.update(BadValue=BadValue, _fb=int.from_bytes)
    return present, (len(present) + 7) >> 3


def _null_bits(nb: int) -> str:
    """The line that reads an image's ``nb`` bytes of NULL bits at ``p`` into ``n``."""
    return "n = d[p]" if nb == 1 else f"n = _fb(d[p:p + {nb}], 'little')"


def _column_lines(table: TableDef, present: list[int], wanted: tuple[int, ...], var: str,
                  env: dict[str, Any]) -> list[str]:
    """:func:`image_source`'s lines for the columns (after the NULL bitmap, in ``n``)."""
    lines: list[str] = []
    for k, i in enumerate(present):
        step = _step(column_layout(table.columns[i], table.decoders[i]), i, env)
        if i in wanted:
            step += [f"{var}{i} = d[p:q]", "p = q"]
        elif len(step) == 1:            # "q = <end>": step p itself
            head = "q = p + "
            step = ["p += " + step[0][len(head):] if step[0].startswith(head) else "p" + step[0][1:]]
        else:
            step.append("p = q")
        lines += [f"if not n & {1 << k}:", *("    " + s for s in step)]
    return lines


def _step(layout: tuple[str, Any], i: int, env: dict[str, Any]) -> list[str]:
    """Source lines that set ``q`` to the end of column ``i`` starting at ``p``
    (and check its content where the decoder would)."""
    kind, arg = layout
    if kind == "fixed":
        return [f"q = p + {arg}"]
    if kind == "len":
        if arg == 1:
            return ["q = p + 1 + d[p]"]
        if arg == 2:
            return ["q = p + 2 + (d[p] | d[p + 1] << 8)"]
        return [f"q = p + {arg} + _fb(d[p:p + {arg}], 'little')"]
    if kind == "decimal":
        size, checks = arg
        top = 0x80 << 8 * (size - 1)
        cond = " or ".join(f"(v >> {sh}) & {m} >= {lim}" if sh else f"v & {m} >= {lim}"
                           for sh, m, lim in checks)
        return [f"q = p + {size}",
                f"v = _fb(d[p:q], 'big') ^ ({top} if d[p] & 128 else {top ^ ((1 << 8 * size) - 1)})",
                f"if {cond}: raise BadValue"]
    if kind == "temporal":
        size, head, fb, signed = arg
        conds = ["d[p] < 128"] if signed else []
        if fb:
            frac = f"d[p + {head}]" if fb == 1 else f"_fb(d[p + {head}:q], 'big')"
            conds.append(f"{frac} > {_FRAC_LIMIT[fb]}")
        return [f"q = p + {size}"] + ([f"if {' or '.join(conds)}: raise BadValue"] if conds else [])
    name = f"dec{i}"
    env[name] = arg
    return [f"q = {name}(d, p)[1]"]
