"""Relay logs for the ``repltool schedule`` tests.

They are built with repltool's own encoder (``repltool.synth``), laid out as
format spec §1.2 describes a MySQL 8.0 receiver writing them: the
replica's FDE (flag 0x40) and Previous_gtids, the source's fake Rotate (flag
0x20, log_pos 0) and FDE, the receiver's server_id-0 "rotate to source pos",
transactions, a source Rotate and the next source file's FDE, and at the end of
the relay file the receiver's own Rotate (flag 0x40).  The second relay file
starts with the replica FDE and a copy of the source FDE (flag 0x20), and no
source Rotate: the source numbering goes on.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from repltool.binlog import structs as S
from repltool.binlog.constants import EventType
from repltool.synth import (MYSQL80_POST_HEADER_LEN, BinlogBuilder, SampleTable, fde_body,
                            query_body)

SOURCE_ID, REPLICA_ID = 1, 2
RELAY_F, ARTIFICIAL_F = 0x40, 0x20
SID = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")

#: (last_committed, sequence_number) per transaction and file; a None is a source
#: Rotate + FDE (a new source binlog) in the middle of the relay file.
RELAY_1 = [(0, 1), (1, 2), (1, 3), None, (0, 1), (1, 2)]
RELAY_2 = [(2, 3), (2, 4), (4, 5)]
#: new_source_file of each transaction of RELAY_1 + RELAY_2.
RELAY_NEW_SOURCE = [True, False, False, True, False, False, False, False]


class RelayWriter(BinlogBuilder):
    """A BinlogBuilder whose events may carry another server_id and flags."""

    def event(self, type_code: int, body: bytes, *, server_id: int, flags: int = 0,
              log_pos: int | None = None) -> None:
        from repltool.binlog.writer import frame_event
        size = 19 + len(body) + 4
        self._write(frame_event(1_760_000_000, type_code, server_id, flags, body, crc=True,
                                log_pos=self.pos + size if log_pos is None else log_pos))

    def rotate_to(self, name: str, *, server_id: int, flags: int, log_pos: int) -> None:
        body = S.BinlogStructs(MYSQL80_POST_HEADER_LEN).rotate_body.build(
            {"position": 4, "skip": b"", "new_log_ident": name.encode()})
        self.event(EventType.ROTATE_EVENT, body, server_id=server_id, flags=flags,
                   log_pos=log_pos)

    def source_fde(self, flags: int = 0) -> None:
        self.event(EventType.FORMAT_DESCRIPTION_EVENT, fde_body("8.0.40", 0),
                   server_id=SOURCE_ID, flags=flags, log_pos=0)


def write_relay_file(path: Path, clocks: list, *, first: bool, next_relay: str | None,
                gno: int, rotate_server_id: int = SOURCE_ID) -> int:
    """``rotate_server_id``: the server_id of the Rotates a None in ``clocks`` writes
    (the source's: a new source binlog)."""
    table = SampleTable(110, "shop", "orders")
    with open(path, "wb") as fh:
        w = RelayWriter(fh, server_id=REPLICA_ID)
        w._write(b"\xfebin")
        w.event(EventType.FORMAT_DESCRIPTION_EVENT, fde_body("8.0.40", 1_760_000_000),
                server_id=REPLICA_ID, flags=RELAY_F)
        w.event(EventType.PREVIOUS_GTIDS_LOG_EVENT, bytes(8), server_id=REPLICA_ID,
                flags=0x80 | RELAY_F)
        source_file = 1
        if first:
            w.rotate_to("source-bin.000001", server_id=SOURCE_ID, flags=ARTIFICIAL_F, log_pos=0)
            w.source_fde()
            w.rotate_to("source-bin.000001", server_id=0, flags=0, log_pos=0)
        else:
            w.source_fde(flags=ARTIFICIAL_F)
        w.server_id = SOURCE_ID
        for clock in clocks:
            if clock is None:
                source_file += 1
                w.rotate_to(f"source-bin.{source_file:06d}", server_id=rotate_server_id, flags=0,
                            log_pos=w.pos + 19 + 8 + 17 + 4)
                w.source_fde()
                continue
            gno += 1
            bodies = [(EventType.QUERY_EVENT, query_body(10, table.db, "BEGIN")),
                      (EventType.TABLE_MAP_EVENT, table.table_map_body()),
                      (EventType.WRITE_ROWS_EVENT, table.write_rows_body([(gno, "x")])),
                      (EventType.XID_EVENT, S.xid_body.build({"xid": gno}))]
            w.transaction(1_760_000_000_000_000 + gno, SID, gno, clock[0], clock[1], bodies)
        if next_relay is not None:
            w.rotate_to(next_relay, server_id=REPLICA_ID, flags=RELAY_F, log_pos=w.pos)
    return gno
