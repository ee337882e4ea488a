"""One relay segment rule: the grouper's clock segments, the schedule's source files
and check's clock segments take a relay log's source Rotates from
:meth:`repltool.binlog.transactions.Segments.see`, so they agree on which Rotate
begins a new source binlog.

A relay file (built with repltool's encoder as a MySQL 8.0 receiver writes one,
``schedule_cli_data``) holds (0, 1), (1, 2), then a Rotate not flagged
LOG_EVENT_RELAY_LOG_F, then (0, 1) again.  Sent by the source (its server_id) or
the receiver (server_id 0) it begins a new source binlog: a new segment, a
barrier in the schedule, no C001 from check.  Carrying the replica's own
server_id it does not (MySQL ``Rotate_log_event::do_update_pos``: only a Rotate
from another server moves the source position): the clock goes on, the schedule
sees no new source file and check reports the restart as C001.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from schedule_cli_data import REPLICA_ID, SOURCE_ID, write_relay_file

from repltool.binlog import read_events, read_transactions
from repltool.binlog.transactions import group_transactions
from repltool.check import check_files
from repltool.schedule.source import SourceRotations, transactions_to_sim


@pytest.mark.parametrize("rotate_server_id", [SOURCE_ID, 0, REPLICA_ID])
def test_grouper_schedule_and_check_take_one_rule(tmp_path: Path, rotate_server_id: int) -> None:
    path = tmp_path / "relay-bin.000001"
    write_relay_file(path, [(0, 1), (1, 2), None, (0, 1)], first=True, next_relay=None, gno=0,
                     rotate_server_id=rotate_server_id)
    new_source = rotate_server_id != REPLICA_ID

    trxs = list(read_transactions(path))
    assert [t.segment for t in trxs] == ["source-bin.000001"] * 2 + [
        "source-bin.000002" if new_source else "source-bin.000001"]

    rotations = SourceRotations()
    sims = list(transactions_to_sim(group_transactions(rotations.watch(read_events(path))),
                                    relay=rotations))
    assert rotations.is_relay(str(path))
    assert [s.new_source_file for s in sims] == [True, False, new_source]

    report = check_files([str(path)], writesets=None)
    c001 = [f.offset for f in report.findings if f.rule == "C001"]
    assert c001 == ([] if new_source else [trxs[2].start.offset])
