"""Transaction grouping (format-spec §1.5, MariaDB notes §6) on real files.

Each test names the grouping rule it demonstrates.  ``transaction_length``
(8.0.2+) is an independent witness of MySQL's own grouping: the bytes of the
whole group including its GTID event, so ``Transaction.size`` must equal it,
except in files whose events were spliced by hand (MySQL's binlog_recovery
fixtures): there the stored ``log_pos`` values still give the original extent
and match ``transaction_length`` instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repltool.binlog import EventType, group_transactions, read_events, read_transactions
from repltool.binlog.constants import MARIA_FL_DDL, MARIA_FL_STANDALONE
from repltool.binlog.events import Event, GtidBody
from repltool.binlog.transactions import Transaction

from ._corpus import is_normal, read_all

T = EventType
MYSQL80 = "mysql/mysql80/mysql-test__std_data__"
RECOVERY = MYSQL80 + "binlog_recovery__{}.000001"


def groups(corpus: Path, name: str) -> list[Transaction]:
    return list(group_transactions(iter(read_all(corpus / name).events), keep_events=True))


def shape(t: Transaction) -> list[str]:
    out = []
    for e in t.events:
        if e.type_code in (T.QUERY_EVENT, T.QUERY_COMPRESSED_EVENT):
            out.append(e.body.query.decode().split(" ")[0].upper())  # type: ignore[union-attr]
        else:
            out.append(e.type_name)
    return out


# ---- compressed transactions ----

def test_compressed_payload_is_one_transaction(corpus: Path) -> None:
    """A Transaction_payload carries the whole group: GTID + payload (+ its 4 inner events)."""
    [t] = groups(corpus, "mysql/rmc/test-data__binlogs__transaction_compression.000001")
    assert t.compressed and not t.truncated and t.kind == "dml"
    assert t.num_events == 6
    assert shape(t) == ["ANONYMOUS_GTID_LOG_EVENT", "TRANSACTION_PAYLOAD_EVENT", "BEGIN",
                        "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "XID_EVENT"]
    assert t.size == 234 == t.transaction_length          # 77 + 157: inner events not counted
    assert (t.gtid, t.last_committed, t.sequence_number) == ("ANONYMOUS", 0, 1)
    assert t.end.payload_offset is not None and t.end_offset == 274 + 157
    assert t.thread_id is not None                        # from the BEGIN inside the payload
    assert len(t.tables) == 1 and dict(t.rows_events) == {t.tables[0]: 1}


# ---- transaction_length == size ----

def _has_trx_length(path: Path) -> bool:
    if not is_normal(path):
        return False
    return any(isinstance(e.body, GtidBody) and e.body.transaction_length is not None
               for e in read_all(path).events)


def _original_start(ev: Event) -> int:
    """Where an event was when the server wrote it: a binlog's log_pos is its end offset."""
    return ev.log_pos - ev.event_size


def _spliced(path: Path) -> bool:
    """Some event is not where its own log_pos says the server put it."""
    return any(e.pos.payload_offset is None and e.log_pos and e.log_pos != e.end_pos
               for e in read_all(path).events
               if e.type_code != T.FORMAT_DESCRIPTION_EVENT or e.log_pos)


@pytest.mark.corpus_files("path", "mysql/*/*", select=_has_trx_length)
def test_transaction_length_is_the_group_size(path: Path) -> None:
    """8.0.2+: transaction_length counts the whole group including the GTID event and CRCs."""
    events = read_all(path).events
    info = read_all(path).info
    assert info is not None and info.first_fde is not None
    assert info.first_fde.version_tuple >= (8, 0, 2)
    trx = list(group_transactions(iter(events), keep_events=True))
    outer = [e for e in events if e.pos.payload_offset is None]
    checked = 0
    for t in trx:
        if t.transaction_length is None:
            continue
        checked += 1
        if t.size == t.transaction_length:
            continue
        # Only hand-spliced files may differ, and then the stored positions explain it.
        assert _spliced(path) and not info.relay_log, t
        first = t.events[0]
        if t.truncated:
            nxt = outer[outer.index(t.events[-1]) + 1]
            end = _original_start(nxt)
        else:
            end = t.events[-1].log_pos
        assert end - _original_start(first) == t.transaction_length, t
    assert checked > 0


