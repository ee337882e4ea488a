# ---- write sets: the JSON text of a key entry built in one buffer ----
# Included from _core.pyx after _wsdispatch.pxi.  ``RowsShape`` (``dump --writesets``)
# builds one ``str`` per key entry: ``head + values + '], "hash": ' + XXH64 + end``
# (``repltool.writeset.jsonl.encode_key``).  These helpers write that text straight
# into the new string's own buffer (one allocation per entry; no temporary bytes or
# str for the values, the digits or the key string), and the sort keys of ASCII
# values into a scratch buffer the module keeps: the weights of the 0900 collations
# (the ASCII tables ``join_ascii_weights`` reads) and the ``_unicode`` collations'
# 2-byte weights.  ``text_builds()`` counts the entries built this way (tests assert
# the fast builder ran).

from cpython.unicode cimport PyUnicode_New, PyUnicode_1BYTE_DATA, PyUnicode_KIND
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE


cdef extern from "Python.h":
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    int PyUnicode_1BYTE_KIND


cdef char* _wt_scratch = NULL       # the module's scratch buffer (sort keys, key strings)
cdef Py_ssize_t _wt_cap = 0
#: entries built here: integer keys, string keys (counters for the tests)
cdef int64_t _wt_int_built = 0, _wt_str_built = 0
cdef const char* _HASH_MID = b'], "hash": '


def text_builds():
    """``(integer key entries, string key entries)`` whose JSON text the core built in
    one buffer since the module was loaded (for tests: the fast builder ran)."""
    return _wt_int_built, _wt_str_built


cdef const char* _DIGITS2 = (b"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                             b"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                             b"8081828384858687888990919293949596979899")


