# ---- write sets: a transaction's Table_map and Rows events keyed in one call ----
# Included from _core.pyx.  Driven by repltool.writeset.fused (``dump --writesets``,
# ``certify``): for every transaction GroupCapture hands back, ``KeyDispatch.run``
# takes its Table_map and Rows events in order and appends the write-set entries of
# their rows to the transaction's ``Acc``, as ``fused._FastRun`` did per event in
# Python.  What it decides itself: the Table_map a table id means (the TableDef of
# identical bodies, from the reader's cache), the shape of a Rows header (table id,
# flags, width, bitmaps: a ``RowsShape`` the driver built once), the walk of every
# row image to its key columns (ImageProgram.span) and the lookup of their stored
# bytes in the entry caches of repltool.writeset.fastkeys.  Everything else goes to
# the driver's callbacks: a Table_map body not seen before, a header without a
# shape, a cache miss (the key's entries are built in Python, by the general
# path's functions), and any event the walk or a miss rejects (the general route,
# which gives the exact result or error).

from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject, Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

cdef enum:
    KS_KEY = 0      # a unique key: skipped when a part is NULL; its entries extend the list
    KS_FK = 1       # a foreign key (when checks are on): NULL parts as None; one entry

cdef enum:
    RL_GENERAL = 0  # a Rows layout the dispatch leaves to the general route
    RL_V1 = 1       # Rows v1: 8-byte post-header (table id, flags), then the width
    RL_V2 = 2       # Rows v2: 10-byte post-header (+ extra data length), extra data, width
    RL_UPDATE = 4   # bit: the event carries an after-image bitmap too


cdef str _int_entry_text(tuple it, const int64_t* ints, const uint8_t** ptrs,
                         const Py_ssize_t* lens, Py_ssize_t np):
    """The JSON text of the entry of a key of ``np`` integer parts stored at
    ``ptrs``/``lens`` (``ints``: width, signed, top byte XOR per part; ``it``: prefix,
    head, end, tails): per part the value and ``sort key + tail`` as ``int_key_text``
    builds them, the key string hashed with XXH64 - ``encode_key`` of
    ``repltool.writeset.plan.key_entries``' entry (or ``fk_entry``'s), built in one
    buffer (``_wstext.pxi``)."""
    global _wt_int_built
    cdef char vals[400]
    cdef const char* tp[16]
    cdef Py_ssize_t tn[16]
    cdef Py_ssize_t nv = 0, j
    cdef const uint8_t* r
    cdef int width, kk
    cdef bint signed
    cdef uint64_t u, h
    cdef int64_t v
    cdef PyObject* prefix                   # borrowed from ``it`` (no reference counting)
    cdef PyObject* head
    cdef PyObject* end
    cdef PyObject* tails
    cdef PyObject* tail
    if PyTuple_GET_SIZE(it) != 4:
        raise ValueError("an integer key text has 4 fields")
    prefix = PyTuple_GET_ITEM(it, 0)
    head = PyTuple_GET_ITEM(it, 1)
    end = PyTuple_GET_ITEM(it, 2)
    tails = PyTuple_GET_ITEM(it, 3)
    if type(<object>prefix) is not bytes or type(<object>head) is not str \
            or type(<object>end) is not str or type(<object>tails) is not tuple \
            or PyTuple_GET_SIZE(<object>tails) < np:
        raise TypeError("(prefix bytes, head str, end str, tail bytes per part)")
    if np > 16:
        raise ValueError("key string too long")
    for j in range(np):
        tail = PyTuple_GET_ITEM(<object>tails, j)
        if type(<object>tail) is not bytes:
            raise TypeError("a part's tail is bytes")
        tp[j] = PyBytes_AS_STRING(<object>tail)
        tn[j] = PyBytes_GET_SIZE(<object>tail)
        if ptrs[j] is NULL:
            raise ValueError("a NULL part has no entry text")
    # the key string and its hash: the hash mode's builder (also checks the widths)
    h = _int_key_hash_raw(PyBytes_AS_STRING(<object>prefix), PyBytes_GET_SIZE(<object>prefix),
                          tp, tn, ints, ptrs, lens, np)
    for j in range(np):
        r = ptrs[j]
        width = <int>ints[3 * j]
        signed = ints[3 * j + 1]
        u = 0
        for kk in range(width):
            u = (u << 8) | r[width - 1 - kk]
        if j:
            vals[nv] = 44           # ", "
            vals[nv + 1] = 32
            nv += 2
        if signed and width < 8 and u >> (8 * width - 1):
            v = <int64_t>u - (<int64_t>1 << (8 * width))
        else:
            v = <int64_t>u
        if signed and v < 0:
            vals[nv] = 45           # "-"
            nv += 1
            u = <uint64_t>0 - <uint64_t>v
        nv += _wt_decimal(vals + nv, u)
    _wt_int_built += 1
    return _wt_entry(<str><object>head, vals, nv, h, <str><object>end)


