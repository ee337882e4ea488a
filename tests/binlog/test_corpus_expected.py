"""Differential test against the corpus' independent reference decode.

For every file of ``corpus/mysql/*/*`` the reference in
``corpus/expected/<source>/<name>.json`` lists every event (offset, type, size,
log_pos, server_id, flags), the FDEs, the GTID events' fields, Previous_gtids,
Rotates, Transaction_payload contents and CRC results.  We compare all of it
exactly.  Normal files are read with ``verify_checksum=False`` so that files
with a deliberately bad CRC still decode to the end; the CRC verdicts are then
checked separately with ``verify_checksum=True``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from repltool.binlog import EventType, ReadOptions, read_events
from repltool.binlog.events import (
    FormatDescriptionBody, GtidBody, PreviousGtidsBody, RotateBody, StartV3Body,
    TransactionPayloadBody,
)
from repltool.errors import (
    ChecksumMismatch, EncryptedLog, NoFormatDescription, NotABinlog, ReplToolError, TruncatedLog,
)

from ._corpus import expected, is_normal, is_special, read_all, special_kind, type_code

T = EventType
GTID_TYPES = {T.GTID_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT}
normal_files = pytest.mark.corpus_files("path", "mysql/*/*", select=is_normal)


@normal_files
def test_event_list(path: Path) -> None:
    """Offsets, type codes, sizes, log_pos, server ids and flags of every event."""
    exp = expected(path)
    got = read_all(path)
    assert got.error is None, f"reader stopped early: {got.error}"
    ours = [[e.pos.offset, e.type_code, e.event_size, e.log_pos, e.server_id, e.flags]
            for e in got.outer]
    theirs = [[off, type_code(name), size, log_pos, sid, flags]
              for off, name, size, log_pos, sid, flags in exp["event_list"]]
    assert ours == theirs
    assert len(ours) == exp["events"]
    assert got.info is not None and got.info.end_offset == exp["bytes_parsed"] == exp["size"]
    assert sorted({e.server_id for e in got.outer}) == exp["server_ids"]


@normal_files
def test_format_descriptions(path: Path) -> None:
    """Every FDE's fields, and the file's in-use / relay-log flags from the first one."""
    exp = expected(path)
    got = read_all(path)
    fdes = [e for e in got.outer if e.type_code == T.FORMAT_DESCRIPTION_EVENT]
    ours = []
    for e in fdes:
        b = e.body
        assert isinstance(b, FormatDescriptionBody)
        ours.append(dict(offset=e.pos.offset, binlog_version=b.binlog_version,
                         server_version=b.server_version, create_ts=b.create_timestamp,
                         header_len=b.common_header_len,
                         n_post_header_lens=len(b.post_header_len),
                         checksum_alg=b.checksum_alg, server_id=e.server_id, log_pos=e.log_pos,
                         flags=e.flags))
    keys = ("offset", "binlog_version", "server_version", "create_ts", "header_len",
            "n_post_header_lens", "checksum_alg", "server_id", "log_pos", "flags")
    theirs = [{k: f[k] for k in keys} for f in exp["fdes"]]
    # The reference reports the alg byte only for servers that write one (>= 5.6.1).
    for f in theirs:
        f.setdefault("checksum_alg", None)
    assert ours == theirs
    info = got.info
    assert info is not None
    if fdes:
        assert info.fde_count == len(fdes)
        assert info.in_use == bool(fdes[0].flags & 0x1)
        assert info.relay_log == bool(fdes[0].flags & 0x40)
        assert info.in_use == ("IN_USE" in exp["flags_seen"])


@normal_files
def test_gtid_events(path: Path) -> None:
    """GTID / Anonymous / tagged GTID bodies: every field the reference decoded."""
    exp = expected(path)
    gtids = [e for e in read_all(path).outer if e.type_code in GTID_TYPES]
    assert [(e.pos.offset, e.log_pos) for e in gtids] == \
        [(g["offset"], g["end_log_pos"]) for g in exp["gtids"]]
    for ev, ref in zip(gtids, exp["gtids"]):
        b = ev.body
        assert isinstance(b, GtidBody), ev
        where = f"{path.name}:{ev.pos.offset}"
        assert ev.type_code == type_code(ref["type"]), where
        assert b.gtid_flags == ref["flags"], where
        assert str(b.sid) == ref["sid"], where
        assert b.gno == ref["gno"], where
        assert b.tag == ref.get("tag"), where
        if "lc" in ref:
            assert b.lt_type == 2, where
            assert (b.last_committed, b.sequence_number) == (ref["lc"], ref["sn"]), where
        else:                        # 5.6: no logical clock in the event
            assert b.lt_type is None and (b.last_committed, b.sequence_number) == (0, 0), where
        ict = ref.get("immediate_commit_ts")
        assert b.immediate_commit_timestamp == ict, where
        # Absent original_* means "same as immediate", as MySQL decodes it.
        assert b.original_commit_timestamp == ref.get("original_commit_ts", ict), where
        assert b.transaction_length == ref.get("trx_len"), where
        isv = ref.get("immediate_server_version")
        assert b.immediate_server_version == isv, where
        assert b.original_server_version == ref.get("original_server_version", isv), where
        if ev.type_code == T.GTID_TAGGED_LOG_EVENT:
            assert ref["ser_version"] == 1 and ref["ser_size_matches_body"]
            assert ref["ser_size"] == ev.event_size - 19 - 4


def _gtid_set_text(body: PreviousGtidsBody) -> str:
    text = str(body.gtid_set)
    if not text:
        return "(empty)"
    tagged = any(tag for _, tag, _ in body.gtid_set.sids)
    return f"TAGGED_FMT {text}" if tagged else text


@normal_files
def test_previous_gtids(path: Path) -> None:
    exp = expected(path)
    prev = [e for e in read_all(path).outer if e.type_code == T.PREVIOUS_GTIDS_LOG_EVENT]
    assert all(isinstance(e.body, PreviousGtidsBody) for e in prev)
    assert [_gtid_set_text(e.body) for e in prev] == exp["prev_gtids"]  # type: ignore[arg-type]


@normal_files
def test_rotates(path: Path) -> None:
    exp = expected(path)
    rot = [e for e in read_all(path).outer if e.type_code == T.ROTATE_EVENT]
    ours = []
    for e in rot:
        assert isinstance(e.body, RotateBody)
        ours.append(dict(offset=e.pos.offset, pos=e.body.position, name=e.body.next_file,
                         flags=e.flags, log_pos=e.log_pos, server_id=e.server_id))
    assert ours == exp["rotates"]


@normal_files
def test_payloads(path: Path) -> None:
    """Transaction_payload header fields and the events inside (no CRC, log_pos 0)."""
    exp = expected(path)
    events = read_all(path).events
    payloads = [i for i, e in enumerate(events) if e.type_code == T.TRANSACTION_PAYLOAD_EVENT
                and e.pos.payload_offset is None]
    assert len(payloads) == len(exp["payloads"])
    for i, ref in zip(payloads, exp["payloads"]):
        ev = events[i]
        b = ev.body
        assert isinstance(b, TransactionPayloadBody)
        assert (b.compression_type, b.payload_size, b.uncompressed_size) == \
            (ref["compression_type"], ref["payload_size"], ref["uncompressed_size"])
        inner = []
        for e in events[i + 1:]:
            if e.pos.payload_offset is None:
                break
            assert e.pos.offset == ev.pos.offset
            inner.append(e)
        assert [e.type_code for e in inner] == [type_code(n) for n in ref["inner_events"]]
        assert [e.log_pos for e in inner] == ref["inner_log_pos"] == [0] * len(inner)
        assert [e.crc is not None for e in inner] == ref["inner_crc_present"]
        assert sum(e.event_size for e in inner) == ref["decompressed_len"]
        assert ref["inner_trailing"] == 0
        assert [e.pos.payload_offset for e in inner] == \
            [sum(x.event_size for x in inner[:k]) for k in range(len(inner))]
        # payload header (TLV) + payload bytes + CRC == the event
        assert ev.event_size == 19 + ref["header_len"] + b.payload_size + (4 if ev.crc else 0)


_CRC_ANOMALY = re.compile(r"^CRC mismatch type (\S+) at (\d+)$")


@normal_files
def test_checksums(path: Path) -> None:
    """verify_checksum=True: clean files read to the end; bad CRCs stop at the right event."""
    exp = expected(path)
    lenient = read_all(path)
    strict = read_all(path, verify=True)
    bad = [m.groups() for m in map(_CRC_ANOMALY.match, exp["anomalies"]) if m]
    assert len(bad) == exp["crc_bad"]
    if not bad:
        assert strict.error is None
        assert strict.events == lenient.events
    else:
        name, offset = bad[0]
        err = strict.error
        assert isinstance(err, ChecksumMismatch), err
        assert err.pos is not None and err.pos.offset == int(offset)
        assert err.event_type == EventType(type_code(name)).name
        assert str(err).startswith(f"{path}:{offset} {err.event_type}: CRC32 mismatch")
        # everything before the damaged event was yielded, nothing after it
        assert strict.events == tuple(e for e in lenient.events if e.pos.offset < int(offset))
    # CRCs present: the reference counts FDEs only in CRC32 files (an alg-0 FDE still has one).
    outer = lenient.outer
    fde_algs = {e.pos.offset: e.body.checksum_alg for e in outer
                if isinstance(e.body, FormatDescriptionBody)}
    with_crc = [e for e in outer if e.crc is not None
                and not (e.pos.offset in fde_algs and fde_algs[e.pos.offset] != 1)]
    assert len(with_crc) == exp["crc_ok"] + exp["crc_bad"]
    assert all((e.crc is not None) == (f["checksum_alg"] is not None)
               for e in outer if e.type_code == T.FORMAT_DESCRIPTION_EVENT
               for f in exp["fdes"] if f["offset"] == e.pos.offset)


_SPECIAL = {
    "not_binlog": (NotABinlog, 0),
    "encrypted": (EncryptedLog, 0),
    "truncated": (TruncatedLog, 4),
    "no_fde": (NoFormatDescription, 4),
}


@pytest.mark.corpus_files("path", "mysql/*/*", select=is_special)
@pytest.mark.parametrize("verify", [False, True], ids=["nocrc", "crc"])
def test_special_files(path: Path, verify: bool) -> None:
    """Files the reference could not walk: the reader names the reason, at the right offset."""
    kind = special_kind(path)
    exc_type, offset = _SPECIAL[kind]  # type: ignore[index]
    got = []
    with pytest.raises(ReplToolError) as info:
        for ev in read_events(path, ReadOptions(verify_checksum=verify)):
            got.append(ev)
    err = info.value
    assert type(err) is exc_type, err
    assert err.pos is not None and err.pos.offset == offset
    assert got == []
    assert re.match(rf"^{re.escape(str(path))}:{offset}( \S+)?: .+", str(err))
    exp = expected(path)
    if kind == "truncated":
        assert exp["anomalies"] == [f"truncated header at 4 ({exp['size'] - 4} bytes left)"]
        assert f"{exp['size'] - 4} bytes left" in str(err)
    if kind == "no_fde":
        assert exp["event_list"][0][:2] == [offset, err.event_type and int(
            err.event_type.rsplit("_", 1)[1])]
    if kind == "not_binlog":
        assert exp["magic"] == "efbfbd62" and "U+FFFD" in str(err)
    if kind == "encrypted":
        assert exp["magic"] == "fd62696e"
        assert f"version {exp['enc_header_version']}" in str(err)


def _is_pre_v4(path: Path) -> bool:
    return is_normal(path) and expected(path).get("first_event_type") == "START_V3"


@pytest.mark.corpus_files("path", "mysql/*/*", select=_is_pre_v4)
def test_pre_v4_files(path: Path) -> None:
    """Binlog v2/v3 (4.0/4.1): Start_event_v3 first, no FDE, the whole file decodes."""
    exp = expected(path)
    got = read_all(path)
    assert got.error is None
    first = got.events[0]
    assert first.type_code == T.START_EVENT_V3 and isinstance(first.body, StartV3Body)
    assert (first.body.binlog_version, first.body.server_version) == \
        (exp["binlog_version"], exp["server_version"])
    assert got.info is not None and got.info.binlog_version == exp["binlog_version"]
    assert got.info.fde_count == 0 and got.info.first_fde is not None
    assert got.info.first_fde.checksum_alg is None
    assert all(e.crc is None for e in got.events)
    assert len(got.events) == exp["events"]


@pytest.mark.corpus_files("path", "mysql/*/*", select=lambda p: special_kind(p) == "no_fde")
def test_no_fde_reference_rotate_name_is_wrong(path: Path, tmp_path: Path) -> None:
    """Where the reference is wrong: its Rotate name ends in the event's CRC32 footer.

    The reference reports the name as ``master-bin.0000037\\x92'\\xfe``.

    Without an FDE the reference (and mariadb-binlog) cannot know the file is
    CRC32-checksummed, so it reads the 4-byte footer as part of the name.  The
    footer *is* the CRC32 of the event, and the "type 48" first event is an FDE
    whose type byte was patched (MySQL's test builds this file that way):
    restoring 15 makes its own CRC valid, and then the file reads completely,
    with the Rotate naming ``master-bin.000003``.
    """
    import zlib
    exp = expected(path)
    [rot] = exp["rotates"]
    data = bytearray(path.read_bytes())
    event = bytes(data[rot["offset"]:rot["log_pos"]])
    footer = event[-4:]
    assert zlib.crc32(event[:-4]) == int.from_bytes(footer, "little")
    assert rot["name"].encode("latin-1") == b"master-bin.000003" + footer
    first = exp["event_list"][0]
    assert first[1] == 48
    data[first[0] + 4] = EventType.FORMAT_DESCRIPTION_EVENT
    fixed = tmp_path / "fde-restored"
    fixed.write_bytes(bytes(data))
    events = list(read_events(fixed))                      # CRCs verified
    assert [(e.pos.offset, e.event_size, e.log_pos) for e in events] == \
        [(r[0], r[2], r[3]) for r in exp["event_list"]]
    assert isinstance(events[0].body, FormatDescriptionBody)
    assert events[0].body.server_version == "5.7.2-m12-debug-log"
    assert isinstance(events[1].body, RotateBody)
    assert events[1].body.next_file == "master-bin.000003"
