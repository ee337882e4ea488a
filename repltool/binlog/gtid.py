"""GTIDs and GTID sets: MySQL ``uuid[:tag]:gno`` and MariaDB ``domain-server-seq``.

:class:`GtidSet` is the one GTID set of the library: what a Previous_gtids event
holds, what Group Replication's certifier compares (snapshot versions, the
stable set; ``plugin/group_replication/src/certifier.cc``, ``sql/rpl_gtid_set.cc``),
and what ``GtidSet.parse`` reads from MySQL's text form ``uuid:1-5:7,uuid2:tag:1-3``
(a tag switches the current tag for the intervals that follow it, as in 8.3+).

Example::

    >>> s = GtidSet.parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7")
    >>> s.add("3e11fa47-71ca-11e1-9e33-c80aa9429562:6")
    GtidSet('3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7')
    >>> GtidSet.parse("a:1-2").is_strict_subset(GtidSet.parse("a:1-3"))
    True
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from ..errors import CertifyError, UsageError


@dataclass(frozen=True, slots=True, order=True)
class Gtid:
    """A MySQL GTID.  ``tag`` is ``None`` for untagged GTIDs (8.3+ tags are lower-case)."""

    sid: UUID
    gno: int
    tag: str | None = None

    def __str__(self) -> str:
        if self.tag:
            return f"{self.sid}:{self.tag}:{self.gno}"
        return f"{self.sid}:{self.gno}"


@dataclass(frozen=True, slots=True, order=True)
class MariaGtid:
    """A MariaDB GTID ``domain_id-server_id-seq_no``."""

    domain_id: int
    server_id: int
    seq_no: int

    def __str__(self) -> str:
        return f"{self.domain_id}-{self.server_id}-{self.seq_no}"


@dataclass(frozen=True, slots=True)
class GtidInterval:
    """An interval of GNOs, closed on both ends like the text form ``1-13``."""

    start: int
    end: int


Interval = tuple[int, int]
"""An inclusive range of GNOs ``(first, last)``."""

#: MySQL's largest GNO (``GNO_END - 1``: rpl_gno is an int64)
MAX_GNO = (1 << 63) - 1


def _flat(intervals: Iterable[Interval]) -> array:
    """Inclusive intervals as a flat ``array('q')`` ``[lo0, hi0, lo1, hi1, ...]``."""
    out = array("q")
    try:
        for lo, hi in intervals:
            out.append(lo)
            out.append(hi)
    except OverflowError:
        raise CertifyError(f"a GNO beyond MySQL's largest, {MAX_GNO}") from None
    return out


def _merge(flat: array) -> array:
    """Sort and coalesce flat inclusive intervals (adjacent ones are merged); the
    common case, already sorted and apart, is returned as it is."""
    n = len(flat)
    prev = None
    for i in range(0, n, 2):
        lo = flat[i]
        if flat[i + 1] < lo or (prev is not None and lo <= prev + 1):
            break
        prev = flat[i + 1]
    else:
        return flat
    out = array("q")
    for lo, hi in sorted(zip(flat[0::2], flat[1::2])):
        if hi < lo:
            continue
        if out and lo <= out[-1] + 1:
            if hi > out[-1]:
                out[-1] = hi
        else:
            out.append(lo)
            out.append(hi)
    return out


def _find(flat: array, gno: int) -> int:
    """Index of the first interval whose end is >= ``gno`` (binary search)."""
    lo, hi = 0, len(flat) >> 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if flat[2 * mid + 1] < gno:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _member(flat: array, gno: int) -> bool:
    i = _find(flat, gno)
    return 2 * i < len(flat) and flat[2 * i] <= gno


def _covers(outer: array, inner: array) -> bool:
    """True if every GNO of ``inner`` is in ``outer`` (both merged, sorted)."""
    i, n = 0, len(outer)
    for k in range(0, len(inner), 2):
        lo, hi = inner[k], inner[k + 1]
        while i < n and outer[i + 1] < lo:
            i += 2
        if i == n or outer[i] > lo or outer[i + 1] < hi:
            return False
    return True


def _intersect(a: array, b: array) -> array:
    out = array("q")
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i], b[j])
        hi = min(a[i + 1], b[j + 1])
        if lo <= hi:
            out.append(lo)
            out.append(hi)
        if a[i + 1] < b[j + 1]:
            i += 2
        else:
            j += 2
    return out


class _Intervals(Sequence[GtidInterval]):
    """A read-only view of one member's flat intervals as :class:`GtidInterval` items
    (built on access: a million intervals stay 16 bytes each)."""

    __slots__ = ("_flat",)

    def __init__(self, flat: array) -> None:
        self._flat = flat

    def __len__(self) -> int:
        return len(self._flat) >> 1

    def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(len(self))))
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("interval index out of range")
        return GtidInterval(self._flat[2 * i], self._flat[2 * i + 1])

    def __iter__(self) -> Iterator[GtidInterval]:
        f = self._flat
        for k in range(0, len(f), 2):
            yield GtidInterval(f[k], f[k + 1])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Intervals):
            return self._flat == other._flat
        if isinstance(other, (tuple, list)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._flat.tobytes())

    def __repr__(self) -> str:
        return repr(tuple(self))


def split_gtid(gtid: str) -> tuple[str, int]:
    """Split ``uuid:gno`` or ``uuid:tag:gno`` into ``(sid, gno)``.

    The *sid* keeps the tag (``uuid:tag``) so tagged and untagged GTIDs of one
    server are different members of a set. UUIDs and tags are lower-cased.

    :raises CertifyError: when the text is not a GTID.
    """
    sid, sep, gno_text = gtid.strip().rpartition(":")
    if not sep or not sid or not gno_text.isdigit() or int(gno_text) < 1:
        raise CertifyError(f"not a GTID: {gtid!r}")
    return sid.lower(), int(gno_text)


class GtidSet:
    """An immutable set of GTIDs stored as merged GNO intervals per sid.

    Instances are hashable and compare by content. All operations return new
    sets; nothing is modified in place.  The intervals of a sid are one flat
    ``array('q')`` (16 bytes an interval: a Previous_gtids of a million intervals
    holds 16 MB, as its bytes in the log); GNOs are MySQL's, 1 to 2^63-1.
    """

    __slots__ = ("_sets", "_hash")

    def __init__(self, sets: Mapping[str, Iterable[Interval]] | None = None) -> None:
        self._sets: dict[str, array] = {}
        self._hash: int | None = None
        self._fill((sid, _flat(intervals)) for sid, intervals in (sets or {}).items())

    def _fill(self, flats: Iterable[tuple[str, array]]) -> None:
        merged: dict[str, array] = {}
        for sid, flat in flats:
            sid = sid.lower()
            if sid in merged:
                flat = merged[sid] + flat
            m = _merge(flat)
            if m:
                merged[sid] = m
            else:
                merged.pop(sid, None)
        self._sets = dict(sorted(merged.items()))

    @classmethod
    def _of_flats(cls, flats: Iterable[tuple[str, array]]) -> GtidSet:
        new = cls.__new__(cls)
        new._hash = None
        new._fill(flats)
        return new

    # ---- construction ----

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        """Parse MySQL's text form (``uuid:1-5:7,uuid2:tag:1-3``; ``""`` is empty).

        :raises CertifyError: on malformed text.
        """
        sets: dict[str, list[Interval]] = {}
        for part in text.replace("\n", "").split(","):
            part = part.strip()
            if not part:
                continue
            uuid, *tokens = part.split(":")
            sid = uuid.strip().lower()
            if not sid or not tokens:
                raise CertifyError(f"malformed GTID set element {part!r}")
            for token in tokens:
                token = token.strip()
                lo_text, _, hi_text = token.partition("-")
                if lo_text.isdigit() and (not hi_text or hi_text.isdigit()):
                    lo = int(lo_text)
                    hi = int(hi_text) if hi_text else lo
                    if lo < 1 or hi < lo:
                        raise CertifyError(f"bad GNO interval {token!r} in {part!r}")
                    sets.setdefault(sid, []).append((lo, hi))
                elif token and (token[0].isalpha() or token[0] == "_"):
                    sid = f"{uuid.strip()}:{token}".lower()
                else:
                    raise CertifyError(f"bad GTID set token {token!r} in {part!r}")
        return cls(sets)

    @classmethod
    def of(cls, gtids: Iterable[str]) -> GtidSet:
        """Build a set from GTID strings (``uuid:gno`` / ``uuid:tag:gno``)."""
        sets: dict[str, list[Interval]] = {}
        for gtid in gtids:
            sid, gno = split_gtid(gtid)
            sets.setdefault(sid, []).append((gno, gno))
        return cls(sets)

    # ---- algebra ----

    def add(self, gtid: str) -> GtidSet:
        """Return this set plus one GTID."""
        sid, gno = split_gtid(gtid)
        if _member(self._sets.get(sid, _EMPTY), gno):
            return self
        return GtidSet._of_flats([*self._sets.items(), (sid, _flat([(gno, gno)]))])

    def union(self, other: GtidSet) -> GtidSet:
        """Return the union of two sets."""
        return GtidSet._of_flats([*self._sets.items(), *other._sets.items()])

    def intersection(self, other: GtidSet) -> GtidSet:
        """Return the GTIDs present in both sets."""
        return GtidSet._of_flats((sid, _intersect(iv, other._sets[sid]))
                                 for sid, iv in self._sets.items() if sid in other._sets)

    def is_subset(self, other: GtidSet) -> bool:
        """True if every GTID of this set is in ``other`` (equal sets included)."""
        return all(sid in other._sets and _covers(other._sets[sid], iv)
                   for sid, iv in self._sets.items())

    def is_strict_subset(self, other: GtidSet) -> bool:
        """``is_subset`` and not equal (MySQL's ``is_subset_not_equals``)."""
        return self != other and self.is_subset(other)


    # ---- the binary form's view (Previous_gtids, Transaction_context snapshots) ----

    @classmethod
    def from_sids(cls, sids: Iterable[tuple[UUID, str | None, Iterable[GtidInterval]]]
                  ) -> GtidSet:
        """A set from decoded ``(uuid, tag, closed intervals)`` entries."""
        return cls._of_flats(
            (f"{sid}:{tag}" if tag else str(sid), _flat((i.start, i.end) for i in intervals))
            for sid, tag, intervals in sids)

    @classmethod
    def from_flat(cls, sids: Iterable[tuple[UUID, str | None, array]]) -> GtidSet:
        """A set from ``(uuid, tag, intervals)`` entries whose closed intervals are
        one flat ``array('q')`` ``[start0, end0, start1, end1, ...]`` (taken over:
        the caller must not change it)."""
        return cls._of_flats((f"{sid}:{tag}" if tag else str(sid), flat)
                             for sid, tag, flat in sids)

    @property
    def sids(self) -> tuple[tuple[UUID, str | None, Sequence[GtidInterval]], ...]:
        """``(uuid, tag, closed intervals)`` per member server and tag, in order; the
        intervals are a read-only sequence of :class:`GtidInterval`."""
        out = []
        for key, flat in self._sets.items():
            uuid, _, tag = key.partition(":")
            out.append((UUID(uuid), tag or None, _Intervals(flat)))
        return tuple(out)

    def __contains__(self, gtid: object) -> bool:
        if isinstance(gtid, Gtid):
            gtid = str(gtid)
        if not isinstance(gtid, str):
            return False
        sid, gno = split_gtid(gtid)
        return _member(self._sets.get(sid, _EMPTY), gno)

    def __bool__(self) -> bool:
        return bool(self._sets)

    def __len__(self) -> int:
        return sum(sum(f[1::2]) - sum(f[0::2]) + (len(f) >> 1) for f in self._sets.values())

    def __iter__(self) -> Iterator[str]:
        for sid, f in self._sets.items():
            for k in range(0, len(f), 2):
                for gno in range(f[k], f[k + 1] + 1):
                    yield f"{sid}:{gno}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GtidSet) and self._sets == other._sets

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple((sid, f.tobytes()) for sid, f in self._sets.items()))
        return self._hash

    def __str__(self) -> str:
        parts = []
        for sid, f in self._sets.items():
            text = ":".join(f"{lo}" if lo == hi else f"{lo}-{hi}"
                            for lo, hi in zip(f[0::2], f[1::2]))
            parts.append(f"{sid}:{text}")
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"GtidSet({str(self)!r})"