cdef object _str_entry_texts(tuple st, const uint8_t* r, Py_ssize_t rlen):
    """The JSON texts of the entries of a one-part unique key over a VARCHAR column
    stored as ``r`` (its length prefix, then the value) when the value is ASCII, else
    None (the Python miss builds them).  ``st``: ``(prefix, head, end, length bytes,
    weight levels, ((cut, pad) per entry), separator)``: per entry the sort key is the
    value's ASCII weights (``join_ascii_weights``) cut at ``cut`` and, with ``pad``,
    zero-padded to it - ``repltool.writeset.collation.sort_key_function``'s rule -
    and the key string ``prefix + sort key + separator + its length`` is hashed with
    XXH64, as ``repltool.writeset.plan.key_entries`` builds it."""
    return _wt_str_entries(st, r, rlen)         # _wstext.pxi: one buffer per entry


cdef int64_t _core_hashed = 0     # keys RowsShape hashed itself in hash mode


def core_hashed_keys():
    """How many hashes :class:`RowsShape` computed itself in hash mode in this process
    (of integer and ASCII-string keys; tests assert the hash mode ran)."""
    return _core_hashed


cdef uint64_t _int_key_hash(tuple it, const int64_t* ints, const uint8_t** ptrs,
                            const Py_ssize_t* lens, Py_ssize_t np) except? 0:
    """The XXH64 hash of the key string of a key of ``np`` integer parts stored at
    ``ptrs``/``lens`` (a NULL part: ``ptrs[j]`` NULL, left out of the key string, as
    ``repltool.writeset.plan.fk_entry`` leaves it out): the string ``_int_entry_text``
    hashes (``it``: prefix, head, end, tails; ``ints``: width, signed, top byte XOR per
    part)."""
    cdef const char* tp[16]
    cdef Py_ssize_t tn[16]
    cdef Py_ssize_t j
    cdef bytes prefix = <bytes?>it[0]
    cdef tuple tails = <tuple?>it[3]
    if np > 16 or len(tails) < np:
        raise ValueError("key string too long")
    cdef bytes tb
    for j in range(np):
        tb = <bytes?>tails[j]                       # (held by ``it``)
        tp[j] = <const char*>tb
        tn[j] = len(tb)
    return _int_key_hash_raw(<const char*>prefix, len(prefix), tp, tn, ints, ptrs, lens, np)


cdef uint64_t _int_key_hash_raw(const char* prefix, Py_ssize_t npre, const char** tails,
                                const Py_ssize_t* ntails, const int64_t* ints,
                                const uint8_t** ptrs, const Py_ssize_t* lens,
                                Py_ssize_t np) except? 0:
    """:func:`_int_key_hash` over the prefix and the part tails as C strings
    (:class:`RowsShape` keeps them per key)."""
    cdef uint8_t buf[512]
    cdef Py_ssize_t n = npre, j, nt
    cdef const uint8_t* r
    cdef int width, kk
    if n > 512 or np > 16:
        raise ValueError("key string too long")
    memcpy(buf, prefix, n)
    for j in range(np):
        r = ptrs[j]
        if r is NULL:
            continue
        width = <int>ints[3 * j]
        nt = ntails[j]
        if lens[j] != width or width < 1 or width > 8:
            raise ValueError("short integer")
        if n + width + nt > 512:
            raise ValueError("key string too long")
        for kk in range(width):
            buf[n + kk] = r[width - 1 - kk]
        buf[n] ^= <uint8_t>ints[3 * j + 2]
        memcpy(buf + n + width, tails[j], nt)
        n += width + nt
    return _xxh64(buf, n)


