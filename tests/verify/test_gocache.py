"""The Go build cache the hidden tests read is warm, shared and not theirs to write."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness.verify.gocache import builder_of, warm_command
from harness.verify.runners import run_go
from harness.verify.testuser import TestUser, hand_over

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
    assert warm_command(cmd) == ["go", "test", "-exec", "true", *cmd[2:]]
    assert builder_of(TestUser(61001, True)) == TestUser(61002, True)


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
    # warm now: the next trial's changed code is compiled by the tests, not stored
    (tree / "p" / "p.go").write_text("package p\n\nfunc Two() int { return 2 }\n")
    again = run_go("./p", "required", tree, env, 120, TestUser(61001, True))
    assert again.ok, [t.output for t in again.tests]
