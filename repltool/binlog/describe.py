"""Plain-data views of events for JSON output and for text renderers.

Pure functions: an :class:`~repltool.binlog.events.Event` in, dicts and strings
out.  Nothing here prints; :mod:`repltool.cli` renders.
"""

from __future__ import annotations

import dataclasses
from datetime import timezone, tzinfo
from typing import Any
from uuid import UUID

from .events import (
    Event, FormatDescriptionBody, GtidBody, MariaGtidBody, PreviousGtidsBody, QueryBody,
    RowsBody, RowsQueryBody, TableMapBody, TransactionContextBody, UnknownBody,
)
from .gtid import GtidSet

_OMIT = {"status_vars", "metadata", "null_bitmap", "optional_metadata", "columns_before",
         "columns_after", "rows", "payload", "cert_info"}


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.hex()
    if isinstance(value, (UUID, GtidSet)):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


#: Body fields holding a time, and whether they count microseconds (else seconds).
_TIMES = {"create_timestamp": False, "original_commit_timestamp": True,
          "immediate_commit_timestamp": True}


def event_to_dict(ev: Event, tz: tzinfo | None = None) -> dict[str, Any]:
    """One JSON-ready object per event: header fields, then the body's fields.

    GTID events add ``gtid`` (``uuid:gno``, ``uuid:tag:gno``, ``ANONYMOUS`` or
    MariaDB ``domain-server-seq``); events inside a Transaction_payload add
    ``payload_pos``.  Large encoded blobs (row images, metadata) are left out.
    Every time keeps its number (``timestamp``: Unix seconds; the commit timestamps:
    microseconds) and is followed by the same instant in ISO 8601 with the UTC offset
    of ``tz`` (UTC when not given): ``datetime``, ``create_datetime`` (None when the
    FDE's field is 0, not set), ``original_commit_datetime``,
    ``immediate_commit_datetime`` (microseconds kept).
    """
    from .window import iso_datetime
    zone = timezone.utc if tz is None else tz
    out: dict[str, Any] = {
        "file": ev.pos.file,
        "pos": ev.pos.offset,
        "end_log_pos": ev.log_pos,
        "type_code": ev.type_code,
        "type": ev.type_name,
        "timestamp": ev.timestamp,
        "datetime": iso_datetime(ev.timestamp, zone),
        "server_id": ev.server_id,
        "size": ev.event_size,
        "flags": ev.flags,
    }
    if ev.pos.payload_offset is not None:
        out["payload_pos"] = ev.pos.payload_offset
    if ev.crc is not None:
        out["crc32"] = f"0x{ev.crc:08x}"
    body = ev.body
    if body is None:
        return out
    if isinstance(body, GtidBody):
        out["gtid"] = body.gtid_text
    elif isinstance(body, MariaGtidBody):
        out["gtid"] = f"{body.domain_id}-{ev.server_id}-{body.seq_no}"
    for f in dataclasses.fields(body):
        if f.name in _OMIT:
            continue
        value = out[f.name] = _plain(getattr(body, f.name))
        micros = _TIMES.get(f.name)
        if micros is not None:
            out[f.name[:-len("timestamp")] + "datetime"] = (
                iso_datetime(value, zone, micros=micros) if value else None)
    if isinstance(body, (QueryBody, RowsQueryBody)):
        out["query"] = body.text
    elif isinstance(body, PreviousGtidsBody):
        out["gtid_set"] = str(body.gtid_set)
    elif isinstance(body, TransactionContextBody):
        out["snapshot_version"] = str(body.snapshot_version)
    elif isinstance(body, UnknownBody):
        out["body_size"] = len(body.payload)
    elif isinstance(body, RowsBody):
        out["rows_size"] = len(body.rows)
    elif isinstance(body, FormatDescriptionBody):
        out["post_header_len"] = list(body.post_header_len)
    elif isinstance(body, TableMapBody):
        out["column_types"] = list(body.column_types)
    return out


def event_db(ev: Event) -> str | None:
    """The database an event applies to (Query default db, Table_map db), if it has one."""
    body = ev.body
    if isinstance(body, QueryBody):
        return body.db
    if isinstance(body, TableMapBody):
        return body.db
    return None
