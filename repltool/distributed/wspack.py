"""A unit's ``(transaction, write set)`` pairs as columns: how ``pairs`` tasks send them.

Group Replication certification (and ``writeset-session``, relay logs,
``explain``) runs on the driver over every file's pairs in order.  Sent as
pickled objects, a write set is one :class:`~repltool.writeset.WriteKey` per
key (names, values, the key string): the driver spent more time unpickling
them than the executors spent reading.  :class:`PackedPairs` sends instead:

* the transactions as :mod:`.columns`, their events only where a reader of
  the pairs looks at them (a View_change event, or a Query event other than
  ``BEGIN``/``COMMIT``: certification and ``explain`` read nothing else);
* the write sets' flags and table lists as columns, and their keys as
  ``offsets`` (``int64``, one more than the write sets) and ``hashes``
  (``uint64``) arrays: what certification reads;
* the keys' descriptions (database, table, index, values, key string, parent)
  as one compressed block, decoded only when a key is described (a
  dependency explained, a JSON row): :class:`PackedKey` reads it then.

Where the driver only certifies the arrays for Group Replication's text report
(:mod:`.grpacked`, ``PairsSpec.hashed``) a unit goes without that block
(``keys`` None: :func:`pack_pairs` with ``describe=False``), and, when the
executor read it with the key-hash reader (:func:`repltool.writeset.read_writeset_hashes`),
as :func:`pack_hashed`: only the columns the certifier reads
(:class:`GrFields`, :class:`GrWriteset`).  Such units cannot be unpacked.

:func:`unpack_pairs` gives back pairs whose write sets certify exactly as the
originals: same hashes in the same order, same flags, and keys that describe
themselves as the originals (:func:`repltool.certify.model.key_ref`).
"""

from __future__ import annotations

import gc
import pickle
import zlib
from array import array
from dataclasses import replace
from typing import Any, Iterable, NamedTuple, Sequence

from .columns import Columns, from_lists, pack, unpack

_VIEW_CHANGE_EVENT = 37
_TRIVIAL = (b"BEGIN", b"COMMIT")


class KeyStore:
    """The descriptions of a unit's keys, decoded on first use."""

    __slots__ = ("_blob", "_records")

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        self._records: list[tuple[Any, ...]] | None = None

    def record(self, index: int) -> tuple[Any, ...]:
        """``(db, table, index, values, key, parent)`` of the ``index``-th key of the unit."""
        if self._records is None:
            self._records = pickle.loads(zlib.decompress(self._blob))
        return self._records[index]

    @property
    def decoded(self) -> bool:
        return self._records is not None


class PackedKey:
    """One key of a packed write set: its hash at once, its description when asked."""

    __slots__ = ("hash", "_store", "_at")

    def __init__(self, hash: int, store: KeyStore, at: int) -> None:
        self.hash = hash
        self._store, self._at = store, at

    db = property(lambda self: self._store.record(self._at)[0])
    table = property(lambda self: self._store.record(self._at)[1])
    index = property(lambda self: self._store.record(self._at)[2])
    values = property(lambda self: self._store.record(self._at)[3])
    key = property(lambda self: self._store.record(self._at)[4])
    parent = property(lambda self: self._store.record(self._at)[5])

    def write_key(self) -> Any:
        """The :class:`~repltool.writeset.WriteKey` it stands for."""
        from ..writeset import WriteKey
        db, table, index, values, key, parent = self._store.record(self._at)
        return WriteKey(db, table, index, values, key, self.hash, parent)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedKey):
            other = other.write_key()
        return bool(self.write_key() == other)

    def __hash__(self) -> int:
        return hash(self.write_key())

    def __repr__(self) -> str:
        return f"Packed{self.write_key()!r}"


class GrFields(NamedTuple):
    """What Group Replication certification reads of a transaction (:func:`pack_hashed`'s
    columns; :class:`~repltool.binlog.Transaction`'s fields of the same names, and
    ``has_rows``: whether it has Rows events)."""

    truncated: bool
    gtid: str | None
    kind: str
    has_rows: bool
    last_committed: int | None
    sequence_number: int | None
    thread_id: int | None
    server_id: int
    original_commit_timestamp: int | None
    immediate_commit_timestamp: int | None
    commit_id: int | None


class GrWriteset(NamedTuple):
    """What Group Replication certification reads of a write set besides its hashes
    (:class:`~repltool.writeset.TrxWriteset`'s fields of the same names)."""

    missing_key_tables: tuple[str, ...]
    limit_reached: bool
    missing_key_reasons: tuple[str, ...]
    hashes_only: tuple[int, ...]


class PackedPairs:
    """A unit's pairs as columns (see the module doc); iterate :func:`unpack_pairs`."""

    __slots__ = ("n", "trxs", "events", "present", "writesets", "offsets", "hashes", "keys")

    def __init__(self, n: int, trxs: Columns, events: dict[int, tuple[Any, ...]],
                 present: bytes, writesets: Columns, offsets: bytes, hashes: bytes,
                 keys: bytes | None) -> None:
        self.n, self.trxs, self.events, self.present = n, trxs, events, present
        self.writesets, self.offsets, self.hashes, self.keys = writesets, offsets, hashes, keys

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Any:
        return iter(unpack_pairs(self))

    def __reduce__(self) -> Any:
        return (PackedPairs, (self.n, self.trxs, self.events, self.present, self.writesets,
                              self.offsets, self.hashes, self.keys))


def _read_by_pairs(events: Sequence[Any]) -> bool:
    for ev in events:
        if ev.type_code == _VIEW_CHANGE_EVENT:
            return True
        body = getattr(ev, "body", None)
        if getattr(body, "query", None) not in _TRIVIAL:
            return True
    return False


