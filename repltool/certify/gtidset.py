"""The GTID set Group Replication's certifier uses: :class:`repltool.binlog.gtid.GtidSet`.

Group Replication's certifier stores, with every write-set item, the
*snapshot version* of the last transaction that wrote it: a GTID set (the
originating member's ``gtid_executed`` plus the transaction's own GTID). It
certifies a transaction negatively when a stored version is not a subset of
the transaction's own snapshot version, and garbage-collects items whose
version is a strict subset of the group's stable set
(``plugin/group_replication/src/certifier.cc``: ``Certifier::certify``,
``Certifier::garbage_collect``; ``Gtid_set::is_subset``,
``is_subset_not_equals`` in ``sql/rpl_gtid_set.cc``).

The class (parsing, algebra, the binary form's view) is documented there.
"""

from __future__ import annotations

from ..binlog.gtid import GtidSet, Interval, split_gtid

__all__ = ["GtidSet", "Interval", "split_gtid"]
