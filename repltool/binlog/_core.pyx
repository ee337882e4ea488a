# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled engine: event walk, CRC32 and transaction grouping over a buffer.

Driven by :mod:`repltool.binlog.corescan`, which reads the file in chunks, hands
every Format_description and Rotate event (and any GTID body this module does not
decode itself) to the general Python code, and turns the compact per-transaction
records this module returns into results.

What it does is exactly what :func:`repltool.binlog.transactions.group_transactions`
does over :func:`repltool.binlog.read_events` for the event types the driver marks
as supported (``configure``): the driver derives that table from the grouper's own
type sets, and Query classification calls the grouper's ``classify_query`` for
anything but a plain ``BEGIN`` / ``COMMIT`` prefix.  Anything outside the subset
(another event type, a CRC mismatch, a size that does not fit, a Table_map or
Query body the fast layout does not cover) stops the walk with ``ST_UNSUPPORTED``
at that event's offset: the caller hands over to the general reader, which gives
the exact result or error.  The layout constants below are checked against the
construct declarations of :mod:`repltool.binlog.structs` by
``tests/binlog/test_core.py`` (:func:`layout` returns them).
"""

from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport calloc, malloc, realloc, free
from libc.string cimport memcmp, memcpy, memset
from cpython.bytes cimport PyBytes_FromStringAndSize


# ---- layout (checked against structs.py by the tests) ----
cdef enum:
    HEADER_LEN = 19        # common_header.sizeof()
    H_TIMESTAMP = 0
    H_TYPE = 4
    H_SERVER_ID = 5
    H_EVENT_SIZE = 9
    H_LOG_POS = 13
    H_FLAGS = 17
    CHECKSUM_LEN = 4
    G_SID = 1              # gtid_body offsets
    G_GNO = 17
    G_LT_TYPE = 25
    G_LC = 26
    G_SN = 34
    G_ICT = 42             # immediate_commit_timestamp (7 bytes), after the 42-byte post-header
    G_NO_CLOCK_LEN = 25    # a 5.6 body: flags, sid, gno
    LT_TYPECODE = 2        # LOGICAL_TIMESTAMP_TYPECODE
    M_SEQ_NO = 0           # maria_gtid_body offsets
    M_DOMAIN = 8
    M_FLAGS2 = 12
    M_COMMIT_ID = 13
    M_COMMIT_END = 21      # ... with FL_GROUP_COMMIT_ID: where commit_id ends
    Q_THREAD_ID = 0        # query post-header offsets (13-byte post-header)
    Q_EXEC_TIME = 4
    Q_DB_LEN = 8
    Q_ERROR_CODE = 9
    Q_STATUS_LEN = 11
    Q_POST_HEADER = 13
    TM_DB_LEN = 8          # table_map_body with the 8-byte post-header
    ROWS_TABLE_ID = 0      # 6-byte table id right after the common header
    ROWS_FLAGS = 6
    ROWS_EXTRA = 8         # v2: the extra-info block's length (it counts its own 2 bytes)
    ROWS_V2_HEAD = 10      # the v2 post-header: where a row image's width follows the
                           # (empty) extra info
    MAX_COLUMNS = 4096     # MySQL's MAX_FIELDS: a wider Table_map goes to the general reader

# ---- what the driver tells about each type code (configure) ----
cdef enum:
    R_UNSUPPORTED = 0
    R_PYTHON = 1           # FDE, Rotate: returned to the driver
    R_IGNORED = 2          # counted, never part of a group
    R_GTID = 3             # MySQL GTID / anonymous GTID
    R_GTID_PY = 4          # a GTID type the driver decodes (tagged)
    R_MARIA_GTID = 5
    R_QUERY = 6
    R_TABLE_MAP = 7
    R_ROWS = 8
    R_END = 9              # XID
    R_XA_PREPARE = 10
    R_INCIDENT = 11
    R_PLAIN_NOOPEN = 12    # INTVAR, RAND, USER_VAR: never open a GTID-less group
    R_PLAIN = 13           # any other in-group event
    R_FDE = 14             # Format_description: returned to the driver before any CRC check

# ---- feed() results ----
ST_DONE = 0                # every complete event of the buffer was walked
ST_NEED_MORE = 1           # the event at the returned offset is not complete in the buffer
ST_PYTHON = 2              # the event at the offset is for the driver (see `pending_role`)
ST_UNSUPPORTED = 3         # the general reader must take over at the offset (see `reason`)

# ---- transaction kinds (index into KINDS) ----
KINDS = ("dml", "ddl", "xa-prepare", "xa-commit", "xa-rollback", "rollback", "incident", "empty")
cdef enum:
    K_DML = 0
    K_DDL = 1
    K_XA_PREPARE = 2
    K_XA_COMMIT = 3
    K_XA_ROLLBACK = 4
    K_ROLLBACK = 5
    K_INCIDENT = 6
    K_EMPTY = 7

# ---- per-transaction record: NFIELDS int64 in this order ----
FIELDS = ("file", "start", "end_file", "end_pos", "end_offset", "size", "num_events",
          "timestamp", "end_timestamp", "kind", "flags", "gtid_kind", "sid", "gno",
          "last_committed", "sequence_number", "server_id", "thread_id", "domain_id",
          "maria_flags", "commit_id", "segment", "rows_from", "rows_n",
          "immediate_commit_timestamp", "original_commit_timestamp", "transaction_length")
cdef enum:
    F_FILE = 0
    F_START = 1
    F_END_FILE = 2
    F_END_POS = 3
    F_END_OFFSET = 4
    F_SIZE = 5
    F_COUNT = 6
    F_TS = 7
    F_END_TS = 8
    F_KIND = 9
    F_FLAGS = 10
    F_GTID_KIND = 11
    F_SID = 12
    F_GNO = 13
    F_LC = 14
    F_SN = 15
    F_SERVER_ID = 16
    F_THREAD = 17
    F_DOMAIN = 18
    F_MFLAGS = 19
    F_COMMIT_ID = 20
    F_SEGMENT = 21
    F_ROWS_FROM = 22
    F_ROWS_N = 23
    F_ICT = 24
    F_OCT = 25
    F_TRX_LEN = 26
    NFIELDS = 27

# flags bits
TRUNCATED = 1
HAS_CLOCK = 2
HAS_THREAD = 4
HAS_COMMIT_ID = 8
HAS_MARIA = 16
SATURATED = 32
HAS_ICT = 64
HAS_TRX_LEN = 128
RELAY = 256
# gtid kinds
GTID_NONE = 0
GTID_MYSQL = 1             # sid index + gno
GTID_MARIA = 2             # domain, server_id, seq_no
GTID_OBJECT = 3            # an object the driver decoded (index into its list)

cdef enum:
    S_START = 0
    S_OPEN = 1
    S_STANDALONE = 2

cdef uint64_t _walked = 0


def events_walked():
    """Events walked by this module since import (the tests' proof that it ran)."""
    return _walked


cdef uint64_t _rows_walked = 0


def rows_walked():
    """Rows events whose rows this module counted itself, without ``row_hook``, since
    import (the tests' proof that stats' row counts ran here)."""
    return _rows_walked


def layout():
    """The layout constants compiled in (tests compare them with structs.py)."""
    return dict(HEADER_LEN=HEADER_LEN, H_TIMESTAMP=H_TIMESTAMP, H_TYPE=H_TYPE,
                H_SERVER_ID=H_SERVER_ID, H_EVENT_SIZE=H_EVENT_SIZE, H_LOG_POS=H_LOG_POS,
                H_FLAGS=H_FLAGS, CHECKSUM_LEN=CHECKSUM_LEN, G_SID=G_SID, G_GNO=G_GNO,
                G_LT_TYPE=G_LT_TYPE, G_LC=G_LC, G_SN=G_SN, G_ICT=G_ICT,
                G_NO_CLOCK_LEN=G_NO_CLOCK_LEN, LT_TYPECODE=LT_TYPECODE, M_SEQ_NO=M_SEQ_NO,
                M_DOMAIN=M_DOMAIN, M_FLAGS2=M_FLAGS2, M_COMMIT_ID=M_COMMIT_ID,
                M_COMMIT_END=M_COMMIT_END, Q_THREAD_ID=Q_THREAD_ID, Q_EXEC_TIME=Q_EXEC_TIME,
                Q_DB_LEN=Q_DB_LEN, Q_ERROR_CODE=Q_ERROR_CODE, Q_STATUS_LEN=Q_STATUS_LEN,
                Q_POST_HEADER=Q_POST_HEADER, TM_DB_LEN=TM_DB_LEN, ROWS_TABLE_ID=ROWS_TABLE_ID,
                ROWS_FLAGS=ROWS_FLAGS, ROWS_EXTRA=ROWS_EXTRA, ROWS_V2_HEAD=ROWS_V2_HEAD,
                MAX_COLUMNS=MAX_COLUMNS)


# ---- CRC32 (zlib's polynomial), slice-by-8 ----
cdef uint32_t _crc_table[8][256]


cdef void _crc_init():
    cdef uint32_t c
    cdef int i, k
    for i in range(256):
        c = <uint32_t>i
        for k in range(8):
            c = (c >> 1) ^ (<uint32_t>0xEDB88320u if c & 1 else <uint32_t>0)
        _crc_table[0][i] = c
    for i in range(256):
        c = _crc_table[0][i]
        for k in range(1, 8):
            c = _crc_table[0][c & 0xFF] ^ (c >> 8)
            _crc_table[k][i] = c


_crc_init()


cdef inline uint32_t _rd32(const uint8_t* p) noexcept nogil:
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline uint64_t _rdn(const uint8_t* p, int n) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(n - 1, -1, -1):
        v = (v << 8) | p[i]
    return v


cdef extern from *:
    """
    #ifdef REPLTOOL_HAVE_ZLIB
    #include <zlib.h>
    #define RT_HAVE_ZLIB 1
    static uint32_t rt_zcrc(const unsigned char* p, Py_ssize_t n) {
        uLong c = crc32(0L, Z_NULL, 0);
        while (n > 0) {
            uInt k = n > 0x40000000 ? 0x40000000 : (uInt)n;
            c = crc32(c, p, k);
            p += k;
            n -= k;
        }
        return (uint32_t)c;
    }
    #else
    #define RT_HAVE_ZLIB 0
    static uint32_t rt_zcrc(const unsigned char* p, Py_ssize_t n) { (void)p; (void)n; return 0; }
    #endif
    """
    int RT_HAVE_ZLIB
    uint32_t rt_zcrc(const uint8_t* p, Py_ssize_t n) noexcept nogil


#: True when the build linked zlib (its crc32 is about twice the table's speed)
HAVE_ZLIB = bool(RT_HAVE_ZLIB)


cdef enum:
    CRC_TABLE_BELOW = 256  # short events: the table (no per-call set-up), zlib above


cdef uint32_t crc32_buf(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    if RT_HAVE_ZLIB and n >= CRC_TABLE_BELOW:
        return rt_zcrc(p, n)
    return crc32_table(p, n)


cdef uint32_t crc32_table(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    cdef uint32_t c = <uint32_t>0xFFFFFFFFu
    cdef uint32_t lo, hi
    while n >= 8:
        lo = c ^ _rd32(p)
        hi = _rd32(p + 4)
        c = (_crc_table[7][lo & 0xFF] ^ _crc_table[6][(lo >> 8) & 0xFF]
             ^ _crc_table[5][(lo >> 16) & 0xFF] ^ _crc_table[4][lo >> 24]
             ^ _crc_table[3][hi & 0xFF] ^ _crc_table[2][(hi >> 8) & 0xFF]
             ^ _crc_table[1][(hi >> 16) & 0xFF] ^ _crc_table[0][hi >> 24])
        p += 8
        n -= 8
    while n > 0:
        c = _crc_table[0][(c ^ p[0]) & 0xFF] ^ (c >> 8)
        p += 1
        n -= 1
    return c ^ <uint32_t>0xFFFFFFFFu


# ---- the C allocator (repltool.cli, once at start-up) ----
cdef extern from *:
    """
    #if defined(__GLIBC__)
    #include <malloc.h>
    static int repltool_fix_malloc(int mmap_bytes, int trim_bytes) {
        return mallopt(M_MMAP_THRESHOLD, mmap_bytes) == 1
            && mallopt(M_TRIM_THRESHOLD, trim_bytes) == 1;
    }
    #else
    static int repltool_fix_malloc(int mmap_bytes, int trim_bytes) {
        (void)mmap_bytes; (void)trim_bytes; return 0;
    }
    #endif
    """
    int repltool_fix_malloc(int mmap_bytes, int trim_bytes)


def fix_malloc_thresholds(int mmap_bytes, int trim_bytes):
    """glibc: blocks of ``mmap_bytes`` and more get a mapping of their own, returned to
    the system when freed, and the heap's free top is given back past ``trim_bytes``
    (``mallopt(M_MMAP_THRESHOLD / M_TRIM_THRESHOLD)``; True when set, False on other C
    libraries).  glibc's default thresholds rise to the size of each mapped block
    freed, so a long run's big short-lived buffers move into the heap, whose free
    holes stay resident: peak RSS then grows with the input (bench/results/rssflat.md)."""
    return repltool_fix_malloc(mmap_bytes, trim_bytes) == 1


def crc32(const uint8_t[::1] data, bint table=False):
    """zlib.crc32 of ``data`` (the tests compare the two); ``table``: the built-in
    slice-by-8 code used when the build found no zlib."""
    cdef const uint8_t* p = &data[0] if data.shape[0] else NULL
    return crc32_table(p, data.shape[0]) if table else crc32_buf(p, data.shape[0])


# ---- per-file figures of ``stats`` (accumulate mode) ----
cdef enum:
    NDIST = 66             # distance buckets: 0 (<= 0), 1, 2, then 1 + bit_length(d - 1)
    NGROUPS = 4            # commit-id group sizes counted in the array (larger: a dict)
    HREC = NFIELDS + 2     # a top-list entry: value, transaction number, the record


cdef struct Acc:
    int64_t trx, trx_bytes, truncated, last_truncated
    int64_t kinds[8]
    int64_t kind_order[8]
    int64_t nkind
    int64_t cn, barriers, windows, cur_lc, has_cur_lc, cur_len, max_len, saturated, bad
    int64_t dist[NDIST]
    int64_t run_has_id, run_id, run_len
    int64_t groups[NGROUPS]
    int64_t* tcount        # rows events by table name index + 1 (0: unknown table)
    int64_t* tk            # 4 per tcount slot: rows inserted, updated, deleted; unwalked events
    int64_t tcap
    int64_t* torder        # name index + 1, in first-seen order
    int64_t ntorder, tordcap
    int64_t* big           # min-heaps of HREC entries (size / duration)
    int64_t nbig
    int64_t* lng
    int64_t nlng
    # the file's range: first / last transaction's timestamps, first / last GTID record
    int64_t first_ts, last_ts, has_first_g
    int64_t first_g[NFIELDS]
    int64_t last_g[NFIELDS]
    # window mode: events and bytes by type of the transactions taken, in first-seen order
    uint64_t wt_count[256]
    uint64_t wt_bytes[256]
    uint8_t wt_order[256]
    int64_t wt_n


cdef inline int _bitlen(uint64_t v) noexcept nogil:
    cdef int n = 0
    while v:
        v >>= 1
        n += 1
    return n


cdef inline int _dist_index(int64_t lc, int64_t sn) noexcept nogil:
    """stats.distance_bucket(sn - lc) as an index (exact for any two int64)."""
    if sn <= lc:
        return 0
    cdef uint64_t d = <uint64_t>sn - <uint64_t>lc
    if d <= 2:
        return <int>d
    return 1 + _bitlen(d - 1)


def _bucket_distance(int index):
    """A distance of bucket ``index`` (the smallest one above zero; a Python int:
    the last buckets lie beyond int64)."""
    return index if index <= 2 else (<object>1 << (index - 2)) + 1


def bucket_distance(int64_t last_committed, int64_t sequence_number):
    """The distance of the bucket the core counts ``sequence_number - last_committed``
    in, as reported in :meth:`Scanner.acc_result` (tests: same bucket as the real one)."""
    return _bucket_distance(_dist_index(last_committed, sequence_number))


cdef inline bint _heap_less(const int64_t* a, const int64_t* b) noexcept nogil:
    """(value, -number) of ``a`` < that of ``b`` (an earlier transaction wins a tie)."""
    return a[0] < b[0] or (a[0] == b[0] and a[1] > b[1])


cdef void _heap_offer(int64_t* heap, int64_t* n, int64_t top, int64_t value, int64_t k,
                      const int64_t* rec) noexcept nogil:
    """heapq's push / replace of stats._FileAcc._push on a min-heap of ``top`` entries."""
    cdef int64_t item[HREC]
    cdef int64_t i, parent, child, j
    item[0] = value
    item[1] = k
    for j in range(NFIELDS):
        item[2 + j] = rec[j]
    if n[0] < top:
        i = n[0]
        n[0] += 1
        while i > 0:
            parent = (i - 1) // 2
            if not _heap_less(item, heap + parent * HREC):
                break
            memcpy(heap + i * HREC, heap + parent * HREC, HREC * sizeof(int64_t))
            i = parent
        memcpy(heap + i * HREC, item, HREC * sizeof(int64_t))
        return
    if top == 0 or not _heap_less(heap, item):
        return
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n[0]:
            break
        if child + 1 < n[0] and _heap_less(heap + (child + 1) * HREC, heap + child * HREC):
            child += 1
        if not _heap_less(heap + child * HREC, item):
            break
        memcpy(heap + i * HREC, heap + child * HREC, HREC * sizeof(int64_t))
        i = child
    memcpy(heap + i * HREC, item, HREC * sizeof(int64_t))


cdef class ImageProgram           # (below: the row-image section)
cdef list _NO_SLOTS = []            # an ImageProgram's slots when it has none (row counts)
cdef enum:
    ROW_LAYOUTS = 16                # Rows layouts (type, bitmaps) kept a table id (row counts)


cdef class Scanner:
    """The walk and the open group across the files of one read."""

    cdef uint8_t role[256]
    cdef uint8_t defer[256]
    cdef uint64_t tcount[256]
    cdef uint64_t tbytes[256]
    cdef uint8_t seen_order[256]
    cdef int norder
    cdef bint crc_on, verify, format_set
    cdef int64_t file_idx, segment
    cdef bint relay
    # open group
    cdef bint g_open, g_has_gtid
    cdef int64_t g[NFIELDS]
    cdef int g_state
    cdef int64_t g_last_tid, g_last_name
    cdef Py_ssize_t g_last_entry         # index of g_last_name's (table, count) pair
    # output
    cdef int64_t* recs
    cdef Py_ssize_t nrec, caprec
    cdef int64_t* rows
    cdef Py_ssize_t nrows, caprows
    # table names
    cdef dict name_of_key, name_of_tid
    cdef public list names        # raw Table_map keys (len db, db, NUL, len table, table)
    cdef public list sids         # raw 16-byte SIDs
    cdef dict sid_index
    cdef object classify
    cdef dict classes
    cdef public str reason
    cdef public int pending_role
    cdef public int64_t pending_end
    cdef int64_t tm_tid_cache, tm_name_cache
    cdef int64_t tm_last_tid          # the last Table_map's table id and name key
    cdef bytes tm_last_key
    cdef uint8_t last_sid_raw[16]     # the last GTID's SID and its index
    cdef int last_sid
    # accumulate mode (stats): per-file figures instead of records
    cdef bint acc_on, clock_only
    cdef Acc* accs
    cdef Py_ssize_t nacc
    cdef int64_t* acc_of_file
    cdef Py_ssize_t nfiles
    cdef int64_t top, ntrx
    cdef list big_groups          # per Acc: {group size: count} for sizes >= NGROUPS
    # row counts (stats): ``row_hook(type code, Rows body) -> (kind index, rows)`` and
    # ``tm_hook(Table_map body)`` (repltool.binlog.rowcount.RowCounter); per rows entry
    # 4 counts (inserted, updated, deleted, unwalked events), moved with the entries
    cdef public object row_hook, tm_hook
    cdef int64_t* rowk
    cdef Py_ssize_t caprowk
    # the Table_map body last given to tm_hook per table id, and per table id the
    # image programs row_hook handed back for its Rows layouts: a list of (type code,
    # the body's bytes from offset 8 to the rows without the v2 extra row info, kind
    # index, first, second program, whether an extra row info block (its uint16 length
    # included in it) starts at offset 8), one per layout (a transaction may insert,
    # update and delete in one table; the extra info, e.g. a partition id, does not
    # change how the images are walked); Rows
    # events of a listed layout are walked here without a call (bounded: cleared past
    # 4096 ids, at most ROW_LAYOUTS layouts a table id)
    cdef dict tm_bodies, row_progs
    # window mode (stats with a window): ``win_hook(record bytes) -> bool`` decides per
    # group whether it is accumulated; the group's events by type are held until then
    cdef public object win_hook
    cdef bint win_on
    cdef int cur_tc
    cdef uint64_t gt_count[256]
    cdef uint64_t gt_bytes[256]
    cdef uint8_t gt_order[256]
    cdef int gt_n

    def __cinit__(self):
        memset(self.role, 0, sizeof(self.role))
        memset(self.defer, 0, sizeof(self.defer))
        memset(self.tcount, 0, sizeof(self.tcount))
        memset(self.tbytes, 0, sizeof(self.tbytes))
        self.norder = 0
        self.caprec = 1024
        self.recs = <int64_t*>malloc(self.caprec * NFIELDS * sizeof(int64_t))
        self.caprows = 1024
        self.rows = <int64_t*>malloc(self.caprows * 2 * sizeof(int64_t))
        if self.recs is NULL or self.rows is NULL:
            raise MemoryError()
        self.nrec = self.nrows = 0
        memset(self.gt_count, 0, sizeof(self.gt_count))
        memset(self.gt_bytes, 0, sizeof(self.gt_bytes))
        self.gt_n = 0
        self.win_on = False

    def window(self, hook):
        """Window mode (with :meth:`accumulate`): ``hook(record)`` (NFIELDS int64 as
        bytes) is asked for every group; only the groups it takes are accumulated, and
        :meth:`acc_result` then holds their events by type (``types``)."""
        self.win_hook = hook
        self.win_on = hook is not None

    def __dealloc__(self):
        free(self.recs)
        free(self.rows)
        free(self.rowk)
        self._free_accs()

    cdef void _free_accs(self) noexcept:
        cdef Py_ssize_t i
        if self.accs is not NULL:
            for i in range(self.nacc):
                free(self.accs[i].tcount)
                free(self.accs[i].tk)
                free(self.accs[i].torder)
                free(self.accs[i].big)
                free(self.accs[i].lng)
            free(self.accs)
            self.accs = NULL
        free(self.acc_of_file)
        self.acc_of_file = NULL
        self.nacc = 0

    def __init__(self, bytes roles, classify, dict classes):
        """:param roles: 256 bytes, the role of each type code (``R_*``).
        :param classify: ``transactions.classify_query``.
        :param classes: what ``classify`` returns -> 0 begin, 1 commit, 2 rollback,
            3 xa-rollback, 4 xa-commit, 5 anything else.
        """
        cdef int i
        if len(roles) != 256:
            raise ValueError("roles: 256 bytes")
        for i in range(256):
            self.role[i] = roles[i]
        self.classify = classify
        self.classes = classes
        self.name_of_key = {}
        self.name_of_tid = {}
        self.names = []
        self.sids = []
        self.sid_index = {}
        self.reason = ""
        self.g_open = False
        self.segment = 0
        self.relay = False
        self.tm_tid_cache = -2
        self.tm_name_cache = -1
        self.tm_last_tid = -2
        self.tm_last_key = b""
        self.last_sid = -1
        self.g_last_tid = -2
        self.g_last_name = -1

    # ---- driver calls ----

    def start_file(self, int64_t file_idx):
        self.file_idx = file_idx
        self.format_set = False

    def set_format(self, bint crc_on, bint verify, bytes defer=b""):
        """After an FDE: its checksum setting, and the type codes whose events go to
        the driver under it (GTID types its post-header table makes opaque)."""
        cdef int i
        self.crc_on = crc_on
        self.verify = verify
        memset(self.defer, 0, sizeof(self.defer))
        for i in range(len(defer)):
            self.defer[<uint8_t>defer[i]] = 1
        self.format_set = True

    def set_segment(self, int64_t segment, bint relay):
        self.segment = segment
        self.relay = relay

    def take_counts(self):
        """``[(type code, events, bytes)]`` of the current file in first-seen order; resets."""
        out = []
        cdef int i, tc
        for i in range(self.norder):
            tc = self.seen_order[i]
            out.append((tc, self.tcount[tc], self.tbytes[tc]))
            self.tcount[tc] = 0
            self.tbytes[tc] = 0
        self.norder = 0
        return out

    def take(self):
        """(records, rows) as bytes of int64: NFIELDS per transaction emitted since the
        last call; 2 per table of a transaction (table name index or -1, Rows events),
        a record's ``rows_from`` / ``rows_n`` indexing these pairs."""
        cdef Py_ssize_t keep_from = self.g[F_ROWS_FROM] if self.g_open else self.nrows
        cdef Py_ssize_t i
        recs = PyBytes_FromStringAndSize(<char*>self.recs, self.nrec * NFIELDS * 8)
        rows = PyBytes_FromStringAndSize(<char*>self.rows, keep_from * 2 * 8)
        for i in range(keep_from, self.nrows):      # the open group's tables move down
            self.rows[(i - keep_from) * 2] = self.rows[i * 2]
            self.rows[(i - keep_from) * 2 + 1] = self.rows[i * 2 + 1]
            if i < self.caprowk:
                memcpy(self.rowk + (i - keep_from) * 4, self.rowk + i * 4, 4 * sizeof(int64_t))
        self.nrows -= keep_from
        if self.g_open:
            self.g[F_ROWS_FROM] = 0
            self.g_last_entry -= keep_from
        self.nrec = 0
        return recs, rows

    def accumulate(self, acc_of_file, int64_t top, bint clock_only=False):
        """Accumulate mode: every transaction goes into the figures of the accumulator
        ``acc_of_file[its start file]`` (what ``stats._FileAcc.transaction`` - or, with
        ``clock_only``, ``clock_record`` - adds up) instead of a record; :meth:`take`
        then returns nothing and :meth:`acc_result` the figures."""
        cdef Py_ssize_t i, n = len(acc_of_file)
        self._free_accs()
        self.nfiles = n
        self.nacc = max(acc_of_file) + 1 if n else 0
        self.acc_of_file = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        self.accs = <Acc*>calloc(self.nacc + 1, sizeof(Acc))
        if self.acc_of_file is NULL or self.accs is NULL:
            raise MemoryError()
        for i in range(n):
            self.acc_of_file[i] = acc_of_file[i]
        for i in range(self.nacc):
            self.accs[i].big = <int64_t*>malloc((top + 1) * HREC * sizeof(int64_t))
            self.accs[i].lng = <int64_t*>malloc((top + 1) * HREC * sizeof(int64_t))
            if self.accs[i].big is NULL or self.accs[i].lng is NULL:
                raise MemoryError()
        self.big_groups = [{} for _ in range(self.nacc)]
        self.top = top
        self.ntrx = 0
        self.clock_only = clock_only
        self.acc_on = True

    def transactions(self):
        """Transactions accumulated so far (all accumulators)."""
        return self.ntrx

    def acc_result(self, Py_ssize_t i):
        """Accumulator ``i``'s figures: a dict of plain values (see ``corescan``)."""
        if i < 0 or i >= self.nacc:
            raise IndexError(i)
        cdef Acc* a = &self.accs[i]
        cdef Py_ssize_t j
        return dict(
            trx=a.trx, trx_bytes=a.trx_bytes, truncated=a.truncated,
            last_truncated=bool(a.last_truncated),
            kinds=[(KINDS[a.kind_order[j]], a.kinds[a.kind_order[j]]) for j in range(a.nkind)],
            clock=(a.cn, a.barriers, a.windows, a.cur_lc if a.has_cur_lc else None,
                   a.cur_len, a.max_len, a.saturated, a.bad),
            dist=[(_bucket_distance(j), a.dist[j]) for j in range(NDIST) if a.dist[j]],
            run=(a.run_id if a.run_has_id else None, a.run_len),
            groups=[(j, a.groups[j]) for j in range(NGROUPS) if a.groups[j]]
                   + sorted(self.big_groups[i].items()),
            tables=[(a.torder[j] - 1, a.tcount[a.torder[j]]) for j in range(a.ntorder)],
            rows=[(a.torder[j] - 1, a.tk[a.torder[j] * 4], a.tk[a.torder[j] * 4 + 1],
                   a.tk[a.torder[j] * 4 + 2], a.tk[a.torder[j] * 4 + 3])
                  for j in range(a.ntorder)] if self.row_hook is not None else [],
            biggest=PyBytes_FromStringAndSize(<char*>a.big, a.nbig * HREC * 8),
            longest=PyBytes_FromStringAndSize(<char*>a.lng, a.nlng * HREC * 8),
            times=(a.first_ts, a.last_ts) if a.trx else None,
            gtids=(PyBytes_FromStringAndSize(<char*>a.first_g, NFIELDS * 8),
                   PyBytes_FromStringAndSize(<char*>a.last_g, NFIELDS * 8))
                  if a.has_first_g else None,
            types=[(a.wt_order[j], a.wt_count[a.wt_order[j]], a.wt_bytes[a.wt_order[j]])
                   for j in range(a.wt_n)] if self.win_on else None)

    def live_objects(self):
        """Driver-decoded GTID objects the top lists (or the open group) still refer to."""
        out = set()
        cdef Py_ssize_t i, j
        cdef Acc* a
        for i in range(self.nacc):
            a = &self.accs[i]
            for j in range(a.nbig):
                if a.big[j * HREC + 2 + F_GTID_KIND] == GTID_OBJECT:
                    out.add(a.big[j * HREC + 2 + F_SID])
            for j in range(a.nlng):
                if a.lng[j * HREC + 2 + F_GTID_KIND] == GTID_OBJECT:
                    out.add(a.lng[j * HREC + 2 + F_SID])
            if a.has_first_g and a.first_g[F_GTID_KIND] == GTID_OBJECT:
                out.add(a.first_g[F_SID])
            if a.has_first_g and a.last_g[F_GTID_KIND] == GTID_OBJECT:
                out.add(a.last_g[F_SID])
        if self.g_open and self.g[F_GTID_KIND] == GTID_OBJECT:
            out.add(self.g[F_SID])
        return out

    def finish(self):
        """End of input: the open group, if any, is emitted as truncated."""
        if self.g_open:
            self._emit(True)

    # ---- handing over to the general reader (corescan.Handover) ----

    def open_start(self):
        """``(file index, offset)`` where the open group starts; ``None``: no group is open
        (an event the walk stops at is never counted, so the general reader can take over
        at the group's start, or at that event)."""
        if self.g_open:
            return (self.g[F_FILE], self.g[F_START])
        return None

    def table_ids(self):
        """``{table id: index into names}`` of every Table_map walked so far (the grouper's
        table names, which outlive a transaction)."""
        return dict(self.name_of_tid)

    cdef void _uncount(self, int tc, uint32_t size) noexcept:
        """The event the walk stops at is not counted (the general reader counts it)."""
        self.tcount[tc] -= 1
        self.tbytes[tc] -= size
        if self.tcount[tc] == 0 and self.norder and self.seen_order[self.norder - 1] == tc:
            self.norder -= 1

    def open_gtid(self, int64_t start, int64_t size, uint32_t ts, uint32_t server_id,
                  int gtid_kind, int64_t sid, int64_t gno, int64_t flags, int64_t lc,
                  int64_t sn, int64_t domain, int64_t mflags, int64_t commit_id,
                  int64_t ict, int64_t oct, int64_t trx_len, int state):
        """A GTID event the driver decoded (``pending_role`` R_GTID_PY, or a layout this
        module leaves to the general decoder): open its group as the grouper does."""
        self._open_group(start, ts, server_id, True)
        self._add(start, size, ts)
        cdef int64_t* g = self.g
        g[F_GTID_KIND] = gtid_kind
        g[F_SID] = sid
        g[F_GNO] = gno
        g[F_FLAGS] |= flags
        g[F_LC] = lc
        g[F_SN] = sn
        g[F_DOMAIN] = domain
        g[F_MFLAGS] = mflags
        g[F_COMMIT_ID] = commit_id
        g[F_ICT] = ict
        g[F_OCT] = oct
        g[F_TRX_LEN] = trx_len
        self.g_state = state

    # ---- the group ----

    cdef int _open_group(self, int64_t start, uint32_t ts, uint32_t server_id,
                         bint has_gtid) except -1:
        if self.g_open:
            self._emit(True)
        cdef int64_t* g = self.g
        cdef int i
        if self.win_on:         # a group re-opened without being emitted: tally anew
            for i in range(self.gt_n):
                self.gt_count[self.gt_order[i]] = 0
                self.gt_bytes[self.gt_order[i]] = 0
            self.gt_n = 0
        memset(g, 0, NFIELDS * sizeof(int64_t))
        g[F_FILE] = self.file_idx
        g[F_START] = start
        g[F_TS] = ts
        g[F_SERVER_ID] = server_id
        g[F_SEGMENT] = self.segment
        g[F_FLAGS] = RELAY if self.relay else 0
        g[F_ROWS_FROM] = self.nrows
        g[F_THREAD] = -1
        g[F_COMMIT_ID] = -1
        g[F_MFLAGS] = -1
        self.g_open = True
        self.g_has_gtid = has_gtid
        self.g_state = S_START
        self.g_last_name = -2
        self.g_last_entry = -1
        return 0

    cdef inline void _add(self, int64_t start, int64_t size, uint32_t ts):
        cdef int64_t* g = self.g
        cdef int tc
        if self.win_on:
            tc = self.cur_tc
            if self.gt_count[tc] == 0:
                self.gt_order[self.gt_n] = tc
                self.gt_n += 1
            self.gt_count[tc] += 1
            self.gt_bytes[tc] += size
        g[F_COUNT] += 1
        g[F_SIZE] += size
        g[F_END_FILE] = self.file_idx
        g[F_END_POS] = start
        g[F_END_OFFSET] = start + size
        g[F_END_TS] = ts

    cdef int _emit(self, bint truncated) except -1:
        cdef int64_t* g = self.g
        cdef int64_t* r
        if self.nrec == self.caprec:
            r = <int64_t*>realloc(self.recs, self.caprec * 2 * NFIELDS * sizeof(int64_t))
            if r is NULL:
                raise MemoryError()
            self.recs = r
            self.caprec *= 2
        if truncated:
            g[F_FLAGS] |= TRUNCATED
        if g[F_COUNT] == 1 and self.g_has_gtid:
            g[F_KIND] = K_EMPTY
        g[F_ROWS_N] = self.nrows - g[F_ROWS_FROM]
        if self.acc_on:
            if not self.win_on or self._win_take(g):
                self._accumulate(g)
            self.nrows = g[F_ROWS_FROM]
            self.g_open = False
            return 0
        r = self.recs + self.nrec * NFIELDS
        cdef int i
        for i in range(NFIELDS):
            r[i] = g[i]
        self.nrec += 1
        self.g_open = False
        return 0

    cdef int _win_take(self, int64_t* g) except -1:
        """Window mode: whether ``win_hook`` takes the group; if so its events by type go
        into its accumulator.  The group's tally is cleared either way."""
        cdef int i, tc
        cdef Acc* a
        taken = self.win_hook(PyBytes_FromStringAndSize(<char*>g, NFIELDS * 8))
        if taken:
            a = &self.accs[self.acc_of_file[g[F_FILE]]]
            for i in range(self.gt_n):
                tc = self.gt_order[i]
                if a.wt_count[tc] == 0:
                    a.wt_order[a.wt_n] = tc
                    a.wt_n += 1
                a.wt_count[tc] += self.gt_count[tc]
                a.wt_bytes[tc] += self.gt_bytes[tc]
        for i in range(self.gt_n):
            tc = self.gt_order[i]
            self.gt_count[tc] = 0
            self.gt_bytes[tc] = 0
        self.gt_n = 0
        return 1 if taken else 0

    cdef int _accumulate(self, int64_t* g) except -1:
        """stats._FileAcc.transaction (or clock_record) of one group, in C."""
        cdef Acc* a = &self.accs[self.acc_of_file[g[F_FILE]]]
        cdef int64_t k = self.ntrx
        cdef int64_t flags = g[F_FLAGS]
        cdef int64_t kind, lc, sn, name, n, cid, dur, need
        cdef Py_ssize_t i, j
        cdef int64_t* grown
        self.ntrx += 1
        a.trx += 1
        a.trx_bytes += g[F_SIZE]
        if a.trx == 1:
            a.first_ts = g[F_TS]
        a.last_ts = g[F_END_TS]
        if g[F_GTID_KIND] != GTID_NONE:
            if not a.has_first_g:
                memcpy(a.first_g, g, NFIELDS * sizeof(int64_t))
                a.has_first_g = 1
            memcpy(a.last_g, g, NFIELDS * sizeof(int64_t))
        if flags & HAS_CLOCK:
            lc = g[F_LC]
            sn = g[F_SN]
            a.cn += 1
            if lc == 0:
                a.barriers += 1
            if sn <= lc and not (sn == 0 and lc == 0):   # repltool.binlog.clock.inconsistent
                a.bad += 1                              # (tests/binlog/test_clock_rules.py)
            a.dist[_dist_index(lc, sn)] += 1
            if flags & SATURATED:
                a.saturated += 1
            if a.has_cur_lc and lc == a.cur_lc:
                a.cur_len += 1
            else:
                a.windows += 1
                a.cur_lc = lc
                a.has_cur_lc = 1
                a.cur_len = 1
            if a.cur_len > a.max_len:
                a.max_len = a.cur_len
        _heap_offer(a.big, &a.nbig, self.top, g[F_SIZE], k, g)
        if self.clock_only:
            return 0
        kind = g[F_KIND]
        if a.kinds[kind] == 0:
            a.kind_order[a.nkind] = kind
            a.nkind += 1
        a.kinds[kind] += 1
        if flags & TRUNCATED:
            a.truncated += 1
        for i in range(g[F_ROWS_FROM], g[F_ROWS_FROM] + g[F_ROWS_N]):
            name = self.rows[i * 2] + 1
            n = self.rows[i * 2 + 1]
            if name >= a.tcap:
                need = max(name + 1, a.tcap * 2, 16)
                grown = <int64_t*>realloc(a.tcount, need * sizeof(int64_t))
                if grown is NULL:
                    raise MemoryError()
                memset(grown + a.tcap, 0, (need - a.tcap) * sizeof(int64_t))
                a.tcount = grown
                grown = <int64_t*>realloc(a.tk, need * 4 * sizeof(int64_t))
                if grown is NULL:
                    raise MemoryError()
                memset(grown + a.tcap * 4, 0, (need - a.tcap) * 4 * sizeof(int64_t))
                a.tk = grown
                a.tcap = need
            if a.tcount[name] == 0:
                if a.ntorder == a.tordcap:
                    need = max(a.tordcap * 2, 16)
                    grown = <int64_t*>realloc(a.torder, need * sizeof(int64_t))
                    if grown is NULL:
                        raise MemoryError()
                    a.torder = grown
                    a.tordcap = need
                a.torder[a.ntorder] = name
                a.ntorder += 1
            a.tcount[name] += n
            if i < self.caprowk:
                for j in range(4):
                    a.tk[name * 4 + j] += self.rowk[i * 4 + j]
        if flags & HAS_MARIA:
            # MariaDB commit-id groups: runs of one commit_id (none: a group of its own)
            cid = g[F_COMMIT_ID]
            if flags & HAS_COMMIT_ID and a.run_has_id and cid == a.run_id:
                a.run_len += 1
            else:
                if a.run_len:
                    if a.run_len < NGROUPS:
                        a.groups[a.run_len] += 1
                    else:
                        d = self.big_groups[self.acc_of_file[g[F_FILE]]]
                        d[a.run_len] = d.get(a.run_len, 0) + 1
                a.run_has_id = 1 if flags & HAS_COMMIT_ID else 0
                a.run_id = cid
                a.run_len = 1
        a.last_truncated = 1 if flags & TRUNCATED else 0
        dur = g[F_END_TS] - g[F_TS] if g[F_END_TS] > g[F_TS] else 0
        _heap_offer(a.lng, &a.nlng, self.top, dur, k, g)
        return 0

    cdef int _capture(self, int tc, int64_t pos, const uint8_t* d, Py_ssize_t n) except -1:
        """A Table_map or Rows event body of the open group (``GroupCapture`` keeps them)."""
        return 0

    cdef int _rows_event(self, int64_t tid) except -1:
        cdef int64_t name
        cdef int64_t* r
        if tid == self.tm_tid_cache:
            name = self.tm_name_cache
        else:
            name = self.name_of_tid.get(tid, -1)
            self.tm_tid_cache = tid
            self.tm_name_cache = name
        if name == self.g_last_name and self.g_last_entry >= self.g[F_ROWS_FROM]:
            self.rows[self.g_last_entry * 2 + 1] += 1
            return 0
        # a table seen earlier in this group (not the previous rows event): add to its run
        cdef Py_ssize_t i
        for i in range(self.g[F_ROWS_FROM], self.nrows):
            if self.rows[i * 2] == name:
                self.rows[i * 2 + 1] += 1
                self.g_last_name = name
                self.g_last_entry = i
                return 0
        if self.nrows == self.caprows:
            r = <int64_t*>realloc(self.rows, self.caprows * 2 * 2 * sizeof(int64_t))
            if r is NULL:
                raise MemoryError()
            self.rows = r
            self.caprows *= 2
        r = self.rows + self.nrows * 2
        r[0] = name
        r[1] = 1
        self.g_last_entry = self.nrows
        self.nrows += 1
        self.g_last_name = name
        return 0

    cdef int _tm_seen(self, const uint8_t* d, Py_ssize_t n) except -1:
        """A Table_map body: to ``tm_hook`` unless it is its table id's last one again."""
        cdef int64_t tid = <int64_t>_rdn(d, 6)
        if self.tm_bodies is None:
            self.tm_bodies = {}
            self.row_progs = {}
        last = self.tm_bodies.get(tid)
        if last is not None and len(<bytes>last) == n and \
                memcmp(<const char*><bytes>last, d, n) == 0:
            return 0
        if len(self.tm_bodies) >= 4096:
            self.tm_bodies.clear()
            self.row_progs.clear()
        body = PyBytes_FromStringAndSize(<const char*>d, n)
        self.tm_bodies[tid] = body
        self.row_progs.pop(tid, None)
        self.tm_hook(body)
        return 0

    cdef Py_ssize_t _walk_cached(self, int tc, const uint8_t* d, Py_ssize_t n, int64_t tid,
                                 int* kind):
        """Rows of a Rows event in a layout ``row_progs`` holds, else -1 (also when the
        walk fails: ``row_hook`` then decides)."""
        cdef ImageProgram first, second
        cdef Py_ssize_t p, cnt = 0, klen, off = 8
        cdef list layouts
        cdef tuple hit = None
        if self.row_progs is None:
            return -1
        layouts = self.row_progs.get(tid)
        if layouts is None:
            return -1
        for entry in layouts:
            if <int>(<tuple>entry)[0] != tc:
                continue
            off = ROWS_EXTRA
            if (<tuple>entry)[5]:               # the extra row info block: skipped
                if n < ROWS_V2_HEAD:
                    continue
                off = ROWS_EXTRA + (d[ROWS_EXTRA] | (d[ROWS_EXTRA + 1] << 8))
                if off < ROWS_V2_HEAD:
                    continue
            key = <bytes>(<tuple>entry)[1]
            klen = len(key)
            if off + klen <= n and memcmp(<const char*>key, d + off, klen) == 0:
                hit = <tuple>entry
                break
        if hit is None:
            return -1
        first = hit[3]
        second = hit[4]
        p = off + klen
        try:
            while p < n:
                p = first.walk(None, d, n, p, _NO_SLOTS)
                if second is not None:
                    p = second.walk(None, d, n, p, _NO_SLOTS)
                cnt += 1
        except (IndexError, ValueError):
            return -1
        if p > n:
            return -1
        kind[0] = <int>hit[2]
        global _rows_walked
        _rows_walked += 1
        return cnt

    cdef int _count_rows(self, int tc, const uint8_t* d, Py_ssize_t n, int64_t tid) except -1:
        """The rows of the Rows event just entered (``g_last_entry``), by ``row_hook``."""
        cdef Py_ssize_t e = self.g_last_entry, need, extra
        cdef int64_t* r
        cdef int kind = 0
        cdef Py_ssize_t walked = self._walk_cached(tc, d, n, tid, &kind)
        if walked >= 0:
            k, cnt = kind, walked
        else:
            k, cnt, cache = self.row_hook(tc, PyBytes_FromStringAndSize(<const char*>d, n))
            if cache is not None and self.row_progs is not None:
                layouts = self.row_progs.get(tid)
                if layouts is None or len(<list>layouts) >= ROW_LAYOUTS:
                    layouts = self.row_progs[tid] = []
                extra = <Py_ssize_t>cache[3]
                (<list>layouts).append((tc, PyBytes_FromStringAndSize(
                    <const char*>d + 8 + extra, <Py_ssize_t>cache[0] - extra), k, cache[1],
                    cache[2], extra > 0))
        if e >= self.caprowk:
            need = max(self.caprows, e + 1)
            r = <int64_t*>realloc(self.rowk, need * 4 * sizeof(int64_t))
            if r is NULL:
                raise MemoryError()
            memset(r + self.caprowk * 4, 0, (need - self.caprowk) * 4 * sizeof(int64_t))
            self.rowk = r
            self.caprowk = need
        r = self.rowk + e * 4
        if self.rows[e * 2 + 1] == 1:           # the entry's first Rows event
            r[0] = r[1] = r[2] = r[3] = 0
        r[<int>k] += <int64_t>cnt
        return 0

    cdef int _table_map(self, const uint8_t* d, Py_ssize_t n) except -1:
        """1: name recorded; 0: a body the fast layout does not cover (unsupported)."""
        if n < TM_DB_LEN + 1:
            return 0
        cdef int64_t tid = <int64_t>_rdn(d, 6)
        cdef Py_ssize_t dl = d[TM_DB_LEN]
        cdef Py_ssize_t db_end = TM_DB_LEN + 1 + dl
        if db_end + 1 >= n or d[db_end] != 0:
            return 0
        cdef Py_ssize_t tl = d[db_end + 1]
        cdef Py_ssize_t t_end = db_end + 2 + tl
        if t_end >= n or d[t_end] != 0:
            return 0
        # the rest as fastdecode._parse_table_map checks it (decode_table_map accepts it)
        cdef Py_ssize_t p = t_end + 1
        cdef uint64_t count, mlen, vlen
        p = _packed(d, n, p, &count)
        if p < 0 or count > MAX_COLUMNS:
            return 0        # (too many columns: the general reader says why)
        if p + <Py_ssize_t>count > n:
            return 0
        p += count
        if p < n:
            p = _packed(d, n, p, &mlen)
            if p < 0 or p + <Py_ssize_t>mlen > n:
                return 0
            p += mlen
            p += (count + 7) // 8
            if p > n:
                return 0
            while p < n:
                p = _packed(d, n, p + 1, &vlen)
                if p < 0 or p + <Py_ssize_t>vlen > n:
                    return 0
                p += vlen
        cdef Py_ssize_t klen = t_end - TM_DB_LEN
        cdef const char* last
        if tid == self.tm_last_tid and klen == len(self.tm_last_key):
            last = self.tm_last_key
            if memcmp(last, d + TM_DB_LEN, klen) == 0:
                return 1                # the previous Table_map again: nothing changes
        key = PyBytes_FromStringAndSize(<const char*>d + TM_DB_LEN, klen)
        self.tm_last_tid = tid
        self.tm_last_key = key
        idx = self.name_of_key.get(key)
        if idx is None:
            idx = len(self.names)
            self.names.append(key)
            self.name_of_key[key] = idx
        self.name_of_tid[tid] = idx
        if tid == self.tm_tid_cache:
            self.tm_name_cache = idx
        return 1

    cdef int _sid(self, const uint8_t* p) except -1:
        if self.last_sid >= 0 and memcmp(self.last_sid_raw, p, 16) == 0:
            return self.last_sid
        memcpy(self.last_sid_raw, p, 16)
        self.last_sid = self._sid_index(p)
        return self.last_sid

    cdef int _sid_index(self, const uint8_t* p) except -1:
        key = PyBytes_FromStringAndSize(<const char*>p, 16)
        idx = self.sid_index.get(key)
        if idx is None:
            idx = len(self.sids)
            self.sids.append(key)
            self.sid_index[key] = idx
        return idx

    cdef int _mysql_gtid(self, const uint8_t* d, Py_ssize_t n, int64_t* g) except -1:
        """Decode a GTID body as fastdecode.fast_gtid accepts it; 0: leave it to the driver."""
        cdef Py_ssize_t p
        cdef uint64_t ict, oct_, tlen, isv
        cdef int first, width
        if n == G_NO_CLOCK_LEN:
            g[F_SID] = self._sid(d + G_SID)
            g[F_GNO] = <int64_t>_rdn(d + G_GNO, 8)
            return 1
        if n < G_ICT or d[G_LT_TYPE] != LT_TYPECODE:
            return 0
        g[F_SID] = self._sid(d + G_SID)
        g[F_GNO] = <int64_t>_rdn(d + G_GNO, 8)
        g[F_LC] = <int64_t>_rdn(d + G_LC, 8)
        g[F_SN] = <int64_t>_rdn(d + G_SN, 8)
        g[F_FLAGS] |= HAS_CLOCK
        if n == G_ICT:
            return 1
        p = G_ICT
        if n < p + 7:
            return 0
        ict = _rdn(d + p, 7)
        p += 7
        if ict & (<uint64_t>1 << 55):
            if n < p + 7:
                return 0
            ict &= ~(<uint64_t>1 << 55)
            oct_ = _rdn(d + p, 7)
            p += 7
        else:
            oct_ = ict
        g[F_ICT] = <int64_t>ict
        g[F_OCT] = <int64_t>oct_
        g[F_FLAGS] |= HAS_ICT
        if p >= n:
            return 1
        first = d[p]
        if first < 251:
            tlen = first
            p += 1
        else:
            width = 2 if first == 252 else 3 if first == 253 else 8 if first == 254 else 0
            if width == 0 or n < p + 1 + width:
                return 0
            tlen = _rdn(d + p + 1, width)
            p += 1 + width
        if n < p + 4:
            if p != n:
                return 0
        else:
            isv = _rd32(d + p)
            p += 4
            if isv & 0x80000000 and n < p + 4:
                return 0
        if tlen >> 63:
            return 0
        g[F_TRX_LEN] = <int64_t>tlen
        g[F_FLAGS] |= HAS_TRX_LEN
        return 1

    cdef int _maria_gtid(self, const uint8_t* d, Py_ssize_t n, int64_t* g) except -1:
        """MariaDB GTID without XA and with the flags_extra bytes present; 0: driver."""
        if n < M_COMMIT_ID:
            return 0
        cdef int flags2 = d[M_FLAGS2]
        cdef Py_ssize_t p = M_COMMIT_ID
        cdef int fx
        if flags2 & 0xC0:
            return 0
        if flags2 & 0x02:
            if n < p + 8:
                return 0
            g[F_COMMIT_ID] = <int64_t>_rdn(d + p, 8)
            g[F_FLAGS] |= HAS_COMMIT_ID
            p += 8
        if p < n:
            fx = d[p]
            p += 1
            if fx & 0x01:
                p += 1
            if fx & 0x0C:
                p += 8
            if p > n:
                return 0
        g[F_GNO] = <int64_t>_rdn(d + M_SEQ_NO, 8)
        g[F_DOMAIN] = <int64_t>_rd32(d + M_DOMAIN)
        g[F_MFLAGS] = flags2
        g[F_FLAGS] |= HAS_MARIA
        return 1

    # ---- the walk ----

    def feed(self, const uint8_t[::1] buf, Py_ssize_t off, int64_t base):
        """Walk the complete events of ``buf`` from ``off`` (``buf[0]`` is at file
        offset ``base``); returns ``(status, offset in buf)``."""
        global _walked
        cdef Py_ssize_t blen = buf.shape[0]
        cdef const uint8_t* b = &buf[0] if blen else NULL
        cdef const uint8_t* e
        cdef const uint8_t* d
        cdef uint32_t ts, sid, size, stored
        cdef int tc, rl, what
        cdef Py_ssize_t n, body_end, minsize, qs, db_end, status_len, qlen
        cdef int64_t pos, tid
        cdef int64_t* g = self.g
        cdef uint32_t thread_id
        cdef int ok
        minsize = HEADER_LEN + CHECKSUM_LEN if self.crc_on else HEADER_LEN
        while True:
            if off + HEADER_LEN > blen:
                return (ST_DONE if off == blen else ST_NEED_MORE), off
            e = b + off
            size = _rd32(e + H_EVENT_SIZE)
            if off + <Py_ssize_t>size > blen:
                if size < HEADER_LEN:
                    self.reason = "event_size below the header"
                    return ST_UNSUPPORTED, off
                return ST_NEED_MORE, off
            tc = e[H_TYPE]
            rl = self.role[tc]
            pos = base + off
            if rl == R_UNSUPPORTED:
                self.reason = f"event type {tc}"
                return ST_UNSUPPORTED, off
            if not self.format_set and rl != R_FDE:
                self.reason = "no Format_description_event first"
                return ST_UNSUPPORTED, off
            if size < minsize:
                self.reason = "event too small"
                return ST_UNSUPPORTED, off
            if self.tcount[tc] == 0:
                self.seen_order[self.norder] = tc
                self.norder += 1
            self.tcount[tc] += 1
            self.tbytes[tc] += size
            self.cur_tc = tc
            _walked += 1
            ts = _rd32(e + H_TIMESTAMP)
            sid = _rd32(e + H_SERVER_ID)
            if rl == R_FDE:
                # the FDE's CRC rule (in-use flag) belongs to the driver's reader code
                self.pending_role = rl
                self.pending_end = off + size
                return ST_PYTHON, off
            body_end = size
            if self.crc_on:
                body_end = size - CHECKSUM_LEN
                if self.verify:
                    stored = _rd32(e + body_end)
                    if crc32_buf(e, body_end) != stored:
                        self.reason = "CRC32 mismatch"
                        self._uncount(tc, size)
                        return ST_UNSUPPORTED, off
            d = e + HEADER_LEN
            n = body_end - HEADER_LEN
            if rl == R_PYTHON or rl == R_GTID_PY or self.defer[tc]:
                self.pending_role = R_GTID_PY if self.defer[tc] else rl
                self.pending_end = off + size
                return ST_PYTHON, off
            if rl == R_IGNORED:
                off += size
                continue
            if rl == R_GTID or rl == R_MARIA_GTID:
                self._open_group(pos, ts, sid, True)
                self._add(pos, size, ts)
                if rl == R_GTID:
                    ok = self._mysql_gtid(d, n, g)
                    if ok:
                        g[F_GTID_KIND] = GTID_MYSQL
                else:
                    ok = self._maria_gtid(d, n, g)
                    if ok:
                        g[F_GTID_KIND] = GTID_MARIA
                        self.g_state = S_STANDALONE if g[F_MFLAGS] & 0x01 else S_OPEN
                if not ok:
                    # a layout for the general decoder: the driver re-opens the group
                    self.g_open = False
                    self.pending_role = R_GTID_PY
                    self.pending_end = off + size
                    return ST_PYTHON, off
                off += size
                continue
            if not self.g_open:
                self._open_group(pos, ts, sid, False)
            if rl == R_TABLE_MAP:
                if not self._table_map(d, n):
                    self.reason = "Table_map body outside the fast layout"
                    self._uncount(tc, size)
                    return ST_UNSUPPORTED, off
                self._add(pos, size, ts)
                if self.tm_hook is not None:
                    self._tm_seen(d, n)
                self._capture(tc, pos, d, n)
                off += size
                continue
            if rl == R_ROWS:
                self._add(pos, size, ts)
                tid = <int64_t>_rdn(d + ROWS_TABLE_ID, 6) if size >= HEADER_LEN + 6 else -1
                self._rows_event(tid)
                if self.row_hook is not None:
                    self._count_rows(tc, d, n, tid)
                self._capture(tc, pos, d, n)
                off += size
                continue
            if rl == R_QUERY:
                if n < Q_POST_HEADER:
                    self.reason = "short Query"
                    self._uncount(tc, size)
                    return ST_UNSUPPORTED, off
                status_len = d[Q_STATUS_LEN] | (d[Q_STATUS_LEN + 1] << 8)
                db_end = Q_POST_HEADER + status_len + d[Q_DB_LEN]
                if db_end >= n or d[db_end] != 0:
                    self.reason = "Query body outside the fast layout"
                    self._uncount(tc, size)
                    return ST_UNSUPPORTED, off
                self._add(pos, size, ts)
                thread_id = _rd32(d + Q_THREAD_ID)
                if not g[F_FLAGS] & HAS_THREAD:
                    g[F_THREAD] = thread_id
                    g[F_FLAGS] |= HAS_THREAD
                qs = db_end + 1
                qlen = n - qs
                if qlen >= 5 and memcmp(d + qs, b"BEGIN", 5) == 0:
                    what = 0
                elif qlen >= 6 and memcmp(d + qs, b"COMMIT", 6) == 0:
                    what = 1
                else:
                    what = self.classes[self.classify(
                        PyBytes_FromStringAndSize(<const char*>d + qs, qlen if qlen < 24 else 24))]
                off += size
                if what == 0:
                    self.g_state = S_OPEN
                elif what == 1:
                    if (self.g_has_gtid and self.g_state == S_OPEN
                            and g[F_COUNT] == (2 if g[F_FLAGS] & HAS_MARIA else 3)):
                        # GTID, BEGIN, COMMIT (MariaDB: GTID, COMMIT): transactions.py's
                        # empty transaction
                        g[F_KIND] = K_EMPTY
                    self._emit(False)
                elif what == 2 or what == 3:
                    g[F_KIND] = K_ROLLBACK if what == 2 else K_XA_ROLLBACK
                    self._emit(False)
                elif self.g_state != S_OPEN:
                    g[F_KIND] = K_XA_COMMIT if what == 4 else K_DDL
                    self._emit(False)
                elif _is_atomic_ctas(d + qs, qlen):
                    g[F_KIND] = K_DDL       # 8.0.21+ CREATE TABLE ... SELECT (transactions.is_atomic_ctas)
                continue
            self._add(pos, size, ts)
            off += size
            if rl == R_END:
                self._emit(False)
            elif rl == R_XA_PREPARE:
                g[F_KIND] = K_XA_PREPARE
                self._emit(False)
            elif rl == R_INCIDENT:
                g[F_KIND] = K_INCIDENT
                self._emit(False)
            elif rl == R_PLAIN:
                if self.g_state == S_START and not self.g_has_gtid:
                    self.g_state = S_OPEN


cdef inline bint _space(uint8_t c) noexcept:
    return c == 32 or (9 <= c <= 13)         # bytes.strip()'s ASCII whitespace


cdef inline uint8_t _upper(uint8_t c) noexcept:
    return c - 32 if 97 <= c <= 122 else c


cdef bint _is_atomic_ctas(const uint8_t* q, Py_ssize_t n) noexcept:
    """``transactions.is_atomic_ctas`` on the query bytes: ``CREATE`` within the first 32
    bytes (after leading whitespace) and ``START TRANSACTION`` at the end (case-insensitive)."""
    cdef const char* head = b"CREATE"
    cdef const char* tail = b"START TRANSACTION"
    cdef Py_ssize_t lim = n if n < 32 else 32
    cdef Py_ssize_t i = 0, e = n, j
    while i < lim and _space(q[i]):
        i += 1
    if i + 6 > lim:
        return False
    for j in range(6):
        if _upper(q[i + j]) != <uint8_t>head[j]:
            return False
    while e > 0 and _space(q[e - 1]):
        e -= 1
    if e < 17:
        return False
    for j in range(17):
        if _upper(q[e - 17 + j]) != <uint8_t>tail[j]:
            return False
    return True


cdef Py_ssize_t _packed(const uint8_t* d, Py_ssize_t n, Py_ssize_t p, uint64_t* out) noexcept:
    """A packed integer at ``p`` as fastdecode._packed reads it; -1 when it does not fit."""
    if p >= n:
        return -1
    cdef int first = d[p]
    cdef int width
    if first < 251:
        out[0] = first
        return p + 1
    width = 2 if first == 252 else 3 if first == 253 else 8 if first == 254 else 0
    if width == 0 or p + 1 + width > n:
        return -1
    out[0] = _rdn(d + p + 1, width)
    return p + 1 + width


ROLES = dict(UNSUPPORTED=R_UNSUPPORTED, PYTHON=R_PYTHON, IGNORED=R_IGNORED, GTID=R_GTID,
             GTID_PY=R_GTID_PY, MARIA_GTID=R_MARIA_GTID, QUERY=R_QUERY, TABLE_MAP=R_TABLE_MAP,
             ROWS=R_ROWS, END=R_END, XA_PREPARE=R_XA_PREPARE, INCIDENT=R_INCIDENT,
             PLAIN_NOOPEN=R_PLAIN_NOOPEN, PLAIN=R_PLAIN, FDE=R_FDE)
STATES = dict(START=S_START, OPEN=S_OPEN, STANDALONE=S_STANDALONE)


# ======================================================================================
# ---- write sets (``dump --writesets``, ``certify``): the groups with their row events ----
# Driven by repltool.binlog.corescan.scan_writeset_groups. The grouping is Scanner's
# (one grouper); this subclass keeps, per emitted transaction, the bodies of its
# Table_map and Rows events and the MySQL GTID's flags byte.

cdef class GroupCapture(Scanner):
    """A :class:`Scanner` that hands back each transaction's Table_map and Rows events.

    :meth:`take_groups` returns, for every record :meth:`Scanner.take` returned (same
    order), ``(events, gtid_flags)``: ``events`` a list of ``(type code, file offset,
    body bytes, file index)`` (the body without header and checksum), ``gtid_flags`` the first
    byte of a GTID body this module decoded, else -1.
    """

    cdef list groups
    cdef list cur
    cdef int64_t gflags

    def __init__(self, bytes roles, classify, dict classes):
        Scanner.__init__(self, roles, classify, classes)
        self.groups = []
        self.cur = []
        self.gflags = -1

    def take_groups(self):
        out = self.groups
        self.groups = []
        return out

    cdef int _capture(self, int tc, int64_t pos, const uint8_t* d, Py_ssize_t n) except -1:
        self.cur.append((tc, pos, PyBytes_FromStringAndSize(<const char*>d, n), self.file_idx))
        return 0

    cdef int _open_group(self, int64_t start, uint32_t ts, uint32_t server_id,
                         bint has_gtid) except -1:
        Scanner._open_group(self, start, ts, server_id, has_gtid)
        self.gflags = -1
        return 0

    cdef int _mysql_gtid(self, const uint8_t* d, Py_ssize_t n, int64_t* g) except -1:
        cdef int ok = Scanner._mysql_gtid(self, d, n, g)
        if ok and n > 0:
            self.gflags = d[0]
        return ok

    cdef int _emit(self, bint truncated) except -1:
        self.groups.append((self.cur, self.gflags))
        self.cur = []
        self.gflags = -1
        return Scanner._emit(self, truncated)


# ---- row images -> the stored bytes of a few columns (the key columns of a write set) ----
# An image program says, per column present in the image (``repltool.binlog.rowwalk.
# column_layout`` of each, in order), how to step over it and into which slot its
# stored bytes go (-1: skipped).  ``walk_rows`` walks every row of a Rows event body
# with one program per image (before, then after for an UPDATE) and returns the slots:
# the exact bytes the general decoder (repltool.binlog.rows) reads for those columns.
# Whatever the decoder would reject raises (IndexError for bytes past the end, ValueError
# for content), and the caller takes the general route.

cdef enum:
    W_FIXED = 0            # a: width
    W_LEN = 1              # a: bytes of the little-endian length prefix (1-4)
    W_DECIMAL = 2          # a: size; groups in the program's decimal table
    W_TEMPORAL = 3         # a: size, b: head bytes, c: fraction bytes, d: sign checked
    W_CALL = 4             # the column's own decoder (Python), calls[k]

cdef int64_t _FRAC_MAX[4]
_FRAC_MAX[0] = 0
_FRAC_MAX[1] = 99
_FRAC_MAX[2] = 9999
_FRAC_MAX[3] = 999999


cdef class ImageProgram:
    """How to walk one row image layout: built from ``(kind, slot, args, decoder)`` per
    present column (see :func:`repltool.binlog.rowwalk.image_program`)."""

    cdef int64_t* cols        # 6 per column: kind, slot, a, b, c, d
    cdef Py_ssize_t ncols
    cdef int64_t* groups      # decimal groups: (nbytes, limit) pairs, b = first, c = count
    cdef list calls
    cdef public Py_ssize_t nslots

    def __cinit__(self):
        self.cols = NULL
        self.groups = NULL

    def __dealloc__(self):
        free(self.cols)
        free(self.groups)

    def __init__(self, list columns, Py_ssize_t nslots):
        cdef Py_ssize_t k, j, ng = 0
        cdef int64_t* c
        self.ncols = len(columns)
        self.nslots = nslots
        self.calls = []
        for col in columns:
            if col[0] == W_DECIMAL:
                ng += len(col[2][1])
        self.cols = <int64_t*>calloc(self.ncols * 6 + 1, sizeof(int64_t))
        self.groups = <int64_t*>calloc(ng * 2 + 1, sizeof(int64_t))
        if self.cols is NULL or self.groups is NULL:
            raise MemoryError()
        ng = 0
        for k, col in enumerate(columns):
            kind, slot, args, dec = col
            c = self.cols + k * 6
            c[0] = kind
            c[1] = slot
            self.calls.append(dec)
            if kind == W_FIXED or kind == W_LEN:
                c[2] = args
            elif kind == W_DECIMAL:
                c[2] = args[0]
                c[3] = ng
                c[4] = len(args[1])
                for nbytes, limit in args[1]:
                    self.groups[ng * 2] = nbytes
                    self.groups[ng * 2 + 1] = limit
                    ng += 1
            elif kind == W_TEMPORAL:
                c[2], c[3], c[4], c[5] = args[0], args[1], args[2], 1 if args[3] else 0
            elif kind != W_CALL:
                raise ValueError(f"column program kind {kind}")

    cdef Py_ssize_t walk(self, object data, const uint8_t* d, Py_ssize_t n, Py_ssize_t p,
                         list slots) except -1:
        """One image at ``p``: fills ``slots`` (None: NULL), returns the offset after it."""
        cdef Py_ssize_t k
        cdef Py_ssize_t small[32]
        cdef Py_ssize_t* at = &small[0]
        if self.nslots > 16:
            at = <Py_ssize_t*>malloc(2 * self.nslots * sizeof(Py_ssize_t))
        if at is NULL:
            raise MemoryError()
        try:
            p = self.span(data, d, n, p, at)
            for k in range(self.nslots):
                slots[k] = None if at[2 * k] < 0 else \
                    PyBytes_FromStringAndSize(<const char*>d + at[2 * k], at[2 * k + 1] - at[2 * k])
        finally:
            if at is not &small[0]:
                free(at)
        return p

    cdef Py_ssize_t span(self, object data, const uint8_t* d, Py_ssize_t n, Py_ssize_t p,
                         Py_ssize_t* spans) except -1:
        """One image at ``p``: ``spans[2k], spans[2k+1]`` the start and end of slot ``k``'s
        stored bytes (start -1: NULL or absent); returns the offset after the image."""
        cdef Py_ssize_t nb = (self.ncols + 7) >> 3
        cdef Py_ssize_t bm = p, k, q, j, g, gi, at
        cdef int64_t* c
        cdef int64_t kind, width
        cdef uint64_t v
        cdef int b
        cdef bint neg
        if p + nb > n:
            raise IndexError("row image past the end")
        p += nb
        for k in range(self.nslots):
            spans[2 * k] = -1
        for k in range(self.ncols):
            if d[bm + (k >> 3)] >> (k & 7) & 1:
                continue                    # NULL
            c = self.cols + k * 6
            kind = c[0]
            if kind == W_FIXED:
                q = p + c[2]
            elif kind == W_LEN:
                width = c[2]
                if p + width > n:
                    raise IndexError("length past the end")
                q = p + width + <Py_ssize_t>_rdn(d + p, <int>width)
            elif kind == W_DECIMAL:
                q = p + c[2]
                if q > n:
                    raise IndexError("decimal past the end")
                neg = not (d[p] & 0x80)
                at = p
                for gi in range(c[3], c[3] + c[4]):
                    v = 0
                    for j in range(self.groups[gi * 2]):
                        b = d[at]
                        if at == p:
                            b ^= 0x80
                        if neg:
                            b ^= 0xFF
                        v = (v << 8) | <uint64_t>b
                        at += 1
                    if v >= <uint64_t>self.groups[gi * 2 + 1]:
                        raise ValueError("decimal digit group out of range")
            elif kind == W_TEMPORAL:
                q = p + c[2]
                if q > n:
                    raise IndexError("temporal past the end")
                if c[5] and d[p] < 128:
                    raise ValueError("negative DATETIME2")
                if c[4] and <int64_t>_rdn_be(d + p + c[3], <int>c[4]) > _FRAC_MAX[c[4]]:
                    raise ValueError("fraction out of range")
            else:
                q = self.calls[k](data, p)[1]
            if q > n:
                raise IndexError("column past the end")
            if c[1] >= 0:
                spans[2 * c[1]] = p
                spans[2 * c[1] + 1] = q
            p = q
        return p


cdef inline uint64_t _rdn_be(const uint8_t* p, int n) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(n):
        v = (v << 8) | p[i]
    return v


def walk_rows(bytes data, Py_ssize_t start, ImageProgram first, ImageProgram second=None):
    """Every row of a Rows body from ``start`` to its end: a list with, per row, a tuple of
    ``first``'s slots, then (``second`` given: an UPDATE's after image) one of ``second``'s."""
    cdef const uint8_t* d = <const uint8_t*>(<const char*>data)
    cdef Py_ssize_t n = len(data), p = start
    cdef list out = []
    cdef list s1 = [None] * first.nslots
    cdef list s2 = [None] * second.nslots if second is not None else None
    while p < n:
        p = first.walk(data, d, n, p, s1)
        out.append(tuple(s1))
        if second is not None:
            p = second.walk(data, d, n, p, s2)
            out.append(tuple(s2))
    if p > n:
        raise IndexError("row image past the end")
    return out


# ---- write-set key entries of integer key parts (``repltool.writeset.fastkeys``) ----
# The key string is ``prefix + sort key + tail`` (tail: ``½width``); the sort key of an
# integer is its stored little-endian bytes reversed, the first XOR ``top`` (0x80: signed
# sort key).  Its hash is XXH64 with seed 0 (MySQL's HASH_ALGORITHM_XXHASH64), checked
# against the ``xxhash`` package by tests/binlog/test_core.py.

cdef uint64_t _P1 = 0x9E3779B185EBCA87ULL
cdef uint64_t _P2 = 0xC2B2AE3D27D4EB4FULL
cdef uint64_t _P3 = 0x165667B19E3779F9ULL
cdef uint64_t _P4 = 0x85EBCA77C2B2AE63ULL
cdef uint64_t _P5 = 0x27D4EB2F165667C5ULL


cdef inline uint64_t _rotl(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t _rd64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v
    memcpy(&v, p, 8)        # little-endian host (x86-64, aarch64)
    return v


cdef inline uint64_t _xround(uint64_t acc, uint64_t x) noexcept nogil:
    acc += x * _P2
    return _rotl(acc, 31) * _P1


cdef inline uint64_t _xmerge(uint64_t h, uint64_t v) noexcept nogil:
    h ^= _xround(0, v)
    return h * _P1 + _P4


cdef uint64_t _xxh64(const uint8_t* p, size_t n) noexcept nogil:
    cdef const uint8_t* end = p + n
    cdef uint64_t h, v1, v2, v3, v4
    cdef uint32_t k32
    if n >= 32:
        v1 = _P1 + _P2
        v2 = _P2
        v3 = 0
        v4 = 0 - _P1
        while p + 32 <= end:
            v1 = _xround(v1, _rd64(p))
            v2 = _xround(v2, _rd64(p + 8))
            v3 = _xround(v3, _rd64(p + 16))
            v4 = _xround(v4, _rd64(p + 24))
            p += 32
        h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        h = _xmerge(h, v1)
        h = _xmerge(h, v2)
        h = _xmerge(h, v3)
        h = _xmerge(h, v4)
    else:
        h = _P5
    h += <uint64_t>n
    while p + 8 <= end:
        h ^= _xround(0, _rd64(p))
        h = _rotl(h, 27) * _P1 + _P4
        p += 8
    if p + 4 <= end:
        memcpy(&k32, p, 4)
        h ^= <uint64_t>k32 * _P1
        h = _rotl(h, 23) * _P2 + _P3
        p += 4
    while p < end:
        h ^= <uint64_t>p[0] * _P5
        h = _rotl(h, 11) * _P1
        p += 1
    h ^= h >> 33
    h *= _P2
    h ^= h >> 29
    h *= _P3
    h ^= h >> 32
    return h


def xxh64(const uint8_t[::1] data):
    """XXH64 (seed 0) of ``data``."""
    return _xxh64(&data[0] if data.shape[0] else NULL, data.shape[0])


cdef int _int_key(const uint8_t* r, Py_ssize_t rlen, int width, bint signed, int top,
                  bytes prefix, bytes tail, int64_t* value, uint64_t* hash, uint8_t* buf,
                  Py_ssize_t* size) except -1:
    cdef Py_ssize_t np = len(prefix), nt = len(tail), n, k
    cdef uint64_t u = 0
    if rlen != width or width < 1 or width > 8:
        raise ValueError("short integer")
    n = np + width + nt
    if n > 512:
        raise ValueError("key string too long")
    memcpy(buf, <const char*>prefix, np)
    for k in range(width):
        buf[np + k] = r[width - 1 - k]
        u = (u << 8) | r[width - 1 - k]
    buf[np] ^= <uint8_t>top
    memcpy(buf + np + width, <const char*>tail, nt)
    if signed and width < 8 and u >> (8 * width - 1):
        value[0] = <int64_t>u - (<int64_t>1 << (8 * width))
    else:
        value[0] = <int64_t>u
    hash[0] = _xxh64(buf, n)
    size[0] = n
    return 0


def int_key(bytes raw, int width, bint signed, int top, bytes prefix, bytes tail):
    """``(value, key string, XXH64)`` of an integer key part stored as ``raw``
    (``width`` bytes, little-endian)."""
    cdef uint8_t buf[512]
    cdef int64_t v
    cdef uint64_t h
    cdef Py_ssize_t n
    _int_key(<const uint8_t*>(<const char*>raw), len(raw), width, signed, top, prefix, tail,
             &v, &h, buf, &n)
    if not signed and width == 8:
        return <uint64_t>v, PyBytes_FromStringAndSize(<const char*>buf, n), h
    return v, PyBytes_FromStringAndSize(<const char*>buf, n), h


def int_key_text(bytes raw, int width, bint signed, int top, bytes prefix, bytes tail,
                 str head, str end):
    """The JSON text ``head + value + '], "hash": ' + XXH64 + end`` of :func:`int_key`."""
    cdef uint8_t buf[512]
    cdef int64_t v
    cdef uint64_t h
    cdef Py_ssize_t n
    _int_key(<const uint8_t*>(<const char*>raw), len(raw), width, signed, top, prefix, tail,
             &v, &h, buf, &n)
    if not signed and width == 8:
        return f'{head}{<uint64_t>v}], "hash": {h}{end}'
    return f'{head}{v}], "hash": {h}{end}'


def join_ascii_weights(bytes data, list levels):
    """The weight string of ASCII ``data`` under a UCA 9.0.0 collation, before its buffer's
    cut: per level (``levels[level]``: the weights of the 128 ASCII bytes) the weights
    of every byte, levels apart by ``00 00`` (``repltool.writeset.collation._uca900``)."""
    cdef const uint8_t* d = <const uint8_t*>(<const char*>data)
    cdef Py_ssize_t n = len(data), nl = len(levels), total, k, at = 0, lv
    cdef list asc
    cdef bytes w, out
    cdef char* o
    total = 2 * (nl - 1) if nl else 0
    for lv in range(nl):
        asc = levels[lv]
        if len(asc) != 128:
            raise ValueError("an ASCII weight table has 128 entries")
        for k in range(n):
            if d[k] >= 128:
                raise ValueError("not ASCII")
            w = asc[d[k]]
            total += len(w)
    out = PyBytes_FromStringAndSize(NULL, total)
    o = <char*>out
    for lv in range(nl):
        if lv:
            o[at] = 0
            o[at + 1] = 0
            at += 2
        asc = levels[lv]
        for k in range(n):
            w = asc[d[k]]
            memcpy(o + at, <const char*>w, len(w))
            at += len(w)
    return out


include "_textcore.pxi"
include "_wsdispatch.pxi"
include "_wstext.pxi"

# ---- certification (the source-side trackers) ----
include "_certcore.pxi"
include "_grcore.pxi"

# ---- re-tagging (rewrite_log) ----
include "_retagcore.pxi"
