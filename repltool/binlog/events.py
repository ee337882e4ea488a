"""Frozen records for decoded events: the header fields plus one body class per type.

Optional format features are ``None``, never a missing attribute.  Bodies are
produced by :mod:`repltool.binlog.decode`; construct containers never leave the
``binlog`` package.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Callable
from typing import NamedTuple
from uuid import UUID

from ..positions import Position
from .constants import EventType, type_name
from .gtid import Gtid, GtidSet


@dataclass(frozen=True, slots=True)
class FormatDescriptionBody:
    """FORMAT_DESCRIPTION_EVENT (15), or the pseudo-FDE repltool derives for v1/v3 files."""

    binlog_version: int
    server_version: str
    create_timestamp: int
    common_header_len: int
    post_header_len: bytes
    checksum_alg: int | None          # None: pre-5.6.1 server, no checksum byte

    @property
    def is_mariadb(self) -> bool:
        return "mariadb" in self.server_version.lower()

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        """(X, Y, Z) from the leading ``X.Y.Z`` of the server version, (0, 0, 0) if none."""
        return parse_version(self.server_version)


def parse_version(text: str) -> tuple[int, int, int]:
    """Leading ``X.Y.Z`` of a server version string, as MySQL's do_server_version_split does."""
    parts: list[int] = []
    for chunk in text.split(".", 2):
        digits = ""
        for ch in chunk:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    while len(parts) < 3:
        parts.append(0)
    return parts[0], parts[1], parts[2]


@dataclass(frozen=True, slots=True)
class StartV3Body:
    """START_EVENT_V3 (1): the first event of binlog versions 1 and 3 (MySQL 3.23–4.x)."""

    binlog_version: int
    server_version: str
    create_timestamp: int


@dataclass(frozen=True, slots=True)
class QueryBody:
    """QUERY_EVENT (2) and MariaDB QUERY_COMPRESSED_EVENT (165, ``query`` decompressed)."""

    thread_id: int
    exec_time: int
    error_code: int
    db: str
    status_vars: bytes = field(repr=False)
    query: bytes

    @property
    def text(self) -> str:
        return self.query.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class XidBody:
    xid: int


@dataclass(frozen=True, slots=True)
class RotateBody:
    """ROTATE_EVENT (4): ``position`` is a start offset in ``next_file``."""

    position: int
    next_file: str


@dataclass(frozen=True, slots=True)
class StopBody:
    pass


@dataclass(frozen=True, slots=True)
class IntvarBody:
    type: int          # 1 LAST_INSERT_ID, 2 INSERT_ID
    value: int


@dataclass(frozen=True, slots=True)
class RandBody:
    seed1: int
    seed2: int


@dataclass(frozen=True, slots=True)
class UserVarBody:
    name: str
    is_null: bool
    value_type: int | None
    charset: int | None
    value: bytes | None
    flags: int | None


@dataclass(frozen=True, slots=True)
class IncidentBody:
    incident: int      # 1 = LOST_EVENTS
    message: str


@dataclass(frozen=True, slots=True)
class RowsQueryBody:
    """ROWS_QUERY_LOG_EVENT (29) and MariaDB ANNOTATE_ROWS_EVENT (160)."""

    query: bytes

    @property
    def text(self) -> str:
        return self.query.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class GtidBody:
    """GTID_LOG_EVENT (33), ANONYMOUS_GTID_LOG_EVENT (34), GTID_TAGGED_LOG_EVENT (42).

    ``lt_type`` is the logical-timestamp typecode: None (5.6, no timestamps),
    2 (MySQL), 3 (repltool's delta16 layout).  Fields absent from the event are
    None; ``original_*`` equal ``immediate_*`` when the event does not carry them
    separately, as MySQL decodes them.
    """

    gtid_flags: int
    sid: UUID
    gno: int
    tag: str | None
    lt_type: int | None
    last_committed: int
    sequence_number: int
    immediate_commit_timestamp: int | None = None
    original_commit_timestamp: int | None = None
    transaction_length: int | None = None
    immediate_server_version: int | None = None
    original_server_version: int | None = None
    commit_group_ticket: int | None = None
    delta16_saturated: bool = False

    @property
    def anonymous(self) -> bool:
        return self.gno == 0 and self.sid.int == 0 and not self.tag

    @property
    def gtid(self) -> Gtid | None:
        return None if self.anonymous else Gtid(self.sid, self.gno, self.tag)

    @property
    def gtid_text(self) -> str:
        gtid = self.gtid
        return "ANONYMOUS" if gtid is None else str(gtid)


@dataclass(frozen=True, slots=True)
class PreviousGtidsBody:
    gtid_set: GtidSet


@dataclass(frozen=True, slots=True)
class TableMapBody:
    """TABLE_MAP_EVENT (19).  Column metadata stays encoded until rows are decoded."""

    table_id: int
    flags: int
    db: str
    table: str
    column_count: int
    column_types: bytes
    metadata: bytes = field(repr=False)
    null_bitmap: bytes = field(repr=False)
    optional_metadata: tuple[tuple[int, bytes], ...] = field(repr=False, default=())


@dataclass(frozen=True, slots=True)
class RowsBody:
    """Rows events v1/v2, PARTIAL_UPDATE_ROWS and MariaDB compressed rows.

    ``rows`` holds the encoded row images (decompressed for MariaDB's
    compressed types); :mod:`repltool.binlog.rows` decodes them on demand.
    """

    table_id: int
    flags: int
    extra_info: bytes
    width: int
    columns_before: bytes = field(repr=False)
    columns_after: bytes | None = field(repr=False)
    rows: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class XaPrepareBody:
    one_phase: bool
    format_id: int
    gtrid: bytes
    bqual: bytes


