"""The Go canary ends the binary when its output no longer leads straight to ``go test``."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from harness.verify.go import output
from harness.verify.runners import run_target
from tests.support.forgers import GO_CODE as CODE
from tests.support.forgers import GO_FIXED as FIXED
from tests.support.forgers import GO_HIDDEN as HIDDEN
from tests.support.forgers import GO_MOD

# a sed child between the binary's writers and go test's pipe, FAIL turned into PASS
FILTER = """package m

import ("os"; "os/exec"; "strings"; "syscall")

func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	r, w, _ := os.Pipe()
	cmd := exec.Command("sed", "-u", "-e", "s/--- FAIL: TestAbs/--- PASS: TestAbs/")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, os.NewFile(1, "out"), os.NewFile(2, "err")
	if cmd.Start() != nil {
		return
	}
	r.Close()
	%s
}
"""
SWAP = "os.Stdout = w\n\t_ = syscall.Getpid"  # the language's stdout only
DUP2 = "syscall.Dup3(int(w.Fd()), 1, 0)\n\tsyscall.Dup3(int(w.Fd()), 2, 0)\n\tw.Close()"
# an honest package that prints and leaves a child holding the binary's output
NOISY = """package m

import ("fmt"; "os"; "os/exec"; "strings")

func init() {
	if strings.HasSuffix(os.Args[0], ".test") {
		fmt.Println("hello from m")
		cmd := exec.Command("sleep", "30")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		_ = cmd.Start()
	}
}
"""


def test_the_note_is_read_from_the_output() -> None:
    assert output.note(f"x\n{output.NOTE}descriptor 1 moved\n") == "descriptor 1 moved"
    assert output.note("--- FAIL: TestX\n") is None


def _run(tree: Path) -> tuple[bool, str | None]:
    res = run_target(
        "go", "./m", "required", tree, seed="s", timeout=300, python=sys.executable,
        canary=True,
    )  # fmt: skip
    return res.ok, res.error


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("go") is None or shutil.which("sed") is None, reason="go, sed")
def test_a_filtered_stream_is_rejected_and_a_noisy_pass_stands(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text(GO_MOD)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "m.go").write_text(FIXED)
    (tmp_path / "m" / "m_hidden_test.go").write_text(HIDDEN)
    (tmp_path / "m" / "zz_init.go").write_text(NOISY)
    assert _run(tmp_path) == (True, None)  # prints, spawns, only the canary failed
    (tmp_path / "m" / "m.go").write_text(CODE)
    for how, seen in ((SWAP, "the language's descriptor 1 is"), (DUP2, "not read by go test")):
        (tmp_path / "m" / "zz_init.go").write_text(FILTER % how)
        ok, error = _run(tmp_path)
        assert not ok and error is not None and error.startswith("rejected: results forged")
        assert "its output check: " in error and seen in error
