"""``ReadOptions(count_types=True)``: the reader counts the events it yields by type code
(and the bytes of those outside a Transaction_payload) into ``FileInfo.counts``, in
first-seen order - what ``stats`` used to count with a generator around the reader
(its general route now takes them from here)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from repltool.binlog.reader import FileInfo, ReadOptions, read_events
from repltool.binlog.transactions import GROUPING_TYPES
from repltool.errors import ReplToolError


def _tapped(paths: list[Path], opts: ReadOptions, infos: list[FileInfo]
            ) -> tuple[dict[str, tuple[list[tuple[int, int]], list[tuple[int, int]]]], str | None]:
    """Per file, the events yielded counted one by one (and the error, if any)."""
    seen: dict[str, tuple[Counter[int], Counter[int]]] = {}
    error = None
    try:
        for ev in read_events(paths, opts, infos):
            types, sizes = seen.setdefault(ev.pos.file, (Counter(), Counter()))
            types[ev.type_code] += 1
            if ev.pos.payload_offset is None:
                sizes[ev.type_code] += ev.event_size
    except ReplToolError as exc:
        error = str(exc)
    return {f: (list(t.items()), list(b.items())) for f, (t, b) in seen.items()}, error


@pytest.mark.corpus_files("path", "mysql/*/*", "mariadb/*/*")
def test_counts_are_the_events_yielded(path: Path) -> None:
    """Every corpus file (payloads, relay logs, damaged and truncated files): the counts
    equal the events the same read yields, type by type, in the same order."""
    for verify in (True, False):
        infos: list[FileInfo] = []
        plain = ReadOptions(verify_checksum=verify, types=GROUPING_TYPES)
        want, want_error = _tapped([path], plain, infos)
        counted = ReadOptions(verify_checksum=verify, types=GROUPING_TYPES, count_types=True)
        infos = []
        got, error = _tapped([path], counted, infos)
        assert (got, error) == (want, want_error)
        assert len(infos) == 1
        fi = infos[0]
        expect = want.get(str(path), ([], []))
        if fi.counts is None:           # the file failed before its first event
            assert expect == ([], [])
            continue
        assert (list(fi.counts[0].items()), list(fi.counts[1].items())) == expect


def test_counts_with_payloads(corpus: Path) -> None:
    """A compressed log: inner events count by type, their bytes only once (the
    payload event's)."""
    paths = sorted(corpus.glob("mysql/*/*transaction_compression*"))
    assert paths
    infos: list[FileInfo] = []
    inner = 0
    for ev in read_events(paths, ReadOptions(count_types=True), infos):
        inner += ev.pos.payload_offset is not None
    assert inner
    total = sum(sum(fi.counts[0].values()) for fi in infos if fi.counts)
    sizes = sum(sum(fi.counts[1].values()) for fi in infos if fi.counts)
    assert sizes == sum(fi.end_offset - 4 for fi in infos)
    assert total > sum(1 for _ in read_events(paths, ReadOptions(payloads=False)))


def test_same_file_twice_adds_up(corpus: Path) -> None:
    path = sorted(corpus.glob("mariadb/small/mysql-bin.000001"))[0]
    infos: list[FileInfo] = []
    n = sum(1 for _ in read_events([path, path], ReadOptions(count_types=True), infos))
    assert [sum(fi.counts[0].values()) for fi in infos] == [n // 2, n // 2]  # type: ignore[union-attr]


def test_not_with_keep_going() -> None:
    with pytest.raises(ValueError, match="keep_going"):
        ReadOptions(count_types=True, keep_going=True)
