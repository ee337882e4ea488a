"""A :class:`~repltool.check.model.CheckReport` as text, JSON, GitHub workflow commands, JUnit XML.

Plain data in, strings out: no terminal styling here (the CLI prints the strings).
Text from the files and their names is escaped for each format
(:mod:`repltool.escape`): a finding is always one line, the GitHub commands
and the JUnit XML are well-formed whatever the files hold; JSON keeps the raw
text (``json.dumps`` escapes it).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any
from xml.etree import ElementTree as ET

from ..escape import gh_data, gh_property, printable, xml_text
from .model import TOTAL, CheckReport, Finding
from .rules import RULES, Scope, Severity

FORMATS = ("text", "json", "github")


def summary_line(report: CheckReport) -> str:
    """``Checked 3 files (120 events, 40 transactions): 1 error, 2 warnings, 3 info.``"""
    n = len(report.files)
    events = sum(f.events for f in report.files)
    trx = sum(f.transactions for f in report.files)
    e, w, i = (report.count(s) for s in Severity)
    return (f"Checked {n} file{'s' * (n != 1)} ({events} events, {trx} transactions): "
            f"{e} error{'s' * (e != 1)}, {w} warning{'s' * (w != 1)}, {i} info.")


def finding_line(f: Finding) -> str:
    """``FILE:OFFSET RULE severity: message`` on one line (control characters of the file
    name and of the message shown as ``\\xNN``)."""
    return f"{printable(f.location)} {f.rule} {f.severity.value}: {printable(f.text)}"


def render_text(report: CheckReport) -> str:
    """One line per finding (``FILE:OFFSET RULE severity: message``), skipped rules, a summary."""
    lines = [finding_line(f) for f in report.findings]
    lines += [f"{code} skipped: {printable(reason)}" for code, reason in report.skipped.items()]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def report_to_dict(report: CheckReport) -> dict[str, Any]:
    """The JSON form (``--format json``); stable keys, version 1."""
    t = report.totals
    return {
        "version": 1,
        "exit_status": report.exit_status,
        "configuration": report.configuration,
        "summary": {"files": len(report.files),
                    **{s.value: report.count(s) for s in Severity},
                    "by_rule": report.by_rule()},
        "rules": list(report.rules),
        "skipped": dict(report.skipped),
        "totals": {"transactions_with_clock": t.clocked, "barriers": t.barriers,
                   "barrier_share": t.barrier_share, "critical_path": t.span,
                   "parallelism": t.parallelism},
        "files": [dataclasses.asdict(f) for f in report.files],
        "findings": [_finding_dict(f) for f in report.findings],
    }


def _finding_dict(f: Finding) -> dict[str, Any]:
    return {"rule": f.rule, "name": f.name, "severity": f.severity.value, "file": f.file,
            "offset": f.offset, "event_type": f.event_type, "message": f.message}


def render_json(report: CheckReport) -> str:
    return json.dumps(report_to_dict(report), indent=2) + "\n"


# ---- GitHub Actions workflow commands ----

_GH_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render_github(report: CheckReport) -> str:
    """``::error file=F,title=RULE::message`` per finding (warning/notice by severity).

    The offset is part of the message (binary files have no lines);
    TOTAL findings and skipped rules carry no ``file``.
    """
    lines = []
    for f in report.findings:
        props = [] if f.file == TOTAL else [f"file={gh_property(f.file)}"]
        props.append(f"title={gh_property(f'{f.rule} {f.name}')}")
        lines.append(f"::{_GH_LEVEL[f.severity]} {','.join(props)}::"
                     f"{gh_data(f'{f.location} {f.text}')}")
    for code, reason in report.skipped.items():
        lines.append(f"::notice title={gh_property(f'{code} skipped')}::"
                     f"{gh_data(f'{code} {RULES[code].name} skipped: {reason}')}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


# ---- JUnit XML (the Jenkins / Ant dialect) ----

def render_junit(report: CheckReport) -> str:
    """One ``testsuite`` per file (plus TOTAL for T001/T002), one ``testcase`` per file × rule.

    Error-level findings are ``failure``; a rule that could not run is
    ``skipped``; warnings and info findings go to the testcase's ``system-out``.
    The configuration file used, if any, is in each suite's ``system-out``
    (``configuration: FILE``).
    """
    root = ET.Element("testsuites", name="repltool check")
    by_key: dict[tuple[str, str], list[Finding]] = {}
    for f in report.findings:
        by_key.setdefault((f.file, f.rule), []).append(f)
    per_file = [c for c in RULES if RULES[c].scope is Scope.FILE
                and (c in report.rules or c in report.skipped)]
    totals = [c for c in RULES if RULES[c].scope is Scope.TOTAL
              and (c in report.rules or c in report.skipped)]
    for fr in report.files:
        stop = (f"file could not be read ({fr.stopped} at offset {fr.stopped_at})"
                if fr.unreadable else None)
        _suite(root, fr.file, per_file, by_key, report, stop, fr.stopped)
    if totals:
        _suite(root, TOTAL, totals, by_key, report, None, None)
    _count(root, root.findall("testsuite"))
    ET.indent(root)
    # Every file-derived string went in printable(); xml_text is the backstop
    # for characters XML 1.0 does not allow at all.
    return xml_text('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode")
                    + "\n")


def _suite(root: ET.Element, file: str, codes: list[str],
           by_key: dict[tuple[str, str], list[Finding]], report: CheckReport,
           stop: str | None, stop_rule: str | None) -> None:
    suite = ET.SubElement(root, "testsuite", name=printable(file))
    for code in codes:
        case = ET.SubElement(suite, "testcase", name=f"{code} {RULES[code].name}",
                             classname=printable(file), time="0")
        found = by_key.get((file, code), [])
        errors = [f for f in found if f.severity is Severity.ERROR]
        reason = report.skipped.get(code) or (stop if code != stop_rule else None)
        if errors:
            first = errors[0].text
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            fail = ET.SubElement(case, "failure", message=printable(first + more), type=code)
            fail.text = "\n".join(finding_line(f) for f in errors)
        elif reason is not None and not found:
            ET.SubElement(case, "skipped", message=printable(reason))
        others = [f for f in found if f.severity is not Severity.ERROR]
        if others:
            ET.SubElement(case, "system-out").text = "\n".join(finding_line(f) for f in others)
    if report.configuration is not None:
        ET.SubElement(suite, "system-out").text = f"configuration: {printable(str(report.configuration))}"
    _count(suite, suite.findall("testcase"))


def _count(elem: ET.Element, children: list[ET.Element]) -> None:
    if elem.tag == "testsuites":
        keys = ("tests", "failures", "errors", "skipped")
        for k in keys:
            elem.set(k, str(sum(int(c.get(k, "0")) for c in children)))
        elem.set("time", "0")
        return
    elem.set("tests", str(len(children)))
    elem.set("failures", str(sum(1 for c in children if c.find("failure") is not None)))
    elem.set("errors", "0")
    elem.set("skipped", str(sum(1 for c in children if c.find("skipped") is not None)))
    elem.set("time", "0")
