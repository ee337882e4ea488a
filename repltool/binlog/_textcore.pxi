# ---- dump text: the printer of the common events (included from _core.pyx) ----
#
# Driven by repltool.cli.render_replay.print_logs, which hands every event this printer
# does not take (ST_PYTHON: the Format_description, Query, Rotate, ... events, a CRC
# mismatch, a body the fast layout does not cover, a Rows event whose text program
# refuses its bytes) to the general printer at exactly that event, and hands back
# after it.  What it writes for the events it takes is byte for byte what
# ReplayPrinter writes for them (tests/cli/test_dump_core.py compares whole outputs);
# values come from per-layout text programs (RowText) built by
# repltool.cli.render_rows.core_text_program from the same classification the Python
# text programs use.  Text taken from the file is never interpreted: strings are
# copied only when every byte is printable ASCII, anything else goes to
# render_rows.quote_bytes (the Python escaping rules).

from libc.stdio cimport snprintf
from libc.math cimport isfinite
from libc.string cimport strlen
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_AsEncodedString

cdef enum:
    X_INT = 0          # a: size, b: 1 signed, c: 1 wrap a negative value as "v (v+2^n)"
    X_STR = 1          # a: bytes of the length prefix
    X_DECIMAL = 2      # a: size, b: first group, c: groups, d: integer groups
    X_DATETIME2 = 3    # a: fsp
    X_TIMESTAMP2 = 4   # a: fsp
    X_DATE = 5
    X_DOUBLE = 6
    X_ENUM = 7         # a: size
    X_CALL = 8         # the Python maker (data, pos) -> (text, next pos)
    X_BITS = 9         # a: size (<= 8), b: 1 big-endian (BIT) / 0 little-endian (SET), c: bits


cdef struct OutBuf:
    char* p
    Py_ssize_t n
    Py_ssize_t cap


cdef int _ob_grow(OutBuf* b, Py_ssize_t need) except -1:
    cdef Py_ssize_t cap = b.cap * 2 if b.cap else 1 << 16
    while cap < b.n + need:
        cap *= 2
    cdef char* q = <char*>realloc(b.p, cap)
    if q is NULL:
        raise MemoryError()
    b.p = q
    b.cap = cap
    return 0


cdef inline int _put(OutBuf* b, const char* s, Py_ssize_t n) except -1:
    if b.n + n > b.cap:
        _ob_grow(b, n)
    memcpy(b.p + b.n, s, n)
    b.n += n
    return 0


cdef inline int _putz(OutBuf* b, const char* s) except -1:
    return _put(b, s, strlen(s))


cdef inline int _putb(OutBuf* b, bytes s) except -1:
    return _put(b, PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s))


cdef inline int _putc(OutBuf* b, char c) except -1:
    if b.n + 1 > b.cap:
        _ob_grow(b, 1)
    b.p[b.n] = c
    b.n += 1
    return 0


cdef int _putu(OutBuf* b, uint64_t v, int width=0) except -1:
    """``v`` in decimal, zero-padded to ``width`` digits (at least one digit)."""
    cdef char tmp[24]
    cdef int i = 24
    while True:
        i -= 1
        tmp[i] = <char>(48 + v % 10)
        v //= 10
        if v == 0:
            break
    while 24 - i < width:
        i -= 1
        tmp[i] = 48
    return _put(b, tmp + i, 24 - i)


cdef int _puti(OutBuf* b, int64_t v) except -1:
    if v < 0:
        _putc(b, 45)
        return _putu(b, <uint64_t>(-(v + 1)) + 1)
    return _putu(b, <uint64_t>v)


cdef int _putstr(OutBuf* b, str s) except -1:
    return _putb(b, PyUnicode_AsEncodedString(s, "utf-8", "surrogateescape"))


cdef inline uint64_t _le(const uint8_t* p, int n) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(n - 1, -1, -1):
        v = (v << 8) | p[i]
    return v


