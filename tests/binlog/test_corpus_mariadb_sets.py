"""The MariaDB 10.11 sets (``corpus/mariadb``): real server output with ground truth.

Each set's ``ground-truth.json`` lists every GTID the workload committed
(``transactions[*].gtid`` as ``domain-server-seq``, with its kind).  We check
that every binlog decodes completely (CRC verified), that our transaction
grouping finds exactly those GTIDs with matching kinds and tables, that the
replica's relay logs, read as one sequence in ``relay-bin.index`` order, stitch
the 9 transactions split across relay files back together, and that the
encrypted and in-use files are reported for what they are.

Every file is read once per session (``_corpus.read_all`` and
:func:`transactions_of` are memoised); the whole module reads ~75 MB.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from repltool.binlog import EventType, FileInfo, read_events, read_transactions
from repltool.binlog.events import FormatDescriptionBody, MariaGtidBody, StartEncryptionBody
from repltool.binlog.transactions import Transaction
from repltool.errors import EncryptedLog, NotABinlog, TruncatedLog

from ._corpus import read_all

T = EventType
SETS = ["small", "serial", "rotation", "compressed", "relay/primary", "relay/replica-binlog",
        "relay/replica-relay", "relay/inuse-snapshot"]
#: directory -> the ground truth that describes it
GROUND_TRUTH = {"small": "small", "serial": "serial", "rotation": "rotation",
                "compressed": "compressed", "relay/primary": "relay",
                "relay/replica-binlog": "relay", "relay/replica-relay": "relay"}
#: ground-truth kind -> Transaction.kind (MyISAM statements and the workload's
#: setup INSERTs are DML groups ended by COMMIT / XID)
KIND = {"dml": "dml", "myisam": "dml", "setup": "dml", "ddl": "ddl", "xa_prepare": "xa-prepare",
        "xa_commit": "xa-commit", "xa_rollback": "xa-rollback"}
SPLIT_RELAY_TRANSACTIONS = 9


def _is_log(p: Path) -> bool:
    return p.name.startswith(("mysql-bin.0", "relay-bin.0")) or p.suffix == ".inuse"


def set_files(corpus: Path, name: str) -> list[Path]:
    """The logs of a set in their index order (relay-bin.index / mysql-bin numbering)."""
    d = corpus / "mariadb" / name
    index = d / "relay-bin.index"
    if index.is_file():
        # The index holds the replica's absolute paths: keep the order, map the names here.
        return [d / Path(line.strip()).name for line in index.read_text().splitlines()
                if line.strip()]
    return sorted(p for p in d.iterdir() if p.is_file() and _is_log(p))


@functools.lru_cache(maxsize=None)
def ground_truth(corpus: Path, name: str) -> dict:
    return json.loads((corpus / "mariadb" / name / "ground-truth.json").read_text())


@functools.lru_cache(maxsize=None)
def transactions_of(paths: tuple[Path, ...]
                    ) -> tuple[tuple[Transaction, ...], tuple[FileInfo, ...]]:
    info: list[FileInfo] = []
    trx = tuple(read_transactions([os.fspath(p) for p in paths], info=info))
    return trx, tuple(info)


# ---- every file decodes; the other files are not binlogs ----

@pytest.mark.corpus_files("path", *(f"mariadb/{s}/*" for s in SETS), select=_is_log)
def test_binlog_decodes(path: Path) -> None:
    """Every event of every binlog / relay log decodes, every CRC32 verified."""
    got = read_all(path, verify=True)
    assert got.error is None, got.error
    info = got.info
    assert info is not None and info.first_fde is not None and info.first_fde.is_mariadb
    assert info.end_offset == path.stat().st_size
    assert got.events[0].type_code == T.FORMAT_DESCRIPTION_EVENT
    assert all(e.crc is not None for e in got.events)
    assert not any(type(e.body).__name__ == "UnknownBody" for e in got.events), \
        Counter(e.type_name for e in got.events if type(e.body).__name__ == "UnknownBody")
    # binlogs: log_pos is the end offset of each event; relay logs keep the primary's
    if not info.relay_log:
        assert all(e.log_pos == e.pos.offset + e.event_size for e in got.events)


@pytest.mark.corpus_files("path", *(f"mariadb/{s}/*" for s in SETS + ["encrypted"]),
                          select=lambda p: not _is_log(p))
def test_other_files_are_not_binlogs(path: Path) -> None:
    """Index, info, JSON, SQL and key files next to the logs are refused by magic."""
    with pytest.raises(NotABinlog) as info:
        next(iter(read_events(path)))
    assert info.value.pos is not None and info.value.pos.offset == 0
    assert str(info.value).startswith(f"{path}:0: not a binlog: magic is ")


def test_encrypted_set(corpus: Path) -> None:
    """encrypt_binlog=ON: the FDE is yielded, then EncryptedLog at START_ENCRYPTION (164)."""
    [path] = set_files(corpus, "encrypted")
    events = []
    with pytest.raises(EncryptedLog) as info:
        for ev in read_events(path):
            events.append(ev)
    assert [e.type_code for e in events] == [T.FORMAT_DESCRIPTION_EVENT,
                                             T.START_ENCRYPTION_EVENT]
    fde, start = events
    assert isinstance(fde.body, FormatDescriptionBody) and fde.body.is_mariadb
    assert isinstance(start.body, StartEncryptionBody)
    assert start.body.scheme == 1 and len(start.body.nonce) == 12
    err = info.value
    assert err.pos is not None and err.pos.offset == start.pos.offset == 4 + fde.event_size
    assert err.event_type == "START_ENCRYPTION_EVENT"
    assert str(err).startswith(f"{path}:{start.pos.offset} START_ENCRYPTION_EVENT: ")
    # read_transactions stops the same way, before inventing any transaction
    with pytest.raises(EncryptedLog):
        list(read_transactions(path))


# ---- ground truth ----

@pytest.mark.parametrize("name", list(GROUND_TRUTH))
def test_ground_truth_gtids(corpus: Path, name: str) -> None:
    """Our transactions are exactly the ground truth's GTIDs, in commit order, with its kinds."""
    gt = ground_truth(corpus, GROUND_TRUTH[name])["transactions"]
    files = set_files(corpus, name)
    trx, _ = transactions_of(tuple(files))
    gtid_events = sum(e.type_code == T.MARIADB_GTID_EVENT
                      for p in files for e in read_all(p, verify=True).events)
    assert gtid_events == len(gt) == len(trx)
    assert not [t for t in trx if t.truncated]
    ours = {t.gtid: t for t in trx}
    assert len(ours) == len(trx), "a GTID appears twice"
    missing = [g["gtid"] for g in gt if g["gtid"] not in ours]
    assert missing == []
    for g in gt:
        t = ours[g["gtid"]]
        assert t.kind == KIND[g["kind"]], (g["gtid"], g["kind"], t.kind)
        assert t.server_id == g["server_id"]
        written = {r["table"] for r in g.get("rows", ())}
        assert written <= set(t.tables), (g["gtid"], written, t.tables)
    # one domain, strict mode: seq_no increases along the log
    assert [t.gtid for t in trx] == sorted((g["gtid"] for g in gt),
                                           key=lambda s: int(s.rsplit("-", 1)[1]))


