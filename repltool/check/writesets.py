"""Where the writeset rules (W001, W002) get each transaction's write set from.

The rules work over an abstract provider: a callable that, given a
:class:`~repltool.binlog.Transaction`, returns the key hashes it wrote (and the
tables it wrote without a usable key), or ``None`` when it does not know.

By default the write sets come from the log's own row events
(:class:`RowWritesetProvider`, :mod:`repltool.writeset`: primary keys from the
Table_map metadata, UNIQUE and FOREIGN keys from ``--schema``).  A provider can
also come from a JSON file (``--writesets FILE``, see :func:`load_writesets`) or
from code (:class:`MappingProvider`).  A transaction whose write set cannot be
extracted (a relay file read without the Table_map its rows refer to) is
"unknown" and is counted, never silently treated as safe.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Protocol

from ..binlog import Transaction
from ..errors import ReplToolError, UsageError

SKIP_REASON = "no write-set provider was given"
#: The largest ``--writesets`` JSON file read (parsed in memory: ~10x its size).
WRITESETS_LIMIT = 512 << 20


@dataclass(frozen=True, slots=True)
class TrxWriteset:
    """What one transaction wrote.

    :ivar hashes: uint64 key hashes (MySQL's XXH64 of the key strings, or any
        stable 64-bit hash: the rules only compare them for equality).
    :ivar missing_key_tables: ``db.table`` names written without a usable key.
    """

    hashes: tuple[int, ...] = ()
    missing_key_tables: tuple[str, ...] = ()


class WritesetProvider(Protocol):
    """Gives the write set of a transaction, or None when it is unknown.

    ``needs_events``: the provider reads the events' bodies.  When it also has a
    ``feed(event, opens)`` method, the engine passes it the events of each
    transaction with a MySQL clock (the rules ask about those only) as they stream
    (a :func:`~repltool.binlog.group_transactions` tap) and keeps none; otherwise it
    keeps every transaction's events in ``Transaction.events`` while it is checked.
    """

    needs_events: bool

    def __call__(self, trx: Transaction) -> TrxWriteset | None: ...


class RowWritesetProvider:
    """Write sets extracted from the transactions' own row events.

    :param schema: UNIQUE and FOREIGN keys (:func:`repltool.writeset.load_schema`);
        without it only the primary keys the Table_maps describe are known
        (``binlog_row_metadata=FULL``), so tables whose Table_map carries no key
        count as written without a usable key.
    """

    needs_events = True

    def __init__(self, schema: Any = None) -> None:
        self._extractor = self._new_extractor(schema, None)
        self.failures = 0
        self.unknown_key_tables: dict[str, None] = {}
        self._maps_seen: tuple[Any, ...] = ()
        self._named: set[tuple[str, str]] = set()
        #: :meth:`track_tables`: what the transactions asked about mapped (None: not kept)
        self.tables: TablesSeen | None = None

    def track_tables(self) -> TablesSeen:
        """Keep, for the transactions asked about, whether a rows event of one named a
        table id no earlier Table_map of the read named, and the tables the
        Table_maps read up to them named with column names
        (``binlog_row_metadata=FULL``); :meth:`fresh` and :meth:`reading` share it
        (``check --spark`` links a part to the one before it with these)."""
        if self.tables is None:
            self.tables = TablesSeen()
        return self.tables

    @staticmethod
    def _new_extractor(schema: Any, warned: set[Any] | None) -> Any:
        from ..writeset import WritesetExtractor
        # a write set past the limit is unknown here (see __call__): MySQL's rule drops
        # it as it grows, so its keys never cost more than the history size
        return WritesetExtractor(schema, drop_past_limit=True, warned=warned)

    def fresh(self) -> RowWritesetProvider:
        """A provider of the same schema that has read nothing yet and gives none of
        the warnings this one's reads gave (check starts over with it: a warning of
        the first attempt is not given twice)."""
        fresh = RowWritesetProvider(None)
        fresh._extractor = self._new_extractor(self._extractor.schema, self.warned)
        fresh.tables = self.tables
        return fresh

    @property
    def warned(self) -> set[Any]:
        """The warnings given by this provider's reads (tags; its lazy reads share it)."""
        return self._extractor.warned  # type: ignore[no-any-return]

    def feed(self, ev: Any, opens: bool) -> None:
        """One event of the open transaction, as it streams (its keys are folded
        in; the event is not kept)."""
        self._extractor.event(ev, opens)

    def __call__(self, trx: Transaction) -> TrxWriteset | None:
        """The write set of ``trx``: from its events when it carries them, else of
        the events :meth:`feed` was given since it opened."""
        from ..errors import ReplToolError
        ex = self._extractor
        try:
            ws = ex.writeset(trx) if trx.events else ex.take(trx.kind)
        except ReplToolError:
            self.failures += 1
            return None
        finally:
            if self.tables is not None:
                self.tables.saw(trx, ex.table_maps)
        return self._judge(ws, self._extractor.table_maps)

    def _judge(self, ws: Any, table_maps: Mapping[int, Any]) -> TrxWriteset | None:
        """The rules' view of an extracted write set (``table_maps``: the Table_maps
        read up to its transaction)."""
        unknown = [t for t in ws.missing_key_tables if not self._key_known(t, table_maps)]
        if unknown:
            # No key information at all for these tables: not "keyless", unknown.
            self.unknown_key_tables.update(dict.fromkeys(unknown))
            return None
        if ws.limit_reached:
            return None
        return TrxWriteset(ws.hashes, ws.missing_key_tables)

    def _key_known(self, table: str, table_maps: Mapping[int, Any]) -> bool:
        """Whether the schema or a FULL-metadata Table_map describes ``table``'s keys."""
        db, _, name = table.partition(".")
        schema = self._extractor.schema
        if schema is not None and schema.table(db, name) is not None:
            return True
        # the names the maps describe, again only when a map changed (the tuple
        # compares its items by identity first)
        maps = tuple(table_maps.values())
        if maps != self._maps_seen:
            self._maps_seen = maps
            self._named = {(td.db, td.table) for td in maps if td.has_names}
        return (db, name) in self._named

    def reading(self, paths: list[str], span: Any = None) -> LogPairs:
        """The same write sets, read by the fused reader
        (:func:`repltool.writeset.read_writesets`: the compiled core) from ``paths``,
        one ordered read, instead of from events fed to it: for a caller that reads
        the transactions of ``paths`` elsewhere and asks for theirs, in order.

        :param span: one part of a single binlog (:class:`repltool.binlog.split.Span`;
            the compiled engine only)."""
        return LogPairs(self, paths, span)


