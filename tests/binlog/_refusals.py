"""Why the compiled core handed a read over to the general reader, checked against the
input (``tests/writeset/test_fused.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

from repltool.binlog import EventType
from repltool.binlog.reader import ReadOptions, read_events, structs_for
from repltool.binlog.transactions import GROUPING_TYPES
from repltool.errors import ReplToolError


def general_transactions(paths: list[Path], verify: bool):  # type: ignore[no-untyped-def]
    from repltool.binlog import read_transactions
    try:
        return ("ok", list(read_transactions(paths, ReadOptions(verify_checksum=verify,
                                                                types=GROUPING_TYPES))))
    except ReplToolError as exc:
        return ("error", type(exc).__name__, str(exc))


def core_refusal_is_true(paths: list[Path], verify: bool, reason: str) -> None:
    """The compiled core's reason for handing over (``file:offset: why``, as
    :class:`~repltool.binlog.engine.Unsupported` words it) holds for the input."""
    from repltool.binlog import engine
    from repltool.binlog.corescan import CAPTURE_REFUSED, core_roles
    general = general_transactions(paths, verify)
    m = re.fullmatch(r"(.*):(\d+): (.*)", reason, re.S)
    why = m.group(3) if m else reason
    t = re.fullmatch(r"event type (\d+)", why)
    if t:
        tc = int(t.group(1))
        assert not core_roles(engine.compiled_core())[tc] or tc in CAPTURE_REFUSED, tc
        if general[0] == "error":
            return
        seen = {ev.type_code for ev in read_events(
            paths, ReadOptions(verify_checksum=False, types=frozenset()))}
        assert tc in seen, (tc, seen)
    elif why == "CRC32 mismatch":
        assert verify and general[0] == "error" and general[1] == "ChecksumMismatch", general
    elif why in ("truncated event", "event runs past the end of the file", "event too small",
                 "event_size below the header"):
        assert general[0] == "error" or any(t.truncated for t in general[1]), why
    elif why.startswith("Format_description"):
        fdes = [ev.body for ev in read_events(paths, ReadOptions(
            verify_checksum=False, types=frozenset({EventType.FORMAT_DESCRIPTION_EVENT})))]
        assert any(f.binlog_version != 4 or structs_for(f).lenient
                   or structs_for(f).post_header(EventType.QUERY_EVENT, 13) != 13
                   or structs_for(f).post_header(EventType.TABLE_MAP_EVENT, 8) != 8
                   for f in fdes) or len(fdes) > 1, fdes
    elif why == "no binlog magic":          # the reader refuses the file too
        assert general[0] == "error", general
    else:                                   # the reader's own error, passed through
        assert general[0] == "error" and (why in general[2] or general[2] in why), \
            (reason, general)
