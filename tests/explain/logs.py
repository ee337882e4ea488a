"""Hand-built MySQL 8.0 binlogs with chosen logged clocks (for ``--mode recorded``).

Each transaction writes rows ``ids`` of ``test.t1`` (the PK comes from the
Table_map metadata), so the same logs also work in the certify modes; rows
vary in number so the linear cost model gives different costs.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from repltool.binlog import structs as S
from repltool.binlog.constants import EventType
from repltool.synth import BinlogBuilder, SampleTable, query_body

UUID2 = uuid.UUID("22222222-2222-2222-2222-222222222222")
TABLE = SampleTable(100, "test", "t1")
T0 = 1_760_000_000_000_000

#: (last_committed, sequence_number, ids written) per transaction, per file: windows, a
#: last_committed = 0 barrier, a sequence-number gap, a (0, 0) transaction, a rotation.
CLOCKS = [
    [(0, 1, (1,)), (1, 2, (2, 3)), (1, 3, (4,)), (2, 4, (2,)), (3, 5, (5, 6, 7)),
     (3, 6, (8,)), (0, 7, (9,)), (7, 8, (1, 10)), (7, 10, (11,)), (0, 0, (12,)),
     (10, 11, (13,)), (11, 12, (14, 15)), (11, 13, (2,))],
    [(0, 1, (3,)), (1, 2, (4,)), (1, 3, (5, 6)), (3, 4, (3,))],
]


def write(directory: Path, files: list[list[tuple[int, int, tuple[int, ...]]]] = CLOCKS,
          name: str = "binlog") -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.{i:06d}" for i in range(1, len(files) + 1)]
    gno, ts = 0, T0
    for index, (path, trxs) in enumerate(zip(paths, files)):
        with open(path, "wb") as fh:
            b = BinlogBuilder(fh)
            b.start(ts // 1_000_000, (UUID2, gno))
            for lc, sn, ids in trxs:
                gno += 1
                ts += 1000 * len(ids)
                rows = [(i, f"row {i} " * len(ids)) for i in ids]
                b.transaction(ts, UUID2, gno, lc, sn, [
                    (EventType.QUERY_EVENT, query_body(1 + gno % 3, "test", "BEGIN")),
                    (EventType.TABLE_MAP_EVENT, TABLE.table_map_body()),
                    (EventType.WRITE_ROWS_EVENT, TABLE.write_rows_body(rows)),
                    (EventType.XID_EVENT, S.xid_body.build({"xid": gno}))])
            b.close(ts // 1_000_000, paths[index + 1].name if index + 1 < len(paths) else None)
    return paths


def gtid(gno: int) -> str:
    return f"{UUID2}:{gno}"
