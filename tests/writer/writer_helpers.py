"""Helpers for the writer tests: the real-file corpus, its decoded events, a GTID body factory.

The corpus lives next to the checkout (``../shared/corpus``, or ``$REPLTOOL_CORPUS``).
Without it the corpus tests skip, loudly; with ``REPLTOOL_REQUIRE_CORPUS=1`` they fail.
(A module of its own, not ``conftest``: test modules import it by a unique name.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable
from uuid import UUID

import pytest

from repltool.binlog import ReadOptions, read_events
from repltool.binlog.events import Event, FormatDescriptionBody, GtidBody
from repltool.errors import ReplToolError, TruncatedLog

CORPUS = Path(os.environ.get("REPLTOOL_CORPUS")
              or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")
GTID_TYPES = (33, 34, 42)
SID = UUID("55778904-0299-11f1-b1b8-4ef0c4956feb")


def corpus_missing() -> None:
    """Skip (or fail under REPLTOOL_REQUIRE_CORPUS=1) when the corpus is absent."""
    msg = f"real-file corpus not found at {CORPUS}: corpus round-trip tests NOT run"
    if os.environ.get("REPLTOOL_REQUIRE_CORPUS") == "1":
        pytest.fail(msg)
    pytest.skip(msg)


def mysql_files() -> list[Path]:
    return sorted(p for p in CORPUS.glob("mysql/*/*") if p.is_file())


@dataclass(frozen=True)
class CorpusFile:
    path: Path
    events: tuple[Event, ...]       # outer events (payloads not expanded)
    relay_log: bool
    server_version: str
    truncated: bool

    @property
    def gtids(self) -> list[Event]:
        return [e for e in self.events if e.type_code in GTID_TYPES]

    def clocks(self) -> dict[int, tuple[int, int]]:
        """The recorded clock of every GTID event that has one (not 5.6)."""
        return {e.pos.offset: (e.body.last_committed, e.body.sequence_number)
                for e in self.gtids if e.body.lt_type is not None}

    @property
    def name(self) -> str:
        return self.path.name


@lru_cache(maxsize=None)
def load(path: Path) -> CorpusFile | None:
    """Every outer event of a corpus file (CRCs not verified), or None if unreadable."""
    events: list[Event] = []
    truncated = False
    try:
        for ev in read_events(path, ReadOptions(verify_checksum=False, payloads=False)):
            events.append(ev)
    except TruncatedLog:
        truncated = True
    except ReplToolError:
        return None
    fdes = [e for e in events if isinstance(e.body, FormatDescriptionBody)]
    relay = bool(fdes and fdes[0].flags & 0x40)
    version = fdes[0].body.server_version if fdes else ""
    return CorpusFile(path, tuple(events), relay, version, truncated)


def corpus_params(where: Callable[[CorpusFile], bool] | None = None, *,
                  at_least: int = 0) -> list:
    """One pytest param per corpus file repltool can read (ids = file names).

    ``where`` keeps only the files a test is meaningful for (chosen here, at
    collection time, so that no test passes by finding nothing to check), and
    the selection is asserted to hold at least ``at_least`` files: a corpus or a
    reader change that empties it fails collection instead of passing quietly.

    Without the corpus: a single param whose fixture skips (or fails, see
    :func:`corpus_missing`).  The unreadable files are covered by
    ``test_unreadable_corpus_files_are_refused``.
    """
    if not CORPUS.is_dir():
        return [pytest.param(None, id="no-corpus")]
    files = [p for p in mysql_files() if (cf := load(p)) is not None
             and (where is None or where(cf))]
    assert len(files) >= at_least, (
        f"only {len(files)} corpus files (< {at_least}) match {getattr(where, '__name__', where)}")
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in files]


def has_gtids(cf: CorpusFile) -> bool:
    return bool(cf.gtids)


def has_clocks(cf: CorpusFile) -> bool:
    return bool(cf.clocks())


def gtid(**kw: object) -> GtidBody:
    """An 8.0-origin GTID body (lc 3, seq 4), with ``kw`` replacing fields."""
    base = dict(gtid_flags=0, sid=SID, gno=7, tag=None, lt_type=2, last_committed=3,
                sequence_number=4, immediate_commit_timestamp=1_700_000_000_000_000,
                original_commit_timestamp=1_700_000_000_000_000, transaction_length=300,
                immediate_server_version=80032, original_server_version=80032)
    base.update(kw)
    return GtidBody(**base)  # type: ignore[arg-type]
