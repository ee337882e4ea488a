"""Inputs built to exhaust time or memory, each run in the limited sandbox.

Every case states the claim that would drive an allocation (or the work) and
what bounds it.  The sandbox worker runs under RLIMIT_AS = 512 MiB and a
20-second bound per read; a MemoryError or a hang is a contract failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._build import (
    FDE_SOURCE, FDE_SOURCE_MARIADB, FDE_SOURCE_NO_CRC, fde_of, log, payload_body, zstd_zeros,
)


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def _contract(sandbox, path: str, extras: bool = True) -> None:
    result = sandbox.run("read", path=path, extras=extras)
    assert not result["failures"], "\n".join(result["failures"])


def _cli(sandbox, path: str, tmp_path: Path) -> None:
    for argv in (["dump", path], ["dump", "--keep-going", path],
                 ["stats", "--format", "json", "--keep-going", path],
                 ["check", "--junit", str(tmp_path / "junit.xml"), path]):
        result = sandbox.run("cli", argv=argv, inputs=[path], outputs=[str(tmp_path / "junit.xml")])
        assert not result["failures"], "\n".join(result["failures"])


def test_sandbox_limit_is_real(sandbox) -> None:
    """The worker really cannot allocate 600 MiB (else the memory checks prove nothing)."""
    assert sandbox.run("allocate", mib=600)["allocated"] == 0
    assert sandbox.run("allocate", mib=16)["allocated"] == 16 << 20


def test_resync_search_is_not_quadratic(corpus: Path, tmp_path: Path, sandbox) -> None:
    """keep-going after damage: every 32nd offset looks like an XID header claiming the
    rest of the file, so each candidate costs a CRC over the rest: O(size^2) (~minutes
    for 4 MiB) before the search got a work budget (reader._resync)."""
    fde = fde_of(corpus, FDE_SOURCE)
    n = 4 << 20
    head = b"\xfebin" + fde
    buf = bytearray(len(head) + n)
    buf[:len(head)] = head
    for off in range(len(head), len(buf) - 19, 32):
        size = len(buf) - off
        buf[off:off + 19] = (bytes(4) + b"\x10" + (1).to_bytes(4, "little")
                             + size.to_bytes(4, "little") + bytes(6))
    path = _write(tmp_path, "resync", bytes(buf))
    _contract(sandbox, path)
    _cli(sandbox, path, tmp_path)


def test_zstd_bomb_without_a_claim_stops_at_the_cap() -> None:
    """Without an uncompressed_size the cap is MySQL's 1 GiB limit: above the sandbox's
    512 MiB, so the mechanism is shown in-process with a 64 MiB cap and tracemalloc: the
    payload is refused as soon as it passes the cap, and the peak stays near it."""
    import tracemalloc

    from repltool.binlog.events import TransactionPayloadBody
    from repltool.binlog.reader import decompress_payload
    from repltool.errors import MalformedEvent
    from repltool.positions import Position
    bomb = zstd_zeros(700)
    body = TransactionPayloadBody(0, len(bomb), None, bomb)
    tracemalloc.start()
    try:
        with pytest.raises(MalformedEvent, match="more than"):
            decompress_payload(body, Position("bomb", 4), limit=64 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 160 << 20, f"peak {peak >> 20} MiB for a 64 MiB cap"


@pytest.mark.parametrize("claim", [1000, 1 << 60], ids=["small", "2^60"])
def test_zstd_bomb(corpus: Path, tmp_path: Path, sandbox, claim: int) -> None:
    """A ~20 KiB payload that inflates to 700 MiB: stopped at its uncompressed_size claim
    (reader.decompress_payload), not after allocating it."""
    bomb = zstd_zeros(700)
    data = log(fde_of(corpus, FDE_SOURCE), [(40, payload_body(bomb, uncompressed=claim))])
    path = _write(tmp_path, "bomb", data)
    _contract(sandbox, path)
    _cli(sandbox, path, tmp_path)


def test_many_tiny_zstd_frames(corpus: Path, tmp_path: Path, sandbox) -> None:
    """A payload of 200k empty zstd frames: linear time (each frame end used to copy the
    rest of the payload)."""
    import zstandard
    frame = zstandard.ZstdCompressor().compress(b"")
    comp = frame * 200_000
    data = log(fde_of(corpus, FDE_SOURCE), [(40, payload_body(comp, uncompressed=0))])
    path = _write(tmp_path, "frames", data)
    _contract(sandbox, path, extras=False)


@pytest.mark.parametrize("source, crc", [(FDE_SOURCE, True), (FDE_SOURCE_NO_CRC, False),
                                         (FDE_SOURCE_MARIADB, True)])
@pytest.mark.parametrize("tc, body", [
    (35, (1 << 40).to_bytes(8, "little") + bytes(40)),                 # Previous_gtids n_sids
    (35, b"\x01" + (1 << 40).to_bytes(6, "little") + b"\x01" + bytes(40)),   # tagged form
    (35, (1).to_bytes(8, "little") + bytes(16) + (1 << 40).to_bytes(8, "little")),  # intervals
    (163, b"\xff\xff\xff\x0f" + bytes(16)),                            # GTID_LIST count
    (19, bytes(6) + b"\x00\x00" + b"\x01d\x00\x01t\x00" + b"\xfe" + b"\xff" * 8),  # columns
    (19, bytes(8) + b"\x01d\x00\x01t\x00\x01\x03" + b"\xfe" + b"\xff" * 8),  # metadata len
    (30, bytes(8) + b"\x02\x00" + b"\xfe" + b"\xff" * 8 + bytes(8)),  # rows width
    (2, bytes(8) + b"\xff" + bytes(2) + b"\xff\xff" + b"x" * 40),      # db_len, status_vars_len
    (38, b"\x00" + bytes(4) + b"\xff" * 8 + b"x" * 10),                # XA lengths
    (14, b"\xff" * 4 + b"x" * 10),                                     # user var name length
    (14, b"\x01\x00\x00\x00a\x00\x00" + bytes(4) + b"\xff" * 4 + b"x"),  # user var value length
    (165, bytes(8) + b"\x00" + bytes(2) + b"\x00\x00" + b"\x00" + b"\x84\x40\x00\x00\x00xyz"),
    (166, bytes(8) + b"\x01" + b"\x01" + b"\x84\x40\x00\x00\x00xyz"),  # compressed rows 2^30
    (36, b"\x00" + bytes(4) + b"\x00" + b"\xff" * 12 + b"x"),          # Transaction_context
    (37, bytes(48) + b"\xff" * 4 + b"x"),                              # View_change
    (161, b"\xff" * 4 + b"x"),                                         # Binlog_checkpoint
    (40, payload_body(b"x" * 10, uncompressed=1 << 60)),
    (40, payload_body(b"x" * 10, uncompressed=10)[:-10] + b"\xfe" + b"\xff" * 8),
    (42, b"\x02" + b"\xff" * 9 + bytes(30)),                           # tagged GTID total_size
], ids=lambda v: v if isinstance(v, int) else None)
def test_huge_claims(corpus: Path, tmp_path: Path, sandbox, source: str, crc: bool, tc: int,
                     body: bytes) -> None:
    """Counts and lengths claiming 2^28..2^64 in a few bytes: refused, nothing allocated."""
    data = log(fde_of(corpus, source), [(tc, body)], crc=crc)
    path = _write(tmp_path, f"claim{tc}", data)
    _contract(sandbox, path)