_EMPTY = array("q")


_UUID = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
_TAG = r"[A-Za-z_][A-Za-z0-9_]{0,31}"
_MARIA = re.compile(r"^(\d+)-(\d+)-(\d+)$")


class GtidFilter:
    """Membership test for ``--include-gtids`` / ``--exclude-gtids`` text.

    Accepts MySQL sets (``uuid:1-5:7,uuid:tag:3``) and MariaDB GTID lists
    (``0-1-100,1-1-5``; a MariaDB entry matches that exact GTID).

    Example::

        >>> f = GtidFilter("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:9")
        >>> f.matches("3e11fa47-71ca-11e1-9e33-c80aa9429562:4"), f.matches("3e11fa47-71ca-11e1-9e33-c80aa9429562:6")
        (True, False)
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._mysql: dict[tuple[str, str | None], list[tuple[int, int]]] = {}
        self._maria: set[str] = set()
        self._parse(text)

    def _parse(self, text: str) -> None:
        for item in filter(None, (part.strip() for part in text.split(","))):
            if _MARIA.match(item):
                self._maria.add(item)
                continue
            fields = item.split(":")
            try:
                sid = str(UUID(fields[0]))
            except ValueError:
                raise UsageError(f"not a GTID set: {item!r}") from None
            tag: str | None = None
            for field in fields[1:]:
                if re.fullmatch(_TAG, field):
                    tag = field.lower()
                    continue
                lo, _, hi = field.partition("-")
                if not lo.isdigit() or (hi and not hi.isdigit()):
                    raise UsageError(f"not a GTID interval: {field!r} in {item!r}")
                self._mysql.setdefault((sid, tag), []).append((int(lo), int(hi or lo)))

    def matches(self, gtid: str | None) -> bool:
        """True when the GTID text (``uuid:gno``, ``uuid:tag:gno`` or MariaDB form) is in the set."""
        if gtid is None:
            return False
        if gtid in self._maria:
            return True
        head, _, gno = gtid.rpartition(":")
        if not gno.isdigit():
            return False
        sid, _, tag = head.partition(":")
        ranges = self._mysql.get((sid, tag or None), ())
        n = int(gno)
        return any(lo <= n <= hi for lo, hi in ranges)
