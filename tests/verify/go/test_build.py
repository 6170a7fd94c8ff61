"""Go targets built by the builder and run by the test user with their sources closed."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from harness.verify.go.build import binary_flags, closed, parse_list
from harness.verify.isolation.test_user import TestUser, hand_over
from harness.verify.runners import run_target

GO_MOD = "module example.com/x\n\ngo 1.19\n"
CODE = "package p\n\nfunc Abs(x int) int { return x }\n"
# the hidden tests: what the code under test may neither read nor write
HIDDEN = """package p

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestNonNegative(t *testing.T) {
	if got := Abs(3); got != 3 {
		t.Fatalf("Abs(3) = %d", got)
	}
}

func TestNegative(t *testing.T) {
	if got := Abs(-3); got != 3 {
		t.Fatalf("Abs(-3) = %d", got)
	}
}

func TestSourceClosed(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	if _, err := os.ReadFile(file); err == nil {
		t.Fatal("the test binary read its own source: " + file)
	}
}

func TestCachesClosed(t *testing.T) {
	for _, dir := range []string{os.Getenv("GOCACHE"), os.Getenv("HARNESS_GOSEED")} {
		if f, err := os.Create(filepath.Join(dir, "zz-planted")); err == nil {
			f.Close()
			t.Fatal("planted a file in " + dir)
		}
	}
}
"""


def test_go_list_lines_inside_the_tree_only(tmp_path: Path) -> None:
    out = f"example.com/x/p\t{tmp_path}/p\t\nexample.com/y\t/elsewhere\t\nbad line\n"
    (tmp_path / "p").mkdir()
    assert [p.import_path for p in parse_list(out, tmp_path)] == ["example.com/x/p"]


def test_the_binary_gets_go_tests_flags() -> None:
    assert binary_flags("^TestA$", "go1.19.8")[0] == "-test.v=true"
    assert binary_flags(None, "go1.24.11")[0] == "-test.v=test2json"
    assert "-test.run=^TestA$" in binary_flags("^TestA$", "go1.19.8")
    assert "-test.count=1" in binary_flags(None, "go1.19.8")


def test_closed_files_are_the_controllers_only_while_inside(tmp_path: Path) -> None:
    path = tmp_path / "h_test.go"
    path.write_text("package p\n")
    path.chmod(0o444)
    with closed([path, tmp_path / "missing"]):
        assert path.stat().st_mode & 0o777 == 0o400
    assert path.stat().st_mode & 0o777 == 0o444


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "p").mkdir(parents=True)
    (tree / "go.mod").write_text(GO_MOD)
    (tree / "p" / "p.go").write_text(CODE)
    (tree / "p" / "p_test.go").write_text(HIDDEN)
    (tree / "q").mkdir()
    (tree / "q" / "q.go").write_text("package q\n")  # no tests
    return tree


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
@pytest.mark.skipif(os.geteuid() != 0, reason="the users are enforced only for root")
def test_sources_and_caches_are_closed_to_the_code_under_test(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    hand_over(tree, 61001, [tree / "p" / "p_test.go"])
    tmp_path.chmod(0o711)
    seeds = tmp_path / "seeds"
    env = {"HARNESS_GOSEED": str(seeds)}
    user = TestUser(61001, True)

    def run(target: str) -> dict[str, bool]:
        result = run_target(
            "go", target, "required", tree, seed="0", timeout=300, python=sys.executable,
            extra_env=env, user=user, canary=True, agent_files=([], ["p/p_test.go"]),
        )  # fmt: skip
        assert result.error is None or not result.error.startswith("rejected"), result.error
        return {c.name: c.passed for c in result.tests}

    assert run("./p") == {
        "TestNonNegative": True,
        "TestNegative": False,
        "TestSourceClosed": True,
        "TestCachesClosed": True,
    }
    assert run("./...")["TestSourceClosed"]  # q: no test files, skipped as go test does
    assert not list(seeds.rglob("zz-planted"))
    assert (tree / "p" / "p_test.go").stat().st_mode & 0o444 == 0o444  # open again after


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
def test_a_build_failure_fails_its_package_as_go_test_does(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    (tree / "p" / "p.go").write_text('package p\n\nfunc Abs(x int) int { return "x" }\n')
    result = run_target("go", "./p", "required", tree, seed="0", timeout=300, python=sys.executable)
    assert not result.ok and result.exit_code == 1
    assert [c.name for c in result.tests] == ["example.com/x/p [build]"]
    assert "cannot use" in (result.tests[0].output or "")
    json.dumps(result.model_dump(mode="json"))
