"""The compiled core hands over to the general reader anywhere: property test.

One event of a synth log set (any file, any place: inside a transaction, between a
relay log's source Rotates, before a later FDE) becomes an ignorable event of an
unknown type - the general reader and grouper skip it, the core stops there.  The
read then continues with the general reader from the last transaction boundary; the
output of ``stats`` and ``schedule``'s input must be those of the pure-Python engine
(which gives up on such a file and reads it all with the general reader).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from repltool.binlog import ReadOptions, corescan, engine, read_events
from repltool.errors import ReplToolError
from repltool.schedule.source import SourceStats, read_sim_transactions
from repltool.stats import compute_clock_stats, compute_stats, stats_to_dict

from fixtures.forge import make_ignorable

def _make_ignorable(path: Path, which: int) -> int:
    """Turn event number ``which`` (not the first FDE) of ``path`` into an ignorable
    event of an unknown type, with a valid CRC; its offset."""
    events = [e for e in read_events(path, ReadOptions(types=frozenset()))]
    ev = events[1 + which % (len(events) - 1)]
    make_ignorable(path, ev.pos.offset, ev.event_size)
    return ev.pos.offset


def _outputs(monkeypatch, which: str, files: list[str]) -> object:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(engine.ENV, which)
    out = []
    for fn in (compute_stats, compute_clock_stats):
        try:
            out.append(stats_to_dict(fn(files)))
        except ReplToolError as exc:
            out.append(str(exc))
    stats = SourceStats()
    try:
        out.append([dataclasses.astuple(s) for s in read_sim_transactions(
            files, lenient=True, stats=stats)])
        out.append(dataclasses.astuple(stats))
    except ReplToolError as exc:
        out.append(str(exc))
    return out


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), fmt=st.sampled_from(["5.7", "8.0", "9.x"]),
       relay=st.booleans(), file_no=st.integers(0, 20), which=st.integers(0, 10_000))
def test_hand_over_anywhere(monkeypatch, tmp_path_factory, seed: int, fmt: str,  # type: ignore[no-untyped-def]
                            relay: bool, file_no: int, which: int) -> None:
    from repltool.synth import SynthOptions, generate
    out = tmp_path_factory.mktemp("handover")
    r = generate(SynthOptions(out=out, transactions=120, ground_truth=False, seed=seed,
                              server_format=fmt, relay_log=relay, max_binlog_size=8_000,
                              max_relay_log_size=6_000 if relay else None))
    files = [str(f) for f in r.files]
    target = files[file_no % len(files)]
    offset = _make_ignorable(Path(target), which)
    monkeypatch.setenv(engine.ENV, "compiled")
    core = corescan.scan_totals(files, top=5)
    assert core is not None and core.rest is not None            # the core handed over
    assert files[core.rest.index] == target or core.rest.index < files.index(target)
    assert (core.rest.index, core.rest.offset) <= (files.index(target), offset)
    assert _outputs(monkeypatch, "compiled", files) == _outputs(monkeypatch, "python", files)


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(file_no=st.integers(0, 100), which=st.integers(0, 100_000))
def test_hand_over_in_real_relay_logs(monkeypatch, tmp_path_factory, corpus: Path,  # type: ignore[no-untyped-def]
                                      file_no: int, which: int) -> None:
    """A live MariaDB replica's relay logs (source Rotates, FDEs of both servers,
    transactions split across relay files), copied and changed at one event."""
    import shutil
    src = sorted((corpus / "mariadb/relay").rglob("*relay-bin.0*"))
    assert len(src) > 10
    out = tmp_path_factory.mktemp("relay")
    files = []
    for i, p in enumerate(src):
        dst = out / f"{i:03d}-{p.name}"
        shutil.copyfile(p, dst)
        files.append(str(dst))
    target = files[file_no % len(files)]
    _make_ignorable(Path(target), which)
    monkeypatch.setenv(engine.ENV, "compiled")
    core = corescan.scan_totals(files, top=5)
    assert core is not None and core.rest is not None
    assert _outputs(monkeypatch, "compiled", files) == _outputs(monkeypatch, "python", files)
