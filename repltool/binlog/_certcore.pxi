# Included from _core.pyx (its cimports and directives apply).
#
# The source-side dependency trackers of MySQL's sql/rpl_trx_tracking.cc, per
# transaction, with their state in C: ``Commit_order_trx_dependency_tracker``
# (the commit-order parent), ``Writeset_trx_dependency_tracker::get_dependency``
# (hash -> last sequence_number history, history_size rule, clearing, MySQL's
# write-set limit), ``Writeset_session_trx_dependency_tracker`` (session map), and
# repltool's recorded-clock guard (``repltool.certify.dependency.LastWriters``).
#
# The reference is the Python implementation (repltool.certify.trackers and
# repltool.certify.dependency.TransactionDependencyTracker): this class computes the
# same values, rule for rule; ``tests/certify/test_certcore.py`` compares both on
# generated transaction sequences (history overflow, write-set limit, barriers,
# sessions, logged clocks) and whole certify outputs on the corpus.  The driver
# (repltool.certify.coretrack) turns the codes this returns into CertResult values.

from libc.stdint cimport int32_t
from libc.string cimport memmove
cdef void* _grow_buf(void* p, size_t size) except NULL:
    cdef void* q = realloc(p, size)
    if q == NULL:
        raise MemoryError()
    return q


# reasons, in the order of repltool.certify.model.Reason (checked by the tests
# through cert_reason_names())
cdef enum:
    CR_KEY = 0
    CR_NO_KEY = 1
    CR_DDL = 2
    CR_EMPTY = 3
    CR_HISTORY_RESET = 4
    CR_HISTORY_FULL = 5
    CR_GC_WINDOW = 6
    CR_SESSION = 7
    CR_VIEW_CHANGE = 8
    CR_FILE_START = 9
    CR_COMMIT_ORDER = 10
    CR_FK_PARENT = 11

_CERT_REASON_NAMES = ("key", "no-key", "ddl", "empty", "history-reset", "history-full",
                      "gc-window", "session", "view-change", "file-start", "commit-order",
                      "fk-parent")


def cert_reason_names():
    """The reason values of the codes :class:`SourceTracker` returns, by code."""
    return _CERT_REASON_NAMES


# transaction flags (the driver sets them from CertTransaction)
cdef enum:
    CF_DDL = 1          # ddl or ctas
    CF_FK_PARENT = 2
    CF_LIMIT = 4        # write_set_limit_reached
    CF_UNKNOWN = 8      # keys_unknown
    CF_MISSING = 16     # missing_keys
    CF_EMPTY = 32

# detail codes (the driver's texts, repltool.certify.coretrack)
cdef enum:
    CD_NONE = 0
    CD_SERIAL = 1
    CD_NO_CLOCK = 2
    CD_CLAMPED = 3
    CD_NO_KEY = 4
    CD_KEY = 5
    CD_FILE_START = 6
    CD_HISTORY_START = 7
    CD_KEYS_UNKNOWN = 8
    CD_NO_WRITESET = 9
    CD_SESSION = 10
    CD_RAISED = 11

cdef enum:
    CC_REMAP = 4096     # repltool.certify.trackers.REMAP_WINDOW


cdef inline uint64_t _mix64(uint64_t x) noexcept nogil:
    # splitmix64's finaliser: slot index of a key (hashes are XXH64, but a library
    # caller may hand small integers)
    x ^= x >> 30
    x *= <uint64_t>0xbf58476d1ce4e5b9
    x ^= x >> 27
    x *= <uint64_t>0x94d049bb133111eb
    x ^= x >> 31
    return x


cdef struct HSlot:
    uint64_t key
    int64_t val
    uint32_t gen