def test_group_commit_ids(corpus: Path) -> None:
    """commit_id is set exactly on FL_GROUP_COMMIT_ID GTIDs; none in the serial set."""
    for name in ("small", "serial"):
        trx, _ = transactions_of(tuple(set_files(corpus, name)))
        with_id = [t for t in trx if t.commit_id is not None]
        assert all(t.maria_flags is not None and t.maria_flags & 0x02 for t in with_id)
        if name == "serial":
            assert with_id == []
        else:
            assert len(with_id) > len(trx) // 2


# ---- relay logs ----

def test_relay_logs_as_one_sequence(corpus: Path) -> None:
    """Read in relay-bin.index order, the 9 transactions cut by relay rotation are whole."""
    files = set_files(corpus, "relay/replica-relay")
    assert [p.name for p in files] == [f"relay-bin.{i:06d}" for i in range(1, 30)]
    trx, info = transactions_of(tuple(files))
    assert all(i.relay_log and not i.in_use for i in info)
    split = [t for t in trx if t.spans_files]
    assert len(split) == SPLIT_RELAY_TRANSACTIONS
    names = [p.name for p in files]
    for t in split:
        # a split transaction continues in the very next relay file, after its two FDEs
        i = names.index(Path(t.start.file).name)
        assert Path(t.end.file).name == names[i + 1]
        assert not t.truncated and t.kind == "dml"
    assert not [t for t in trx if t.truncated]
    # the same GTIDs, kinds and sizes as the primary's own binlog
    primary, _ = transactions_of(tuple(set_files(corpus, "relay/primary")))
    assert [(t.gtid, t.kind, t.num_events) for t in trx] == \
        [(t.gtid, t.kind, t.num_events) for t in primary]


