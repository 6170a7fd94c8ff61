"""The grammar of a Go test target: a package, a pattern or a _test.go file and one final
-run; anything else refused with its fix."""

from __future__ import annotations

import re

import pytest

from harness.scenario.targets import GoTarget, TargetError, looks_like_go, parse_go_target


@pytest.mark.unit
def test_go_target_errors_carry_a_fix() -> None:
    with pytest.raises(TargetError) as info:
        parse_go_target("-run X ./pkg")
    assert info.value.fix


@pytest.mark.unit
def test_targets_and_their_run_patterns() -> None:
    assert parse_go_target(" ./pkg -run 'TestA|TestB' ") == GoTarget("./pkg", "TestA|TestB")
    assert parse_go_target("internal/x/*_test.go") == GoTarget("internal/x/*_test.go")
    assert parse_go_target("./...") == GoTarget("./...")
    assert parse_go_target("x_test.go -run=TestX") == GoTarget("x_test.go", "TestX")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("", "empty test target"),
        ("./a\n./b", "spans lines"),
        ("./pkg -v", "unknown flag '-v'"),
        ("./a ./b", "more than one target"),
        ("/abs/pkg", "absolute path"),
        ("./pkg/", "ends with '/'"),
        ("pkg/*.go", "does not end in _test.go"),
        ("pkg/*_test.go -run X", "has a -run"),
        ("main.go", "is not a _test.go file"),
        ("./.../x", "has ... before its end"),
        ("./... -run X", "has a -run"),
    ],
)
def test_a_malformed_target_is_refused_with_a_fix(entry: str, words: str) -> None:
    with pytest.raises(TargetError, match=re.escape(words)) as info:
        parse_go_target(entry)
    assert info.value.fix


@pytest.mark.unit
def test_entries_only_a_go_runner_takes() -> None:
    assert looks_like_go("./...") and looks_like_go("a_test.go") and looks_like_go("pkg -run X")
    assert not looks_like_go("tests/test_calc.py") and not looks_like_go("")