class TablesSeen:
    """:meth:`RowWritesetProvider.track_tables`: ``unmapped``, ``named`` (``db.table``)."""

    def __init__(self) -> None:
        self.unmapped = False
        self.named: set[str] = set()
        self._maps: tuple[Any, ...] = ()

    def saw(self, trx: Any, table_maps: Mapping[int, Any]) -> None:
        """``trx`` was asked about; ``table_maps``: the maps read up to it."""
        if not self.unmapped:
            self.unmapped = any(name == "?" for name, _ in trx.rows_events)
        maps = tuple(table_maps.values())
        if maps != self._maps:          # (compares the items by identity first)
            self._maps = maps
            self.named.update(f"{td.db}.{td.table}" for td in maps if td.has_names)


class PairsEnded(Exception):
    """The fused read of :class:`LogPairs` stopped (an error of the log or of a row
    image that the event-fed provider counts as a failure and reads past): the caller
    starts over with the event-fed provider."""


class LogPairs:
    """:meth:`RowWritesetProvider.reading`: write sets by transaction start, read ahead
    lazily (nothing is read until the first one is asked for)."""

    needs_events = False

    def __init__(self, owner: RowWritesetProvider, paths: list[str], span: Any = None) -> None:
        self.owner, self.paths, self.span = owner, paths, span
        self.unknown_key_tables = owner.unknown_key_tables
        self._maps: dict[int, Any] = {}
        self._pairs: Any = None

    def _read(self) -> Any:
        if self._pairs is None:
            from ..writeset.fused import read_writeset_summaries
            ex = self.owner._extractor
            self._pairs = read_writeset_summaries(
                self.paths, ex.schema, verify_checksum=False, drop_past_limit=True,
                history_size=ex.history_size, table_maps=self._maps,
                warned=self.owner.warned, span=self.span)
        return self._pairs

    def __call__(self, trx: Any) -> TrxWriteset | None:
        self._read()
        start = trx.start
        try:
            for t, ws in self._pairs:
                if t.start == start:
                    if self.owner.tables is not None:
                        self.owner.tables.saw(trx, self._maps)
                    return self.owner._judge(ws, self._maps)
        except ReplToolError as exc:
            raise PairsEnded(f"{type(exc).__name__}: {exc}") from exc
        raise PairsEnded(f"no write set read for the transaction at {start}")

    def drain(self, stopped: bool) -> None:
        """Read the rest, once a write set was asked for: the stream ended
        (``stopped``: at an error of the log, which the read then meets too).  The
        warnings of the read are then the event-fed provider's.  A stream whose
        transactions carry no MySQL clock (MariaDB) asks for none: its write sets are
        not read at all, and their warnings (rows that cannot be keyed) not given."""
        if self._pairs is None:
            return
        try:
            for _ in self._read():
                pass
        except ReplToolError as exc:
            if not stopped:
                raise PairsEnded(f"{type(exc).__name__}: {exc}") from exc


