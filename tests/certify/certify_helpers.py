"""Builders shared by the certify tests: short names for write-set items."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

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


# ---- Group Replication from packed units (the --spark driver, without Spark) ----

def packed_units(paths: Sequence[Any], options: CertifyOptions | None,
                 schema_paths: Sequence[Any], hashed: bool = False) -> list[Any]:
    """One :class:`~repltool.distributed.wspack.PackedPairs` per file, made as an executor
    makes it (:func:`~repltool.distributed.pairs.pairs_unit`) and pickled as the driver
    receives it.  The general reader's units (statements kept); ``hashed``: as the text
    report's run asks (``PairsSpec.hashed``: key hashes, no descriptions)."""
    import pickle

    from repltool.certify.stitched import PairsRun
    from repltool.distributed.pairs import PairsSpec, pairs_unit
    from repltool.distributed.units import Task, Unit
    run = PairsRun([str(p) for p in paths], "group-replication", options,
                   schema_paths=[str(p) for p in schema_paths])
    spec = PairsSpec(run.schema, run.options.history_size, statements=not hashed, hashed=hashed)
    return [pickle.loads(pickle.dumps(pairs_unit(Task("pairs", extra=spec),
                                                 Unit(i, (str(p),))).payload))
            for i, p in enumerate(paths)]


def packed_reports(paths: Sequence[Any], options: CertifyOptions | None = None,
                   schema_paths: Sequence[Any] = (), *, hashed: bool = False,
                   python_reference: bool = False, core: bool = True) -> tuple[Any, Any, Any]:
    """(the object path's report of the general reader's pairs, the report of
    :class:`~repltool.distributed.grpacked.PackedGroupCertifier` from the packed units,
    that certifier); asserts it certified every transaction that is not truncated.

    :param hashed: the packed path certifies units packed for the text report.
    :param python_reference: the object path with the Python certifier (not the core's).
    :param core: False: the packed certifier without the compiled core."""
    from contextlib import nullcontext
    from unittest import mock

    import repltool.certify.report as report_mod
    from repltool.certify.report import ReportBuilder
    from repltool.certify.stitched import PairsRun
    from repltool.distributed import grpacked
    from repltool.distributed.wspack import unpack_pairs
    units = packed_units(paths, options, schema_paths)
    given = packed_units(paths, options, schema_paths, hashed=True) if hashed else units
    pairs = [pair for u in units for pair in unpack_pairs(u)]
    first = pairs[0][0] if pairs else None

    def new_run() -> PairsRun:
        return PairsRun([str(p) for p in paths], "group-replication", options,
                        schema_paths=[str(p) for p in schema_paths])
    objects = new_run()
    objects.attach(iter(pairs), first)
    with (mock.patch.object(report_mod, "core_group_certifier", lambda *a: None)
          if python_reference else nullcontext()):
        want = ReportBuilder(objects).build()
    arrays = new_run()
    arrays.attach(iter(()), first)
    assert grpacked.applies(arrays)

    def count() -> None:
        arrays.truncated_skipped += 1
    with (nullcontext() if core else mock.patch.object(grpacked, "core_applies",
                                                       lambda *a: False)):
        certifier = grpacked.PackedGroupCertifier(arrays.options, arrays.schema, count)
    arrays.attach_packed_parts(lambda: certifier.parts(iter(given)))
    got = ReportBuilder(arrays).build()
    assert certifier.certified == sum(not trx.truncated for trx, _ in pairs)
    return want, got, certifier
