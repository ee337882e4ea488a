"""rewrite_log: whole files, streamed, atomically replaced; checked byte for byte on the corpus."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events, read_transactions
from repltool.binlog.rewrite import rewrite_log
from repltool.binlog.writer import encode_gtid_body, frame_event
from repltool.errors import (
    ChecksumMismatch, EncryptedLog, NoFormatDescription, NotABinlog, UsageError,
)

from writer_helpers import (
    CORPUS, CorpusFile, corpus_missing, corpus_params, gtid, load, mysql_files,
)

MARIADB_BINLOG = shutil.which("mariadb-binlog")


def shifted(clocks: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Different, still valid clocks: lc+7 < sn+1000."""
    return {o: (lc + 7, sn + 1000) for o, (lc, sn) in clocks.items()}


def outer(path: Path, verify: bool = True) -> list:
    return list(read_events(path, ReadOptions(verify_checksum=verify, payloads=False)))


@pytest.mark.parametrize("corpus_file", corpus_params(), indirect=True)
def test_identity_rewrite_is_byte_identical(corpus_file: CorpusFile, tmp_path: Path) -> None:
    dst = tmp_path / "out"
    clocks = corpus_file.clocks()
    for encoding in ("mysql", "delta16") if not clocks else ("mysql",):
        report = rewrite_log(corpus_file.path, dst, clocks, encoding=encoding)
        assert dst.read_bytes() == corpus_file.path.read_bytes()
        assert report.gtid_events_rewritten == report.bytes_delta == report.log_pos_updated == 0
        assert report.events == len(corpus_file.events)
        assert bool(report.warnings) == corpus_file.truncated


def clocks_untagged(cf: CorpusFile) -> bool:
    """Clocks to patch in place (a tagged GTID grows instead: see the delta16 test)."""
    return bool(cf.clocks()) and not any(e.type_code == 42 for e in cf.gtids)


@pytest.mark.parametrize("corpus_file", corpus_params(clocks_untagged, at_least=53),
                         indirect=True)
def test_changed_clocks_differ_only_in_clock_and_crc(corpus_file: CorpusFile,
                                                     tmp_path: Path) -> None:
    clocks = corpus_file.clocks()
    assert clocks
    dst = tmp_path / "out"
    report = rewrite_log(corpus_file.path, dst, shifted(clocks))
    old, new = corpus_file.path.read_bytes(), dst.read_bytes()
    assert len(old) == len(new) and report.bytes_delta == 0
    assert report.gtid_events_rewritten == len(clocks)
    crc = {e.pos.offset: e.crc is not None for e in corpus_file.gtids}
    allowed: set[int] = set()
    for off in clocks:
        ev_size = int.from_bytes(old[off + 9:off + 13], "little")
        allowed |= set(range(off + 45, off + 61))
        if crc[off]:
            allowed |= set(range(off + ev_size - 4, off + ev_size))
    changed = {i for i, (a, b) in enumerate(zip(old, new)) if a != b}
    assert changed <= allowed
    assert all(any(off + 45 <= i < off + 61 for i in changed) for off in clocks)
    for ev in outer(dst, verify=not _bad_crc(corpus_file)):   # damage elsewhere stays as it was
        if ev.pos.offset in clocks:
            lc, sn = shifted(clocks)[ev.pos.offset]
            assert (ev.body.last_committed, ev.body.sequence_number) == (lc, sn)


def _delta16_candidate(cf: CorpusFile) -> bool:
    return bool(cf.clocks()) and not _bad_crc(cf)


def delta16_candidates() -> list:
    return corpus_params(_delta16_candidate, at_least=50)


def _bad_crc(cf: CorpusFile) -> bool:
    from repltool.binlog.writer import recompute_crc
    return any(e.crc is not None and recompute_crc(e.raw, fde=e.type_code == 15) != e.raw
               and recompute_crc(e.raw) != e.raw for e in cf.events)


