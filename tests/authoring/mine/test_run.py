"""``harness mine``: the final targets of a draft (flaky tests left out, failing subtests on
their own) and a Go repository without go.mod."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.authoring.mine.draft import Draft, scenario_data
from harness.authoring.mine.prove import Proof
from harness.authoring.mine.run import final_targets, module_path
from harness.scenario.load import parse_scenario

pytestmark = pytest.mark.unit


def test_final_targets_exclude_flaky_tests() -> None:
    proof = Proof(
        f2p=[(".", "TestFix")],
        p2p=[(".", "TestOld/sub"), ("./b", "TestB")],
        flaky=[(".", "TestRace/one")],
        problem=None,
    )
    assert final_targets("go", proof, [".", "./b"]) == [
        ". -run '^(TestFix)$'",  # the fail-to-pass tests: one check they break clearly
        ". -run '^(TestFix|TestOld)$'",  # the whole package without the flaky test
        "./b",
    ]
    py = Proof(
        [("t.py", "t::test_fix[1]"), ("t.py", "t::test_fix[2]")],
        [("t.py", "t::test_old")],
        [("t.py", "t::test_race[1]")],
        None,
    )
    assert final_targets("pytest", py, ["t.py"]) == [
        "t.py -k 'test_fix'",
        "t.py -k 'not (test_race)'",
    ]
    new_only = Proof([("./n", "TestNew")], [], [], None)
    assert final_targets("go", new_only, ["./n"]) == ["./n -run '^(TestNew)$'"]


def test_failing_subtests_of_a_table_test_get_a_target_of_their_own() -> None:
    f2p = ["TestToml", "TestToml/decode", "TestToml/decode/dup-08", "TestNext/decode/a.b"]
    f2p.append("TestNext")
    f2p.append("TestNext/decode")
    table = Proof(
        f2p=[(".", n) for n in f2p],
        p2p=[(".", "TestToml/decode/ok-01"), (".", "TestToml/decode/ok-02"), (".", "TestOld")],
        flaky=[],
        problem=None,
    )
    # one failing case among a thousand passing ones is a clear break of its own target
    assert final_targets("go", table, ["."]) == [
        ". -run '^(TestNext|TestToml)$/^(decode)$/^(a\\.b|dup-08)$'",
        ".",
    ]
    # a narrowed target that does not fail before and pass after (a parent test that
    # asserts which of its subtests ran) falls back to the top-level names
    asked: list[str] = []
    assert final_targets("go", table, ["."], lambda t: bool(asked.append(t))) == [
        ". -run '^(TestNext|TestToml)$'",
        ".",
    ]
    assert asked == [". -run '^(TestNext|TestToml)$/^(decode)$/^(a\\.b|dup-08)$'"]
    # a top-level test that fails by itself (not through a subtest) runs whole
    direct = Proof([(".", "TestA")], [(".", "TestA/sub")], [], None)
    assert final_targets("go", direct, ["."]) == [". -run '^(TestA)$'", "."]
    # subtests without passing siblings need no narrowing
    alone = Proof([(".", "TestA"), (".", "TestA/x")], [(".", "TestB")], [], None)
    assert final_targets("go", alone, ["."]) == [". -run '^(TestA)$'", "."]


def test_a_go_repository_without_go_mod_is_go_with_a_module_of_its_path() -> None:
    """Issue 50: pflag before 2019 has no go.mod; its _test.go files made it "Python"."""
    assert module_path("github.com/spf13/pflag") == "github.com/spf13/pflag"
    assert module_path("/tmp/x/pflag.bundle") == "pflag"
    d = Draft("pflag-298182f", "go", "github.com/spf13/pflag", "a" * 40, "c" * 40,
              "2018-08-31", "fix", ["flag_test.go"], ["flag.go"], ["."],
              go_module="github.com/spf13/pflag")  # fmt: skip
    data = scenario_data(d)
    assert data["setup"]["exec"] == [
        "printf 'module github.com/spf13/pflag\\n\\ngo 1.19\\n' > go.mod"
    ]
    parse_scenario(yaml.safe_dump(data), Path("x.yml"))  # a loadable scenario
