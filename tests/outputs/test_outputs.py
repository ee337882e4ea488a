"""Outputs never destroy (issue #19): every output option refuses an input, a link to one and
an existing file without --force; writes are atomic with mode 0666 & ~umask; certify --output
is all-or-nothing at rename time; I/O errors are one line and exit 8."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

import pytest

from repltool import outputs
from repltool.cli.exitcodes import ExitStatus
from repltool.synth import write_sample


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def state(d: Path) -> dict[str, str]:
    """Every entry of ``d`` (hidden ones too) -> content hash (or the link target)."""
    out = {}
    for p in sorted(d.iterdir()):
        out[p.name] = ("-> " + os.readlink(p)) if p.is_symlink() else \
            "<dir>" if p.is_dir() else sha(p)
    return out


@pytest.fixture
def logs(tmp_path: Path) -> list[Path]:
    return write_sample(tmp_path / "in", transactions=40)


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("repltool: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---- every output option: (name, args building the command for a target path) ----

def _junit(target, logs, force=()):
    return ("check", "--junit", target, *force, *logs)


def _render(target, logs, force=()):
    return ("explain", "--render", target, *force, *logs)


def _plot(target, logs, force=()):
    return ("schedule", "--workers", "1,2", "--plot", target, *force, *logs)


FILE_OPTIONS = {"check --junit": (_junit, ".xml", {0, 1}),
                "explain --render": (_render, ".svg", {0}),
                "schedule --plot": (_plot, ".svg", {0})}


@pytest.mark.parametrize("option", FILE_OPTIONS)
def test_a_file_output_never_replaces_an_input(cli, logs, tmp_path: Path, option: str) -> None:
    build, suffix, ok = FILE_OPTIONS[option]
    victim = logs[0].with_name(f"binlog{suffix}")        # an input named like an output
    logs[0].rename(victim)
    logs = [victim, logs[1]]
    before = [sha(p) for p in logs]
    # the input itself, also with --force
    for force in ((), ("--force",)):
        _, err = cli(*build(logs[0], logs, force), expect=2)
        assert "is the input" in one_line_error(err)
    # a symbolic link and a hard link to an input (named like an output)
    sym = tmp_path / f"sym{suffix}"
    sym.symlink_to(logs[1])
    hard = tmp_path / f"hard{suffix}"
    os.link(logs[1], hard)
    for target, how in ((sym, "is a link to the input"), (hard, "is the same file as the input")):
        _, err = cli(*build(target, logs, ("--force",)), expect=2)
        assert how in one_line_error(err)
    assert [sha(p) for p in logs] == before
    assert sym.is_symlink() and os.path.samefile(hard, logs[1])


@pytest.mark.parametrize("option", FILE_OPTIONS)
def test_a_file_output_replaces_an_existing_file_only_with_force(cli, logs, tmp_path: Path,
                                                                 option: str) -> None:
    build, suffix, ok = FILE_OPTIONS[option]
    target = tmp_path / f"report{suffix}"
    target.write_text("precious")
    code = 2
    _, err = cli(*build(target, logs), expect=code)
    assert "exists; --force replaces it" in one_line_error(err)
    assert target.read_text() == "precious"
    from repltool.cli import run
    assert run([str(a) for a in build(target, logs, ("--force",))]) in ok
    assert target.read_text() != "precious" and target.stat().st_size > 0
    # a symbolic link to some other file is replaced, never written through
    other = tmp_path / "other.txt"
    other.write_text("elsewhere")
    link = tmp_path / f"link{suffix}"
    link.symlink_to(other)
    cli(*build(link, logs), expect=2)
    assert run([str(a) for a in build(link, logs, ("--force",))]) in ok
    assert not link.is_symlink() and other.read_text() == "elsewhere"
    assert not [p for p in tmp_path.iterdir() if ".repltool-" in p.name]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_get_0666_minus_umask(cli, logs, tmp_path: Path, umask: int, mode: int) -> None:
    """#16: the JUnit report was 0600 (mkstemp); every output now follows the umask."""
    old = os.umask(umask)
    try:
        cli("check", "--junit", tmp_path / "r.xml", *logs)
        cli("certify", "--pk-only", "--output", tmp_path / "out", *logs)
        cli("sample", "-o", tmp_path / "s")
    finally:
        os.umask(old)
    files = [tmp_path / "r.xml", *(tmp_path / "out").iterdir(), *(tmp_path / "s").iterdir()]
    assert len(files) == 6
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {mode}


