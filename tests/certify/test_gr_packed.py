"""Group Replication certification from packed arrays (issue 15), without Spark.

``certify --mode group-replication --spark`` builds its report on the driver
with :class:`repltool.distributed.grpacked.PackedGroupCertifier`, straight
from the executors' :class:`~repltool.distributed.wspack.PackedPairs`.  Here
the same units are made in-process (:func:`repltool.distributed.pairs.pairs_unit`,
what an executor runs) and the report from the arrays must equal the report
the object path (one ``CertTransaction`` and ``CertResult`` per transaction)
builds from the unpacked pairs: on every MySQL corpus file, on a synth log
split in several units (the certifier's state crosses units), and with
``--gc-every`` and ``--session-order``.  Each test asserts the array path
certified every transaction.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from repltool.certify import CertifyOptions
from repltool.distributed import grpacked
from repltool.distributed import wspack
from repltool.distributed.wspack import unpack_pairs

from certify_helpers import packed_reports, packed_units


def _is_binlog(p: Path) -> bool:
    return p.suffix not in (".json", ".md", ".sql", ".index", ".txt") and p.is_file()


def _both(paths: list[Path], options: CertifyOptions | None = None,
          schema_paths: list[Path] = (), hashed: bool = False) -> tuple[Any, Any, int]:
    """(object-path report, array-path report, transactions certified from arrays).

    :param hashed: the array path certifies units packed as for the text report
        (``PairsSpec.hashed``: key hashes, no descriptions)."""
    want, got, certifier = packed_reports(paths, options, schema_paths, hashed=hashed)
    return want, got, certifier.certified


@pytest.mark.corpus_files("path", "mysql/*/*", select=_is_binlog)
def test_array_path_equals_object_path_on_every_mysql_corpus_file(path: Path) -> None:
    want, got, certified = _both([path])
    assert got == want
    assert certified == want.summary.before.transactions


#: no collection, --gc-every 50, --session-order
_OPTION_SETS = (None, replace(CertifyOptions(), gc_every=50),
                replace(CertifyOptions(), session_order=True))


def _synth_set(tmp_path: Path, capsys, seed: int) -> tuple[list[Path], list[Path]]:
    """A rotated synth set (several binlogs, DDL, UNIQUE and FOREIGN keys) and its schema."""
    from repltool.cli import run
    out = tmp_path / "synth"
    assert run(["synth", "-o", str(out), "--size", "1500000", "--seed", str(seed),
                "--max-binlog-size", "400000", "--no-ground-truth"]) == 0
    capsys.readouterr()
    files = sorted(out.glob("binlog.0*"))
    assert len(files) > 1
    return files, [out / "schema.sql"]


def test_array_path_equals_object_path_on_synth_units(tmp_path: Path, capsys) -> None:
    files, schema = _synth_set(tmp_path, capsys, 21)
    for options in _OPTION_SETS:
        want, got, certified = _both(files, options, schema)
        assert got == want
        assert certified > 1000
        assert want.summary.changed > 0


def _hashed_units(units_before: tuple[int, int, int]) -> tuple[int, int, int]:
    after = grpacked.unit_counts()
    return tuple(a - b for a, b in zip(after, units_before))  # type: ignore[return-value]


@pytest.mark.corpus_files("path", "mysql/*/*", select=_is_binlog)
def test_hash_units_equal_object_path_on_every_mysql_corpus_file(path: Path) -> None:
    """Units packed for the text report (read with the key-hash reader, no key
    descriptions) certify as the object path certifies the general reader's pairs."""
    before = grpacked.unit_counts()
    want, got, certified = _both([path], hashed=True)
    assert got == want
    assert certified == want.summary.before.transactions
    units, described_not, hash_read = _hashed_units(before)
    assert units == 1 and described_not == 1       # no descriptions block
    # a file the fused reader reads (binlogs, every table mapped) goes as GrFields
    unit = packed_units([path], None, [], hashed=True)[0]
    assert unit.keys is None
    if unit.n:
        assert hash_read == (unit.trxs.cls is wspack.GrFields)


def test_hash_units_equal_object_path_on_synth_units(tmp_path: Path, capsys) -> None:
    """Several files (the certifier's state crosses units), DDL, a schema with UNIQUE
    and FOREIGN keys, --gc-every and --session-order: the units of the key-hash reader
    certify as the object path does, and every unit went as GrFields."""
    files, schema = _synth_set(tmp_path, capsys, 23)
    for options in _OPTION_SETS:
        before = grpacked.unit_counts()
        want, got, certified = _both(files, options, schema, hashed=True)
        assert got == want
        assert certified > 1000 and want.summary.changed > 0
        assert _hashed_units(before) == (len(files),) * 3


def test_hash_units_cannot_be_unpacked(tmp_path: Path, capsys) -> None:
    """A unit without descriptions refuses to be read as pairs (the driver reads
    it only as arrays)."""
    from repltool.cli import run
    out = tmp_path / "synth"
    assert run(["synth", "-o", str(out), "--size", "200000", "--seed", "5",
                "--no-ground-truth"]) == 0
    capsys.readouterr()
    unit = packed_units(sorted(out.glob("binlog.0*"))[:1], None, [], hashed=True)[0]
    assert unit.n > 0 and unit.keys is None
    with pytest.raises(RuntimeError, match="descriptions"):
        unpack_pairs(unit)
