"""Time zones follow mysqlbinlog: local time by default, named in text, offsets in JSON.

mysqlbinlog (and mariadb-binlog) print the ``#YYMMDD hh:mm:ss`` dates with
``localtime_r`` and read ``--start-datetime``/``--stop-datetime`` with
``my_system_gmt_sec``, both in the process's zone (``TZ``, else
``/etc/localtime``).  The peer here is the installed ``mariadb-binlog`` run under
the same ``TZ`` as repltool, on a copy of a MariaDB corpus log whose event
timestamps were moved onto the days New York's clocks change (2022-11-06: 01:00-02:00
happens twice; 2022-03-13: 02:00-03:00 does not happen), so that the header dates
and the windows cross a DST change, a half-hour zone (Asia/Kolkata) and a POSIX
``TZ`` rule that the time-zone database does not name.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from datetime import datetime
from pathlib import Path

import pytest

from repltool.binlog import read_events, read_transactions
from repltool.binlog.window import local_timezone, parse_datetime, resolve_timezone, zone_name

SERIAL = "mariadb/serial/mysql-bin.000001"
FALL = 1667707200       # 2022-11-06 04:00 UTC = 00:00 EDT; the log spans 4 hours
SPRING = 1647147600     # 2022-03-13 05:00 UTC = 00:00 EST
ZONES = ["America/New_York", "Asia/Kolkata", "EST5EDT,M3.2.0,M11.1.0"]


def _shifted(corpus: Path, dst: Path, t0: int, span: int = 4 * 3600) -> Path:
    """The first 150 transactions of the serial log, event timestamps spread evenly over
    ``span`` seconds from ``t0`` (CRC32s recomputed)."""
    src = corpus / SERIAL
    end = list(read_transactions(src))[150].end_offset
    data = bytearray(src.read_bytes()[:end])
    events = [e for e in read_events(src) if e.pos.offset < end]
    for i, e in enumerate(events):
        o = e.pos.offset
        struct.pack_into("<I", data, o, t0 + i * span // len(events))
        if e.crc is not None:
            stop = o + e.event_size
            struct.pack_into("<I", data, stop - 4, zlib.crc32(bytes(data[o:stop - 4])))
    dst.write_bytes(bytes(data))
    return dst


@pytest.fixture(scope="module")
def logs(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("tz")
    return {"fall": _shifted(corpus, d / "fall.000001", FALL),
            "spring": _shifted(corpus, d / "spring.000001", SPRING)}


def _run(args: list[str], tz: str) -> str:
    r = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, TZ=tz),
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _repltool(*args: str, tz: str) -> str:
    return _run([sys.executable, "-m", "repltool", *args], tz)


def _peer(*args: str, tz: str) -> str:
    binlog = shutil.which("mariadb-binlog")
    assert binlog is not None, "mariadb-binlog is installed on the test machines"
    return _run([binlog, *args], tz)


def _dates(text: str) -> list[str]:
    """The header lines' dates, server ids and end positions, in order."""
    return [" ".join(line.split()[:7]) for line in text.splitlines()
            if line.startswith("#") and " server id " in line[:30]]


def _offsets(text: str, after: int) -> list[int]:
    """``# at N`` offsets at or after ``after`` (mysqlbinlog leaves out the control events
    before a --start-datetime that dump always prints)."""
    return [int(line[5:]) for line in text.splitlines()
            if line.startswith("# at ") and int(line[5:]) >= after]


#: Wall times around the two changes (New York's): an hour that happens twice, its
#: edges, an hour that does not happen, its edges, and ordinary times.
WINDOWS = {
    "fall": ["2022-11-06 00:59:59", "2022-11-06 01:00:00", "2022-11-06 01:30:00",
             "2022-11-06 02:00:00", "2022-11-06 06:10:00", "2022-11-06 11:29:59"],
    "spring": ["2022-03-13 01:59:59", "2022-03-13 02:00:00", "2022-03-13 02:30:00",
               "2022-03-13 03:00:00", "2022-03-13 08:45:00", "2022-03-13 13:00:00"],
}


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("day", ["fall", "spring"])
def test_dump_follows_mariadb_binlog_under_the_same_tz(logs: dict[str, Path], zone: str,
                                                       day: str) -> None:
    """Without --timezone, dump prints the header dates mariadb-binlog prints under the
    same TZ, and --start-datetime / --stop-datetime cut at the same events, also on a
    wall time that happens twice or never."""
    log = str(logs[day])
    first = next(iter(read_transactions(log))).start.offset
    whole = _repltool("dump", log, tz=zone)
    peer = _peer(log, tz=zone)
    assert _dates(whole) == _dates(peer) and len(_dates(peer)) > 1000
    cuts = set()
    for when in WINDOWS[day]:
        for option in ("--start-datetime", "--stop-datetime"):
            ours = _offsets(_repltool("dump", option, when, log, tz=zone), first)
            theirs = _offsets(_peer(option, when, log, tz=zone), first)
            assert ours == theirs, (option, when)
            cuts.add(len(theirs))
    assert len(cuts) >= 3         # nothing, everything, and at least one cut inside


def test_named_zone_equals_local_under_that_tz(logs: dict[str, Path], cli) -> None:
    """--timezone America/New_York in any process prints and reads as TZ=America/New_York
    does (the in-process run has the test process's TZ, whatever it is)."""
    log = logs["fall"]
    window = ["--start-datetime", "2022-11-06 01:30:00", "--stop-datetime",
              "2022-11-06 02:10:00"]
    named, _ = cli("dump", "--timezone", "America/New_York", *window, log)
    local = _repltool("dump", *window, str(log), tz="America/New_York")
    assert named == local and _dates(named)


