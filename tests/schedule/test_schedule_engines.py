"""``schedule``'s input read by the compiled core equals the general reader's.

With ``REPLTOOL_ENGINE=python`` :func:`read_sim_transactions` is the general reader
(``group_transactions(read_events(...))`` watched by ``SourceRotations``): it is the
reference here.  The compiled engine must give the same simulator transactions,
source-file marks, counters and errors, and must have run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from repltool.binlog import corescan, engine
from repltool.errors import ReplToolError
from repltool.schedule.source import SourceStats, read_sim_transactions


def _sims(monkeypatch, which: str, paths: list[Path]) -> object:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(engine.ENV, which)
    stats = SourceStats()
    try:
        sims = [dataclasses.astuple(s) for s in read_sim_transactions(paths, lenient=True,
                                                                       stats=stats)]
    except ReplToolError as exc:
        return type(exc).__name__, str(exc)
    return sims, dataclasses.astuple(stats)


def _same(monkeypatch, paths: list[Path]) -> object:  # type: ignore[no-untyped-def]
    from repltool.binlog import _core
    before = _core.events_walked()
    compiled = _sims(monkeypatch, "compiled", paths)
    walked = _core.events_walked() - before
    assert compiled == _sims(monkeypatch, "python", paths)
    return compiled, walked


@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/*/*")
def test_every_corpus_file(monkeypatch, path: Path) -> None:  # type: ignore[no-untyped-def]
    _, walked = _same(monkeypatch, [path])
    if path.name.startswith("mysql-bin.0") and path.parent.name in ("small", "rotation"):
        assert walked > 0


def test_relay_logs_and_file_sets(monkeypatch, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Source rotations inside relay logs (MariaDB's live replica, MySQL synth relay
    logs split by max_relay_log_size) and many binlogs: the same new-source marks."""
    from repltool.synth import SynthOptions, generate
    relay = sorted((corpus / "mariadb/relay").rglob("*relay-bin.0*"))
    rotation = sorted((corpus / "mariadb/rotation").glob("mysql-bin.0*"))
    synth = generate(SynthOptions(out=tmp_path / "relay", transactions=500, ground_truth=False,
                                  relay_log=True, max_relay_log_size=20_000,
                                  max_binlog_size=60_000)).files
    plain = generate(SynthOptions(out=tmp_path / "bin", transactions=500, ground_truth=False,
                                  max_binlog_size=30_000)).files
    for paths in (relay, rotation):     # no MySQL clocks: the same error
        assert paths
        assert _same(monkeypatch, list(paths))[0][0] == "SimulationError"
    for paths in (synth, plain):
        (sims, stats), walked = _same(monkeypatch, list(paths))  # type: ignore[misc]
        assert walked > 0 and len(sims) >= 400
        assert sum(s[5] for s in sims) >= 2           # new_source_file marks


def test_hand_over_resumes(monkeypatch, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """A file the core leaves mid-way: the general reader continues at the boundary."""
    path = corpus / "mysql/mysql80/mysql-test__suite__binlog__std_data__ver_trunk_row_v2.001"
    starts: list[int] = []
    real = corescan.resume_events

    def spy(fi, start, options=None):  # type: ignore[no-untyped-def]
        starts.append(start)
        return real(fi, start, options)

    monkeypatch.setattr(corescan, "resume_events", spy)
    (sims, _), walked = _same(monkeypatch, [path])  # type: ignore[misc]
    assert walked > 0 and len(starts) == 1 and starts[0] > 4 and len(sims) > 11
