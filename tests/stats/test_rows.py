"""``stats`` rows per table and kind, held to independent oracles.

The expected rows are counted here from the general reader's fully decoded events
(``fast=False``: construct's decoders) and :func:`repltool.binlog.rows.iter_row_changes`,
and from ``mariadb-binlog -v``'s ``### INSERT/UPDATE/DELETE`` lines; each engine's fast
path (the compiled core, the fused Python scan) and the general path must give them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from repltool import stats as S
from repltool.binlog import ReadOptions, engine, read_events
from repltool.binlog.coltypes import decode_table_map
from repltool.binlog.events import RowsBody, TableMapBody
from repltool.binlog.rows import ROW_KINDS, iter_row_changes
from repltool.binlog.transactions import group_transactions
from repltool.errors import ReplToolError
from repltool.stats import compute_stats, stats_to_dict

SETS = ["mariadb/small/mysql-bin.000001", "mariadb/rotation/mysql-bin.0*",
        "mariadb/relay/replica-relay/relay-bin.0000*", "mariadb/compressed/*bin.0*",
        "mariadb/serial/mysql-bin.0*", "mysql/shyiko/*", "mysql/canal/*",
        "mysql/mysql80/*row*", "mysql/pbs/*"]
_KIND = {"insert": "inserted", "update": "updated", "delete": "deleted"}


def _paths(corpus: Path, pattern: str) -> list[Path]:
    return sorted(corpus.glob(pattern))


def _expected(paths: list[Path]) -> dict[str, dict[str, int]]:
    """Rows by table and kind over the whole read, from decoded events; a Rows event
    the decoder rejects or whose table is unknown counts as not walked."""
    defs: dict[int, object] = {}
    out: dict[str, Counter[str]] = {}
    names: dict[int, str] = {}

    def tap(ev, _opens):  # type: ignore[no-untyped-def]
        body = ev.body
        if isinstance(body, TableMapBody):
            names[body.table_id] = f"{body.db}.{body.table}"
            try:
                defs[body.table_id] = decode_table_map(body)
            except ReplToolError:
                defs[body.table_id] = None
        elif ev.type_code in ROW_KINDS:
            tid = body.table_id if isinstance(body, RowsBody) else \
                int.from_bytes(ev.raw[19:25], "little")
            c = out.setdefault(names.get(tid, "?"), Counter())
            td = defs.get(tid)
            try:
                if td is None or not isinstance(body, RowsBody):
                    raise ValueError("not walked")
                rows = list(iter_row_changes(td, body, ev.type_code))
            except (ReplToolError, ValueError):
                c["unwalked_events"] += 1
                return
            c[_KIND[ROW_KINDS[ev.type_code]]] += len(rows)

    for _ in group_transactions(read_events(paths, ReadOptions(fast=False)), tap=tap):
        pass
    return {t: {k: c[k] for k in ("inserted", "updated", "deleted", "unwalked_events")}
            for t, c in out.items()}


def _engine(monkeypatch, which: str, paths: list[Path], **kw) -> dict:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(engine.ENV, which)
    return stats_to_dict(compute_stats(paths, **kw))


@pytest.mark.parametrize("pattern", SETS)
def test_rows_equal_the_decoded_rows_in_every_engine(monkeypatch, corpus: Path,  # type: ignore[no-untyped-def]
                                                     pattern: str) -> None:
    paths = _paths(corpus, pattern)
    assert paths, pattern
    usable = []
    for p in paths:                 # damaged files are read with --keep-going below
        try:
            compute_stats([p])
            usable.append(p)
        except ReplToolError:
            pass
    if usable:
        want = _expected(usable)
        outs = [_engine(monkeypatch, which, usable, **kw)
                for which in ("compiled", "python") for kw in ({}, {"keep_going": True})]
        assert all(o == outs[0] for o in outs[1:])          # per file and in total
        assert outs[0]["total"]["rows"] == want
        assert sum(sum(f["rows"][t]["inserted"] for t in f["rows"])
                   for f in outs[0]["files"]) == sum(c["inserted"] for c in want.values())
    for p in set(paths) - set(usable):     # damaged: --keep-going, the same in both
        damaged = []
        for which in ("compiled", "python"):
            try:
                damaged.append(_engine(monkeypatch, which, [p], keep_going=True))
            except ReplToolError as exc:
                damaged.append(str(exc))
        assert damaged[0] == damaged[1]


def _mariadb_binlog(paths: list[Path]) -> Counter[tuple[str, str]]:
    out = subprocess.run([shutil.which("mariadb-binlog") or "mariadb-binlog", "-v",
                          *map(str, paths)], capture_output=True, text=True,
                         errors="replace", check=True).stdout
    got: Counter[tuple[str, str]] = Counter()
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("### ") and parts[1] in ("INSERT", "UPDATE", "DELETE"):
            got[(parts[-1].replace("`", ""), parts[1])] += 1
    return got


@pytest.mark.parametrize("pattern", ["mariadb/small/mysql-bin.000001",
                                     "mariadb/rotation/mysql-bin.0*",
                                     "mariadb/compressed/*bin.0*", "mysql/shyiko/*sakila"])
def test_rows_equal_mariadb_binlog(monkeypatch, corpus: Path, pattern: str) -> None:  # type: ignore[no-untyped-def]
    """``mariadb-binlog -v`` prints one ``### INSERT/UPDATE/DELETE`` per row."""
    paths = _paths(corpus, pattern)
    want = _mariadb_binlog(paths)
    assert want
    for which in ("compiled", "python"):
        rows = _engine(monkeypatch, which, paths)["total"]["rows"]
        got: Counter[tuple[str, str]] = Counter()
        for t, c in rows.items():
            assert c["unwalked_events"] == 0
            for k, verb in (("inserted", "INSERT"), ("updated", "UPDATE"),
                            ("deleted", "DELETE")):
                if c[k]:
                    got[(t, verb)] += c[k]
        assert got == want, which