cdef int _str_entry_hashes(tuple st, const uint8_t* r, Py_ssize_t rlen, list out) except -1:
    """The XXH64 hashes of the entries of a one-part unique key over a VARCHAR column
    stored as ``r`` appended to ``out`` when the value is ASCII (1), else 0 and nothing
    appended: the key strings ``_str_entry_texts`` hashes, by its rules (the same
    builder, ``_wstext.pxi``)."""
    cdef uint64_t hs[16]
    cdef Py_ssize_t k, i, nj
    k = _wt_str_hashes(st, r, rlen, False, hs, 16, &nj)
    if k < 0:
        return 0
    for i in range(k):
        out.append(hs[i])
    return 1


def int_key_hash(list raws, tuple spec):
    """:class:`RowsShape`'s hash of an integer key's entry (hash mode), for tests:
    ``raws`` the stored bytes per part (None: NULL, left out), ``spec`` as
    :func:`int_entry_text`'s."""
    cdef const uint8_t* ptrs[16]
    cdef Py_ssize_t lens[16]
    cdef int64_t ints[48]
    cdef Py_ssize_t j, np = len(raws)
    cdef object raw
    cdef bytes rb
    prefix, head, end, layouts = spec
    if np > 16 or len(layouts) != np:
        raise ValueError("one layout per part, at most 16")
    for j in range(np):
        raw = raws[j]                   # raws holds a reference: the pointer stays valid
        if raw is None:
            ptrs[j], lens[j] = NULL, 0
        else:
            rb = <bytes?>raw
            ptrs[j] = <const uint8_t*>(<const char*>rb)
            lens[j] = len(rb)
        ints[3 * j], ints[3 * j + 1], ints[3 * j + 2] = \
            layouts[j][0], 1 if layouts[j][1] else 0, layouts[j][2]
    return _int_key_hash((prefix, head, end, tuple(lay[3] for lay in layouts)), ints, ptrs,
                         lens, np)


def str_entry_hashes(bytes raw, tuple st):
    """:class:`RowsShape`'s hashes of a VARCHAR key's entries (hash mode, for tests);
    None when the value is not ASCII."""
    out = []
    if not _str_entry_hashes(st, <const uint8_t*>(<const char*>raw), len(raw), out):
        return None
    return out


def str_entry_texts(bytes raw, tuple st):
    """:class:`RowsShape`'s JSON texts of a VARCHAR key's entries (for tests): see
    ``_str_entry_texts``; None when the value is not ASCII."""
    return _str_entry_texts(st, <const uint8_t*>(<const char*>raw), len(raw))


def int_entry_text(list raws, tuple spec):
    """:class:`RowsShape`'s JSON text of an integer key's entry, for tests: ``raws`` the
    stored bytes per part, ``spec`` the integer text of a key's spec
    (``(prefix, head, end, ((width, signed, top, tail) per part))``)."""
    cdef const uint8_t* ptrs[16]
    cdef Py_ssize_t lens[16]
    cdef int64_t ints[48]
    cdef Py_ssize_t j, np = len(raws)
    prefix, head, end, layouts = spec
    if np > 16 or len(layouts) != np:
        raise ValueError("one layout per part, at most 16")
    cdef bytes raw
    for j in range(np):
        raw = <bytes?>raws[j]        # raws holds a reference: the pointer stays valid
        ptrs[j] = <const uint8_t*>(<const char*>raw)
        lens[j] = len(raw)
        ints[3 * j], ints[3 * j + 1], ints[3 * j + 2] = \
            layouts[j][0], 1 if layouts[j][1] else 0, layouts[j][2]
    return _int_entry_text((prefix, head, end, tuple(lay[3] for lay in layouts)), ints, ptrs,
                           lens, np)


