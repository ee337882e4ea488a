"""``stats --clock-only`` and the compiled core's hand-over, held to the general reader.

The expected figures are computed here from ``group_transactions(read_events(...))``
with construct's decoders (``fast=False``), not from the code under test.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, engine, read_events
from repltool.binlog import corescan
from repltool.binlog.transactions import GROUPING_TYPES, group_transactions
from repltool.cli import run
from repltool.errors import ReplToolError
from repltool.stats import compute_clock_stats, compute_stats, distance_bucket, stats_to_dict
from repltool.synth import write_sample

#: the general reader as stats reads: construct's decoders, no hand-written fast path
GENERAL = ReadOptions(fast=False, types=GROUPING_TYPES)


def _expected(paths: list[Path], top: int = 5) -> object:
    """Per file: events, transactions, bytes, clock figures and the biggest list."""
    events: Counter[str] = Counter()

    def count(evs):  # type: ignore[no-untyped-def]
        for ev in evs:
            events[ev.pos.file] += 1
            yield ev

    try:
        trx = list(group_transactions(count(read_events(paths, GENERAL))))
    except ReplToolError as exc:
        return type(exc).__name__, str(exc)
    out = {}
    for p in dict.fromkeys(str(p) for p in paths):
        mine = [(i, t) for i, t in enumerate(trx) if t.start.file == p]
        clocked = [t for _, t in mine if t.last_committed is not None]
        windows, longest, run_lc, run_len = 0, 0, None, 0
        for t in clocked:
            if t.last_committed == run_lc:
                run_len += 1
            else:
                windows, run_lc, run_len = windows + 1, t.last_committed, 1
            longest = max(longest, run_len)
        big = sorted(mine, key=lambda it: (-it[1].size, it[0]))[:top]
        gtids = [t.gtid for _, t in mine if t.gtid is not None]
        out[p] = dict(
            events=events[p], transactions=len(mine), bytes=sum(t.size for _, t in mine),
            clock=(len(clocked), sum(t.last_committed == 0 for t in clocked),
                   dict(Counter(distance_bucket(t.sequence_number - t.last_committed)
                                for t in clocked)),
                   windows, longest,
                   sum(t.sequence_number <= t.last_committed
                       and (t.sequence_number, t.last_committed) != (0, 0) for t in clocked)),
            biggest=[(t.gtid, t.start.file, t.start.offset, t.size, t.duration, t.num_events)
                     for _, t in big],
            range=(gtids[0] if gtids else None, gtids[-1] if gtids else None,
                   mine[0][1].timestamp if mine else None,
                   mine[-1][1].end_timestamp if mine else None))
    return out


def _clock_only(paths: list[Path], fn=compute_clock_stats) -> object:  # type: ignore[no-untyped-def]
    try:
        result = fn(paths)
    except ReplToolError as exc:
        return type(exc).__name__, str(exc)
    return {f.file: dict(
        events=f.events, transactions=f.transactions, bytes=f.transaction_bytes,
        clock=(f.clock.transactions, f.clock.barriers, f.clock.distance, f.clock.windows,
               f.clock.max_window, f.clock.inconsistent),
        biggest=[(b.gtid, b.file, b.pos, b.size, b.duration, b.num_events)
                 for b in f.biggest],
        range=(f.first_gtid, f.last_gtid, f.first_timestamp, f.last_timestamp))
        for f in result.files}


@pytest.mark.parametrize("which", ["compiled", "python"])
@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/*/*")
def test_clock_only_equals_the_general_reader(monkeypatch, path: Path, which: str) -> None:  # type: ignore[no-untyped-def]
    """Every corpus file (damaged ones included): the clock-only figures of each engine
    are those of the general reader's transactions, or the same error."""
    from repltool.binlog import _core
    monkeypatch.setenv(engine.ENV, which)
    before = _core.events_walked()
    assert _clock_only([path]) == _expected([path])
    if (which == "compiled" and path.name.startswith("mysql-bin.0")
            and path.parent.name in ("small", "rotation")):
        assert _core.events_walked() > before       # the core read it


