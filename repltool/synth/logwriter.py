"""Source binlog framing, rotation, and the two outputs: binlog files or relay logs.

:class:`SourceLog` plays the source server's binlog: it frames events (19-byte
header, end-of-event ``log_pos``, CRC32), numbers the files, rotates after a
commit group once the file reaches ``max_binlog_size`` (Rotate, then a new
file whose Previous_gtids carries the executed set), and keeps the
commit-order clock relative to the current file (format-spec §2.4, §3.2, §6a).
Each piece of the source stream goes to an output:

* :class:`BinlogOutput` writes it as the source's own files;
* :class:`RelayOutput` writes what a replica's receiver thread would (format-spec
  §1.2): its own FDE (flag 0x40) and Previous_gtids, the source's fake Rotate
  (artificial, log_pos 0) and FDE, a server_id-0 Rotate in place of the
  source's Previous_gtids, the source events byte for byte, the source's
  Rotate and next FDE at source rotations, and its own Rotate when the relay
  file is full - only between transactions, as 8.0 does.

The hot path builds bytes with ``struct`` and ``zlib.crc32``; the construct
declarations are only used for the rare events, and the test-suite parses
everything back with them.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..binlog import structs as S
from ..binlog.constants import CHECKSUM_LEN, HEADER_LEN, EventType
from ..binlog.events import GtidBody
from ..binlog.writer import encode_gtid_body, encode_gtid_tagged_body, transaction_length_for
from .formats import ServerFormat

_HDR = S.COMMON_HEADER
_U32 = struct.Struct("<I")
_GTID_HEAD = S.GTID_HEAD.struct     # flags, sid, gno, lt_type, lc, sn
_ROTATE_POS = S.ROTATE_HEAD.struct  # a Rotate body's position (the file name follows)
_FLAGS = S.HEADER.span("flags")
_FRAME = HEADER_LEN + CHECKSUM_LEN  # an event's bytes besides its body
_crc32 = zlib.crc32

ARTIFICIAL = 0x20
RELAY = 0x40
IGNORABLE = 0x80
IN_USE = 0x01


def frame(ts: int, tc: int, server_id: int, flags: int, body: bytes, log_pos: int,
          crc: bool = True) -> bytes:
    """One event: header, body and (``crc``) the CRC32 footer."""
    if not crc:
        return _HDR.pack(ts, tc, server_id, HEADER_LEN + len(body), log_pos, flags) + body
    head = _HDR.pack(ts, tc, server_id, _FRAME + len(body), log_pos, flags)
    return b"".join((head, body, _U32.pack(_crc32(body, _crc32(head)))))


def frame_fde(ts: int, server_id: int, flags: int, body: bytes, log_pos: int) -> bytes:
    """An FDE: its CRC is computed with LOG_EVENT_BINLOG_IN_USE_F cleared."""
    ev = frame(ts, EventType.FORMAT_DESCRIPTION_EVENT, server_id, flags & ~IN_USE, body, log_pos)
    if flags & IN_USE:
        ev = _with_flags(ev, flags)
    return ev


def _with_flags(ev: bytes, flags: int) -> bytes:
    """``ev`` with the header's flags replaced (its CRC unchanged)."""
    return ev[:_FLAGS.start] + flags.to_bytes(_FLAGS.stop - _FLAGS.start, "little") \
        + ev[_FLAGS.stop:]


def fde_body(fmt: ServerFormat, server_version: str, create_timestamp: int) -> bytes:
    return S.fde_body.build(
        {"binlog_version": 4, "server_version": server_version.encode().ljust(50, b"\0"),
         "create_timestamp": create_timestamp, "common_header_len": HEADER_LEN,
         "post_header_len": fmt.post_header_len, "checksum_alg": 1},
        num_types=len(fmt.post_header_len), has_checksum_alg=True)


@dataclass
class GtidState:
    """The executed GTID set: ``uuid:1-n`` plus ``uuid:tag:1-m``."""

    sid: uuid.UUID | None
    untagged: int = 0
    tag: str | None = None
    tagged: int = 0

    def previous_gtids_body(self) -> bytes:
        sids = []
        if self.sid is not None and self.untagged:
            sids.append((b"", self.untagged))
        if self.sid is not None and self.tag and self.tagged:
            sids.append((self.tag.encode(), self.tagged))
        if not sids:
            return bytes(8)
        tagged = any(t for t, _ in sids)
        n = len(sids)
        raw = ((1 << 56) | (n << 8) | 1) if tagged else n
        assert self.sid is not None
        return S.gtid_set_encoding.build({"n_sids_raw": raw, "sids": [
            {"uuid": self.sid.bytes, "tag": t if tagged else None, "n_intervals": 1,
             "intervals": [{"start": 1, "end": last + 1}]} for t, last in sorted(sids)]},
            tagged=tagged)

    def text(self) -> str:
        if self.sid is None:
            return ""
        parts = []
        if self.untagged:
            parts.append(f"{self.sid}:1-{self.untagged}")
        if self.tag and self.tagged:
            parts.append(f"{self.sid}:{self.tag}:1-{self.tagged}")
        return ",".join(parts)