# ---- directory outputs ----

def test_certify_output_refuses_inputs_links_and_existing_copies(cli, logs,
                                                                  tmp_path: Path) -> None:
    out = tmp_path / "out"
    _, err = cli("certify", "--pk-only", "--output", logs[0].parent, *logs, expect=2)
    assert "is the directory of input" in one_line_error(err)
    out.mkdir()
    (out / logs[0].name).symlink_to(logs[0])          # a link in DIR onto an input
    _, err = cli("certify", "--pk-only", "--output", out, "--force", *logs, expect=2)
    assert "is a link to the input" in one_line_error(err)
    (out / logs[0].name).unlink()
    (out / logs[1].name).write_text("an earlier copy")
    _, err = cli("certify", "--pk-only", "--output", out, *logs, expect=2)
    assert "exists; --force replaces it" in one_line_error(err)
    assert state(out) == {logs[1].name: sha(out / logs[1].name)}
    cli("certify", "--pk-only", "--output", out, "--force", *logs)
    assert sorted(state(out)) == sorted(p.name for p in logs)
    assert (out / logs[1].name).read_bytes()[:4] == b"\xfebin"


def test_sample_and_synth_refuse_an_earlier_run_without_force(cli, tmp_path: Path) -> None:
    d = tmp_path / "d"
    cli("sample", "-o", d)
    before = state(d)
    _, err = cli("sample", "-o", d, expect=2)
    assert "binlog.000001: file exists; --force replaces it" in one_line_error(err)
    _, err = cli("synth", "-o", d, "-n", "20", expect=2)
    assert "binlog.000001" in err and "--force" in err
    assert state(d) == before
    # an input of another command is never replaced by synth --force: it renames new files
    cli("synth", "-o", d, "-n", "20", "--force", "--seed", "5")
    after = state(d)
    assert after["binlog.000001"] != before["binlog.000001"]
    assert sorted(after) == ["binlog.000001", "binlog.index", "ground-truth.json", "schema.sql"]
    cli("sample", "-o", d, "--force")
    assert state(d)["binlog.000002"] == before["binlog.000002"]


def _failing_replace(fail_at: int, out: Path):
    calls = [0]
    real = os.replace

    def replace(src, dst, *a, **k):  # type: ignore[no-untyped-def]
        # only the renames from staging into the output directory count (not the
        # rewrite's into staging, nor the roll-back's)
        if Path(dst).parent == out and ".previous" not in str(src):
            calls[0] += 1
            if calls[0] == fail_at:
                raise OSError(errno.EIO, "Input/output error")
        return real(src, dst, *a, **k)
    return replace, calls


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_certify_output_renames_are_all_or_nothing(cli, tmp_path: Path, monkeypatch,
                                                   fail_at: int) -> None:
    """Three files, two of them replacing an earlier run's copies: whichever rename fails,
    the directory is left exactly as it was (earlier files restored, new ones removed)."""
    logs = write_sample(tmp_path / "a", transactions=40)
    third = write_sample(tmp_path / "b", transactions=30)[0].rename(tmp_path / "b" / "binlog.9")
    inputs = [*logs, third]
    out = tmp_path / "out"
    out.mkdir()
    (out / logs[0].name).write_bytes(b"old copy 1")
    (out / logs[1].name).write_bytes(b"old copy 2")
    before = state(out)
    replace, calls = _failing_replace(fail_at, out)
    monkeypatch.setattr(outputs.os, "replace", replace)
    _, err = cli("certify", "--pk-only", "--output", out, "--force", *inputs,
                 expect=ExitStatus.IO_ERROR)
    line = one_line_error(err)
    assert "cannot rename" in line and "restored" in line
    assert calls[0] == fail_at
    assert state(out) == before
    monkeypatch.undo()
    cli("certify", "--pk-only", "--output", out, "--force", *inputs)
    assert sorted(state(out)) == sorted(p.name for p in inputs)


