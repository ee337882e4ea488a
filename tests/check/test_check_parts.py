"""``check`` in parts (what ``check --spark`` runs on executors) merged in input order equals
one ``check_files`` over the same files (issue 15).

The parts are linked as :func:`repltool.distributed.driver.run_distributed` links them: a
part whose last file ends inside a transaction, or whose first clock W001 sees is no barrier
after the parts before, is checked again with the part before it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from repltool.certify import CertResult, CertTransaction, Reason, SafetyChecker
from repltool.check import CheckConfig, check_files
from repltool.check.engine import check_part, merge_parts, w001_continues
from repltool.check.writesets import builtin_provider
from repltool.errors import ReplToolError
from tests.conftest import require_corpus


def parts_of(files: list[str], cfg: CheckConfig) -> tuple[list, int]:
    units = [[i] for i in range(len(files))]
    while True:
        parts = [(u[0], check_part([files[i] for i in u], cfg, writesets=builtin_provider()))
                 for u in units]
        merged: list[tuple[list[int], object]] = []
        previous = None
        for unit, (_, part) in zip(units, parts):
            link = merged and (merged[-1][1].open_end or w001_continues(previous, part.w001[0]))
            previous = part.w001[1] if part.w001[1] is not None else previous
            if link:
                merged[-1] = (merged[-1][0] + unit, part)
            else:
                merged.append((list(unit), part))
        if len(merged) == len(units):
            return parts, len(units)
        units = [m[0] for m in merged]


def same_report(files: list[str], cfg: CheckConfig = CheckConfig()) -> tuple[object, int]:
    want = check_files(files, cfg, writesets=builtin_provider())
    parts, n = parts_of(files, cfg)
    got = merge_parts(files, cfg, parts)
    assert got == want
    return want, n


def test_every_mysql_corpus_file_in_parts() -> None:
    """Damage, clocks, truncated groups (R001 links two files), in-use flags, W003."""
    files = sorted(str(p) for p in require_corpus().glob("mysql/*/*") if p.is_file())
    report, units = same_report(files)
    rules = report.by_rule()
    assert units < len(files) and units > len(files) - 10      # some files were linked
    for code in ("C008", "R001", "R002", "S003", "S005", "W003", "G003"):
        assert rules.get(code), code
    # thresholds make the totals rules fire: they are computed over all parts
    report, _ = same_report(files, CheckConfig(min_parallelism=50.0, max_barrier_share=0.01))
    assert {"T001", "T002"} <= set(report.by_rule())


def test_duplicate_gtids_across_parts(tmp_path: Path) -> None:
    """G001 across files: copies of rotated MariaDB binlogs and of a MySQL 8.0 file."""
    root = require_corpus()
    rot = sorted(str(p) for p in (root / "mariadb" / "rotation").glob("mysql-bin.0*"))
    c1 = shutil.copy(rot[2], tmp_path / "copy.000001")
    c2 = shutil.copy(rot[5], tmp_path / "copy.000002")
    report, _ = same_report(rot[:8] + [str(c1), str(c2)] + rot[8:])
    g001 = [f for f in report.findings if f.rule == "G001"]
    assert len(g001) > 100 and {f.file for f in g001} == {str(c1), str(c2)}
    m80 = sorted(str(p) for p in (root / "mysql" / "mysql80").glob("*") if p.is_file())
    dup = shutil.copy(m80[-1], tmp_path / "dup80.000001")
    report, _ = same_report(m80 + [str(dup)])
    assert report.by_rule().get("G001")


@pytest.mark.parametrize("previous", [None, 0, 3, 5, 6, 7])
@pytest.mark.parametrize("lc,sn", [(0, 1), (5, 6), (6, 7), (5, 7), (2, 5), (1, 0)])
def test_w001_continues_is_the_safety_checkers_barrier(previous, lc: int, sn: int) -> None:
    """A conflict crosses into the part exactly when w001_continues says so."""
    def result(lc: int, sn: int) -> CertResult:
        return CertResult(trx=CertTransaction(gtid=None, pos=None, file="f", recorded=(lc, sn),
                                              writeset=(42,)),
                          computed=(lc, sn), reason=Reason.KEY)
    checker = SafetyChecker()
    if previous is not None:
        checker.add(result(max(previous - 1, 0), previous))
    crossed = bool(checker.add(result(lc, sn)))
    assert crossed == (w001_continues(previous, (lc, sn)) and lc < (previous or 0))
    if w001_continues(previous, (lc, sn)) is False:
        assert not crossed


# ---- one large binlog checked in spans (check --spark splits it), joined per file ----

def _spans_every(path: str, every: int) -> list:
    """Spans of ``path`` beginning at every ``every``-th transaction's first event (inside
    commit windows too, unlike :func:`repltool.binlog.split.split_spans`)."""
    from repltool.binlog import read_transactions
    from repltool.binlog.split import Span
    starts = [4] + [t.start.offset for n, t in enumerate(read_transactions(path))
                    if n and n % every == 0 and t.start.payload_offset is None]
    return [Span(s, starts[i + 1] if i + 1 < len(starts) else None)
            for i, s in enumerate(starts)]


def _joined(path: str, cfg: CheckConfig, spans: list, provider=None) -> tuple[object, object]:
    """(merged report of the joined spans or None, merged report of the whole file)."""
    from repltool.check.engine import check_span, join_spans
    make = (lambda: builtin_provider()) if provider is None else (lambda: provider)
    whole = merge_parts([path], cfg, [(0, check_part([path], cfg, writesets=make()))])
    parts = [check_span(path, s, cfg, writesets=make()) for s in spans]
    joined = join_spans(path, cfg, parts)
    return (merge_parts([path], cfg, [(0, joined)]) if joined is not None else None), whole


@pytest.fixture(scope="module")
def synth_conflicting(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    """A generated MySQL 8.0 binlog (commit windows of 1-4) and write sets in which every
    transaction writes key 0: W001 wherever a window holds two transactions."""
    import json
    from tests.spark.logsets import write_rotated_binlogs
    from repltool.binlog import read_transactions
    from repltool.check import load_writesets
    d = tmp_path_factory.mktemp("synth")
    (path,) = write_rotated_binlogs(d, files=1, per_file=2_000)
    rows = [{"gtid": t.gtid, "keys": [0, 1000 + n % 11]}
            for n, t in enumerate(read_transactions(path)) if t.gtid and n % 97 != 3]
    (d / "ws.json").write_text(json.dumps({"transactions": rows}))
    return str(path), load_writesets(d / "ws.json")


def test_spans_inside_commit_windows_join_to_the_whole_file(synth_conflicting) -> None:
    """Spans cut inside commit windows: a span's first transactions conflict with the
    span before (W001's head replayed against the writers handed on); the joined report
    equals the whole file's, and without the head's replay it would not."""
    import dataclasses
    from repltool.check.engine import check_span, join_spans
    path, provider = synth_conflicting
    cfg = CheckConfig()
    spans = _spans_every(path, 37)
    got, want = _joined(path, cfg, spans, provider)
    assert got == want and len(spans) > 40
    assert want.by_rule()["W001"] > 500
    parts = [check_span(path, s, cfg, writesets=provider) for s in spans]
    assert sum(1 for p in parts if p.edge.head) >= 5
    headless = [dataclasses.replace(p, edge=dataclasses.replace(p.edge, head=()))
                for p in parts]
    assert merge_parts([path], cfg, [(0, join_spans(path, cfg, headless))]) != want


def test_writers_not_handed_on_make_the_file_checked_whole(synth_conflicting,
                                                            monkeypatch) -> None:
    """A span hands on only the writers above its floor: a head reaching below it cannot
    be proved, so the join refuses (the file is checked whole)."""
    from repltool.check import engine
    path, provider = synth_conflicting
    monkeypatch.setattr(engine, "EDGE_TAIL", 0)
    got, want = _joined(path, CheckConfig(), _spans_every(path, 37), provider)
    assert got is None and want.by_rule()["W001"]


def test_every_mysql_corpus_file_in_spans() -> None:
    """Every MySQL corpus file cut at every third transaction: the joined spans give the
    whole file's report, or (a span stopped at damage, ended inside a transaction, a
    GTID number went back) the join refuses; most files join."""
    files = sorted(str(p) for p in require_corpus().glob("mysql/*/*") if p.is_file())
    joined = refused = 0
    rules: set[str] = set()
    cfg = CheckConfig(min_parallelism=50.0, max_barrier_share=0.01)
    for path in files:
        try:
            spans = _spans_every(path, 3)
        except Exception:                   # noqa: BLE001 - unreadable: nothing to cut
            continue
        if len(spans) < 2:
            continue
        got, want = _joined(path, cfg, spans)
        if got is None:
            refused += 1
            continue
        assert got == want, path
        joined += 1
        rules |= set(want.by_rule())
    assert joined >= 25 and refused <= joined // 4
    assert {"C008", "G003", "T001", "T002"} <= rules


class _EventFed:
    """The row-decoding provider behind a plain callable: check_part then reads with the
    general reader and feeds it each clocked transaction's events (the executors' path
    before they read as the single process does)."""

    needs_events = True

    def __init__(self) -> None:
        self.inner = builtin_provider()
        self.unknown_key_tables = self.inner.unknown_key_tables

    def feed(self, ev, opens: bool) -> None:
        self.inner.feed(ev, opens)

    def __call__(self, trx):
        return self.inner(trx)


def _part_view(part) -> tuple:
    """A CheckPart's content; truncated transactions by start and GTID (the core's are
    ClockTransaction tuples, the general reader's Transaction objects)."""
    return (part.report, part.committed, part.duplicates,
            [(t.start, t.gtid, t.maria_flags) for t in part.truncated], part.unresolved,
            part.unknown_tables, part.w001, part.open_end)


