"""Review flags: the agent's files scanned for what forgers use; never the verdict (unit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.verify.outcome import TargetResult, VerifyOutcome
from harness.verify.report import render_text
from harness.verify.reviewflags import scan, scan_text
from harness.verify.verdict import decide

pytestmark = pytest.mark.unit


def test_forgers_tools_are_flagged_and_a_fix_is_not() -> None:
    forger = (
        "import sys, gc\nfrom unittest import mock\n"
        "def clamp(v, lo, hi):\n    f = sys._getframe(1)\n    return mock.ANY\n"
        "class A(int):\n    def __eq__(self, o):\n        return True\n"
        "_ = [o for o in gc.get_objects()]\n"
    )
    kinds = {line.split(": ", 1)[1] for line in scan_text("calc/__init__.py", forger)}
    assert {
        "frame introspection",
        "mock wildcards",
        "an __eq__ override",
        "gc introspection",
    } <= kinds
    fix = "import re\n\ndef clamp(v, lo, hi):\n    return max(lo, min(v, hi))\nre.compile('x')\n"
    assert scan_text("calc/__init__.py", fix) == []
    go = 'package m\n//line a.go:1\nimport _ "unsafe"\n//go:linkname x y\nvar s = runtime.Caller\n'
    found = scan_text("m/m.go", go)
    assert sorted(f.split(": ", 1)[0] for f in found) == ["m/m.go:2", "m/m.go:4", "m/m.go:5"]


def test_scan_reads_changed_files_only_and_no_link(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import dis\n")
    (tmp_path / "hidden_test.py").write_text("import dis\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    got = scan(tmp_path, ["a.py", "hidden_test.py", "link.py", "gone.py"], ["hidden_test.py"])
    assert got == ["a.py:1: bytecode introspection"]


def test_flags_never_change_the_verdict() -> None:
    ok = TargetResult(target="t", kind="required", ok=True)
    plain = VerifyOutcome(success=False, partial_score=None, rules=[], targets=[ok],
                          changed_files=[], hidden_files=[])  # fmt: skip
    flagged = plain.model_copy(update={"review_flags": ["a.py:1: frame introspection"]})
    assert decide(plain) == decide(flagged)


def test_the_report_text_shows_flags_and_no_control_code() -> None:
    report = {
        "scenario": "s", "agent": "a", "model": "m", "outcome": "failed", "success": False,
        "rules": [], "tests": [], "targets": [
            {"target": "x\x1b[1A\x1b[2Koutcome SUCCESS\r", "kind": "required", "ok": False,
             "passed": 0, "total": 1, "error": None}
        ],
        "review_flags": ["calc/\x1b[31m.py:1: frame introspection"],
    }  # fmt: skip
    text = render_text(report)
    assert "\x1b" not in text and "\r" not in text and "\\x1b[2K" in text
    assert "review flags" in text and "frame introspection" in text
