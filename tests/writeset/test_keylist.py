"""KeyList: a transaction's keys stored compactly give back the very same keys."""

from __future__ import annotations

import pickle
import warnings
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from repltool.writeset import WriteKey, key_string, load_schema, read_writesets, xxh64
from repltool.writeset.model import KeyList, key_prefix


def test_corpus_keys_round_trip(corpus: Path) -> None:
    """Every key of the MariaDB ``small`` set (with its schema: PRIMARY, UNIQUE and
    foreign-key parent keys over ints, strings and temporal columns), stored in one
    KeyList, comes back equal, in order, with its hash in ``hashes``."""
    root = corpus / "mariadb" / "small"
    files = sorted(root.glob("*-bin.0*")) or sorted(root.glob("*.0*"))
    assert files
    keys: list[WriteKey] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, ws in read_writesets(files, load_schema([root / "schema.sql"])):
            keys += ws.keys
    assert len(keys) > 5000 and any(k.parent for k in keys)
    assert len({k.index for k in keys}) > 1
    kl = KeyList(keys)
    assert len(kl) == len(keys) and list(kl.hashes) == [k.hash for k in keys]
    assert list(kl) == keys and kl == keys and kl[-1] == keys[-1] and kl[3:7] == tuple(keys[3:7])
    assert pickle.loads(pickle.dumps(kl)) == keys       # what --spark ships to its workers


def test_values_marshal_cannot_carry_are_kept_whole() -> None:
    """DECIMAL and temporal values, a bytearray (marshal would make it bytes), a key
    string that does not begin with its index's prefix and a long one."""
    def key(values: tuple, raw: bytes | None = None, parent: bool = False) -> WriteKey:
        data = raw if raw is not None else key_string("u", "d", "t", [repr(values).encode()])
        return WriteKey("d", "t", "u", values, data, xxh64(data), parent)

    keys = [key((Decimal("1.50"),)), key((datetime(2024, 1, 2, 3, 4, 5, 6),)),
            key((date(2024, 1, 2), timedelta(hours=-3))), key((bytearray(b"ab"),)),
            key((None, "é", b"\x00", 2.5, True, -(1 << 70)), parent=True),
            key((1,), raw=b"elsewhere"), key((2,), raw=key_prefix("u", "d", "t") + b"x" * 300)]
    kl = KeyList(keys)
    assert list(kl) == keys
    assert [type(v) for v in kl[3].values] == [bytearray]
    assert kl[5].key == b"elsewhere" and len(kl[6].key) == len(keys[6].key)