class Output:
    """Where the source stream goes."""

    files: list[Path]

    def source_start(self, name: str, fde: bytes, prev: bytes, ts: int) -> None: ...
    def transaction(self, raw: bytes) -> None: ...
    def source_rotate(self, raw: bytes) -> None: ...
    def source_end(self, raw: bytes) -> None: ...
    def close(self, in_use: bool) -> None: ...

    @property
    def bytes_written(self) -> int:
        return 0


class BinlogOutput(Output):
    """The source's own binlog files, ``<basename>.000001`` ... and ``<basename>.index``."""

    def __init__(self, directory: Path, basename: str) -> None:
        self.dir = directory
        self.basename = basename
        self.files = []
        self.fh: BinaryIO | None = None
        self._done = 0
        self._written = 0

    def source_start(self, name: str, fde: bytes, prev: bytes, ts: int) -> None:
        path = self.dir / name
        self.files.append(path)
        self.fh = open(path, "wb")  # noqa: SIM115 - closed at rotate/close
        self.fh.write(b"\xfebin" + fde + prev)
        self._written += 4 + len(fde) + len(prev)

    def transaction(self, raw: bytes) -> None:
        assert self.fh is not None
        self.fh.write(raw)
        self._written += len(raw)

    def source_rotate(self, raw: bytes) -> None:
        self.source_end(raw)

    def source_end(self, raw: bytes) -> None:
        assert self.fh is not None
        self.fh.write(raw)
        self._written += len(raw)
        self.fh.close()
        self.fh = None

    def close(self, in_use: bool) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None
        if in_use and self.files:
            # the active file keeps LOG_EVENT_BINLOG_IN_USE_F (its CRC ignores the flag)
            with open(self.files[-1], "r+b") as fh:
                at = S.HEADER.span("flags", 4)          # after the 4-byte magic
                fh.seek(at.start)
                flags = int.from_bytes(fh.read(at.stop - at.start), "little")
                fh.seek(at.start)
                fh.write((flags | IN_USE).to_bytes(at.stop - at.start, "little"))
        (self.dir / f"{self.basename}.index").write_text(
            "".join(f"./{p.name}\n" for p in self.files))

    @property
    def bytes_written(self) -> int:
        return self._written


