"""The agent's Go code may not link into the test binary's table of tests or ``testing``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.verify.go.linkname import reach

pytestmark = pytest.mark.unit

SWAP = """package mathx

import (
	"testing"
	_ "unsafe"
)

//go:linkname tests main.tests
var tests []testing.InternalTest
"""
RUNTIME = """package mathx

import _ "unsafe"

//go:linkname nanotime runtime.nanotime
func nanotime() int64
"""


def _write(tree: Path, files: dict[str, str]) -> list[str]:
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    return sorted(files)


def test_linking_the_test_table_or_testing_fails(tmp_path: Path) -> None:
    changed = _write(tmp_path, {"mathx/zz.go": SWAP, "mathx/mathx.go": "package mathx\n"})
    why = reach(tmp_path, changed, ["mathx/mathx_hidden_test.go"])
    assert why is not None and "mathx/zz.go links main.tests" in why
    fail = SWAP.replace("main.tests", "testing.(*common).Fail")
    changed = _write(tmp_path, {"mathx/zz.go": fail})
    assert "testing.(*common).Fail" in (reach(tmp_path, changed, []) or "")
    deps = SWAP.replace("main.tests", "testing/internal/testdeps.ImportPath")
    changed = _write(tmp_path, {"mathx/zz.go": deps})
    assert reach(tmp_path, changed, []) is not None


def test_assembly_naming_the_test_table_fails(tmp_path: Path) -> None:
    asm = "TEXT ·f(SB),0,$0\n\tMOVQ main·tests(SB), AX\n"
    changed = _write(tmp_path, {"mathx/zz_amd64.s": asm})
    assert "main·" in (reach(tmp_path, changed, []) or "")


def test_the_runtime_s_helpers_and_files_not_the_agent_s_pass(tmp_path: Path) -> None:
    asm = "TEXT ·f(SB),0,$0\n"
    changed = _write(tmp_path, {"mathx/clock.go": RUNTIME, "mathx/zz_amd64.s": asm})
    assert reach(tmp_path, changed, []) is None
    _write(tmp_path, {"mathx/base.go": SWAP, "mathx/hidden_test.go": SWAP})
    assert reach(tmp_path, changed, ["mathx/hidden_test.go"]) is None  # base.go: the baseline's
    assert reach(tmp_path, ["mathx/hidden_test.go"], ["mathx/hidden_test.go"]) is None
