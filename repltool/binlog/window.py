"""mysqlbinlog's selection options (positions, datetimes, GTID sets, databases, tables).

One :class:`Window` describes what ``--start-position``/``--stop-position``,
``--start-datetime``/``--stop-datetime``, ``--include-gtids``/``--exclude-gtids``,
``--database`` and ``--table`` select.  It is applied two ways:

* to *events* (:meth:`Window.event_filter`, what ``repltool dump`` prints):
  mysqlbinlog's own semantics, event by event - a start position inside a
  transaction prints its tail, a stop position inside one cuts it, ``--database``
  leaves out the other databases' events of a transaction;
* to *transactions* (:meth:`Window.select`, what the analysis commands read):
  whole transactions only, so that every analysed transaction is one the log
  holds completely.  A transaction is in the window when

  - it starts at or after ``--start-position`` (in the first file) and ends at
    or before ``--stop-position`` (in the last file; reading stops at the first
    transaction that does not);
  - its first event's timestamp is at or after ``--start-datetime``; reading
    stops at the first transaction whose timestamp is at or after
    ``--stop-datetime`` (mysqlbinlog stops at the first such event);
  - its GTID is in ``--include-gtids`` and not in ``--exclude-gtids`` (a
    transaction without a GTID is never in an include set);
  - with ``--table``: it has rows events of one of the tables (in one of the
    ``--database`` databases, if given); with ``--database`` alone: it has rows
    events of a table of one of them, or a statement whose default database is
    one of them (BEGIN, COMMIT and XA statements do not count).

Timestamps are whole seconds since the epoch, as the event headers hold them;
:func:`parse_datetime` reads ``'YYYY-MM-DD hh:mm:ss'`` in a given zone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
import calendar
import time
from datetime import datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from ..errors import UsageError
from .constants import EventType
from .events import DAMAGED_TYPE, Event, GtidBody, MariaGtidBody, QueryBody, TableMapBody
from .gtid import GtidFilter

if TYPE_CHECKING:
    from .transactions import Transaction

CONTROL_TYPES = frozenset({
    EventType.FORMAT_DESCRIPTION_EVENT, EventType.ROTATE_EVENT, EventType.STOP_EVENT,
    EventType.PREVIOUS_GTIDS_LOG_EVENT, EventType.GTID_LIST_EVENT,
    EventType.BINLOG_CHECKPOINT_EVENT, EventType.START_EVENT_V3,
    EventType.START_ENCRYPTION_EVENT,
})
GTID_TYPES = frozenset({EventType.GTID_LOG_EVENT, EventType.ANONYMOUS_GTID_LOG_EVENT,
                        EventType.GTID_TAGGED_LOG_EVENT, EventType.MARIADB_GTID_EVENT})

_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")


class LocalTime(tzinfo):
    """The process's local time zone as the C library computes it (mysqlbinlog's
    ``localtime_r``), for a ``TZ`` the time-zone database does not name (a POSIX rule
    such as ``IST-5:30`` or ``EST5EDT,M3.2.0,M11.1.0``).

    It follows :pep:`495`: a wall time that occurs twice (the hour a clock is set
    back) is the earlier instant with ``fold=0`` and the later with ``fold=1``; a wall
    time that does not occur (the hour skipped) is read with the offset before the
    change (``fold=0``) or after it (``fold=1``), as :class:`zoneinfo.ZoneInfo` does.
    """

    @staticmethod
    def _offset(stamp: int) -> int:
        return time.localtime(stamp).tm_gmtoff

    def _instants(self, dt: datetime) -> tuple[list[int], int, int]:
        """The instants whose local wall time is ``dt`` (0, 1 or 2), and the offsets a
        day before and after it."""
        wall = calendar.timegm((dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second))
        before, after = self._offset(wall - 86400), self._offset(wall + 86400)
        found = sorted({wall - o for o in (before, after) if self._offset(wall - o) == o})
        return found, before, after

    def utcoffset(self, dt: datetime | None) -> timedelta:
        if dt is None:
            return timedelta(seconds=-time.timezone)
        found, before, after = self._instants(dt)
        if found:
            stamp = found[-1] if dt.fold and len(found) > 1 else found[0]
            return timedelta(seconds=self._offset(stamp))
        return timedelta(seconds=after if dt.fold else before)

    def dst(self, dt: datetime | None) -> timedelta:
        if dt is None:
            return timedelta(0)
        offset = self.utcoffset(dt)
        standard = -time.timezone
        return offset - timedelta(seconds=standard) if offset.total_seconds() != standard \
            else timedelta(0)

    def tzname(self, dt: datetime | None) -> str:
        if dt is None:
            return time.tzname[0]
        stamp = calendar.timegm(dt.replace(tzinfo=None).timetuple()) - int(
            self.utcoffset(dt).total_seconds())
        return time.localtime(stamp).tm_zone

    def fromutc(self, dt: datetime) -> datetime:
        stamp = calendar.timegm((dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second))
        local = dt + timedelta(seconds=self._offset(stamp))
        found, _, _ = self._instants(local)
        return local.replace(fold=1) if len(found) > 1 and stamp == found[-1] else local

    def __repr__(self) -> str:
        return "LocalTime()"


def _zone_key(path: str) -> str:
    """The IANA name of a zone file (``/etc/localtime`` links to ``.../zoneinfo/NAME``;
    Debian also writes the name to ``/etc/timezone``)."""
    import os
    target = os.path.realpath(path)
    if "/zoneinfo/" in target:
        return target.split("/zoneinfo/", 1)[1]
    if path == "/etc/localtime":
        try:
            with open("/etc/timezone", encoding="ascii") as f:
                name = f.read().strip()
            if name:
                return name
        except (OSError, ValueError):
            pass
    return path


def local_timezone() -> tzinfo:
    """The process's local time zone, the one mysqlbinlog prints and reads datetimes in
    (the C library's ``localtime_r``): the ``TZ`` environment variable, else
    ``/etc/localtime``, else UTC.

    A zone the time-zone database names is returned as a :class:`zoneinfo.ZoneInfo`
    (its ``key`` is the name: ``Asia/Kolkata``); a POSIX rule in ``TZ`` as
    :class:`LocalTime` (the C library's rules).
    """
    import os
    from zoneinfo import ZoneInfo
    tz = os.environ.get("TZ")
    if tz is None:
        try:
            with open("/etc/localtime", "rb") as f:
                return ZoneInfo.from_file(f, key=_zone_key("/etc/localtime"))
        except (OSError, ValueError):
            return timezone.utc         # the C library's default without a zone file
    name = tz[1:] if tz.startswith(":") else tz
    if not name or name.upper() in ("UTC", "UTC0", "GMT", "GMT0"):
        return timezone.utc
    try:
        if name.startswith("/"):
            with open(name, "rb") as f:
                return ZoneInfo.from_file(f, key=_zone_key(name))
        return ZoneInfo(name)
    except (ValueError, OSError, LookupError):
        return LocalTime()


def zone_name(tz: tzinfo) -> str:
    """How text output names a zone: ``UTC``, an IANA name (``Asia/Kolkata``), or
    ``local (TZ=...)`` for a POSIX rule."""
    import os
    if tz is timezone.utc:
        return "UTC"
    key = getattr(tz, "key", None)
    if key:
        return str(key)
    if isinstance(tz, LocalTime):
        return f"local (TZ={os.environ.get('TZ', '')})"
    return str(tz)


def resolve_timezone(name: str) -> tzinfo:
    """``local`` (:func:`local_timezone`, mysqlbinlog's zone), ``UTC`` or an IANA name
    (``Europe/Paris``).

    :raises UsageError: for a name the time-zone database does not know.
    """
    if name.upper() == "UTC":
        return timezone.utc
    if name.lower() == "local":
        return local_timezone()
    from zoneinfo import ZoneInfo
    try:
        return ZoneInfo(name)
    except (ValueError, OSError, LookupError):
        raise UsageError(f"--timezone {name}: not a time zone (local, UTC or an IANA name "
                         "such as Europe/Paris)") from None


def iso_datetime(ts: int | float, tz: tzinfo = timezone.utc, micros: bool = False
                 ) -> str | None:
    """Epoch seconds as ISO 8601 in ``tz`` with its UTC offset
    (``2022-11-24T19:37:30+05:30``); ``micros``: ``ts`` is in microseconds and the text
    keeps them (``...:30.123456+05:30``).  None for a time no calendar date holds.

    Example::

        >>> iso_datetime(1669298850, resolve_timezone("Asia/Kolkata"))
        '2022-11-24T19:37:30+05:30'
    """
    if not micros:
        return _iso_second(int(ts), tz)
    try:
        secs, us = divmod(int(ts), 1_000_000)
        return datetime.fromtimestamp(secs, tz).replace(microsecond=us).isoformat(
            timespec="microseconds")
    except (OverflowError, OSError, ValueError):
        return None


@lru_cache(maxsize=1024)            # a log's events share their seconds
def _iso_second(ts: int, tz: tzinfo) -> str | None:
    try:
        return datetime.fromtimestamp(ts, tz).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return None


def format_datetime(ts: int, tz: tzinfo = timezone.utc, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    """Epoch seconds as text in ``tz``."""
    return datetime.fromtimestamp(ts, tz).strftime(fmt)


def _wall_diff(wall: datetime, local: datetime) -> int:
    """Seconds from ``local``'s wall time to ``wall``'s, days as mysqlbinlog counts them
    (a month wrap is one day)."""
    days = wall.day - local.day
    if days < -1:
        days = 1
    elif days > 1:
        days = -1
    return (3600 * (days * 24 + wall.hour - local.hour) + 60 * (wall.minute - local.minute)
            + wall.second - local.second)


def _system_gmt_sec(wall: datetime, tz: tzinfo, zone_guess: int) -> tuple[int, int]:
    """mysqlbinlog's ``my_system_gmt_sec`` (mysys/my_time.c, sql-common/my_time.c in
    MariaDB): the instant of the local wall time ``wall`` in ``tz``, found from the
    guess ``wall + zone_guess - 3600`` with at most two corrections; a wall time the
    clock skips (the hour set forward) moves to the start of the next real hour.
    Returns the instant and the zone offset it settled on (the next guess)."""
    def local(stamp: int) -> datetime:
        return datetime.fromtimestamp(stamp, tz)
    naive = calendar.timegm((wall.year, wall.month, wall.day, wall.hour, wall.minute,
                             wall.second))
    stamp = naive + zone_guess - 3600
    current = zone_guess
    now = local(stamp)
    loop = 0
    while loop < 2 and (wall.hour, wall.minute, wall.second) != (now.hour, now.minute,
                                                                  now.second):
        diff = _wall_diff(wall, now)
        current += diff + 3600
        stamp += diff
        now = local(stamp)
        loop += 1
    if loop == 2 and wall.hour != now.hour:
        diff = _wall_diff(wall, now)
        if diff == 3600:
            stamp += 3600 - wall.minute * 60 - wall.second
        elif diff == -3600:
            stamp -= wall.minute * 60 + wall.second
    return stamp, current


def _zone_guess(tz: tzinfo, now: float | None = None) -> int:
    """``my_init_time``: the guess mysqlbinlog starts from, computed at start-up from the
    current wall time (``now``: Unix seconds, the present when None)."""
    wall = datetime.fromtimestamp(int(time.time() if now is None else now), tz)
    return _system_gmt_sec(wall, tz, 3600)[1]


def parse_datetime(value: str | None, name: str = "datetime",
                   tz: tzinfo = timezone.utc, now: float | None = None) -> int | None:
    """Seconds since the epoch of ``'YYYY-MM-DD hh:mm:ss'`` (or ``YYYY-MM-DD``) in ``tz``,
    as mysqlbinlog reads ``--start-datetime``/``--stop-datetime`` (``my_system_gmt_sec``
    with the guess of ``my_init_time`` at ``now``): a wall time that occurs twice (the
    hour a clock is set back) is what that search finds, one the clock skips (the hour
    set forward) is the start of the next real hour.

    Example::

        >>> parse_datetime("2024-01-02 03:04:05")
        1704164645
    """
    if value is None:
        return None
    for fmt in _FORMATS:
        try:
            dt = datetime.strptime(value, fmt)
        except ValueError:
            continue
        if tz is timezone.utc:
            return calendar.timegm(dt.timetuple())
        return _system_gmt_sec(dt, tz, _zone_guess(tz, now))[0]
    raise UsageError(f"{name}: cannot read {value!r} as 'YYYY-MM-DD hh:mm:ss'")


def parse_position(value: str | None, name: str = "position"
                   ) -> tuple[int | None, dict[int, int] | None]:
    """``(offset, None)``, or ``(None, {domain: seq_no})`` for MariaDB GTID positions
    (``D-S-N[,...]``, one per domain)."""
    if value is None:
        return None, None
    if value.isdigit():
        return int(value), None
    gtids: dict[int, int] = {}
    for item in filter(None, (x.strip() for x in value.split(","))):
        parts = item.split("-")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise UsageError(f"{name}: {value!r} is neither an offset nor MariaDB GTIDs "
                             "(domain-server-seq)")
        domain, _server, seq = map(int, parts)
        if domain in gtids:
            raise UsageError(f"{name}: two GTIDs of domain {domain}")
        gtids[domain] = seq
    return None, gtids


def parse_ids(value: str | None, name: str = "ids") -> frozenset[int]:
    """A comma-separated list of numbers (MariaDB domain / server ids)."""
    if not value:
        return frozenset()
    try:
        return frozenset(int(x) for x in value.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"{name}: {value!r} is not a comma-separated list of numbers") from None


@dataclass(frozen=True)
class Window:
    """What mysqlbinlog's selection options select (see the module's text).

    ``start_position``/``stop_position`` are offsets in the first / last input
    file; ``start_gtids``/``stop_gtids`` MariaDB's GTID positions
    (``{domain: seq_no}``); datetimes are epoch seconds.
    """

    start_position: int | None = None
    stop_position: int | None = None
    start_datetime: int | None = None
    stop_datetime: int | None = None
    include_gtids: GtidFilter | None = None
    exclude_gtids: GtidFilter | None = None
    databases: frozenset[str] = frozenset()
    tables: frozenset[str] = frozenset()
    start_gtids: dict[int, int] = field(default_factory=dict)
    stop_gtids: dict[int, int] = field(default_factory=dict)
    do_domains: frozenset[int] = frozenset()
    ignore_domains: frozenset[int] = frozenset()
    ignore_servers: frozenset[int] = frozenset()

    @classmethod
    def from_text(cls, *, start_position: str | None = None, stop_position: str | None = None,
                  start_datetime: str | None = None, stop_datetime: str | None = None,
                  include_gtids: str | None = None, exclude_gtids: str | None = None,
                  databases: Iterable[str] = (), tables: Iterable[str] = (),
                  tz: tzinfo = timezone.utc) -> Window:
        """A window from the options' text (``--start-position 4`` or ``0-1-5``, ...)."""
        start, start_gtids = parse_position(start_position, "--start-position")
        stop, stop_gtids = parse_position(stop_position, "--stop-position")
        return cls(start_position=start, stop_position=stop,
                   start_datetime=parse_datetime(start_datetime, "--start-datetime", tz),
                   stop_datetime=parse_datetime(stop_datetime, "--stop-datetime", tz),
                   include_gtids=GtidFilter(include_gtids) if include_gtids else None,
                   exclude_gtids=GtidFilter(exclude_gtids) if exclude_gtids else None,
                   databases=frozenset(databases), tables=frozenset(tables),
                   start_gtids=start_gtids or {}, stop_gtids=stop_gtids or {})

    @property
    def active(self) -> bool:
        """Whether any option selects: otherwise everything passes unchanged."""
        return not (self.start_position is None and self.stop_position is None
                    and self.start_datetime is None and self.stop_datetime is None
                    and self.include_gtids is None and self.exclude_gtids is None
                    and not self.databases and not self.tables and not self.start_gtids
                    and not self.stop_gtids and not self.do_domains
                    and not self.ignore_domains and not self.ignore_servers)

    @property
    def needs_events(self) -> bool:
        """Whether :meth:`select` reads ``Transaction.events`` (``--database``/``--table``):
        group the transactions with ``keep_events=True`` then."""
        return bool(self.databases or self.tables)

    def event_filter(self, files: Sequence[str]) -> EventFilter:
        """mysqlbinlog's event-by-event selection over the events of ``files``."""
        return EventFilter(self, files)

    def select(self, transactions: Iterable[Transaction], files: Sequence[str],
               cursor: WindowCursor | None = None) -> Iterator[Transaction]:
        """The transactions of ``files`` (read in this order) that are in the window.

        ``cursor``: go on with the state of a :meth:`cursor` that judged the
        transactions before these (a read handed over in the middle)."""
        if not self.active:
            yield from transactions
            return
        cur = self.cursor(files) if cursor is None else cursor
        if cur.stopped:
            return
        for trx in transactions:
            if cur.take(trx):
                yield trx
            elif cur.stopped:
                return

    def cursor(self, files: Sequence[str]) -> WindowCursor:
        """The verdicts of :meth:`select`, one transaction at a time (its state: the GTID
        domains that reached their stop position, whether reading has stopped)."""
        return WindowCursor(self, files)

    def gtid_ok(self, gtid: str | None, maria: tuple[int, int, int] | None) -> bool:
        """The GTID options' verdict on a transaction with this GTID."""
        if self.include_gtids is not None and not self.include_gtids.matches(gtid):
            return False
        if self.exclude_gtids is not None and self.exclude_gtids.matches(gtid):
            return False
        return maria is None or self.maria_ok(*maria)

    def maria_ok(self, domain: int, server: int, seq: int) -> bool:
        """mariadb-binlog's GTID positions and domain/server filters for a group:
        ``--start-position=D-S-N`` keeps the groups of domain D after N,
        ``--stop-position=D-S-N`` those up to N included (other domains pass)."""
        if domain in self.start_gtids and seq <= self.start_gtids[domain]:
            return False
        if domain in self.stop_gtids and seq > self.stop_gtids[domain]:
            return False
        if self.do_domains and domain not in self.do_domains:
            return False
        return domain not in self.ignore_domains and server not in self.ignore_servers

    def db_table_ok(self, ev: Event, table_ids: dict[int, tuple[str, str]]) -> bool | None:
        """mysqlbinlog's --database/--table verdict on one event: True, False, or None
        for events that always pass (GTID, BEGIN, COMMIT, XA, events without a name)."""
        body = ev.body
        db: str | None = None
        table: str | None = None
        if isinstance(body, QueryBody):
            if ev.type_code in GTID_TYPES:
                return None
            text = body.query[:16].strip().upper()
            if text in (b"BEGIN", b"COMMIT") or text.startswith(b"XA "):
                return None
            db = body.db
        elif isinstance(body, TableMapBody):
            db, table = body.db, body.table
        elif body is not None and hasattr(body, "table_id"):
            db, table = table_ids.get(getattr(body, "table_id"), (None, None))
        else:
            return None
        if self.databases and db not in self.databases:
            return False
        if self.tables:
            if table is None:
                return not self.databases or db in self.databases
            return table in self.tables or f"{db}.{table}" in self.tables
        return True

    def touches(self, trx: Transaction) -> bool:
        """Whether a rows event of the transaction is of a selected table (in a selected
        database), or, with --database alone, one of its statements runs in one."""
        for ev in trx.events:
            body = ev.body
            if isinstance(body, TableMapBody):
                if self.databases and body.db not in self.databases:
                    continue
                if not self.tables or body.table in self.tables or \
                        f"{body.db}.{body.table}" in self.tables:
                    return True
            elif isinstance(body, QueryBody) and not self.tables and \
                    ev.type_code not in GTID_TYPES and body.db in self.databases:
                text = body.query[:16].strip().upper()
                if text not in (b"BEGIN", b"COMMIT") and not text.startswith(b"XA "):
                    return True
        return False


def _maria_gtid(gtid: str | None) -> tuple[int, int, int] | None:
    if gtid is None:
        return None
    parts = gtid.split("-")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


class WindowCursor:
    """:meth:`Window.select`'s verdict on each transaction in read order
    (:meth:`take`); after a stop (``stopped``) no transaction is taken.  What it
    reads of a transaction: ``gtid``, ``maria_flags``, ``start``, ``end``,
    ``end_offset``, ``timestamp`` and, with ``--database``/``--table``, ``events``."""

    __slots__ = ("window", "first", "last", "reached", "stopped")

    def __init__(self, window: Window, files: Sequence[str]) -> None:
        self.window = window
        self.first, self.last = (files[0], files[-1]) if files else (None, None)
        self.reached: set[int] = set()
        self.stopped = False

    def take(self, trx: Transaction) -> bool:
        """Whether ``trx`` (the next transaction of the read) is in the window."""
        if self.stopped:
            return False
        w = self.window
        maria = _maria_gtid(trx.gtid) if trx.maria_flags is not None else None
        if w.stop_gtids and maria is not None:
            if self.reached >= w.stop_gtids.keys():
                self.stopped = True
                return False
            if maria[0] in w.stop_gtids and maria[2] >= w.stop_gtids[maria[0]]:
                self.reached.add(maria[0])
        if (w.stop_position is not None and trx.end.file == self.last
                and trx.end_offset > w.stop_position):
            self.stopped = True
            return False
        if w.stop_datetime is not None and trx.timestamp and \
                trx.timestamp >= w.stop_datetime:
            self.stopped = True
            return False
        if (w.start_position is not None and trx.start.file == self.first
                and trx.start.offset < w.start_position):
            return False
        if w.start_datetime is not None and trx.timestamp < w.start_datetime:
            return False
        if not w.gtid_ok(trx.gtid, maria):
            return False
        return not w.needs_events or w.touches(trx)


class EventFilter:
    """A :class:`Window` applied event by event, as mysqlbinlog applies its options.

    Positions apply like mysqlbinlog's: ``start`` to the first file, ``stop`` to
    the last.  GTID, database and table filters apply to the events of a
    transaction; control events (FDE, Rotate, Previous_gtids, ...) always pass.
    """

    def __init__(self, window: Window, files: Sequence[str]) -> None:
        self.window = window
        self.first, self.last = files[0], files[-1]
        self.gtid: str | None = None
        self.maria: tuple[int, int, int] | None = None     # (domain, server, seq) of the group
        self.table_ids: dict[int, tuple[str, str]] = {}

    @property
    def active(self) -> bool:
        return self.window.active

    def apply(self, events: Iterable[Event]) -> Iterator[Event]:
        w = self.window
        reached: set[int] = set()       # stop-position GTID domains done with
        for ev in events:
            f = ev.pos.file
            if w.stop_gtids and isinstance(ev.body, MariaGtidBody):
                # as mariadb-binlog: once every domain of the stop list got to its GTID,
                # reading stops (later groups of other domains are not printed either)
                if reached >= w.stop_gtids.keys():
                    return
                d = ev.body.domain_id
                if d in w.stop_gtids and ev.body.seq_no >= w.stop_gtids[d]:
                    reached.add(d)
            if w.stop_position is not None and f == self.last and \
                    ev.pos.offset >= w.stop_position:
                return
            if w.stop_datetime is not None and ev.timestamp >= w.stop_datetime and ev.timestamp:
                return
            if w.start_position is not None and f == self.first and \
                    ev.pos.offset < w.start_position:
                self._track(ev)
                if ev.type_code == EventType.FORMAT_DESCRIPTION_EVENT:
                    yield ev        # mysqlbinlog prints the FDE whatever the start position
                continue
            if self._keep(ev):
                yield ev

    def _track(self, ev: Event) -> None:
        body = ev.body
        if ev.type_code in GTID_TYPES:
            if isinstance(body, GtidBody):
                self.gtid = body.gtid_text
                self.maria = None
            elif isinstance(body, MariaGtidBody):
                self.gtid = f"{body.domain_id}-{ev.server_id}-{body.seq_no}"
                self.maria = (body.domain_id, ev.server_id, body.seq_no)
        elif ev.type_code in CONTROL_TYPES:
            self.gtid = None
            self.maria = None
        if isinstance(body, TableMapBody):
            self.table_ids[body.table_id] = (body.db, body.table)

    def _keep(self, ev: Event) -> bool:
        self._track(ev)
        w = self.window
        if ev.type_code in CONTROL_TYPES or ev.type_code == DAMAGED_TYPE:
            return True
        if w.start_datetime is not None and ev.timestamp < w.start_datetime:
            return False
        if not w.gtid_ok(self.gtid, self.maria):
            return False
        if w.needs_events:
            return w.db_table_ok(ev, self.table_ids) is not False
        return True


__all__ = ["CONTROL_TYPES", "EventFilter", "GTID_TYPES", "LocalTime", "Window",
           "WindowCursor", "format_datetime", "iso_datetime", "local_timezone", "parse_datetime", "parse_ids",
           "parse_position", "resolve_timezone", "zone_name"]
