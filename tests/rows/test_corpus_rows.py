"""Row decoding over the real corpus.

* every Rows event of every readable file decodes (MySQL files one by one, each
  MariaDB set as one sequence, since relay logs carry Table_maps across files);
* MariaDB sets: what every GTID wrote (ground-truth.json: PK, unique and FK
  values, pk_before, row counts of key-less tables, and the writeset-style
  ``keys``/``fk_keys``) equals what the decoded images say, with 0 mismatches;
* MySQL files: our ``-vv`` rendering equals the ``###`` lines mariadb-binlog
  printed (corpus/mariadb-binlog/*.txt), value by value.
"""

from __future__ import annotations

import collections
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from repltool.binlog import ReadOptions, read_events
from repltool.binlog.coltypes import TableDef, decode_table_map
from repltool.binlog.events import MariaGtidBody, RowsBody, TableMapBody
from repltool.binlog.rows import RowChange, iter_row_changes
from repltool.cli.render_rows import RowsRenderer
from repltool.errors import ReplToolError


MARIADB_SETS = {
    "small": ("mariadb/small", "mysql-bin.0*"),
    "serial": ("mariadb/serial", "mysql-bin.0*"),
    "rotation": ("mariadb/rotation", "mysql-bin.0*"),
    "compressed": ("mariadb/compressed", "mysql-bin.0*"),
    "relay-primary": ("mariadb/relay", "primary/mysql-bin.0*"),
    "relay-replica-binlog": ("mariadb/relay", "replica-binlog/mysql-bin.0*"),
    "relay-replica-relay": ("mariadb/relay", "replica-relay/relay-bin.0*"),
}
NO_CHECKSUM = ReadOptions(verify_checksum=False)


# ---- every Rows event of every MySQL file ----

@pytest.mark.corpus_files("path", "mysql/*/*")
def test_every_rows_event_of_a_mysql_file_decodes(path: Path) -> None:
    """Files the reader refuses (not a binlog, encrypted, truncated) are read up to
    where it stops; every Rows event before that must decode."""
    tables: dict[int, TableDef] = {}
    for ev in _readable_events(path):
        body = ev.body
        if isinstance(body, TableMapBody):
            tables[body.table_id] = decode_table_map(body, pos=ev.pos)
        elif isinstance(body, RowsBody):
            assert body.table_id in tables, f"{ev.pos}: no Table_map"
            for _ in iter_row_changes(tables[body.table_id], body, ev.type_code, pos=ev.pos):
                pass


def _readable_events(path: Path) -> list[Any]:
    """The events the reader yields before it gives up on a file (if it does)."""
    out = []
    try:
        for ev in read_events(path, NO_CHECKSUM):
            out.append(ev)
    except ReplToolError:
        pass
    return out


# ---- MariaDB sets: one pass per set, summarised for the ground truth ----

@dataclass
class SetScan:
    rows_events: int = 0
    rows: int = 0
    per_gtid: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    keys: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    fk_keys: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))


@functools.lru_cache(maxsize=None)
def scan_set(root: Path, name: str) -> tuple[SetScan, dict[str, Any]]:
    base, pattern = MARIADB_SETS[name]
    files = sorted((root / base).glob(pattern))
    assert files, f"{base}/{pattern} matched nothing"
    gt = json.loads((root / base / "ground-truth.json").read_text())
    schema = gt["meta"]["schema"]
    scan = SetScan()
    tables: dict[int, TableDef] = {}
    gtid = None
    for ev in read_events(files, NO_CHECKSUM):
        body = ev.body
        if isinstance(body, MariaGtidBody):
            gtid = f"{body.domain_id}-{ev.server_id}-{body.seq_no}"
            scan.per_gtid.setdefault(gtid, [])
        elif isinstance(body, TableMapBody):
            tables[body.table_id] = decode_table_map(body, pos=ev.pos)
        elif isinstance(body, RowsBody):
            assert gtid is not None
            scan.rows_events += 1
            table = tables[body.table_id]
            for ch in iter_row_changes(table, body, ev.type_code, pos=ev.pos):
                scan.rows += 1
                _record(scan, gtid, table, ch, schema.get(f"{table.db}.{table.table}", {}))
    return scan, gt