class RelayOutput(Output):
    """A replica's relay log of the source stream (format-spec §1.2; 8.0.28 relay files)."""

    def __init__(self, directory: Path, basename: str, fmt: ServerFormat, server_version: str,
                 replica_server_id: int, max_size: int, retrieved: GtidState) -> None:
        self.dir = directory
        self.basename = basename
        self.fmt = fmt
        self.server_version = server_version
        self.server_id = replica_server_id
        self.max_size = max_size
        self.retrieved = retrieved
        self.files = []
        self.fh: BinaryIO | None = None
        self.pos = 0
        self._written = 0
        self.source_fde: bytes | None = None
        self.source_name = ""
        self.ts = 0

    def _write(self, raw: bytes) -> None:
        assert self.fh is not None
        self.fh.write(raw)
        self.pos += len(raw)
        self._written += len(raw)

    def _open(self, ts: int) -> None:
        name = f"{self.basename}.{len(self.files) + 1:06d}"
        path = self.dir / name
        self.files.append(path)
        self.fh = open(path, "wb")  # noqa: SIM115 - closed at rotation/close
        self.pos = 0
        self._write(b"\xfebin")
        body = fde_body(self.fmt, self.server_version, 0)
        self._write(frame_fde(ts, self.server_id, RELAY, body, self.pos + _FRAME + len(body)))
        prev = self.retrieved.previous_gtids_body()
        self._write(frame(ts, EventType.PREVIOUS_GTIDS_LOG_EVENT, self.server_id,
                          IGNORABLE | RELAY, prev, self.pos + _FRAME + len(prev)))

    def source_start(self, name: str, fde: bytes, prev: bytes, ts: int) -> None:
        self.ts = ts
        first = self.fh is None
        if first:
            self._open(ts)
            # the dump thread's fake Rotate: timestamp 0, log_pos 0, artificial
            body = _ROTATE_POS.pack(4) + name.encode()
            self._write(frame(0, EventType.ROTATE_EVENT, _server_id(fde), ARTIFICIAL, body, 0))
        # the source FDE as the dump thread sends it: IN_USE cleared (same CRC)
        fde = _with_flags(fde, int.from_bytes(fde[_FLAGS], "little") & ~IN_USE)
        self.source_fde = fde
        self._write(fde)
        # the receiver writes a server_id-0 Rotate instead of the source's Previous_gtids
        body = _ROTATE_POS.pack(4 + len(fde) + len(prev)) + name.encode()
        log_pos = 0 if self.fmt.has_commit_ts else self.pos + _FRAME + len(body)
        self._write(frame(ts, EventType.ROTATE_EVENT, 0, 0, body, log_pos))
        self.source_name = name

    def transaction(self, raw: bytes) -> None:
        self._write(raw)
        if self.pos >= self.max_size:
            self._rotate_relay()

    def _rotate_relay(self) -> None:
        name = f"{self.basename}.{len(self.files) + 1:06d}"
        body = _ROTATE_POS.pack(4) + name.encode()
        self._write(frame(self.ts, EventType.ROTATE_EVENT, self.server_id, RELAY, body,
                          self.pos + _FRAME + len(body)))
        assert self.fh is not None
        self.fh.close()
        self._open(self.ts)
        # a copy of the source's FDE: artificial, created 0, log_pos 0
        assert self.source_fde is not None
        f = self.source_fde
        ct = S.FDE_HEAD.span("create_timestamp", HEADER_LEN)   # zeroed in the relay's copy
        body = f[HEADER_LEN:ct.start] + bytes(ct.stop - ct.start) + f[ct.stop:-CHECKSUM_LEN]
        self._write(frame(_u32(f, S.HEADER.offsets["timestamp"]),
                          EventType.FORMAT_DESCRIPTION_EVENT, _server_id(f), ARTIFICIAL, body, 0))

    def source_rotate(self, raw: bytes) -> None:
        self._write(raw)

    def source_end(self, raw: bytes) -> None:
        self._write(raw)

    def close(self, in_use: bool) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None
        (self.dir / f"{self.basename}.index").write_text(
            "".join(f"./{p.name}\n" for p in self.files))

    @property
    def bytes_written(self) -> int:
        return self._written


def _server_id(raw: bytes) -> int:
    return _u32(raw, S.HEADER.offsets["server_id"])


def _u32(raw: bytes, at: int) -> int:
    return _U32.unpack_from(raw, at)[0]


