"""Shared helpers of the binlog corpus tests: reference names, cached reads.

Every corpus file is read at most once per (path, options) in a session:
:func:`read_all` is memoised, so the tests may look at the same events from
several angles without paying for the big MariaDB sets again.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path

from repltool.binlog import FileInfo, ReadOptions, read_events
from repltool.binlog.events import Event
from repltool.errors import ReplToolError

#: Short event names used by ``expected/*.json`` -> MySQL/MariaDB type codes.
#: (The reference writes an int for a type it does not know, e.g. 48.)
SHORT_NAMES: dict[str, int] = {
    "START_V3": 1, "QUERY": 2, "STOP": 3, "ROTATE": 4, "INTVAR": 5, "LOAD": 6,
    "CREATE_FILE": 8, "APPEND_BLOCK": 9, "EXEC_LOAD": 10, "DELETE_FILE": 11, "NEW_LOAD": 12,
    "RAND": 13, "USER_VAR": 14, "FDE": 15, "XID": 16, "BEGIN_LOAD_QUERY": 17,
    "EXECUTE_LOAD_QUERY": 18, "TABLE_MAP": 19, "PRE_GA_WRITE_ROWS": 20,
    "PRE_GA_UPDATE_ROWS": 21, "PRE_GA_DELETE_ROWS": 22, "WRITE_ROWS_V1": 23,
    "UPDATE_ROWS_V1": 24, "DELETE_ROWS_V1": 25, "INCIDENT": 26, "HEARTBEAT": 27,
    "IGNORABLE": 28, "ROWS_QUERY": 29, "WRITE_ROWS": 30, "UPDATE_ROWS": 31, "DELETE_ROWS": 32,
    "GTID": 33, "ANONYMOUS_GTID": 34, "PREVIOUS_GTIDS": 35, "TRANSACTION_CONTEXT": 36,
    "VIEW_CHANGE": 37, "XA_PREPARE": 38, "PARTIAL_UPDATE_ROWS": 39, "TRANSACTION_PAYLOAD": 40,
    "HEARTBEAT_V2": 41, "GTID_TAGGED": 42,
    "MARIA_ANNOTATE_ROWS": 160, "MARIA_BINLOG_CHECKPOINT": 161, "MARIA_GTID": 162,
    "MARIA_GTID_LIST": 163, "MARIA_START_ENCRYPTION": 164,
}

SPECIAL_KEYS = ("not_binlog", "encrypted", "truncated", "no_fde")


def type_code(name: str | int) -> int:
    """Type code of a reference short name (ints pass through)."""
    if isinstance(name, int):
        return name
    return SHORT_NAMES[name]


@functools.lru_cache(maxsize=None)
def expected(path: Path) -> dict:
    """``expected/<source>/<name>.json`` of ``mysql/<source>/<name>``."""
    source, name = path.parent.name, path.name
    ref = path.parents[2] / "expected" / source / f"{name}.json"
    return json.loads(ref.read_text())


def special_kind(path: Path) -> str | None:
    """not_binlog / encrypted / truncated / no_fde for the reference's special files."""
    exp = expected(path)
    return next((k for k in SPECIAL_KEYS if exp.get(k)), None)


def is_normal(path: Path) -> bool:
    return special_kind(path) is None


def is_special(path: Path) -> bool:
    return special_kind(path) is not None


@dataclass(frozen=True)
class Read:
    """Everything one pass over a file produced."""

    events: tuple[Event, ...]
    error: ReplToolError | None
    info: FileInfo | None

    @property
    def outer(self) -> list[Event]:
        """Events in the file itself (not inside a Transaction_payload)."""
        return [e for e in self.events if e.pos.payload_offset is None]


@functools.lru_cache(maxsize=None)
def read_all(path: str | os.PathLike[str], verify: bool = False) -> Read:
    """All events of one file (every body decoded, raw bytes kept), and the error it ended with."""
    info: list[FileInfo] = []
    events: list[Event] = []
    error: ReplToolError | None = None
    try:
        for ev in read_events(os.fspath(path), ReadOptions(verify_checksum=verify), info):
            events.append(ev)
    except ReplToolError as exc:
        error = exc
    return Read(tuple(events), error, info[0] if info else None)