def _record(scan: SetScan, gtid: str, table: TableDef, ch: RowChange,
            schema: dict[str, Any]) -> None:
    """The ground truth's view of one row change, from the decoded images."""
    name = f"{table.db}.{table.table}"
    pk = [table.columns[i].name for i, _ in table.primary_key] if table.primary_key else None
    uniques = schema.get("unique", {})
    fks = schema.get("fk", {})
    extra = list(dict.fromkeys([c for cols in uniques.values() for c in cols]
                               + [c for fk in fks.values() for c in fk["cols"]]))
    before = ch.before.as_dict() if ch.before else None
    after = ch.after.as_dict() if ch.after else None
    img = after if after is not None else before
    entry: dict[str, Any] = {"table": name, "op": ch.kind}
    if pk:
        entry["pk"] = {c: img[c] for c in pk}
        if before is not None and after is not None:
            pkb = {c: before[c] for c in pk}
            if pkb != entry["pk"]:
                entry["pk_before"] = pkb
    else:
        entry["pk"], entry["count"] = None, 1
    if extra:
        if before is not None:
            entry["before"] = {c: before[c] for c in extra}
        if after is not None:
            entry["after"] = {c: after[c] for c in extra}
    scan.per_gtid[gtid].append(entry)
    for d in (before, after):
        if d is None:
            continue
        indexes = ([("PRIMARY", pk)] if pk else []) + list(uniques.items())
        for iname, cols in indexes:
            vals = [d[c] for c in cols]
            if None not in vals:
                scan.keys[gtid].add(f"{name}.{iname}={json.dumps(vals, ensure_ascii=False)}")
        for fk in fks.values():
            vals = [d[c] for c in fk["cols"]]
            if None not in vals:
                scan.fk_keys[gtid].add(f"{table.db}.{fk['ref_table']}.{fk['ref_index']}="
                                       f"{json.dumps(vals, ensure_ascii=False)}")


def _canon(rows: list[dict[str, Any]]) -> tuple[list[str], dict[tuple[str, str], int]]:
    keyed, counts = [], collections.Counter()
    for r in rows:
        if r.get("pk") is None:
            counts[(r["table"], r["op"])] += r.get("count", 1)
        else:
            keyed.append(json.dumps(r, sort_keys=True, ensure_ascii=False))
    return sorted(keyed), dict(counts)


@pytest.mark.parametrize("name", list(MARIADB_SETS))
def test_mariadb_set_matches_ground_truth(name: str, corpus: Path) -> None:
    scan, gt = scan_set(corpus, name)
    expected = {t["gtid"]: t for t in gt["transactions"]}
    assert set(scan.per_gtid) == set(expected)
    row_mm = [g for g, t in expected.items() if _canon(scan.per_gtid[g]) != _canon(t["rows"])]
    key_mm = [g for g, t in expected.items() if scan.keys[g] != set(t["keys"])]
    fk_mm = [g for g, t in expected.items() if scan.fk_keys[g] != set(t["fk_keys"])]
    print(f"{name}: {len(expected)} GTIDs, {scan.rows_events} rows events, {scan.rows} rows, "
          f"mismatches rows/keys/fk_keys = {len(row_mm)}/{len(key_mm)}/{len(fk_mm)}")
    assert scan.rows > 1000
    assert (row_mm[:5], key_mm[:5], fk_mm[:5]) == ([], [], [])


# ---- mariadb-binlog -vv text of MySQL files ----

_INT_PAIR = re.compile(r"^(-?\d+) \((\d+)\)$")


def _shows_rows(txt: Path) -> bool:
    return b"\n### " in txt.read_bytes()


def _value_part(line: str) -> tuple[str, str]:
    value = line.split("=", 1)[1]
    v, _, comment = value.partition(" /* ")
    return v, comment


