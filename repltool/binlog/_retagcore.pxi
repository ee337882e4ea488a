# ---- re-tagging: the event walk of rewrite_log over a block (repltool.binlog.rewrite) ----
#
# Included by _core.pyx.  ``retag_walk`` does, over a buffer read from the source,
# what ``rewrite.Rewriter`` does event by event in Python while no event changes size
# (or in a relay log, where log_pos never changes): it counts every event, patches
# the clock of each plain typecode-2 GTID event named in the clock columns in place
# (16 bytes and the CRC32, as writer._patch_in_place), counts the relay log's stale
# log_pos values, and returns at the first event the Python walk must take itself:
# a Format_description / Start_v3 / Start_encryption event, a size below the header
# or past the file's end, a clock offset the walk stepped over or that is not a
# plain untagged GTID event, invalid clock values, a wrong stored CRC (the Python
# code raises the exact error for each).

cdef enum:
    RT_FDE = 15            # FORMAT_DESCRIPTION_EVENT
    RT_START_V3 = 1        # START_EVENT_V3
    RT_START_ENCRYPTION = 164
    RT_GTID = 33
    RT_ANONYMOUS_GTID = 34
    RT_MAX_GTID_SIZE = 4096   # writer.MAX_GTID_EVENT_SIZE

cdef enum:
    RT_DONE = 0            # the walk reached the file's end (no bytes left)
    RT_MORE = 1            # the event at the returned offset is not complete in the buffer
    RT_PYTHON = 2          # the Python walk takes the event at the returned offset

RETAG_DONE = RT_DONE
RETAG_MORE = RT_MORE
RETAG_PYTHON = RT_PYTHON

cdef uint64_t _retag_walked = 0
cdef uint64_t _retag_shifted = 0


def retag_walked():
    """Events walked by :func:`retag_walk` since import (the tests' proof that it ran)."""
    return _retag_walked


def retag_shifted():
    """Events whose log_pos :func:`retag_walk` moved (``shift``) since import."""
    return _retag_shifted


