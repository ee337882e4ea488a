"""The tail of an untagged GTID body, walked on the bytes: one walk for every Python reader.

After the logical clock, ``S.gtid_body`` (structs.py) declares presence-detected parts,
in this order (MySQL's ``Gtid_event``): the immediate commit timestamp (Int56ul; with
``COMMIT_TIMESTAMP_FLAG`` the original one follows), ``transaction_length``
(``net_store_length``), the immediate server version (Int32ul; with
``SERVER_VERSION_FLAG`` the original one follows), ``commit_group_ticket`` (Int64ul).
:func:`gtid_tail` walks them for ``fastdecode.fast_gtid`` (the values) and
``writer.patch_clock``'s byte routes (the offsets, and whether the body ends exactly
there).  The compiled core's copies of this walk (``_core.pyx`` ``_mysql_gtid``,
``_retagcore.pxi`` ``_plain_clock_body``, ``_textcore.pxi`` ``gtid``) are held to it
by tests (tests/binlog/test_gtid_tail.py).
"""

from __future__ import annotations

from typing import Any

from . import structs as S
from .constants import COMMIT_TIMESTAMP_FLAG, SERVER_VERSION_FLAG



def _width(name: str) -> int:
    """Bytes of the ``S.gtid_body`` part ``name`` when present (``If(..., Optional(X))``
    or ``If(..., X)``)."""
    then = getattr(S.gtid_body, name).subcon.thensubcon
    return int((then.subcons[0] if hasattr(then, "subcons") else then).sizeof())


#: the parts' widths, from the declaration
COMMIT_TS_LEN = _width("immediate_commit_timestamp")
SERVER_VERSION_LEN = _width("immediate_server_version")
TICKET_LEN = _width("commit_group_ticket")

_NONE = (None, None, None, None, None, None)


def gtid_tail(data: bytes, p: int, end: int, _ct: int = COMMIT_TS_LEN,  # type: ignore[type-arg]
              _sv: int = SERVER_VERSION_LEN, _tk: int = TICKET_LEN,
              _ct_flag: int = COMMIT_TIMESTAMP_FLAG, _sv_flag: int = SERVER_VERSION_FLAG,
              _widths: dict[int, int] = S.PACKED_INT_WIDTHS, _from: Any = int.from_bytes) -> tuple | None:
    """The parts of ``data[p:end]``, the bytes after an untagged GTID body's clock.

    :returns: ``(ict, oct, transaction_length, isv, osv, ticket, ts_end, tl_end, sv_end,
        stop)``: the values as :class:`~repltool.binlog.events.GtidBody` holds them
        (flags cleared, an original equal to its immediate one when not stored, None when
        absent), then where the commit timestamps, transaction_length and the server
        versions end (each the previous end when absent; ``ts_end - p`` is 14 when the
        original commit timestamp is stored, ``sv_end - tl_end`` 8 when the original
        server version is) and where the known parts end (``stop``; bytes from there to
        ``end`` are a partial ticket or trailing bytes, which construct puts in ``rest``).
        None where the layout is not this walk's to decide (a part cut short, a
        transaction_length of first byte 251 or 255): construct gives the verdict.

    The keyword parameters are the layout's constants bound as locals (this runs once
    per GTID event); pass only the first three.  The immediate / original step is
    written out for both flagged parts rather than called twice, for the same reason.
    """
    if p >= end:
        return (*_NONE, p, p, p, p) if p == end else None
    if end - p < _ct:
        return None
    ict = _from(data[p:p + _ct], "little")
    p += _ct
    if ict & _ct_flag:
        if end - p < _ct:
            return None
        ict &= ~_ct_flag
        oct_ = _from(data[p:p + _ct], "little")
        p += _ct
    else:
        oct_ = ict
    if p == end:
        return ict, oct_, None, None, None, None, p, p, p, p
    first = data[p]
    if first < 251:
        tl = first
        tl_end = p + 1
    else:
        width = _widths.get(first)
        if width is None or end - p < 1 + width:
            return None
        tl = _from(data[p + 1:p + 1 + width], "little")
        tl_end = p + 1 + width
    if tl_end == end:
        return ict, oct_, tl, None, None, None, p, end, end, end
    if end - tl_end < _sv:
        return None
    q = tl_end + _sv
    isv = _from(data[tl_end:q], "little")
    if isv & _sv_flag:
        if end - q < _sv:
            return None
        isv &= ~_sv_flag
        osv = _from(data[q:q + _sv], "little")
        q += _sv
    else:
        osv = isv
    if end - q >= _tk:
        return (ict, oct_, tl, isv, osv, _from(data[q:q + _tk], "little"), p, tl_end,
                q, q + _tk)
    return ict, oct_, tl, isv, osv, None, p, tl_end, q, q