def _terminal_safe(line: str) -> str:
    """mariadb-binlog's line with repltool's one deliberate difference applied: characters
    a terminal acts on (DEL, C1 and bidi controls) as ``\\xNN`` of their UTF-8 bytes."""
    from repltool.escape import has_controls
    return "".join("".join(f"\\x{b:02x}" for b in c.encode()) if has_controls(c) else c
                   for c in line)


def _lines_match(ours: str, theirs: str) -> bool:
    if ours == theirs:
        return True
    theirs = _terminal_safe(theirs)
    if ours == theirs:
        return True
    if not (ours.startswith("###   ") and theirs.startswith("###   ")):
        return False
    ov, oc = _value_part(ours)
    tv, tc = _value_part(theirs)
    if oc != tc:
        return False
    m = _INT_PAIR.match(tv)       # mariadb-binlog ignores SIGNEDNESS: "-3 (4294967293)"
    return ov == tv or (m is not None and ov in (m.group(1), m.group(2)))


@pytest.mark.corpus_files("txt", "mariadb-binlog/*/*.txt", select=_shows_rows)
def test_rows_text_matches_mariadb_binlog(txt: Path, corpus: Path) -> None:
    """Covers 5.1 (old DATETIME/TIMESTAMP), 5.5-5.7, 8.0 (DATETIME2, DECIMAL, BLOB/TEXT),
    BIT (rmc mysql_type_bit), MINIMAL metadata, invisible columns and MariaDB 10.5."""
    theirs_text = txt.read_bytes().decode("utf-8", "backslashreplace")
    rel = str(txt.relative_to(corpus / "mariadb-binlog"))[:-4]
    theirs = [ln for ln in theirs_text.split("\n") if ln.startswith("### ")]
    renderer = RowsRenderer(2)
    ours: list[str] = []
    try:
        for ev in read_events(corpus / "mysql" / rel, NO_CHECKSUM):
            renderer.observe(ev)
            ours.extend(block_lines(renderer, ev))
    except ReplToolError:
        pass                       # files mariadb-binlog also stops on (GTID_TAGGED ...)
    assert len(ours) >= len(theirs) > 0
    bad = [(o, t) for o, t in zip(ours, theirs) if not _lines_match(o, t)]
    assert bad == []


def block_lines(renderer: RowsRenderer, ev: Any) -> list[str]:
    """The lines of ``dump -v``'s text programs (:meth:`RowsRenderer.text_block`), checked
    against the reference rendering (:meth:`RowsRenderer.text_lines`)."""
    block, _ = renderer.text_block(ev)
    lines = "\n".join(block).split("\n") if block else []
    assert lines == list(renderer.text_lines(ev)), ev.pos
    return lines


# ---- every value of the MariaDB sets against a live mariadb-binlog (when installed) ----

@pytest.mark.parametrize("name", ["serial", "compressed"])
def test_every_value_matches_live_mariadb_binlog(name: str, corpus: Path) -> None:
    """All columns (DECIMAL, DATETIME(6), TIMESTAMP, JSON-as-LONGTEXT, BLOB, ENUM, SET,
    BIT, DOUBLE, utf8mb4 text ...) of every row, as ``mariadb-binlog -vv`` prints them."""
    import shutil
    import subprocess
    exe = shutil.which("mariadb-binlog")
    if exe is None:
        pytest.skip("mariadb-binlog is not installed")
    base, pattern = MARIADB_SETS[name]
    files = sorted((corpus / base).glob(pattern))
    text = subprocess.run([exe, "-vv", "--base64-output=decode-rows", *map(str, files)],
                          capture_output=True, check=True, timeout=120).stdout
    theirs = [ln for ln in text.decode("utf-8", "backslashreplace").split("\n")
              if ln.startswith("### ")]
    renderer = RowsRenderer(2)
    ours: list[str] = []
    for ev in read_events(files, NO_CHECKSUM):
        renderer.observe(ev)
        ours.extend(block_lines(renderer, ev))  # labels differ (names): values compared
    assert len(ours) == len(theirs) > 10000
    bad = [(o, t) for o, t in zip(ours, theirs) if not _lines_match(o, t)]
    assert bad[:5] == [] and not bad
