"""MySQL's write-set limit: a write set that grows past
``binlog_transaction_dependency_history_size`` is dropped, not held.

``Rpl_transaction_write_set_ctx::add_write_set`` (``sql/rpl_transaction_write_set_ctx.cc``)
refuses a hash once the write set holds ``history_size`` entries - unless a component
requires the full write set (Group Replication) - sets
``m_local_has_reached_write_set_limit`` and clears the write set;
``Writeset_trx_dependency_tracker::get_dependency`` (``sql/rpl_trx_tracking.cc``)
then cannot use write sets for the transaction: the commit-order parent stays and the
history is cleared.  repltool's extractor does the same with ``drop_past_limit``
(certify's writeset modes, check), so a transaction of many rows costs the history
size, not its row count, with the results of keeping every key.  The logs are
crafted (``_crafted.keyed_log``): rows of a table whose PRIMARY KEY the Table_map names.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from repltool.binlog import read_events
from repltool.certify import CertifyOptions, Mode, certify
from repltool.certify.report import CertifyRun, drops_past_limit
from repltool.certify.source import to_cert_transactions
from repltool.writeset import READ_OPTIONS, stream_writesets
from repltool.writeset.extract import SPILL_AT
from repltool.writeset.fused import iter_fast_writesets
from repltool.writeset.model import KeyList

from ._crafted import keyed_log

#: the history size of these tests: above SPILL_AT, so the write sets go through the
#: compact store and the limit is checked as they are spilled, not at the end only
H = 2000
assert H > SPILL_AT


def mysql_add_write_set(hashes: list[int], history_size: int) -> tuple[list[int], bool]:
    """``add_write_set`` for each hash, as MySQL 8.0 runs it without Group Replication
    (``is_full_writeset_required`` false): the write set and
    ``m_local_has_reached_write_set_limit`` at commit."""
    write_set: list[int] = []
    reached = False
    for h in hashes:
        if reached:
            continue                            # if (!m_local_has_reached_write_set_limit)
        if len(write_set) >= history_size:      # write_set.size() >= history size
            reached = True
            write_set.clear()                   # clear_write_set(); return false
            continue
        write_set.append(h)                     # write_set.push_back(hash)
    return write_set, reached


def _pairs(path: Path, **kw: object) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(stream_writesets(read_events(str(path), READ_OPTIONS), history_size=H, **kw))


@pytest.mark.parametrize("n", [H - 1, H, H + 1])
def test_extractor_drops_the_write_set_as_mysql_does(corpus: Path, tmp_path: Path,
                                                      n: int) -> None:
    """A transaction of ``n`` keys just below, at and above the limit: kept whole
    (a compact KeyList) without ``drop_past_limit``; with it, MySQL's write set."""
    path = tmp_path / "big.bin"
    path.write_bytes(keyed_log(corpus, [range(n)]))
    ((_, full),) = _pairs(path)
    ((_, dropped),) = _pairs(path, drop_past_limit=True)
    ((_, fast),) = list(iter_fast_writesets([path], history_size=H, drop_past_limit=True))
    assert type(full.keys) is KeyList and len(full.keys) == n
    assert full.limit_reached == (n > H)
    mysql, reached = mysql_add_write_set(list(full.hashes), H)
    for ws in (dropped, fast):
        assert ws.limit_reached == reached == (n > H)
        assert [k.hash for k in ws.keys] == mysql
        assert list(ws.hashes) == list(full.hashes)      # kept for certify's LastWriters
        if reached:
            assert ws.keys == () and len(ws.hashes_only) == n
        else:
            assert ws.keys == full.keys and ws == full
    assert full.keys[n - 1].values == (n - 1,) and full.keys[-1] == list(full.keys)[-1]