def test_spliced_files_are_the_recovery_fixtures(corpus: Path) -> None:
    """transaction_length != size happens exactly in the binlog_recovery files with cut groups."""
    mismatched = set()
    for path in sorted((corpus / "mysql").glob("*/*")):
        if not _has_trx_length(path):
            continue
        for t in group_transactions(iter(read_all(path).events)):
            if t.transaction_length is not None and t.size != t.transaction_length:
                mismatched.add(path.name)
    assert mismatched == {
        RECOVERY.format(n).rsplit("/", 1)[1] for n in (
            "ddl_in_transaction", "orphan_begin_start", "orphan_commit", "orphan_rollback",
            "orphan_xa_commit", "orphan_xa_prepare", "orphan_xa_rollback", "orphan_xid")}


# ---- XA ----

def test_orphan_xa_prepare(corpus: Path) -> None:
    """XA_PREPARE ends the prepare group (here the XA START..XA END part was cut away)."""
    [t] = groups(corpus, RECOVERY.format("orphan_xa_prepare"))
    assert t.kind == "xa-prepare" and not t.truncated
    assert shape(t) == ["GTID_LOG_EVENT", "XA_PREPARE_LOG_EVENT"]


@pytest.mark.parametrize("name, kinds", [
    ("duplicate_xid_xa_commit", ["dml", "xa-prepare", "xa-commit", "xa-commit"]),
    ("duplicate_xid_xa_rollback", ["dml", "xa-prepare", "xa-commit", "xa-rollback"]),
    ("malformed_xid_xa_commit", ["dml", "xa-prepare", "xa-commit"]),
    ("malformed_xid_xa_rollback", ["dml", "xa-prepare", "xa-rollback"]),
    ("orphan_xa_commit", ["dml", "dml", "xa-commit"]),
    ("orphan_xa_rollback", ["dml", "dml", "xa-rollback"]),
])
def test_xa_groups(corpus: Path, name: str, kinds: list[str]) -> None:
    """XA PREPARE and XA COMMIT/ROLLBACK are separate groups, each with its own GTID."""
    trx = groups(corpus, RECOVERY.format(name))
    assert [t.kind for t in trx] == kinds
    assert len({t.gtid for t in trx}) == len(trx) and None not in {t.gtid for t in trx}
    for t in trx:
        if t.kind == "xa-prepare":
            assert shape(t)[1] == "XA" and shape(t)[-2:] == ["XA", "XA_PREPARE_LOG_EVENT"]
        if t.kind in ("xa-commit", "xa-rollback"):
            assert shape(t) == ["GTID_LOG_EVENT", "XA"] and not t.truncated
    if name.startswith("orphan"):
        # XA START .. XA END with its XA_PREPARE cut away: truncated, not merged
        cut = trx[1]
        assert cut.truncated and shape(cut) == ["GTID_LOG_EVENT", "XA", "TABLE_MAP_EVENT",
                                                "WRITE_ROWS_EVENT", "XA"]


# ---- DDL and truncated groups ----

def test_ddl_group_and_truncated_group(corpus: Path) -> None:
    """GTID BEGIN ... (no end) GTID DDL: the first is truncated, the DDL its own group."""
    trx = groups(corpus, RECOVERY.format("ddl_in_transaction"))
    assert [(t.kind, t.truncated, t.num_events) for t in trx] == \
        [("dml", True, 4), ("ddl", False, 2), ("dml", False, 5)]
    assert shape(trx[1]) == ["GTID_LOG_EVENT", "CREATE"]
    assert [t.sequence_number for t in trx] == [1, 2, 3]


