"""The same option means the same thing everywhere: one size syntax; --format is an
output format (synth's server generation is --server-generation)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from repltool.cli.options import POSITIVE_SIZE, SIZE


@pytest.mark.parametrize("text, size", [
    ("1048576", 1 << 20), ("64k", 64 << 10), ("10M", 10 << 20), ("1.5MiB", 3 << 19),
    ("1G", 1 << 30), ("2GB", 2 << 30),
])
def test_one_size_syntax(text: str, size: int) -> None:
    assert SIZE.convert(text, None, None) == size
    assert POSITIVE_SIZE.convert(text, None, None) == size


@pytest.mark.parametrize("text", ["12Q", "ten", "-5M", ""])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(click.BadParameter):
        SIZE.convert(text, None, None)


def test_sizes_on_check_and_synth(cli, corpus: Path, tmp_path: Path) -> None:
    log = corpus / "mariadb" / "rotation" / "mysql-bin.000001"
    out, _ = cli("check", "--no-config", "--max-trx-size", "1.5MiB", log)
    assert "0 errors" in out
    out, _ = cli("check", "--no-config", "--format", "json", "--max-trx-size", "64k", log,
                 expect=1)
    assert '"T003"' in out
    cli("synth", "-o", tmp_path / "a", "-n", "20", "--max-binlog-size", "1.5MiB")
    _, err = cli("synth", "-o", tmp_path / "b", "-n", "20", "--max-binlog-size", "0", expect=2)
    assert "must be more than 0" in err


def test_synth_server_generation_and_the_old_format_name(cli, tmp_path: Path) -> None:
    _, err = cli("synth", "-o", tmp_path / "a", "-n", "20", "--server-generation", "5.7")
    assert "warning" not in err
    _, err = cli("synth", "-o", tmp_path / "b", "-n", "20", "--format", "5.7")
    assert "repltool: warning: synth --format is now --server-generation" in err
    assert (tmp_path / "a" / "binlog.000001").read_bytes()[:4] == b"\xfebin"
    _, err = cli("synth", "-o", tmp_path / "c", "-n", "20", "--format", "5.7",
                 "--server-generation", "8.0", expect=2)
    assert "give one" in err


def test_synth_output_and_the_old_out_name(cli, tmp_path: Path) -> None:
    """-o/--output is synth's output directory, as everywhere; --out still works, warned."""
    _, err = cli("synth", "--output", tmp_path / "a", "-n", "20")
    assert "warning" not in err and (tmp_path / "a" / "binlog.000001").is_file()
    _, err = cli("synth", "--out", tmp_path / "b", "-n", "20")
    assert "repltool: warning: synth --out is now -o/--output" in err
    assert (tmp_path / "b" / "binlog.000001").read_bytes() == \
        (tmp_path / "a" / "binlog.000001").read_bytes()
    _, err = cli("synth", "--out", tmp_path / "c", "-o", tmp_path / "d", "-n", "20", expect=2)
    assert "give one" in err
    _, err = cli("synth", "-n", "20", expect=2)
    assert "Missing option '-o' / '--output'" in err


def test_warnings_are_on_stderr_with_the_prefix(cli, corpus: Path, tmp_path: Path) -> None:
    """certify (its re-tag notes included) and explain: warnings never in stdout."""
    log = corpus / "mariadb" / "rotation" / "mysql-bin.000001"
    mysql = corpus / "mysql" / "mysql80" / "mysql-test__std_data__replicated-bin.000001"
    for args in (["certify", "--mode", "writeset", log],
                 ["certify", "--mode", "writeset", "--output", tmp_path / "out", "--pk-only",
                  mysql],
                 ["explain", "--mode", "writeset", log]):
        out, err = cli(*args)
        assert "warning:" not in out.lower() and "note:" not in out
        lines = [line for line in err.splitlines() if "warning:" in line]
        assert all(line.startswith("repltool: warning: ") for line in lines)
        if "--pk-only" not in args:
            assert lines            # no --schema: the missing UNIQUE/FOREIGN keys


def test_check_takes_no_verify_binlog_checksum(cli, corpus: Path) -> None:
    """As on the other commands: the damaged CRC32 (S003) is not reported."""
    bad = corpus / "mysql/mysql80/mysql-test__std_data__binlog_recovery__duplicate_xid.000001"
    out, _ = cli("check", "--no-config", bad, expect=1)
    assert " S003 error: XID_EVENT: CRC32 mismatch" in out
    out, _ = cli("check", "--no-config", "--no-verify-binlog-checksum", bad)
    assert "S003" not in out.split("Checked")[0] and "0 errors" in out