class SourceLog:
    """The source server's binlog stream: files, positions, the per-file clock."""

    def __init__(self, out: Output, fmt: ServerFormat, *, server_id: int, server_version: str,
                 server_version_int: int, gtids: GtidState, max_size: int,
                 basename: str = "binlog", encoding: str = "mysql") -> None:
        self.out = out
        self.fmt = fmt
        self.server_id = server_id
        self.server_version = server_version
        self.version_int = server_version_int
        self.gtids = gtids
        self.max_size = max_size
        self.basename = basename
        self.encoding = encoding
        self.file_no = 0
        self.pos = 0
        self.offset = 0                 # max_committed.offset: absolute seq at the last rotation
        self.name = ""
        sid = gtids.sid
        self.sid_bytes = sid.bytes if sid is not None else bytes(16)
        self.gtid_type = EventType.GTID_LOG_EVENT if sid is not None \
            else EventType.ANONYMOUS_GTID_LOG_EVENT
        self.version_bytes = _U32.pack(server_version_int)

    # ---- files ----

    def open(self, ts: int, first: bool) -> None:
        self.file_no += 1
        self.name = f"{self.basename}.{self.file_no:06d}"
        body = fde_body(self.fmt, self.server_version, ts if first else 0)
        fde = frame_fde(ts, self.server_id, 0, body, 4 + _FRAME + len(body))
        self.pos = 4 + len(fde)
        prev = self.gtids.previous_gtids_body()
        pg = frame(ts, EventType.PREVIOUS_GTIDS_LOG_EVENT, self.server_id, IGNORABLE, prev,
                   self.pos + _FRAME + len(prev))
        self.pos += len(pg)
        self.out.source_start(self.name, fde, pg, ts)

    def rotate_if_full(self, ts: int, abs_seq: int) -> bool:
        """After a commit group: rotate when the file reached max_binlog_size."""
        if self.pos < self.max_size:
            return False
        nxt = f"{self.basename}.{self.file_no + 1:06d}"
        body = _ROTATE_POS.pack(4) + nxt.encode()
        self.out.source_rotate(frame(ts, EventType.ROTATE_EVENT, self.server_id, 0, body,
                                     self.pos + _FRAME + len(body)))
        self.offset = abs_seq
        self.open(ts, first=False)
        return True

    def stop(self, ts: int, in_use: bool) -> None:
        if in_use:
            self.out.close(in_use=True)
            return
        self.out.source_end(frame(ts, EventType.STOP_EVENT, self.server_id, 0, b"",
                                  self.pos + _FRAME))
        self.out.close(in_use=False)

    def relative(self, lc_abs: int, seq_abs: int) -> tuple[int, int]:
        """(last_committed, sequence_number) as written in the current file (§6a step 3)."""
        off = self.offset
        return (lc_abs - off if lc_abs > off else 0), seq_abs - off

    # ---- one transaction ----

    def transaction(self, events: list[tuple[int, int, int, bytes]], *, ts: int, gno: int,
                    tag: str | None, lc: int, sn: int, ict_us: int, gtid_flags: int,
                    compress: object = None) -> tuple[int, int]:
        """Frame ``events`` ((timestamp, type, flags, body)) behind their GTID event.

        :param compress: a zstandard compressor: write one Transaction_payload.
        :returns: (start offset, end offset) of the transaction in its file.
        """
        sid = self.server_id
        if compress is not None:
            inner = b"".join(_HDR.pack(t, tc, sid, HEADER_LEN + len(b), 0, fl) + b
                             for t, tc, fl, b in events)
            events = [(ts, EventType.TRANSACTION_PAYLOAD_EVENT, 0,
                       payload_body(inner, compress))]
        others = 0
        for e in events:
            others += _FRAME + len(e[3])
        gtid = self._gtid(others, gno, tag, lc, sn, ict_us, gtid_flags)
        start = self.pos
        pos = start + len(gtid) + _FRAME
        parts = [frame(ts, self.gtid_type if tag is None else EventType.GTID_TAGGED_LOG_EVENT,
                       sid, 0, gtid, pos)]
        for t, tc, fl, body in events:
            pos += _FRAME + len(body)
            parts.append(frame(t, tc, sid, fl, body, pos))
        self.pos = pos
        self.out.transaction(b"".join(parts))
        return start, pos

    def _gtid(self, others: int, gno: int, tag: str | None, lc: int, sn: int, ict: int,
              flags: int) -> bytes:
        fmt = self.fmt
        if tag is not None:
            body = GtidBody(flags, self.gtids.sid, gno, tag, None, lc, sn, ict, ict, 0,
                            self.version_int, self.version_int)
            return encode_gtid_tagged_body(body, other_events_size=others, crc=True)
        if self.gtids.sid is None:
            gno = 0
        if not fmt.has_commit_ts:
            return _GTID_HEAD.pack(flags, self.sid_bytes, gno, 2, lc, sn)
        if self.encoding != "mysql":
            body = GtidBody(flags, self.gtids.sid or uuid.UUID(int=0), gno, None, 2, lc, sn,
                            ict, ict, 0, self.version_int, self.version_int)
            probe = encode_gtid_body(body, encoding=self.encoding)
            length = transaction_length_for(others, HEADER_LEN + len(probe) - 1 + CHECKSUM_LEN)
            from dataclasses import replace
            return encode_gtid_body(replace(body, transaction_length=length),
                                    encoding=self.encoding)
        length = transaction_length_for(others, 76)
        return b"".join((_GTID_HEAD.pack(flags, self.sid_bytes, gno, 2, lc, sn),
                         ict.to_bytes(7, "little"), S.encode_packed_int(length),
                         self.version_bytes))


def payload_body(plaintext: bytes, compressor) -> bytes:  # type: ignore[no-untyped-def]
    """Transaction_payload body: TLV header (compression ZSTD, sizes; 8.0 order 2, 3, 1, 0)."""
    data = compressor.compress(plaintext)
    enc = S.encode_packed_int
    header = b"".join(enc(t) + enc(len(enc(v))) + enc(v)
                      for t, v in ((2, 0), (3, len(plaintext)), (1, len(data))))
    return header + b"\x00" + data


def stale_logs(directory: Path, basename: str) -> list[Path]:
    """The ``basename.NNNNNN`` files already in ``directory`` (a previous run's), sorted."""
    if not directory.is_dir():
        return []
    return sorted(directory.glob(f"{basename}.[0-9][0-9][0-9][0-9][0-9][0-9]"))
