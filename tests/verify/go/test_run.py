"""The Go runner's output parsing and command building (no subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.verify.go.run import go_command, parse_go_json

pytestmark = pytest.mark.unit


def _ev(**kw: str) -> str:
    return json.dumps(kw)


def test_go_json_a_failure_is_not_undone_by_a_later_pass_event() -> None:
    lines = [  # code under test printed "--- PASS: TestA" after TestA failed
        _ev(Action="run", Package="m/p", Test="TestA"),
        _ev(Action="output", Package="m/p", Test="TestA", Output="want 7\n"),
        _ev(Action="fail", Package="m/p", Test="TestA"),
        _ev(Action="pass", Package="m/p", Test="TestA"),
        _ev(Action="pass", Package="m/p", Test="TestB"),
    ]
    cases = parse_go_json("\n".join(lines))
    assert [(c.name, c.passed) for c in cases] == [("TestA", False), ("TestB", True)]


def test_go_json_counts_tests_and_subtests() -> None:
    lines = [
        _ev(Action="run", Package="m/p", Test="TestA"),
        _ev(Action="output", Package="m/p", Test="TestA", Output="ok\n"),
        _ev(Action="pass", Package="m/p", Test="TestA"),
        _ev(Action="output", Package="m/p", Test="TestB/sub", Output="boom\n"),
        _ev(Action="fail", Package="m/p", Test="TestB/sub"),
        _ev(Action="fail", Package="m/p", Test="TestB"),
        _ev(Action="fail", Package="m/p"),
    ]
    cases = parse_go_json("\n".join(lines))
    assert [(c.name, c.passed) for c in cases] == [
        ("TestA", True),
        ("TestB/sub", False),
        ("TestB", False),
    ]
    assert "boom" in cases[1].output


def test_go_build_failure_is_a_failing_case() -> None:
    lines = [
        _ev(Action="output", Package="m/p", Output="p.go:3: undefined: X\n"),
        _ev(Action="fail", Package="m/p"),
    ]
    cases = parse_go_json("\n".join(lines))
    assert len(cases) == 1 and not cases[0].passed and "undefined" in cases[0].output


def test_go_setup_failure_keeps_the_build_output_events() -> None:
    """go 1.24 reports why a package could not be set up in build-output events, before
    the package's own one-line "[setup failed]": the failing case shows the reason."""
    lines = [
        _ev(ImportPath="m/dep", Action="build-output", Output="# m/p\n"),
        _ev(ImportPath="m/dep", Action="build-output", Output="p.go:3:8: mkdir /c: denied\n"),
        _ev(ImportPath="m/dep", Action="build-fail"),
        _ev(Action="output", Package="m/p", Output="FAIL\tm/p [setup failed]\n"),
        _ev(Action="fail", Package="m/p", FailedBuild="m/dep"),
    ]
    (case,) = parse_go_json("\n".join(lines))
    assert not case.passed and "mkdir /c: denied" in case.output
    assert "[setup failed]" in case.output


def test_go_command_forms(tmp_path: Path) -> None:
    assert go_command("./pkg -run 'TestA|TestB'", tmp_path)[-2:] == ["-run", "TestA|TestB"]
    assert go_command("pkg", tmp_path)[4] == "./pkg"
    assert go_command("./x -run=TestZ", tmp_path)[-1] == "TestZ"
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a_test.go").write_text(
        "package p\nfunc TestOne(t *T) {}\nfunc TestTwo(t *T) {}\n"
    )
    cmd = go_command("p/a_test.go", tmp_path)
    assert cmd[4] == "./p" and cmd[-1] == "^(TestOne|TestTwo)$"