@pytest.mark.parametrize("corpus_file", delta16_candidates(), indirect=True)
def test_delta16_rewrite_reads_back(corpus_file: CorpusFile, tmp_path: Path) -> None:
    """Every GTID keeps its sequence_number and last_committed; sizes, positions, CRCs agree."""
    dst = tmp_path / "out"
    clocks = corpus_file.clocks()
    report = rewrite_log(corpus_file.path, dst, clocks, encoding="delta16")
    untagged = [o for o in clocks if corpus_file.path.read_bytes()[o + 4] != 42]
    assert report.gtid_events_rewritten == len(untagged)
    assert report.bytes_delta <= -6 * len(untagged)
    assert dst.stat().st_size == corpus_file.path.stat().st_size + report.bytes_delta
    new = outer(dst, verify=True)                    # every CRC verifies
    assert [e.type_code for e in new] == [e.type_code for e in corpus_file.events]
    for a, b in zip(corpus_file.events, new):
        assert b.event_size == len(b.raw)
        if corpus_file.relay_log:
            assert b.log_pos == a.log_pos            # source coordinates never change
        elif a.log_pos == a.end_pos:
            assert b.log_pos == b.end_pos, b.pos     # each event ends where log_pos says
        else:
            assert b.log_pos == a.log_pos == 0 or b.log_pos - a.log_pos == b.end_pos - a.end_pos
        if a.type_code in (33, 34, 42) and a.body.lt_type is not None:
            assert b.body.sequence_number == a.body.sequence_number
            assert b.body.last_committed == a.body.last_committed
            assert b.body.lt_type == (2 if a.type_code == 42 else 3)
            same = dict(lt_type=None, transaction_length=None)
            assert replace(b.body, **same) == replace(a.body, **same)
        elif a.type_code not in (33, 34, 42):
            assert b.raw[19:-4] == a.raw[19:-4] or b.raw[19:] == a.raw[19:]   # bodies untouched
    # transaction_length still equals each transaction's real size where it did before
    before = {t.start.offset: t for t in read_transactions(
        corpus_file.path, ReadOptions(verify_checksum=False))}
    after = list(read_transactions(dst))
    assert len(after) == len(before)
    for t_old, t_new in zip(before.values(), after):
        if t_old.transaction_length == t_old.size and t_old.transaction_length is not None:
            assert t_new.transaction_length == t_new.size
    if corpus_file.relay_log:
        assert report.stale_log_pos > 0 and report.warnings and report.log_pos_updated == 0


def test_delta16_lc0_barrier_falls_back(tmp_path: Path) -> None:
    src = tmp_path / "big-seq"
    src.write_bytes(synthetic_log([(0, 70000), (69999, 70001), (1, 70002)]))
    offsets = gtid_offsets(src)
    clocks = dict(zip(offsets, [(0, 70000), (69999, 70001), (1, 70002)]))
    report = rewrite_log(src, tmp_path / "out", clocks, encoding="delta16")
    assert report.delta16_fallbacks == 1 and report.gtid_events_rewritten == 2
    got = [(e.body.last_committed, e.body.lt_type, e.body.delta16_saturated)
           for e in outer(tmp_path / "out") if e.type_code == 33]
    assert got == [(0, 2, False), (69999, 3, False), (70002 - 65535, 3, True)]


def test_relay_log_override(tmp_path: Path) -> None:
    """relay_log=True keeps every log_pos; forcing a relay log to binlog mode is flagged."""
    src = tmp_path / "src"
    src.write_bytes(synthetic_log([(0, 1), (1, 2)]))
    clocks = dict(zip(gtid_offsets(src), [(0, 1), (1, 2)]))
    report = rewrite_log(src, tmp_path / "relay", clocks, encoding="delta16", relay_log=True)
    assert report.relay_log and report.log_pos_updated == 0 and report.stale_log_pos == 6
    assert [e.log_pos for e in outer(tmp_path / "relay")] == [e.log_pos for e in outer(src)]
    if not CORPUS.is_dir():
        corpus_missing()
    relay = CORPUS / "mysql/mysql80/mysql-test__std_data__rpl_gipk_equivalent_key.000001"
    cf = load(relay)
    assert cf is not None and cf.relay_log
    report = rewrite_log(relay, tmp_path / "forced", cf.clocks(), encoding="delta16",
                         relay_log=False)
    assert not report.relay_log and report.log_pos_updated > 0
    assert any("relay_log=True" in w for w in report.warnings)


# ---- refusals and atomicity ----

