"""``repltool synth``: synthetic MySQL binlogs / relay logs with a ground truth.

:func:`generate` wires the pieces together: the workload plans transactions
(:mod:`.workload`), the group-commit model orders them and gives each its
commit parent (:mod:`.clock`), and the source log frames and writes them,
rotating files (:mod:`.logwriter`).  Alongside the logs it writes
``schema.sql`` (the CREATE TABLE statements) and ``ground-truth.json``: per
GTID the keys written, in the corpus spelling ``db.table.INDEX=[values]``
(``keys``: PRIMARY and UNIQUE keys of after and before images; ``fk_keys``:
the referenced parent keys; ``no_pk_tables``).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, TextIO

from ..binlog import structs as S
from ..binlog.constants import EventType
from ..errors import UsageError
from .clock import ClockConfig, GroupCommit
from .formats import FORMATS, ServerFormat, version_int
from ..outputs import OutputSet
from .logwriter import BinlogOutput, GtidState, Output, RelayOutput, SourceLog, stale_logs
from .tables import Table, make_tables, schema_sql
from .workload import Plan, RowOp, Statement, Workload, WorkloadConfig

_QUERY_HEAD = S.QUERY_HEAD.struct    # thread_id, exec_time, db_len, error_code, status_len
_Q = EventType.QUERY_EVENT
_TM = EventType.TABLE_MAP_EVENT
_XID = EventType.XID_EVENT
_ROWS = {"insert": EventType.WRITE_ROWS_EVENT, "update": EventType.UPDATE_ROWS_EVENT,
         "delete": EventType.DELETE_ROWS_EVENT}
ROW_EVENT_MAX = 8192                       # binlog_row_event_max_size default
STMT_END_F = 1
SUPPRESS_USE = 0x08


@dataclass(frozen=True)
class SynthOptions:
    """Everything ``repltool synth`` can be told (see the README section)."""

    out: Path
    server_format: str = "8.0"
    server_version: str | None = None
    relay_log: bool = False
    transactions: int | None = None
    size: int | None = None
    max_binlog_size: int = 1 << 30
    max_relay_log_size: int | None = None
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    clock: ClockConfig = field(default_factory=ClockConfig)
    compression: str | None = None          # "zstd"
    tagged_gtids: bool = False
    tag: str = "synth"
    tagged_share: float = 0.5               # share of sessions using the tag
    timestamp_encoding: str = "mysql"       # or "delta16"
    gtids: bool = True                      # False: anonymous GTIDs (gtid_mode=OFF)
    full_metadata: bool = False             # binlog_row_metadata=FULL
    db: str = "shop"
    server_id: int = 1
    replica_server_id: int = 2
    ground_truth: bool = True
    ground_truth_rows: bool = False
    in_use: bool = False                    # leave the last file active (no Stop)
    force: bool = False                     # replace the files of an earlier run in out
    seed: int = 1
    start_time_us: int = 1_767_225_600_000_000   # 2026-01-01 00:00:00 UTC


@dataclass
class SynthResult:
    files: list[Path]
    schema: Path
    ground_truth: Path | None
    transactions: int
    bytes: int
    seconds: float
    groups: int
    executed: str

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds else 0.0


def _check(opts: SynthOptions) -> ServerFormat:
    if opts.transactions is None and opts.size is None:
        raise UsageError("give --transactions N or --size SIZE")
    fmt_name = opts.server_format
    if opts.tagged_gtids and fmt_name == "8.0":
        fmt_name = "9.x"                    # tagged GTIDs exist from 8.3 on
    if fmt_name not in FORMATS:
        raise UsageError(f"unknown server format {fmt_name!r}; one of {sorted(FORMATS)}")
    fmt = FORMATS[fmt_name]
    if opts.tagged_gtids and not fmt.tagged:
        raise UsageError("--tagged-gtids needs a 9.x format (GTID_TAGGED_LOG_EVENT is 8.3+)")
    if opts.tagged_gtids and not opts.gtids:
        raise UsageError("--tagged-gtids needs GTIDs (not --anonymous)")
    if not fmt.has_commit_ts and (opts.compression or opts.timestamp_encoding != "mysql"):
        raise UsageError("5.7 logs have neither Transaction_payload nor the delta16 clock")
    if opts.compression not in (None, "zstd"):
        raise UsageError(f"unknown compression {opts.compression!r}; only zstd")
    if opts.timestamp_encoding not in ("mysql", "delta16"):
        raise UsageError("--timestamp-encoding is mysql or delta16")
    return fmt


class _Events:
    """Constant bodies, precomputed once: BEGIN per session, Table_maps, row prefixes."""

    def __init__(self, fmt: ServerFormat, db: str, tables: list[Table], full: bool) -> None:
        self.fmt = fmt
        self.db = db.encode()
        self.full = full
        self.tables = tables
        self._begin: dict[int, bytes] = {}
        self._commit: dict[int, bytes] = {}
        self.table_maps: list[bytes] = []
        self.prefix: list[tuple[bytes, bytes]] = []
        self.refresh()

    def refresh(self) -> None:
        """Rebuild what depends on table ids (after a DDL reopened a table)."""
        self.table_maps = [t.table_map_body(full_metadata=self.full) for t in self.tables]
        self.prefix = [(t.table_id.to_bytes(6, "little") + b"\x00\x00\x02\x00",
                        t.table_id.to_bytes(6, "little") + b"\x01\x00\x02\x00")
                       for t in self.tables]

    def query(self, thread_id: int, text: bytes, status: bytes) -> bytes:
        return (_QUERY_HEAD.pack(thread_id, 0, len(self.db), 0, len(status)) + status
                + self.db + b"\x00" + text)

    def begin(self, thread_id: int) -> bytes:
        b = self._begin.get(thread_id)
        if b is None:
            b = self._begin[thread_id] = self.query(thread_id, b"BEGIN", self.fmt.begin_status)
        return b

    def commit(self, thread_id: int) -> bytes:
        b = self._commit.get(thread_id)
        if b is None:
            b = self._commit[thread_id] = self.query(thread_id, b"COMMIT",
                                                     self.fmt.begin_status)
        return b

    def rows(self, ts: int, t: int, kind: str, ops: list[RowOp],
             out: list[tuple[int, int, int, bytes]]) -> None:
        """Rows events of one statement, split at binlog_row_event_max_size."""
        table = self.tables[t]
        image = table.image
        head_more, head_end = self.prefix[t]
        cols = table.all_columns
        width = bytes((len(table.columns),))
        bitmaps = width + cols + (cols if kind == "update" else b"")
        tc = _ROWS[kind]
        chunk: list[bytes] = []
        size = 0
        for op in ops:
            if kind == "insert":
                img = image(op.after)
            elif kind == "delete":
                img = image(op.before)
            else:
                img = image(op.before) + image(op.after)
            if chunk and size + len(img) > ROW_EVENT_MAX:
                out.append((ts, tc, 0, b"".join((head_more, bitmaps, *chunk))))
                chunk, size = [], 0
            chunk.append(img)
            size += len(img)
        out.append((ts, tc, 0, b"".join((head_end, bitmaps, *chunk))))


class KeyLabels:
    """Ground-truth key labels (``db.table.INDEX=[values]``, as ``WriteKey.label`` spells them)."""

    def __init__(self, tables: list[Table]) -> None:
        by_name = {t.name: t for t in tables}
        referenced = {fk.parent for t in tables for fk in t.foreign_keys}
        self.plans = {}
        for t in tables:
            keyed = bool(t.primary or t.uniques)
            idx = []
            if t.primary:
                idx.append((f"{t.qualified}.PRIMARY=", tuple(t.index[c] for c in t.primary)))
            for name, cols in t.uniques:
                idx.append((f"{t.qualified}.{name}=", tuple(t.index[c] for c in cols)))
            fks = [(f"{by_name[fk.parent].qualified}.PRIMARY=", t.index[fk.column])
                   for fk in t.foreign_keys]
            self.plans[id(t)] = (keyed, t.name in referenced, tuple(idx), tuple(fks))

    def of(self, stmts: list[tuple[Statement, list[RowOp]]]
           ) -> tuple[list[str], list[str], list[str], list[str]]:
        """(keys, fk_keys, no_pk_tables, fk_parent_tables) of a transaction's row changes."""
        keys: set[str] = set()
        fks: set[str] = set()
        no_pk: dict[str, None] = {}
        parents: dict[str, None] = {}
        for _, ops in stmts:
            t = ops[0].table
            keyed, referenced, idx, fkp = self.plans[id(t)]
            if not keyed:
                no_pk[t.qualified] = None
                continue
            if referenced:
                parents[t.qualified] = None
            for op in ops:
                for img in (op.after, op.before):
                    if img is None:
                        continue
                    for prefix, cols in idx:
                        vals = [img[c] for c in cols]
                        if None not in vals:
                            keys.add(prefix + _values(vals))
                    for prefix, c in fkp:
                        v = img[c]
                        if v is not None:
                            fks.add(prefix + _values([v]))
        return sorted(keys), sorted(fks), list(no_pk), list(parents)


