"""GTIDs and GTID sets: MySQL ``uuid[:tag]:gno`` and MariaDB ``domain-server-seq``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from uuid import UUID

from ..errors import UsageError


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


@dataclass(frozen=True, slots=True)
class GtidSet:
    """A MySQL GTID set: for each (uuid, tag) a tuple of closed intervals.

    The binary encoding stores half-open intervals; :func:`decode` converts.
    """

    sids: tuple[tuple[UUID, str | None, tuple[GtidInterval, ...]], ...] = ()

    def __str__(self) -> str:
        parts = []
        for sid, tag, intervals in self.sids:
            ranges = ":".join(f"{i.start}" if i.start == i.end else f"{i.start}-{i.end}"
                              for i in intervals)
            head = f"{sid}:{tag}" if tag else f"{sid}"
            parts.append(f"{head}:{ranges}" if ranges else head)
        return ",".join(parts)

    def __contains__(self, gtid: object) -> bool:
        if not isinstance(gtid, Gtid):
            return False
        for sid, tag, intervals in self.sids:
            if sid == gtid.sid and tag == gtid.tag:
                return any(i.start <= gtid.gno <= i.end for i in intervals)
        return False


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