def test_unreadable_corpus_files_are_refused(tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        corpus_missing()
    unreadable = {p.name: p for p in mysql_files() if load(p) is None}
    expected = {
        "parse__src__test__resources__binlog__tsdb__mysql-bin.000001": NotABinlog,
        "mysql-test__std_data__binlog_no_fd_event.000001": NoFormatDescription,
        "mysql-test__std_data__rpl_nogtid_encryption_master-bin.000002": EncryptedLog,
    }
    assert set(unreadable) == set(expected)
    for name, exc in expected.items():
        with pytest.raises(exc):
            rewrite_log(unreadable[name], tmp_path / "out", {})
        assert os.listdir(tmp_path) == []


def test_corpus_counts() -> None:
    """Guard against a silently shrunken corpus: what the round trips above cover."""
    if not CORPUS.is_dir():
        corpus_missing()
    files = [cf for cf in map(load, mysql_files()) if cf is not None]
    assert len(files) >= 97
    assert sum(len(cf.gtids) for cf in files) >= 386
    assert sum(len(cf.clocks()) for cf in files) >= 383


def test_bad_crc_aborts_and_leaves_dst_untouched(tmp_path: Path) -> None:
    src = tmp_path / "src"
    good = synthetic_log([(0, 1), (0, 2)])
    src.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))      # last event's CRC broken
    dst = tmp_path / "dst"
    dst.write_bytes(b"precious")
    clocks = dict(zip(gtid_offsets(src, verify=False), [(0, 1), (0, 2)]))
    with pytest.raises(ChecksumMismatch) as info:
        rewrite_log(src, dst, clocks, encoding="delta16")
    assert info.value.pos.offset == len(good) - 31
    assert dst.read_bytes() == b"precious"
    assert sorted(os.listdir(tmp_path)) == ["dst", "src"]           # no temp file left
    rewrite_log(src, dst, clocks)              # mysql, no size change: the damage is not ours
    assert dst.read_bytes() == src.read_bytes()


