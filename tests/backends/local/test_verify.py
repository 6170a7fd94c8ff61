"""Verification on the host: a copy of the workspace, what it left out, a refusal
(backends/local/verify.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from harness.backends.local.verify import refused, skipped_note, verify_local, with_note
from harness.util.agentfiles import OverCap
from harness.verify.outcome import VerifyOutcome
from harness.verify.request import VerifyRequest

pytestmark = pytest.mark.unit


def test_the_note_names_what_was_left_out_fifty_at_most() -> None:
    assert skipped_note({}) == ""
    note = skipped_note({"b.bin": "a socket", "a.txt": "over the file cap"})
    assert note == (
        "left out of the verified copy:\n  a.txt: over the file cap\n  b.bin: a socket\n"
    )
    many = skipped_note({f"f{i:03}": "why" for i in range(53)})
    assert many.count("\n  f") == 50 and many.endswith("  ... and 3 more\n")


def test_the_note_goes_before_the_report() -> None:
    outcome = VerifyOutcome.ungraded(report_text="graded\n")
    assert with_note(outcome, {}) is outcome
    noted = with_note(outcome, {"x": "why"})
    assert noted.report_text == "left out of the verified copy:\n  x: why\ngraded\n"


def test_a_refusal_is_ungraded_with_its_reason() -> None:
    out = refused(OverCap("the workspace is over 1 MiB"))
    assert not out.success and out.error is None
    assert out.report_text == "verification refused: the workspace is over 1 MiB\n"


def test_a_workspace_over_its_cap_is_refused_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("x" * 4096)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    request = VerifyRequest(scenario="s", baseline="b", seed="1", runner="pytest", hidden_root="/h")
    out = verify_local(ws, request, max_bytes=100)
    assert out.report_text.startswith("verification refused: ") and not out.success
    assert (ws / "big.txt").read_text() == "x" * 4096
    assert list(scratch.iterdir()) == []  # the copy is removed
