"""``harness mine`` logic without the verifier: splitting, shapes, classification, the
funnel's counts, draft contents, and the ``tests-from`` / ``task-date`` scenario fields."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from harness.authoring.mine.draft import Draft, draft_name, scenario_data
from harness.authoring.mine.funnel import Entry, Funnel
from harness.authoring.mine.prove import Proof, Runs, cause_of, classify
from harness.authoring.mine.run import final_targets, module_path
from harness.authoring.mine.split import go_package, is_test, shape_problem, split, targets_for
from harness.authoring.mine.walk import Change, Commit, canonical_name
from harness.errors import UserError
from harness.scenario.load import parse_scenario
from harness.scenario.model import DRAFT_INSTRUCTIONS
from harness.verify.outcome import TargetResult, VerifyOutcome
from harness.verify.outcome import TestCase as Case

pytestmark = pytest.mark.unit


def commit(*changes: tuple[str, str], parents: tuple[str, ...] = ("p" * 40,)) -> Commit:
    return Commit("c" * 40, parents, "2024-01-10", "fix", tuple(Change(s, p) for s, p in changes))


def test_test_files_are_told_from_code() -> None:
    assert is_test("decimal_test.go") and is_test("cmp/testdata/diffs")
    assert is_test("tests/test_split.py") and is_test("toolz/tests/helper.py")
    assert is_test("test_schema.py") and is_test("pkg/foo_test.py") and is_test("conftest.py")
    assert not is_test("decimal.go") and not is_test("src/testing_tools.py")
    assert not is_test("attestation.py")


def test_split_and_shape() -> None:
    c = commit(("M", "decimal.go"), ("M", "decimal_test.go"), ("M", "CHANGELOG.md"))
    parts = split(c)
    assert parts.code == ["decimal.go"] and parts.tests == ["decimal_test.go"]
    assert parts.other == ["CHANGELOG.md"]
    assert shape_problem(c, parts) is None
    only_tests = commit(("M", "a_test.go"))
    assert shape_problem(only_tests, split(only_tests)) == (
        "changes no code (tests, docs or configuration only)"
    )
    no_tests = commit(("M", "a.go"))
    assert shape_problem(no_tests, split(no_tests)) == "changes no test file"
    deps = commit(("M", "a.go"), ("M", "a_test.go"), ("M", "go.mod"))
    assert "dependencies (go.mod)" in str(shape_problem(deps, split(deps)))
    many = commit(*[("M", f"f{i}.go") for i in range(15)], ("A", "x_test.go"))
    assert shape_problem(many, split(many)) == "changes 16 files (at most 15)"
    root = commit(("A", "a.go"), ("A", "a_test.go"), parents=())
    assert "root commit" in str(shape_problem(root, split(root)))


def test_targets_per_runner() -> None:
    assert go_package("cmp/testdata/diffs") == "./cmp"
    assert go_package("x_test.go") == "."
    assert targets_for("go", ["a_test.go", "cmp/cmpopts/util_test.go", "cmp/testdata/d"]) == [
        ".",
        "./cmp",
        "./cmp/cmpopts",
    ]
    assert targets_for("pytest", ["tests/test_a.py", "tests/data.json", "tests/conftest.py"]) == [
        "tests/test_a.py"
    ]


def runs(*statuses: dict[tuple[str, str], bool], build_failed: bool = False) -> Runs:
    return Runs(list(statuses), build_failed=build_failed)


T = "."


def test_classify_fail_to_pass_and_pass_to_pass() -> None:
    before = {(T, "TestOld"): True, (T, "TestFix"): False}
    after = {(T, "TestOld"): True, (T, "TestFix"): True, (T, "TestNew"): True}
    proof = classify(runs(before, before, before), runs(after, after, after))
    assert proof.problem is None
    assert proof.f2p == [(T, "TestFix"), (T, "TestNew")] and proof.p2p == [(T, "TestOld")]


def test_classify_build_failure_before_counts_every_test_failing() -> None:
    after = {(T, "TestA"): True, (T, "TestB"): True}
    proof = classify(runs({}, {}, {}, build_failed=True), runs(after, after, after))
    assert proof.problem is None and len(proof.f2p) == 2 and proof.before_build_failed


def test_classify_drops_flaky_tests_and_rejects_when_nothing_is_left() -> None:
    ok, bad = {(T, "TestRace"): True}, {(T, "TestRace"): False}
    proof = classify(runs(bad, ok, bad), runs(ok, ok, ok))
    assert proof.flaky == [(T, "TestRace")] and not proof.f2p
    assert proof.problem == "no test fails before and passes after (flaky dropped: TestRace)"
    mixed_after = {(T, "TestFix"): True, (T, "TestRace"): False}
    mixed_after2 = {(T, "TestFix"): True, (T, "TestRace"): True}
    fixed = classify(
        runs({(T, "TestFix"): False}, {(T, "TestFix"): False}, {(T, "TestFix"): False}),
        runs(mixed_after, mixed_after2, mixed_after),
    )
    assert fixed.problem is None and fixed.flaky == [(T, "TestRace")]


def test_classify_rejections() -> None:
    good = {(T, "TestA"): True}
    broken = {(T, "TestA"): False}
    assert "breaks tests that passed" in str(classify(runs(good), runs(broken)).problem)
    assert "fail after the fix too" in str(classify(runs(broken), runs(broken)).problem)
    assert classify(runs(good), runs(good)).problem == "no test fails before and passes after"
    timed = Runs([], timeout=". -run X")
    assert classify(timed, runs(good)).problem == "timeout before the fix: . -run X"
    env = Runs([], error="toolchain: missing")
    assert (
        classify(runs(good), env).problem == "environment error after the fix: toolchain: missing"
    )
    assert "do not build after" in str(classify(runs(broken), runs(build_failed=True)).problem)


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


def test_funnel_counts_every_commit_once() -> None:
    funnel = Funnel("repo", None, 5, "local", 3)
    funnel.add(Entry("a" * 40, "2024-01-01", "docs", "shape", "changes no test file"))
    funnel.add(Entry("b" * 40, "2024-01-02", "fix", "proven", "no test fails before"))
    funnel.add(Entry("c" * 40, "2024-01-03", "fix", "drafted", "go/x-ccccccc", 1, 2, 0))
    assert funnel.counts() == {"walked": 3, "shape": 2, "proven": 1, "drafted": 1}
    text = funnel.markdown()
    assert "walked 3 -> shape 2 -> proven 1 -> drafted 1" in text
    assert "changes no test file" in text and "no test fails before" in text


def test_canonical_names() -> None:
    assert canonical_name("/x/github.com/shopspring/decimal.git") == "github.com/shopspring/decimal"
    assert canonical_name("/r/github.com/jmespath/jmespath.py.bundle") == (
        "github.com/jmespath/jmespath.py"
    )
    assert canonical_name("https://github.com/org/name.git") == "github.com/org/name"
    assert canonical_name("/tmp/somewhere/repo") is None
    assert draft_name("github.com/mattn/go-shellwords", "abcdef0123") == "shellwords-abcdef0"
    assert draft_name("github.com/jmespath/jmespath.py", "abcdef0123") == "jmespath-abcdef0"


def draft() -> Draft:
    return Draft(
        name="decimal-7b4ffbc",
        runner="go",
        repo="github.com/shopspring/decimal",
        parent="a" * 40,
        sha="7b4ffbcd3c86a54ce53fa3324e71487c95e4cafe",
        date="2024-01-10",
        subject="Fix Mod",
        tests=["decimal_test.go"],
        code=["decimal.go"],
        targets=["."],
    )


def test_a_draft_is_a_loadable_scenario_with_tests_from_and_task_date() -> None:
    import yaml

    data = scenario_data(draft())
    scn = parse_scenario(yaml.safe_dump(data), Path("scenario.yml"))
    assert scn.commit == "a" * 40 and scn.task_date == datetime.date(2024, 1, 10)
    assert scn.verify.tests_from is not None
    assert scn.verify.tests_from.commit == "7b4ffbcd3c86a54ce53fa3324e71487c95e4cafe"
    assert scn.verify.tests_from.paths == ["decimal_test.go"]
    assert DRAFT_INSTRUCTIONS in scn.agent.instructions
    assert not scn.verify.copy_  # nothing of the tests is copied into the project


@pytest.mark.parametrize(
    ("tests_from", "field"),
    [
        ("{commit: abc123, paths: [a_test.go]}", "commit"),
        ("{commit: " + "a" * 40 + ", paths: []}", "paths"),
        ("{commit: " + "a" * 40 + ", paths: [../x_test.go]}", "paths"),
        ("{commit: " + "a" * 40 + ", paths: [x], extra: 1}", "extra"),
    ],
)
def test_bad_tests_from_is_a_user_error(tests_from: str, field: str) -> None:
    text = (
        "name: x\nrepo: github.com/o/x\ncommit: " + "b" * 40 + "\n"
        "classification: {type: fix-bug}\nagent: {instructions: do it}\n"
        f"verify: {{tests: ['.'], tests-from: {tests_from}}}\n"
    )
    with pytest.raises(UserError) as err:
        parse_scenario(text, Path("scenario.yml"))
    assert "tests-from" in str(err.value) and field in str(err.value)


def test_task_date_must_be_a_date() -> None:
    base = (
        "name: x\nrepo: github.com/o/x\ncommit: " + "b" * 40 + "\n"
        "classification: {type: fix-bug}\nagent: {instructions: do it}\nverify: {tests: ['.']}\n"
    )
    assert parse_scenario(base + "task-date: 2023-04-18\n", Path("s.yml")).task_date == (
        datetime.date(2023, 4, 18)
    )
    assert parse_scenario(base, Path("s.yml")).task_date is None
    with pytest.raises(UserError, match="task-date"):
        parse_scenario(base + "task-date: last spring\n", Path("s.yml"))


def _outcome(*cases: Case, env_error: str | None = None) -> VerifyOutcome:
    target = TargetResult(target="t", kind="required", tests=list(cases), env_error=env_error)
    return VerifyOutcome(
        success=False, partial_score=None, rules=[], targets=[target], changed_files=[],
        hidden_files=[],
    )  # fmt: skip


def test_a_rejection_names_its_real_cause() -> None:
    """Issue 50: "tests fail after the fix too" said nothing of why they could not run."""
    collect = Case(
        name="tests.test_time",
        passed=False,
        output="collection failure\nE   ModuleNotFoundError: No module named 'freezegun'",
    )
    generated = Case(
        name="tests.test_time",
        passed=False,
        output="collection failure\nE   ModuleNotFoundError: No module named 'humanize._version'",
    )
    build = Case(
        name=".", passed=False, synthetic=True, output="# x\n./flag_test.go:12:3: undefined: Foo"
    )
    assert cause_of(_outcome(collect)) == (
        "missing dependency in tests.test_time: ModuleNotFoundError: No module named 'freezegun'"
    )
    assert "generated by a build step" in str(cause_of(_outcome(generated)))
    assert cause_of(_outcome(build)) == "build failure: ./flag_test.go:12:3: undefined: Foo"
    assert cause_of(_outcome(Case(name="t::test_a", passed=False, output="assert 1 == 2"))) is None
    assert cause_of(_outcome(env_error="dependency: x")) == "dependency: x"
    broken = {(T, "tests.test_time"): False}
    after = Runs([broken], cause="missing dependency in tests.test_time: freezegun")
    problem = str(classify(runs(broken), after).problem)
    assert problem.startswith("the tests cannot run after the fix (missing dependency")
    built = Runs([{}], build_failed=True, cause="build failure: x.go:1: bad")
    assert classify(runs(broken), built).problem == (
        "the tests do not build after the fix: build failure: x.go:1: bad"
    )


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
