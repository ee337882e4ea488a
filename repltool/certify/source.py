"""From the reader's transactions (and their writesets) to certification input.

:func:`to_cert_transaction` is the one place where a
:class:`~repltool.binlog.transactions.Transaction` and the writeset extracted
from its row events become a :class:`~repltool.certify.model.CertTransaction`.
The writeset is passed in, not computed here, so this module needs nothing
but the records: the extraction lives in :mod:`repltool.writeset`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Protocol

from .model import CertTransaction, KeyRef

if TYPE_CHECKING:
    from ..binlog.transactions import Transaction


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


def _key_ref(key: object) -> KeyRef:
    values = getattr(key, "values", ())
    return KeyRef(db=getattr(key, "db", ""), table=getattr(key, "table", ""),
                  index=getattr(key, "index", "PRIMARY"), values=tuple(values))


def is_ctas(trx: Transaction) -> bool:
    """``CREATE TABLE ... SELECT``: a DDL-like group that also carries rows (spec §6c)."""
    return trx.kind == "ddl" and bool(trx.rows_events)


def to_cert_transaction(trx: Transaction, writeset: WritesetLike | None, *,
                        new_file: bool = False) -> CertTransaction:
    """One :class:`CertTransaction`.

    * ``file`` is the transaction's clock segment (the source binlog for relay logs);
    * ``recorded`` is the logged (last_committed, sequence_number), (0, 0) where the
      log has none (5.6, MariaDB): the commit-order baseline is then what
      :class:`~repltool.certify.model.CertifyOptions` ``baseline`` says;
    * without a writeset (``None``) a transaction with row events counts as having
      *missing keys* (MySQL falls back to its commit-order parent), one without rows
      as DDL or empty by its kind.
    """
    recorded = (trx.last_committed or 0, trx.sequence_number or 0)
    session = (trx.server_id, trx.thread_id) if trx.thread_id is not None else None
    commit_time = (trx.immediate_commit_timestamp / 1e6 if trx.immediate_commit_timestamp
                   else float(trx.end_timestamp or trx.timestamp))
    common = dict(gtid=None if trx.gtid == "ANONYMOUS" else trx.gtid, pos=trx.start,
                  file=trx.segment or trx.start.file, recorded=recorded, session=session,
                  commit_time=commit_time, new_file=new_file, ctas=is_ctas(trx))
    if writeset is None:
        has_rows = bool(trx.rows_events)
        return CertTransaction(**common, ddl=trx.kind == "ddl" and not has_rows,  # type: ignore[arg-type]
                               empty=trx.kind == "empty", missing_keys=has_rows)
    keys = writeset.keys
    return CertTransaction(
        **common,  # type: ignore[arg-type]
        writeset=tuple(int(getattr(k, "hash")) for k in keys),
        keys=tuple(_key_ref(k) for k in keys),
        ddl=trx.kind == "ddl" and not keys and not writeset.missing_key_tables,
        empty=trx.kind == "empty",
        missing_keys=bool(writeset.missing_key_tables),
        fk_parent=bool(writeset.fk_parent_tables),
        write_set_limit_reached=writeset.limit_reached)


def to_cert_transactions(pairs: Iterable[tuple[Transaction, WritesetLike | None]]
                         ) -> Iterator[CertTransaction]:
    """Map (transaction, writeset) pairs in log order; truncated groups are left out.

    A truncated group (no end event: a relay log cut mid-transaction, re-delivered
    later) was never committed, so it takes no sequence number.
    """
    previous: str | None = None
    for trx, ws in pairs:
        if trx.truncated:
            continue
        segment = trx.segment or trx.start.file
        yield to_cert_transaction(trx, ws, new_file=previous is not None and segment != previous)
        previous = segment
