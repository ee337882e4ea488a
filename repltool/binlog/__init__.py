"""Reading MySQL / MariaDB binary logs and relay logs.

Public API::

    from repltool.binlog import read_events, read_transactions, ReadOptions

    for trx in read_transactions(["binlog.000001", "binlog.000002"]):
        print(trx.gtid, trx.last_committed, trx.sequence_number)
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator

from .constants import EventFlag, EventType, type_name
from .events import Event
from .reader import FileInfo, ReadOptions, read_events
from .transactions import GROUPING_TYPES, Transaction, group_transactions


def read_transactions(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                      options: ReadOptions | None = None, *, keep_events: bool = False,
                      info: list[FileInfo] | None = None) -> Iterator[Transaction]:
    """Transactions of one or more logs, read as one ordered sequence.

    Unless ``options.types`` says otherwise, only the bodies transaction
    grouping needs are decoded.
    """
    opts = options or ReadOptions(types=GROUPING_TYPES)
    return group_transactions(read_events(paths, opts, info), keep_events=keep_events)


__all__ = ["Event", "EventFlag", "EventType", "FileInfo", "ReadOptions", "Transaction",
           "group_transactions", "read_events", "read_transactions", "type_name"]
