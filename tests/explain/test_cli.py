"""``repltool explain`` in-process: text, JSON, DOT, Mermaid, --render, usage errors."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from . import logs

SMALL = ("--mode", "writeset", "--baseline", "serial")


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return logs.write(tmp_path_factory.mktemp("explain"))


@pytest.fixture
def dot_exe() -> str:
    """Graphviz's dot; scripts/test installs it (CI fails without it)."""
    exe = shutil.which("dot")
    if exe is None:
        if os.environ.get("REPLTOOL_REQUIRE_CORPUS", "") not in ("", "0"):
            pytest.fail("Graphviz's dot is missing (scripts/test installs it: apt-get "
                        "install graphviz)")
        pytest.skip("Graphviz's dot is not installed")
    return exe


def mariadb_args(corpus: Path) -> list[object]:
    small = corpus / "mariadb" / "small"
    return [*SMALL, "--schema", small / "schema.sql", small / "mysql-bin.000001"]


def test_text_for_a_log(cli, log) -> None:
    out, _ = cli("--no-color", "explain", *log)
    for text in ("critical path", "12 transactions", "average parallelism", "barriers",
                 "sequence_number gap", "file start", "commit-order"):
        assert text in out


def test_text_for_one_transaction(cli, log) -> None:
    out, _ = cli("--no-color", "explain", "--mode", "writeset", "--gtid", logs.gtid(4), *log)
    assert "waits for" in out and "longest path ending here" in out
    assert "key: test.t1 PRIMARY(2)" in out and "[parent, critical]" in out


def test_json_for_a_log(cli_json, log) -> None:
    data = cli_json("explain", "--mode", "writeset", *log)
    assert {"transactions", "critical_path", "critical_path_transactions", "top_serialisers",
            "parallelism", "total_cost", "critical_path_nodes", "mode", "cost_model",
            "edges", "reasons", "warnings"} <= data.keys()
    assert data["transactions"] == 17
    assert data["parallelism"] == pytest.approx(data["total_cost"] / data["critical_path"])
    assert len(data["critical_path_nodes"]) == data["critical_path_transactions"]
    s = data["top_serialisers"][0]
    assert set(s) == {"kind", "name", "edges", "critical_edges", "critical_cost",
                      "critical_share"}
    rows = [s for s in data["top_serialisers"] if s["kind"] == "row"]
    assert rows and rows[0]["name"].startswith("test.t1 PRIMARY(")


def test_json_for_one_transaction_by_gtid_and_by_position(cli_json, log) -> None:
    by_gtid = cli_json("explain", "--mode", "writeset", "--gtid", logs.gtid(4), *log)
    t = by_gtid["transaction"]
    assert t["gtid"] == logs.gtid(4) and t["clock"] == [2, 4]
    file, offset = t["pos"].rsplit(":", 1)
    by_pos = cli_json("explain", "--mode", "writeset", "--pos", f"{Path(file).name}:{offset}",
                      *log)
    assert by_pos == by_gtid
    inside = cli_json("explain", "--mode", "writeset", "--pos",
                      f"{file}:{int(offset) + 100}", *log)
    assert inside["transaction"]["gtid"] == logs.gtid(4)
    (wait,) = by_gtid["waits_for"]
    assert wait["reason"] == "key" and wait["keys"][0]["values"] == ["2"]
    assert wait["from"]["gtid"] == logs.gtid(2)
    assert by_gtid["chain"][-1]["gtid"] == logs.gtid(4)
    assert t["depth"] == by_gtid["chain"][-1]["finish"]


def test_dot_is_valid_graphviz(cli, log, dot_exe, tmp_path: Path) -> None:
    out, _ = cli("explain", "--mode", "writeset", "--format", "dot", *log)
    assert out.startswith("digraph explain {") and "->" in out
    done = subprocess.run([dot_exe, "-Tsvg"], input=out.encode(), capture_output=True)
    assert done.returncode == 0, done.stderr
    ET.fromstring(done.stdout)