cdef class _History:
    """``m_writeset_history``: hash -> sequence number; cleared in O(1) (generations)."""

    cdef HSlot* slots
    cdef Py_ssize_t cap
    cdef Py_ssize_t count
    cdef uint32_t gen

    def __cinit__(self):
        self.cap = 1024
        self.slots = <HSlot*>calloc(self.cap, sizeof(HSlot))
        if self.slots == NULL:
            raise MemoryError()
        self.count = 0
        self.gen = 1

    def __dealloc__(self):
        free(self.slots)

    cdef void clear(self) noexcept:
        self.count = 0
        self.gen += 1
        if self.gen == 0:
            memset(self.slots, 0, self.cap * sizeof(HSlot))
            self.gen = 1

    cdef HSlot* find(self, uint64_t key) noexcept:
        """The slot holding ``key``, or the empty slot where it would go."""
        cdef Py_ssize_t mask = self.cap - 1
        cdef Py_ssize_t i = <Py_ssize_t>(_mix64(key) & <uint64_t>mask)
        cdef HSlot* s
        while True:
            s = &self.slots[i]
            if s.gen != self.gen or s.key == key:
                return s
            i = (i + 1) & mask

    cdef int grow(self) except -1:
        cdef Py_ssize_t old_cap = self.cap, i, j, mask
        cdef HSlot* old = self.slots
        cdef HSlot* fresh = <HSlot*>calloc(old_cap * 2, sizeof(HSlot))
        if fresh == NULL:
            raise MemoryError()
        self.slots = fresh
        self.cap = old_cap * 2
        mask = self.cap - 1
        for i in range(old_cap):
            if old[i].gen == self.gen:
                j = <Py_ssize_t>(_mix64(old[i].key) & <uint64_t>mask)
                while fresh[j].gen == self.gen:
                    j = (j + 1) & mask
                fresh[j] = old[i]
        free(old)
        return 0


