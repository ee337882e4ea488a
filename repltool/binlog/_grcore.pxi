# Included from _core.pyx (its cimports and directives apply), after _certcore.pxi
# (whose _History, reason codes and _grow_buf this uses).
#
# Group Replication's certifier (plugin/group_replication/src/certifier.cc:
# ``Certifier::certify``'s add_item loop, ``update_parallel_applier_indexes``,
# ``garbage_collect``) for the runs whose snapshot versions are never read: no
# conflict detection (no snapshot), no stable-set garbage collection, no local
# member (repltool.certify.group_replication.core_applies).  The certification
# info is then hash -> sequence number (the items' snapshot versions are only read
# by conflict detection and stable-set collection), in a _History table: a
# collection without a stable set purges every item, i.e. clears it in O(1).
#
# The reference is the Python certifier (repltool.certify.group_replication.Certifier,
# ``assign`` / ``view_change_state`` / ``garbage_collect`` and the loop of
# ``iter_group_replication``): this class computes the same values, rule for rule;
# tests/certify/test_grcore.py compares both on generated write-set sequences and
# whole certify outputs.  The drivers (repltool.certify.grcore,
# repltool.distributed.grpacked) turn the codes into reasons and texts.

from cpython.unicode cimport PyUnicode_GET_LENGTH

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    const char* PyUnicode_AsUTF8AndSize(object o, Py_ssize_t* size) except NULL


# GroupCertifierCore.step / certify_unit transaction flags
cdef enum:
    GF_DDL = 1          # ddl (no rows, no keys)
    GF_CTAS = 2
    GF_MISSING = 4      # missing_keys
    GF_EMPTY = 8        # kind == "empty"

# detail codes (the texts: repltool.certify.grcore)
cdef enum:
    GD_WINDOW = 0       # the window's own detail
    GD_KEY = 1
    GD_SEQUENTIAL = 2   # with a kind
    GD_EMPTY = 3        # "empty transaction: window start (<window detail>)"
    GD_SESSION = 4

# kinds: of a sequential transaction, and of what opened the window
cdef enum:
    GK_START = 0
    GK_CTAS = 1
    GK_DDL = 2
    GK_MISSING = 3
    GK_GC = 4

cdef enum:
    N_REASONS = 16


cdef bint _gtid_plain(object g) noexcept:
    """True when ``g`` is certainly a valid ``sid:gno`` for ``split_gtid`` with
    ``1 <= gno <= 2**63-1`` (ASCII, starts with a letter or digit, ends with the
    digits after its last colon); False: ask the Python check."""
    cdef Py_ssize_t n, p, k, z
    cdef const char* s
    cdef char c
    if type(g) is not str or not PyUnicode_IS_ASCII(g):
        return False
    s = PyUnicode_AsUTF8AndSize(g, &n)
    if n < 3:
        return False
    c = s[0]
    if not ((b'0' <= c <= b'9') or (b'a' <= c <= b'z') or (b'A' <= c <= b'Z')):
        return False
    p = n - 1
    while p > 0 and b'0' <= s[p] <= b'9':
        p -= 1
    if p < 1 or p == n - 1 or s[p] != b':':
        return False
    z = p + 1
    while z < n and s[z] == b'0':
        z += 1
    k = n - z
    if k == 0 or k > 19:
        return False
    if k == 19 and memcmp(s + z, b"9223372036854775807", 19) > 0:
        return False
    return True