def _values(vals: list[Any]) -> str:
    if len(vals) == 1 and type(vals[0]) is int:
        return f"[{vals[0]}]"
    return json.dumps(vals, ensure_ascii=False)


def keys_of(stmts: list[tuple[Statement, list[RowOp]]], tables: list[Table]
            ) -> tuple[list[str], list[str], list[str], list[str]]:
    """(keys, fk_keys, no_pk_tables, fk_parent_tables) of a transaction's row changes."""
    return KeyLabels(tables).of(stmts)


def _jsonable_row(table: Table, row: tuple[Any, ...] | None) -> list[Any] | None:
    if row is None:
        return None
    from ..writeset.model import jsonable
    return [jsonable(v) for v in table.to_python(row)]


def generate(opts: SynthOptions, *, collect: list[dict[str, Any]] | None = None,
             progress: Callable[[int, int], None] | None = None) -> SynthResult:
    """Write the logs, ``schema.sql`` and ``ground-truth.json`` into ``opts.out``.

    :param collect: if given, one dict per transaction (the ground-truth record
        plus ``row_ops``: the generated (table, op, before, after) tuples).
    :param progress: called as ``progress(bytes_written, transactions)`` now and then.
    :raises UsageError: for contradictory options, or when ``opts.out`` holds
        files of the names this run writes (or logs of the same base name it
        would have to remove) and ``opts.force`` is off.
    :raises IOFailure: when a file cannot be written.

    Everything is written into a staging directory in ``opts.out`` and
    renamed into place at the end, all or nothing
    (:class:`repltool.outputs.OutputSet`); with ``force``, logs of an
    earlier run that this one did not replace are removed afterwards (so
    the index stays true).
    """
    fmt = _check(opts)
    basename = "relay-bin" if opts.relay_log else "binlog"
    out_dir = Path(opts.out)
    names = [f"{basename}.index", "schema.sql", *(["ground-truth.json"] * opts.ground_truth)]
    stale = stale_logs(out_dir, basename)
    if stale and not opts.force:
        raise UsageError(f"-o {out_dir}: holds {stale[0].name}"
                         f"{f' and {len(stale) - 1} more log(s)' if len(stale) > 1 else ''} "
                         "of an earlier run; --force replaces them")
    with OutputSet(out_dir, names, force=opts.force, option="-o") as outputs:
        assert outputs.staging is not None
        result = _generate(opts, fmt, basename, outputs.staging, collect, progress)
        for f in (*result.files, out_dir / f"{basename}.index", result.schema,
                  *([result.ground_truth] if result.ground_truth else [])):
            outputs.stage(f.name)
        outputs.commit()
    if opts.force:
        keep = {f.name for f in result.files}
        for p in stale:
            if p.name not in keep:
                try:
                    p.unlink()
                except FileNotFoundError:
                    pass
    return replace(result, files=[out_dir / f.name for f in result.files],
                   schema=out_dir / result.schema.name,
                   ground_truth=out_dir / result.ground_truth.name
                   if result.ground_truth else None)


