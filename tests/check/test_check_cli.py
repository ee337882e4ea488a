"""`repltool check` in-process: exit statuses, formats, JUnit XML, config precedence."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from check_helpers import build_log

from repltool.cli import run

XSD = Path(__file__).with_name("junit.xsd")
BAD_CRC = "mysql/mysql80/mysql-test__std_data__binlog_recovery__duplicate_xid.000001"
NOT_BINLOG = "mysql/canal/parse__src__test__resources__binlog__tsdb__mysql-bin.000001"
COMPRESSED = "mysql/rmc/test-data__binlogs__transaction_compression.000001"


@pytest.fixture
def cli(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The suite's in-process CLI, run in a directory without configuration."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return cli


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return build_log(tmp_path / "binlog.000001", [(0, 1), (1, 2), (1, 3)])


def test_exit_status_clean_findings_usage(cli, clean: Path, corpus: Path, tmp_path: Path) -> None:
    out, _ = cli("check", clean)
    assert "C008 info" in out and "skipped" not in out      # W001/W002 run on the row events
    assert out.rstrip().endswith("0 errors, 0 warnings, 1 info.")
    out, _ = cli("check", clean, corpus / BAD_CRC, expect=1)
    assert f"{corpus / BAD_CRC}:672 S003 error: XID_EVENT: CRC32 mismatch" in out
    cli("check", clean, corpus / BAD_CRC, "--ignore", "S", expect=0)
    cli("check", corpus / BAD_CRC, "--severity", "S003=warning", expect=0)
    _, err = cli("check", tmp_path / "missing.000001", clean, expect=2)
    assert "cannot open" in err
    cli("check", expect=2)                                     # no FILE
    cli("check", clean, "--select", "Z", expect=2)
    cli("check", clean, "--severity", "S003=loud", expect=2)
    cli("check", clean, "--max-trx-size", "lots", expect=2)
    cli("check", clean, "--max-barrier-share", "150%", expect=2)


def test_help_documents_exit_statuses_and_parallelism(cli) -> None:
    out, _ = cli("check", "--help")
    flat = " ".join(out.split())
    assert "1 at least one finding at error level" in flat
    assert "2 usage error" in flat and "work / span" in flat


def test_list_rules(cli) -> None:
    out, _ = cli("check", "--list-rules")
    assert out.splitlines()[0].split()[:3] == ["S001", "error", "not-a-binlog"]
    assert "[enabled by --min-parallelism]" in out
    listed = json.loads(cli("check", "--list-rules", "--format", "json")[0])
    assert {r["code"] for r in listed} >= {"S001", "C001", "G001", "R001", "W001", "T003"}


def test_thresholds_on_the_command_line(cli, tmp_path: Path) -> None:
    log = build_log(tmp_path / "b.000001", [(0, 1), (1, 2), (2, 3), (3, 4)])
    out, _ = cli("check", log, "--min-parallelism", "1.5", expect=1)
    assert "TOTAL T001 error: parallelism (work/span) 1.000 < limit 1.5" in out
    cli("check", log, "--max-barrier-share", "30%")
    cli("check", log, "--max-barrier-share", "0.2", expect=1)
    out, _ = cli("check", log, "--max-trx-size", "100", expect=1)
    assert out.count("T003 error") == 4


def test_json_format(cli, clean: Path, corpus: Path) -> None:
    out, _ = cli("check", "--format", "json", corpus / NOT_BINLOG, clean, expect=1)
    doc = json.loads(out)
    assert doc["exit_status"] == 1 and doc["summary"]["error"] == 1
    assert doc["summary"]["by_rule"] == {"C008": 1, "S001": 1}
    assert doc["skipped"] == {}
    first = doc["findings"][0]
    assert (first["rule"], first["offset"], first["severity"]) == ("S001", 0, "error")
    assert doc["files"][0]["unreadable"] is True and doc["totals"]["parallelism"] == 1.5


def test_github_format(cli, clean: Path, corpus: Path) -> None:
    out, _ = cli("check", "--format", "github", corpus / BAD_CRC, clean, expect=1)
    lines = out.splitlines()
    err = next(line for line in lines if line.startswith("::error") and "S003" in line)
    assert err.startswith(f"::error file={corpus / BAD_CRC},title=S003 checksum-mismatch::")
    assert err.endswith("XID_EVENT: CRC32 mismatch: stored 0x993a46f5, computed 0x17b54116")
    assert any(line.startswith("::notice file=") and "title=C008 barrier-share" in line
               and "%25" in line for line in lines)              # '%' escaped
    assert not any("skipped" in line for line in lines)
    odd = build_log(Path(str(clean).replace("binlog", "a,b:c")), [(0, 1), (1, 3)])
    out, _ = cli("check", "--format", "github", odd, expect=1)
    assert "file=" + str(odd).replace(":", "%3A").replace(",", "%2C") + "," in out


def _validate_junit(path: Path) -> ET.Element:
    try:
        import xmlschema
    except ImportError:                 # structural check of what the XSD says
        root = ET.parse(path).getroot()
        assert root.tag == "testsuites"
        for suite in root:
            assert suite.tag == "testsuite"
            assert {"name", "tests", "failures", "errors", "skipped"} <= suite.attrib.keys()
            for case in suite:
                assert case.tag == "testcase" and {"name", "classname"} <= case.attrib.keys()
                kids = [c.tag for c in case]
                assert len([k for k in kids if k in ("failure", "error", "skipped")]) <= 1
                for c in case:
                    if c.tag == "failure":
                        assert {"message", "type"} <= c.attrib.keys()
                    if c.tag == "skipped":
                        assert "message" in c.attrib
        return root
    xmlschema.XMLSchema(str(XSD)).validate(str(path))
    return ET.parse(path).getroot()


def test_junit_report(cli, clean: Path, corpus: Path, tmp_path: Path) -> None:
    junit = tmp_path / "reports" / "check.xml"
    junit.parent.mkdir()
    cli("check", corpus / NOT_BINLOG, corpus / BAD_CRC, clean, "--min-parallelism", "1",
        "--junit", junit, expect=1)
    root = _validate_junit(junit)
    assert list(junit.parent.iterdir()) == [junit]            # no temporary file left
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == [str(corpus / NOT_BINLOG), str(corpus / BAD_CRC), str(clean), "TOTAL"]
    bad = suites[str(corpus / BAD_CRC)]
    case = bad.find("testcase[@name='S003 checksum-mismatch']")
    assert case.find("failure").get("type") == "S003"
    assert case.find("failure").get("message").startswith("XID_EVENT: CRC32 mismatch")
    w001 = bad.find("testcase[@name='W001 unsafe-parallelism']")
    assert w001 is not None and w001.find("skipped") is None and w001.find("failure") is None
    unreadable = suites[str(corpus / NOT_BINLOG)]
    assert unreadable.get("failures") == "1"
    assert unreadable.find("testcase[@name='C001 sequence-not-increasing']/skipped") \
        .get("message") == "file could not be read (S001 at offset 0)"
    ok = suites[str(clean)]
    assert ok.get("failures") == "0"
    assert "C008 info" in ok.find("testcase[@name='C008 barrier-share']/system-out").text
    assert [c.get("name") for c in suites["TOTAL"]] == ["T001 min-parallelism"]
    assert root.get("failures") == str(sum(int(s.get("failures")) for s in suites.values()))


def test_config_file_precedence(cli, tmp_path: Path, corpus: Path) -> None:
    work = Path.cwd()
    (work / "pyproject.toml").write_text(
        "[tool.repltool.check]\nignore = ['S003']\nmax-trx-size = '100'\n")
    bad = corpus / BAD_CRC
    out, _ = cli("check", bad, expect=1)                   # T003 from the file, S003 ignored
    assert "S003" not in out and "T003 error" in out
    cli("check", bad, "--max-trx-size", "1G")              # the command line wins
    cli("check", bad, "--no-config", expect=1)             # S003 again
    other = tmp_path / "strict.toml"
    other.write_text("[check]\nseverity = { C008 = 'error' }\n")
    out, _ = cli("check", "--config", other, build_log(tmp_path / "x.000001", [(0, 1)]),
                 expect=1)
    assert "C008 error" in out
    (work / "pyproject.toml").write_text("[tool.repltool.check]\nselect = 'S0'\nfoo = 1\n")
    _, err = cli("check", bad, expect=2)
    assert "pyproject.toml: unknown key(s) foo" in err


def test_writesets_file(cli, tmp_path: Path) -> None:
    log = build_log(tmp_path / "b.000001", [(0, 1), (1, 2), (1, 3)])
    from check_helpers import gtid_offsets
    offs = gtid_offsets(log)
    ws = tmp_path / "ws.json"
    ws.write_text(json.dumps({"transactions": [
        {"file": "b.000001", "offset": offs[1], "keys": ["t PRIMARY(1)"]},
        {"gtid": "3e11fa47-71ca-11e1-9e33-c80aa9429562:3", "keys": ["t PRIMARY(1)"],
         "missing_key_tables": ["test.nokey"]}]}))
    out, _ = cli("check", log, "--writesets", ws, expect=1)
    assert f"{log}:{offs[2]} W001 error" in out and "W002 warning" in out
    assert "skipped" not in out
    ws.write_text("{}")
    cli("check", log, "--writesets", ws, expect=2)
