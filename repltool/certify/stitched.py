"""Certify (transaction, write set) pairs that were read elsewhere, e.g. per file on Spark.

:class:`PairsRun` is a :class:`~repltool.certify.report.CertifyRun` whose
reading was done by someone else: it certifies the pairs it is given, in the
order given, with the very same mapping (:func:`~repltool.certify.source.iter_cert_pairs`),
trackers or certifier and garbage collection as the single-process run, so
its :class:`~repltool.certify.report.Certified` stream (and the report and
JSON rows built from it) is the same when the pairs are.

The pairs must be what one ordered read gives: each transaction as the reader
groups it (``events`` may be reduced to the View_change events and the Query
events other than ``BEGIN``/``COMMIT``, the only ones certification and
``explain`` look at) and the write set
:func:`repltool.writeset.iter_writesets` computes for it over the same
ordered read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .gtidset import GtidSet
from .model import CertifyOptions, Mode
from .report import CertifyRun, default_mode

if TYPE_CHECKING:
    from ..binlog.transactions import Transaction
    from .source import WritesetLike


class PairsRun(CertifyRun):
    """A certify run over given pairs: create it, :meth:`attach` the pairs, iterate once.

    Creating it loads the schema (:attr:`schema`, raising the same
    :class:`~repltool.writeset.SchemaError` as a run that reads) and sets the
    same :attr:`warnings`, so the schema can be handed to whoever computes
    the write sets.

    :param paths: the files the pairs come from, in order (for the report).
    :param mode: ``None``: :func:`~repltool.certify.report.default_mode` of the
        first transaction given to :meth:`attach`.
    """

    def __init__(self, paths: Sequence[str | os.PathLike[str]], mode: Mode | str | None = None,
                 options: CertifyOptions | None = None, *,
                 schema_paths: Sequence[str | os.PathLike[str]] = (),
                 schema_db: str | None = None,
                 stable_sets: Sequence[GtidSet] = ()) -> None:
        super().__init__((), mode or Mode.WRITESET, options, schema_paths=schema_paths,
                         schema_db=schema_db,
                         stable_sets=stable_sets)
        self.paths = [os.fspath(p) for p in paths]
        self._asked = Mode(mode) if mode is not None else None
        self._given: Iterable[tuple[Transaction, WritesetLike | None]] = ()
        #: whether :meth:`attach_certified` gave the results (not pairs to certify here)
        self.certified_elsewhere = False

    def attach(self, pairs: Iterable[tuple[Transaction, WritesetLike | None]],
               first: Transaction | None) -> None:
        """The pairs to certify, and the first transaction of the read (for the default mode)."""
        self._given = pairs
        self.relay_log = first is not None and first.relay_log
        self.mode = self._asked if self._asked is not None else default_mode(first)

    @property
    def reads_pairs(self) -> bool:
        """Whether this run's class reads the pairs themselves (``explain`` keeps the
        write sets): then they must be given with :meth:`attach`, not certified elsewhere."""
        return type(self)._pairs is not PairsRun._pairs

    @property
    def asked_mode(self) -> Mode | None:
        """The mode asked for; ``None``: the default of the first transaction."""
        return self._asked

    def attach_certified(self, certified: Iterable[Any], first: Transaction | None,
                         truncated: Callable[[], int]) -> None:
        """Certified transactions computed elsewhere (per source binlog, for the modes whose
        trackers restart at every rotation: ``writeset``, ``commit-order``), in order.

        :param truncated: called at the end: the truncated transactions skipped.
        """
        self.attach((), first)
        self._certified: tuple[Iterable[Any], Callable[[], int]] | None = (certified, truncated)
        self.certified_elsewhere = True

    def attach_report_parts(self, parts: Iterable[Any]) -> None:
        """With :meth:`attach_certified`: the same results as
        :class:`~repltool.certify.report.ReportColumns`, in order (a run consumes
        either these or the certified transactions, once)."""
        self._parts: Iterable[Any] | None = parts

    def report_parts(self) -> Iterator[Any] | None:
        """The attached :class:`~repltool.certify.report.ReportColumns` (None: not given):
        :class:`~repltool.certify.report.ReportBuilder` then needs no object per
        transaction."""
        packed = getattr(self, "_packed_parts", None)
        if packed is not None:
            return packed()
        parts = getattr(self, "_parts", None)
        given = getattr(self, "_certified", None)
        if parts is None or given is None:
            return None
        return self._counted(parts, given[1])

    def attach_packed_parts(self, parts: Callable[[], Iterator[Any]]) -> None:
        """With :meth:`attach`: the same run's :class:`~repltool.certify.report.ReportColumns`
        certified from packed arrays (``parts()`` makes them, counting truncated
        transactions into :attr:`truncated_skipped`); a run consumes either these or
        the pairs, once."""
        self._packed_parts: Callable[[], Iterator[Any]] | None = parts

    def _counted(self, parts: Iterable[Any], truncated: Callable[[], int]) -> Iterator[Any]:
        yield from parts
        self.truncated_skipped += truncated()

    def __iter__(self) -> Iterator[Any]:
        given = getattr(self, "_certified", None)
        if given is None:
            yield from super().__iter__()
            return
        certified, truncated = given
        yield from certified
        self.truncated_skipped += truncated()

    def _pairs(self) -> Iterator[tuple[Transaction, Any]]:
        for trx, ws in self._given:
            self.truncated_skipped += trx.truncated
            yield trx, ws
