"""Every test the hidden Go suite declares for a target must be reported by the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.verify.go.canary import GoCanary
from harness.verify.go.unrun import declared, reported, unrun, unselected
from harness.verify.outcome import TestCase as Case

pytestmark = pytest.mark.unit

BIRD = GoCanary(
    (("m", "m_test"), (".", "root_test")), "example.com/x", "zz_test.go", "Test_ab", "s"
)


def _tree(tmp_path: Path) -> list[str]:
    files = {
        "m/m_hidden_test.go": (
            'package m\n\nimport "testing"\n\n'
            "func TestAbs(t *testing.T) {}\nfunc TestAbsZero(tt *testing.T) {}\n"
            "func TestMain(m *testing.M) {}\nfunc Testlower(t *testing.T) {}\n"
            "func TestHelper(x int) {}\nfunc BenchmarkAbs(b *testing.B) {}\n"
        ),
        "m/tagged_test.go": "//go:build integration\n\npackage m\n\nfunc TestTag(t *testing.T)\n",
        "m/m_windows_test.go": "package m\n\nfunc TestWindows(t *testing.T) {}\n",
        "m/cgo_test.go": 'package m\n\nimport "C"\n\nfunc TestCgo(t *testing.T) {}\n',
        "root_test.go": "package x\n\nfunc TestRoot(t *testing.T) {}\n",
        "other/o_test.go": "package o\n\nfunc TestElsewhere(t *testing.T) {}\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return sorted(files)


def test_declared_tests_are_those_go_runs_for_sure_filtered_by_run(tmp_path: Path) -> None:
    hidden = _tree(tmp_path)
    assert declared(tmp_path, BIRD, hidden, None) == {
        "example.com/x/m.TestAbs",
        "example.com/x/m.TestAbsZero",
        "example.com/x.TestRoot",
    }  # not TestMain, lower-case, helpers, tagged, platform or cgo files, other packages
    assert declared(tmp_path, BIRD, hidden, "TestAbs$/sub") == {"example.com/x/m.TestAbs"}
    assert declared(tmp_path, BIRD, hidden, "^(TestAbsZero|TestRoot)$") == {
        "example.com/x/m.TestAbsZero",
        "example.com/x.TestRoot",
    }
    assert declared(tmp_path, BIRD, hidden, "(unclosed") == set()  # no requirement
    assert declared(tmp_path, BIRD, ["m"], "^TestAbs$") == {"example.com/x/m.TestAbs"}  # a folder


def _events(*items: tuple[str, str, str]) -> str:
    return "\n".join(json.dumps({"Package": p, "Test": t, "Action": a}) for p, t, a in items)


def test_a_run_without_a_declared_test_is_forged_and_skips_count_as_run(tmp_path: Path) -> None:
    hidden = _tree(tmp_path)
    canary_only = _events(
        ("example.com/x/m", "Test_ab", "fail"), ("example.com/x", "Test_ab", "fail")
    )
    why = unrun(tmp_path, BIRD, hidden, "^TestAbs", canary_only)
    assert (
        why == "results forged: example.com/x/m.TestAbs of the hidden suite did not run and 1 more"
    )
    honest = (
        canary_only
        + "\n"
        + _events(
            ("example.com/x/m", "TestAbs", "pass"),
            ("example.com/x/m", "TestAbs/case", "pass"),
            ("example.com/x/m", "TestAbsZero", "skip"),
        )
    )
    assert unrun(tmp_path, BIRD, hidden, "^TestAbs", honest) is None
    subtest_only = _events(("example.com/x/m", "TestAbs/case", "pass"))
    assert "example.com/x/m.TestAbs" not in reported(subtest_only)
    assert reported("not json\n{broken\n") == set()


def test_a_pass_the_target_s_run_does_not_select_is_forged() -> None:
    cases = [
        Case(name="TestAbsNegative", passed=False, error="failed"),
        Case(name="TestAbsNonNegative", passed=True),
    ]
    why = unselected(cases, "TestAbsNegative")
    assert why is not None and "TestAbsNonNegative passed" in why
    assert unselected(cases[:1], "TestAbsNegative") is None
    subtest = [Case(name="TestAbsNegative/zero", passed=True)]
    assert unselected(subtest, "^TestAbsNegative$/zero") is None
    assert unselected(cases, None) is None and unselected(cases, "(") is None