def test_check_part_reads_with_the_compiled_core_as_the_single_process(core) -> None:
    """check_part (an executor's per-file check) reads with the compiled core's CheckScan
    and the lazy fused write-set read, as check_files does; its part equals the general
    reader's (event-fed provider) on every MySQL and MariaDB corpus file, and the table
    links it records (a rows event without a Table_map, FULL-metadata table names) are
    those the general path recorded."""
    from repltool.check.engine import part_core_counts
    from repltool.check.writesets import RowWritesetProvider
    root = require_corpus()
    files = sorted(str(p) for p in [*root.glob("mysql/*/*"), *root.glob("mariadb/*/*")]
                   if p.is_file())
    cfg = CheckConfig(min_parallelism=50.0, max_barrier_share=0.01)
    cored = 0
    seen_names: set[str] = set()
    for path in files:
        before = part_core_counts()
        fast_provider = RowWritesetProvider()
        tables = fast_provider.track_tables()
        fast = check_part([path], cfg, writesets=fast_provider)
        after = part_core_counts()
        general = check_part([path], cfg, writesets=_EventFed())
        assert part_core_counts() == after          # the general path did not count
        assert _part_view(fast) == _part_view(general), path
        if after[0] > before[0]:
            cored += 1
            assert after[1] > before[1]
        unmapped, named = _links_of(path)
        assert tables.unmapped == unmapped and named <= tables.named, path
        seen_names |= tables.named
    assert cored > len(files) // 2
    assert seen_names                      # FULL-metadata Table_maps were seen