def test_truncated_group_not_merged(corpus: Path) -> None:
    """GTID BEGIN rows... GTID XA...: the first group is reported truncated, on its own."""
    trx = groups(corpus, RECOVERY.format("orphan_begin_start"))
    assert [(t.kind, t.truncated) for t in trx] == [("dml", True), ("xa-prepare", False)]
    assert shape(trx[0]) == ["GTID_LOG_EVENT", "BEGIN", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT",
                             "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT"]
    assert trx[0].end_offset == trx[1].start.offset
    events = read_all(corpus / RECOVERY.format("orphan_begin_start")).events
    assert sum(t.num_events for t in trx) == len(events) - 2     # all but FDE, Previous_gtids


@pytest.mark.parametrize("name, query, kind", [
    ("orphan_commit", "COMMIT", "dml"), ("orphan_rollback", "ROLLBACK", "rollback")])
def test_orphan_end_statement(corpus: Path, name: str, query: str, kind: str) -> None:
    """GTID + a lone COMMIT/ROLLBACK (its BEGIN cut away) is still one complete group."""
    trx = groups(corpus, RECOVERY.format(name))
    assert [t.kind for t in trx] == ["ddl", kind]
    assert shape(trx[1]) == ["GTID_LOG_EVENT", query] and not trx[1].truncated


@pytest.mark.corpus_files("path", "mysql/*/*", select=is_normal)
def test_groups_partition_the_events(path: Path) -> None:
    """Every grouped event is in exactly one group; groups never overlap; DDL is GTID+Query."""
    events = read_all(path).events
    trx = list(group_transactions(iter(events), keep_events=True))
    keys = [(e.pos.offset, -1 if e.pos.payload_offset is None else e.pos.payload_offset)
            for t in trx for e in t.events]
    assert all(a < b for a, b in zip(keys, keys[1:]))      # file order, each event once
    for a, b in zip(trx, trx[1:]):
        assert a.end_offset <= b.start.offset
    for t in trx:
        assert t.num_events == len(t.events) and t.start == t.events[0].pos
        # end_offset is a file offset: the end of the last event *in the file*, i.e. of the
        # Transaction_payload event, not of its last inner event (regression: it was 274+27)
        outer = [e for e in t.events if e.pos.payload_offset is None]
        assert t.end_offset == outer[-1].pos.offset + outer[-1].event_size
        assert t.size == sum(e.event_size for e in outer)
        if t.kind == "ddl" and t.gtid is not None:
            assert len(t.events) == 2 and t.events[1].type_code in (
                T.QUERY_EVENT, T.QUERY_COMPRESSED_EVENT)


@pytest.mark.corpus_files("path", "mysql/*/*", select=is_normal)
def test_without_tables_only_the_tables_differ(path: Path) -> None:
    """``count_tables=False`` (``stats --clock-only``): the same transactions, field by
    field, with ``tables`` and ``rows_events`` left empty."""
    _only_tables_differ(read_all(path).events)


@pytest.mark.corpus_files("path", "mariadb/small/mysql-bin.0*", "mariadb/rotation/mysql-bin.0*")
def test_without_tables_only_the_tables_differ_mariadb(path: Path) -> None:
    _only_tables_differ(tuple(read_events(path)))


def _only_tables_differ(events: tuple[Event, ...]) -> None:
    import dataclasses
    full = list(group_transactions(iter(events)))
    bare = list(group_transactions(iter(events), count_tables=False))
    assert [dataclasses.replace(t, tables=(), rows_events=()) for t in full] == bare
    assert all(not t.tables and not t.rows_events for t in bare)
    with pytest.raises(ValueError):
        next(group_transactions(iter(events), count_rows=True, count_tables=False))


# ---- MariaDB ----

