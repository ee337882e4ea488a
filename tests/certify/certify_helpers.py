"""Builders shared by the certify tests: short names for write-set items."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from repltool.certify import (
    CertifyOptions,
    CertResult,
    CertTransaction,
    GarbageCollect,
    GtidSet,
    KeyRef,
    Mode,
    certify,
)

GR = Mode.GROUP_REPLICATION
UUID1 = "11111111-1111-1111-1111-111111111111"
AAAA = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"


def ws(*names: str | int) -> tuple[int, ...]:
    """Stable fake hashes for item names such as ``"ws1"`` or ``"t1.1"``."""
    return tuple(n if isinstance(n, int)
                 else int.from_bytes(hashlib.blake2b(n.encode(), digest_size=8).digest(), "little")
                 for n in names)


def row(table: str, *pk: int) -> tuple[tuple[int, ...], tuple[KeyRef, ...]]:
    """Write set and key descriptions for PRIMARY rows ``pk`` of ``test.table``."""
    keys = tuple(KeyRef("test", table, "PRIMARY", (str(v),)) for v in pk)
    return ws(*(f"test.{table}.{v}" for v in pk)), keys


def trx(*items: str | int, **kw: object) -> CertTransaction:
    """A transaction writing the named items."""
    return CertTransaction(writeset=ws(*items), **kw)  # type: ignore[arg-type]


def dml(table: str, *pk: int, **kw: object) -> CertTransaction:
    hashes, keys = row(table, *pk)
    return CertTransaction(writeset=hashes, keys=keys, **kw)  # type: ignore[arg-type]


DDL = CertTransaction(ddl=True)
EMPTY = CertTransaction(empty=True)
VIEW_CHANGE = CertTransaction(view_change=True)


def gtids(text: str) -> GtidSet:
    return GtidSet.parse(text)


def clocks(results: Iterable[CertResult]) -> list[tuple[int, int] | None]:
    return [r.computed for r in results]


def gr(items: Sequence[CertTransaction | GarbageCollect], **options: object) -> list[CertResult]:
    """Certify in group-replication mode."""
    return list(certify(items, GR, CertifyOptions(**options)))  # type: ignore[arg-type]


def serial_file(items: Sequence[CertTransaction], file: str = "binlog.000001",
                recorded: Sequence[int] | None = None) -> list[CertTransaction]:
    """Put transactions in one file with commit-order clocks ``(lc_i, i)``.

    ``recorded`` gives each logged last_committed; default ``i - 1`` (serial).
    """
    out = []
    for i, t in enumerate(items, start=1):
        lc = i - 1 if recorded is None else recorded[i - 1]
        out.append(_with(t, file=file, recorded=(lc, i), gtid=t.gtid or f"{UUID1}:{i}"))
    return out


def _with(t: CertTransaction, **changes: object) -> CertTransaction:
    from dataclasses import replace
    return replace(t, **changes)  # type: ignore[arg-type]
