"""Go twins: the compared literals of the hidden tests changed, from the syntax tree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness.verify.go.twin import GoTwin, hidden_files, plan, swapped

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