def test_mariadb_group_shapes(corpus: Path) -> None:
    """No BEGIN: the GTID opens the group; FL_STANDALONE groups are GTID + one Query."""
    path = corpus / "mariadb/small/mysql-bin.000001"
    trx = list(read_transactions(path, keep_events=True))
    by_kind: dict[str, list[Transaction]] = {}
    for t in trx:
        by_kind.setdefault(t.kind, []).append(t)
        assert t.events[0].type_code == T.MARIADB_GTID_EVENT and not t.truncated
        assert t.gtid == f"0-1-{t.events[0].body.seq_no}"  # type: ignore[union-attr]
        assert not any(e.type_code == T.MARIADB_GTID_EVENT for e in t.events[1:])
    for t in by_kind["ddl"]:
        assert t.maria_flags is not None and t.maria_flags & MARIA_FL_STANDALONE
        assert t.maria_flags & MARIA_FL_DDL and len(t.events) == 2
    for t in by_kind["xa-prepare"]:
        assert shape(t)[-2:] == ["XA", "XA_PREPARE_LOG_EVENT"]
        assert t.maria_flags is not None and t.maria_flags & 0x40       # FL_PREPARED_XA
    for t in by_kind["xa-commit"] + by_kind["xa-rollback"]:
        assert shape(t) == ["MARIADB_GTID_EVENT", "XA"]
        assert t.maria_flags is not None and t.maria_flags & 0x81 == 0x81  # STANDALONE|COMPLETED
    ends = {shape(t)[-1] for t in by_kind["dml"]}
    assert ends == {"XID_EVENT", "COMMIT"}              # InnoDB / MyISAM
    myisam = [t for t in by_kind["dml"] if shape(t)[-1] == "COMMIT"]
    assert myisam and all(not t.maria_flags & 0x04 for t in myisam)  # type: ignore[operator]


def test_mariadb_rmc_file(corpus: Path) -> None:
    trx = groups(corpus, "mysql/rmc/test-data__binlogs__mariadb-bin.000001")
    assert [(t.kind, t.truncated) for t in trx] == [("dml", False)] * 2
    assert all(t.gtid and t.gtid.startswith("0-1-") and t.last_committed is None for t in trx)
    assert all(shape(t) == ["MARIADB_GTID_EVENT", "ANNOTATE_ROWS_EVENT", "TABLE_MAP_EVENT",
                            "WRITE_ROWS_EVENT_V1", "XID_EVENT"] for t in trx)


# ---- GTID-less logs (5.0 / 5.1) ----

def test_gtidless_begin_commit_groups(corpus: Path) -> None:
    """5.0: BEGIN .. XID / COMMIT / ROLLBACK groups; a statement outside is a group of its own."""
    trx = groups(corpus, MYSQL80 + "binlog_transaction.000001")
    assert [t.kind for t in trx] == ["ddl", "ddl", "dml", "ddl", "ddl", "rollback", "ddl", "ddl",
                                     "dml"]
    assert all(t.gtid is None and t.last_committed is None and not t.truncated for t in trx)
    assert shape(trx[2]) == ["BEGIN", "INSERT", "INSERT", "XID_EVENT"]
    assert shape(trx[5]) == ["BEGIN", "INSERT", "INSERT", "ROLLBACK"]
    assert shape(trx[8]) == ["BEGIN", "INSERT", "INSERT", "COMMIT"]
    assert all(len(t.events) == 1 for t in trx if t.kind == "ddl")


def test_savepoint_rollback_to_does_not_end(corpus: Path) -> None:
    """5.1: ROLLBACK TO <savepoint> stays inside the group; XID ends it."""
    [t] = groups(corpus, MYSQL80 + "binlog_savepoint.000001")
    assert t.kind == "dml" and not t.truncated and t.num_events == 9
    assert shape(t)[0] == "BEGIN" and "ROLLBACK" in shape(t) and shape(t)[-1] == "XID_EVENT"


def test_gtidless_row_group(corpus: Path) -> None:
    """5.1 row format: BEGIN, Table_map, rows, XID."""
    [t] = groups(corpus, "mysql/canal/parse__src__test__resources__binlog__mysql-bin.000002")
    assert shape(t) == ["BEGIN", "TABLE_MAP_EVENT", "UPDATE_ROWS_EVENT_V1", "XID_EVENT"]
    assert t.tables and dict(t.rows_events) == {t.tables[0]: 1}


def test_incident_is_its_own_group(corpus: Path) -> None:
    [t] = groups(corpus, MYSQL80 + "bug40482-bin.000001")
    assert t.kind == "incident" and shape(t) == ["INCIDENT_EVENT"]