@dataclass(frozen=True, slots=True)
class TransactionContextBody:
    server_uuid: str
    thread_id: int
    gtid_specified: bool
    snapshot_version: GtidSet
    write_set: tuple[bytes, ...]
    read_set: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class ViewChangeBody:
    view_id: str
    seq_number: int
    cert_info: tuple[tuple[bytes, bytes], ...] = field(repr=False)


@dataclass(frozen=True, slots=True)
class TransactionPayloadBody:
    """TRANSACTION_PAYLOAD_EVENT (40): the inner events are read by the reader."""

    compression_type: int             # 0 ZSTD, 255 NONE
    payload_size: int
    uncompressed_size: int | None
    payload: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class HeartbeatBody:
    log_ident: str
    position: int | None


@dataclass(frozen=True, slots=True)
class MariaGtidBody:
    """MariaDB GTID_EVENT (162); the GTID's server_id is the event header's."""

    seq_no: int
    domain_id: int
    flags2: int
    commit_id: int | None
    xa_format_id: int | None = None
    xa_gtrid: bytes | None = None
    xa_bqual: bytes | None = None
    flags_extra: int | None = None
    extra_engines: int | None = None
    sa_seq_no: int | None = None


@dataclass(frozen=True, slots=True)
class GtidListBody:
    """MariaDB GTID_LIST_EVENT (163)."""

    flags: int
    gtids: tuple[tuple[int, int, int], ...]   # (domain_id, server_id, seq_no)


@dataclass(frozen=True, slots=True)
class BinlogCheckpointBody:
    file: str


@dataclass(frozen=True, slots=True)
class StartEncryptionBody:
    scheme: int
    key_version: int
    nonce: bytes


@dataclass(frozen=True, slots=True)
class UnknownBody:
    """An event type repltool does not decode: its body bytes, kept as they are."""

    payload: bytes = field(repr=False)


#: type_code of the pseudo-events that stand for damaged byte ranges (keep-going mode).
DAMAGED_TYPE = -1


@dataclass(frozen=True, slots=True)
class DamagedBody:
    """A byte range the reader could not read (``ReadOptions(keep_going=True)``).

    The event carrying it has ``type_code`` :data:`DAMAGED_TYPE`, ``pos`` at the
    first damaged byte and ``event_size`` = the bytes skipped.
    """

    error: str          # the exception class, e.g. ChecksumMismatch
    reason: str         # its full message, FILE:OFFSET EVENT_TYPE: ...
    skipped: int


Body = (FormatDescriptionBody | StartV3Body | QueryBody | XidBody | RotateBody | StopBody
        | IntvarBody | RandBody | UserVarBody | IncidentBody | RowsQueryBody | GtidBody
        | PreviousGtidsBody | TableMapBody | RowsBody | XaPrepareBody
        | TransactionContextBody | ViewChangeBody | TransactionPayloadBody | HeartbeatBody
        | MariaGtidBody | GtidListBody | BinlogCheckpointBody | StartEncryptionBody
        | UnknownBody | DamagedBody)


class Event(NamedTuple):
    """One event as found in a log (immutable).

    ``raw`` is the exact bytes of the event (header, body and CRC footer), so a
    writer can reproduce the file byte for byte.  ``body`` is ``None`` when the
    caller asked the reader not to decode this type.  ``crc`` is the stored
    CRC32 (None when the event carries none, e.g. inside a payload).

    A NamedTuple rather than a frozen dataclass because one is built per event
    in the reader's hot loop (measured: 0.2 µs against 1.6 µs).
    """

    pos: Position
    timestamp: int
    type_code: int
    server_id: int
    event_size: int
    log_pos: int
    flags: int
    body: Body | None
    crc: int | None = None
    raw: bytes = b""

    @property
    def type_name(self) -> str:
        return type_name(self.type_code)

    @property
    def end_pos(self) -> int:
        """Offset just after this event in its file (for inner events, of the payload event)."""
        return self.pos.offset + self.event_size

    def is_type(self, *types: EventType) -> bool:
        return self.type_code in types

    def __repr__(self) -> str:
        return (f"Event({self.pos}, {self.type_name}, size={self.event_size}, "
                f"log_pos={self.log_pos}, body={self.body!r})")


def slot_builder(cls: type) -> Callable[..., Any]:
    """``cls(...)`` for a frozen dataclass with slots and no ``__post_init__``, built
    through the slot descriptors: the same object (same fields, positional or keyword,
    the same defaults) in about half the time - a frozen dataclass's ``__init__``
    stores each field through ``object.__setattr__``.  For the records the readers
    build once per event or transaction.  Generated from the fields, so it follows
    them."""
    if not hasattr(cls, "__slots__") or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: a frozen dataclass with slots, no __post_init__")
    env: dict[str, Any] = {"alloc": object.__new__, "C": cls}
    params, lines = [], []
    for i, f in enumerate(fields(cls)):
        if f.default_factory is not MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: a default factory")
        env[f"s{i}"] = cls.__dict__[f.name].__set__
        params.append(f.name if f.default is MISSING else f"{f.name}=d{i}")
        if f.default is not MISSING:
            env[f"d{i}"] = f.default
        lines.append(f"    s{i}(o, {f.name})")
    src = "\n".join([f"def build({', '.join(params)}):", "    o = alloc(C)", *lines,
                     "    return o"])
    exec(compile(src, f"<slot_builder {cls.__name__}>", "exec"), env)
    return env["build"]  # type: ignore[no-any-return]
