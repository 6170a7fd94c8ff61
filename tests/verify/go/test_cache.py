"""The Go build cache the hidden tests read is warm, shared and not theirs to write."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness.verify.go.cache import build_command, builder_of, warm_command, warm_key
from harness.verify.go.run import run_go
from harness.verify.isolation.test_user import TestUser, hand_over

TEST = """package p

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPoison(t *testing.T) {
	err := os.WriteFile(filepath.Join(os.Getenv("GOCACHE"), "00", "planted-d"), nil, 0o644)
	if err == nil {
		t.Fatal("the tests wrote the shared build cache")
	}
}
"""


@pytest.mark.unit
def test_the_warm_build_executes_nothing() -> None:
    cmd = ["go", "test", "-json", "-count=1", "./mathx", "-run", "TestX"]
    assert warm_command(cmd) == ["go", "test", "-exec", "true", "-json", "-count=1", "./mathx"]
    assert builder_of(TestUser(61001, True)) == TestUser(61002, True)


@pytest.mark.unit
def test_one_warm_build_serves_every_target_of_a_tree(tmp_path: Path) -> None:
    """``-run`` selects tests and builds nothing: the targets of one tree share a key;
    another tree (an edited file) or another build flag does not."""
    (tmp_path / "p.go").write_text("package p\n")
    env = {"PATH": os.environ.get("PATH", "")}
    one = ["go", "test", "-json", "-count=1", ".", "-run", "TestA"]
    two = ["go", "test", "-json", "-count=1", ".", "-run=TestB"]
    assert build_command(two) == build_command(one) == one[:5]
    key = warm_key(one, tmp_path, env)
    assert warm_key(two, tmp_path, env) == key
    assert warm_key([*one, "-race"], tmp_path, env) != key
    (tmp_path / "p.go").write_text("package p\n\nconst X = 1\n")
    assert warm_key(one, tmp_path, env) != key


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("go"), reason="needs root and go")
def test_the_tests_cannot_write_the_build_cache(tmp_path: Path) -> None:
    tree = tmp_path / "m"
    (tree / "p").mkdir(parents=True)
    (tree / "go.mod").write_text("module example.com/m\n\ngo 1.19\n")
    (tree / "p" / "p_test.go").write_text(TEST)
    tmp_path.chmod(0o755)
    hand_over(tree, 61001, [])
    env = {"PATH": os.environ["PATH"]}  # the shared default cache: warm after a first run
    result = run_go("./p", "required", tree, env, 120, TestUser(61001, True))
    assert result.ok, [t.output for t in result.tests]
    assert [t.name for t in result.tests if t.passed] == ["TestPoison"]
    # the next trial's changed code: its own warm build, then its tests
    (tree / "p" / "p.go").write_text("package p\n\nfunc Two() int { return 2 }\n")
    again = run_go("./p", "required", tree, env, 120, TestUser(61001, True))
    assert again.ok, [t.output for t in again.tests]