@pytest.mark.parametrize("n, expected", [
    # T2 fits the history only below H (1 + n keys): T3 then finds id 0 of T1 and
    # clears the history (1 + n + 1 > H), so T4 waits for T3
    (H - 1, [0, 1, 1, 3]),
    # T2 overflows the history (1 + H > H): used, then the history is cleared
    (H, [0, 1, 2, 2]),
    # T2's write set reached the limit: commit-order parent, history cleared
    (H + 1, [0, 1, 2, 2]),
])
def test_certify_results_are_those_of_the_full_write_set(corpus: Path, tmp_path: Path,
                                                         n: int, expected: list[int]) -> None:
    """T1 writes id 0, T2 ``n`` other ids, T3 id 0 again, T4 one id of T2; the logged
    clocks are serial.  The last_committed values are MySQL's rule worked by hand
    (rpl_trx_tracking.cc: ``exceeds_capacity``, ``can_use_writesets``); certify gives
    them with every key kept and with the write set dropped past the limit, through
    the streamed and the fused readers, and says why T2's parent is what it is."""
    path = tmp_path / "four.bin"
    path.write_bytes(keyed_log(corpus, [range(1), range(100, 100 + n), range(1),
                                        range(100, 101)]))
    options = CertifyOptions(history_size=H)

    def row(r):  # type: ignore[no-untyped-def]
        return r.computed, r.reason, r.detail, r.key_hash, r.raised

    runs = {}
    for drop in (False, True):
        certs = list(to_cert_transactions(_pairs(path, drop_past_limit=drop)))
        runs[drop] = list(certify(certs, Mode.WRITESET, options))
    assert drops_past_limit(None, [str(path)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = [c.result for c in CertifyRun([path], None, options)]
    assert [row(r) for r in runs[False]] == [row(r) for r in runs[True]] \
        == [row(r) for r in fused]
    assert [r.computed[0] for r in fused] == expected
    assert [r.computed[1] for r in fused] == [1, 2, 3, 4]
    big = fused[1]
    assert big.trx.write_set_limit_reached == (n > H) and len(big.trx.writeset) == n
    if n > H:
        assert big.trx.keys == () and big.reason.value == "history-full"
        assert "no usable write set" in big.detail
    else:
        assert len(big.trx.keys) == n
        assert ("history full: cleared" in big.detail) == (n == H)     # exceeds_capacity


def test_only_the_writeset_modes_drop(corpus: Path, tmp_path: Path) -> None:
    """Group Replication requires the full write set (``is_full_writeset_required``):
    certify keeps every key there, and by default for relay logs (whose default mode
    is group-replication); a file it cannot tell keeps every key too."""
    path = tmp_path / "one.bin"
    data = bytearray(keyed_log(corpus, [range(3)]))
    path.write_bytes(data)
    assert drops_past_limit("writeset", [str(path)])
    assert drops_past_limit("writeset-session", [str(path)])
    assert not drops_past_limit("group-replication", [str(path)])
    assert drops_past_limit(None, [str(path)])
    data[4 + 17] |= 0x40                    # LOG_EVENT_RELAY_LOG_F on the FDE
    relay = tmp_path / "relay.bin"
    relay.write_bytes(data)
    assert not drops_past_limit(None, [str(path), str(relay)])
    assert not drops_past_limit(None, [str(tmp_path / "missing.bin")])
    assert not drops_past_limit(None, [])


def test_dump_writesets_prints_every_key(corpus: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``dump --writesets`` keeps every key (no limit there): a transaction of 15,000
    keys - JSON texts joined in chunks by the fused reader, a line of more than
    1 MiB written in pieces - prints the line ``writeset_record`` gives on the general
    path (streamed, the keys a KeyList); past the history size the keys are all printed
    and ``limit_reached`` set."""
    import json
    import subprocess
    import sys

    from repltool.writeset import writeset_record

    path = tmp_path / "wide.bin"
    path.write_bytes(keyed_log(corpus, [range(15_000), range(3)]))
    out = subprocess.run([sys.executable, "-m", "repltool", "dump", "--writesets", str(path)],
                         capture_output=True, check=True).stdout.decode().splitlines()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = list(stream_writesets(read_events(str(path), READ_OPTIONS)))
    assert type(pairs[0][1].keys) is KeyList
    expected = [json.dumps(writeset_record(t, ws), ensure_ascii=False) for t, ws in pairs]
    assert len(out[0]) > 1 << 20 and out == expected
    assert len(json.loads(out[0])["keys"]) == 15_000
    assert json.loads(out[0])["flags"]["limit_reached"] is False
    from repltool.writeset.extract import Acc
    from repltool.writeset.fused import read_writeset_lines
    chunks = []
    join = Acc.spill_texts

    def counted(acc: Acc) -> None:
        chunks.append(len(acc.keys))
        join(acc)

    monkeypatch.setattr(Acc, "spill_texts", counted)
    (first, _) = [json.loads(line) for line in read_writeset_lines([path], history_size=14_999)]
    assert first["flags"]["limit_reached"] is True and len(first["keys"]) == 15_000
    assert chunks and min(chunks) >= SPILL_AT       # the fused reader joined its texts