def test_the_fast_paths_count_rows(monkeypatch, tmp_path: Path, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """The compiled core (MariaDB and MySQL 8.0 logs) counts the rows itself: the
    general reader is not called; the pure-Python engine's figures (the general
    reader's, the one grouper's) are the same."""
    from repltool.binlog import _core
    from repltool.synth import SynthOptions, generate
    r = generate(SynthOptions(out=tmp_path / "s", transactions=300, ground_truth=False,
                              seed=7, server_format="8.0"))
    mysql = [Path(f) for f in r.files]
    maria = _paths(corpus, "mariadb/rotation/mysql-bin.0*")
    want = {"mysql": _expected(mysql), "maria": _expected(maria)}
    assert any(c["updated"] for c in want["mysql"].values())
    assert any(c["deleted"] for c in want["maria"].values())

    def refuse(*_a, **_k):  # type: ignore[no-untyped-def]
        raise AssertionError("the general reader ran")

    from repltool.binlog.rowcount import RowCounter
    hooked = []
    core_rows = RowCounter.core_rows

    def counted(self, tc, data):  # type: ignore[no-untyped-def]
        hooked.append(tc)
        return core_rows(self, tc, data)

    monkeypatch.setattr(RowCounter, "core_rows", counted)
    general = S._accumulate_general
    ran = []

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        ran.append(1)
        return general(*a, **k)

    for which, name in (("compiled", "maria"), ("compiled", "mysql"), ("python", "mysql")):
        before = _core.events_walked()
        hooked.clear()
        monkeypatch.setattr(S, "_accumulate_general", refuse if which == "compiled" else spy)
        result = _engine(monkeypatch, which, mysql if name == "mysql" else maria)
        assert bool(ran) == (which == "python")
        assert result["total"]["rows"] == want[name], (which, name)
        assert (_core.events_walked() > before) == (which == "compiled")
        if (which, name) == ("compiled", "mysql"):
            # the core walks the Rows events of a layout it was given programs for
            # itself: Python sees only the first of each layout
            events = sum(n for t, n in result["total"]["event_types"].items() if "ROWS" in t)
            assert 0 < len(hooked) < events, (len(hooked), events)


def test_a_rows_event_without_its_table_map_is_not_counted(monkeypatch, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """A relay log that starts inside a transaction: its first Rows event's Table_map is
    in the previous file.  Read alone it is counted as not walked; read with that file,
    its rows are counted."""
    alone = [corpus / "mariadb/relay/replica-relay/relay-bin.000006"]
    both = [corpus / "mariadb/relay/replica-relay/relay-bin.000005", *alone]
    for which in ("compiled", "python"):
        rows = _engine(monkeypatch, which, alone)["total"]["rows"]
        assert rows["?"] == dict(inserted=0, updated=0, deleted=0, unwalked_events=1)
        together = _engine(monkeypatch, which, both)
        assert "?" not in together["total"]["rows"]
        assert sum(c["unwalked_events"] for c in together["total"]["rows"].values()) == 0