cdef class RowsShape:
    """What the bytes of a Rows event up to its row images decide, built by the driver
    (``repltool.writeset.fused``) from the TableDef the table id means and the
    table's key plan: the image programs (before; after for an UPDATE) and, per key
    (unique keys first, then foreign keys), its parts' slots, its entry cache
    (stored bytes -> entries) and the function that fills it on a miss."""

    cdef readonly bytes header       # the event body up to its row images
    cdef readonly int tc
    cdef readonly object td
    cdef ImageProgram first, second
    cdef int64_t* spec               # per key: kind, number of parts, first part in ``parts``
    cdef int64_t* parts              # slot indices
    cdef Py_ssize_t nspec
    cdef list caches, misses
    cdef int64_t* ints               # per part: integer width (0: not an integer key), signed,
                                     # top byte XOR of the sort key
    cdef list int_text               # per key: (prefix, head, end, part tails) or None
    cdef const char** ipre           # per key: its integer text's prefix (held by int_text)
    cdef Py_ssize_t* ipre_n
    cdef const char** itail          # per part: its tail (held by int_text)
    cdef Py_ssize_t* itail_n
    cdef list str_text               # per key: see _str_entry_texts, or None
    cdef readonly bint fk_on, no_fk
    #: hash mode (certify): the entries are the keys' XXH64 hashes (ints), not WriteKeys
    cdef readonly bint hashed
    cdef readonly object parent      # db.table booked as an FK parent, or None
    cdef readonly object missing     # (db.table, reason) booked as missing keys, or None

    def __cinit__(self):
        self.spec = NULL
        self.parts = NULL
        self.ints = NULL
        self.ipre = NULL
        self.ipre_n = NULL
        self.itail = NULL
        self.itail_n = NULL

    def __dealloc__(self):
        free(self.ipre)
        free(self.ipre_n)
        free(self.itail)
        free(self.itail_n)
        free(self.spec)
        free(self.parts)
        free(self.ints)

    def __init__(self, bytes header, int tc, td, ImageProgram first, ImageProgram second,
                 list specs, bint fk_on, bint no_fk, parent, missing, bint hashed=False):
        """``specs``: ``(is foreign key, slots, cache dict, miss, integer text, string
        text)`` per key; string text: None, or see :func:`_str_entry_texts`; integer
        text: None, or for a key of integer columns whose entry is its JSON
        text (``dump --writesets``): ``(prefix, head, end, ((width, signed, top, tail)
        per part))``, the entry then built here (``int_key_text``'s rule per part; an
        entry is a pure function of the stored bytes, the cache only saves building it
        again).

        ``hashed``: every entry is the hash of the key string (``WriteKey.hash``):
        built here for the integer texts (NULL parts of a foreign key left out) and
        the ASCII values of the string texts, else ``.hash`` of the cached or missed
        entries (the misses build ``WriteKey`` records, as without texts)."""
        self.hashed = hashed
        cdef Py_ssize_t i, j, np = 0, at = 0
        cdef tuple held, htails
        cdef bytes hb
        self.header, self.tc, self.td = header, tc, td
        self.first, self.second = first, second
        self.fk_on, self.no_fk, self.parent, self.missing = fk_on, no_fk, parent, missing
        self.nspec = len(specs)
        for is_fk, slots, cache, miss, it, st in specs:
            np += len(slots)
        self.spec = <int64_t*>calloc(3 * self.nspec + 1, sizeof(int64_t))
        self.parts = <int64_t*>calloc(np + 1, sizeof(int64_t))
        self.ints = <int64_t*>calloc(3 * np + 1, sizeof(int64_t))
        self.ipre = <const char**>calloc(self.nspec + 1, sizeof(char*))
        self.ipre_n = <Py_ssize_t*>calloc(self.nspec + 1, sizeof(Py_ssize_t))
        self.itail = <const char**>calloc(np + 1, sizeof(char*))
        self.itail_n = <Py_ssize_t*>calloc(np + 1, sizeof(Py_ssize_t))
        if self.ipre is NULL or self.ipre_n is NULL or self.itail is NULL \
                or self.itail_n is NULL:
            raise MemoryError()
        if self.spec is NULL or self.parts is NULL or self.ints is NULL:
            raise MemoryError()
        self.caches, self.misses, self.int_text, self.str_text = [], [], [], []
        for i, (is_fk, slots, cache, miss, it, st) in enumerate(specs):
            if st is not None and ((is_fk and not hashed) or len(slots) != 1
                                   or it is not None or len(st) != 7):
                raise ValueError("a string text is for a one-part unique key (or, hashed, "
                                 "foreign key)")
            self.str_text.append(<tuple?>st if st is not None else None)
            if it is not None:
                prefix, head, end, layouts = it
                if len(layouts) != len(slots):
                    raise ValueError("an integer layout per key part")
                for j, (width, signed, top, tail) in enumerate(layouts):
                    if not 1 <= width <= 8:
                        raise ValueError("an integer key part has 1 to 8 bytes")
                    self.ints[3 * (at + j)] = width
                    self.ints[3 * (at + j) + 1] = 1 if signed else 0
                    self.ints[3 * (at + j) + 2] = top
                self.int_text.append((<bytes?>prefix, <str?>head, <str?>end,
                                      tuple(<bytes?>lay[3] for lay in layouts)))
                held = <tuple>self.int_text[i]      # (the list keeps these bytes)
                hb = <bytes>held[0]
                self.ipre[i] = <const char*>hb
                self.ipre_n[i] = len(hb)
                htails = <tuple>held[3]
                for j in range(len(layouts)):
                    hb = <bytes>htails[j]
                    self.itail[at + j] = <const char*>hb
                    self.itail_n[at + j] = len(hb)
            else:
                self.int_text.append(None)
            if not slots:
                raise ValueError("a key without parts")
            for j in range(len(slots)):
                if not 0 <= slots[j] < first.nslots or \
                        (second is not None and not 0 <= slots[j] < second.nslots):
                    raise ValueError("a key part outside the image program's slots")
                self.parts[at + j] = slots[j]
            self.spec[3 * i] = KS_FK if is_fk else KS_KEY
            self.spec[3 * i + 1] = len(slots)
            self.spec[3 * i + 2] = at
            at += len(slots)
            self.caches.append(<dict?>cache)
            self.misses.append(miss)

    cdef int emit_hashes(self, const uint8_t* d, const Py_ssize_t* at, list out) except -1:
        """Hash mode: the hashes of the entries of one image appended to ``out``."""
        global _core_hashed
        cdef const uint8_t* ptrs[16]
        cdef Py_ssize_t lens[16]
        cdef Py_ssize_t i, j, k, np, base, mark
        cdef int64_t kind
        cdef PyObject* hit
        cdef object x, v
        cdef bint null
        for i in range(self.nspec):
            kind = self.spec[3 * i]
            if kind == KS_FK and not self.fk_on:
                continue
            np = self.spec[3 * i + 1]
            base = self.spec[3 * i + 2]
            null = False
            for j in range(np):
                if at[2 * self.parts[base + j]] < 0:
                    null = True
                    break
            if null and kind == KS_KEY:
                continue
            if self.ints[3 * base] and np <= 16:
                for j in range(np):
                    k = self.parts[base + j]
                    if at[2 * k] < 0:
                        ptrs[j], lens[j] = NULL, 0
                    else:
                        ptrs[j] = d + at[2 * k]
                        lens[j] = at[2 * k + 1] - at[2 * k]
                out.append(_int_key_hash_raw(self.ipre[i], self.ipre_n[i], self.itail + base,
                                             self.itail_n + base, self.ints + 3 * base,
                                             ptrs, lens, np))
                _core_hashed += 1
                continue
            if np == 1:
                k = self.parts[base]
                if null:
                    x = None
                else:
                    mark = len(out)
                    if self.str_text[i] is not None and _str_entry_hashes(
                            <tuple>self.str_text[i], d + at[2 * k],
                            at[2 * k + 1] - at[2 * k], out):
                        _core_hashed += len(out) - mark     # (8.0's second entry too)
                        continue
                    x = PyBytes_FromStringAndSize(<const char*>d + at[2 * k],
                                                  at[2 * k + 1] - at[2 * k])
            else:
                x = PyTuple_New(np)
                for j in range(np):
                    k = self.parts[base + j]
                    if at[2 * k] < 0:
                        v = None
                    else:
                        v = PyBytes_FromStringAndSize(<const char*>d + at[2 * k],
                                                      at[2 * k + 1] - at[2 * k])
                    Py_INCREF(v)
                    PyTuple_SET_ITEM(x, j, v)
            hit = PyDict_GetItem(<dict>self.caches[i], x)
            if hit is NULL or not <object>hit:
                v = self.misses[i](x)
            else:
                v = <object>hit
            if kind == KS_KEY:
                for e in <tuple?>v:
                    out.append(e.hash)
            else:
                out.append(v.hash)
        return 0

    cdef int emit(self, const uint8_t* d, const Py_ssize_t* at, list out) except -1:
        """The entries of one image (slot spans ``at``) appended to ``out``."""
        cdef Py_ssize_t i, j, k, np, base
        cdef int64_t kind
        cdef PyObject* hit
        cdef object x, v
        cdef bint null
        if self.hashed:
            return self.emit_hashes(d, at, out)
        for i in range(self.nspec):
            kind = self.spec[3 * i]
            if kind == KS_FK and not self.fk_on:
                continue
            np = self.spec[3 * i + 1]
            base = self.spec[3 * i + 2]
            if np == 1:
                k = self.parts[base]
                if at[2 * k] < 0:
                    if kind == KS_KEY:
                        continue
                    x = None
                elif self.ints[3 * base]:
                    out.append(self.int_text_of(i, d, at))
                    continue
                else:
                    if self.str_text[i] is not None:
                        v = _str_entry_texts(<tuple>self.str_text[i], d + at[2 * k],
                                             at[2 * k + 1] - at[2 * k])
                        if v is not None:
                            for e in <tuple>v:
                                out.append(e)
                            continue
                    x = PyBytes_FromStringAndSize(<const char*>d + at[2 * k],
                                                  at[2 * k + 1] - at[2 * k])
            else:
                null = False
                for j in range(np):
                    if at[2 * self.parts[base + j]] < 0:
                        null = True
                        break
                if null and kind == KS_KEY:
                    continue
                if not null and self.ints[3 * base]:
                    out.append(self.int_text_of(i, d, at))
                    continue
                x = PyTuple_New(np)
                for j in range(np):
                    k = self.parts[base + j]
                    if at[2 * k] < 0:
                        v = None
                    else:
                        v = PyBytes_FromStringAndSize(<const char*>d + at[2 * k],
                                                      at[2 * k + 1] - at[2 * k])
                    Py_INCREF(v)
                    PyTuple_SET_ITEM(x, j, v)
            hit = PyDict_GetItem(<dict>self.caches[i], x)
            if hit is NULL or not <object>hit:
                v = self.misses[i](x)
            else:
                v = <object>hit
            if kind == KS_KEY:
                for e in <tuple?>v:
                    out.append(e)
            else:
                out.append(v)
        return 0

    cdef str int_text_of(self, Py_ssize_t i, const uint8_t* d, const Py_ssize_t* at):
        """The JSON text of key ``i``'s entry (every part a non-NULL integer)."""
        cdef const uint8_t* ptrs[16]
        cdef Py_ssize_t lens[16]
        cdef Py_ssize_t np = self.spec[3 * i + 1], base = self.spec[3 * i + 2], j, k
        if np > 16:
            raise ValueError("key string too long")
        for j in range(np):
            k = self.parts[base + j]
            ptrs[j] = d + at[2 * k]
            lens[j] = at[2 * k + 1] - at[2 * k]
        return _int_entry_text(<tuple>self.int_text[i], self.ints + 3 * base, ptrs, lens, np)

    cdef Py_ssize_t rows(self, object data, const uint8_t* d, Py_ssize_t n, Py_ssize_t p,
                         list out) except -1:
        """Every row image from ``p`` to ``n`` walked and keyed into ``out`` (an UPDATE's
        after image first, as MySQL's add_pke); the number of rows."""
        cdef Py_ssize_t cnt = 0, need
        cdef Py_ssize_t small[64]
        cdef Py_ssize_t* a1
        cdef Py_ssize_t* a2
        cdef Py_ssize_t w1 = self.first.nslots
        cdef Py_ssize_t w2 = self.second.nslots if self.second is not None else 0
        need = 2 * (w1 + w2)
        a1 = &small[0]
        if need > 64:
            a1 = <Py_ssize_t*>malloc(need * sizeof(Py_ssize_t))
        if a1 is NULL:
            raise MemoryError()
        a2 = a1 + 2 * w1
        try:
            while p < n:
                p = self.first.span(data, d, n, p, a1)
                if self.second is not None:
                    p = self.second.span(data, d, n, p, a2)
                    self.emit(d, a2, out)
                self.emit(d, a1, out)
                cnt += 1
        finally:
            if a1 is not &small[0]:
                free(a1)
        if p > n:
            raise IndexError("row image past the end")
        return cnt