def test_dot_window_on_mariadb(cli, corpus: Path, dot_exe) -> None:
    out, _ = cli("explain", "--format", "dot", "--around", "0-1-1968", "--depth", "1",
                 *mariadb_args(corpus))
    nodes = re.findall(r"^  n(\d+) \[", out, re.M)
    assert "1967" in nodes and len(nodes) <= 40
    assert 'label="key wl.t_pk PRIMARY(3)"' in out
    assert subprocess.run([dot_exe, "-Tsvg", "-o", os.devnull], input=out.encode()
                          ).returncode == 0


_MERMAID = [
    re.compile(r'^  n\d+\["[^"]*"\]$'),
    re.compile(r'^  n(\d+) (?:-->|==>|-\.->)\|"[^"]*"\| n(\d+)$'),
    re.compile(r"^  classDef \w+ [\w#:,.-]+$"),
    re.compile(r"^  class (?:n\d+,)*n\d+ \w+$"),
    re.compile(r"^  linkStyle (?:\d+,)*\d+ [\w#:,.-]+$"),
]


def check_mermaid(text: str) -> None:
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    defined: set[str] = set()
    edges = 0
    for line in lines[1:]:
        kinds = [i for i, rx in enumerate(_MERMAID) if rx.match(line)]
        assert kinds, f"not Mermaid flowchart syntax: {line!r}"
        if kinds[0] == 0:
            defined.add(line.split("[", 1)[0].strip())
        elif kinds[0] == 1:
            m = _MERMAID[1].match(line)
            assert m and {f"n{m.group(1)}", f"n{m.group(2)}"} <= defined, line
            edges += 1
        elif kinds[0] == 3:
            ids = line.split()[1].split(",")
            assert set(ids) <= defined, line
        elif kinds[0] == 4:
            assert all(int(i) < edges for i in line.split()[1].split(",")), line


def test_mermaid_is_valid_flowchart(cli, log, corpus: Path) -> None:
    out, _ = cli("explain", "--mode", "writeset", "--format", "mermaid", *log)
    check_mermaid(out)
    out, _ = cli("explain", "--format", "mermaid", "--gtid", "0-1-25", *mariadb_args(corpus))
    check_mermaid(out)
    assert "class n24 focus" in out


def test_render_writes_an_svg(cli, log, dot_exe, tmp_path: Path) -> None:
    target = tmp_path / "window.svg"
    cli("explain", "--mode", "writeset", "--around", logs.gtid(4), "--depth", "2",
        "--render", target, *log)
    root = ET.parse(target).getroot()
    assert root.tag.endswith("svg")
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert "n3" in titles          # the --around transaction (#3)
    png = tmp_path / "window.png"
    cli("explain", "--render", png, *log)
    assert png.read_bytes().startswith(b"\x89PNG")


def test_render_without_graphviz_is_a_usage_error(cli, log, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    _, err = cli("explain", "--render", tmp_path / "x.svg", *log, expect=2)
    assert "Graphviz's dot is not installed" in err and "apt-get install graphviz" in err
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.parametrize("args, message", [
    (("--render", "x.pdf"), "must end in .svg or .png"),
    (("--gtid", "u:1", "--pos", "4"), "not both"),
    (("--baseline", "serial"), "need a certify --mode"),
    (("--mode", "writeset", "--gc-every", "2"), "only apply to --mode group-replication"),
    (("--gtid", "nope:1"), "no applied transaction has this GTID"),
    (("--pos", "3"), "no applied transaction starts at or contains it"),
    (("--format", "dot", "--around", "#999"), "there are 17 transactions"),
])
def test_usage_errors(cli, log, args, message) -> None:
    _, err = cli("explain", *args, *log, expect=2)
    assert message in err


def test_recorded_mode_on_a_log_without_clocks_fails(cli, corpus: Path) -> None:
    _, err = cli("explain", corpus / "mariadb" / "small" / "mysql-bin.000001", expect=1)
    assert "carries no logical clock" in err
    assert "--mode writeset" in err               # explain's own option ...
    assert "--retag" not in err and "--compare" not in err   # ... not schedule's


def test_the_docs_picture_is_a_valid_svg_the_readme_shows() -> None:
    root_dir = Path(__file__).resolve().parents[2]
    svg = root_dir / "docs" / "explain-window.svg"
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert "docs/explain-window.svg" in (root_dir / "README.md").read_text()
    assert "/work/" not in svg.read_text()        # no machine paths in the picture