cdef class RowText:
    """The ``###`` text program of one row image layout (a step per present column).

    Built by :func:`repltool.cli.render_rows.core_text_program` from
    ``(kind, args, line prefix, after the value, the NULL line, Python maker)`` per
    column; ``heads``: the INSERT / DELETE / UPDATE head lines of the table."""

    cdef int64_t* cols          # 5 per column: kind, a, b, c, d
    cdef int64_t* groups        # DECIMAL groups: (bytes, digits) pairs
    cdef Py_ssize_t ncols
    cdef list pre, post, nul, makers
    cdef public bytes head_insert, head_delete, head_update, head_set

    def __cinit__(self):
        self.cols = NULL
        self.groups = NULL

    def __dealloc__(self):
        free(self.cols)
        free(self.groups)

    def __init__(self, list steps, bytes head_insert, bytes head_delete,
                 bytes head_update, bytes head_set):
        cdef Py_ssize_t k, ng = 0
        cdef int64_t* c
        self.ncols = len(steps)
        self.head_insert, self.head_delete = head_insert, head_delete
        self.head_update, self.head_set = head_update, head_set
        self.pre, self.post, self.nul, self.makers = [], [], [], []
        for st in steps:
            if st[0] == X_DECIMAL:
                ng += len(st[1][1])
        self.cols = <int64_t*>calloc(self.ncols * 5 + 1, sizeof(int64_t))
        self.groups = <int64_t*>calloc(ng * 2 + 1, sizeof(int64_t))
        if self.cols is NULL or self.groups is NULL:
            raise MemoryError()
        ng = 0
        for k, st in enumerate(steps):
            kind, args, pre, post, nul, maker = st
            c = self.cols + k * 5
            c[0] = kind
            self.pre.append(pre)
            self.post.append(post)
            self.nul.append(nul)
            self.makers.append(maker)
            if kind == X_DECIMAL:
                c[1] = args[0]
                c[2] = ng
                c[3] = len(args[1])
                c[4] = args[2]
                for nbytes, ndigits in args[1]:
                    self.groups[ng * 2] = nbytes
                    self.groups[ng * 2 + 1] = ndigits
                    ng += 1
            elif kind == X_INT or kind == X_BITS:
                c[1], c[2], c[3] = args
            elif kind in (X_STR, X_DATETIME2, X_TIMESTAMP2, X_ENUM):
                c[1] = args
            elif kind not in (X_DATE, X_DOUBLE, X_CALL):
                raise ValueError(f"text step kind {kind}")

    def image_text(self, bytes data, Py_ssize_t p):
        """(the lines of the image at ``p``, where it ends); the writers' errors."""
        cdef OutBuf o
        o.p = NULL
        o.n = o.cap = 0
        try:
            if p < 0 or p > len(data):
                raise IndexError(p)
            q = self.image(&o, data, <const uint8_t*>PyBytes_AS_STRING(data), len(data), p)
            return PyBytes_FromStringAndSize(o.p, o.n), q
        finally:
            free(o.p)

    cdef Py_ssize_t image(self, OutBuf* o, bytes data, const uint8_t* d, Py_ssize_t n,
                          Py_ssize_t p) except -1:
        """The lines of the image at ``p`` (each ending with a line feed); returns its end."""
        cdef Py_ssize_t nb = (self.ncols + 7) >> 3
        cdef Py_ssize_t bm = p, k, q
        cdef int64_t* c
        if p + nb > n:
            raise IndexError("row image past the end")
        p += nb
        for k in range(self.ncols):
            if d[bm + (k >> 3)] >> (k & 7) & 1:
                _putb(o, <bytes>self.nul[k])
                _putc(o, 10)
                continue
            c = self.cols + k * 5
            _putb(o, <bytes>self.pre[k])
            p = self.value(o, c, k, data, d, n, p)
            _putb(o, <bytes>self.post[k])
            _putc(o, 10)
        return p

    cdef Py_ssize_t value(self, OutBuf* o, int64_t* c, Py_ssize_t k, bytes data,
                          const uint8_t* d, Py_ssize_t n, Py_ssize_t p) except -1:
        cdef int64_t kind = c[0]
        cdef Py_ssize_t q, s, i, at, gi, j
        cdef uint64_t u, g
        cdef int64_t v
        cdef int size, nd, fb, mul, fsp, b
        cdef bint neg, started
        cdef double x
        cdef char tmp[64]
        cdef OutBuf* t
        if kind == X_INT:
            size = <int>c[1]
            q = p + size
            if q > n:
                raise IndexError
            u = _le(d + p, size)
            if not c[2]:
                return _putu(o, u) + q
            if size < 8 and u >> (8 * size - 1) & 1:
                v = <int64_t>u - (<int64_t>1 << (8 * size))
            else:
                v = <int64_t>u
            _puti(o, v)
            if v < 0 and c[3]:
                _putz(o, " (")
                _putu(o, u)
                _putc(o, 41)
            return q
        if kind == X_STR:
            size = <int>c[1]
            s = p + size
            if s > n:
                raise IndexError
            q = s + <Py_ssize_t>_le(d + p, size)
            if q > n:
                raise IndexError
            _put_quoted(o, d + s, q - s)
            return q
        if kind == X_DECIMAL:
            size = <int>c[1]
            q = p + size
            if size == 0:
                raise ValueError("DECIMAL of no bytes")
            if q > n:
                raise IndexError
            neg = not (d[p] & 0x80)
            if neg:
                _putc(o, 45)
            at = p
            started = False
            for gi in range(c[2], c[2] + c[3]):
                g = 0
                for j in range(self.groups[gi * 2]):
                    b = d[at]
                    if at == p:
                        b ^= 0x80
                    if neg:
                        b ^= 0xFF
                    g = (g << 8) | <uint64_t>b
                    at += 1
                nd = <int>self.groups[gi * 2 + 1]
                u = 1
                for j in range(nd):
                    u *= 10
                if g >= u:
                    raise ValueError("DECIMAL group out of range")
                if gi - c[2] == c[4]:
                    if not started:
                        _putc(o, 48)
                        started = True
                    _putc(o, 46)
                    _putu(o, g, nd)
                elif gi - c[2] > c[4]:
                    _putu(o, g, nd)
                elif started:
                    _putu(o, g, nd)
                elif g:
                    _putu(o, g)
                    started = True
            if not started:
                _putc(o, 48)
            return q
        if kind == X_DATETIME2 or kind == X_TIMESTAMP2:
            fsp = <int>c[1]
            if fsp <= 0:
                fb, mul = 0, 0
            elif fsp <= 2:
                fb, mul = 1, 10000
            elif fsp <= 4:
                fb, mul = 2, 100
            else:
                fb, mul = 3, 1
            size = (5 if kind == X_DATETIME2 else 4) + fb
            q = p + size
            if q > n:
                raise IndexError
            u = _rdn_be(d + p + size - fb, fb) * <uint64_t>mul if fb else 0
            if u > 999999:
                raise ValueError("fractional seconds out of range")
            if kind == X_TIMESTAMP2:
                _putu(o, _rdn_be(d + p, 4))
            else:
                g = _rdn_be(d + p, 5)
                if g < 0x8000000000:
                    raise ValueError("negative DATETIME2 value")
                g -= 0x8000000000
                v = <int64_t>((g >> 17) >> 5)      # year * 13 + month
                _putc(o, 39)
                _putu(o, <uint64_t>(v // 13), 4)
                _putc(o, 45)
                _putu(o, <uint64_t>(v % 13), 2)
                _putc(o, 45)
                _putu(o, (g >> 17) & 31, 2)
                _putc(o, 32)
                _putu(o, (g & 0x1FFFF) >> 12, 2)
                _putc(o, 58)
                _putu(o, (g >> 6) & 63, 2)
                _putc(o, 58)
                _putu(o, g & 63, 2)
            if fsp:
                snprintf(tmp, 16, ".%06d", <int>u)
                _put(o, tmp, fsp + 1 if fsp < 6 else 7)
            if kind == X_DATETIME2:
                _putc(o, 39)
            return q
        if kind == X_DATE:
            q = p + 3
            if q > n:
                raise IndexError
            u = _le(d + p, 3)
            _putc(o, 39)
            _putu(o, u >> 9, 4)
            _putc(o, 45)
            _putu(o, (u >> 5) & 15, 2)
            _putc(o, 45)
            _putu(o, u & 31, 2)
            _putc(o, 39)
            return q
        if kind == X_DOUBLE:
            q = p + 8
            if q > n:
                raise IndexError
            u = _le(d + p, 8)
            memcpy(&x, &u, 8)
            if isfinite(x):
                i = snprintf(tmp, 64, "%-.20g", x)
                _put(o, tmp, i)
                return q
        elif kind == X_BITS:
            size = <int>c[1]
            q = p + size
            if q > n:
                raise IndexError
            u = _rdn_be(d + p, size) if c[2] else _le(d + p, size)
            nd = 0
            while nd < 64 and u >> nd:
                nd += 1
            if nd == 0:
                nd = 1
            _putz(o, "b'")
            for j in range(c[3] - nd):
                _putc(o, 48)
            for j in range(nd - 1, -1, -1):
                _putc(o, 49 if u >> j & 1 else 48)
            _putc(o, 39)
            return q
        elif kind == X_ENUM:
            size = <int>c[1]
            q = p + size
            if q > n:
                raise IndexError
            return _putu(o, _le(d + p, size)) + q
        text, q = self.makers[k](data, p)
        _putstr(o, text)
        return q


# ---- the event printer ----

TP_DONE = 0            # every complete event of the buffer was printed
TP_PYTHON = 2          # the event at the offset is for the general printer
TP_REST = 3            # the general reader must read the rest of the file from the offset

cdef enum:
    E_NONE = 0
    E_GTID = 1
    E_TABLE_MAP = 2
    E_ROWS = 3
    E_XID = 4
    E_QUERY = 5
    E_MARIA_GTID = 6
    E_ANNOTATE = 7

cdef const char* _HEX = "0123456789abcdef"


cdef class TextPrinter:
    """Prints the common events of a log as ReplayPrinter does with
    ``--base64-output=decode-rows`` and ``-v`` / ``-vv``; see the module comment."""

    cdef OutBuf o               # text not yet written to ``out``
    cdef OutBuf pend            # the ### text of the open statement (until STMT_END_F)
    cdef OutBuf pb              # base64 of its Table_map and Rows events (--base64-output=auto)
    cdef bint b64
    cdef object out, printer, rows, tables, when_fn, usec_fn, program_fn
    cdef dict maps              # Table_map body bytes -> (table id, TableDef, description)
    cdef dict names             # Rows type code -> event name in the header
    cdef uint8_t role[256]
    cdef bint crc_on, verify
    cdef bytes q_status, q_db, q_usec  # the session of the last Query the general printer printed
    cdef int64_t thread_id              # the session's pseudo_thread_id (-1: none printed)
    cdef int64_t m_skip, m_domain, m_server  # MariaDB's session GTID variables (-1: none)
    cdef int64_t last_ts
    cdef bytes last_when
    cdef public uint64_t taken  # events printed here (the tests check the core ran)

    def __cinit__(self):
        self.o.p = NULL
        self.o.n = self.o.cap = 0
        self.pend.p = NULL
        self.pend.n = self.pend.cap = 0
        self.pb.p = NULL
        self.pb.n = self.pb.cap = 0

    def __dealloc__(self):
        free(self.o.p)
        free(self.pend.p)
        free(self.pb.p)

    def __init__(self, printer, rows, when_fn, usec_fn, program_fn, bint verify,
                 bint base64):
        self.printer = printer
        self.out = printer.out
        self.rows = rows
        self.tables = rows.tables
        self.when_fn = when_fn
        self.usec_fn = usec_fn
        self.program_fn = program_fn
        self.names = {}
        self.verify = verify
        self.b64 = base64
        self.maps = {}
        self.last_ts = -1
        self.last_when = b""
        self.taken = 0
        self.q_status = None
        self.q_db = None
        self.q_usec = b""
        self.thread_id = -1
        self.m_skip = self.m_domain = self.m_server = -1
        memset(self.role, 0, sizeof(self.role))

    def learn_query(self, bytes status_vars, bytes db, str usec):
        """The general printer printed a Query event with these status variables;
        ``db``: the session's database after it (None: none).  The session its header
        lines set is the one the next Query events with the same status bytes find, so
        their header is ``SET TIMESTAMP`` (with ``usec``) and a changed pseudo_thread_id
        only (and no ``use`` when their database is ``db``)."""
        self.q_status, self.q_db, self.q_usec = status_vars, db, _enc(usec)

    def configure(self, dict roles, bint crc_on, dict names):
        """Which type codes this printer takes (type code -> role) under the current
        Format_description, whether its events carry a CRC32, and the header name of
        each Rows type (``Write_rows: table id ``)."""
        self.names = names
        memset(self.role, 0, sizeof(self.role))
        for tc, r in roles.items():
            self.role[<int>tc] = <uint8_t>r
        self.crc_on = crc_on

    def learn_table_map(self, bytes body, object table_id, object table, str description):
        """A Table_map the general printer printed: the next ones with the same bytes
        are printed here."""
        if len(self.maps) >= 4096:
            self.maps.clear()
        self.maps[body] = (table_id, table, _enc(description))

    def hand_over(self):
        """Before the general printer prints: this printer's text goes to ``out``, the
        open statement's ### text to the printer's pending rows."""
        self.write()
        if self.pb.n:
            self.printer.pending.append(
                PyBytes_FromStringAndSize(self.pb.p, self.pb.n).decode("ascii"))
            self.pb.n = 0
        if self.pend.n:
            text = PyBytes_FromStringAndSize(self.pend.p, self.pend.n).decode(
                "utf-8", "surrogateescape")
            self.printer.pending_rows.extend(text[:-1].split("\n"))
            self.pend.n = 0

    def take_over(self):
        """After the general printer: its pending ### lines become this printer's."""
        pr = self.printer
        pr.flush()
        s = pr.s
        self.thread_id = -1 if s.thread_id is None else s.thread_id
        self.m_skip = -1 if s.skip_parallel is None else s.skip_parallel
        self.m_domain = -1 if s.domain_id is None else s.domain_id
        self.m_server = -1 if s.server_id is None else s.server_id
        if pr.pending_rows:
            _putb(&self.pend, _enc("".join(line + "\n" for line in pr.pending_rows)))
            pr.pending_rows.clear()
        if pr.pending:
            _putb(&self.pb, "".join(pr.pending).encode("ascii"))
            pr.pending.clear()

    def write(self):
        if self.o.n:
            self.out.write(PyBytes_FromStringAndSize(self.o.p, self.o.n))
            self.o.n = 0

    def drop_pending(self):
        self.pend.n = 0
        self.pb.n = 0

    cdef int header(self, Py_ssize_t at, const uint8_t* e, Py_ssize_t size) except -1:
        cdef OutBuf* o = &self.o
        cdef int64_t ts = _rd32(e)
        cdef uint32_t crc
        cdef int i
        cdef char tmp[16]
        _putz(o, "# at ")
        _putu(o, <uint64_t>at)
        _putz(o, "\n#")
        if ts != self.last_ts:
            self.last_when = _enc(self.when_fn(ts))
            self.last_ts = ts
        _putb(o, self.last_when)
        _putz(o, " server id ")
        _putu(o, _rd32(e + H_SERVER_ID))
        _putz(o, "  end_log_pos ")
        _putu(o, _rd32(e + H_LOG_POS))
        if self.crc_on:
            crc = _rd32(e + size - CHECKSUM_LEN)
            _putz(o, " CRC32 0x")
            for i in range(8):
                tmp[i] = _HEX[(crc >> (28 - 4 * i)) & 15]
            _put(o, tmp, 8)
        _putz(o, " \t")
        return 0

    cdef int flush_rows(self, bint complete=False) except -1:
        if self.pb.n:
            _putz(&self.o, "BINLOG '\n")
            _put(&self.o, self.pb.p, self.pb.n)
            _putz(&self.o, "'/*!*/;\n")
            self.pb.n = 0
            if not complete:
                _putz(&self.o, "# repltool: the statement above ends without STMT_END_F (the "
                      "log or the selection cut it)\n")
        if self.pend.n:
            _put(&self.o, self.pend.p, self.pend.n)
            self.pend.n = 0
        return 0

    def feed(self, bytes buf, Py_ssize_t off, Py_ssize_t base, Py_ssize_t file_size):
        """Print the events of ``buf`` from ``off`` (``buf[0]`` is at file offset ``base``);
        returns (status, offset): TP_DONE with the offset of the first incomplete event,
        or TP_PYTHON / TP_REST with the offset of the event the general code takes."""
        cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = len(buf), size, body_end
        cdef const uint8_t* e
        cdef int tc, r
        cdef bint ok
        while off + HEADER_LEN <= n:
            e = d + off
            size = _rd32(e + H_EVENT_SIZE)
            tc = e[H_TYPE]
            if size < HEADER_LEN or base + off + size > file_size:
                self.write()
                return TP_REST, off
            if off + size > n:
                break
            r = self.role[tc]
            if r == E_NONE:
                return TP_PYTHON, off
            body_end = size
            if self.crc_on:
                if size < HEADER_LEN + CHECKSUM_LEN:
                    return TP_PYTHON, off
                body_end = size - CHECKSUM_LEN
                if self.verify and crc32_buf(e, body_end) != _rd32(e + body_end):
                    return TP_PYTHON, off
            if r == E_ROWS:
                ok = self.rows_event(buf, base + off, off, size, body_end, tc)
            elif r == E_TABLE_MAP:
                ok = self.table_map(buf, base + off, off, size, body_end)
            elif r == E_QUERY:
                ok = self.query(base + off, e, size, body_end)
            elif r == E_MARIA_GTID:
                ok = self.maria_gtid(base + off, e, size, body_end)
            elif r == E_ANNOTATE:
                ok = self.annotate(base + off, e, size, body_end)
            elif r == E_GTID:
                ok = self.gtid(base + off, e, size, body_end, tc)
            elif r == E_XID:
                ok = body_end - HEADER_LEN == 8
                if ok:
                    self.flush_rows()
                    self.header(base + off, e, size)
                    _putz(&self.o, "Xid = ")
                    _putu(&self.o, _le(e + HEADER_LEN, 8))
                    _putz(&self.o, "\nCOMMIT/*!*/;\n")
                    self.printer.in_trx = False
            else:
                ok = False
            if not ok:
                return TP_PYTHON, off
            self.taken += 1
            off += size
            if self.o.n >= 1 << 18:
                self.write()
        return TP_DONE, off

    cdef bint table_map(self, bytes buf, Py_ssize_t at, Py_ssize_t off, Py_ssize_t size,
                        Py_ssize_t body_end) except -1:
        body = buf[off + HEADER_LEN:off + body_end]
        hit = self.maps.get(body)
        if hit is None:
            return False
        table_id, table, desc = hit
        self.header(at, <const uint8_t*>PyBytes_AS_STRING(buf) + off, size)
        _putb(&self.o, desc)
        _putc(&self.o, 10)
        self.tables[table_id] = table
        if self.b64:
            _put_base64(&self.pb, <const uint8_t*>PyBytes_AS_STRING(buf) + off, size)
        return True

    cdef bint rows_event(self, bytes buf, Py_ssize_t at, Py_ssize_t off, Py_ssize_t size,
                         Py_ssize_t body_end, int tc) except -1:
        cdef const uint8_t* e = <const uint8_t*>PyBytes_AS_STRING(buf) + off
        cdef const uint8_t* b = e + HEADER_LEN
        cdef Py_ssize_t n = body_end - HEADER_LEN, p, nb, start, mark, rows_n = 0
        cdef bint v2 = tc >= 30, update = tc == 24 or tc == 31
        cdef uint64_t table_id
        cdef int flags, width
        cdef RowText first, second
        if n < ROWS_V2_HEAD:
            return False
        table_id = _le(b + ROWS_TABLE_ID, 6)
        flags = b[ROWS_FLAGS] | b[ROWS_FLAGS + 1] << 8
        if v2:
            p = ROWS_EXTRA + (b[ROWS_EXTRA] | b[ROWS_EXTRA + 1] << 8)
            if p < ROWS_V2_HEAD or p > n:
                return False
        else:
            p = ROWS_EXTRA
        if p >= n:
            return False
        width = b[p]
        if width >= 251 or width == 0:
            return False
        p += 1
        nb = (width + 7) >> 3
        bm1 = buf[off + HEADER_LEN + p:off + HEADER_LEN + p + nb]
        p += nb
        bm2 = None
        if update:
            bm2 = buf[off + HEADER_LEN + p:off + HEADER_LEN + p + nb]
            p += nb
        if p >= n:                      # no row (or a cut bitmap): the general printer
            return False
        table = self.tables.get(table_id)
        if table is None or width > len(table.columns) or table.table_id != table_id:
            return False
        first = self.program_fn(table, bm1, width)
        if first is None:
            return False
        if update:
            second = self.program_fn(table, bm2, width)
            if second is None:
                return False
        start = off + HEADER_LEN + p
        mark = self.pend.n
        try:
            p = start
            while p < off + body_end:
                if update:
                    _putb(&self.pend, first.head_update)
                    p = first.image(&self.pend, buf, <const uint8_t*>PyBytes_AS_STRING(buf),
                                    off + body_end, p)
                    _putb(&self.pend, first.head_set)
                    p = second.image(&self.pend, buf, <const uint8_t*>PyBytes_AS_STRING(buf),
                                     off + body_end, p)
                else:
                    _putb(&self.pend, first.head_insert if tc == 23 or tc == 30
                          else first.head_delete)
                    p = first.image(&self.pend, buf, <const uint8_t*>PyBytes_AS_STRING(buf),
                                    off + body_end, p)
                rows_n += 1
        except Exception:
            self.pend.n = mark          # the general printer says what is wrong
            return False
        self.header(at, e, size)
        _putb(&self.o, <bytes>self.names[tc])
        _putu(&self.o, table_id)
        if flags & 1:
            _putz(&self.o, " flags: STMT_END_F")
        _putc(&self.o, 10)
        if self.b64:
            _put_base64(&self.pb, e, size)
        _putz(&self.pend, "# Number of rows: ")
        _putu(&self.pend, <uint64_t>rows_n)
        _putc(&self.pend, 10)
        if flags & 1:
            self.flush_rows(True)
        return True

    cdef bint query(self, Py_ssize_t at, const uint8_t* e, Py_ssize_t size,
                    Py_ssize_t body_end) except -1:
        # fast_query's layout (13-byte post-header), the session of learn_query
        cdef const uint8_t* b = e + HEADER_LEN
        cdef Py_ssize_t n = body_end - HEADER_LEN, db_len, status_len, db_start, db_end, qn
        cdef uint32_t tid
        cdef const uint8_t* q
        cdef OutBuf* o = &self.o
        cdef int i
        cdef char w[9]
        cdef bint suppress = e[H_FLAGS] & 0x08
        if n < Q_POST_HEADER or self.q_status is None or self.thread_id < 0:
            return False
        tid = _rd32(b + Q_THREAD_ID)
        db_len = b[Q_DB_LEN]
        status_len = b[Q_STATUS_LEN] | b[Q_STATUS_LEN + 1] << 8
        db_start = Q_POST_HEADER + status_len
        db_end = db_start + db_len
        if db_end >= n or b[db_end] != 0:
            return False
        if status_len != len(self.q_status) or \
                memcmp(b + Q_POST_HEADER, PyBytes_AS_STRING(self.q_status), status_len) != 0:
            return False
        q = b + db_end + 1
        qn = n - db_end - 1
        if suppress:
            # LOG_EVENT_SUPPRESS_USE_F: no `use`; the session's database stays only
            # for a transaction keyword (anything else empties it: the general printer)
            i = 0
            while i < qn and q[i] in b" \t\n\r\x0b\x0c":
                i += 1
            if not _trans_keyword(q + i, qn - i):
                return False
        elif self.q_db is None or db_len != len(self.q_db) or \
                memcmp(b + db_start, PyBytes_AS_STRING(self.q_db), db_len) != 0:
            return False
        self.flush_rows()
        self.header(at, e, size)
        _putz(o, "Query\tthread_id=")
        _putu(o, tid)
        _putz(o, "\texec_time=")
        _putu(o, _rd32(b + Q_EXEC_TIME))
        _putz(o, "\terror_code=")
        _putu(o, b[Q_ERROR_CODE] | b[Q_ERROR_CODE + 1] << 8)
        _putz(o, "\nSET TIMESTAMP=")
        _putu(o, _rd32(e))
        _putb(o, self.q_usec)
        _putz(o, "/*!*/;\n")
        if e[H_FLAGS] & 0x04 and tid != self.thread_id:
            _putz(o, "SET @@session.pseudo_thread_id=")
            _putu(o, tid)
            _putz(o, "/*!*/;\n")
            self.thread_id = tid
            self.printer.s.thread_id = tid
        _put(o, <const char*>q, qn)
        _putz(o, "\n/*!*/;\n")
        for i in range(9):                  # in_trx as ReplayPrinter._query sets it
            w[i] = <char>(q[i] - 32 if i < qn and 97 <= q[i] <= 122 else (q[i] if i < qn else 0))
        if memcmp(w, b"BEGIN", 5) == 0 or memcmp(w, b"XA START", 8) == 0:
            self.printer.in_trx = True
        elif memcmp(w, b"COMMIT", 6) == 0 or memcmp(w, b"ROLLBACK", 8) == 0 or \
                memcmp(w, b"XA ", 3) == 0:
            self.printer.in_trx = False
        return True

    cdef bint maria_gtid(self, Py_ssize_t at, const uint8_t* e, Py_ssize_t size,
                         Py_ssize_t body_end) except -1:
        # fast_maria_gtid's layout (no XA fields, no extra flags); ReplayPrinter._maria_gtid
        cdef const uint8_t* b = e + HEADER_LEN
        cdef Py_ssize_t n = body_end - HEADER_LEN, p = M_COMMIT_ID
        cdef int flags2
        cdef int64_t skip, domain, server
        cdef uint64_t seq_no, commit_id = 0
        cdef OutBuf* o = &self.o
        if n < M_COMMIT_ID or b[M_FLAGS2] & 0xC0:
            return False
        flags2 = b[M_FLAGS2]
        if flags2 & 0x02:
            if n < M_COMMIT_END:
                return False
            commit_id = _le(b + M_COMMIT_ID, 8)
            p = M_COMMIT_END
        if p < n and b[p]:
            return False
        seq_no = _le(b + M_SEQ_NO, 8)
        domain = _rd32(b + M_DOMAIN)
        server = _rd32(e + H_SERVER_ID)
        self.flush_rows()
        self.header(at, e, size)
        _putz(o, "GTID ")
        _putu(o, <uint64_t>domain)
        _putc(o, 45)
        _putu(o, <uint64_t>server)
        _putc(o, 45)
        _putu(o, seq_no)
        if flags2 & 0x02:
            _putz(o, " cid=")
            _putu(o, commit_id)
        if flags2 & 0x04:
            _putz(o, " trans")
        _putc(o, 10)
        skip = 0 if flags2 & 0x08 else 1
        s = self.printer.s
        if self.m_skip != skip:
            _putz(o, "/*M!100101 SET @@session.skip_parallel_replication=")
            _putu(o, <uint64_t>skip)
            _putz(o, "*//*!*/;\n")
            self.m_skip = skip
            s.skip_parallel = skip
        if self.m_domain != domain:
            _putz(o, "/*M!100001 SET @@session.gtid_domain_id=")
            _putu(o, <uint64_t>domain)
            _putz(o, "*//*!*/;\n")
            self.m_domain = domain
            s.domain_id = domain
        if self.m_server != server:
            _putz(o, "/*M!100001 SET @@session.server_id=")
            _putu(o, <uint64_t>server)
            _putz(o, "*//*!*/;\n")
            self.m_server = server
            s.server_id = server
        _putz(o, "/*M!100001 SET @@session.gtid_seq_no=")
        _putu(o, seq_no)
        _putz(o, "*//*!*/;\n")
        if not flags2 & (0x01 | 0x80):
            _putz(o, "START TRANSACTION\n/*!*/;\n")
            self.printer.in_trx = True
        return True

    cdef bint annotate(self, Py_ssize_t at, const uint8_t* e, Py_ssize_t size,
                       Py_ssize_t body_end) except -1:
        # MariaDB Annotate_rows: "#Q> " lines of printable ASCII only (CR LF as a line
        # feed); anything :func:`~repltool.escape.printable` would escape: Python
        cdef const uint8_t* t = e + HEADER_LEN
        cdef Py_ssize_t n = body_end - HEADER_LEN, i, start
        cdef uint8_t c
        cdef OutBuf* o = &self.o
        self.flush_rows()
        self.header(at, e, size)
        _putz(o, "Annotate_rows:\n")
        _put_comment_lines(o, t, n)
        return True

    cdef bint gtid(self, Py_ssize_t at, const uint8_t* e, Py_ssize_t size,
                   Py_ssize_t body_end, int tc) except -1:
        # fast_gtid's layouts (repltool.binlog.fastdecode); any other goes to Python
        cdef const uint8_t* b = e + HEADER_LEN
        cdef Py_ssize_t n = body_end - HEADER_LEN, p = G_ICT
        cdef uint64_t ict = 0, oct_ = 0, trx_len = 0, isv = 0, osv = 0
        cdef bint has_ts = False, has_len = False, has_sv = False, anon = True
        cdef int first, width, i
        cdef int64_t gno
        cdef char sid[37]
        cdef OutBuf* o = &self.o
        if n < G_ICT or b[G_LT_TYPE] != LT_TYPECODE:
            return False
        if n > G_ICT:
            if n < p + 7:
                return False
            ict = _le(b + p, 7)
            p += 7
            if ict & (<uint64_t>1 << 55):
                if n < p + 7:
                    return False
                ict &= ~(<uint64_t>1 << 55)
                oct_ = _le(b + p, 7)
                p += 7
            else:
                oct_ = ict
            has_ts = True
            if p < n:
                first = b[p]
                if first < 251:
                    trx_len = first
                    p += 1
                else:
                    width = 2 if first == 252 else 3 if first == 253 else 8 if first == 254 else 0
                    if width == 0 or n < p + 1 + width:
                        return False
                    trx_len = _le(b + p + 1, width)
                    p += 1 + width
                has_len = True
                if n < p + 4:
                    if p != n:
                        return False
                else:
                    isv = _rd32(b + p)
                    p += 4
                    if isv & 0x80000000:
                        if n < p + 4:
                            return False
                        isv &= 0x7FFFFFFF
                        osv = _rd32(b + p)
                    else:
                        osv = isv
                    has_sv = True
        gno = <int64_t>_le(b + G_GNO, 8)
        for i in range(16):
            if b[G_SID + i]:
                anon = False
        anon = anon and gno == 0
        self.flush_rows()
        self.header(at, e, size)
        _putz(o, "Anonymous_GTID" if anon else "GTID")
        _putz(o, "\tlast_committed=")
        _puti(o, <int64_t>_le(b + G_LC, 8))
        _putz(o, "\tsequence_number=")
        _puti(o, <int64_t>_le(b + G_SN, 8))
        _putz(o, "\trbr_only=no" if b[0] & 1 else "\trbr_only=yes")
        if has_ts:
            _putz(o, "\toriginal_committed_timestamp=")
            _putu(o, oct_)
            _putz(o, "\timmediate_commit_timestamp=")
            _putu(o, ict)
        if has_len:
            _putz(o, "\ttransaction_length=")
            _putu(o, trx_len)
        _putc(o, 10)
        if has_ts:
            _putz(o, "# original_commit_timestamp=")
            _putu(o, oct_)
            _putz(o, " (")
            _putstr(o, self.usec_fn(oct_))
            _putz(o, ")\n# immediate_commit_timestamp=")
            _putu(o, ict)
            _putz(o, " (")
            _putstr(o, self.usec_fn(ict))
            _putz(o, ")\n")
        if not b[0] & 1:
            _putz(o, "/*!50718 SET TRANSACTION ISOLATION LEVEL READ COMMITTED*//*!*/;\n")
        if has_ts:
            _putz(o, "/*!80001 SET @@session.original_commit_timestamp=")
            _putu(o, oct_)
            _putz(o, "*//*!*/;\n")
        if has_sv:
            _putz(o, "/*!80014 SET @@session.original_server_version=")
            _putu(o, osv)
            _putz(o, "*//*!*/;\n/*!80014 SET @@session.immediate_server_version=")
            _putu(o, isv)
            _putz(o, "*//*!*/;\n")
        if anon:
            _putz(o, "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'/*!*/;\n")
        else:
            _uuid_text(b + G_SID, sid)
            _putz(o, "SET @@SESSION.GTID_NEXT= '")
            _put(o, sid, 36)
            _putc(o, 58)
            _puti(o, gno)
            _putz(o, "'/*!*/;\n")
        self.printer.gtid_next_set = True
        return True


cdef bint _trans_keyword(const uint8_t* q, Py_ssize_t n) noexcept:
    """Whether ``q`` starts with BEGIN, COMMIT, ROLLBACK or ``XA `` (any case)."""
    cdef char w[8]
    cdef int i
    for i in range(8):
        w[i] = <char>(q[i] - 32 if i < n and 97 <= q[i] <= 122 else (q[i] if i < n else 0))
    return (memcmp(w, b"BEGIN", 5) == 0 or memcmp(w, b"COMMIT", 6) == 0
            or memcmp(w, b"ROLLBACK", 8) == 0 or memcmp(w, b"XA ", 3) == 0)


cdef void _uuid_text(const uint8_t* s, char* out) noexcept:
    cdef int i, j = 0
    for i in range(16):
        if i == 4 or i == 6 or i == 8 or i == 10:
            out[j] = 45
            j += 1
        out[j] = _HEX[s[i] >> 4]
        out[j + 1] = _HEX[s[i] & 15]
        j += 2


cdef bytes _enc(str s):
    return PyUnicode_AsEncodedString(s, "utf-8", "surrogateescape")


# ---- text from the file: quoted (row values) and made visible (query comments) ----
# The rules of repltool.cli.render_rows.quote_bytes and repltool.escape.printable, over
# the UTF-8 decoding Python does (an invalid sequence: its maximal valid prefix, one
# error); tests/rows/test_dump_core.py checks both against the Python functions.

cdef inline bint _risky(uint32_t cp) noexcept nogil:
    """C0, DEL, C1, the bidi controls, U+2028/U+2029 (escape.BIDI_CONTROLS and the rest
    of render_rows._QUOTED / escape._ONE_LINE)."""
    return (cp < 0x20 or 0x7F <= cp < 0xA0 or cp == 0x061C or cp == 0x200E or cp == 0x200F
            or 0x202A <= cp <= 0x202E or 0x2066 <= cp <= 0x2069 or cp == 0x2028
            or cp == 0x2029)


cdef Py_ssize_t _utf8_at(const uint8_t* t, Py_ssize_t i, Py_ssize_t n,
                         uint32_t* cp) noexcept nogil:
    """The length of the valid UTF-8 sequence at ``i`` (its code point in ``cp``), or
    minus the length of the invalid bytes there (start byte and valid continuations)."""
    cdef uint8_t c = t[i], b, lo = 0x80, hi = 0xBF
    cdef Py_ssize_t k, size
    cdef uint32_t v
    if c < 0x80:
        cp[0] = c
        return 1
    if c < 0xC2:
        return -1
    if c < 0xE0:
        size, v = 2, c & 0x1F
    elif c < 0xF0:
        size, v = 3, c & 0x0F
        if c == 0xE0:
            lo = 0xA0
        elif c == 0xED:
            hi = 0x9F
    elif c < 0xF5:
        size, v = 4, c & 0x07
        if c == 0xF0:
            lo = 0x90
        elif c == 0xF4:
            hi = 0x8F
    else:
        return -1
    for k in range(1, size):
        if i + k >= n:
            return -k
        b = t[i + k]
        if b < lo or b > hi:
            return -k
        lo, hi = 0x80, 0xBF
        v = (v << 6) | (b & 0x3F)
    cp[0] = v
    return size


cdef int _put_hex(OutBuf* o, uint32_t v, bint wide) except -1:
    cdef char tmp[8]
    if wide:
        snprintf(tmp, 8, "\\u%04x", v)
        return _put(o, tmp, 6)
    snprintf(tmp, 8, "\\x%02x", v)
    return _put(o, tmp, 4)


cdef int _put_quoted(OutBuf* o, const uint8_t* t, Py_ssize_t n) except -1:
    """quote_bytes: bytes that are not UTF-8 and risky characters' UTF-8 bytes as \\xNN."""
    cdef Py_ssize_t i = 0, j, k, run
    cdef uint32_t cp
    _putc(o, 39)
    while i < n:
        run = i
        while run < n and 0x20 <= t[run] < 0x7F:
            run += 1
        if run > i:
            _put(o, <const char*>t + i, run - i)
            i = run
            if i >= n:
                break
        k = _utf8_at(t, i, n, &cp)
        if k < 0 or _risky(cp):
            for j in range(k if k > 0 else -k):
                _put_hex(o, t[i + j], False)
            i += k if k > 0 else -k
        else:
            _put(o, <const char*>t + i, k)
            i += k
    return _putc(o, 39)


cdef int _put_visible(OutBuf* o, const uint8_t* t, Py_ssize_t n) except -1:
    """printable() of the text Python decodes (errors="replace") from ``t``."""
    cdef Py_ssize_t i = 0, k, run
    cdef uint32_t cp
    while i < n:
        run = i
        while run < n and 0x20 <= t[run] < 0x7F:
            run += 1
        if run > i:
            _put(o, <const char*>t + i, run - i)
            i = run
            if i >= n:
                break
        k = _utf8_at(t, i, n, &cp)
        if k < 0:
            _put(o, "\xef\xbf\xbd", 3)        # U+FFFD
            i -= k
        elif _risky(cp):
            _put_hex(o, cp, cp >= 0x100)
            i += k
        else:
            _put(o, <const char*>t + i, k)
            i += k
    return 0


cdef int _put_comment_lines(OutBuf* o, const uint8_t* t, Py_ssize_t n) except -1:
    """render.annotate_text: a ``#Q> `` line per line (CR LF ends a line too, the last
    line only when it is not empty)."""
    cdef Py_ssize_t i = 0, start = 0
    while i < n:
        if t[i] == 10 or (t[i] == 13 and i + 1 < n and t[i + 1] == 10):
            _putz(o, "#Q> ")
            _put_visible(o, t + start, i - start)
            _putc(o, 10)
            i += 1 if t[i] == 10 else 2
            start = i
        else:
            i += 1
    if start < n:
        _putz(o, "#Q> ")
        _put_visible(o, t + start, n - start)
        _putc(o, 10)
    return 0


def quoted_text(bytes data):
    """The compiled quote_bytes (for the tests): ``data`` as a quoted value's bytes."""
    cdef OutBuf o
    o.p = NULL
    o.n = o.cap = 0
    try:
        _put_quoted(&o, <const uint8_t*>PyBytes_AS_STRING(data), len(data))
        return PyBytes_FromStringAndSize(o.p, o.n)
    finally:
        free(o.p)


def comment_lines(bytes data):
    """The compiled render.annotate_text (for the tests), as UTF-8 bytes."""
    cdef OutBuf o
    o.p = NULL
    o.n = o.cap = 0
    try:
        _put_comment_lines(&o, <const uint8_t*>PyBytes_AS_STRING(data), len(data))
        return PyBytes_FromStringAndSize(o.p, o.n)
    finally:
        free(o.p)


cdef const char* _B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


cdef int _put_base64(OutBuf* o, const uint8_t* t, Py_ssize_t n) except -1:
    """base64.encodebytes: lines of 76 characters (57 bytes), each ending with a line feed."""
    cdef Py_ssize_t i = 0, k, line
    cdef uint32_t v
    cdef char* w
    if o.n + (n // 57 + 1) * 77 + 4 > o.cap:
        _ob_grow(o, (n // 57 + 1) * 77 + 4)
    w = o.p + o.n
    while i < n:
        line = n - i if n - i < 57 else 57
        k = 0
        while k + 3 <= line:
            v = (<uint32_t>t[i + k] << 16) | (<uint32_t>t[i + k + 1] << 8) | t[i + k + 2]
            w[0] = _B64[v >> 18]
            w[1] = _B64[(v >> 12) & 63]
            w[2] = _B64[(v >> 6) & 63]
            w[3] = _B64[v & 63]
            w += 4
            k += 3
        if line - k == 1:
            v = <uint32_t>t[i + k] << 16
            w[0] = _B64[v >> 18]
            w[1] = _B64[(v >> 12) & 63]
            w[2] = 61
            w[3] = 61
            w += 4
        elif line - k == 2:
            v = (<uint32_t>t[i + k] << 16) | (<uint32_t>t[i + k + 1] << 8)
            w[0] = _B64[v >> 18]
            w[1] = _B64[(v >> 12) & 63]
            w[2] = _B64[(v >> 6) & 63]
            w[3] = 61
            w += 4
        w[0] = 10
        w += 1
        i += line
    o.n = w - o.p
    return 0


def base64_text(bytes data):
    """The compiled base64.encodebytes (for the tests)."""
    cdef OutBuf o
    o.p = NULL
    o.n = o.cap = 0
    try:
        _put_base64(&o, <const uint8_t*>PyBytes_AS_STRING(data), len(data))
        return PyBytes_FromStringAndSize(o.p, o.n)
    finally:
        free(o.p)