cdef class GroupCertifierCore:
    """The certifier's state in C for one ordered Group Replication run (file comment).

    :param gc_every: ``CertifyOptions.gc_every`` (0: none).
    :param gc_opens_window: ``CertifyOptions.gc_opens_window``.
    :param session_order: ``CertifyOptions.session_order``.
    :param check_gtid: ``check_gtid(gtid, has_writeset, logged)``: what the Python
        certifier does with a GTID the core does not know for certain to be valid (map a
        logged one as ``cert_gtid`` and, with a write set, check it or raise its error).
    """

    cdef _History info
    cdef public int64_t last_committed_global, last_sequence_number, sequence_number
    cdef int win_reason, win_kind
    cdef int64_t win_arg
    cdef int64_t gc_every
    cdef public int64_t since_gc
    cdef double gc_interval
    cdef bint has_clock
    cdef double gc_clock
    cdef object next_clock
    cdef bint gc_opens_window, session_order
    cdef dict sessions
    cdef object check_gtid
    cdef uint64_t* buf
    cdef Py_ssize_t buf_cap
    cdef public Py_ssize_t steps
    #: 0 while :meth:`step` reads the write set (an error then changed nothing), 1 after
    cdef public int stage
    # the last assign's values
    cdef int64_t o_lc, o_seq, o_warg
    cdef int o_reason, o_key, o_detail, o_kind, o_wreason, o_wkind

    def __cinit__(self):
        self.buf_cap = 256
        self.buf = <uint64_t*>malloc(self.buf_cap * sizeof(uint64_t))
        if self.buf == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.buf)

    def __init__(self, int64_t gc_every, bint gc_opens_window, bint session_order,
                 object check_gtid, double gc_interval=0.0, object next_clock=None):
        self.info = _History()
        self.last_committed_global = 1
        self.last_sequence_number = 1
        self.sequence_number = 2
        self.win_reason, self.win_kind, self.win_arg = CR_FILE_START, GK_START, 0
        self.gc_every = gc_every if gc_every > 0 else 0
        self.since_gc = 0
        self.gc_opens_window = gc_opens_window
        self.session_order = session_order
        self.sessions = {}
        self.check_gtid = check_gtid
        self.steps = 0
        if gc_interval > 0 and next_clock is None:
            raise ValueError("gc_interval needs next_clock")
        self.gc_interval = gc_interval if gc_interval > 0 else 0.0
        self.has_clock = False
        self.gc_clock = 0.0
        self.next_clock = next_clock

    # ---- the certifier ----

    cdef void open_gc_window(self) noexcept:
        # _update_parallel_applier_indexes(update_global=True, increment=False)
        self.last_committed_global = self.last_sequence_number
        self.win_reason, self.win_kind = CR_GC_WINDOW, GK_GC
        self.win_arg = self.last_sequence_number

    cdef void collect(self) noexcept:
        """``garbage_collect(None)``: every item is stable."""
        self.info.clear()
        if self.gc_opens_window:
            self.open_gc_window()

    cdef inline void before_item(self) noexcept:
        """``iter_group_replication``: the collection after every ``gc_every``."""
        if self.gc_every and self.since_gc >= self.gc_every:
            self.collect()
            self.since_gc = 0

    cdef int tick(self, object commit_time) except -1:
        """``iter_group_replication``'s time-driven collection (``gc_interval``): the
        first commit time starts the clock; a collection when it advanced the interval,
        the clock then moved by ``next_clock(clock, commit_time)`` (the Python
        expression, called only then)."""
        cdef double t
        if self.gc_interval == 0 or commit_time is None:
            return 0
        if type(commit_time) is not float:
            raise TypeError("commit_time is not a float")
        t = <double>commit_time
        if not self.has_clock:
            self.gc_clock, self.has_clock = t, True
        elif t - self.gc_clock >= self.gc_interval:
            self.collect()
            self.gc_clock = <double>self.next_clock(self.gc_clock, commit_time)
        return 0

    cdef int check(self, object gtid, bint has_ws, bint logged) except -1:
        """The GTID of the next transaction: ``logged`` as the log spells it (``None``
        or ``ANONYMOUS``: one the certifier generates, group_uuid checked first), else
        as certification spells it (``CertTransaction.gtid``)."""
        if gtid is None or (has_ws and _gtid_plain(gtid)):
            return 0
        if logged:
            if type(gtid) is str and (<str>gtid == "ANONYMOUS"
                                      or (not has_ws and ":" in <str>gtid)):
                return 0
        elif not has_ws:
            return 0
        self.check_gtid(gtid, has_ws, logged)
        return 0

    cdef int assign(self, const uint64_t* ws, Py_ssize_t n, int flags,
                    object session) except -1:
        """``Certifier.assign`` of a remote transaction (its GTID already checked)."""
        cdef int64_t seq = self.sequence_number, lc = self.last_committed_global, prev
        cdef int reason = self.win_reason, detail = GD_WINDOW, kind = GK_START
        cdef int key_index = -1
        cdef Py_ssize_t i
        cdef HSlot* s
        cdef _History info = self.info
        cdef bint empty, sequential
        self.o_wreason, self.o_wkind, self.o_warg = self.win_reason, self.win_kind, self.win_arg
        for i in range(n):
            s = info.find(ws[i])
            if s.gen == info.gen:
                prev = s.val
            else:
                if (info.count + 1) * 2 > info.cap:
                    info.grow()
                    s = info.find(ws[i])
                s.key = ws[i]
                s.gen = info.gen
                info.count += 1
                prev = -1
            s.val = seq
            if prev > lc and prev != seq:
                lc, key_index, reason, detail = prev, <int>i, CR_KEY, GD_KEY
        empty = n == 0 and (flags & GF_EMPTY) != 0 and (flags & (GF_DDL | GF_CTAS)) == 0
        sequential = not empty and (n == 0 or (flags & (GF_CTAS | GF_MISSING)) != 0)
        if sequential:
            lc, key_index = seq - 1, -1
            if flags & GF_CTAS:
                kind = GK_CTAS
            elif (flags & GF_DDL) or n == 0:
                kind = GK_DDL
            else:
                kind = GK_MISSING
            reason, detail = CR_DDL, GD_SEQUENTIAL
        elif empty:
            reason, detail = CR_EMPTY, GD_EMPTY
        if self.session_order and session is not None:
            prev = self.sessions.get(session, 0)
            if prev > lc:
                lc, key_index, reason, detail = prev, -1, CR_SESSION, GD_SESSION
            self.sessions[session] = seq
        # _update_parallel_applier_indexes(update_global=sequential, increment=True)
        if sequential:
            self.last_committed_global = seq
        self.last_sequence_number = seq
        self.sequence_number = seq + 1
        if sequential:
            self.win_reason, self.win_kind, self.win_arg = CR_HISTORY_RESET, kind, seq
        self.o_lc, self.o_seq, self.o_reason, self.o_key = lc, seq, reason, key_index
        self.o_detail, self.o_kind = detail, kind
        self.steps += 1
        return 0

    cdef Py_ssize_t load(self, object hashes) except -1:
        """Copy a write set into ``buf`` (TypeError/OverflowError: not uint64s)."""
        cdef Py_ssize_t n = len(hashes), i = 0
        if n > self.buf_cap:
            self.buf = <uint64_t*>_grow_buf(self.buf, n * sizeof(uint64_t))
            self.buf_cap = n
        for h in hashes:
            if i >= n:
                raise ValueError("write set changed while read")
            if not isinstance(h, int):
                raise TypeError("write-set hash is not an int")
            self.buf[i] = <uint64_t>h
            i += 1
        if i != n:
            raise ValueError("write set changed while read")
        return n

    def step(self, object hashes, int flags, object gtid, object session, bint logged=True,
             object commit_time=None):
        """One remote transaction (``iter_group_replication``: the collection after
        ``gc_every``, then ``Certifier.certify`` without conflict detection).

        :param hashes: its write-set hashes (ints that fit a uint64; otherwise
            TypeError/OverflowError/ValueError and nothing changed).
        :param flags: 1 DDL, 2 CTAS, 4 missing keys, 8 empty kind.
        :param gtid: as logged, or as certification spells it (``logged=False``):
            checked as the certifier does when there are hashes.
        :param commit_time: ``CertTransaction.commit_time`` (a float or None), for
            ``gc_interval``.
        :returns: ``(last_committed, sequence_number, reason code, key index or -1,
            detail code, kind, window reason code, window kind, window number)``.
        """
        self.stage = 0
        cdef Py_ssize_t n = self.load(hashes)
        if self.gc_interval != 0 and commit_time is not None and type(commit_time) is not float:
            raise TypeError("commit_time is not a float")
        self.stage = 1
        self.check(gtid, n > 0, logged)
        self.before_item()
        self.tick(commit_time)
        self.assign(self.buf, n, flags, session)
        self.since_gc += 1
        return (self.o_lc, self.o_seq, self.o_reason, self.o_key, self.o_detail, self.o_kind,
                self.o_wreason, self.o_wkind, self.o_warg)

    def view_change(self, object commit_time=None):
        """A View_change transaction: (0, 0), no number; the collections after
        ``gc_every`` and ``gc_interval`` first, then ``view_change_state(None)`` (a new
        window)."""
        self.before_item()
        self.tick(commit_time)
        if self.gc_opens_window:
            self.open_gc_window()

    def garbage_collect(self):
        """``Certifier.garbage_collect(None)`` (every item stable)."""
        self.collect()

    def live_sequence_numbers(self):
        """The sequence numbers the certification info and the session map hold."""
        cdef set live = set()
        cdef Py_ssize_t i
        cdef _History h = self.info
        for i in range(h.cap):
            if h.slots[i].gen == h.gen:
                live.add(h.slots[i].val)
        live.update(self.sessions.values())
        return live

    @property
    def items(self):
        """How many items the certification info holds."""
        return self.info.count

    def certify_unit(self, Py_ssize_t n, list truncated, list gtids, list kinds, list rows,
                     list lcs, list seqs, list threads, list servers, list originals,
                     list immediates, list commit_ids, object views,
                     const unsigned char[:] present, const int64_t[::1] offsets,
                     const uint64_t[::1] hashes, list missing_tables, list limits, list only,
                     object fallback_of, tuple not_extracted, object on_truncated,
                     object raise_at, int64_t[::1] recorded_out, int64_t[::1] computed_out,
                     int64_t[::1] reason_counts):
        """Certify one packed unit's transactions in order (``PackedGroupCertifier.part``
        in C): the columns as :func:`repltool.distributed.columns.field_values` gives
        them, ``views`` the indexes of View_change transactions, ``present`` /
        ``offsets`` / ``hashes`` the write sets.  ``fallback_of(w)``: the fallback
        reasons of the ``w``-th write set; ``on_truncated()`` per truncated
        transaction (skipped); ``raise_at(i)`` raises the object path's error.

        Fills ``recorded_out`` / ``computed_out`` (flat pairs) and ``reason_counts``
        (by code); returns ``(transactions, changed, without_clock, no_session,
        replicated, fallbacks, commit_ids)``.
        """
        cdef Py_ssize_t i, w = -1, m = 0, nws, start, end, j
        cdef int64_t rec_lc, rec_seq, lc, seq
        cdef Py_ssize_t changed = 0, without_clock = 0, no_session = 0, replicated = 0
        cdef bint view, has_rows, ddl, ctas, missing_keys, is_ddl
        cdef int flags, reason
        cdef const uint64_t* ws
        cdef dict fallbacks = {}
        cdef list out_ids = []
        cdef bint session_order = self.session_order
        cdef bint any_view = len(views) > 0
        cdef Py_ssize_t given = 0
        if self.gc_interval != 0:
            raise ValueError("certify_unit does not read commit times (gc_interval)")
        # (indexes are not checked in the loop: check the shapes once)
        if present.shape[0] < n or recorded_out.shape[0] < 2 * n \
                or computed_out.shape[0] < 2 * n or reason_counts.shape[0] < N_REASONS \
                or len(truncated) < n or len(gtids) < n or len(kinds) < n or len(rows) < n \
                or len(lcs) < n or len(seqs) < n or len(threads) < n or len(servers) < n \
                or len(originals) < n or len(immediates) < n or len(commit_ids) < n:
            raise ValueError("columns shorter than the unit")
        for i in range(n):
            given += present[i] != 0
        if offsets.shape[0] < given + 1 or len(missing_tables) < given \
                or len(limits) < given or len(only) < given:
            raise ValueError("write-set columns shorter than the unit")
        for i in range(given):
            if offsets[i] < 0 or offsets[i + 1] < offsets[i] or offsets[i + 1] > hashes.shape[0]:
                raise ValueError("write-set offsets outside the hashes")
        for i in range(n):
            if present[i]:
                w += 1
            if truncated[i]:
                on_truncated()
                continue
            lc_log, seq_log = lcs[i], seqs[i]
            rec_lc = lc_log if lc_log else 0
            rec_seq = seq_log if seq_log else 0
            if rec_lc < 0 or rec_seq < 0:
                raise_at(i)
            thread = threads[i]
            view = any_view and i in views
            kind = kinds[i]
            has_rows = bool(rows[i])
            is_ddl = kind == "ddl"
            ctas = is_ddl and has_rows
            fallback = ()
            nws = 0
            ws = NULL
            ddl = missing_keys = False
            if not view:
                if present[i]:
                    start, end = offsets[w], offsets[w + 1]
                    if end > start:
                        nws = end - start
                        ws = &hashes[start]
                    else:
                        o = only[w]
                        if not isinstance(o, list) and len(o):
                            for h in o:
                                if not isinstance(h, int) or h < 0 or h > 0xFFFFFFFFFFFFFFFF:
                                    raise_at(i)
                            nws = self.load(o)
                            ws = self.buf
                    missing = missing_tables[w]
                    ddl = is_ddl and end == start and not missing and not limits[w]
                    missing_keys = bool(missing)
                    if missing_keys:
                        fallback = fallback_of(w)
                else:
                    ddl = is_ddl and not has_rows
                    missing_keys = has_rows
                    if has_rows:
                        fallback = not_extracted
            if view:
                self.before_item()
                if self.gc_opens_window:
                    self.open_gc_window()
                lc = seq = 0
                reason = CR_VIEW_CHANGE
            else:
                self.check(gtids[i], nws > 0, True)
                self.before_item()
                flags = 0
                if ddl:
                    flags = GF_DDL
                if ctas:
                    flags |= GF_CTAS
                if missing_keys:
                    flags |= GF_MISSING
                if kind == "empty":
                    flags |= GF_EMPTY
                self.assign(ws, nws, flags,
                            (servers[i], thread) if session_order and thread is not None
                            else None)
                self.since_gc += 1
                lc, seq, reason = self.o_lc, self.o_seq, self.o_reason
            j = 2 * m
            recorded_out[j] = rec_lc
            recorded_out[j + 1] = rec_seq
            computed_out[j] = lc
            computed_out[j + 1] = seq
            reason_counts[reason] += 1
            changed += lc != rec_lc or seq != rec_seq
            without_clock += lc_log is None or seq_log is None
            if fallback:
                fallbacks[fallback] = fallbacks.get(fallback, 0) + 1
            no_session += thread is None and not view
            original, immediate = originals[i], immediates[i]
            replicated += bool(original and immediate and original != immediate)
            out_ids.append(commit_ids[i])
            m += 1
        return m, changed, without_clock, no_session, replicated, fallbacks, out_ids
