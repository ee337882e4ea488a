"""From the reader's transactions (and their writesets) to certification input.

:func:`to_cert_transaction` is the one place where a
:class:`~repltool.binlog.transactions.Transaction` and the writeset extracted
from its row events become a :class:`~repltool.certify.model.CertTransaction`.
The writeset is passed in, not computed here, so this module needs nothing
but the records: the extraction lives in :mod:`repltool.writeset`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Protocol

from .model import CertTransaction, Fallback

if TYPE_CHECKING:
    from ..binlog.transactions import Transaction

_VIEW_CHANGE_EVENT = 37     # binlog/constants.py EventType.VIEW_CHANGE_EVENT

#: a CertTransaction built field by field (``_cert``): what its ``__init__`` does, in
#: half the time (one per transaction of ``repltool certify``)
_CERT_FIELDS = ("gtid", "pos", "file", "recorded", "writeset", "keys", "ddl", "empty",
                "missing_keys", "fallback", "fk_parent", "write_set_limit_reached", "ctas",
                "view_change", "session", "commit_time", "snapshot", "member", "new_file")
_CERT_SET = tuple(CertTransaction.__dict__[name].__set__ for name in _CERT_FIELDS)
if set(_CERT_FIELDS) != set(CertTransaction.__dataclass_fields__):
    raise RuntimeError("repltool.certify.source: CertTransaction's fields changed")
_bare = object.__new__


def _cert(values: tuple[object, ...]) -> CertTransaction:
    """``CertTransaction(**dict(zip(_CERT_FIELDS, values)))``."""
    cert = _bare(CertTransaction)
    for put, value in zip(_CERT_SET, values):
        put(cert, value)
    return cert


class WritesetLike(Protocol):
    """What certification reads of a writeset (:class:`repltool.writeset.TrxWriteset`)."""

    @property
    def keys(self) -> tuple[object, ...]: ...
    @property
    def ddl(self) -> bool: ...
    @property
    def empty(self) -> bool: ...
    @property
    def missing_key_tables(self) -> tuple[str, ...]: ...
    @property
    def fk_parent_tables(self) -> tuple[str, ...]: ...
    @property
    def limit_reached(self) -> bool: ...
    @property
    def missing_key_reasons(self) -> tuple[str, ...]: ...


class SchemaLike(Protocol):
    """What the fallback reasons read of a schema (:class:`repltool.writeset.schema.Schema`)."""

    def table(self, db: str | None, name: str) -> object | None: ...


def fallback_reasons(writeset: WritesetLike, schema: SchemaLike | None) -> tuple[str, ...]:
    """Why each of ``writeset.missing_key_tables`` has no usable key (:class:`Fallback` values).

    The extractor's own reasons (``missing_key_reasons``) win; otherwise: rows
    not mapped to a table (``table_id:N``) are undecodable; without a schema
    only the Table_map's primary key was known (no-schema); a table the schema
    lacks is unknown; any other has no usable key.
    """
    tables = writeset.missing_key_tables
    given = writeset.missing_key_reasons
    if len(given) == len(tables):
        return tuple(given)
    out = []
    for name in tables:
        db, _, table = name.partition(".")
        if name.startswith("table_id:") or not table:
            out.append(Fallback.UNDECODABLE.value)
        elif schema is None:
            out.append(Fallback.NO_SCHEMA.value)
        elif schema.table(db, table) is None:
            out.append(Fallback.UNKNOWN_TABLE.value)
        else:
            out.append(Fallback.NO_USABLE_KEY.value)
    return tuple(out)


_MARIA_SID = "4d617269-6144-"      # "MariaD": marks a MariaDB GTID in MySQL spelling


def cert_gtid(gtid: str | None) -> str | None:
    """The GTID certification works with: ``None`` for anonymous, MySQL GTIDs as they are.

    A MariaDB GTID ``domain-server-seq`` is spelt as a MySQL GTID (the
    certifier keeps GTID sets of them): ``4d617269-6144-DDDD-DDDD-SSSSSSSSSSSS:seq``
    with the domain and server ids in hex; :func:`log_gtid` turns it back.

    Example::

        >>> cert_gtid("0-1-25")
        '4d617269-6144-0000-0000-000000000001:25'
        >>> log_gtid(cert_gtid("7-100-3")), cert_gtid("ANONYMOUS")
        ('7-100-3', None)
    """
    if gtid is None or gtid == "ANONYMOUS":
        return None
    if ":" in gtid:
        return gtid
    parts = gtid.split("-")
    if len(parts) != 3 or not all(x.isdigit() for x in parts):
        return gtid
    domain, server, seq = (int(x) for x in parts)
    if seq < 1:
        return gtid
    return (f"{_MARIA_SID}{domain >> 16:04x}-{domain & 0xFFFF:04x}-{server:012x}:{seq}")


def log_gtid(gtid: str | None) -> str | None:
    """Inverse of :func:`cert_gtid` for MariaDB GTIDs; other values unchanged."""
    if gtid is None or not gtid.startswith(_MARIA_SID):
        return gtid
    sid, _, seq = gtid.partition(":")
    _, _, hi, lo, server = sid.split("-")
    return f"{(int(hi, 16) << 16) | int(lo, 16)}-{int(server, 16)}-{seq}"


def is_view_change(trx: Transaction) -> bool:
    """A GR View_change transaction: ``Gtid(0, 0)``, BEGIN, View_change_log_event, COMMIT.

    Needs the events (``read_transactions(..., keep_events=True)``).
    """
    events = trx.events
    return bool(events) and any(ev.type_code == _VIEW_CHANGE_EVENT for ev in events)


def is_ctas(trx: Transaction) -> bool:
    """``CREATE TABLE ... SELECT``: a DDL-like group that also carries rows (spec §6c)."""
    return trx.kind == "ddl" and bool(trx.rows_events)


def to_cert_transaction(trx: Transaction, writeset: WritesetLike | None, *,
                        new_file: bool = False,
                        schema: SchemaLike | None = None) -> CertTransaction:
    """One :class:`CertTransaction`.

    * ``file`` is the transaction's clock segment (the source binlog for relay logs);
    * ``recorded`` is the logged (last_committed, sequence_number), (0, 0) where the
      log has none (5.6, MariaDB): the commit-order baseline is then what
      :class:`~repltool.certify.model.CertifyOptions` ``baseline`` says;
    * without a writeset (``None``) a transaction with row events counts as having
      *missing keys* (MySQL falls back to its commit-order parent), one without rows
      as DDL or empty by its kind;
    * ``fallback`` says why a transaction has missing keys (:func:`fallback_reasons`,
      with ``schema`` the one the write sets were extracted with).
    """
    recorded = (trx.last_committed or 0, trx.sequence_number or 0)
    thread = trx.thread_id
    session = (trx.server_id, thread) if thread is not None else None
    immediate = trx.immediate_commit_timestamp
    commit_time = (immediate / 1e6 if immediate
                   else float(trx.end_timestamp or trx.timestamp))
    gtid, pos, kind = cert_gtid(trx.gtid), trx.start, trx.kind
    file, ctas = trx.segment or pos.file, is_ctas(trx)
    if is_view_change(trx):
        return CertTransaction(gtid=gtid, pos=pos, file=file, recorded=recorded, session=session,
                               commit_time=commit_time, new_file=new_file, ctas=ctas,
                               view_change=True)
    if writeset is None:
        has_rows = bool(trx.rows_events)
        return CertTransaction(gtid=gtid, pos=pos, file=file, recorded=recorded, session=session,
                               commit_time=commit_time, new_file=new_file, ctas=ctas,
                               ddl=kind == "ddl" and not has_rows,
                               empty=kind == "empty", missing_keys=has_rows,
                               fallback=(Fallback.NOT_EXTRACTED.value,) if has_rows else ())
    keys = writeset.keys
    # a writeset's own hashes when it has them (repltool.writeset.TrxWriteset.hashes:
    # also those of a write set dropped past the limit, whose keys are then empty)
    hashes = getattr(writeset, "hashes", None)
    missing = writeset.missing_key_tables
    limit = writeset.limit_reached
    return _cert((
        gtid, pos, file, recorded,
        (hashes if hashes is not None and not isinstance(hashes, list)
         else tuple([int(k.hash) for k in keys])),
        # described only when explained (model.key_ref); a compact sequence stays one
        tuple(keys) if isinstance(keys, list) else keys,
        kind == "ddl" and not keys and not missing and not limit,     # ddl
        kind == "empty", bool(missing),
        fallback_reasons(writeset, schema) if missing else (),
        bool(writeset.fk_parent_tables), limit, ctas, False, session, commit_time,
        None, None, new_file))


def to_cert_transactions(pairs: Iterable[tuple[Transaction, WritesetLike | None]], *,
                         schema: SchemaLike | None = None) -> Iterator[CertTransaction]:
    """Map (transaction, writeset) pairs in log order; truncated groups are left out.

    A truncated group (no end event: a relay log cut mid-transaction, re-delivered
    later) was never committed, so it takes no sequence number.
    """
    for _, cert in iter_cert_pairs(pairs, schema=schema):
        yield cert


def iter_cert_pairs(pairs: Iterable[tuple[Transaction, WritesetLike | None]], *,
                    schema: SchemaLike | None = None
                    ) -> Iterator[tuple[Transaction, CertTransaction]]:
    """Like :func:`to_cert_transactions`, keeping each reader transaction next to its mapping."""
    for trx, ws, _, new_file in segmented_pairs(pairs):
        yield trx, to_cert_transaction(trx, ws, new_file=new_file, schema=schema)


def segmented_pairs(pairs: Iterable[tuple[Transaction, WritesetLike | None]]
                    ) -> Iterator[tuple[Transaction, WritesetLike | None, str, bool]]:
    """The pairs certification takes, each with its clock segment (the binlog file, or
    a relay log's source file) and whether that segment differs from the one before
    (``new_file``: the trackers start again there).  A truncated group was never
    committed: it is left out and does not move the segment."""
    previous: str | None = None
    for trx, ws in pairs:
        if trx.truncated:
            continue
        segment = trx.segment or trx.start.file
        yield trx, ws, segment, previous is not None and segment != previous
        previous = segment