def _generate(opts: SynthOptions, fmt: ServerFormat, basename: str, out_dir: Path,
              collect: list[dict[str, Any]] | None,
              progress: Callable[[int, int], None] | None) -> SynthResult:
    t0 = time.perf_counter()
    rng = random.Random(opts.seed)
    sid = uuid.UUID(int=rng.getrandbits(128), version=4) if opts.gtids else None
    version = opts.server_version or fmt.server_version
    gtids = GtidState(sid, tag=opts.tag if opts.tagged_gtids else None)
    tables = make_tables(opts.db)
    workload = Workload(tables, opts.workload, rng, rng.getrandbits(16))
    events = _Events(fmt, opts.db, tables, opts.full_metadata)
    output: Output
    if opts.relay_log:
        # the receiver has retrieved everything the source wrote so far: share the set
        output = RelayOutput(out_dir, basename, fmt, version, opts.replica_server_id,
                             opts.max_relay_log_size or opts.max_binlog_size, gtids)
    else:
        output = BinlogOutput(out_dir, basename)
    src = SourceLog(output, fmt, server_id=opts.server_id, server_version=version,
                    server_version_int=version_int(version), gtids=gtids,
                    max_size=opts.max_binlog_size, encoding=opts.timestamp_encoding)
    compressor = None
    if opts.compression == "zstd":
        import zstandard
        compressor = zstandard.ZstdCompressor(level=3)
    tagged_threads: set[int] = set()
    first_thread = 10
    if opts.tagged_gtids:
        tagged_threads = {first_thread + i for i in range(opts.clock.clients)
                          if rng.random() < opts.tagged_share}
    schema_path = out_dir / "schema.sql"
    schema_path.write_text(schema_sql(tables))
    gt_path = out_dir / "ground-truth.json" if opts.ground_truth else None
    gt: TextIO | None = open(gt_path, "w") if gt_path else None  # noqa: SIM115
    if gt is not None:
        meta = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(opts).items()
                if k != "force"}
        meta.update(server_version=version, server_uuid=str(sid) if sid else None,
                    format_profile=fmt.name)
        gt.write('{"format": "repltool-synth-groundtruth/1", "meta": '
                 + json.dumps(meta, default=str) + ', "transactions": [\n')

    def size_of(p: Plan) -> int:
        return 200 + 110 * len(p.locks)

    labels = KeyLabels(tables)
    gc = GroupCommit(opts.clock, rng, workload.plan, size_of, opts.start_time_us, first_thread)
    src.open(opts.start_time_us // 1_000_000, first=True)
    n = groups = 0
    xid = 1000
    limit_n = opts.transactions
    limit_b = opts.size
    first_record = True
    last_ts = opts.start_time_us // 1_000_000
    done = False
    for group in gc.groups():
        groups += 1
        for p in group:
            ts = p.start_us // 1_000_000
            last_ts = max(last_ts, p.flush_us // 1_000_000)
            xid += 1
            tag = opts.tag if p.thread_id in tagged_threads else None
            if sid is None:
                gno = 0
            elif tag is None:
                gtids.untagged += 1
                gno = gtids.untagged
            else:
                gtids.tagged += 1
                gno = gtids.tagged
            lc, sn = src.relative(p.lc_abs, p.seq_abs)
            evs: list[tuple[int, int, int, bytes]] = []
            stmts: list[tuple[Statement, list[RowOp]]] = []
            flags = 1
            compress = None
            if p.kind == "ddl":
                t = tables[p.ddl_table]
                add = (xid % 2 == 0)
                sql = (f"ALTER TABLE `{t.name}` ADD INDEX `ix_synth` (`{t.columns[2].name}`)"
                       if add else f"ALTER TABLE `{t.name}` DROP INDEX `ix_synth`")
                status = fmt.ddl_status(events.db, xid)
                evs.append((ts, _Q, 0, events.query(p.thread_id, sql.encode(), status)))
                # the ALTER reopened the table: it gets a new table id
                t.table_id = max(x.table_id for x in tables) + 1
                events.refresh()
            elif p.kind == "empty":
                evs.append((ts, _Q, SUPPRESS_USE, events.begin(p.thread_id)))
                evs.append((ts, _Q, SUPPRESS_USE, events.commit(p.thread_id)))
            else:
                flags = 0
                compress = compressor
                stmts = workload.materialise(p, p.flush_us)
                evs.append((ts, _Q, SUPPRESS_USE, events.begin(p.thread_id)))
                for s, ops in stmts:
                    evs.append((ts, _TM, 0, events.table_maps[s.table]))
                    if _same_op(ops):
                        events.rows(ts, s.table, ops[0].op, ops, evs)
                    else:
                        _mixed_rows(events, ts, s.table, ops, evs)
                evs.append((ts, _XID, 0, S.XID.pack(xid)))
            start, end = src.transaction(evs, ts=ts, gno=gno, tag=tag, lc=lc, sn=sn,
                                         ict_us=p.flush_us, gtid_flags=flags,
                                         compress=compress)
            n += 1
            if gt is not None or collect is not None:
                gtid = ("ANONYMOUS" if sid is None else
                        f"{sid}:{gno}" if tag is None else f"{sid}:{tag}:{gno}")
                keys, fks, no_pk, parents = labels.of(stmts)
                rec: dict[str, Any] = {
                    "gtid": gtid, "file": src.name, "pos": start, "thread": p.thread_id,
                    "kind": p.kind, "last_committed": lc, "sequence_number": sn,
                    "keys": keys, "fk_keys": fks, "no_pk_tables": no_pk,
                    "fk_parent_tables": parents}
                if opts.ground_truth_rows:
                    rec["rows"] = [{"table": op.table.qualified, "op": op.op,
                                    "before": _jsonable_row(op.table, op.before),
                                    "after": _jsonable_row(op.table, op.after)}
                                   for _, ops in stmts for op in ops]
                if gt is not None:
                    gt.write(("" if first_record else ",\n") + json.dumps(rec, ensure_ascii=False))
                    first_record = False
                if collect is not None:
                    rec = dict(rec, row_ops=[
                        (op.table.qualified, op.op,
                         None if op.before is None else op.table.to_python(op.before),
                         None if op.after is None else op.table.to_python(op.after))
                        for _, ops in stmts for op in ops])
                    collect.append(rec)
            if (limit_n is not None and n >= limit_n) or \
                    (limit_b is not None and output.bytes_written >= limit_b):
                done = True
                break
        if progress is not None and groups % 256 == 0:
            progress(output.bytes_written, n)
        if done:
            break
        src.rotate_if_full(last_ts, group[-1].seq_abs)
    src.stop(last_ts, in_use=opts.in_use)
    if gt is not None:
        gt.write("\n]}\n")
        gt.close()
    if progress is not None:
        progress(output.bytes_written, n)
    return SynthResult(list(output.files), schema_path, gt_path, n, output.bytes_written,
                       time.perf_counter() - t0, groups, gtids.text())


def _same_op(ops: list[RowOp]) -> bool:
    first = ops[0].op
    return all(o.op == first for o in ops)


def _mixed_rows(events: _Events, ts: int, t: int, ops: list[RowOp],
                out: list[tuple[int, int, int, bytes]]) -> None:
    """A statement whose rows resolved to different kinds (an upsert): one event per run."""
    run: list[RowOp] = []
    for op in ops:
        if run and op.op != run[0].op:
            _flush_run(events, ts, t, run, out, last=False)
            run = []
        run.append(op)
    _flush_run(events, ts, t, run, out, last=True)


def _flush_run(events: _Events, ts: int, t: int, run: list[RowOp],
               out: list[tuple[int, int, int, bytes]], *, last: bool) -> None:
    events.rows(ts, t, run[0].op, run, out)
    if not last:
        # only the statement's last Rows event carries STMT_END_F
        ts_, tc, fl, body = out[-1]
        out[-1] = (ts_, tc, fl, body[:6] + b"\x00\x00" + body[8:])