def test_relay_files_read_alone_truncate(corpus: Path) -> None:
    """Read file by file, each split transaction is a truncated tail plus a GTID-less head."""
    files = set_files(corpus, "relay/replica-relay")
    whole, _ = transactions_of(tuple(files))
    split_starts = {Path(t.start.file).name for t in whole if t.spans_files}
    tails = heads = 0
    for p in files:
        trx, _ = transactions_of((p,))
        if p.name in split_starts:
            assert trx[-1].truncated and trx[-1].gtid is not None
            tails += 1
        if trx and trx[0].gtid is None:
            heads += 1
        assert not [t for t in trx[:-1] if t.truncated]
    assert tails == heads == SPLIT_RELAY_TRANSACTIONS


# ---- in-use snapshots ----

def _snapshots(corpus: Path) -> dict[str, tuple[Path, Path]]:
    d = corpus / "mariadb" / "relay"
    return {"primary": (d / "inuse-snapshot" / "primary-mysql-bin.000010.inuse",
                        d / "primary" / "mysql-bin.000010"),
            "relay": (d / "inuse-snapshot" / "replica-relay-bin.000029.inuse",
                      d / "replica-relay" / "relay-bin.000029")}


@pytest.mark.parametrize("which", ["primary", "relay"])
def test_inuse_snapshot(corpus: Path, which: str) -> None:
    """A copy of a live log: in-use flag on the binlog only, a clean end at an event boundary.

    Both snapshots were taken between events (the finished files only add a
    STOP), so they must read to their last byte without TruncatedLog, and every
    event equals the finished file's (the binlog's FDE differs only in the flag).
    """
    snap, final = _snapshots(corpus)[which]
    got, done = read_all(snap, verify=True), read_all(final, verify=True)
    assert got.error is None and got.info is not None
    assert got.info.in_use is (which == "primary")
    assert got.info.relay_log is (which == "relay")
    assert got.info.truncated_at is None and got.info.end_offset == snap.stat().st_size
    assert got.events[-1].type_code not in (T.STOP_EVENT, T.ROTATE_EVENT)
    assert [e.type_code for e in done.events[len(got.events):]] == [T.STOP_EVENT]
    fde, fde_done = got.events[0], done.events[0]
    assert fde.flags == fde_done.flags | (0x1 if which == "primary" else 0)
    assert fde.crc == fde_done.crc          # the FDE CRC is computed with IN_USE cleared
    def key(e):  # everything but the file name
        return (e.pos.offset, e.pos.payload_offset, e.timestamp, e.type_code, e.server_id,
                e.event_size, e.log_pos, e.flags, e.body, e.crc, e.raw)
    assert [key(e) for e in got.events[1:]] == [key(e) for e in done.events[1:len(got.events)]]


def test_inuse_snapshot_cut_mid_event(corpus: Path, tmp_path: Path) -> None:
    """The same live binlog cut inside its last event: TruncatedLog, with the in-use hint."""
    snap, _ = _snapshots(corpus)["primary"]
    events = read_all(snap, verify=True).events
    last = events[-1]
    cut = tmp_path / snap.name
    with open(snap, "rb") as src, open(cut, "wb") as dst:
        shutil.copyfileobj(src, dst)
        dst.truncate(last.pos.offset + 7)
    seen = []
    with pytest.raises(TruncatedLog) as info:
        for ev in read_events(cut):
            seen.append(ev)
    assert len(seen) == len(events) - 1
    assert info.value.pos is not None and info.value.pos.offset == last.pos.offset
    assert "in-use flag is set" in str(info.value)
    # read_transactions surfaces the same error (after the complete groups)
    groups = []
    with pytest.raises(TruncatedLog):
        for t in read_transactions(cut):
            groups.append(t)
    assert groups and not any(t.truncated for t in groups)


def test_maria_gtid_bodies(corpus: Path) -> None:
    """GTID (162) bodies in the small set: domain 0, server 1, seq_no 1..N, XA ids on XA groups."""
    [path] = set_files(corpus, "small")
    bodies = [(e, e.body) for e in read_all(path, verify=True).events
              if e.type_code == T.MARIADB_GTID_EVENT]
    gtids = [(e, b) for e, b in bodies if isinstance(b, MariaGtidBody)]
    assert len(gtids) == len(bodies)
    assert [b.seq_no for _, b in gtids] == list(range(1, len(gtids) + 1))
    assert {(b.domain_id, e.server_id) for e, b in gtids} == {(0, 1)}
    xa = [b for _, b in gtids if b.flags2 & 0xC0]
    assert xa and all(b.xa_gtrid and b.xa_format_id is not None for b in xa)