cdef class _LastWriters:
    """``repltool.certify.dependency.LastWriters`` in C: hash -> last writer's sequence
    number, ordered by last write (an OrderedDict's pop and re-insert = move to the
    end), the oldest forgotten past ``limit``, ``floor`` the newest forgotten value."""

    cdef int32_t* table        # node index + 1, 0: empty (linear probing)
    cdef Py_ssize_t cap
    cdef uint64_t* nkey
    cdef int64_t* nval
    cdef int32_t* nprev
    cdef int32_t* nnext
    cdef Py_ssize_t ncap       # nodes allocated
    cdef Py_ssize_t nused      # nodes ever handed out (below ncap)
    cdef int32_t free_head     # freed nodes, chained through nnext; -1: none
    cdef int32_t head, tail    # oldest, newest; -1: none
    cdef Py_ssize_t size
    cdef Py_ssize_t limit
    cdef public int64_t floor

    def __cinit__(self, Py_ssize_t limit):
        self.limit = limit
        self.cap = 1024
        self.table = <int32_t*>calloc(self.cap, sizeof(int32_t))
        self.ncap = 512
        self.nkey = <uint64_t*>malloc(self.ncap * sizeof(uint64_t))
        self.nval = <int64_t*>malloc(self.ncap * sizeof(int64_t))
        self.nprev = <int32_t*>malloc(self.ncap * sizeof(int32_t))
        self.nnext = <int32_t*>malloc(self.ncap * sizeof(int32_t))
        if self.table == NULL or self.nkey == NULL or self.nval == NULL \
                or self.nprev == NULL or self.nnext == NULL:
            raise MemoryError()
        self.reset()

    def __dealloc__(self):
        free(self.table)
        free(self.nkey)
        free(self.nval)
        free(self.nprev)
        free(self.nnext)

    cdef void reset(self) noexcept:
        memset(self.table, 0, self.cap * sizeof(int32_t))
        self.nused = 0
        self.free_head = -1
        self.head = self.tail = -1
        self.size = 0
        self.floor = 0

    cdef Py_ssize_t slot_of(self, uint64_t key) noexcept:
        """The table slot of ``key``, or of the empty slot where it would go."""
        cdef Py_ssize_t mask = self.cap - 1
        cdef Py_ssize_t i = <Py_ssize_t>(_mix64(key) & <uint64_t>mask)
        cdef int32_t t
        while True:
            t = self.table[i]
            if t == 0 or self.nkey[t - 1] == key:
                return i
            i = (i + 1) & mask

    cdef void remove_slot(self, Py_ssize_t i) noexcept:
        """Empty slot ``i`` and shift the entries after it back (no tombstones)."""
        cdef Py_ssize_t mask = self.cap - 1, j = i, home
        cdef int32_t t
        while True:
            j = (j + 1) & mask
            t = self.table[j]
            if t == 0:
                break
            home = <Py_ssize_t>(_mix64(self.nkey[t - 1]) & <uint64_t>mask)
            # move t into the hole at i unless its home lies cyclically in (i, j]
            if (j > i and (home <= i or home > j)) or (j < i and (home <= i and home > j)):
                self.table[i] = t
                i = j
        self.table[i] = 0

    cdef int grow_table(self) except -1:
        cdef Py_ssize_t cap = self.cap * 2, mask = cap - 1, j
        cdef int32_t n
        cdef int32_t* fresh = <int32_t*>calloc(cap, sizeof(int32_t))
        if fresh == NULL:
            raise MemoryError()
        free(self.table)
        self.table = fresh
        self.cap = cap
        n = self.head
        while n != -1:
            j = <Py_ssize_t>(_mix64(self.nkey[n]) & <uint64_t>mask)
            while fresh[j] != 0:
                j = (j + 1) & mask
            fresh[j] = n + 1
            n = self.nnext[n]
        return 0

    cdef int32_t new_node(self) except -2:
        cdef int32_t n
        cdef Py_ssize_t c
        if self.free_head != -1:
            n = self.free_head
            self.free_head = self.nnext[n]
            return n
        if self.nused == self.ncap:
            c = self.ncap * 2
            if c > 0x7FFFFFF0:
                raise MemoryError()
            self.nkey = <uint64_t*>_grow_buf(self.nkey, c * sizeof(uint64_t))
            self.nval = <int64_t*>_grow_buf(self.nval, c * sizeof(int64_t))
            self.nprev = <int32_t*>_grow_buf(self.nprev, c * sizeof(int32_t))
            self.nnext = <int32_t*>_grow_buf(self.nnext, c * sizeof(int32_t))
            self.ncap = c
        n = <int32_t>self.nused
        self.nused += 1
        return n

    cdef inline void unlink(self, int32_t n) noexcept:
        cdef int32_t p = self.nprev[n], q = self.nnext[n]
        if p != -1:
            self.nnext[p] = q
        else:
            self.head = q
        if q != -1:
            self.nprev[q] = p
        else:
            self.tail = p

    cdef inline void append(self, int32_t n) noexcept:
        self.nprev[n] = self.tail
        self.nnext[n] = -1
        if self.tail != -1:
            self.nnext[self.tail] = n
        else:
            self.head = n
        self.tail = n

    cdef int64_t put(self, uint64_t key, int64_t value) except -2:
        """``seen = last.pop(key, 0); last[key] = value``: returns ``seen``."""
        cdef Py_ssize_t i = self.slot_of(key)
        cdef int32_t t = self.table[i], n
        cdef int64_t seen
        if t != 0:
            n = t - 1
            seen = self.nval[n]
            self.unlink(n)
            self.nval[n] = value
            self.append(n)
            return seen
        # load at most one half: a full guard (limit 2^18) with the keys a write set
        # puts past the limit before trim() keeps 2^20 slots (4 MiB); holding it at 2^19
        # (load up to 1/2 + the write set) cost MariaDB's certify 7% more CPU in the
        # longer probes and back-shifts (bench/results/rssflat.md)
        if (self.size + 1) * 2 > self.cap:
            self.grow_table()
            i = self.slot_of(key)
        n = self.new_node()
        self.nkey[n] = key
        self.nval[n] = value
        self.append(n)
        self.table[i] = n + 1
        self.size += 1
        return 0

    cdef void trim(self) noexcept:
        cdef int32_t n
        while self.size > self.limit:
            n = self.head
            if self.nval[n] > self.floor:
                self.floor = self.nval[n]
            self.remove_slot(self.slot_of(self.nkey[n]))
            self.unlink(n)
            self.nnext[n] = self.free_head
            self.free_head = n
            self.size -= 1



