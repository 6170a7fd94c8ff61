"""pytest's JUnit XML report: per-test results, read only when it is a plain, sane file."""

from __future__ import annotations

import stat
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.verify.isolation.test_command import tail
from harness.verify.outcome import TestCase


def parse_junit(xml_text: str) -> list[TestCase]:
    """Per-test results from a JUnit XML file (skipped tests are left out)."""
    root = ET.fromstring(xml_text)
    cases: list[TestCase] = []
    for case in root.iter("testcase"):
        name = "::".join(p for p in (case.get("classname", ""), case.get("name", "")) if p)
        if case.find("skipped") is not None:
            continue
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is None:
            cases.append(TestCase(name=name, passed=True))
        else:
            text = (bad.get("message") or "") + "\n" + (bad.text or "")
            cases.append(
                TestCase(name=name, passed=False, output=tail(text.strip()), error=bad.tag)
            )
    return cases


JUNIT_CAP = 64 * 1024 * 1024


def read_junit(path: Path) -> list[TestCase]:
    """The report the run left, when it is a plain, sane file (a link, a huge or a
    malformed report counts as no report: the run reported nothing usable)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return []
    if not stat.S_ISREG(st.st_mode) or st.st_size > JUNIT_CAP:
        return []
    try:
        return parse_junit(path.read_text(errors="replace"))
    except ET.ParseError:
        return []