def _links_of(path: str) -> tuple[bool, set[str]]:
    """What the executors recorded from each clocked transaction's events before
    (:func:`repltool.distributed.pairs.has_unmapped` over the general reader's read)."""
    from repltool.binlog import group_transactions, read_events
    from repltool.distributed.pairs import has_unmapped
    mapped: set[int] = set()
    named: set[str] = set()
    unmapped = False
    try:
        for trx in group_transactions(read_events(path), keep_events=True):
            if (trx.last_committed is not None and trx.sequence_number is not None
                    and not trx.truncated):
                unmapped = has_unmapped(trx, mapped, named) or unmapped
    except ReplToolError:
        pass                                # the part stopped there too
    return unmapped, named


def test_check_span_reads_with_the_compiled_core_as_the_single_process(
        core, synth_conflicting) -> None:
    """check_span (an executor's check of one span of a large binlog) reads the span with
    the compiled core and the lazy fused write-set read; each span's part and edge equal
    the general reader's on MySQL corpus files cut at every third transaction and on a
    generated binlog cut inside commit windows, where a log older than the core's subset
    (its read handed over before the span) is read by the general reader."""
    from repltool.check.engine import check_span, part_core_counts
    from repltool.check.writesets import RowWritesetProvider
    root = require_corpus()
    files = sorted(str(p) for p in root.glob("mysql/*/*") if p.is_file())
    path, _ = synth_conflicting
    cfg = CheckConfig(min_parallelism=50.0, max_barrier_share=0.01)
    checked = cored = 0
    for name in files + [path]:
        try:
            spans = _spans_every(name, 3 if name != path else 37)
        except ReplToolError:
            continue
        if len(spans) < 2:
            continue
        for span in spans:
            before = part_core_counts()
            fast = check_span(name, span, cfg, writesets=RowWritesetProvider())
            cored += part_core_counts()[0] - before[0]
            general = check_span(name, span, cfg, writesets=_EventFed())
            assert _part_view(fast) == _part_view(general), (name, span)
            assert fast.edge == general.edge, (name, span)
            checked += 1
    assert checked > 150 and cored > checked * 3 // 4