cdef class SourceTracker:
    """``Transaction_dependency_tracker`` for the commit-order, writeset and
    writeset-session modes, one transaction per :meth:`step` (see the file comment).

    :param mode: 0 commit-order, 1 writeset, 2 writeset-session.
    :param serial: ``Baseline.SERIAL`` (else the recorded baseline).
    :param history_size: ``binlog_transaction_dependency_history_size``.
    :param reset_sessions_on_rotate: forget the session map at :meth:`rotate`.
    :param guard_limit: the recorded-clock guard's key bound (``LastWriters``);
        0: no guard (commit-order mode, serial baseline).
    """

    cdef bint writeset, session, serial, reset_sessions, identity
    cdef int64_t history_size, history_start
    cdef int start_reason
    cdef int64_t ring_rec[CC_REMAP]
    cdef int64_t ring_pos[CC_REMAP]
    cdef Py_ssize_t ring_next, ring_len
    cdef _History history
    cdef _LastWriters guard
    cdef dict sessions
    cdef uint64_t* buf
    cdef Py_ssize_t buf_cap
    cdef public Py_ssize_t steps

    def __cinit__(self):
        self.buf_cap = 256
        self.buf = <uint64_t*>malloc(self.buf_cap * sizeof(uint64_t))
        if self.buf == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.buf)

    def __init__(self, int mode, bint serial, int64_t history_size,
                 bint reset_sessions_on_rotate, Py_ssize_t guard_limit):
        if not 0 <= mode <= 2 or history_size < 1:
            raise ValueError("mode 0..2 and history_size >= 1")
        self.writeset = mode >= 1
        self.session = mode == 2
        self.serial = serial
        self.history_size = history_size
        self.reset_sessions = reset_sessions_on_rotate
        self.history = _History()
        self.guard = _LastWriters(guard_limit) if guard_limit > 0 else None
        self.sessions = {}
        self.steps = 0
        self.rotate()

    @property
    def guard_table(self):
        """``(keys held, table slots)`` of the recorded-clock guard, ``(0, 0)`` without
        one (its memory: 24 bytes a key, 4 a slot; the tests check the bound)."""
        if self.guard is None:
            return (0, 0)
        return (self.guard.size, self.guard.cap)

    def rotate(self):
        """A new clock segment: every tracker resets (``MYSQL_BIN_LOG::open_binlog``)."""
        self.identity = True
        self.ring_next = self.ring_len = 0
        self.history_start = 1
        self.history.clear()
        self.start_reason = CR_FILE_START
        if self.reset_sessions:
            self.sessions.clear()
        if self.guard is not None:
            self.guard.reset()

    def live_sequence_numbers(self):
        """The sequence numbers the writeset history and the session map may still
        report as parents (``WritesetTracker``'s and ``WritesetSessionTracker``'s)."""
        cdef set live = set()
        cdef Py_ssize_t i
        cdef _History h = self.history
        if self.writeset:
            for i in range(h.cap):
                if h.slots[i].gen == h.gen:
                    live.add(h.slots[i].val)
            live.add(self.history_start)
        if self.session:
            live.update(self.sessions.values())
        return live

    cdef Py_ssize_t load(self, object hashes) except -1:
        """Copy the write set into ``buf`` (nothing is changed if it is not uint64s)."""
        cdef Py_ssize_t n = len(hashes), i = 0
        cdef uint64_t v
        if n > self.buf_cap:
            self.buf = <uint64_t*>_grow_buf(self.buf, n * sizeof(uint64_t))
            self.buf_cap = n
        if type(hashes) is tuple:
            for i in range(n):
                h = <object>(<tuple>hashes)[i]
                if type(h) is not int:
                    raise TypeError("write-set hash is not an int")
                self.buf[i] = <uint64_t>h
        else:
            for h in hashes:
                if i >= n:
                    raise ValueError("write set changed while read")
                self.buf[i] = <uint64_t>h
                i += 1
            if i != n:
                raise ValueError("write set changed while read")
        return n

    cdef int64_t remap(self, int64_t rec_lc) noexcept:
        cdef Py_ssize_t k, j
        for k in range(self.ring_len):
            j = (self.ring_next - 1 - k) % CC_REMAP
            if j < 0:
                j += CC_REMAP
            if self.ring_rec[j] <= rec_lc:
                return self.ring_pos[j]
        if self.ring_len == CC_REMAP:
            return self.ring_pos[self.ring_next] - 1    # the oldest
        return 0

    def step(self, object hashes, int flags, int64_t rec_lc, int64_t rec_seq,
             object session, int64_t seq):
        """Compute the parent of the transaction numbered ``seq`` in its segment.

        :returns: ``(last_committed, reason, key_index, detail, detail_arg,
            history_full_note, raised, raised_from)``: ``key_index`` -1 for none;
            ``detail`` a code of the driver's texts, ``detail_arg`` its number;
            ``raised_from`` the parent the guard raised (``raised``).
        """
        cdef Py_ssize_t n = self.load(hashes), i
        cdef int64_t v, last_parent, seen, value, raised_from = 0
        cdef int reason, detail = CD_NONE, key_index = -1, kidx
        cdef int64_t arg = 0
        cdef bint can_use, exceeds = False, note = False, raised = False
        cdef HSlot* s
        cdef _History hist = self.history
        cdef _LastWriters lw
        self.steps += 1
        # Commit_order_trx_dependency_tracker (repltool: CommitOrderTracker)
        self.identity = self.identity and rec_seq == seq
        if self.serial:
            v, detail = seq - 1, CD_SERIAL
        elif rec_seq == 0:
            v, detail = seq - 1, CD_NO_CLOCK
        elif rec_lc == 0 or self.identity:
            v = rec_lc
        else:
            v = self.remap(rec_lc)
        self.ring_rec[self.ring_next] = rec_seq
        self.ring_pos[self.ring_next] = seq
        self.ring_next = (self.ring_next + 1) % CC_REMAP
        if self.ring_len < CC_REMAP:
            self.ring_len += 1
        if v >= seq:
            v, detail = seq - 1, CD_CLAMPED
        reason = CR_FILE_START if seq == 1 else CR_COMMIT_ORDER
        # Writeset_trx_dependency_tracker::get_dependency (repltool: WritesetTracker)
        if self.writeset:
            can_use = (n > 0 or (flags & (CF_MISSING | CF_EMPTY)) != 0) and (
                flags & (CF_DDL | CF_FK_PARENT | CF_LIMIT | CF_UNKNOWN)) == 0
            if can_use:
                exceeds = hist.count + n > self.history_size
                last_parent, kidx = self.history_start, -1
                for i in range(n):
                    s = hist.find(self.buf[i])
                    if s.gen == hist.gen:
                        seen = s.val
                        if last_parent < seen < seq:
                            last_parent, kidx = seen, i
                        s.val = seq
                    elif not exceeds:
                        if (hist.count + 1) * 2 > hist.cap:
                            hist.grow()
                            s = hist.find(self.buf[i])
                        s.key = self.buf[i]
                        s.val = seq
                        s.gen = hist.gen
                        hist.count += 1
                if flags & CF_MISSING:
                    reason, detail = CR_NO_KEY, CD_NO_KEY
                elif last_parent <= v:
                    v = last_parent
                    if kidx >= 0:
                        reason, key_index, detail = CR_KEY, kidx, CD_KEY
                    elif last_parent == 0 or self.start_reason == CR_FILE_START:
                        reason, detail = CR_FILE_START, CD_FILE_START
                    else:
                        reason, detail, arg = self.start_reason, CD_HISTORY_START, last_parent
            else:
                if flags & CF_UNKNOWN:
                    reason, detail = CR_NO_KEY, CD_KEYS_UNKNOWN
                else:
                    detail = CD_NO_WRITESET
                    if flags & CF_FK_PARENT:
                        reason = CR_FK_PARENT
                    elif flags & CF_LIMIT:
                        reason = CR_HISTORY_FULL
                    else:
                        reason = CR_DDL
            note = exceeds
            if exceeds or not can_use:
                self.history_start = seq
                hist.clear()
                self.start_reason = CR_HISTORY_FULL if exceeds else CR_HISTORY_RESET
        # Writeset_session_trx_dependency_tracker (repltool: WritesetSessionTracker)
        if self.session and session is not None:
            seen = self.sessions.get(session, 0)
            if seen != 0 and seen < seq and seen > v:
                v, reason, key_index, detail, note = seen, CR_SESSION, -1, CD_SESSION, False
            self.sessions[session] = seq
        # the recorded-clock guard (repltool: LastWriters.check)
        if self.guard is not None:
            lw = self.guard
            if v == 0:
                for i in range(n):
                    lw.put(self.buf[i], seq)
                lw.trim()
            else:
                value = lw.floor if v < lw.floor else 0
                kidx = -1
                for i in range(n):
                    seen = lw.put(self.buf[i], seq)
                    if value < seen < seq and seen > v:
                        value, kidx = seen, i
                lw.trim()
                if value > v:
                    raised, raised_from = True, v
                    if kidx >= 0:
                        reason = CR_KEY
                    v, key_index, detail, note = value, kidx, CD_RAISED, False
        return (v, reason, key_index, detail, arg, note, raised, raised_from)