@pytest.mark.parametrize("which", ["compiled", "python"])
@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/*/*")
def test_full_stats_figures_equal_the_general_reader(monkeypatch, path: Path,  # type: ignore[no-untyped-def]
                                                     which: str) -> None:
    """The same figures (GTID and time range per file included) from full ``stats``."""
    monkeypatch.setenv(engine.ENV, which)
    assert _clock_only([path], compute_stats) == _expected([path])


@pytest.mark.parametrize("which", ["compiled", "python"])
def test_ranges_over_many_files(monkeypatch, corpus: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                which: str) -> None:
    """Per file and in total: first / last GTID and timestamps of its transactions."""
    from repltool.synth import SynthOptions, generate
    monkeypatch.setenv(engine.ENV, which)
    for files in (sorted((corpus / "mariadb/rotation").glob("mysql-bin.0*")),
                  generate(SynthOptions(out=tmp_path / which, transactions=400,
                                        ground_truth=False, tagged_gtids=True,
                                        max_binlog_size=30_000)).files):
        want = _expected(list(files))
        assert isinstance(want, dict)
        result = compute_stats(files)
        assert {f.file: (f.first_gtid, f.last_gtid, f.first_timestamp, f.last_timestamp)
                for f in result.files} == {p: w["range"] for p, w in want.items()}
        ranges = [w["range"] for w in want.values()]
        assert len({r[0] for r in ranges}) == len(ranges) > 2     # each file its own
        t = result.total
        assert (t.first_gtid, t.first_timestamp) == ranges[0][::2]
        assert (t.last_gtid, t.last_timestamp) == ranges[-1][1::2]


@pytest.mark.parametrize("which", ["compiled", "python"])
def test_clock_only_over_many_files(monkeypatch, corpus: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                    which: str) -> None:
    monkeypatch.setenv(engine.ENV, which)
    files = sorted((corpus / "mariadb/rotation").glob("mysql-bin.0*"))
    sample = write_sample(tmp_path, transactions=300)
    for group in (files, sample):
        got = _clock_only(group)
        assert got == _expected(group)
        assert sum(f["transactions"] for f in got.values()) >= 150   # type: ignore[union-attr]


def test_stats_clock_only_agrees_with_full_stats(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    files = [str(f) for f in write_sample(tmp_path, transactions=400)]
    assert run(["stats", "--format", "json", *files]) == 0
    full = json.loads(capsys.readouterr().out)
    assert run(["stats", "--clock-only", "--format", "json", *files]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert fast["total"]["clock"] == full["total"]["clock"]
    assert fast["total"]["biggest"] == full["total"]["biggest"]
    for key in ("transactions", "events", "event_types"):
        assert fast["total"][key] == full["total"][key]
    assert [f["transaction_bytes"] for f in fast["files"]] == \
        [f["transaction_bytes"] for f in full["files"]]


# ---- the hand-over: the general reader resumes where the core stopped ----

#: corpus files the core leaves mid-file (a type outside its subset: MariaDB's
#: compressed events, 5.1's pre-GA rows events)
MID_FILE = ["mariadb/compressed/mysql-bin.000001",
            "mysql/mysql56/mysql-test__suite__binlog__std_data__ver_5_1-telco.001",
            "mysql/mysql80/mysql-test__suite__binlog__std_data__ver_trunk_row_v2.001"]


@pytest.mark.parametrize("clock_only", [False, True], ids=["full", "clock-only"])
@pytest.mark.parametrize("name", MID_FILE)
def test_hand_over_resumes_at_the_boundary(monkeypatch, corpus: Path, name: str,  # type: ignore[no-untyped-def]
                                           clock_only: bool) -> None:
    """The core hands over in the second file; the general reader reads only from the
    last transaction boundary on (never the files from their start), and the output
    equals the general reader's (``keep_going`` forces the general reader; these
    files have no damage)."""
    import repltool.stats as stats_mod
    paths = [str(corpus / "mariadb/small/mysql-bin.000001"), str(corpus / name)]
    monkeypatch.setenv(engine.ENV, "compiled")
    core = corescan.scan_totals(paths, top=5)
    assert core is not None and core.rest is not None
    assert core.rest.index == 1 and core.rest.offset > 4 and core.transactions > 1977
    starts: list[int] = []
    real = corescan.resume_events

    def spy(fi, start, options=None):  # type: ignore[no-untyped-def]
        starts.append(start)
        return real(fi, start, options)

    def no_full_read(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the logs were read again from the start")

    monkeypatch.setattr(corescan, "resume_events", spy)
    monkeypatch.setattr(stats_mod, "read_events", no_full_read)
    fn = compute_clock_stats if clock_only else compute_stats
    got = stats_to_dict(fn(paths))
    assert starts == [core.rest.offset]
    monkeypatch.undo()
    if clock_only:
        want = _expected([Path(p) for p in paths])
        assert isinstance(want, dict)
        assert {f["file"]: (f["transactions"], f["events"], f["transaction_bytes"])
                for f in got["files"]} == \
            {p: (w["transactions"], w["events"], w["bytes"]) for p, w in want.items()}
    else:
        assert got == stats_to_dict(compute_stats(paths, keep_going=True))
