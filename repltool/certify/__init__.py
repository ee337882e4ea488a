"""Recompute ``(last_committed, sequence_number)`` of transactions from write sets.

Four MySQL algorithms are reproduced (format spec 6a-6c):

* ``commit-order`` / ``writeset`` / ``writeset-session``: the source-side
  trackers of ``sql/rpl_trx_tracking.cc`` (:mod:`.trackers`, :mod:`.dependency`);
* ``group-replication``: the certifier of
  ``plugin/group_replication/src/certifier.cc`` (:mod:`.group_replication`; for
  ``repltool certify`` runs that read no snapshot version, in the compiled core:
  :mod:`.grcore`).

Example::

    >>> from repltool.certify import CertTransaction, CertifyOptions, Mode, certify
    >>> trxs = [CertTransaction(gtid=f"u:{i}", file="binlog.000001",
    ...                         recorded=(i - 1, i), writeset=(i % 2,))
    ...         for i in range(1, 5)]
    >>> [r.computed for r in certify(trxs, Mode.WRITESET)]
    [(0, 1), (1, 2), (1, 3), (2, 4)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..binlog.engine import compiled_core
from .coretrack import iter_core_dependencies
from .dependency import TransactionDependencyTracker, iter_source_dependencies
from .group_replication import Certifier, iter_group_replication
from .gtidset import GtidSet
from .model import (
    Baseline,
    CertifyOptions,
    CertResult,
    CertTransaction,
    Dependency,
    GarbageCollect,
    KeyRef,
    Mode,
    Reason,
    key_ref,
)
from .safety import SafetyChecker, Violation, check_safety
from .summary import Parallelism, Summary, summarise
from .trackers import CommitOrderTracker, Parent, WritesetSessionTracker, WritesetTracker

__all__ = [
    "Baseline", "CertResult", "CertTransaction", "Certifier", "CertifyOptions",
    "CommitOrderTracker", "Dependency", "GarbageCollect", "GtidSet", "KeyRef", "Mode",
    "Parallelism", "Parent", "Reason", "SafetyChecker", "Summary",
    "TransactionDependencyTracker", "Violation", "WritesetSessionTracker", "WritesetTracker",
    "certify", "check_safety", "key_ref", "summarise",
]


def certify(transactions: Iterable[CertTransaction | GarbageCollect], mode: Mode | str,
            options: CertifyOptions | None = None) -> Iterator[CertResult]:
    """Stream one :class:`CertResult` per transaction, in input order.

    Memory is bounded by the write-set history (``history_size``) or the
    certification info (bounded by garbage collection), not by the log.

    :param transactions: transactions in log order; :class:`GarbageCollect`
        markers are honoured in group-replication mode and skipped otherwise.
    :param mode: a :class:`Mode` or its value (``"writeset"``...).
    :param options: defaults to MySQL 8.0's settings.
    :raises CertifyError: for an unknown mode or an invalid transaction
        (raised lazily, when that transaction is reached).
    """
    from ..errors import CertifyError

    try:
        mode = Mode(mode)
    except ValueError:
        raise CertifyError(f"unknown certify mode {mode!r}; expected one of "
                           f"{', '.join(m.value for m in Mode)}") from None
    options = options if options is not None else CertifyOptions()
    if mode is Mode.GROUP_REPLICATION:
        return iter_group_replication(transactions, options)
    source = (t for t in transactions if isinstance(t, CertTransaction))
    core = compiled_core()
    if core is not None:    # the same results, the trackers' state in C (.coretrack)
        return iter_core_dependencies(source, mode, options, core)
    return iter_source_dependencies(source, mode, options)