def test_the_zone_is_named_in_text(logs: dict[str, Path]) -> None:
    """dump names the zone of its header dates, the commit-timestamp comments carry the
    zone's abbreviation, stats' range table names the zone."""
    log = str(logs["fall"])
    dump = _repltool("dump", log, tz="Asia/Kolkata")
    assert ("# repltool: the dates of the '#YYMMDD hh:mm:ss' lines are in time zone "
            "Asia/Kolkata (--timezone)") in dump.splitlines()[:8]
    assert "#221106  9:30:" in dump                 # 04:00 UTC is 09:30 IST
    stats = _repltool("stats", log, tz="Asia/Kolkata")
    assert "times in Asia/Kolkata" in stats and "2022-11-06 09:30:" in stats and " IST " in stats
    utc = _repltool("stats", "--timezone", "UTC", log, tz="Asia/Kolkata")
    assert "times in UTC" in utc and "2022-11-06 04:00:" in utc
    posix = _repltool("dump", "--stop-position", "1000", log, tz="IST-5:30")
    assert "time zone local (TZ=IST-5:30)" in posix and "#221106  9:30:" in posix


def _check_iso(epoch: int, text: str, offset: str, micros: bool = False) -> None:
    dt = datetime.fromisoformat(text)
    assert text.endswith(offset)
    assert (round(dt.timestamp() * 1_000_000) if micros else int(dt.timestamp())) == epoch


@pytest.mark.parametrize("zone,offsets", [("Asia/Kolkata", {"+05:30"}),
                                          ("America/New_York", {"-04:00", "-05:00"}),
                                          ("UTC", {"+00:00"})])
def test_json_carries_iso_datetimes_with_the_zone_offset(logs: dict[str, Path], zone: str,
                                                         offsets: set[str]) -> None:
    """Every time in JSON keeps its number and gets the same instant in ISO 8601 with the
    offset of the zone at that instant (both of New York's on the fall day)."""
    log = str(logs["fall"])
    seen = set()
    for line in _repltool("dump", "--format", "jsonl", log, tz=zone).splitlines():
        d = json.loads(line)
        _check_iso(d["timestamp"], d["datetime"], d["datetime"][-6:])
        seen.add(d["datetime"][-6:])
    assert seen == offsets
    stats = json.loads(_repltool("stats", "--format", "json", log, tz=zone))
    for f in (*stats["files"], stats["total"]):
        for end in ("first", "last"):
            _check_iso(f[f"{end}_timestamp"], f[f"{end}_datetime"],
                       f[f"{end}_datetime"][-6:])
    # the log starts at 00:00 EDT (-04:00) and ends after 01:00 EST (-05:00) in New York
    first, last = ("-04:00", "-05:00") if zone == "America/New_York" else (min(offsets),) * 2
    assert stats["total"]["first_datetime"][-6:] == first
    assert stats["total"]["last_datetime"][-6:] == last


def test_commit_timestamps_in_json_keep_microseconds(corpus: Path) -> None:
    """MySQL 8.0's commit timestamps (microseconds) get ISO datetimes with microseconds."""
    log = str(next((corpus / "mysql" / "mysql80").glob(
        "*data_wl13352_8015.zip__data_upgrade__binlog.000002")))
    n = 0
    for line in _repltool("dump", "--format", "jsonl", log, tz="Asia/Kolkata").splitlines():
        d = json.loads(line)
        for key in ("original_commit", "immediate_commit"):
            if d.get(f"{key}_timestamp"):
                _check_iso(d[f"{key}_timestamp"], d[f"{key}_datetime"], "+05:30", micros=True)
                n += 1
    assert n > 0


def test_local_zone_is_the_c_librarys() -> None:
    """local_timezone reads TZ as the C library does: an IANA name, ':NAME', a file, an
    empty TZ (UTC), or a POSIX rule (the C library's own rules)."""
    code = ("from repltool.binlog.window import local_timezone, zone_name; "
            "print(zone_name(local_timezone()))")
    for tz, name in [("Asia/Kolkata", "Asia/Kolkata"), (":Europe/Paris", "Europe/Paris"),
                     ("/usr/share/zoneinfo/America/New_York", "America/New_York"),
                     ("", "UTC"), ("IST-5:30", "local (TZ=IST-5:30)")]:
        assert _run([sys.executable, "-c", code], tz).strip() == name
    assert zone_name(resolve_timezone("UTC")) == "UTC"
    assert zone_name(local_timezone()) == zone_name(resolve_timezone("local"))


@pytest.mark.parametrize("now", [1657000000, 1668000000])    # July and November 2022
def test_parse_follows_my_system_gmt_sec(now: int) -> None:
    """The wall time that happens twice is read as the later one (EST), the skipped one as
    the next real hour, whatever the season mysqlbinlog starts in (its first guess)."""
    ny = resolve_timezone("America/New_York")
    assert parse_datetime("2022-11-06 01:30:00", tz=ny, now=now) == 1667716200   # 06:30Z
    assert parse_datetime("2022-11-06 00:30:00", tz=ny, now=now) == 1667709000   # EDT
    assert parse_datetime("2022-03-13 02:30:00", tz=ny, now=now) == 1647154800   # 07:00Z
    assert parse_datetime("2022-03-13 03:30:00", tz=ny, now=now) == 1647156600
    kolkata = resolve_timezone("Asia/Kolkata")
    assert parse_datetime("2022-11-06 09:30:00", tz=kolkata, now=now) == FALL