def test_refuses_src_as_dst(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.write_bytes(synthetic_log([(0, 1)]))
    link = tmp_path / "hardlink"
    os.link(src, link)
    for dst in (src, link, tmp_path / "." / "src"):
        with pytest.raises(UsageError):
            rewrite_log(src, dst, {})
    with pytest.raises(UsageError):
        rewrite_log(src, tmp_path, {})
    assert sorted(os.listdir(tmp_path)) == ["hardlink", "src"]


def test_clock_for_a_non_gtid_offset_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.write_bytes(synthetic_log([(0, 1)]))
    for clocks in ({4: (0, 1)}, {5: (0, 1)}, {10**6: (0, 1)}):
        with pytest.raises(UsageError):
            rewrite_log(src, tmp_path / "dst", clocks)
        assert not (tmp_path / "dst").exists()


def test_truncated_tail_is_copied(tmp_path: Path) -> None:
    full = synthetic_log([(0, 1), (1, 2)])
    src = tmp_path / "src"
    (tmp_path / "full").write_bytes(full)
    src.write_bytes(full[:-10])
    clocks = {gtid_offsets(tmp_path / "full")[0]: (0, 1)}
    report = rewrite_log(src, tmp_path / "dst", clocks, encoding="delta16")
    assert "ends mid-event" in report.warnings[0]
    out = (tmp_path / "dst").read_bytes()
    assert out.endswith(full[-31:-10]) and len(out) == len(full) - 10 - 6


def test_streaming_chunk_size_does_not_change_output(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.write_bytes(synthetic_log([(0, 1), (1, 2), (1, 3)], filler=5000))
    clocks = dict(zip(gtid_offsets(src), [(0, 1), (1, 2), (2, 3)]))
    rewrite_log(src, tmp_path / "a", clocks, encoding="delta16")
    rewrite_log(src, tmp_path / "b", clocks, encoding="delta16", chunk_size=7)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    outer(tmp_path / "b")


def test_memory_is_bounded_by_chunk_not_event(tmp_path: Path) -> None:
    """A 24 MiB event after a shrunk GTID is re-headed and re-CRCed through 64 KiB chunks."""
    src = tmp_path / "src"
    src.write_bytes(synthetic_log([(0, 1)], filler=24 << 20))
    clocks = {gtid_offsets(src)[0]: (0, 1)}
    tracemalloc.start()
    try:
        report = rewrite_log(src, tmp_path / "dst", clocks, encoding="delta16",
                             chunk_size=1 << 16)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.log_pos_updated >= 1
    assert peak < 2 << 20
    outer(tmp_path / "dst")                    # CRCs verify, log_pos consistent
    ev = outer(tmp_path / "dst")[-1]
    assert ev.log_pos == ev.end_pos


# ---- mariadb-binlog as an independent checker ----

def _mariadb_ok(cf: CorpusFile) -> bool:
    """Clocks to rewrite, a 5.x/8.x server (mariadb-binlog stops at 9.x's tagged GTIDs)."""
    return bool(cf.clocks()) and cf.server_version[:2] in ("5.", "8.") and not _bad_crc(cf)


def mariadb_ok_files() -> list:
    return corpus_params(_mariadb_ok, at_least=45)


@pytest.mark.parametrize("corpus_file", mariadb_ok_files(), indirect=True)
def test_mariadb_binlog_verifies_rewritten_files(corpus_file: CorpusFile,
                                                 tmp_path: Path) -> None:
    if MARIADB_BINLOG is None:
        message = ("mariadb-binlog not installed (apt-get install mariadb-client): "
                   "external CRC / position check NOT run")
        if os.environ.get("REPLTOOL_REQUIRE_CORPUS", "") not in ("", "0"):
            pytest.fail(message)
        pytest.skip(message)
    def run(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([MARIADB_BINLOG, "--verify-binlog-checksum", str(path)],
                              capture_output=True, text=True, timeout=30)

    def positions(out: str) -> list[tuple[int, int]]:
        """(start, end_log_pos) per event of mariadb-binlog's output."""
        starts = [int(x) for x in re.findall(r"^# at (\d+)$", out, re.M)]
        ends = [int(x) for x in re.findall(r"end_log_pos (\d+)", out)]
        assert len(starts) == len(ends)
        return list(zip(starts, ends))

    original = run(corpus_file.path)
    if original.returncode != 0:
        # mariadb-binlog cannot read MySQL's Transaction_payload (type 40) at all: the
        # rewritten file must fail the same way, at the same offset, and nowhere earlier.
        dst = tmp_path / "mysql.bin"          # same sizes, so the same failing offset
        rewrite_log(corpus_file.path, dst, shifted(corpus_file.clocks()), encoding="mysql")
        res = run(dst)
        assert res.returncode == original.returncode
        assert res.stderr.strip().splitlines()[-1:] == original.stderr.strip().splitlines()[-1:]
        assert positions(res.stdout) == positions(original.stdout)
        return
    before = positions(original.stdout)
    size = corpus_file.path.stat().st_size
    consistent = [end == nxt for (_, end), (nxt, _) in zip(before, before[1:] + [(size, 0)])]
    clocks = corpus_file.clocks()
    for encoding, new_clocks in (("delta16", clocks), ("mysql", shifted(clocks))):
        dst = tmp_path / f"{encoding}.bin"
        rewrite_log(corpus_file.path, dst, new_clocks, encoding=encoding)
        res = run(dst)
        assert res.returncode == 0, res.stderr[-500:]
        after = positions(res.stdout)
        assert len(after) == len(before)
        if corpus_file.relay_log:
            assert [e for _, e in after] == [e for _, e in before]
            continue
        ends_at = [nxt for nxt, _ in after[1:]] + [dst.stat().st_size]
        for ok, (_, end), nxt in zip(consistent, after, ends_at):
            if ok:                       # each event ends where the next one starts
                assert end == nxt


# ---- synthetic logs ----

def synthetic_log(trx: list[tuple[int, int]], *, filler: int = 0) -> bytes:
    """An 8.0-style binlog: FDE (CRC32), then per transaction GTID + Query + Xid, then a big
    Ignorable event of ``filler`` bytes if asked."""
    post = bytes([0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2,
                  0, 0, 0, 10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0])
    fde_body = (b"\x04\x00" + b"8.0.40".ljust(50, b"\x00") + bytes(4) + b"\x13" + post + b"\x01")
    out = bytearray(b"\xfebin")

    def add(tc: int, body: bytes, flags: int = 0) -> None:
        size = 19 + len(body) + 4
        out.extend(frame_event(1, tc, 1, flags, body, crc=True, log_pos=len(out) + size))

    add(15, fde_body, flags=0x1)
    for lc, sn in trx:
        query = bytes(13) + b"\x00" + b"BEGIN"
        xid = bytes(8)
        other = (19 + len(query) + 4) + (19 + 8 + 4)
        body = gtid(last_committed=lc, sequence_number=sn, transaction_length=0)
        size0 = 19 + len(encode_gtid_body(body)) + 4 - 1
        from repltool.binlog.writer import transaction_length_for
        body = replace(body, transaction_length=transaction_length_for(other, size0))
        add(33, encode_gtid_body(body))
        add(2, query)
        add(16, xid)
    if filler:
        add(28, bytes(filler), flags=0x80)
    return bytes(out)


def gtid_offsets(path: Path, verify: bool = True) -> list[int]:
    return [e.pos.offset for e in outer(path, verify) if e.type_code == 33]