cdef inline void _wt_put4(char* o, uint32_t x) noexcept nogil:
    """The four decimal digits of ``x`` < 10000 at ``o`` (leading zeros kept)."""
    memcpy(o, _DIGITS2 + 2 * (x // 100), 2)
    memcpy(o + 2, _DIGITS2 + 2 * (x % 100), 2)


cdef int _wt_ndigits(uint64_t v) noexcept nogil:
    """How many decimal digits ``v`` has."""
    cdef int n = 1
    cdef uint64_t t = 10
    if v >= 10000000000000000000ULL:
        return 20
    while v >= t:
        n += 1
        t *= 10
    return n


cdef int _wt_decimal(char* out, uint64_t v) noexcept nogil:
    """The decimal digits of ``v`` at ``out`` (at most 20); how many.  ``_decimal``'s
    result, written in place from the last digit, two digits per step and
    eight-digit groups apart (a short chain of dependent divisions, no copy: the
    hash of every entry is printed)."""
    cdef int n = _wt_ndigits(v)
    cdef char* p = out + n
    cdef uint32_t lo
    while v >= 100000000:
        lo = <uint32_t>(v % 100000000)
        v //= 100000000
        p -= 8
        _wt_put4(p, lo // 10000)
        _wt_put4(p + 4, lo % 10000)
    lo = <uint32_t>v
    while lo >= 100:
        p -= 2
        memcpy(p, _DIGITS2 + 2 * (lo % 100), 2)
        lo //= 100
    if lo >= 10:
        p -= 2
        memcpy(p, _DIGITS2 + 2 * lo, 2)
    else:
        p -= 1
        p[0] = <char>(48 + lo)
    return n


cdef char* _wt_reserve(Py_ssize_t n) except NULL:
    """The scratch buffer, at least ``n`` bytes (its contents are not kept)."""
    global _wt_scratch, _wt_cap
    cdef char* p
    cdef Py_ssize_t cap
    if n > _wt_cap:
        cap = max(n, 2 * _wt_cap, 4096)
        p = <char*>realloc(_wt_scratch, cap)
        if p is NULL:
            raise MemoryError()
        _wt_scratch, _wt_cap = p, cap
    return _wt_scratch


cdef str _wt_entry(str head, const char* vals, Py_ssize_t nv, uint64_t h, str end):
    """``head + vals + '], "hash": ' + h + end`` as one ``str`` (``vals``: ASCII)."""
    cdef char digits[20]
    cdef Py_ssize_t nd = _wt_decimal(digits, h), nh, ne, total
    cdef Py_UCS4 maxchar
    cdef uint8_t* o
    cdef str out
    if PyUnicode_KIND(head) != PyUnicode_1BYTE_KIND or PyUnicode_KIND(end) != PyUnicode_1BYTE_KIND:
        # names beyond Latin-1: the general join
        return f'{head}{vals[:nv].decode("ascii")}], "hash": {digits[:nd].decode("ascii")}{end}'
    nh = PyUnicode_GET_LENGTH(head)
    ne = PyUnicode_GET_LENGTH(end)
    maxchar = max(PyUnicode_MAX_CHAR_VALUE(head), PyUnicode_MAX_CHAR_VALUE(end))
    total = nh + nv + 11 + nd + ne
    out = PyUnicode_New(total, maxchar)
    o = <uint8_t*>PyUnicode_1BYTE_DATA(out)
    memcpy(o, PyUnicode_1BYTE_DATA(head), nh)
    o += nh
    memcpy(o, vals, nv)
    o += nv
    memcpy(o, _HASH_MID, 11)
    o += 11
    memcpy(o, digits, nd)
    o += nd
    memcpy(o, PyUnicode_1BYTE_DATA(end), ne)
    return out


cdef Py_ssize_t _wt_json_ascii(char* o, const uint8_t* v, Py_ssize_t n) noexcept nogil:
    """The JSON string of ASCII ``v`` (``json.encoder.encode_basestring``'s escapes) at
    ``o`` (room for ``6 * n + 2`` bytes); its length."""
    cdef Py_ssize_t j, nj = 1
    cdef uint8_t c
    o[0] = 34
    for j in range(n):
        c = v[j]
        if c == 34 or c == 92:
            o[nj] = 92
            o[nj + 1] = c
            nj += 2
        elif c >= 32:
            o[nj] = c
            nj += 1
        elif c == 10 or c == 13 or c == 9 or c == 8 or c == 12:
            o[nj] = 92
            o[nj + 1] = 110 if c == 10 else 114 if c == 13 else 116 if c == 9 else \
                98 if c == 8 else 102
            nj += 2
        else:                                   # \u00XX, lower-case hex as json writes it
            o[nj] = 92
            o[nj + 1] = 117
            o[nj + 2] = 48
            o[nj + 3] = 48
            o[nj + 4] = b"0123456789abcdef"[c >> 4]
            o[nj + 5] = b"0123456789abcdef"[c & 15]
            nj += 6
    o[nj] = 34
    return nj + 1


cdef Py_ssize_t _wt_unicode_size(Py_ssize_t k, Py_ssize_t dstlen, Py_ssize_t nweights,
                                 bint pad_to_max) noexcept nogil:
    """The length of :func:`_wt_unicode_into`'s sort key."""
    cdef Py_ssize_t n = k, rest, room, size
    if nweights < n:
        n = nweights
    if dstlen // 2 < n:
        n = dstlen // 2
    if n < 0:
        n = 0
    rest = nweights - n
    room = dstlen - 2 * n
    if room > 0 and rest > 0 and n < k:
        return 2 * n + 1
    size = 2 * n
    if room > 0 and rest > 0:
        size += min(2 * rest, room)
    if pad_to_max and size < dstlen:
        size = dstlen
    return size


cdef Py_ssize_t _wt_unicode_into(char* o, const uint8_t* v, Py_ssize_t k, Py_ssize_t dstlen,
                                 Py_ssize_t nweights, bint pad_to_max,
                                 bint upper) noexcept nogil:
    """``repltool.writeset.collation._unicode`` of an ASCII value at ``o`` (room for
    :func:`_wt_unicode_size` bytes): a weight ``00 c`` per character (``c`` upper-cased
    under ``upper``), ``min(k, nweights, dstlen // 2)`` of them; with room left, the
    next weight's high byte when characters are left, else ``00 20`` pairs for the
    weights left (cut at the buffer), then (``pad_to_max``) ``00 20`` pairs to the
    buffer's end.  Its length."""
    cdef Py_ssize_t n = k, i, j, rest, room, extra
    cdef uint8_t c
    if nweights < n:
        n = nweights
    if dstlen // 2 < n:
        n = dstlen // 2
    if n < 0:
        n = 0
    rest = nweights - n
    room = dstlen - 2 * n
    for i in range(n):
        c = v[i]
        if upper and 97 <= c <= 122:
            c -= 32
        o[2 * i] = 0
        o[2 * i + 1] = c
    if room > 0 and rest > 0 and n < k:
        o[2 * n] = 0                        # the high byte of character n's weight
        return 2 * n + 1
    i = 2 * n
    if room > 0 and rest > 0:
        extra = min(2 * rest, room)
        for j in range(extra):
            o[i + j] = 0 if j % 2 == 0 else 32
        i += extra
    if pad_to_max and i < dstlen:
        for j in range(dstlen - i):
            o[i + j] = 0 if j % 2 == 0 else 32
        i = dstlen
    return i


cdef Py_ssize_t _wt_weights_into(char* o, Py_ssize_t limit, const uint8_t* v, Py_ssize_t n,
                                 list levels) except -1:
    """The first ``limit`` bytes (fewer when it is shorter) of ``join_ascii_weights(v,
    levels)`` at ``o``; their number."""
    cdef Py_ssize_t nl = PyList_GET_SIZE(levels), lv, k, at = 0, lw, take
    cdef object asc, w
    for lv in range(nl):
        if at >= limit:
            break
        asc = <object>PyList_GET_ITEM(levels, lv)
        if type(asc) is not list or PyList_GET_SIZE(asc) != 128:
            raise ValueError("an ASCII weight table has 128 entries")
        if lv:
            take = min(2, limit - at)
            memset(o + at, 0, take)
            at += take
        for k in range(n):
            if at >= limit:
                break
            w = <object>PyList_GET_ITEM(asc, v[k])
            if type(w) is not bytes:
                raise TypeError("an ASCII weight is bytes")
            lw = PyBytes_GET_SIZE(w)
            if lw == 2 and at + 2 <= limit:        # most ASCII weights: one primary
                o[at] = PyBytes_AS_STRING(w)[0]
                o[at + 1] = PyBytes_AS_STRING(w)[1]
                at += 2
                continue
            lw = min(lw, limit - at)
            memcpy(o + at, PyBytes_AS_STRING(w), lw)
            at += lw
    return at


cdef Py_ssize_t _wt_str_hashes(tuple st, const uint8_t* r, Py_ssize_t rlen, bint json,
                               uint64_t* hashes, Py_ssize_t room, Py_ssize_t* nj) except -2:
    """The XXH64 hash of every entry's key string of a one-part VARCHAR key stored as
    ``r`` (``st`` as ``_str_entry_texts``' string text) into ``hashes`` (room for
    ``room``); with ``json`` the value's JSON string at the start of the scratch buffer,
    ``nj`` its length.  How many entries; -1 when the value is not ASCII (the Python
    miss builds them)."""
    cdef Py_ssize_t lb, n, j, cut, nsk, nw = 0, wmax = 0, skmax = 0, np, ns
    cdef Py_ssize_t nrule, need, kn, ri
    cdef const uint8_t* v
    cdef char* buf
    cdef char* sk
    cdef char* key
    cdef bint pad
    cdef tuple cuts, rule
    cdef object levels, prefix, sep
    if PyTuple_GET_SIZE(st) != 7:
        raise ValueError("a string key text has 7 fields")
    prefix = <bytes?>st[0]
    lb = st[3]
    levels = st[4]
    cuts = <tuple?>st[5]
    sep = <bytes?>st[6]
    if rlen < lb or lb < 1 or lb > 2:
        raise IndexError("length past the end")
    n = <Py_ssize_t>_rdn(r, <int>lb)
    if lb + n != rlen:
        raise ValueError("value does not fill its bytes")
    v = r + lb
    for j in range(n):
        if v[j] >= 128:
            return -1
    nrule = PyTuple_GET_SIZE(cuts)
    if nrule > room:
        raise ValueError("too many entries for one key")
    for ri in range(nrule):
        rule = <tuple?>cuts[ri]
        if rule[0] == "w":
            cut = rule[1]
            if cut < 0:
                raise ValueError("a negative cut")
            wmax = max(wmax, cut)
            skmax = max(skmax, cut)
        elif rule[0] == "u":
            skmax = max(skmax, _wt_unicode_size(n, rule[1], rule[2], rule[3]))
        else:
            raise ValueError(f"sort key rule {rule[0]!r}")
    if wmax and levels is None:
        raise ValueError("a weight rule without weight tables")
    np = PyBytes_GET_SIZE(prefix)
    ns = PyBytes_GET_SIZE(sep)
    # the scratch: the JSON string, the weights (cut at the longest cut), one key string
    need = (6 * n + 2 if json else 0) + wmax + (np + skmax + ns + 20)
    buf = _wt_reserve(need)
    nj[0] = _wt_json_ascii(buf, v, n) if json else 0
    sk = buf + nj[0]
    if wmax:
        nw = _wt_weights_into(sk, wmax, v, n, <list?>levels)
    key = sk + wmax
    memcpy(key, PyBytes_AS_STRING(prefix), np)
    for ri in range(nrule):
        rule = <tuple>cuts[ri]
        if rule[0] == "w":
            cut = rule[1]
            pad = rule[2]
            nsk = min(nw, cut)
            memcpy(key + np, sk, nsk)
            if pad and nsk < cut:
                memset(key + np + nsk, 0, cut - nsk)
                nsk = cut
        else:
            nsk = _wt_unicode_into(key + np, v, n, rule[1], rule[2], rule[3], rule[4])
        kn = np + nsk
        memcpy(key + kn, PyBytes_AS_STRING(sep), ns)
        kn += ns
        kn += _wt_decimal(key + kn, <uint64_t>nsk)
        hashes[ri] = _xxh64(<const uint8_t*>key, kn)
    return nrule


cdef object _wt_str_entries(tuple st, const uint8_t* r, Py_ssize_t rlen):
    """See ``_str_entry_texts``: every entry's text built in one buffer."""
    global _wt_str_built
    cdef uint64_t hs[16]
    cdef Py_ssize_t k, ri, nj
    cdef str head, end
    k = _wt_str_hashes(st, r, rlen, True, hs, 16, &nj)
    if k < 0:
        return None
    head = <str?>st[1]
    end = <str?>st[2]
    out = PyTuple_New(k)
    for ri in range(k):
        e = _wt_entry(head, _wt_scratch, nj, hs[ri], end)   # copies the JSON string
        Py_INCREF(e)
        PyTuple_SET_ITEM(out, ri, e)
    _wt_str_built += k
    return out
