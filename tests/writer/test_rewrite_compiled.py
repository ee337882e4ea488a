"""rewrite_log's compiled walk (``_core.retag_walk``) against the Python walks.

With the compiled engine, :func:`rewrite_log` hands the runs of events that keep
their size to the core (it counts them, patches plain typecode-2 clocks in place
and copies whole blocks); the Python walk takes Format_descriptions, size changes
in binlogs and anything unusual.  Every case here is written three ways -- the
compiled engine, the pure-Python engine, and :func:`rewrite_log_reference`
(construct declarations only) -- and must give the same bytes and the same
report, or the same error; the tests also assert how many events the core walked.
"""

from __future__ import annotations

import random
import tempfile
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repltool.binlog import ReadOptions, read_events
from repltool.binlog.engine import ENV
from repltool.binlog.rewrite import rewrite_log, rewrite_log_reference
from repltool.certify import Mode
from repltool.certify.report import CertifyRun, ReportBuilder
from repltool.certify.retag import ClockMap
from repltool.errors import ReplToolError
from repltool.synth.generate import SynthOptions, generate

from test_writer_rewrite import gtid_offsets, synthetic_log
from writer_helpers import load

#: events the Python walk always takes itself: Start_v3, Format_description
PYTHON_TYPES = (1, 15)
MARIADB_LOGS = ("mariadb/*/mysql-bin.0*", "mariadb/relay/*/*-bin.0*")


def _events(path: Path) -> list[tuple[int, int]]:
    """(offset, type code) of every complete outer event (CRCs not checked)."""
    out = []
    try:
        for ev in read_events(path, ReadOptions(verify_checksum=False, payloads=False)):
            out.append((ev.pos.offset, ev.type_code))
    except ReplToolError:
        pass
    return out


def _outcome(fn, src: Path, dst: Path, clocks, **kw):  # type: ignore[no-untyped-def]
    try:
        report = fn(src, dst, clocks, **kw)
    except ReplToolError as exc:
        assert not dst.exists()
        return ("error", type(exc).__name__, str(exc))
    return ("ok", replace(report, dst="-"), dst.read_bytes())


def three_ways(core, monkeypatch: pytest.MonkeyPatch, src: Path, tmp: Path,  # type: ignore[no-untyped-def]
               clocks, **kw):
    """The compiled engine's outcome (== the pure-Python engine's == the reference's)
    and the number of events the core walked."""
    before = core.retag_walked()
    fast = _outcome(rewrite_log, src, tmp / "fast", clocks, **kw)
    walked = core.retag_walked() - before
    monkeypatch.setenv(ENV, "python")
    try:
        py = _outcome(rewrite_log, src, tmp / "py", clocks, **kw)
        assert core.retag_walked() == before + walked      # the Python engine walked alone
    finally:
        monkeypatch.setenv(ENV, "compiled")
    ref = _outcome(rewrite_log_reference, src, tmp / "ref", clocks, **kw)
    assert fast == ref, (fast[:2], ref[:2])
    assert py == ref, (py[:2], ref[:2])
    for name in ("fast", "py", "ref"):
        (tmp / name).unlink(missing_ok=True)
    return fast, walked


def certified_clocks(path: Path) -> dict[int, tuple[int, int]] | None:
    """The clocks ``certify --mode writeset --output`` would write (None: it cannot)."""
    clocks = ClockMap()
    try:
        ReportBuilder(CertifyRun([path], Mode.WRITESET), [clocks]).build()
    except ReplToolError:
        return None
    return {o: c for columns in clocks.by_file.values() for o, c in columns.items()}


@lru_cache(maxsize=None)
def clock_sets(path: Path) -> list[dict[int, tuple[int, int]]]:
    """No clocks (files without any), or: recorded, shifted, serial, certified."""
    cf = load(path)
    recorded = cf.clocks() if cf is not None else {}
    sets = [{}, recorded, {o: (lc + 7, sn + 1000) for o, (lc, sn) in recorded.items()},
            {o: (n, n + 1) for n, o in enumerate(sorted(recorded))}]
    if not recorded:
        return [{}]
    certified = certified_clocks(path)
    if certified is not None:
        sets.append(certified)
    return sets


def expected_walk(path: Path, report, encoding: str) -> int | None:  # type: ignore[no-untyped-def]
    """How many events the core must walk when no size changes (None: not predicted)."""
    types = [tc for _, tc in _events(path)]
    if encoding != "mysql" or 42 in types or report.bytes_delta:
        return None
    return report.events - sum(tc in PYTHON_TYPES for tc in types[:report.events])


