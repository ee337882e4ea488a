"""Write re-tagged copies of logs: the computed clocks in every GTID event, nothing else.

Per input file, :func:`repltool.binlog.rewrite.rewrite_log` copies every byte
and replaces the logical timestamps of the GTID events named by their offset
(untagged events: the 16 timestamp bytes and the CRC; tagged events and the
delta16 encoding resize the event, and the writer fixes ``log_pos`` of the
later events of a binlog; relay logs keep their source coordinates).

The set of outputs is written all-or-nothing (:class:`repltool.outputs.OutputSet`):
every file is first rewritten into a staging directory inside the output
directory, and only when all of them succeeded are they renamed to their
final names; a failing rename restores the files already replaced. On any
failure, Ctrl-C or SIGTERM the staging directory is removed, so the output
directory holds no file of this run, partial or complete (files that were
there before are untouched). A name that exists in the output directory is
refused unless ``force``; an input never is replaced.

Which clock a transaction gets:

* a certified transaction: its computed ``(last_committed, sequence_number)``;
* a GR transaction without a number (``computed is None``: local, or
  negatively certified): ``(0, 0)``, the View_change form. It consumes no
  sequence number, so the others stay contiguous, and the replica applies
  it alone (a full barrier): the only value that is valid and safe for a
  transaction the certifier would not have written to the relay log;
* a truncated group (no end event, never committed): untouched.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ..binlog.rewrite import RewriteReport, rewrite_log
from ..errors import CertifyError, UsageError
from ..outputs import OutputSet
from .report import Certified, recorded_clock

NO_NUMBER_CLOCK = (0, 0)
"""What a transaction without a computed clock is written with."""


def check_output_dir(paths: Iterable[str | os.PathLike[str]],
                     out_dir: str | os.PathLike[str], *, force: bool = False) -> OutputSet:
    """Validate ``--output DIR`` before anything is read (nothing is created yet).

    :raises UsageError: DIR is a file, a copy would replace one of the inputs
        (DIR is an input's directory, or holds a link to one), two inputs
        share a file name, or a copy's name exists in DIR and ``force`` is off.
    """
    out = Path(out_dir)
    names: dict[str, str] = {}
    inputs = list(paths)
    for p in map(Path, inputs):
        if p.name in names:
            raise UsageError(f"--output: inputs {names[p.name]} and {p} have the same file name")
        names[p.name] = str(p)
        parent = p.resolve().parent
        if out.is_dir() and os.path.samefile(parent, out):
            raise UsageError(f"--output {out} is the directory of input {p}: the re-tagged "
                             "copy would replace it; write to another directory")
    return OutputSet(out, names, inputs, force=force, option="--output")


class ClockColumns(Mapping[int, tuple[int, int]]):
    """GTID-event offset -> new clock for one file, in three int64 columns (24 bytes each).

    Certification yields a file's transactions in offset order, so the
    columns are appended sorted and :func:`~repltool.binlog.rewrite.rewrite_log`
    reads them as they are (``sorted_by_offset``); lookups bisect.
    """

    def __init__(self) -> None:
        self._offsets, self._lc, self._sn = array("q"), array("q"), array("q")

    @classmethod
    def from_columns(cls, offsets: Sequence[int], last_committed: Sequence[int],
                     sequence_number: Sequence[int]) -> ClockColumns:
        """The columns given whole (``array('q')`` or int sequences of one length), as
        :meth:`add` of each offset in turn would make them.

        :raises CertifyError: an offset is not above the one before it.
        """
        from itertools import islice
        from operator import lt
        if not len(offsets) == len(last_committed) == len(sequence_number):
            raise CertifyError(f"{len(offsets)} offsets for {len(last_committed)} and "
                               f"{len(sequence_number)} clock values")
        if not all(map(lt, offsets, islice(offsets, 1, None))):
            raise CertifyError("offsets not in log order: transactions of a file must come "
                               "in log order")
        columns = cls()
        columns._offsets.extend(offsets)
        columns._lc.extend(last_committed)
        columns._sn.extend(sequence_number)
        return columns

    @property
    def sorted_by_offset(self) -> bool:
        return True

    def columns(self) -> tuple[array[int], array[int], array[int]]:
        """The offset, last_committed and sequence_number columns (not copies), which
        :class:`~repltool.binlog.rewrite.Rewriter` walks as they are."""
        return self._offsets, self._lc, self._sn

    def add(self, offset: int, clock: tuple[int, int]) -> None:
        if self._offsets and offset <= self._offsets[-1]:
            raise CertifyError(f"offset {offset} after {self._offsets[-1]}: transactions of a "
                               "file must come in log order")
        self._offsets.append(offset)
        self._lc.append(clock[0])
        self._sn.append(clock[1])

    def __getitem__(self, offset: int) -> tuple[int, int]:
        from bisect import bisect_left
        i = bisect_left(self._offsets, offset)
        if i == len(self._offsets) or self._offsets[i] != offset:
            raise KeyError(offset)
        return self._lc[i], self._sn[i]

    def __iter__(self) -> Iterator[int]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    def items(self) -> Iterator[tuple[int, tuple[int, int]]]:  # type: ignore[override]
        return ((o, (lc, sn)) for o, lc, sn in zip(self._offsets, self._lc, self._sn))


class ClockMap:
    """The new clock of every GTID event, by file and offset (a sink of :class:`Certified`).

    Memory: 24 bytes per transaction (:class:`ClockColumns`); the rewrite runs
    after the whole report, so every clock is held until then.
    """

    def __init__(self) -> None:
        self.by_file: dict[str, ClockColumns] = {}
        self.unnumbered = 0

    def __call__(self, c: Certified) -> None:
        trx, r = c
        if recorded_clock(trx) is None:
            raise CertifyError(
                f"{trx.gtid or 'this transaction'} has no logical clock to re-tag (MariaDB, "
                "MySQL 5.6 or GTID-less log); --output needs MySQL 5.7+ logs", pos=trx.start)
        clock = r.computed
        if clock is None:
            clock = NO_NUMBER_CLOCK
            self.unnumbered += 1
        columns = self.by_file.get(trx.start.file)
        if columns is None:
            columns = self.by_file[trx.start.file] = ClockColumns()
        columns.add(trx.start.offset, clock)


def retag_logs(paths: Sequence[str | os.PathLike[str]], clocks: ClockMap,
               out_dir: str | os.PathLike[str], *, encoding: str = "mysql",
               force: bool = False) -> tuple[RewriteReport, ...]:
    """Write every input to ``out_dir`` under its own name with the new clocks.

    Inputs are only read. All-or-nothing, see the module docstring.

    :param force: replace copies of an earlier run (never an input).
    :raises UsageError, ChecksumMismatch, ...: as :func:`rewrite_log`; then
        nothing of this run is left in ``out_dir``.
    :raises IOFailure: a copy cannot be written or renamed (the files already
        renamed are restored).
    """
    with check_output_dir(paths, out_dir, force=force) as outputs:
        return retag_staged(outputs, paths, clocks, encoding=encoding)


def retag_staged(outputs: OutputSet, paths: Sequence[str | os.PathLike[str]],
                 clocks: ClockMap, *, encoding: str = "mysql",
                 written: Sequence[RewriteReport | Exception | None] | None = None
                 ) -> tuple[RewriteReport, ...]:
    """:func:`retag_logs` into an entered :class:`OutputSet`, committed at the end.

    :param written: the copies are already in the staging directory, written
        elsewhere (``certify --spark``: by the executors, one entry per path:
        its report, or the error that stopped it, raised here in input order).
    """
    reports = []
    for i, p in enumerate(paths):
        dst = outputs.stage(Path(p).name)
        if written is None:
            reports.append(rewrite_log(p, dst, clocks.by_file.get(os.fspath(p), ClockColumns()),
                                       encoding=encoding))
            continue
        done = written[i]
        if isinstance(done, Exception):
            raise done
        if done is None:
            raise CertifyError(f"{p}: no re-tagged copy was written")
        reports.append(done)
    outputs.commit()
    return tuple(_renamed(r, outputs.directory) for r in reports)


def _renamed(report: RewriteReport, out: Path) -> RewriteReport:
    from dataclasses import replace
    return replace(report, dst=str(out / Path(report.dst).name))