def test_a_stale_staging_directory_is_removed_by_the_next_run(cli, logs, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    dead = 2 ** 22 + 12345                                # above pid_max: never alive
    stale = out / f"{outputs.STAGING_PREFIX}{dead}-abcd"
    stale.mkdir()
    (stale / logs[0].name).write_bytes(logs[0].read_bytes())     # complete-looking
    legacy = out / ".repltool-certify-x1y2"
    legacy.mkdir()
    _, err = cli("certify", "--pk-only", "--output", out, *logs)
    assert f"removed {stale}" in err and f"{legacy} is the staging directory" in err
    assert not stale.exists() and legacy.exists()


def test_the_output_directory_is_not_created_when_the_run_fails(cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.000001"
    bad.write_bytes(b"\xfebin" + bytes(30))
    out = tmp_path / "new" / "out"
    cli("certify", "--pk-only", "--output", out, bad, expect=3)
    assert not out.exists()


# ---- I/O errors: one line, exit 8 ----

def test_an_unwritable_output_is_exit_8(cli, logs, tmp_path: Path, monkeypatch) -> None:
    """A read-only directory (as root permissions do not stop us, the error is injected
    where the temporary file is created) and a full disk while writing."""
    real_open = os.open

    def read_only(path, flags, *a, **k):  # type: ignore[no-untyped-def]
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system", path)
        return real_open(path, flags, *a, **k)
    monkeypatch.setattr(outputs.os, "open", read_only)
    _, err = cli("check", "--junit", tmp_path / "r.xml", *logs, expect=ExitStatus.IO_ERROR)
    assert "Read-only file system" in one_line_error(err)
    _, err = cli("explain", "--render", tmp_path / "r.svg", *logs, expect=ExitStatus.IO_ERROR)
    assert "--render" in one_line_error(err)
    monkeypatch.undo()

    real_mkdir = os.mkdir

    def full(path, *a, **k):  # type: ignore[no-untyped-def]
        if outputs.STAGING_PREFIX in str(path):
            raise OSError(errno.ENOSPC, "No space left on device", path)
        return real_mkdir(path, *a, **k)
    monkeypatch.setattr(outputs.os, "mkdir", full)
    _, err = cli("sample", "-o", tmp_path / "s", expect=ExitStatus.IO_ERROR)
    assert "No space left on device" in one_line_error(err)
    assert not (tmp_path / "s").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_non_utf8_file_name_in_check_junit(cli, logs, tmp_path: Path) -> None:
    name = os.fsdecode(b"\xff\xfe.000001")
    odd = tmp_path / name
    odd.write_bytes(logs[0].read_bytes())
    report = tmp_path / os.fsdecode(b"r\xff.xml")
    out, _ = cli("check", "--format", "json", "--junit", report, odd)
    assert "\\udcff\\udcfe.000001" in out
    text = report.read_bytes().decode("utf-8")          # valid UTF-8 whatever the names
    assert "\\xff\\xfe.000001" in text


# ---- side inputs ----

def test_side_inputs_must_be_regular_bounded_files(cli, logs, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (("certify", "--schema", "/dev/zero"), ("certify", "--schema", fifo),
                 ("check", "--writesets", "/dev/zero"), ("check", "--writesets", fifo),
                 ("schedule", "--cost", "csv:/dev/zero"), ("schedule", "--cost", f"csv:{fifo}")):
        _, err = cli(*args, *logs, expect=2)
        line = one_line_error(err)
        assert "not a regular file" in line, line
    huge = tmp_path / "huge.sql"
    with open(huge, "wb") as fh:                          # sparse: no disk used
        fh.truncate((64 << 20) + 1)
    _, err = cli("certify", "--schema", huge, *logs, expect=2)
    assert "more than the 64 MiB" in one_line_error(err)


def test_deeply_nested_side_inputs_are_one_line(cli, logs, tmp_path: Path) -> None:
    deep_json = tmp_path / "ws.json"
    deep_json.write_text("[" * 200_000 + "]" * 200_000)
    _, err = cli("check", "--writesets", deep_json, *logs, expect=2)
    assert "nested too deeply" in one_line_error(err)
    deep_sql = tmp_path / "deep.sql"
    deep_sql.write_text("CREATE TABLE t (a INT DEFAULT " + "(" * 50_000 + "1" + ")" * 50_000
                        + ", PRIMARY KEY (a));\n")
    _, err = cli("certify", "--schema", deep_sql, *logs, expect=2)
    one_line_error(err)


def test_a_non_utf8_configuration_names_the_file(cli, logs, tmp_path: Path,
                                                 monkeypatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".repltool.toml").write_bytes(b"[check]\nignore = [\"\xff\"]\n")
    monkeypatch.chdir(tmp_path)
    _, err = cli("check", *logs, expect=2)
    line = one_line_error(err)
    assert str(tmp_path / ".repltool.toml") in line and "not UTF-8" in line


# ---- check's configuration search ----

def _ignore_all(d: Path) -> Path:
    p = d / ".repltool.toml"
    p.write_text('[check]\nignore = ["ALL"]\n')
    return p


def test_configuration_search_stops_at_the_repository_root(cli, tmp_path: Path,
                                                           monkeypatch) -> None:
    bad = tmp_path / "bad.000001"
    bad.write_bytes(b"not a binlog")
    _ignore_all(tmp_path)                                   # above the repository: ignored
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    out, err = cli("check", bad, expect=1)
    assert "S001" in out and "using configuration" not in err
    used = _ignore_all(repo)
    _, err = cli("check", "--format", "json", bad)
    assert f"repltool: using configuration {used}" in err


def test_configuration_others_can_write_is_ignored(cli, tmp_path: Path, monkeypatch) -> None:
    bad = tmp_path / "bad.000001"
    bad.write_bytes(b"not a binlog")
    shared = tmp_path / "shared"
    shared.mkdir()
    cfg = _ignore_all(shared)
    shared.chmod(0o777)                                     # world-writable, not sticky
    monkeypatch.chdir(shared)
    _, err = cli("check", bad, expect=1)
    assert f"ignoring configuration {cfg}: its directory {shared} is writable by every user" \
        in err
    shared.chmod(0o1777)                                    # /tmp-like, file is ours: used
    _, err = cli("check", bad)
    assert f"using configuration {cfg}" in err
    cfg.chmod(0o666)                                        # the file itself world-writable
    _, err = cli("check", bad, expect=1)
    assert "the file is writable by every user" in err
    shared.chmod(0o755)


def test_the_configuration_used_is_in_json_and_junit(cli, logs, tmp_path: Path,
                                                     monkeypatch) -> None:
    import json
    (tmp_path / ".git").mkdir()
    cfg = tmp_path / ".repltool.toml"
    cfg.write_text('[check]\nignore = ["C008"]\n')
    monkeypatch.chdir(tmp_path)
    out, _ = cli("check", "--format", "json", "--junit", tmp_path / "r.xml", *logs)
    assert json.loads(out)["configuration"] == str(cfg)
    import xmlschema
    xsd = Path(__file__).parents[1] / "check" / "junit.xsd"
    xmlschema.XMLSchema(str(xsd)).validate(str(tmp_path / "r.xml"))
    from xml.etree import ElementTree as ET
    root = ET.parse(tmp_path / "r.xml").getroot()
    notes = [e.text for e in root.findall("testsuite/system-out")]
    assert len(notes) == len(logs) and set(notes) == {f"configuration: {cfg}"}
    out, _ = cli("check", "--no-config", "--format", "json", *logs)
    assert json.loads(out)["configuration"] is None


# ---- absurd option values ----

@pytest.mark.parametrize("args, limit", [
    (("schedule", "--checkpoint-group", "99999999999"), "1<=x<=524280"),
    (("certify", "--members", "100000000"), "0<=x<=9"),
    (("synth", "-o", "x", "-n", "1", "--clients", "1000000000"), "1<=x<=100000"),
    (("synth", "-o", "x", "-n", "1", "--rows-per-table", "10000000000"), "1<=x<=100000000"),
])
def test_absurd_option_values_are_refused(cli, logs, args, limit) -> None:
    _, err = cli(*args, *([] if args[0] == "synth" else logs), expect=2)
    assert limit in err


def test_a_crash_far_beyond_the_log_ends(cli, logs) -> None:
    """--crash-at 1e308 counted 0.3 s checkpoint ticks up to 1e308: now they are skipped."""
    import json
    out, _ = cli("schedule", "--format", "json", "--workers", "2", "--crash-at", "1e308", *logs)
    rec = json.loads(out)["recovery"]
    assert rec["crash_time"] == 1e308 and rec["checkpoint_period"] == 0.3


# ---- a log that shrinks while it is read ----

def test_a_log_truncated_while_read_is_truncated_not_a_crc_error(tmp_path: Path) -> None:
    from repltool.binlog import read_events
    from repltool.binlog.reader import CHUNK
    from repltool.errors import TruncatedLog
    from repltool.synth import SynthOptions, generate
    log = generate(SynthOptions(out=tmp_path / "g", transactions=3000, ground_truth=False,
                                seed=2)).files[0]
    size = log.stat().st_size
    assert size > 2 * CHUNK
    events = read_events(str(log))
    first = next(events)
    os.truncate(log, CHUNK + 100)                          # while the reader holds it
    with pytest.raises(TruncatedLog) as info:
        for _ in events:
            pass
    assert first.type_code == 15
    assert "shrank" in str(info.value) and info.value.exit_code == 4


def test_an_io_error_reading_an_input_names_the_file_and_offset(cli, logs, monkeypatch) -> None:
    """EIO while a log is read (a failing disk, injected below the buffered reader of
    every engine: the general reader, the compiled scan, the fused write-set scan):
    one line ``FILE:OFFSET: cannot read the log: Input/output error``, exit 8."""
    from repltool.binlog import reader
    bad = str(logs[0])
    assert os.path.getsize(bad) > 6000
    fail_at = 3000

    class FailingDisk(reader.io.FileIO):  # type: ignore[name-defined, misc]
        def readinto(self, buffer):  # type: ignore[no-untyped-def]
            if self.name != bad:
                return super().readinto(buffer)
            pos = self.tell()
            if pos >= fail_at:
                raise OSError(errno.EIO, "Input/output error")
            return super().readinto(memoryview(buffer)[:fail_at - pos])

    def opener(fd, mode):  # type: ignore[no-untyped-def]
        f = FailingDisk(fd, mode)
        f.name = os.readlink(f"/proc/self/fd/{fd}")     # type: ignore[misc]
        return f
    monkeypatch.setattr(reader, "_RAW", opener)
    for argv in (["dump"], ["dump", "-v"], ["stats"], ["check"], ["dump", "--writesets"],
                 ["certify", "--pk-only"], ["schedule"]):
        _, err = cli(*argv, *logs, expect=ExitStatus.IO_ERROR)
        line = one_line_error(err)
        assert line == (f"repltool: error: {bad}:{fail_at}: cannot read the log: "
                        "Input/output error"), (argv, line)


def test_a_signal_right_after_the_staging_directory_is_made_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM arriving between creating the staging directory and recording it (the
    window a clean-clone CI run hit under load): deferred, then the directory is removed
    and :class:`outputs.Terminated` raised; the output directory is left as it was."""
    import signal
    out = tmp_path / "out"
    out.mkdir()
    (out / "kept").write_bytes(b"x")
    real_mkdir = os.mkdir
    made: list[str] = []

    def mkdir_then_signal(path, mode=0o777):
        real_mkdir(path, mode)
        made.append(os.fspath(path))
        os.kill(os.getpid(), signal.SIGTERM)        # handled at the next bytecode check

    monkeypatch.setattr(outputs.os, "mkdir", mkdir_then_signal)
    with outputs.sigterm_raises(), pytest.raises(outputs.Terminated):
        with outputs.OutputSet(out, ["a.bin"], inputs=[]):
            pytest.fail("the body must not run")
    assert made and made[0].startswith(str(out / outputs.STAGING_PREFIX))
    assert sorted(p.name for p in out.iterdir()) == ["kept"]