@pytest.mark.corpus_files("path", "mysql/*/*", *MARIADB_LOGS)
def test_compiled_walk_equals_reference_on_corpus(path: Path, tmp_path: Path, core,  # type: ignore[no-untyped-def]
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus file, with its recorded, shifted, serial and certified clocks, in both
    encodings; where nothing changes size the core walked every event but the FDEs."""
    for clocks in clock_sets(path):
        for encoding in ("mysql", "delta16") if clocks else ("mysql",):
            out, walked = three_ways(core, monkeypatch, path, tmp_path, clocks,
                                     encoding=encoding, chunk_size=4096)
            if out[0] != "ok":
                continue
            want = expected_walk(path, out[1], encoding)
            if want is not None:
                assert walked == want, (encoding, walked, want)
            elif encoding == "mysql" and out[1].events > 2:
                assert walked > 0


@pytest.fixture(scope="module")
def synth_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Generated MySQL logs of every shape the walk treats apart: binlog and relay log,
    8.0 / 5.7 / 9.x tagged, GTIDs already in delta16 (re-tagging them in "mysql" grows
    every GTID event), anonymous GTIDs, compressed transactions."""
    root = tmp_path_factory.mktemp("synth")
    shapes = {
        "bin80": {}, "relay80": {"relay_log": True},
        "bin57": {"server_format": "5.7"},
        "tagged": {"server_format": "9.x", "tagged_gtids": True},
        "d16bin": {"timestamp_encoding": "delta16"},
        "d16relay": {"timestamp_encoding": "delta16", "relay_log": True},
        "anon": {"gtids": False}, "zstd": {"compression": "zstd"},
    }
    files = []
    for name, kw in shapes.items():
        res = generate(SynthOptions(root / name, transactions=120, ground_truth=False,
                                    **kw))  # type: ignore[arg-type]
        files.extend(res.files)
    return files


def test_size_changes_and_relay_logs(synth_logs: list[Path], tmp_path: Path, core,  # type: ignore[no-untyped-def]
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Binlogs: the core walks every event but the GTID events that change size, shifting
    log_pos values after the first change; relay logs: the core walks on, counting the
    stale log_pos values."""
    seen = set()
    for log in synth_logs:
        relay = "relay" in log.parent.name
        for clocks in clock_sets(log)[1:]:
            for encoding in ("mysql", "delta16"):
                shifted_before = core.retag_shifted()
                out, walked = three_ways(core, monkeypatch, log, tmp_path, clocks,
                                         encoding=encoding)
                shifted = core.retag_shifted() - shifted_before
                if len(clocks) < len(clock_sets(log)[1]):
                    continue                      # (certified: not every GTID)
                assert out[0] == "ok", out
                report = out[1]
                assert walked > 0
                if report.bytes_delta and not relay:
                    # the core shifts every event but the GTID events (re-serialized
                    # by the Python walk, which also shifts those after the first change);
                    # with "mysql", plain typecode-2 ones before the first change are
                    # patched in the core
                    core_walk = report.events - sum(tc in PYTHON_TYPES or o in clocks
                                                    for o, tc in _events(log))
                    assert walked == core_walk if encoding == "delta16" else walked >= core_walk
                    assert report.log_pos_updated - len(clocks) <= shifted \
                        < report.log_pos_updated
                    seen.add("binlog size change")
                if report.bytes_delta and relay:
                    assert report.stale_log_pos > 0 and report.log_pos_updated == 0
                    seen.add("relay size change")
                    if encoding == "mysql":       # every GTID grows; the core patches none
                        types = [tc for _, tc in _events(log)]
                        assert walked == report.events - sum(tc in PYTHON_TYPES or tc == 33
                                                             for tc in types)
                want = expected_walk(log, report, encoding)
                if want is not None:
                    assert walked == want
                    seen.add("no size change")
    assert seen == {"binlog size change", "relay size change", "no size change"}


def test_truncated_last_event(synth_logs: list[Path], tmp_path: Path, core,  # type: ignore[no-untyped-def]
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A log cut inside its last event: the tail is copied with the same warning."""
    for log in synth_logs[:3]:
        events = _events(log)
        last = events[-1][0]
        cut = tmp_path / "cut"
        for at in (last + 5, last + 19, log.stat().st_size - 1):
            cut.write_bytes(log.read_bytes()[:at])
            for clocks in clock_sets(log)[1:]:
                out, walked = three_ways(core, monkeypatch, cut, tmp_path, clocks)
                assert out[0] == "ok" and "ends mid-event" in out[1].warnings[0]
                assert walked == expected_walk(cut, out[1], "mysql") == len(events) - 1 - sum(
                    tc in PYTHON_TYPES for _, tc in events)


def test_event_longer_than_the_block(tmp_path: Path, core,  # type: ignore[no-untyped-def]
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An event far longer than the block (64 KiB in an 8 KiB block) is copied unread,
    with GTIDs before and after it patched."""
    src = tmp_path / "src"
    second = synthetic_log([(2, 3)])
    fde_end = 4 + int.from_bytes(second[4 + 9:4 + 13], "little")
    data = synthetic_log([(0, 1), (1, 2)], filler=64 << 10) + second[fde_end:]
    src.write_bytes(data)
    offsets = gtid_offsets(src, verify=False)
    assert len(offsets) == 3
    clocks = dict(zip(offsets, [(0, 5), (5, 6), (5, 7)]))
    out, walked = three_ways(core, monkeypatch, src, tmp_path, clocks, chunk_size=64)
    assert out[0] == "ok" and out[1].gtid_events_rewritten == 3
    assert walked == out[1].events - 1


def test_wrong_offsets_and_bad_crcs(synth_logs: list[Path], tmp_path: Path, core,  # type: ignore[no-untyped-def]
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock offset inside an event or past the end: the same UsageError; a GTID
    event with a wrong CRC: the same ChecksumMismatch; an invalid clock: the same error."""
    log = synth_logs[0]
    clocks = clock_sets(log)[2]
    offsets = sorted(clocks)
    bad = dict(clocks)
    bad[offsets[10] + 3] = (1, 2)
    bad[log.stat().st_size + 7] = (1, 2)
    out, _ = three_ways(core, monkeypatch, log, tmp_path, bad)
    assert out[0] == "error" and out[1] == "UsageError" and "no GTID event at offset" in out[2]
    data = bytearray(log.read_bytes())
    end = next(o for o, _ in _events(log) if o > offsets[20])
    data[end - 1] ^= 0x01                  # the 21st GTID event's CRC
    broken = tmp_path / "broken"
    broken.write_bytes(bytes(data))
    out, _ = three_ways(core, monkeypatch, broken, tmp_path, clocks)
    assert out[0] == "error" and out[1] == "ChecksumMismatch" and f":{offsets[20]}" in out[2]
    invalid = dict(clocks)
    invalid[offsets[30]] = (9, 9)
    out, _ = three_ways(core, monkeypatch, log, tmp_path, invalid)
    assert out[0] == "error" and out[1] == "UsageError" and "invalid logical" in out[2]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                  HealthCheck.too_slow])
@given(data=st.data())
def test_random_clocks(synth_logs: list[Path], core, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                       data: st.DataObject) -> None:
    """Random clocks on a random subset of the GTID events (some unchanged, some invalid,
    a stray offset now and then), either encoding, sometimes a cut log or a flipped byte."""
    log = data.draw(st.sampled_from(synth_logs), label="log")
    recorded = clock_sets(log)[1]
    rng = random.Random(data.draw(st.integers(0, 1 << 30), label="seed"))
    clocks: dict[int, tuple[int, int]] = {}
    for off, (lc, sn) in recorded.items():
        pick = rng.random()
        if pick < 0.2:
            continue
        if pick < 0.35:
            clocks[off] = (lc, sn)
        else:
            s = rng.randrange(1, 1 << rng.choice((8, 16, 40)))
            clocks[off] = (rng.choice((0, rng.randrange(s))), s)
    damage = data.draw(st.sampled_from(("none", "none", "none", "invalid", "stray", "flip")),
                       label="damage")
    if damage == "invalid" and clocks:
        clocks[rng.choice(sorted(clocks))] = (rng.randrange(5), rng.randrange(5))
    if damage == "stray":
        clocks[rng.randrange(log.stat().st_size + 50)] = (0, 1)
    raw = bytearray(log.read_bytes())
    if damage == "flip":
        raw[rng.randrange(200, len(raw))] ^= 1 << rng.randrange(8)
    if data.draw(st.booleans(), label="cut"):
        del raw[rng.randrange(len(raw) // 2, len(raw)):]
    encoding = data.draw(st.sampled_from(("mysql", "delta16")), label="encoding")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / log.name
        src.write_bytes(bytes(raw))
        out, walked = three_ways(core, monkeypatch, src, Path(tmp), clocks,
                                 encoding=encoding, chunk_size=rng.choice((64, 4096, 1 << 20)))
        if out[0] == "ok" and out[1].events > 3:
            assert walked > 0