def builtin_provider(schema: Any = None) -> WritesetProvider:
    """The row-decoding provider (:class:`RowWritesetProvider`)."""
    return RowWritesetProvider(schema)


def key_hash(key: int | str) -> int:
    """A uint64 for a key given as an int (taken as is) or a string (BLAKE2b-64).

    Example::

        >>> key_hash(7), key_hash("t.PRIMARY(1)") == key_hash("t.PRIMARY(1)")
        (7, True)
    """
    if isinstance(key, bool):
        raise UsageError(f"write-set key {key!r} is neither an integer nor a string")
    if isinstance(key, int):
        if not 0 <= key < 1 << 64:
            raise UsageError(f"write-set key {key} is not a uint64")
        return key
    if isinstance(key, str):
        return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    raise UsageError(f"write-set key {key!r} is neither an integer nor a string")


class MappingProvider:
    """Write sets looked up by GTID, or by ``(file basename, offset of the GTID event)``.

    Example::

        >>> p = MappingProvider({"binlog.000001:1234": TrxWriteset((1, 2))})
        >>> p.lookup(None, "/logs/binlog.000001", 1234).hashes
        (1, 2)
    """

    needs_events = False

    def __init__(self, by_key: Mapping[str, TrxWriteset]) -> None:
        self._by_key = dict(by_key)

    def lookup(self, gtid: str | None, file: str, offset: int) -> TrxWriteset | None:
        if gtid and gtid != "ANONYMOUS" and gtid in self._by_key:
            return self._by_key[gtid]
        return self._by_key.get(f"{os.path.basename(file)}:{offset}")

    def __call__(self, trx: Transaction) -> TrxWriteset | None:
        return self.lookup(trx.gtid, trx.start.file, trx.start.offset)

    def __len__(self) -> int:
        return len(self._by_key)


def load_writesets(path: str | os.PathLike[str]) -> MappingProvider:
    """A provider from a JSON file of write sets.

    Format::

        {"transactions": [
            {"gtid": "uuid:12", "keys": [1234, "db.t PRIMARY(7)"]},
            {"file": "binlog.000001", "offset": 4567, "keys": [...],
             "missing_key_tables": ["db.log"]}]}

    A transaction is matched by ``gtid`` when given (not anonymous), else by
    ``file`` (basename) and ``offset`` of its GTID event.  Integer keys are
    used as they are (uint64); string keys are hashed.

    :raises InputError: the file cannot be read.  :raises UsageError: bad content.
    """
    from ..outputs import read_text_bounded
    p = os.fspath(path)
    text = read_text_bounded(p, WRITESETS_LIMIT, "--writesets")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{p}: invalid JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"{p}: JSON nested too deeply") from None
    items = doc.get("transactions") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise UsageError(f"{p}: expected an object with a \"transactions\" list")
    by_key: dict[str, TrxWriteset] = {}
    for i, item in enumerate(items):
        by_key[_item_key(item, p, i)] = _item_writeset(item, p, i)
    return MappingProvider(by_key)


def _item_key(item: Any, path: str, i: int) -> str:
    if not isinstance(item, dict):
        raise UsageError(f"{path}: transactions[{i}] is not an object")
    gtid = item.get("gtid")
    if isinstance(gtid, str) and gtid and gtid != "ANONYMOUS":
        return gtid
    file, offset = item.get("file"), item.get("offset")
    if not isinstance(file, str) or not isinstance(offset, int):
        raise UsageError(f"{path}: transactions[{i}] needs \"gtid\", or \"file\" and "
                         "\"offset\"")
    return f"{os.path.basename(file)}:{offset}"


def _item_writeset(item: dict[str, Any], path: str, i: int) -> TrxWriteset:
    keys = item.get("keys", [])
    tables = item.get("missing_key_tables", [])
    if not isinstance(keys, list) or not isinstance(tables, list):
        raise UsageError(f"{path}: transactions[{i}]: keys and missing_key_tables are lists")
    try:
        hashes = tuple(key_hash(k) for k in keys)
    except UsageError as exc:
        raise UsageError(f"{path}: transactions[{i}]: {exc.reason}") from None
    return TrxWriteset(hashes, tuple(str(t) for t in tables))
