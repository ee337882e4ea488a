"""Input and output values of :mod:`repltool.certify` (frozen, reader-independent).

The binlog reader maps each real transaction to a :class:`CertTransaction`;
:func:`repltool.certify.certify` turns a stream of them into
:class:`CertResult` values. Vocabulary is MySQL's: ``last_committed``,
``sequence_number`` and ``commit_parent`` as in ``sql/rpl_trx_tracking.cc``,
``parallel_applier_sequence_number`` and ``last_committed_global`` as in
``plugin/group_replication/src/certifier.cc``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..errors import CertifyError
from ..positions import Position
from .gtidset import GtidSet

UINT64_MAX = (1 << 64) - 1
DEFAULT_HISTORY_SIZE = 25000
"""``binlog_transaction_dependency_history_size`` default (range 1..1,000,000)."""
DEFAULT_GROUP_UUID = "8a94f357-aab4-11df-86ab-c80aa9429489"


class Mode(str, Enum):
    """Which MySQL algorithm recomputes the logical clock."""

    COMMIT_ORDER = "commit-order"
    """``binlog_transaction_dependency_tracking=COMMIT_ORDER``: the logged parent."""
    WRITESET = "writeset"
    """COMMIT_ORDER narrowed by ``Writeset_trx_dependency_tracker``."""
    WRITESET_SESSION = "writeset-session"
    """WRITESET plus ``Writeset_session_trx_dependency_tracker``."""
    GROUP_REPLICATION = "group-replication"
    """The Group Replication certifier (WL#6833 + WL#8440)."""


class Baseline(str, Enum):
    """Where the commit-order parent of the writeset modes comes from.

    The real commit-order parent cannot be recovered from a file written in
    WRITESET mode (format spec 6b), so the caller chooses.
    """

    RECORDED = "recorded"
    """The ``last_committed`` written in the log (exact for COMMIT_ORDER logs)."""
    SERIAL = "serial"
    """``sequence_number - 1``: each transaction's parent is its predecessor."""


class Reason(str, Enum):
    """Why a transaction got its ``last_committed``."""

    KEY = "key"                      # a write-set key was last written by the parent
    NO_KEY = "no-key"                # table without usable key: commit-order parent kept
    DDL = "ddl"                      # no write set (DDL, CTAS...): runs after its predecessor
    EMPTY = "empty"                  # empty transaction: window start, no history change
    HISTORY_RESET = "history-reset"  # parent = history start / window set by a barrier trx
    HISTORY_FULL = "history-full"    # parent = history start after a history overflow
    GC_WINDOW = "gc-window"          # parent = window opened by certification-info GC
    SESSION = "session"              # raised to the session's previous transaction
    VIEW_CHANGE = "view-change"      # GR view change: (0, 0)
    FILE_START = "file-start"        # first trx of a file, history start 1 after rotate(),
                                     # or GR's initial window (last_committed_global = 1)
    COMMIT_ORDER = "commit-order"    # the commit-order parent was the smaller one
    FK_PARENT = "fk-parent"          # wrote a table referenced by a foreign key
    LOCAL = "local"                  # GR: local transaction, not in the applier relay log
    CONFLICT = "conflict"            # GR: negatively certified (would be rolled back)


class Fallback(str, Enum):
    """Why a transaction with rows had no usable write set ("missing keys").

    MySQL's ``has_missing_keys``: the tracker keeps the commit-order parent
    (the GR certifier here applies it after everything before it). The value
    is a table's reason as :class:`CertTransaction` ``fallback`` carries it;
    write-set extractors may give reasons of their own
    (``TrxWriteset.missing_key_reasons``), which are kept as they are, so a
    new reason needs no change here (:meth:`describe` then shows it as is).
    """

    NO_USABLE_KEY = "no-usable-key"          # no PRIMARY / NOT NULL UNIQUE key (MySQL's own case)
    NO_SCHEMA = "no-schema"                  # no key in the Table_map and no --schema to tell
    UNKNOWN_TABLE = "unknown-table"          # --schema given, but the table is not in it
    PARTIAL_IMAGE = "partial-image"          # the row image lacks a key column (binlog_row_image)
    UNKNOWN_COLLATION = "unknown-collation"  # a key column's collation cannot be hashed
    DRIFT = "drift"                          # the schema does not match the Table_map
    UNDECODABLE = "undecodable"              # rows without Table_map, or of an undecoded type
    NOT_EXTRACTED = "not-extracted"          # write sets were not extracted at all

    @staticmethod
    def describe(value: str) -> str:
        """One line for people about a reason value (known or not)."""
        return _FALLBACK_TEXT.get(value, value)


_FALLBACK_TEXT = {
    Fallback.NO_USABLE_KEY.value: "table has no primary or NOT NULL unique key",
    Fallback.NO_SCHEMA.value: "no key in the Table_map, no --schema",
    Fallback.UNKNOWN_TABLE.value: "table not in the --schema files",
    Fallback.PARTIAL_IMAGE.value: "row image lacks a key column",
    Fallback.UNKNOWN_COLLATION.value: "key column collation not known",
    Fallback.DRIFT.value: "--schema does not match the logged table",
    Fallback.UNDECODABLE.value: "rows cannot be decoded or mapped to a table",
    Fallback.NOT_EXTRACTED.value: "write sets not extracted",
}


_NO_USABLE_KEY = Fallback.NO_USABLE_KEY.value


@dataclass(frozen=True, slots=True)
class KeyRef:
    """A human-readable write-set key: which row of which unique index.

    Only used to explain dependencies; the hash is what MySQL compares.
    """

    db: str
    table: str
    index: str = "PRIMARY"
    values: tuple[str, ...] = ()

    @property
    def qualified_table(self) -> str:
        """``db.table``."""
        return f"{self.db}.{self.table}"

    def __str__(self) -> str:
        return f"{self.db}.{self.table} {self.index}({', '.join(self.values)})"


def key_ref(key: object) -> KeyRef | None:
    """The :class:`KeyRef` of one entry of :attr:`CertTransaction.keys`.

    Entries are kept as the extractor made them (a
    :class:`repltool.writeset.WriteKey`, or anything with ``db``, ``table``,
    ``index`` and ``values``) and described only when a dependency is
    explained: most keys never are.  Values become text (bytes as ``0x`` hex).
    """
    if key is None or isinstance(key, KeyRef):
        return key
    return KeyRef(db=getattr(key, "db", ""), table=getattr(key, "table", ""),
                  index=getattr(key, "index", "PRIMARY"),
                  values=tuple(_value_text(v) for v in getattr(key, "values", ())))


def _value_text(value: object) -> str:
    """A key part as text (``KeyRef.values`` are for people): bytes as hex."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "0x" + bytes(value).hex()
    return str(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class CertTransaction:
    """One transaction as certification sees it.

    :ivar gtid: ``uuid:gno`` (or ``uuid:tag:gno``); ``None`` for anonymous.
    :ivar pos: where the transaction's GTID event is, for messages.
    :ivar file: the clock segment: the binlog file whose numbering the
        ``recorded`` values use. For a relay log this is the *source* file
        name, because sequence numbers restart at source rotations, not at
        relay-file boundaries (format spec gotcha 8).
    :ivar recorded: ``(last_committed, sequence_number)`` as logged.
    :ivar writeset: XXH64 key hashes (uint64), in extraction order,
        duplicates allowed (8.0 keeps a vector, ``rpl_transaction_write_set_ctx.cc``).
    :ivar keys: optional descriptions parallel to ``writeset`` (same length,
        or empty); entries may be ``None``.  An entry is a :class:`KeyRef` or
        the extractor's own key record, described lazily by :func:`key_ref`
        (read them through :meth:`key_at`).
    :ivar ddl: a statement without row changes that must serialise (DDL,
        CREATE USER...): no write set and no missing keys.
    :ivar empty: no row changes at all (e.g. ``GTID_NEXT`` + empty COMMIT, or a
        transaction emptied by a replication filter).
    :ivar missing_keys: wrote a table without usable primary key
        (``has_missing_keys``).
    :ivar fallback: why, for ``missing_keys``: one :class:`Fallback` value (or
        an extractor's own reason) per such table.
    :ivar fk_parent: wrote a table referenced by a foreign key
        (``has_related_foreign_keys``).
    :ivar write_set_limit_reached: the extractor dropped the write set because
        it grew past the history size.
    :ivar ctas: ``CREATE TABLE ... SELECT`` (GR marks it (0,0) before certification).
    :ivar view_change: a GR View_change transaction (``Gtid(0,0)/BEGIN/View_change/COMMIT``).
    :ivar session: ``(server_id, thread_id)`` of the originating session.
    :ivar commit_time: commit time in seconds (for time-driven GR garbage collection).
    :ivar snapshot: GR snapshot version: the originating member's
        ``gtid_executed`` when the transaction executed, without its own GTID.
    :ivar member: uuid of the originating GR member.
    :ivar new_file: the transaction starts a new clock segment: trackers
        ``rotate()`` before it (also implied when ``file`` changes).
    """

    gtid: str | None = None
    pos: Position | None = None
    file: str = ""
    recorded: tuple[int, int] = (0, 0)
    writeset: tuple[int, ...] = ()
    keys: tuple[object, ...] = ()
    ddl: bool = False
    empty: bool = False
    missing_keys: bool = False
    fallback: tuple[str, ...] = ()
    fk_parent: bool = False
    write_set_limit_reached: bool = False
    ctas: bool = False
    view_change: bool = False
    session: tuple[int, int] | None = None
    commit_time: float | None = None
    snapshot: GtidSet | None = None
    member: str | None = None
    new_file: bool = False

    @property
    def keys_unknown(self) -> bool:
        """Missing keys for a reason other than MySQL's own "no usable key": the server
        hashed keys the log does not let repltool know (partial images, schema drift,
        collations not reproduced, no schema ...).  A later transaction may conflict
        with this one on such a key, so nothing may overtake it: the trackers reset
        their history here and the GR certifier applies it sequentially."""
        return self.missing_keys and any(f != _NO_USABLE_KEY for f in self.fallback)

    def key_at(self, index: int) -> KeyRef | None:
        """The description of ``writeset[index]``, if known (made now: :func:`key_ref`)."""
        return key_ref(self.keys[index]) if index < len(self.keys) else None

    def validate(self) -> None:
        """Check what certification relies on.

        :raises CertifyError: when hashes are not uint64, ``keys`` is not
            parallel to ``writeset`` or the recorded clock is negative.
        """
        for h in self.writeset:
            if not isinstance(h, int) or not 0 <= h <= UINT64_MAX:
                raise CertifyError(f"write-set hash {h!r} is not a uint64", pos=self.pos)
        if self.keys and len(self.keys) != len(self.writeset):
            raise CertifyError(f"{len(self.keys)} key descriptions for "
                               f"{len(self.writeset)} write-set hashes", pos=self.pos)
        if len(self.recorded) != 2 or min(self.recorded) < 0:
            raise CertifyError(f"recorded clock {self.recorded!r} is not two "
                               "non-negative integers", pos=self.pos)


@dataclass(frozen=True, slots=True)
class GarbageCollect:
    """A GR certification-info garbage collection run at this point of the stream.

    :ivar stable: the group's stable set (intersection of all members'
        ``gtid_executed``); items whose snapshot version is a strict subset of
        it are purged. ``None`` purges every item (all treated as stable).
        Ignored outside :attr:`Mode.GROUP_REPLICATION`.
    """

    stable: GtidSet | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CertResult:
    """The recomputed logical clock of one transaction, with its explanation.

    :ivar trx: the input transaction.
    :ivar computed: ``(last_committed, sequence_number)``; ``None`` when the
        transaction gets no sequence number (GR: local or rolled back).
    :ivar reason: why ``last_committed`` has its value.
    :ivar depends_on: GTID of the transaction whose ``sequence_number`` is the
        computed ``last_committed`` (``None`` if anonymous or unknown).
    :ivar key: for :attr:`Reason.KEY`, the description of the shared key.
    :ivar key_hash: for :attr:`Reason.KEY`, the shared hash.
    :ivar conflict: GR negative certification details ("would be rolled back").
    :ivar session_order: the session rule was in force for this result.
    :ivar detail: one line of human explanation.
    :ivar raised: writeset modes: the logged commit-order parent was below the
        last writer of a shared key (an unsafe logged clock), so that writer
        was taken instead of MySQL's ``min`` (see
        :class:`~repltool.certify.trackers.WritesetTracker`).
    """

    trx: CertTransaction
    computed: tuple[int, int] | None
    reason: Reason
    depends_on: str | None = None
    key: KeyRef | None = None
    key_hash: int | None = None
    conflict: str | None = None
    session_order: bool = False
    detail: str = ""
    raised: bool = False

    @property
    def last_committed(self) -> int | None:
        return None if self.computed is None else self.computed[0]

    @property
    def sequence_number(self) -> int | None:
        return None if self.computed is None else self.computed[1]

    @property
    def changed(self) -> bool:
        """True if the computed clock differs from the logged one."""
        return self.computed is not None and self.computed != self.trx.recorded


Dependency = CertResult
"""The name the house style (docs/style.md) uses for a certification result."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CertifyOptions:
    """Knobs of :func:`repltool.certify.certify`; defaults are MySQL 8.0's.

    Writeset modes:

    :ivar history_size: ``binlog_transaction_dependency_history_size``.
    :ivar baseline: source of the commit-order parent (:class:`Baseline`).
    :ivar reset_sessions_on_rotate: forget WRITESET_SESSION per-session
        sequence numbers at rotation. MySQL keeps them (they live in the THD,
        guarded by ``s < sequence_number``), so a session crossing a file
        boundary can raise a parent in the next file; set this to make files
        strictly independent.

    Group Replication:

    :ivar session_order: also chain each session's transactions (FR2 of
        WL#8440). MySQL's certifier does not; commit order is kept by
        ``replica_preserve_commit_order`` instead.
    :ivar gc_every: run garbage collection after every N positively
        certified transactions.
    :ivar gc_interval: run garbage collection when ``commit_time`` advanced by
        this many seconds (MySQL broadcasts ``gtid_executed`` every 60 s).
    :ivar gc_opens_window: GC (and a View_change, which garbage-collects)
        sets ``last_committed_global`` to the last sequence number (MySQL).
        ``False`` reproduces WL#8440's EX5 bug and its EX7 table.
    :ivar conflict_detection: ``None``: on when a snapshot is known (member
        simulation or ``snapshot`` field); ``True``/``False`` force it. A
        transaction whose snapshot is unknown is never rejected.
    :ivar members: simulate a multi-primary group: a member count or uuids.
    :ivar member_lag: in the simulation, how many of the most recently
        certified remote transactions a member has not applied yet.
    :ivar local_member: the member whose applier relay log is computed; its
        own transactions are local (stored with sequence number -1).
    :ivar group_uuid: sid for GTIDs the certifier generates for anonymous input.
    """

    history_size: int = DEFAULT_HISTORY_SIZE
    baseline: Baseline = Baseline.RECORDED
    reset_sessions_on_rotate: bool = False
    session_order: bool = False
    gc_every: int | None = None
    gc_interval: float | None = None
    gc_opens_window: bool = True
    conflict_detection: bool | None = None
    members: int | tuple[str, ...] = ()
    member_lag: int = 0
    local_member: str | None = None
    group_uuid: str = DEFAULT_GROUP_UUID
    _member_names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.history_size <= 1_000_000:
            raise CertifyError(f"history_size {self.history_size} not in 1..1000000")
        if self.gc_every is not None and self.gc_every < 1:
            raise CertifyError(f"gc_every must be >= 1, not {self.gc_every}")
        if self.gc_interval is not None and not self.gc_interval > 0:
            raise CertifyError(f"gc_interval must be > 0, not {self.gc_interval}")
        if self.member_lag < 0:
            raise CertifyError(f"member_lag must be >= 0, not {self.member_lag}")
        if isinstance(self.members, int):
            if self.members < 0:
                raise CertifyError(f"members must be >= 0, not {self.members}")
            names = tuple(f"member-{i}" for i in range(1, self.members + 1))
        else:
            names = tuple(self.members)
            if len(set(names)) != len(names):
                raise CertifyError("member names must be unique")
        object.__setattr__(self, "_member_names", names)

    @property
    def member_names(self) -> tuple[str, ...]:
        """The simulated members (empty: no simulation)."""
        return self._member_names