cdef bint _plain_clock_body(const uint8_t* e, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """writer._plain_clock_body: an untagged typecode-2 body with no unknown bytes."""
    cdef Py_ssize_t p = start + G_ICT
    cdef int part
    cdef uint8_t first
    if p > end or e[start + G_LT_TYPE] != LT_TYPECODE:
        return False
    for part in range(4):
        if p >= end:
            return p == end
        if part == 0:
            if end - p < 7:
                return False
            p += 14 if e[p + 6] & 0x80 else 7
        elif part == 1:
            first = e[p]
            if first < 251:
                p += 1
            elif first == 252:
                p += 3
            elif first == 253:
                p += 4
            elif first == 254:
                p += 9
            else:
                return False
        elif part == 2:
            if end - p < 4:
                return False
            p += 8 if e[p + 3] & 0x80 else 4
        else:
            p += 8
    return p == end


cdef inline void _wr64(uint8_t* p, uint64_t v) noexcept nogil:
    cdef int i
    for i in range(8):
        p[i] = <uint8_t>(v >> (8 * i))


cdef inline void _wr32(uint8_t* p, uint32_t v) noexcept nogil:
    cdef int i
    for i in range(4):
        p[i] = <uint8_t>(v >> (8 * i))


def retag_walk(uint8_t[::1] buf, Py_ssize_t length, int64_t base, int64_t file_size,
               const int64_t[::1] offsets, const int64_t[::1] lcs, const int64_t[::1] sns,
               Py_ssize_t ci, bint crc_on, bint patch, bint count_stale, int64_t shift=0):
    """Walk the events of ``buf[:length]`` (the source bytes from file offset ``base``).

    ``offsets`` / ``lcs`` / ``sns``: the clock columns in offset order, ``ci`` the
    next one to take.  ``patch``: plain GTID events at clock offsets are patched
    here (the "mysql" encoding); else the walk returns at each.  ``count_stale``:
    a relay log after a size change (events with a non-zero log_pos are counted).
    ``shift``: a binlog after size changes summing to ``shift`` bytes: each event
    with a non-zero log_pos gets ``shift`` added and a new CRC32 (its stored CRC
    verified first), what ``Rewriter._shifted_copy`` writes; the walk returns at
    every clock offset (pass ``patch`` false) and at an event it cannot shift
    whole in the buffer, a CRC that does not match, a log_pos leaving uint32.

    :returns: ``(status, offset, ci, events, rewritten, stale, shifted, odd)``
        (``odd``: shifted events whose log_pos was not their end offset): the file offset
        where the walk stopped (past ``base + length`` when the last event walked
        extends beyond the buffer: its bytes there are unchanged), the next clock.
    """
    global _retag_walked, _retag_shifted
    cdef Py_ssize_t p = 0, size, body_end, nclk = offsets.shape[0]
    cdef int64_t off, nxt, lc, sn, lp
    cdef int64_t shifted = 0, odd = 0
    cdef uint8_t tc
    cdef uint8_t* e
    cdef int64_t events = 0, rewritten = 0, stale = 0
    cdef int status = RT_MORE
    if length > buf.shape[0]:
        raise ValueError("length exceeds the buffer")
    with nogil:
        while True:
            off = base + p
            if off >= file_size:
                status = RT_DONE
                break
            if file_size - off < HEADER_LEN:
                status = RT_PYTHON            # the tail: Python copies and warns
                break
            if length - p < HEADER_LEN:
                break                             # RT_MORE
            e = &buf[p]
            size = _rd32(e + H_EVENT_SIZE)
            tc = e[H_TYPE]
            if (size < HEADER_LEN or size > file_size - off or tc == RT_FDE
                    or tc == RT_START_V3 or tc == RT_START_ENCRYPTION):
                status = RT_PYTHON
                break
            if ci < nclk:
                nxt = offsets[ci]
                if nxt < off:
                    status = RT_PYTHON        # a clock offset that is no event start
                    break
                if nxt == off:
                    if not patch or (tc != RT_GTID and tc != RT_ANONYMOUS_GTID) \
                            or size > RT_MAX_GTID_SIZE:
                        status = RT_PYTHON
                        break
                    if size > length - p:
                        break                     # RT_MORE: the whole event is needed
                    body_end = size - CHECKSUM_LEN if crc_on else size
                    if not _plain_clock_body(e, HEADER_LEN, body_end):
                        status = RT_PYTHON
                        break
                    lc = lcs[ci]
                    sn = sns[ci]
                    if (<int64_t>_rdn(e + HEADER_LEN + G_LC, 8) != lc
                            or <int64_t>_rdn(e + HEADER_LEN + G_SN, 8) != sn):
                        if lc < 0 or not (lc < sn or (lc == 0 and sn == 0)):
                            status = RT_PYTHON
                            break
                        if crc_on and crc32_buf(e, body_end) != _rd32(e + body_end):
                            status = RT_PYTHON
                            break
                        _wr64(e + HEADER_LEN + G_LC, <uint64_t>lc)
                        _wr64(e + HEADER_LEN + G_SN, <uint64_t>sn)
                        if crc_on:
                            _wr32(e + body_end, crc32_buf(e, body_end))
                        rewritten += 1
                    ci += 1
            if count_stale and _rd32(e + H_LOG_POS) != 0:
                stale += 1
            if shift != 0:
                lp = _rd32(e + H_LOG_POS)
                if lp != 0:
                    if size > length - p:
                        break                     # RT_MORE: the whole event is needed
                    if lp + shift < 0 or lp + shift >= ((<int64_t>1) << 32):
                        status = RT_PYTHON
                        break
                    body_end = size
                    if crc_on:
                        body_end = size - CHECKSUM_LEN
                        if body_end < HEADER_LEN or crc32_buf(e, body_end) != _rd32(e + body_end):
                            status = RT_PYTHON
                            break
                    if lp != off + size:
                        odd += 1
                    _wr32(e + H_LOG_POS, <uint32_t>(lp + shift))
                    if crc_on:
                        _wr32(e + body_end, crc32_buf(e, body_end))
                    shifted += 1
            events += 1
            p += size
            if p >= length:
                break                             # RT_MORE (or the end, seen next time)
        if status == RT_MORE and base + p >= file_size:
            status = RT_DONE
        _retag_walked += events
        _retag_shifted += shifted
    return status, base + p, ci, events, rewritten, stale, shifted, odd
