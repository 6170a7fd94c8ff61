"""Go twins: the compared literals of the hidden tests changed, from the syntax tree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness.errors import InfraError
from harness.verify.go import twin as twin_mod
from harness.verify.go.twin import GoTwin, hidden_files, plan, swapped
from harness.verify.isolation import test_root
from harness.verify.isolation.test_user import TestUser

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("go") is None, reason="needs go"),
]

HIDDEN = """package p

import "testing"

func TestDirect(t *testing.T) {
	if got := Abs(-7); got != 7 {
		t.Errorf("Abs(-7) = %d, want 7", got)
	}
}

func TestTable(t *testing.T) {
	cases := []struct {
		in   int
		want string
	}{{1, "one"}, {in: 2, want: "two"}}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := Name(c.in); got != c.want {
				t.Fatal(got)
			}
		})
	}
}

func TestNoLiteral(t *testing.T) {
	for _, x := range []int{0, 1} {
		if got := Abs(x); got != x {
			t.Error(got)
		}
	}
}

func TestNested(t *testing.T) {
	if Abs(1) > 0 {
		if got := Abs(-2); got != 2 {
			t.Error(got)
		}
	}
}
"""


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "p").mkdir(parents=True)
    (tree / "go.mod").write_text("module example.com/x\n\ngo 1.19\n")
    (tree / "p" / "p_test.go").write_text(HIDDEN)
    (tree / "p" / "other_test.go").write_text("package p\n")
    return tree


def test_only_the_hidden_tests_of_the_pattern_are_twinned(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    assert hidden_files("./p", tree, ["p/p_test.go", "q/q_test.go"]) == [tree / "p/p_test.go"]
    assert hidden_files("./q", tree, ["p/p_test.go"]) == []


def test_compared_literals_are_changed_and_nothing_else(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    twin = plan("./p", tree, ["p/p_test.go"], {"PATH": os.environ["PATH"]}, None, None)
    assert twin is not None
    # a loop's own inputs and a comparison the test may not reach are left alone
    assert twin.tests == {"TestDirect", "TestTable"}
    text = twin.files[tree / "p" / "p_test.go"].decode()
    assert "got != 8" in text and 'want 7", got' in text  # the message is not compared
    assert '{1, "one~twin"}' in text and 'want: "two~twin"' in text
    assert "Abs(-7)" in text and "[]int{0, 1}" in text and "got != 2" in text


def test_the_twin_stands_in_for_one_run_only(tmp_path: Path) -> None:
    path = tmp_path / "h_test.go"
    path.write_text("original")
    path.chmod(0o444)
    with swapped(GoTwin({path: b"twin"}, {"TestA"})):
        assert path.read_text() == "twin" and path.stat().st_mode & 0o777 == 0o444
    assert path.read_text() == "original" and path.stat().st_mode & 0o777 == 0o444


# a twin that was planned but could not run is the harness's fault, never a skipped twin
# (fail-open: a forged pass went through when the tool was out of the test root's reach)


def test_a_missing_twin_tool_is_an_infra_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path)
    monkeypatch.setattr(twin_mod, "tool", lambda env, seed: tmp_path / "gone" / "gotwin")
    with pytest.raises(InfraError, match=r"twin tool .* is missing"):
        plan("./p", tree, ["p/p_test.go"], {"PATH": os.environ["PATH"]}, None, None)


def test_a_crashing_twin_tool_is_an_infra_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _tree(tmp_path)
    crash = tmp_path / "gotwin"
    crash.write_text("#!/bin/sh\necho 'panic: runtime error' >&2\nexit 2\n")
    crash.chmod(0o755)
    monkeypatch.setattr(twin_mod, "tool", lambda env, seed: crash)
    with pytest.raises(InfraError, match=r"twin tool failed on p_test\.go"):
        plan("./p", tree, ["p/p_test.go"], {"PATH": os.environ["PATH"]}, None, None)


def test_a_twin_tool_that_cannot_be_built_is_an_infra_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "twin.go"
    broken.write_text("package main\n\nfunc main() { undefined() }\n")
    monkeypatch.setattr(twin_mod, "SOURCE", broken)
    monkeypatch.setattr(twin_mod, "_built", {})
    with pytest.raises(InfraError, match="could not build the Go twin tool"):
        plan("./p", _tree(tmp_path), ["p/p_test.go"], {"PATH": os.environ["PATH"]}, None, None)


@pytest.mark.skipif(not test_root.available(), reason="the test root needs root and unshare")
def test_the_twin_tool_runs_in_the_builders_test_root(tmp_path: Path) -> None:
    """The tool sits in a temporary folder made at run time (``harness-gotwin-*``), outside
    every allow list: it is bound in, and the builder's run in the root changes the file."""
    tmp_path.chmod(0o755)
    tree = _tree(tmp_path)
    env = {"PATH": os.environ["PATH"]}
    root = test_root.make_root("python3", {}, env, [tmp_path / "scenario"])
    assert root is not None
    builder = TestUser(61002, False, root)
    twin = plan("./p", tree, ["p/p_test.go"], env, builder, None)
    assert twin is not None and twin.tests == {"TestDirect", "TestTable"}