def pack_pairs(pairs: Sequence[tuple[Any, Any]], describe: bool = True) -> PackedPairs:
    """Pack ``(slim transaction, TrxWriteset or None)`` pairs (see the module doc).

    :param describe: send the keys' descriptions (False: ``keys`` is None, the unit
        can only be certified from its arrays)."""
    events = {i: trx.events for i, (trx, _) in enumerate(pairs)
              if trx.events and _read_by_pairs(trx.events)}
    trxs = pack([replace(trx, events=()) if trx.events else trx for trx, _ in pairs],
                skip=("events",))
    present = bytes(ws is not None for _, ws in pairs)
    given = [ws for _, ws in pairs if ws is not None]
    offsets, hashes = array("q", [0]), array("Q")
    records: list[tuple[Any, ...]] = []
    for ws in given:
        for k in ws.keys:
            hashes.append(k.hash)
            if describe:
                records.append((k.db, k.table, k.index, k.values, k.key, k.parent))
        offsets.append(len(hashes))
    return PackedPairs(
        len(pairs), trxs, events, zlib.compress(present, 1),
        pack([replace(ws, keys=()) for ws in given], skip=("keys",)),
        zlib.compress(offsets.tobytes(), 1), zlib.compress(hashes.tobytes(), 1),
        zlib.compress(pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL), 1)
        if describe else None)


def pack_hashed(pairs: Iterable[tuple[Any, Any]]) -> PackedPairs | None:
    """Pack the pairs of the key-hash reader (write sets a
    :class:`~repltool.writeset.model.HashedWriteset` or a ``TrxWriteset``) for Group
    Replication's certification from arrays: :class:`GrFields` of each transaction,
    its View_change events, :class:`GrWriteset` of each write set and the hash
    arrays; no descriptions (``keys`` None).

    :returns: None when a transaction would make the certifier rebuild the objects to
        word its error (a negative clock, a hash outside ``uint64``): such a unit
        goes with its descriptions (:func:`pack_pairs`).
    """
    cols: list[list[Any]] = [[] for _ in GrFields._fields]
    (truncated, gtid, kind, has_rows, lcs, seqs, threads, servers, originals,
     immediates, commit_ids) = cols
    events: dict[int, tuple[Any, ...]] = {}
    present = bytearray()
    offsets, hashes = array("q", [0]), array("Q")
    wcols: list[list[Any]] = [[] for _ in GrWriteset._fields]
    missing, limit, reasons, only = wcols
    try:
        for i, (trx, ws) in enumerate(pairs):
            lc, seq = trx.last_committed, trx.sequence_number
            if not trx.truncated and ((lc or 0) < 0 or (seq or 0) < 0):
                return None
            truncated.append(trx.truncated)
            gtid.append(trx.gtid)
            kind.append(trx.kind)
            has_rows.append(bool(trx.rows_events))
            lcs.append(lc)
            seqs.append(seq)
            threads.append(trx.thread_id)
            servers.append(trx.server_id)
            originals.append(trx.original_commit_timestamp)
            immediates.append(trx.immediate_commit_timestamp)
            commit_ids.append(trx.commit_id)
            if trx.events:
                views = tuple(ev._replace(raw=b"", body=None) for ev in trx.events
                              if ev.type_code == _VIEW_CHANGE_EVENT)
                if views:
                    events[i] = views
            present.append(ws is not None)
            if ws is None:
                continue
            hashes.extend(ws.hashes)
            offsets.append(len(hashes))
            missing.append(ws.missing_key_tables)
            limit.append(ws.limit_reached)
            reasons.append(ws.missing_key_reasons)
            only.append(())
    except (OverflowError, TypeError):
        return None
    return PackedPairs(
        len(present), from_lists(GrFields, cols), events, zlib.compress(bytes(present), 1),
        from_lists(GrWriteset, wcols), zlib.compress(offsets.tobytes(), 1),
        zlib.compress(hashes.tobytes(), 1), None)


def unpack_pairs(packed: PackedPairs) -> list[tuple[Any, Any]]:
    """The pairs: transactions and write sets equal to the packed ones (keys as
    :class:`PackedKey`, described from the unit's block when first asked)."""
    if packed.n == 0:
        return []
    if packed.keys is None:
        raise RuntimeError("a unit packed without its keys' descriptions (for Group "
                           "Replication's certification from arrays) cannot be unpacked")
    # every object made here is acyclic and lives on: the cyclic collector, which
    # would otherwise run every few hundred of them over the growing heap, waits
    paused = gc.isenabled()
    gc.disable()
    try:
        return _unpacked(packed)
    finally:
        if paused:
            gc.enable()


def _unpacked(packed: PackedPairs) -> list[tuple[Any, Any]]:
    trxs = unpack(packed.trxs)
    for i, events in packed.events.items():
        trxs[i] = replace(trxs[i], events=events)
    offsets, hashes = array("q"), array("Q")
    offsets.frombytes(zlib.decompress(packed.offsets))
    hashes.frombytes(zlib.decompress(packed.hashes))
    store = KeyStore(packed.keys)
    keys = list(map(PackedKey, hashes, [store] * len(hashes), range(len(hashes))))
    given = iter(unpack(packed.writesets) if len(packed.writesets) else ())
    out: list[tuple[Any, Any]] = []
    w = 0
    for trx, present in zip(trxs, zlib.decompress(packed.present)):
        if not present:
            out.append((trx, None))
            continue
        ws = next(given)
        start, end = offsets[w], offsets[w + 1]
        w += 1
        out.append((trx, replace(ws, keys=tuple(keys[start:end])) if end > start else ws))
    return out
