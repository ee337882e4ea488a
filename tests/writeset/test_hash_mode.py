"""The compiled dispatch's hash mode (:func:`repltool.writeset.read_writeset_hashes`,
``repltool certify``) against the ``WriteKey``-building path.

In hash mode ``RowsShape`` appends each key's XXH64 hash instead of its ``WriteKey``:
built in the core for keys of integer columns (unique keys and foreign keys, a NULL
part of a foreign key left out of the key string) and for the ASCII values of
one-part VARCHAR keys, else ``.hash`` of the entries the Python miss builds.  The
write set's ``keys`` describe the hashes only when read: the transaction's events
keyed again by the object path.  Here:

* the core's hash of an integer key (NULL parts included) equals XXH64 of the key
  string :func:`repltool.writeset.plan.fk_entry` / ``key_entries`` build, and of a
  string key the hash the Python miss gives (hypothesis);
* on every MySQL corpus file, the MariaDB sets (with their schemas) and synthetic logs
  of every shape, transaction by transaction: the hash mode's hashes equal
  ``[k.hash for k in keys]`` of :func:`repltool.writeset.read_writesets`, every flag is
  equal, and the described key at each index equals the full path's key - with
  MySQL's write-set limit dropping write sets past a small history, and without;
* each comparison asserts the hash mode ran (``hash_counts``) and that the core
  hashed keys itself (``core_hashed_keys``).

These tests need the compiled engine: they fail, not skip, without it.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest
import xxhash
from hypothesis import HealthCheck, given, settings, strategies as st

from repltool.binlog import engine
from repltool.errors import ReplToolError
from repltool.writeset import HashedWriteset, load_schema, read_writeset_hashes, read_writesets
from repltool.writeset.fused import hash_counts
from repltool.writeset.jsonl import key_head
from repltool.writeset.model import KEY_SEP, key_prefix
from repltool.writeset.plan import join_key

from .test_core_dispatch import _ascii_text, email_key, general_ci_keys  # noqa: F401 (fixtures)
from .test_corpus import SETS


# ---- the core's hashes against the key strings of the general path ----

_part = st.integers(1, 8).flatmap(lambda w: st.tuples(
    st.just(w), st.booleans(), st.sampled_from([0, 0x80]),
    st.one_of(st.none(), st.binary(min_size=w, max_size=w))))


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_part, min_size=1, max_size=4))
def test_integer_key_hash(core, parts: list[tuple[int, bool, int, bytes | None]]  # type: ignore[no-untyped-def]
                          ) -> None:
    """Per non-NULL part the big-endian value with the top byte XOR ``top``, ``½width``;
    NULL parts left out (``fk_entry``); all NULL: the prefix alone."""
    prefix = key_prefix("fk_parent", "shop", "orders")
    head, end = key_head("shop", "orders", "fk_parent", True)
    spec = (prefix, head, end,
            tuple((w, signed, top, KEY_SEP + str(w).encode()) for w, signed, top, _ in parts))
    sks = []
    for w, _, top, raw in parts:
        if raw is None:
            continue
        sk = bytearray(raw[::-1])
        sk[0] ^= top
        sks.append(bytes(sk))
    assert core.int_key_hash([raw for *_, raw in parts], spec) == \
        xxhash.xxh64_intdigest(join_key(prefix, sks))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_ascii_text)
def test_string_key_hashes(core, email_key, general_ci_keys, value: str  # type: ignore[no-untyped-def]  # noqa: F811
                           ) -> None:
    """ASCII values: the core's hashes equal those of the Python miss's entries (the
    general path's ``key_entries``), for the 0900 weights and the ``_unicode`` rule."""
    data = value.encode("ascii")
    for miss, spec in [email_key, *general_ci_keys]:
        raw = len(data).to_bytes(spec[3], "little") + data
        assert core.str_entry_hashes(raw, spec) == [json.loads(t)["hash"] for t in miss(raw)]


def test_string_key_hashes_leave_non_ascii_to_python(core, email_key) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    _, spec = email_key
    data = "jürgen@example.org".encode()
    raw = len(data).to_bytes(spec[3], "little") + data
    assert core.str_entry_hashes(raw, spec) is None
    with pytest.raises(ValueError):         # a length that does not fill the bytes
        core.str_entry_hashes(raw + b"x", spec)


# ---- whole reads: hash mode against the WriteKey path ----

_FLAGS = ("ddl", "empty", "missing_key_tables", "fk_parent_tables", "limit_reached",
          "no_fk_checks", "missing_key_reasons")


def _pairs(read: Any, files: list[Path], schema: Any, kw: dict[str, Any]
           ) -> tuple[list[Any], str | None]:
    out: list[Any] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for pair in read([str(f) for f in files], schema, **kw):
                out.append(pair)
    except ReplToolError as exc:
        return out, f"{type(exc).__name__}: {exc}"
    return out, None


def compare(files: list[Path], schema_path: Path | None, **kw: Any) -> tuple[int, int, int]:
    """Both reads of ``files``, pair by pair; ``(transactions in hash mode, keys the
    core hashed itself, keys described and compared)``."""
    core = engine.compiled_core()
    assert core is not None, "the compiled core is not built"
    # one schema object per read: a schema remembers the warnings it gave
    full, full_error = _pairs(read_writesets, files,
                              load_schema(schema_path) if schema_path else None, kw)
    (hashed_before, described_before, _), core_before = hash_counts(), core.core_hashed_keys()
    hashed, hashed_error = _pairs(read_writeset_hashes, files,
                                  load_schema(schema_path) if schema_path else None, kw)
    hashed_after, core_after = hash_counts()[0], core.core_hashed_keys()
    assert hashed_error == full_error
    assert len(hashed) == len(full)
    in_hash_mode = compared = 0
    rng = random.Random(len(full))
    for (trx, ws), (htrx, hws) in zip(full, hashed):
        assert htrx == trx
        assert list(hws.hashes) == [k.hash for k in ws.keys] if ws.keys else \
            list(hws.hashes) == list(ws.hashes)
        for flag in _FLAGS:
            assert getattr(hws, flag) == getattr(ws, flag), (flag, trx.start)
        if type(hws) is not HashedWriteset:
            assert hws == ws            # the general reader's pair, as read_writesets'
            continue
        in_hash_mode += 1
        assert len(hws.keys) == len(ws.keys)
        if ws.keys:
            # the key at each index, read in a random order (the first read describes all)
            order = list(range(len(ws.keys)))
            rng.shuffle(order)
            for i in order:
                assert hws.keys[i] == ws.keys[i], (trx.start, i)
            compared += len(order)
    assert hashed_after - hashed_before == in_hash_mode
    assert hash_counts()[1] - described_before == sum(
        1 for _, hws in hashed if type(hws) is HashedWriteset and len(hws.keys))
    return in_hash_mode, core_after - core_before, compared


def _is_binlog(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) in (b"\xfebin", b"\xfdbin")


@pytest.mark.parametrize("name", list(SETS))
@pytest.mark.parametrize("limit", [None, 3], ids=["history", "dropped"])
def test_mariadb_sets(corpus: Path, name: str, limit: int | None) -> None:
    pattern, _, schema = SETS[name]
    root = corpus / "mariadb"
    files = sorted(root.glob(pattern))
    kw = {} if limit is None else {"history_size": limit, "drop_past_limit": True}
    in_hash, in_core, described = compare(files, root / schema / "schema.sql", **kw)
    if name == "compressed":    # handed to the general reader at its first compressed event
        assert in_hash > 0
        return
    assert in_hash > 100 and in_core > 100, (in_hash, in_core)
    if limit is None:
        assert described > 100


def test_relay_files_read_alone(corpus: Path) -> None:
    """Each MariaDB relay-set file read alone: transactions whose Rows events use a
    table id an earlier transaction of the file mapped (their descriptions keyed with a
    snapshot of those table maps) are described equal to the full path's keys."""
    root = corpus / "mariadb"
    _, _, borrowed_before = hash_counts()
    described = 0
    for name in ("relay-replica-relay", "relay-primary", "relay-replica-binlog"):
        pattern, _, schema = SETS[name]
        for path in sorted(root.glob(pattern)):
            described += compare([path], root / schema / "schema.sql")[2]
    assert described > 1000 and hash_counts()[2] > borrowed_before


def test_mysql_corpus(corpus: Path) -> None:
    """Every MySQL corpus file (no schema: the Table_maps' primary keys)."""
    files = sorted(p for p in corpus.glob("mysql/*/*") if p.is_file() and _is_binlog(p))
    assert len(files) > 50
    totals = [0, 0, 0]
    for path in files:
        for kw in ({}, {"history_size": 2, "drop_past_limit": True}):
            got = compare([path], None, **kw)
            totals = [a + b for a, b in zip(totals, got)]
    # without a schema only the few files whose Table_maps carry a primary key have keys
    assert totals[0] > 1000 and totals[1] > 0 and totals[2] > 0, totals


@pytest.mark.parametrize("name", ["uniform", "zipf", "hot", "relay", "zstd", "tagged",
                                  "mysql57", "full-metadata", "anonymous"])
def test_synth_logs(synth_logs: dict, name: str) -> None:
    files, schema = synth_logs[name]
    in_hash, in_core, described = compare(files, schema)
    if name != "zstd":      # Transaction_payload: the general reader's pairs
        assert in_hash > 250 and in_core > 500 and described > 500, (in_hash, in_core)
    small = compare(files, schema, history_size=4, drop_past_limit=True)
    kept = compare(files, schema, history_size=4)      # past the limit, every key kept
    if name != "zstd":
        assert small[0] > 250 and kept[0] > 250


def test_live_mariadb_shop_log_string_foreign_keys(tmp_path: Path) -> None:
    """A log a real MariaDB server writes now for the bench's shop workload
    (``bench/make_maria_log.py``: a VARCHAR primary key, a UNIQUE VARCHAR key under
    utf8mb4_general_ci, a VARCHAR foreign key ``order_lines.sku``, integer and
    composite keys and foreign keys): equal to the ``WriteKey`` path, and every key
    (its values are ASCII) hashed by the core itself - the string foreign key
    included."""
    import importlib.util
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("make_maria_log",
                                                  root / "bench" / "make_maria_log.py")
    assert spec is not None and spec.loader is not None
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    out = tmp_path / "maria"
    maker.build(out, size_mb=2, sessions=2)
    files = sorted(out.glob("mysql-bin.0*"))
    full, _ = _pairs(read_writesets, files, load_schema(out / "schema.sql"), {})
    string_fk = sum(1 for _, ws in full for k in ws.keys
                    if k.parent and k.table == "items")
    keys = sum(len(ws.keys) for _, ws in full)
    in_hash, in_core, described = compare(files, out / "schema.sql")
    assert string_fk > 1000 and in_hash > 100 and described == keys
    assert in_core == keys, (in_core, keys)
