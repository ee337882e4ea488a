"""The generated files have the structure real servers write (compared with the corpus)."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

import pytest

from repltool.binlog import ReadOptions, read_events, read_transactions
from repltool.binlog.events import Event

from .conftest import SynthSet  # noqa: F401 - the fixture type

# Real 8.0.2x-8.0.4x, 5.7 and 9.x files of the corpus (names under mysql/).
MYSQL80 = [
    "rmc/test-data__binlogs__minimal_row_metadata.000001",                       # 8.0.40
    "pbs/mtr__binlog_streaming__std_data__data_80045_position.zip__data_80045_position__binlog.000001",
    "mysql80/mysql-test__std_data__rpl_binlog_with_gipk_info_no_gipk.000001",     # 8.0.32
    "mysql80/mysql-test__std_data__data80036_with_externally_stored_tablespaces.zip__data_dir__binlog.000001",
    "mysql80/mysql-test__std_data__replicated-bin.000001",                        # 8.0.29
]
MYSQL57 = "apecloud/tests__parse_file_tests__mysql-bin.000080"                  # 5.7.40
MYSQL9 = "rmc/test-data__binlogs__binlog_transaction_with_GTID_TAG.000001"      # 9.6.0
RELAY80 = "mysql80/mysql-test__std_data__rpl_no_gipk_low_column_number.000001"  # 8.0.28 relay


def events(path: Path) -> list[Event]:
    return list(read_events(path, ReadOptions()))


def raw_events(path: Path) -> list[tuple[int, bytes]]:
    data = path.read_bytes()
    out, p = [], 4
    while p + 19 <= len(data):
        size = struct.unpack_from("<I", data, p + 9)[0]
        out.append((p, data[p:p + size]))
        p += size
    return out


def fde_skeleton(raw: bytes) -> bytes:
    """FDE bytes without timestamp, server_id, log_pos, version, create_timestamp, CRC."""
    return raw[4:5] + raw[9:13] + raw[17:21] + raw[75:-4]


def shapes(path: Path) -> set[tuple[int, ...]]:
    """Type sequences of the transactions, consecutive repeats collapsed."""
    out = set()
    for trx in read_transactions(path, ReadOptions(), keep_events=True):
        seq: list[int] = []
        for ev in trx.events:
            if ev.pos.payload_offset is not None:
                continue
            tc = ev.type_code
            tc = 2 if tc == 2 else tc
            if not seq or seq[-1] != tc:
                seq.append(tc)
        out.add(tuple(seq))
    return out


@pytest.mark.parametrize("variant,real", [("mysql80", MYSQL80[0]), ("mysql80", MYSQL80[1]),
                                          ("mysql57", MYSQL57), ("tagged", MYSQL9)])
def test_fde_bytes_match_the_server(synth_sets: dict[str, SynthSet], corpus: Path,
                                    variant: str, real: str) -> None:
    ours = raw_events(synth_sets[variant].files[0])[0][1]
    theirs = raw_events(corpus / "mysql" / real)[0][1]
    assert len(ours) == len(theirs)
    assert fde_skeleton(ours) == fde_skeleton(theirs)


def test_previous_gtids_rotate_stop_layout(synth_sets: dict[str, SynthSet]) -> None:
    s = synth_sets["mysql80"]
    assert len(s.files) >= 3
    executed = 0
    for i, f in enumerate(s.files):
        evs = events(f)
        assert [e.type_code for e in evs[:2]] == [15, 35]
        assert evs[1].flags == 0x80
        assert evs[0].body.create_timestamp == (evs[0].timestamp if i == 0 else 0)
        prev = str(evs[1].body.gtid_set)
        assert prev == (f"{s.records[0]['gtid'].split(':')[0]}:1-{executed}" if executed else "")
        gtids = [e for e in evs if e.type_code == 33]
        assert [(e.body.last_committed, e.body.sequence_number) for e in gtids][0] == (0, 1)
        assert [e.body.sequence_number for e in gtids] == list(range(1, len(gtids) + 1))
        assert [e.body.gno for e in gtids] == list(range(executed + 1, executed + len(gtids) + 1))
        executed += len(gtids)
        last = evs[-1]
        if i + 1 < len(s.files):
            assert last.type_code == 4 and last.body.next_file == s.files[i + 1].name
            assert last.body.position == 4
        else:
            assert last.type_code == 3
        for e in evs:           # log_pos is the end of the event, CRC32 everywhere
            assert e.log_pos == e.pos.offset + e.event_size
            assert e.crc is not None


def test_transaction_shapes_are_the_servers(synth_sets: dict[str, SynthSet],
                                            corpus: Path) -> None:
    real: set[tuple[int, ...]] = set()
    for name in MYSQL80:
        real |= shapes(corpus / "mysql" / name)
    ours = shapes(synth_sets["mysql80"].files[0]) | shapes(synth_sets["hot"].files[0])
    dml = {s for s in ours if 16 in s}
    assert (33, 2) in ours & real                                  # DDL
    assert (33, 2, 19, 30, 16) in ours & real                      # one-statement insert
    assert (33, 2, 19, 30, 19, 30, 19, 30, 16) in ours             # statements re-map
    for s in dml:
        assert s[:3] == (33, 2, 19) and s[-1] == 16
        body = s[2:-1]            # Table_map, then one or more Rows events, per statement
        assert body[0] == 19 and body[-1] in (30, 31, 32)
        assert all(b in (30, 31, 32) for a, b in zip(body, body[1:]) if a == 19)
        assert set(body) <= {19, 30, 31, 32}
    assert (33, 2) in ours and any(s == (33, 2) for s in ours)
    assert ours - real <= dml | {(33, 2)}                          # empty: GTID BEGIN COMMIT
    z = shapes(synth_sets["zstd"].files[0])
    assert (33, 40) in z


def test_gtid_event_sizes_and_transaction_length(synth_sets: dict[str, SynthSet],
                                                 corpus: Path) -> None:
    real_sizes = {len(r) for n in MYSQL80 for _, r in raw_events(corpus / "mysql" / n)
                  if r[4] in (33, 34)}
    for variant, sizes in (("mysql80", {77, 79, 80}), ("zstd", {77, 79, 80}),
                           ("mysql57", {65}), ("delta16", {71, 73, 74})):
        s = synth_sets[variant]
        seen = Counter()
        for f in s.files:
            for trx in read_transactions(f, ReadOptions(), keep_events=True):
                g = trx.events[0]
                seen[g.event_size] += 1
                if variant != "mysql57":
                    assert trx.transaction_length == trx.size      # self-inclusive, CRCs in
                else:
                    assert trx.transaction_length is None
        assert set(seen) <= sizes, (variant, seen)
    assert {77, 79} <= real_sizes


def test_query_status_vars_as_the_server(synth_sets: dict[str, SynthSet], corpus: Path) -> None:
    def status(path: Path) -> dict[str, bytes]:
        out = {}
        for _, raw in raw_events(path):
            if raw[4] != 2:
                continue
            sv_len = struct.unpack_from("<H", raw, 19 + 11)[0]
            db_len = raw[19 + 8]
            sv = raw[19 + 13:19 + 13 + sv_len]
            query = raw[19 + 13 + sv_len + db_len + 1:-4]
            kind = "BEGIN" if query == b"BEGIN" else "COMMIT" if query == b"COMMIT" else "DDL"
            out.setdefault(kind, sv)
            out.setdefault(kind + "-flags", raw[17:19])
        return out
    real = status(corpus / "mysql" / MYSQL80[0])
    ours = status(synth_sets["hot"].files[0])
    assert ours["BEGIN"] == real["BEGIN"] and ours["BEGIN-flags"] == real["BEGIN-flags"]
    ddl_real = status(corpus / "mysql" / MYSQL80[2])["DDL"]
    # same codes in the same order: 0 1 6 4 12 17 18 19 (xid and db name differ)
    assert ours["DDL"][:27] == ddl_real[:27]
    assert ours["DDL"][-6:] == ddl_real[-6:]
    assert ours["COMMIT"] == ours["BEGIN"]
    real57 = status(corpus / "mysql" / MYSQL57)["BEGIN"]
    ours57 = status(synth_sets["mysql57"].files[0])["BEGIN"]
    assert ours57[:20] == real57[:20]                   # flags2, 5.7 sql_mode, catalog


def test_table_map_optional_metadata(synth_sets: dict[str, SynthSet]) -> None:
    def kinds(path: Path) -> set[tuple[int, ...]]:
        out = set()
        for e in events(path):
            if e.type_code == 19:
                out.add(tuple(k for k, _ in e.body.optional_metadata))
        return out
    assert kinds(synth_sets["mysql80"].files[0]) == {(1, 2)}          # MINIMAL
    assert kinds(synth_sets["delta16"].files[0]) == {(1, 2, 4, 8, 12), (1, 2, 4, 12)}  # FULL


def test_relay_log_layout(synth_sets: dict[str, SynthSet], corpus: Path) -> None:
    s = synth_sets["relay"]
    assert len(s.files) >= 3
    real = [(tc, sid, flags, lp == 0) for _, r in raw_events(corpus / "mysql" / RELAY80)[:5]
            for tc, sid, lp, flags in [(r[4], *struct.unpack_from("<I", r, 5),
                                        *struct.unpack_from("<IH", r, 13))]]
    first = [(tc, sid, flags, lp == 0) for _, r in raw_events(s.files[0])[:5]
             for tc, sid, lp, flags in [(r[4], *struct.unpack_from("<I", r, 5),
                                         *struct.unpack_from("<IH", r, 13))]]
    assert first == real     # relay FDE, relay Previous_gtids, fake Rotate, source FDE, sid-0 Rotate
    for f in s.files:
        evs = events(f)
        assert evs[0].flags == 0x40 and evs[0].server_id == 2
        assert evs[1].type_code == 35 and evs[1].flags == 0xC0
        if f != s.files[0]:
            assert evs[2].type_code == 15 and evs[2].flags == 0x20 and evs[2].log_pos == 0
        if f != s.files[-1]:
            assert evs[-1].type_code == 4 and evs[-1].flags == 0x40
    # 8.0 never splits a transaction across relay files; the set is complete
    trxs = list(read_transactions(s.files))
    assert not any(t.truncated or t.spans_files for t in trxs)
    assert [t.gtid for t in trxs] == [r["gtid"] for r in s.records]
    # relay Previous_gtids = what was retrieved before the file
    n = 0
    for f in s.files:
        evs = events(f)
        assert str(evs[1].body.gtid_set) == (f"{s.records[0]['gtid'].split(':')[0]}:1-{n}" if n else "")
        n += sum(1 for e in evs if e.type_code == 33)