cdef class ParallelismCore:
    """``repltool.certify.summary._Accumulator`` over int64 clocks (the same rules, the
    prefix-maximum steps in C arrays): work, windows, barriers and span of a stream of
    ``(last_committed, sequence_number)`` pairs.  ``tests/certify/test_certcore.py``
    compares both on generated streams."""

    cdef public int64_t n, windows, barriers, span, approximate
    cdef public dict distance
    cdef int64_t window, prev_lc, prev_seq, floor
    cdef bint has_prev, trimmed
    cdef int64_t* seqs
    cdef int64_t* depths
    cdef Py_ssize_t nsteps, cap

    def __cinit__(self, int64_t window):
        self.window = window if window > 1 else 1
        self.cap = 64
        self.seqs = <int64_t*>malloc(self.cap * sizeof(int64_t))
        self.depths = <int64_t*>malloc(self.cap * sizeof(int64_t))
        if self.seqs == NULL or self.depths == NULL:
            raise MemoryError()
        self.distance = {}

    def __dealloc__(self):
        free(self.seqs)
        free(self.depths)

    @property
    def steps(self):
        return self.nsteps

    cdef int add(self, int64_t lc, int64_t seq) except -1:
        cdef bint new_segment, barrier
        cdef int64_t depth, prior, d = seq - lc
        cdef Py_ssize_t lo, hi, mid, drop
        self.n += 1
        key = d
        self.distance[key] = self.distance.get(key, 0) + 1
        # repltool.binlog.clock.restarts and is_barrier, in C (the Python _Accumulator
        # states them through those; test_certcore holds this copy to it)
        new_segment = not self.has_prev or (seq != 0 and self.prev_seq != 0
                                            and seq <= self.prev_seq)
        if new_segment:
            self.nsteps = 0
            self.trimmed = False
        if new_segment or not self.has_prev or lc != self.prev_lc:
            self.windows += 1
        if lc == 0:
            self.barriers += 1
        barrier = (new_segment or lc == 0 or seq == 0 or not self.has_prev
                   or self.prev_seq == 0 or seq > self.prev_seq + 1)
        if barrier:
            depth = self.span + 1
            self.floor = depth
            self.nsteps = 0
            self.trimmed = False
        else:
            lo, hi = 0, self.nsteps        # bisect.bisect_right(seqs, lc)
            while lo < hi:
                mid = (lo + hi) // 2
                if lc < self.seqs[mid]:
                    hi = mid
                else:
                    lo = mid + 1
            if lo:
                prior = self.depths[lo - 1]
            elif self.trimmed:
                prior = self.depths[0]
                self.approximate += 1
            else:
                prior = 0
            depth = (prior if prior > self.floor else self.floor) + 1
        if seq != 0 and (self.nsteps == 0 or depth > self.depths[self.nsteps - 1]):
            if self.nsteps == self.cap:
                self.cap *= 2
                self.seqs = <int64_t*>_grow_buf(self.seqs, self.cap * sizeof(int64_t))
                self.depths = <int64_t*>_grow_buf(self.depths, self.cap * sizeof(int64_t))
            self.seqs[self.nsteps] = seq
            self.depths[self.nsteps] = depth
            self.nsteps += 1
            if self.nsteps > 2 * self.window:
                drop = self.nsteps - self.window - 1
                memmove(self.seqs, self.seqs + drop, (self.nsteps - drop) * sizeof(int64_t))
                memmove(self.depths, self.depths + drop, (self.nsteps - drop) * sizeof(int64_t))
                self.nsteps -= drop
                self.trimmed = True
        if depth > self.span:
            self.span = depth
        self.prev_lc, self.prev_seq, self.has_prev = lc, seq, True
        return 0

    def add_pair(self, int64_t lc, int64_t seq):
        self.add(lc, seq)

    def add_flat(self, const int64_t[::1] flat, bint skip_negative):
        """Add the pairs of ``flat`` (``lc0, seq0, lc1, ...``); with ``skip_negative``
        a pair with ``lc < 0`` (no computed clock) is left out and counted: returns how
        many were."""
        cdef Py_ssize_t i, n = flat.shape[0] // 2, skipped = 0
        for i in range(n):
            if skip_negative and flat[2 * i] < 0:
                skipped += 1
            else:
                self.add(flat[2 * i], flat[2 * i + 1])
        return skipped
