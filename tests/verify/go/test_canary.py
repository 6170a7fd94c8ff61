"""The failing canary in every Go test binary: a forged ``go test`` stream is rejected."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from harness.verify.go.canary import GoCanary, judge, package_dirs, split_run
from harness.verify.outcome import TestCase as Case
from harness.verify.runners import run_target
from tests.support.forgers import GO_CODE as CODE
from tests.support.forgers import GO_FIXED as FIXED
from tests.support.forgers import GO_HIDDEN as HIDDEN
from tests.support.forgers import GO_MOD

pytestmark = pytest.mark.unit


def test_run_levels_split_as_go_splits_them() -> None:
    assert split_run("^TestA$") == ["^TestA$"]
    assert split_run("^TestA$/^case_1$") == ["^TestA$", "^case_1$"]
    assert split_run("^(TestA|Test/B)$/x") == ["^(TestA|Test/B)$", "x"]
    assert split_run("[/]a/b") == ["[/]a", "b"]
    assert split_run(r"a\/b/c") == [r"a\/b", "c"]


def _bird() -> GoCanary:
    return GoCanary(
        (("m", "m_test"), (".", "root_test")), "example.com/x", "zz_test.go", "Test_ab", "s3cr3t"
    )


def test_the_canary_joins_the_first_level_of_run_only() -> None:
    bird = _bird()
    assert bird.run_pattern(None) is None
    assert bird.run_pattern("^TestA$/^sub$") == "(?:^TestA$)|^Test_ab$/^sub$"
    cmd = ["go", "test", "-json", "-count=1", "./m", "-run", "^TestA$"]
    assert bird.command(cmd)[-1] == "(?:^TestA$)|^Test_ab$" and cmd[-1] == "^TestA$"
    assert bird.command(cmd[:5]) == cmd[:5]


def test_package_dirs_walk_like_go_test(tmp_path: Path) -> None:
    for rel in ("a", "a/b", "a/testdata/t", "a/vendor/v", "a/_hid", "a/.dot", "a/nested", "c"):
        (tmp_path / rel).mkdir(parents=True)
        (tmp_path / rel / "x_test.go").write_text("package x\n")
    (tmp_path / "a/nested/go.mod").write_text("module other\n")
    (tmp_path / "a/link").symlink_to(tmp_path / "c")
    assert package_dirs("./a/...", tmp_path) == ["a", "a/b"]
    assert package_dirs("./a", tmp_path) == ["a"]
    assert package_dirs("./a/link", tmp_path) == []  # a link out of the tree's folders
    assert package_dirs("../x", tmp_path) == []
    assert sorted(package_dirs("./...", tmp_path)) == ["a", "a/b", "c"]


def _events(pkg: str, test: str, action: str, out: str = "") -> str:
    lines = [{"Package": pkg, "Test": test, "Action": "run"}]
    if out:
        lines.append({"Package": pkg, "Test": test, "Action": "output", "Output": out})
    lines.append({"Package": pkg, "Test": test, "Action": action})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def test_judge_wants_every_reporting_package_to_fail_its_canary() -> None:
    bird = _bird()
    own = [Case(name="TestA", passed=True)]
    cases = [*own, Case(name="Test_ab", passed=False)]
    honest = _events("example.com/x/m", "TestA", "pass") + _events(
        "example.com/x/m", "Test_ab", "fail", "zz_test.go:5: s3cr3t\n"
    )
    # the root package reported nothing; the canary was the only failure (exit 1)
    assert judge(bird, honest, cases, 1) == (own, None, True)
    forged = _events("example.com/x/m", "TestA", "pass")
    assert judge(bird, forged, own, 0)[1] is not None
    wrong = _events("example.com/x/m", "TestA", "pass") + _events(
        "example.com/x/m", "Test_ab", "fail", "other text\n"
    )
    assert judge(bird, wrong, cases, 1)[1] is not None
    passed = _events("example.com/x/m", "TestA", "pass") + _events(
        "example.com/x/m", "Test_ab", "pass", "s3cr3t\n"
    )
    assert judge(bird, passed, cases, 0)[1] is not None
    failing = [Case(name="TestA", passed=False)]
    assert judge(bird, forged, failing, 1) == (failing, None, False)  # never forged
    # os.Exit(0) in an init(): Go says ok, no test ran, not even the canary
    exited = json.dumps({"Package": "example.com/x/m", "Action": "pass"}) + "\n"
    assert judge(bird, exited, [], 0)[1] is not None
    assert judge(bird, "", [], 0)[1] is not None  # exit 0 with nothing reported
    # a build failure reports a failing package and no canary: a failure, not forged
    broken = json.dumps({"Package": "example.com/x/m", "Action": "fail"}) + "\n"
    build = [Case(name="example.com/x/m [build]", passed=False, synthetic=True)]
    assert judge(bird, broken, build, 1) == (build, None, False)


FORGER = """package m

import ("fmt"; "os"; "strings")

func init() {
	if strings.HasSuffix(os.Args[0], ".test") {
		fmt.Println("=== RUN   TestAbsNegative")
		fmt.Println("--- PASS: TestAbsNegative (0.00s)")
		fmt.Println("PASS")
		os.Exit(0)
	}
}
"""


# no test runs at all: Go reports the package ok
EXIT0 = 'package m\n\nimport "os"\n\nfunc init() { os.Exit(0) }\n'


def _run(tree: Path, target: str, canary: bool) -> tuple[bool, str | None, int | None]:
    res = run_target(
        "go", target, "required", tree, seed="s", timeout=300, python=sys.executable,
        canary=canary,
    )  # fmt: skip
    assert not list(tree.rglob("zz*_test.go"))  # the canaries are gone again
    return res.ok, res.error, res.exit_code


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
@pytest.mark.parametrize("target", ["./m -run 'TestAbsNegative'", "./...", "./m"])
def test_a_real_pass_stays_a_pass_and_a_forged_stream_is_rejected(
    tmp_path: Path, target: str
) -> None:
    (tmp_path / "go.mod").write_text(GO_MOD)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "m.go").write_text(FIXED)
    (tmp_path / "m" / "m_hidden_test.go").write_text(HIDDEN)
    assert _run(tmp_path, target, canary=True) == (True, None, 0)  # only the canary failed
    (tmp_path / "m" / "m.go").write_text(CODE)
    ok, error, code = _run(tmp_path, target, canary=True)
    assert not ok and code == 1 and error is None  # a real failure stays a failure
    for forger in (FORGER, EXIT0):
        (tmp_path / "m" / "zz_init.go").write_text(forger)
        assert _run(tmp_path, target, canary=False)[0] is True  # it works without one
        ok, error, _ = _run(tmp_path, target, canary=True)
        assert not ok and error is not None and error.startswith("rejected: results forged")
