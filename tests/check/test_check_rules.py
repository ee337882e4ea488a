"""Each rule on small logs written with chosen clocks and GTIDs, and the writeset rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_helpers import SID, build_log, gtid_offsets, retag

from repltool.binlog import read_events, read_transactions
from repltool.check import (
    SKIP_REASON, CheckConfig, MappingProvider, Severity, TrxWriteset, check_files, key_hash,
)
from repltool.check.engine import _Span


def rules(report) -> list[tuple[str, int | None]]:
    return [(f.rule, f.offset) for f in report.findings if f.rule != "C008"]


def codes(report) -> set[str]:
    return {f.rule for f in report.findings} - {"C008", "W003"}      # info-level notes


def test_a_clean_synthetic_log_has_only_the_info_finding(tmp_path: Path) -> None:
    log = build_log(tmp_path / "binlog.000001", [(0, 1), (1, 2), (1, 3), (3, 4)], previous=7)
    report = check_files([log])
    assert codes(report) == set()
    (info,) = report.findings
    assert info.rule == "C008" and info.severity is Severity.INFO
    assert "barrier share 1/4 = 25.0%" in info.message
    assert "parallelism 1.33" in info.message          # chain (0,1)->(1,2)|(1,3)->(3,4)


@pytest.mark.parametrize("clocks, expected", [
    ([(0, 2), (1, 3)], {"C002"}),                       # does not start at 1
    ([(0, 1), (1, 2), (2, 4)], {"C002"}),               # gap
    ([(0, 1), (1, 2), (1, 2)], {"C001"}),               # not increasing
    ([(0, 1), (2, 2)], {"C004"}),                       # lc >= sn
    ([(0, 1), (-1, 2)], {"C005"}),                      # negative
    ([(0, 1), (0, 0), (1, 2)], {"C006"}),               # (0,0) not a view change
])
def test_clock_rules(tmp_path: Path, clocks, expected) -> None:
    report = check_files([build_log(tmp_path / "b.000001", clocks)])
    assert codes(report) == expected
    assert report.exit_status == 1


def test_view_change_may_be_zero_zero(tmp_path: Path) -> None:
    log = build_log(tmp_path / "b.000001", [(0, 1), (0, 0), (1, 2)], view_changes=(1,))
    assert codes(check_files([log])) == set()


def test_clocks_restart_in_every_binlog_file(tmp_path: Path) -> None:
    a = build_log(tmp_path / "b.000001", [(0, 1), (1, 2)], rotate_to="b.000002")
    b = build_log(tmp_path / "b.000002", [(0, 1), (1, 2)], previous=2)
    assert codes(check_files([a, b])) == set()


def test_gtid_rules(tmp_path: Path) -> None:
    a = build_log(tmp_path / "b.000001", [(0, 1), (1, 2), (2, 3)], previous=5, gnos=[7, 8, 10])
    report = check_files([a])
    offs = gtid_offsets(a)
    assert rules(report) == [("G002", offs[0]), ("G003", offs[2])]
    b = build_log(tmp_path / "b.000002", [(0, 1)], previous=10, gnos=[8])
    dup = check_files([a, b])
    assert ("G001", gtid_offsets(b)[0]) in rules(dup)
    assert "already committed at" in next(f.message for f in dup.findings if f.rule == "G001")


def test_anonymous_mix(tmp_path: Path) -> None:
    a = build_log(tmp_path / "anon.000001", [(0, 1), (1, 2)], anonymous=True)
    assert codes(check_files([a])) == set()
    mixed = tmp_path / "mixed.000001"
    data = build_log(tmp_path / "g.000001", [(0, 1), (1, 2)]).read_bytes()
    # second transaction anonymous: rebuild with a GTID-less one by re-tagging is not
    # possible, so concatenate the anonymous log's second transaction bytes instead
    anon = a.read_bytes()
    offs_a, offs_g = gtid_offsets(a), gtid_offsets(tmp_path / "g.000001")
    mixed.write_bytes(data[:offs_g[1]] + anon[offs_a[1]:])
    report = check_files([mixed])
    assert "G004" in codes(report)


def test_in_use_flag_only_matters_before_the_last_file(tmp_path: Path) -> None:
    a = build_log(tmp_path / "b.000001", [(0, 1)], in_use=True)
    b = build_log(tmp_path / "b.000002", [(0, 1)], previous=1, in_use=True)
    assert rules(check_files([a, b])) == [("S005", 4)]
    assert rules(check_files([b])) == []


def test_truncated_tail_and_group(tmp_path: Path) -> None:
    log = build_log(tmp_path / "b.000001", [(0, 1), (1, 2), (2, 3)])
    offs = gtid_offsets(log)
    cut = tmp_path / "cut.000001"
    cut.write_bytes(log.read_bytes()[:offs[2] + 30])          # ends inside the 3rd GTID
    report = check_files([cut])
    assert ("S004", offs[2]) in rules(report)
    mid = tmp_path / "mid.000001"
    raw = log.read_bytes()
    mid.write_bytes(raw[:offs[2] - 1] + b"")                   # the 2nd trx loses a byte
    assert "S004" in codes(check_files([mid]))
    # the 2nd transaction loses its body: GTID followed by GTID
    gtid2 = next(e for e in read_events(log) if e.pos.offset == offs[1])
    group = tmp_path / "group.000001"
    group.write_bytes(raw[:gtid2.end_pos] + raw[offs[2]:])
    report = check_files([group])
    assert rules(report) == [("R002", offs[1])]
    assert report.exit_status == 0


def test_thresholds(tmp_path: Path) -> None:
    log = build_log(tmp_path / "b.000001", [(0, 1), (1, 2), (1, 3), (1, 4), (4, 5)])
    ok = check_files([log], CheckConfig(min_parallelism=1.6, max_barrier_share=0.2))
    assert codes(ok) == set() and ok.totals.parallelism == pytest.approx(5 / 3)
    bad = check_files([log], CheckConfig(min_parallelism=2, max_barrier_share=0.1,
                                         max_trx_size=100))
    assert {"T001", "T002", "T003"} <= codes(bad)
    t001 = next(f for f in bad.findings if f.rule == "T001")
    assert t001.file == "TOTAL" and "1.667 < limit 2" in t001.message
    assert sum(1 for f in bad.findings if f.rule == "T003") == 5


def test_threshold_rules_are_off_without_a_limit(tmp_path: Path) -> None:
    log = build_log(tmp_path / "b.000001", [(0, 1)])
    report = check_files([log])
    assert not {"T001", "T002", "T003"} & set(report.rules)


def test_span_follows_the_replica_scheduler() -> None:
    span = _Span()
    for lc, sn in [(0, 1), (1, 2), (1, 3), (1, 4), (0, 5), (1, 6)]:
        span.add(lc, sn)
    # (0,5) is a barrier after depth 2; (1,6) points before it but must wait for it
    assert (span.work, span.depth) == (6, 4)


# ---- writesets ----

PBS = "mysql/pbs/mtr__binlog_streaming__std_data__data_80045_position.zip__" \
      "data_80045_position__binlog.000001"


def _provider(path: Path, keys: dict[int, list[str]], nokey: dict[int, list[str]] | None = None
              ) -> MappingProvider:
    """Write sets by sequence_number -> keys, keyed the way the provider looks them up."""
    by_key = {}
    for t in read_transactions(path):
        if t.sequence_number in keys:
            by_key[f"{path.name}:{t.start.offset}"] = TrxWriteset(
                tuple(key_hash(k) for k in keys[t.sequence_number]),
                tuple((nokey or {}).get(t.sequence_number, ())))
    return MappingProvider(by_key)


def test_writeset_rules_are_skipped_visibly_without_a_provider(tmp_path: Path) -> None:
    log = build_log(tmp_path / "b.000001", [(0, 1)])
    report = check_files([log], writesets=None)
    assert report.skipped == {"W001": SKIP_REASON, "W002": SKIP_REASON, "W003": SKIP_REASON}
    assert "W001" not in report.rules
    default = check_files([log])                     # row events of the log itself
    assert default.skipped == {} and "W001" in default.rules


def test_unsafe_retagged_log_is_caught(tmp_path: Path, corpus: Path) -> None:
    """Transactions 2 and 3 write the same row; re-tag 3 to (1,3) so both run after 1."""
    src = corpus / PBS
    trxs = [t for t in read_transactions(src) if t.last_committed]
    assert [(t.last_committed, t.sequence_number) for t in trxs] == [(1, 2), (2, 3), (3, 4)]
    same_row = {2: ["test.t1 PRIMARY(1)"], 3: ["test.t1 PRIMARY(1)"], 4: ["test.t1 PRIMARY(2)"]}
    # the server's own clocks are safe
    assert codes(check_files([src], writesets=_provider(src, same_row))) == set()
    unsafe = tmp_path / "binlog.000001"
    how = retag(src, unsafe, {trxs[1].start.offset: (1, 3)})
    assert how in ("writer", "manual")
    report = check_files([unsafe], writesets=_provider(unsafe, same_row))
    (w001,) = [f for f in report.findings if f.rule == "W001"]
    assert w001.offset == trxs[1].start.offset and w001.severity is Severity.ERROR
    assert "last_committed=1 < sequence_number=2" in w001.message
    assert report.exit_status == 1
    # different rows: the same overlapping windows are safe
    disjoint = {2: ["test.t1 PRIMARY(1)"], 3: ["test.t1 PRIMARY(3)"]}
    assert codes(check_files([unsafe], writesets=_provider(unsafe, disjoint))) == set()


def test_no_usable_key_warning(tmp_path: Path, corpus: Path) -> None:
    src = corpus / PBS
    provider = _provider(src, {2: [], 3: []}, nokey={2: ["test.log"], 3: ["test.log"]})
    report = check_files([src], writesets=provider)
    (w002,) = [f for f in report.findings if f.rule == "W002"]
    assert w002.severity is Severity.WARNING and "test.log" in w002.message
    assert "(2 transactions)" in w002.message and report.exit_status == 0


def test_sid_constant_is_used() -> None:
    assert str(SID).startswith("3e11fa47")


def _offsets_kept(report) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.offset, f.message) for f in report.findings]


def _exact(paths) -> object:
    """check_files with every offset kept (a reader of its own: no sparse runs)."""
    return check_files(paths, reader=lambda path, options, info: read_events(
        path, options, info))


def test_g001_names_offsets_read_again_from_a_sparse_run(tmp_path: Path) -> None:
    """A binlog's GTID runs keep every 64th offset only; a duplicate of any other
    number names the first file's offset of that GTID, found by reading it again
    from the kept one before it (the re-read ran), as when every offset is kept."""
    from repltool.binlog.engine import compiled_core
    from repltool.check.engine import _Checker
    from repltool.check.writesets import builtin_provider
    n = 300
    a = build_log(tmp_path / "b.000001", [(i, i + 1) for i in range(n)])
    again = [1, 2, 63, 64, 65, 66, 127, 128, 129, 200, 255, 256, 257, 299, 300]
    b = build_log(tmp_path / "b.000002", [(i, i + 1) for i in range(len(again))],
                  previous=n, gnos=again)
    offs_a, offs_b = gtid_offsets(a), gtid_offsets(b)
    ck = _Checker([str(a), str(b)], CheckConfig(), builtin_provider())
    report = ck.run()
    assert ck.sparse and ck.rereads == 4      # gno 2-64, 66-128, 194-256, 258-300
    # read again by the compiled core when it is there, else by the general reader
    assert ck.core_rereads == (4 if compiled_core() is not None else None)
    g001 = [(f.offset, f.message) for f in report.findings if f.rule == "G001"]
    assert g001 == [(offs_b[i], f"GTID {SID}:{g} was already committed at {a}:{offs_a[g - 1]}")
                    for i, g in enumerate(again)]
    assert _offsets_kept(report) == _offsets_kept(_exact([a, b]))
    assert _offsets_kept(check_files([a, b])) == _offsets_kept(report)
    # the general reader's re-read, a few hundred bytes first, more each time
    small = _Checker([str(a), str(b)], CheckConfig(), builtin_provider())
    small.reread_size, small.core_rereads = 300, None
    assert _offsets_kept(small.run()) == _offsets_kept(report) and small.rereads == 4


def test_r002_names_a_redelivery_read_again_from_a_sparse_run(tmp_path: Path) -> None:
    """A transaction cut after its GTID, delivered complete next in the same binlog,
    in the middle of a run (its offset not kept): R002 names the complete one's
    offset, read again; the file's own duplicate (G001) names the complete one too."""
    from repltool.check.engine import _Checker
    from repltool.check.writesets import builtin_provider
    gnos = list(range(1, 100)) + [100, 100] + list(range(101, 160)) + [100]
    full = build_log(tmp_path / "full.000001", [(i, i + 1) for i in range(len(gnos))],
                     gnos=gnos)
    offs = gtid_offsets(full)
    raw = full.read_bytes()
    cut = next(e for e in read_events(full) if e.pos.offset == offs[99])
    log = tmp_path / "b.000001"
    log.write_bytes(raw[:cut.end_pos] + raw[offs[100]:])
    shift = offs[100] - cut.end_pos
    ck = _Checker([str(log)], CheckConfig(), builtin_provider())
    report = ck.run()
    assert ck.rereads >= 1 and ck.core_rereads != 0
    small = _Checker([str(log)], CheckConfig(), builtin_provider())
    small.reread_size, small.core_rereads = 200, None
    assert _offsets_kept(small.run()) == _offsets_kept(report) and small.rereads >= 1
    (r002,) = [f for f in report.findings if f.rule == "R002"]
    assert r002.offset == offs[99]
    assert r002.message.endswith(f"re-delivered complete at {log}:{offs[100] - shift}")
    (g001,) = [f for f in report.findings if f.rule == "G001"]
    assert g001.offset == offs[-1] - shift
    assert g001.message.endswith(f"already committed at {log}:{offs[100] - shift}")
    assert _offsets_kept(report) == _offsets_kept(_exact([log]))