cdef class KeyDispatch:
    """A transaction's Table_map and Rows events -> its write-set entries (:meth:`run`).

    Callbacks (all Python, from ``repltool.writeset.fused``):

    * ``tm_miss(body, file index, offset) -> TableDef``: a Table_map body not in
      ``tds`` (which it fills);
    * ``shape_miss(type code, body, table id, flags, p, q, file index, offset) ->
      RowsShape | None``: a Rows header (``body[:q]``, its width byte at ``p - 1``) not
      seen with this TableDef; None: the general route;
    * ``general(type code, body, file index, offset)``: one Rows event by the
      general route (the extractor's own decoding, into the same ``Acc``);
    * ``spill(acc)``: many entries pending (:data:`repltool.writeset.extract.SPILL_AT`).

    ``errors``: the exception types that send an event whose walk or key miss raised
    them to the general route (its entries appended so far are taken back first).
    """

    cdef object tds_get, tm_miss, maps, maps_get, maps_touch
    cdef object shape_miss, general, spill, errors, no_usable
    cdef dict shapes
    cdef Py_ssize_t prune_at, prune_min, shapes_max
    cdef object live
    cdef uint8_t layout[256]
    cdef int tm_type
    cdef public Py_ssize_t spill_at
    #: Rows events keyed here / sent to the general route (tests assert the path ran)
    cdef public int64_t fast_events, general_events
    #: ``(table id, TableDef or None)`` for each Rows event of the last :meth:`run`
    #: whose table id no Table_map before it in the same call mapped: the mapping of
    #: an earlier transaction it used (what keying its events again needs)
    cdef public list borrowed

    def __init__(self, int table_map_type, tds_get, tm_miss, maps, shape_miss, general,
                 spill, errors, no_usable, Py_ssize_t spill_at):
        """``maps``: the extractor's table id -> TableDef map (a plain dict, or a
        BoundedCache: its ``touch`` then keeps the order its ``__setitem__`` would);
        ``no_usable``: MissingKey.NO_USABLE_KEY (the reason others override)."""
        self.tm_type = table_map_type
        self.tds_get, self.tm_miss, self.maps = tds_get, tm_miss, maps
        self.maps_get = maps.get
        self.maps_touch = getattr(maps, "touch", None)
        self.shape_miss, self.general, self.spill = shape_miss, general, spill
        self.errors, self.no_usable = errors, no_usable
        self.spill_at = spill_at
        self.shapes = {}
        self.prune_min = self.prune_at = self.shapes_max = 4096
        self.live = None
        memset(self.layout, 0, 256)
        self.fast_events = self.general_events = 0
        self.borrowed = []

    def set_layout(self, bytes layout):
        """Per type code (256 bytes): RL_GENERAL, or RL_V1 / RL_V2 (| RL_UPDATE), from
        the Format_description's post-header lengths; the shapes start over."""
        if len(layout) != 256:
            raise ValueError("a layout has 256 entries")
        memcpy(self.layout, <const char*>layout, 256)
        self.shapes = {}
        self.prune_at = self.prune_min

    def prune_shapes(self, Py_ssize_t prune_min, Py_ssize_t shapes_max, live):
        """Prune the shapes once they are ``prune_min``, then twice what the last prune
        kept: keep those whose TableDef ``live(td)`` says its table still has, none when
        ``shapes_max / 2`` or more are left (without a call: cleared at 4096)."""
        self.prune_min = self.prune_at = max(prune_min, 1)
        self.shapes_max = shapes_max
        self.live = live

    @property
    def shape_count(self):
        """The shapes cached now."""
        return len(self.shapes)

    cdef int _prune(self) except -1:
        cdef dict kept = {}
        cdef object k, v
        if self.live is not None:
            for k, v in self.shapes.items():
                if self.live((<RowsShape>v).td):
                    kept[k] = v
            if 2 * len(kept) >= self.shapes_max:
                kept = {}
        self.shapes = kept
        self.prune_at = max(self.prune_min, 2 * len(kept))
        return 0

    def run(self, list events, acc):
        """Key ``events`` (``(type code, offset, body, file index)``, GroupCapture's)
        into ``acc``."""
        cdef list keys = acc.keys
        cdef Py_ssize_t nrows = 0, n, p, q, nb, mark, cnt
        cdef const uint8_t* d
        cdef int tc, lay, width
        cdef int64_t tid, flags
        cdef uint64_t h
        cdef RowsShape shape
        cdef object ev, data, td, cur, hit, missing, table, why
        cdef int64_t mapped[32]
        cdef int nmapped = 0, m
        cdef bint known
        self.borrowed = []
        try:
            for ev in events:
                tc = <int>ev[0]
                data = <bytes?>ev[2]
                d = <const uint8_t*>(<const char*>data)
                n = len(data)
                if tc == self.tm_type:
                    if n < 8:
                        raise ValueError("short Table_map")  # the core reads only 8+ bytes
                    td = self.tds_get(data)
                    if td is None:
                        td = self.tm_miss(data, ev[3], ev[1])
                    tid = <int64_t>_rdn(d, 6)
                    if nmapped < 32:     # (past 32 a Rows event of a later one is
                        mapped[nmapped] = tid   # listed with its current mapping: the same)
                        nmapped += 1
                    cur = self.maps_get(tid)
                    if cur is not td:
                        self.maps[tid] = td
                    elif self.maps_touch is not None:
                        self.maps_touch(tid)
                    continue
                if n >= 6:
                    tid = <int64_t>_rdn(d, 6)
                    known = False
                    for m in range(nmapped):
                        if mapped[m] == tid:
                            known = True
                            break
                    if not known:
                        self.borrowed.append((tid, self.maps_get(tid)))
                lay = self.layout[tc]
                if lay == RL_GENERAL:
                    self._general(tc, data, ev)
                    continue
                if lay & RL_V2:
                    if n < 10:
                        self._general(tc, data, ev)
                        continue
                    q = <Py_ssize_t>(d[8] | d[9] << 8)
                    p = 9 + q
                    if q < 2 or p > n:
                        self._general(tc, data, ev)
                        continue
                else:
                    p = 9
                    if n < p:
                        self._general(tc, data, ev)
                        continue
                tid = <int64_t>_rdn(d, 6)
                flags = d[6] | d[7] << 8
                width = d[p - 1]
                if width == 0 or width >= 251:
                    self._general(tc, data, ev)
                    continue
                nb = (width + 7) >> 3
                q = p + (2 * nb if lay & RL_UPDATE else nb)
                if q > n:
                    self._general(tc, data, ev)
                    continue
                h = _xxh64(d, q) ^ (<uint64_t>tc * _P1)
                hit = self.shapes.get(h)
                shape = None
                if hit is not None:
                    shape = <RowsShape>hit
                    if shape.tc != tc or len(shape.header) != q \
                            or memcmp(<const char*>shape.header, d, q) != 0 \
                            or self.maps_get(tid) is not shape.td:
                        shape = None
                if shape is None:
                    hit = self.shape_miss(tc, data, tid, flags, p, q, ev[3], ev[1])
                    if hit is None:
                        self._general(tc, data, ev)
                        continue
                    shape = <RowsShape>hit
                    if len(self.shapes) >= self.prune_at:
                        self._prune()
                    self.shapes[h] = shape
                if shape.no_fk:
                    acc.no_fk = True
                if shape.parent is not None:
                    acc.parents[shape.parent] = None
                missing = shape.missing
                if missing is not None:
                    table, why = missing
                    if acc.missing.get(table, self.no_usable) == self.no_usable:
                        acc.missing[table] = why
                mark = len(keys)
                try:
                    cnt = shape.rows(data, d, n, q, keys)
                except BaseException as exc:
                    if not isinstance(exc, self.errors):
                        raise
                    del keys[mark:]
                    self._general(tc, data, ev)
                    continue
                self.fast_events += 1
                nrows += cnt
                if len(keys) >= self.spill_at:
                    self.spill(acc)
        finally:
            if nrows:
                acc.rows += nrows

    cdef int _general(self, int tc, object data, object ev) except -1:
        self.general_events += 1
        self.general(tc, data, ev[3], ev[1])
        return 0
