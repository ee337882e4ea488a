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
from dataclasses import dataclass
from uuid import UUID

from collections.abc import Iterable, Iterator, Mapping

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


def _merge(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    """Sort and coalesce inclusive intervals (adjacent ones are merged)."""
    out: list[Interval] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def _covers(outer: tuple[Interval, ...], inner: tuple[Interval, ...]) -> bool:
    """True if every GNO of ``inner`` is in ``outer`` (both merged, sorted)."""
    i = 0
    for lo, hi in inner:
        while i < len(outer) and outer[i][1] < lo:
            i += 1
        if i == len(outer) or outer[i][0] > lo or outer[i][1] < hi:
            return False
    return True


def _intersect(a: tuple[Interval, ...], b: tuple[Interval, ...]) -> tuple[Interval, ...]:
    out: list[Interval] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


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
    sets; nothing is modified in place.
    """

    __slots__ = ("_sets", "_hash")

    def __init__(self, sets: Mapping[str, Iterable[Interval]] | None = None) -> None:
        merged: dict[str, tuple[Interval, ...]] = {}
        for sid, intervals in (sets or {}).items():
            m = _merge(intervals)
            if m:
                merged[sid.lower()] = m
        self._sets: dict[str, tuple[Interval, ...]] = dict(sorted(merged.items()))
        self._hash: int | None = None

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
        if gno in _Members(self._sets.get(sid, ())):
            return self
        sets = dict(self._sets)
        sets[sid] = _merge((*sets.get(sid, ()), (gno, gno)))
        return GtidSet(sets)

    def union(self, other: GtidSet) -> GtidSet:
        """Return the union of two sets."""
        sets: dict[str, list[Interval]] = {k: list(v) for k, v in self._sets.items()}
        for sid, intervals in other._sets.items():
            sets.setdefault(sid, []).extend(intervals)
        return GtidSet(sets)

    def intersection(self, other: GtidSet) -> GtidSet:
        """Return the GTIDs present in both sets."""
        return GtidSet({sid: _intersect(iv, other._sets[sid])
                        for sid, iv in self._sets.items() if sid in other._sets})

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
        sets: dict[str, list[Interval]] = {}
        for sid, tag, intervals in sids:
            key = f"{sid}:{tag}" if tag else str(sid)
            sets.setdefault(key, []).extend((i.start, i.end) for i in intervals)
        return cls(sets)

    @property
    def sids(self) -> tuple[tuple[UUID, str | None, tuple[GtidInterval, ...]], ...]:
        """``(uuid, tag, closed intervals)`` per member server and tag, in order."""
        out = []
        for key, intervals in self._sets.items():
            uuid, _, tag = key.partition(":")
            out.append((UUID(uuid), tag or None,
                        tuple(GtidInterval(lo, hi) for lo, hi in intervals)))
        return tuple(out)

    def __contains__(self, gtid: object) -> bool:
        if isinstance(gtid, Gtid):
            gtid = str(gtid)
        if not isinstance(gtid, str):
            return False
        sid, gno = split_gtid(gtid)
        return gno in _Members(self._sets.get(sid, ()))

    def __bool__(self) -> bool:
        return bool(self._sets)

    def __len__(self) -> int:
        return sum(hi - lo + 1 for iv in self._sets.values() for lo, hi in iv)

    def __iter__(self) -> Iterator[str]:
        for sid, intervals in self._sets.items():
            for lo, hi in intervals:
                for gno in range(lo, hi + 1):
                    yield f"{sid}:{gno}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GtidSet) and self._sets == other._sets

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self._sets.items()))
        return self._hash

    def __str__(self) -> str:
        parts = []
        for sid, intervals in self._sets.items():
            text = ":".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in intervals)
            parts.append(f"{sid}:{text}")
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"GtidSet({str(self)!r})"


class _Members:
    """``gno in _Members(intervals)`` by binary search over merged intervals."""

    __slots__ = ("_iv",)

    def __init__(self, intervals: tuple[Interval, ...]) -> None:
        self._iv = intervals

    def __contains__(self, gno: int) -> bool:
        lo, hi = 0, len(self._iv)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._iv[mid][1] < gno:
                lo = mid + 1
            else:
                hi = mid
        return lo < len(self._iv) and self._iv[lo][0] <= gno


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
